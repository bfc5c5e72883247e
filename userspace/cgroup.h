/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup version 2 helpers shared by the two owners of cgroups: cgroup.c
 * (a tree with a cgroup namespace of its own) and cgmember.c (a tree
 * without one: each task's cgroup in imgcr's cgroup namespace view).
 */
#ifndef IMGCR_CGROUP_H
#define IMGCR_CGROUP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct rec;
struct tree;

#define CG_VAL_MAX	256
#define CG_NFILES	12	/* cg_files[] */

/* the limits kept, in the order they are written back */
extern const char *const cg_files[CG_NFILES];

struct cg {
	char *path;			/* cgroup.c: below the base ("/": the base); cgmember.c: absolute */
	char *subtree;			/* cgroup.subtree_control: "memory pids..." */
	char *val[CG_NFILES];		/* NULL: the file does not exist (controller off) */
	int made;			/* restore: made by this restore */
	int bpf;			/* cgmember.c: BPF programs attached to it */
	char *unkept;			/* cgmember.c: "FILE=VALUE" not kept, not default */
};

/*
 * imgcr's cgroup2 mount point (malloc'ed) whose root is the hierarchy's
 * ("/", mountinfo field 4), or NULL; cg_mount_other set (and warned) if
 * only mounts of a subtree or of another cgroup namespace's were seen.
 */
char *cg_mount(void);
extern int cg_mount_other;
/* A small file's first line (malloc'ed, no newline), or NULL */
char *cg_read_line(const char *path);
/* @pid's cgroup v2 path (malloc'ed); -1 (printed) if in a v1 hierarchy's group */
int cg_task_cgroup(pid_t pid, char **out);
/*
 * The same, "/" when /proc/PID/cgroup has no "0::" line (the kernel shows
 * none until cgroup2 is first mounted: every task is in its root then)
 */
int cg_task_cgroup_host(pid_t pid, char **out);
/*
 * dump: cgroup directory @dir's type (anything but "domain" refused,
 * naming @pid and @name), controllers for children and limits into @g;
 * 0, or -1 (printed).
 */
int cg_read_dir(struct cg *g, const char *dir, pid_t pid, const char *name);
/*
 * restore: cgroup @dir (@name, not made by the restore) has @g's dumped
 * limits; 0, or -1 (printed, naming @pid, the file and both values).
 */
int cg_limits_same(const struct cg *g, const char *dir, pid_t pid, const char *name);
/*
 * dump: the number of cgroup BPF programs attached to cgroup @dir itself
 * (not inherited), all types; 0 for an ordinary user (none can be listed);
 * -1 (printed, naming @pid and @name) if they cannot be listed.
 */
int cg_bpf_attached(const char *dir, pid_t pid, const char *name);
/* restore: @g's controllers for children enabled in @dir (made by the restore); 0 or -1 (printed) */
int cg_enable(const struct cg *g, const char *dir);
/*
 * restore: @g's limits written in @dir (memory.max below its use before
 * the exec refused: the image's pages are not counted); 0 or -1 (printed)
 */
int cg_set_limits(const struct cg *g, const char *dir);
/*
 * The same, some of them: cgmember.c writes all but pids.max before the
 * tasks are forked into the cgroup (the restore's keepers count too), and
 * pids.max once every task is in
 */
enum { CG_LIM_ALL, CG_LIM_NOT_PIDS, CG_LIM_PIDS };
int cg_set_limits_some(const struct cg *g, const char *dir, int which);
/* Whether cgroup @dir (or one below it) still holds a task (cgroup.events) */
int cg_populated(const char *dir);
/* A failed restore: cgroup @dir (made by it) emptied (cgroup.kill, 2 s) and removed; 0 or -1 (warned) */
int cg_remove(const char *dir);
void cg_free_one(struct cg *g);
/* " subtree=... cpu.max=..." of a cgroup record; reading them back: NULL, or what is wrong */
void cg_rec_write(FILE *f, const struct cg *g);
const char *cg_rec_read(struct rec *r, struct cg *g);


