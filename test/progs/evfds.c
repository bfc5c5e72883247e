/*
 * evfds: eventfd, signalfd and timerfd across dump + restore.  A parent and
 * a child share an eventfd (counter 7, non-blocking); the parent also has a
 * semaphore eventfd (counter 3), a signalfd for SIGUSR1 with one SIGUSR1
 * queued (blocked), a periodic timerfd (200 ms, never read before the
 * dump) and a one-shot one (8 s).  Both print "fds ..." and "ready", then
 * loop every 20 ms until the file "restored" appears in the cwd (the test
 * creates it after imgcr restore), measuring how long they were stopped
 * (any loop delay over 0.5 s).  Then the parent checks, printing ok/BAD:
 *   eventfd   read gives 7; O_NONBLOCK kept; shared with the child
 *   semaphore reads give 1, 1, 1, then EAGAIN
 *   signalfd  the queued SIGUSR1 is read through it
 *   periodic  the first read returns every tick since arming, less the
 *             time stopped (unread ticks kept); then about 5 a second
 *   one-shot  fires 8 s after arming plus the time stopped
 * and the child, once the parent says so ("efd-go"), reads the 100 the
 * parent wrote to the shared eventfd.  Exit 0 only if all passed.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

/* Loop until "restored" appears; the seconds stopped meanwhile. */
static double wait_restored(void)
{
	double last = now(), stopped = 0;

	while (!exists("restored")) {
		msleep(20);
		double t = now();

		if (t - last > 0.5)
			stopped += t - last - 0.02;
		last = t;
	}
	return stopped;
}

static int child(int efd)
{
	uint64_t v = 0;
	int n;

	wait_restored();
	for (n = 0; n < 1000 && !exists("efd-go"); n++)
		msleep(20);
	for (n = 0; n < 500; n++) {
		if (read(efd, &v, 8) == 8)
			break;
		msleep(20);
	}
	check(v == 100, "child eventfd", "read %llu (want the parent's 100)", (unsigned long long)v);
	return bad;
}

int main(void)
{
	struct itimerspec per = { { 0, 200000000 }, { 0, 200000000 } }, one = { { 0, 0 }, { 8, 0 } };
	struct signalfd_siginfo si;
	uint64_t v;
	sigset_t set;
	int efd, sem, sig, tper, tone, st, i, e;
	ssize_t n;
	double armed, stopped, t0, t, expect;
	long long sum;
	pid_t kid;

	efd = eventfd(7, EFD_NONBLOCK);
	sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sig = signalfd(-1, &set, SFD_NONBLOCK);
	tper = timerfd_create(CLOCK_MONOTONIC, 0);
	tone = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	if (efd < 0 || sem < 0 || sig < 0 || tper < 0 || tone < 0) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0)
		return child(efd);
	kill(getpid(), SIGUSR1);
	armed = now();
	if (timerfd_settime(tper, 0, &per, NULL) || timerfd_settime(tone, 0, &one, NULL)) {
		say("BAD timerfd_settime: %s\n", strerror(errno));
		return 1;
	}
	say("fds efd=%d sem=%d sig=%d tper=%d tone=%d child=%d\n", efd, sem, sig, tper, tone,
	    (int)kid);
	say("ready\n");
	stopped = wait_restored();
	say("restored, stopped %.2f s\n", stopped);

	v = 0;
	n = read(efd, &v, 8);
	check(n == 8 && v == 7, "eventfd", "read %llu (want 7)", (unsigned long long)v);
	check(fcntl(efd, F_GETFL) & O_NONBLOCK, "eventfd flags", "O_NONBLOCK %s",
	      fcntl(efd, F_GETFL) & O_NONBLOCK ? "kept" : "lost");
	for (i = 0; i < 3; i++) {
		v = 0;
		n = read(sem, &v, 8);
		check(n == 8 && v == 1, "semaphore", "read %d gives %llu (want 1)", i + 1,
		      (unsigned long long)v);
	}
	errno = 0;
	n = read(sem, &v, 8);
	e = errno;
	check(n < 0 && e == EAGAIN, "semaphore", "4th read: %s (want EAGAIN)", strerror(e));

	memset(&si, 0, sizeof(si));
	n = read(sig, &si, sizeof(si));
	check(n == sizeof(si) && si.ssi_signo == SIGUSR1, "signalfd",
	      "read signal %u (want %d, SIGUSR1)", si.ssi_signo, SIGUSR1);
	errno = 0;
	n = read(sig, &si, sizeof(si));
	e = errno;
	check(n < 0 && e == EAGAIN, "signalfd", "nothing more: %s (want EAGAIN)", strerror(e));

	v = 0;
	t = now();
	if (read(tper, &v, 8) != 8)
		v = 0;
	expect = (t - armed - stopped) / 0.2;
	check(v + 5 >= expect && v <= expect + 5 && v > 2, "periodic unread ticks",
	      "%llu ticks for %.2f s running (want about %.1f)", (unsigned long long)v,
	      t - armed - stopped, expect);
	t0 = now();
	for (sum = 0, i = 0; i < 10; i++) {
		struct pollfd pf = { tper, POLLIN, 0 };

		if (poll(&pf, 1, 2000) != 1 || read(tper, &v, 8) != 8)
			break;
		sum += v;
	}
	t = now() - t0;
	check(i == 10 && sum >= 1 && (sum - t / 0.2) * (sum - t / 0.2) <= 4, "periodic",
	      "%lld ticks in %d reads over %.2f s (want about %.1f)", sum, i, t, t / 0.2);

	expect = armed + 8 + stopped;
	for (i = 0; i < 1000; i++) {
		if (read(tone, &v, 8) == 8)
			break;
		msleep(20);
	}
	t = now();
	check(i < 1000 && v == 1 && t > expect - 1 && t < expect + 2, "one-shot",
	      "fired %.2f s after arming, %.2f s stopped (want about %.2f s)", t - armed, stopped,
	      8 + stopped);

	v = 100;
	n = write(efd, &v, 8);
	check(n == 8, "eventfd write", "100");
	close(open("efd-go", O_WRONLY | O_CREAT, 0644));
	st = -1;
	n = waitpid(kid, &st, 0);
	check(n == kid && WIFEXITED(st) && !WEXITSTATUS(st), "child",
	      "exit status 0x%x", st);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
