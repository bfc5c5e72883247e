/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks both modules make alike: what the dump (img_dump.ko) writes into
 * an image is exactly what the loader (binfmt_img.ko) accepts.
 */
#ifndef IMGCR_CHECKS_H
#define IMGCR_CHECKS_H

#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/time.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

/* A POSIX timer clock an image may hold (the others are refused at dump). */
static inline bool timer_clock_ok(clockid_t c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME || c == CLOCK_TAI;
}

/*
 * Now on a clock a nanosleep's restart block may name and an image may
 * hold; false for any other.  The dump takes the time left from it, the
 * loader the new expiry.  Not CLOCK_REALTIME: only a relative sleep has a
 * restart block, and the kernel runs a relative CLOCK_REALTIME one on
 * CLOCK_MONOTONIC (__hrtimer_init()).
 */
static inline bool sleep_clock_now(clockid_t c, ktime_t *now)
{
	switch (c) {
	case CLOCK_MONOTONIC:
		*now = ktime_get();
		return true;
	case CLOCK_BOOTTIME:
		*now = ktime_get_boottime();
		return true;
	case CLOCK_TAI:
		*now = ktime_get_clocktai();
		return true;
	}
	return false;
}

/*
 * Now on the group CPU clock (CPUCLOCK_SCHED) of @p's process, as
 * posix_cpu_nsleep() compares a sleep's expiry with it
 * (cpu_clock_sample_group(): the group's cputimer while CPU timers are
 * queued, else the sum over its threads, without the running one's time
 * since its last tick, as the kernel's own sum).
 */
static inline u64 imgcr_group_sched_runtime(struct task_struct *p)
{
	struct signal_struct *sig = p->signal;
	struct task_struct *t;
	u64 sum;

	if (READ_ONCE(sig->posix_cputimers.timers_active))
		return atomic64_read(&sig->cputimer.cputime_atomic.sum_exec_runtime);
	rcu_read_lock();
	sum = READ_ONCE(sig->sum_sched_runtime);
	for_each_thread(p, t)
		sum += READ_ONCE(t->se.sum_exec_runtime);
	rcu_read_unlock();
	return sum;
}

/* Now on the base of an alarm clock (alarm_bases[].get_ktime); false for another clock */
static inline bool alarm_clock_now(clockid_t c, ktime_t *now)
{
	switch (c) {
	case CLOCK_REALTIME_ALARM:
		*now = ktime_get_real();
		return true;
	case CLOCK_BOOTTIME_ALARM:
		*now = ktime_get_boottime();
		return true;
	}
	return false;
}

/*
 * io_setup() ran in @mm: its table of AIO contexts, which stays after
 * io_destroy().  The dump refuses such a task, the in-place restore such
 * a caller.
 */
static inline bool mm_had_aio(struct mm_struct *mm)
{
#ifdef CONFIG_AIO
	return rcu_access_pointer(mm->ioctx_table);
#else
	return false;
#endif
}

#endif
