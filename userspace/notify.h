/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What imgcr-criu (userspace/criu/, CRIU's swrk RPC) asks of the dump and
 * the restore it runs in its own process; unset in imgcr.
 *
 * notify(SCRIPT, PID): CRIU's "action scripts", at CRIU's points:
 *   dump:    pre-dump (before the freeze), network-lock (tree frozen, a
 *            network namespace of its own only), post-dump (every image
 *            written, before the kill), network-unlock (own network
 *            namespace only, the tree left running: an error or -R);
 *   restore: pre-restore (before anything is made), setup-namespaces and
 *            post-setup-namespaces (namespaces of its own only; PID: the
 *            namespaces' root), post-restore (every task ready, PID: the
 *            root), network-unlock (own network namespace only),
 *            pre-resume (before the point of no return), post-resume
 *            (the tree runs).
 * A hook's failure (the client said no) fails the dump or restore as any
 * error does: the dump leaves the tree running, the restore kills what it
 * made, even after post-resume.
 */
#ifndef IMGCR_NOTIFY_H
#define IMGCR_NOTIFY_H

#include <sys/types.h>

/* 0, or -1 after printing why; NULL: nothing to notify (imgcr) */
extern int (*notify_hook)(const char *script, pid_t pid);

/* imgcr: IMGCR_ACTION_SCRIPT, if set, as the hook (notify.c) */
void notify_env_init(void);

static inline int notify(const char *script, pid_t pid)
{
	return notify_hook ? notify_hook(script, pid) : 0;
}

/*
 * restore: the root task is created with CLONE_PARENT, a child of
 * imgcr-criu's parent (CRIU's rst_sibling, runc waits for it), and the
 * restore returns once the tree runs (as --detach).
 */
extern int restore_sibling;

/*
 * restore of a tree with an orphan pty (tty.h): the new pair's master @fd
 * (imgcr-criu: NOTIFY orphan-pts-master with the fd, runc sends it to its
 * console socket).  0, or -1 after printing why; NULL (imgcr): such a
 * tree is refused.  @fd stays the caller's.
 */
extern int (*orphan_master_hook)(int fd);

#endif
