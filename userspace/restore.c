// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr restore -D DIR [--pidns] [--detach] [--shell-job] [--allow-changed-files]:
 * recreate a dumped tree (--shell-job: a job dumped with it, on imgcr's
 * terminal).
 *
 * The restorer (this process) checks the tree, opens every file description
 * of the tree, each by its kind (the table in files.h: files-reg.c,
 * pipes.c, fifo.c, devices.c, eventfd.c ... pidfd.c; pipes are created and
 * refilled with their saved data, FIFOs are opened O_RDWR and refilled,
 * memfds refilled, epolls created empty; a deleted file an image maps is
 * recreated at its path first, files-ghost.c) at fd numbers above
 * every fd the tree uses, all close-on-exec, then creates the root task
 * with clone3(set_tid).
 * Every task, in itself:
 *   enters its cgroup (cgmember.c, a tree without a cgroup namespace of
 *   its own), before anything of it is allocated;
 *   setsid() if it leads a session (and takes its controlling terminal
 *   again, tty.c), else setpgid(0, 0) if it leads a group;
 *   maps the memory it shares copy-on-write with its children (cow.c);
 *   makes the keeper of a group led by no task of the tree that its child
 *   is the first of (task_keepers(), killed and reaped after the go);
 *   creates its children with clone3(set_tid) (they inherit everything);
 *   joins its process group (waiting for the leader if needed), and puts
 *   it in the foreground of its terminal if it was (tty.c);
 *   umask, chdir (a deleted cwd is made again, entered and removed);
 *   opens its image; dup2()s its descriptors into place and closes 0-2 if
 *   not used (everything else is close-on-exec); lets the kinds do what
 *   needs its fd numbers or the other tasks (fd_kind.late: epoll items,
 *   pidfds to tasks of the tree); sets its resource limits,
 *   oom_score_adj, scheduling, affinity, I/O priority, no_new_privs (for
 *   an image without credentials) and the audit loginuid (attrs.c, which
 *   reads /proc/self); chroot;
 *   sets groups (root only; otherwise they must be the caller's); if the
 *   image has the threads' credentials (NT_IMGCR_CREDS), whose capabilities
 *   it checks it holds (creds_check: a message naming the capability), it
 *   stays root and the exec sets each thread's uids and gids last
 *   ("--imgcr-ids"), after the module made the threads with root's right
 *   to choose their TIDs; else (an older image) it sets gids and uids;
 *   reports "ready" on the status pipe and waits on the go pipe.
 * When every task is ready, the restorer writes one go byte per task and
 * every task execve()s its image ("--imgcr-creds" sets each thread's
 * capabilities, securebits and no_new_privs from the image, within the
 * restorer's, "--imgcr-ids" its uids and gids; "--imgcr-cloexec=LIST" names the
 * fds to mark close-on-exec again; "--imgcr-keep=RANGES" the mappings it
 * shares with its parent or children, restored in place; "--imgcr-seccomp=FD"
 * its threads' seccomp filters (DIR/seccomp-PID.img); "--imgcr-stop" makes the module stop
 * the whole restored process with SIGSTOP before its first instruction,
 * for a task that was stopped at dump time).  Until then every task has
 * PR_SET_PDEATHSIG(SIGKILL), so killing the root on an error removes the
 * whole half-built tree; a task that sees the go pipe closed without a byte
 * exits.  The status pipe reaching EOF means every task has exec'd: the
 * deleted files the images map are open, and are unlinked again.
 *
 * Zombies: a zombie is created like any task (pid, group, session,
 * credentials), reports ready and then dies at once with its status:
 * _exit(code), or killed by its signal, not dumpable (no core file), with
 * its limits and signal dispositions (SigIgn, SigCgt: handlers that never
 * run).  A status with the core-dump flag is refused (dump.c).  Its parent waits (waitid WNOWAIT,
 * so it stays a zombie) until it is dead before it reports ready, so the
 * SIGCHLD reaches the parent before its image runs, and is discarded
 * (SIGCHLD's default action) as the original one was delivered before the
 * dump; the restored parent then reaps it with the same status.
 *
 * Threads: the exec of core-PID.img recreates the other threads of the task
 * with their TIDs (the tree's "thread" records list them; the image too).
 * Like choosing a pid with clone3(set_tid), that needs CAP_CHECKPOINT_RESTORE
 * over the PID namespace, and free TIDs: both are checked first.  The exec
 * closes the status pipe before the threads exist (the main thread creates
 * them on its way back to user space), so the restorer then waits until it
 * has seen every listed TID in /proc/PID/task of its task.
 *
 * --pidns: a new PID namespace (and, for a non-root caller, a new user
 * namespace mapping only the caller's uid and gid).  If the root's pid is 1
 * it becomes the namespace's init; otherwise an init helper (pid 1, this
 * program) creates the root with set_tid, reaps every orphan and exits,
 * with the root's exit status, when no process is left in the namespace.
 *
 * The root's parent is the restorer (or the init helper): its original
 * parent is not restored.  Without --detach the restorer waits for it and
 * exits with its status.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/close_range.h>

#include "attrs.h"
#include "cgroup.h"
#include "cow.h"
#include "image.h"
#include "commands.h"
#include "files.h"
#include "log.h"
#include "notify.h"
#include "pipes.h"
#include "ns.h"
#include "proc.h"
#include "sockets.h"
#include "statehook.h"
#include "seccomp.h"
#include "tree.h"
#include "trust.h"
#include "tty.h"
#include "userns.h"

extern char **environ;

/* struct clone_args of <linux/sched.h>, up to cgroup (CLONE_ARGS_SIZE_VER2, Linux 5.7) */
struct imgcr_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct rctx {
	struct tree t;
	char dir[PATH_MAX];
	int dirfd;		/* DIR: every file of it is opened through it (dir_open) */
	int pidns, detach, userns, setcreds, allow_changed;
	/*
	 * The tree's own namespaces (ns.h, NS_BIT()s; its pids are then the
	 * ones in its PID namespace: tree_use_vpids), the host pid of the
	 * ns-root (the root task: imgcr clones it into them) and the pipe on
	 * which imgcr lets it go on once every kind's outside() ran.
	 */
	unsigned int own;
	int files_inside;	/* the ns-root opens the files, in its mount and network namespaces */
	pid_t nsroot;
	int ns_sync[2];
	int *desc;		/* per file: the restorer's fd */
	int *hostfd;		/* per file: a host file (host=1) opened before the namespaces
				 * (files_inside; -1: none), taken by open_files() */
	/*
	 * Maps that move ids with a network namespace of the tree's own: its
	 * sockets are made by imgcr in that namespace once the ns-root set it
	 * up (sk_late_open), and passed to the ns-root on sk_pass (SCM_RIGHTS).
	 */
	int sk_late, sk_pass[2];
	struct fd_restore fr;	/* open_files()' state, kept between its passes */
	int status_r, status_w, go_r, go_w;
	int base;
	struct rlimit nofile;
	pid_t ext_pgid;		/* the group the root inherited */
	pid_t restorer;
	uid_t trust_user;	/* DIR is this user's (trust.c), -1: root's */
	/* maps that move ids: per task, the cwd and root its own rights reach (moves_paths) */
	struct { dev_t dev; ino_t ino; } *seen_cwd, *seen_root;
};

/* clone3 like fork() with CLONE_* @flags, with the pid @tid in the innermost namespace (0: any). */
static pid_t clone_tid_flags(pid_t tid, uint64_t flags)
{
	return clone_ns(flags, tid);
}

/* imgcr's own signal mask, as the first clone_ns() found it */
static sigset_t imgcr_mask;
static int imgcr_mask_saved;

void clone_mask_restore(void)
{
	if (imgcr_mask_saved)
		sigprocmask(SIG_SETMASK, &imgcr_mask, NULL);
}

/*
 * The same into new namespaces (CLONE_NEW* @flags; with CLONE_NEWPID, @tid 0).
 * The child starts with every signal blocked and keeps them so through the
 * exec of its image (binfmt_img sets the image's mask): a signal sent to
 * the pid while it is being restored waits for the task, rather than
 * killing imgcr's restorer by the default action.  A child that does not
 * exec an image takes imgcr's mask back (clone_mask_restore()).
 */
pid_t clone_ns(unsigned long flags, pid_t tid)
{
	struct imgcr_clone_args a;
	sigset_t all, old;
	pid_t t = tid, p;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	/* CLONE_PARENT: the exit signal is the caller's own (the kernel's rule) */
	a.exit_signal = flags & CLONE_PARENT ? 0 : SIGCHLD;
	if (tid > 0) {
		a.set_tid = (uintptr_t)&t;
		a.set_tid_size = 1;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	p = syscall(SYS_clone3, &a, sizeof(a));
	if (p)
		sigprocmask(SIG_SETMASK, &old, NULL);
	else if (!imgcr_mask_saved) {
		imgcr_mask = old;
		imgcr_mask_saved = 1;
	}
	return p;
}

/* clone3 like fork(), with the pid @tid in the innermost namespace (0: any). */
pid_t clone_tid(pid_t tid)
{
	return clone_tid_flags(tid, 0);
}

/* A restorer's message to imgcr: @kind 'E' (the restore fails) or 'W' (a warning). */
__attribute__((format(printf, 4, 0)))
static void vreport(struct rctx *c, pid_t pid, char kind, const char *fmt, va_list ap)
{
	char buf[PIPE_BUF];
	int n;

	n = snprintf(buf, sizeof(buf) - 2, "%c %d ", kind, pid);
	n += vsnprintf(buf + n, sizeof(buf) - 2 - n, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(c->status_w, buf, n) < 0)
		_exit(1);
}

__attribute__((format(printf, 3, 4)))
static void report(struct rctx *c, pid_t pid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, pid, 'E', fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4)))
static void report_warning(struct rctx *c, pid_t pid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, pid, 'W', fmt, ap);
	va_end(ap);
}

static const char *pid_hint(int e)
{
	if (e == EEXIST)
		return " (the pid is in use: restore into a new PID namespace with --pidns)";
	if (e == EPERM)
		return " (needs CAP_CHECKPOINT_RESTORE: run as root, or use --pidns)";
	return "";
}

static int tidx(const struct tree *t, pid_t pid)
{
	int i;

	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].pid == pid)
			return i;
	return -1;
}

static void run_task(struct rctx *c, int ti, pid_t want_ppid) __attribute__((noreturn));

/* Close every fd at or above @base but @a, @b, @c, @d and @e (-1: none). */
static void close_above(int base, int a, int b, int c, int d, int e)
{
	int keep[5] = { a, b, c, d, e }, i, j, t, lo = base;

	for (i = 0; i < 5; i++)		/* sort the five */
		for (j = i + 1; j < 5; j++)
			if (keep[j] < keep[i]) {
				t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (i = 0; i < 5; i++) {
		if (keep[i] < lo)
			continue;
		if (keep[i] > lo)
			syscall(SYS_close_range, lo, keep[i] - 1, 0);
		lo = keep[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0U, 0);
}

/* A signal whose default action kills the process (a zombie can die of it). */
static int sig_kills(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP:
	case SIGTTIN: case SIGTTOU: case SIGURG: case SIGWINCH:
		return 0;
	default:
		return sig > 0 && sig <= SIGRTMAX;
	}
}

/* A zombie's caught signals: a handler, never run (it has no memory left). */
static void zombie_handler(int sig)
{
	(void)sig;
}

/*
 * What /proc/PID/status shows of a zombie's signal dispositions: SigIgn
 * and SigCgt.  Its death signal stays SIG_DFL (check_tree()).
 */
static void zombie_dispositions(const struct tree_task *k)
{
	struct sigaction sa = { .sa_handler = zombie_handler };
	int s;

	if (!k->has_zsig)
		return;
	for (s = 1; s <= 64; s++) {
		if (s == SIGKILL || s == SIGSTOP || s == (k->exit_status & 0x7f))
			continue;
		if (k->sig_ign & (1ULL << (s - 1)))
			sa.sa_handler = SIG_IGN;
		else if (k->sig_cgt & (1ULL << (s - 1)))
			sa.sa_handler = zombie_handler;
		else
			continue;
		sigaction(s, &sa, NULL);
	}
}

/* The end of a zombie's run_task(): ready, then die with its wait status. */
static void zombie_exit(struct rctx *c, const struct tree_task *k) __attribute__((noreturn));
static void zombie_exit(struct rctx *c, const struct tree_task *k)
{
	const struct timespec now = { 0, 0 };
	int sig = k->exit_status & 0x7f;
	char msg[32];
	sigset_t set;
	int n;

	/* what ps and /proc/PID/status show of the zombie: its name */
	prctl(PR_SET_NAME, k->comm);
	n = snprintf(msg, sizeof(msg), "R %d\n", k->pid);
	if (write(c->status_w, msg, n) != n)
		_exit(1);
	/* no core file: not dumpable (its limits are the zombie's, restored) */
	prctl(PR_SET_DUMPABLE, 0);
	zombie_dispositions(k);
	/*
	 * What was sent to the pid while every signal was blocked
	 * (clone_ns()) never reaches a zombie: dropped, and the mask empty
	 * again as the restorer's was.
	 */
	sigfillset(&set);
	while (sigtimedwait(&set, NULL, &now) > 0)
		;
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	if (!sig)
		_exit((k->exit_status >> 8) & 0xff);
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	_exit(127);	/* check_tree() only lets through signals that kill */
}

/* Wait until every zombie child of @k is dead, leaving it unreaped. */
static void wait_zombie_children(struct rctx *c, const struct tree_task *k)
{
	siginfo_t si;
	int i;

	for (i = 0; i < c->t.ntasks; i++) {
		const struct tree_task *ch = &c->t.tasks[i];

		if (!ch->zombie || ch->ppid != k->pid || ch->pid == c->t.root)
			continue;
		while (waitid(P_PID, ch->pid, &si, WEXITED | WNOWAIT) && errno == EINTR)
			;
	}
}
/*
 * An ordinary user's --pidns restore runs in a user namespace of its own,
 * where it has every capability until the exec of the image drops them
 * (its uid is not 0 there).  The image recreates its threads' TIDs with
 * clone3(set_tid) after that exec, which needs CAP_CHECKPOINT_RESTORE over
 * the new PID namespace: keep that one capability across the exec, as an
 * ambient one.  It is a capability over namespaces the user made.
 */
static int keep_checkpoint_cap(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_CHECKPOINT_RESTORE / 32].inheritable |= 1u << (CAP_CHECKPOINT_RESTORE % 32);
	if (syscall(SYS_capset, &h, d))
		return -1;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHECKPOINT_RESTORE, 0, 0);
}

/*
 * An in-place exec (cow.c) keeps the caller's credentials, so the module
 * takes it only if they are what exec would make of them: the same real,
 * effective, saved and fs IDs.  Otherwise the task is restored by a plain
 * exec (its memory copied, not shared).
 */
static int inplace_creds_ok(void)
{
	uid_t u[3];
	gid_t g[3];

	if (getresuid(&u[0], &u[1], &u[2]) || getresgid(&g[0], &g[1], &g[2]))
		return 0;
	return u[0] == u[1] && u[1] == u[2] && (uid_t)setfsuid(-1) == u[1] &&
	       g[0] == g[1] && g[1] == g[2] && (gid_t)setfsgid(-1) == g[1];
}

