// SPDX-License-Identifier: GPL-2.0
/*
 * The file behind /proc/<pid>/dump: an ELF core image of a stopped task
 * that binfmt_img can execute to resume it.  The format is described in
 * include/uapi/linux/imgcr.h.
 *
 * The image is of the whole thread group: /proc/<tid>/dump of any thread
 * gives the same one, the group leader as its main thread.
 *
 * open() does all the work while every thread is known to be stopped: it
 * checks the caller's rights exactly as /proc/<pid>/mem does, captures each
 * thread's registers and state, pending signals and timers, walks the VMAs,
 * pins every page the image will carry, and lays out the ELF header and
 * notes.  read() then only copies, and refuses (EAGAIN) once any thread has
 * run, or a thread appeared or went, since open(), so a reader never gets a
 * torn image.  The task itself is never modified.
 */
#include <linux/cred.h>
#include <linux/crc32.h>
#include <linux/elf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/hugetlb.h>
#include <linux/io_uring_types.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/magic.h>
#include <linux/mempolicy.h>
#include <linux/shmem_fs.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/nospec.h>
#include <linux/nsproxy.h>
#include <linux/posix-timers.h>
#include <linux/alarmtimer.h>
#include <linux/ptrace.h>
#include <linux/regset.h>
#include <linux/seccomp.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/tracepoint.h>
#include <linux/user_namespace.h>
#include <asm/vdso.h>
#include <uapi/linux/imgcr.h>

#define IMGCR_WANT_EXIT_TP
#include "checks.h"
#include "compat.h"
#include "dump.h"
#include "file_head.h"
#include "img_dump.h"
#include "proc_private.h"

/* Grow a kvmalloc'ed array so that it holds at least @need elements. */
int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	/* kvmalloc() warns above INT_MAX bytes: refuse such an image first */
	if (need > INT_MAX / elem)
		return -EFBIG;
	while (ncap < need)
		ncap *= 2;
	if (ncap > INT_MAX / elem)
		ncap = INT_MAX / elem;
	n = kvmalloc_array(ncap, elem, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!n)
		return -ENOMEM;
	if (*arr)
		memcpy(n, *arr, *cap * elem);
	kvfree(*arr);
	*arr = n;
	*cap = ncap;
	return 0;
}

static void dump_free(struct dump_image *img)
{
	size_t i;

	for (i = 0; !img->unpinned && i < img->nr_pages; i++)
		put_page(img->pages[i]);
	for (i = 0; !img->unpinned && i < img->nr_files; i++)
		fput(img->files[i]);
	kvfree(img->pages);
	kvfree(img->runs);
	kvfree(img->files);
	kvfree(img->file_off);
	kvfree(img->file_held);
	kvfree(img->file_next);
	kvfree(img->file_bucket);
	kvfree(img->vmas);
	kvfree(img->filerecs);
	kvfree(img->head);
	for (i = 0; i < img->nr_threads; i++) {
		kvfree(img->threads[i].xstate);
		put_task_struct(img->threads[i].task);
	}
	kvfree(img->threads);
	kvfree(img->sigq);
	kvfree(img->timers);
	kvfree(img->seccomp);
	kvfree(img->sleeps);
	kvfree(img->sigwaits);
	if (img->mm)
		mmput(img->mm);
	if (img->mem)
		fput(img->mem);
	put_task_struct(img->task);
	kfree(img);
}

static unsigned long task_switches(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/*
 * True while no thread has run since open() and the group has the same
 * threads: the image is coherent.  (A stopped thread cannot clone; a new
 * or exited thread changes the count.)
 */
bool dump_unchanged(struct dump_image *img)
{
	unsigned int i;

	for (i = 0; i < img->nr_threads; i++) {
		struct task_struct *t = img->threads[i].task;

		/*
		 * A thread sets its stopped state itself, before it leaves
		 * the CPU and its switch count grows: one that ran and is
		 * about to stop again is still on its CPU.  The acquire pairs
		 * with the release of on_cpu in finish_task_switch(), after
		 * the switch was counted.
		 */
		if (!task_is_stopped_or_traced(t) ||
		    smp_load_acquire(&t->on_cpu) ||
		    task_switches(t) != img->threads[i].switches)
			return false;
	}
	return get_nr_threads(img->task) == img->nr_threads;
}

static bool task_has_mm(struct task_struct *t, struct mm_struct *mm)
{
	struct mm_struct *cur = get_task_mm(t);

	if (cur)
		mmput(cur);
	return cur == mm;
}

/*
 * Open the sibling /proc/<pid>/mem in-kernel: the kernel then applies its
 * own ptrace-attach check (mm_access() with PTRACE_MODE_ATTACH_FSCREDS,
 * Yama, LSMs, dumpability), and we keep exactly the mm it approved.
 */
static int dump_check_access(struct dump_image *img, struct file *file)
{
	struct dentry *parent, *md;
	struct mm_struct *mm;
	struct path path;

	parent = dget_parent(file->f_path.dentry);
	md = imgcr_lookup_unlocked("mem", parent);
	dput(parent);
	if (IS_ERR(md))
		return PTR_ERR(md);
	if (d_really_is_negative(md)) {
		dput(md);
		return -ESRCH;
	}
	path.mnt = file->f_path.mnt;
	path.dentry = md;
	img->mem = dentry_open(&path, O_RDONLY, current_cred());
	dput(md);
	if (IS_ERR(img->mem)) {
		int ret = PTR_ERR(img->mem);

		img->mem = NULL;
		return ret;
	}
	mm = img->mem->private_data;
	if (!mm)		/* a kernel thread: no user process to dump */
		return -ESRCH;
	if (!mmget_not_zero(mm))
		return -ESRCH;
	img->mm = mm;

	if (!task_has_mm(img->task, mm))	/* it exec'd or exited meanwhile */
		return -ESRCH;
	return 0;
}

static const struct user_regset *find_regset(const struct user_regset_view *v,
					     unsigned int type)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		if (v->regsets[i].core_note_type == type)
			return &v->regsets[i];
	return NULL;
}

/*
 * A stopped task sits in get_signal() before the syscall-restart fixup.
 * Do that fixup here, as CRIU does, so no -ERESTART* reaches user space
 * after restore: restartable calls are re-executed, restart blocks (whose
 * state lives in the kernel) become -EINTR, but for a relative nanosleep
 * (dump_sleep()), one on a CPU or alarm clock (dump_clock_sleep(),
 * dump_abs_cpu_sleep()), a poll (dump_poll()) and a futex wait
 * (dump_futex()).
 * The code of a restartable call is kept in the flags: the loader puts it
 * back, and the kernel's signal code decides on the way out, as it would
 * have for this task.
 */
static u32 restart_code_flag(long ret)
{
	switch (ret) {
	case -ERESTARTSYS:
		return IMGCR_TASK_RESTART_SYS;
	case -ERESTARTNOINTR:
		return IMGCR_TASK_RESTART_NOINTR;
	case -ERESTARTNOHAND:
		return IMGCR_TASK_RESTART_NOHAND;
	}
	return 0;	/* -ENOSYS: a syscall-entry stop, the call never ran */
}

/*
 * The restart block of a relative nanosleep() or clock_nanosleep() on a
 * clock of the hrtimer (set by hrtimer_nanosleep(), the only one that sets
 * hrtimer_nanosleep_restart), in a 64-bit call: its clock, rmtp and the
 * time left.  False for any other restart block (poll, futex waits, CPU
 * and alarm clocks have theirs, a 32-bit call returns EINTR).  The thread
 * is stopped: only it changes its restart block.
 */
static bool dump_sleep(struct dump_thread *th)
{
	const struct restart_block *rb = &th->task->restart_block;
	struct imgcr_sleep *s = &th->sleep;
	ktime_t now, left;

	if (!imgcr_hrtimer_nanosleep_restart ||
	    (unsigned long)READ_ONCE(rb->fn) != imgcr_hrtimer_nanosleep_restart)
		return false;
#ifdef CONFIG_COMPAT
	if (rb->arch_data & TS_COMPAT)
		return false;
#endif
	if (rb->nanosleep.type != TT_NONE && rb->nanosleep.type != TT_NATIVE)
		return false;
	if (!sleep_clock_now(rb->nanosleep.clockid, &now))
		return false;
	memset(s, 0, sizeof(*s));
	s->clock = rb->nanosleep.clockid;
	if (rb->nanosleep.type == TT_NATIVE) {
		s->flags = IMGCR_SLEEP_RMTP;
		s->rmtp = (unsigned long)rb->nanosleep.rmtp;
	}
	/* over already: the restart returns 0 at once, as it would have */
	left = ktime_sub((ktime_t)rb->nanosleep.expires, now);
	s->remaining_ns = left > 0 ? left : 0;
	return true;
}

/*
 * The restart block of a poll() (sys_poll(), the only one that sets
 * do_restart_poll), in a 64-bit call: its fds and the time left, if it
 * has a timeout (an end time on CLOCK_MONOTONIC).
 */
static bool dump_poll(struct dump_thread *th)
{
	const struct restart_block *rb = &th->task->restart_block;
	struct imgcr_sleep *s = &th->sleep;
	ktime_t left;

	if (!imgcr_do_restart_poll ||
	    (unsigned long)READ_ONCE(rb->fn) != imgcr_do_restart_poll)
		return false;
#ifdef CONFIG_COMPAT
	if (rb->arch_data & TS_COMPAT)
		return false;
#endif
	if (rb->poll.nfds < 0)
		return false;
	memset(s, 0, sizeof(*s));
	s->clock = CLOCK_MONOTONIC;
	s->flags = IMGCR_SLEEP_POLL;
	s->nfds = rb->poll.nfds;
	s->rmtp = (unsigned long)rb->poll.ufds;
	if (rb->poll.has_timeout) {
		s->flags |= IMGCR_SLEEP_TIMEOUT;
		left = ktime_sub(imgcr_poll_end(rb), ktime_get());
		s->remaining_ns = left > 0 ? left : 0;
	}
	return true;
}

/*
 * The restart block of a futex wait with a timeout (futex_wait(), the only
 * one that sets futex_wait_restart), in a 64-bit call, on a 32-bit futex
 * (FUTEX_WAIT, or FUTEX_WAIT_BITSET with its bitset) and no flag but
 * shared and CLOCK_REALTIME: the word, the value, the bitset, and the time
 * left (CLOCK_MONOTONIC) or the absolute expiry (CLOCK_REALTIME).
 */
static bool dump_futex(struct dump_thread *th)
{
	const struct restart_block *rb = &th->task->restart_block;
	struct imgcr_sleep *s = &th->sleep;
	u32 f = rb->futex.flags;
	ktime_t t = (ktime_t)rb->futex.time, left;

	if (!imgcr_futex_wait_restart ||
	    (unsigned long)READ_ONCE(rb->fn) != imgcr_futex_wait_restart)
		return false;
#ifdef CONFIG_COMPAT
	if (rb->arch_data & TS_COMPAT)
		return false;
#endif
	if ((f & ~(IMGCR_FUTEX_SHARED | IMGCR_FUTEX_CLOCKRT)) !=
	    (IMGCR_FUTEX_SIZE_32 | IMGCR_FUTEX_HAS_TIMEOUT) ||
	    !rb->futex.bitset || t < 0)
		return false;
	memset(s, 0, sizeof(*s));
	s->flags = IMGCR_SLEEP_FUTEX;
	if (rb->futex.bitset != FUTEX_BITSET_MATCH_ANY) {
		s->flags |= IMGCR_SLEEP_BITSET;
		s->bitset = rb->futex.bitset;
	}
	if (f & IMGCR_FUTEX_SHARED)
		s->flags |= IMGCR_SLEEP_SHARED;
	s->nfds = rb->futex.val;
	s->rmtp = (unsigned long)rb->futex.uaddr;
	if (f & IMGCR_FUTEX_CLOCKRT) {
		s->clock = CLOCK_REALTIME;
		s->remaining_ns = t;
	} else {
		s->clock = CLOCK_MONOTONIC;
		left = ktime_sub(t, ktime_get());
		s->remaining_ns = left > 0 ? left : 0;
	}
	return true;
}

/*
 * A CPU clock's clockid as a call names it: CLOCK_PROCESS_CPUTIME_ID or an
 * encoded one (not a clock fd's, CLOCKFD)
 */
static bool cpu_clockid(clockid_t c)
{
	return c == CLOCK_PROCESS_CPUTIME_ID ||
	       (c < 0 && CPUCLOCK_WHICH(c) != CLOCKFD);
}

/*
 * The CPU clock @c a thread of @img sleeps on, which it names with a PID
 * of its PID namespace (0: its own process): 0, with @c as the image
 * keeps it and @now that clock's now, if the loader can make it again
 * (the process's own group clock on CPUCLOCK_SCHED:
 * CLOCK_PROCESS_CPUTIME_ID); else a refusal naming the clock.
 */
