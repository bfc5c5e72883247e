// SPDX-License-Identifier: GPL-2.0
/* Small helpers for reading /proc and writing whole files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

int dir_open(int dirfd, const char *name, int flags)
{
	return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int img_create_at(int dirfd, const char *name, mode_t mode)
{
	if (unlinkat(dirfd, name, 0) && errno != ENOENT)
		return -1;
	return openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

int img_create(const char *path, mode_t mode)
{
	return img_create_at(AT_FDCWD, path, mode);
}

FILE *img_fcreate(const char *path)
{
	int fd = img_create(path, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (fd >= 0 && !f)
		close(fd);
	return f;
}

int abs_path_ok(const char *p)
{
	const char *c, *e;

	if (p[0] != '/' || strchr(p, '\n'))
		return 0;
	if (!p[1])
		return 1;
	for (c = p + 1;; c = e + 1) {
		e = strchrnul(c, '/');
		if (e == c || (e - c == 1 && c[0] == '.') || (e - c == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (!*e)
			return 1;
	}
}

int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r, e;

	if (fd < 0)
		return -1;
	r = write_all(fd, text, strlen(text));
	e = errno;
	close(fd);
	errno = e;
	return r;
}

int wait_child(pid_t pid, int *st)
{
	while (waitpid(pid, st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

char *read_text(const char *path, size_t *len)
{
	return read_text_at(AT_FDCWD, path, len);
}

char *read_text_dir(int dirfd, const char *name, size_t *len)
{
	int fd = dir_open(dirfd, name, O_RDONLY);

	if (fd < 0)
		return NULL;
	return read_text_fd(fd, len);
}

char *read_text_at(int dirfd, const char *path, size_t *len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	return read_text_fd(fd, len);
}

char *read_text_fd(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

const char *status_field(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			p += kl + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgid, pid_t *sid)
{
	char path[64], *s, *p;
	int r = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	s = read_text(path, NULL);
	if (!s)
		return -1;
	p = strrchr(s, ')');
	if (p && sscanf(p + 1, " %c %d %d %d", state, ppid, pgid, sid) == 4)
		r = 0;
	free(s);
	return r;
}

/* A /proc entry's name as a number > 0, or 0 (not a process, ".", "self"...). */
static int name_number(const char *name)
{
	char *end;
	long v;

	if (*name < '1' || *name > '9')
		return 0;
	v = strtol(name, &end, 10);
	return *end || v > 0x7fffffff ? 0 : (int)v;
}

int proc_each_process(int (*fn)(pid_t pid, void *arg), void *arg)
{
	struct dirent *e;
	int ret = 0;
	pid_t pid;
	DIR *d;

	d = opendir("/proc");
	if (!d) {
		pr_perror("cannot read /proc");
		return -1;
	}
	while (!ret && (e = readdir(d))) {
		pid = name_number(e->d_name);
		if (pid > 0 && pid != getpid())
			ret = fn(pid, arg);
	}
	closedir(d);
	return ret;
}

int proc_each_fd(pid_t pid, int (*fn)(pid_t pid, int fd, void *arg), void *arg)
{
	char path[64];
	struct dirent *e;
	int ret = 0, fd;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;	/* gone, or not ours to look at */
	while (!ret && (e = readdir(d))) {
		fd = name_number(e->d_name);
		if (fd > 0 || !strcmp(e->d_name, "0"))
			ret = fn(pid, fd, arg);
	}
	closedir(d);
	return ret;
}

void pr_dump_open_error(pid_t pid, const char *path)
{
	int e = errno, fd, n = 0;
	char why[300];

	fd = open("/proc/imgcr_refusal", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, why, sizeof(why) - 1);
		close(fd);
	}
	while (n > 0 && why[n - 1] == '\n')
		n--;
	if (n > 0) {
		why[n] = 0;
		pr_err("pid %d: cannot open %s: %s: %s", pid, path, strerror(e), why);
	} else {
		pr_err("pid %d: cannot open %s: %s", pid, path, strerror(e));
	}
	errno = e;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= w;
	}
	return 0;
}

int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!r)
				errno = EIO;
			return -1;
		}
		p += r;
		len -= r;
	}
	return 0;
}
