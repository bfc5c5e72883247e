/*
 * ptpeek NSPID PID...: become the root of NSPID's user namespace (setns,
 * then uid and gid 0 there: the container's root, every capability of
 * that namespace, as a restored container's root task is) and try what
 * review s12 H1 did to a task of the tree still waiting for its exec:
 * PTRACE_ATTACH, open /proc/PID/mem, pidfd_getfd of its fd 0.  Prints
 * "me uid=U capeff=HEX" (host view) and one line per PID:
 * "PID attach=E mem=E getfd=E dumpable-owner=UID" (E: ok or the errno
 * name; dumpable-owner: the owner of /proc/PID as imgcr sees it).
 * Exit 0 if every try was refused, 1 if one succeeded, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

int main(int argc, char **argv)
{
	char path[64], st[4096], *p;
	int fd, i, any = 0;
	unsigned int hostuid[64];
	struct stat sb;

	if (argc < 3) {
		outf(2, "usage: ptpeek NSPID PID...\n");
		return 64;
	}
	for (i = 2; i < argc && i < 64; i++) {
		snprintf(path, sizeof(path), "/proc/%s", argv[i]);
		hostuid[i] = stat(path, &sb) ? 4294967295u : sb.st_uid;
	}
	snprintf(path, sizeof(path), "/proc/%s/ns/user", argv[1]);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWUSER)) {
		say("ptpeek: setns %s failed: %s\n", path, errname(errno));
		return 2;
	}
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0)) {
		say("ptpeek: becoming root of the namespace failed: %s\n", errname(errno));
		return 2;
	}
	fd = open("/proc/self/status", O_RDONLY);
	i = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
	st[i > 0 ? i : 0] = 0;
	p = strstr(st, "CapEff:");
	say("me uid=%u capeff=%.16s\n", (unsigned)getuid(), p ? p + 8 : "?");
	for (i = 2; i < argc && i < 64; i++) {
		pid_t pid = atoi(argv[i]);
		const char *a = "ok", *m = "ok", *g = "ok";
		int w, pfd, r;

		if (ptrace(PTRACE_ATTACH, pid, 0, 0)) {
			a = errname(errno);
		} else {
			any = 1;
			waitpid(pid, &w, __WALL);
			ptrace(PTRACE_DETACH, pid, 0, 0);
		}
		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		r = open(path, O_RDONLY);
		if (r < 0)
			m = errname(errno);
		else {
			any = 1;
			close(r);
		}
		pfd = syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0) {
			g = errname(errno);
		} else {
			r = syscall(SYS_pidfd_getfd, pfd, 0, 0);
			if (r < 0)
				g = errname(errno);
			else {
				any = 1;
				close(r);
			}
			close(pfd);
		}
		say("%d attach=%s mem=%s getfd=%s owner=%u\n", pid, a, m, g, hostuid[i]);
	}
	return any;
}
