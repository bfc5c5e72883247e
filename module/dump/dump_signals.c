// SPDX-License-Identifier: GPL-2.0
/*
 * The process-wide state of a dumped thread group besides its memory:
 * pending signals with their siginfo, the three interval timers, POSIX
 * timers, and the prctl() switches a restore must set again.
 *
 * All of it sits under the group's siglock.  Nothing is allocated under
 * the lock: a first pass counts, a second one fills, and a count that grew
 * in between (a signal sent to the stopped task) gives EAGAIN, as a thread
 * that runs does.
 */
#include <linux/hrtimer.h>
#include <linux/pid_namespace.h>
#include <linux/posix-timers.h>
#include <linux/sched/coredump.h>
#include <linux/sched/cputime.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "checks.h"
#include "compat.h"
#include "dump.h"
#include "img_dump.h"

/* What may be queued again: SIGKILL and SIGSTOP never reach a handler. */
static bool sig_dumpable(int sig)
{
	return sig >= 1 && sig <= IMGCR_NSIG && sig != SIGKILL && sig != SIGSTOP;
}

static void put_siginfo(struct imgcr_sigqueue *e, u32 tid,
			const kernel_siginfo_t *info)
{
	BUILD_BUG_ON(sizeof(*info) > sizeof(e->info));
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	memcpy(e->info, info, sizeof(*info));
	/*
	 * A POSIX timer's own signal carries a cookie that rearms the timer
	 * on dequeue; the restored signal is a plain queued one.
	 */
	if (info->si_code == SI_TIMER)
		((kernel_siginfo_t *)e->info)->si_sys_private = 0;
}

/*
 * Walk one pending set: its queue in order, then the signals pending
 * without a queue entry (the kernel was out of queue space), which are
 * delivered as SI_USER from pid 0 (collect_signal() does the same).
 * Stores at most @cap entries from img->sigq[*n]; counts all of them.
 */
static void walk_pending(struct dump_image *img, struct sigpending *p,
			 u32 tid, size_t *n, size_t cap)
{
	struct sigqueue *q;
	sigset_t seen;
	int sig;

	sigemptyset(&seen);
	list_for_each_entry(q, &p->list, list) {
		sig = q->info.si_signo;
		if (!sig_dumpable(sig) || !sigismember(&p->signal, sig))
			continue;
		if (*n < cap)
			put_siginfo(&img->sigq[*n], tid, &q->info);
		(*n)++;
		sigaddset(&seen, sig);
	}
	for (sig = 1; sig <= IMGCR_NSIG; sig++) {
		kernel_siginfo_t info;

		if (!sig_dumpable(sig) || !sigismember(&p->signal, sig) ||
		    sigismember(&seen, sig))
			continue;
		if (*n < cap) {
			clear_siginfo(&info);
			info.si_signo = sig;
			info.si_code = SI_USER;
			put_siginfo(&img->sigq[*n], tid, &info);
		}
		(*n)++;
	}
}

/* Process-wide signals first, then each thread's; under the siglock. */
static size_t walk_all_pending(struct dump_image *img, size_t cap)
{
	size_t n = 0;
	unsigned int i;

	walk_pending(img, &img->task->signal->shared_pending, 0, &n, cap);
	for (i = 0; i < img->nr_threads; i++) {
		struct dump_thread *th = &img->threads[i];

		/* only the group's sighand lock protects its list */
		if (th->task->sighand != img->task->sighand)
			return SIZE_MAX;
		walk_pending(img, &th->task->pending, th->th.tid, &n, cap);
		th->prstatus.sigpend = th->task->pending.signal.sig[0] |
				       img->task->signal->shared_pending.signal.sig[0];
		th->prstatus.sighold = th->task->blocked.sig[0];
	}
	return n;
}

int dump_signals(struct dump_image *img)
{
	struct sighand_struct *sighand;
	unsigned long flags;
	size_t n;

	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand)
		return -ESRCH;
	n = walk_all_pending(img, 0);
	spin_unlock_irqrestore(&sighand->siglock, flags);
	if (n == SIZE_MAX)
		return -EAGAIN;	/* a thread exec'd meanwhile */
	if (n > IMGCR_MAX_SIGQUEUE) {
		dump_refuse(img, task_pid_nr(img->task),
			    "%zu signals pending (more than %d)", n, IMGCR_MAX_SIGQUEUE);
		return -EFBIG;
	}
	if (!n)
		return 0;
	img->sigq = kvcalloc(n, sizeof(*img->sigq), GFP_KERNEL_ACCOUNT);
	if (!img->sigq)
		return -ENOMEM;
	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand)
		return -ESRCH;
	if (walk_all_pending(img, n) != n) {
		spin_unlock_irqrestore(&sighand->siglock, flags);
		return -EAGAIN;	/* a signal came in meanwhile */
	}
	spin_unlock_irqrestore(&sighand->siglock, flags);
	img->proc.nr_sigqueue = n;
	return 0;
}

