// SPDX-License-Identifier: GPL-2.0
/* imgcr check: can this kernel dump and restore? */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"
#include "version.h"

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

/* Whether @dir (recursively) holds NAME.ko, compressed or not. */
static int has_module_file(const char *dir, const char *name, int depth)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t len = strlen(name);
	int found = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!strncmp(e->d_name, name, len) && !strncmp(e->d_name + len, ".ko", 3)) {
			found = 1;
			break;
		}
		if (depth < 8 && e->d_type == DT_DIR) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			found = has_module_file(path, name, depth + 1);
		}
	}
	closedir(d);
	return found;
}

/*
 * One module: loaded and of imgcr's own version (MODULE_VERSION, from
 * the same dkms.conf), or what to do.  Returns 1 if it is not usable.
 */
static int check_module(const char *name)
{
	char path[128], ver[64] = "", dir[PATH_MAX];
	struct utsname u;
	FILE *f;

	if (module_loaded(name)) {
		snprintf(path, sizeof(path), "/sys/module/%s/version", name);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(ver, sizeof(ver), f))
				ver[0] = 0;
			fclose(f);
		}
		ver[strcspn(ver, "\n")] = 0;
		if (strcmp(ver, IMGCR_VERSION)) {
			printf("%-11s loaded, version %s, but this imgcr is %s: install the imgcr and imgcr-dkms packages of one release\n",
			       name, ver[0] ? ver : "unknown", IMGCR_VERSION);
			return 1;
		}
		printf("%-11s loaded, version %s\n", name, ver);
		return 0;
	}
	uname(&u);
	snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
	if (has_module_file(dir, name, 0))
		printf("%-11s installed, not loaded (modprobe %s)\n", name, name);
	else
		printf("%-11s not installed for kernel %s (apt install imgcr-dkms; DKMS builds it for the supported kernels, see README)\n",
		       name, u.release);
	return 1;
}

/* What a command needs beyond the modules: said, not counted as "not ready". */
static void check_tools(void)
{
	const char *dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
	char path[64];
	size_t i;
	int nft = 0;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !nft; i++) {
		snprintf(path, sizeof(path), "%s/nft", dirs[i]);
		nft = !access(path, X_OK);
	}
	printf("nft:        %s\n", nft ? "found (established TCP connections can be dumped)" :
	       "not found: dumping established TCP connections needs it (apt install nftables)");
	printf("soft-dirty: %s\n", !access("/proc/self/clear_refs", W_OK) ?
	       "/proc/PID/clear_refs present (dump --live)" :
	       "no /proc/PID/clear_refs: dump --live cannot track written pages");
}

int cmd_check(int argc, char **argv)
{
	struct utsname u;
	int bad = 0, i;
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		LOG_LONG_OPTS,
		{ NULL, 0, NULL, 0 }
	};

	while ((i = getopt_long(argc, argv, ":h" LOG_OPTS, opts, NULL)) != -1) {
		if (i == 'h')
			return command_help("check");
		if (i != 'o' && i != 'v')
			return option_error("check", i, argc, argv);
		if (log_option(i, optarg) < 0)
			return 2;
	}
	if (optind < argc)
		return usage_error("check takes no arguments");
	uname(&u);
	printf("kernel:      %s %s\n", u.release, u.machine);
	if (strcmp(u.machine, "x86_64")) {
		printf("             only x86_64 is supported\n");
		bad = 1;
	}
	bad |= check_module("img_dump");
	bad |= check_module("binfmt_img");
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
	check_tools();
	printf("%s\n", bad ? "not ready" : "ready");
	return bad;
}
