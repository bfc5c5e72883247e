/*
 * remapper: two private anonymous regions of 4 MiB, X (read-write) and Y
 * (read-only: they never merge), without transparent huge pages, each page
 * marked with its region's id and its index, moved with
 * mremap(MREMAP_FIXED) over three slots, Y always into the slot X just
 * left: slot 1 holds X and Y in turn, whole page tables moved each time,
 * which sets no soft-dirty bit.  A copy of slot 1 made by address may hold
 * either region's pages, or both.  Prints "ready"; SIGUSR1: at the next
 * step, check that each region's pages carry one id and their own indexes,
 * print "OK moves=N" (exit 0) or "BAD ..." (exit 1).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common.h"

#define SZ (4UL << 20)
#define PAGES (SZ / 4096)
#define SLOTS 3
#define STRIDE (2 * SZ)	/* a gap between slots: no merging */

static volatile sig_atomic_t check;

static void on_usr1(int sig) { (void)sig; check = 1; }

static void fill(char *p, uint64_t id)
{
	for (size_t i = 0; i < PAGES; i++) {
		uint64_t *w = (uint64_t *)(p + i * 4096);

		for (size_t j = 0; j < 512; j++)
			w[j] = id << 32 | i << 12 | j;
	}
}

/* the id of region @p, or 0 if its pages disagree */
static uint64_t region_id(const char *p)
{
	uint64_t id = *(const uint64_t *)p >> 32;

	for (size_t i = 0; i < PAGES; i++) {
		const uint64_t *w = (const uint64_t *)(p + i * 4096);

		for (size_t j = 0; j < 512; j++)
			if (w[j] != (id << 32 | i << 12 | j)) {
				say("BAD page %zu word %zu: %#llx, region id %llu\n", i, j,
				    (unsigned long long)w[j], (unsigned long long)id);
				return 0;
			}
	}
	return id;
}

static void move(char *from, char *to)
{
	if (mremap(from, SZ, SZ, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to) {
		say("BAD mremap: %s\n", errname(errno));
		exit(1);
	}
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	unsigned long long moves = 0;
	char *base, *slot0;
	size_t s = 0;
	uint64_t ix, iy;

	base = mmap(NULL, (SLOTS + 1) * STRIDE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		say("BAD mmap\n");
		return 1;
	}
	slot0 = (char *)(((uintptr_t)base + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	/* Y in slot 0, X in slot 1 */
	for (int i = 0; i < 2; i++)
		if (mmap(slot0 + i * STRIDE, SZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != slot0 + i * STRIDE ||
		    madvise(slot0 + i * STRIDE, SZ, MADV_NOHUGEPAGE)) {
			say("BAD mmap fixed\n");
			return 1;
		}
	fill(slot0, 2);
	fill(slot0 + STRIDE, 1);
	mprotect(slot0, SZ, PROT_READ);
	sigaction(SIGUSR1, &sa, NULL);
	say("ready\n");
	while (!check) {
		if (s + 2 < SLOTS) {
			move(slot0 + (s + 1) * STRIDE, slot0 + (s + 2) * STRIDE);	/* X on */
			move(slot0 + s * STRIDE, slot0 + (s + 1) * STRIDE);	/* Y where X was */
			s++;
		} else {
			move(slot0 + s * STRIDE, slot0);			/* Y back to 0 */
			move(slot0 + (s + 1) * STRIDE, slot0 + STRIDE);	/* X back to 1 */
			s = 0;
		}
		moves += 2;
		msleep(1);
	}
	ix = region_id(slot0 + (s + 1) * STRIDE);
	iy = region_id(slot0 + s * STRIDE);
	if (ix != 1 || iy != 2) {
		say("BAD regions %llu %llu\n", (unsigned long long)ix, (unsigned long long)iy);
		return 1;
	}
	say("OK moves=%llu\n", moves);
	return 0;
}
