/*
 * Process-level state that a restore once got silently wrong
 * (test/guest/trees/t_tree_silent.sh).  Every mode prints "ready" lines, waits
 * for SIGUSR1 (the dump and restore happen meanwhile), checks its own
 * state and prints "FAIL ..." lines and then "silent PASS" or
 * "silent FAILED".  Output goes to stdout, which the test opens O_APPEND.
 *
 *   threadfork  the main thread makes a thread, which sets its __thread
 *               variables and errno and forks a child ("child PID"); the
 *               child keeps using them (and pthread_self(), its FS base,
 *               glibc's tid of it through pthread_kill, malloc, rseq) in
 *               a loop and checks them, before and after the restore
 *   files       clone(CLONE_FILES) without CLONE_VM ("child PID"): the two
 *               share one fd table
 *   fs          clone(CLONE_FS) without CLONE_VM: one cwd/root/umask
 *   subreaper   forks a child, then sets PR_SET_CHILD_SUBREAPER ("child
 *               PID"); on SIGUSR1 the child forks a grandchild and exits:
 *               the grandchild must be reparented to us, and we reap it
 *   memfd       a memfd with fchmod 0640 (and, as root, fchown 1234:4321)
 *               ("fd N")
 *   pty         a pty pair whose slave was chown'ed 1234:5 and chmod'ed
 *               0620, as login programs do ("master N slave M")
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <asm/prctl.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t go, usr2_tid;
static int fails;

static void on_usr1(int s) { (void)s; go = 1; }
static void on_usr2(int s) { (void)s; usr2_tid = (pid_t)syscall(SYS_gettid); }

__attribute__((format(printf, 2, 3)))
static void check(int ok, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	if (ok)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("FAIL pid %d: %s\n", getpid(), buf);
	fails++;
}

static void verdict(void)
{
	say(fails ? "silent FAILED\n" : "silent PASS\n");
}

static void wait_go(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
}

/* ---- threadfork ---- */
static __thread long tls_a = 11;
static __thread char tls_buf[64] = "initial";
static pthread_t saved_self;
static pid_t child;
static unsigned long saved_fs;
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static unsigned long get_fs(void)
{
	unsigned long fs = 0;

	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	return fs;
}

/* one round of the child's checks; @round changes the values */
static void tls_round(long round, int quiet)
{
	int f0 = fails;
	char want[64];
	void *p;

	check(tls_a == 1000 + round - 1, "round %ld: __thread tls_a %ld, want %ld", round, tls_a,
	      1000 + round - 1);
	snprintf(want, sizeof(want), "round %ld", round - 1);
	check(!strcmp(tls_buf, want), "round %ld: __thread tls_buf '%.20s', want '%s'", round,
	      tls_buf, want);
	check(errno == 5000 + round - 1, "round %ld: errno %d, want %ld", round, errno,
	      5000 + round - 1);
	check(pthread_equal(pthread_self(), saved_self), "round %ld: pthread_self() %#lx, was %#lx",
	      round, (unsigned long)pthread_self(), (unsigned long)saved_self);
	check(get_fs() == saved_fs, "round %ld: FS base %#lx, was %#lx", round, get_fs(), saved_fs);
	check(get_fs() == (unsigned long)pthread_self(), "round %ld: FS base %#lx, pthread_self %#lx",
	      round, get_fs(), (unsigned long)pthread_self());
	usr2_tid = 0;
	check(pthread_kill(pthread_self(), SIGUSR2) == 0, "round %ld: pthread_kill(self): %s",
	      round, strerror(errno));
	check(usr2_tid == getpid(), "round %ld: pthread_kill(self) ran the handler in tid %d, want %d",
	      round, (int)usr2_tid, getpid());
	check(syscall(SYS_gettid) == getpid(), "round %ld: gettid %ld, pid %d", round,
	      syscall(SYS_gettid), getpid());
	p = malloc(100 + round % 1000);
	check(p != NULL, "round %ld: malloc", round);
	free(p);
	if (&__rseq_size && __rseq_size) {
		volatile int32_t *cpu = (int32_t *)((char *)__builtin_thread_pointer() +
						    __rseq_offset + 4);
		check(*cpu >= 0, "round %ld: rseq cpu_id %d (not registered)", round, (int)*cpu);
	}
	tls_a = 1000 + round;
	snprintf(tls_buf, sizeof(tls_buf), "round %ld", round);
	errno = 5000 + round;
	if (!quiet && fails == f0 && round % 100 == 0)
		say("child round %ld ok\n", round);
}

static int fork_busy, fork_mt;
static __thread long tls_spin;
static long ct_spins;

