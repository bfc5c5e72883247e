// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr dump -t PID -D DIR [--leave-running] [--shell-job] [--ghost-limit BYTES] [--ext-unix-sk]:
 * checkpoint a process tree (--shell-job: with fds on a terminal outside it,
 * tty.c; --ext-unix-sk: with unix sockets connected to sockets outside it,
 * connected again at restore, sk-unix.c).
 *
 * 1. Freeze (freeze.c): PTRACE_SEIZE + PTRACE_INTERRUPT every thread of
 *    every task, starting at PID, listing each task's threads again until
 *    no new one appears and reading each stopped task's children
 *    (/proc/PID/task/TID/children) until a full pass finds no new task.
 *    Nothing is read before a task is stopped, and a stopped thread cannot
 *    clone or fork.  The tree records each task's threads.
 * 2. Describe every task (ids, credentials, cwd/root/umask, attributes:
 *    attrs.c, fds) and check
 *    that everything is supported (each thread's seccomp filters are
 *    read into DIR/seccomp-PID.img, or refused: seccomp.c).  Each fd is described by its kind (the
 *    table in files.h: files-reg.c, pipes.c, fifo.c, devices.c, eventfd.c,
 *    signalfd.c, timerfd.c, tty.c, epoll.c, inotify.c, memfd.c, pidfd.c,
 *    sockets.c),
 *    which may save data (pipes: tee(2), which leaves the data in the live
 *    pipe; ptys: read, and put back if the tree is left running; memfds;
 *    sockets: MSG_PEEK, which leaves the data queued);
 *    fds sharing one open file description share one file record.
 * 3. Write every image from /proc/PID/dump into DIR/core-PID.img (the
 *    module writes it, one copy: IMGCR_IOC_DUMP_TO; read() with a module
 *    from before it; one image holds all the threads of a task: it must
 *    list exactly the frozen threads) and write DIR/tree (format: tree.c).  A zombie has no image:
 *    the tree records its ids and exit status; a task that was stopped
 *    (SIGSTOP, job control) before the dump is marked so.
 *    Deleted files still open or mapped (the images list these:
 *    IMGCR_FILE_DELETED) are saved (files-ghost.c, up to --ghost-limit
 *    bytes of data each, default 1 MiB); file locks are recorded (locks.c).
 * 4. SIGKILL the tree, or PTRACE_DETACH it with --leave-running.  On any
 *    error, the tree is detached untouched and the error names pid and fd.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "attrs.h"
#include "cgroup.h"
#include "commands.h"
#include "files.h"
#include "freeze.h"
#include "image.h"
#include "live.h"
#include "log.h"
#include "notify.h"
#include "ns.h"
#include "pipes.h"
#include "proc.h"
#include "seccomp.h"
#include "shmmaps.h"
#include "sockets.h"
#include "statehook.h"
#include "tree.h"
#include "userns.h"
#include "tty.h"

struct dctx {
	int caller_cgroups;	/* --caller-cgroups: the caller restores cgroup membership */
	struct tree t;
	struct freezer fz;
	const char *dir;
	int have_kcmp;
	long long ghost_limit;
	int ext_unix_sk;		/* --ext-unix-sk (sk-unix.c) */
	int live;			/* --live: memory copied while running (live.c) */
	int live_check;			/* --live-check: compare with a plain dump */
	int leave;			/* --leave-running */
	unsigned long long fill_bytes;	/* of the fills after the release */
	struct live lv;
	struct live_fill *fills;	/* images with pages still to write */
	int nfills;
	struct shm_maps shm;		/* shared memory objects mapped (shmmaps.c) */
	int watches;			/* struct fd_dump's, asked once per dump */
};

/* An image written with pages left out, to fill from the live copy. */
struct live_fill {
	pid_t pid;
	char *path;
	struct imgcr_range *ranges;
	size_t n;
};

/* --stats: where the frozen time goes (ms). */
static long long st_open, st_ranges, st_write, st_fill_late;
static unsigned long long st_bytes;	/* of the images written */
static int st_images;

/* The live copy: up to this many passes, while each halves what to copy. */
#define LIVE_MAX_PASSES 5
#define LIVE_FEW_PAGES 256	/* few enough to write frozen */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char *const ns_names[] = {
	"pid", "mnt", "net", "ipc", "uts", "user", "cgroup", "time",
};

/*
 * Every task is in the root's namespaces (a tree's own namespaces are the
 * root's: ns.c), and has not made one for its children alone
 * (unshare(CLONE_NEWPID or CLONE_NEWTIME) without a fork yet: its next
 * child would be in a namespace the dump does not see).
 */
/* @path's label (an LSM's attr file) without trailing NULs or newline; "" if none */
static void lsm_label(const char *path, char *out, size_t size)
{
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, out, size - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	out[n] = 0;
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == 0))
		out[--n] = 0;
}

/*
 * The task's security label (AppArmor profile, SELinux context): a
 * restored task runs with imgcr's (the exec keeps its caller's), so one
 * confined otherwise would come back unconfined: refused.
 */
static int lsm_check(pid_t pid)
{
	char path[64], mine[512], its[512];

	lsm_label("/proc/self/attr/current", mine, sizeof(mine));
	snprintf(path, sizeof(path), "/proc/%d/attr/current", pid);
	lsm_label(path, its, sizeof(its));
	if (strcmp(mine, its)) {
		pr_err("pid %d: its security label is '%s', imgcr's is '%s': a restored task gets imgcr's, so it is not supported (run imgcr under the same profile)",
		       pid, its, mine);
		return -1;
	}
	return 0;
}

static int ns_check(struct dctx *c, int i)
{
	pid_t pid = c->t.tasks[i].pid;
	char a[128], b[128], pa[96], pb[96];
	ssize_t la, lb;
	size_t k;

	for (k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++) {
		snprintf(pa, sizeof(pa), "/proc/%d/ns/%s", c->t.root, ns_names[k]);
		snprintf(pb, sizeof(pb), "/proc/%d/ns/%s", pid, ns_names[k]);
		la = readlink(pa, a, sizeof(a) - 1);
		lb = readlink(pb, b, sizeof(b) - 1);
		if (la < 0 && lb < 0 && errno == ENOENT)
			continue;
		/* a zombie keeps only its pid and user namespaces */
		if (lb < 0 && errno == ENOENT && c->t.tasks[i].zombie)
			continue;
		if (la < 0 || lb < 0) {
			pr_perror("pid %d: cannot read its %s namespace", pid, ns_names[k]);
			return -1;
		}
		a[la] = b[lb] = 0;
		if (strcmp(a, b)) {
			pr_err("pid %d: %s namespace %s differs from the root task's (pid %d, %s): tasks in other namespaces are not supported",
			       pid, ns_names[k], b, c->t.root, a);
			return -1;
		}
	}
	for (k = 0; k < 2 && !c->t.tasks[i].zombie; k++) {
		static const char *const kids[2] = { "pid", "time" };

		snprintf(pa, sizeof(pa), "/proc/%d/ns/%s", pid, kids[k]);
		snprintf(pb, sizeof(pb), "/proc/%d/ns/%s_for_children", pid, kids[k]);
		la = readlink(pa, a, sizeof(a) - 1);
		lb = readlink(pb, b, sizeof(b) - 1);
		if (la <= 0 || lb <= 0)
			continue;
		a[la] = b[lb] = 0;
		if (strcmp(a, b)) {
			pr_err("pid %d: its children's %s namespace (%s) is not its own (%s): it made one with unshare() and has not forked into it yet: not supported",
			       pid, kids[k], b, a);
			return -1;
		}
	}
	return 0;
}

/*
 * What two processes can share without sharing their memory, and which
 * a restore would give each its own copy of: refused, naming both.
 * (CLONE_SIGHAND needs CLONE_VM, so only threads and vfork children share
 * their handlers; checked all the same.)
 */
static const struct {
	int type;
	const char *what, *how;
} shared_kinds[] = {
	{ KCMP_FILES, "one fd table", "clone(CLONE_FILES) without CLONE_VM" },
	{ KCMP_FS, "one cwd, root and umask", "clone(CLONE_FS) without CLONE_VM" },
	{ KCMP_SIGHAND, "one table of signal handlers", "clone(CLONE_SIGHAND)" },
};

