// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup membership of a tree without a cgroup namespace of its own
 * (one with its own is cgroup.c's): each task's cgroup (version 2), as
 * imgcr's cgroup namespace shows it, as CRIU's default --manage-cgroups
 * (soft mode) restores it.
 *
 * dump: every task's /proc/PID/cgroup ("0::PATH"; its threads in the same
 * one).  Each cgroup from the root down to the tasks' is one "hcgroup"
 * record (its absolute path, the controllers enabled for its children,
 * its limits: what a restore that has to make it again writes), each task
 * one "hcg" record (its pid, its cgroup's index); the number of cgroup
 * BPF programs attached to a cgroup ("bpf", refused at restore if it has
 * to be made again).  Refused, naming the
 * task: a version 1 hierarchy it is not at the root of, a threaded
 * cgroup, a thread in another cgroup than its task.  dump --cgroups ignore
 * (a hybrid or legacy v1 host) records none: the restore leaves the tree
 * in the restorer's cgroup.
 *
 * restore, in three steps, so that each task's memory is charged to its
 * cgroup (cgroup v2 does not move charges when a task moves):
 * cgm_prepare(), before any task is forked: a cgroup a task goes to that
 * exists is used as it is, if its limits are the dumped ones (it and those
 * above it below the cgroup it shares with the restorer; else refused,
 * naming the file and both values); one that does not is made, parents
 * first, then its controllers enabled and its dumped limits written (but
 * pids.max), as cgroup.c does; the cgroup.procs of each one a task has to
 * enter opened.  cgm_enter(), each task's restorer first thing (before
 * its kept COW mappings, children, files): "0" written there, itself.
 * cgm_restore(), every task made and waiting for its go byte (so before
 * any runs and before attrs_mempolicy_again() reads its cpuset): each task
 * checked in its cgroup, pids.max written, and each cgroup's memory.max
 * checked to hold the images' data still to load (cgm_fits).
 * cgm_cleanup() removes what a
 * failed restore made.  A task already in its cgroup when born (its
 * parent's; imgcr's own for the root: the usual case) is left there.  A task that cannot be put back (an ordinary
 * user and a cgroup it cannot write, a cgroup that has controllers for
 * its children now) fails the restore, naming the task and the cgroup,
 * unless restore --cgroups ignore (CRIU's --manage-cgroups=ignore) left
 * the tree in the restorer's cgroup.  With cg_caller_base (imgcr-criu and
 * a runtime that made the tree's cgroup and runs imgcr in it) the tree is
 * in imgcr's cgroup, the root's dumped one, as the caller wants; a task
 * that was in another one is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "tree.h"

#define CGM_MAX		1024	/* cgroups of one tree */
#define CGM_DEPTH	128	/* levels below the root */

int cgm_ignore;

void cgm_free(struct tree *t)
{
	int i;

	if (!t->hostcg)
		return;
	for (i = 0; i < t->hostcg->ncgs; i++) {
		free(t->hostcg->cgs[i].unkept);
		cg_free_one(&t->hostcg->cgs[i]);
	}
	free(t->hostcg->cgs);
	free(t->hostcg->mnt);
	free(t->hostcg->own);
	free(t->hostcg->fd);
	free(t->hostcg);
	t->hostcg = NULL;
}

static struct cg_host *host_get(struct tree *t)
{
	if (!t->hostcg) {
		t->hostcg = calloc(1, sizeof(*t->hostcg));
		if (!t->hostcg) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return t->hostcg;
}

static int cgm_find(const struct cg_host *h, const char *path)
{
	return cg_list_find(h->cgs, h->ncgs, path);
}

static int cgm_add(struct cg_host *h, const char *path)
{
	return cg_list_add(&h->cgs, &h->ncgs, CGM_MAX, path);
}

/* "/a/b" -> "/a", "/a" -> "/" (in place) */
static void parent_of(char *p)
{
	char *s = strrchr(p, '/');

	if (s == p)
		s[1] = 0;
	else if (s)
		*s = 0;
}

static void cg_path(const struct cg_host *h, const struct cg *g, char *out, size_t size)
{
	snprintf(out, size, "%s%s", h->mnt, strcmp(g->path, "/") ? g->path : "");
}

/* "/" 0, "/a" 1, "/a/b" 2: the depth of an absolute path */
static int depth_of(const char *p)
{
	int n = 0;

	for (; *p; p++)
		n += *p == '/' && p[1];
	return n;
}

/*
 * The files cgroup.c does not keep, at their defaults: a made cgroup has
 * those; one set otherwise is recorded (its name) and refused if the
 * cgroup has to be made again.
 */
static const struct {
	const char *file, *dflt;
} unkept[] = {
	{ "io.max", "" }, { "io.latency", "" }, { "cpu.idle", "0" },
	{ "cpu.uclamp.min", "0.00" }, { "cpu.uclamp.max", "max" },
	{ "memory.swap.high", "max" }, { "memory.zswap.max", "max" },
	{ "cpuset.cpus.partition", "member" }, { "cgroup.max.descendants", "max" },
	{ "cgroup.max.depth", "max" }, { "cgroup.freeze", "0" },
};

/* @dir's first file not at its default (malloc'ed "NAME=VALUE"), or NULL */
static char *cgm_unkept(const char *dir)
{
	char path[PATH_MAX * 2 + 64], *v, *out = NULL;
	struct dirent *d;
	size_t k, n;
	DIR *ls;

	for (k = 0; k < sizeof(unkept) / sizeof(unkept[0]) && !out; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, unkept[k].file);
		v = cg_read_line(path);
		if (v && strcmp(v, unkept[k].dflt)) {
			out = malloc(strlen(unkept[k].file) + strlen(v) + 2);
			if (out)
				sprintf(out, "%s=%s", unkept[k].file, v);
		}
		free(v);
	}
	ls = out ? NULL : opendir(dir);
	while (ls && !out && (d = readdir(ls))) {
		/* hugetlb.2MB.max, hugetlb.2MB.rsvd.max... */
		n = strlen(d->d_name);
		if (strncmp(d->d_name, "hugetlb.", 8) || n < 12 || strcmp(d->d_name + n - 4, ".max"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		v = cg_read_line(path);
		if (v && strcmp(v, "max")) {
			out = malloc(n + strlen(v) + 2);
			if (out)
				sprintf(out, "%s=%s", d->d_name, v);
		}
		free(v);
	}
	if (ls)
		closedir(ls);
	return out;
}

/* dump: cgroup @path (its parent in @h) added and read from @mnt; its index, or -1 (printed) */
static int cgm_add_one(struct cg_host *h, const char *mnt, const char *path, pid_t pid, char *dir)
{
	int i = cgm_find(h, path);

	if (i >= 0)
		return i;
	i = cgm_add(h, path);
	if (i < 0) {
		pr_err("pid %d: the tree is in more than %d cgroups", pid, CGM_MAX);
		return -1;
	}
	if (!strcmp(path, "/")) {
		h->cgs[i].subtree = xstrdup("");	/* never made: it always exists */
		return i;
	}
	if (!mnt) {
		pr_err("pid %d: in cgroup %s, and imgcr sees no cgroup2 mount to read its limits from: not supported",
		       pid, path);
		return -1;
	}
	sprintf(dir, "%s%s", mnt, path);
	if (cg_read_dir(&h->cgs[i], dir, pid, path))
		return -1;
	h->cgs[i].bpf = cg_bpf_attached(dir, pid, path);
	h->cgs[i].unkept = cgm_unkept(dir);
	return h->cgs[i].bpf < 0 ? -1 : i;
}

/*
 * dump: @path and every cgroup above it, parents first, read from @mnt;
 * its index, or -1 (printed).  A loop over the path's prefixes ("/",
 * "/a", "/a/b"), not a recursion, and the depth capped.
 */
static int cgm_add_path(struct cg_host *h, const char *mnt, const char *path, pid_t pid)
{
	size_t n, len = strlen(path);
	char *buf, *dir, *next, c;
	int i;

	if (len >= PATH_MAX || !abs_path_ok(path)) {
		pr_err("pid %d: its cgroup %s: bad path", pid, path);
		return -1;
	}
	if (depth_of(path) > CGM_DEPTH) {
		pr_err("pid %d: its cgroup %s is more than %d levels deep: not supported", pid, path,
		       CGM_DEPTH);
		return -1;
	}
	i = cgm_find(h, path);
	if (i >= 0)
		return i;
	buf = xstrdup(path);
	dir = malloc(len + (mnt ? strlen(mnt) : 0) + 1);
	if (!dir) {
		pr_err("out of memory");
		exit(1);
	}
	for (n = 1;; n = next ? (size_t)(next - path) : len) {
		c = buf[n];
		buf[n] = 0;
		i = cgm_add_one(h, mnt, buf, pid, dir);
		buf[n] = c;
		if (i < 0 || n >= len)
			break;
		next = strchr(path + n + (n > 1), '/');
	}
	free(dir);
	free(buf);
	return i;
}

/* @tid's cgroup v2 path (malloc'ed), or NULL */
static char *thread_cgroup(pid_t pid, pid_t tid)
{
	char path[64], *text, *p, *out = NULL;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", pid, tid);
	text = read_text(path, NULL);
	p = text ? (strncmp(text, "0::", 3) ? strstr(text, "\n0::") : text - 1) : NULL;
	if (p) {
		p += 4;
		p[strcspn(p, "\n")] = 0;
		out = xstrdup(p);
	}
	free(text);
	return out;
}

int cgm_dump(struct tree *t)
{
	struct cg_host *h;
	char *mnt = cg_mount(), *cg, *tcg;
	int i, j, g, ret = -1;

	cgm_free(t);
	if (cgm_ignore) {
		pr_info("--cgroups ignore: no cgroup membership recorded (the restore leaves the tree in the restorer's cgroup)");
		free(mnt);
		return 0;
	}
	h = host_get(t);
	for (i = 0; i < t->ntasks; i++) {
		struct tree_task *k = &t->tasks[i];

		if (k->zombie)
			continue;	/* a zombie keeps no cgroup that matters */
		if (cg_task_cgroup_host(k->pid, &cg)) {
			pr_err("pid %d: its cgroup cannot be recorded (imgcr dump --cgroups ignore records no cgroup membership: the restore leaves the tree in the restorer's cgroup)",
			       k->pid);
			goto out;
		}
		for (j = 0; j < k->nthreads; j++) {
			tcg = thread_cgroup(k->pid, k->threads[j]);
			if (tcg && strcmp(tcg, cg)) {
				pr_err("pid %d: thread %d in cgroup %s, its task in %s (a threaded cgroup): not supported",
				       k->pid, k->threads[j], tcg, cg);
				free(tcg);
				free(cg);
				goto out;
			}
			free(tcg);
		}
		g = cgm_add_path(h, mnt, cg, k->pid);
		free(cg);
		if (g < 0)
			goto out;
		k->cg = g + 1;
	}
	ret = 0;
out:
	free(mnt);
	return ret;
}

/* ---- restore ---- */

static const char *why(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
		return " (the restorer may not write it: an ordinary user, a cgroup not delegated to it)";
	case EBUSY:
		return " (it has controllers enabled for its children now, so it holds no task)";
	case EOPNOTSUPP:
		return " (a threaded or invalid cgroup now)";
	default:
		return "";
	}
}

#define IGNORE_HINT	" (imgcr restore --cgroups ignore leaves the tree in the restorer's cgroup)"

/*
 * @g's directory and every one above it that does not exist made, parents
 * first (a loop: the chain up to the first that exists, then made down);
 * 0 or -1 (printed)
 */
static int cgm_make(struct cg_host *h, int g, pid_t pid)
{
	char *dir, *parent;
	int *chain, n = 0, p, e, ret = -1;
	struct stat st;

	dir = malloc(strlen(h->mnt) + PATH_MAX + 1);
	parent = malloc(PATH_MAX);
	chain = malloc((CGM_DEPTH + 1) * sizeof(*chain));
	if (!dir || !parent || !chain) {
		pr_err("out of memory");
		exit(1);
	}
	for (;;) {
		cg_path(h, &h->cgs[g], dir, strlen(h->mnt) + PATH_MAX + 1);
		if (!stat(dir, &st))
			break;
		if (n > CGM_DEPTH) {
			pr_err("cgroup %s: more than %d levels deep", h->cgs[g].path, CGM_DEPTH);
			goto out;
		}
		chain[n++] = g;
		snprintf(parent, PATH_MAX, "%s", h->cgs[g].path);
		parent_of(parent);
		p = cgm_find(h, parent);
		if (p < 0 || p >= g) {
			pr_err("cgroup %s: its parent is not in the tree file", h->cgs[g].path);
			goto out;
		}
		g = p;
	}
	while (n > 0) {
		g = chain[--n];
		cg_path(h, &h->cgs[g], dir, strlen(h->mnt) + PATH_MAX + 1);
		if (h->cgs[g].unkept) {
			pr_err("restore failed: pid %d: its cgroup %s is gone, and had %s, which imgcr does not set: not supported" IGNORE_HINT,
			       pid, h->cgs[g].path, h->cgs[g].unkept);
			goto out;
		}
		if (h->cgs[g].bpf) {
			pr_err("restore failed: pid %d: its cgroup %s is gone, and had %d cgroup BPF program%s attached (device, socket, sysctl filters...) that imgcr cannot attach again: not supported" IGNORE_HINT,
			       pid, h->cgs[g].path, h->cgs[g].bpf, h->cgs[g].bpf > 1 ? "s" : "");
			goto out;
		}
		if (mkdir(dir, 0755)) {
			e = errno;
			pr_err("restore failed: pid %d: cannot make its cgroup %s again (%s): %s%s" IGNORE_HINT,
			       pid, h->cgs[g].path, dir, strerror(e), why(e));
			goto out;
		}
		h->cgs[g].made = 1;
	}
	ret = 0;
out:
	free(chain);
	free(parent);
	free(dir);
	return ret;
}

/* @a is @b or a cgroup above it */
static int is_above(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strcmp(a, "/") || (!strncmp(a, b, n) && (!b[n] || b[n] == '/'));
}

/*
 * --cgroups ignore: the tree in the restorer's cgroup would lose the BPF
 * programs attached to its cgroups below the one shared with the restorer
 * (the dump checked them only for dump --cgroups ignore); 0 or -1 (printed)
 */
static int cgm_ignore_ok(const struct tree *t)
{
	const struct cg_host *h = t->hostcg;
	char *own = NULL, parent[PATH_MAX];
	int i, g;

	if (cg_task_cgroup_host(getpid(), &own))
		own = xstrdup("/");
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		for (g = k->zombie ? 0 : k->cg - 1; g > 0 && !is_above(h->cgs[g].path, own);) {
			if (h->cgs[g].bpf) {
				pr_err("restore failed: pid %d: its cgroup %s had %d cgroup BPF program%s attached at the dump, which --cgroups ignore would leave it without (in %s): not supported",
				       k->dump_pid ? k->dump_pid : k->pid, h->cgs[g].path, h->cgs[g].bpf,
				       h->cgs[g].bpf > 1 ? "s" : "", own);
				free(own);
				return -1;
			}
			snprintf(parent, sizeof(parent), "%s", h->cgs[g].path);
			parent_of(parent);
			g = cgm_find(h, parent);
		}
	}
	free(own);
	pr_info("--cgroups ignore: the tree is in the restorer's cgroup");
	return 0;
}

/*
 * Root restoring a user's directory (trust.c): what the user could do,
 * no more.  Root may write any cgroup, so a tree whose tasks cgm_restore()
 * would move or whose cgroups it would make is refused: each live task's
 * cgroup must be the restorer's own (nothing moved, nothing made).
 */
int cgm_user_ok(const struct tree *t, char *why, size_t size)
{
	const struct cg_host *h = t->hostcg;
	char *own = NULL;
	int i, ok = 1;

	if (!h || !h->ncgs || cgm_ignore)
		return 1;
	if (cg_task_cgroup_host(getpid(), &own)) {
		snprintf(why, size, "imgcr's own cgroup is unknown");
		return 0;
	}
	for (i = 0; i < t->ntasks && ok; i++) {
		const struct tree_task *k = &t->tasks[i];

		if (k->zombie)
			continue;
		if (!k->cg) {
			snprintf(why, size, "pid %d has no hcg record", k->pid);
			ok = 0;
		} else if (strcmp(h->cgs[k->cg - 1].path, own)) {
			snprintf(why, size,
				 "pid %d goes to cgroup %s, not the restorer's %s (root would move it or make the cgroup for the user; --cgroups ignore leaves the tree in the restorer's cgroup)",
				 k->pid, h->cgs[k->cg - 1].path, own);
			ok = 0;
		}
	}
	free(own);
	return ok;
}

/*
 * Cgroup @g and those above it below the one it shares with the restorer
 * (@own), those not made by this restore: their limits the dump's
 * (@checked: done already); 0, or -1 (printed)
 */
static int cgm_same(struct cg_host *h, int g, const char *own, char *checked, pid_t pid)
{
	char *dir = malloc(strlen(h->mnt) + PATH_MAX + 1), parent[PATH_MAX];
	int ret = -1;

	if (!dir) {
		pr_err("out of memory");
		exit(1);
	}
	while (g > 0 && !is_above(h->cgs[g].path, own) && !checked[g]) {
		checked[g] = 1;
		if (!h->cgs[g].made) {
			cg_path(h, &h->cgs[g], dir, strlen(h->mnt) + PATH_MAX + 1);
			if (cg_limits_same(&h->cgs[g], dir, pid, h->cgs[g].path))
				goto out;
		}
		snprintf(parent, sizeof(parent), "%s", h->cgs[g].path);
		parent_of(parent);
		g = cgm_find(h, parent);
	}
	ret = 0;
out:
	free(dir);
	return ret;
}

/* a cgroup file's number; @dflt if absent, ULLONG_MAX for "max" */
static unsigned long long cg_num(const char *dir, const char *file, unsigned long long dflt)
{
	char path[PATH_MAX * 2 + 32], *v;
	unsigned long long n = dflt;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	v = cg_read_line(path);
	if (v)
		n = strcmp(v, "max") ? strtoull(v, NULL, 10) : ULLONG_MAX;
	free(v);
	return n;
}

/* free swap, bytes (/proc/meminfo SwapFree) */
static unsigned long long swap_free(void)
{
	char *text = read_text("/proc/meminfo", NULL), *p;
	unsigned long long kb = 0;

	p = text ? strstr(text, "\nSwapFree:") : NULL;
	if (p)
		kb = strtoull(p + 10, NULL, 10);
	free(text);
	return kb * 1024;
}

static unsigned long long sub0(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : 0;
}

/* a cgroup's page cache on its file LRU lists (memory.stat): reclaimable, not in the way */
static unsigned long long cg_file_lru(const char *dir)
{
	char path[PATH_MAX * 2 + 32], *text, *p;
	unsigned long long n = 0;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	text = read_text(path, NULL);
	p = text ? strstr(text, "\nactive_file ") : NULL;
	if (p)
		n += strtoull(p + 13, NULL, 10);
	p = text ? strstr(text, "\ninactive_file ") : NULL;
	if (p)
		n += strtoull(p + 15, NULL, 10);
	free(text);
	return n;
}

/*
 * The swap cgroup @path (a path under h->mnt) may still use: the least of
 * memory.swap.max - memory.swap.current over it and every cgroup above it
 * (but "/"), whatever their memory.max, and the free swap
 */
static unsigned long long cg_swap_room(const struct cg_host *h, const char *path)
{
	char p[PATH_MAX], dir[PATH_MAX * 2];
	unsigned long long room = swap_free(), smax;

	snprintf(p, sizeof(p), "%s", path);
	while (strcmp(p, "/") && room) {
		snprintf(dir, sizeof(dir), "%s%s", h->mnt, p);
		smax = cg_num(dir, "memory.swap.max", ULLONG_MAX);
		if (smax != ULLONG_MAX)
			smax = sub0(smax, cg_num(dir, "memory.swap.current", 0));
		if (smax < room)
			room = smax;
		parent_of(p);
	}
	return room;
}

/*
 * Cgroup @path (under h->mnt, not "/"): what it holds now (but its page
 * cache on the file LRU lists, which reclaim would make room of) plus @need
 * bytes of image data still to @when must fit under its memory.max with the
 * swap it may use (cg_swap_room()); 0, or -1 (printed, naming the cgroup,
 * @who and the sizes)
 */
static int cg_fits_one(const struct cg_host *h, const char *path, struct cg_pending need,
		       pid_t who, const char *when)
{
	unsigned long long max, cur, sw, avail;
	char dir[PATH_MAX * 2];

	snprintf(dir, sizeof(dir), "%s%s", h->mnt, path);
	max = cg_num(dir, "memory.max", ULLONG_MAX);
	if (max == ULLONG_MAX)
		return 0;
	cur = sub0(cg_num(dir, "memory.current", 0), cg_file_lru(dir));
	sw = cg_swap_room(h, path);
	/* mlocked data is never swapped out */
	if (sw > sub0(need.data, need.locked))
		sw = sub0(need.data, need.locked);
	avail = sub0(max, cur) + sw;
	pr_debug("cgroup %s: memory.max %llu, current %llu, the images' data to %s %llu (%llu mlocked), swap it may use %llu",
		 path, max, cur, when, need.data, need.locked, sw);
	if (need.data <= avail)
		return 0;
	pr_err("restore failed: cgroup %s (pid %d's): memory.max is %llu bytes, %llu in use (not counting page cache), and the tree's images there have %llu bytes of data still to %s (%llu mlocked; swap it may use for the rest: %llu bytes): the tree cannot fit",
	       path, who, max, cur, need.data, when, need.locked, sw);
	return -1;
}

/*
 * Every cgroup a task is in or below (but "/"): cg_fits_one() with the
 * image data its tasks have still to @when (@pending[i] of task i).  With
 * cg_caller_base the tasks are in imgcr's own cgroup (the caller's, its
 * path maybe not the dumped one): that one and those above it.  0, or -1
 * (printed).
 */
static int cgm_fits(const struct tree *t, const struct cg_pending *pending, const char *when)
{
	const struct cg_host *h = t->hostcg;
	struct cg_pending *need, all = { 0, 0 };
	char parent[PATH_MAX];
	int i, g, *who, ret = -1;
	pid_t first = 0;

	if (cg_caller_base) {
		for (i = 0; i < t->ntasks; i++) {
			if (t->tasks[i].zombie)
				continue;
			all.data += pending[i].data;
			all.locked += pending[i].locked;
			if (!first)
				first = t->tasks[i].dump_pid ? t->tasks[i].dump_pid : t->tasks[i].pid;
		}
		if (!h->own)
			return 0;
		snprintf(parent, sizeof(parent), "%s", h->own);
		for (; strcmp(parent, "/"); parent_of(parent))
			if (cg_fits_one(h, parent, all, first, when))
				return -1;
		return 0;
	}
	need = calloc(h->ncgs, sizeof(*need));
	who = calloc(h->ncgs, sizeof(*who));
	if (!need || !who) {
		pr_err("out of memory");
		exit(1);
	}
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		for (g = k->zombie ? 0 : k->cg - 1; g > 0;) {
			need[g].data += pending[i].data;
			need[g].locked += pending[i].locked;
			if (!who[g])
				who[g] = k->dump_pid ? k->dump_pid : k->pid;
			snprintf(parent, sizeof(parent), "%s", h->cgs[g].path);
			parent_of(parent);
			g = cgm_find(h, parent);
		}
	}
	for (g = 1; g < h->ncgs; g++)
		if (need[g].data && cg_fits_one(h, h->cgs[g].path, need[g], who[g], when))
			goto out;
	ret = 0;
out:
	free(need);
	free(who);
	return ret;
}

