// SPDX-License-Identifier: GPL-2.0
/*
 * What exists only once the exec is over: the threads besides the main
 * one, the pending signals, the interval and POSIX timers, and the
 * process-wide prctl() switches.
 *
 * The main thread recreates them in img_resume(), the task_work it runs on
 * its way back to user space after execve().  By then the exec is complete
 * (de_thread() would kill a thread made earlier, and on 6.1 CLONE_FS fails
 * while fs->in_exec is set) and no user instruction has run yet.
 *
 * A thread is made with the body of clone3(): CLONE_THREAD, set_tid = its
 * TID.  The child starts as a copy of the main thread's registers.  The
 * sched_process_fork tracepoint fires in the parent after copy_process()
 * succeeded and before the child is first woken; our probe hands the child
 * a task_work there, which sets its own registers, FPU state and per-thread
 * fields before its first return to user space.  The child then waits
 * until every thread exists and the signals and timers are back
 * (img_group.ready): no thread runs a user instruction before the whole
 * group is restored.  Only then does it unblock its own signals.
 *
 * What can still fail here (a TID taken since the exec checked it, the
 * pids cgroup limit, RLIMIT_NPROC, an LSM, a stop signal or the freezer
 * while clone3() runs) kills the whole thread group, with a message in the
 * kernel log.  Calling the syscall bodies directly skips seccomp for these
 * calls, which is why img_parse() refuses images that need any of them to
 * a caller under a seccomp filter.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/membarrier.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/posix-timers.h>
#include <linux/prctl.h>
#include <linux/refcount.h>
#include <linux/sched/coredump.h>
#include <linux/seccomp.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/task_work.h>
#include <linux/time.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <uapi/linux/sched.h>

#include "compat.h"
#include "loader.h"

struct img_group;

/* The task_work a new thread runs before its first user instruction. */
struct img_thread_work {
	struct callback_head work;
	struct img_group *group;
	const struct img_thread *t;
};

struct img_group {
	refcount_t ref;			/* the main thread + each started thread */
	struct completion ready;	/* all there, or failed */
	/*
	 * The main thread is done with what needs the caller's rights (the
	 * threads, timers and signals made, the clone3 page unmapped): no
	 * thread takes the task's credentials before (see img_thread_resume)
	 */
	struct completion priv_done;
	bool failed;
	bool stop;			/* SIGSTOP queued for the group */
	u32 main_tid;			/* the dumped main thread's TID */
	struct imgcr_thread main_th;
	struct imgcr_proc proc;
	struct img_thread *threads;	/* proc.nr_threads */
	struct img_thread_work *works;	/* one per thread */
	struct imgcr_sigqueue *sigq;	/* proc.nr_sigqueue */
	struct imgcr_posix_timer *timers;	/* proc.nr_timers */
	/* credentials (img_creds.c): each thread sets its own */
	bool has_creds;
	bool set_creds;			/* exactly ("--imgcr-creds") */
	bool set_ids;			/* and the IDs ("--imgcr-ids") */
	int dumpable;			/* the mm's, as the exec left it */
	struct imgcr_creds main_creds;
	atomic_t creds_left;		/* threads that have not set theirs */
	struct completion creds_set;	/* ... until none */
	bool main_strict;		/* the main thread enters seccomp strict mode */
	struct img_seccomp_set *sc;	/* seccomp filters, or NULL */
};

/*
 * The restores that are making threads right now, for the fork probe: it
 * runs on every fork in the system, and only looks further than an empty
 * list while a restore makes threads.  No lock is held across clone3(),
 * which may stop for a tracer.
 */
struct img_forker {
	struct list_head node;
	struct task_struct *task;	/* the restoring main thread */
	struct img_thread_work *work;	/* for its next child, until taken */
};

static LIST_HEAD(img_forkers);
static DEFINE_SPINLOCK(img_forkers_lock);
static struct tracepoint *img_fork_tp;

