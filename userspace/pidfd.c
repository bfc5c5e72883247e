// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds ("pidfd" records): the process it refers to (fdinfo "Pid:") and
 * its file status flags (PIDFD_NONBLOCK is O_NONBLOCK).
 *
 * - To a task of the tree: the pidfd must refer to the restored task, which
 *   the restorer opening every description does not have yet.  It opens a
 *   placeholder; each task holding the pidfd, once its fds are in place,
 *   opens it with pidfd_open (waiting, at most 30 s, for the target to be
 *   created by its parent) and puts it at its fd numbers (the late hook).
 *   Each task gets its own description: a pidfd shared between tasks
 *   comes back as one per task (a pidfd has no state but its flags).
 * - To a process outside the tree: it must still run at restore, as the
 *   same process: same pid and same start time (/proc/PID/stat field 22,
 *   recorded at dump; a pid reused since is refused).  Opened by the
 *   restorer.  (With --pidns it is outside the new namespace: its fdinfo
 *   there says Pid 0, as for any pidfd to an outer process.)
 * - To a process that has exited (fdinfo "Pid: -1"; record "exited=ID",
 *   target 0, start ID: the pidfd's inode number at dump): as CRIU does,
 *   the restorer forks a helper that exits at once, opens a pidfd to it
 *   (with the recorded flags) while it is a zombie, then reaps it: the
 *   pidfd then says Pid -1, polls readable, waitid(P_PIDFD) gives ECHILD
 *   and pidfd_send_signal ESRCH, as the dumped one did.  Pidfds of one
 *   exited process opened separately (two descriptions) have the same
 *   inode (pidfs, 6.9+: one inode per process; before, every pidfd has
 *   the one anonymous inode): the pidfds of one ID are opened to one
 *   helper, reaped after the last of them.
 * Refused: a pidfd to a process in another PID namespace (Pid 0), and
 * thread pidfds (PIDFD_THREAD, 6.9+).
 */
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "proc.h"
#include "record.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* Field 22 of /proc/PID/stat (start time in clock ticks), or 0. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], *text, *s;
	unsigned long long v = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = read_text(path, NULL);
	s = text ? strrchr(text, ')') : NULL;
	/* the space before field N + 1 after N - 1 steps from the comm's ')' (field 2) */
	for (i = 2; s && i < 22; i++)
		s = strchr(s + 1, ' ');
	if (s)
		v = strtoull(s + 1, NULL, 10);
	free(text);
	return v;
}

static int pidfd_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	const char *v;
	char *info;
	long pid;

	if (strcmp(p->link, "anon_inode:[pidfd]"))
		return FD_OTHER;
	if (p->flags & PIDFD_THREAD)
		return fd_refuse(p, "pidfd: thread pidfds (PIDFD_THREAD) are not supported");
	info = fd_info(p);
	if (!info)
		return FD_FAILED;
	v = status_field(info, "Pid");
	pid = v ? strtol(v, NULL, 10) : -2;
	free(info);
	if (pid == -2) {
		pr_err("pid %d fd %d: pidfd: no Pid in its fdinfo", p->pid, p->fd);
		return FD_FAILED;
	}
	if (pid < 0) {
		struct stat st;
		int fd = fd_steal(p);

		/* exited: pidfd_restore_open makes one of a reaped helper */
		if (fd < 0 || fstat(fd, &st)) {
			pr_perror("pid %d fd %d: pidfd to an exited process: fstat", p->pid, p->fd);
			if (fd >= 0)
				close(fd);
			return FD_FAILED;
		}
		close(fd);
		f->target = 0;
		f->start = st.st_ino ? st.st_ino : 1;
		return FD_DESCRIBED;
	}
	if (pid == 0)
		return fd_refuse(p, "pidfd: its process is in another PID namespace: not supported");
	f->target = pid;
	if (tree_find(c->t, pid))
		return FD_DESCRIBED;	/* start 0: in the tree */
	f->start = start_time(pid);
	if (!f->start) {
		pr_err("pid %d fd %d: pidfd: cannot read the start time of its process %ld",
		       p->pid, p->fd, pid);
		return FD_FAILED;
	}
	return FD_DESCRIBED;
}

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(SYS_pidfd_open, pid, flags & O_NONBLOCK);
}