/*
 * In a new user namespace the restorer holds every capability, which an
 * exec by a non-root user drops (but the ambient ones): drop them first.
 */
static int drop_to_ambient(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int bit = CAP_CHECKPOINT_RESTORE;

	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, bit, 0, 0) == 1) {
		d[bit / 32].permitted = d[bit / 32].effective =
			d[bit / 32].inheritable = 1u << (bit % 32);
	}
	return syscall(SYS_capset, &h, d);
}

/* The credentials of each thread of an image (NT_IMGCR_CREDS). */
struct img_creds {
	int has;		/* every thread has them (else none has) */
	unsigned int n;
	pid_t *tid;
	struct imgcr_creds *c;
};

static int image_creds_read(int dirfd, const char *name, struct img_creds *out)
{
	struct image im;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (image_openat(&im, dirfd, name)) {
		image_close(&im);
		return -1;
	}
	if (!im.threads[0].has_creds) {
		image_close(&im);
		return 0;
	}
	out->n = im.nr_threads;
	out->tid = calloc(out->n, sizeof(*out->tid));
	out->c = calloc(out->n, sizeof(*out->c));
	if (!out->tid || !out->c) {
		image_close(&im);
		return -1;
	}
	for (i = 0; i < im.nr_threads; i++) {
		if (!im.threads[i].has_creds) {
			pr_err("%s: thread %d has no NT_IMGCR_CREDS note, the main thread has one",
			       name, im.threads[i].prstatus.pid);
			image_close(&im);
			return -1;
		}
		out->tid[i] = im.threads[i].prstatus.pid;
		out->c[i] = im.threads[i].creds;
	}
	out->has = 1;
	image_close(&im);
	return 0;
}

/* The image's main thread has the IDs the tree gives the task. */
static int ids_match(const struct tree_task *k, const struct imgcr_creds *m)
{
	const uint32_t u[4] = { m->uid, m->euid, m->suid, m->fsuid };
	const uint32_t g[4] = { m->gid, m->egid, m->sgid, m->fsgid };
	int i;

	for (i = 0; i < 4; i++)
		if (u[i] != k->uid[i] || g[i] != k->gid[i])
			return 0;
	return 1;
}

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

static const char *cap_name(uint64_t set, char *buf, size_t size)
{
	int c = __builtin_ctzll(set);

	if (c < (int)(sizeof(cap_names) / sizeof(cap_names[0])))
		return cap_names[c];
	snprintf(buf, size, "capability %d", c);
	return buf;
}

/*
 * Right before the exec, with our credentials as the exec will see them:
 * may each thread's capabilities be given (binfmt_img checks it all again,
 * img_creds.c; this is for a message that names the capability)?  NULL,
 * or why not in @err.
 */
static const char *creds_check(const struct img_creds *cr, unsigned long long old_userns,
			       char *err, size_t size)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t perm, inh, bset = 0, more;
	char name[32], link[64];
	unsigned long long ns = 0;
	unsigned int i;
	struct stat st;
	int c;

	if (syscall(SYS_capget, &h, d)) {
		snprintf(err, size, "capget: %s", strerror(errno));
		return err;
	}
	perm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			bset |= 1ULL << c;
	if (!stat("/proc/self/ns/user", &st))
		ns = st.st_ino;
	for (i = 0; i < cr->n; i++) {
		const struct imgcr_creds *t = &cr->c[i];
		const char *set = "permitted";

		/* the tree's own user namespace, recreated: ours (--imgcr-userns) */
		if ((t->cap_permitted | t->cap_inheritable | t->cap_ambient) && ns &&
		    t->user_ns != ns && !(old_userns && t->user_ns == old_userns)) {
			snprintf(link, sizeof(link), "%llu", (unsigned long long)t->user_ns);
			snprintf(err, size, "thread %d held capabilities in another user namespace (inode %s) than the restore's (%llu): they cannot be given in this one",
				 cr->tid[i], link, ns);
			return err;
		}
		more = t->cap_permitted & ~perm;
		if (!more) {
			more = t->cap_inheritable & ~(inh | perm);
			set = "inheritable";
		}
		if (!more) {
			more = t->cap_bset & ~bset;
			set = "in its bounding set";
		}
		if (more) {
			snprintf(err, size, "thread %d had %s %s, which the restorer does not hold (restore as root)",
				 cr->tid[i], cap_name(more, name, sizeof(name)), set);
			return err;
		}
	}
	return NULL;
}

/*
 * What binfmt_img wrote to the --imgcr-status= pipe before refusing the
 * exec: its reason, one line ("" if none: a module without the option).
 */
static const char *exec_reason(int fd, char *buf, size_t size)
{
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
	return buf;
}

/* Every thread of the image had no_new_privs. */
static int creds_all_nnp(const struct img_creds *cr)
{
	unsigned int i;

	for (i = 0; i < cr->n; i++)
		if (!(cr->c[i].flags & IMGCR_CREDS_NO_NEW_PRIVS))
			return 0;
	return cr->n > 0;
}

/*
 * One task's restore, in itself (run_task): what its steps share.  Each
 * step returns NULL, or why the task cannot be restored (in err, or a
 * constant string); run_task() reports that (task_fail) and the task
 * ends.  The steps run in this order, which matters (the comment at the
 * top of this file says why): task_session, task_cow, task_children,
 * task_pgrp, task_cwd, task_open_image, task_fds, task_locks,
 * task_exec_fds, task_attrs, task_creds, (a zombie dies here),
 * task_exec_args, task_ready (waits for the whole tree), task_owners,
 * task_exec.
 */
struct task_run {
	const struct tree_task *k;
	int ti;
	pid_t want_ppid;
	char img[PATH_MAX + 32];	/* DIR/core-PID.img, for messages */
	char name[64];			/* core-PID.img in DIR */
	int fd;				/* the image (-1: a zombie has none) */
	int scfd;			/* its seccomp filters (-1: none) */
	int rootfd;			/* / before chroot (-1: not chrooted) */
	int status[2];			/* binfmt_img's reason (--imgcr-status=) */
	struct img_creds creds;		/* its threads' credentials in the image */
	int late_ids;			/* the exec sets the uids and gids (--imgcr-ids) */
	char cloexec[4096];		/* the fds to mark close-on-exec again */
	size_t off;			/* strlen(cloexec) */
	char *argv[13];
	char cloexec_arg[4096 + 32], root_arg[48], sc_arg[48], stop_arg[32], shm_arg[4096];
	char status_arg[48], user_arg[48], userns_arg[48];
	char err[8192];
};

/* The size of err the steps give the kinds (what run_task always gave them). */
#define TASK_ERR	(PATH_MAX + 256)

/* The mappings a task shares with its parent or children (--imgcr-keep=): static, it is long. */
static char keep_arg[COW_ARG_MAX];

__attribute__((format(printf, 2, 3)))
static const char *task_msg(struct task_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return r->err;
}

/* a restored task that failed: its report, then it ends */
static void task_fail(struct rctx *c, const struct tree_task *k, const char *why) __attribute__((noreturn));
static void task_fail(struct rctx *c, const struct tree_task *k, const char *why)
{
	report(c, k->pid, "%s", why);
	_exit(1);
}

/* setsid() if it leads a session (and its controlling terminal), else setpgid(0, 0) if it leads a group */
static const char *task_session(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;

	if (k->sid == k->pid) {
		if (setsid() < 0)
			return task_msg(r, "setsid: %s", strerror(errno));
		return tty_restore_session(&c->t, c->desc, k);
	} else if (k->pgid == k->pid) {
		if (setpgid(0, 0))
			return task_msg(r, "setpgid(0, 0): %s", strerror(errno));
	}
	return NULL;
}

/* the memory it shares with its children, in place before they exist */
static const char *task_cow(struct rctx *c, struct task_run *r)
{
	return cow_prepare(&c->t, r->ti, c->dirfd, r->err, TASK_ERR);
}

/*
 * Process groups led by no task of the tree (issue 22): a member left in a
 * group whose leader is outside the tree (not the root's group, which
 * becomes the restorer's), or exited and reaped while a member (live or a
 * zombie) kept the group.  As CRIU does, a keeper task is made with the
 * group's number as its pid (clone3 set_tid), by the parent of the group's
 * first task (tree order: it is in the members' session, check_tree()),
 * before that parent's children; it leads the group, which the members
 * join (task_pgrp()), and puts it in the foreground of its terminal if it
 * was.  It holds nothing (no fds), sends no SIGCHLD (exit signal 0) and is
 * killed and reaped (__WALL) by its parent once every task is ready, before
 * that parent's exec: the group lives on in its members with its number,
 * without a leader, as it did at the dump.
 */
static int keeper_group(const struct tree *t, const struct tree_task *k)
{
	return tree_group_kept(t, k->pgid);
}

/* task @i is the first of a group that needs a keeper: its parent makes the keeper */
static int keeper_first(const struct tree *t, int i)
{
	int j;

	/* a session's own group, led by no task of the tree: its session keeper leads it */
	if (!keeper_group(t, &t->tasks[i]) || tree_session_kept(t, t->tasks[i].pgid))
		return 0;
	for (j = 0; j < i; j++)
		if (t->tasks[j].pgid == t->tasks[i].pgid)
			return 0;
	return 1;
}

static const char *task_keepers(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	struct tree_task lead;
	struct imgcr_clone_args a;
	const char *why;
	sigset_t all;
	pid_t g, p = -1, me = getpid();
	int i, cg;

	for (i = 0; i < c->t.ntasks; i++) {
		if (c->t.tasks[i].ppid != k->pid || !keeper_first(&c->t, i))
			continue;
		g = c->t.tasks[i].pgid;
		memset(&a, 0, sizeof(a));
		a.set_tid = (uintptr_t)&g;
		a.set_tid_size = 1;
		/*
		 * into imgcr's cgroup, as when it was made before its parent
		 * entered its own (cgmember.c): it must not count against the
		 * pids.max written there before the go byte; if that cannot be
		 * (no permission), in its parent's
		 */
		if ((cg = cgm_own_fd(&c->t)) >= 0) {
			a.flags = CLONE_INTO_CGROUP;
			a.cgroup = cg;
			p = syscall(SYS_clone3, &a, sizeof(a));
			a.flags = a.cgroup = 0;
		}
		if (cg < 0 || p < 0)
			p = syscall(SYS_clone3, &a, sizeof(a));
		if (p < 0) {
			int e = errno;

			return task_msg(r, "cannot create the keeper of process group %d (pid %d, its leader at the dump, not in the tree) with clone3(set_tid): %s%s",
					g, g, strerror(e), pid_hint(e));
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != me)
				_exit(1);
			prctl(PR_SET_NAME, "imgcr-pgrp");
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, NULL);
			syscall(SYS_close_range, 0, ~0U, 0);
			for (;;)
				pause();
		}
		if (setpgid(p, p))
			return task_msg(r, "cannot make process group %d for its keeper: %s", g,
					strerror(errno));
		lead = c->t.tasks[i];
		lead.pid = lead.pgid = g;
		if ((why = tty_restore_pgrp(&c->t, &lead)))
			return task_msg(r, "process group %d (kept for task %d): %s", g,
					c->t.tasks[i].pid, why);
	}
	return NULL;
}

/* Once every task is ready: the keepers @k made are killed and reaped. */
static void keepers_end(struct rctx *c, const struct tree_task *k)
{
	int i, st;

	for (i = 0; i < c->t.ntasks; i++) {
		pid_t g = c->t.tasks[i].pgid;

		if (c->t.tasks[i].ppid != k->pid || !keeper_first(&c->t, i))
			continue;
		kill(g, SIGKILL);
		while (waitpid(g, &st, __WALL) < 0 && errno == EINTR)
			;
	}
}

/*
 * Sessions led by no task of the tree (issue 22): the session's leader
 * exited (a daemon that forked twice) and its top tasks went to their
 * parent P, a child subreaper or a PID namespace's init (dump.c
 * session_check()).  As CRIU does with its helpers, P makes a session
 * keeper with the session's number as its pid (clone3 set_tid, exit
 * signal 0), which calls setsid() (so it also leads the group of the same
 * number, which the tasks in it join or inherit), makes the top tasks with
 * their pids as its children, in tree order, and exits: they go to P, as
 * they did at the dump, and the session and that group live on without a
 * leader.  P is made a child subreaper first (the image sets the flag
 * again), unless it is its PID namespace's init; it reaps the keeper
 * (__WALL) before making its other children.  The top tasks wait until it is
 * reaped before their parent-death signal (run_task()).
 */
static int session_top(const struct tree *t, const struct tree_task *k)
{
	const struct tree_task *p = tree_find(t, k->ppid);

	return k->pid != t->root && p && p->sid != k->sid && tree_session_kept(t, k->sid);
}

/* The image of task @k has the child subreaper flag (1), not (0). */
static int image_subreaper(struct rctx *c, const struct tree_task *k)
{
	struct image im;
	char name[64];
	int sub;

	snprintf(name, sizeof(name), "core-%d.img", TASK_IMG_PID(k));
	if (image_openat(&im, c->dirfd, name)) {
		image_close(&im);
		return 1;	/* the exec fails on it later */
	}
	sub = im.proc && (im.proc->flags & IMGCR_PROC_CHILD_SUBREAPER);
	image_close(&im);
	return sub;
}

static const char *session_keeper(struct rctx *c, struct task_run *r, pid_t sid)
{
	const struct tree_task *k = r->k;
	struct imgcr_clone_args a;
	pid_t s = sid, p, q, me = getpid();
	int i, st = 0;

	if (me != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return task_msg(r, "PR_SET_CHILD_SUBREAPER (for the keeper of session %d): %s", sid,
				strerror(errno));
	memset(&a, 0, sizeof(a));
	a.set_tid = (uintptr_t)&s;
	a.set_tid_size = 1;
	p = syscall(SYS_clone3, &a, sizeof(a));
	if (p < 0) {
		int e = errno;

		return task_msg(r, "cannot create the keeper of session %d (pid %d, its leader at the dump, not in the tree) with clone3(set_tid): %s%s",
				sid, sid, strerror(e), pid_hint(e));
	}
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(1);
		prctl(PR_SET_NAME, "imgcr-sess");
		if (setsid() < 0) {
			report(c, k->pid, "setsid for the keeper of session %d: %s", sid, strerror(errno));
			_exit(1);
		}
		for (i = 0; i < c->t.ntasks; i++) {
			const struct tree_task *ch = &c->t.tasks[i];
			pid_t q;

			if (ch->ppid != k->pid || ch->sid != sid || !session_top(&c->t, ch))
				continue;
			q = clone_tid(ch->pid);
			if (q < 0) {
				int e = errno;

				report(c, k->pid, "cannot create child pid %d (by the keeper of its session %d) with clone3(set_tid): %s%s",
				       ch->pid, sid, strerror(e), pid_hint(e));
				_exit(1);
			}
			if (q == 0)
				run_task(c, i, k->pid);
		}
		_exit(0);
	}
	while ((q = waitpid(p, &st, __WALL)) < 0 && errno == EINTR)
		;
	if (q != p || !WIFEXITED(st) || WEXITSTATUS(st))
		return task_msg(r, "the keeper of session %d failed", sid);
	/* the subreaper flag as in the image (the root may have cleared it since) */
	if (me != 1 && !image_subreaper(c, k) && prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0))
		return task_msg(r, "PR_SET_CHILD_SUBREAPER 0 (after the keeper of session %d): %s",
				sid, strerror(errno));
	return NULL;
}

