/*
 * mtblock: threads blocked in system calls across a dump and restore
 * (t_threads_block).
 *
 *   mtblock fds PROG [ARGS...]  set up the fds below, then execvp PROG
 *   mtblock run SLEEP_MS        the test process (started through "fds")
 *
 * An image carries no file descriptors: the restored process has those of
 * the process that executes the image.  So the original and the restore
 * both run under "mtblock fds", which builds the same layout each time:
 * four pipes at 10/11 (pipe), 12/13 (poll), 14/15 (poll_inf), 16/17
 * (epoll) -- read end, write end -- and an epoll instance at 18 watching
 * fd 16 for EPOLLIN (data.fd = 16).  "mtblock fds mtblock run 30000" runs
 * the test; "mtblock fds ./img" restores it.
 *
 * run: main blocks SIGUSR1 (every thread inherits it) and starts one thread
 * per case below, one after the other: each records gettid(), names
 * itself "b-NAME", blocks SIGUSR1 + SIGRTMIN+1+i (its own mask), sets its
 * own sigaltstack, records its robust list head and clear_child_tid
 * pointer, prepares, prints "blocked NAME tid T" and blocks in:
 *
 *   cond       pthread_cond_wait                        futex, no timeout
 *   futex      FUTEX_WAIT_PRIVATE, no timeout           futex
 *   futex_to   FUTEX_WAIT_BITSET, absolute, +600 s       futex (restart block)
 *   mholder    holds mutex M, waits on a futex           futex
 *   mutex      pthread_mutex_lock(M)                     futex
 *   pipe       read(10)                                  read
 *   poll       poll(12, 600 s)                           poll (restart block)
 *   poll_inf   poll(14, -1)                              poll (restart block too)
 *   epoll      epoll_wait(18, -1)                        epoll_wait (EINTR)
 *   nanosleep  nanosleep(SLEEP_MS), relative             nanosleep (restart block)
 *   clock_ns   clock_nanosleep(MONOTONIC, ABSTIME,
 *              its block time + SLEEP_MS)                clock_nanosleep
 *   joinee     sem_wait                                  futex
 *   joiner     pthread_join(joinee)                      futex
 *   rowner     holds robust mutex R, waits on a futex    futex
 *   robust     pthread_mutex_lock(R)                     futex
 *   kill       pause()                                   pause
 *
 * then prints "ready PID" and waits for SIGUSR1 with sigwaitinfo (the test
 * dumps, kills and restores the process in between).  On SIGUSR1 ("release")
 * main wakes the cases one at a time and waits for each to report: signals
 * the condvar, sets and wakes the futex words, lets mholder unlock M, writes
 * one byte into each pipe, posts the semaphore (joinee returns a magic value
 * that joiner must get), lets rowner pthread_exit() while holding R (robust
 * must get EOWNERDEAD), pthread_kill()s kill with SIGUSR2 (the handler
 * records gettid(): it must be kill's TID), and lets the sleepers report
 * (once their time is over, they wait on a futex for this: they stay in the
 * process, whether their time ends before or after the release).
 *
 * Each thread, once woken, checks: it was woken by main (not before);
 * gettid() is the TID it had before; its name, blocked mask, sigaltstack,
 * robust list head, clear_child_tid pointer are its own; its rseq area is
 * still registered (rseq() with the same arguments says EBUSY); plus its own
 * case: the byte read, the poll/epoll event, the time slept (nanosleep: at
 * least SLEEP_MS, retrying with the remaining time after EINTR;
 * clock_nanosleep: now >= its deadline), the mutex got only after mholder
 * let it go, EOWNERDEAD, the join value, the signal in this thread.  Calls
 * the kernel restarts after a stop without a restart block (ERESTARTSYS,
 * ERESTARTNOHAND: all but futex_to, poll, poll_inf, epoll, nanosleep) and
 * the relative nanosleep (whose restart block a restore makes again) must
 * never return EINTR: a restore re-executes them (see may_eintr).  It
 * prints "ok NAME tid T eintr=N [...]" or "BAD NAME: reasons".  main then
 * joins every thread, checks itself (gettid() == getpid(), comm, mask,
 * SIGUSR2 handled exactly once), prints
 * "ok main pid=P" or "BAD main: ..." and last "mtblock ok pid=P checks=N"
 * (exit 0) or "mtblock BAD N" (exit 1).  A case not done 60 s + SLEEP_MS
 * after the release: "BAD NAME: woken, no report...", "mtblock BAD timeout
 * waiting for NAME", exit 1.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/futex.h>

#include "common.h"

#define PIPE_R 10
#define PIPE_W 11
#define POLL_R 12
#define POLL_W 13
#define PINF_R 14
#define PINF_W 15
#define EP_R 16
#define EP_W 17
#define EPFD 18

enum {
	T_COND, T_FUTEX, T_FUTEX_TO, T_MHOLDER, T_MUTEX, T_PIPE, T_POLL,
	T_POLL_INF, T_EPOLL, T_NANOSLEEP, T_CLOCK_NS, T_JOINEE, T_JOINER,
	T_ROWNER, T_ROBUST, T_KILL, NT
};
static const char *const names[NT] = {
	"cond", "futex", "futex_to", "mholder", "mutex", "pipe", "poll",
	"poll_inf", "epoll", "nanosleep", "clock_ns", "joinee", "joiner",
	"rowner", "robust", "kill",
};
/*
 * Calls that may see EINTR after a restore: those the kernel restarts
 * through a restart block after a stop that imgcr does not restore (a
 * futex wait with a timeout, poll -- with or without a timeout: sys_poll
 * always sets do_restart_poll; not the relative nanosleep, whose restart
 * block comes back; an absolute clock_nanosleep is ERESTARTNOHAND) and
 * epoll_wait, which returns EINTR after a stop even without a restore.
 */
