// SPDX-License-Identifier: GPL-2.0
/* imgcr check: can this kernel dump and restore? */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"

static int module_loaded(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, len) && line[len] == ' ';
	fclose(f);
	return found;
}

int cmd_check(int argc, char **argv)
{
	struct utsname u;
	int bad = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return command_help("check");
	if (argc > 1)
		return usage_error("check takes no arguments");
	uname(&u);
	printf("kernel:      %s %s\n", u.release, u.machine);
	if (strcmp(u.machine, "x86_64")) {
		printf("             only x86_64 is supported\n");
		bad = 1;
	}
	if (module_loaded("img_dump")) {
		printf("img_dump:    loaded\n");
	} else {
		printf("img_dump:    not loaded (modprobe img_dump)\n");
		bad = 1;
	}
	if (module_loaded("binfmt_img")) {
		printf("binfmt_img:  loaded\n");
	} else {
		printf("binfmt_img:  not loaded (modprobe binfmt_img)\n");
		bad = 1;
	}
	if (!access("/proc/self/dump", F_OK)) {
		printf("/proc/PID/dump: present\n");
	} else {
		printf("/proc/PID/dump: missing\n");
		bad = 1;
	}
	/*
	 * clone3(set_tid) of our own (busy) pid: EEXIST means supported and
	 * permitted, EPERM supported but not permitted here.
	 */
	pid_t p = clone_tid(getpid());

	if (p == 0)
		_exit(0);
	if (p > 0) {
		waitpid(p, NULL, 0);
		printf("clone3 set_tid: unexpected success\n");
	} else if (errno == EEXIST) {
		printf("clone3 set_tid: supported (restore keeps pids and thread ids)\n");
	} else if (errno == EPERM) {
		printf("clone3 set_tid: supported, not permitted (needs CAP_CHECKPOINT_RESTORE; use restore --pidns)\n");
	} else {
		printf("clone3 set_tid: not available (%s)\n", strerror(errno));
		bad = 1;
	}
	printf("%s\n", bad ? "not ready" : "ready");
	return bad;
}