/* the cgroup task @i is born in: its parent's (moved first), the restorer's for the root */
static int born_in(const struct tree *t, int i, int own)
{
	const struct tree_task *p = t->tasks[i].pid == t->root ? NULL : tree_find(t, t->tasks[i].ppid);

	return p && p->cg ? p->cg - 1 : own;
}

static void cgm_close(struct cg_host *h)
{
	int i;

	if (h->fd && h->ownfd >= 0)
		close(h->ownfd);
	h->ownfd = -1;
	for (i = 0; h->fd && i < h->ncgs; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	free(h->fd);
	h->fd = NULL;
}

int cgm_prepare(struct tree *t, int base, const struct cg_pending *pending)
{
	struct cg_host *h = t->hostcg;
	char *own = NULL, *checked = NULL, dir[PATH_MAX * 2], path[PATH_MAX * 2 + 16];
	int i, g, root = -1, ownidx, fd, e, ret = -1;

	if (!h || !h->ncgs)
		return 0;	/* an image made before membership was dumped */
	if (cgm_ignore)
		return cgm_ignore_ok(t);
	if (cg_task_cgroup_host(getpid(), &own)) {
		pr_err("restore failed: imgcr's own cgroup cannot be read" IGNORE_HINT);
		return -1;
	}
	ownidx = cgm_find(h, own);
	free(h->own);
	h->own = strdup(own);
	free(h->mnt);
	h->mnt = cg_mount();
	checked = calloc(h->ncgs, 1);
	h->fd = malloc(h->ncgs * sizeof(*h->fd));
	if (!checked || !h->fd) {
		pr_err("out of memory");
		exit(1);
	}
	for (i = 0; i < h->ncgs; i++)
		h->fd[i] = -1;
	h->ownfd = -1;
	i = tree_index(t, t->root);
	if (i >= 0)
		root = t->tasks[i].cg - 1;
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];
		pid_t dpid = k->dump_pid ? k->dump_pid : k->pid;

		if (k->zombie)
			continue;
		if (!k->cg) {
			pr_err("restore failed: pid %d: no hcg record (its cgroup), where the tree has hcgroup records",
			       dpid);
			goto out;
		}
		g = k->cg - 1;
		if (cg_caller_base) {
			if (g == root)
				continue;	/* in imgcr's: the caller's cgroup for the tree */
			pr_err("restore failed: pid %d: in cgroup %s at the dump, the root task in %s, which the caller made again as imgcr's cgroup %s: a task in another cgroup is not supported",
			       dpid, h->cgs[g].path, root >= 0 ? h->cgs[root].path : "?", own);
			goto out;
		}
		if (g == born_in(t, i, ownidx) || (born_in(t, i, ownidx) < 0 && !strcmp(h->cgs[g].path, own)))
			continue;	/* born there */
		if (!h->mnt) {
			pr_err("restore failed: pid %d: in cgroup %s at the dump, and imgcr sees no cgroup2 mount to put it back" IGNORE_HINT,
			       dpid, h->cgs[g].path);
			goto out;
		}
		if (cgm_make(h, g, dpid) || cgm_same(h, g, own, checked, dpid))
			goto out;
		if (h->fd[g] >= 0)
			continue;
		/* the task writes "0" (itself) to it first thing (cgm_enter) */
		cg_path(h, &h->cgs[g], dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && fd < base) {
			h->fd[g] = fcntl(fd, F_DUPFD_CLOEXEC, base);
			e = errno;
			close(fd);
			fd = h->fd[g];
			errno = e;
		}
		h->fd[g] = fd;
		if (fd < 0) {
			e = errno;
			pr_err("restore failed: pid %d: cannot put it back in its cgroup %s: %s%s" IGNORE_HINT,
			       dpid, h->cgs[g].path, strerror(e), why(e));
			goto out;
		}
	}
	/* a task enters another cgroup: imgcr's own for the pgrp keepers (restore.c) */
	for (g = 0; g < h->ncgs && h->fd[g] < 0; g++)
		;
	if (g < h->ncgs) {
		snprintf(dir, sizeof(dir), "%s%s", h->mnt, strcmp(own, "/") ? own : "");
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		h->ownfd = fd >= 0 && fd < base ? fcntl(fd, F_DUPFD_CLOEXEC, base) : fd;
		if (fd >= 0 && fd < base)
			close(fd);
	}
	/*
	 * the cgroups made, no task in them yet: controllers parents first,
	 * then the limits (but pids.max, cgm_restore()), so that each task's
	 * memory is charged under them from its first page
	 */
	for (i = 0; i < h->ncgs; i++) {
		if (!h->cgs[i].made)
			continue;
		cg_path(h, &h->cgs[i], dir, sizeof(dir));
		if (cg_enable(&h->cgs[i], dir))
			goto out;
	}
	for (i = 0; i < h->ncgs; i++) {
		if (!h->cgs[i].made)
			continue;
		cg_path(h, &h->cgs[i], dir, sizeof(dir));
		if (cg_set_limits_some(&h->cgs[i], dir, CG_LIM_NOT_PIDS))
			goto out;
	}
	if (h->mnt && pending && cgm_fits(t, pending, "allocate"))
		goto out;
	ret = 0;
