/*
 * evfds: eventfd, signalfd and timerfd across dump + restore.  A parent and
 * a child share an eventfd (counter 7, non-blocking); the parent also has a
 * semaphore eventfd (counter 3), a signalfd for SIGUSR1 with one SIGUSR1
 * queued (blocked), a periodic timerfd (200 ms, never read before the
 * dump) and a one-shot one (8 s); three timerfds armed with
 * TFD_TIMER_ABSTIME: "trt" on CLOCK_REALTIME, one-shot 11 s after arming,
 * "tam" on CLOCK_MONOTONIC, first at 300 ms then every 300 ms (never read
 * before the dump), "tcs" on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET,
 * 60 s ahead; and an inotify instance (non-blocking) watching the
 * directory "w" for IN_CREATE; the event of "w/before" is read before
 * "ready" (a dump refuses queued events: t_inotify_queued).  Both print "fds ..." and "ready", then
 * loop every 20 ms until the file "restored" appears in the cwd (the test
 * creates it after imgcr restore), measuring how long they were stopped
 * (any loop delay over 0.5 s).  Then the parent checks, printing ok/BAD:
 *   eventfd   read gives 7; O_NONBLOCK kept; shared with the child
 *   semaphore reads give 1, 1, 1, then EAGAIN
 *   signalfd  the queued SIGUSR1 is read through it
 *   periodic  the first read returns every tick since arming, less the
 *             time stopped (unread ticks kept); then about 5 a second
 *   one-shot  fires 8 s after arming plus the time stopped
 *   trt       still absolute on CLOCK_REALTIME, not cancel-on-set; fires
 *             11 s after arming plus the time stopped
 *   tam       still absolute on CLOCK_MONOTONIC with its 300 ms period;
 *             the first read returns every tick since arming, less the
 *             time stopped; then about 3.3 a second
 *   tcs       still absolute and cancel-on-set on CLOCK_REALTIME, 60 s
 *             ahead less the time running; setting CLOCK_REALTIME (to
 *             the time it has) makes its read fail with ECANCELED
 *   inotify   the only event is the creation of "w/after" (by the test,
 *             after the restore), under the same watch descriptor
 * and the child, once the parent says so ("efd-go"), reads the 100 the
 * parent wrote to the shared eventfd.  Exit 0 only if all passed.
 *
 * evfds expired: two one-shot timerfds armed with TFD_TIMER_ABSTIME 100 ms
 * ahead that have fired, their tick not read: "tcx" on CLOCK_REALTIME with
 * TFD_TIMER_CANCEL_ON_SET, "tax" on CLOCK_MONOTONIC.  Prints "fds tcx=N
 * tax=N" and "ready", waits for "restored", then checks (ok/BAD): their
 * settime flags (03, 01) and clocks as before, tax's unread tick, and that
 * setting CLOCK_REALTIME (to the time it has) cancels tcx as it would
 * have before the dump: its read fails with ECANCELED.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

/* When timerfd @fd fires next (now() + its time left), or 0 if not armed. */
static double due(int fd)
{
	struct itimerspec cur;

	if (timerfd_gettime(fd, &cur) || (!cur.it_value.tv_sec && !cur.it_value.tv_nsec))
		return 0;
	return now() + cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9;
}

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

/* The flags of timerfd @fd's last timerfd_settime, from its fdinfo; -1 if not found. */
static int settime_flags(int fd)
{
	char path[64], line[128];
	FILE *f;
	int fl = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "settime flags: %o", &fl) == 1)
			break;
	fclose(f);
	return fl;
}

/* "clockid" of timerfd @fd from its fdinfo; -1 if not found. */
static int timer_clock(int fd)
{
	char path[64], line[128];
	FILE *f;
	int c = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "clockid: %d", &c) == 1)
			break;
	fclose(f);
	return c;
}

