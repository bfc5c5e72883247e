/*
 * tryexec [--mdwe] FILE [ARGS...]: execve FILE.  If execve fails, print
 * "tryexec: execve failed: ENAME" and exit 2 -- the point is that the
 * caller survives a rejected (malformed) image and can report why.
 * --mdwe: first prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN), as systemd's
 * MemoryDenyWriteExecute= does (exit 3 if the kernel lacks it).
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--mdwe")) {
		if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0)) {
			say("tryexec: PR_SET_MDWE: %s\n", errname(errno));
			return 3;
		}
		argv++;
		argc--;
	}
	if (argc < 2) {
		outf(2, "usage: tryexec [--mdwe] FILE [ARGS...]\n");
		return 64;
	}
	execve(argv[1], argv + 1, environ);
	int e = errno;
	say("tryexec: execve failed: %s (%d)\n", errname(e), e);
	return 2;
}
