/*
 * seccompexec FILE [ARGS...]: install an allow-everything seccomp filter
 * (with no_new_privs, as an unprivileged sandbox would), then execve FILE.
 * If execve fails, print "seccompexec: execve failed: ENAME" and exit 2.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "common.h"

extern char **environ;

int main(int argc, char **argv)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };

	if (argc < 2) {
		outf(2, "usage: seccompexec FILE [ARGS...]\n");
		return 64;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		say("seccompexec: cannot install the filter: %s\n", errname(errno));
		return 3;
	}
	execve(argv[1], argv + 1, environ);
	say("seccompexec: execve failed: %s\n", errname(errno));
	return 2;
}
