// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup namespace kind (ns.h): cgroups v2 and the cgroup namespace.
 * Not supported yet: a tree with its own cgroup namespace is refused at dump.
 */
#include <sched.h>
#include <stddef.h>

#include "ns.h"
#include "record.h"

const struct ns_ops ns_cgroup_ops = { .name = "cgroup", .clone_flag = 0 };

const struct tree_record cgroup_records[] = {
	{ NULL, NULL, NULL }
};