#define group_err(fmt, ...)						\
	pr_err_ratelimited(IMGCR_LOADER_NAME ": pid %d (%s): " fmt "; killing the restored process\n", \
			   task_pid_nr(current), current->comm, ##__VA_ARGS__)

static void img_group_release(struct img_group *g)
{
	unsigned int i;

	if (g->threads)
		for (i = 0; i < g->proc.nr_threads; i++)
			kvfree(g->threads[i].xstate);
	kvfree(g->threads);
	kvfree(g->works);
	kvfree(g->sigq);
	kvfree(g->timers);
	img_seccomp_free(g->sc);
	kfree(g);
}

void img_group_put(struct img_group *g)
{
	if (g && refcount_dec_and_test(&g->ref))
		img_group_release(g);
}

const struct imgcr_thread *img_group_main(struct img_group *g)
{
	return &g->main_th;
}

/* Once per thread: when every thread has, the main thread sets its own. */
static void thread_creds_done(struct img_group *g, bool *done)
{
	if (*done)
		return;
	*done = true;
	if (atomic_dec_and_test(&g->creds_left))
		complete(&g->creds_set);
}

/*
 * Seccomp strict mode, for the calling thread only: the last thing a
 * thread does before its first user instruction, so that nothing of the
 * restore (all of it calls syscall bodies, which no seccomp check sees,
 * but better not to rely on that) runs under it.  It cannot fail for a
 * thread with no filter (img_parse() refused a caller under one); if it
 * does anyway, the process is killed rather than run without it.
 */
static int enter_strict(void)
{
	long ret = img_call_sys(imgcr_sys_prctl, PR_SET_SECCOMP,
				SECCOMP_MODE_STRICT, 0, 0);

	if (ret)
		group_err("cannot enter seccomp strict mode again (%ld)", ret);
	return ret;
}

/*
 * Seccomp filters, for the calling thread (@i: its entry of
 * NT_IMGCR_SECCOMP, 0 the main thread): the rest of its chain after the
 * filters the main thread had installed when it made it, last, like
 * strict mode.  Everything was checked before the point of no return;
 * a failure (memory) kills the process rather than running it without.
 */
static int enter_filters(struct img_group *g, unsigned int i)
{
	int ret = img_seccomp_install_own(g->sc, i);

	if (ret)
		group_err("cannot install the seccomp filters of thread %d again (%d)",
			  i ? g->threads[i - 1].th.tid : g->main_tid, ret);
	return ret;
}

/* Runs in a new thread on its way to user space (or out, if killed). */
static void img_thread_resume(struct callback_head *cb)
{
	struct img_thread_work *w = container_of(cb, struct img_thread_work, work);
	struct img_group *g = w->group;
	const struct img_thread *t = w->t;
	const u64 *r = t->prstatus.regs;
	bool creds_done = false;
	sigset_t blocked;

	if (current->flags & PF_EXITING)
		goto out;
	img_set_regs(r);
	if (img_set_xstate(t->xstate)) {
		group_err("thread %d: cannot load its FPU state", t->th.tid);
		send_sig(SIGKILL, current, 1);
		goto out;
	}
	img_set_thread_fields(&t->th);
	img_set_late_fields(r[IMGCR_REG_RAX], &t->th);
	/*
	 * Not while the main thread still makes threads with the caller's
	 * rights: once this thread is the task's user, that user could
	 * reach the process through it (/proc/PID/task/TID/mem) and change
	 * the clone3() arguments the main thread reads from user memory.
	 */
	if (wait_for_completion_killable(&g->priv_done) || READ_ONCE(g->failed))
		goto out;
	/*
	 * Its own seccomp filters (copied through user memory) before its
	 * credentials change, while only the caller can reach the process.
	 */
	if (g->sc && enter_filters(g, t - g->threads + 1)) {
		send_sig(SIGKILL, current, 1);	/* the whole group */
		goto out;
	}
	/*
	 * Before the main thread's, which waits for every thread's.  The mm
	 * stays not dumpable (IMGCR_DUMPABLE_HOLD) until the main thread,
	 * last, gives the image's flag back: until every thread's filters
	 * are in, no thread may be open to ptrace by the task's user.
	 */
	if (g->has_creds) {
		int ret = img_set_creds(&t->creds, g->set_creds, g->set_ids,
					IMGCR_DUMPABLE_HOLD,
					t->th.pdeath_signal);

		if (ret) {
			group_err("thread %d: cannot set its credentials (%d)",
				  t->th.tid, ret);
			send_sig(SIGKILL, current, 1);
			goto out;
		}
	}
	thread_creds_done(g, &creds_done);
	if (wait_for_completion_killable(&g->ready) || READ_ONCE(g->failed))
		goto out;
	siginitset(&blocked, t->th.blocked);
	sigprocmask(SIG_SETMASK, &blocked, NULL);
	/* even if the mask did not change (no recalc): see img_group_run() */
	if (READ_ONCE(g->stop))
		set_thread_flag(TIF_SIGPENDING);
	if (t->seccomp_strict && enter_strict())
		send_sig(SIGKILL, current, 1);	/* the whole group */
	img_restart_pending(t->th.flags, r[IMGCR_REG_RAX], &t->call);
out:
	thread_creds_done(g, &creds_done);
	img_group_put(g);
	module_put(THIS_MODULE);
}

/* sched_process_fork: in the parent, before the child first runs. */
static void img_fork_probe(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct img_forker *f;
	unsigned long flags;

	/* a restore adds itself before its clone3(), in this very task */
	if (list_empty_careful(&img_forkers))
		return;
	spin_lock_irqsave(&img_forkers_lock, flags);
	list_for_each_entry(f, &img_forkers, node) {
		if (f->task != current)
			continue;
		if (f->work && child->signal == parent->signal &&
		    !task_work_add(child, &f->work->work, TWA_RESUME))
			f->work = NULL;	/* taken */
		break;
	}
	spin_unlock_irqrestore(&img_forkers_lock, flags);
}

static void find_fork_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		*(struct tracepoint **)priv = tp;
}