/* children, with the same pids: each runs run_task() (a kept session's top tasks: its keeper) */
static const char *task_children(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	const char *why;
	int i;

	if ((why = task_keepers(c, r)))
		return why;

	for (i = 0; i < c->t.ntasks; i++) {
		const struct tree_task *ch = &c->t.tasks[i];
		pid_t p;
		int j;

		if (ch->ppid != k->pid || ch->pid == c->t.root)
			continue;
		if (session_top(&c->t, ch)) {
			/* its session's keeper, at its first top task's place in the order */
			for (j = 0; j < i; j++)
				if (c->t.tasks[j].ppid == k->pid && c->t.tasks[j].sid == ch->sid)
					break;
			if (j == i && (why = session_keeper(c, r, ch->sid)))
				return why;
			continue;
		}
		p = clone_tid(ch->pid);
		if (p < 0) {
			int e = errno;

			return task_msg(r, "cannot create child pid %d with clone3(set_tid): %s%s",
					ch->pid, strerror(e), pid_hint(e));
		}
		if (p == 0)
			run_task(c, i, k->pid);
	}
	return NULL;
}

/* its process group (waiting for the leader if needed), and its terminal's foreground */
static const char *task_pgrp(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	int n, own_pgid = tidx(&c->t, k->pgid) >= 0 || keeper_group(&c->t, k);

	if (k->pgid != k->pid) {
		pid_t target = own_pgid ? k->pgid : c->ext_pgid;

		/* target 0: imgcr's group, outside the new PID namespace */
		for (n = 0; target && getpgid(0) != target; n++) {
			if (!setpgid(0, target))
				break;
			if (errno != EPERM || n > 1000)
				return task_msg(r, "cannot join process group %d: %s",
						target, strerror(errno));
			usleep(10000);
		}
	}
	return tty_restore_pgrp(&c->t, k);
}

/* umask, cwd (attrs.c) */
/* maps that move ids: @path (the cwd or root now) is what imgcr found with the task's rights */
static const char *seen_same(struct task_run *r, const char *what, const char *path, dev_t dev,
			     ino_t ino)
{
	struct stat st;

	if (stat(path, &st) || st.st_dev != dev || st.st_ino != ino)
		return task_msg(r, "its %s %s is not the directory its own ids reached a moment ago (changed): not entered as root for it",
				what, what[0] == 'c' ? r->k->cwd : r->k->root);
	return NULL;
}

static const char *task_cwd(struct rctx *c, struct task_run *r)
{
	umask(r->k->umask);
	if (attrs_chdir(r->k, r->err, TASK_ERR))
		return r->err;
	if (c->seen_cwd)
		return seen_same(r, "cwd", ".", c->seen_cwd[r->ti].dev, c->seen_cwd[r->ti].ino);
	return NULL;
}

/*
 * The image, opened before chroot and before the credentials change,
 * and its threads' seccomp filters, if it had any (seccomp.c): read
 * by binfmt_img from that fd (closed by the exec).  Both through
 * DIR's fd, above the tree's fds, before these are put in place.
 */
static const char *task_open_image(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	char sc[64];

	snprintf(r->img, sizeof(r->img), "%s/core-%d.img", c->dir, TASK_IMG_PID(k));
	snprintf(r->name, sizeof(r->name), "core-%d.img", TASK_IMG_PID(k));
	if (k->zombie)
		return NULL;	/* a zombie has no image */
	if ((r->fd = fd_high(dir_open(c->dirfd, r->name, O_RDONLY), c->base)) < 0)
		return task_msg(r, "cannot open %s: %s", r->img, strerror(errno));
	seccomp_path(sc, sizeof(sc), NULL, TASK_IMG_PID(k));
	r->scfd = dir_open(c->dirfd, sc, O_RDONLY);
	if (r->scfd < 0 && errno != ENOENT)
		return task_msg(r, "cannot open %s/%s: %s", c->dir, sc, strerror(errno));
	if (r->scfd >= 0 && (r->scfd = fd_high(r->scfd, c->base)) < 0)
		return task_msg(r, "F_DUPFD: %s", strerror(errno));
	/* its threads' credentials in the image (NT_IMGCR_CREDS): checked by task_creds and task_exec_args */
	if (image_creds_read(c->dirfd, r->name, &r->creds))
		return task_msg(r, "cannot read the credentials in %s", r->img);
	/* the memfds it maps and holds as fds (memfd.c), for task_exec_args */
	if (memfd_shm_arg(&c->t, k, c->dirfd, r->name, c->base, r->shm_arg, sizeof(r->shm_arg)))
		return task_msg(r, "cannot give the memfds it maps and holds (file table of %s)",
				r->img);
	return NULL;
}

/*
 * descriptors: dup2()ed into place, 0-2 closed if not used; then what
 * needs the fds in place: F_SETSIG/O_ASYNC, epoll items, pidfds to the
 * tree (files.h)
 */
static const char *task_fds(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	int i, used[3] = { 0, 0, 0 };

	r->off = 0;
	r->cloexec[0] = 0;
	for (i = 0; i < k->nfds; i++) {
		const struct tree_fd *d = &k->fds[i];

		if (dup2(c->desc[d->file], d->fd) < 0)
			return task_msg(r, "fd %d: dup2: %s", d->fd, strerror(errno));
		if (d->fd < 3)
			used[d->fd] = 1;
		if (d->cloexec && r->off + 16 < sizeof(r->cloexec))
			r->off += snprintf(r->cloexec + r->off, sizeof(r->cloexec) - r->off, "%s%d",
					   r->off ? "," : "", d->fd);
	}
	for (i = 0; i < 3; i++)
		if (!used[i])
			close(i);
	if (fasync_restore(&c->t, k, r->err, TASK_ERR))
		return r->err;
	for (i = 0; fd_kinds[i]; i++)
		if (fd_kinds[i]->late && fd_kinds[i]->late(&c->t, k, r->err, 1024))
			return r->err;
	return NULL;
}

/*
 * POSIX and flock locks (locks.c): every descriptor above the tree's
 * (the restorer's, a kind's own such as a memfd's, any imgcr itself
 * inherited) would be closed at exec, and closing any fd of a file
 * drops the process's POSIX locks on it: close them all first, but
 * the image, the two pipes to the restorer and the log file (-o,
 * close-on-exec: its messages until the exec).
 */
static const char *task_locks(struct rctx *c, struct task_run *r)
{
	close_above(c->base, r->fd, r->scfd, c->status_w, c->go_r, log_fd());
	if (locks_restore_task(&c->t, r->k->pid, r->err, sizeof(r->err)))
		return r->err;
	return NULL;
}

/*
 * The fds the exec needs beside the image, opened before the limits
 * (RLIMIT_NOFILE may be 1): under chroot the image's mapped files (the
 * program, its libraries) may be outside the jail: binfmt_img finds them
 * under our root as it is now, through rootfd (closed by the exec); and
 * the pipe on which binfmt_img writes its reason if it refuses the exec
 * (--imgcr-status=).
 */