/* Whether @a and @b share an object of @type (kcmp; an error is "no"). */
static int kcmp_same(pid_t a, pid_t b, int type)
{
	return syscall(SYS_kcmp, a, b, type, 0, 0) == 0;
}

/* @a and @b share shared_kinds[@k] (@outside: the one not in the tree): refused. */
static int share_refuse(pid_t a, pid_t b, int k, pid_t outside)
{
	char out[96] = "";

	if (outside)
		snprintf(out, sizeof(out), "; pid %d is outside the tree", outside);
	pr_err("pid %d and pid %d share %s (%s%s): not supported (a restore would give each its own, and what one changes afterwards would no longer be seen by the other)",
	       a, b, shared_kinds[k].what, shared_kinds[k].how, out);
	return -1;
}

struct share_cand {
	pid_t pid;
	int in_tree;
};

static int sort_type;

/* kcmp() as an order (it answers 0 equal, 1 less, 2 greater; an error: equal) */
static int cmp_kcmp(const void *a, const void *b)
{
	long r = syscall(SYS_kcmp, ((const struct share_cand *)a)->pid,
			 ((const struct share_cand *)b)->pid, sort_type, 0, 0);

	return r == 1 ? -1 : r == 2 ? 1 : 0;
}

/* The capability set KEY ("CapPrm") of thread TID of PID, 0 if unknown. */
static unsigned long long thread_caps(pid_t pid, pid_t tid, const char *key)
{
	char path[64], *text;
	const char *v;
	unsigned long long caps = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = read_text(path, NULL);
	v = text ? status_field(text, key) : NULL;
	if (v)
		caps = strtoull(v, NULL, 16);
	free(text);
	return caps;
}

/* The Tgid of task PID (a thread's TID is a /proc entry too), 0 if unknown. */
static long task_tgid(pid_t pid)
{
	char path[64], *text;
	const char *v;
	long tgid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_text(path, NULL);
	v = text ? status_field(text, "Tgid") : NULL;
	tgid = v ? strtol(v, NULL, 10) : 0;
	free(text);
	return tgid;
}

#define CAP_SYS_ADMIN_BIT		21
#define CAP_CHECKPOINT_RESTORE_BIT	40

/* Can we create a user namespace (imgcr restore --pidns as a user)?  0 or an errno. */
static int userns_error(void)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return errno;
	if (!p)
		_exit(unshare(CLONE_NEWUSER) ? errno : 0);
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return ECHILD;
	return WEXITSTATUS(st);
}

/*
 * Process groups and sessions: imgcr restore recreates a group or session
 * with its leader in the tree, or as the root's when the root's is led
 * from outside (the restorer's then, restore.c restored_ids()).  Another
 * group whose leader is outside the tree (a child left in the shell's job
 * when the root made a group of its own, a task that joined an outside
 * group with setpgid()) or exited and was reaped (the group outlives its
 * leader while a member is alive or a zombie) is recreated with its number
 * by a keeper task (restore.c task_keepers()), unless it is numbered 0
 * here (led outside imgcr's PID namespace).  A session whose leader exited
 * (a daemon that forked twice: its parent made the session and exited, the
 * daemon went to a child subreaper or a PID namespace's init) is recreated
 * by a session keeper (restore.c session_keeper()) when its top tasks
 * (those whose parent is in another session) have one parent P, none is a
 * zombie, and every group in it is led by a task of the tree or is the
 * session's own (pgid == sid), and a task in that group that is not a top
 * task has its parent in it (nothing can join it once the keeper is
 * gone).  P is a child subreaper during the restore, and its flag is then
 * as in its image.  Anything else is refused here, with or without --leave-running,
 * naming the task, the group or session and where its leader is.
 */
static int session_check(const struct tree *t, const struct tree_task *k)
{
	const struct tree_task *p;
	pid_t pp;
	int i;

	if (kill(k->sid, 0) == 0 || errno == EPERM) {
		pr_err("pid %d (%s): its session %d is led by no task of the tree and is not the root's, and pid %d runs outside the tree (its leader, or a process that took its number): a restore cannot put it back in that session; not supported",
		       k->pid, k->comm, k->sid, k->sid);
		return -1;
	}
	for (i = 0; i < t->ntasks && t->tasks[i].sid != k->sid; i++)
		;
	/* the top tasks' parent, once per session (its first task in the tree) */
	pp = &t->tasks[i] == k ? tree_session_parent(t, k->sid) : 1;
	if (pp <= 0) {
		pr_err("pid %d (%s): its session %d, whose leader exited, has top tasks (their parent in another session) with different parents: not supported",
		       k->pid, k->comm, k->sid);
		return -1;
	}
	p = tree_find(t, k->ppid);
	if (p && p->sid != k->sid && k->zombie) {
		pr_err("pid %d (%s, a zombie): its session %d, whose leader exited, is recreated by a keeper task that makes the session's top tasks, and a zombie cannot be one of them: not supported",
		       k->pid, k->comm, k->sid);
		return -1;
	}
	if (k->pgid != k->sid && !tree_find(t, k->pgid)) {
		pr_err("pid %d (%s): its process group %d, led by no task of the tree, is in session %d, whose leader exited too: not supported",
		       k->pid, k->comm, k->pgid, k->sid);
		return -1;
	}
	/*
	 * the session's own group has no leader once the keeper is reaped: a
	 * task can only be born in it (from the keeper or a parent in it)
	 */
	if (k->pgid == k->sid && p && p->sid == k->sid && p->pgid != k->sid) {
		pr_err("pid %d (%s): it is in process group %d, the own group of its session, whose leader exited, and its parent pid %d (%s) is in group %d: a restore cannot put it back in group %d, which has no leader to join once pid %d is made; not supported",
		       k->pid, k->comm, k->sid, p->pid, p->comm, p->pgid, k->sid, k->pid);
		return -1;
	}
	if (tree_find_tid(t, k->sid)) {
		pr_err("pid %d (%s): its session %d has the number of a thread of the tree",
		       k->pid, k->comm, k->sid);
		return -1;
	}
	return 0;
}

static int pgrp_check(const struct tree *t)
{
	const struct tree_task *root = tree_find(t, t->root);
	int i;

	for (i = 0; root && i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];
		const char *what = NULL;
		char where[64];
		pid_t id = 0;

		const struct tree_task *p = tree_find(t, k->ppid);

		/* restore.c check_tree(): a session is inherited unless the task leads it */
		if (p && k->pid != t->root && k->sid != k->pid && p->sid != k->sid &&
		    !tree_session_kept(t, k->sid)) {
			pr_err("pid %d (%s%s): its session %d differs from its parent's, pid %d (%s%s, session %d), and it does not lead it: a restore makes it in its parent's session; not supported",
			       k->pid, k->comm, k->zombie ? ", a zombie" : "", k->sid, p->pid, p->comm,
			       p->zombie ? ", a zombie" : "", p->sid);
			return -1;
		}
		if (k->pgid != k->pid && k->pgid != root->pgid && !tree_find(t, k->pgid) && k->pgid <= 0) {
			what = "process group";
			id = k->pgid;
		} else if (k->sid != k->pid && k->sid != root->sid && !tree_find(t, k->sid)) {
			if (k->sid > 0) {
				if (session_check(t, k))
					return -1;
				continue;
			}
			what = "session";
			id = k->sid;
		}
		if (!what)
			continue;
		if (id <= 0)	/* not in imgcr's PID namespace */
			snprintf(where, sizeof(where), "outside this PID namespace");
		else if (kill(id, 0) == 0 || errno == EPERM)
			snprintf(where, sizeof(where), "pid %d, outside the tree", id);
		else
			snprintf(where, sizeof(where), "exited");
		pr_err("pid %d (%s%s): its %s %d is led by no task of the tree (its leader is %s) and is not the root's: a restore cannot put it back in that %s; not supported",
		       k->pid, k->comm, k->zombie ? ", a zombie" : "", what, id, where, what);
		return -1;
	}
	return 0;
}

