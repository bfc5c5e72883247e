/*
 * threads: a multi-threaded process (main + 2 threads, all sleeping) that
 * must NOT be dumpable.  Prints "ready" once all threads exist.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

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
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, sleeper, NULL)) {
			say("pthread_create failed\n");
			return 1;
		}
	say("ready\n");
	for (;;)
		pause();
}
