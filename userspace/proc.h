/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers for reading /proc and writing whole files. */
#ifndef IMGCR_PROC_H
#define IMGCR_PROC_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Whole file into a NUL-terminated malloc'ed buffer (NULL on error, errno set). */
char *read_text(const char *path, size_t *len);
/* The same for @path relative to @dirfd (AT_FDCWD: the cwd). */
char *read_text_at(int dirfd, const char *path, size_t *len);
/* The same for an open fd, which it closes. */
char *read_text_fd(int fd, size_t *len);
/*
 * Files of the dump directory (restore): opened relative to one fd of DIR,
 * opened at the start, so that a later setns()/pivot_root() cannot lose the
 * images, never through a symbolic link (O_NOFOLLOW), close-on-exec.
 * @name is a plain file name ("core-42.img").
 */
int dir_open(int dirfd, const char *name, int flags);
/* read_text() of DIR/@name, through dir_open(). */
char *read_text_dir(int dirfd, const char *name, size_t *len);
/* Value of "Key:" in a /proc status-like text, or NULL. */
const char *status_field(const char *text, const char *key);
/* state, ppid, pgid, sid from /proc/PID/stat; 0 or -1. */
int proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgid, pid_t *sid);
/*
 * @fn(pid, @arg) for every process in /proc but imgcr itself, until one
 * returns non-zero: that value; 0 after the last; -1 (said) if /proc
 * cannot be read.  The one walk of every place that looks for processes
 * outside the tree (sharers of an fd table, pipe or lock; setns joiners).
 */
int proc_each_process(int (*fn)(pid_t pid, void *arg), void *arg);
/*
 * @fn(pid, fd, @arg) for every fd of @pid, with the same return rules;
 * 0 if @pid has gone or its fds cannot be read.
 */
int proc_each_fd(pid_t pid, int (*fn)(pid_t pid, int fd, void *arg), void *arg);
/*
 * A new image file of a dump, for writing (close-on-exec): whatever was
 * at @path (a file of an earlier dump, or a link someone put in DIR) is
 * removed first, and the new one made with O_EXCL|O_NOFOLLOW, so that
 * root never writes through a symbolic or hard link.  -1 (errno).
 */
int img_create(const char *path, mode_t mode);
int img_create_at(int dirfd, const char *name, mode_t mode);
/* The same as a stdio stream ("w"), or NULL. */
FILE *img_fcreate(const char *path);
/*
 * @p is "/" or an absolute path of plain components: none empty ("//"),
 * "." or ".." (a name that only begins with "..", as Kubernetes' "..data",
 * is fine), no trailing "/", no newline.  1 or 0.
 */
int abs_path_ok(const char *p);
/* @text into the existing file @path (a /proc, /sys or cgroup file): 0, or -1 (errno). */
int write_text(const char *path, const char *text);
/* waitpid(@pid, @st, 0), again after EINTR: 0, or -1 (errno) */
int wait_child(pid_t pid, int *st);
int write_all(int fd, const void *buf, size_t len);
int read_full(int fd, void *buf, size_t len);
/*
 * open(/proc/PID/dump) failed with errno: say so, with the module's reason
 * for a refusal (/proc/imgcr_refusal: the calling thread's last one).
 */
void pr_dump_open_error(pid_t pid, const char *path);

#endif