static const int may_eintr[NT] = {
	[T_FUTEX_TO] = 1, [T_POLL] = 1, [T_POLL_INF] = 1, [T_EPOLL] = 1,
};

#define JOIN_MAGIC ((void *)0x6a6f696eL)
#define ALT_SIZE(i) (64 * 1024UL + (size_t)(i) * 4096)
#define LONG_WAIT_S 600

static long sleep_ms;
static pthread_t th[NT];
static int tids[NT], ready[NT], done[NT], released[NT], eintr[NT], nbad;
static void *robust_head[NT], *tid_addr[NT], *alt[NT];

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER, m = PTHREAD_MUTEX_INITIALIZER, r;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cond_go, m_released, owner_exiting, kill_sent;
static uint32_t fw, ftw, mh_go, rowner_go, sleep_go;
static sem_t js;
static volatile int handler_tid, handler_count;

static int gettid_(void) { return (int)syscall(SYS_gettid); }

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, val3);
}

static void wake(uint32_t *w)
{
	__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
	futex(w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, 0);
}

/* Wait (no timeout) until *w != 0; EINTR counted for thread i. */
static void wait_word(int i, uint32_t *w)
{
	while (!__atomic_load_n(w, __ATOMIC_SEQ_CST))
		if (futex(w, FUTEX_WAIT_PRIVATE, 0, NULL, 0) && errno == EINTR)
			eintr[i]++;
}

struct rep {
	char why[400], note[120];
	char *w, *n;
};
#define BAD(rp, ...) ((rp)->w = addfmt((rp)->w, (rp)->why + sizeof((rp)->why), __VA_ARGS__))
#define NOTE(rp, ...) ((rp)->n = addfmt((rp)->n, (rp)->note + sizeof((rp)->note), __VA_ARGS__))

static void rep_init(struct rep *rp)
{
	rp->why[0] = rp->note[0] = 0;
	rp->w = rp->why;
	rp->n = rp->note;
}

static void want_mask(int i, sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGUSR1);
	sigaddset(s, SIGRTMIN + 1 + i);
}

static void *get_robust(void)
{
	void *head = NULL;
	size_t len = 0;

	if (syscall(SYS_get_robust_list, 0, &head, &len))
		return (void *)-1L;
	return head;
}