out:
	if (ret)
		cgm_cleanup(t);
	free(checked);
	free(own);
	return ret;
}

int cgm_enter(const struct tree *t, int ti, char *err, size_t len)
{
	const struct cg_host *h = t->hostcg;
	const struct tree_task *k = &t->tasks[ti];
	static pid_t entered;

	if (!h || !h->fd || k->zombie || !k->cg || h->fd[k->cg - 1] < 0 || entered == getpid())
		return 0;
	if (write(h->fd[k->cg - 1], "0", 1) != 1) {
		int e = errno;

		snprintf(err, len, "cannot enter its cgroup %s: %s%s" IGNORE_HINT,
			 h->cgs[k->cg - 1].path, strerror(e), why(e));
		return -1;
	}
	entered = getpid();
	return 0;
}

int cgm_own_fd(const struct tree *t)
{
	return t->hostcg && t->hostcg->fd ? t->hostcg->ownfd : -1;
}

int cgm_restore(struct tree *t, const pid_t *host, const struct cg_pending *pending)
{
	struct cg_host *h = t->hostcg;
	char dir[PATH_MAX * 2], *cg;
	int i, g, ret = -1;

	if (!h || !h->ncgs || cgm_ignore)
		return 0;
	/* every task where it belongs: it moved itself (cgm_enter) or was born there */
	for (i = 0; i < t->ntasks && !cg_caller_base; i++) {
		const struct tree_task *k = &t->tasks[i];
		pid_t dpid = k->dump_pid ? k->dump_pid : k->pid;

		if (k->zombie || !k->cg)
			continue;
		g = k->cg - 1;
		if (host[i] <= 0 || cg_task_cgroup_host(host[i], &cg)) {
			pr_err("restore failed: pid %d: its cgroup cannot be read", dpid);
			goto out;
		}
		if (strcmp(cg, h->cgs[g].path)) {
			pr_err("restore failed: pid %d: in cgroup %s, not its %s" IGNORE_HINT, dpid, cg,
			       h->cgs[g].path);
			free(cg);
			goto out;
		}
		free(cg);
		pr_debug("pid %d: in cgroup %s again", dpid, h->cgs[g].path);
	}
	/* the tasks in: pids.max (the restore's keepers are gone after the go byte) */
	for (i = 0; i < h->ncgs; i++) {
		if (!h->cgs[i].made)
			continue;
		cg_path(h, &h->cgs[i], dir, sizeof(dir));
		if (cg_set_limits_some(&h->cgs[i], dir, CG_LIM_PIDS))
			goto out;
		pr_info("cgroup %s made again, with its dumped limits", h->cgs[i].path);
	}
	if (h->mnt && pending && cgm_fits(t, pending, "load"))
		goto out;
	ret = 0;
out:
	cgm_close(h);
	return ret;
}

