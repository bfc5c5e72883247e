/*
 * tryexec FILE [ARGS...]: execve FILE.  If execve fails, print
 * "tryexec: execve failed: ENAME" and exit 2 -- the point is that the
 * caller survives a rejected (malformed) image and can report why.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "common.h"

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) {
		outf(2, "usage: tryexec FILE [ARGS...]\n");
		return 64;
	}
	execve(argv[1], argv + 1, environ);
	int e = errno;
	say("tryexec: execve failed: %s (%d)\n", errname(e), e);
	return 2;
}
