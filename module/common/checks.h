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
#include <linux/types.h>

/* A POSIX timer clock an image may hold (the others are refused at dump). */
static inline bool timer_clock_ok(clockid_t c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME || c == CLOCK_TAI;
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
