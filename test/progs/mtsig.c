/*
 * mtsig GOFILE: pending signals, timers and prctl switches of a
 * multi-threaded process, for the restore test t_threads_signals.
 *
 * main and NW worker threads block the test signals (TESTSET) and the
 * timer signals (TIMERSET) from the start.  Before GOFILE exists:
 *
 *   - the sends[] table is played in order: sigqueue()/kill() to the
 *     process, tgkill()/pthread_sigqueue()/rt_tgsigqueueinfo() to one
 *     thread, from main, from a worker, or from a forked child (other
 *     si_pid); the same RT signal several times with different values (the
 *     order must be kept), a standard signal sent twice to one pending set
 *     (the second is dropped by the kernel: only the first one's siginfo
 *     is delivered), the same signal process-wide and to a thread;
 *   - POSIX timers are created so that their ids have gaps (dummies made
 *     and deleted): A (SIGEV_SIGNAL to the process, 200 ms), B
 *     (SIGEV_THREAD_ID to worker 2, 250 ms), C (SIGEV_NONE, 400 ms), D
 *     (SIGEV_SIGNAL, never armed), E (SIGEV_THREAD_ID to main, 350 ms),
 *     each with its own 64-bit sigev_value and clock; and ITIMER_REAL at
 *     300 ms.  Their signals stay blocked: once each is pending, the
 *     pending sets are stable;
 *   - per-thread timer slack, parent-death signal and name;
 *     PR_SET_CHILD_SUBREAPER, PR_SET_THP_DISABLE and, last,
 *     PR_SET_DUMPABLE 0.
 *
 * It prints "thread I tid T", "timer NAME id N", "proctimer ..." (what
 * /proc/PID/timers must show, normalized as the test does: the process's
 * PID and the main thread's TID as MAIN), "expect LABEL comm=.. blk=..
 * pnd=.. shd=.." (each thread's line of threadlib's snap_threads with
 * "comm blk pnd shd") and "ready", then polls for GOFILE (no syscall that
 * changes the blocked mask while it waits).
 *
 * Then, as the restored process (or the original one in a control run):
 *   - every thread checks its TID, name, blocked mask, timer slack and
 *     pdeath signal; the process its subreaper, THP-disable and dumpable
 *     flags;
 *   - each thread in turn (workers, then main) unblocks TESTSET; a
 *     SA_SIGINFO handler logs (gettid, signo, si_code, si_pid, si_uid,
 *     si_value) and blocks TESTSET again (through the ucontext's mask)
 *     once the thread got as many signals as were sent to it alone: its
 *     private ones come before any process-wide one, so it must get
 *     exactly those, lowest signal first and, per signal, in the order
 *     sent.  Then worker 2 takes the process-wide ones the same way.  No
 *     test signal may be left pending anywhere;
 *   - all threads unblock TIMERSET for ~3 s: A's and ITIMER_REAL's
 *     signals may come to any thread, B's only to worker 2, E's only to
 *     main, none from C or D; A/B/E carry SI_TIMER, their timer id and
 *     sigev_value.  The period (from the timestamps, counting overruns,
 *     skipping the first two signals, which may be the restored pending
 *     ones) must be within 0.5x..3x the interval;
 *   - timer_gettime() of every id gives its interval (and C, D as
 *     expected), getitimer() the 300 ms interval.
 *
 * Each check prints "ok NAME" or "BAD NAME: why"; the last line is
 * "mtsig ok pid=P" (exit 0) or "mtsig BAD N" (exit 1).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "common.h"

#define NW 3		/* worker threads; thread index 0 is main */
#define NT (NW + 1)
#define SHARED (-1)	/* sends[].to: the process */
#define CHILD (-2)	/* sends[].by: a forked child */
#define MAXEV 4096
#define WINDOW_NS 3000000000LL
#define MS 1000000LL

enum how { KILL, SIGQUEUE, TGKILL, PSIGQUEUE, TGSIGQUEUE };

