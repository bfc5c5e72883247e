// SPDX-License-Identifier: GPL-2.0
/*
 * Freezing a process tree with ptrace: every thread of every task.
 *
 * Task by task, starting at the root: PTRACE_SEIZE + PTRACE_INTERRUPT each
 * thread listed in /proc/PID/task, then collect every stop, then list the
 * threads again, until a pass finds no new thread.  A thread cloned while
 * its creator was being interrupted is caught by the next pass; once every
 * thread of a task is stopped, none can clone, so the loop ends.  When every
 * known task is frozen, the children of all their threads are read
 * (/proc/PID/task/TID/children) and the new tasks frozen the same way, until
 * no new task appears: a stopped task cannot fork either.
 *
 * Stops are collected with waitpid(-1, __WALL), whichever thread reports:
 * waiting for one tid could wait forever, since a thread group leader that
 * exits is reported only after the other threads, which are our tracees, have
 * been reaped by us.  A signal-delivery stop is re-injected (the interrupt
 * stays pending, so the thread stops right after).  A thread that exits
 * during the freeze is dropped; the main thread exiting is an error, as the
 * task is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/imgcr.h>

#include "freeze.h"
#include "log.h"
#include "proc.h"

static void *grow_array(void *p, int *cap, int want, size_t size)
{
	int ncap;

	if (want <= *cap)
		return p;
	ncap = want * 2 + 4;
	p = realloc(p, (size_t)ncap * size);
	if (!p) {
		pr_err("out of memory");
		exit(1);
	}
	memset((char *)p + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*cap = ncap;
	return p;
}

static struct frozen_task *ftask(struct freezer *fz, int i)
{
	fz->tasks = grow_array(fz->tasks, &fz->cap, i + 1, sizeof(*fz->tasks));
	return &fz->tasks[i];
}

static struct frozen_thread *thread_add(struct frozen_task *ft, pid_t tid)
{
	struct frozen_thread *th;

	ft->th = grow_array(ft->th, &ft->cap, ft->n + 1, sizeof(*ft->th));
	th = &ft->th[ft->n++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return th;
}

static void thread_drop(struct frozen_task *ft, int j)
{
	memmove(&ft->th[j], &ft->th[j + 1], (size_t)(ft->n - j - 1) * sizeof(*ft->th));
	ft->n--;
}

/* The task index and thread index of @tid, or -1. */
static int find_thread(const struct freezer *fz, const struct tree *t, pid_t tid, int *tj)
{
	int i, j;

	for (i = 0; i < t->ntasks && i < fz->cap; i++)
		for (j = 0; j < fz->tasks[i].n; j++)
			if (fz->tasks[i].th[j].tid == tid) {
				*tj = j;
				return i;
			}
	return -1;
}

/* Thread @tid of @pid has exited (or is exiting): it is no longer listed, or a zombie. */
static int thread_gone(pid_t pid, pid_t tid)
{
	char path[96], *text, *p;
	int gone;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	text = read_text(path, NULL);
	if (!text)
		return errno == ENOENT || errno == ESRCH;
	p = strrchr(text, ')');
	gone = p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
	free(text);
	return gone;
}

/*
 * One waitpid() status of a tracee.  The main thread exiting is an error
 * when @fatal (returns -1; the task is gone); any other thread's exit drops it.
 */
static int handle_status(struct freezer *fz, const struct tree *t, pid_t tid, int st, int fatal)
{
	struct frozen_task *ft;
	int i, j;

	i = find_thread(fz, t, tid, &j);
	if (i < 0)
		return 0;
	ft = &fz->tasks[i];
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (j) {
			thread_drop(ft, j);
			return 0;
		}
		ft->th[0].seized = ft->th[0].stopped = 0;
		if (fatal) {
			pr_err("pid %d: exited while being frozen", tid);
			return -1;
		}
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	if ((st >> 16) == PTRACE_EVENT_STOP) {
		ft->th[j].stopped = 1;
		return 0;
	}
	/* A signal-delivery stop: deliver it, the interrupt stays pending. */
	if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(st)) && errno != ESRCH) {
		pr_perror("pid %d thread %d: PTRACE_CONT", t->tasks[i].pid, tid);
		return fatal ? -1 : 0;
	}
	return 0;
}