/* Time left on an hrtimer that reloads every @iv ns (0: one-shot). */
static u64 hrtimer_left(struct hrtimer *t, u64 iv, bool armed_only)
{
	s64 rem;

	if (!hrtimer_active(t) && armed_only)
		return 0;
	rem = ktime_to_ns(__hrtimer_get_remaining(t, false));
	if (rem > 0)
		return rem;
	/* expired: the next expiry of a periodic timer, else "about now" */
	if (iv)
		return iv - ((u64)-rem % iv);
	return 1;
}

/*
 * ITIMER_REAL: an expired periodic timer whose SIGALRM is still pending
 * is rearmed by the kernel when the signal is dequeued; restore it armed
 * for one interval.  ITIMER_VIRTUAL/PROF: their expiry is a sample of the
 * group's CPU time (get_cpu_itimer() in kernel/time/itimer.c).
 */
static void dump_itimers(struct dump_image *img)
{
	struct signal_struct *sig = img->task->signal;
	struct task_cputime_atomic *at = &sig->cputimer.cputime_atomic;
	struct imgcr_itimer *it = img->proc.itimer;
	u64 incr = ktime_to_ns(sig->it_real_incr);
	u64 prof, virt;

	it[IMGCR_ITIMER_REAL].interval_ns = incr;
	if (hrtimer_active(&sig->real_timer))
		it[IMGCR_ITIMER_REAL].value_ns = hrtimer_left(&sig->real_timer, 0, false);
	else if (incr)
		it[IMGCR_ITIMER_REAL].value_ns = incr;

	virt = atomic64_read(&at->utime);
	prof = virt + atomic64_read(&at->stime);
	it[IMGCR_ITIMER_PROF].interval_ns = sig->it[CPUCLOCK_PROF].incr;
	if (sig->it[CPUCLOCK_PROF].expires)
		it[IMGCR_ITIMER_PROF].value_ns =
			sig->it[CPUCLOCK_PROF].expires > prof ?
			sig->it[CPUCLOCK_PROF].expires - prof : TICK_NSEC;
	it[IMGCR_ITIMER_VIRTUAL].interval_ns = sig->it[CPUCLOCK_VIRT].incr;
	if (sig->it[CPUCLOCK_VIRT].expires)
		it[IMGCR_ITIMER_VIRTUAL].value_ns =
			sig->it[CPUCLOCK_VIRT].expires > virt ?
			sig->it[CPUCLOCK_VIRT].expires - virt : TICK_NSEC;
}

/*
 * One POSIX timer, as timer_gettime() would report it (common_timer_get():
 * a periodic timer whose signal is pending is moved forward past now).
 */
static int put_timer(struct dump_image *img, struct k_itimer *k,
		     struct imgcr_posix_timer *p)
{
	u64 iv = ktime_to_ns(k->it_interval);
	bool none = k->it_sigev_notify == SIGEV_NONE;

