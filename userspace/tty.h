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
 * dump (imgcr-criu's orphan_pts_master, CRIU's --orphan-pts-master): one
 * pty whose master is outside the tree (a container runtime's console)
 * is dumped as an "orphan" pair: its termios, window size, session and
 * slave node; restore makes a new pair, gives the tree its slave and
 * hands the master to orphan_master_hook (notify.h).
 */
extern int tty_orphan_master;

/*
 * restore, a tree with an orphan pty: refused without orphan_master_hook
 * (0 or -1, printed); then tty_orphan_begin() before the files are opened
 * (a socket the opener sends the new master over), tty_orphan_deliver()
 * in imgcr once they are (the master to the hook).  tty_orphan_end():
 * closes what is left.
 */
int tty_orphan_check(const struct tree *t);
int tty_orphan_begin(const struct tree *t, int base);
void tty_orphan_parent(void);	/* imgcr, once the opener is cloned: its end closed */
int tty_orphan_deliver(const struct tree *t);
void tty_orphan_end(void);

/*
 * restore (mount.c): a bind mount of pts @index of the devpts mounted at
 * @devpts (runc's /dev/console) while the pair does not exist yet: the
 * orphan pair's master opened there now with that index, kept for the
 * pair.  0 or -1 (printed).
 */
int tty_devpts_prepare(const struct tree *t, const char *devpts, int index);

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
	int orphan;		/* a pair whose master was outside the tree (tty_orphan_master) */
};

struct tree_tty *tree_tty_find(const struct tree *t, int index);
struct tree_tty *tree_tty_add(struct tree *t, int index);

#endif