/* cgmember.c: a tree's cgroups (struct tree's hostcg; each task's is its cg) */
struct cg_host {
	int ncgs;
	struct cg *cgs;		/* absolute paths, parents first; [0] is "/" */
	char *mnt;		/* restore: imgcr's cgroup2 mount */
	char *own;		/* restore: imgcr's own cgroup */
	int *fd;		/* restore: per cgroup, its cgroup.procs open for the tasks to enter (-1) */
	int ownfd;		/* restore: imgcr's own cgroup (a directory), if a task enters another, or -1 */
	int pidns;		/* restore: the tree's pids are in a PID namespace of its own (not ours) */
};

/*
 * cgmember.c: the cgroup of each task of a tree without a cgroup
 * namespace of its own (tree "hcgroup", "hcg" records).
 * dump, after ns_dump(): 0, or -1 (printed, naming the task).
 */
int cgm_dump(struct tree *t);
/*
 * restore, before the tasks are forked: the cgroups the tasks go to that
 * are gone made (with their controllers and limits, but pids.max), those
 * that exist checked, and the cgroup.procs of each one a task has to
 * enter opened (an fd at or above @base, close-on-exec); each cgroup's
 * memory.max checked to hold the @pending[i] bytes of data each of its
 * tasks i will allocate from its image (cgm_restore() checks again); 0,
 * or -1 (printed, naming the task or the cgroup and the sizes; what it
 * made removed).
 */
/* a task's image data still to allocate or load, in bytes: all of it, and of that mlocked (never swapped) */
struct cg_pending {
	unsigned long long data, locked;
};
int cgm_prepare(struct tree *t, int base, const struct cg_pending *pending);
/*
 * In task @ti's restorer, first thing, before it allocates anything: into
 * its cgroup (writing "0" to the cgroup.procs cgm_prepare() opened), so
 * that its memory is charged there (cgroup v2 does not move charges); 0,
 * or -1 with the reason in @err.
 */
int cgm_enter(const struct tree *t, int ti, char *err, size_t len);
/*
 * imgcr's own cgroup, open (O_DIRECTORY, at or above cgm_prepare()'s
 * base, close-on-exec) if a task enters another one, for the pgrp
 * keepers' clone3(CLONE_INTO_CGROUP); else -1
 */
int cgm_own_fd(const struct tree *t);
/*
 * restore, every task made and waiting for its go byte: each task (host
 * pid @host[i]) checked in its cgroup, pids.max of the cgroups made
 * written, and each cgroup's memory.max (with the swap it may use) checked
 * to hold what it holds now plus @pending[i] bytes of image data each of
 * its tasks still has to load at the exec; 0, or -1 (printed, naming the
 * task or the cgroup and the sizes).
 */
int cgm_restore(struct tree *t, const pid_t *host, const struct cg_pending *pending);
/*
 * trust.c, root restoring a user's directory: 1 if no task would be moved
 * and no cgroup made (each live task in the restorer's cgroup, or
 * --cgroups ignore), else 0 with the reason in @why.
 */
int cgm_user_ok(const struct tree *t, char *why, size_t size);
/*
 * a failed restore, the tree killed: the cgroups cgm_prepare() made
 * removed, children first, once the tree's tasks and keepers left in them
 * are killed and gone (2 s); one another process joined is left in place
 * (warned), with those above it, and nothing in it killed
 */
void cgm_cleanup(struct tree *t);
void cgm_free(struct tree *t);
/* restore --cgroups ignore: the tree stays in the restorer's cgroup; dump --cgroups ignore: none recorded */
extern int cgm_ignore;

/* In an array of @n cgroups: the index of @path, or -1; add @path (at most @max), its index or -1 */
int cg_list_find(const struct cg *cgs, int n, const char *path);
int cg_list_add(struct cg **cgs, int *n, int max, const char *path);

#endif
