// SPDX-License-Identifier: GPL-2.0
/*
 * The table of fd kinds (files.h), and the kinds imgcr recognises only to
 * refuse them, until each gets a file of its own: sockets and anon inodes
 * (eventfd, epoll, signalfd, timerfd...).  Neither has a path to reopen;
 * both are known by their /proc/PID/fd link alone ("socket:[INO]",
 * "anon_inode:[eventfd]"), before anything else is read about the fd.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

static int socket_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	(void)c;
	(void)f;
	if (strncmp(p->link, "socket:", 7) && !S_ISSOCK(p->st.st_mode))
		return FD_OTHER;
	return fd_refuse(p, "socket: sockets are not supported (%s)", p->link);
}

static const struct fd_kind socket_fd_kind = {
	.name = "socket",
	.type = TK_NR,
	.by_link = 1,
	.dump = socket_dump,
};

static int anon_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	(void)c;
	(void)f;
	if (strncmp(p->link, "anon_inode:", 11))
		return FD_OTHER;
	return fd_refuse(p, "anon inode %s: anon inodes (eventfd, epoll, signalfd, timerfd, ...) are not supported",
			 p->link + 11);
}

static const struct fd_kind anon_fd_kind = {
	.name = "anon inode",
	.type = TK_NR,
	.by_link = 1,
	.dump = anon_dump,
};

const struct fd_kind *const fd_kinds[] = {
	&socket_fd_kind,	/* here */
	&anon_fd_kind,		/* here */
	&reg_fd_kind,		/* files-reg.c */
	&pipe_fd_kind,		/* pipes.c */
	&fifo_fd_kind,		/* fifo.c */
	&dev_fd_kind,		/* devices.c */
	NULL,
};

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