static int cpu_sleep_clock(struct dump_image *img, struct dump_thread *th,
			   clockid_t *c, u64 *now)
{
	struct pid_namespace *ns = task_active_pid_ns(th->task);
	pid_t pid = CPUCLOCK_PID(*c);
	const char *why = NULL;

	if (CPUCLOCK_WHICH(*c) != CPUCLOCK_SCHED)
		why = "a CPU clock other than CPUCLOCK_SCHED";
	else if (CPUCLOCK_PERTHREAD(*c))
		why = "another thread's CPU clock (pthread_getcpuclockid())";
	else if (pid && pid != task_tgid_nr_ns(img->task, ns))
		why = "another process's CPU clock (clock_getcpuclockid())";
	if (why) {
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d is in clock_nanosleep() on %s (clock %d); not supported",
			    task_pid_nr(th->task), why, *c);
		return -EOPNOTSUPP;
	}
	*c = CLOCK_PROCESS_CPUTIME_ID;
	*now = imgcr_group_sched_runtime(img->task);
	return 0;
}

/*
 * Whether the thread was stopped in a 32-bit call (int 0x80 from a 64-bit
 * task): TS_COMPAT is still set while it waits in get_signal(), and its
 * number and arguments are i386's, not those of the 64-bit call.
 */
static bool in_compat_call(struct dump_thread *th)
{
#ifdef CONFIG_COMPAT
	return task_thread_info(th->task)->status & TS_COMPAT;
#else
	return false;
#endif
}

/* i386's clock_nanosleep and clock_nanosleep_time64 */
#define IMGCR_NR_IA32_CLOCK_NANOSLEEP		267
#define IMGCR_NR_IA32_CLOCK_NANOSLEEP_TIME64	407

/*
 * The restart block of a relative clock_nanosleep() on a CPU clock
 * (posix_cpu_nsleep_restart) or an alarm clock
 * (alarm_timer_nsleep_restart), in a 64-bit call: 1 with its entry made
 * (the CPU or alarm-clock time left), 0 if it is neither, or a refusal:
 * a clock the loader cannot make again, or such a sleep seen (by its
 * call and clock) on a kernel whose restart function was not found.
 */
static int dump_clock_sleep(struct dump_image *img, struct dump_thread *th)
{
	const struct restart_block *rb = &th->task->restart_block;
	unsigned long fn = (unsigned long)READ_ONCE(rb->fn);
	u64 *r = th->prstatus.regs;
	struct imgcr_sleep *s = &th->sleep;
	clockid_t c = rb->nanosleep.clockid;
	ktime_t now;
	u64 cnow;
	s64 left;
	int ret;

	if (!fn)
		return 0;
	if (fn == imgcr_posix_cpu_nsleep_restart) {
		ret = cpu_sleep_clock(img, th, &c, &cnow);
		if (ret)
			return ret;
		left = (u64)rb->nanosleep.expires > cnow ?
		       (u64)rb->nanosleep.expires - cnow : 0;
	} else if (fn == imgcr_alarm_timer_nsleep_restart) {
		/* it keeps enum alarmtimer_type, not the clockid */
		c = c == ALARM_REALTIME ? CLOCK_REALTIME_ALARM :
		    c == ALARM_BOOTTIME ? CLOCK_BOOTTIME_ALARM : -1;
		if (!alarm_clock_now(c, &now))
			return 0;
		left = ktime_sub((ktime_t)rb->nanosleep.expires, now);
	} else {
		c = (clockid_t)r[IMGCR_REG_RDI];
		/* a 32-bit call's restart block gives EINTR anyway, below */
		if (in_compat_call(th) ||
		    r[IMGCR_REG_ORIG_RAX] != __NR_clock_nanosleep ||
		    (!cpu_clockid(c) && c != CLOCK_REALTIME_ALARM &&
		     c != CLOCK_BOOTTIME_ALARM))
			return 0;
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d is in clock_nanosleep() on clock %d, and this kernel's %s was not found when the module was loaded",
			    task_pid_nr(th->task), c, cpu_clockid(c) ?
			    "posix_cpu_nsleep_restart" : "alarm_timer_nsleep_restart");
		return -EOPNOTSUPP;
	}
#ifdef CONFIG_COMPAT
	if (rb->arch_data & TS_COMPAT)
		return 0;
#endif
	if (rb->nanosleep.type != TT_NONE && rb->nanosleep.type != TT_NATIVE)
		return 0;
	memset(s, 0, sizeof(*s));
	s->clock = c;
	if (rb->nanosleep.type == TT_NATIVE) {
		s->flags = IMGCR_SLEEP_RMTP;
		s->rmtp = (unsigned long)rb->nanosleep.rmtp;
	}
	s->remaining_ns = left > 0 ? left : 0;
	return 1;
}

/*
 * A clock_nanosleep() with TIMER_ABSTIME on a CPU clock (-ERESTARTNOHAND,
 * no restart block): its absolute time is on the old process's CPU
 * clock, which the restored one does not continue.  1 with an entry made
 * as for a relative one with the CPU time left to it (no rmtp: the kernel
 * writes none for it), 0 for any other call, or a refusal.
 */
static int dump_abs_cpu_sleep(struct dump_image *img, struct dump_thread *th)
{
	u64 *r = th->prstatus.regs;
	struct imgcr_sleep *s = &th->sleep;
	clockid_t c = (clockid_t)r[IMGCR_REG_RDI];
	struct __kernel_timespec ts;
	u64 cnow, end;
	int ret;

	if (in_compat_call(th)) {
		/*
		 * i386: clock in EBX, flags in ECX.  Made again, it would sleep
		 * to its old absolute time on the new process's CPU clock, and
		 * its timespec is a 32-bit one: refused.
		 */
		c = (clockid_t)r[IMGCR_REG_RBX];
		if ((r[IMGCR_REG_ORIG_RAX] != IMGCR_NR_IA32_CLOCK_NANOSLEEP &&
		     r[IMGCR_REG_ORIG_RAX] != IMGCR_NR_IA32_CLOCK_NANOSLEEP_TIME64) ||
		    !cpu_clockid(c) || !(r[IMGCR_REG_RCX] & TIMER_ABSTIME))
			return 0;
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d is in a 32-bit (int 0x80) clock_nanosleep() on CPU clock %d with TIMER_ABSTIME, which cannot be restored",
			    task_pid_nr(th->task), c);
		return -EOPNOTSUPP;
	}
	if (r[IMGCR_REG_ORIG_RAX] != __NR_clock_nanosleep || !cpu_clockid(c) ||
	    !(r[IMGCR_REG_RSI] & TIMER_ABSTIME))
		return 0;
	if (!imgcr_posix_cpu_nsleep_restart) {
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d is in clock_nanosleep() on clock %d, and this kernel's posix_cpu_nsleep_restart was not found when the module was loaded",
			    task_pid_nr(th->task), c);
		return -EOPNOTSUPP;
	}
	if (c == CLOCK_PROCESS_CPUTIME_ID)	/* process_cpu_nsleep()'s */
		c = make_process_cpuclock(0, CPUCLOCK_SCHED);
	ret = cpu_sleep_clock(img, th, &c, &cnow);
	if (ret)
		return ret;
	/*
	 * Read as ptrace would, through the thread's mm (img->mm, which the
	 * group's threads share): access_remote_vm() is not exported, and a
	 * get_user_pages_remote(FOLL_NOFAULT) copy of 16 bytes that may span
	 * two pages is more code than the contrived cases need.  It may
	 * fault the page in (e.g. a hole punched in a memfd since the call
	 * began): only what the restarted call does first anyway, as it reads
	 * the same timespec again; a userfaultfd page gives -EFAULT (no
	 * FAULT_FLAG_ALLOW_RETRY without "locked"), refused below.
	 */
	if (access_process_vm(th->task, r[IMGCR_REG_RDX], &ts, sizeof(ts),
			      FOLL_FORCE) != sizeof(ts) ||
	    ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC) {
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d is in clock_nanosleep() on clock %d with TIMER_ABSTIME, and its time could not be read",
			    task_pid_nr(th->task), c);
		return -EOPNOTSUPP;
	}
	end = ktime_to_ns(timespec64_to_ktime((struct timespec64){
		.tv_sec = ts.tv_sec, .tv_nsec = ts.tv_nsec }));
	memset(s, 0, sizeof(*s));
	s->clock = c;
	s->remaining_ns = end > cnow ? end - cnow : 0;
	return 1;
}

static int fixup_syscall_restart(struct dump_image *img, struct dump_thread *th)
{
	u64 *r = th->prstatus.regs;
	long ret = (long)r[IMGCR_REG_RAX];
	int rb;

	if ((long)r[IMGCR_REG_ORIG_RAX] < 0)
		return 0;
	if (ret == -ERESTARTNOHAND) {
		rb = dump_abs_cpu_sleep(img, th);
		if (rb < 0)
			return rb;
		if (rb)
			goto restart_block;
	}
	switch (ret) {
	case -ENOSYS:		/* ptrace syscall-entry stop: not run yet */
		if (!task_is_traced(th->task))
			break;
		fallthrough;
	case -ERESTARTNOHAND:
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
		r[IMGCR_REG_RAX] = r[IMGCR_REG_ORIG_RAX];
		r[IMGCR_REG_RIP] -= 2;
		th->th.flags |= IMGCR_TASK_RESTARTED_SYSCALL | restart_code_flag(ret);
		break;
	case -ERESTART_RESTARTBLOCK:
		rb = dump_clock_sleep(img, th);
		if (rb < 0)
			return rb;
		if (rb || dump_sleep(th) || dump_poll(th) || dump_futex(th))
			goto restart_block;
		r[IMGCR_REG_RAX] = (u64)-EINTR;
		th->th.flags |= IMGCR_TASK_INTERRUPTED_SYSCALL;
		break;
	}
	return 0;
restart_block:
	r[IMGCR_REG_RAX] = r[IMGCR_REG_ORIG_RAX];
	r[IMGCR_REG_RIP] -= 2;
	th->th.flags |= IMGCR_TASK_RESTARTED_SYSCALL | IMGCR_TASK_RESTART_BLOCK;
	return 0;
}

/*
 * A ring registered with IORING_REGISTER_RING_FDS outlives its last fd and
 * mapping: imgcr refuses an io_uring by its fd, this one can only be seen
 * here.  Only the thread itself changes its table, and it is stopped.
 */
static bool io_uring_registered(struct task_struct *t)
{
#ifdef CONFIG_IO_URING
	struct io_uring_task *tctx = t->io_uring;
	int i;

	for (i = 0; tctx && i < IO_RINGFD_REG_MAX; i++)
		if (READ_ONCE(tctx->registered_rings[i]))
			return true;
#endif
	return false;
}

static int dump_regs(struct dump_image *img, struct dump_thread *th)
{
	struct task_struct *t = th->task;
	const struct user_regset_view *view = th->view;
	const struct user_regset *rs;
	u64 *r = th->prstatus.regs;
	int ret;

	/* the general registers were read by dump_gpregs() */
	if (r[IMGCR_REG_CS] != __USER_CS) {
		dump_refuse(img, task_pid_nr(t),
			    "only 64-bit tasks can be dumped");
		return -EOPNOTSUPP;
	}
	if (r[IMGCR_REG_FS] || r[IMGCR_REG_GS] || r[IMGCR_REG_DS] ||
	    r[IMGCR_REG_ES]) {
		dump_refuse(img, task_pid_nr(t),
			    "segment selectors in use (LDT/TLS entries are not supported)");
		return -EOPNOTSUPP;
	}
#ifdef ARCH_SHSTK_SHSTK
	if (t->thread.features & ARCH_SHSTK_SHSTK) {
		dump_refuse(img, task_pid_nr(t),
			    "shadow stacks are not supported");
		return -EOPNOTSUPP;
	}
#endif
	if (io_uring_registered(t)) {
		dump_refuse(img, task_pid_nr(t),
			    "an io_uring registered with IORING_REGISTER_RING_FDS; not supported");
		return -EOPNOTSUPP;
	}
	ret = fixup_syscall_restart(img, th);
	if (ret)
		return ret;

	rs = find_regset(view, NT_PRFPREG);
	if (!rs)
		return -EOPNOTSUPP;
	ret = regset_get(t, rs, sizeof(th->fpregs), th->fpregs);
	if (ret < 0)
		return ret;
	th->prstatus.fpvalid = 1;

	rs = find_regset(view, NT_X86_XSTATE);
	if (!rs || !rs->n) {
		dump_refuse(img, task_pid_nr(t),
			    "this CPU has no XSAVE; not supported");
		return -EOPNOTSUPP;
	}
	ret = regset_get_alloc(t, rs, rs->n * rs->size, &th->xstate);
	if (ret < 0)
		return ret;
	th->xstate_size = ret;
	/* XSTATE_BV: the first word of the header after the legacy area */
	memcpy(&th->th.xfeatures, (u8 *)th->xstate + 512, 8);
	return 0;
}