struct send {
	int by;		/* thread index, or CHILD */
	enum how how;
	int to;		/* thread index, or SHARED */
	int rt;		/* sig is SIGRTMIN + sig */
	int sig;
	int val;
	/* filled in when sent */
	int signo, pid, code, dropped;
};

#define S(b, h, t, r, s, v) { .by = b, .how = h, .to = t, .rt = r, .sig = s, .val = v }
static struct send sends[] = {
	S(0, SIGQUEUE, SHARED, 1, 1, 101),
	S(0, PSIGQUEUE, 1, 1, 1, 201),
	S(0, KILL, SHARED, 0, SIGUSR1, 0),
	S(0, TGKILL, 1, 0, SIGHUP, 0),
	S(0, TGKILL, 2, 0, SIGUSR2, 0),
	S(0, TGSIGQUEUE, 2, 1, 5, 203),
	S(CHILD, SIGQUEUE, SHARED, 1, 1, 102),
	S(CHILD, TGKILL, 2, 1, 2, 0),
	S(CHILD, TGSIGQUEUE, 2, 1, 2, 204),
	S(CHILD, KILL, SHARED, 0, SIGTERM, 0),
	S(1, SIGQUEUE, SHARED, 1, 3, 103),
	S(2, PSIGQUEUE, 1, 1, 1, 202),
	S(0, PSIGQUEUE, 3, 1, 4, 301),
	S(0, PSIGQUEUE, 3, 1, 4, 302),
	S(0, TGKILL, 3, 0, SIGUSR1, 0),
	S(0, SIGQUEUE, SHARED, 0, SIGUSR1, 104),	/* dropped: already pending */
	S(3, TGKILL, 0, 1, 6, 0),
	S(1, TGSIGQUEUE, 0, 1, 6, 401),
	S(0, SIGQUEUE, SHARED, 1, 1, 105),
	S(CHILD, TGKILL, 0, 0, SIGUSR2, 0),
};
#define NSENDS ((int)(sizeof(sends) / sizeof(sends[0])))

struct ev {
	long long ns;
	int tid, sig, code, pid, uid, ovr;
	uint64_t val;
};

struct worker {
	pthread_t th;
	sem_t go, done;
	void (*fn)(int idx, void *arg);
	void *arg;
};

enum { TA, TB, TC, TD, TE, NTIMERS };
static const struct tdef {
	const char *name;
	int notify;	/* SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID */
	int thread;	/* SIGEV_THREAD_ID target (thread index) */
	int rt;		/* signal SIGRTMIN + rt */
	clockid_t clock;
	long long period_ns;	/* 0: never armed */
} tdefs[NTIMERS] = {
	[TA] = { "A", SIGEV_SIGNAL, 0, 10, CLOCK_MONOTONIC, 200 * MS },
	[TB] = { "B", SIGEV_THREAD_ID, 2, 11, CLOCK_REALTIME, 250 * MS },
	[TC] = { "C", SIGEV_NONE, 0, 13, CLOCK_BOOTTIME, 400 * MS },
	[TD] = { "D", SIGEV_SIGNAL, 0, 12, CLOCK_MONOTONIC, 0 },
	[TE] = { "E", SIGEV_THREAD_ID, 0, 14, CLOCK_MONOTONIC, 350 * MS },
};
#define ITIMER_NS (300 * MS)

static struct worker w[NT];
static int tids[NT], pid0, nbad;
static timer_t timers[NTIMERS];
static int timer_ids[NTIMERS];
static uint64_t timer_vals[NTIMERS];
static sigset_t testset, timerset, allset;
static struct ev evlog[MAXEV];
static int nev;
static volatile int started;
static __thread int want, got;

static int slack(int i) { return 100000 + i * 7000; }
static int pdeath(int i) { return i == 0 ? SIGURG : i == 1 ? SIGWINCH : i == 2 ? SIGCHLD : SIGCONT; }
static int gettid_(void) { return (int)syscall(SYS_gettid); }

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((format(printf, 2, 3)))
static void bad(const char *name, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("BAD %s: %s\n", name, buf);
	nbad++;
}

