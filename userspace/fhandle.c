// SPDX-License-Identifier: GPL-2.0
/*
 * Paths from file handles, for inotify watches and fanotify marks: each of
 * the task's mounts of the inode's device in turn opens the handle
 * (open_by_handle_at(): CAP_DAC_READ_SEARCH), and the path the kernel then
 * gives (/proc/self/fd) must lead to that very inode, device and number.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fhandle.h"
#include "proc.h"

struct file_handle *fdinfo_handle(const char *line)
{
	const char *hex = strstr(line, "f_handle:"), *b = strstr(line, "fhandle-bytes:");
	unsigned int bytes, type, i, x;
	struct file_handle *h;

	errno = EINVAL;
	if (!hex || !b || sscanf(b, "fhandle-bytes:%x fhandle-type:%x", &bytes, &type) != 2 ||
	    bytes > MAX_HANDLE_SZ)
		return NULL;
	h = calloc(1, sizeof(*h) + bytes);
	if (!h)
		return NULL;
	h->handle_bytes = bytes;
	h->handle_type = type;
	for (i = 0, hex += 9; i < bytes && sscanf(hex + 2 * i, "%2x", &x) == 1; i++)
		h->f_handle[i] = x;
	if (i < bytes) {
		free(h);
		errno = EINVAL;
		return NULL;
	}
	return h;
}

char *handle_path(int procfd, pid_t pid, struct file_handle *h, unsigned int sdev,
		  unsigned long ino, const struct handle_why *w, const char **why)
{
	char name[64], mnt[PATH_MAX], path[PATH_MAX + 1], *text, *line, *save = NULL, *out = NULL;
	unsigned int ma, mi;
	struct stat st, hst;
	int mfd, fd, seen = 0;
	ssize_t n;

	snprintf(name, sizeof(name), "%d/mountinfo", pid);
	text = read_text_at(procfd, name, NULL);
	*why = w->nomount;
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !out;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &ma, &mi, mnt) != 3 ||
		    ma != sdev >> 20 || mi != (sdev & 0xfffff))
			continue;
		seen = 1;
		mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* not O_PATH: handles refuse it */
		if (mfd < 0)
			continue;
		fd = open_by_handle_at(mfd, h, O_PATH | O_CLOEXEC);
		close(mfd);
		if (fd < 0) {
			*why = errno == EPERM ? "finding its path needs CAP_DAC_READ_SEARCH (open_by_handle_at): dump as root" :
				"cannot open its file handle (the file is gone, or its filesystem cannot open handles)";
			continue;
		}
		snprintf(name, sizeof(name), "self/fd/%d", fd);
		n = readlinkat(procfd, name, path, PATH_MAX);
		if (fstat(fd, &hst))
			n = -1;
		close(fd);
		if (n > 0)
			path[n] = 0;
		if (n > 0 && strstr(path, " (deleted)")) {
			*why = w->deleted;
			continue;
		}
		/* the path must lead to the very file the handle gave: device and inode */
		if (n <= 0 || path[0] != '/' || lstat(path, &st) ||
		    st.st_ino != ino || hst.st_ino != ino || st.st_dev != hst.st_dev) {
			*why = w->gone;
			continue;
		}
		out = strdup(path);
	}
	free(text);
	if (!seen)
		*why = w->nomount;
	return out;
}