static const char *task_exec_fds(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;

	(void)c;
	if (strcmp(k->root, "/") && !k->zombie &&
	    (r->rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return task_msg(r, "cannot open / before chroot: %s", strerror(errno));
	if (!k->zombie && pipe2(r->status, O_CLOEXEC | O_NONBLOCK))
		r->status[0] = r->status[1] = -1;
	return NULL;
}

/* limits, oom_score_adj, scheduling... (attrs.c): while the rights are the caller's; then chroot */
static const char *task_attrs(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;

	if (attrs_set(k, r->creds.has, r->err, TASK_ERR))
		return r->err;
	if (strcmp(k->root, "/")) {
		/* the cwd, entered above, stays where it was: under the root or not */
		if (chroot(k->root))
			return task_msg(r, "chroot %s: %s", k->root, strerror(errno));
		if (c->seen_root)
			return seen_same(r, "root", "/", c->seen_root[r->ti].dev, c->seen_root[r->ti].ino);
	}
	return NULL;
}

static int same_groups(const struct tree_task *k, gid_t *g, int n);

/* credentials, last: creating children needs the caller's rights */
static __attribute__((noinline)) const char *task_creds(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	int i;

	if (c->setcreds) {
		gid_t g[65536];

		/* already ours: no call (a user namespace may deny setgroups) */
		i = getgroups(65536, g);
		if (i < 0 || !same_groups(k, g, i)) {
			for (i = 0; i < k->ngroups && i < 65536; i++)
				g[i] = k->groups[i];
			if (setgroups(k->ngroups, g))
				return task_msg(r, "setgroups: %s", strerror(errno));
		}
		/*
		 * An image with its threads' credentials: the module sets each
		 * thread's uids and gids last ("--imgcr-ids"), after it has
		 * made the threads with our right to choose their TIDs, and
		 * the exec runs as root (an exec with real and effective IDs
		 * that differ would be secure-exec, refused; one with other
		 * fs IDs may not even open the image).  Groups change no
		 * right the exec needs: set here, for every thread.
		 */
		r->late_ids = r->creds.has;
		if (r->late_ids && !ids_match(k, &r->creds.c[0]))
			return task_msg(r, "the credentials in %s (uid %u gid %u) are not the tree's (uid %u gid %u)",
					r->img, r->creds.c[0].uid, r->creds.c[0].gid, k->uid[0], k->gid[0]);
	}
	if (c->setcreds && !r->late_ids) {
		/*
		 * keep our capabilities across the uid change (the ambient
		 * ones go): the exec of the image then sets the task's
		 * exactly, within ours (--imgcr-creds)
		 */
		if (r->creds.has && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
			return task_msg(r, "PR_SET_KEEPCAPS: %s", strerror(errno));
		/*
		 * An image without credentials (an older one) gets what a
		 * plain exec with the tree's ids gives.  In a user namespace
		 * the ns-root's ambient capabilities (userns_inside) would
		 * survive the uid change (kuid 0 is not the namespace's
		 * root) and reach the task: they go (review s12 L4).
		 */
		if (!r->creds.has && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
		    errno != EINVAL)
			return task_msg(r, "cannot clear the ambient capabilities: %s", strerror(errno));
		if (setresgid(k->gid[0], k->gid[1], k->gid[2]))
			return task_msg(r, "setresgid %u %u %u: %s", k->gid[0], k->gid[1], k->gid[2],
					strerror(errno));
		if (k->gid[3] != k->gid[1])
			setfsgid(k->gid[3]);
		if (setresuid(k->uid[0], k->uid[1], k->uid[2]))
			return task_msg(r, "setresuid %u %u %u: %s", k->uid[0], k->uid[1], k->uid[2],
					strerror(errno));
		if (k->uid[3] != k->uid[1])
			setfsuid(k->uid[3]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* cleared by the id change */
		if (getppid() != r->want_ppid)
			_exit(1);
	}
	return NULL;
}

/* The exec's arguments (the comment at the top of this file); the last checks of the credentials. */
static const char *task_exec_args(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	const char *why;
	int i, n;

	r->argv[0] = r->img;
	for (i = 1; i < (int)(sizeof(r->argv) / sizeof(r->argv[0])); i++)
		r->argv[i] = NULL;
	n = 1;
	if (r->rootfd >= 0) {
		snprintf(r->root_arg, sizeof(r->root_arg), "--imgcr-root=%d", r->rootfd);
		r->argv[n++] = r->root_arg;
	}
	if (r->off) {
		snprintf(r->cloexec_arg, sizeof(r->cloexec_arg), "--imgcr-cloexec=%s", r->cloexec);
		r->argv[n++] = r->cloexec_arg;
	}
	/* memfds it maps and holds as fds: the loader maps those (task_open_image) */
	if (r->shm_arg[0])
		r->argv[n++] = r->shm_arg;
	if (k->stopped == SIGSTOP) {
		r->argv[n++] = "--imgcr-stop";
	} else if (k->stopped) {
		snprintf(r->stop_arg, sizeof(r->stop_arg), "--imgcr-stop=%d", k->stopped);
		r->argv[n++] = r->stop_arg;
	}
	if (r->creds.has) {
		why = creds_check(&r->creds, c->own & NS_BIT(NS_USER) ? c->t.ns->ino[NS_USER] : 0,
				  r->err, TASK_ERR);
		if (why)
			return why;
		r->argv[n++] = "--imgcr-creds";
		if (r->late_ids)
			r->argv[n++] = "--imgcr-ids";
		/* the tree's own user namespace, recreated: its capabilities are given in ours */
		if (c->own & NS_BIT(NS_USER)) {
			snprintf(r->userns_arg, sizeof(r->userns_arg), "--imgcr-userns=%llu",
				 c->t.ns->ino[NS_USER]);
			r->argv[n++] = r->userns_arg;
		}
	}
	if (r->scfd >= 0) {
		snprintf(r->sc_arg, sizeof(r->sc_arg), "--imgcr-seccomp=%d", r->scfd);
		r->argv[n++] = r->sc_arg;
		/*
		 * Adding a filter needs no_new_privs or CAP_SYS_ADMIN.  If
		 * every thread had no_new_privs, the restored ones have it
		 * anyway: set it now, so that a restorer without
		 * CAP_SYS_ADMIN may add their filters (never a grant).
		 */
		if (r->creds.has && creds_all_nnp(&r->creds) &&
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			return task_msg(r, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	}
	/* mappings shared with its parent or children: restored in place */
	cow_keep_arg(keep_arg, sizeof(keep_arg));
	if (keep_arg[0] && inplace_creds_ok())
		r->argv[n++] = keep_arg;
	else
		keep_arg[0] = 0;
	/* a user's DIR: binfmt_img checks the image is that user's (trust.c) */
	trust_user_arg(r->user_arg, sizeof(r->user_arg), c->trust_user, k->gid[0]);
	if (r->user_arg[0])
		r->argv[n++] = r->user_arg;
	/* last: a module from before it reads only argv[1..5] */
	if (r->status[1] >= 0) {
		snprintf(r->status_arg, sizeof(r->status_arg), "--imgcr-status=%d", r->status[1]);
		r->argv[n++] = r->status_arg;
	}
	return NULL;
}

/* ready; wait for the whole tree (the restorer's go byte; without it the task ends) */
static void task_ready(struct rctx *c, struct task_run *r)
{
	char msg[32], go;
	int n;

	n = snprintf(msg, sizeof(msg), "R %d\n", r->k->pid);
	if (write(c->status_w, msg, n) != n)
		_exit(1);
	while ((n = read(c->go_r, &go, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);	/* the restorer gave up */
	prctl(PR_SET_PDEATHSIG, 0);
}

/*
 * Every task exists now: the owners of its files (files.c); the
 * capabilities of a user namespace's restore as the exec needs them.
 */
static const char *task_owners(struct rctx *c, struct task_run *r)
{
	if (fown_restore(&c->t, r->k, r->err, TASK_ERR))
		return r->err;
	if (attrs_mempolicy_again(r->k, r->err, TASK_ERR) ||
	    attrs_affinity_again(r->k, r->err, TASK_ERR))
		return r->err;
	if (c->userns && r->k->nthreads && keep_checkpoint_cap())
		return task_msg(r, "cannot keep CAP_CHECKPOINT_RESTORE for the exec: %s", strerror(errno));
	/* in place, the exec keeps our credentials: drop what it would drop */
	if (keep_arg[0] && c->userns && drop_to_ambient())
		return task_msg(r, "cannot drop the capabilities of the user namespace: %s", strerror(errno));
	return NULL;
}

/*
 * A SIGCHLD pending now is the restore's own: children of ours that ended
 * as the zombies they were (zombie_exit()) or helpers that exited, while
 * every signal was blocked (clone_ns()).  The task never had it; what the
 * task had pending is in its image.  Other signals pending now were sent
 * to the pid during the restore: the task gets them once it runs.
 */
static void drop_restore_sigchld(void)
{
	const struct timespec now = { 0, 0 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (sigtimedwait(&chld, NULL, &now) == SIGCHLD)
		;
}

/* The exec of its image: returns only why it failed. */
static const char *task_exec(struct rctx *c, struct task_run *r)
{
	const struct tree_task *k = r->k;
	char reason[320];
	int i, n;

	for (i = 0;; i++) {
		drop_restore_sigchld();
		syscall(SYS_execveat, r->fd, "", r->argv, environ, AT_EMPTY_PATH);
		if (keep_arg[0] && (errno == EINVAL || (errno == EBUSY && i == 2000))) {
			/*
			 * In place refused (the kernel log says why), or our mm
			 * kept busy by others: a plain exec restores the same
			 * task, with its own copy of the shared memory.
			 */
			static const char pre[] = "cannot restore in place (--imgcr-keep): ";
			const char *text = reason;
			int e = errno;

			exec_reason(r->status[0], reason, sizeof(reason));
			/* the module's text says what this line says already */
			if (!strncmp(text, pre, sizeof(pre) - 1))
				text += sizeof(pre) - 1;
			report_warning(c, k->pid, "cannot restore in place (%s%s%s): the memory it shared copy-on-write is copied",
				       strerror(e), text[0] ? ": " : ", see the kernel log", text);
			for (n = 1; r->argv[n] != keep_arg; n++)
				;
			for (; r->argv[n]; n++)
				r->argv[n] = r->argv[n + 1];
			keep_arg[0] = 0;
			continue;
		}
		/* in place: another task held our mm for a moment (a /proc reader) */
		if (errno != EBUSY || !keep_arg[0])
			break;
		usleep(5000);
	}
	n = errno;
	exec_reason(r->status[0], reason, sizeof(reason));
	return task_msg(r, "exec of %s failed: %s%s%s%s", r->img, strerror(n),
			reason[0] ? ": " : " (see the kernel log)", reason,
			!k->nthreads ? "" : n == EEXIST ?
			" (a TID of its threads is in use: restore into a new PID namespace with --pidns)" :
			n == EPERM ?
			" (recreating its threads' TIDs needs CAP_CHECKPOINT_RESTORE: run as root, or use --pidns)" : "");
}

/* Restore task @ti of the tree in this process (its parent is @want_ppid), then exec its image. */
static void run_task(struct rctx *c, int ti, pid_t want_ppid)
{
	const struct tree_task *k = &c->t.tasks[ti];
	struct task_run r = { .k = k, .ti = ti, .want_ppid = want_ppid,
			      .fd = -1, .scfd = -1, .rootfd = -1, .status = { -1, -1 } };
	const char *why;

	/*
	 * a kept session's top task: its keeper's child until the keeper
	 * exits, and the keeper not yet reaped (ESRCH) until its exit_notify()
	 * is over: forget_original_parent() sets our parent to P before it
	 * sends the parent-death signal, which would kill us if we set it
	 * in between (review s19 #4)
	 */
	if (session_top(&c->t, k))
		while (getppid() == k->sid || kill(k->sid, 0) == 0 || errno != ESRCH)
			usleep(1000);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != want_ppid)
		_exit(1);
	/* into its cgroup before anything of its memory is allocated (cgmember.c) */
	if (cgm_enter(&c->t, ti, r.err, TASK_ERR))
		task_fail(c, k, r.err);
	/*
	 * our zombie children must not be reaped by the kernel (SIG_IGN);
	 * no SIGCHLD for a child restored stopped (the image has its own)
	 */
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = SIG_DFL, .sa_flags = SA_NOCLDSTOP },
		  NULL);
	if (k->pid == c->t.root)
		c->ext_pgid = getpgid(0);
	if ((why = task_session(c, &r)) || (why = task_cow(c, &r)) ||
	    (why = task_children(c, &r)) || (why = task_pgrp(c, &r)) ||
	    (why = task_cwd(c, &r)) || (why = task_open_image(c, &r)) ||
	    (why = task_fds(c, &r)) || (why = task_locks(c, &r)) ||
	    (why = task_exec_fds(c, &r)) || (why = task_attrs(c, &r)) ||
	    (why = task_creds(c, &r)))
		task_fail(c, k, why);
	/* the restorer's RLIMIT_NOFILE back, unless the task's own is restored (attrs.c) */
	if (!(k->attr_set & ATTR_RLIMIT(RLIMIT_NOFILE)))
		setrlimit(RLIMIT_NOFILE, &c->nofile);
	if (k->zombie)
		zombie_exit(c, k);
	wait_zombie_children(c, k);
	if ((why = task_exec_args(c, &r)))
		task_fail(c, k, why);
	task_ready(c, &r);
	keepers_end(c, k);
	if ((why = task_owners(c, &r)))
		task_fail(c, k, why);
	task_fail(c, k, task_exec(c, &r));
}

/* open_files()' passes: every file, all but the sockets (before the clone), the sockets */
enum { OPEN_ALL, OPEN_NOT_SK, OPEN_SK };

static int open_files(struct rctx *c, int pass);

/*
 * Maps that move ids with a network namespace of the tree's own
 * (c->sk_late): imgcr makes the tree's sockets in that namespace, which
 * the ns-root made with the new user namespace (it owns it) and set up
 * (addresses, routes: a connection is bound and connected again there).
 * imgcr, host root outside the new user namespace, enters the new network
 * namespace and, for the pids of the peer credentials, its PID namespace
 * (for its children: peer_as_pid in sk-unix.c), makes every socket there
 * as open_files() does, comes back, and passes each to the ns-root on
 * c->sk_pass: a message of the file's index with the socket (SCM_RIGHTS),
 * then one of -1.  0, or -1 (printed).
 */
static int sk_pass_send(int sk, int idx, int fd)
{
	return fd_send(sk, &idx, sizeof(idx), fd);
}

static int ns_enter_of(pid_t pid, const char *name, int type, int *back, const char *mine)
{
	char path[64];
	int fd, ret;

	*back = open(mine, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*back < 0 || fd < 0) {
		pr_perror("%s", *back < 0 ? mine : path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ret = setns(fd, type);
	if (ret)
		pr_perror("cannot enter %s, the tree's new namespace", path);
	close(fd);
	return ret;
}

static int ns_back(int *fd, int type, const char *what)
{
	int ret = 0;

	if (*fd < 0)
		return 0;
	if (setns(*fd, type)) {
		pr_perror("cannot go back to imgcr's own %s namespace", what);
		ret = -1;
	}
	close(*fd);
	*fd = -1;
	return ret;
}

static int sk_late_open(struct rctx *c, pid_t top)
{
	int net = -1, pid = -1, ret = -1, i;
	ssize_t n;
	char b;

	/* the ns-root set its network namespace up (ns_inside) */
	while ((n = read(c->sk_pass[0], &b, 1)) < 0 && errno == EINTR)
		;
	if (n != 1) {
		pr_err("the ns-root ended before it set its network namespace up (the reason is above)");
		goto out;
	}
	if (ns_enter_of(top, "net", CLONE_NEWNET, &net, "/proc/self/ns/net"))
		goto back;
	if ((c->own & NS_BIT(NS_PID)) &&
	    ns_enter_of(top, "pid", CLONE_NEWPID, &pid, "/proc/self/ns/pid_for_children"))
		goto back;
	unix_sk_peer_pidns(!!(c->own & NS_BIT(NS_PID)));
	pr_debug("the sockets, in the tree's network namespace");
	ret = open_files(c, OPEN_SK);
	unix_sk_peer_pidns(0);
	pr_debug("the sockets made (%d), passed to the ns-root", ret);
back:
	if (ns_back(&pid, CLONE_NEWPID, "PID") | ns_back(&net, CLONE_NEWNET, "network"))
		ret = -1;
	for (i = 0; !ret && i < c->t.nfiles; i++)
		if (c->t.files[i].kind == TK_SK && c->desc[i] >= 0 && sk_pass_send(c->sk_pass[0], i, c->desc[i])) {
			pr_perror("cannot pass socket %d to the ns-root", i);
			ret = -1;
		}
	if (!ret && sk_pass_send(c->sk_pass[0], -1, -1)) {
		pr_perror("cannot pass the sockets to the ns-root");
		ret = -1;
	}
out:
	close(c->sk_pass[0]);
	return ret;
}

/* The ns-root: its network namespace set up, it takes the sockets imgcr made there.  0 or -1 (printed). */
static int sk_late_take(struct rctx *c)
{
	int idx, fd, ret = -1;

	if (write(c->sk_pass[1], "n", 1) != 1) {
		pr_perror("cannot tell imgcr the network namespace is set up");
		goto out;
	}
	for (;;) {
		ssize_t n = fd_recv(c->sk_pass[1], &idx, sizeof(idx), &fd);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(idx)) {
			if (fd >= 0)
				close(fd);
			pr_err("imgcr did not pass the tree's sockets (the reason is above)");
			goto out;
		}
		if (idx == -1 && fd < 0)
			break;
		if (idx < 0 || idx >= c->t.nfiles || fd < 0 || c->desc[idx] >= 0) {
			pr_err("a socket passed by imgcr for file %d: not one it should pass", idx);
			if (fd >= 0)
				close(fd);
			goto out;
		}
		c->desc[idx] = fd_high(fd, c->base);
		if (c->desc[idx] < 0) {
			pr_perror("file %d: F_DUPFD", idx);
			goto out;
		}
	}
	ret = 0;
out:
	close(c->sk_pass[1]);
	return ret;
}

/*
 * The ns-root (the tree's root task, cloned into the tree's new
 * namespaces): once imgcr ran every kind's outside(), every kind's
 * inside() in enum order (uts: the names; time: a new time namespace with
 * the offsets, joined before any child exists), then it is the root task.
 */
static void run_nsroot(struct rctx *c) __attribute__((noreturn));
static void run_nsroot(struct rctx *c)
{
	struct ns_ctx nc = { .t = &c->t, .dirfd = c->dirfd, .hostproc = -1, .root = getpid(),
			     .own = c->own };
	char go, err[PATH_MAX + 512];
	ssize_t n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * In a user namespace of its own, the ns-root and the tasks it forks
	 * (which inherit this) are imgcr's, host root, until each one's exec,
	 * while the container's own root has CAP_SYS_PTRACE in that namespace
	 * and a restored task may already run: not dumpable, no one but host
	 * root may ptrace them or open their /proc fds (the exec makes each
	 * task's mm dumpable again as usual).
	 */
	if ((c->own & NS_BIT(NS_USER)) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(1);
	/* the root task's cgroup, before the files it may open and fill (cgmember.c) */
	if (cgm_enter(&c->t, tidx(&c->t, c->t.root), err, sizeof(err))) {
		report(c, c->t.root, "%s", err);
		_exit(1);
	}
	if (getppid() != (c->own & NS_BIT(NS_PID) ? 0 : c->restorer))
		_exit(1);
	close(c->ns_sync[1]);
	if (c->sk_late)
		close(c->sk_pass[0]);
	while ((n = read(c->ns_sync[0], &go, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);	/* imgcr gave up */
	close(c->ns_sync[0]);
	if (ns_inside(&nc)) {
		report(c, c->t.root, "the tree's namespaces could not be set up (the reason is above)");
		_exit(1);
	}
	if (c->files_inside && open_files(c, 0)) {
		report(c, c->t.root, "the tree's files could not be opened in its namespaces (the reason is above)");
		_exit(1);
	}
	if (c->sk_late && sk_late_take(c)) {
		report(c, c->t.root, "the tree's sockets were not made in its network namespace (the reason is above)");
		_exit(1);
	}
	run_task(c, tidx(&c->t, c->t.root), c->own & NS_BIT(NS_PID) ? 0 : c->restorer);
}

static void run_init(struct rctx *c) __attribute__((noreturn));
static void run_init(struct rctx *c)
{
	int st, root_st = 0, i;
	pid_t p, root;

	prctl(PR_SET_NAME, "imgcr-init");
	root = clone_tid(c->t.root);
	if (root < 0) {
		int e = errno;

		report(c, c->t.root, "cannot create the root pid %d with clone3(set_tid) in the new PID namespace: %s",
		       c->t.root, strerror(e));
		_exit(1);
	}
	if (root == 0)
		run_task(c, tidx(&c->t, c->t.root), 1);
	/* the namespace's init for the tree's life: signals from the host end it, as before */
	clone_mask_restore();
	for (i = 0; i < c->t.nfiles; i++)
		close(c->desc[i]);
	close(c->status_w);
	close(c->go_r);
	/* nothing of the restorer's kept for the tree's life: the cgroup.procs fds (cgmember.c) and the rest */
	syscall(SYS_close_range, c->base, ~0U, 0);
	for (;;) {
		p = waitpid(-1, &st, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == root)
			root_st = st;
	}
	if (WIFSIGNALED(root_st))
		_exit(128 + WTERMSIG(root_st));
	_exit(WEXITSTATUS(root_st));
}

/*
 * Open every file description of the tree in the restorer, each by its
 * kind (files.h), at c->base or above, close-on-exec: c->desc[file].
 */
/*
 * Maps that move ids: each task enters its cwd and root as host root
 * (before its exec sets its ids).  imgcr finds them now with the task's
 * own rights (trust_enter), and the task checks it entered the same
 * directories (seen_same): a path changed into a symbolic link to a
 * directory only root reaches is not entered for it.  0, or -1 (printed).
 */
static int moves_paths(struct rctx *c)
{
	const struct tree *t = &c->t;
	struct trust_as as;
	struct stat st;
	int i, w;

	c->seen_cwd = calloc(t->ntasks + 1, sizeof(*c->seen_cwd));
	c->seen_root = calloc(t->ntasks + 1, sizeof(*c->seen_root));
	if (!c->seen_cwd || !c->seen_root) {
		pr_err("out of memory");
		return -1;
	}
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		if (k->zombie)
			continue;
		if (k->cwd_deleted) {
			pr_err("pid %d: its cwd %s was deleted: not supported yet in a user namespace whose maps move ids (it is recreated as root)",
			       k->pid, k->cwd);
			return -1;
		}
		for (w = 0; w < 2; w++) {
			const char *path = w ? k->root : k->cwd;
			int e = 0;

			if (trust_enter(k, &as, path))
				return -1;
			if (stat(path, &st))
				e = errno;
			if (trust_leave(&as))
				return -1;
			if (e || !S_ISDIR(st.st_mode)) {
				pr_err("pid %d: its %s %s cannot be reached with its own ids (uid %u gid %u): %s",
				       k->pid, w ? "root" : "cwd", path, k->uid[1], k->gid[1],
				       e ? strerror(e) : "not a directory");
				return -1;
			}
			if (w) {
				c->seen_root[i].dev = st.st_dev;
				c->seen_root[i].ino = st.st_ino;
			} else {
				c->seen_cwd[i].dev = st.st_dev;
				c->seen_cwd[i].ino = st.st_ino;
			}
		}
	}
	return 0;
}

/* A task that holds file @i (an fd of it): its rights open it; NULL if none. */
static const struct tree_task *file_holder(const struct tree *t, int i)
{
	int j, m;

	for (j = 0; j < t->ntasks; j++)
		for (m = 0; m < t->tasks[j].nfds; m++)
			if (t->tasks[j].fds[m].file == i)
				return &t->tasks[j];
	return NULL;
}

/*
 * A tree whose files the ns-root opens in its namespaces (files_inside):
 * its host files (host=1: on a mount outside its mount namespace at dump,
 * dump --external file[MNT_ID:INODE]; a container's stdio from the host)
 * are opened first, here, by their path from the restorer's root, with
 * their flags and offset and the identity check of their kind: the
 * ns-root inherits them (c->hostfd).  0, or -1 (printed).
 */
static int open_host_files(struct rctx *c)
{
	struct tree *t = &c->t;
	struct fd_restore r = { .t = t, .dir = c->dir, .dirfd = c->dirfd, .base = c->base,
				.allow_changed = c->allow_changed };
	int i, fd;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		const struct fd_kind *kind = fd_kind_of(f->kind);
		char what[PATH_MAX + 64];

		if (!f->host)
			continue;
		if (!kind || !kind->open || (f->kind != TK_REG && f->kind != TK_CHR) || !f->path) {
			pr_err("file %d: a host file (host=1) of a kind that is not reopened by path", i);
			return -1;
		}
		if (!c->hostfd) {
			c->hostfd = malloc((t->nfiles + 1) * sizeof(int));
			if (!c->hostfd) {
				pr_err("out of memory");
				return -1;
			}
			for (int j = 0; j <= t->nfiles; j++)
				c->hostfd[j] = -1;
		}
		snprintf(what, sizeof(what), "%s (the host's, outside the mount namespace)", f->path);
		fd = kind->open(&r, i, what);
		if (fd < 0) {
			pr_err("%s: a file on a mount outside the tree's mount namespace at dump (host=1): it could not be opened again from imgcr's root",
			       f->path);
			return -1;
		}
		c->hostfd[i] = fd_high(fd, c->base);
		if (c->hostfd[i] < 0) {
			pr_perror("%s: F_DUPFD", what);
			return -1;
		}
	}
	return 0;
}

static int open_files(struct rctx *c, int pass)
{
	struct tree *t = &c->t;
	struct fd_restore *rp = &c->fr;
	char what[PATH_MAX + 64];
	int i, ret = -1, moves = userns_moves(t);

	if (moves && geteuid() != 0) {
		pr_err("a user namespace whose maps move ids: its files are opened by imgcr, root, outside it");
		return -1;
	}
	if (pass != OPEN_SK) {
		*rp = (struct fd_restore){ .t = t, .dir = c->dir, .dirfd = c->dirfd, .base = c->base,
					   .allow_changed = c->allow_changed, .moves = moves };
		rp->keep = calloc(t->nfiles + 1, sizeof(*rp->keep));
		c->desc = calloc(t->nfiles + 1, sizeof(int));
		if (!rp->keep || !c->desc) {
			pr_err("out of memory");
			return -1;
		}
		for (i = 0; i < t->nfiles; i++) {
			c->desc[i] = -1;
			rp->keep[i][0] = rp->keep[i][1] = -1;
		}
		rp->desc = c->desc;	/* files in flight (sk-queue.c) may open others early */
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		const struct fd_kind *kind = fd_kind_of(f->kind);
		int fd;

		if ((pass == OPEN_NOT_SK && f->kind == TK_SK) || (pass == OPEN_SK && f->kind != TK_SK))
			continue;
		if (!kind || !kind->open) {
			pr_err("file %d: no kind of file restores it", i);
			goto out;
		}
		if (f->path)
			snprintf(what, sizeof(what), "%s", f->path);
		else if (f->ino)
			snprintf(what, sizeof(what), "%s:[%lu] (file %d)", kind->name, f->ino, i);
		else
			snprintf(what, sizeof(what), "%s (file %d)", kind->name, i);
		if (rp->early && rp->early[i] >= 0) {	/* opened early, for a socket's queue */
			fd = rp->early[i];
			rp->early[i] = -1;
		} else if (c->hostfd && c->hostfd[i] >= 0) {	/* the host's, opened outside */
			fd = c->hostfd[i];
			c->hostfd[i] = -1;
		} else if (moves && f->kind != TK_SK) {
			/*
			 * The maps move ids: opened, made, bound, connected
			 * with the rights of a task that holds it, not as root
			 * (docs/containers.md "Maps that move ids").  Sockets:
			 * made by root with their owners and peer credentials,
			 * a unix one bound or connected by path as its holder
			 * (sk-unix.c, fd_restore.moves).
			 */
			const struct tree_task *k = file_holder(t, i);
			struct trust_as as;

			if (!k) {
				pr_err("%s: held by no task's fd: in a user namespace whose maps move ids, whose rights open it is not known: not supported yet",
				       what);
				goto out;
			}
			if (trust_enter(k, &as, what))
				goto out;
			fd = kind->open(rp, i, what);
			if (trust_leave(&as)) {
				if (fd >= 0)
					close(fd);
				goto out;
			}
			if (fd < 0)
				pr_err("pid %d: %s: not restored with the rights of this task, which holds it (uid %u gid %u; its user namespace's maps move ids, so it is never opened as root for it)",
				       k->pid, what, k->uid[1], k->gid[1]);
		} else {
			fd = kind->open(rp, i, what);
		}
		if (fd < 0)
			goto out;
		c->desc[i] = fd_high(fd, c->base);
		if (c->desc[i] < 0) {
			pr_perror("%s: F_DUPFD", what);
			goto out;
		}
	}
	/*
	 * The pipes and sockets made here are the restorer's: root gives each
	 * its owner back (for a socket, its sk_uid too), a daemon's pipes
	 * being its user's.  An ordinary user's are its own, as its tasks'
	 * credentials are (check_tree).
	 */
	for (i = 0; i < t->nfiles && c->setcreds; i++) {
		const struct tree_file *f = &t->files[i];

		if ((pass == OPEN_NOT_SK && f->kind == TK_SK) || (pass == OPEN_SK && f->kind != TK_SK))
			continue;
		if (f->has_owner && fchown(c->desc[i], f->owner_uid, f->owner_gid)) {
			pr_perror("file %d (%s): cannot give it its owner %u:%u", i,
				  tree_kind_names[f->kind], f->owner_uid, f->owner_gid);
			goto out;
		}
	}
	if (pass != OPEN_NOT_SK && locks_restore_files(t, c->desc))	/* OFD locks: locks.c */
		goto out;
	ret = 0;
out:
	/*
	 * Every kind's after() once every file is open: the sockets' (TCP
	 * repair mode off...) after the sockets' pass, the others' (which
	 * need no socket) after the first pass; all of them on a failure.
	 */
	for (i = 0; fd_kinds[i]; i++) {
		int sk = fd_kinds[i]->type == TK_SK;

		if (pass == OPEN_ALL || (pass == OPEN_NOT_SK && (!sk || ret)) || (pass == OPEN_SK && sk))
			if (fd_kinds[i]->after && fd_kinds[i]->after(rp, !ret))
				ret = -1;
	}
	for (i = 0; rp->keep && i < t->nfiles; i++) {
		if (rp->keep[i][0] >= 0)
			close(rp->keep[i][0]);
		if (rp->keep[i][1] >= 0)
			close(rp->keep[i][1]);
		rp->keep[i][0] = rp->keep[i][1] = -1;
	}
	if (pass != OPEN_NOT_SK || ret) {
		free(rp->keep);
		rp->keep = NULL;
	}
	return ret;
}

static int same_groups(const struct tree_task *k, gid_t *g, int n)
{
	int i, j;

	if (k->ngroups != n)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n && g[j] != k->groups[i]; j++)
			;
		if (j == n)
			return 0;
	}
	return 1;
}

/*
 * Some task has @tid as its pid or as a thread's tid.  kill() finds only
 * thread group leaders on newer kernels; /proc/TID is there for any thread
 * (though not listed in /proc).
 */
/*
 * A user namespace whose maps move ids: the loader opens the files an
 * image maps as its caller, host root, before it sets the task's ids.  A
 * file it would open read-write (a writable shared mapping) is refused
 * (docs/containers.md "Maps that move ids").  0, or -1 (printed).
 */
static int mapped_write_refuse(struct rctx *c, const struct tree_task *k, const char *name)
{
	char path[4096];
	struct imgcr_file rec;
	struct image img;
	unsigned int i;
	int ret = 0;

	if (image_openat(&img, c->dirfd, name))
		return -1;
	for (i = 0; i < img.task->nr_files && !ret; i++) {
		if (image_file(&img, i, &rec, path, sizeof(path))) {
			pr_err("pid %d: %s/%s: bad file table", k->pid, c->dir, name);
			ret = -1;
		} else if ((rec.flags & IMGCR_FILE_WRITE) && !(rec.flags & IMGCR_FILE_SHMEM)) {
			pr_err("pid %d: it maps %s writable and shared: not supported yet in a user namespace whose maps move ids (the loader would open it read-write as host root)",
			       k->pid, path);
			ret = -1;
		}
	}
	image_close(&img);
	return ret;
}

/*
 * The 2 MiB huge pages the anonymous MAP_HUGETLB mappings and the private
 * mappings of MFD_HUGETLB memfds of image @name need, added to *@need: all
 * of a reserved one's (mmap() reserves them, a private one of a memfd
 * too, for its copy-on-write copies), those the image has data in of one
 * made with MAP_NORESERVE.  -1 if the image cannot be read.
 */
static int huge_pages_needed(struct rctx *c, const char *name, unsigned long *need)
{
	struct image img;
	unsigned int i, j;

	if (image_openat(&img, c->dirfd, name))
		return -1;
	for (i = 0; i < img.task->nr_vmas; i++) {
		const struct imgcr_vma *v = &img.vmas[i];
		unsigned long next = 0;	/* the first huge page not yet counted */

		if (v->kind == IMGCR_VMA_FILE && !(v->flags & IMGCR_VMA_SHARED)) {
			struct imgcr_file rec;
			char path[16];

			if (image_file(&img, v->file, &rec, path, sizeof(path))) {
				image_close(&img);
				return -1;
			}
			if (!(rec.flags & IMGCR_FILE_HUGETLB))
				continue;
		} else if (v->kind != IMGCR_VMA_ANON || !(v->flags & IMGCR_VMA_HUGETLB)) {
			continue;
		}
		if (!(v->flags & IMGCR_VMA_NORESERVE)) {
			*need += (v->end - v->start) >> 21;
			continue;
		}
		/* PT_LOAD segments are sorted, each inside one mapping */
		for (j = 0; j < img.eh->e_phnum; j++) {
			const Elf64_Phdr *ph = &img.ph[j];
			unsigned long first, last;

			if (ph->p_type != PT_LOAD || !ph->p_filesz || ph->p_vaddr < v->start ||
			    ph->p_vaddr >= v->end)
				continue;
			first = (ph->p_vaddr - v->start) >> 21;
			last = (ph->p_vaddr + ph->p_filesz - 1 - v->start) >> 21;
			if (first < next)
				first = next;
			if (last >= first)
				*need += last - first + 1;
			if (last + 1 > next)
				next = last + 1;
		}
	}
	image_close(&img);
	return 0;
}

/*
 * The 2 MiB huge pages the MFD_HUGETLB memfds of tree @t need: all of
 * each (memfd.c's huge_fill reserves the whole memfd before any task
 * runs; its mappings need no more), each inode once.  The first one's
 * holder and name in @who.
 */
static unsigned long huge_memfd_pages(const struct tree *t, char *who, size_t size)
{
	const struct tree_task *k;
	unsigned long need = 0;
	int i, j;

	who[0] = 0;
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (f->kind != TK_MEMFD || !f->huge)
			continue;
		for (j = 0; j < i; j++)
			if (t->files[j].kind == TK_MEMFD && t->files[j].huge &&
			    t->files[j].ino == f->ino)
				break;
		if (j < i)
			continue;
		for (k = t->tasks; !who[0] && k < t->tasks + t->ntasks; k++)
			for (j = 0; j < k->nfds; j++)
				if (k->fds[j].file == i) {
					snprintf(who, size, ": pid %d fd %d: %s (MFD_HUGETLB) needs %lld of them",
						 k->pid, k->fds[j].fd, f->path, f->size >> 21);
					break;
				}
		need += f->size >> 21;
	}
	return need;
}

/*
 * The loader maps huge pages after its point of no return: without free
 * ones there (free_hugepages less resv_hugepages of the 2 MiB pool, sysfs)
 * the restored task would die; the restore of a huge page memfd would
 * fail.  Refused before.  @need of them, @memfd of which for the memfds
 * (the first one in @who).  0, or -1 (printed).
 */
static int huge_pages_check(unsigned long need, unsigned long memfd, const char *who)
{
	static const char dir[] = "/sys/kernel/mm/hugepages/hugepages-2048kB";
	unsigned long fr = 0, rsvd = 0;
	char path[96], *v;

	if (!need)
		return 0;
	/* the 2 MiB pool, whatever the default huge page size (as memfd.c's huge_fill) */
	snprintf(path, sizeof(path), "%s/free_hugepages", dir);
	if ((v = read_text(path, NULL))) {
		fr = strtoul(v, NULL, 10);
		free(v);
	}
	snprintf(path, sizeof(path), "%s/resv_hugepages", dir);
	if ((v = read_text(path, NULL))) {
		rsvd = strtoul(v, NULL, 10);
		free(v);
	}
	if (fr >= rsvd && fr - rsvd >= need)
		return 0;
	pr_err("the tree needs %lu huge page(s) of 2048 kB (%lu for MAP_HUGETLB and private MFD_HUGETLB mappings, %lu for MFD_HUGETLB memfds%s) and %lu are free (%s/{free,resv}_hugepages): reserve them (sysctl vm.nr_hugepages, or %s/nr_hugepages) before the restore",
	       need, need - memfd, memfd, who, fr >= rsvd ? fr - rsvd : 0, dir, dir);
	return -1;
}

static int tid_in_use(pid_t tid)
{
	char path[32];

	if (!kill(tid, 0) || errno == EPERM)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d", tid);
	return !access(path, F_OK);
}

#define CAP_SYS_ADMIN_BIT		21
#define CAP_CHECKPOINT_RESTORE_BIT	40

/* CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) in our effective set. */
static int has_cap_checkpoint_restore(void)
{
	char *text = read_text("/proc/self/status", NULL);
	const char *v = text ? status_field(text, "CapEff") : NULL;
	unsigned long long eff = v ? strtoull(v, NULL, 16) : 0;

	free(text);
	if (!v)
		return geteuid() == 0;
	return !!(eff & (1ULL << CAP_CHECKPOINT_RESTORE_BIT | 1ULL << CAP_SYS_ADMIN_BIT));
}

/* The process group and session task @k is restored in (imgcr's when outside the tree). */
static void restored_ids(const struct tree *t, const struct tree_task *k, pid_t *pgid, pid_t *sid)
{
	*pgid = tree_find(t, k->pgid) || keeper_group(t, k) ? k->pgid : getpgrp();
	*sid = tree_find(t, k->sid) || tree_session_kept(t, k->sid) ? k->sid : getsid(0);
}

/*
 * Whether the process group of @k will be orphaned in the restored tree
 * (no live member has a parent in another group of the same session), as
 * the kernel's will_become_orphaned_pgrp() judges: there it discards
 * SIGTSTP, SIGTTIN and SIGTTOU.  A parent outside the tree is imgcr (or
 * imgcr-init, in imgcr's group and session).
 */
static int pgrp_orphaned(const struct tree *t, const struct tree_task *k)
{
	pid_t pg, sid, mpg, msid, ppg, psid;
	int i;

	restored_ids(t, k, &pg, &sid);
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *m = &t->tasks[i], *p;

		restored_ids(t, m, &mpg, &msid);
		if (m->zombie || mpg != pg)
			continue;
		p = m->pid == t->root ? NULL : tree_find(t, m->ppid);
		if (p) {
			restored_ids(t, p, &ppg, &psid);
		} else {
			ppg = getpgrp();
			psid = getsid(0);
		}
		if (ppg != pg && psid == msid)
			return 0;
	}
	return 1;
}

/*
 * Task @k is in a session no task of the tree leads, not the root's: a
 * session keeper of pid SID recreates it (session_keeper()) for its top
 * tasks, which must have one parent and be alive, with no group in it but
 * the session's own led from outside the tree (dump.c session_check()).
 */
static int session_check(struct rctx *c, const struct tree_task *k)
{
	const struct tree *t = &c->t;
	const struct tree_task *p = tree_find(t, k->ppid);
	int i;

	for (i = 0; i < t->ntasks && t->tasks[i].sid != k->sid; i++)
		;
	/* the top tasks' parent: once per session (its first task in the tree) */
	if (k->sid <= 0 || (c->pidns && k->sid == 1) ||
	    (&t->tasks[i] == k && tree_session_parent(t, k->sid) <= 0)) {
		pr_err("pid %d: session %d has no leader in the tree: not supported", k->pid, k->sid);
		return -1;
	}
	if (p && p->sid != k->sid && k->zombie) {
		pr_err("pid %d: a zombie at the top of session %d, which has no leader in the tree: not supported",
		       k->pid, k->sid);
		return -1;
	}
	if (k->pgid != k->sid && !tree_find(t, k->pgid)) {
		pr_err("pid %d: process group %d, led by no task of the tree, in session %d, which has no leader in the tree: not supported",
		       k->pid, k->pgid, k->sid);
		return -1;
	}
	if (k->pgid == k->sid && p && p->sid == k->sid && p->pgid != k->sid) {
		pr_err("pid %d: in group %d, the own group of session %d, which has no leader in the tree, and its parent %d is in group %d: it cannot join group %d once the session's keeper is gone; not supported",
		       k->pid, k->sid, k->sid, p->pid, p->pgid, k->sid);
		return -1;
	}
	if (tree_find_tid(t, k->sid)) {
		pr_err("pid %d: session %d, led by no task of the tree, has the number of a thread of the tree",
		       k->pid, k->sid);
		return -1;
	}
	if (!c->pidns && (tid_in_use(k->sid) || !kill(-k->sid, 0) || errno == EPERM)) {
		pr_err("pid %d (%s): its session %d, led by no task of the tree, is kept by a task of pid %d during the restore, and pid %d is in use by another process or group (its leader at the dump?): restore into a new PID namespace with --pidns",
		       k->pid, k->comm, k->sid, k->sid, k->sid);
		return -1;
	}
	return 0;
}

static int check_tree(struct rctx *c)
{
	struct tree *t = &c->t;
	const struct tree_task *root = tree_find(t, c->t.root);
	gid_t groups[65536];
	int i, ng = getgroups(65536, groups);
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char path[PATH_MAX + 64];
	int j, privileged = has_cap_checkpoint_restore();
	unsigned long huge = 0, hugefd;
	char who[PATH_MAX + 128];

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i], *p = tree_find(t, k->ppid);

		if (k->pid != t->root && !p) {
			pr_err("pid %d: its parent %d is not in the tree", k->pid, k->ppid);
			return -1;
		}
		if (k->pid <= 0 || (c->pidns && k->pid == 1 && k->pid != t->root)) {
			pr_err("pid %d: cannot be restored", k->pid);
			return -1;
		}
		/* sessions are inherited from the parent unless the task leads one */
		if (k->sid != k->pid && k->pid != t->root && p->sid != k->sid &&
		    !tree_session_kept(t, k->sid)) {
			pr_err("pid %d: session %d differs from its parent's (%d) without leading it: not supported",
			       k->pid, k->sid, p->sid);
			return -1;
		}
		if (k->sid == k->pid && k->pgid != k->pid) {
			pr_err("pid %d: session leader outside its own process group: not supported", k->pid);
			return -1;
		}
		if (k->pgid != k->pid) {
			const struct tree_task *g = tree_find(t, k->pgid);

			if (g && g->sid != k->sid) {
				pr_err("pid %d: process group %d is in another session: not supported", k->pid, k->pgid);
				return -1;
			}
			/* a keeper takes the group's number as its pid (task_keepers()) */
			if (!g && k->pgid != root->pgid && (k->pgid <= 0 || (c->pidns && k->pgid == 1))) {
				pr_err("pid %d: process group %d has no leader in the tree and is not the root's: not supported", k->pid, k->pgid);
				return -1;
			}
			if (!g && k->pgid != root->pgid && tree_find_tid(t, k->pgid)) {
				pr_err("pid %d: process group %d, led by no task of the tree, has the number of a thread of the tree", k->pid, k->pgid);
				return -1;
			}
			if (!g && k->pgid != root->pgid && !c->pidns &&
			    (tid_in_use(k->pgid) || !kill(-k->pgid, 0) || errno == EPERM)) {
				pr_err("pid %d (%s): its process group %d, led by no task of the tree, is kept by a task of pid %d during the restore, and pid %d is in use by another process or group (its leader at the dump?): restore into a new PID namespace with --pidns",
				       k->pid, k->comm, k->pgid, k->pgid, k->pgid);
				return -1;
			}
		}
		if (!tree_find(t, k->sid) && k->sid != root->sid && session_check(c, k))
			return -1;
		if (k->pgid != k->sid && !tree_find(t, k->pgid) && tree_session_kept(t, k->pgid)) {
			pr_err("pid %d: process group %d is the number of session %d, which has no leader in the tree, and pid %d is in session %d: not supported",
			       k->pid, k->pgid, k->pgid, k->pid, k->sid);
			return -1;
		}
		if (p && p->zombie) {
			pr_err("pid %d: its parent %d is a zombie: cannot be restored", k->pid, p->pid);
			return -1;
		}
		if (k->zombie && !sig_kills(k->exit_status & 0x7f) && (k->exit_status & 0x7f)) {
			pr_err("pid %d: zombie killed by signal %d, whose default action does not kill: cannot be restored",
			       k->pid, k->exit_status & 0x7f);
			return -1;
		}
		if (k->stopped && k->stopped != SIGSTOP &&
		    ((c->pidns && k->pid == 1) || pgrp_orphaned(t, k))) {
			pr_err("pid %d: stopped by SIG%s, which the kernel would discard %s: it cannot be restored stopped by it",
			       k->pid, sigabbrev_np(k->stopped),
			       c->pidns && k->pid == 1 ? "for the init of a PID namespace" :
			       "in its process group, orphaned in the restored tree");
			return -1;
		}
		if (k->zombie && (k->exit_status & 0x80)) {
			pr_err("pid %d: zombie killed by signal %d with a core dump: the core-dump flag cannot be restored",
			       k->pid, k->exit_status & 0x7f);
			return -1;
		}
		if (k->zombie && k->has_zsig &&
		    ((k->sig_ign | k->sig_cgt) >> ((k->exit_status & 0x7f) - 1) & 1) &&
		    (k->exit_status & 0x7f)) {
			pr_err("pid %d: zombie killed by signal %d, which it catches or ignores: cannot be restored",
			       k->pid, k->exit_status & 0x7f);
			return -1;
		}
		snprintf(path, sizeof(path), "core-%d.img", TASK_IMG_PID(k));
		if (!k->zombie && faccessat(c->dirfd, path, R_OK, 0)) {
			pr_perror("pid %d: image %s/%s", k->pid, c->dir, path);
			return -1;
		}
		if (!k->zombie && userns_moves(t) && mapped_write_refuse(c, k, path))
			return -1;
		if (!k->zombie && huge_pages_needed(c, path, &huge))
			return -1;
		if (!c->pidns && (!kill(k->pid, 0) || errno == EPERM)) {
			pr_err("pid %d (%s) is in use by another process: restore into a new PID namespace with --pidns",
			       k->pid, k->comm);
			return -1;
		}
		for (j = 0; j < k->nthreads; j++) {
			pid_t tid = k->threads[j];

			if (c->pidns && tid == 1) {
				pr_err("pid %d thread %d: cannot be restored", k->pid, tid);
				return -1;
			}
			if (!c->pidns && tid_in_use(tid)) {
				pr_err("pid %d (%s): the TID %d of its thread is in use by another process: restore into a new PID namespace with --pidns",
				       k->pid, k->comm, tid);
				return -1;
			}
		}
		if (k->nthreads && !c->pidns && !privileged) {
			pr_err("pid %d (%s) has %d thread(s) besides the main one: recreating their TIDs needs CAP_CHECKPOINT_RESTORE: run as root, or restore into a new PID namespace with --pidns",
			       k->pid, k->comm, k->nthreads);
			return -1;
		}
		if (!c->setcreds) {
			int j, same = 1;

			for (j = 0; j < 4; j++)
				same &= k->uid[j] == uid && k->gid[j] == gid;
			if (!same || (ng >= 0 && !same_groups(k, groups, ng))) {
				pr_err("pid %d: its credentials (uid %u gid %u, %d groups) differ from the caller's (uid %u gid %u, %d groups): only root can restore other credentials",
				       k->pid, k->uid[0], k->gid[0], k->ngroups, uid, gid, ng);
				return -1;
			}
			if (strcmp(k->root, "/")) {
				pr_err("pid %d: root directory %s: only root can restore a chroot", k->pid, k->root);
				return -1;
			}
		}
	}
	hugefd = huge_memfd_pages(t, who, sizeof(who));
	if (huge_pages_check(huge + hugefd, hugefd, who))
		return -1;
	if (root->sid != root->pid && tree_find(t, root->sid) == NULL)
		pr_info("session %d is outside the tree: the tree joins imgcr's session",
			root->sid);
	return 0;
}

static int enter_namespaces(struct rctx *c)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (c->userns) {
		if (unshare(CLONE_NEWUSER)) {
			pr_perror("cannot create a user namespace");
			return -1;
		}
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		if (write_text("/proc/self/setgroups", "deny") ||
		    write_text("/proc/self/uid_map", map)) {
			pr_perror("cannot write the uid map of the new user namespace");
			return -1;
		}
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		if (write_text("/proc/self/gid_map", map)) {
			pr_perror("cannot write the gid map of the new user namespace");
			return -1;
		}
	}
	if (unshare(CLONE_NEWPID)) {
		pr_perror("cannot create a PID namespace");
		return -1;
	}
	return 0;
}

static void kill_tree(struct rctx *c, pid_t top, int all)
{
	int i, st;

	if (top > 0)
		kill(top, SIGKILL);
	if (all && !c->pidns)
		for (i = 0; i < c->t.ntasks; i++)
			kill(c->t.tasks[i].pid, SIGKILL);
	if (top > 0)
		while (waitpid(top, &st, 0) < 0 && errno == EINTR)
			;
	/*
	 * Nothing left when imgcr exits: the others, orphaned, are reaped by
	 * init (up to 2 s each; a reused pid is waited for in vain only)
	 */
	for (i = 0; all && !c->pidns && i < c->t.ntasks; i++) {
		char path[32];
		int n;

		snprintf(path, sizeof(path), "/proc/%d", c->t.tasks[i].pid);
		for (n = 0; n < 200 && !access(path, F_OK); n++)
			usleep(10000);
	}
}

/*
 * A failed restore: the tree killed (and its root reaped), then what
 * outside() made for its namespaces undone (cgroups can only be removed
 * once no task is left in them).
 */
static void kill_undo(struct rctx *c, pid_t top, int all)
{
	kill_tree(c, top, all);
	cgm_cleanup(&c->t);
	if (c->own) {
		struct ns_ctx nc = { .t = &c->t, .dirfd = c->dirfd, .hostproc = -1, .root = top,
				     .own = c->own };

		ns_cleanup(&nc);
	}
}

/*
 * Read status messages until @want "R" lines (want > 0) or EOF (want == 0).
 * Returns 0, or -1 after printing the errors.
 */
static int collect(struct rctx *c, int want, int timeout_ms)
{
	static char buf[1 << 16];
	static size_t len;
	struct timespec t0, now;
	int ready = 0, errs = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *nl;

		while ((nl = memchr(buf, '\n', len))) {
			*nl = 0;
			if (buf[0] == 'R') {
				ready++;
			} else if (buf[0] == 'W' || buf[0] == 'E') {
				/* "K PID message" */
				char *sp = strchr(buf + 2, ' ');

				if (sp)
					*sp++ = 0;
				if (buf[0] == 'W') {
					pr_warn("pid %s: %s", buf + 2, sp ? sp : "");
				} else {
					pr_err("restore failed: pid %s: %s", buf + 2, sp ? sp : "");
					errs++;
				}
			}
			len -= nl + 1 - buf;
			memmove(buf, nl + 1, len);
		}
		if (errs)
			return -1;
		if (want && ready >= want)
			return 0;
		progress_update(0, want ? ready : c->t.ntasks);
		struct pollfd p = { .fd = c->status_r, .events = POLLIN };
		int ms;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = timeout_ms - (int)((now.tv_sec - t0.tv_sec) * 1000 +
					(now.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0) {
			pr_err("restore failed: timeout: %d of %d tasks ready", ready, want);
			return -1;
		}
		if (poll(&p, 1, ms > 200 ? 200 : ms) < 0) {
			if (errno == EINTR)
				continue;
			pr_perror("poll");
			return -1;
		}
		if (!p.revents)
			continue;
		ssize_t n = read(c->status_r, buf + len, sizeof(buf) - len - 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!want)
				return 0;
			pr_err("restore failed: tasks exited before they were ready (%d of %d ready)", ready, want);
			return -1;
		}
		len += n;
	}
}

/* The last field of "NSpid:" in @path (a status file): the id in the innermost namespace. */
static pid_t inner_id(const char *path)
{
	char *text = read_text(path, NULL), *end;
	const char *v = text ? status_field(text, "NSpid") : NULL;
	long id = -1, x;

	while (v && *v && *v != '\n') {
		x = strtol(v, &end, 10);
		if (end == v)
			break;
		id = x;
		v = end;
	}
	free(text);
	return id;
}

/*
 * With --pidns the tree's pids live in the new namespace: the pid, in ours,
 * of each task there, found by its NSpid (0 if not found: it has exited).
 */
struct outer_search {
	struct rctx *c;
	pid_t *outer;
	char ns[128];		/* the link of the namespace's ns/pid */
};

static int outer_pid(pid_t p, void *arg)
{
	struct outer_search *s = arg;
	char other[128], path[64];
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", p);
	n = readlink(path, other, sizeof(other) - 1);
	if (n <= 0)
		return 0;
	other[n] = 0;
	if (strcmp(s->ns, other))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", p);
	i = tidx(&s->c->t, inner_id(path));
	if (i >= 0)
		s->outer[i] = p;
	return 0;
}

static void outer_pids(struct rctx *c, pid_t *outer)
{
	struct outer_search s = { .c = c, .outer = outer };
	char path[64];
	ssize_t n;

	memset(outer, 0, c->t.ntasks * sizeof(*outer));
	if (c->nsroot > 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", c->nsroot);
		n = readlink(path, s.ns, sizeof(s.ns) - 1);
	} else {
		n = readlink("/proc/self/ns/pid_for_children", s.ns, sizeof(s.ns) - 1);
	}
	if (n <= 0)
		return;
	s.ns[n] = 0;
	proc_each_process(outer_pid, &s);
}

/*
 * Mark in @seen the listed threads that task @k (pid @outer in our
 * namespace) has now; 1 if it has exactly its listed threads, 0 if not, -1
 * if it is gone (exited: nothing to check).  @extra gets a tid it should
 * not have, if any.
 */
static int task_threads(struct rctx *c, const struct tree_task *k, pid_t outer,
			char *seen, pid_t *extra)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	int j, n = 0, exact = 1;

	snprintf(path, sizeof(path), "/proc/%d/task", outer);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		if (c->pidns) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/status", outer, tid);
			tid = inner_id(path);
			if (tid <= 0)
				continue;
		}
		n++;
		if (tid == k->pid)
			continue;
		for (j = 0; j < k->nthreads && k->threads[j] != tid; j++)
			;
		if (j < k->nthreads) {
			seen[j] = 1;
		} else {
			*extra = tid;
			exact = 0;
		}
	}
	closedir(dir);
	if (!n)
		return -1;
	return exact && n == k->nthreads + 1;
}