/* a thread of the child: its own __thread values, checked until SIGUSR1 */
static void *child_thread(void *arg)
{
	long n = 0;

	(void)arg;
	tls_a = -5;
	strcpy(tls_buf, "child thread");
	errno = 77;
	for (; !go; n++) {
		check(tls_a == -5 - n && !strcmp(tls_buf, "child thread") && errno == 77,
		      "child thread %ld: tls_a %ld '%.20s' errno %d", n, tls_a, tls_buf, errno);
		if (fails)
			break;
		tls_a--;
		for (volatile long i = 0; i < 100000; i++)
			tls_spin++;
	}
	ct_spins = n;
	return NULL;
}

static void *forker(void *arg)
{
	pid_t c;
	pthread_t ct;

	(void)arg;
	tls_a = 999;
	strcpy(tls_buf, "round 0");
	errno = 5000;
	c = fork();
	if (c == 0) {
		long round = 1;

		tls_a = 1000;
		errno = 5000;
		saved_self = pthread_self();
		saved_fs = get_fs();
		say("child %d fs %#lx self %#lx tls %p\n", getpid(), saved_fs,
		    (unsigned long)saved_self, (void *)&tls_a);
		if (fork_mt && pthread_create(&ct, NULL, child_thread, NULL))
			check(0, "child: pthread_create");
		for (; !go; round++) {
			tls_round(round, 1);
			if (round == 50)
				say("child looping\n");
			if (fork_busy) {
				/* in user space, no syscall, most of the time */
				for (volatile long i = 0; i < 200000; i++)
					tls_spin++;
				continue;
			}
			{
				int e = errno;	/* a restarted sleep may say EINTR */

				usleep(2000);
				errno = e;
			}
		}
		if (fork_mt) {
			pthread_join(ct, NULL);
			say("child thread spins %ld\n", ct_spins);
		}
		for (long end = round + 300; round < end; round++)
			tls_round(round, 0);
		say("child rounds %ld\n", round);
		verdict();
		_exit(fails ? 1 : 0);
	}
	if (c < 0) {
		say("FAIL fork: %s\n", strerror(errno));
		return NULL;
	}
	check(tls_a == 999, "forker thread: tls_a %ld", tls_a);
	child = c;
	return NULL;	/* as a pool's thread: its stack goes to glibc's cache */
}

static volatile int child_done;

/* the next thread: glibc gives it the forker's cached stack (and TLS) */
static void *reuser(void *arg)
{
	(void)arg;
	tls_a = 555;
	strcpy(tls_buf, "the next thread");
	errno = 444;
	say("next thread tls %p\n", (void *)&tls_a);
	while (!child_done)
		usleep(5000);
	check(tls_a == 555 && !strcmp(tls_buf, "the next thread"), "next thread: tls_a %ld '%s'",
	      tls_a, tls_buf);
	return NULL;
}

static int threadfork(void)
{
	pthread_t t;
	int st;

	tls_a = 7;
	if (pthread_create(&t, NULL, forker, NULL))
		return say("FAIL pthread_create\n"), 1;
	pthread_join(t, NULL);
	if (child <= 0)
		return 1;
	if (pthread_create(&t, NULL, reuser, NULL))
		return say("FAIL pthread_create\n"), 1;
	say("ready\n");
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's status %#x", st);
	child_done = 1;
	pthread_join(t, NULL);
	check(tls_a == 7, "main thread: tls_a %ld", tls_a);
	say("parent done\n");
	verdict();
	return fails != 0;
}

/* ---- files, fs ---- */
static char stack[256 * 1024];

static int share_child(void *arg)
{
	int fl = *(int *)arg;

	say("child %d\n", getpid());
	wait_go();
	/* what the parent did just before waking us is ours too */
	if (fl == CLONE_FILES)
		check(fcntl(100, F_GETFD) >= 0, "child: fd 100 the parent opened: %s",
		      strerror(errno));
	else {
		mode_t m = umask(0);

		check(m == 027, "child: umask %o, the parent set 027", m);
	}
	_exit(fails != 0);
}