static void ok(const char *name) { say("ok %s\n", name); }

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
	int n = __atomic_fetch_add(&nev, 1, __ATOMIC_SEQ_CST);

	if (n < MAXEV) {
		struct ev *e = &evlog[n];

		e->ns = now_ns();
		e->tid = gettid_();
		e->sig = sig;
		e->code = si->si_code;
		e->pid = si->si_pid;
		e->uid = (int)si->si_uid;
		e->ovr = si->si_overrun;
		e->val = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	}
	if (sigismember(&testset, sig) && ++got >= want) {
		ucontext_t *uc = ctx;

		/* only the first 64 bits are the kernel's: sigaddset, not sigorset */
		for (int s = 1; s <= 64; s++)
			if (sigismember(&testset, s))
				sigaddset(&uc->uc_sigmask, s);
	}
}

/* Run fn(idx, arg) in thread idx (main runs it itself) and wait for it. */
static void run_in(int idx, void (*fn)(int, void *), void *arg)
{
	if (idx == 0) {
		fn(0, arg);
		return;
	}
	w[idx].fn = fn;
	w[idx].arg = arg;
	sem_post(&w[idx].go);
	while (sem_wait(&w[idx].done))
		;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[16];

	tids[i] = gettid_();
	snprintf(name, sizeof(name), "sig-%d", i);
	pthread_setname_np(pthread_self(), name);
	prctl(PR_SET_TIMERSLACK, (unsigned long)slack(i), 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, (unsigned long)pdeath(i), 0, 0, 0);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		while (sem_wait(&w[i].go))
			;
		if (!w[i].fn)
			break;
		w[i].fn(i, w[i].arg);
		sem_post(&w[i].done);
	}
	return NULL;
}

static void do_send(int idx, void *arg)
{
	struct send *s = arg;
	siginfo_t si;
	int r = -1, to = s->to == SHARED ? 0 : tids[s->to];

	(void)idx;
	switch (s->how) {
	case KILL:
		r = kill(pid0, s->signo);
		break;
	case SIGQUEUE:
		r = sigqueue(pid0, s->signo, (union sigval){ .sival_int = s->val });
		break;
	case TGKILL:
		r = (int)syscall(SYS_tgkill, pid0, to, s->signo);
		break;
	case PSIGQUEUE:
		r = pthread_sigqueue(w[s->to].th, s->signo, (union sigval){ .sival_int = s->val });
		if (r) {
			errno = r;
			r = -1;
		}
		break;
	case TGSIGQUEUE:
		memset(&si, 0, sizeof(si));
		si.si_signo = s->signo;
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		si.si_uid = getuid();
		si.si_value.sival_int = s->val;
		r = (int)syscall(SYS_rt_tgsigqueueinfo, pid0, to, s->signo, &si);
		break;
	}
	if (r) {
		say("send of signal %d (how %d) failed: %s\n", s->signo, s->how, errname(errno));
		_exit(2);
	}
}

static int send_code(enum how h)
{
	return h == KILL ? SI_USER : h == TGKILL ? SI_TKILL : SI_QUEUE;
}

static void play_sends(void)
{
	for (int i = 0; i < NSENDS; i++) {
		struct send *s = &sends[i];

		s->signo = s->rt ? SIGRTMIN + s->sig : s->sig;
		s->code = send_code(s->how);
		for (int j = 0; j < i; j++)
			if (s->signo < SIGRTMIN && !sends[j].dropped && sends[j].to == s->to &&
			    sends[j].signo == s->signo)
				s->dropped = 1;
		if (s->by == CHILD) {
			pid_t c = fork();
			int st;

			if (c < 0) {
				say("fork failed\n");
				exit(2);
			}
			if (!c) {
				do_send(0, s);
				_exit(0);
			}
			if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) {
				say("child sender %d failed\n", i);
				exit(2);
			}
			s->pid = c;
		} else {
			s->pid = pid0;
			run_in(s->by, do_send, s);
		}
	}
}

