// SPDX-License-Identifier: GPL-2.0
/*
 * test/unit/mount.sh's driver, linked with every object of userspace/
 * (imgcr.c's main renamed), to test the mount namespace kind (mount.c)
 * without a guest:
 *
 *   mntdrv dump PID DIR        PID's mount namespace into DIR/tree (the
 *                              mnt records) and DIR/tmpfs-*.img
 *   mntdrv restore DIR CMD...  a child in new mount and PID namespaces
 *                              rebuilds DIR's mounts (inside()), then
 *                              runs CMD there; late() after it
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
	int st;
	pid_t pid;

	if (argc < 4)
		return 2;
	if (!strcmp(argv[1], "dump")) {
		c.root = atoi(argv[2]);
		c.dirfd = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c.dirfd < 0) {
			perror(argv[3]);
			return 1;
		}
		t.root = c.root;
		tree_task_add(&t, c.root);
		if (ns_mnt_ops.dump(&c) || tree_write(&t, argv[3]))
			return 1;
		return 0;
	}
	c.dirfd = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.dirfd < 0 || tree_read(&t, argv[2]))
		return 1;
	/* as imgcr's ns-root: the child alone in new namespaces (pivot_root
	 * changes the root of every task of its mount namespace) */
	if (unshare(CLONE_NEWPID)) {
		perror("unshare");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		if (unshare(CLONE_NEWNS) || ns_mnt_ops.inside(&c))
			_exit(1);
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	ns_mnt_ops.late(&c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
