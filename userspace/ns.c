// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace kinds' table and what they share (ns.h).  The pid, UTS,
 * time and user kinds live here too; ipc.c, mount.c, net.c and cgroup.c
 * hold the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "ns.h"
#include "record.h"
#include "tree.h"

const struct ns_ops ns_user_ops = { .name = "user", .clone_flag = CLONE_NEWUSER };
const struct ns_ops ns_pid_ops = { .name = "pid", .clone_flag = CLONE_NEWPID };
const struct ns_ops ns_uts_ops = { .name = "uts", .clone_flag = CLONE_NEWUTS };
const struct ns_ops ns_time_ops = { .name = "time", .clone_flag = 0 };

const struct ns_ops *const ns_kinds[NS_N] = {
	[NS_USER] = &ns_user_ops,
	[NS_PID] = &ns_pid_ops,
	[NS_UTS] = &ns_uts_ops,
	[NS_IPC] = &ns_ipc_ops,
	[NS_NET] = &ns_net_ops,
	[NS_CGROUP] = &ns_cgroup_ops,
	[NS_TIME] = &ns_time_ops,
	[NS_MNT] = &ns_mnt_ops,
};

/* The records of the pid, UTS, time and user kinds (none yet). */
const struct tree_record ns_records[] = {
	{ NULL, NULL, NULL }
};

struct ns_tree *ns_tree_get(struct tree *t)
{
	if (!t->ns) {
		t->ns = calloc(1, sizeof(*t->ns));
		if (!t->ns) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return t->ns;
}

void ns_tree_free(struct tree *t)
{
	int k;

	if (!t->ns)
		return;
	for (k = 0; k < NS_N; k++)
		if (ns_kinds[k]->free)
			ns_kinds[k]->free(t);
	free(t->ns);
	t->ns = NULL;
}

int ns_run_in(pid_t pid, unsigned int kinds, int (*fn)(void *arg), void *arg)
{
	char path[64];
	int k, fd, st;
	pid_t child;

	child = fork();
	if (child < 0) {
		pr_perror("cannot fork to enter pid %d's namespaces", pid);
		return -1;
	}
	if (!child) {
		/* enum order: user first (the rights for the others), mnt last */
		for (k = 0; k < NS_N; k++) {
			if (!(kinds & NS_BIT(k)))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns_kinds[k]->name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, 0)) {
				pr_perror("pid %d: cannot enter its %s namespace", pid,
					  ns_kinds[k]->name);
				_exit(1);
			}
			close(fd);
		}
		_exit(fn(arg) ? 1 : 0);
	}
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			pr_perror("cannot wait for the child in pid %d's namespaces", pid);
			return -1;
		}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
