/*
 * sigstorm: a task that catches SIGUSR1 (counting it) and is signalled
 * while imgcr restores it.  Fills 32 MiB with a pattern (the restore of
 * its memory takes a while), prints "ready PID" and sleeps until SIGUSR2;
 * then checks the pattern and prints "sigstorm ok usr1=N" (exit 0) or
 * "sigstorm BAD ..." (exit 1).  A SIGUSR1 that killed it would show as the
 * task gone, with no line.
 *
 * sigstorm --exec IMAGE: catch SIGUSR1 (doing nothing), print "exec", then
 * execve() IMAGE with no signal blocked: the restore of an image whose
 * caller neither blocks nor ignores the signals it is sent.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>

#include "common.h"

#define SIZE (32u << 20)

static volatile sig_atomic_t usr1, usr2;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	unsigned char *m;
	size_t bad = 0;

	if (argc == 3 && !strcmp(argv[1], "--exec")) {
		sigaction(SIGUSR1, &sa, NULL);
		say("exec\n");
		execv(argv[2], argv + 2);
		say("sigstorm: execve failed: %s\n", errname(errno));
		return 2;
	}
	m = malloc(SIZE);
	if (!m)
		return 2;
	for (size_t i = 0; i < SIZE; i++)
		m[i] = (unsigned char)(i * 7 + (i >> 12));
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	say("ready %d\n", (int)getpid());
	while (!usr2)
		msleep(20);
	for (size_t i = 0; i < SIZE; i++)
		bad += m[i] != (unsigned char)(i * 7 + (i >> 12));
	if (bad) {
		say("sigstorm BAD %zu bytes differ usr1=%d\n", bad, (int)usr1);
		return 1;
	}
	say("sigstorm ok usr1=%d\n", (int)usr1);
	return 0;
}
