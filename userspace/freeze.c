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
 * during the freeze is dropped.
 *
 * Tasks come and go while the tree is frozen: a child listed in a stopped
 * parent's children may exit before (or while) it is seized.  Such a task
 * is dropped if it is gone (reaped, e.g. its parent ignores SIGCHLD), and
 * kept as a zombie if it is one: its parent is stopped and cannot reap it.
 * A zombie is not seized (it cannot be); its exit status is read from
 * /proc/PID/stat (field 52).  A zombie main thread whose other threads run
 * on is refused.  A task whose stop reports a group stop (PTRACE_EVENT_STOP
 * with a stop signal, not SIGTRAP) was stopped by SIGSTOP or job control,
 * before or while being seized: it is marked stopped.  A task waiting in
 * vfork() for a child that does not exec or exit never stops: after a
 * second without progress such a task is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/imgcr.h>
#include <linux/kcmp.h>

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
		/* the whole task is gone, or a zombie now: freeze_task() looks */
		ft->th[0].seized = ft->th[0].stopped = 0;
		ft->ended = 1;
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	if ((st >> 16) == PTRACE_EVENT_STOP) {
		ft->th[j].stopped = 1;
		/* a group stop is reported with its stop signal, our interrupt with SIGTRAP */
		if (WSTOPSIG(st) != SIGTRAP)
			ft->th[j].jobstop = WSTOPSIG(st);
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

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A child of task @pid that shares its memory (vfork, CLONE_VM), or 0. */
static pid_t vm_child(pid_t pid)
{
	char path[320], *text, *p, *end;
	struct dirent *d;
	pid_t found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (d = readdir(dir))) {
		if (atoi(d->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, d->d_name);
		text = read_text(path, NULL);
		for (p = text; p && *p && !found; p = end) {
			long child = strtol(p, &end, 10);

			if (end == p)
				break;
			if (child > 0 && syscall(SYS_kcmp, pid, (pid_t)child, KCMP_VM, 0, 0) == 0)
				found = child;
		}
		free(text);
	}
	closedir(dir);
	return found;
}

/*
 * A thread that does not stop within a second: a vfork() parent waits,
 * unstoppable, for its child to exec or exit.  -1 (printed) if so.
 */
static int check_unstoppable(const struct freezer *fz, const struct tree *t)
{
	int i, j;
	pid_t child;

	for (i = 0; i < t->ntasks && i < fz->cap; i++)
		for (j = 0; j < fz->tasks[i].n; j++) {
			if (!fz->tasks[i].th[j].seized || fz->tasks[i].th[j].stopped)
				continue;
			child = vm_child(t->tasks[i].pid);
			if (child) {
				pr_err("pid %d: waits in vfork() for its child %d (which shares its memory) to exec or exit: vfork children are not supported",
				       t->tasks[i].pid, child);
				return -1;
			}
		}
	return 0;
}

/*
 * Collect the stop (or exit) of every seized thread.  Without @fatal (to
 * detach after an error) give up after two seconds: the threads still
 * running are detached when imgcr exits.
 */
static int wait_stops(struct freezer *fz, const struct tree *t, int fatal)
{
	long long last = now_ms(), checked = last;
	int st, i, j, idle = 0;
	pid_t tid;

	while (stop_pending(fz, t)) {
		tid = waitpid(-1, &st, __WALL | WNOHANG);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid == 0) {
			long long now = now_ms();

			if (!fatal && now - last > 2000)
				return -1;
			if (fatal && now - last > 1000 && now - checked > 1000) {
				checked = now;
				if (check_unstoppable(fz, t))
					return -1;
			}
			/* poll: 0.1 ms at first, then up to 10 ms */
			usleep(idle < 20 ? 100 : 10000);
			idle++;
			continue;
		}
		last = now_ms();
		idle = 0;
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

/*
 * PTRACE_SEIZE + PTRACE_INTERRUPT thread @j of task @i; 1 if it was dropped
 * (gone), 2 if it is the main thread and it could not be seized because it
 * exited (freeze_task() looks at the task).
 */
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
		if (!j && thread_gone(pid, tid))
			return 2;
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

/* List /proc/PID/task into the task's threads; how many are new, -2 if the task is gone, or -1. */
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
		if (errno == ENOENT || errno == ESRCH)
			return -2;
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
	if (!ft->th[0].listed)
		return -2;
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

/* Reap, without blocking, the threads of task @i we traced that have exited. */
static void reap_exited(struct freezer *fz, const struct tree *t, int i)
{
	struct frozen_task *ft = &fz->tasks[i];
	int j, st;
	pid_t r;

	for (j = ft->n - 1; j >= 0; j--) {
		if (j >= ft->n || !ft->th[j].seized)
			continue;
		r = waitpid(ft->th[j].tid, &st, __WALL | WNOHANG);
		if (r < 0 && errno == ECHILD)
			ft->th[j].seized = ft->th[j].stopped = 0;
		else if (r > 0)
			handle_status(fz, t, r, st, 0);
	}
}

static int count_threads(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		n += atoi(d->d_name) > 0;
	closedir(dir);
	return n;
}

/* Field 52 of /proc/PID/stat: exit_code, a zombie's wait status.  0 or -1. */
static int proc_exit_code(pid_t pid, int *code)
{
	char path[64], *text, *p, *end;
	int field, ret = -1;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = read_text(path, NULL);
	/* after the comm (field 2, which may hold spaces): one space per field */
	p = text ? strrchr(text, ')') : NULL;
	for (field = 2; p && field < 52; field++)
		p = strchr(p + 1, ' ');
	if (p) {
		v = strtol(p + 1, &end, 10);
		if (end != p + 1 && (*end == '\n' || *end == ' ' || !*end)) {
			*code = (int)v;
			ret = 0;
		}
	}
	free(text);
	return ret;
}

enum { TASK_ALIVE, TASK_GONE, TASK_ZOMBIE };

/*
 * Task @i could not be (fully) frozen because its main thread exited:
 * collect our exited tracees among its threads and look at what is left.
 * A zombie main thread whose other threads still run after two seconds is
 * refused (-1, printed).
 */
static int task_end(struct freezer *fz, struct tree *t, int i)
{
	struct tree_task *k = &t->tasks[i];
	struct frozen_task *ft = &fz->tasks[i];
	pid_t ppid, pgid, sid;
	char state;
	int n;

	for (n = 0; n < 2000; n++) {
		reap_exited(fz, t, i);
		errno = 0;
		if (proc_stat(k->pid, &state, &ppid, &pgid, &sid))
			return errno == ENOENT || errno == ESRCH ? TASK_GONE : TASK_ALIVE;
		if (state != 'Z' && state != 'X')
			return TASK_ALIVE;
		if (state == 'Z' && count_threads(k->pid) == 1) {
			if (proc_exit_code(k->pid, &k->exit_status)) {
				pr_err("pid %d: zombie: cannot read its exit status from /proc/%d/stat",
				       k->pid, k->pid);
				return -1;
			}
			k->zombie = 1;
			ft->n = 1;
			ft->th[0].seized = ft->th[0].stopped = ft->th[0].jobstop = 0;
			return TASK_ZOMBIE;
		}
		usleep(1000);
	}
	pr_err("pid %d: its main thread has exited while %d other threads run on: not supported",
	       k->pid, count_threads(k->pid) - 1);
	return -1;
}

/*
 * Stop every thread of task t->tasks[i]: 0 when it is frozen or a zombie,
 * 1 when it is gone (to be dropped), -1 on error (printed).
 */
static int freeze_task(struct freezer *fz, struct tree *t, int i)
{
	pid_t pid = t->tasks[i].pid, ppid, pgid, sid;
	struct frozen_task *ft = ftask(fz, i);
	char state;
	int j, r;

	if (pid == getpid()) {
		pr_err("pid %d: this is imgcr itself: dump a tree that does not contain imgcr", pid);
		return -1;
	}
	thread_add(ft, pid);
	if (proc_stat(pid, &state, &ppid, &pgid, &sid) || state == 'Z' || state == 'X')
		goto ended;
	for (;;) {
		r = scan_threads(ft, pid);
		if (r == -2)
			goto ended;
		if (r < 0)
			return -1;
		if (!r && all_stopped(ft))
			break;
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
			if (r == 2)
				goto ended;
			if (r < 0)
				return -1;
			if (r > 0)
				j--;	/* dropped: th[j] is the next one now */
		}
		if (wait_stops(fz, t, 1))
			return -1;
		if (ft->ended)
			goto ended;
	}
	for (j = 0; j < ft->n; j++)
		if (ft->th[j].jobstop)
			t->tasks[i].stopped = ft->th[j].jobstop;
	return 0;
ended:
	switch (task_end(fz, t, i)) {
	case TASK_GONE:
		return 1;
	case TASK_ZOMBIE:
		return 0;
	case TASK_ALIVE:
		pr_err("pid %d: cannot be frozen (its main thread cannot be seized, yet it is no zombie)", pid);
		return -1;
	default:
		return -1;
	}
}

/* Forget task @i, which exited (and was reaped) before it could be frozen. */
static void drop_task(struct freezer *fz, struct tree *t, int i)
{
	int last = t->ntasks - 1;

	ftask(fz, last);	/* the later tasks may have no frozen_task yet */
	free(fz->tasks[i].th);
	memmove(&fz->tasks[i], &fz->tasks[i + 1], (size_t)(last - i) * sizeof(*fz->tasks));
	memset(&fz->tasks[last], 0, sizeof(*fz->tasks));
	free(t->tasks[i].threads);
	memmove(&t->tasks[i], &t->tasks[i + 1], (size_t)(last - i) * sizeof(*t->tasks));
	t->ntasks--;
}

/* Add the children of every thread of task i; returns how many were new. */
static int add_children(struct freezer *fz, struct tree *t, int i)
{
	pid_t pid = t->tasks[i].pid;
	char path[96], *text, *p;
	int j, added = 0;

	if (t->tasks[i].zombie)
		return 0;	/* no children: they were given to a reaper */
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
		while (done < t->ntasks) {
			int r = freeze_task(fz, t, done);

			if (r < 0)
				return -1;
			if (r > 0 && done == 0) {
				pr_err("pid %d: no such process", root);
				return -1;
			}
			if (!r && done == 0 && t->tasks[0].zombie) {
				pr_err("pid %d: zombie: the root of a tree cannot be a zombie (dump its parent)",
				       root);
				return -1;
			}
			if (r > 0)
				drop_task(fz, t, done);
			else
				done++;
		}
		/* every known task is stopped: re-read all children lists (not the new ones') */
		n = 0;
		for (i = 0; i < done; i++) {
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

				/* not stopped (e.g. in vfork()): detached when imgcr exits */
				if (!th->seized || !th->stopped)
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
	 * Reap our tracees in whatever order they exit, polling every seized
	 * thread with WNOHANG, never blocking on one: a leader is reported only
	 * when the rest of its group is gone, and the last thread of a PID
	 * namespace's init to exit waits in zap_pid_ns_processes() until every
	 * other task of its namespace, its own sibling threads included, is
	 * reaped, which a traced one is by us first.  Whichever thread of the
	 * init exits last is not known in advance: blocking in waitpid() on a
	 * thread that is itself waiting there for its traced, exited siblings
	 * would deadlock.
	 */
	for (int idle = 0;; idle++) {
		int left = 0, progress = 0;

		for (i = (t->ntasks < fz->cap ? t->ntasks : fz->cap) - 1; i >= 0; i--)
			for (j = fz->tasks[i].n - 1; j >= 0; j--) {
				struct frozen_thread *th = &fz->tasks[i].th[j];
				pid_t r;

				if (!th->seized)
					continue;
				r = waitpid(th->tid, &st, __WALL | WNOHANG);
				if ((r < 0 && errno != EINTR) ||
				    (r > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
					th->seized = th->stopped = 0;
					progress = 1;
					continue;
				}
				left++;
			}
		if (!left)
			break;
		if (progress)
			idle = 0;
		usleep(idle < 20 ? 100 : 10000);
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