/* pid @p (in imgcr's PID namespace) is one of the tree's tasks or its keepers' */
static int tree_pid(const struct tree *t, pid_t p)
{
	if (t->hostcg->pidns)
		return 0;	/* all gone with its init (kill_tree()), whatever is left is not the tree's */
	return tree_find(t, p) || tree_group_kept(t, p) || tree_session_kept(t, p);
}

/*
 * Cgroup @dir (@path) made by the failed restore emptied: the tree's
 * tasks left in it killed (not cgroup.kill: another process may have
 * joined it since it was made, a unit restarted into it); 0, or -1 if a
 * process not of the tree is in it (warned: the cgroup is left)
 */
static int cgm_empty(const struct tree *t, const char *dir, const char *path)
{
	struct timespec ms10 = { 0, 10000000 };
	char procs[PATH_MAX * 2 + 16], *text, *p, *end;
	pid_t pid;
	int n;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	for (n = 0; n < 200; n++) {
		text = read_text(procs, NULL);
		if ((!text || !*text) && !cg_populated(dir)) {
			free(text);
			return 0;
		}
		for (p = text; p && *p; p = end) {
			pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid <= 0)
				continue;
			if (!tree_pid(t, pid)) {
				pr_warn("cgroup %s, made by this failed restore, left in place with the cgroups above it it made: pid %d, not of the tree, is in it",
					path, pid);
				free(text);
				return -1;
			}
			kill(pid, SIGKILL);
		}
		free(text);
		nanosleep(&ms10, NULL);
	}
	pr_warn("cgroup %s, made by this failed restore, left in place: still not empty after 2 s", path);
	return -1;
}

