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
	unsigned char jobstop;	/* its stop reported a group stop: its signal (SIGSTOP...) */
};

/* The threads of tree.tasks[i]; th[0] is the main thread (tid == pid). */
struct frozen_task {
	int n, cap;
	int ended;		/* its main thread's exit was collected */
	struct frozen_thread *th;
};

struct freezer {
	struct frozen_task *tasks;	/* per tree.tasks index */
	int cap;
};

/*
 * Stop every thread of @root and of all its descendants, adding them to @t
 * (the tasks, and each task's thread tids).  A task that exits meanwhile
 * is dropped, or kept as a zombie (tree_task.zombie, not seized) if it is
 * one; a task that was group-stopped gets tree_task.stopped.  0, or -1
 * after printing why; either way freeze_release() undoes what was done.
 */
int freeze_tree(struct freezer *fz, struct tree *t, pid_t root);
/* SIGKILL every frozen task (@killit), or detach every thread untouched. */
void freeze_release(struct freezer *fz, const struct tree *t, int killit);
void freeze_free(struct freezer *fz);

#endif