/*
 * A dump that kills the tree must leave images its caller can restore:
 * what imgcr restore, run by the same user, refuses (restore.c check_tree()
 * and creds_check()) is refused here, before the kill, and the tree runs
 * on.  Root restores any credentials and chooses TIDs; a user restores only
 * tasks with its own ids and groups, outside a chroot, with capabilities
 * it holds, and threads only with CAP_CHECKPOINT_RESTORE or in a PID
 * namespace of a user namespace of its own (--pidns), where no capability
 * of the task can be given.  Not needed with --leave-running.
 */
static int restore_check(struct dctx *c)
{
	struct tree *t = &c->t;
	uid_t uid = geteuid();
	gid_t gid = getegid(), groups[65536];
	int ng = getgroups(65536, groups), i, j, uerr = -1;
	unsigned long long mine = thread_caps(getpid(), getpid(), "CapPrm");
	unsigned long long eff = thread_caps(getpid(), getpid(), "CapEff");
	int tid_right = !!(eff & (1ULL << CAP_CHECKPOINT_RESTORE_BIT |
				  1ULL << CAP_SYS_ADMIN_BIT));

	if (c->leave || uid == 0)
		return 0;
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];
		int same = 1, pidns = 0;

		for (j = 0; j < 4; j++)
			same &= k->uid[j] == uid && k->gid[j] == gid;
		for (j = 0; same && j < k->ngroups; j++) {
			int g;

			for (g = 0; g < ng && (gid_t)groups[g] != k->groups[j]; g++)
				;
			same = g < ng;
		}
		if (!same || k->ngroups != ng) {
			pr_err("pid %d (%s): you cannot restore it: its credentials (uid %u %u %u %u, gid %u %u %u %u, %d groups) are not yours (uid %u, gid %u, %d groups), and only root restores other credentials; not dumped, left running (dump as root, or with --leave-running)",
			       k->pid, k->comm, k->uid[0], k->uid[1], k->uid[2], k->uid[3],
			       k->gid[0], k->gid[1], k->gid[2], k->gid[3], k->ngroups,
			       uid, gid, ng);
			return -1;
		}
		if (strcmp(k->root, "/")) {
			pr_err("pid %d (%s): you cannot restore it: its root directory is %s, and only root restores a chroot; not dumped, left running",
			       k->pid, k->comm, k->root);
			return -1;
		}
		if (k->zombie)
			continue;
		if (k->nthreads && !tid_right) {
			if (uerr < 0)
				uerr = userns_error();
			if (uerr) {
				pr_err("pid %d (%s): you cannot restore it: recreating the TIDs of its %d thread(s) needs CAP_CHECKPOINT_RESTORE, which you have not, or a restore with --pidns in a user namespace of your own, which you cannot create (%s); not dumped, left running (dump as root, or with --leave-running)",
				       k->pid, k->comm, k->nthreads, strerror(uerr));
				return -1;
			}
			pidns = 1;
		}
		for (j = -1; j < k->nthreads; j++) {
			pid_t tid = j < 0 ? k->pid : k->threads[j];
			unsigned long long prm = thread_caps(k->pid, tid, "CapPrm");
			unsigned long long any = prm | thread_caps(k->pid, tid, "CapInh") |
						 thread_caps(k->pid, tid, "CapAmb");

			if (pidns && any) {
				pr_err("pid %d (%s): you cannot restore it: its thread %d has capabilities (permitted %#llx), which a restore in a user namespace of your own (--pidns, needed for its threads' TIDs) cannot give; not dumped, left running (dump as root, or with --leave-running)",
				       k->pid, k->comm, tid, prm);
				return -1;
			}
			if (prm & ~mine) {
				pr_err("pid %d (%s): you cannot restore it: its thread %d has permitted capabilities %#llx you do not have; not dumped, left running (dump as root, or with --leave-running)",
				       k->pid, k->comm, tid, prm & ~mine);
				return -1;
			}
		}
	}
	return 0;
}

/*
 * kcmp(KCMP_FILES, KCMP_FS, KCMP_SIGHAND) between the tasks of the tree,
 * and between them and every process outside it that imgcr may inspect
 * (the others cannot be compared).  kcmp orders the objects: sorted by
 * it, the processes sharing one are next to each other (no pairwise pass
 * over a large tree).  Zombies have none of these any more.
 */
struct share_cands {
	const struct tree *t;
	struct share_cand *v;
	size_t n, cap;
};

static int share_cand_add(struct share_cands *s, pid_t pid, int in_tree)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct share_cand *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv) {
			pr_err("out of memory");
			return -1;
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n].pid = pid;
	s->v[s->n++].in_tree = in_tree;
	return 0;
}

static int share_outsider(pid_t pid, void *arg)
{
	struct share_cands *s = arg;

	if (tree_find(s->t, pid) || syscall(SYS_kcmp, pid, pid, KCMP_FILES, 0, 0))
		return 0;	/* ours, or not ours to compare */
	return share_cand_add(s, pid, 0);
}

static int shared_check(struct dctx *c)
{
	struct share_cands s = { .t = &c->t };
	const struct tree *t = &c->t;
	struct share_cand *v;
	size_t n, k, i, j, a, b;
	int ret = 0;

	for (i = 0; i < (size_t)t->ntasks && !ret; i++)
		if (!t->tasks[i].zombie)
			ret = share_cand_add(&s, t->tasks[i].pid, 1);
	if (!ret)
		ret = proc_each_process(share_outsider, &s);
	if (ret) {
		free(s.v);
		return -1;
	}
	v = s.v;
	n = s.n;
	for (k = 0; k < sizeof(shared_kinds) / sizeof(shared_kinds[0]) && !ret; k++) {
		sort_type = shared_kinds[k].type;
		qsort(v, n, sizeof(*v), cmp_kcmp);
		for (i = 0; i < n && !ret; i = j) {
			for (j = i + 1; j < n && kcmp_same(v[i].pid, v[j].pid, sort_type); j++)
				;
			/* v[i..j) share one: any two of them, one in the tree, not one mm */
			for (a = i; a < j && !ret; a++)
				for (b = a + 1; b < j && !ret; b++) {
					struct share_cand *x = v[a].in_tree ? &v[a] : &v[b];
					struct share_cand *y = x == &v[a] ? &v[b] : &v[a];

					/* sharing the memory too: a vfork child, the freezer's refusal */
					if (!x->in_tree || kcmp_same(x->pid, y->pid, KCMP_VM))
						continue;
					ret = share_refuse(x->pid, y->pid, k, y->in_tree ? 0 : y->pid);
				}
		}
	}
	free(v);
	return ret;
}

static int read_ids(const char *text, const char *key, unsigned int out[4])
{
	const char *v = status_field(text, key);

	return v && sscanf(v, "%u %u %u %u", &out[0], &out[1], &out[2], &out[3]) == 4 ? 0 : -1;
}

static char *read_link(const char *path)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlink(path, buf, PATH_MAX);

	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

/* the " (deleted)" that ends the link of a removed directory, or NULL */
static char *deleted_suffix(char *link)
{
	size_t n = strlen(link), m = strlen(" (deleted)");

	return n > m && !strcmp(link + n - m, " (deleted)") ? link + n - m : NULL;
}

/*
 * A zombie has no cwd, root, memory or fds left: its ids and status, and
 * what /proc still shows of it, its signal dispositions (SigIgn, SigCgt
 * in status) and its limits.  The core-dump flag of its wait status
 * cannot be given back without really dumping a core (a file, or a
 * core_pattern helper, outside the tree): refused.
 */
static int describe_zombie(struct tree_task *k)
{
	char path[64], *text;
	const char *ign, *cgt;

	if (k->exit_status & 0x80) {
		pr_err("pid %d: zombie killed by signal %d with a core dump: the core-dump flag of its wait status cannot be restored; dump again once its parent has reaped it",
		       k->pid, k->exit_status & 0x7f);
		return -1;
	}
	k->cwd = strdup("/");
	k->root = strdup("/");
	snprintf(path, sizeof(path), "/proc/%d/status", k->pid);
	text = read_text(path, NULL);
	ign = text ? status_field(text, "SigIgn") : NULL;
	cgt = text ? status_field(text, "SigCgt") : NULL;
	if (!ign || !cgt) {
		pr_perror("pid %d: zombie: cannot read its SigIgn/SigCgt in %s", k->pid, path);
		free(text);
		return -1;
	}
	k->sig_ign = strtoull(ign, NULL, 16);
	k->sig_cgt = strtoull(cgt, NULL, 16);
	k->has_zsig = 1;
	free(text);
	return attrs_dump_limits(k);
}