/*
 * After every exec: each task with threads must show its listed TIDs.  The
 * threads appear when the main thread returns from the exec, after the
 * status pipe was closed, so this polls; a listed thread seen once counts
 * (it may exit as soon as it runs again), and a task that is gone exited.
 */
static int verify_threads(struct rctx *c, int timeout_ms)
{
	int i, j, pending, waited = 0, step = 1, ret = 0;
	char **seen = calloc(c->t.ntasks, sizeof(*seen));
	pid_t *outer = calloc(c->t.ntasks, sizeof(*outer)), *extra = calloc(c->t.ntasks, sizeof(*extra));
	char *done = calloc(c->t.ntasks, 1);

	if (!seen || !outer || !extra || !done) {
		pr_err("out of memory");
		exit(1);
	}
	for (i = 0; i < c->t.ntasks; i++) {
		seen[i] = calloc(c->t.tasks[i].nthreads + 1, 1);
		done[i] = !c->t.tasks[i].nthreads;
	}
	for (;;) {
		if (c->pidns)
			outer_pids(c, outer);
		pending = 0;
		for (i = 0; i < c->t.ntasks; i++) {
			const struct tree_task *k = &c->t.tasks[i];
			int r;

			if (done[i])
				continue;
			r = task_threads(c, k, c->pidns ? outer[i] : k->pid, seen[i], &extra[i]);
			for (j = 0; j < k->nthreads && seen[i][j]; j++)
				;
			if (r != 0 || j == k->nthreads)
				done[i] = 1;
			else
				pending++;
		}
		if (!pending || waited >= timeout_ms)
			break;
		usleep(step * 1000);
		waited += step;
		step = step < 50 ? step * 2 : 50;
	}
	for (i = 0; i < c->t.ntasks; i++) {
		const struct tree_task *k = &c->t.tasks[i];
		char list[256];
		size_t off = 0;

		if (done[i])
			continue;
		list[0] = 0;
		for (j = 0; j < k->nthreads && off + 16 < sizeof(list); j++)
			if (!seen[i][j])
				off += snprintf(list + off, sizeof(list) - off, " %d", k->threads[j]);
		pr_err("restore failed: pid %d: after %d ms its threads do not have the TIDs of the dump: missing%s%s%.0d",
		       k->pid, waited, list, extra[i] ? ", unexpected " : "", extra[i]);
		ret = -1;
	}
	for (i = 0; i < c->t.ntasks; i++)
		free(seen[i]);
	free(seen);
	free(outer);
	free(extra);
	free(done);
	return ret;
}

