// SPDX-License-Identifier: GPL-2.0
/* imgcr-criu's hooks into dump and restore (notify.h); unset in imgcr. */
#include "notify.h"

int (*notify_hook)(const char *script, pid_t pid);
int restore_sibling;
