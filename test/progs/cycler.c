/*
 * cycler [MB]: a program that checks its own memory all the time, for
 * back-to-back checkpoint/restore cycles (t_cycles.sh).  It fills MB MiB
 * (default 4) of heap with pseudo-random words and keeps their checksum in
 * .data.  Every step (~every 20 ms): recompute the checksum of the whole
 * buffer and compare it with the stored one (on mismatch print
 * "cycler MISMATCH ..." and abort()), then overwrite a pseudo-random set of
 * words and one whole page, and store the new checksum.  It notices each
 * restore by its pid changing.  Per step it prints
 * "step S verified V restores R"; on SIGUSR1 it prints
 * "done steps=S verified=V restores=R" and exits 0.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t got_usr1;
static uint64_t sum = 1, rs = 0x243f6a8885a308d3ull;
static long steps, verified, restores;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static uint64_t next(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t checksum(const uint64_t *p, size_t n)
{
	uint64_t c = 0;
	for (size_t i = 0; i < n; i++)
		c = (c << 5 | c >> 59) ^ (p[i] + i);
	return c;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 4;
	size_t words = (mb << 20) / sizeof(uint64_t);
	uint64_t *buf = malloc(words * sizeof(uint64_t));
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t last = getpid();

	if (!buf || !words)
		return 2;
	for (size_t i = 0; i < words; i++)
		buf[i] = next();
	sum = checksum(buf, words);
	sigaction(SIGUSR1, &sa, NULL);
	say("ready %d\n", (int)last);
	while (!got_usr1) {
		steps++;
		if (getpid() != last) {
			restores++;
			last = getpid();
		}
		uint64_t c = checksum(buf, words);
		if (c != sum) {
			say("cycler MISMATCH step=%ld restores=%ld sum=%016llx want=%016llx\n", steps,
			    restores, (unsigned long long)c, (unsigned long long)sum);
			abort();
		}
		verified++;
		for (int k = 0; k < 1024; k++)
			buf[next() % words] = next();
		size_t page = (size_t)(next() % (words / 512)) * 512;
		for (size_t i = 0; i < 512; i++)
			buf[page + i] ^= next();
		sum = checksum(buf, words);
		say("step %ld verified %ld restores %ld\n", steps, verified, restores);
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	say("done steps=%ld verified=%ld restores=%ld\n", steps, verified, restores);
	return 0;
}
