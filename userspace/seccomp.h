/* SPDX-License-Identifier: GPL-2.0 */
/* seccomp state of a dumped tree (seccomp.c). */
#ifndef IMGCR_SECCOMP_H
#define IMGCR_SECCOMP_H

#include "tree.h"

/* Refuse a task with a thread under a seccomp filter (message names pid and thread). */
int seccomp_dump(const struct tree_task *k);

#endif
