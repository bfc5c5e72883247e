/*
 * producer N [MS]: write "line I of N\n" for I = 1..N to stdout, one write
 * per line, one line every MS milliseconds (default 5).  Part of the
 * pipeline test: producer | transform | consumer.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "common.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long ms = argc > 2 ? atol(argv[2]) : 5;

	for (int i = 1; i <= n; i++) {
		say("line %d of %d\n", i, n);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 }, rem;

		while (nanosleep(&ts, &rem) && errno == EINTR)
			ts = rem;
	}
	return 0;
}
