/* SPDX-License-Identifier: GPL-2.0 */
/* Freezing a process tree, every thread of every task, with ptrace. */
#ifndef IMGCR_FREEZE_H
#define IMGCR_FREEZE_H

#include <sys/types.h>

#include "tree.h"

struct frozen_thread {
	pid_t tid;
	unsigned char seized;	/* attached by us: ours to detach or kill */
	unsigned char stopped;	/* its ptrace-stop was collected */
	unsigned char listed;	/* seen in /proc/PID/task in the current pass */
};

/* The threads of tree.tasks[i]; th[0] is the main thread (tid == pid). */
struct frozen_task {
	int n, cap;
	struct frozen_thread *th;
};

struct freezer {
	struct frozen_task *tasks;	/* per tree.tasks index */
	int cap;
};

/*
 * Stop every thread of @root and of all its descendants, adding them to @t
 * (the tasks, and each task's thread tids).  0, or -1 after printing why;
 * either way freeze_release() undoes what was done.
 */
int freeze_tree(struct freezer *fz, struct tree *t, pid_t root);
/* SIGKILL every frozen task (@killit), or detach every thread untouched. */
void freeze_release(struct freezer *fz, const struct tree *t, int killit);
void freeze_free(struct freezer *fz);

#endif