void cgm_cleanup(struct tree *t)
{
	struct cg_host *h = t->hostcg;
	char dir[PATH_MAX * 2];
	size_t len;
	int i, j, left;

	if (h)
		cgm_close(h);
	for (i = h ? h->ncgs - 1 : -1; i >= 0; i--) {
		if (!h->cgs[i].made)
			continue;
		/* one below it left: it stays too */
		len = strlen(h->cgs[i].path);
		for (j = i + 1, left = 0; j < h->ncgs && !left; j++)
			left = h->cgs[j].made && !strncmp(h->cgs[j].path, h->cgs[i].path, len) &&
			       h->cgs[j].path[len] == '/';
		if (left)
			continue;
		cg_path(h, &h->cgs[i], dir, sizeof(dir));
		if (cgm_empty(t, dir, h->cgs[i].path))
			continue;
		if (rmdir(dir) && errno != ENOENT) {
			pr_pwarn("cannot remove cgroup %s, made by this restore", dir);
			continue;
		}
		h->cgs[i].made = 0;
	}
}

/* ---- records ---- */

static void cgm_write(FILE *f, const struct tree *t)
{
	const struct cg_host *h = t->hostcg;
	char e[4 * PATH_MAX + 1];
	int i;

	if (!h)
		return;
	for (i = 0; i < h->ncgs; i++) {
		tree_escape(e, sizeof(e), h->cgs[i].path);
		fprintf(f, "hcgroup path=%s", e);
		if (h->cgs[i].bpf)
			fprintf(f, " bpf=%d", h->cgs[i].bpf);
		if (h->cgs[i].unkept) {
			tree_escape(e, sizeof(e), h->cgs[i].unkept);
			fprintf(f, " unkept=%s", e);
		}
		cg_rec_write(f, &h->cgs[i]);
	}
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].cg)
			fprintf(f, "hcg pid=%d cgroup=%d\n", t->tasks[i].pid, t->tasks[i].cg - 1);
}

