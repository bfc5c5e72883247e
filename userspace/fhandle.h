/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path of a watched or marked inode that fdinfo names by a file handle
 * (inotify and fanotify: "fhandle-bytes:X fhandle-type:X f_handle:HEX").
 */
#ifndef IMGCR_FHANDLE_H
#define IMGCR_FHANDLE_H

#include <fcntl.h>
#include <sys/types.h>

/* What handle_path() says when it finds no path, by case. */
struct handle_why {
	const char *nomount;	/* no mount of the inode's device */
	const char *deleted;	/* the handle's file has no name left */
	const char *gone;	/* no path that leads to that very inode */
};

/* The file handle of an fdinfo @line, malloc'ed; NULL (errno set) if none. */
struct file_handle *fdinfo_handle(const char *line);

/*
 * The path of inode @ino on device @sdev (the kernel's encoding) that @h
 * opens, as @pid sees it (its mountinfo, read through the /proc directory
 * @procfd; the caller has made @pid's root its own).  Malloc'ed, or NULL
 * with @why set from @w.
 */
char *handle_path(int procfd, pid_t pid, struct file_handle *h, unsigned int sdev,
		  unsigned long ino, const struct handle_why *w, const char **why);

#endif
