// SPDX-License-Identifier: GPL-2.0
/*
 * Messages (log.h).  Without -o every message at or below the verbosity
 * goes to stderr, as "imgcr: ...".  With -o FILE they go to FILE instead,
 * each with the seconds since imgcr started, like CRIU's log; errors go
 * to stderr as well, so that a failure is never silent on the terminal.
 * One write() per line: the restore's processes share the file.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int level = LOG_INFO;
static int file_fd = -1;
static struct timespec start;

void log_set_level(int l)
{
	level = l;
}

int log_get_level(void)
{
	return level;
}

int log_fd(void)
{
	return file_fd;
}

void log_set_fd(int fd)
{
	file_fd = fd;
}

int log_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		pr_perror("cannot open the log file %s", path);
		return -1;
	}
	if (file_fd >= 0)
		close(file_fd);
	file_fd = fd;
	return 0;
}

int log_to_tty(void)
{
	return file_fd < 0 && isatty(2);
}

int log_option(int opt, const char *arg)
{
	char *end;
	long v;

	if (opt == 'o')
		return log_open(arg) ? -1 : 1;
	if (opt != 'v')
		return 0;
	/* CRIU: -v alone is one more, -vN or -v N or --verbosity=N sets */
	if (!arg) {
		level++;
		return 1;
	}
	v = strtol(arg, &end, 10);
	if (end == arg || *end || v < 0) {
		pr_err("-v/--verbosity needs a level (0 errors, 1 warnings, 2 notes, 3 and more debug)");
		return -1;
	}
	level = v > 100 ? 100 : v;
	return 1;
}

static void write_line(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

void log_print(int l, const char *fmt, ...)
{
	char buf[8192];
	int e = errno, n, off = 0;
	va_list ap;

	if (l > level)
		return;
	if (!start.tv_sec)
		clock_gettime(CLOCK_MONOTONIC, &start);
	if (file_fd >= 0) {
		struct timespec now;
		long long us;

		clock_gettime(CLOCK_MONOTONIC, &now);
		us = (now.tv_sec - start.tv_sec) * 1000000LL + (now.tv_nsec - start.tv_nsec) / 1000;
		off = snprintf(buf, sizeof(buf), "(%3lld.%06lld) ", us / 1000000, us % 1000000);
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + off, sizeof(buf) - off - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(buf) - off - 2)
		n = sizeof(buf) - off - 2;
	n += off;
	buf[n++] = '\n';
	fflush(stderr);		/* anything printed with stdio first */
	if (file_fd >= 0) {
		write_line(file_fd, buf, n);
		if (l <= LOG_ERROR)
			write_line(2, buf + off, n - off);
	} else {
		write_line(2, buf, n);
	}
	errno = e;
}

long long log_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}
