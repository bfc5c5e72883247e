/*
 * intrcall: two threads blocked in interruptible system calls, for a
 * signal that comes while the task is stopped (before it runs again).
 *
 *   main thread:   SIGUSR1 handler without SA_RESTART, SIGUSR2 blocked,
 *                  pause() (-ERESTARTNOHAND): after the handler it must
 *                  return -1 EINTR;
 *   reader thread: SIGUSR2 handler with SA_RESTART, SIGUSR1 blocked,
 *                  read() of fd 0, a pipe or FIFO (-ERESTARTSYS): after
 *                  the handler the read goes on and returns the data.
 *
 * Prints "ready PID", then "pause R ERRNO handler=N" when pause() returns,
 * then "read R DATA handler=N" when the read does; "intrcall ok" and
 * exit 0 if pause() returned -1 EINTR after exactly one SIGUSR1 and the
 * read returned the data (not EINTR) after exactly one SIGUSR2, else
 * "intrcall BAD" and exit 1.  A pause() restarted after its handler
 * never returns: the caller times out.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "common.h"

static volatile sig_atomic_t usr1, usr2;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

static void *reader(void *arg)
{
	char buf[64];
	sigset_t m;
	ssize_t n;
	int *ok = arg;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &m, NULL);
	n = read(0, buf, sizeof(buf) - 1);
	if (n < 0) {
		say("read -1 %s handler=%d\n", strerror(errno), (int)usr2);
		return NULL;
	}
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	say("read %d %s handler=%d\n", (int)n, buf, (int)usr2);
	*ok = n > 0 && usr2 == 1;
	return NULL;
}

int main(void)
{
	struct sigaction sa1 = { .sa_handler = on_usr1 };
	struct sigaction sa2 = { .sa_handler = on_usr2, .sa_flags = SA_RESTART };
	int r, e, read_ok = 0, ok;
	pthread_t th;
	sigset_t m;

	sigaction(SIGUSR1, &sa1, NULL);
	sigaction(SIGUSR2, &sa2, NULL);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &m, NULL);
	if (pthread_create(&th, NULL, reader, &read_ok))
		return 2;
	say("ready %d\n", (int)getpid());
	r = pause();
	e = errno;
	say("pause %d %s handler=%d\n", r, r ? strerror(e) : "-", (int)usr1);
	pthread_join(th, NULL);
	ok = r == -1 && e == EINTR && usr1 == 1 && read_ok;
	say("intrcall %s\n", ok ? "ok" : "BAD");
	return !ok;
}
