/*
 * pauser: install a SIGUSR1 handler, print "ready", sit in pause() until the
 * handler ran, check that memory still holds what was put there before the
 * sleep, print "woken ok" (or "woken BAD") and exit 0 (1).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

static volatile sig_atomic_t woken;
static volatile int wakeups;
static uint32_t magic = 0xfeedf00d;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
	wakeups++;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	volatile uint64_t stack_magic = 0x0123456789abcdefull;
	char *heap = malloc(4096);

	if (!heap)
		return 2;
	memset(heap, 0xa5, 4096);
	sigaction(SIGUSR1, &sa, NULL);
	say("ready %d\n", (int)getpid());
	while (!woken)
		pause();

	int bad = magic != 0xfeedf00d || stack_magic != 0x0123456789abcdefull || wakeups != 1;
	for (int i = 0; i < 4096; i++)
		bad |= (unsigned char)heap[i] != 0xa5;
	say("woken %s pid=%d\n", bad ? "BAD" : "ok", (int)getpid());
	return bad;
}