static unsigned long long bit(int sig) { return 1ULL << (sig - 1); }

static unsigned long long set_bits(const sigset_t *s)
{
	unsigned long long m = 0;

	for (int sig = 1; sig <= 64; sig++)
		if (sigismember(s, sig))
			m |= bit(sig);
	return m;
}

static void make_timers(void)
{
	timer_t dummy[8];
	int nd = 0;

	/* ids 0,1 dummies; A=2; dummy 3; B=4; C=5; D=6; dummy 7; E=8; the
	 * dummies are deleted (if the kernel counts from 0). */
	struct sigevent dev = { .sigev_notify = SIGEV_NONE };
	for (int t = 0, k = 0; t < NTIMERS; t++, k++) {
		const struct tdef *d = &tdefs[t];
		struct sigevent ev = { 0 };

		while (k == 0 || k == 1 || k == 3 || k == 7) {
			if (timer_create(CLOCK_MONOTONIC, &dev, &dummy[nd++])) {
				say("timer_create (dummy) failed: %s\n", errname(errno));
				exit(2);
			}
			k++;
		}
		timer_vals[t] = 0x5a17000000000000ULL | (uint64_t)(t + 1) << 32 | 0xc0de0000u | (unsigned)t;
		ev.sigev_notify = d->notify;
		ev.sigev_signo = SIGRTMIN + d->rt;
		ev.sigev_value.sival_ptr = (void *)(uintptr_t)timer_vals[t];
		if (d->notify == SIGEV_THREAD_ID)
			ev._sigev_un._tid = tids[d->thread];
		if (timer_create(d->clock, &ev, &timers[t])) {
			say("timer_create %s failed: %s\n", d->name, errname(errno));
			exit(2);
		}
		timer_ids[t] = (int)(intptr_t)timers[t];
	}
	for (int i = 0; i < nd; i++)
		timer_delete(dummy[i]);
	for (int t = 0; t < NTIMERS; t++) {
		const struct tdef *d = &tdefs[t];
		struct itimerspec its = { 0 };

		if (!d->period_ns)
			continue;
		its.it_value.tv_nsec = d->period_ns % 1000000000;
		its.it_value.tv_sec = d->period_ns / 1000000000;
		its.it_interval = its.it_value;
		if (timer_settime(timers[t], 0, &its, NULL)) {
			say("timer_settime %s failed: %s\n", d->name, errname(errno));
			exit(2);
		}
	}
	struct itimerval iv = { .it_value = { 0, ITIMER_NS / 1000 }, .it_interval = { 0, ITIMER_NS / 1000 } };
	if (setitimer(ITIMER_REAL, &iv, NULL)) {
		say("setitimer failed: %s\n", errname(errno));
		exit(2);
	}
}

/* The pending bits a thread (idx) or the process (SHARED) must show. */
static unsigned long long want_pending(int to)
{
	unsigned long long m = 0;

	for (int i = 0; i < NSENDS; i++)
		if (sends[i].to == to && !sends[i].dropped)
			m |= bit(sends[i].signo);
	for (int t = 0; t < NTIMERS; t++) {
		const struct tdef *d = &tdefs[t];

		if (!d->period_ns || d->notify == SIGEV_NONE)
			continue;
		if ((d->notify == SIGEV_THREAD_ID && d->thread == to) ||
		    (d->notify == SIGEV_SIGNAL && to == SHARED))
			m |= bit(SIGRTMIN + d->rt);
	}
	if (to == SHARED)
		m |= bit(SIGALRM);
	return m;
}

static void my_pending(int idx, void *arg)
{
	sigset_t p;

	(void)idx;
	sigpending(&p);
	*(unsigned long long *)arg = set_bits(&p);
}

/* Wait until every timer signal is pending where it belongs. */
static void wait_timer_signals(void)
{
	long long end = now_ns() + 30000000000LL;

	for (;;) {
		int all = 1;

		for (int i = 0; i < NT; i++) {
			unsigned long long p, m = want_pending(i) | want_pending(SHARED);

			run_in(i, my_pending, &p);
			all &= (p & m) == m;
		}
		if (all)
			return;
		if (now_ns() > end) {
			say("timer signals not all pending after 30 s\n");
			exit(2);
		}
		usleep(10000);
	}
}

