// SPDX-License-Identifier: GPL-2.0
/*
 * The mnt namespace kind (ns.h): the mount tree.
 * Not supported yet: a tree with its own mnt namespace is refused at dump.
 */
#include <sched.h>
#include <stddef.h>

#include "ns.h"
#include "record.h"

const struct ns_ops ns_mnt_ops = { .name = "mnt", .clone_flag = CLONE_NEWNS };

const struct tree_record mnt_records[] = {
	{ NULL, NULL, NULL }
};
