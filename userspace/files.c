// SPDX-License-Identifier: GPL-2.0
/*
 * The table of fd kinds (files.h), helpers the kinds share, and the kinds
 * imgcr recognises only to refuse them, until each gets a file of its own:
 * the anon inodes that no kind handles (io_uring, userfaultfd,
 * perf_event, bpf programs and links (bpf maps: bpfmap.c), kvm VMs and vCPUs,
 * and any other), each refusal naming what it is.  (Devices other than the
 * standard ones, /dev/kvm included, are refused by devices.c.)
 * Neither has a path to reopen; both are known by their /proc/PID/fd link
 * alone ("socket:[INO]", "anon_inode:[eventpoll]"), before anything else
 * is read about the fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"

static int anon_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	static const char *const handled[] = {
		"anon_inode:[eventfd]", "anon_inode:[signalfd]", "anon_inode:[timerfd]",
		"anon_inode:[eventpoll]", "anon_inode:inotify", "anon_inode:[pidfd]",
		"anon_inode:[fanotify]", "anon_inode:bpf-map",
	};
	static const struct {
		const char *prefix, *what;
	} refused[] = {
		{ "anon_inode:[io_uring]", "io_uring instances" },
		{ "anon_inode:[userfaultfd]", "userfaultfds" },
		{ "anon_inode:[perf_event]", "perf_event fds" },
		{ "anon_inode:bpf-prog", "bpf programs" },
		{ "anon_inode:bpf_link", "bpf links" },
		{ "anon_inode:bpf", "bpf objects" },
		{ "anon_inode:kvm-", "kvm VMs and vCPUs" },
	};
	size_t i;

	(void)c;
	(void)f;
	if (strncmp(p->link, "anon_inode:", 11))
		return FD_OTHER;
	/* these have kinds of their own, which need the fdinfo */
	for (i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		if (!strcmp(p->link, handled[i]))
			return FD_OTHER;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strncmp(p->link, refused[i].prefix, strlen(refused[i].prefix)))
			return fd_refuse(p, "anon inode %s: %s are not supported", p->link + 11,
					 refused[i].what);
	return fd_refuse(p, "anon inode %s: anon inodes other than eventfd, signalfd, timerfd, epoll, inotify, fanotify, pidfd and bpf maps are not supported",
			 p->link + 11);
}

static const struct fd_kind anon_fd_kind = {
	.name = "anon inode",
	.type = TK_NR,
	.by_link = 1,
	.dump = anon_dump,
};

const struct fd_kind *const fd_kinds[] = {
	&socket_fd_kind,	/* sockets.c (sk-unix.c, sk-inet.c) */
	&anon_fd_kind,		/* here */
	&eventfd_fd_kind,	/* eventfd.c */
	&signalfd_fd_kind,	/* signalfd.c */
	&timerfd_fd_kind,	/* timerfd.c */
	&pidfd_fd_kind,		/* pidfd.c (late: before epoll, which may watch it) */
	&epoll_fd_kind,		/* epoll.c */
	&inotify_fd_kind,	/* inotify.c */
	&fanotify_fd_kind,	/* fanotify.c */
	&bpfmap_fd_kind,	/* bpfmap.c */
	&memfd_fd_kind,		/* memfd.c (before files-reg.c: a memfd is a deleted file) */
	&ghost_fd_kind,		/* files-ghost.c (before files-reg.c) */
	&reg_fd_kind,		/* files-reg.c */
	&pipe_fd_kind,		/* pipes.c */
	&fifo_fd_kind,		/* fifo.c */
	&tty_fd_kind,		/* tty.c, before devices.c */
	&dev_fd_kind,		/* devices.c */
	NULL,
};

const char *fd_rec_none(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	(void)x;
	(void)r;
	return NULL;	/* any field left is refused as unknown */
}

void fd_rec_path(FILE *f, const char *path)
{
	char e[3 * 4096 + 4];

	tree_escape(e, sizeof(e), path);
	fprintf(f, " path=%s", e);
}

const struct fd_kind *fd_kind_of(enum tree_kind type)
{
	int i;

	for (i = 0; fd_kinds[i]; i++)
		if (fd_kinds[i]->type == type && type != TK_NR)
			return fd_kinds[i];
	return NULL;
}

int fd_refuse(struct fd_parms *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return FD_REFUSED;
}

int fd_high(int fd, int base)
{
	int h;

	if (fd < 0 || fd >= base)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, base);
	close(fd);
	return h;
}

