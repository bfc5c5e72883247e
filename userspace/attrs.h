/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process attributes kept in DIR/tree (attrs.c): resource limits,
 * oom_score_adj, scheduling policy/priority/nice, CPU affinity, I/O
 * priority, no_new_privs, the audit loginuid, and a cwd that was deleted.  The ones only the
 * kernel can read or set again after the exec (child subreaper, THP
 * disable, dumpable, parent-death signal, personality, membarrier) are in
 * the image (NT_IMGCR_PROC, NT_IMGCR_TASK).
 */
#ifndef IMGCR_ATTRS_H
#define IMGCR_ATTRS_H

#include <stddef.h>
#include <stdio.h>

#include "tree.h"

/* dump: read task @k's attributes (its threads too); 0 or -1 (error printed) */
int attrs_dump(struct tree_task *k);
/* Only the limits (a zombie's: prlimit still reads them). */
int attrs_dump_limits(struct tree_task *k);

/*
 * restore, in the task itself before it changes its credentials: the cwd
 * (attrs_chdir, recreating a deleted one), then the rest (attrs_set).
 * 0, or -1 with the reason in @err.
 */
int attrs_chdir(const struct tree_task *k, char *err, size_t size);
/* @nnp_in_image: the image has each thread's no_new_privs (NT_IMGCR_CREDS) */
int attrs_set(const struct tree_task *k, int nnp_in_image, char *err, size_t size);
/*
 * Once the tree is in its cgroups (after the go byte): the NUMA memory
 * policy set and read back again, as a cpuset's mems moving rebinds it.
 */
int attrs_mempolicy_again(const struct tree_task *k, char *err, size_t size);
/*
 * The same for the CPU affinity (a cpuset move resets it on 6.1): set
 * again if it differs, read back; 0, or -1 with the reason in @err.
 */
int attrs_affinity_again(const struct tree_task *k, char *err, size_t size);

/* DIR/tree records (format: tree.c) */
void attrs_write(FILE *f, const struct tree_task *k);
/* their records: attrs_records (record.h) */

/* imgcr show DIR */
void attrs_show_text(const struct tree_task *k);
void attrs_show_json(const struct tree_task *k);

#endif
