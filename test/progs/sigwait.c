/*
 * sigwait: calls that wait under a temporary signal mask, across a dump
 * and restore (t_sigwait).
 *
 *   sigwait MODE        MODE is suspend (sigsuspend), ppoll (no fds, no
 *                       timeout), pselect (no fds, no timeout) or epoll
 *                       (epoll_pwait on an empty epoll set, no timeout).
 *
 * The main thread and one more make that call once, each with a mask of
 * its own and a temporary one the call sets:
 *
 *   main    own  USR1 USR2 RTMIN+1     temporary  USR2 RTMIN+3
 *   thread  own  USR1 USR2 RTMIN+2     temporary  USR1 RTMIN+4
 *
 * so SIGUSR1 (to the process) can only reach the main thread while it
 * waits, SIGUSR2 only the other.  Their handlers (sa_mask RTMIN+5, no
 * SA_RESTART) note the mask they run with.  Each thread prints
 * "go NAME tid=T temp=HEX" before its call, then when it returns
 * "NAME ret=R errno=E sig=S hmask=H mask=M want=OWN hwant=HW", where H is
 * the handler's mask (0: no handler ran), M the mask after the call,
 * OWN its own mask and HW what the kernel gives a handler (the temporary
 * mask | sa_mask | the signal; the frame keeps the own one); "NAME ok" if the call returned EINTR after its handler ran
 * with HW and the thread's mask is OWN again.  Then "sigwait done".
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>

#include "common.h"

static const char *mode;
static volatile sig_atomic_t got[2];
static uint64_t hmask[2];

static uint64_t bit(int sig)
{
	return 1ULL << (sig - 1);
}

static uint64_t set_bits(const sigset_t *s)
{
	uint64_t m = 0;
	int sig;

	for (sig = 1; sig <= 64; sig++)
		if (sigismember(s, sig) == 1)
			m |= bit(sig);
	return m;
}

static void to_set(uint64_t m, sigset_t *s)
{
	int sig;

	sigemptyset(s);
	for (sig = 1; sig <= 64; sig++)
		if (m & bit(sig))
			sigaddset(s, sig);
}

static uint64_t cur_mask(void)
{
	sigset_t s;

	pthread_sigmask(SIG_SETMASK, NULL, &s);
	return set_bits(&s);
}

static void on_sig(int sig)
{
	int i = sig == SIGUSR1 ? 0 : 1;

	hmask[i] = cur_mask();
	got[i] = sig;
}

struct waiter {
	const char *name;
	int i;		/* 0: main (SIGUSR1), 1: thread (SIGUSR2) */
	uint64_t own, temp;
};

static void *run(void *arg)
{
	const struct waiter *w = arg;
	uint64_t hwant = w->temp | bit(SIGRTMIN + 5) |
			 bit(w->i ? SIGUSR2 : SIGUSR1);
	sigset_t own, temp;
	struct epoll_event ev;
	int ret = -2, err, ep = -1;
	uint64_t after;

	to_set(w->own, &own);
	to_set(w->temp, &temp);
	pthread_sigmask(SIG_SETMASK, &own, NULL);
	if (!strcmp(mode, "epoll")) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			return NULL;
	}
	say("go %s tid=%ld temp=%016llx\n", w->name, (long)syscall(SYS_gettid),
	    (unsigned long long)w->temp);
	errno = 0;
	if (!strcmp(mode, "suspend"))
		ret = sigsuspend(&temp);
	else if (!strcmp(mode, "ppoll"))
		ret = ppoll(NULL, 0, NULL, &temp);
	else if (!strcmp(mode, "pselect"))
		ret = pselect(0, NULL, NULL, NULL, NULL, &temp);
	else if (!strcmp(mode, "epoll"))
		ret = epoll_pwait(ep, &ev, 1, -1, &temp);
	err = errno;
	after = cur_mask();
	say("%s ret=%d errno=%s sig=%d hmask=%llx mask=%llx want=%llx hwant=%llx\n",
	    w->name, ret, err ? errname(err) : "0", (int)got[w->i],
	    (unsigned long long)hmask[w->i], (unsigned long long)after,
	    (unsigned long long)w->own, (unsigned long long)hwant);
	if (ret == -1 && err == EINTR && got[w->i] &&
	    hmask[w->i] == hwant && after == w->own)
		say("%s ok\n", w->name);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t both = bit(SIGUSR1) | bit(SIGUSR2);
	struct waiter m = { "main", 0, both | bit(SIGRTMIN + 1),
			    bit(SIGUSR2) | bit(SIGRTMIN + 3) };
	struct waiter t = { "thread", 1, both | bit(SIGRTMIN + 2),
			    bit(SIGUSR1) | bit(SIGRTMIN + 4) };
	struct sigaction sa;
	sigset_t all;
	pthread_t th;

	if (argc != 2)
		return 2;
	mode = argv[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGRTMIN + 5);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* the new thread starts with both blocked, as its own mask has */
	sigemptyset(&all);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (pthread_create(&th, NULL, run, &t))
		return 1;
	run(&m);
	pthread_join(th, NULL);
	say("sigwait done\n");
	return 0;
}
