/*
 * contthread: print "ready PID" and stop itself (SIGSTOP).  Once continued
 * it creates a second thread (so it can no longer be dumped), prints
 * "thread started", then "tick N" every 100 ms forever.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "common.h"

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;

	say("ready %d\n", (int)getpid());
	kill(getpid(), SIGSTOP);
	if (pthread_create(&t, NULL, sleeper, NULL)) {
		say("pthread_create failed\n");
		return 1;
	}
	say("thread started\n");
	for (int n = 1;; n++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		say("tick %d\n", n);
	}
}