/*
 * What a thread has that no image field keeps and /proc does not show:
 * refused, as the restored thread would lack it.
 */
static int dump_thread_unkept(struct dump_image *img, struct dump_thread *th)
{
#ifdef TIF_SPEC_L1D_FLUSH
	/* prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_L1D_FLUSH): a flush on each switch */
	if (test_tsk_thread_flag(th->task, TIF_SPEC_L1D_FLUSH)) {
		dump_refuse(img, task_pid_nr(th->task),
			    "thread %d flushes the L1D cache when it leaves a CPU (PR_SPEC_L1D_FLUSH); not supported",
			    task_pid_nr(th->task));
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

/* What the kernel keeps for one thread besides its registers. */
static void dump_thread_state(struct dump_thread *th)
{
	struct task_struct *t = th->task;
	struct imgcr_thread *ts = &th->th;

	/*
	 * As the thread's own PID namespace numbers it: the TIDs its memory
	 * holds (glibc's cached TIDs, futex owners).  The same as the
	 * reader's view unless the image says IMGCR_PROC_OWN_NS.
	 */
	ts->tid = task_pid_nr_ns(t, task_active_pid_ns(t));
	/*
	 * In sigsuspend(), ppoll(), pselect6() and epoll_pwait() the
	 * thread's own mask waits in saved_sigmask while the call's is
	 * in blocked, until the call returns or a handler's frame saves
	 * the own one: both are kept (NT_IMGCR_SIGWAITS), blocked the own.
	 */
	if (test_tsk_restore_sigmask(t)) {
		ts->blocked = t->saved_sigmask.sig[0];
		ts->flags |= IMGCR_TASK_TEMP_SIGMASK;
		th->temp_mask = t->blocked.sig[0];
	} else {
		ts->blocked = t->blocked.sig[0];
	}
	ts->sas_ss_sp = t->sas_ss_sp;
	ts->sas_ss_size = t->sas_ss_size;
	ts->sas_ss_flags = t->sas_ss_flags;
	ts->pdeath_signal = t->pdeath_signal;
#ifdef CONFIG_FUTEX
	ts->robust_list = (unsigned long)*imgcr_robust_list(t);
	ts->robust_list_len = *imgcr_robust_list(t) ?
			      sizeof(struct robust_list_head) : 0;
#endif
	ts->clear_child_tid = (unsigned long)t->clear_child_tid;
#ifdef CONFIG_RSEQ
	ts->rseq = imgcr_rseq_ptr(t);
	ts->rseq_sig = imgcr_rseq_sig(t);
	ts->rseq_len = imgcr_rseq_len(t);
#endif
	ts->timer_slack_ns = t->timer_slack_ns;
	ts->default_timer_slack_ns = t->default_timer_slack_ns;
	/*
	 * Stable: every thread is stopped, and only a thread itself (or a
	 * TSYNC from another thread, stopped too) changes its seccomp state.
	 */
	th->seccomp.tid = ts->tid;
#ifdef CONFIG_SECCOMP
	th->seccomp.mode = READ_ONCE(t->seccomp.mode);
#ifdef CONFIG_SECCOMP_FILTER
	th->seccomp.nr_filters = atomic_read(&t->seccomp.filter_count);
#endif
#endif
	task_lock(t);
	memcpy(ts->comm, t->comm, sizeof(ts->comm));
	task_unlock(t);
	ts->comm[sizeof(ts->comm) - 1] = 0;
	th->prstatus.pid = ts->tid;
}

/*
 * A thread's credentials (NT_IMGCR_CREDS), their IDs as its own user
 * namespace sees them (the reader's, unless IMGCR_PROC_OWN_NS).
 */
static void dump_thread_creds(struct dump_thread *th)
{
	struct user_namespace *ns;
	struct imgcr_creds *cr = &th->creds;
	const struct cred *c;

	rcu_read_lock();
	c = __task_cred(th->task);
	ns = c->user_ns;
	cr->uid = from_kuid_munged(ns, c->uid);
	cr->euid = from_kuid_munged(ns, c->euid);
	cr->suid = from_kuid_munged(ns, c->suid);
	cr->fsuid = from_kuid_munged(ns, c->fsuid);
	cr->gid = from_kgid_munged(ns, c->gid);
	cr->egid = from_kgid_munged(ns, c->egid);
	cr->sgid = from_kgid_munged(ns, c->sgid);
	cr->fsgid = from_kgid_munged(ns, c->fsgid);
	cr->cap_inheritable = imgcr_cap_u64(c->cap_inheritable);
	cr->cap_permitted = imgcr_cap_u64(c->cap_permitted);
	cr->cap_effective = imgcr_cap_u64(c->cap_effective);
	cr->cap_bset = imgcr_cap_u64(c->cap_bset);
	cr->cap_ambient = imgcr_cap_u64(c->cap_ambient);
	cr->securebits = c->securebits;
	cr->user_ns = c->user_ns->ns.inum;
	rcu_read_unlock();
	cr->flags = task_no_new_privs(th->task) ? IMGCR_CREDS_NO_NEW_PRIVS : 0;
}

/*
 * NT_IMGCR_SECCOMP, only if a thread is under seccomp: the loader refuses
 * such an image unless it can install the same filters (the image format
 * version says so to older loaders, which would drop them).
 */
static int dump_seccomp(struct dump_image *img)
{
	unsigned int i;
	bool any = false;

	for (i = 0; i < img->nr_threads; i++)
		if (img->threads[i].seccomp.mode)
			any = true;
	if (!any)
		return 0;
	img->seccomp = kvcalloc(img->nr_threads, sizeof(*img->seccomp),
				GFP_KERNEL_ACCOUNT);
	if (!img->seccomp)
		return -ENOMEM;
	for (i = 0; i < img->nr_threads; i++)
		img->seccomp[i] = img->threads[i].seccomp;
	return 0;
}

/*
 * NT_IMGCR_SLEEPS: the sleep of each thread in a nanosleep, in thread
 * order; entries of IMGCR_SLEEP_SIZE_V1 bytes unless one has a futex
 * bitset, so that older loaders still take the others.
 */
static int dump_sleeps(struct dump_image *img)
{
	unsigned int i, n = 0;
	bool bitset = false;

	for (i = 0; i < img->nr_threads; i++)
		if (img->threads[i].th.flags & IMGCR_TASK_RESTART_BLOCK)
			n++;
	if (!n)
		return 0;
	img->sleeps = kvcalloc(n, sizeof(*img->sleeps), GFP_KERNEL_ACCOUNT);
	if (!img->sleeps)
		return -ENOMEM;
	for (i = 0; i < img->nr_threads; i++) {
		struct dump_thread *th = &img->threads[i];

		if (!(th->th.flags & IMGCR_TASK_RESTART_BLOCK))
			continue;
		th->sleep.tid = th->th.tid;
		bitset |= th->sleep.flags & IMGCR_SLEEP_BITSET;
		img->sleeps[img->nr_sleeps++] = th->sleep;
	}
	img->sleep_size = sizeof(*img->sleeps);
	if (!bitset) {
		for (i = 0; i < img->nr_sleeps; i++)
			memmove((u8 *)img->sleeps + i * IMGCR_SLEEP_SIZE_V1,
				&img->sleeps[i], IMGCR_SLEEP_SIZE_V1);
		img->sleep_size = IMGCR_SLEEP_SIZE_V1;
	}
	return 0;
}

/* NT_IMGCR_SIGWAITS: each temporary mask, in thread order. */
static int dump_sigwaits(struct dump_image *img)
{
	unsigned int i, n = 0;

	for (i = 0; i < img->nr_threads; i++)
		if (img->threads[i].th.flags & IMGCR_TASK_TEMP_SIGMASK)
			n++;
	if (!n)
		return 0;
	img->sigwaits = kvcalloc(n, sizeof(*img->sigwaits), GFP_KERNEL_ACCOUNT);
	if (!img->sigwaits)
		return -ENOMEM;
	for (i = 0; i < img->nr_threads; i++) {
		const struct dump_thread *th = &img->threads[i];
		struct imgcr_sigwait *w = &img->sigwaits[img->nr_sigwaits];

		if (!(th->th.flags & IMGCR_TASK_TEMP_SIGMASK))
			continue;
		w->tid = th->th.tid;
		w->mask = th->temp_mask;
		img->nr_sigwaits++;
	}
	return 0;
}

/* The main thread's state also fills the task note, which predates threads. */
static void dump_main_state(struct dump_image *img)
{
	const struct dump_thread *m = &img->threads[0];
	struct imgcr_task *ts = &img->tstate;

	/* IMGCR_FORMAT_VERSION instead: see dump_build() */
	ts->version = img->seccomp ? IMGCR_FORMAT_VERSION_SECCOMP :
				     IMGCR_FORMAT_VERSION_NOSECCOMP;
	ts->flags = m->th.flags;
	ts->pid = m->th.tid;
	ts->personality = img->task->personality;
	ts->xstate_size = m->xstate_size;
	ts->xfeatures = m->th.xfeatures;
	ts->blocked = m->th.blocked;
	ts->sas_ss_sp = m->th.sas_ss_sp;
	ts->sas_ss_size = m->th.sas_ss_size;
	ts->sas_ss_flags = m->th.sas_ss_flags;
	ts->robust_list = m->th.robust_list;
	ts->robust_list_len = m->th.robust_list_len;
	ts->clear_child_tid = m->th.clear_child_tid;
	ts->rseq = m->th.rseq;
	ts->rseq_len = m->th.rseq_len;
	ts->rseq_sig = m->th.rseq_sig;
	memcpy(ts->comm, m->th.comm, sizeof(ts->comm));
}

static int dump_sigactions(struct dump_image *img)
{
	struct sighand_struct *sighand;
	unsigned long flags;
	int i;

	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand)
		return -ESRCH;
	for (i = 0; i < IMGCR_NSIG; i++) {
		const struct sigaction *sa = &sighand->action[i].sa;

		img->sigact[i].handler = (unsigned long)sa->sa_handler;
		img->sigact[i].flags = sa->sa_flags;
		img->sigact[i].restorer = (unsigned long)sa->sa_restorer;
		img->sigact[i].mask = sa->sa_mask.sig[0];
	}
	spin_unlock_irqrestore(&sighand->siglock, flags);
	return 0;
}

static unsigned int vma_prot(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & VM_READ ? IMGCR_PROT_READ : 0) |
	       (vma->vm_flags & VM_WRITE ? IMGCR_PROT_WRITE : 0) |
	       (vma->vm_flags & VM_EXEC ? IMGCR_PROT_EXEC : 0);
}

/*
 * No path leads to it: deleted, or made by alloc_file_pseudo() (memfds,
 * shared anonymous memory, anon inodes) whose dentry is a root of its own.
 */
static bool path_unreachable(const struct dentry *d)
{
	return d_unlinked(d) || (IS_ROOT(d) && d != d->d_sb->s_root);
}

/*
 * Shared anonymous memory and memfds live in unlinked files of the kernel's
 * internal tmpfs: nothing to reopen by path, so the image carries their
 * contents and the loader recreates them.  SysV shm segments look alike but
 * have an identity (the shmid) we cannot give back.
 */
static bool is_shmem_object(struct file *file)
{
	const struct dentry *d = file->f_path.dentry;

	/* made by alloc_file_pseudo(): not a deleted file of a tmpfs mount */
	return file_inode(file)->i_sb->s_magic == TMPFS_MAGIC &&
	       IS_ROOT(d) && d != d->d_sb->s_root &&
	       strncmp(d->d_name.name, "SYSV", 4);
}

/* An MFD_HUGETLB memfd: "memfd:NAME" of the kernel's hugetlbfs mount. */
static bool is_hugetlb_memfd(struct file *file)
{
	const struct dentry *d = file->f_path.dentry;

	return file_inode(file)->i_sb->s_magic == HUGETLBFS_MAGIC &&
	       IS_ROOT(d) && d != d->d_sb->s_root &&
	       !strncmp(d->d_name.name, "memfd:", 6);
}

#define DELETED_SUFFIX " (deleted)"

/*
 * A regular file unlinked from a real filesystem: the dump tool saves its
 * contents and recreates it at its old path for the restore.  Not the
 * objects of pseudo filesystems, which never had a path.
 */
static bool is_deleted_file(struct file *file)
{
	const struct dentry *d = file->f_path.dentry;

	return d_unlinked(d) && !IS_ROOT(d) &&
	       S_ISREG(file_inode(file)->i_mode) &&
	       !(file_inode(file)->i_sb->s_flags & SB_NOUSER);
}

