/*
 * heap64 [SEED]: fill 64 MiB of brk heap with a xorshift64 sequence, print
 * "ready <checksum>", then sleep in sigsuspend() until SIGUSR1.  On SIGUSR1 it
 * re-reads the live memory: checksum and word-by-word comparison against the
 * sequence regenerated from the seed.  It then grows the heap once more (so
 * mm->brk must have been restored), prints "OK"/"BAD ..." and exits 0/1.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

#define HEAP_BYTES (64u << 20)
#define WORDS (HEAP_BYTES / sizeof(uint64_t))

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint64_t checksum(const uint64_t *p)
{
	uint64_t c = 0;
	for (size_t i = 0; i < WORDS; i++)
		c = (c << 5 | c >> 59) ^ p[i];
	return c;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x9e3779b97f4a7c15ull;
	sigset_t block, wait_mask;
	struct sigaction sa = { .sa_handler = on_usr1 };

	/* No mmap'ed chunks: the 64 MiB must come from brk, i.e. the real heap. */
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TOP_PAD, 0);
	uint64_t *heap = malloc(HEAP_BYTES);
	if (!heap || seed == 0) {
		say("BAD malloc\n");
		return 1;
	}
	uint64_t s = seed;
	for (size_t i = 0; i < WORDS; i++)
		heap[i] = xorshift64(&s);
	uint64_t sum = checksum(heap);

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGUSR1);
	sigaction(SIGUSR1, &sa, NULL);
	say("ready %016llx\n", (unsigned long long)sum);

	while (!got_usr1)
		sigsuspend(&wait_mask);

	uint64_t sum2 = checksum(heap);
	size_t mismatches = 0;
	s = seed;
	for (size_t i = 0; i < WORDS; i++)
		mismatches += heap[i] != xorshift64(&s);
	/* Heap growth after restore: needs a correct mm->brk/start_brk. */
	char *more = malloc(1u << 20);
	if (more)
		memset(more, 0x5a, 1u << 20);
	if (sum2 != sum || mismatches || !more) {
		say("BAD sum=%016llx want=%016llx mismatches=%zu grow=%s\n",
		    (unsigned long long)sum2, (unsigned long long)sum, mismatches,
		    more ? "ok" : "failed");
		return 1;
	}
	say("OK %016llx\n", (unsigned long long)sum2);
	return 0;
}