/*
 * A task stopped by SIGTSTP, SIGTTIN or SIGTTOU is restored stopped by
 * that signal, so that its parent's waitpid() reports it: it stops the
 * task again only with its default action and not blocked (as when it
 * stopped it; the task cannot have changed them since, but a tracer
 * could have).  @text: its /proc/PID/status.
 */
static int stop_check(const struct tree_task *k, const char *text)
{
	static const char *const keys[] = { "SigIgn", "SigCgt", "SigBlk" };
	static const char *const what[] = { "ignores", "catches", "blocks" };
	unsigned long long bit = 1ULL << (k->stopped - 1);
	const char *v;
	size_t j;

	if (!k->stopped || k->stopped == SIGSTOP)
		return 0;
	for (j = 0; j < 3; j++) {
		v = status_field(text, keys[j]);
		if (!v) {
			pr_err("pid %d: no %s in its status", k->pid, keys[j]);
			return -1;
		}
		if (strtoull(v, NULL, 16) & bit) {
			pr_err("pid %d: stopped by SIG%s, which it now %s: it cannot be restored stopped by it",
			       k->pid, sigabbrev_np(k->stopped), what[j]);
			return -1;
		}
	}
	return 0;
}

/*
 * A tree with a mount namespace of its own: the file of task @pid that
 * /proc/PID/@link leads to (@what: "fd 3", "cwd", "exe", "mapping A-B";
 * @path: its path as imgcr reads it) must be on one of the container's
 * mounts, which the restore rebuilds.  A file on a mount outside (a host
 * file opened before unshare() or pivot_root(), the host's /dev/null
 * given as stdin) would be opened again by its path inside the
 * container: another file, or none.  Refused, naming the mount (as CRIU:
 * "Can't lookup mount").  The one place where the dump decides it: an
 * option handing such files over at restore (CRIU's --external
 * file[MNT_ID:INODE] and --inherit-fd) would accept them here.
 * 0, or -1 (printed).
 */
static int outside_refuse(const struct tree *t, pid_t pid, const char *what, const char *link,
			  const char *path)
{
	int id = -1, r = mnt_file_outside(t, pid, link, &id);

	if (r < 0) {
		pr_perror("pid %d %s: %s: cannot find the mount it is on", pid, what, path);
		return -1;
	}
	if (r)
		pr_err("pid %d %s: %s is on a mount outside the container's mount namespace (mnt_id %d): not supported (a restore would open %s inside the container, another file; open it from inside the container)",
		       pid, what, path, id, path);
	return r ? -1 : 0;
}

/*
 * Fd @fd of @pid, of kind @type (@p: its link and stat): a file on a mount
 * outside the tree's mount namespace that the caller named with --external
 * file[MNT_ID:INODE] (imgcr-criu: a container's stdio from the host)?
 * Recorded with host=1: reopened by its path from the restorer's root, so
 * that path must lead to the same file from imgcr's root now.  1: yes,
 * 0: no (not outside, or not named), -1: refused (printed).
 */
static int host_file(const struct tree *t, pid_t pid, int fd, enum tree_kind type,
		     const struct fd_parms *p)
{
	const char *why = NULL;
	char link[32];
	struct stat st;
	int id = -1, r;

	if (type != TK_REG && type != TK_CHR)
		return 0;
	snprintf(link, sizeof(link), "fd/%d", fd);
	r = mnt_file_outside(t, pid, link, &id);
	if (r <= 0 || !fd_external_file((unsigned int)id, p->st.st_ino))
		return 0;
	if (pid == getpid()) {
		pr_err("(imgcr, a file in flight) fd %d: %s: an external host file in flight in a unix socket's queue: not supported",
		       fd, p->link);
		return -1;
	}
	if (p->link[0] != '/')
		why = "not a path";
	else if (strstr(p->link, " (deleted)"))
		why = "deleted";
	else if (stat(p->link, &st))
		why = strerror(errno);
	else if (st.st_dev != p->st.st_dev || st.st_ino != p->st.st_ino ||
		 (type == TK_CHR && st.st_rdev != p->st.st_rdev))
		why = "another file there";
	if (why) {
		pr_err("pid %d fd %d: %s (external file[%x:%llx], on a mount outside the container's mount namespace): that path does not lead to this file from imgcr's root (%s): it could not be opened again at restore",
		       pid, fd, p->link, id, (unsigned long long)p->st.st_ino, why);
		return -1;
	}
	pr_info("pid %d fd %d: %s: a host file outside the container's mount namespace (external file[%x:%llx]): reopened from the host's root at restore",
		pid, fd, p->link, id, (unsigned long long)p->st.st_ino);
	return 1;
}

static int describe_task(struct dctx *c, int i)
{
	struct tree_task *k = &c->t.tasks[i];
	char path[96], *text, state;
	const char *v;

	if (proc_stat(k->pid, &state, &k->ppid, &k->pgid, &k->sid)) {
		pr_perror("pid %d: cannot read /proc/%d/stat", k->pid, k->pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", k->pid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", k->pid, path);
		return -1;
	}
	if (read_ids(text, "Uid", k->uid) || read_ids(text, "Gid", k->gid)) {
		pr_err("pid %d: cannot parse Uid/Gid in %s", k->pid, path);
		free(text);
		return -1;
	}
	v = status_field(text, "Name");
	if (v)
		sscanf(v, "%63[^\n]", k->comm);
	v = status_field(text, "Umask");
	k->umask = v ? strtoul(v, NULL, 8) : 022;
	v = status_field(text, "Groups");
	k->groups = calloc(65537, sizeof(*k->groups));
	while (v && *v && *v != '\n' && k->ngroups < 65536) {
		char *end;
		unsigned long g = strtoul(v, &end, 10);

		if (end == v)
			break;
		k->groups[k->ngroups++] = g;
		v = end;
		while (*v == ' ')
			v++;
	}
	if (k->zombie) {
		free(text);
		return describe_zombie(k);
	}
	if (stop_check(k, text)) {
		free(text);
		return -1;
	}
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/root", k->pid);
	k->root = read_link(path);
	snprintf(path, sizeof(path), "/proc/%d/cwd", k->pid);
	k->cwd = read_link(path);
	if (!k->cwd || !k->root) {
		pr_perror("pid %d: cannot read its cwd/root", k->pid);
		return -1;
	}
	if (deleted_suffix(k->cwd)) {
		struct statfs sfs;
		struct stat st;

		k->cwd_deleted = 1;	/* recreated and removed again (attrs.c) */
		*deleted_suffix(k->cwd) = 0;
		if (!statfs(path, &sfs) && sfs.f_type == PROC_SUPER_MAGIC) {
			pr_err("pid %d: cwd %s (deleted): the /proc directory of a process that has exited is not supported (it cannot be made again)",
			       k->pid, k->cwd);
			return -1;
		}
		if (!statfs(path, &sfs) &&
		    (sfs.f_type == SYSFS_MAGIC || sfs.f_type == CGROUP_SUPER_MAGIC ||
		     sfs.f_type == CGROUP2_SUPER_MAGIC || sfs.f_type == DEBUGFS_MAGIC ||
		     sfs.f_type == TRACEFS_MAGIC || sfs.f_type == SECURITYFS_MAGIC ||
		     sfs.f_type == BPF_FS_MAGIC)) {
			pr_err("pid %d: cwd %s (deleted): a deleted directory of a kernel filesystem (magic 0x%lx: cgroup, sysfs...) is not supported",
			       k->pid, k->cwd, (long)sfs.f_type);
			return -1;
		}
		if (stat(path, &st)) {
			pr_perror("pid %d: cannot stat its deleted cwd %s", k->pid, k->cwd);
			return -1;
		}
		k->cwd_has_mode = 1;
		k->cwd_mode = st.st_mode & 07777;
		k->cwd_uid = st.st_uid;
		k->cwd_gid = st.st_gid;
	}
	if (k->cwd[0] != '/') {
		pr_err("pid %d: cwd %s: not reachable from imgcr's root: not supported", k->pid, k->cwd);
		return -1;
	}
	if (k->root[0] != '/' || deleted_suffix(k->root)) {
		pr_err("pid %d: root directory %s: not reachable or deleted: not supported", k->pid,
		       k->root);
		return -1;
	}
	if (outside_refuse(&c->t, k->pid, "cwd", "cwd", k->cwd) ||
	    outside_refuse(&c->t, k->pid, "root", "root", k->root))
		return -1;
	return attrs_dump(k);
}