static int share(int flag)
{
	pid_t c;
	int st, fl = flag, fd;

	c = clone(share_child, stack + sizeof(stack), flag | SIGCHLD, &fl);
	if (c < 0)
		return say("FAIL clone: %s\n", strerror(errno)), 1;
	usleep(100000);
	say("ready\n");
	wait_go();
	if (flag == CLONE_FILES) {
		/* an fd opened now is in the shared table */
		fd = open("/dev/null", O_RDONLY);
		check(fd >= 0 && dup2(fd, 100) == 100, "open: %s", strerror(errno));
	} else {
		umask(027);
	}
	kill(c, SIGUSR1);
	waitpid(c, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's status %#x", st);
	verdict();
	return fails != 0;
}

/* ---- subreaper ---- */
/* the grandchild: waits until its parent @c is gone, says who its parent is */
static void grandchild(pid_t c, int w)
{
	int n;

	for (n = 0; getppid() == c && n < 6000; n++)
		usleep(10000);
	say("grandchild %d ppid %d\n", getpid(), getppid());
	dprintf(w, "%d\n", getppid());
	_exit(0);
}

/* @pre: the grandchild is forked at once (before the flag), else on SIGUSR1 */
static int subreaper(int pre)
{
	pid_t c, g, w;
	int st, p[2], n;

	if (pipe(p))
		return 1;
	c = fork();
	if (c == 0) {
		close(p[0]);
		pid_t me = getpid();

		if (!pre)
			wait_go();
		g = fork();
		if (g == 0) {
			if (pre)
				usleep(200000);	/* until the test waits in child_of */
			grandchild(me, p[1]);	/* (getppid() may be after our exit) */
		}
		say("grandchild pid %d\n", g);
		if (pre)
			wait_go();
		_exit(0);
	}
	close(p[1]);
	usleep(pre ? 300000 : 50000);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return say("FAIL PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno)), 1;
	say("child %d\n", c);
	say("ready\n");
	wait_go();
	kill(c, SIGUSR1);
	while ((w = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	check(w == c, "waitpid child %d: %d %s", c, w, strerror(errno));
	{
		char buf[32] = "";

		n = read(p[0], buf, sizeof(buf) - 1);
		check(n > 0 && atoi(buf) == getpid(), "the grandchild's ppid is %s, want %d", buf,
		      getpid());
	}
	alarm(10);
	while ((w = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
		;
	check(w > 0 && w != c, "reaping the orphaned grandchild: %d %s", w,
	      w < 0 ? strerror(errno) : "");
	verdict();
	return fails != 0;
}

/* ---- memfd ---- */
static int memfd(void)
{
	int fd = memfd_create("modes", MFD_CLOEXEC);
	int root = geteuid() == 0;
	struct stat st;

	if (fd < 0 || write(fd, "data", 4) != 4 || fchmod(fd, 0640) ||
	    (root && fchown(fd, 1234, 4321)))
		return say("FAIL memfd setup: %s\n", strerror(errno)), 1;
	say("fd %d\n", fd);
	say("ready\n");
	wait_go();
	check(!fstat(fd, &st), "fstat: %s", strerror(errno));
	check((st.st_mode & 07777) == 0640, "memfd mode %o, want 640", st.st_mode & 07777);
	if (root)
		check(st.st_uid == 1234 && st.st_gid == 4321, "memfd owner %u:%u, want 1234:4321",
		      st.st_uid, st.st_gid);
	else
		check(st.st_uid == geteuid(), "memfd owner %u, want %u", st.st_uid, geteuid());
	verdict();
	return fails != 0;
}

/* ---- pty ---- */
static int pty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;
	struct stat st;

	if (m < 0 || grantpt(m) || unlockpt(m))
		return say("FAIL ptmx: %s\n", strerror(errno)), 1;
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0 || fchown(s, 1234, 5) || fchmod(s, 0620))
		return say("FAIL slave: %s\n", strerror(errno)), 1;
	say("master %d slave %d\n", m, s);
	say("ready\n");
	wait_go();
	check(!fstat(s, &st), "fstat: %s", strerror(errno));
	check((st.st_mode & 07777) == 0620 && st.st_uid == 1234 && st.st_gid == 5,
	      "slave mode %o owner %u:%u, want 620 1234:5", st.st_mode & 07777, st.st_uid,
	      st.st_gid);
	check(write(s, "x\n", 2) == 2, "write to the slave: %s", strerror(errno));
	verdict();
	return fails != 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	/*
	 * SA_NODEFER: the child signals itself every round; without it the
	 * handler runs with SIGUSR2 blocked, and the state check would see
	 * SigBlk differ by where the freeze caught it
	 */
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_flags = 0;
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "threadfork"))
		return threadfork();
	if (!strcmp(argv[1], "threadfork-busy"))
		return fork_busy = 1, threadfork();
	if (!strcmp(argv[1], "threadfork-mt"))
		return fork_mt = 1, threadfork();
	if (!strcmp(argv[1], "files"))
		return share(CLONE_FILES);
	if (!strcmp(argv[1], "fs"))
		return share(CLONE_FS);
	if (!strcmp(argv[1], "subreaper"))
		return subreaper(0);
	if (!strcmp(argv[1], "subreaper-pre"))
		return subreaper(1);
	if (!strcmp(argv[1], "memfd"))
		return memfd();
	if (!strcmp(argv[1], "pty"))
		return pty();
	return 2;
}