static void *get_tid_addr(void)
{
	void *p = NULL;

	if (prctl(PR_GET_TID_ADDRESS, &p, 0, 0, 0))
		return (void *)-1L;
	return p;
}

/* Print "blocked NAME tid T" and let main start the next thread. */
static void blocking(int i)
{
	robust_head[i] = get_robust();
	tid_addr[i] = get_tid_addr();
	say("blocked %s tid %d\n", names[i], tids[i]);
	__atomic_store_n(&ready[i], 1, __ATOMIC_SEQ_CST);
}

/* The checks every thread makes once woken; then its report line. */
static void finish(int i, struct rep *rp)
{
	char name[16] = "", want[16];
	sigset_t cur, ws;
	stack_t ss;
	int tid = gettid_();

	if (!__atomic_load_n(&released[i], __ATOMIC_SEQ_CST))
		BAD(rp, " woke before main woke it");
	if (tid != tids[i])
		BAD(rp, " gettid %d, want %d", tid, tids[i]);
	snprintf(want, sizeof(want), "b-%s", names[i]);
	prctl(PR_GET_NAME, name, 0, 0, 0);
	if (strcmp(name, want))
		BAD(rp, " name '%s', want '%s'", name, want);
	want_mask(i, &ws);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && sigismember(&cur, s) != sigismember(&ws, s))
			BAD(rp, " mask sig %d=%d", s, sigismember(&cur, s));
	if (sigaltstack(NULL, &ss) || ss.ss_sp != alt[i] || ss.ss_size != ALT_SIZE(i) || ss.ss_flags)
		BAD(rp, " sigaltstack %p/%zu/%d, want %p/%zu", ss.ss_sp, ss.ss_size, ss.ss_flags,
		    alt[i], ALT_SIZE(i));
	if (get_robust() != robust_head[i])
		BAD(rp, " robust list %p, want %p", get_robust(), robust_head[i]);
	if (get_tid_addr() != tid_addr[i])
		BAD(rp, " clear_child_tid %p, want %p", get_tid_addr(), tid_addr[i]);
	if (__rseq_size > 0) {
		/* Registered with these arguments: EBUSY (EINVAL: other ones). */
		void *area = (char *)__builtin_thread_pointer() + __rseq_offset;
		long rc = syscall(SYS_rseq, area, __rseq_size, 0, RSEQ_SIG);
		int e = errno;
		if (rc && e == EINVAL && __rseq_size != 32) {
			rc = syscall(SYS_rseq, area, 32, 0, RSEQ_SIG);
			e = errno;
		}
		if (!rc || e != EBUSY)
			BAD(rp, " rseq not registered at %p (rseq() says %s)", area, rc ? errname(e) : "0");
	}
	if (eintr[i] && !may_eintr[i])
		BAD(rp, " EINTR %d times (the call must be re-executed)", eintr[i]);
	if (rp->w != rp->why) {
		say("BAD %s:%s\n", names[i], rp->why);
		__atomic_add_fetch(&nbad, 1, __ATOMIC_SEQ_CST);
	} else {
		say("ok %s tid %d eintr=%d%s\n", names[i], tid, eintr[i], rp->note);
	}
	__atomic_store_n(&done[i], 1, __ATOMIC_SEQ_CST);
}

/* One byte from fd into *c; "" or a reason. */
static void read_byte(int i, int fd, char want, struct rep *rp)
{
	char c[2];
	long n;

	while ((n = syscall(SYS_read, fd, c, 2)) < 0 && errno == EINTR)
		eintr[i]++;
	if (n != 1 || c[0] != want)
		BAD(rp, " read %ld bytes '%c', want 1 '%c' (%s)", n, n > 0 ? c[0] : '?', want,
		    n < 0 ? errname(errno) : "-");
}

static void do_poll(int i, int fd, char want, int timed, struct rep *rp)
{
	long long end = mono_ms() + LONG_WAIT_S * 1000LL;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long n;

	blocking(i);
	for (;;) {
		long tmo = timed ? (long)(end - mono_ms()) : -1;
		if (timed && tmo < 0)
			tmo = 0;
		n = syscall(SYS_poll, &p, 1, tmo);
		if (n < 0 && errno == EINTR) {
			eintr[i]++;
			continue;
		}
		break;
	}
	if (n != 1 || !(p.revents & POLLIN))
		BAD(rp, " poll returned %ld revents %#x (%s)", n, p.revents, n < 0 ? errname(errno) : "-");
	else
		read_byte(i, fd, want, rp);
}