static int same_description(struct dctx *c, const struct tree_file *f, pid_t pid, int fd)
{
	long r;

	if (c->have_kcmp) {
		r = syscall(SYS_kcmp, f->pid, pid, KCMP_FILE, f->fd, fd);
		if (r >= 0)
			return r == 0;
		if (errno != ENOSYS && errno != EPERM && errno != EACCES)
			return 0;
		c->have_kcmp = 0;
	}
	/* without kcmp: only pipe ends of one pipe are known to be shared */
	return f->kind == TK_PIPE && f->pid != pid;
}

/*
 * Ask the kinds (files.h) in turn what @p is, until one knows it; with
 * @by_link only those known by their link alone.  Its verdict, and the
 * kind in *@kind; FD_OTHER if none knows it.
 */
static int fd_walk(struct fd_dump *fc, struct fd_parms *p, struct tree_file *n,
		   int by_link, const struct fd_kind **kind)
{
	int i, r;

	for (i = 0; fd_kinds[i]; i++) {
		if (by_link && !fd_kinds[i]->by_link)
			continue;
		r = fd_kinds[i]->dump(fc, p, n);
		if (r != FD_OTHER) {
			*kind = fd_kinds[i];
			return r;
		}
	}
	return FD_OTHER;
}

/*
 * Fd @fd of @pid (a task's, or imgcr's own: a file in flight) described:
 * merged with the file of the tree it shares its description with, or
 * added.  Its index in the tree's files (*@cloexec: its FD_CLOEXEC), or -1.
 */
static int describe_file(struct dctx *c, pid_t pid, int fd, int *cloexec)
{
	struct fd_dump fc = { .t = &c->t, .dir = c->dir, .ghost_limit = c->ghost_limit,
			       .ext_unix_sk = c->ext_unix_sk, .watches = &c->watches };
	struct fd_parms p = { .pid = pid, .fd = fd, .file_fd = -1 };
	const struct fd_kind *kind = NULL;
	struct tree_file n, *f;
	char path[96], *info, *sflags, *spos;
	int i, r, ret = -1, host = 0;

	memset(&n, 0, sizeof(n));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	p.link = read_link(path);
	if (!p.link) {
		pr_perror("pid %d fd %d: cannot read the link", pid, fd);
		return -1;
	}
	r = fd_walk(&fc, &p, &n, 1, &kind);
	if (r == FD_OTHER) {
		if (stat(path, &p.st)) {
			pr_perror("pid %d fd %d: %s: cannot stat", pid, fd, p.link);
			goto out;
		}
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
		info = read_text(path, NULL);
		if (!info) {
			pr_perror("pid %d fd %d: cannot read %s", pid, fd, path);
			goto out;
		}
		sflags = (char *)status_field(info, "flags");
		spos = (char *)status_field(info, "pos");
		p.flags = sflags ? strtoul(sflags, NULL, 8) : 0;
		p.pos = spos ? strtoll(spos, NULL, 10) : 0;
		free(info);
		if (!sflags || !spos) {
			pr_err("pid %d fd %d: cannot parse %s", pid, fd, path);
			goto out;
		}
		r = fd_walk(&fc, &p, &n, 0, &kind);
	}
	/* every refusal comes from here */
	switch (r) {
	case FD_DESCRIBED:
		break;
	case FD_REFUSED:
		pr_err("pid %d fd %d: %s", pid, fd, p.why);
		goto out;
	case FD_OTHER:
		pr_err("pid %d fd %d: %s: unsupported kind of file (mode %o)", pid, fd, p.link,
		       p.st.st_mode);
		goto out;
	default:
		goto out;
	}
	/* the kinds reopened by their path (files.h) */
	if (kind->type == TK_REG || kind->type == TK_FIFO || kind->type == TK_CHR ||
	    kind->type == TK_GHOST) {
		char what[64];

		if (pid == getpid())	/* in flight in a unix socket's queue (sk-queue.c) */
			snprintf(what, sizeof(what), "(imgcr, a file in flight) fd %d", fd);
		else
			snprintf(what, sizeof(what), "fd %d", fd);
		snprintf(path, sizeof(path), "fd/%d", fd);
		host = host_file(&c->t, pid, fd, kind->type, &p);
		if (host < 0 || (!host && outside_refuse(&c->t, pid, what, path, p.link)))
			goto out;
	}
	*cloexec = !!(p.flags & O_CLOEXEC);
	p.flags &= ~O_CLOEXEC;

	for (i = 0; i < c->t.nfiles; i++) {
		f = &c->t.files[i];
		if (f->kind == kind->type && f->dev == p.st.st_dev && f->sino == p.st.st_ino &&
		    (f->flags & O_ACCMODE) == (p.flags & O_ACCMODE) &&
		    same_description(c, f, pid, fd))
			break;
	}
	if (i == c->t.nfiles) {
		f = tree_file_add(&c->t);
		n.id = f->id;
		n.path = n.path ? strdup(n.path) : NULL;
		n.mnt = n.mnt ? strdup(n.mnt) : NULL;
		*f = n;		/* what the kind described; the rest here */
		f->kind = kind->type;
		f->flags = p.flags;
		f->pos = p.pos;
		f->pid = pid;
		f->fd = fd;
		f->dev = p.st.st_dev;
		f->sino = p.st.st_ino;
		f->host = host;
		if (fown_dump(&p, f))
			goto out;
		/* a pipe's or socket's owner: its creator's, not the restorer's */
		if (f->kind == TK_PIPE || f->kind == TK_SK) {
			f->has_owner = 1;
			f->owner_uid = p.st.st_uid;
			f->owner_gid = p.st.st_gid;
		}
	}
	ret = i;
out:
	if (p.file_fd >= 0)
		close(p.file_fd);
	free(p.link);
	return ret;
}

static int describe_fd(struct dctx *c, int ti, int fd)
{
	pid_t pid = c->t.tasks[ti].pid;
	int cloexec, i = describe_file(c, pid, fd, &cloexec);

	if (i < 0)
		return -1;
	tree_fd_add(&c->t.tasks[ti], fd, i, cloexec);
	return locks_dump(&c->t, pid, fd, i);	/* locks.c */
}

/* sk-queue.c: a file in flight, received by imgcr's peek (fd_dump.describe) */
static int describe_inflight(struct fd_dump *fc, int fd)
{
	int cloexec;

	return describe_file(fc->priv, getpid(), fd, &cloexec);
}

static int describe_fds(struct dctx *c, int ti)
{
	pid_t pid = c->t.tasks[ti].pid;
	struct dirent **names;
	char path[64];
	int n, i, ret = 0;

	if (c->t.tasks[ti].zombie)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	n = scandir(path, &names, NULL, NULL);
	if (n < 0) {
		pr_perror("pid %d: cannot list %s", pid, path);
		return -1;
	}
	/* numeric order */
	int *fds = calloc(n + 1, sizeof(int)), nf = 0;

	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			fds[nf++] = atoi(names[i]->d_name);
		free(names[i]);
	}
	free(names);
	for (i = 1; i < nf; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int x = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = x;
		}
	for (i = 0; i < nf && !ret; i++)
		ret = describe_fd(c, ti, fds[i]);
	free(fds);
	return ret;
}

/*
 * --live, before the dump's freeze: passes of copying the tree's memory
 * while it runs, each starting with a short freeze that collects what
 * was written meanwhile (live.c).
 */