/* The name a shmem object is recreated with, e.g. "dev/zero", "memfd:x". */
static char *shmem_name(struct file *file, char *buf)
{
	const struct dentry *d = file->f_path.dentry;

	return strscpy(buf, d->d_name.name, NAME_MAX + 1) < 0 ? ERR_PTR(-ENAMETOOLONG) : buf;
}

/*
 * A tmpfs object (memfd, shared anonymous memory, a file) with a NUMA
 * memory policy of its own: mbind() on a shared mapping keeps it in the
 * inode's shared_policy tree too, which outlives the mapping and covers
 * ranges no mapping starts at (numa_maps shows neither), and imgcr
 * restore makes the object anew.  (hugetlbfs never used its inode's.)
 * One pointer read, as a hint: the tree is stopped, another process
 * could mbind().
 */
static bool shmem_own_policy(struct file *file)
{
#ifdef CONFIG_NUMA
	struct inode *inode = file_inode(file);

	if (inode->i_sb->s_magic == TMPFS_MAGIC)
		return READ_ONCE(SHMEM_I(inode)->policy.root.rb_node);
#endif
	return false;
}

/*
 * Index of @file in the image's file table, adding it if new; @flags
 * (IMGCR_FILE_WRITE) accumulate over the mappings of one file.
 */
static int dump_file(struct dump_image *img, struct file *file, u32 flags)
{
	struct inode *inode = file_inode(file);
	struct imgcr_file *rec;
	struct timespec64 mt;
	char *buf, *path;
	size_t i, plen, reclen;
	u32 h;
	int ret;

	/* a hash on the inode: a task may map tens of thousands of files */
	h = hash_ptr(inode, img->file_hash_bits);
	for (i = img->file_bucket[h]; i; i = img->file_next[i - 1]) {
		if (file_inode(img->files[i - 1]) != inode ||
		    img->files[i - 1]->f_path.mnt != file->f_path.mnt)
			continue;
		rec = (struct imgcr_file *)(img->filerecs + img->file_off[i - 1]);
		rec->flags |= flags;
		return i - 1;
	}
	if (shmem_own_policy(file)) {
		/*
		 * mbind() on a shared mapping of a tmpfs object keeps its
		 * policy with the object, which imgcr restore makes anew
		 */
		dump_refuse(img, task_pid_nr(img->task),
			    "maps a memfd, shared memory or tmpfs file that has a NUMA memory policy of its own (mbind on a shared mapping, or a tmpfs mounted with mpol=); not supported");
		return -EOPNOTSUPP;
	}
	if (is_shmem_object(file)) {
		flags |= IMGCR_FILE_SHMEM;
	} else if (is_hugetlb_memfd(file)) {
		flags |= IMGCR_FILE_SHMEM | IMGCR_FILE_HUGETLB;
	} else if (is_deleted_file(file)) {
		/* recreated at its path by imgcr restore, from its dump */
		flags |= IMGCR_FILE_DELETED;
	} else if (path_unreachable(file->f_path.dentry)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "maps a SysV shm segment or a special file; not supported");
		return -EOPNOTSUPP;
	}

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (flags & IMGCR_FILE_SHMEM)
		path = shmem_name(file, buf);
	else
		path = d_path(&file->f_path, buf, PATH_MAX);
	if (IS_ERR(path)) {
		kfree(buf);
		return PTR_ERR(path);
	}
	plen = strlen(path) + 1;
	if (flags & IMGCR_FILE_DELETED) {
		/* d_path() appended the suffix; the path must be a real one */
		if (plen <= sizeof(DELETED_SUFFIX) || path[0] != '/' ||
		    strcmp(path + plen - sizeof(DELETED_SUFFIX), DELETED_SUFFIX)) {
			dump_refuse(img, task_pid_nr(img->task),
				    "maps a deleted file without a path; not supported");
			kfree(buf);
			return -EOPNOTSUPP;
		}
		plen -= sizeof(DELETED_SUFFIX) - 1;
		path[plen - 1] = '\0';
	}
	reclen = ALIGN(sizeof(*rec) + plen, 8);
	ret = grow((void **)&img->files, &img->cap_files, img->nr_files + 1,
		   sizeof(*img->files));
	if (!ret)
		ret = grow((void **)&img->file_off, &img->cap_file_off,
			   img->nr_files + 1, sizeof(*img->file_off));
	if (!ret)
		ret = grow((void **)&img->file_next, &img->cap_file_next,
			   img->nr_files + 1, sizeof(*img->file_next));
	if (!ret)
		ret = grow((void **)&img->filerecs, &img->cap_filerecs,
			   img->filerecs_len + reclen, 1);
	if (ret) {
		kfree(buf);
		return ret;
	}
	rec = (struct imgcr_file *)(img->filerecs + img->filerecs_len);
	memset(rec, 0, reclen);
	rec->reclen = reclen;
	rec->path_len = plen;
	rec->flags = flags;
	rec->dev = new_encode_dev(inode->i_sb->s_dev);
	rec->ino = inode->i_ino;
	rec->size = i_size_read(inode);
	mt = imgcr_inode_mtime(inode);
	rec->mtime_sec = mt.tv_sec;
	rec->mtime_nsec = mt.tv_nsec;
	rec->mode = inode->i_mode;
	if (flags & IMGCR_FILE_SHMEM) {
		/*
		 * F_SEAL_SEAL alone is what every new object has: no flag
		 * then, so that loaders older than the flag still take the
		 * image (they refuse unknown flags)
		 */
		rec->seals = imgcr_shmem_seals(inode);
		if (rec->seals != F_SEAL_SEAL)
			rec->flags |= IMGCR_FILE_SEALS;
	}
	memcpy(rec->path, path, plen);
	kfree(buf);

	img->file_off[img->nr_files] = img->filerecs_len;
	img->filerecs_len += reclen;
	img->files[img->nr_files] = get_file(file);
	img->file_next[img->nr_files] = img->file_bucket[h];
	img->file_bucket[h] = img->nr_files + 1;
	return img->nr_files++;
}

/*
 * The checksum of each file's first page (an ELF's headers and build-id):
 * where the device or inode differ at restore (another host), it tells
 * another build of the same size and mtime.  Read without the target's
 * mmap lock, through a file of the dumper's own, with its rights (the
 * target's may lack FMODE_READ: an exe set by PR_SET_MM, or have
 * O_DIRECT); a file it cannot read keeps 0, "not recorded".
 */
