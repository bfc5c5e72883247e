/* SPDX-License-Identifier: GPL-2.0 */
/* seccomp state of a dumped tree (seccomp.c). */
#ifndef IMGCR_SECCOMP_H
#define IMGCR_SECCOMP_H

#include <stddef.h>

#include "tree.h"

/*
 * While the tree is frozen: write the seccomp filters of task @k's threads
 * to DIR/seccomp-PID.img (none: no file), or refuse what cannot be
 * restored (message names pid and thread).
 */
int seccomp_dump(const struct tree_task *k, const char *dir);
/* The path of task @pid's seccomp file in @dir. */
/* DIR/seccomp-PID.img; @dir NULL: the name in DIR (restore: dir_open()) */
void seccomp_path(char *buf, size_t size, const char *dir, pid_t pid);

#endif
