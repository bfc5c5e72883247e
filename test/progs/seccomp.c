/*
 * seccomp MODE: a process under seccomp that checks, every 100 ms, that its
 * sandbox still holds.  Sets no_new_privs first (so an ordinary user may
 * install filters).  The filter F denies uname() with EXDEV; each ticking
 * thread prints "TID tick N ok" if uname() still fails with EXDEV (else
 * "TID tick N BAD ..."), after "ready" once everything is set up.
 *   strict    SECCOMP_SET_MODE_STRICT: then for every byte read on stdin,
 *             writes "echo C" (only read/write are allowed); exit on EOF;
 *             on a 'k' calls getpid(), which must kill it, first
 *   filter    F, then an allow-all filter with SECCOMP_FILTER_FLAG_LOG
 *             (a chain of 2)
 *   tsync N   N threads started first, then F with SECCOMP_FILTER_FLAG_TSYNC
 *             by main: every thread ticks
 *   child     F, then fork(): parent and child both tick
 *   noexec    F and a filter denying execve() with EPERM (checked too)
 *   listener  F with SECCOMP_FILTER_FLAG_NEW_LISTENER (its fd kept open)
 *   perthread N  F in main, then N threads, thread i adding its own filter
 *             denying getpriority() with errno 10+i (checked too: "TID
 *             tick N ok" only if both deny); different chains per thread
 *   childown  F, then fork(): the child adds its own filter denying
 *             getpriority() with errno 10 (checked too)
 *   killer    F and a filter killing the process (SECCOMP_RET_KILL_PROCESS)
 *             on getppid(), with FLAG_LOG; SIGUSR1 makes main call getppid()
 *             (it prints "alive after getppid" if it survives)
 *   partial   filters only some threads share: F in main, thread A, then
 *             G (getpriority() fails with errno 10) in main, thread B,
 *             then thread C made by A, then an allow-all filter H in main:
 *             main F G H, A F, B F G (G shared with main), C F; main and B
 *             check G too.  A TSYNC by main succeeds (every other
 *             thread's filter is one of main's)
 * In every filter mode SIGUSR2 makes main add an allow-all filter with
 * SECCOMP_FILTER_FLAG_TSYNC and print "tsync ok" or "tsync BAD errno=E"
 * (TSYNC fails if another thread's chain does not share main's filters).
 *   strictpair  a child in strict mode reads bytes from a pipe its parent
 *             fills (an 'x' every 100 ms) and prints "CPID echo N" for the
 *             Nth; the parent prints "PID tick N ok" and, on SIGUSR1, sends
 *             a 'k', on which the child calls getpid(): strict mode must
 *             kill it (SIGKILL) before it prints "CPID alive after getpid".
 *             The parent prints "child killed by signal S" (or "child
 *             exited S") once it has reaped it.
 *   strictthread  the same with a thread instead of a child: the thread is
 *             in strict mode, the main thread is not (it ticks); on
 *             SIGUSR1 the thread's getpid() kills the thread (strict mode
 *             ends only the offending thread: do_exit(SIGKILL)).
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <signal.h>

#include "common.h"

#define MAXT 16

static long sys_seccomp(unsigned int op, unsigned int flags, void *args)
{
	return syscall(SYS_seccomp, op, flags, args);
}

/* A filter returning @ret for syscall @nr, allowing everything else. */
static long deny(int nr, unsigned int ret, unsigned int flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ret),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static long allow_all(unsigned int flags)
{
	struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &f };

	return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int noexec;
static volatile int go;
static __thread int own_err;	/* getpriority() must fail with it */
static volatile sig_atomic_t usr1, usr2;
static int killer;