int img_group_init(void)
{
	for_each_kernel_tracepoint(find_fork_tp, &img_fork_tp);
	if (!img_fork_tp) {
		pr_err(IMGCR_LOADER_NAME ": tracepoint sched_process_fork not found; this kernel is not supported\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(img_fork_tp, img_fork_probe, NULL);
}

void img_group_exit(void)
{
	tracepoint_probe_unregister(img_fork_tp, img_fork_probe, NULL);
	tracepoint_synchronize_unregister();
}

/* The TID a thread of the image has now: the main thread is the caller. */
static pid_t group_tid(struct img_group *g, u32 tid)
{
	return tid == g->main_tid ? task_pid_vnr(current) : (pid_t)tid;
}

/*
 * Per-thread scratch in user memory: clone3(), timer_create() and the
 * others read their arguments from there.
 */
struct group_scratch {
	struct clone_args args;
	s32 set_tid;		/* clone3() reads a pid_t array */
	struct sigevent ev;
	timer_t id;
	struct __kernel_itimerspec its;
	struct __kernel_old_itimerval itv;
	u8 info[IMGCR_SIGINFO_SIZE];
};

#define SCRATCH(s, field) ((void __user *)&(s)->field)

static void set_fork_work(struct img_forker *f, struct img_thread_work *w)
{
	spin_lock_irq(&img_forkers_lock);
	f->work = w;
	spin_unlock_irq(&img_forkers_lock);
}

static int create_one(struct img_group *g, struct img_forker *f,
		      unsigned int i, struct group_scratch __user *s)
{
	u32 tid = g->threads[i].th.tid;
	bool taken;
	long ret;

	if (put_user((s32)tid, &s->set_tid))
		return -EFAULT;
	refcount_inc(&g->ref);
	__module_get(THIS_MODULE);
	set_fork_work(f, &g->works[i]);
	ret = img_call_sys(imgcr_sys_clone3, (unsigned long)&s->args,
			   sizeof(s->args), 0, 0);
	spin_lock_irq(&img_forkers_lock);
	taken = !f->work;
	f->work = NULL;
	spin_unlock_irq(&img_forkers_lock);
	if (!taken) {
		/* no child got it: no thread runs it */
		img_group_put(g);
		module_put(THIS_MODULE);
		if (ret > 0) {
			group_err("thread %u was made without its state", tid);
			return -EINVAL;
		}
	}
	if (ret < 0 && fatal_signal_pending(current))
		return ret;	/* killed during the restore: nothing to say */
	if (ret < 0) {
		group_err("cannot recreate thread %u (clone3: %ld%s)", tid, ret,
			  ret == -EEXIST ? ", the TID was taken since the exec" :
			  ret == -EAGAIN ? ", a process or pids limit" :
			  ret == -ERESTARTNOINTR ?
			  ", it was stopped or frozen meanwhile" : "");
		return ret;
	}
	if (ret != tid) {
		group_err("thread %u came back as %ld", tid, ret);
		return -EINVAL;
	}
	return 0;
}

static int create_threads(struct img_group *g, struct group_scratch __user *s)
{
	struct clone_args args = {
		.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			 CLONE_THREAD | CLONE_SYSVSEM,
		.set_tid = (unsigned long)&s->set_tid,
		.set_tid_size = 1,
	};
	struct img_forker f = { .task = current };
	unsigned int i, k;
	int ret = 0;

	if (!g->proc.nr_threads)
		return 0;
	if (copy_to_user(&s->args, &args, sizeof(args)))
		return -EFAULT;
	spin_lock_irq(&img_forkers_lock);
	list_add(&f.node, &img_forkers);
	spin_unlock_irq(&img_forkers_lock);
	/*
	 * By seccomp depth: each thread inherits, shared, the filters of
	 * the main thread's chain its own chain begins with (img_seccomp.c).
	 */
	for (k = 0; k < g->proc.nr_threads && !ret; k++) {
		i = img_seccomp_make_order(g->sc, k);
		ret = img_seccomp_before_thread(g->sc, i);
		if (ret)
			group_err("cannot install its seccomp filters again (%d)", ret);
		else
			ret = create_one(g, &f, i, s);
	}
	spin_lock_irq(&img_forkers_lock);
	list_del(&f.node);
	spin_unlock_irq(&img_forkers_lock);
	return ret;
}

/* exec cleared mm->membarrier_state: register again what the process had */
static int set_membarrier(u32 f)
{
	static const struct {
		u32 flag;
		int cmd;
	} cmds[] = {
		{ IMGCR_PROC_MEMBARRIER_PRIVATE, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED },
		{ IMGCR_PROC_MEMBARRIER_SYNC_CORE,
		  MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE },
		{ IMGCR_PROC_MEMBARRIER_RSEQ, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ },
		{ IMGCR_PROC_MEMBARRIER_GLOBAL, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED },
	};
	unsigned int i;
	long ret;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!(f & cmds[i].flag))
			continue;
		ret = img_call_sys(imgcr_sys_membarrier, cmds[i].cmd, 0, 0, 0);
		if (ret) {
			group_err("cannot register membarrier command %d again (%ld)",
				  cmds[i].cmd, ret);
			return ret;
		}
	}
	return 0;
}

