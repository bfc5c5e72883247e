/*
 * sparse: mmap 1 GiB anonymous private memory, write a pattern into 256
 * pages spread over it (1 MiB touched), print "ready", pause() until
 * SIGUSR1, then verify the 256 pages and that untouched pages read zero.
 * Prints "OK" or "BAD ..." and exits 0/1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define SPAN (1ull << 30)
#define PAGES 256
#define STRIDE (SPAN / PAGES)           /* 4 MiB */
#define PG 4096

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static uint64_t pattern(unsigned page, unsigned word)
{
	return ((uint64_t)page << 32 | word) * 0x9e3779b97f4a7c15ull + 1;
}

/* Page i sits at a varying offset inside its 4 MiB slot. */
static size_t page_off(unsigned i)
{
	return (size_t)i * STRIDE + (size_t)(i * 7 % 1024) * PG;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	unsigned char *m = mmap(NULL, SPAN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED) {
		say("BAD mmap %s\n", errname(errno));
		return 1;
	}
	/*
	 * Transparent huge pages stay on, as for any program: with THP
	 * "always" each touched 4 KiB page faults in a whole 2 MiB page, and
	 * the dump must still leave the zero parts out of the image.
	 */
	for (unsigned i = 0; i < PAGES; i++) {
		uint64_t *p = (uint64_t *)(m + page_off(i));
		for (unsigned w = 0; w < PG / 8; w++)
			p[w] = pattern(i, w);
	}
	sigaction(SIGUSR1, &sa, NULL);
	say("ready %p\n", (void *)m);
	while (!got_usr1)
		pause();

	unsigned badpages = 0, nonzero = 0;
	for (unsigned i = 0; i < PAGES; i++) {
		const uint64_t *p = (const uint64_t *)(m + page_off(i));
		for (unsigned w = 0; w < PG / 8; w++)
			if (p[w] != pattern(i, w)) {
				badpages++;
				break;
			}
		/* The page just after, and one in the middle of the slot, were never written. */
		const uint64_t *z1 = (const uint64_t *)(m + page_off(i) + PG);
		const uint64_t *z2 = (const uint64_t *)(m + (size_t)i * STRIDE + STRIDE / 2 + PG / 2);
		for (unsigned w = 0; w < PG / 8; w++)
			if (z1[w]) {
				nonzero++;
				break;
			}
		nonzero += z2[0] != 0;
	}
	if (badpages || nonzero) {
		say("BAD badpages=%u nonzero=%u\n", badpages, nonzero);
		return 1;
	}
	say("OK\n");
	return 0;
}
