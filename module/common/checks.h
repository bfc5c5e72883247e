/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks both modules make alike: what the dump (img_dump.ko) writes into
 * an image is exactly what the loader (binfmt_img.ko) accepts.
 */
#ifndef IMGCR_CHECKS_H
#define IMGCR_CHECKS_H

#include <linux/mm_types.h>
#include <linux/rcupdate.h>
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