static int set_switches(struct img_group *g)
{
	u32 f = g->proc.flags;
	long ret = 0;

	if (f & IMGCR_PROC_CHILD_SUBREAPER)
		ret = img_call_sys(imgcr_sys_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0);
	/* THP and dumpability: set before the fill, in img_restore_mm() */
	if (ret)
		group_err("cannot set the process flags %#x (%ld)", f, ret);
	if (!ret)
		ret = set_membarrier(f);
	return ret;
}

/* Round up, so that an armed timer stays armed. */
static struct __kernel_old_timeval ns_to_tv(u64 ns)
{
	struct __kernel_old_timeval tv;
	u64 us = DIV_ROUND_UP_ULL(ns, NSEC_PER_USEC);

	tv.tv_sec = div_u64(us, USEC_PER_SEC);
	tv.tv_usec = us - tv.tv_sec * USEC_PER_SEC;
	return tv;
}

static struct __kernel_timespec ns_to_ts(u64 ns)
{
	struct __kernel_timespec ts;

	ts.tv_sec = div_u64(ns, NSEC_PER_SEC);
	ts.tv_nsec = ns - ts.tv_sec * NSEC_PER_SEC;
	return ts;
}

static int set_itimers(struct img_group *g, struct group_scratch __user *s)
{
	bool disarm = img_caller_has_itimers();
	int which;
	long ret;

	for (which = IMGCR_ITIMER_REAL; which <= IMGCR_ITIMER_PROF; which++) {
		const struct imgcr_itimer *it = &g->proc.itimer[which];
		struct __kernel_old_itimerval v;

		/* a zero value disarms what the caller had armed */
		if (!it->value_ns && !disarm)
			continue;
		v.it_value = ns_to_tv(it->value_ns);
		v.it_interval = ns_to_tv(it->interval_ns);
		if (copy_to_user(&s->itv, &v, sizeof(v)))
			return -EFAULT;
		/* ITIMER_* are 0, 1, 2, as IMGCR_ITIMER_* */
		ret = img_call_sys(imgcr_sys_setitimer, which,
				   (unsigned long)&s->itv, 0, 0);
		if (ret) {
			group_err("cannot set interval timer %d (%ld)", which, ret);
			return ret;
		}
	}
	return 0;
}

