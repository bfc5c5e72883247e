// SPDX-License-Identifier: GPL-2.0
/*
 * Messages (log.h).  Without -o every message at or below the verbosity
 * goes to stderr, as "imgcr: ...".  With -o FILE they go to FILE instead,
 * each with the seconds since imgcr started, like CRIU's log; errors go
 * to stderr as well, so that a failure is never silent on the terminal.
 * One write() per line: the restore's processes share the file.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static void progress_clear(void);
static int level = LOG_INFO;
static int file_fd = -1;
static struct timespec start;
static char first_err[1024];	/* log_first_error() */

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
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

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
	/* CRIU: -v alone is one more (-vvv three), -vN or --verbosity N sets */
	if (!arg || arg[strspn(arg, "v")] == 0) {
		level += 1 + (arg ? (int)strlen(arg) : 0);
		if (level > 100)
			level = 100;
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
	if (l == LOG_ERROR && !first_err[0])
		snprintf(first_err, sizeof(first_err), "%.*s", n, buf + off);
	n += off;
	buf[n++] = '\n';
	fflush(stderr);		/* anything printed with stdio first */
	progress_clear();	/* redrawn by the next update */
	if (file_fd >= 0) {
		write_line(file_fd, buf, n);
		if (l <= LOG_ERROR)
			write_line(2, buf + off, n - off);
	} else {
		write_line(2, buf, n);
	}
	errno = e;
}

const char *log_first_error(void)
{
	return first_err;
}

long long log_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/*
 * The progress line: on a terminal (stderr a tty, no -o), for a dump or
 * restore that has run for a second, redrawn at most every 200 ms as
 * "imgcr: dump: 123 MiB, 45 MiB/s, 3/10 tasks".  Drawn from the main code
 * (progress_update()) and, while one long ioctl writes an image, from a
 * SIGALRM handler that looks at the size of the file being written
 * (progress_watch()): only async-signal-safe calls here, no stdio.
 */
static struct {
	int on, drawn;
	const char *what;
	long long t0, last;
	long long after;		/* ms before the first draw */
	unsigned long long done, total;	/* bytes */
	int tasks, ntasks;
	int watch_fd;			/* the image being written, or -1 */
	unsigned long long watch_base;	/* done before it */
} pg = { .watch_fd = -1 };

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_num(char *p, unsigned long long v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = '0' + v % 10;
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* @v bytes as "12.3 MiB" */
static char *put_size(char *p, unsigned long long v)
{
	unsigned long long tenths = v * 10 / (1 << 20);

	p = put_num(p, tenths / 10);
	*p++ = '.';
	p = put_num(p, tenths % 10);
	return put_str(p, " MiB");
}

static void progress_draw(long long now)
{
	char buf[160], *p = buf;
	long long ms = now - pg.t0;

	p = put_str(p, "\rimgcr: ");
	p = put_str(p, pg.what);
	p = put_str(p, ": ");
	if (pg.done) {
		p = put_size(p, pg.done);
		p = put_str(p, ", ");
		p = put_size(p, ms > 0 ? pg.done * 1000 / ms : 0);
		p = put_str(p, "/s, ");
	} else if (pg.total) {	/* a restore: the kernel reads the images */
		p = put_size(p, pg.total);
		p = put_str(p, " of images, ");
	}
	p = put_num(p, pg.tasks);
	*p++ = '/';
	p = put_num(p, pg.ntasks);
	p = put_str(p, pg.done ? " tasks, " : " tasks ready, ");
	p = put_num(p, ms / 1000);
	p = put_str(p, " s\033[K");
	write_line(2, buf, p - buf);
	pg.drawn = 1;
	pg.last = now;
}

static void progress_maybe_draw(void)
{
	long long now = mono_ms();

	if (pg.on && now - pg.t0 >= pg.after && now - pg.last >= 200)
		progress_draw(now);
}

static void progress_clear(void)
{
	if (pg.drawn)
		write_line(2, "\r\033[K", 4);
	pg.drawn = 0;
}

void progress_begin(const char *what, int ntasks, unsigned long long total)
{
	/* the suite's test of the line sets 0: its small dumps take less */
	const char *after = getenv("IMGCR_PROGRESS_AFTER_MS");

	pg.on = log_to_tty();
	pg.after = after ? atoll(after) : 1000;
	pg.what = what;
	pg.t0 = mono_ms();
	pg.last = 0;
	pg.done = 0;
	pg.total = total;
	pg.tasks = 0;
	pg.ntasks = ntasks;
}

void progress_update(unsigned long long done, int tasks)
{
	pg.done = done;
	pg.tasks = tasks;
	progress_maybe_draw();
}

static void progress_alarm(int sig)
{
	struct stat st;
	int e = errno;

	(void)sig;
	if (pg.watch_fd >= 0 && !fstat(pg.watch_fd, &st))
		pg.done = pg.watch_base + st.st_blocks * 512ULL;
	progress_maybe_draw();
	errno = e;
}

void progress_watch(int fd)
{
	struct sigaction sa = { .sa_handler = progress_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 200000 }, { 0, 200000 } };

	if (!pg.on)
		return;
	if (fd < 0) {
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		signal(SIGALRM, SIG_DFL);
		pg.watch_fd = -1;
		return;
	}
	pg.watch_base = pg.done;
	pg.watch_fd = fd;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

void progress_end(void)
{
	if (pg.watch_fd >= 0)
		progress_watch(-1);
	progress_clear();
	pg.on = 0;
}

static void *oom_check(void *p)
{
	if (!p) {
		pr_err("out of memory");
		exit(1);
	}
	return p;
}

void *xmalloc(size_t n)
{
	return oom_check(malloc(n));
}

void *xrealloc(void *p, size_t n)
{
	return oom_check(realloc(p, n));
}

char *xstrdup(const char *s)
{
	return oom_check(strdup(s));
}
