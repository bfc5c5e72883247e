/* SPDX-License-Identifier: GPL-2.0 */
/* imgcr dump --live: memory copied while the tree runs (live.c). */
#ifndef IMGCR_LIVE_H
#define IMGCR_LIVE_H
#include <sys/types.h>
#include <linux/imgcr.h>
#include "tree.h"

struct live_task;

struct live {
	struct live_task *tasks;
	int ntasks;
	int rounds;			/* copy passes made while running */
	unsigned long long copied;	/* pages copied while running */
	unsigned long long skipped;	/* pages the frozen dump left out */
	long long precopy_ms;		/* running: copying; frozen: the short stops */
	long long max_stop_ms;
};

/* Whether --live can work here (page frames visible); -1 after saying why. */
int live_usable(void);
/*
 * While @t is frozen: start tracking (first call) or take the pages the
 * tasks wrote since the last call (later calls), and clear the kernel's
 * soft-dirty bits.  Returns how many pages must be copied, or -1.
 */
long live_scan(struct live *lv, const struct tree *t);
/* While the tree runs: copy the pages live_scan() marked.  0 or -1. */
int live_copy(struct live *lv);
/*
 * While frozen, at the dump of @pid: the pages copied earlier that were not
 * written since (the ranges IMGCR_IOC_DUMP_TO_SKIP leaves out).  Sets
 * *@ranges (malloc'ed) and *@n (0: none); 0 or -1.
 */
int live_clean_ranges(struct live *lv, pid_t pid, struct imgcr_range **ranges,
		      size_t *n);
/*
 * Write the pages of @ranges the image at @path left out, from the copies
 * (its PT_LOAD headers give their places).  0 or -1.
 */
int live_fill(struct live *lv, pid_t pid, const char *path,
	      const struct imgcr_range *ranges, size_t n);
void live_free(struct live *lv);
/* The address of the page at offset @off of the image at @path (0: none). */
unsigned long long live_vaddr_at(const char *path, unsigned long long off);

#endif