/* ---- checks after the go ---- */

static void check_thread(int idx, void *arg)
{
	char *why = arg, name[16] = "", want_name[16];
	int pd = -1, sl, tid = gettid_();
	sigset_t cur;
	char *p = why;
	size_t left = 300;

#define ADD(...) do { int _n = snprintf(p, left, __VA_ARGS__); \
	if (_n > 0 && (size_t)_n < left) { p += _n; left -= (size_t)_n; } } while (0)
	*p = 0;
	if (idx == 0) {
		if (tid != getpid())
			ADD(" main gettid %d != getpid %d", tid, (int)getpid());
		snprintf(want_name, sizeof(want_name), "mtsig");
	} else {
		if (tid != tids[idx])
			ADD(" thread %d gettid %d, want %d", idx, tid, tids[idx]);
		snprintf(want_name, sizeof(want_name), "sig-%d", idx);
	}
	prctl(PR_GET_NAME, name, 0, 0, 0);
	if (strcmp(name, want_name))
		ADD(" thread %d name '%s'", idx, name);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (set_bits(&cur) != set_bits(&allset))
		ADD(" thread %d blocked %llx want %llx", idx, set_bits(&cur), set_bits(&allset));
	sl = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (sl != slack(idx))
		ADD(" thread %d timerslack %d want %d", idx, sl, slack(idx));
	if (prctl(PR_GET_PDEATHSIG, (unsigned long)&pd, 0, 0, 0) || pd != pdeath(idx))
		ADD(" thread %d pdeathsig %d want %d", idx, pd, pdeath(idx));
#undef ADD
}

struct take {
	int n;
	int reblocked;
	unsigned long long left;
};

/* Unblock TESTSET until the handler took t->n signals in this thread. */
static void take_signals(int idx, void *arg)
{
	struct take *t = arg;
	sigset_t old;

	(void)idx;
	want = t->n;
	got = 0;
	pthread_sigmask(SIG_UNBLOCK, &testset, NULL);
	pthread_sigmask(SIG_BLOCK, &testset, &old);
	t->reblocked = (set_bits(&old) & set_bits(&testset)) == set_bits(&testset);
}

static void set_timer_mask(int idx, void *arg)
{
	(void)idx;
	pthread_sigmask(*(int *)arg, &timerset, NULL);
}

static const char *label(int idx)
{
	static const char *l[] = { "main", "T1", "T2", "T3" };

	return idx == SHARED ? "shared" : l[idx];
}

/* Expected deliveries to `to`: lowest signal first, then in sending order. */
static int expected(int to, const struct send **out)
{
	int n = 0;

	for (int sig = 1; sig <= 64; sig++)
		for (int i = 0; i < NSENDS; i++)
			if (sends[i].to == to && !sends[i].dropped && sends[i].signo == sig)
				out[n++] = &sends[i];
	return n;
}

static void check_group(int to, int tid, int first, int n, const struct send **x, int reblocked)
{
	char name[32];
	int last = __atomic_load_n(&nev, __ATOMIC_SEQ_CST);

	snprintf(name, sizeof(name), "signals_%s", label(to));
	if (last - first != n) {
		char got_s[300] = "";
		size_t o = 0;

		for (int k = first; k < last && k < MAXEV && o < sizeof(got_s) - 40; k++)
			o += (size_t)snprintf(got_s + o, sizeof(got_s) - o, " %d/%d/tid%d",
					      evlog[k].sig, evlog[k].code, evlog[k].tid);
		bad(name, "%d signals delivered, want %d:%s", last - first, n, got_s);
		return;
	}
	for (int k = 0; k < n; k++) {
		const struct ev *e = &evlog[first + k];
		const struct send *s = x[k];

		if (e->tid != tid || e->sig != s->signo || e->code != s->code || e->pid != s->pid ||
		    e->uid != (int)getuid() || (s->code == SI_QUEUE && (int)e->val != s->val)) {
			bad(name, "#%d: got sig %d code %d pid %d uid %d val %d in tid %d; want sig %d code %d pid %d val %d in tid %d",
			    k, e->sig, e->code, e->pid, e->uid, (int)e->val, e->tid,
			    s->signo, s->code, s->pid, s->code == SI_QUEUE ? s->val : 0, tid);
			return;
		}
	}
	if (!reblocked) {
		bad(name, "the handler's ucontext mask was not restored by sigreturn");
		return;
	}
	ok(name);
}