/*
 * --detach: the root's parent is imgcr, whose exit would send the root (or
 * one of its threads) a parent-death signal it asked for with
 * PR_SET_PDEATHSIG.  Refused rather than lost; 0 or -1 (printed).
 */
static int detach_pdeath(const struct rctx *c)
{
	const struct tree_task *root = tree_find(&c->t, c->t.root);
	char path[PATH_MAX + 32];
	struct image img;
	unsigned int i, sig = 0;

	if (root && root->zombie)
		return 0;
	snprintf(path, sizeof(path), "core-%d.img", root ? TASK_IMG_PID(root) : c->t.root);
	if (image_openat(&img, c->dirfd, path))
		return -1;
	if (img.proc)
		sig = img.proc->pdeath_signal;
	for (i = 1; i < img.nr_threads && !sig; i++)
		sig = img.threads[i].thread.pdeath_signal;
	image_close(&img);
	if (!sig)
		return 0;
	pr_err("task %d has a parent-death signal (%u, PR_SET_PDEATHSIG): with --detach, imgcr's exit would send it; restore without --detach (imgcr stays its parent), or with --pidns",
	       c->t.root, sig);
	return -1;
}

/*
 * $IMGCR_STATE_HOOK after DIR PID... with the restored tree frozen
 * (statehook.c): the pids in our namespace, in the tree's order.  0, or 1
 * if the check failed (the tree is left running).
 */
