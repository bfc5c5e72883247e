/*
 * stopcount FILE NTHREADS [pgrp]: NTHREADS threads (the main one included)
 * each count in memory, one step every 10 ms; every 50 ms the main thread
 * appends "SEQ C0 C1 ... " (its line number and every thread's count) to
 * FILE.  It prints "ready PID" on stdout when every thread runs.  With
 * "pgrp" it first makes its own process group (setpgid), in its parent's
 * session: a group that is not orphaned, so that SIGTSTP, SIGTTIN and
 * SIGTTOU stop it (the kernel discards them in an orphaned group).
 *
 * On SIGUSR1 it checks itself: each thread's count must go up over the
 * next 300 ms (all threads run), and every count must be at least as far
 * as the last line written; it writes "done ok N" or "done BAD ..." to
 * FILE and exits 0 or 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

#define MAXT 16

static atomic_ulong count[MAXT];
static volatile sig_atomic_t go;
static int nthreads, out;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void *counter(void *arg)
{
	long i = (long)arg;

	for (;;) {
		atomic_fetch_add(&count[i], 1);
		nap(10);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	unsigned long seen[MAXT], last[MAXT];
	char line[512];
	int seq = 0, bad = 0;
	pthread_t th;

	if (argc < 3)
		return 2;
	out = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	nthreads = atoi(argv[2]);
	if (out < 0 || nthreads < 1 || nthreads > MAXT)
		return 2;
	if (argc > 3 && (strcmp(argv[3], "pgrp") || setpgid(0, 0)))
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	for (long i = 1; i < nthreads; i++)
		if (pthread_create(&th, NULL, counter, (void *)i))
			return 3;
	say("ready %d\n", (int)getpid());
	while (!go) {
		size_t off = 0;

		for (int k = 0; k < 5; k++) {
			atomic_fetch_add(&count[0], 1);
			nap(10);
		}
		off += snprintf(line + off, sizeof(line) - off, "%d", ++seq);
		for (int i = 0; i < nthreads; i++) {
			last[i] = atomic_load(&count[i]);
			off += snprintf(line + off, sizeof(line) - off, " %lu", last[i]);
		}
		outf(out, "%s\n", line);
	}
	for (int i = 0; i < nthreads; i++)
		seen[i] = atomic_load(&count[i]);
	for (int k = 0; k < 30; k++) {
		atomic_fetch_add(&count[0], 1);
		nap(10);
	}
	for (int i = 0; i < nthreads; i++) {
		unsigned long now = atomic_load(&count[i]);

		if (now <= seen[i] || seen[i] < last[i]) {
			outf(out, "done BAD thread %d: %lu -> %lu (last line %lu)\n", i, seen[i], now, last[i]);
			bad = 1;
		}
	}
	if (!bad)
		outf(out, "done ok %d\n", seq);
	return bad;
}
