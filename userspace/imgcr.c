// SPDX-License-Identifier: GPL-2.0
/* imgcr: checkpoint/restore with /proc/<pid>/dump and binfmt_img. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "log.h"
#include "version.h"
#include <linux/imgcr.h>

/* the options every command takes (log.c) */
#define LOG_HELP \
	"\n      -o, --log-file FILE     messages into FILE (errors on stderr too)\n" \
	"      -v[N], --verbosity N    0 errors, 1 +warnings, 2 +notes (default),\n" \
	"                              3 and more +debug; -v alone: one more"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "dump", cmd_dump, "dump -t PID -D DIR [-R] [-j] [--ghost-limit BYTES]\n"
	  "                        [--ext-unix-sk] [--tcp-close] [--caller-cgroups] [--live] [--live-check]\n"
	  "                        [--cgroups MODE] [--stats]\n"
	  "                        checkpoint PID and its descendants into DIR\n"
	  "      -t, --tree PID          the root of the tree\n"
	  "      -D, --images-dir DIR    where the images go (made if missing)\n"
	  "      -R, --leave-running     let the tree run on after the dump\n"
	  "      -j, --shell-job         the tree is a job of imgcr's terminal\n"
	  "          --ghost-limit BYTES the largest deleted file saved (K, M, G)\n"
	  "          --ext-unix-sk       unix sockets connected outside the tree\n"
	  "          --tcp-close         TCP connections not saved (closed at the dump, restored closed)\n"
	  "          --caller-cgroups    the caller puts the restored tree in its cgroups\n"
	  "          --cgroups soft|ignore  soft: each task's cgroup recorded (default);\n"
	  "                              ignore: none (a v1 host; restored in imgcr's cgroup)\n"
	  "          --live              copy memory while the tree runs\n"
	  "          --live-check        --live, checked against a plain read\n"
	  "          --stats, --display-stats  where the time went" LOG_HELP },
	{ "restore", cmd_restore, "restore -D DIR [--pidns] [-d] [-j] [--allow-changed-files]\n"
	  "                        [--pidfile FILE] [--tcp-close] [--cgroups MODE] [--root DIR] [--stats]\n"
	  "                        recreate the tree dumped in DIR\n"
	  "      -D, --images-dir DIR    the dump directory\n"
	  "          --pidns             in a new PID namespace\n"
	  "      -d, --restore-detached, --detach\n"
	  "                              return once the tree runs\n"
	  "      -j, --shell-job         the tree joins imgcr's terminal\n"
	  "          --allow-changed-files  map files that changed since the dump\n"
	  "          --trust-images-dir  as root: restore DIR even if another user can write it\n"
	  "          --pidfile FILE      write the root task's pid into FILE\n"
	  "          --tcp-close         TCP connections restored closed (state CLOSE)\n"
	  "          --cgroups soft|ignore  soft: each task in its dumped cgroup (default);\n"
	  "                              ignore: the tree in imgcr's cgroup\n"
	  "          --root DIR          the container's root mount bound from DIR (a copy)\n"
	  "          --external mnt[MP]:PATH  its external mount at MP bound from PATH\n"
	  "          --stats, --display-stats  the time of each phase, the images' size"
	  LOG_HELP },
	{ "show", cmd_show, "show IMAGE|DIR [--json]\n"
	  "                        print what an image or a dump directory holds\n"
	  "          --json              JSON, for scripts" LOG_HELP },
	{ "check", cmd_check, "check                 are the modules loaded and usable" LOG_HELP },
	{ "_ipc", cmd_ipc, "_ipc dump|restore -D DIR   (tests: ipc namespace kind alone)" },
};

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* Where a command's option list begins: its first line "      -x" or "          --x". */
static const char *option_list(const char *h)
{
	const char *nl;

	for (nl = strchr(h, '\n'); nl; nl = strchr(nl + 1, '\n'))
		if (!strncmp(nl, "\n      -", 8) || !strncmp(nl, "\n          --", 13))
			return nl;
	return NULL;
}

/* The synopsis of each command: its help up to the option list. */
static void usage(FILE *out)
{
	size_t i;
	const char *h, *opts;

	fprintf(out, "usage: imgcr COMMAND [ARGS]   (imgcr COMMAND --help: its options)\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (commands[i].name[0] == '_')	/* hidden: for the tests */
			continue;
		h = commands[i].help;
		opts = option_list(h);
		fprintf(out, "  imgcr %.*s\n", (int)(opts ? opts - h : (int)strlen(h)), h);
	}
	fprintf(out, "  imgcr --version\n");
}

int usage_error(const char *why)
{
	pr_err("%s", why);
	usage(stderr);
	return 2;
}

int command_help(const char *name)
{
	const struct command *c = find_command(name);

	printf("usage: imgcr %s\n", c ? c->help : name);
	return 0;
}

/*
 * After getopt_long() (option string starting with ':') returned @ret, '?'
 * for an unknown option or ':' for a missing value: say which, and how
 * the command is used.
 */
int option_error(const char *name, int ret, int argc, char **argv)
{
	const struct command *c = find_command(name);
	const char *what = ret == ':' ? "missing value for option" : "unknown option";
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";

	if (!strncmp(arg, "--", 2))
		pr_err("%s: %s '%s'", name, what, arg);
	else
		pr_err("%s: %s '-%c'", name, what, optopt);
	fprintf(stderr, "usage: imgcr %s\n", c ? c->help : name);
	return 2;
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2)
		return usage_error("no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("imgcr %s (image format %d)\n", IMGCR_VERSION, IMGCR_FORMAT_VERSION);
		return 0;
	}
	c = find_command(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	pr_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