static const char *hcgroup_read(struct tree *t, struct rec *r)
{
	struct cg_host *h = host_get(t);
	char parent[PATH_MAX];
	const char *err;
	struct cg *g;
	int i;

	i = cgm_add(h, "?");
	if (i < 0)
		return "too many hcgroup records";
	g = &h->cgs[i];
	free(g->path);
	g->path = NULL;
	if (rec_str(r, "path", &g->path) || !abs_path_ok(g->path) || strlen(g->path) >= PATH_MAX)
		return "bad hcgroup record";
	if (depth_of(g->path) > CGM_DEPTH)
		return "hcgroup more than 128 levels deep";
	if (rec_has(r, "bpf") && REC_NUM(r, "bpf", 1, 1 << 20, g->bpf))
		return "bad hcgroup record";
	if (rec_has(r, "unkept") && (rec_str(r, "unkept", &g->unkept) || !*g->unkept ||
				     strlen(g->unkept) > 2 * CG_VAL_MAX))
		return "bad hcgroup record";
	err = cg_rec_read(r, g);
	if (err)
		return err;
	if ((i == 0) != !strcmp(g->path, "/"))
		return "the first hcgroup record is not the root (\"/\")";
	if (cgm_find(h, g->path) != i)
		return "hcgroup listed twice";
	if (i) {
		snprintf(parent, sizeof(parent), "%s", g->path);
		parent_of(parent);
		if (cgm_find(h, parent) < 0 || cgm_find(h, parent) >= i)
			return "hcgroup record before its parent's";
	}
	return NULL;
}

static const char *hcg_read(struct tree *t, struct rec *r)
{
	struct tree_task *k;
	pid_t pid;
	int g;

	if (!t->hostcg)
		return "hcg record before the hcgroup records";
	if (REC_NUM(r, "pid", 1, TREE_PID_MAX, pid) ||
	    REC_NUM(r, "cgroup", 0, t->hostcg->ncgs - 1, g))
		return "bad hcg record";
	k = tree_find(t, pid);
	if (!k)
		return "hcg record of a pid that is not a task of the tree";
	if (k->cg)
		return "hcg listed twice for one task";
	k->cg = g + 1;
	return NULL;
}

const struct tree_record cgm_records[] = {
	{ "hcgroup", hcgroup_read, cgm_write, NULL },
	{ "hcg", hcg_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};
