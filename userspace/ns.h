/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Namespaces of a tree (issue 23, containers): one table of kinds, one set
 * of operations per kind, each kind in its own file (ns.c: the table, pid,
 * UTS, time, user; ipc.c; mount.c; net.c; cgroup.c).
 *
 * A kind is "own" when the root task's namespace of that kind differs from
 * imgcr's (dumped, recreated at restore), "external" when the user names it
 * (--external KIND[INODE]:KEY: not dumped, joined at restore).  A tree
 * without namespaces of its own has neither, and dump and restore do what
 * they did before containers.
 *
 * The restore with namespaces makes an "ns-root" (as CRIU's root task):
 * imgcr stays in the host namespaces, clones the ns-root into new ones,
 * runs each kind's outside() (uid maps, veth peers, cgroups), then the
 * ns-root runs each inside() in enum order (mnt last), opens the files and
 * becomes the tree's root task (pid 1 of its pid namespace); late() runs
 * in imgcr once every task is ready, before they go on.
 */
#ifndef IMGCR_NS_H
#define IMGCR_NS_H

#include <sys/types.h>

struct tree;

enum ns_kind { NS_USER, NS_PID, NS_UTS, NS_IPC, NS_NET, NS_CGROUP, NS_TIME, NS_MNT, NS_N };

#define NS_BIT(k)	(1u << (k))

/* What a dump and a restore share with the kinds. */
struct ns_ctx {
	struct tree *t;
	int dirfd;		/* DIR, opened before any setns/pivot: images are openat()ed */
	int hostproc;		/* imgcr's /proc (host pids), an O_PATH/O_DIRECTORY fd */
	pid_t root;		/* dump: host pid of the root; restore: host pid of the ns-root */
	unsigned int own, ext;	/* NS_BIT()s: kinds the tree has of its own / external */
	const char *const *external;	/* --external KEY:VALUE, NULL-terminated */
};

/* One kind; a NULL member has nothing to do at that point. */
struct ns_ops {
	const char *name;	/* as in /proc/PID/ns/NAME */
	int clone_flag;		/* CLONE_NEW*; the ns-root is cloned with it, except
				 * cgroup and time: 0, the ns-root unshares them */
	int (*dump)(struct ns_ctx *c);		/* imgcr, host ns, tree frozen, before the images */
	int (*outside)(struct ns_ctx *c);	/* restore: imgcr, the ns-root made and waiting */
	int (*inside)(struct ns_ctx *c);	/* restore: in the ns-root, in enum order */
	int (*late)(struct ns_ctx *c);		/* restore: imgcr, every task ready, before "go" */
	void (*cleanup)(struct ns_ctx *c);	/* restore failed: undo outside() */
	void (*free)(struct tree *t);		/* the kind's data in t->ns (tree_free) */
};

/* The state of one tree's namespaces, in struct tree (t->ns, NULL if none). */
struct ns_tree {
	unsigned int own, ext;
	unsigned long long ino[NS_N];	/* at dump, of the root task (own kinds) */
	void *data[NS_N];		/* each kind's own records (its file's struct) */
};

extern const struct ns_ops ns_user_ops, ns_pid_ops, ns_uts_ops, ns_ipc_ops, ns_net_ops,
	ns_cgroup_ops, ns_time_ops, ns_mnt_ops;
/* indexed by enum ns_kind */
extern const struct ns_ops *const ns_kinds[NS_N];

/* t->ns, allocated on first use (exits if out of memory). */
struct ns_tree *ns_tree_get(struct tree *t);
/* Every kind's free(), then t->ns (tree_free). */
void ns_tree_free(struct tree *t);

/*
 * Run @fn(@arg) in a child that joined @pid's namespaces of @kinds
 * (NS_BIT()s; the user namespace first, mnt last): its return value is
 * fn's (0 or -1), -1 if a namespace could not be joined (printed).
 */
int ns_run_in(pid_t pid, unsigned int kinds, int (*fn)(void *arg), void *arg);

/* imgcr show: the tree's own namespaces (nothing if none); text, JSON members, unit model */
void ns_show_text(const struct tree *t);
void ns_show_json(const struct tree *t);
void ns_model(const struct tree *t);

/* The inode of /proc/PID/ns/NAME (@pid 0: imgcr's own), 0 if unreadable (errno set). */
unsigned long long ns_ino(pid_t pid, const char *name);
/* The last field of NSpid of @pid (thread @tid; 0: the main one): its id in its own PID namespace; -1. */
pid_t ns_inner_pid(pid_t pid, pid_t tid);
/*
 * A tree with a PID namespace of its own, once its tasks' groups are read:
 * the number in there of each group (vpgid) and session (vsid) no task of
 * the tree leads.
 */
int ns_pid_kept_groups(struct tree *t);

/*
 * dump, every task frozen and in the root's namespaces: the kinds in which
 * the root @root differs from imgcr are the tree's own (t->ns); each such
 * kind's dump() runs (pid: the vpids, and the namespace's init must be
 * the root; uts: the names; time: the offsets and clocks); a kind without
 * dump() is refused, naming it.  0, or -1 after printing why.
 */
int ns_dump(struct tree *t, pid_t root, int dirfd);
/*
 * dump, after ns_dump(): every task's cgroup has the cgroup BPF programs
 * (device access, socket, sysctl) of the cgroup the restore puts it in
 * (cgroup.c); 0, or -1 after printing the task, its cgroup and the kind.
 */
int cg_check_bpf(const struct tree *t);
/*
 * restore: the caller made the tree's cgroup and runs imgcr in it (a
 * runtime through imgcr-criu: runc's manage_cgroups): the dumped cgroup
 * namespace's root is restored as imgcr's own cgroup, not made, its
 * limits the caller's; the cgroups below it are made as usual.
 */
extern int cg_caller_base;
/*
 * restore with cg_caller_base: the path the tree's cgroup2 mount bound
 * from @ext (showing @root) is bound from in the caller's cgroup, or NULL
 * (malloc'ed; cgroup.c, used by mount.c).
 */
char *cg_caller_mount(const struct tree *t, const char *ext, const char *root);
/* restore, after reading the tree: every own kind can be restored; 0 or -1 (printed). */
int ns_restore_check(const struct tree *t);
/* The CLONE_NEW* flags the ns-root is cloned with for the kinds of @own. */
unsigned long ns_clone_flags(unsigned int own);
/* Every own kind's hook of that stage, in enum order; 0, or -1 (printed). */
int ns_outside(struct ns_ctx *c);	/* on failure, the caller kills the ns-root, then ns_cleanup() */
int ns_inside(struct ns_ctx *c);
int ns_late(struct ns_ctx *c);
void ns_cleanup(struct ns_ctx *c);	/* reverse order; each kind undoes only what it made */

/*
 * mount.c, dump, after ns_dump(): for a tree with a mount namespace of its
 * own, whether the file that /proc/@pid/@link leads to ("fd/N", "cwd",
 * "root", "exe", "map_files/START-END") is on a mount outside it (one the
 * restore does not rebuild: its path inside the container would name
 * another file).  0: on one of the tree's mounts, or the tree has no mount
 * namespace of its own; 1: outside, its mount ID in *@mnt_id; -1: cannot
 * tell (errno set).  Callers refuse (dump.c: outside_refuse()); an option
 * that hands such files over at restore (CRIU's --external
 * file[MNT_ID:INODE] with --inherit-fd) would accept them there.
 */
int mnt_file_outside(const struct tree *t, pid_t pid, const char *link, int *mnt_id);

/*
 * mount.c, restore: --root DIR (the tree's root mount, and the external
 * mounts below the directory it was bound from, bound from DIR instead)
 * and --external mnt[MP]:PATH (the external mount at MP bound from PATH):
 * recorded by the options, 0 or -1 (printed); applied to the tree's mnt
 * records by mnt_restore_options() after tree_read (0, or -1 printed:
 * a tree without a mount namespace of its own, a root or MP that is not
 * an external mount).
 */
void mnt_options_reset(void);
int mnt_root_option(const char *dir);
int mnt_ext_option(const char *arg);
int mnt_restore_options(struct tree *t);
/*
 * restore: the mount the tree saw at @mp (a file's fstat record) is bound
 * from another directory than at the dump (--root, --external mnt[]): its
 * files are copies, whose device and inode may differ (files-reg.c then
 * compares their content).  1 or 0.  @mp NULL: any mount is.
 */
int mnt_moved(const struct tree *t, const char *mp);
/*
 * restore: the mount point of the tree's mount that holds @path (the
 * longest mount point it is below), if that mount is moved (mnt_moved),
 * else NULL.  For records without a mount point (ghosts).
 */
const char *mnt_moved_path(const struct tree *t, const char *path);
/*
 * restore: @path, below mount point @mnt, opened with @flags on that mount:
 * the mount point without symbolic links, then beneath it without links
 * or other mounts (openat2 RESOLVE_BENEATH|NO_SYMLINKS|NO_XDEV).  -1,
 * errno ELOOP (a link) or EXDEV (another mount, or @path not below @mnt).
 * Before openat2 (5.6): @path as it is.
 */
int mnt_path_open(const char *mnt, const char *path, int flags);

/*
 * dump (after ns_dump): the mount the tree sees at @mp could be bound from
 * another directory at restore (--root, --external mnt[]): an external
 * mount or a bind of one, not FUSE (whose daemon may be a frozen task of
 * the tree).  1 or 0: files-reg.c reads a file's first page only there.
 */
int mnt_may_move(const struct tree *t, const char *mp);

#endif
