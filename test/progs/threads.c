/*
 * threads [N]: main + N threads (default 2, at most 64), the threads
 * sleeping in pause().  Prints "thread I tid T" for each, then "ready".
 * On SIGUSR1 (main waits for it with sigwaitinfo) main pthread_kill()s a
 * SIGURG to every thread; each handler records gettid() for its thread.
 * Prints "threads ok N" and exits 0 if every thread answered from the TID
 * it had at start, else "threads BAD ..." and exits 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define MAXT 64

static pthread_t th[MAXT];
static volatile pid_t tid_at_start[MAXT], tid_in_handler[MAXT];
static int nthr;

static void on_urg(int sig)
{
	(void)sig;
	for (int i = 0; i < nthr; i++)
		if (pthread_equal(th[i], pthread_self()))
			tid_in_handler[i] = gettid();
}

static void *sleeper(void *arg)
{
	tid_at_start[(long)arg] = gettid();
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t usr1;
	int i;

	nthr = argc > 1 ? atoi(argv[1]) : 2;
	if (nthr < 1 || nthr > MAXT) {
		say("usage: threads [1..%d]\n", MAXT);
		return 64;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);	/* inherited by every thread */
	signal(SIGURG, on_urg);
	for (i = 0; i < nthr; i++)
		if (pthread_create(&th[i], NULL, sleeper, (void *)(long)i)) {
			say("pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < nthr; i++) {
		while (!tid_at_start[i])
			usleep(1000);
		say("thread %d tid %d\n", i, (int)tid_at_start[i]);
	}
	say("ready\n");
	while (sigwaitinfo(&usr1, NULL) < 0)
		;
	for (i = 0; i < nthr; i++)
		pthread_kill(th[i], SIGURG);
	for (int n = 0; n < 10000; n++) {
		int all = 1;

		for (i = 0; i < nthr; i++)
			all &= tid_in_handler[i] != 0;
		if (all)
			break;
		usleep(1000);
	}
	for (i = 0; i < nthr; i++)
		if (tid_in_handler[i] != tid_at_start[i]) {
			say("threads BAD thread %d: tid %d at start, %d in its handler\n",
			    i, (int)tid_at_start[i], (int)tid_in_handler[i]);
			return 1;
		}
	say("threads ok %d\n", nthr);
	return 0;
}