static void check_pending_signals(void)
{
	const struct send *x[NSENDS];
	struct take t;
	int order[NT] = { 1, 2, 3, 0 };

	for (int k = 0; k < NT; k++) {
		int i = order[k], n = expected(i, x), first = nev;

		t.n = n;
		run_in(i, take_signals, &t);
		check_group(i, i ? tids[i] : getpid(), first, n, x, t.reblocked);
	}
	/* the process-wide ones, in worker 2 */
	int n = expected(SHARED, x), first = nev;
	t.n = n;
	run_in(2, take_signals, &t);
	check_group(SHARED, tids[2], first, n, x, t.reblocked);

	char why[300] = "";
	for (int i = 0; i < NT; i++) {
		unsigned long long p;

		run_in(i, my_pending, &p);
		p &= set_bits(&testset);
		if (p)
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " %s:%llx", label(i), p);
	}
	if (*why)
		bad("no_leftover", "test signals still pending:%s", why);
	else
		ok("no_leftover");
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The signals of one timer during the window [first, last). */
static void check_periodic(const char *name, int sig, int tid, int code, int id, uint64_t val,
			   long long period, int first, int last)
{
	static struct ev e[MAXEV];
	int n = 0;
	long long exp = 0, per;

	for (int k = first; k < last && k < MAXEV; k++)
		if (evlog[k].sig == sig)
			e[n++] = evlog[k];
	qsort(e, (size_t)n, sizeof(e[0]), cmp_ev);
	for (int k = 0; k < n; k++) {
		int tid_ok = tid ? e[k].tid == tid : (e[k].tid == getpid() || e[k].tid == tids[1] ||
						       e[k].tid == tids[2] || e[k].tid == tids[3]);

		if (!tid_ok || e[k].code != code ||
		    (code == SI_TIMER && (e[k].pid != id || e[k].val != val))) {
			bad(name, "signal #%d of %d: tid %d code %d timerid %d value %llx; want tid %d code %d timerid %d value %llx",
			    k, n, e[k].tid, e[k].code, e[k].pid, (unsigned long long)e[k].val,
			    tid, code, id, (unsigned long long)val);
			return;
		}
	}
	if (n < 5) {
		bad(name, "only %d signals in %lld ms (period %lld ms)", n, WINDOW_NS / MS, period / MS);
		return;
	}
	/* the first two may be the restored pending one and a late expiry */
	for (int k = 3; k < n; k++)
		exp += 1 + (code == SI_TIMER ? e[k].ovr : 0);
	per = (e[n - 1].ns - e[2].ns) / exp;
	say("info %s: %d signals, %lld expiries after the 3rd, period %lld us (interval %lld us)\n",
	    name, n, exp, per / 1000, period / 1000);
	if (per < period / 2 || per > period * 3) {
		bad(name, "measured period %lld us, interval %lld us", per / 1000, period / 1000);
		return;
	}
	ok(name);
}

