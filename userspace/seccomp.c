// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp state of a dumped tree.
 *
 * A restore must never run a sandboxed process without its sandbox.  The
 * module records each thread's seccomp mode and filter count in the image
 * (NT_IMGCR_SECCOMP, image format version 3) and binfmt_img refuses such an
 * image, so even `cat /proc/PID/dump > img; ./img` cannot drop a filter.
 * Strict mode needs nothing more: binfmt_img restores it (each thread
 * enters it last, before its first user instruction).  Restoring filters
 * is not implemented yet: imgcr dump refuses a tree with a thread under a
 * filter while it is still frozen, naming the task and thread, and leaves
 * it running.
 */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "proc.h"
#include "seccomp.h"

/* Mode and filter count of thread @tid of @pid from its status; 0 or -1. */
static int thread_seccomp(pid_t pid, pid_t tid, int *mode, long *filters)
{
	char path[64], *text;
	const char *v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d thread %d: cannot read %s", pid, tid, path);
		return -1;
	}
	v = status_field(text, "Seccomp");
	*mode = v ? atoi(v) : 0;
	v = status_field(text, "Seccomp_filters");
	*filters = v ? atol(v) : 0;
	free(text);
	return 0;
}

int seccomp_dump(const struct tree_task *k)
{
	int i, mode;
	long filters;

	if (k->zombie)
		return 0;
	for (i = -1; i < k->nthreads; i++) {
		pid_t tid = i < 0 ? k->pid : k->threads[i];

		if (thread_seccomp(k->pid, tid, &mode, &filters))
			return -1;
		/* strict mode (1) is in the image and restored by binfmt_img */
		if (mode > 1) {
			pr_err("pid %d thread %d: runs under %ld seccomp filter(s); restoring seccomp filters is not supported (a restore must not drop the sandbox): refused",
			       k->pid, tid, filters);
			return -1;
		}
	}
	return 0;
}