/* the helper of the exited process ID, a zombie until its last pidfd is open */
static struct helper {
	unsigned long long id;
	pid_t pid;
} *helpers;
static int nhelpers;

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* File @i, a pidfd to a process that has exited: of a helper, reaped after the last. */
static int pidfd_exited(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	struct helper *h = NULL;
	int fd, e, j, more = 0;

	for (j = 0; j < nhelpers; j++)
		if (helpers[j].id == f->start)
			h = &helpers[j];
	for (j = i + 1; j < r->t->nfiles && !more; j++)
		more = r->t->files[j].kind == TK_PIDFD && !r->t->files[j].target &&
		       r->t->files[j].start == f->start;
	if (!h) {
		h = realloc(helpers, (nhelpers + 1) * sizeof(*helpers));
		if (!h) {
			pr_err("%s: out of memory", what);
			return -1;
		}
		helpers = h;
		h = &helpers[nhelpers];
		h->id = f->start;
		h->pid = fork();
		if (h->pid < 0) {
			pr_perror("%s: exited process: fork of the helper", what);
			return -1;
		}
		if (!h->pid)
			_exit(0);
		nhelpers++;
	}
	/* a zombie until reaped: pidfd_open takes it */
	fd = pidfd_open(h->pid, f->flags);
	e = errno;
	if (!more || fd < 0) {
		reap(h->pid);
		*h = helpers[--nhelpers];
	}
	if (fd < 0) {
		errno = e;
		pr_perror("%s: exited process: pidfd_open of the helper", what);
	}
	return fd;
}

/* Every file opened, or a failure: helpers left (after a failure) reaped. */
static int pidfd_after(struct fd_restore *r, int ok)
{
	(void)r;
	(void)ok;
	while (nhelpers)
		reap(helpers[--nhelpers].pid);
	return 0;
}

static int pidfd_restore_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	unsigned long long st;
	int fd;

	if (!f->target)
		return pidfd_exited(r, i, what);
	if (!f->start) {
		/* a placeholder until the target exists: pidfd_late */
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			pr_perror("%s: /dev/null", what);
		return fd;
	}
	fd = pidfd_open(f->target, f->flags);
	if (fd < 0) {
		pr_perror("%s: process %d, outside the tree, is gone (pidfd_open)", what, f->target);
		return -1;
	}
	st = start_time(f->target);
	if (st != f->start) {
		pr_err("%s: process %d, outside the tree, is another one now (started at %llu, not %llu)",
		       what, f->target, st, f->start);
		close(fd);
		return -1;
	}
	return fd;	/* pidfd_open sets close-on-exec */
}

/* In task @k: its pidfds to tasks of the tree, at their fd numbers. */
static int pidfd_late(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	int i, j, fd, n;

	for (i = 0; i < k->nfds; i++) {
		const struct tree_file *f = &t->files[k->fds[i].file];

		if (f->kind != TK_PIDFD || f->start || !f->target)
			continue;	/* outside the tree, or exited: opened by the restorer */
		for (j = 0; j < i && k->fds[j].file != k->fds[i].file; j++)
			;
		if (j < i)
			continue;	/* done with the first fd of this file */
		for (n = 0; (fd = pidfd_open(f->target, f->flags)) < 0 && errno == ESRCH &&
			    n < 30000; n++)
			usleep(1000);
		if (fd < 0) {
			snprintf(err, size, "fd %d: pidfd_open(%d): %s", k->fds[i].fd, f->target,
				 strerror(errno));
			return -1;
		}
		for (j = i; j < k->nfds; j++)
			if (k->fds[j].file == k->fds[i].file && dup2(fd, k->fds[j].fd) < 0) {
				snprintf(err, size, "fd %d: dup2 of the pidfd: %s", k->fds[j].fd,
					 strerror(errno));
				close(fd);
				return -1;
			}
		close(fd);
	}
	return 0;
}


static void pidfd_rec_write(FILE *f, const struct tree_file *x)
{
	if (!x->target)
		fprintf(f, " exited=%llu", x->start);
	else
		fprintf(f, " pid=%d start=%llu", x->target, x->start);
}

static const char *pidfd_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (rec_has(r, "exited")) {
		x->target = 0;
		return rec_unum(r, "exited", &x->start) || !x->start ? "bad file record" : NULL;
	}
	if (REC_NUM(r, "pid", 1, TREE_PID_MAX, x->target) || rec_unum(r, "start", &x->start))
		return "bad file record";
	return NULL;
}

static void pidfd_rec_show(const struct tree *t, int i, const char *mode, char *out,
			   size_t size)
{
	(void)mode;
	if (!t->files[i].target)
		snprintf(out, size, "pidfd to a process that has exited");
	else
		snprintf(out, size, "pidfd pid %d%s", t->files[i].target,
			 t->files[i].start ? " (outside the tree)" : "");
}

static void pidfd_rec_json(const struct tree *t, int i)
{
	if (!t->files[i].target)
		printf(",\"exited\":%llu", t->files[i].start);
	else
		printf(",\"target\":%d,\"start\":%llu", t->files[i].target, t->files[i].start);
}

const struct fd_kind pidfd_fd_kind = {
	.name = "pidfd",
	.type = TK_PIDFD,
	.dump = pidfd_dump,
	.open = pidfd_restore_open,
	.late = pidfd_late,
	.after = pidfd_after,
	.rec_write = pidfd_rec_write,
	.rec_read = pidfd_rec_read,
	.rec_show = pidfd_rec_show,
	.rec_json = pidfd_rec_json,
};
