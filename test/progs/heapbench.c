/*
 * heapbench MIB [THREADS]: fill MIB MiB of heap with a xorshift sequence,
 * start THREADS extra threads (default 0), print "ready", then wait.
 * SIGUSR1 makes it re-sum the heap and print OK or BAD before exiting 0
 * or 1.
 *
 * Each extra thread records its gettid() and waits on a condition variable
 * with every signal blocked (so SIGUSR1 goes to main).  With threads the
 * check also wants /proc/self/task to be exactly main (TID = PID) and the
 * recorded TIDs, and every thread, woken through the condition variable,
 * to confirm that gettid() still returns its recorded TID; then it prints
 * "OK threads=N".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t check;

static void on_usr1(int sig) { (void)sig; check = 1; }

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER;	/* main -> threads */
static pthread_cond_t ack_cv;				/* threads -> main */
static int started, go, acked, moved;
static pid_t *tids;

static void *waiter(void *arg)
{
	size_t i = (size_t)arg;

	pthread_mutex_lock(&mu);
	tids[i] = gettid();
	started++;
	pthread_cond_signal(&ack_cv);
	while (!go)
		pthread_cond_wait(&go_cv, &mu);
	if (gettid() != tids[i])
		moved++;
	acked++;
	pthread_cond_signal(&ack_cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* /proc/self/task is exactly main (its TID the PID) and tids[0..n). */
static int task_dir_ok(size_t n)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t seen = 0;
	int ok = 1;

	if (!d) {
		say("BAD opendir /proc/self/task: %s\n", errname(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		pid_t t;
		size_t i;

		if (e->d_name[0] == '.')
			continue;
		t = (pid_t)strtol(e->d_name, NULL, 10);
		seen++;
		if (t == getpid())
			continue;
		for (i = 0; i < n && tids[i] != t; i++)
			;
		if (i == n) {
			say("BAD unknown thread %d\n", (int)t);
			ok = 0;
		}
	}
	closedir(d);
	if (seen != n + 1) {
		say("BAD %zu threads in /proc/self/task, want %zu\n", seen, n + 1);
		ok = 0;
	}
	if (gettid() != getpid()) {
		say("BAD main thread has TID %d, PID %d\n", (int)gettid(), (int)getpid());
		ok = 0;
	}
	return ok;
}

/* Wake every thread; each confirms its TID.  30 s for a missing thread. */
static int threads_ok(size_t n)
{
	struct timespec dl;
	int ok = 1;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += 30;
	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_broadcast(&go_cv);
	while ((size_t)acked < n)
		if (pthread_cond_timedwait(&ack_cv, &mu, &dl) == ETIMEDOUT)
			break;
	if ((size_t)acked < n) {
		say("BAD only %d of %zu threads answered\n", acked, n);
		ok = 0;
	}
	if (moved) {
		say("BAD %d threads have another TID\n", moved);
		ok = 0;
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

int main(int argc, char **argv)
{
	size_t words = (argc > 1 ? strtoul(argv[1], NULL, 0) : 64) << 17;
	size_t nth = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	uint64_t *p = malloc(words * 8), x = 88172645463325252ull, sum = 0, s2 = 0;
	struct sigaction sa = { .sa_handler = on_usr1 };
	int ok = 1;

	if (!p) {
		outf(1, "BAD malloc\n");
		return 1;
	}
	for (size_t i = 0; i < words; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
		sum += x;
	}
	if (nth) {
		pthread_condattr_t ca;
		sigset_t all, old;
		pthread_t th;

		tids = calloc(nth, sizeof(*tids));
		if (!tids) {
			outf(1, "BAD malloc\n");
			return 1;
		}
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&ack_cv, &ca);
		/* the threads inherit an all-blocked mask */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		for (size_t i = 0; i < nth; i++) {
			int e = pthread_create(&th, NULL, waiter, (void *)i);

			if (e) {
				outf(1, "BAD pthread_create: %s\n", errname(e));
				return 1;
			}
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_mutex_lock(&mu);
		while ((size_t)started < nth)
			pthread_cond_wait(&ack_cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	sigaction(SIGUSR1, &sa, NULL);
	outf(1, "ready\n");
	while (!check)
		pause();
	for (size_t i = 0; i < words; i++)
		s2 += p[i];
	if (s2 != sum) {
		outf(1, "BAD\n");
		ok = 0;
	}
	if (nth) {
		/* both checks, whatever the first says */
		ok &= task_dir_ok(nth);
		ok &= threads_ok(nth);
		if (ok)
			outf(1, "OK threads=%zu\n", nth);
	} else if (ok) {
		outf(1, "OK\n");
	}
	return !ok;
}
