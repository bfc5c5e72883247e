// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr-criu's hooks into dump and restore (notify.h); in imgcr, the
 * program the environment variable IMGCR_ACTION_SCRIPT names, as CRIU's
 * --action-script: run by "/bin/sh -c" at each point with
 * CRTOOLS_SCRIPT_ACTION=POINT and CRTOOLS_INIT_PID=PID (0 if none) in its
 * environment; a nonzero exit fails the dump or restore there.  For the
 * test suite (t_ct_userns-ptrace acts while every task waits for its exec).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"
#include "notify.h"

int (*notify_hook)(const char *script, pid_t pid);
int restore_sibling;
int (*orphan_master_hook)(int fd);

static int env_script(const char *script, pid_t pid)
{
	const char *cmd = getenv("IMGCR_ACTION_SCRIPT");
	char num[24];
	pid_t p;
	int st;

	fflush(stdout);
	fflush(stderr);
	p = fork();
	if (p < 0) {
		pr_perror("action script: fork");
		return -1;
	}
	if (p == 0) {
		snprintf(num, sizeof(num), "%d", (int)pid);
		if (setenv("CRTOOLS_SCRIPT_ACTION", script, 1) || setenv("CRTOOLS_INIT_PID", num, 1))
			_exit(127);
		clone_mask_restore();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR) {
			pr_perror("action script: waitpid");
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_err("action script %s (IMGCR_ACTION_SCRIPT) failed at %s", cmd, script);
		return -1;
	}
	return 0;
}

void notify_env_init(void)
{
	const char *cmd = getenv("IMGCR_ACTION_SCRIPT");

	if (!notify_hook && cmd && *cmd)
		notify_hook = env_script;
}