static int dump_file_heads(struct dump_image *img)
{
	size_t i;

	for (i = 0; i < img->nr_files; i++) {
		struct imgcr_file *rec = (void *)(img->filerecs + img->file_off[i]);
		const struct path *path = &img->files[i]->f_path;
		struct file *own;
		u32 crc;

		if (rec->flags & (IMGCR_FILE_SHMEM | IMGCR_FILE_DELETED) ||
		    !rec->size || !S_ISREG(d_inode(path->dentry)->i_mode) ||
		    imgcr_path_permission(path, MAY_READ))
			continue;
		own = dentry_open(path, O_RDONLY | O_LARGEFILE, current_cred());
		if (IS_ERR(own))
			continue;
		if (!imgcr_file_head_crc(own, rec->size, &crc))
			rec->head_crc = crc;
		fput(own);
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static bool file_is_shmem_object(struct dump_image *img, u32 idx)
{
	const struct imgcr_file *rec =
		(const void *)(img->filerecs + img->file_off[idx]);

	return rec->flags & IMGCR_FILE_SHMEM;
}

/*
 * IMGCR_IOC_FILE_MAPS: the VMAs of every mm on the i_mmap tree of shared
 * memory object @file, counted under i_mmap_rwsem alone (no mm's lock:
 * a process outside the tree can make no dump wait).  A hint as any
 * reading of another process is: the tree is stopped, others are not.
 */
static long dump_ioctl_file_maps(struct dump_image *img, void __user *uarg)
{
	struct imgcr_file_maps arg;
	struct address_space *mapping;
	struct file *file;
	struct rb_node *nd;
	u64 n = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~IMGCR_FILE_MAPS_FD)
		return -EINVAL;
	if (arg.flags & IMGCR_FILE_MAPS_FD) {
		/* a memfd of the caller's (one the tree holds, dup'ed) */
		file = fget(arg.file);
		if (!file)
			return -EBADF;
		if (!is_shmem_object(file) && !is_hugetlb_memfd(file)) {
			fput(file);
			return -EINVAL;
		}
	} else {
		if (arg.file >= img->nr_files)
			return -EINVAL;
		arg.file = array_index_nospec(arg.file, img->nr_files);
		if (!file_is_shmem_object(img, arg.file))
			return -EINVAL;
		file = get_file(img->files[arg.file]);
	}
	mapping = file->f_mapping;
	i_mmap_lock_read(mapping);
	for (nd = rb_first_cached(&mapping->i_mmap); nd; nd = rb_next(nd))
		n++;
	i_mmap_unlock_read(mapping);
	fput(file);
	arg.mappings = n;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/*
 * A shared mapping of shared memory object @idx: its seals come back
 * exactly (IMGCR_FILE_SEALS), set before the loader maps it again, so the
 * mapping must be one the kernel would make under them: under F_SEAL_WRITE
 * or F_SEAL_FUTURE_WRITE neither writable nor able to become so (no
 * VM_MAYWRITE: mapped after the seal).  One mapped before the seal, or a
 * seal this kernel's loader cannot give back, is refused.  A mapping
 * through a read-only file (no VM_SHARED) is IMGCR_VMA_RDONLY_FILE.
 */
static int check_shmem_seals(struct dump_image *img, struct vm_area_struct *vma,
			     u32 idx)
{
	const struct imgcr_file *rec =
		(const void *)(img->filerecs + img->file_off[idx]);
	u32 seals = imgcr_shmem_seals(file_inode(vma->vm_file));
	const char *why = NULL;

	if (seals != rec->seals)
		why = "its seals changed during the dump";
	else if (seals & ~IMGCR_SEALS_HERE)
		why = "unknown seals";
	else if (!(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return 0;
	else if (vma->vm_flags & VM_WRITE)
		why = "mapped writable before the write seal; not supported";
	else if (vma->vm_flags & VM_MAYWRITE)
		why = "mapped before the write seal, may become writable; not supported";
	if (!why)
		return 0;
	dump_refuse(img, task_pid_nr(img->task),
		    "shared mapping at %#lx of %s (seals %#x): %s",
		    vma->vm_start, rec->path, seals, why);
	return -EOPNOTSUPP;
}

/* iterate_fd() callback: an fd of the inode @p open for reading */
static int readable_fd_of(const void *p, struct file *file, unsigned int fd)
{
	return file_inode(file) == p && file->f_mode & FMODE_READ;
}

/*
 * A private mapping of shared memory object @idx, or any of an MFD_HUGETLB
 * memfd (whose own pages the image never carries): the image carries the
 * pages the task wrote (copy-on-write copies), as for any private file
 * mapping, but not the object's own, which the other pages show.  Those
 * come back only with a memfd the task holds an fd of (readable): imgcr
 * restore restores it from that fd and gives it to the loader
 * (--imgcr-shmfd), which maps it privately again.  Refused otherwise: the
 * object would come back without its contents (shared anonymous memory,
 * a memfd whose fds are all closed).
 */
static int check_shmem_private(struct dump_image *img,
			       struct vm_area_struct *vma, u32 idx)
{
	const struct imgcr_file *rec =
		(const void *)(img->filerecs + img->file_off[idx]);
	const struct inode *inode = file_inode(vma->vm_file);
	size_t old = img->cap_file_held;
	int held = 0;
	int ret;

	/*
	 * Each memfd's fd table scan once, not once a mapping: it runs with
	 * preemption off, over up to nr_open slots.  Not found is refused.
	 */
	ret = grow((void **)&img->file_held, &img->cap_file_held,
		   BITS_TO_LONGS(idx + 1), sizeof(*img->file_held));
	if (ret)
		return ret;
	if (img->cap_file_held > old)
		memset(img->file_held + old, 0,
		       (img->cap_file_held - old) * sizeof(*img->file_held));
	if (test_bit(idx, img->file_held))
		return 0;
	if (!strncmp(rec->path, "memfd:", 6)) {
		/* as __do_SAK(): the fd table under task_lock() */
		task_lock(img->task);
		if (img->task->files)
			held = iterate_fd(img->task->files, 0, readable_fd_of,
					  inode);
		task_unlock(img->task);
	}
	if (held) {
		__set_bit(idx, img->file_held);
		return 0;
	}
	if (rec->flags & IMGCR_FILE_HUGETLB)
		dump_refuse(img, task_pid_nr(img->task),
			    "%s hugetlb mapping at %#lx of %s (MFD_HUGETLB), of which it holds no fd open for reading (only imgcr restore can make a huge page memfd again, from an fd); not supported",
			    vma->vm_flags & VM_MAYSHARE ? "shared" : "private",
			    vma->vm_start, rec->path);
	else
		dump_refuse(img, task_pid_nr(img->task),
			    "private mapping at %#lx of %s, of which it holds no fd open for reading (its contents would be lost); not supported",
			    vma->vm_start, rec->path);
	return -EOPNOTSUPP;
}

/*
 * The madvise() advice and MAP_DROPPABLE of a private or file mapping,
 * given again at restore.  Refuses (with a message) what madvise() could
 * not give back on a mapping of this kind, rather than drop it silently.
 */
static int vma_advice(struct dump_image *img, struct vm_area_struct *vma,
		      struct imgcr_vma *v)
{
	vm_flags_t f = vma->vm_flags;
	u32 a = 0;

	if (f & VM_DONTCOPY)
		a |= IMGCR_VMA_DONTFORK;
	if (f & VM_WIPEONFORK)
		a |= IMGCR_VMA_WIPEONFORK;
	if (f & VM_HUGEPAGE)
		a |= IMGCR_VMA_HUGEPAGE;
	if (f & VM_NOHUGEPAGE)
		a |= IMGCR_VMA_NOHUGEPAGE;
	if (f & VM_DONTDUMP)
		a |= IMGCR_VMA_DONTDUMP;
	if (imgcr_have_droppable() && f & IMGCR_VM_DROPPABLE)
		a |= IMGCR_VMA_DROPPABLE;
	if (f & VM_LOCKED)
		a |= IMGCR_VMA_LOCKED;
	if (f & VM_LOCKONFAULT)
		a |= IMGCR_VMA_LOCKONFAULT;
	if (f & VM_SEQ_READ)
		a |= IMGCR_VMA_SEQ_READ;
	if (f & VM_RAND_READ)
		a |= IMGCR_VMA_RAND_READ;
	if (f & VM_MERGEABLE)
		a |= IMGCR_VMA_MERGEABLE;
	if ((a & (IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DROPPABLE) &&
	     v->kind != IMGCR_VMA_ANON) ||
	    (a & IMGCR_VMA_HUGEPAGE && a & IMGCR_VMA_NOHUGEPAGE) ||
	    (a & IMGCR_VMA_LOCKONFAULT && !(a & IMGCR_VMA_LOCKED)) ||
	    (a & IMGCR_VMA_SEQ_READ && a & IMGCR_VMA_RAND_READ) ||
	    /* mlock() and KSM leave droppable memory alone */
	    (a & IMGCR_VMA_DROPPABLE &&
	     a & (IMGCR_VMA_LOCKED | IMGCR_VMA_MERGEABLE)) ||
	    (a & IMGCR_VMA_MERGEABLE && v->flags & IMGCR_VMA_SHARED)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "mapping at %#lx has flags %#lx that madvise() cannot give back; not supported",
			    vma->vm_start, (unsigned long)f);
		return -EOPNOTSUPP;
	}
	v->flags |= a;
	return 0;
}

/*
 * A SysV shm attachment: its file is the segment's (alloc_file_clone() of
 * the kernel's tmpfs file "SYSV<key>"), whose inode number is the shmid
 * (ipc/shm.c sets it so for /proc/PID/maps).
 */
static bool is_sysvshm(struct file *file)
{
	const struct dentry *d = file->f_path.dentry;

	return file_inode(file)->i_sb->s_magic == TMPFS_MAGIC &&
	       IS_ROOT(d) && d != d->d_sb->s_root &&
	       !strncmp(d->d_name.name, "SYSV", 4);
}

/*
 * The ring of an AIO context (io_setup()): a shared mapping of a file of
 * fs/aio.c's internal filesystem, whose superblock magic no header has.
 * The context itself (its id is the ring's address, its requests in
 * flight) is kernel state nothing here can recreate.
 */
#define IMGCR_AIO_RING_MAGIC	0xa10a10a1

static bool is_aio_ring(struct file *file)
{
	return file_inode(file)->i_sb->s_magic == IMGCR_AIO_RING_MAGIC;
}

/*
 * IMGCR_VMA_SYSVSHM: the segment by its shmid in the task's IPC namespace,
 * no pages (the segment's contents are not the process's; imgcr dump saves
 * those of a tree's own IPC namespace).  Refused unless that shmid is the
 * very segment mapped and not removed: a removed one, or one of another
 * IPC namespace (setns() after shmat()), could not be attached again.
 */
static int dump_sysvshm(struct dump_image *img, struct vm_area_struct *vma,
			struct imgcr_vma *v)
{
#if IMGCR_HAVE_SYSVSHM
	struct inode *inode = file_inode(vma->vm_file);
	struct imgcr_shmid_kernel *shp = NULL;
	struct nsproxy *nsp;
	int id = (int)inode->i_ino;
	bool same = false;
	int ret;

	task_lock(img->task);
	nsp = img->task->nsproxy;
	rcu_read_lock();
	if (nsp && inode->i_ino <= INT_MAX)
		shp = imgcr_shm_find(nsp->ipc_ns, id);
	if (shp)
		same = imgcr_shm_inode(shp) == inode;
	rcu_read_unlock();
	task_unlock(img->task);
	if (!same) {
		dump_refuse(img, task_pid_nr(img->task),
			    "maps a SysV shm segment (shmid %llu at %#lx) that was removed (IPC_RMID) or is not of its IPC namespace; not supported",
			    (unsigned long long)inode->i_ino, vma->vm_start);
		return -EOPNOTSUPP;
	}
	v->kind = IMGCR_VMA_SYSVSHM;
	v->file = id;
	v->pgoff = vma->vm_pgoff;
	v->flags = 0;
	ret = vma_advice(img, vma, v);
	if (ret)
		return ret;
	if (v->flags || (vma->vm_flags & (VM_NORESERVE | VM_GROWSDOWN))) {
		dump_refuse(img, task_pid_nr(img->task),
			    "SysV shm mapping at %#lx with madvise() or mlock() state; not supported",
			    vma->vm_start);
		return -EOPNOTSUPP;
	}
	/* attached without SHM_RDONLY: it may be made writable again */
	if (vma->vm_flags & VM_MAYWRITE)
		v->flags = IMGCR_VMA_SHM_MAYWRITE;
	img->nr_sysvshm++;
	img->nr_vmas++;
	return 0;
#else
	dump_refuse(img, task_pid_nr(img->task),
		    "maps a SysV shm segment (at %#lx), which img_dump does not support on this kernel (built without CONFIG_SYSVIPC or with CONFIG_RANDSTRUCT)",
		    vma->vm_start);
	return -EOPNOTSUPP;
#endif
}

/*
 * A mapping of huge pages of hugetlbfs.  Anonymous memory (MAP_HUGETLB,
 * private or shared) of 2 MiB pages is IMGCR_VMA_ANON with
 * IMGCR_VMA_HUGETLB (and IMGCR_VMA_SHARED): the loader maps it again so,
 * the pages the image carries written in.  Only the whole object in one
 * VMA (a fresh one has offset 0 and the mapping's size: one partly
 * unmapped or split by mprotect() does not), and a shared one mapped by
 * this VMA alone (another process's, after fork(), would become another
 * object).  A mapping of an MFD_HUGETLB memfd: dump_hugetlb_memfd().
 * Refused, saying which kind it is and why: hugetlbfs files, other page
 * sizes, madvise() state.
 */
/*
 * A mapping of an MFD_HUGETLB memfd of 2 MiB pages: IMGCR_VMA_FILE of an
 * IMGCR_FILE_HUGETLB object: imgcr restore makes the memfd again from the
 * fd the task holds (checked here; the dump tool saves its contents
 * through that fd) and gives it to the loader, which maps it.  A shared
 * mapping without its pages; a private one with the huge pages the task
 * wrote (its copy-on-write copies, dump_vma_pages(): each whole, zeros
 * too, since the loader writes them over the memfd's), the others showing
 * the memfd's.  Only within its size (hugetlbfs's mmap() would grow it).
 */
static int dump_hugetlb_memfd(struct dump_image *img,
			      struct vm_area_struct *vma, struct imgcr_vma *v)
{
	bool shared = vma->vm_flags & VM_MAYSHARE;
	loff_t size = i_size_read(file_inode(vma->vm_file));
	u64 end = ((u64)vma->vm_pgoff << PAGE_SHIFT) +
		  (vma->vm_end - vma->vm_start);
	int ret;

	if (end > size) {
		dump_refuse(img, task_pid_nr(img->task),
			    "hugetlb mapping at %#lx of %s (MFD_HUGETLB) goes past its size %lld; not supported",
			    vma->vm_start, vma->vm_file->f_path.dentry->d_name.name,
			    size);
		return -EOPNOTSUPP;
	}
	v->kind = IMGCR_VMA_FILE;
	v->pgoff = vma->vm_pgoff;
	if (shared)
		v->flags |= IMGCR_VMA_SHARED;
	ret = dump_file(img, vma->vm_file,
			shared && vma->vm_flags & VM_MAYWRITE ?
			IMGCR_FILE_WRITE : 0);
	if (ret < 0)
		return ret;
	v->file = ret;
	ret = check_shmem_private(img, vma, v->file);
	if (ret)
		return ret;
	ret = vma_advice(img, vma, v);
	if (ret)
		return ret;
	if (v->flags & ~(IMGCR_VMA_SHARED | IMGCR_VMA_NORESERVE)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "hugetlb mapping at %#lx of %s (MFD_HUGETLB) with madvise() state or flags that cannot be given back; not supported",
			    vma->vm_start, vma->vm_file->f_path.dentry->d_name.name);
		return -EOPNOTSUPP;
	}
	if (shared) {
		/* mapped through a file not open for writing */
		if (!(vma->vm_flags & VM_SHARED))
			v->flags |= IMGCR_VMA_RDONLY_FILE;
		ret = check_shmem_seals(img, vma, v->file);
		if (ret)
			return ret;
	}
	img->nr_vmas++;
	return shared ? 0 : dump_vma_pages(img, vma);
}

static int dump_hugetlb(struct dump_image *img, struct vm_area_struct *vma,
			struct imgcr_vma *v)
{
	const struct dentry *d = vma->vm_file ? vma->vm_file->f_path.dentry : NULL;
	bool shared = vma->vm_flags & VM_MAYSHARE;
	const char *what = "a hugetlbfs file", *why = NULL;
	int ret;

	/* alloc_file_pseudo(): "anon_hugepage" (MAP_HUGETLB), "memfd:NAME" */
	if (!d)
		what = "no file";
	else if (IS_ROOT(d) && d != d->d_sb->s_root)
		what = d->d_name.name;
	if (d && is_hugetlb_memfd(vma->vm_file)) {
		if (vma_kernel_pagesize(vma) != SZ_2M)
			why = "only 2048 kB pages are";
		else
			return dump_hugetlb_memfd(img, vma, v);
	} else if (!d || !IS_ROOT(d) || d == d->d_sb->s_root ||
		   strcmp(what, IMGCR_HUGETLB_ANON_FILE))
		why = "only MAP_HUGETLB memory and MFD_HUGETLB memfds are";
	else if (vma_kernel_pagesize(vma) != SZ_2M)
		why = "only 2048 kB pages are";
	else if (vma->vm_pgoff ||
		 i_size_read(file_inode(vma->vm_file)) != vma->vm_end - vma->vm_start)
		why = "part of the mapping was unmapped or split off (mprotect): not";
	else if (shared && file_count(vma->vm_file) != 1)
		why = "shared with another process or open elsewhere: not";
	if (!why) {
		v->kind = IMGCR_VMA_ANON;
		v->pgoff = 0;
		v->flags |= IMGCR_VMA_HUGETLB | (shared ? IMGCR_VMA_SHARED : 0);
		ret = vma_advice(img, vma, v);
		if (ret)
			return ret;
		if (v->flags & ~(IMGCR_VMA_HUGETLB | IMGCR_VMA_SHARED |
				 IMGCR_VMA_NORESERVE))
			why = "with madvise() state or flags that cannot be given back: not";
	}
	if (why) {
		dump_refuse(img, task_pid_nr(img->task),
			    "hugetlb mapping at %#lx (%s, %s, %lu kB pages): %s supported",
			    vma->vm_start, shared ? "shared" : "private",
			    what, vma_kernel_pagesize(vma) >> 10, why);
		return -EOPNOTSUPP;
	}
	img->nr_vmas++;
	return dump_vma_pages(img, vma);
}

static int dump_one_vma(struct dump_image *img, struct vm_area_struct *vma)
{
	unsigned long vdso = (unsigned long)img->mm->context.vdso;
	const struct vdso_image *vi = img->mm->context.vdso_image;
	struct imgcr_vma *v;
	int ret;

	/*
	 * A NUMA memory policy of the mapping's own (mbind): the loader
	 * gives none back.  numa_maps cannot tell one equal to the task's
	 * policy from none, so userspace cannot see it.
	 */
	if (vma_policy(vma)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "mapping at %#lx has a NUMA memory policy of its own (mbind); not supported",
			    vma->vm_start);
		return -EOPNOTSUPP;
	}
	ret = grow((void **)&img->vmas, &img->cap_vmas, img->nr_vmas + 1,
		   sizeof(*img->vmas));
	if (ret)
		return ret;
	v = &img->vmas[img->nr_vmas];
	memset(v, 0, sizeof(*v));
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->prot = vma_prot(vma);
	v->file = IMGCR_NO_FILE;
	if (vma->vm_flags & VM_GROWSDOWN)
		v->flags |= IMGCR_VMA_GROWSDOWN;
	if (vma->vm_flags & VM_NORESERVE)
		v->flags |= IMGCR_VMA_NORESERVE;
	/*
	 * mprotect() keeps VM_ACCOUNT when write access goes: replaying it
	 * keeps VMAs from merging at restore that the task had separate.
	 */
	if ((vma->vm_flags & (VM_ACCOUNT | VM_WRITE | VM_MAYSHARE)) == VM_ACCOUNT)
		v->flags |= IMGCR_VMA_ACCOUNT;

	if (vdso && vi && vma->vm_start == vdso) {
		v->kind = IMGCR_VMA_VDSO;
	} else if (vdso && vi && vma->vm_start >= vdso - imgcr_vvar_size(vi) &&
		   vma->vm_end <= vdso && !vma->vm_file) {
		v->kind = IMGCR_VMA_VVAR;
	} else if (vma->vm_flags & VM_HUGETLB) {
		return dump_hugetlb(img, vma, v);
	} else if (vma->vm_flags & (VM_IO | VM_PFNMAP | VM_MIXEDMAP)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "device mapping at %#lx; not supported", vma->vm_start);
		return -EOPNOTSUPP;
	} else if (vma->vm_file && is_aio_ring(vma->vm_file)) {
		/* a child of fork() maps its parent's ring, with no context */
		if (mm_had_aio(img->mm))
			dump_refuse(img, task_pid_nr(img->task),
				    "an AIO context (io_setup) whose ring is mapped at %#lx; not supported",
				    vma->vm_start);
		else
			dump_refuse(img, task_pid_nr(img->task),
				    "maps at %#lx the AIO ring of its parent's context (io_setup before fork()); not supported",
				    vma->vm_start);
		return -EOPNOTSUPP;
	} else if (vma_is_anonymous(vma)) {
		v->kind = IMGCR_VMA_ANON;
		v->pgoff = vma->vm_pgoff;
	} else if (vma->vm_file && vma->vm_flags & VM_MAYSHARE &&
		   is_sysvshm(vma->vm_file)) {
		return dump_sysvshm(img, vma, v);
	} else if (vma->vm_file) {
		bool shared = vma->vm_flags & VM_MAYSHARE;

		v->kind = IMGCR_VMA_FILE;
		v->pgoff = vma->vm_pgoff;
		if (shared)
			v->flags |= IMGCR_VMA_SHARED;
		ret = dump_file(img, vma->vm_file, shared &&
				(vma->vm_flags & VM_MAYWRITE) ?
				IMGCR_FILE_WRITE : 0);
		if (ret < 0)
			return ret;
		v->file = ret;
		if (!shared && file_is_shmem_object(img, v->file)) {
			ret = check_shmem_private(img, vma, v->file);
			if (ret)
				return ret;
		}
		ret = vma_advice(img, vma, v);
		if (ret)
			return ret;
		if (shared && file_is_shmem_object(img, v->file)) {
			/* mapped through a file not open for writing */
			if (!(vma->vm_flags & VM_SHARED))
				v->flags |= IMGCR_VMA_RDONLY_FILE;
			ret = check_shmem_seals(img, vma, v->file);
			if (ret)
				return ret;
			img->nr_vmas++;
			return dump_shmem_pages(img, vma);
		}
	} else {
		dump_refuse(img, task_pid_nr(img->task),
			    "special mapping at %#lx; not supported", vma->vm_start);
		return -EOPNOTSUPP;
	}
	if (v->kind == IMGCR_VMA_ANON) {
		ret = vma_advice(img, vma, v);
		if (ret)
			return ret;
	}
	img->nr_vmas++;

	/*
	 * Droppable memory is left out: the kernel may drop it at any time,
	 * and glibc keeps getrandom()'s state in it, whose keys must not
	 * come back in two processes (or twice from one image).
	 */
	if (v->flags & IMGCR_VMA_DROPPABLE)
		return 0;
	if (v->kind == IMGCR_VMA_ANON ||
	    (v->kind == IMGCR_VMA_FILE && !(v->flags & IMGCR_VMA_SHARED)))
		return dump_vma_pages(img, vma);
	return 0;
}