static void *ticker(void *arg)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	struct utsname u;
	char *av[] = { "/bin/true", NULL };

	(void)arg;
	while (!go)
		nanosleep(&ts, NULL);
	for (long n = 1;; n++) {
		int r = uname(&u), e = errno;

		if (gettid() == getpid() && usr2) {
			usr2 = 0;
			if (allow_all(SECCOMP_FILTER_FLAG_TSYNC))
				say("tsync BAD errno=%d\n", errno);
			else
				say("tsync ok\n");
		}
		if (gettid() == getpid() && killer && usr1) {
			syscall(SYS_getppid);
			say("alive after getppid\n");
		}
		if (r == 0 || e != EXDEV) {
			say("%d tick %ld BAD uname=%d errno=%d\n", gettid(), n, r, e);
		} else if (own_err && (syscall(SYS_getpriority, 0, 0) != -1 || errno != own_err)) {
			say("%d tick %ld BAD getpriority errno=%d want %d\n", gettid(), n, errno, own_err);
		} else if (noexec && (execve(av[0], av, av + 1), errno != EPERM)) {
			say("%d tick %ld BAD execve errno=%d\n", gettid(), n, errno);
		} else {
			say("%d tick %ld ok\n", gettid(), n);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void die(const char *what)
{
	say("seccomp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

/* A thread of perthread: its own filter on top of main's, then ticks. */
static void *own_ticker(void *arg)
{
	own_err = 10 + (int)(long)arg;
	if (deny(SYS_getpriority, SECCOMP_RET_ERRNO | own_err, 0))
		die("own filter");
	return ticker(NULL);
}

static volatile int made_b, made_c;

/* partial: thread B, under main's F and G */
static void *partial_b(void *arg)
{
	(void)arg;
	own_err = 10;
	return ticker(NULL);
}

/* partial: thread A, under F only; makes C once main has made B */
static void *partial_a(void *arg)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pthread_t th;

	(void)arg;
	while (!made_b)
		nanosleep(&ts, NULL);
	if (pthread_create(&th, NULL, ticker, NULL))
		die("pthread_create C");
	made_c = 1;
	return ticker(NULL);
}

/* Only read() and write() from the prctl on: no stdio, no getpid(). */
static void strict_child(int in)
{
	char c, line[64], alive[64];
	int len, alen;
	unsigned long n = 0;

	len = snprintf(line, sizeof(line), "%d echo ", gettid());
	alen = snprintf(alive, sizeof(alive), "%d alive after getpid\n", gettid());
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		die("strict");
	while (read(in, &c, 1) == 1) {
		char num[24];
		int k = sizeof(num);

		if (c == 'k') {
			syscall(SYS_getpid);
			write(1, alive, alen);
			continue;
		}
		n++;
		for (unsigned long v = n; k == sizeof(num) || v; v /= 10)
			num[--k] = '0' + v % 10;
		write(1, line, len);
		write(1, num + k, sizeof(num) - k);
		write(1, "\n", 1);
	}
	syscall(SYS_exit, 0);
}

static int thread_pipe;

static void *strict_thread(void *arg)
{
	(void)arg;
	strict_child(thread_pipe);
	return NULL;
}

static __attribute__((noreturn)) void strictthread(void)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	pthread_t th;
	int p[2];

	signal(SIGUSR1, on_usr1);
	if (pipe(p))
		die("pipe");
	thread_pipe = p[0];
	if (pthread_create(&th, NULL, strict_thread, NULL))
		die("pthread_create");
	say("ready\n");
	for (long n = 1;; n++) {
		if (write(p[1], usr1 ? "k" : "x", 1) != 1)
			die("write");
		usr1 = 0;
		say("%d tick %ld ok\n", getpid(), n);
		nanosleep(&ts, NULL);
	}
}

static int strictpair(void)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int p[2], st;
	pid_t kid;

	signal(SIGUSR1, on_usr1);
	if (pipe(p))
		die("pipe");
	kid = fork();
	if (kid < 0)
		die("fork");
	if (!kid) {
		close(p[1]);
		strict_child(p[0]);
	}
	close(p[0]);
	say("ready\n");
	for (long n = 1;; n++) {
		if (waitpid(kid, &st, WNOHANG) == kid) {
			if (WIFSIGNALED(st))
				say("child killed by signal %d\n", WTERMSIG(st));
			else
				say("child exited %d\n", WEXITSTATUS(st));
			return 0;
		}
		if (write(p[1], usr1 ? "k" : "x", 1) != 1)
			die("write");
		usr1 = 0;
		say("%d tick %ld ok\n", getpid(), n);
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t th;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("no_new_privs");
	if (!strcmp(mode, "strictpair"))
		return strictpair();
	if (!strcmp(mode, "strictthread"))
		strictthread();
	if (!strcmp(mode, "strict")) {
		char c, line[] = "echo ?\n";

		say("ready\n");
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			die("strict");
		while (read(0, &c, 1) == 1) {
			if (c == 'k') {
				syscall(SYS_getpid);	/* strict mode kills */
				write(1, "alive after getpid\n", 19);
			}
			line[5] = c;
			write(1, line, sizeof(line) - 1);
		}
		syscall(SYS_exit, 0);
	}
	if (!strcmp(mode, "filter")) {
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0) ||
		    allow_all(SECCOMP_FILTER_FLAG_LOG))
			die("filter");
	} else if (!strcmp(mode, "tsync")) {
		int n = argc > 2 ? atoi(argv[2]) : 2;

		for (int i = 0; i < n && i < MAXT; i++)
			if (pthread_create(&th, NULL, ticker, NULL))
				die("pthread_create");
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV,
			 SECCOMP_FILTER_FLAG_TSYNC))
			die("tsync filter");
	} else if (!strcmp(mode, "child")) {
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0))
			die("filter");
		if (fork() < 0)
			die("fork");
	} else if (!strcmp(mode, "noexec")) {
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0) ||
		    deny(SYS_execve, SECCOMP_RET_ERRNO | EPERM, 0))
			die("filter");
		noexec = 1;
	} else if (!strcmp(mode, "perthread")) {
		int n = argc > 2 ? atoi(argv[2]) : 2;

		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0))
			die("filter");
		for (long i = 0; i < n && i < MAXT; i++)
			if (pthread_create(&th, NULL, own_ticker, (void *)i))
				die("pthread_create");
	} else if (!strcmp(mode, "partial")) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0))
			die("filter F");
		if (pthread_create(&th, NULL, partial_a, NULL))
			die("pthread_create A");
		own_err = 10;
		if (deny(SYS_getpriority, SECCOMP_RET_ERRNO | own_err, 0))
			die("filter G");
		if (pthread_create(&th, NULL, partial_b, NULL))
			die("pthread_create B");
		made_b = 1;
		while (!made_c)
			nanosleep(&ts, NULL);
		if (allow_all(0))
			die("filter H");
	} else if (!strcmp(mode, "childown")) {
		pid_t kid;

		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0))
			die("filter");
		kid = fork();
		if (kid < 0)
			die("fork");
		if (!kid) {
			own_err = 10;
			if (deny(SYS_getpriority, SECCOMP_RET_ERRNO | own_err, 0))
				die("own filter");
		}
	} else if (!strcmp(mode, "killer")) {
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV, 0) ||
		    deny(SYS_getppid, SECCOMP_RET_KILL_PROCESS, SECCOMP_FILTER_FLAG_LOG))
			die("filter");
		killer = 1;
	} else if (!strcmp(mode, "listener")) {
		if (deny(SYS_uname, SECCOMP_RET_ERRNO | EXDEV,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER) < 0)
			die("listener filter");
	} else {
		say("usage: seccomp strict|filter|tsync N|child|noexec|listener|perthread N|childown|killer|partial\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	say("ready\n");
	go = 1;
	ticker(NULL);
	return 0;
}
