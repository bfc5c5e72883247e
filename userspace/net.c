// SPDX-License-Identifier: GPL-2.0
/*
 * The net namespace kind (ns.h): network devices, addresses, routes, rules, sysctls.
 * Not supported yet: a tree with its own net namespace is refused at dump.
 */
#include <sched.h>
#include <stddef.h>

#include "ns.h"
#include "record.h"

const struct ns_ops ns_net_ops = { .name = "net", .clone_flag = CLONE_NEWNET };

const struct tree_record net_records[] = {
	{ NULL, NULL, NULL }
};