static int cmp_timer_id(const void *a, const void *b)
{
	const struct imgcr_posix_timer *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* timer_getoverrun() reads it_overrun_last: no syscall sets it. */
static void set_overrun(s32 id, s32 overrun)
{
	struct signal_struct *sig = current->signal;
	struct k_itimer *k;

	spin_lock_irq(&current->sighand->siglock);
	imgcr_for_each_posix_timer(k, sig) {
		if (k->it_id == id) {
			k->it_overrun_last = overrun;
			break;
		}
	}
	spin_unlock_irq(&current->sighand->siglock);
}

static int set_one_timer(struct img_group *g, const struct imgcr_posix_timer *t,
			 struct group_scratch __user *s)
{
	struct sigevent ev = {};
	struct __kernel_itimerspec its;
	timer_t id;
	long ret;

	ev.sigev_value.sival_ptr = (void __user *)(unsigned long)t->value;
	ev.sigev_signo = t->signo;
	switch (t->notify) {
	case IMGCR_SIGEV_NONE:
		ev.sigev_notify = SIGEV_NONE;
		break;
	case IMGCR_SIGEV_THREAD_ID:
		ev.sigev_notify = SIGEV_SIGNAL | SIGEV_THREAD_ID;
		ev.sigev_notify_thread_id = group_tid(g, t->tid);
		break;
	default:
		ev.sigev_notify = SIGEV_SIGNAL;
		break;
	}
	if (copy_to_user(&s->ev, &ev, sizeof(ev)))
		return -EFAULT;
	/* timer_create() hands out next_posix_timer_id (6.1 to 7.2) */
	imgcr_set_next_timer_id(current->signal, t->id);
	ret = img_call_sys(imgcr_sys_timer_create, t->clock,
			   (unsigned long)&s->ev, (unsigned long)&s->id, 0);
	if (!ret && get_user(id, &s->id))
		ret = -EFAULT;
	if (!ret && id != t->id)
		ret = -EBUSY;
	if (ret) {
		group_err("cannot recreate POSIX timer %d (%ld)", t->id, ret);
		return ret;
	}
	if (t->value_ns) {
		its.it_value = ns_to_ts(t->value_ns);
		its.it_interval = ns_to_ts(t->interval_ns);
		if (copy_to_user(&s->its, &its, sizeof(its)))
			return -EFAULT;
		ret = img_call_sys(imgcr_sys_timer_settime, id, 0,
				   (unsigned long)&s->its, 0);
		if (ret) {
			group_err("cannot arm POSIX timer %d (%ld)", t->id, ret);
			return ret;
		}
	}
	set_overrun(t->id, t->overrun);
	return 0;
}

static int set_timers(struct img_group *g, struct group_scratch __user *s)
{
	unsigned int i;
	int ret;

	/* ascending ids leave next_posix_timer_id past the largest */
	sort(g->timers, g->proc.nr_timers, sizeof(*g->timers), cmp_timer_id,
	     NULL);
	for (i = 0; i < g->proc.nr_timers; i++) {
		ret = set_one_timer(g, &g->timers[i], s);
		if (ret)
			return ret;
	}
	return 0;
}

/* One of our threads, by its TID now (see group_tid()). */
static int send_to_thread(pid_t tid, int sig, kernel_siginfo_t *info)
{
	struct task_struct *t;
	int ret = -ESRCH;

	rcu_read_lock();
	t = pid_task(find_vpid(tid), PIDTYPE_PID);
	if (t && t->signal == current->signal)
		ret = send_sig_info(sig, info, t);
	rcu_read_unlock();
	return ret;
}

/*
 * Queue the pending signals again, in their order, while every thread
 * blocks everything, each with the siginfo the original would have been
 * given.  Process-wide ones go through rt_sigqueueinfo(), which keeps any
 * si_code for a process signalling itself; thread-directed ones through
 * send_sig_info() (rt_tgsigqueueinfo() would refuse tgkill()'s SI_TKILL
 * for another thread).
 */
static int queue_signals(struct img_group *g, struct group_scratch __user *s)
{
	pid_t tgid = task_tgid_vnr(current);
	kernel_siginfo_t info;
	unsigned int i;
	long ret;

	BUILD_BUG_ON(sizeof(info) > IMGCR_SIGINFO_SIZE);
	for (i = 0; i < g->proc.nr_sigqueue; i++) {
		const struct imgcr_sigqueue *q = &g->sigq[i];
		int sig;

		memcpy(&info, q->info, sizeof(info));
		sig = info.si_signo;
		if (q->tid) {
			ret = send_to_thread(group_tid(g, q->tid), sig, &info);
		} else {
			if (copy_to_user(&s->info, q->info, sizeof(q->info)))
				return -EFAULT;
			ret = img_call_sys(imgcr_sys_rt_sigqueueinfo, tgid, sig,
					   (unsigned long)&s->info, 0);
		}
		if (ret) {
			group_err("cannot queue signal %d for %s %u again (%ld)",
				  sig, q->tid ? "thread" : "process", q->tid, ret);
			return ret;
		}
	}
	return 0;
}

/*
 * Last: the threads were made with the exec's credentials (clone3(set_tid)
 * may need CAP_CHECKPOINT_RESTORE, and a thread must not inherit the main
 * thread's no_new_privs); each has set its own when this one sets its.
 */
static int set_main_creds(struct img_group *g)
{
	int ret;

	if (g->proc.nr_threads &&
	    wait_for_completion_killable(&g->creds_set))
		return -EINTR;
	ret = img_set_creds(&g->main_creds, g->set_creds, g->set_ids,
			    g->dumpable, g->main_th.pdeath_signal);
	if (ret)
		group_err("cannot set its credentials (%d)", ret);
	return ret;
}

static bool group_needs_scratch(const struct img_group *g)
{
	const struct imgcr_itimer *it = g->proc.itimer;

	return g->proc.nr_threads || g->proc.nr_sigqueue || g->proc.nr_timers ||
	       it[0].value_ns || it[1].value_ns || it[2].value_ns ||
	       img_caller_has_itimers();
}

/*
 * In the main thread's img_resume().  Returns 0 once every thread, signal
 * and timer is back; otherwise the group is being killed.
 *
 * @stop_sig (the task was stopped when dumped, by that signal): send it to
 * the whole group before any thread is let go.  SIGTSTP, SIGTTIN and
 * SIGTTOU stop as SIGSTOP does when their action is the default, they are
 * not blocked in every thread and the process group is not orphaned,
 * which imgcr checked (as when they stopped it); then the group stop and
 * the status its parent's waitpid() reports carry that signal.  The signal is process-wide (shared pending), and
 * every thread has TIF_SIGPENDING set before it leaves its task_work (the
 * main thread here, the others in img_thread_resume(), after g->ready), so
 * exit_to_user_mode_loop() goes through get_signal() before the first
 * user instruction: the first thread there dequeues SIGSTOP and starts the
 * group stop (under siglock), the others join it.  A spurious
 * TIF_SIGPENDING is harmless: orig_ax is -1, no syscall is restarted,
 * unless the thread is put back in an interrupted call, whose restart
 * img_restart_pending() asks for anyway.
 * SEND_SIG_PRIV (kill_pid's priv) is not ignored even by the init of a
 * PID namespace.
 */
int img_group_run(struct img_group *g, int stop_sig)
{
	struct group_scratch __user *s = NULL;
	unsigned long addr = 0;
	int ret = 0;

	if ((current->flags & PF_EXITING) || fatal_signal_pending(current)) {
		ret = -EINTR;	/* killed before it could begin */
		goto out;
	}
	if (group_needs_scratch(g)) {
		BUILD_BUG_ON(sizeof(*s) > PAGE_SIZE);
		addr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, 0);
		if (IS_ERR_VALUE(addr)) {
			ret = (long)addr;
			addr = 0;
			group_err("no memory for the thread arguments (%d)", ret);
			goto out;
		}
		s = (struct group_scratch __user *)addr;
	}
	/*
	 * The switches first: membarrier registration with one mm user takes
	 * the path that cannot fail (no cpumask allocation, no RCU grace
	 * period while the threads wait).
	 */
	g->dumpable = imgcr_get_dumpable();	/* before any commit_creds() */
	ret = set_switches(g);
	if (!ret)
		ret = create_threads(g, s);
	if (!ret)
		ret = set_itimers(g, s);
	if (!ret)
		ret = set_timers(g, s);
	if (!ret)
		ret = queue_signals(g, s);
	if (addr)
		vm_munmap(addr, PAGE_SIZE);
	complete_all(&g->priv_done);
	/* the rest of its own filters: after the threads, before its IDs */
	if (!ret && g->sc)
		ret = enter_filters(g, 0);
	if (!ret && g->has_creds)
		ret = set_main_creds(g);
	if (!ret && stop_sig) {
		ret = kill_pid(task_tgid(current), stop_sig, 1);
		if (ret)
			group_err("cannot stop it again (%d)", ret);
		WRITE_ONCE(g->stop, true);
		set_thread_flag(TIF_SIGPENDING);
	}
	/* before any other thread may run user code */
	if (!ret && g->main_strict)
		ret = enter_strict();
out:
	if (ret) {
		WRITE_ONCE(g->failed, true);
		send_sig(SIGKILL, current, 1);	/* the whole group */
	}
	complete_all(&g->priv_done);	/* again on the way out: no thread waits */
	complete_all(&g->ready);
	img_group_put(g);
	return ret;
}