static long long ts_ns(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

static void check_timers(void)
{
	int on = SIG_UNBLOCK, off = SIG_BLOCK, first, last;
	long long end;

	first = __atomic_load_n(&nev, __ATOMIC_SEQ_CST);
	for (int i = 1; i < NT; i++)
		run_in(i, set_timer_mask, &on);
	pthread_sigmask(SIG_UNBLOCK, &timerset, NULL);
	end = now_ns() + WINDOW_NS;
	for (;;) {
		struct timespec ts = { end / 1000000000LL, end % 1000000000LL };

		if (!clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) && now_ns() >= end)
			break;
		if (now_ns() >= end)
			break;
	}
	/* getitimer while SIGALRM is still taken: its timer is armed */
	struct itimerval iv;
	getitimer(ITIMER_REAL, &iv);
	pthread_sigmask(SIG_BLOCK, &timerset, NULL);
	for (int i = 1; i < NT; i++)
		run_in(i, set_timer_mask, &off);
	last = __atomic_load_n(&nev, __ATOMIC_SEQ_CST);
	if (last > MAXEV)
		last = MAXEV;

	check_periodic("timer_A", SIGRTMIN + tdefs[TA].rt, 0, SI_TIMER, timer_ids[TA], timer_vals[TA],
		       tdefs[TA].period_ns, first, last);
	check_periodic("timer_B_thread", SIGRTMIN + tdefs[TB].rt, tids[tdefs[TB].thread], SI_TIMER,
		       timer_ids[TB], timer_vals[TB], tdefs[TB].period_ns, first, last);
	check_periodic("timer_E_main", SIGRTMIN + tdefs[TE].rt, getpid(), SI_TIMER,
		       timer_ids[TE], timer_vals[TE], tdefs[TE].period_ns, first, last);
	check_periodic("itimer_real", SIGALRM, 0, SI_KERNEL, 0, 0, ITIMER_NS, first, last);

	int nc = 0, nd = 0;
	for (int k = first; k < last; k++) {
		nc += evlog[k].sig == SIGRTMIN + tdefs[TC].rt;
		nd += evlog[k].sig == SIGRTMIN + tdefs[TD].rt;
	}
	if (nc)
		bad("timer_C_none", "%d signals from a SIGEV_NONE timer", nc);
	if (nd)
		bad("timer_D_disarmed", "%d signals from a disarmed timer", nd);

	/* timer_gettime(): every id exists, with its interval */
	char why[400] = "";
	for (int t = 0; t < NTIMERS; t++) {
		const struct tdef *d = &tdefs[t];
		struct itimerspec its;

		if (timer_gettime((timer_t)(intptr_t)timer_ids[t], &its)) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " %s(id %d): %s",
				 d->name, timer_ids[t], errname(errno));
			continue;
		}
		long long v = ts_ns(&its.it_value), i = ts_ns(&its.it_interval);
		if (i != d->period_ns || (d->period_ns && (v <= 0 || v > d->period_ns)) ||
		    (!d->period_ns && v))
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " %s(id %d): value %lld us interval %lld us, want interval %lld us",
				 d->name, timer_ids[t], v / 1000, i / 1000, d->period_ns / 1000);
	}
	if (*why)
		bad("timer_gettime", "%s", why);
	else
		ok("timer_gettime");
	if (!nc)
		ok("timer_C_none");
	if (!nd)
		ok("timer_D_disarmed");
	long long iv_i = iv.it_interval.tv_sec * 1000000LL + iv.it_interval.tv_usec;
	long long iv_v = iv.it_value.tv_sec * 1000000LL + iv.it_value.tv_usec;
	if (iv_i != ITIMER_NS / 1000 || iv_v < 0 || iv_v > ITIMER_NS / 1000)
		bad("getitimer", "value %lld us interval %lld us, want interval %lld us", iv_v, iv_i,
		    ITIMER_NS / 1000);
	else
		ok("getitimer");
}

