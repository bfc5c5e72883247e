/*
 * rbsleep: sleeps that the kernel restarts through its restart block,
 * across a dump and restore (t_sleep_restart).
 *
 *   rbsleep plain MS    no signal handler anywhere.  The main thread and
 *                       four more each make one call, raw (no libc retry):
 *                         nano  nanosleep(MS, &rem)
 *                         mono  clock_nanosleep(MONOTONIC, 0, MS, &rem)
 *                         real  clock_nanosleep(REALTIME, 0, MS, &rem)
 *                         boot  clock_nanosleep(BOOTTIME, 0, MS, NULL)
 *                         abs   clock_nanosleep(REALTIME, TIMER_ABSTIME,
 *                               its start + MS, NULL)
 *                       Each prints "go NAME" before its call and, when
 *                       the call returns, "NAME ret=R errno=E t0=A t1=B
 *                       early=N" (A, B: CLOCK_MONOTONIC ms before and
 *                       after; N: 1 if its own clock says the sleep ended
 *                       before its deadline, measured from its start).
 *                       Then "rbsleep done" (exit 0).  A program without a
 *                       handler never sees EINTR from a sleep.
 *   rbsleep poll MS     no signal handler; polls that the kernel restarts
 *                       through do_restart_poll.  Another thread:
 *                         pollt  poll(empty pipe, 1, MS)
 *                       the main thread:
 *                         pollw  poll(another pipe, 1, -1), which pollt
 *                                writes to once its poll returned
 *                       Each prints "go NAME" and its result as above
 *                       (pollt: early=1 if it ended before MS; pollw's
 *                       ret is 1), then "rbsleep done".
 *   rbsleep poll0 MS    the same, but pollt polls no fd, its array
 *                       pointer just past user space (TASK_SIZE_MAX:
 *                       0xfffffffffff000 with 5-level paging, else
 *                       0x7ffffffff000; never read, and 6.1's
 *                       access_ok(p, 0) takes it): poll(P, 0, MS), P the
 *                       first of those two that poll(P, 0, 0) takes
 *   rbsleep poll0probe 0  prints "poll0probe ptr=P" (that P) or
 *                       "poll0probe none" (the kernel takes neither)
 *   rbsleep futex MS    no signal handler; futex waits with a timeout,
 *                       which the kernel restarts through
 *                       futex_wait_restart.  Another thread:
 *                         futext  FUTEX_WAIT_PRIVATE, MS from now
 *                       the main thread:
 *                         futexw  FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME
 *                                 (shared), until 3 * MS from now on
 *                                 CLOCK_REALTIME; futext wakes it once its
 *                                 wait timed out
 *                       Each prints "go NAME" and "NAME ret=R errno=E
 *                       t0=A t1=B early=N" (futext: ETIMEDOUT, early=1 if
 *                       before MS; futexw: 0), then "rbsleep done".
 *   rbsleep futexb MS   the same with bitsets: futext waits with
 *                       FUTEX_WAIT_BITSET (bitset 0x2, private) until MS
 *                       from now on CLOCK_MONOTONIC, futexw with bitset
 *                       0x4 (CLOCK_REALTIME, 3 * MS); once timed out,
 *                       futext wakes bitset 0x1 (must wake no one:
 *                       "miss=N" in its line, N woken) and then 0x4
 *   rbsleep cpu MS      no signal handler; sleeps on the process's CPU
 *                       clock (posix_cpu_nsleep_restart), MS of CPU time
 *                       each, while thread "spin" burns CPU and sums its
 *                       own thread CPU time in steps (a step backwards,
 *                       as after a restore, counts 0); every 500 ms of it
 *                       it prints "burn N" (ms).  Threads:
 *                         cpurel  clock_nanosleep(PROCESS_CPUTIME, 0, MS, &rem)
 *                         cpupid  the same on clock_getcpuclockid(getpid())
 *                         cpuabs  PROCESS_CPUTIME, TIMER_ABSTIME, its
 *                                 start + MS
 *                       Each prints "NAME ret=R errno=E burned=B": B the
 *                       ms spin burned while it slept, then
 *                       "rbsleep done".
 *   rbsleep cputhr MS   the main thread sleeps MS of CPU time on thread
 *                       spin's clock (pthread_getcpuclockid()), which the
 *                       dump refuses: "go cputhr", then its result
 *   rbsleep alarm MS    as plain, on alarm clocks (CAP_WAKE_ALARM):
 *                         alreal  CLOCK_REALTIME_ALARM, relative, &rem
 *                         alboot  CLOCK_BOOTTIME_ALARM, relative
 *                       ("alarm ret=-1 errno=E" and exit 3 if a first
 *                       0-length sleep fails: no RTC, no capability)
 *   rbsleep handler MS  a SIGUSR1 handler (no SA_RESTART): the main thread
 *                       nanosleep(MS, &rem), once; prints "go nano", then
 *                       "handler ret=R errno=E handled=H rem_ms=M t1=B".
 */
