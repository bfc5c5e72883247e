/*
 * livewriter MIB PCT: a process that keeps writing while it is dumped.
 * MIB MiB of pages, each holding a pattern derived from its index and its
 * generation (a separate array).  Prints "ready", then rewrites PCT % of
 * the pages (the first ones: a working set, as a real program has; spread
 * out, they would dirty every transparent huge page) over and over, each
 * with the next generation, sleeping 1 ms every 64 pages.  SIGUSR1: at the next page
 * boundary, check every page against its generation and print
 * "OK writes=N" (exit 0) or "BAD page P gen G" (exit 1).  A dump taken
 * mid-page is right: the restored process finishes that page before it
 * checks.  SIGUSR2 prints "writes=N".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common.h"

#define WORDS 512	/* per 4 KiB page */

static volatile sig_atomic_t check, report;

static void on_usr1(int sig) { (void)sig; check = 1; }
static void on_usr2(int sig) { (void)sig; report = 1; }

static uint64_t word(size_t page, uint32_t gen, size_t i)
{
	uint64_t x = (page + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 32) ^ i;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	return x;
}

static void fill(uint64_t *p, size_t page, uint32_t gen)
{
	for (size_t i = 0; i < WORDS; i++)
		p[i] = word(page, gen, i);
}

int main(int argc, char **argv)
{
	size_t pages = (argc > 1 ? strtoul(argv[1], NULL, 0) : 16) << 8;
	unsigned long pct = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	size_t hot = pages * pct / 100, p = 0, n = 0;
	unsigned long long writes = 0;
	struct sigaction sa = { .sa_handler = on_usr1 };
	uint64_t *mem;
	uint32_t *gen;

	mem = mmap(NULL, pages * WORDS * 8, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gen = calloc(pages, sizeof(*gen));
	if (mem == MAP_FAILED || !gen || !hot) {
		say("BAD setup\n");
		return 1;
	}
	for (size_t i = 0; i < pages; i++)
		fill(mem + i * WORDS, i, 0);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	say("ready\n");
	while (!check) {
		if (report) {
			report = 0;
			say("writes=%llu\n", writes);
		}
		gen[p]++;
		fill(mem + p * WORDS, p, gen[p]);
		writes++;
		if (++p == hot)
			p = 0;
		if (++n % 64 == 0)
			msleep(1);
	}
	for (size_t i = 0; i < pages; i++)
		for (size_t w = 0; w < WORDS; w++)
			if (mem[i * WORDS + w] != word(i, gen[i], w)) {
				say("BAD page %zu gen %u\n", i, gen[i]);
				return 1;
			}
	say("OK writes=%llu\n", writes);
	return 0;
}
