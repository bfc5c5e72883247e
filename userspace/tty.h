/* SPDX-License-Identifier: GPL-2.0 */
/* tty.c: terminals, and the hooks the drivers call for them. */
#ifndef IMGCR_TTY_H
#define IMGCR_TTY_H

#include "tree.h"

/*
 * --shell-job, given to dump and to restore: fds on a terminal outside the
 * tree are dumped, and restored on the terminal imgcr restore runs on.
 */
extern int tty_shell_job;

/*
 * restore, in task @k (run_task) just after setsid(): make the slave of the
 * pty pair its session had as controlling terminal its controlling
 * terminal again, before it creates its children.  @desc: the restorer's
 * fd per file.  NULL, or why it failed.
 */
const char *tty_restore_session(const struct tree *t, const int *desc,
				const struct tree_task *k);
/*
 * restore, in task @k once it is in its process group: if it leads the
 * group that was in the foreground of its controlling terminal, put the
 * group in the foreground again.  NULL, or why it failed.
 */
const char *tty_restore_pgrp(const struct tree *t, const struct tree_task *k);

#define TREE_NCC	19	/* c_cc[] of the kernel's struct termios */

/* A terminal the tree uses: a pty pair inside it, or a shell job's terminal (tty.c). */
struct tree_tty {
	int index;		/* the pts index of a pair in the tree; -1: the job's terminal */
	unsigned int major, minor;	/* the terminal (a pair's slave) */
	pid_t sid, fg;		/* the session it is the controlling tty of, its
				 * foreground process group (0: none) */
	int locked, pkt;	/* TIOCGPTLCK, TIOCGPKT (pairs) */
	unsigned int iflag, oflag, cflag, lflag;
	unsigned char cc[TREE_NCC];
	unsigned short rows, cols, xpixel, ypixel;
	size_t inlen, outlen;	/* queued input and output in tty-INDEX.data */
	int has_mode;		/* a pair: its slave's devpts node's */
	unsigned int mode, uid, gid;	/* mode & 07777 and owner are known */
};

struct tree_tty *tree_tty_find(const struct tree *t, int index);
struct tree_tty *tree_tty_add(struct tree *t, int index);

#endif