/* Some thread was seized and its stop is not collected yet. */
static int stop_pending(const struct freezer *fz, const struct tree *t)
{
	int i, j;

	for (i = 0; i < t->ntasks && i < fz->cap; i++)
		for (j = 0; j < fz->tasks[i].n; j++)
			if (fz->tasks[i].th[j].seized && !fz->tasks[i].th[j].stopped)
				return 1;
	return 0;
}

/* Collect the stop (or exit) of every seized thread. */
static int wait_stops(struct freezer *fz, const struct tree *t, int fatal)
{
	int st, i, j;
	pid_t tid;

	while (stop_pending(fz, t)) {
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0) {
			/* ECHILD: not one tracee left, so none is still to stop */
			if (errno != ECHILD)
				pr_perror("waiting for the threads to stop");
			for (i = 0; i < t->ntasks && i < fz->cap; i++)
				for (j = 0; j < fz->tasks[i].n; j++)
					if (!fz->tasks[i].th[j].stopped)
						fz->tasks[i].th[j].seized = 0;
			if (fatal)
				pr_err("the tree changed while being frozen");
			return -1;
		}
		if (handle_status(fz, t, tid, st, fatal))
			return -1;
	}
	return 0;
}

/* PTRACE_SEIZE + PTRACE_INTERRUPT thread @j of task @i; 1 if it was dropped (gone). */
static int seize_thread(struct freezer *fz, const struct tree *t, int i, int j)
{
	struct frozen_task *ft = &fz->tasks[i];
	pid_t pid = t->tasks[i].pid, tid = ft->th[j].tid;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		/* an exiting thread cannot be attached (EPERM): it is not dumped */
		if (j && thread_gone(pid, tid)) {
			thread_drop(ft, j);
			return 1;
		}
		if (j)
			pr_perror("pid %d thread %d: cannot ptrace (PTRACE_SEIZE)", pid, tid);
		else
			pr_perror("pid %d: cannot ptrace (PTRACE_SEIZE)", pid);
		return -1;
	}
	ft->th[j].seized = 1;
	/* ESRCH: exiting; its exit is collected with the stops */
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) && errno != ESRCH) {
		pr_perror("pid %d thread %d: PTRACE_INTERRUPT", pid, tid);
		return -1;
	}
	return 0;
}

/* List /proc/PID/task into the task's threads; how many are new, or -1. */
static int scan_threads(struct frozen_task *ft, pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int j, added = 0;

	for (j = 0; j < ft->n; j++)
		ft->th[j].listed = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT)
			pr_err("pid %d: exited while being frozen", pid);
		else
			pr_perror("pid %d: cannot list %s", pid, path);
		return -1;
	}
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		for (j = 0; j < ft->n && ft->th[j].tid != tid; j++)
			;
		if (j == ft->n) {
			thread_add(ft, tid);
			added++;
		}
		ft->th[j].listed = 1;
	}
	closedir(dir);
	if (!ft->th[0].listed) {
		pr_err("pid %d: exited while being frozen", pid);
		return -1;
	}
	/* gone before we could seize them (our tracees stay listed until reaped) */
	for (j = ft->n - 1; j > 0; j--)
		if (!ft->th[j].listed && !ft->th[j].seized)
			thread_drop(ft, j);
	return added;
}

static int all_stopped(const struct frozen_task *ft)
{
	int j;

	for (j = 0; j < ft->n; j++)
		if (!ft->th[j].stopped)
			return 0;
	return 1;
}

/* Stop every thread of task t->tasks[i]. */
static int freeze_task(struct freezer *fz, const struct tree *t, int i)
{
	pid_t pid = t->tasks[i].pid, ppid, pgid, sid;
	struct frozen_task *ft = ftask(fz, i);
	char state;
	int j, r;

	if (pid == getpid()) {
		pr_err("pid %d: this is imgcr itself: dump a tree that does not contain imgcr", pid);
		return -1;
	}
	if (proc_stat(pid, &state, &ppid, &pgid, &sid)) {
		pr_err("pid %d: no such process", pid);
		return -1;
	}
	if (state == 'Z' || state == 'X') {
		pr_err("pid %d: zombie: zombie processes are not supported", pid);
		return -1;
	}
	thread_add(ft, pid);
	for (;;) {
		r = scan_threads(ft, pid);
		if (r < 0)
			return -1;
		if (!r && all_stopped(ft))
			return 0;
		if (ft->n - 1 > IMGCR_MAX_THREADS) {
			pr_err("pid %d: %d threads: an image holds at most %d besides the main thread",
			       pid, ft->n, IMGCR_MAX_THREADS);
			return -1;
		}
		/* the main thread first: it is th[0] */
		for (j = 0; j < ft->n; j++) {
			if (ft->th[j].seized)
				continue;
			r = seize_thread(fz, t, i, j);
			if (r < 0)
				return -1;
			if (r > 0)
				j--;	/* dropped: th[j] is the next one now */
		}
		if (wait_stops(fz, t, 1))
			return -1;
	}
}