char *fd_info(const struct fd_parms *p)
{
	char path[96], *info;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", p->pid, p->fd);
	info = read_text(path, NULL);
	if (!info)
		pr_perror("pid %d fd %d: cannot read %s", p->pid, p->fd, path);
	return info;
}

/*
 * The owner of a file description (fcntl F_SETOWN/F_SETOWN_EX: the task,
 * thread or process group that O_ASYNC's SIGIO and SIGURG go to) and its
 * F_SETSIG signal ("fown" records).  Dump reads both through a copy of
 * the fd; an owner outside the tree is refused (fown_check), as its pid
 * would mean another process after the restore (a process group led from
 * outside is the tree's when a keeper recreates it: tree_group_kept()).
 * Restore sets them in
 * the restorer of the first task holding the description, once every
 * task of the tree exists (after the go byte) and with that task's
 * credentials, which the kernel keeps with the owner to decide whether it
 * may signal it (the original setter's cannot be read: normally the task
 * itself).  An owner that has exited reads as 0 (no owner) and stays so.
 */
int fown_dump(const struct fd_parms *p, struct tree_file *f)
{
	struct f_owner_ex o = { 0, 0 };
	int fd = fd_steal(p), sig;

	if (fd < 0) {
		pr_perror("pid %d fd %d: cannot take a copy of the fd to read its owner (F_GETOWN_EX)",
			  p->pid, p->fd);
		return -1;
	}
	sig = fcntl(fd, F_GETSIG);
	/* an O_PATH fd has no owner (fcntl refuses it: EBADF) */
	if (sig < 0 && errno == EBADF) {
		close(fd);
		return 0;
	}
	if (fcntl(fd, F_GETOWN_EX, &o) || sig < 0) {
		pr_perror("pid %d fd %d: %s: F_GETOWN_EX/F_GETSIG", p->pid, p->fd, p->link);
		close(fd);
		return -1;
	}
	close(fd);
	f->own_type = o.type;
	f->own_pid = o.pid;
	f->own_sig = sig;
	return 0;
}

int fown_check(const struct tree *t)
{
	static const char *const what[] = { "thread", "process", "process group" };
	int i, j, ok;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (!f->own_pid)
			continue;
		ok = 0;
		if (f->own_type == F_OWNER_TID)
			ok = tree_find_tid(t, f->own_pid) != NULL;
		else if (f->own_type == F_OWNER_PID)
			ok = tree_find(t, f->own_pid) != NULL;
		else if (f->own_type == F_OWNER_PGRP)
			/* a group of the tree: led by a task of it, or kept */
			for (j = 0; j < t->ntasks && !ok; j++)
				ok = t->tasks[j].pgid == f->own_pid &&
				     (tree_find(t, f->own_pid) || tree_group_kept(t, f->own_pid));
		if (!ok) {
			pr_err("pid %d fd %d: its owner (F_SETOWN), %s %d, is not in the tree: the owner cannot be restored",
			       f->pid, f->fd, f->own_type >= 0 && f->own_type <= 2 ? what[f->own_type] : "?",
			       f->own_pid);
			return -1;
		}
	}
	return 0;
}

/* Whether fd @i of task @k is the first fd of the first task holding its file. */
static int first_holder(const struct tree *t, const struct tree_task *k, int i)
{
	int j, m;

	for (j = 0; j < t->ntasks; j++) {
		const struct tree_task *h = &t->tasks[j];

		for (m = 0; m < h->nfds; m++)
			if (h->fds[m].file == k->fds[i].file)
				return h == k && m == i;
	}
	return 0;
}

/*
 * O_ASYNC: the kernel signals with si_fd the fd number that set it, which
 * was the restorer's own (a high one) when the description was opened: set
 * it again through the task's fd, in the first task holding it.  Before
 * the tree runs: nothing can be written to the file meanwhile.
 */
