// SPDX-License-Identifier: GPL-2.0
/*
 * The state check hook, for the test suite (and users who want one): when
 * the environment variable IMGCR_STATE_HOOK names a program,
 *
 *   imgcr dump     runs "HOOK before DIR PID..." right after the tree is
 *                  frozen, before anything is written (the tree's pids);
 *   imgcr restore  runs "HOOK after DIR PID..." once every task has
 *                  executed its image and its threads are verified, with
 *                  the restored tree frozen again (the same freezer as a
 *                  dump; the pids as seen by imgcr, in the tree's order,
 *                  0 for a task that is gone), and then releases it.
 *
 * A nonzero exit of the hook fails the dump (which, as every failed dump,
 * leaves the tree running) or the restore: the restored tree is left
 * running (it is not killed: the hook only compares), imgcr says so and
 * exits 1 (with --detach at once; without it once the tree's root has
 * ended, so a caller waiting for the tree still gets its output).
 * The restored tree is frozen by a child of imgcr, not by imgcr itself:
 * imgcr is the root's parent and must keep its exit status for itself.
 * A restored tree that cannot be frozen (it ended already) is not checked
 * ("HOOK skipped DIR PID..." is run, for the hook's records).
 * The suite's hook is test/progs/statesnap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "freeze.h"
#include "log.h"
#include "statehook.h"

static const char *hook(void)
{
	const char *h = getenv("IMGCR_STATE_HOOK");

	return h && *h ? h : NULL;
}

int state_hook_set(void)
{
	return hook() != NULL;
}

/* The exit status of @child (128 + N if killed by signal N), -1 on error. */
static int wait_status(pid_t child)
{
	int st;

	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			pr_perror("state check: waitpid");
			return -1;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* run HOOK MODE DIR PID...: its exit status (-1 if it could not run) */
static int run_hook(const char *h, const char *mode, const char *dir, const pid_t *pids, int n)
{
	char **argv = calloc(n + 4, sizeof(*argv));
	pid_t child;
	int i;

	if (!argv)
		return -1;
	argv[0] = (char *)h;
	argv[1] = (char *)mode;
	argv[2] = (char *)dir;
	for (i = 0; i < n; i++)
		if (asprintf(&argv[3 + i], "%d", pids[i]) < 0) {
			while (i-- > 0)
				free(argv[3 + i]);
			free(argv);
			return -1;
		}
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child == 0) {
		execvp(h, argv);
		pr_perror("state check: cannot run %s", h);
		_exit(127);
	}
	for (i = 0; i < n; i++)
		free(argv[3 + i]);
	free(argv);
	if (child < 0) {
		pr_perror("state check: fork");
		return -1;
	}
	return wait_status(child);
}

int state_hook_dump(const char *dir, const struct tree *t)
{
	const char *h = hook();
	pid_t *pids;
	int i, r;

	if (!h)
		return 0;
	pids = calloc(t->ntasks, sizeof(*pids));
	if (!pids)
		return -1;
	for (i = 0; i < t->ntasks; i++)
		pids[i] = t->tasks[i].pid;
	r = run_hook(h, "before", dir, pids, t->ntasks);
	free(pids);
	if (r) {
		pr_err("state check: %s before %s failed (exit %d)", h, dir, r);
		return -1;
	}
	return 0;
}

int state_hook_restore(const char *dir, pid_t root, const pid_t *pids, int n)
{
	const char *h = hook();
	pid_t child;
	int st;

	if (!h)
		return 0;
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child == 0) {
		struct freezer fz = { 0 };
		struct tree t;
		int r;

		memset(&t, 0, sizeof(t));
		if (freeze_tree(&fz, &t, root)) {
			freeze_release(&fz, &t, 0);
			/* for the hook's records only: its status does not count */
			run_hook(h, "skipped", dir, pids, n);
			_exit(200);
		}
		r = run_hook(h, "after", dir, pids, n);
		freeze_release(&fz, &t, 0);
		_exit(r < 0 ? 201 : r > 199 ? 199 : r);
	}
	if (child < 0) {
		pr_perror("state check: fork");
		return -1;
	}
	st = wait_status(child);
	if (st == 200) {
		pr_err("state check: the restored tree could not be frozen (it ended?): not checked");
		return 0;
	}
	if (st) {
		pr_err("state check: %s after %s failed (exit %d); the restored tree was left running",
		       h, dir, st);
		return -1;
	}
	return 0;
}