#define _GNU_SOURCE
#include <poll.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "common.h"

static long ms;
static volatile sig_atomic_t handled;

static long long ts_ms(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

static long long clk_ms(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return ts_ms(&t);
}

struct sleeper {
	const char *name;
	clockid_t clock;
	int abs;	/* TIMER_ABSTIME */
	int rmtp;	/* pass &rem */
	int nanosleep;	/* nanosleep() rather than clock_nanosleep() */
};

static const struct sleeper sleepers[] = {
	{ "nano", CLOCK_MONOTONIC, 0, 1, 1 },
	{ "mono", CLOCK_MONOTONIC, 0, 1, 0 },
	{ "real", CLOCK_REALTIME, 0, 1, 0 },
	{ "boot", CLOCK_BOOTTIME, 0, 0, 0 },
	{ "abs", CLOCK_REALTIME, 1, 0, 0 },
};
#define NS (sizeof(sleepers) / sizeof(sleepers[0]))

static void *run(void *arg)
{
	const struct sleeper *s = arg;
	struct timespec req, rem = { 0, 0 }, start;
	long long t0, t1;
	long ret;
	int err;

	clock_gettime(s->clock, &start);
	if (s->abs) {
		req.tv_sec = start.tv_sec + ms / 1000;
		req.tv_nsec = start.tv_nsec + (ms % 1000) * 1000000L;
		if (req.tv_nsec >= 1000000000L) {
			req.tv_sec++;
			req.tv_nsec -= 1000000000L;
		}
	} else {
		req.tv_sec = ms / 1000;
		req.tv_nsec = (ms % 1000) * 1000000L;
	}
	t0 = clk_ms(CLOCK_MONOTONIC);
	say("go %s\n", s->name);
	if (s->nanosleep)
		ret = syscall(SYS_nanosleep, &req, s->rmtp ? &rem : NULL);
	else
		ret = syscall(SYS_clock_nanosleep, s->clock,
			      s->abs ? TIMER_ABSTIME : 0, &req,
			      s->rmtp ? &rem : NULL);
	err = ret ? errno : 0;
	t1 = clk_ms(CLOCK_MONOTONIC);
	say("%s ret=%ld errno=%s t0=%lld t1=%lld early=%d\n", s->name, ret,
	    err ? errname(err) : "0", t0, t1,
	    clk_ms(s->clock) < ts_ms(&start) + ms);
	return NULL;
}

static int pipe_t[2], pipe_w[2];

static int poll0;	/* rbsleep poll0 */

/* TASK_SIZE_MAX with 5-level paging, then 4-level, if poll(P, 0) takes it; or 0 */
static unsigned long poll0_ptr(void)
{
	static const unsigned long p[] = { 0xfffffffffff000UL, 0x7ffffffff000UL };

	for (unsigned int i = 0; i < 2; i++)
		if (!syscall(SYS_poll, (void *)p[i], 0, 0))
			return p[i];
	return 0;
}

/*
 * poll() with @ms (-1: none) on @fd for POLLIN, reported as NAME; @fd -1:
 * on no fd, the array at poll0_ptr().
 */
static void poll_one(const char *name, int fd, long tmo)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long t0, t1;
	long ret;
	int err;

	t0 = clk_ms(CLOCK_MONOTONIC);
	say("go %s\n", name);
	if (fd < 0)
		ret = syscall(SYS_poll, (void *)poll0_ptr(), 0, (int)tmo);
	else
		ret = syscall(SYS_poll, &p, 1, (int)tmo);
	err = ret < 0 ? errno : 0;
	t1 = clk_ms(CLOCK_MONOTONIC);
	say("%s ret=%ld errno=%s t0=%lld t1=%lld early=%d\n", name, ret,
	    err ? errname(err) : "0", t0, t1, tmo >= 0 && t1 < t0 + tmo);
}

static void *pollt(void *arg)
{
	(void)arg;
	poll_one("pollt", poll0 ? -1 : pipe_t[0], ms);
	if (write(pipe_w[1], "x", 1) != 1)
		return NULL;
	return NULL;
}

static unsigned int word_t, word_w;

static void futex_report(const char *name, long ret, int err, long long t0,
			 long tmo)
{
	long long t1 = clk_ms(CLOCK_MONOTONIC);

	say("%s ret=%ld errno=%s t0=%lld t1=%lld early=%d\n", name, ret,
	    err ? errname(err) : "0", t0, t1, tmo >= 0 && t1 < t0 + tmo);
}

