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

#endif
