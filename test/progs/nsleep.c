/*
 * nsleep [MS]: sleep MS milliseconds (default 3000) with nanosleep(),
 * continuing with the remaining time after every EINTR, then print
 * "done elapsed_ms=N eintr=K".  Elapsed is CLOCK_REALTIME so time spent
 * stopped/dumped counts.  Exit 0 iff at least MS ms elapsed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "common.h"

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 3000;
	struct timespec req = { ms / 1000, (ms % 1000) * 1000000L }, rem;
	long long t0 = now_ms();
	int eintr = 0;

	say("start\n");
	while (nanosleep(&req, &rem) != 0) {
		if (errno != EINTR) {
			say("nanosleep failed: %s\n", errname(errno));
			return 1;
		}
		eintr++;
		say("eintr rem_ms=%ld\n", (long)(rem.tv_sec * 1000 + rem.tv_nsec / 1000000));
		req = rem;
	}
	long long el = now_ms() - t0;
	say("done elapsed_ms=%lld eintr=%d\n", el, eintr);
	return el >= ms ? 0 : 1;
}