static void *futext(void *arg)
{
	struct timespec rel = { ms / 1000, (ms % 1000) * 1000000L };
	long long t0 = clk_ms(CLOCK_MONOTONIC);
	long ret;

	(void)arg;
	say("go futext\n");
	ret = syscall(SYS_futex, &word_t, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
	futex_report("futext", ret, ret ? errno : 0, t0, ms);
	__atomic_store_n(&word_w, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &word_w, FUTEX_WAKE, 1, NULL, NULL, 0);
	return NULL;
}

static void futexw(void)
{
	struct timespec end;
	long long t0 = clk_ms(CLOCK_MONOTONIC);
	long ret;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 3 * ms / 1000;
	say("go futexw\n");
	ret = syscall(SYS_futex, &word_w, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME,
		      0, &end, NULL, FUTEX_BITSET_MATCH_ANY);
	futex_report("futexw", ret, ret ? errno : 0, t0, -1);
}

static void *futextb(void *arg)
{
	struct timespec end;
	long long t0 = clk_ms(CLOCK_MONOTONIC);
	long ret, miss;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	say("go futext\n");
	ret = syscall(SYS_futex, &word_t, FUTEX_WAIT_BITSET_PRIVATE, 0, &end,
		      NULL, 0x2);
	{
		int err = ret ? errno : 0;
		long long t1 = clk_ms(CLOCK_MONOTONIC);

		miss = syscall(SYS_futex, &word_w, FUTEX_WAKE_BITSET, 1, NULL,
			       NULL, 0x1);
		say("futext ret=%ld errno=%s miss=%ld t0=%lld t1=%lld early=%d\n",
		    ret, err ? errname(err) : "0", miss, t0, t1, t1 < t0 + ms);
	}
	__atomic_store_n(&word_w, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &word_w, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0x4);
	return NULL;
}

static void futexwb(void)
{
	struct timespec end;
	long long t0 = clk_ms(CLOCK_MONOTONIC);
	long ret;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 3 * ms / 1000;
	say("go futexw\n");
	ret = syscall(SYS_futex, &word_w, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME,
		      0, &end, NULL, 0x4);
	futex_report("futexw", ret, ret ? errno : 0, t0, -1);
}

/* rbsleep cpu: what spin has burned (ns), summed from its own clock */
static long long burned;
static int cpu_done;

static void *spin(void *arg)
{
	long long prev = -1, next = 500;

	(void)arg;
	while (!__atomic_load_n(&cpu_done, __ATOMIC_RELAXED)) {
		struct timespec t;
		long long now, d;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		now = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
		d = now - prev;
		/*
		 * a restored thread's clock starts again: count no step back;
		 * a long step forward (a guest's clock jumping while its CPU
		 * was away) is CPU time to the kernel's clocks too
		 */
		if (prev >= 0 && d > 0)
			__atomic_add_fetch(&burned, d, __ATOMIC_SEQ_CST);
		prev = now;
		if (__atomic_load_n(&burned, __ATOMIC_SEQ_CST) / 1000000 >= next) {
			say("burn %lld\n", next);
			next += 500;
		}
	}
	return NULL;
}

struct cpusleeper {
	const char *name;
	int pidclock;
	int abs;
};

static const struct cpusleeper cpusleepers[] = {
	{ "cpurel", 0, 0 },
	{ "cpupid", 1, 0 },
	{ "cpuabs", 0, 1 },
};
#define NCPU (sizeof(cpusleepers) / sizeof(cpusleepers[0]))

static void *cpu_run(void *arg)
{
	const struct cpusleeper *c = arg;
	struct timespec req, rem = { 0, 0 };
	clockid_t clk = CLOCK_PROCESS_CPUTIME_ID;
	long long b0;
	long ret;
	int err;

	if (c->pidclock && clock_getcpuclockid(getpid(), &clk))
		return NULL;
	if (c->abs) {
		clock_gettime(clk, &req);
		req.tv_sec += ms / 1000;
		req.tv_nsec += (ms % 1000) * 1000000L;
		if (req.tv_nsec >= 1000000000L) {
			req.tv_sec++;
			req.tv_nsec -= 1000000000L;
		}
	} else {
		req.tv_sec = ms / 1000;
		req.tv_nsec = (ms % 1000) * 1000000L;
	}
	b0 = __atomic_load_n(&burned, __ATOMIC_SEQ_CST);
	say("go %s\n", c->name);
	ret = syscall(SYS_clock_nanosleep, clk, c->abs ? TIMER_ABSTIME : 0,
		      &req, c->abs ? NULL : &rem);
	err = ret ? errno : 0;
	say("%s ret=%ld errno=%s burned=%lld\n", c->name, ret,
	    err ? errname(err) : "0",
	    (__atomic_load_n(&burned, __ATOMIC_SEQ_CST) - b0) / 1000000);
	return NULL;
}

static const struct sleeper alarms[] = {
	{ "alreal", CLOCK_REALTIME_ALARM, 0, 1, 0 },
	{ "alboot", CLOCK_BOOTTIME_ALARM, 0, 0, 0 },
};

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

int main(int argc, char **argv)
{
	pthread_t th[NS];
	unsigned int i;

	if (argc != 3)
		return 2;
	ms = atol(argv[2]);
	if (!strcmp(argv[1], "handler")) {
		struct sigaction sa;
		struct timespec req = { ms / 1000, (ms % 1000) * 1000000L };
		struct timespec rem = { 0, 0 };
		long ret;
		int err;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		say("go nano\n");
		ret = syscall(SYS_nanosleep, &req, &rem);
		err = ret ? errno : 0;
		say("handler ret=%ld errno=%s handled=%d rem_ms=%lld t1=%lld\n",
		    ret, err ? errname(err) : "0", (int)handled, ts_ms(&rem),
		    clk_ms(CLOCK_MONOTONIC));
		return 0;
	}
	if (!strcmp(argv[1], "futex")) {
		if (pthread_create(&th[0], NULL, futext, NULL))
			return 1;
		futexw();
		pthread_join(th[0], NULL);
		say("rbsleep done\n");
		return 0;
	}
	if (!strcmp(argv[1], "futexb")) {
		if (pthread_create(&th[0], NULL, futextb, NULL))
			return 1;
		futexwb();
		pthread_join(th[0], NULL);
		say("rbsleep done\n");
		return 0;
	}
	if (!strcmp(argv[1], "cpu")) {
		pthread_t sp;

		if (pthread_create(&sp, NULL, spin, NULL))
			return 1;
		for (i = 1; i < NCPU; i++)
			if (pthread_create(&th[i], NULL, cpu_run,
					   (void *)&cpusleepers[i]))
				return 1;
		cpu_run((void *)&cpusleepers[0]);
		for (i = 1; i < NCPU; i++)
			pthread_join(th[i], NULL);
		__atomic_store_n(&cpu_done, 1, __ATOMIC_SEQ_CST);
		pthread_join(sp, NULL);
		say("rbsleep done\n");
		return 0;
	}
	if (!strcmp(argv[1], "cputhr")) {
		struct timespec req = { ms / 1000, (ms % 1000) * 1000000L };
		pthread_t sp;
		clockid_t clk;
		long ret;

		if (pthread_create(&sp, NULL, spin, NULL) ||
		    pthread_getcpuclockid(sp, &clk))
			return 1;
		say("go cputhr\n");
		ret = syscall(SYS_clock_nanosleep, clk, 0, &req, NULL);
		say("cputhr ret=%ld errno=%s\n", ret, ret ? errname(errno) : "0");
		__atomic_store_n(&cpu_done, 1, __ATOMIC_SEQ_CST);
		pthread_join(sp, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "alarm")) {
		struct timespec z = { 0, 0 };

		if (syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME_ALARM, 0, &z,
			    NULL)) {
			say("alarm ret=-1 errno=%s\n", errname(errno));
			return 3;
		}
		if (pthread_create(&th[1], NULL, run, (void *)&alarms[1]))
			return 1;
		run((void *)&alarms[0]);
		pthread_join(th[1], NULL);
		say("rbsleep done\n");
		return 0;
	}
	if (!strcmp(argv[1], "poll0probe")) {
		unsigned long p = poll0_ptr();

		if (p)
			say("poll0probe ptr=%#lx\n", p);
		else
			say("poll0probe none\n");
		return 0;
	}
	poll0 = !strcmp(argv[1], "poll0");
	if (poll0 || !strcmp(argv[1], "poll")) {
		if (pipe(pipe_t) || pipe(pipe_w) ||
		    pthread_create(&th[0], NULL, pollt, NULL))
			return 1;
		poll_one("pollw", pipe_w[0], -1);
		pthread_join(th[0], NULL);
		say("rbsleep done\n");
		return 0;
	}
	if (strcmp(argv[1], "plain"))
		return 2;
	for (i = 1; i < NS; i++)
		if (pthread_create(&th[i], NULL, run, (void *)&sleepers[i]))
			return 1;
	run((void *)&sleepers[0]);
	for (i = 1; i < NS; i++)
		pthread_join(th[i], NULL);
	say("rbsleep done\n");
	return 0;
}
