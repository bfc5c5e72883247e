/* SPDX-License-Identifier: GPL-2.0 */
/* pipes.c, shared with fifo.c: what anonymous and named pipes have in common. */
#ifndef IMGCR_PIPES_H
#define IMGCR_PIPES_H

#include "files.h"

/*
 * dump, for an S_ISFIFO fd: open the pipe itself into p->file_fd (O_RDWR
 * never blocks on a pipe) and read p->fs_type, once.  0, or -1 (printed).
 */
int pipe_open_fd(struct fd_parms *p);
/* dump: save the data buffered in pipe @ino (p->file_fd) once per pipe: a pipe record and pipe-INO.data. */
int pipe_save_data(struct fd_dump *c, const struct fd_parms *p, unsigned long ino);
/* restore: set the size of the pipe or FIFO @ino behind @wfd and write its saved data into it. */
int pipe_refill(const struct fd_restore *r, int wfd, unsigned long ino, const char *what);
/* restore: a new open file description of the pipe or FIFO behind @fd, with @flags (fd or -1). */
int pipe_reopen(int fd, unsigned int flags);
/*
 * restore: @fd, just opened for @what (-1: that failed, errno says why),
 * with its file status @flags: @fd, or -1 (printed).
 */
int pipe_opened(int fd, unsigned int flags, const char *what);

/* Buffered data of a pipe or FIFO, saved in DIR/pipe-<ino>.data. */
struct tree_pipe {
	unsigned long ino;
	unsigned int size;	/* F_GETPIPE_SZ */
	size_t len;		/* bytes of data */
	int ext;		/* external: not the tree's (size, len 0, no data) */
};

/*
 * External pipes (CRIU's external pipes and inherit_fd, as runc uses them
 * for a container's stdio):
 *   dump --external pipe:[INO]: pipe INO is not the tree's.  Its fds are
 *     recorded (pipe record ext=1), its data is not (it stays in the live
 *     pipe, which its other end outside keeps), and sharing it with
 *     processes outside the tree is allowed.
 *   restore --inherit-fd fd[N]:pipe:[INO]: every fd of external pipe INO
 *     is a dup of imgcr's fd N (the same open file description, as CRIU);
 *     an external pipe without one is refused.
 * KEY is "pipe:[INO]".  0, or -1 (printed) for a bad KEY or N.
 */
int pipe_external_add(const char *key);
int pipe_inherit_add(const char *key, int fd);

struct tree_pipe *tree_pipe_find(const struct tree *t, unsigned long ino);
struct tree_pipe *tree_pipe_add(struct tree *t, unsigned long ino);

#endif