static int state_check(struct rctx *c)
{
	pid_t *pids, root;
	int i, r;

	if (!state_hook_set())
		return 0;
	pids = calloc(c->t.ntasks, sizeof(*pids));
	if (!pids)
		return 1;
	if (c->pidns)
		outer_pids(c, pids);
	else
		for (i = 0; i < c->t.ntasks; i++)
			pids[i] = c->t.tasks[i].pid;
	root = pids[tidx(&c->t, c->t.root)];
	r = root > 0 ? state_hook_restore(c->dir, root, pids, c->t.ntasks) : 0;
	free(pids);
	return r ? 1 : 0;
}

/*
 * --pidfile: the root's pid in imgcr's PID namespace, written to a
 * temporary file next to @path and renamed over it: a reader sees the
 * whole pid or no file.  0, or -1 (printed).
 */
static int write_pidfile(struct rctx *c, const char *path)
{
	char tmp[PATH_MAX + 32], buf[32];
	pid_t root = c->t.root, *pids;
	int fd, n, ok;

	if (c->pidns) {
		pids = calloc(c->t.ntasks, sizeof(*pids));
		if (!pids) {
			pr_err("out of memory");
			return -1;
		}
		outer_pids(c, pids);
		root = pids[tidx(&c->t, c->t.root)];
		free(pids);
	}
	if (root <= 0) {
		pr_err("--pidfile: cannot find the pid of the restored root %d", c->t.root);
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.imgcr-%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		pr_err("--pidfile: %s: name too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		pr_perror("--pidfile: cannot create %s", tmp);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%d", (int)root);
	ok = write(fd, buf, n) == n && !fsync(fd);
	if (close(fd))
		ok = 0;
	if (!ok || rename(tmp, path)) {
		pr_perror("--pidfile: cannot write %s", path);
		unlink(tmp);
		return -1;
	}
	pr_debug("pid %d written to %s", (int)root, path);
	return 0;
}

/* --stats: the images' size and the data they hold, in 4 KiB pages */
static void image_sizes(struct rctx *c, unsigned long long *bytes, unsigned long long *pages)
{
	char path[PATH_MAX + 32];
	struct stat s;
	int i;

	*bytes = *pages = 0;
	for (i = 0; i < c->t.ntasks; i++) {
		if (c->t.tasks[i].zombie)
			continue;
		snprintf(path, sizeof(path), "core-%d.img", TASK_IMG_PID(&c->t.tasks[i]));
		if (fstatat(c->dirfd, path, &s, AT_SYMLINK_NOFOLLOW))
			continue;
		*bytes += s.st_size;
		*pages += ((unsigned long long)s.st_blocks * 512 + 4095) / 4096;
	}
}

/* The root's pid in imgcr's PID namespace (imgcr-criu's notify), 0 if not found. */
static pid_t root_pid(struct rctx *c)
{
	pid_t root = c->t.root, *pids;

	if (!c->pidns)
		return root;
	pids = calloc(c->t.ntasks, sizeof(*pids));
	if (!pids)
		return 0;
	outer_pids(c, pids);
	root = pids[tidx(&c->t, c->t.root)];
	free(pids);
	return root;
}

/*
 * The image data task @k's exec charges to its cgroup, in bytes: the
 * PT_LOAD data of its mappings, but those of MAP_HUGETLB (hugetlb is not
 * charged to memory.current) and of the memfds the loader is given
 * (filled before the fork, memfd_shm_arg()); never more than the image's
 * size (its metadata and preallocated blocks are not counted).
 */
static unsigned long long task_image_data(struct rctx *c, const struct tree_task *k, const char *name,
					  unsigned long long *locked)
{
	unsigned long long n = 0;
	struct imgcr_file rec;
	struct image img;
	struct stat st;
	char path[4096];
	unsigned int i, j;

	if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || image_openat(&img, c->dirfd, name))
		return 0;
	for (i = 0; i < img.task->nr_vmas; i++) {
		const struct imgcr_vma *v = &img.vmas[i];

		if (v->flags & IMGCR_VMA_HUGETLB)
			continue;
		if (v->kind == IMGCR_VMA_FILE && v->file != IMGCR_NO_FILE &&
		    !image_file(&img, v->file, &rec, path, sizeof(path)) &&
		    rec.flags & IMGCR_FILE_SHMEM && !strncmp(path, "memfd:", 6) &&
		    memfd_given(&c->t, k, rec.ino, !!(rec.flags & IMGCR_FILE_WRITE)))
			continue;
		for (j = 0; j < img.eh->e_phnum; j++) {
			const Elf64_Phdr *ph = &img.ph[j];

			if (ph->p_type != PT_LOAD || !ph->p_filesz || ph->p_vaddr < v->start ||
			    ph->p_vaddr >= v->end)
				continue;
			n += ph->p_filesz;
			if (v->flags & IMGCR_VMA_LOCKED)
				*locked += ph->p_filesz;
		}
	}
	image_close(&img);
	if (n > (unsigned long long)st.st_size)
		n = st.st_size;
	if (*locked > n)
		*locked = n;
	return n;
}

/*
 * What each task's exec will load from its image (task_image_data(), but
 * the mappings cow.c put in place before: @filled, also those the task
 * fills itself before its fork), in bytes
 */
static void image_pending(struct rctx *c, struct cg_pending *pending, int filled)
{
	unsigned long long kept;
	char path[64];
	int i;

	for (i = 0; i < c->t.ntasks; i++) {
		struct cg_pending *p = &pending[i];

		p->data = p->locked = 0;
		snprintf(path, sizeof(path), "core-%d.img", TASK_IMG_PID(&c->t.tasks[i]));
		if (c->t.tasks[i].zombie)
			continue;
		p->data = task_image_data(c, &c->t.tasks[i], path, &p->locked);
		kept = cow_kept_bytes(&c->t, i, 0);
		p->data -= p->data < kept ? p->data : kept;
		if (filled)
			p->data += cow_kept_bytes(&c->t, i, 1);
		if (p->locked > p->data)
			p->locked = p->data;
	}
}

/*
 * A tree without a cgroup namespace of its own: each task put back in its
 * cgroup (cgmember.c), by its pid in imgcr's PID namespace.  0 or -1 (printed).
 */
static int host_cgroups(struct rctx *c)
{
	struct cg_pending *pending;
	pid_t *host;
	int i, r;

	if (c->own & NS_BIT(NS_CGROUP))
		return 0;	/* cgroup.c's */
	host = calloc(c->t.ntasks ? c->t.ntasks : 1, sizeof(*host));
	pending = calloc(c->t.ntasks ? c->t.ntasks : 1, sizeof(*pending));
	if (!host || !pending) {
		pr_err("out of memory");
		return -1;
	}
	if (c->pidns)
		outer_pids(c, host);
	else
		for (i = 0; i < c->t.ntasks; i++)
			host[i] = c->t.tasks[i].pid;
	image_pending(c, pending, 0);
	r = cgm_restore(&c->t, host, pending);
	free(pending);
	free(host);
	return r;
}

/* The tree has a network namespace of its own (imgcr-criu's network-* notify). */
static int own_netns(const struct rctx *c)
{
	return c->t.ns && (c->t.ns->own & NS_BIT(NS_NET));
}

/* --inherit-fd fd[N]:KEY (CRIU's syntax): 0, or -1 (printed) */
static int inherit_fd_option(const char *arg)
{
	char *end;
	long n;

	if (strncmp(arg, "fd[", 3) || arg[3] < '0' || arg[3] > '9')
		goto bad;
	n = strtol(arg + 3, &end, 10);
	if (n > INT_MAX || strncmp(end, "]:", 2))
		goto bad;
	return pipe_inherit_add(end + 2, (int)n);
bad:
	pr_err("restore: --inherit-fd %s: not fd[N]:KEY", arg);
	return -1;
}