/*
 * Another process using @mm (clone() with CLONE_VM but neither
 * CLONE_THREAD nor CLONE_VFORK, which marks the mm MMF_MULTIPROCESS for
 * good): its pid in the opener's namespace (or -1 if numbered outside it),
 * or 0.  The restore makes one mm per process, so the sharing would be
 * lost; oom_kill.c's process_shares_mm() walks the same way.  vfork
 * parents never stop for the freezer (imgcr refuses them there).
 */
static pid_t mm_shared_with(struct task_struct *leader, struct mm_struct *mm)
{
	struct task_struct *p, *t;
	pid_t found = 0;

	if (!imgcr_mm_multiprocess(mm))
		return 0;
	rcu_read_lock();
	for_each_process(p) {
		if (same_thread_group(p, leader) || (p->flags & PF_KTHREAD))
			continue;
		for_each_thread(p, t) {
			struct mm_struct *t_mm = READ_ONCE(t->mm);

			if (!t_mm)
				continue;
			if (t_mm == mm)
				found = task_tgid_vnr(p) ?: -1;
			break;
		}
		if (found)
			break;
	}
	rcu_read_unlock();
	return found;
}

static int capture_mm(struct dump_image *img)
{
	struct mm_struct *mm = img->mm;
	struct imgcr_task *ts = &img->tstate;
	struct vm_area_struct *vma;
	struct file *exe;
	int ret = 0;

	VMA_ITERATOR(vmi, mm, 0);
	pid_t other = mm_shared_with(img->task, mm);

	if (other) {
		dump_refuse(img, task_pid_nr(img->task),
			    "shares its memory with another process (pid %d: clone with CLONE_VM, not a thread); a restore would give each its own; not supported",
			    other);
		return -EOPNOTSUPP;
	}
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	if (mm->map_count > IMGCR_MAX_VMAS) {
		ret = -EFBIG;
		goto out;
	}
	/* about one mapping a bucket: a file per mapping stays linear */
	img->file_hash_bits = clamp_t(unsigned int,
				      order_base_2(mm->map_count + 1), 6, 16);
	img->file_bucket = kvcalloc(1U << img->file_hash_bits,
				    sizeof(*img->file_bucket), GFP_KERNEL_ACCOUNT);
	if (!img->file_bucket) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * prctl(PR_SET_MEMORY_MERGE) (6.4+): KSM for every mapping, the ones
	 * made later too.  Not given back by the loader: refused.
	 */
	if (imgcr_mm_merge_any(mm)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "KSM merging of the whole process (prctl PR_SET_MEMORY_MERGE); not supported");
		ret = -EOPNOTSUPP;
		goto out;
	}
	for_each_vma(vmi, vma) {
		ret = dump_one_vma(img, vma);
		if (ret)
			goto out;
		/* up to 65530 of them; sleeping under mmap_read_lock is fine */
		cond_resched();
	}
	/*
	 * No ring was mapped (that is refused above), yet io_setup() ran: a
	 * context whose ring the task unmapped lives on unseen, and the table
	 * stays after io_destroy().  Neither can be told apart from here.
	 */
	if (mm_had_aio(mm)) {
		dump_refuse(img, task_pid_nr(img->task),
			    "has an AIO context (io_setup) whose ring is not mapped, or had one; not supported");
		ret = -EOPNOTSUPP;
		goto out;
	}
	ts->nr_vmas = img->nr_vmas;
	ts->nr_files = img->nr_files;
	ts->start_code = mm->start_code;
	ts->end_code = mm->end_code;
	ts->start_data = mm->start_data;
	ts->end_data = mm->end_data;
	ts->start_brk = mm->start_brk;
	ts->brk = mm->brk;
	ts->start_stack = mm->start_stack;
	spin_lock(&mm->arg_lock);
	ts->arg_start = mm->arg_start;
	ts->arg_end = mm->arg_end;
	ts->env_start = mm->env_start;
	ts->env_end = mm->env_end;
	spin_unlock(&mm->arg_lock);
	ts->exe_file = IMGCR_NO_FILE;
	exe = imgcr_get_mm_exe_file(mm);
	if (exe) {
		ret = dump_file(img, exe, 0);
		fput(exe);
		if (ret < 0)
			goto out;
		ts->exe_file = ret;
		ts->nr_files = img->nr_files;
		ret = 0;
	}
	BUILD_BUG_ON(sizeof(mm->saved_auxv) > sizeof(img->auxv));
	memcpy(img->auxv, mm->saved_auxv, sizeof(mm->saved_auxv));
	img->auxv_bytes = sizeof(mm->saved_auxv);

	if (mm->context.vdso && mm->context.vdso_image) {
		const struct vdso_image *vi = mm->context.vdso_image;

		ts->vdso = (unsigned long)mm->context.vdso;
		ts->vdso_size = vi->size;
		ts->vvar_size = imgcr_vvar_size(vi);
		ts->vdso_crc = crc32_le(~0, vi->data, vi->size);
		img->vdso_text = vi->data;
	}
out:
	mmap_read_unlock(mm);
	return ret;
}

/* ELF note sizes: 12-byte header, then name and descriptor padded to 4. */
static size_t note_size(const char *name, size_t desc)
{
	return sizeof(struct elf64_note) + ALIGN(strlen(name) + 1, 4) +
	       ALIGN(desc, 4);
}

static char *put_note(char *p, const char *name, u32 type,
		      const void *desc, size_t len)
{
	struct elf64_note *n = (struct elf64_note *)p;
	size_t nlen = strlen(name) + 1;

	n->n_namesz = nlen;
	n->n_descsz = len;
	n->n_type = type;
	p += sizeof(*n);
	memcpy(p, name, nlen);
	p += ALIGN(nlen, 4);
	memcpy(p, desc, len);
	return p + ALIGN(len, 4);
}

/* Notes of each thread after the main one: registers, then its own state. */
static size_t thread_notes_size(const struct dump_thread *th)
{
	return note_size("CORE", sizeof(th->prstatus)) +
	       note_size("CORE", sizeof(th->fpregs)) +
	       note_size("LINUX", th->xstate_size) +
	       note_size(IMGCR_NOTE_OWNER, sizeof(th->th)) +
	       note_size(IMGCR_NOTE_OWNER, sizeof(th->creds));
}

static size_t notes_size(const struct dump_image *img)
{
	const struct dump_thread *m = &img->threads[0];
	size_t notes, i;

	notes = note_size("CORE", sizeof(m->prstatus)) +
		note_size("CORE", sizeof(struct imgcr_prpsinfo)) +
		note_size("CORE", img->auxv_bytes) +
		note_size("CORE", sizeof(m->fpregs)) +
		note_size("LINUX", m->xstate_size) +
		note_size(IMGCR_NOTE_OWNER, sizeof(img->tstate)) +
		note_size(IMGCR_NOTE_OWNER, sizeof(img->sigact)) +
		note_size(IMGCR_NOTE_OWNER, img->nr_vmas * sizeof(*img->vmas)) +
		note_size(IMGCR_NOTE_OWNER, img->filerecs_len) +
		note_size(IMGCR_NOTE_OWNER, sizeof(img->proc));
	if (img->proc.nr_sigqueue)
		notes += note_size(IMGCR_NOTE_OWNER,
				   img->proc.nr_sigqueue * sizeof(*img->sigq));
	if (img->proc.nr_timers)
		notes += note_size(IMGCR_NOTE_OWNER,
				   img->proc.nr_timers * sizeof(*img->timers));
	if (img->vdso_text)
		notes += note_size(IMGCR_NOTE_OWNER, img->tstate.vdso_size);
	notes += note_size(IMGCR_NOTE_OWNER, sizeof(m->creds));
	if (img->seccomp)
		notes += note_size(IMGCR_NOTE_OWNER,
				   img->nr_threads * sizeof(*img->seccomp));
	if (img->nr_sleeps)
		notes += note_size(IMGCR_NOTE_OWNER,
				   img->nr_sleeps * img->sleep_size);
	if (img->nr_sigwaits)
		notes += note_size(IMGCR_NOTE_OWNER,
				   img->nr_sigwaits * sizeof(*img->sigwaits));
	for (i = 1; i < img->nr_threads; i++)
		notes += thread_notes_size(&img->threads[i]);
	return notes;
}

