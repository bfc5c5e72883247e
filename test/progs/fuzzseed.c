/*
 * fuzzseed [-t N] [-q]: the seed program of the fuzzer (and of a few
 * permission tests).  It prints "ready PID", stops itself with SIGSTOP and,
 * once continued -- or resumed from an image of it -- reads the /proc/self
 * files that the kernel builds from the restored mm and task (auxv,
 * cmdline, environ, stat, maps, smaps...: a fuzzed image puts whatever
 * values passed validation there, and those readers must cope), prints
 * "alive uid=U" and _exit(42)s.  Exit status 42 is how the fuzzer
 * recognises a restore that ran the program correctly.  No libc state is
 * touched after the stop (raw system calls only, on the stack), so a
 * restore that only gets the essentials right still exits 42.
 *
 * -t N  first start N threads (pthreads) that wait forever in FUTEX_WAIT,
 *       each with its own alternate signal stack (and glibc's robust list
 *       and rseq registration), so the image has N+1 threads; "ready PID"
 *       comes once all of them run, and is followed by "tids T1 T2 ...".
 *       SIGSTOP stops the whole group: wait until every thread is in state
 *       T before dumping.  The main thread's exit_group(42) ends them all.
 * -q    also leave pending signals and timers in the image, all blocked or
 *       far in the future so that they change nothing after a restore:
 *       SIGUSR1 (sigqueue) and SIGRTMIN+2 twice pending for the process,
 *       SIGUSR2 (tgkill) for the last thread (or main); POSIX timers
 *       SIGEV_THREAD_ID to the first thread (CLOCK_MONOTONIC, 1 h), SIGEV_SIGNAL
 *       (CLOCK_REALTIME, never armed), SIGEV_NONE (CLOCK_BOOTTIME, 1 h);
 *       ITIMER_REAL at 1 h (SIGALRM blocked); and the last thread (with
 *       -t) sleeps in nanosleep(1 h) instead of the futex, a restart block
 *       (NT_IMGCR_SLEEPS) once stopped.
 * Without options the program is the single-threaded seed it always was.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "common.h"

#define MAXTHR 64

static const char *const self_files[] = {
	"/proc/self/auxv", "/proc/self/cmdline", "/proc/self/environ",
	"/proc/self/stat", "/proc/self/statm", "/proc/self/status",
	"/proc/self/maps", "/proc/self/smaps", "/proc/self/smaps_rollup",
	"/proc/self/numa_maps", "/proc/self/syscall", "/proc/self/personality",
	"/proc/self/wchan", "/proc/self/sched",
};

/* Read every file of self_files to its end; errors do not matter. */
static void read_self(void)
{
	char buf[4096];

	for (unsigned int i = 0; i < sizeof(self_files) / sizeof(self_files[0]); i++) {
		long fd = syscall(SYS_open, self_files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		while (syscall(SYS_read, fd, buf, sizeof(buf)) > 0)
			;
		syscall(SYS_close, fd);
	}
	syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf));
}

static int tids[MAXTHR];
static int nstarted;
static int never;	/* the futex the threads wait on: never woken */
static int sleeper = -1;	/* -q: the thread in nanosleep */

static void *waiter(void *arg)
{
	int i = (int)(long)arg;
	stack_t ss = { .ss_size = 16384 };

	ss.ss_sp = malloc(ss.ss_size);
	if (ss.ss_sp)
		sigaltstack(&ss, NULL);
	tids[i] = (int)syscall(SYS_gettid);
	__atomic_add_fetch(&nstarted, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		struct timespec hour = { 3600, 0 }, rem;

		if (i == sleeper)
			syscall(SYS_nanosleep, &hour, &rem);
		else
			syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	return NULL;
}

static void die(const char *what)
{
	say("fuzzseed: %s failed: %s\n", what, errname(errno));
	exit(1);
}

/* The pending signals and timers of -q (see the top comment). */
static void leave_signals_and_timers(int nthr)
{
	int last = nthr ? tids[nthr - 1] : (int)getpid();
	union sigval v = { .sival_int = 4242 };
	timer_t t;

	if (sigqueue(getpid(), SIGUSR1, v) || sigqueue(getpid(), SIGRTMIN + 2, v) ||
	    sigqueue(getpid(), SIGRTMIN + 2, (union sigval){ .sival_int = 4243 }))
		die("sigqueue");
	if (syscall(SYS_tgkill, getpid(), last, SIGUSR2))
		die("tgkill");

	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN + 3 };
	ev.sigev_value.sival_int = 17;
	ev._sigev_un._tid = nthr ? tids[0] : (int)getpid();
	struct itimerspec hour = { .it_value = { 3600, 0 }, .it_interval = { 3600, 0 } };
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) || timer_settime(t, 0, &hour, NULL))
		die("timer_create (SIGEV_THREAD_ID)");
	ev = (struct sigevent){ .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 4 };
	if (timer_create(CLOCK_REALTIME, &ev, &t))
		die("timer_create (SIGEV_SIGNAL)");
	ev = (struct sigevent){ .sigev_notify = SIGEV_NONE };
	if (timer_create(CLOCK_BOOTTIME, &ev, &t) || timer_settime(t, 0, &hour, NULL))
		die("timer_create (SIGEV_NONE)");
	struct itimerval it = { .it_value = { 3600, 0 }, .it_interval = { 3600, 0 } };
	if (setitimer(ITIMER_REAL, &it, NULL))
		die("setitimer");
}

int main(int argc, char **argv)
{
	int nthr = 0, queue = 0, c;

	while ((c = getopt(argc, argv, "t:q")) != -1) {
		switch (c) {
		case 't': nthr = atoi(optarg); break;
		case 'q': queue = 1; break;
		default:
			outf(2, "usage: fuzzseed [-t NTHREADS] [-q]\n");
			return 64;
		}
	}
	if (nthr < 0 || nthr > MAXTHR) {
		outf(2, "fuzzseed: -t takes 0..%d\n", MAXTHR);
		return 64;
	}
	if (queue) {
		/* blocked in every thread: the threads inherit the mask */
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigaddset(&s, SIGUSR2);
		sigaddset(&s, SIGALRM);
		for (int i = 2; i <= 4; i++)
			sigaddset(&s, SIGRTMIN + i);
		sigprocmask(SIG_BLOCK, &s, NULL);
	}
	if (queue && nthr)
		sleeper = nthr - 1;
	for (int i = 0; i < nthr; i++) {
		pthread_t th;

		errno = pthread_create(&th, NULL, waiter, (void *)(long)i);
		if (errno)
			die("pthread_create");
	}
	while (__atomic_load_n(&nstarted, __ATOMIC_SEQ_CST) < nthr)
		usleep(1000);
	if (queue)
		leave_signals_and_timers(nthr);
	say("ready %d\n", (int)getpid());
	if (nthr) {
		char line[MAXTHR * 12 + 8];
		int n = snprintf(line, sizeof(line), "tids");

		for (int i = 0; i < nthr; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %d", tids[i]);
		say("%s\n", line);
	}
	kill(getpid(), SIGSTOP);
	read_self();
	say("alive uid=%d\n", (int)getuid());
	syscall(SYS_exit_group, 42);
	return 1;
}
