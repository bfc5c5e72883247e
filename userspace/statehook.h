/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state check hook: $IMGCR_STATE_HOOK, run by a dump with the tree
 * frozen ("HOOK before DIR PID...") and by a restore with the restored tree
 * frozen ("HOOK after DIR PID..."); see statehook.c and README, "Testing".
 */
#ifndef IMGCR_STATEHOOK_H
#define IMGCR_STATEHOOK_H

#include <sys/types.h>

#include "tree.h"

/* Whether $IMGCR_STATE_HOOK names a hook. */
int state_hook_set(void);
/* "HOOK before DIR PID..." for the frozen tree @t: 0, or -1 after a message. */
int state_hook_dump(const char *dir, const struct tree *t);
/*
 * Freeze the restored tree (root @root, its tasks @pids in the tree's
 * order, 0 for one that is gone), run "HOOK after DIR PID...", release it.
 * 0, or -1 after a message; the tree is left running either way.
 */
int state_hook_restore(const char *dir, pid_t root, const pid_t *pids, int n);

#endif