/*
 * The notes in the order of the kernel's own core dumps: each thread's
 * register notes right after its NT_PRSTATUS, the main thread first with
 * the process-wide notes (see include/uapi/linux/imgcr.h).
 */
static void put_notes(struct dump_image *img, char *p)
{
	const struct dump_thread *m = &img->threads[0];
	struct imgcr_prpsinfo ps = { .state = 3, .sname = 'T' };
	unsigned int i;

	ps.pid = m->prstatus.pid;
	memcpy(ps.fname, img->tstate.comm, sizeof(ps.fname));
	p = put_note(p, "CORE", NT_PRSTATUS, &m->prstatus, sizeof(m->prstatus));
	p = put_note(p, "CORE", NT_PRPSINFO, &ps, sizeof(ps));
	p = put_note(p, "CORE", NT_AUXV, img->auxv, img->auxv_bytes);
	p = put_note(p, "CORE", NT_PRFPREG, m->fpregs, sizeof(m->fpregs));
	p = put_note(p, "LINUX", NT_X86_XSTATE, m->xstate, m->xstate_size);
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_TASK, &img->tstate,
		     sizeof(img->tstate));
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_SIGACT, img->sigact,
		     sizeof(img->sigact));
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_VMAS, img->vmas,
		     img->nr_vmas * sizeof(*img->vmas));
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_FILES, img->filerecs,
		     img->filerecs_len);
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_PROC, &img->proc,
		     sizeof(img->proc));
	if (img->proc.nr_sigqueue)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_SIGQUEUE, img->sigq,
			     img->proc.nr_sigqueue * sizeof(*img->sigq));
	if (img->proc.nr_timers)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_TIMERS, img->timers,
			     img->proc.nr_timers * sizeof(*img->timers));
	if (img->vdso_text)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_VDSO, img->vdso_text,
			     img->tstate.vdso_size);
	p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_CREDS, &m->creds,
		     sizeof(m->creds));
	if (img->seccomp)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_SECCOMP, img->seccomp,
			     img->nr_threads * sizeof(*img->seccomp));
	if (img->nr_sleeps)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_SLEEPS, img->sleeps,
			     img->nr_sleeps * img->sleep_size);
	if (img->nr_sigwaits)
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_SIGWAITS,
			     img->sigwaits,
			     img->nr_sigwaits * sizeof(*img->sigwaits));
	for (i = 1; i < img->nr_threads; i++) {
		const struct dump_thread *th = &img->threads[i];

		p = put_note(p, "CORE", NT_PRSTATUS, &th->prstatus,
			     sizeof(th->prstatus));
		p = put_note(p, "CORE", NT_PRFPREG, th->fpregs,
			     sizeof(th->fpregs));
		p = put_note(p, "LINUX", NT_X86_XSTATE, th->xstate,
			     th->xstate_size);
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_THREAD, &th->th,
			     sizeof(th->th));
		p = put_note(p, IMGCR_NOTE_OWNER, NT_IMGCR_CREDS, &th->creds,
			     sizeof(th->creds));
	}
}

