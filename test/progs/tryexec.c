/*
 * tryexec [--mdwe] [--resv] [--vfork] FILE [ARGS...]: execve FILE.  If
 * execve fails, print "tryexec: execve failed: ENAME" and exit 2 -- the
 * point is that the caller survives a rejected (malformed) image and can
 * report why.
 * --mdwe: first prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN), as systemd's
 * MemoryDenyWriteExecute= does (exit 3 if the kernel lacks it).
 * --resv: also print "tryexec: resv_hugepages A B", the 2 MiB pool's
 * reserved pages before and after the failed execve.
 * --vfork: execve in a vfork() child (sharing this memory until it execs);
 * its failure is printed as above, by the child; if the execve succeeds,
 * "tryexec: vfork child execed", the child killed 2 s later, exit 4.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

extern char **environ;

static long resv(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

int main(int argc, char **argv)
{
	int want_resv = 0, use_vfork = 0, e, st;
	long r0 = -1;
	pid_t kid;

	for (;;) {
		if (argc > 1 && !strcmp(argv[1], "--mdwe")) {
			if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0)) {
				say("tryexec: PR_SET_MDWE: %s\n", errname(errno));
				return 3;
			}
		} else if (argc > 1 && !strcmp(argv[1], "--resv")) {
			want_resv = 1;
		} else if (argc > 1 && !strcmp(argv[1], "--vfork")) {
			use_vfork = 1;
		} else {
			break;
		}
		argv++;
		argc--;
	}
	if (argc < 2) {
		outf(2, "usage: tryexec [--mdwe] [--resv] [--vfork] FILE [ARGS...]\n");
		return 64;
	}
	if (want_resv)
		r0 = resv();
	if (use_vfork) {
		kid = vfork();
		if (kid == 0) {
			execve(argv[1], argv + 1, environ);
			e = errno;
			say("tryexec: execve failed: %s (%d)\n", errname(e), e);
			_exit(2);
		}
		if (kid < 0)
			return 1;
		for (int i = 0; i < 20; i++) {
			if (waitpid(kid, &st, WNOHANG) == kid)
				return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
			usleep(100000);
		}
		say("tryexec: vfork child execed\n");
		kill(kid, SIGKILL);
		waitpid(kid, &st, 0);
		return 4;
	}
	execve(argv[1], argv + 1, environ);
	e = errno;
	say("tryexec: execve failed: %s (%d)\n", errname(e), e);
	if (want_resv)
		say("tryexec: resv_hugepages %ld %ld\n", r0, resv());
	return 2;
}