static void on_usr2(int sig)
{
	(void)sig;
	handler_tid = gettid_();
	__atomic_add_fetch((int *)&handler_count, 1, __ATOMIC_SEQ_CST);
}

static void *thr(void *arg)
{
	int i = (int)(long)arg;
	char name[16];
	sigset_t s;
	stack_t ss;
	struct rep rp;
	void *ret = NULL;
	long n;

	rep_init(&rp);
	tids[i] = gettid_();
	snprintf(name, sizeof(name), "b-%s", names[i]);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	want_mask(i, &s);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	alt[i] = mmap(NULL, ALT_SIZE(i), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss = (stack_t){ .ss_sp = alt[i], .ss_size = ALT_SIZE(i) };
	if (alt[i] == MAP_FAILED || sigaltstack(&ss, NULL)) {
		say("BAD %s: sigaltstack setup failed\n", names[i]);
		exit(2);
	}

	switch (i) {
	case T_COND:
		pthread_mutex_lock(&cm);
		blocking(i);
		while (!cond_go)
			pthread_cond_wait(&cv, &cm);
		pthread_mutex_unlock(&cm);
		break;
	case T_FUTEX:
		blocking(i);
		wait_word(i, &fw);
		break;
	case T_FUTEX_TO: {
		struct timespec end;
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += LONG_WAIT_S;
		blocking(i);
		while (!__atomic_load_n(&ftw, __ATOMIC_SEQ_CST)) {
			if (!futex(&ftw, FUTEX_WAIT_BITSET_PRIVATE, 0, &end, FUTEX_BITSET_MATCH_ANY))
				continue;
			if (errno == EINTR)
				eintr[i]++;
			else if (errno == ETIMEDOUT) {
				BAD(&rp, " futex wait timed out");
				break;
			}
		}
		break;
	}
	case T_MHOLDER:
		pthread_mutex_lock(&m);
		blocking(i);
		wait_word(i, &mh_go);
		__atomic_store_n(&m_released, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&m);
		break;
	case T_MUTEX:
		blocking(i);
		n = pthread_mutex_lock(&m);
		if (n)
			BAD(&rp, " pthread_mutex_lock: %s", errname((int)n));
		else if (!__atomic_load_n(&m_released, __ATOMIC_SEQ_CST))
			BAD(&rp, " got the mutex before its holder let it go");
		if (!n)
			pthread_mutex_unlock(&m);
		break;
	case T_PIPE:
		blocking(i);
		read_byte(i, PIPE_R, 'p', &rp);
		break;
	case T_POLL:
		do_poll(i, POLL_R, 'o', 1, &rp);
		break;
	case T_POLL_INF:
		do_poll(i, PINF_R, 'i', 0, &rp);
		break;
	case T_EPOLL: {
		struct epoll_event ev[4];
		blocking(i);
		while ((n = syscall(SYS_epoll_wait, EPFD, ev, 4, -1)) < 0 && errno == EINTR)
			eintr[i]++;
		if (n != 1 || ev[0].data.fd != EP_R || !(ev[0].events & EPOLLIN))
			BAD(&rp, " epoll_wait returned %ld fd %d events %#x (%s)", n, n > 0 ? ev[0].data.fd : -1,
			    n > 0 ? ev[0].events : 0, n < 0 ? errname(errno) : "-");
		else
			read_byte(i, EP_R, 'e', &rp);
		break;
	}
	case T_NANOSLEEP: {
		struct timespec req = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L }, rem;
		long long t0 = mono_ms();
		blocking(i);
		while (syscall(SYS_nanosleep, &req, &rem)) {
			if (errno != EINTR) {
				BAD(&rp, " nanosleep: %s", errname(errno));
				break;
			}
			eintr[i]++;
			req = rem;
		}
		long long el = mono_ms() - t0;
		if (el < sleep_ms)
			BAD(&rp, " slept %lld ms, asked %ld", el, sleep_ms);
		NOTE(&rp, " slept_ms=%lld asked_ms=%ld", el, sleep_ms);
		wait_word(i, &sleep_go);
		break;
	}
	case T_CLOCK_NS: {
		struct timespec dl, now;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += sleep_ms / 1000;
		dl.tv_nsec += (sleep_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		blocking(i);
		while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL)) {
			if (errno != EINTR) {
				BAD(&rp, " clock_nanosleep: %s", errname(errno));
				break;
			}
			eintr[i]++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec < dl.tv_sec || (now.tv_sec == dl.tv_sec && now.tv_nsec < dl.tv_nsec))
			BAD(&rp, " woke at %ld.%09ld, before the deadline %ld.%09ld", (long)now.tv_sec,
			    now.tv_nsec, (long)dl.tv_sec, dl.tv_nsec);
		wait_word(i, &sleep_go);
		break;
	}
	case T_JOINEE:
		blocking(i);
		while (sem_wait(&js)) {
			if (errno != EINTR) {
				BAD(&rp, " sem_wait: %s", errname(errno));
				break;
			}
			eintr[i]++;
		}
		ret = JOIN_MAGIC;
		break;
	case T_JOINER: {
		void *v = NULL;
		blocking(i);
		n = pthread_join(th[T_JOINEE], &v);
		if (n)
			BAD(&rp, " pthread_join: %s", errname((int)n));
		else if (v != JOIN_MAGIC)
			BAD(&rp, " joinee returned %p, want %p", v, JOIN_MAGIC);
		else if (!__atomic_load_n(&done[T_JOINEE], __ATOMIC_SEQ_CST))
			BAD(&rp, " joined before the joinee finished");
		break;
	}
	case T_ROWNER: {
		int lk;
		n = pthread_mutex_lock(&r);
		lk = r.__data.__lock & FUTEX_TID_MASK;
		if (n || lk != tids[i]) {
			say("BAD rowner: robust lock %s, owner field %d (tid %d)\n", errname((int)n), lk, tids[i]);
			exit(2);
		}
		blocking(i);
		wait_word(i, &rowner_go);
		lk = r.__data.__lock & FUTEX_TID_MASK;
		if (lk != tids[i])
			BAD(&rp, " robust mutex owner field %d, want %d", lk, tids[i]);
		__atomic_store_n(&owner_exiting, 1, __ATOMIC_SEQ_CST);
		finish(i, &rp);
		pthread_exit(NULL);	/* holding r: its waiter gets EOWNERDEAD */
	}
	case T_ROBUST:
		blocking(i);
		n = pthread_mutex_lock(&r);
		if (n != EOWNERDEAD)
			BAD(&rp, " pthread_mutex_lock returned %s, want EOWNERDEAD", n ? errname((int)n) : "0");
		if (!__atomic_load_n(&owner_exiting, __ATOMIC_SEQ_CST))
			BAD(&rp, " got the robust mutex before its owner died");
		if (n == EOWNERDEAD && pthread_mutex_consistent(&r))
			BAD(&rp, " pthread_mutex_consistent failed");
		if (n == 0 || n == EOWNERDEAD)
			pthread_mutex_unlock(&r);
		break;
	case T_KILL: {
		int early = 0;
		blocking(i);
		while (!__atomic_load_n((int *)&handler_count, __ATOMIC_SEQ_CST)) {
			syscall(SYS_pause);
			if (!__atomic_load_n(&kill_sent, __ATOMIC_SEQ_CST))
				early++;
		}
		if (early)
			BAD(&rp, " pause returned %d times before the signal (must be re-executed)", early);
		if (handler_tid != tids[i])
			BAD(&rp, " SIGUSR2 handler ran in tid %d, want %d", handler_tid, tids[i]);
		NOTE(&rp, " handler_tid=%d", handler_tid);
		break;
	}
	}
	finish(i, &rp);
	return ret;
}