static int dump_layout(struct dump_image *img)
{
	size_t nphdr = 1 + img->nr_runs;
	size_t notes, off, i, k;
	struct elf64_hdr *eh;
	struct elf64_phdr *ph;

	notes = notes_size(img);
	if (notes > IMGCR_MAX_NOTES_SIZE)
		return -EFBIG;
	off = sizeof(*eh) + nphdr * sizeof(*ph);
	img->head_len = PAGE_ALIGN(off + notes);
	img->head = kvzalloc(img->head_len, GFP_KERNEL_ACCOUNT);
	if (!img->head)
		return -ENOMEM;

	eh = (struct elf64_hdr *)img->head;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = nphdr;

	ph = (struct elf64_phdr *)(eh + 1);
	ph->p_type = PT_NOTE;
	ph->p_offset = off;
	ph->p_filesz = notes;
	ph->p_align = 4;
	/*
	 * Both lists are sorted by address (runs are added mapping by
	 * mapping, in order): one walk finds each run's mapping.
	 */
	for (i = 0, k = 0; i < img->nr_runs; i++) {
		const struct dump_run *r = &img->runs[i];
		const struct imgcr_vma *v = img->vmas;
		u32 flags = 0;

		while (k < img->nr_vmas && v[k].end <= r->vaddr)
			k++;
		if (k < img->nr_vmas && r->vaddr >= v[k].start)
			flags = (v[k].prot & IMGCR_PROT_READ ? PF_R : 0) |
				(v[k].prot & IMGCR_PROT_WRITE ? PF_W : 0) |
				(v[k].prot & IMGCR_PROT_EXEC ? PF_X : 0);
		ph[1 + i].p_type = PT_LOAD;
		ph[1 + i].p_flags = flags;
		ph[1 + i].p_offset = img->head_len + r->first * PAGE_SIZE;
		ph[1 + i].p_vaddr = r->vaddr;
		ph[1 + i].p_filesz = r->npages * PAGE_SIZE;
		ph[1 + i].p_memsz = r->npages * PAGE_SIZE;
		ph[1 + i].p_align = PAGE_SIZE;
		if (!(i % 4096)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	put_notes(img, img->head + off);
	return 0;
}

/*
 * Take a reference on every thread of the group, the leader first.  Fails
 * with EAGAIN if threads come or go while we look.
 */
static int dump_collect_threads(struct dump_image *img)
{
	struct task_struct *leader = img->task, *t;
	unsigned int n = get_nr_threads(leader), i = 0;

	if (!n)
		return -ESRCH;	/* reaped since it was found stopped */
	if (n > IMGCR_MAX_THREADS + 1) {
		dump_refuse(img, task_pid_nr(leader),
			    "%u threads (more than %d)", n,
			    IMGCR_MAX_THREADS + 1);
		return -EFBIG;
	}
	img->threads = kvcalloc(n, sizeof(*img->threads), GFP_KERNEL_ACCOUNT);
	if (!img->threads)
		return -ENOMEM;
	get_task_struct(leader);
	img->threads[i++].task = leader;
	rcu_read_lock();
	for_each_thread(leader, t) {
		if (t == leader)
			continue;
		if (i == n) {
			i++;
			break;
		}
		get_task_struct(t);
		img->threads[i++].task = t;
	}
	rcu_read_unlock();
	img->nr_threads = min(i, n);
	if (i != n || get_nr_threads(leader) != n)
		return -EAGAIN;
	return 0;
}

/* Every thread stopped and off its CPU (its registers are in memory then). */
static int dump_wait_stopped(struct dump_image *img)
{
	unsigned int i;

	for (i = 0; i < img->nr_threads; i++) {
		struct task_struct *t = img->threads[i].task;

		if (!task_is_stopped_or_traced(t))
			return -EBUSY;
		while (READ_ONCE(t->on_cpu)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		img->threads[i].switches = task_switches(t);
	}
	return 0;
}

#ifdef CONFIG_SYSVIPC
struct sem_holder {
	const void *ulp;
	unsigned int users;
	unsigned int thread;
};

static int sem_holder_cmp(const void *a, const void *b)
{
	const struct sem_holder *x = a, *y = b;

	if (x->ulp != y->ulp)
		return x->ulp < y->ulp ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/*
 * Whether a SysV semaphore undo list of the threads is shared with a task
 * outside the group (clone(CLONE_SYSVSEM) without CLONE_THREAD): that one
 * runs on and may add adjustments after the check, and the restored
 * process would not share its list.  Each sharer holds a reference: more
 * than the group's threads that have the list means another process.
 * From the lists and counts dump_gpregs() copied under the siglock (every
 * thread stopped; the pointers are only compared): sorted by list, each
 * list's threads are next to each other, so the work is n log n and not
 * done with interrupts off.  0, 1 (@tid: the first thread of a shared
 * list, as the reader sees it) or -ENOMEM.
 */
static int dump_sem_undo_shared(struct dump_image *img, pid_t *tid)
{
	struct sem_holder *h;
	unsigned int i, j, n = 0, users;
	int ret = 0;

	for (i = 0; i < img->nr_threads; i++)
		if (img->threads[i].sem_users > 1)
			break;
	if (i == img->nr_threads)
		return 0;	/* no list with another user: nothing to count */
	h = kvmalloc_array(img->nr_threads, sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	for (i = 0; i < img->nr_threads; i++)
		if (img->threads[i].sem_ulp)
			h[n++] = (struct sem_holder){ img->threads[i].sem_ulp,
						      img->threads[i].sem_users, i };
	sort(h, n, sizeof(*h), sem_holder_cmp, NULL);
	for (i = 0; i < n && !ret; i = j) {
		users = h[i].users;
		for (j = i + 1; j < n && h[j].ulp == h[i].ulp; j++)
			users = max(users, h[j].users);
		if (users > j - i) {
			*tid = task_pid_nr_ns(img->threads[h[i].thread].task,
					      task_active_pid_ns(current));
			ret = 1;
		}
	}
	kvfree(h);
	return ret;
}
#endif

/*
 * The general registers live on each thread's kernel stack, which a thread
 * that is killed and exits frees while we only hold its task_struct.  So
 * they are read under the group's siglock, after checking that every
 * thread is still stopped and off its CPU: a stopped or traced task is only
 * woken (by SIGKILL, SIGCONT or ptrace) under that lock, so none can run,
 * let alone exit, meanwhile; and none has run since dump_wait_stopped()
 * counted its switches.  Nothing under the lock sleeps: an LDT selector
 * (whose base is read under a mutex) is refused first, and the SEM_UNDO
 * lists are compared after it is dropped.
 *
 * Choosing a thread's regset view reads its registers too (task_pt_regs()
 * for the code segment, with IA32 emulation): that is done here as well,
 * and dump_regs() uses the view kept.
 */
static int dump_gpregs(struct dump_image *img)
{
	const struct user_regset *rs;
	struct sighand_struct *sighand;
	unsigned long flags;
	unsigned int i;
	pid_t sem_tid = -1;
	bool sem_shared = false;
	int ret = 0;

	sighand = dump_lock_sighand(img->task, &flags);
	if (!sighand)
		return -ESRCH;
	for (i = 0; i < img->nr_threads && !ret; i++) {
		struct dump_thread *th = &img->threads[i];
		struct task_struct *t = th->task;

		/* acquire: as in dump_unchanged() */
		if (!task_is_stopped_or_traced(t) ||
		    smp_load_acquire(&t->on_cpu) ||
		    task_switches(t) != th->switches ||
		    t->sighand != sighand) {
			ret = -EAGAIN;	/* it ran since we looked */
			break;
		}
		if ((t->thread.fsindex | t->thread.gsindex) & SEGMENT_TI_MASK) {
			ret = -EOPNOTSUPP;
			break;
		}
		th->view = task_user_regset_view(t);
		rs = find_regset(th->view, NT_PRSTATUS);
		if (!rs) {
			ret = -ENODEV;
			break;
		}
		ret = regset_get(t, rs, sizeof(th->prstatus.regs),
				 th->prstatus.regs);
		if (ret > 0)
			ret = 0;
	}
#ifdef CONFIG_SYSVIPC
	/*
	 * SysV semaphore adjustments (semop() with SEM_UNDO) belong to the
	 * process, not to the sets: user space cannot see them, the restored
	 * process could not get them back.  Every thread made with
	 * CLONE_SYSVSEM (pthread_create()) shares an undo list: only one with
	 * entries counts.  Checked once every thread is known stopped (the
	 * loop above): a list's users are then the group's threads and other
	 * processes only, never a thread made since we looked.
	 */
	for (i = 0; i < img->nr_threads && !ret; i++) {
		struct dump_thread *th = &img->threads[i];

		if (imgcr_sem_undo_pending(th->task)) {
			sem_tid = task_pid_nr_ns(th->task, task_active_pid_ns(current));
			ret = -EOPNOTSUPP;
		}
		th->sem_ulp = imgcr_sem_undo_list(th->task);
		th->sem_users = th->sem_ulp ? imgcr_sem_undo_users(th->sem_ulp) : 0;
	}
#endif
	spin_unlock_irqrestore(&sighand->siglock, flags);
#ifdef CONFIG_SYSVIPC
	if (!ret) {
		ret = dump_sem_undo_shared(img, &sem_tid);
		if (ret > 0) {
			sem_shared = true;
			ret = -EOPNOTSUPP;
		}
	}
#endif
	/* TIDs in a reason as its reader sees them (the image has the task's own) */
	if (ret == -EOPNOTSUPP && sem_shared)
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d shares its SysV semaphore undo list with another process (clone() with CLONE_SYSVSEM, not CLONE_THREAD), which goes on running and could add adjustments; not supported",
			    sem_tid);
	else if (ret == -EOPNOTSUPP && sem_tid >= 0)
		dump_refuse(img, task_pid_nr(img->task),
			    "thread %d has SysV semaphore undo state (semop() with SEM_UNDO); not supported",
			    sem_tid);
	else if (ret == -EOPNOTSUPP)
		dump_refuse(img, task_pid_nr(img->task),
			    "segment selectors in use (LDT/TLS entries are not supported)");
	return ret;
}

/*
 * Whether the process is in a PID or user namespace other than the
 * reader's: its TIDs and IDs are then recorded as its own namespaces see
 * them (IMGCR_PROC_OWN_NS), which they always are; without the flag the
 * image is the same as before the flag existed.  The flags say which of
 * the two differed (IMGCR_PROC_OWN_PIDNS, _OWN_USERNS): a loader checks
 * the TIDs only for the first.
 */
static u32 dump_own_ns(struct dump_image *img)
{
	struct user_namespace *me = current_user_ns();
	u32 flags = 0;
	unsigned int i;

	if (task_active_pid_ns(img->task) != task_active_pid_ns(current))
		flags |= IMGCR_PROC_OWN_PIDNS;
	rcu_read_lock();
	for (i = 0; i < img->nr_threads; i++) {
		if (__task_cred(img->threads[i].task)->user_ns != me) {
			flags |= IMGCR_PROC_OWN_USERNS;
			break;
		}
	}
	rcu_read_unlock();
	return flags ? flags | IMGCR_PROC_OWN_NS : 0;
}

static int dump_build(struct dump_image *img)
{
	struct task_struct *t = img->task;
	unsigned int i;
	int ret;

	if (t->exit_state) {
		dump_refuse(img, task_pid_nr(t),
			    "the main thread has exited (the other threads run on); not supported");
		return -EOPNOTSUPP;
	}
	if (!task_is_stopped_or_traced(t))
		return -EBUSY;
	ret = dump_collect_threads(img);
	if (!ret)
		ret = dump_wait_stopped(img);
	if (ret)
		return ret;
	/*
	 * Everything read from now on is checked against these counts; the mm
	 * mem approved must still be the task's at this point too, or it ran
	 * and exec'd (a set-user-ID program, say) since the access check.
	 */
	if (!task_has_mm(t, img->mm))
		return -ESRCH;

	ret = dump_gpregs(img);
	for (i = 0; i < img->nr_threads && !ret; i++) {
		ret = dump_regs(img, &img->threads[i]);
		if (!ret)
			ret = dump_thread_unkept(img, &img->threads[i]);
		if (!ret) {
			dump_thread_state(&img->threads[i]);
			dump_thread_creds(&img->threads[i]);
		}
	}
	if (ret)
		return ret;
	ret = dump_seccomp(img);
	if (!ret)
		ret = dump_sleeps(img);
	if (!ret)
		ret = dump_sigwaits(img);
	if (ret)
		return ret;
	dump_main_state(img);
	dump_proc_state(img);
	img->proc.flags |= dump_own_ns(img);
	ret = dump_sigactions(img);
	if (!ret)
		ret = dump_signals(img);
	if (!ret)
		ret = dump_timers(img);
	if (!ret)
		ret = capture_mm(img);
	/* what a loader of versions 2 and 3 would get wrong: it must refuse */
	if (!ret && ((img->proc.flags & IMGCR_PROC_OWN_NS) || img->nr_sysvshm))
		img->tstate.version = IMGCR_FORMAT_VERSION;
	if (!ret)
		ret = dump_file_heads(img);
	if (!ret)
		ret = dump_layout(img);
	if (!ret && !dump_unchanged(img))
		ret = -EAGAIN;	/* it was continued while we looked */
	return ret;
}

/* The group leader of the task a /proc/<pid>/ or /proc/<tid>/ is for. */
static struct task_struct *dump_leader(struct inode *inode)
{
	struct task_struct *task, *leader;

	task = get_pid_task(imgcr_proc_pid(inode), PIDTYPE_PID);
	if (!task)
		return NULL;
	rcu_read_lock();
	leader = READ_ONCE(task->group_leader);
	get_task_struct(leader);
	rcu_read_unlock();
	put_task_struct(task);
	return leader;
}

/*
 * Open dumps, so that what one holds is let go once its process has
 * exited: an image cannot be read after that (dump_unchanged() fails for
 * a thread that is gone), and its pinned pages and mapped files (a shared
 * memory object whole), referenced by no process and charged to none that
 * lives, would otherwise stay for as long as anyone holds the file open.
 *
 * The probe on sched_process_exit queues dump_unpin_work(), which marks
 * the image dying; whoever is the last user of it then lets go: the work
 * itself if no read or ioctl is under way, else the last of those as it
 * ends.  Nothing ever waits for a user, who may be stuck in a page fault
 * of the reader's own memory for as long as that reader likes.
 */
static DEFINE_HASHTABLE(dump_open_hash, 8);
static DEFINE_SPINLOCK(dump_open_lock);
static atomic_t dump_open_count = ATOMIC_INIT(0);
static struct tracepoint *dump_exit_tp;
static struct workqueue_struct *dump_unpin_wq;

/* Let go of the pages, files and mem file; no user is left. */
static void dump_unpin(struct dump_image *img)
{
	size_t i;

	for (i = 0; i < img->nr_pages; i++) {
		put_page(img->pages[i]);
		if (!(i % 4096))
			cond_resched();
	}
	for (i = 0; i < img->nr_files; i++)
		fput(img->files[i]);
	if (img->mem)
		fput(img->mem);
	img->mem = NULL;
	WRITE_ONCE(img->error, -ESRCH);
	img->unpinned = true;
}

/* A read or ioctl begins; false once the process is gone (ESRCH). */
static bool dump_get(struct dump_image *img)
{
	bool ok;

	spin_lock(&img->state_lock);
	ok = !img->dying;
	if (ok)
		img->users++;
	spin_unlock(&img->state_lock);
	return ok;
}

/* ... and ends: the last one after the process died lets go. */
static void dump_put(struct dump_image *img)
{
	bool last;

	spin_lock(&img->state_lock);
	last = !--img->users && img->dying;
	spin_unlock(&img->state_lock);
	if (last)
		dump_unpin(img);
}

static void dump_unpin_work(struct work_struct *work)
{
	struct dump_image *img = container_of(work, struct dump_image,
					      unpin_work);
	bool now;

	spin_lock(&img->state_lock);
	now = !img->dying && !img->users;
	img->dying = true;
	spin_unlock(&img->state_lock);
	if (now)
		dump_unpin(img);
}

/* The last thread of @p's process is exiting: its open dumps let go. */
static void dump_process_gone(struct task_struct *p)
{
	struct dump_image *img;

	spin_lock(&dump_open_lock);
	hash_for_each_possible(dump_open_hash, img, open_node,
			       (unsigned long)p->signal)
		if (img->task->signal == p->signal)
			queue_work(dump_unpin_wq, &img->unpin_work);
	spin_unlock(&dump_open_lock);
}

/*
 * sched_process_exit.  do_exit() counts signal->live down before it, on
 * every kernel (a full barrier): 0 means the last thread is on its way
 * out (more than one exiting thread may see 0: queueing twice is
 * harmless).
 */
static void dump_exit_probe(void *data, struct task_struct *p)
{
	if (atomic_read(&dump_open_count) && !atomic_read(&p->signal->live))
		dump_process_gone(p);
}

/* the same, where the tracepoint also passes group_dead (7.x) */
static void dump_exit_probe_gd(void *data, struct task_struct *p,
			       bool group_dead)
{
	if (group_dead && atomic_read(&dump_open_count))
		dump_process_gone(p);
}

static void *dump_exit_probe_fn(void)
{
	return IMGCR_EXIT_TP_GROUP_DEAD ? (void *)dump_exit_probe_gd :
					  (void *)dump_exit_probe;
}

static void find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		*(struct tracepoint **)priv = tp;
}

int imgcr_dump_init(void)
{
	int ret;

	for_each_kernel_tracepoint(find_exit_tp, &dump_exit_tp);
	if (!dump_exit_tp) {
		pr_err(IMGCR_DUMP_NAME ": tracepoint sched_process_exit not found; this kernel is not supported\n");
		return -ENOENT;
	}
	dump_unpin_wq = alloc_workqueue("imgcr_unpin", WQ_UNBOUND, 0);
	if (!dump_unpin_wq)
		return -ENOMEM;
	ret = tracepoint_probe_register(dump_exit_tp, dump_exit_probe_fn(),
					NULL);
	if (ret)
		destroy_workqueue(dump_unpin_wq);
	return ret;
}

/* No dump is open: the module is only unloaded once all are closed. */
void imgcr_dump_exit(void)
{
	tracepoint_probe_unregister(dump_exit_tp, dump_exit_probe_fn(), NULL);
	tracepoint_synchronize_unregister();
	destroy_workqueue(dump_unpin_wq);
}

static void dump_track(struct dump_image *img)
{
	spin_lock(&dump_open_lock);
	hash_add(dump_open_hash, &img->open_node,
		 (unsigned long)img->task->signal);
	atomic_inc(&dump_open_count);
	spin_unlock(&dump_open_lock);
	/*
	 * It may have died while the image was built, before it was listed.
	 * The barrier pairs with the atomic_dec_and_test() of signal->live
	 * in do_exit(): either the probe sees the count and the entry, or
	 * this sees live at 0.
	 */
	smp_mb();
	if (!atomic_read(&img->task->signal->live))
		queue_work(dump_unpin_wq, &img->unpin_work);
}

static void dump_untrack(struct dump_image *img)
{
	spin_lock(&dump_open_lock);
	hash_del(&img->open_node);
	atomic_dec(&dump_open_count);
	spin_unlock(&dump_open_lock);
	cancel_work_sync(&img->unpin_work);
}

static int dump_open(struct inode *inode, struct file *file)
{
	struct dump_image *img;
	struct task_struct *task;
	int ret;

	task = dump_leader(inode);
	if (!task) {
		imgcr_refusal_set("");	/* no older reason for this failure */
		return -ESRCH;
	}
	img = kzalloc(sizeof(*img), GFP_KERNEL_ACCOUNT);
	if (!img) {
		put_task_struct(task);
		imgcr_refusal_set("");
		return -ENOMEM;
	}
	img->task = task;
	spin_lock_init(&img->state_lock);
	INIT_WORK(&img->unpin_work, dump_unpin_work);
	ret = dump_check_access(img, file);
	if (!ret)
		ret = dump_build(img);
	if (ret) {
		imgcr_refusal_set(img->reason);
		dump_free(img);
		return ret;
	}
	/*
	 * The image is built: from here on only its pinned pages are read.
	 * Holding the mm's users would keep the whole address space of a
	 * process that has exited (the /proc/PID/mem file keeps the struct).
	 */
	mmput(img->mm);
	img->mm = NULL;
	dump_track(img);
	file->private_data = img;
	return 0;
}

/*
 * Reads and writes are users of the image (dump_get()): once its process
 * is gone they fail with ESRCH, and the last one lets go of what the
 * image holds (dump_put()).
 */
static ssize_t dump_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct dump_image *img = file->private_data;
	ssize_t ret;

	if (!dump_get(img))
		return -ESRCH;
	ret = dump_read_img(img, buf, count, ppos);
	dump_put(img);
	return ret;
}

static long dump_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dump_image *img = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (cmd != IMGCR_IOC_DUMP_TO && cmd != IMGCR_IOC_DUMP_TO_SKIP &&
	    cmd != IMGCR_IOC_PRECOPY && cmd != IMGCR_IOC_FILE_MAPS)
		return -ENOTTY;
	if (!dump_get(img))
		return -ESRCH;
	if (cmd == IMGCR_IOC_PRECOPY)
		ret = dump_ioctl_precopy(img, uarg);
	else if (cmd == IMGCR_IOC_FILE_MAPS)
		ret = dump_ioctl_file_maps(img, uarg);
	else
		ret = dump_ioctl_dump_to(img, uarg,
					 cmd == IMGCR_IOC_DUMP_TO_SKIP);
	dump_put(img);
	return ret;
}

static int dump_release(struct inode *inode, struct file *file)
{
	struct dump_image *img = file->private_data;

	dump_untrack(img);
	dump_free(img);
	return 0;
}

const struct file_operations imgcr_dump_fops = {
	.owner = THIS_MODULE,
	.open = dump_open,
	.read = dump_read,
	.unlocked_ioctl = dump_ioctl,
	.llseek = default_llseek,
	.release = dump_release,
};
