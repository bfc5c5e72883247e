// SPDX-License-Identifier: GPL-2.0
/* imgcr: checkpoint/restore with /proc/<pid>/dump and binfmt_img. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "log.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "dump", cmd_dump, "dump -t PID -D DIR [--leave-running] [--shell-job] [--ghost-limit BYTES]\n"
	  "                        [--ext-unix-sk] [--live] [--stats]\n"
	  "                        checkpoint PID and its descendants into DIR" },
	{ "restore", cmd_restore, "restore -D DIR [--pidns] [--detach] [--shell-job]\n"
	  "                        [--allow-changed-files]\n"
	  "                        recreate the tree dumped in DIR" },
	{ "show", cmd_show, "show IMAGE|DIR [--json]\n"
	  "                        print what an image or a dump directory holds" },
	{ "check", cmd_check, "check                 are the modules loaded and usable" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: imgcr COMMAND [ARGS]\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  imgcr %s\n", commands[i].help);
}

int usage_error(const char *why)
{
	pr_err("%s", why);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage_error("no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	pr_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