/* Check the layout "mtblock fds" made. */
static int check_fds(void)
{
	static const int fifo[] = { PIPE_R, PIPE_W, POLL_R, POLL_W, PINF_R, PINF_W, EP_R, EP_W };
	char p[64], l[64] = "";
	struct stat st;

	for (unsigned k = 0; k < sizeof(fifo) / sizeof(fifo[0]); k++)
		if (fstat(fifo[k], &st) || !S_ISFIFO(st.st_mode)) {
			say("mtblock: fd %d is not a pipe (start me through 'mtblock fds')\n", fifo[k]);
			return -1;
		}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", EPFD);
	if (readlink(p, l, sizeof(l) - 1) < 0 || strcmp(l, "anon_inode:[eventpoll]")) {
		say("mtblock: fd %d is not an epoll fd ('%s')\n", EPFD, l);
		return -1;
	}
	return 0;
}

static void place(int fd, int target)
{
	if (fd < 0) {
		outf(2, "mtblock fds: %s\n", strerror(errno));
		exit(2);
	}
	if (fd != target) {
		if (dup2(fd, target) < 0) {
			outf(2, "mtblock fds: dup2 %d: %s\n", target, strerror(errno));
			exit(2);
		}
		close(fd);
	}
}

static int fds_exec(char **argv)
{
	static const int ends[4][2] = { { PIPE_R, PIPE_W }, { POLL_R, POLL_W },
					{ PINF_R, PINF_W }, { EP_R, EP_W } };
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = EP_R };

	for (int k = 0; k < 4; k++) {
		int p[2];
		if (pipe(p)) {
			outf(2, "mtblock fds: pipe: %s\n", strerror(errno));
			return 2;
		}
		/* Out of the way of the targets first. */
		int a = fcntl(p[0], F_DUPFD, 32), b = fcntl(p[1], F_DUPFD, 32);
		close(p[0]);
		close(p[1]);
		place(a, ends[k][0]);
		place(b, ends[k][1]);
	}
	int e = epoll_create1(0);
	place(e < 0 ? e : fcntl(e, F_DUPFD, 32), EPFD);
	if (e >= 0 && e != EPFD)
		close(e);
	if (epoll_ctl(EPFD, EPOLL_CTL_ADD, EP_R, &ev)) {
		outf(2, "mtblock fds: epoll_ctl: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[0], argv);
	outf(2, "mtblock fds: exec %s: %s\n", argv[0], strerror(errno));
	return 2;
}

static long long deadline;

/* Wait until case i reported; at the deadline, report and give up. */
static void wait_done(int i)
{
	while (!__atomic_load_n(&done[i], __ATOMIC_SEQ_CST)) {
		if (mono_ms() > deadline) {
			/* Those woken that did not report; main went no further. */
			for (int k = 0; k < NT; k++)
				if (!__atomic_load_n(&done[k], __ATOMIC_SEQ_CST) &&
				    __atomic_load_n(&released[k], __ATOMIC_SEQ_CST))
					say("BAD %s: woken, no report %ld s after the release\n", names[k],
					    60 + sleep_ms / 1000);
			say("mtblock BAD timeout waiting for %s\n", names[i]);
			exit(1);
		}
		usleep(10000);
	}
}

static void rel(int i) { __atomic_store_n(&released[i], 1, __ATOMIC_SEQ_CST); }

static void put(int fd, char c)
{
	if (write(fd, &c, 1) != 1) {
		say("BAD main: write fd %d: %s\n", fd, errname(errno));
		__atomic_add_fetch(&nbad, 1, __ATOMIC_SEQ_CST);
	}
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t ra;
	sigset_t mm, cur, u;
	char comm[16] = "", why[300] = "", *w = why, *we = why + sizeof(why);
	int main_eintr = 0, rc;

	if (argc >= 3 && !strcmp(argv[1], "fds"))
		return fds_exec(argv + 2);
	if (argc != 3 || strcmp(argv[1], "run") || (sleep_ms = atol(argv[2])) <= 0) {
		outf(2, "usage: mtblock fds PROG [ARGS...] | mtblock run SLEEP_MS\n");
		return 64;
	}
	if (check_fds())
		return 2;

	struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_RESTART | SA_ONSTACK };
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&mm);
	sigaddset(&mm, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &mm, NULL);
	pthread_mutexattr_init(&ra);
	pthread_mutexattr_setrobust(&ra, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&r, &ra);
	sem_init(&js, 0, 0);

	for (int i = 0; i < NT; i++) {
		long long t0 = mono_ms();
		if (pthread_create(&th[i], NULL, thr, (void *)(long)i)) {
			say("mtblock: pthread_create failed\n");
			return 2;
		}
		while (!__atomic_load_n(&ready[i], __ATOMIC_SEQ_CST)) {
			if (mono_ms() - t0 > 60000) {
				say("mtblock: thread %s not ready after 60 s\n", names[i]);
				return 2;
			}
			usleep(1000);
		}
	}
	say("ready %d\n", (int)getpid());

	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);
	while ((rc = sigwaitinfo(&u, NULL)) != SIGUSR1)
		if (rc < 0 && errno == EINTR)
			main_eintr++;
	deadline = mono_ms() + 60000 + sleep_ms;
	say("release eintr=%d\n", main_eintr);

	rel(T_COND);
	pthread_mutex_lock(&cm);
	cond_go = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cm);
	wait_done(T_COND);

	rel(T_FUTEX);
	wake(&fw);
	wait_done(T_FUTEX);

	rel(T_FUTEX_TO);
	wake(&ftw);
	wait_done(T_FUTEX_TO);

	rel(T_MHOLDER);
	rel(T_MUTEX);
	wake(&mh_go);
	wait_done(T_MHOLDER);
	wait_done(T_MUTEX);

	rel(T_PIPE);
	put(PIPE_W, 'p');
	wait_done(T_PIPE);

	rel(T_POLL);
	put(POLL_W, 'o');
	wait_done(T_POLL);

	rel(T_POLL_INF);
	put(PINF_W, 'i');
	wait_done(T_POLL_INF);

	rel(T_EPOLL);
	put(EP_W, 'e');
	wait_done(T_EPOLL);

	rel(T_JOINEE);
	rel(T_JOINER);
	sem_post(&js);
	wait_done(T_JOINEE);
	wait_done(T_JOINER);

	rel(T_ROWNER);
	rel(T_ROBUST);
	wake(&rowner_go);
	wait_done(T_ROWNER);
	wait_done(T_ROBUST);

	rel(T_KILL);
	__atomic_store_n(&kill_sent, 1, __ATOMIC_SEQ_CST);
	rc = pthread_kill(th[T_KILL], SIGUSR2);
	if (rc)
		w = addfmt(w, we, " pthread_kill: %s", errname(rc));
	else
		wait_done(T_KILL);

	rel(T_NANOSLEEP);
	rel(T_CLOCK_NS);
	wake(&sleep_go);
	wait_done(T_NANOSLEEP);
	wait_done(T_CLOCK_NS);

	for (int i = 0; i < NT; i++) {
		if (i == T_JOINEE)	/* joined by joiner */
			continue;
		rc = pthread_join(th[i], NULL);
		if (rc)
			w = addfmt(w, we, " join %s: %s", names[i], errname(rc));
	}
	if (gettid_() != getpid())
		w = addfmt(w, we, " gettid %d != getpid %d", gettid_(), (int)getpid());
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	if (strcmp(comm, "mtblock"))
		w = addfmt(w, we, " comm '%s'", comm);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && sigismember(&cur, s) != sigismember(&mm, s))
			w = addfmt(w, we, " mask sig %d=%d", s, sigismember(&cur, s));
	if (handler_count != 1)
		w = addfmt(w, we, " SIGUSR2 handled %d times", handler_count);
	if (w != why) {
		say("BAD main:%s\n", why);
		nbad++;
	} else {
		say("ok main pid=%d sigwait_eintr=%d\n", (int)getpid(), main_eintr);
	}
	if (nbad) {
		say("mtblock BAD %d\n", nbad);
		return 1;
	}
	say("mtblock ok pid=%d checks=%d\n", (int)getpid(), NT + 1);
	return 0;
}