	if (!timer_clock_ok(k->it_clock)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "POSIX timer %d on clock %d; only CLOCK_REALTIME, _MONOTONIC, _BOOTTIME and _TAI timers are supported",
			    k->it_id, k->it_clock);
		return -EOPNOTSUPP;
	}
	memset(p, 0, sizeof(*p));
	p->id = k->it_id;
	p->clock = k->it_clock;
	switch (k->it_sigev_notify) {
	case SIGEV_SIGNAL:
		p->notify = IMGCR_SIGEV_SIGNAL;
		break;
	case SIGEV_NONE:
		p->notify = IMGCR_SIGEV_NONE;
		break;
	case SIGEV_SIGNAL | SIGEV_THREAD_ID: {
		struct task_struct *to = pid_task(k->it_pid, PIDTYPE_PID);

		/* a thread that exited still has its timer: nothing to aim at */
		if (!to || to->signal != img->task->signal || to->exit_state) {
			dump_refuse(img, task_pid_nr(img->task),
				    "POSIX timer %d signals thread %d, which has exited; not supported",
				    k->it_id,
				    pid_nr_ns(k->it_pid, task_active_pid_ns(current)));
			return -EOPNOTSUPP;
		}
		p->notify = IMGCR_SIGEV_THREAD_ID;
		/* as the process's own PID namespace numbers it (its TIDs) */
		p->tid = pid_nr_ns(k->it_pid, task_active_pid_ns(img->task));
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	p->signo = imgcr_timer_sigq(k)->info.si_signo;
	p->value = (unsigned long)imgcr_timer_sigq(k)->info.si_value.sival_ptr;
	p->overrun = clamp_t(s64, k->it_overrun_last, 0, INT_MAX);
	p->interval_ns = iv;
	/* a SIGEV_NONE timer's hrtimer is never started, only its expiry set */
	if (iv || imgcr_timer_armed(k) || none)
		p->value_ns = hrtimer_left(&k->it.real.timer, iv, !iv && !none);
	if (none && !iv && p->value_ns <= 1)
		p->value_ns = 0;	/* an expired SIGEV_NONE one-shot reads 0 */
	return 0;
}

/* Under the siglock, which keeps the list of timers as it is. */
static size_t collect_timers(struct signal_struct *sig, struct k_itimer **ks,
			     size_t cap)
{
	struct k_itimer *k;
	size_t n = 0;

	imgcr_for_each_posix_timer(k, sig) {
		if (n < cap)
			ks[n] = k;
		n++;
	}
	return n;
}

/*
 * The list of timers is stable under the siglock, a timer's own state (its
 * hrtimer, which timer_settime() initializes again) only under its it_lock,
 * which nests outside the siglock (posix_timer_fn() takes it_lock, then the
 * siglock to queue the signal).  So the timers are collected under the
 * siglock and each is read under its it_lock.  RCU keeps a timer deleted
 * meanwhile in memory (k_itimers are freed after a grace period), and its
 * it_signal, cleared under it_lock before anything else of it is freed,
 * tells that it went.
 */
int dump_timers(struct dump_image *img)
{
	struct signal_struct *sig = img->task->signal;
	struct sighand_struct *sighand;
	struct k_itimer **ks;
	unsigned long flags;
	size_t n, i;
	int ret = 0;

	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand)
		return -ESRCH;
	dump_itimers(img);
	n = collect_timers(sig, NULL, 0);
	spin_unlock_irqrestore(&sighand->siglock, flags);
	if (!n)
		return 0;
	if (n > IMGCR_MAX_TIMERS) {
		dump_refuse(img, task_pid_nr(img->task),
			    "%zu POSIX timers (more than %d)", n, IMGCR_MAX_TIMERS);
		return -EFBIG;
	}
	img->timers = kvcalloc(n, sizeof(*img->timers), GFP_KERNEL_ACCOUNT);
	ks = kvcalloc(n, sizeof(*ks), GFP_KERNEL);
	if (!img->timers || !ks) {
		kvfree(ks);
		return -ENOMEM;
	}
	rcu_read_lock();
	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand) {
		ret = -ESRCH;
		goto out;
	}
	if (collect_timers(sig, ks, n) != n)
		ret = -EAGAIN;
	spin_unlock_irqrestore(&sighand->siglock, flags);
	for (i = 0; i < n && !ret; i++) {
		spin_lock_irqsave(&ks[i]->it_lock, flags);
		if (READ_ONCE(ks[i]->it_signal) != sig)
			ret = -EAGAIN;	/* deleted meanwhile */
		else
			ret = put_timer(img, ks[i], &img->timers[i]);
		spin_unlock_irqrestore(&ks[i]->it_lock, flags);
	}
out:
	rcu_read_unlock();
	kvfree(ks);
	if (!ret)
		img->proc.nr_timers = n;
	return ret;
}

/* The membarrier() registrations: their READY bits (set once complete). */
static u32 dump_membarrier(int state)
{
	u32 f = 0;

	if (state & MEMBARRIER_STATE_PRIVATE_EXPEDITED_READY)
		f |= IMGCR_PROC_MEMBARRIER_PRIVATE;
	if (state & MEMBARRIER_STATE_PRIVATE_EXPEDITED_SYNC_CORE_READY)
		f |= IMGCR_PROC_MEMBARRIER_SYNC_CORE;
	if (state & MEMBARRIER_STATE_PRIVATE_EXPEDITED_RSEQ_READY)
		f |= IMGCR_PROC_MEMBARRIER_RSEQ;
	if (state & MEMBARRIER_STATE_GLOBAL_EXPEDITED_READY)
		f |= IMGCR_PROC_MEMBARRIER_GLOBAL;
	return f;
}

/* The prctl() switches of the process (the per-thread ones are in th). */
void dump_proc_state(struct dump_image *img)
{
	struct imgcr_proc *p = &img->proc;

	p->nr_threads = img->nr_threads - 1;
	if (img->task->signal->is_child_subreaper)
		p->flags |= IMGCR_PROC_CHILD_SUBREAPER;
	p->flags |= imgcr_thp_disabled(img->mm);
	if (imgcr_not_dumpable(img->task, img->mm))
		p->flags |= IMGCR_PROC_NOT_DUMPABLE;
	p->flags |= dump_membarrier(atomic_read(&img->mm->membarrier_state));
	/* mlockall(MCL_FUTURE[|MCL_ONFAULT]); the task is stopped */
	if (img->mm->def_flags & VM_LOCKED)
		p->flags |= IMGCR_PROC_MCL_FUTURE;
	if (img->mm->def_flags & VM_LOCKONFAULT)
		p->flags |= IMGCR_PROC_MCL_ONFAULT;
	p->pdeath_signal = img->threads[0].th.pdeath_signal;
	p->timer_slack_ns = img->threads[0].th.timer_slack_ns;
	p->default_timer_slack_ns = img->threads[0].th.default_timer_slack_ns;
}