/* Every event queued on inotify fd @ino: "WD:MASK:NAME ..." (empty if none). */
static const char *inotify_events(int ino)
{
	static char out[512];
	char buf[4096] __attribute__((aligned(8))), *p;
	char *o = out;
	ssize_t n;

	out[0] = 0;
	while ((n = read(ino, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			o = addfmt(o, out + sizeof(out), "%s%d:%x:%s", o == out ? "" : " ", ev->wd,
				   ev->mask, ev->len ? ev->name : "");
			p += sizeof(*ev) + ev->len;
		}
	return out;
}

/* The period of timerfd @fd: @reads reads; the ticks and the seconds they took. */
static int period(int fd, int reads, long long *sum, double *secs)
{
	double t0 = now();
	uint64_t v;
	int i;

	for (*sum = 0, i = 0; i < reads; i++) {
		struct pollfd pf = { fd, POLLIN, 0 };

		if (poll(&pf, 1, 2000) != 1 || read(fd, &v, 8) != 8)
			break;
		*sum += v;
	}
	*secs = now() - t0;
	return i;
}

static int expired(void)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct timespec ts;
	int tcx, tax, e;
	uint64_t v = 0;
	ssize_t n;

	tcx = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	tax = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	clock_gettime(CLOCK_REALTIME, &ts);
	its.it_value.tv_sec = ts.tv_sec + (ts.tv_nsec + 100000000) / 1000000000;
	its.it_value.tv_nsec = (ts.tv_nsec + 100000000) % 1000000000;
	if (tcx < 0 || tax < 0 ||
	    timerfd_settime(tcx, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	its.it_value.tv_sec = ts.tv_sec + (ts.tv_nsec + 100000000) / 1000000000;
	its.it_value.tv_nsec = (ts.tv_nsec + 100000000) % 1000000000;
	if (timerfd_settime(tax, TFD_TIMER_ABSTIME, &its, NULL)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	msleep(300);
	say("fds tcx=%d tax=%d\n", tcx, tax);
	say("ready\n");
	wait_file("restored");

	check(timer_clock(tcx) == CLOCK_REALTIME &&
	      settime_flags(tcx) == (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET),
	      "tcx clock and flags", "clock %d settime flags 0%o (want 0, 03)", timer_clock(tcx),
	      settime_flags(tcx));
	check(timer_clock(tax) == CLOCK_MONOTONIC && settime_flags(tax) == TFD_TIMER_ABSTIME,
	      "tax clock and flags", "clock %d settime flags 0%o (want 1, 01)", timer_clock(tax),
	      settime_flags(tax));
	n = read(tax, &v, 8);
	check(n == 8 && v == 1, "tax tick", "read %zd: %llu (want the 1 unread tick)", n,
	      (unsigned long long)v);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts))
		say("BAD clock_settime: %s\n", strerror(errno));
	errno = 0;
	v = 0;
	n = read(tcx, &v, 8);
	e = errno;
	check(n < 0 && e == ECANCELED, "tcx cancel-on-set",
	      "read after clock_settime: %zd (%llu) %s (want ECANCELED)", n, (unsigned long long)v,
	      n < 0 ? errname(e) : "");
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	struct itimerspec per = { { 0, 200000000 }, { 0, 200000000 } }, one = { { 0, 0 }, { 8, 0 } };
	struct itimerspec rt = { { 0, 0 }, { 0, 0 } }, am = { { 0, 300000000 }, { 0, 0 } };
	struct itimerspec cs = { { 0, 0 }, { 0, 0 } }, cur;
	struct signalfd_siginfo si;
	struct timespec ts;
	uint64_t v;
	sigset_t set;
	int efd, sem, sig, tper, tone, trt, tam, tcs, ino, wd, st, i, e;
	ssize_t n;
	double armed, stopped, t, expect, tone_at = 0, trt_at = 0, tone_due, trt_due;
	long long sum;
	const char *evs;
	char want[64];
	pid_t kid;

	if (argc == 2 && !strcmp(argv[1], "expired"))
		return expired();
	efd = eventfd(7, EFD_NONBLOCK);
	sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sig = signalfd(-1, &set, SFD_NONBLOCK);
	tper = timerfd_create(CLOCK_MONOTONIC, 0);
	tone = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	trt = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	tam = timerfd_create(CLOCK_MONOTONIC, 0);
	tcs = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	ino = inotify_init1(IN_NONBLOCK);
	if (ino >= 0 && mkdir("w", 0755) && errno != EEXIST)
		ino = -1;
	wd = ino < 0 ? -1 : inotify_add_watch(ino, "w", IN_CREATE);
	if (efd < 0 || sem < 0 || sig < 0 || tper < 0 || tone < 0 || trt < 0 || tam < 0 ||
	    tcs < 0 || wd < 0) {
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
	clock_gettime(CLOCK_REALTIME, &ts);
	rt.it_value.tv_sec = ts.tv_sec + 11;
	rt.it_value.tv_nsec = ts.tv_nsec;
	cs.it_value.tv_sec = ts.tv_sec + 60;
	cs.it_value.tv_nsec = ts.tv_nsec;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	am.it_value.tv_sec = ts.tv_sec + (ts.tv_nsec + 300000000) / 1000000000;
	am.it_value.tv_nsec = (ts.tv_nsec + 300000000) % 1000000000;
	if (timerfd_settime(tper, 0, &per, NULL) || timerfd_settime(tone, 0, &one, NULL) ||
	    timerfd_settime(trt, TFD_TIMER_ABSTIME, &rt, NULL) ||
	    timerfd_settime(tam, TFD_TIMER_ABSTIME, &am, NULL) ||
	    timerfd_settime(tcs, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &cs, NULL)) {
		say("BAD timerfd_settime: %s\n", strerror(errno));
		return 1;
	}
	close(open("w/before", O_WRONLY | O_CREAT, 0644));
	evs = inotify_events(ino);
	snprintf(want, sizeof(want), "%d:%x:before", wd, IN_CREATE);
	if (strcmp(evs, want)) {
		say("BAD inotify before the dump: '%s', want '%s'\n", evs, want);
		return 1;
	}
	say("fds efd=%d sem=%d sig=%d tper=%d tone=%d child=%d\n", efd, sem, sig, tper, tone,
	    (int)kid);
	say("more trt=%d tam=%d tcs=%d ino=%d wd=%d\n", trt, tam, tcs, ino, wd);
	say("ready\n");
	stopped = wait_restored();
	say("restored, stopped %.2f s\n", stopped);
	/*
	 * When the one-shots will fire, from their time left now: the checks
	 * below take a while on a loaded machine, and a one-shot read after
	 * them would be late by that much, not by the restore.
	 */
	tone_due = due(tone);
	trt_due = due(trt);

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
	i = period(tper, 10, &sum, &t);
	check(i == 10 && sum >= 1 && (sum - t / 0.2) * (sum - t / 0.2) <= 4, "periodic",
	      "%lld ticks in %d reads over %.2f s (want about %.1f)", sum, i, t, t / 0.2);

	/* absolute timers: same clocks and flags; the monotonic one's ticks and period */
	check(timer_clock(trt) == CLOCK_REALTIME && settime_flags(trt) == TFD_TIMER_ABSTIME,
	      "trt clock and flags", "clock %d settime flags 0%o (want 0, 01)", timer_clock(trt),
	      settime_flags(trt));
	check(timer_clock(tam) == CLOCK_MONOTONIC && settime_flags(tam) == TFD_TIMER_ABSTIME,
	      "tam clock and flags", "clock %d settime flags 0%o (want 1, 01)", timer_clock(tam),
	      settime_flags(tam));
	check(timer_clock(tcs) == CLOCK_REALTIME &&
	      settime_flags(tcs) == (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET),
	      "tcs clock and flags", "clock %d settime flags 0%o (want 0, 03)", timer_clock(tcs),
	      settime_flags(tcs));
	memset(&cur, 0, sizeof(cur));
	timerfd_gettime(tcs, &cur);
	t = now();
	expect = 60 - (t - armed - stopped);
	check(cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9 > expect - 1.5 &&
	      cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9 < expect + 1.5, "tcs time left",
	      "%.2f s (want about %.2f: 60 less %.2f s running)",
	      cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9, expect, t - armed - stopped);
	v = 0;
	t = now();
	if (read(tam, &v, 8) != 8)
		v = 0;
	expect = (t - armed - stopped) / 0.3;
	check(v + 4 >= expect && v <= expect + 4 && v > 2, "tam unread ticks",
	      "%llu ticks for %.2f s running (want about %.1f)", (unsigned long long)v,
	      t - armed - stopped, expect);
	i = period(tam, 5, &sum, &t);
	check(i == 5 && sum >= 1 && (sum - t / 0.3) * (sum - t / 0.3) <= 4, "tam period",
	      "%lld ticks in %d reads over %.2f s (want about %.1f)", sum, i, t, t / 0.3);

	/* the one-shots, relative and absolute: each read as soon as it fires */
	for (i = 0; i < 1500 && (!tone_at || !trt_at); i++) {
		if (!tone_at && read(tone, &v, 8) == 8 && v == 1)
			tone_at = now();
		if (!trt_at && read(trt, &v, 8) == 8 && v == 1)
			trt_at = now();
		msleep(20);
	}
	expect = armed + 8 + stopped;
	if (tone_at && tone_due)
		tone_at = tone_due;
	if (trt_at && trt_due)
		trt_at = trt_due;
	check(tone_at && tone_at > expect - 1 && tone_at < expect + 2, "one-shot",
	      "fired %.2f s after arming, %.2f s stopped (want about %.2f s)", tone_at - armed,
	      stopped, 8 + stopped);
	expect = armed + 11 + stopped;
	check(trt_at && trt_at > expect - 1 && trt_at < expect + 2, "trt one-shot",
	      "fired %.2f s after arming, %.2f s stopped (want about %.2f s)", trt_at - armed,
	      stopped, 11 + stopped);

	/* cancel-on-set: setting the clock (to its own time) cancels tcs */
	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts))
		say("BAD clock_settime: %s\n", strerror(errno));
	errno = 0;
	n = read(tcs, &v, 8);
	e = errno;
	check(n < 0 && e == ECANCELED, "tcs cancel-on-set", "read after clock_settime: %zd %s (want ECANCELED)",
	      n, errname(e));

	/* inotify: new events reported under the same wd */
	for (i = 0; i < 250 && !exists("w/after"); i++)
		msleep(20);
	msleep(100);
	evs = inotify_events(ino);
	snprintf(want, sizeof(want), "%d:%x:after", wd, IN_CREATE);
	check(!strcmp(evs, want), "inotify", "events '%s' (want only '%s')",
	      evs, want);

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
