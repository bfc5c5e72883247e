/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers for reading /proc and writing whole files. */
#ifndef IMGCR_PROC_H
#define IMGCR_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Whole file into a NUL-terminated malloc'ed buffer (NULL on error, errno set). */
char *read_text(const char *path, size_t *len);
/* Value of "Key:" in a /proc status-like text, or NULL. */
const char *status_field(const char *text, const char *key);
/* state, ppid, pgid, sid from /proc/PID/stat; 0 or -1. */
int proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgid, pid_t *sid);
int write_all(int fd, const void *buf, size_t len);
int read_full(int fd, void *buf, size_t len);
/*
 * open(/proc/PID/dump) failed with errno: say so, with the module's reason
 * for a refusal (/proc/imgcr_refusal: the calling thread's last one).
 */
void pr_dump_open_error(pid_t pid, const char *path);

#endif