/*
 * Before the point of no return: take over the image's threads, signals
 * and timers, and allocate everything the run needs but the children.
 */
struct img_group *img_group_prepare(struct img *img)
{
	struct img_group *g;
	unsigned int i, n = img->proc.nr_threads;

	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return ERR_PTR(-ENOMEM);
	refcount_set(&g->ref, 1);
	init_completion(&g->ready);
	init_completion(&g->priv_done);
	g->main_tid = img->task.pid;
	g->main_th = img->main_th;
	g->proc = img->proc;
	g->has_creds = img->has_creds;
	g->set_creds = img->set_creds;
	g->set_ids = img->set_ids;
	g->main_creds = img->creds;
	atomic_set(&g->creds_left, n);
	init_completion(&g->creds_set);
	g->main_strict = img->main_strict;
	if (n) {
		g->works = kvcalloc(n, sizeof(*g->works), GFP_KERNEL_ACCOUNT);
		if (!g->works) {
			kfree(g);
			return ERR_PTR(-ENOMEM);
		}
	}
	g->threads = img->threads;
	img->threads = NULL;
	g->sigq = img->sigq;
	img->sigq = NULL;
	g->timers = img->timers;
	img->timers = NULL;
	g->sc = img->sc;
	img->sc = NULL;
	for (i = 0; i < n; i++) {
		init_task_work(&g->works[i].work, img_thread_resume);
		g->works[i].group = g;
		g->works[i].t = &g->threads[i];
	}
	return g;
}