/* Add the children of every thread of task i; returns how many were new. */
static int add_children(struct freezer *fz, struct tree *t, int i)
{
	pid_t pid = t->tasks[i].pid;
	char path[96], *text, *p;
	int j, added = 0;

	for (j = 0; j < fz->tasks[i].n; j++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, fz->tasks[i].th[j].tid);
		text = read_text(path, NULL);
		if (!text) {
			pr_perror("pid %d: cannot read %s", pid, path);
			return -1;
		}
		for (p = text; *p;) {
			char *end;
			long child = strtol(p, &end, 10);

			if (end == p)
				break;
			p = end;
			if (child > 0 && !tree_find(t, child)) {
				tree_task_add(t, child);
				added++;
			}
		}
		free(text);
	}
	return added;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int freeze_tree(struct freezer *fz, struct tree *t, pid_t root)
{
	int done = 0, i, j, n;

	t->root = root;
	tree_task_add(t, root);
	for (;;) {
		for (; done < t->ntasks; done++)
			if (freeze_task(fz, t, done))
				return -1;
		/* every known task is stopped: re-read all children lists */
		n = 0;
		for (i = 0; i < t->ntasks; i++) {
			int r = add_children(fz, t, i);

			if (r < 0)
				return -1;
			n += r;
		}
		if (!n)
			break;
	}
	/* every thread is stopped now: the threads of each task, ascending */
	for (i = 0; i < t->ntasks; i++) {
		struct frozen_task *ft = &fz->tasks[i];
		pid_t *tids = calloc(ft->n, sizeof(*tids));

		if (!tids) {
			pr_err("out of memory");
			return -1;
		}
		for (j = 1; j < ft->n; j++)
			tids[j - 1] = ft->th[j].tid;
		qsort(tids, ft->n - 1, sizeof(*tids), cmp_pid);
		for (j = 0; j < ft->n - 1; j++)
			tree_thread_add(&t->tasks[i], tids[j]);
		free(tids);
	}
	return 0;
}

void freeze_release(struct freezer *fz, const struct tree *t, int killit)
{
	int i, j, st;

	if (!killit) {
		/* only a thread in a ptrace-stop can be detached: collect the pending stops */
		wait_stops(fz, t, 0);
		for (i = 0; i < t->ntasks && i < fz->cap; i++)
			for (j = 0; j < fz->tasks[i].n; j++) {
				struct frozen_thread *th = &fz->tasks[i].th[j];

				if (!th->seized)
					continue;
				if (ptrace(PTRACE_DETACH, th->tid, 0, 0))
					pr_perror("pid %d thread %d: PTRACE_DETACH", t->tasks[i].pid, th->tid);
				th->seized = th->stopped = 0;
			}
		return;
	}
	for (i = 0; i < t->ntasks && i < fz->cap; i++)
		for (j = 0; j < fz->tasks[i].n; j++)
			if (fz->tasks[i].th[j].seized) {
				kill(t->tasks[i].pid, SIGKILL);
				break;
			}
	/*
	 * Reap our tracees, the other threads before the main one: a leader is
	 * reported only when the rest of its group is gone.
	 */
	for (i = 0; i < t->ntasks && i < fz->cap; i++)
		for (j = fz->tasks[i].n - 1; j >= 0; j--) {
			struct frozen_thread *th = &fz->tasks[i].th[j];

			if (!th->seized)
				continue;
			for (;;) {
				pid_t r = waitpid(th->tid, &st, __WALL);

				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0 || WIFEXITED(st) || WIFSIGNALED(st))
					break;
			}
			th->seized = th->stopped = 0;
		}
}

void freeze_free(struct freezer *fz)
{
	int i;

	for (i = 0; i < fz->cap; i++)
		free(fz->tasks[i].th);
	free(fz->tasks);
	fz->tasks = NULL;
	fz->cap = 0;
}