int fasync_restore(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	int i, fl;

	for (i = 0; i < k->nfds; i++) {
		const struct tree_fd *d = &k->fds[i];

		if (!(t->files[d->file].flags & O_ASYNC) || !first_holder(t, k, i))
			continue;
		fl = fcntl(d->fd, F_GETFL);
		if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_ASYNC) || fcntl(d->fd, F_SETFL, fl | O_ASYNC)) {
			snprintf(err, size, "fd %d: cannot set O_ASYNC through it: %s", d->fd,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

int fown_restore(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	int i;

	for (i = 0; i < k->nfds; i++) {
		const struct tree_fd *d = &k->fds[i];
		const struct tree_file *f = &t->files[d->file];
		struct f_owner_ex o = { f->own_type, f->own_pid };

		/* only once: in the first task holding it, at its first fd of it */
		if ((!f->own_pid && !f->own_sig) || !first_holder(t, k, i))
			continue;
		if ((f->own_pid && fcntl(d->fd, F_SETOWN_EX, &o)) ||
		    (f->own_sig && fcntl(d->fd, F_SETSIG, f->own_sig))) {
			snprintf(err, size, "fd %d: cannot set its owner (F_SETOWN_EX %d %d) or signal (F_SETSIG %d): %s",
				 d->fd, f->own_type, f->own_pid, f->own_sig, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int fd_steal(const struct fd_parms *p)
{
	int pidfd, fd, e;

	pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	if (pidfd < 0)
		return -1;
	fd = syscall(SYS_pidfd_getfd, pidfd, p->fd, 0);
	e = errno;
	close(pidfd);
	errno = e;
	return fd;	/* pidfd_getfd sets close-on-exec */
}

int fd_set_flags(int fd, unsigned int flags, const char *what)
{
	const unsigned int settable = O_NONBLOCK | O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME;
	int now = fcntl(fd, F_GETFL);

	if (now < 0) {
		pr_perror("%s: F_GETFL", what);
		return -1;
	}
	if (((unsigned int)now & settable) == (flags & settable))
		return 0;
	if (fcntl(fd, F_SETFL, (now & ~settable) | (flags & settable))) {
		pr_perror("%s: cannot set the file status flags 0%o", what, flags & settable);
		return -1;
	}
	return 0;
}

int fd_path_open(const char *path, int flags)
{
	struct open_how how = { .resolve = RESOLVE_NO_MAGICLINKS };
	int fd;

	/* openat2 refuses what open() ignores: O_PATH takes only these */
	if (flags & O_PATH)
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.flags = (unsigned int)flags;
	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, flags);	/* before 5.6: no magic links to refuse */
	return fd;
}

int fd_tree_path_open(const struct tree *t, const struct tree_file *f, int flags)
{
	const char *mp = f->host ? NULL : mnt_moved_path(t, f->path);
	int fd, e;

	if (!mp)
		return fd_path_open(f->path, flags);
	fd = mnt_path_open(mp, f->path, flags);
	if (fd < 0 && (errno == ELOOP || errno == EXDEV)) {
		e = errno;
		pr_err("%s: in the copy its path has %s (mount %s, bound from another directory than at the dump): it would not be the file on that mount; restore refused",
		       f->path, e == ELOOP ? "a symbolic link (the dumped path had none)" :
		       "another mount on the way, or leads off the mount", mp);
		errno = e;
	}
	return fd;
}

/*
 * External host files (dump --external file[MNT_ID:INODE], CRIU's key, both
 * numbers hex): a regular file or standard device of a task of a tree with
 * its own mount namespace that is on a mount outside it (a container's
 * stdio given by its runtime from the host: /dev/null, a log file) is
 * recorded with host=1 instead of refused: the restore reopens it by the
 * path the dumper saw, from the restorer's root (the host's), before it
 * enters the tree's namespaces, with its flags and offset, the identity
 * checked as for any file.
 */
#define EXT_FILE_MAX 16
static struct { unsigned int mnt_id; unsigned long long ino; } ext_files[EXT_FILE_MAX];
static int n_ext_files;

int fd_external_file_add(const char *key)
{
	unsigned int mnt;
	unsigned long long ino;
	int len = 0;

	if (sscanf(key, "file[%x:%llx]%n", &mnt, &ino, &len) != 2 || !len || key[len]) {
		pr_err("external %s: not file[MNT_ID:INODE] (hex numbers)", key);
		return -1;
	}
	if (n_ext_files == EXT_FILE_MAX) {
		pr_err("external %s: more than %d external files", key, EXT_FILE_MAX);
		return -1;
	}
	ext_files[n_ext_files].mnt_id = mnt;
	ext_files[n_ext_files++].ino = ino;
	return 0;
}

int fd_external_file(unsigned int mnt_id, unsigned long long ino)
{
	for (int i = 0; i < n_ext_files; i++)
		if (ext_files[i].mnt_id == mnt_id && ext_files[i].ino == ino)
			return 1;
	return 0;
}
