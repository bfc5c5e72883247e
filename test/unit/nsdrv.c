// SPDX-License-Identifier: GPL-2.0
/*
 * The driver of the namespace kinds' host tests (test/unit/mount.sh,
 * net.sh), linked with every object of userspace/ (imgcr.c's main
 * renamed), to test one kind's operations (ns.h) without a guest:
 *
 *   nsdrv dump KIND PID DIR        PID's namespace of KIND into DIR/tree
 *                                  (the kind's records) and its images
 *   nsdrv restore KIND DIR CMD...  as imgcr's restore does it: a child in
 *                                  a new PID namespace and a new namespace
 *                                  of KIND waits while outside() runs here,
 *                                  runs inside(), then CMD; late() after it
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns.h"
#include "tree.h"

int main(int argc, char **argv)
{
	struct tree t = { 0 };
	struct ns_ctx c = { .t = &t };
	const struct ns_ops *ops = NULL;
	int st, k, ready[2], go[2];
	char b;
	pid_t pid;

	if (argc < 5)
		return 2;
	for (k = 0; k < NS_N; k++)
		if (!strcmp(ns_kinds[k]->name, argv[2]))
			ops = ns_kinds[k];
	if (!ops)
		return 2;
	if (!strcmp(argv[1], "dump")) {
		c.root = atoi(argv[3]);
		c.dirfd = open(argv[4], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c.dirfd < 0) {
			perror(argv[4]);
			return 1;
		}
		t.root = c.root;
		tree_task_add(&t, c.root);
		if (ops->dump(&c) || tree_write(&t, argv[4]))
			return 1;
		return 0;
	}
	c.dirfd = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.dirfd < 0 || tree_read(&t, argv[3]))
		return 1;
	if (unshare(CLONE_NEWPID) || pipe(ready) || pipe(go)) {
		perror("unshare");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		/* as imgcr's ns-root: alone in the new namespace (pivot_root
		 * changes the root of every task of its mount namespace) */
		if (unshare(ops->clone_flag ? ops->clone_flag : CLONE_NEWNS))
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1 || b != 'g')
			_exit(1);
		if (ops->inside && ops->inside(&c))
			_exit(1);
		execvp(argv[4], argv + 4);
		perror(argv[4]);
		_exit(127);
	}
	c.root = pid;
	if (read(ready[0], &b, 1) != 1 || (ops->outside && ops->outside(&c))) {
		/* as imgcr: the ns-root killed first, then what outside() made undone */
		kill(pid, 9);
		waitpid(pid, &st, 0);
		if (ops->cleanup)
			ops->cleanup(&c);
		return 1;
	}
	if (write(go[1], "g", 1) != 1)
		return 1;
	waitpid(pid, &st, 0);
	if (ops->late)
		ops->late(&c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
