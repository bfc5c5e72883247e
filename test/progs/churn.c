/*
 * churn N: a process that keeps creating short-lived threads: main starts
 * one every ~2 ms, each adds its number to a shared sum and exits at once;
 * main joins them in order.  It prints "ready PID", then "n N sum S" every
 * 500 threads, and after N threads checks that the sum is 1 + ... + N and
 * prints "churn ok N" (exit 0) or "churn BAD ..." (exit 1).  Two more
 * threads live all along, in pause(), so the process is never single-
 * threaded.  For dumping a process whose threads come and go while it is
 * being frozen.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static atomic_ulong sum;

static void *adder(void *arg)
{
	atomic_fetch_add(&sum, (unsigned long)arg);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000, i;
	pthread_t t;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, sleeper, NULL)) {
			say("churn BAD pthread_create\n");
			return 1;
		}
	say("ready %d\n", (int)getpid());
	for (i = 1; i <= n; i++) {
		if (pthread_create(&t, NULL, adder, (void *)i)) {
			say("churn BAD pthread_create %lu\n", i);
			return 1;
		}
		usleep(2000);
		pthread_join(t, NULL);
		if (i % 500 == 0)
			say("n %lu sum %lu\n", i, (unsigned long)atomic_load(&sum));
	}
	if (atomic_load(&sum) != n * (n + 1) / 2) {
		say("churn BAD sum %lu, want %lu\n", (unsigned long)atomic_load(&sum),
		    n * (n + 1) / 2);
		return 1;
	}
	say("churn ok %lu\n", n);
	return 0;
}