static int live_precopy(struct dctx *c, pid_t root)
{
	long todo, last = 0;
	int pass;

	if (live_usable())
		return -1;
	for (pass = 0; pass < LIVE_MAX_PASSES; pass++) {
		struct freezer fz = { 0 };
		struct tree t = { 0 };
		long long t0 = now_ms(), stop;

		todo = freeze_tree(&fz, &t, root) ? -1 : live_scan(&c->lv, &t);
		freeze_release(&fz, &t, 0);
		stop = now_ms() - t0;
		freeze_free(&fz);
		tree_free(&t);
		c->lv.precopy_ms += stop;
		if (stop > c->lv.max_stop_ms)
			c->lv.max_stop_ms = stop;
		if (todo < 0)
			return -1;
		/* what is left is written frozen, by the dump */
		if (pass && (todo * 2 > last || todo < LIVE_FEW_PAGES))
			break;
		t0 = now_ms();
		if (live_copy(&c->lv))
			return -1;
		c->lv.precopy_ms += now_ms() - t0;
		last = todo;
	}
	return 0;
}

/* --live-check: the image at @path is byte for byte a read of /proc/PID/dump. */
static int live_check(const struct tree_task *k, const char *path)
{
	char src[64], a[1 << 16], b[1 << 16];
	int in, f, ret = -1;
	ssize_t n;

	snprintf(src, sizeof(src), "/proc/%d/dump", k->pid);
	in = open(src, O_RDONLY | O_CLOEXEC);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || f < 0) {
		pr_perror("--live-check: pid %d: cannot open %s or %s", k->pid, src, path);
		goto out;
	}
	for (off_t off = 0;; off += n) {
		n = read(in, a, sizeof(a));
		if (n < 0) {
			pr_perror("--live-check: pid %d: reading %s", k->pid, src);
			goto out;
		}
		if (read(f, b, n ? n : 1) != n || memcmp(a, b, n)) {
			ssize_t d = 0;

			while (d < n && a[d] == b[d])
				d++;
			pr_err("--live-check: pid %d: %s differs from %s at offset %lld (address %#llx)",
			       k->pid, path, src, (long long)(off + d),
			       live_vaddr_at(path, off + d));
			goto out;
		}
		if (!n)
			break;
	}
	ret = 0;
out:
	if (in >= 0)
		close(in);
	if (f >= 0)
		close(f);
	return ret;
}

/*
 * Whether the pages left out of an image (@bytes) may be written once the
 * tree is let go: with --leave-running, yes (a failure finds the tree
 * still there); when the tree is killed, only if the filesystem has room
 * for every such page now, so that a full disk fails the dump while the
 * tree is intact.  (Allocating the space with fallocate() would cost as
 * much as writing it on tmpfs, inside the freeze.)  Someone else filling
 * the disk meanwhile still fails the fill: imgcr then says the image is
 * incomplete.
 */
static int fill_later(struct dctx *c, int out, unsigned long long bytes)
{
	struct statfs sf;
	unsigned long long room;

	if (c->live_check)
		return 0;
	if (c->leave)
		return 1;
	if (fstatfs(out, &sf))
		return 0;
	room = (unsigned long long)sf.f_bavail * sf.f_bsize;
	if (room < c->fill_bytes + bytes + (1ULL << 20))
		return 0;
	c->fill_bytes += bytes;
	return 1;
}

/*
 * --live: the module writes the image leaving out the pages copied while
 * the tree ran that were not written since; they are written from the
 * copies after the tree is let go (fill_later) or now.  0: written, 1: no
 * live copy (write the plain way), -1: error.
 */
static int save_image_live(struct dctx *c, const struct tree_task *k, int in,
			   int out, const char *dst)
{
	struct imgcr_dump_to_skip to = { .to.fd = out };
	struct imgcr_range *r;
	struct live_fill *f;
	size_t n;

	long long t0 = now_ms();

	if (live_clean_ranges(&c->lv, k->pid, &r, &n))
		return -1;
	st_ranges += now_ms() - t0;
	if (!n)
		return 1;
	to.ranges = (unsigned long)r;
	to.nr_ranges = n;
	t0 = now_ms();
	int rc = ioctl(in, IMGCR_IOC_DUMP_TO_SKIP, &to);

	st_write += now_ms() - t0;
	if (rc) {
		int e = errno;

		free(r);
		if (e == ENOTTY)
			return 1;	/* a module without it */
		errno = e;
		pr_perror("pid %d: writing its image to %s", k->pid, dst);
		return -1;
	}
	c->lv.skipped += to.skipped;
	if (fill_later(c, out, to.skipped * 4096ULL)) {
		f = realloc(c->fills, (c->nfills + 1) * sizeof(*f));
		if (f) {
			c->fills = f;
			f[c->nfills].pid = k->pid;
			f[c->nfills].path = strdup(dst);
			f[c->nfills].ranges = r;
			f[c->nfills].n = n;
			if (f[c->nfills].path) {
				c->nfills++;
				return 0;
			}
		}
	}
	/* no room for it later (or checking): fill it now, still frozen */
	int err = live_fill(&c->lv, k->pid, dst, r, n);

	free(r);
	if (!err && c->live_check)
		err = live_check(k, dst);
	return err ? -1 : 0;
}

/*
 * DIR/tree is renamed DIR/tree.incomplete (@hide) while images still have
 * pages to fill after the release, and back once they are all written: a
 * dump interrupted in between does not look like one that can be restored.
 */
static int tree_hide(struct dctx *c, int hide)
{
	char a[4096], b[4096];

	snprintf(a, sizeof(a), "%s/tree", c->dir);
	snprintf(b, sizeof(b), "%s/tree.incomplete", c->dir);
	if (rename(hide ? a : b, hide ? b : a)) {
		pr_perror("cannot rename %s", hide ? a : b);
		return -1;
	}
	return 0;
}

/*
 * Only root restores the tree (its own user namespace, userns.c): DIR and
 * its files stay root's, which the restore requires of such a tree.
 */
static int root_restores(const struct tree *t)
{
	return t->ns && (t->ns->own & NS_BIT(NS_USER));
}

static int image_written(struct dctx *c, const struct tree_task *k, int in, const char *path);

static int save_image(struct dctx *c, const struct tree_task *k)
{
	char src[64], dst[4096], buf[1 << 16];
	int in, out;
	ssize_t n;

	snprintf(src, sizeof(src), "/proc/%d/dump", k->pid);
	snprintf(dst, sizeof(dst), "%s/core-%d.img", c->dir, k->pid);
	long long t0 = now_ms();

	in = open(src, O_RDONLY | O_CLOEXEC);
	st_open += now_ms() - t0;
	if (in < 0) {
		pr_dump_open_error(k->pid, src);
		return -1;
	}
	out = img_create(dst, 0700);
	if (out < 0) {
		pr_perror("cannot create %s", dst);
		close(in);
		return -1;
	}
	fchmod(out, 0700);
	if (c->live) {
		int r = save_image_live(c, k, in, out, dst);

		if (r < 0)
			goto fail;
		if (!r)
			goto written;
	}
	/* one copy: the module writes the task's pages into the file */
	struct imgcr_dump_to to = { .fd = out };
	long long tw = now_ms();

	progress_watch(out);
	int rc = ioctl(in, IMGCR_IOC_DUMP_TO, &to);

	progress_watch(-1);

	st_write += now_ms() - tw;
	if (rc == 0)
		goto written;
	if (errno != ENOTTY) {
		pr_perror("pid %d: writing its image from %s to %s", k->pid, src, dst);
		goto fail;
	}
	/* a module from before the ioctl */
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(out, buf, n)) {
			pr_perror("cannot write %s", dst);
			goto fail;
		}
	if (n < 0) {
		pr_perror("pid %d: reading %s", k->pid, src);
		goto fail;
	}
written:
	st_bytes += lseek(out, 0, SEEK_END);
	progress_update(st_bytes, ++st_images);
	pr_debug("pid %d: image %s written (%lld bytes)", k->pid, dst, (long long)lseek(out, 0, SEEK_END));
	/* owned by the task's user, who must be able to exec it (root's: only root restores) */
	if (!geteuid() && !root_restores(&c->t) && fchown(out, k->uid[0], k->gid[0])) {
		pr_perror("cannot chown %s", dst);
		goto fail;
	}
	if (image_written(c, k, in, dst))
		goto fail;
	close(in);
	close(out);
	return 0;
