/*
 * ptstop PID: put PID into a ptrace stop (PTRACE_SEIZE + PTRACE_INTERRUPT),
 * wait until it is there, print "stopped STATUS" and sleep until killed:
 * the tracee stays in its ptrace stop as long as this tracer lives.
 * Prints "ptstop: ... failed: ENAME" and exits 1 on error.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "common.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		outf(2, "usage: ptstop PID\n");
		return 64;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	int st;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		say("ptstop: PTRACE_SEIZE failed: %s\n", errname(errno));
		return 1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
		say("ptstop: PTRACE_INTERRUPT failed: %s\n", errname(errno));
		return 1;
	}
	if (waitpid(pid, &st, __WALL) != pid) {
		say("ptstop: waitpid failed: %s\n", errname(errno));
		return 1;
	}
	if (!WIFSTOPPED(st)) {
		say("ptstop: tracee did not stop (status %#x)\n", st);
		return 1;
	}
	say("stopped %#x\n", st);
	for (;;)
		pause();
}
