/*
 * libuser: dynamically linked against libimgcrtest.so (rpath $ORIGIN and
 * $ORIGIN/../lib).  Prints "ready value=V" with V = imgcr_test_value(),
 * sleeps in pause() until SIGUSR1, then prints "value V pid=P" (V from a
 * second call into the library) and exits 0.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "common.h"

int imgcr_test_value(void);

static volatile sig_atomic_t woken;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);
	say("ready value=%d\n", imgcr_test_value());
	while (!woken)
		pause();
	say("value %d pid=%d\n", imgcr_test_value(), (int)getpid());
	return 0;
}
