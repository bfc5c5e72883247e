/* SPDX-License-Identifier: GPL-2.0 */
/* Memory shared copy-on-write between a parent and its children (cow.c). */
#ifndef IMGCR_COW_H
#define IMGCR_COW_H

#include <stddef.h>
#include "tree.h"

#define COW_ARG_MAX	(16 + 512 * 34)

/*
 * In the restorer, before any task exists (@dirfd: the dump directory): read which anonymous mappings
 * each task has in common with its parent or a child (same place, private,
 * written once).  0, or -1 after printing why.
 */
int cow_plan(const struct tree *t, int dirfd);

/*
 * In task @ti's restorer, before it creates its children: keep the
 * mappings inherited from the parent that the task has too (their
 * contents made the task's), drop the others, and map and fill the task's
 * own ones that a child has too.  NULL, or why not.
 */
const char *cow_prepare(const struct tree *t, int ti, int dirfd,
			char *err, size_t len);

/*
 * In the restorer: the bytes of task @ti's image data in the mappings it
 * shares with its parent or a child (put in place before the go byte and
 * shared), which its exec does not load again; @filled: only those it
 * fills itself before its fork (its parent has not got them).
 */
unsigned long long cow_kept_bytes(const struct tree *t, int ti, int filled);

/*
 * "--imgcr-keep=START-END,..." for the exec of the image (what this
 * process holds for itself), or "" if nothing: a normal exec.
 */
void cow_keep_arg(char *buf, size_t len);

#endif