static void check_state(void)
{
	char why[NT][300], all[1300] = "";
	int r, v = -1;

	for (int i = 0; i < NT; i++) {
		run_in(i, check_thread, why[i]);
		strncat(all, why[i], sizeof(all) - strlen(all) - 1);
	}
	if (*all)
		bad("thread_state", "%s", all);
	else
		ok("thread_state");
	r = prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&v, 0, 0, 0);
	if (r || v != 1)
		bad("subreaper", "PR_GET_CHILD_SUBREAPER %d (r=%d)", v, r);
	else
		ok("subreaper");
	r = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	if (r != 1)
		bad("thp_disable", "PR_GET_THP_DISABLE %d", r);
	else
		ok("thp_disable");
	r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (r != 0)
		bad("not_dumpable", "PR_GET_DUMPABLE %d", r);
	else
		ok("not_dumpable");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_sig, .sa_flags = SA_SIGINFO | SA_RESTART };
	const char *gofile;

	if (argc != 2) {
		outf(2, "usage: mtsig GOFILE\n");
		return 64;
	}
	gofile = argv[1];
	pid0 = getpid();
	tids[0] = pid0;

	sigemptyset(&testset);
	for (int s = 0; s < NSENDS; s++)
		sigaddset(&testset, sends[s].rt ? SIGRTMIN + sends[s].sig : sends[s].sig);
	sigemptyset(&timerset);
	sigaddset(&timerset, SIGALRM);
	for (int t = 0; t < NTIMERS; t++)
		sigaddset(&timerset, SIGRTMIN + tdefs[t].rt);
	sigorset(&allset, &testset, &timerset);
	sigfillset(&sa.sa_mask);
	for (int s = 1; s <= 64; s++)
		if (sigismember(&allset, s) && sigaction(s, &sa, NULL)) {
			say("sigaction %d failed\n", s);
			return 2;
		}
	pthread_sigmask(SIG_SETMASK, &allset, NULL);	/* inherited by the workers */

	prctl(PR_SET_NAME, "mtsig", 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, (unsigned long)slack(0), 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, (unsigned long)pdeath(0), 0, 0, 0);
	for (int i = 1; i < NT; i++) {
		sem_init(&w[i].go, 0, 0);
		sem_init(&w[i].done, 0, 0);
		if (pthread_create(&w[i].th, NULL, worker, (void *)(long)i)) {
			say("pthread_create failed\n");
			return 2;
		}
	}
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < NW)
		usleep(1000);

	play_sends();
	make_timers();
	wait_timer_signals();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) || prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		say("prctl failed: %s\n", errname(errno));
		return 2;
	}

	for (int i = 1; i < NT; i++)
		say("thread %d tid %d\n", i, tids[i]);
	for (int t = 0; t < NTIMERS; t++) {
		const struct tdef *d = &tdefs[t];
		char target[32];

		if (d->notify == SIGEV_THREAD_ID && d->thread)
			snprintf(target, sizeof(target), "tid.%d", tids[d->thread]);
		else
			snprintf(target, sizeof(target), "%s.MAIN", d->notify == SIGEV_THREAD_ID ? "tid" : "pid");
		say("timer %s id %d\n", d->name, timer_ids[t]);
		say("proctimer %d sig=%d/%016llx notify=%s/%s clock=%d\n", timer_ids[t], SIGRTMIN + d->rt,
		    (unsigned long long)timer_vals[t], d->notify == SIGEV_NONE ? "none" : "signal",
		    target, (int)d->clock);
	}
	for (int i = 0; i < NT; i++) {
		char l[16], c[16];

		snprintf(l, sizeof(l), "%d", tids[i]);
		snprintf(c, sizeof(c), "sig-%d", i);
		say("expect %s comm=%s blk=%016llx pnd=%016llx shd=%016llx\n", i ? l : "MAIN",
		    i ? c : "mtsig", set_bits(&allset), want_pending(i), want_pending(SHARED));
	}
	say("ready %d\n", pid0);

	/* Polling keeps the blocked mask as it is (sigwaitinfo would not). */
	while (access(gofile, F_OK))
		usleep(20000);
	say("go pid=%d\n", (int)getpid());

	check_state();
	check_pending_signals();
	check_timers();

	for (int i = 1; i < NT; i++) {
		w[i].fn = NULL;
		sem_post(&w[i].go);
		pthread_join(w[i].th, NULL);
	}
	if (nbad)
		say("mtsig BAD %d\n", nbad);
	else
		say("mtsig ok pid=%d\n", (int)getpid());
	return nbad != 0;
}