fail:
	close(in);
	close(out);
	return -1;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static void tid_list(char *out, size_t size, const pid_t *tids, int n)
{
	size_t off = 0;
	int i;

	out[0] = 0;
	if (!n)
		snprintf(out, size, "none");
	for (i = 0; i < n && off + 16 < size; i++)
		off += snprintf(out + off, size - off, "%s%d", i ? " " : "", tids[i]);
	if (i < n)
		snprintf(out + off, size - off, " ...");
}

/*
 * The image must hold exactly the threads the tree records for the task:
 * a restore recreates the TIDs the tree lists and checks them against these.
 */
static int check_image_threads(const struct tree_task *k, const struct image *img)
{
	char a[256], b[256];
	pid_t *tids = NULL, *want = NULL;
	unsigned int i;
	int ret = -1;

	tids = calloc(img->nr_threads + 1, sizeof(*tids));
	if (!tids) {
		pr_err("out of memory");
		goto out;
	}
	for (i = 1; i < img->nr_threads; i++)
		tids[i - 1] = img->threads[i].thread.tid;
	qsort(tids, img->nr_threads - 1, sizeof(*tids), cmp_tid);
	/* a task in its own PID namespace: the image holds the TIDs in it (ns.c) */
	want = calloc(k->nthreads + 1, sizeof(*want));
	if (!want) {
		pr_err("out of memory");
		goto out;
	}
	memcpy(want, k->vthreads ? k->vthreads : k->threads, k->nthreads * sizeof(*want));
	qsort(want, k->nthreads, sizeof(*want), cmp_tid);
	if (img->nr_threads - 1 != (unsigned int)k->nthreads ||
	    (k->nthreads && memcmp(tids, want, k->nthreads * sizeof(*tids)))) {
		tid_list(a, sizeof(a), tids, img->nr_threads - 1);
		tid_list(b, sizeof(b), want, k->nthreads);
		pr_err("pid %d: the image %s holds the threads %s besides the main one, the frozen task has %s",
		       k->pid, img->path, a, b);
		goto out;
	}
	ret = 0;
out:
	free(tids);
	free(want);
	return ret;
}

/*
 * A tree with a mount namespace of its own: every file task @k's image
 * maps or runs (the loader opens it by its path, inside the container) on
 * one of the container's mounts (outside_refuse()).  0, or -1 (printed).
 */
static int check_image_outside(struct dctx *c, const struct tree_task *k, const struct image *img)
{
	char path[4096], link[96], what[96];
	struct imgcr_file rec;
	unsigned int i, j;
	int ret = -1;

	if (!c->t.ns || !(c->t.ns->own & NS_BIT(NS_MNT)))
		return 0;
	for (i = 0; i < img->task->nr_files; i++) {
		if (image_file(img, i, &rec, path, sizeof(path))) {
			pr_err("%s: bad file table", img->path);
			goto out;
		}
		if (rec.flags & IMGCR_FILE_SHMEM)
			continue;	/* shared anonymous memory, a memfd: no path */
		link[0] = 0;
		for (j = 0; !link[0] && j < img->task->nr_vmas; j++) {
			const struct imgcr_vma *v = &img->vmas[j];

			if (v->kind != IMGCR_VMA_FILE || v->file != i)
				continue;
			snprintf(link, sizeof(link), "map_files/%llx-%llx",
				 (unsigned long long)v->start, (unsigned long long)v->end);
			snprintf(what, sizeof(what), "mapping %llx-%llx",
				 (unsigned long long)v->start, (unsigned long long)v->end);
		}
		if (!link[0] && i == img->task->exe_file) {
			snprintf(link, sizeof(link), "exe");
			snprintf(what, sizeof(what), "exe");
		}
		if (link[0] && outside_refuse(&c->t, k->pid, what, link, path))
			goto out;
	}
	ret = 0;
out:
	return ret;
}

/* The deleted files task @k's image @img maps, saved as ghosts (files-ghost.c). */
static int dump_mapped_ghosts(struct dctx *c, const struct tree_task *k, const struct image *img)
{
	struct fd_dump fc = { .t = &c->t, .dir = c->dir, .ghost_limit = c->ghost_limit,
			       .ext_unix_sk = c->ext_unix_sk, .watches = &c->watches };

	return ghost_dump_mapped(&fc, k->pid, img);
}

/*
 * The head of task @k's image @path, written from the dump fd @in (still
 * open), read once for what the tree needs from it (the memory it shares,
 * its threads, files outside a container, its mapped deleted files).
 */
static int image_written(struct dctx *c, const struct tree_task *k, int in, const char *path)
{
	struct image img;
	int ret = image_open(&img, path) || shm_maps_add(&c->shm, k->pid, in, &img) ||
		  check_image_threads(k, &img) || check_image_outside(c, k, &img) ||
		  dump_mapped_ghosts(c, k, &img) ? -1 : 0;

	image_close(&img);
	return ret;
}

static void chown_dir(struct dctx *c, int created)
{
	const struct tree_task *r = tree_find(&c->t, c->t.root);
	char path[4096];
	int i;

	if (geteuid() || !r || root_restores(&c->t))
		return;
	if (created && chown(c->dir, r->uid[0], r->gid[0]))
		pr_pwarn("cannot chown %s", c->dir);
	snprintf(path, sizeof(path), "%s/%s", c->dir, TREE_FILE);
	if (chown(path, r->uid[0], r->gid[0]))
		pr_pwarn("cannot chown %s", path);
	for (i = 0; i < c->t.npipes; i++) {
		snprintf(path, sizeof(path), "%s/pipe-%lu.data", c->dir, c->t.pipes[i].ino);
		if (chown(path, r->uid[0], r->gid[0]))
			pr_pwarn("cannot chown %s", path);
	}
	for (i = 0; i < c->t.nfiles; i++) {
		if (c->t.files[i].kind != TK_MEMFD)
			continue;
		snprintf(path, sizeof(path), "%s/memfd-%lu.data", c->dir, c->t.files[i].ino);
		if (chown(path, r->uid[0], r->gid[0]))
			pr_pwarn("cannot chown %s", path);
	}
	for (i = 0; i < c->t.nghosts; i++) {
		if (c->t.ghosts[i].type != GHOST_REG)
			continue;	/* no data file */
		snprintf(path, sizeof(path), "%s/ghost-%llu-%llu.data", c->dir, c->t.ghosts[i].dev,
			 c->t.ghosts[i].ino);
		if (chown(path, r->uid[0], r->gid[0]))
			pr_pwarn("cannot chown %s", path);
	}
}

