/* SPDX-License-Identifier: GPL-2.0 */
/* locks.c: the file locks of the tree (flock, POSIX, OFD, leases): its records. */
#ifndef IMGCR_LOCKS_H
#define IMGCR_LOCKS_H

#include "tree.h"

/* A file lock held by the tree (locks.c). */
enum tree_lock_kind { TL_FLOCK, TL_POSIX, TL_OFD, TL_LEASE, TL_NR };
struct tree_lock {
	enum tree_lock_kind kind;
	int file;		/* the open file description (flock, OFD, lease) or the one the task used (POSIX) */
	pid_t pid;		/* POSIX, flock, lease: the task that takes it again, */
	int fd;			/* on this fd */
	int write;		/* F_WRLCK / LOCK_EX, else F_RDLCK / LOCK_SH */
	long long start, end;	/* byte range (POSIX, OFD), end -1: to EOF */
	int lpid;		/* dump only: the pid /proc/locks names */
};

extern const char *const tree_lock_names[TL_NR];

struct tree_lock *tree_lock_add(struct tree *t);

#endif
