/*
 * fuzzseed: the seed program of the fuzzer (and of a few permission
 * tests).  It prints "ready PID", stops itself with SIGSTOP and, once
 * continued -- or resumed from an image of it -- prints "alive uid=U" and
 * _exit(42)s at once.  Exit status 42 is how the fuzzer recognises a
 * restore that ran the program correctly.  No libc state is touched after
 * the stop, so a restore that only gets the essentials right still exits 42.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>

#include "common.h"

int main(void)
{
	say("ready %d\n", (int)getpid());
	kill(getpid(), SIGSTOP);
	say("alive uid=%d\n", (int)getuid());
	syscall(SYS_exit_group, 42);
	return 1;
}
