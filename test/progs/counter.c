/*
 * counter [MAX]: print "N PID" once per ~100 ms for N = 1..MAX (default 20),
 * then verify its own memory state and exit 0 (ok) or 1 (corrupted).
 *
 * PID is getpid() at the time of printing, so lines written after a restore
 * carry the PID of the process that executed the image.  The state checked at
 * the end lives in the heap, on the stack, in TLS and in .data, so a restore
 * that loses any of them makes the program itself report it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static _Thread_local uint64_t tls_sum;  /* fs_base must survive */
static uint64_t data_sum = 7;           /* .data (file-backed private, written) */

int main(int argc, char **argv)
{
	int max = argc > 1 ? atoi(argv[1]) : 20;
	uint64_t *heap = calloc((size_t)max + 1, sizeof(*heap));
	volatile uint64_t stack_sum = 0;        /* in memory, on the stack */

	if (!heap || max < 1)
		return 2;
	for (int n = 1; n <= max; n++) {
		heap[n] = (uint64_t)n * 2654435761u;
		tls_sum += (uint64_t)n;
		data_sum += (uint64_t)n;
		stack_sum += (uint64_t)n;
		say("%d %d\n", n, (int)getpid());
		/* A restored sleep may return EINTR early: just go on. */
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}

	uint64_t want = (uint64_t)max * ((uint64_t)max + 1) / 2;
	int bad = tls_sum != want || data_sum != want + 7 || stack_sum != want;
	for (int n = 1; n <= max; n++)
		bad |= heap[n] != (uint64_t)n * 2654435761u;
	say("counter selfcheck %s\n", bad ? "BAD" : "ok");
	return bad;
}