int cmd_dump(int argc, char **argv)
{
	struct dctx c = { .have_kcmp = 1, .ghost_limit = GHOST_LIMIT_DEFAULT, .shm.dump_fd = -1 };
	const char *spid = NULL;
	int i, created = 0, ok = 0, stats = 0;
	long long t0 = now_ms(), tf = 0, tr = 0;
	long tgid;
	char *end;
	pid_t root;

	static const struct option opts[] = {
		{ "tree", required_argument, NULL, 't' },
		{ "images-dir", required_argument, NULL, 'D' },
		{ "leave-running", no_argument, NULL, 'R' },
		{ "shell-job", no_argument, NULL, 'j' },
		{ "ext-unix-sk", no_argument, NULL, 'U' },
		{ "tcp-close", no_argument, NULL, 'X' },
		{ "live", no_argument, NULL, 'L' },
		{ "live-check", no_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 'S' },
		{ "display-stats", no_argument, NULL, 'S' },
		{ "ghost-limit", required_argument, NULL, 'G' },
		{ "external", required_argument, NULL, 'E' },
		{ "caller-cgroups", no_argument, NULL, 'K' },
		{ "cgroups", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		LOG_LONG_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	cgm_ignore = 0;		/* imgcr-criu may run several dumps in one process */
	while ((i = getopt_long(argc, argv, ":t:D:Rjh" LOG_OPTS, opts, NULL)) != -1) {
		switch (i) {
		case 'o':
		case 'v':
			if (log_option(i, optarg) < 0)
				return 2;
			break;
		case 't':
			spid = optarg;
			break;
		case 'D':
			c.dir = optarg;
			break;
		case 'R':
			c.leave = 1;
			break;
		case 'j':
			tty_shell_job = 1;
			break;
		case 'U':
			c.ext_unix_sk = 1;
			break;
		case 'X':
			sk_tcp_close = 1;	/* sk-tcp.c */
			break;
		case 'L':
			c.live = 1;
			break;
		case 'C':
			c.live = c.live_check = 1;
			break;
		case 'S':
			stats = 1;
			break;
		case 'G':
			c.ghost_limit = strtoll(optarg, &end, 10);
			if (end == optarg)
				c.ghost_limit = -1;
			if (*end == 'K' || *end == 'k')
				c.ghost_limit <<= 10, end++;
			else if (*end == 'M' || *end == 'm')
				c.ghost_limit <<= 20, end++;
			else if (*end == 'G' || *end == 'g')
				c.ghost_limit <<= 30, end++;
			if (*end || c.ghost_limit < 0)
				return usage_error("dump: --ghost-limit needs a size in bytes (suffix K, M or G allowed)");
			break;
		case 'K':
			c.caller_cgroups = 1;
			break;
		case 'g':
			/* ignore: no cgroup membership recorded (a hybrid or legacy v1 host) */
			if (!strcmp(optarg, "ignore"))
				cgm_ignore = 1;
			else if (!strcmp(optarg, "soft"))
				cgm_ignore = 0;
			else
				return usage_error("dump: --cgroups soft|ignore");
			break;
		case 'E':
			if (!strncmp(optarg, "file[", 5) ? fd_external_file_add(optarg) :
			    pipe_external_add(optarg))
				return 2;
			break;
		case 'h':
			return command_help("dump");
		default:
			return option_error("dump", i, argc, argv);
		}
	}
	if (optind < argc)
		return usage_error("dump: unexpected argument (options only)");
	if (!spid || !c.dir)
		return usage_error("dump needs -t PID and -D DIR");
	root = strtol(spid, &end, 10);
	if (*end || root <= 0)
		return usage_error("dump: -t needs a pid");
	if (mkdir(c.dir, 0700) == 0)
		created = 1;
	else if (errno != EEXIST) {
		pr_perror("cannot create %s", c.dir);
		return 1;
	}

	/* imgcr-criu's NOTIFY points (notify.h) */
	if (notify("pre-dump", root))
		goto out;
	if (c.live && live_precopy(&c, root))
		goto out;
	/* a thread's TID names its process in /proc too: the root is a process */
	tgid = task_tgid(root);
	if (tgid > 0 && tgid != root) {
		pr_err("pid %d: a thread of process %ld, not a process: dump -t %ld (its process and the tree below it)",
		       root, tgid, tgid);
		goto out;
	}
	tf = now_ms();
	pr_debug("freezing the tree of pid %d", root);
	if (freeze_tree(&c.fz, &c.t, root))
		goto out;
	pr_debug("%d tasks frozen", c.t.ntasks);
	progress_begin("dump", c.t.ntasks, 0);
	if (shared_check(&c))
		goto out;
	if (c.t.ns && (c.t.ns->own & NS_BIT(NS_NET)) && notify("network-lock", root))
		goto out;
	/* $IMGCR_STATE_HOOK before DIR PID... (statehook.c) */
	if (state_hook_dump(c.dir, &c.t))
		goto out;
	for (i = 0; i < c.t.ntasks; i++)
		if (ns_check(&c, i) || (!c.t.tasks[i].zombie && lsm_check(c.t.tasks[i].pid)))
			goto out;
	/*
	 * The root's namespaces that are not imgcr's are the tree's own (ns.c):
	 * each kind dumps its state, or refuses, naming the kind.
	 */
	{
		int dfd = open(c.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0) {
			pr_perror("%s", c.dir);
			goto out;
		}
		i = ns_dump(&c.t, c.t.root, dfd);
		close(dfd);
		/*
		 * a runtime that puts the restored tree in its cgroups brings their
		 * programs; a tree put back in its own cgroups (cgmember.c) finds
		 * them there, or is refused if one must be made again
		 */
		if (i || (!c.caller_cgroups &&
			  ((c.t.ns && (c.t.ns->own & NS_BIT(NS_CGROUP))) || cgm_ignore) &&
			  cg_check_bpf(&c.t)))
			goto out;
		/* without a cgroup namespace of its own: each task's cgroup (cgmember.c) */
		if (!(c.t.ns && (c.t.ns->own & NS_BIT(NS_CGROUP))) && cgm_dump(&c.t))
			goto out;
	}
	for (i = 0; i < c.t.ntasks; i++)
		if (describe_task(&c, i) ||
		    seccomp_dump(&c.t.tasks[i], c.dir) || describe_fds(&c, i))
			goto out;
	/* the fds in flight in unix sockets' queues (sk-queue.c) */
	if (sk_inflight_resolve(&(struct fd_dump){ .t = &c.t, .dir = c.dir,
			.ghost_limit = c.ghost_limit, .ext_unix_sk = c.ext_unix_sk,
			.describe = describe_inflight, .priv = &c, .watches = &c.watches }))
		goto out;
	for (i = 0; fd_kinds[i]; i++)
		if (fd_kinds[i]->check && fd_kinds[i]->check(&c.t))
			goto out;
	if (pgrp_check(&c.t) || ns_pid_kept_groups(&c.t) || fown_check(&c.t) || userns_dump_check(&c.t) ||
	    userns_files_check(&c.t) || restore_check(&c))
		goto out;
	for (i = 0; i < c.t.ntasks; i++)
		if (!c.t.tasks[i].zombie &&
		    save_image(&c, &c.t.tasks[i]))
			goto out;
	if (shm_maps_check(&c.shm, &c.t))
		goto out;
	if (tree_write(&c.t, c.dir))
		goto out;
	chown_dir(&c, created);
	/* images still to fill after the release: no tree file until they are */
	if (c.nfills && tree_hide(&c, 1))
		goto out;
	if (notify("post-dump", root))
		goto out;
	ok = 1;
out:
	progress_end();
	if (!ok)
		pr_err("dump failed; the tree was left running untouched%s",
		       c.live ? " (but for its soft-dirty bits, cleared by --live)" : "");
	for (i = 0; fd_kinds[i]; i++)
		if (fd_kinds[i]->finish)
			fd_kinds[i]->finish(ok && !c.leave);
	tr = now_ms();
	if ((!ok || c.leave) && c.t.ns && (c.t.ns->own & NS_BIT(NS_NET)) &&
	    notify("network-unlock", root))
		ok = 0;
	freeze_release(&c.fz, &c.t, ok && !c.leave);
	/* the pages copied while running, left out of the images */
	st_fill_late = now_ms();
	for (i = 0; i < c.nfills; i++) {
		if (ok && live_fill(&c.lv, c.fills[i].pid, c.fills[i].path,
				    c.fills[i].ranges, c.fills[i].n)) {
			pr_err("pid %d: %s is incomplete (the pages copied while it ran could not be written; %s/tree is left as tree.incomplete); the tree was already %s",
			       c.fills[i].pid, c.fills[i].path, c.dir, c.leave ? "running again" : "killed");
			ok = 0;
		}
		free(c.fills[i].path);
		free(c.fills[i].ranges);
	}
	if (ok && c.nfills && tree_hide(&c, 0))
		ok = 0;
	st_fill_late = now_ms() - st_fill_late;
	free(c.fills);
	if (stats && ok)
		pr_msg("stats: frozen_ms=%lld total_ms=%lld live_passes=%d live_copied_pages=%llu live_skipped_pages=%llu live_precopy_ms=%lld live_max_stop_ms=%lld open_ms=%lld ranges_ms=%lld write_ms=%lld fill_after_ms=%lld images=%d image_bytes=%llu",
			tr - tf, now_ms() - t0, c.lv.rounds, c.lv.copied, c.lv.skipped,
			c.lv.precopy_ms, c.lv.max_stop_ms, st_open, st_ranges, st_write,
			st_fill_late, st_images, st_bytes);
	live_free(&c.lv);
	shm_maps_free(&c.shm);
	freeze_free(&c.fz);
	tree_free(&c.t);
	return ok ? 0 : 1;
}
