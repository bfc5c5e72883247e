/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IMGCR_COMMANDS_H
#define IMGCR_COMMANDS_H

int cmd_show(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_restore(int argc, char **argv);
/* hidden: imgcr _ipc dump|restore -D DIR (ipc.c) */
int cmd_ipc(int argc, char **argv);
/* clone3() like fork(), with pid @tid (0: any); restore.c */
#include <sys/types.h>
pid_t clone_tid(pid_t tid);
/* The same into new namespaces (CLONE_NEW* @flags; with CLONE_NEWPID, @tid 0). */
pid_t clone_ns(unsigned long flags, pid_t tid);
/*
 * In a process clone_ns() made (every signal blocked) that will not exec
 * an image: the signal mask imgcr had (imgcr-init, programs it runs).
 */
void clone_mask_restore(void);
int usage_error(const char *why);
/* COMMAND --help: its usage on stdout; returns 0 */
int command_help(const char *name);
/* a bad option: its name and the command's usage on stderr; returns 2 */
int option_error(const char *name, int ret, int argc, char **argv);

#endif
