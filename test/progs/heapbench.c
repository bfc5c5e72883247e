/*
 * heapbench MIB: fill MIB MiB of heap with a xorshift sequence, print
 * "ready", then wait.  SIGUSR1 makes it re-sum the heap and print OK or BAD
 * before exiting 0 or 1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

static volatile sig_atomic_t check;

static void on_usr1(int sig) { (void)sig; check = 1; }

int main(int argc, char **argv)
{
	size_t words = (argc > 1 ? strtoul(argv[1], NULL, 0) : 64) << 17;
	uint64_t *p = malloc(words * 8), x = 88172645463325252ull, sum = 0, s2 = 0;
	struct sigaction sa = { .sa_handler = on_usr1 };

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
	sigaction(SIGUSR1, &sa, NULL);
	outf(1, "ready\n");
	while (!check)
		pause();
	for (size_t i = 0; i < words; i++)
		s2 += p[i];
	outf(1, s2 == sum ? "OK\n" : "BAD\n");
	return s2 != sum;
}
