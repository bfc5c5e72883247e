/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IMGCR_COMMANDS_H
#define IMGCR_COMMANDS_H

int cmd_show(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_restore(int argc, char **argv);
/* clone3() like fork(), with pid @tid (0: any); restore.c */
#include <sys/types.h>
pid_t clone_tid(pid_t tid);
int usage_error(const char *why);

#endif
