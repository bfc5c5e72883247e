/*
 * ctwork HOSTNAME MONO_OFF BOOT_OFF [NTHREADS]: the workload of t_ct_basic,
 * run as pid 1 of a container (util-linux unshare --fork --pid --uts
 * --time --monotonic MONO_OFF --boottime BOOT_OFF).
 *
 * It forks one child (which checks that its pid and its parent, pid 1,
 * stay the same) and starts NTHREADS threads (default 0); then every
 * 50 ms, in every thread, it reads CLOCK_MONOTONIC and CLOCK_BOOTTIME
 * through the vDSO and through the system call, and checks that
 *   - no clock ever goes back (across the restore too: the clocks go on
 *     from the dump),
 *   - each stays near its offset: MONO_OFF <= monotonic < MONO_OFF + 1 day
 *     (the guest has been up for less than a day), the same for boottime,
 *   - getpid() is 1 and the host name is HOSTNAME.
 * It prints "tick N" every 10 rounds.  SIGUSR1: the child is killed and
 * reaped, and the verdict printed ("ok ..." / "FAIL ..." lines, then
 * "ctwork PASS" or "ctwork FAIL N"); exit 0 or 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

#define NS 1000000000LL

static const char *want_host;
static long long off[2];
static const clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
static const char *const names[2] = { "monotonic", "boottime" };
static volatile sig_atomic_t stop;
static int nfail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long max_step[2];	/* the largest forward step seen (ns) */

static void bad(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	if (nfail++ < 20)
		say("FAIL %s\n", buf);
	pthread_mutex_unlock(&lock);
}

static long long clk(int i, int sys)
{
	struct timespec ts;

	if (sys)
		syscall(SYS_clock_gettime, clocks[i], &ts);
	else
		clock_gettime(clocks[i], &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

/* One round of clock checks; @prev[2][2]: the last value per clock and source. */
static void round_check(long long prev[2][2], const char *who)
{
	for (int i = 0; i < 2; i++)
		for (int sys = 0; sys < 2; sys++) {
			long long v = clk(i, sys);

			if (prev[i][sys] && v < prev[i][sys])
				bad("%s: %s (%s) went back %lld ns: %lld -> %lld", who, names[i],
				    sys ? "syscall" : "vdso", prev[i][sys] - v, prev[i][sys], v);
			if (v < off[i] * NS || v >= (off[i] + 86400) * NS)
				bad("%s: %s (%s) %lld.%09lld s is not near its offset %lld s", who,
				    names[i], sys ? "syscall" : "vdso", v / NS, v % NS, off[i]);
			if (prev[i][sys] && v - prev[i][sys] > max_step[i])
				max_step[i] = v - prev[i][sys];
			prev[i][sys] = v;
		}
}

static void nap(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	nanosleep(&ts, NULL);	/* EINTR (a restore, SIGUSR1): just go on */
}

static void *worker(void *arg)
{
	long long prev[2][2] = { { 0 } };
	char who[32];

	snprintf(who, sizeof(who), "thread %ld", (long)(intptr_t)arg);
	while (!stop) {
		round_check(prev, who);
		nap();
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long long prev[2][2] = { { 0 } };
	int nthreads = argc > 4 ? atoi(argv[4]) : 0, st;
	pthread_t th[16];
	struct utsname u;
	pid_t child, cpid;
	long n = 0;

	if (argc < 4 || nthreads < 0 || nthreads > 16) {
		say("usage: ctwork HOSTNAME MONO_OFF BOOT_OFF [NTHREADS]\n");
		return 2;
	}
	want_host = argv[1];
	off[0] = atoll(argv[2]);
	off[1] = atoll(argv[3]);
	signal(SIGUSR1, on_usr1);
	child = fork();
	if (child < 0) {
		say("ctwork: setup: fork: %s\n", strerror(errno));
		return 2;
	}
	if (!child) {
		cpid = getpid();
		while (getppid() == 1) {
			if (getpid() != cpid)
				bad("child: getpid() %d, was %d", (int)getpid(), (int)cpid);
			nap();
		}
		return 0;
	}
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1))) {
			say("ctwork: setup: pthread_create failed\n");
			return 2;
		}
	say("ctwork start pid=%d child=%d host=%s\n", (int)getpid(), (int)child,
	    uname(&u) ? "?" : u.nodename);
	while (!stop) {
		round_check(prev, "main");
		if (getpid() != 1)
			bad("getpid() is %d, not 1", (int)getpid());
		if (uname(&u) || strcmp(u.nodename, want_host))
			bad("host name %s, not %s", u.nodename, want_host);
		if (++n % 10 == 0)
			say("tick %ld mono=%lld boot=%lld\n", n, clk(0, 0) / NS, clk(1, 0) / NS);
		nap();
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (kill(child, SIGKILL) || waitpid(child, &st, 0) != child)
		bad("child %d: cannot kill and reap it: %s", (int)child, strerror(errno));
	else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		bad("child %d ended with status %#x, before it was killed", (int)child, st);
	say("%s pid=%d host=%s rounds=%ld max_step_ms mono=%lld boot=%lld\n",
	    nfail ? "BAD" : "ok", (int)getpid(), u.nodename, n, max_step[0] / 1000000,
	    max_step[1] / 1000000);
	if (nfail) {
		say("ctwork FAIL %d\n", nfail);
		return 1;
	}
	say("ctwork PASS\n");
	return 0;
}
