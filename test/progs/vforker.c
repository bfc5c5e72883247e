/*
 * vforker: vfork()s a child that sleeps in pause() without exec'ing, so
 * the parent waits in vfork() until the child dies.  Then the parent
 * prints "resumed STATUS" (the child's wait status in hex) and exits 0.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "common.h"

int main(void)
{
	pid_t p;
	int st;

	say("parent %d\n", (int)getpid());
	p = vfork();
	if (p == 0) {
		for (;;)
			pause();
	}
	if (p < 0)
		return 2;
	if (waitpid(p, &st, 0) != p)
		return 3;
	say("resumed %#x\n", st);
	return 0;
}