int cmd_restore(int argc, char **argv)
{
	struct rctx c;
	const char *dir = NULL, *pidfile = NULL;
	int i, p[2], g[2], maxfd = 2, st, checked, stats = 0, trusted = 0;
	long long t0 = log_now_ms(), t_open = 0, t_fork = 0, t_exec = 0, t_run = 0;
	unsigned long long bytes, pages;
	pid_t top, parent;
	struct rlimit rl;

	memset(&c, 0, sizeof(c));
	cgm_ignore = 0;		/* imgcr-criu may run several restores in one process */
	mnt_options_reset();
	static const struct option opts[] = {
		{ "images-dir", required_argument, NULL, 'D' },
		{ "pidns", no_argument, NULL, 'P' },
		{ "restore-detached", no_argument, NULL, 'd' },
		{ "detach", no_argument, NULL, 'd' },
		{ "shell-job", no_argument, NULL, 'j' },
		{ "allow-changed-files", no_argument, NULL, 'A' },
		{ "trust-images-dir", no_argument, NULL, 'T' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "inherit-fd", required_argument, NULL, 'I' },
		{ "root", required_argument, NULL, 'r' },
		{ "external", required_argument, NULL, 'E' },
		{ "tcp-close", no_argument, NULL, 'X' },
		{ "stats", no_argument, NULL, 'S' },
		{ "display-stats", no_argument, NULL, 'S' },
		{ "cgroups", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		LOG_LONG_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	while ((i = getopt_long(argc, argv, ":D:djh" LOG_OPTS, opts, NULL)) != -1) {
		switch (i) {
		case 'o':
		case 'v':
			if (log_option(i, optarg) < 0)
				return 2;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'S':
			stats = 1;
			break;
		case 'D':
			dir = optarg;
			break;
		case 'P':
			c.pidns = 1;
			break;
		case 'd':
			c.detach = 1;
			break;
		case 'j':
			tty_shell_job = 1;
			break;
		case 'A':
			c.allow_changed = 1;
			break;
		case 'T':
			trusted = 1;
			break;
		case 'I':
			if (inherit_fd_option(optarg))
				return 2;
			break;
		case 'r':
			if (mnt_root_option(optarg))
				return 2;
			break;
		case 'E':
			if (mnt_ext_option(optarg))
				return 2;
			break;
		case 'X':
			sk_tcp_close = 1;	/* sk-tcp.c */
			break;
		case 'C':
			/* CRIU's --manage-cgroups modes: soft (its default, ours), ignore */
			if (!strcmp(optarg, "ignore"))
				cgm_ignore = 1;
			else if (!strcmp(optarg, "soft"))
				cgm_ignore = 0;
			else
				return usage_error("restore: --cgroups soft|ignore");
			break;
		case 'h':
			return command_help("restore");
		default:
			return option_error("restore", i, argc, argv);
		}
	}
	if (optind < argc)
		return usage_error("restore: unexpected argument (options only)");
	if (!dir)
		return usage_error("restore needs -D DIR");
	if (!realpath(dir, c.dir)) {
		pr_perror("%s", dir);
		return 1;
	}
	c.dirfd = open(c.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.dirfd < 0) {
		pr_perror("%s", c.dir);
		return 1;
	}
	/* through the fd of DIR: the directory trust_check() judges */
	if (tree_read_at(&c.t, c.dirfd, c.dir))
		return 1;
	if (trust_check(&c.t, c.dirfd, c.dir, trusted, &c.trust_user))
		return 1;
	/* namespaces of its own (ns.c): restored by the ns-root, the root task */
	if (ns_restore_check(&c.t))
		return 1;
	/* --root, --external mnt[]: the mounts bound from elsewhere (mount.c) */
	if (mnt_restore_options(&c.t))
		return 1;
	c.own = c.t.ns ? c.t.ns->own : 0;
	c.ns_sync[0] = c.ns_sync[1] = -1;
	if (c.own & NS_BIT(NS_PID)) {
		if (c.pidns)
			return usage_error("restore: --pidns is for a tree without a PID namespace of its own; this one has one, which is restored");
		/* its pids are the ones in its namespace from now on */
		tree_use_vpids(&c.t);
		c.pidns = 2;
	}
	/*
	 * Once imgcr exits, a restored group whose only link to its session
	 * was imgcr is orphaned, and the kernel sends SIGHUP and SIGCONT to
	 * an orphaned group with a stopped member.
	 */
	for (i = 0; c.detach && !c.pidns && i < c.t.ntasks; i++)
		if (c.t.tasks[i].stopped) {
			pr_err("task %d was stopped: with --detach, imgcr's exit would orphan its process group and the kernel would send it SIGHUP and SIGCONT; restore without --detach, or with --pidns",
			       c.t.tasks[i].pid);
			return 1;
		}
	/* imgcr-criu's rst_sibling: the root is our parent's child, we return once it runs */
	if (restore_sibling)
		c.detach = 1;
	if (c.detach && !c.pidns && !restore_sibling && detach_pdeath(&c))
		return 1;
	c.setcreds = geteuid() == 0;
	c.userns = c.pidns == 1 && geteuid() != 0;
	c.restorer = getpid();
	if (check_tree(&c))
		return 1;
	/* which memory parents and children share (cow.c) */
	if (cow_plan(&c.t, c.dirfd))
		return 1;
	/* a pty whose master was outside the tree: only for imgcr-criu (tty.h) */
	if (tty_orphan_check(&c.t))
		return 1;
	/* imgcr-criu's NOTIFY points (notify.h) */
	notify_env_init();
	if (notify("pre-restore", 0))
		return 1;

	/* everything inherited is close-on-exec from now on */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	for (i = 0; i < c.t.ntasks; i++)
		for (int j = 0; j < c.t.tasks[i].nfds; j++)
			if (c.t.tasks[i].fds[j].fd > maxfd)
				maxfd = c.t.tasks[i].fds[j].fd;
	/* above the tasks' fds, spare ones for the memfds' read-write copies (memfd_shm_arg) */
	c.base = maxfd + 1 + MEMFD_SPARE_FDS;
	getrlimit(RLIMIT_NOFILE, &c.nofile);
	rl = c.nofile;
	if (rl.rlim_cur < (rlim_t)(c.base + 2 * c.t.nfiles + 64)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < (rlim_t)(c.base + 2 * c.t.nfiles + 64)) {
			pr_err("fd %d is above the open files limit (%llu)", maxfd,
			       (unsigned long long)rl.rlim_max);
			return 1;
		}
	}
	/* DIR's fd, where the tree's fds are dup2()ed (closed by the exec) */
	c.dirfd = fd_high(c.dirfd, c.base);
	if (c.dirfd < 0) {
		pr_perror("cannot move DIR's fd above the tree's fds");
		return 1;
	}
	/* the log file, where the tree's fds are dup2()ed (closed by the exec) */
	if (log_fd() >= 0) {
		int lfd = fd_high(log_fd(), c.base);

		log_set_fd(lfd);	/* -1: stderr again, for this message */
		if (lfd < 0) {
			pr_perror("cannot move the log file above the tree's fds");
			return 1;
		}
	}
	if (c.pidns == 1 && enter_namespaces(&c))
		return 1;
	t_open = log_now_ms();
	/*
	 * The files of a tree with its own mount or network namespace are
	 * opened by the ns-root, once it has made them (paths, sockets).
	 */
	c.files_inside = !!(c.own & (NS_BIT(NS_MNT) | NS_BIT(NS_NET)));
	/*
	 * moving maps, a network namespace: the files opened outside, as
	 * their tasks; the sockets made by imgcr in the new network namespace
	 * once the ns-root set it up (sk_late_open; refused kinds: userns.c)
	 */
	if (userns_moves(&c.t) && !(c.own & NS_BIT(NS_MNT))) {
		if (userns_files_check(&c.t))
			return 1;
		c.files_inside = 0;
		for (i = 0; (c.own & NS_BIT(NS_NET)) && i < c.t.nfiles && !c.sk_late; i++)
			c.sk_late = c.t.files[i].kind == TK_SK;
	}
	for (i = 0; c.files_inside && i < c.t.nghosts; i++)
		if (c.t.ghosts[i].mapped) {
			pr_err("deleted file %s: mapped by a tree with its own mount or network namespace: not supported yet",
			       c.t.ghosts[i].path);
			return 1;
		}
	/* the images open the deleted files they map by path: made first, at it */
	if (!c.files_inside && ghost_make_mapped(&c.t, c.dirfd))
		return 1;
	if (userns_moves(&c.t)) {
		if (c.files_inside) {
			pr_err("a user namespace whose maps move ids with a mount or network namespace of its own: not supported yet");
			return 1;
		}
		/* the loader opens them as its caller, host root: not for the tree (docs/containers.md) */
		for (i = 0; i < c.t.nghosts; i++)
			if (c.t.ghosts[i].mapped) {
				pr_err("deleted file %s: mapped by a task in a user namespace whose maps move ids: not supported yet (recreated and mapped as host root)",
				       c.t.ghosts[i].path);
				return 1;
			}
		if (moves_paths(&c))
			return 1;
	}
	if (tty_orphan_begin(&c.t, c.base))
		return 1;
	if (c.files_inside && open_host_files(&c)) {
		tty_orphan_end();
		return 1;
	}
	if (!c.files_inside && open_files(&c, c.sk_late ? OPEN_NOT_SK : OPEN_ALL)) {
		ghost_unlink_mapped(&c.t);
		tty_orphan_end();
		return 1;
	}
	if (pipe2(p, O_CLOEXEC) || pipe2(g, O_CLOEXEC) || (c.own && pipe2(c.ns_sync, O_CLOEXEC)) ||
	    (c.sk_late && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, c.sk_pass))) {
		pr_perror("pipe");
		ghost_unlink_mapped(&c.t);
		return 1;
	}
	if (c.sk_late) {
		c.sk_pass[0] = fd_high(c.sk_pass[0], c.base);
		c.sk_pass[1] = fd_high(c.sk_pass[1], c.base);
	}
	c.status_r = fd_high(p[0], c.base);
	c.status_w = fd_high(p[1], c.base);
	c.go_r = fd_high(g[0], c.base);
	c.go_w = fd_high(g[1], c.base);
	if (c.own) {
		c.ns_sync[0] = fd_high(c.ns_sync[0], c.base);
		c.ns_sync[1] = fd_high(c.ns_sync[1], c.base);
	}
	fflush(stdout);
	fflush(stderr);

	/* the tasks' cgroups made before they exist: each one enters its own first (cgmember.c) */
	if (!(c.own & NS_BIT(NS_CGROUP))) {
		struct cg_pending *pending = calloc(c.t.ntasks ? c.t.ntasks : 1, sizeof(*pending));

		if (!pending) {
			pr_err("out of memory");
			return 1;
		}
		image_pending(&c, pending, 1);
		if (c.t.hostcg)
			c.t.hostcg->pidns = c.pidns || (c.own & NS_BIT(NS_PID));
		if (cgm_prepare(&c.t, c.base, pending)) {
			free(pending);
			ghost_unlink_mapped(&c.t);
			return 1;
		}
		free(pending);
	}
	t_fork = log_now_ms();
	pr_debug("%d tasks to create, %d files open", c.t.ntasks, c.t.nfiles);
	image_sizes(&c, &bytes, &pages);
	progress_begin("restore", c.t.ntasks, bytes);
	parent = restore_sibling ? getppid() : c.restorer;
	if (c.own)
		/* the ns-root: the root task, in the tree's new namespaces (pid 1 of its own) */
		top = clone_ns(ns_clone_flags(c.own), c.own & NS_BIT(NS_PID) ? 0 : c.t.root);
	else if (c.pidns && c.t.root != 1)
		top = clone_tid_flags(0, restore_sibling ? CLONE_PARENT : 0);
	else
		top = clone_tid_flags(c.pidns ? 1 : c.t.root, restore_sibling ? CLONE_PARENT : 0);
	if (top < 0) {
		int e = errno;

		pr_err("restore failed: pid %d: cannot create it with clone3(set_tid): %s%s",
		       c.t.root, strerror(e), pid_hint(e));
		ghost_unlink_mapped(&c.t);
		cgm_cleanup(&c.t);
		return 1;
	}
	if (top == 0) {
		close(c.status_r);
		close(c.go_w);
		if (c.own)
			run_nsroot(&c);
		if (c.pidns && c.t.root != 1)
			run_init(&c);
		run_task(&c, tidx(&c.t, c.t.root), c.pidns ? 0 : parent);
	}
	close(c.status_w);
	close(c.go_r);
	if (c.sk_late)
		close(c.sk_pass[1]);
	tty_orphan_parent();
	for (i = 0; c.hostfd && i < c.t.nfiles; i++)	/* the ns-root's now */
		if (c.hostfd[i] >= 0)
			close(c.hostfd[i]);
	if (c.own) {
		struct ns_ctx nc = { .t = &c.t, .dirfd = c.dirfd, .hostproc = -1, .root = top,
				     .own = c.own };

		c.nsroot = top;
		close(c.ns_sync[0]);
		/* every kind's part outside (uid maps, veth peers, cgroups), then it goes on */
		if (ns_outside(&nc) || write_all(c.ns_sync[1], "g", 1)) {
			kill_undo(&c, top, 0);
			ghost_unlink_mapped(&c.t);
			pr_err("restore failed: the tree's namespaces could not be set up; nothing of the tree was left running");
			return 1;
		}
		close(c.ns_sync[1]);
		if (c.sk_late && sk_late_open(&c, top)) {
			kill_undo(&c, top, 0);
			ghost_unlink_mapped(&c.t);
			pr_err("restore failed: the tree's sockets could not be made in its network namespace; nothing of the tree was left running");
			return 1;
		}
	}
	for (i = 0; c.desc && i < c.t.nfiles; i++)
		close(c.desc[i]);
	if ((c.pidns || c.own) &&
	    (notify("setup-namespaces", top) || notify("post-setup-namespaces", top))) {
		kill_undo(&c, top, 0);
		ghost_unlink_mapped(&c.t);
		pr_err("nothing of the tree was left running");
		return 1;
	}
	/* the orphan pty's new master, from whoever opened the files, to imgcr-criu's client */
	if (tty_orphan_deliver(&c.t)) {
		tty_orphan_end();
		kill_undo(&c, top, 0);
		ghost_unlink_mapped(&c.t);
		pr_err("nothing of the tree was left running");
		return 1;
	}
	tty_orphan_end();
	if (collect(&c, c.t.ntasks, 60000) || notify("post-restore", root_pid(&c)) ||
	    (own_netns(&c) && notify("network-unlock", 0)) || notify("pre-resume", 0)) {
		kill_undo(&c, top, 0);
		ghost_unlink_mapped(&c.t);
		pr_err("nothing of the tree was left running");
		return 1;
	}
	if (c.own) {
		struct ns_ctx nc = { .t = &c.t, .dirfd = c.dirfd, .hostproc = -1, .root = top,
				     .own = c.own };

		if (ns_late(&nc)) {
			kill_undo(&c, top, 0);
			ghost_unlink_mapped(&c.t);
			pr_err("nothing of the tree was left running");
			return 1;
		}
	}
	/*
	 * each task in its cgroup (it entered it before allocating anything),
	 * and each cgroup's memory.max holding what the execs will load
	 * (cgmember.c): refused here, before any task runs
	 */
	if (host_cgroups(&c)) {
		kill_undo(&c, top, 0);
		ghost_unlink_mapped(&c.t);
		pr_err("nothing of the tree was left running");
		return 1;
	}
	/* the point of no return: one go byte per task (zombies are dead already) */
	t_exec = log_now_ms();
	pr_debug("all %d tasks ready: executing their images", c.t.ntasks);
	for (i = 0; i < c.t.ntasks; i++)
		if (!c.t.tasks[i].zombie && write_all(c.go_w, "g", 1)) {
			pr_perror("go pipe");
			kill_undo(&c, top, 1);
			ghost_unlink_mapped(&c.t);
			return 1;
		}
	close(c.go_w);
	/* every task has executed its image: the mapped ghosts are open, deleted again */
	st = collect(&c, 0, 60000);
	progress_end();
	ghost_unlink_mapped(&c.t);
	if (st || verify_threads(&c, 60000)) {
		kill_undo(&c, top, 1);
		pr_err("the tree was killed");
		return 1;
	}
	t_run = log_now_ms();
	pr_debug("the tree runs");
	if ((pidfile && write_pidfile(&c, pidfile)) || notify("post-resume", 0)) {
		kill_undo(&c, top, 1);
		pr_err("the tree was killed");
		return 1;
	}
	if (stats) {
		image_sizes(&c, &bytes, &pages);
		pr_msg("stats: tasks=%d prepare_ms=%lld open_ms=%lld fork_ms=%lld exec_ms=%lld total_ms=%lld image_bytes=%llu image_pages=%llu",
		       c.t.ntasks, t_open - t0, t_fork - t_open, t_exec - t_fork, t_run - t_exec,
		       t_run - t0, bytes, pages);
	}
	checked = state_check(&c);
	if (c.detach)
		return checked;
	while (waitpid(top, &st, 0) < 0) {
		if (errno != EINTR) {
			pr_perror("waitpid %d", top);
			return 1;
		}
	}
	if (checked)
		return checked;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
