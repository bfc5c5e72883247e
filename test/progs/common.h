/* Small helpers shared by the imgcr test programs (static, single-file C11). */
#ifndef IMGCR_TEST_COMMON_H
#define IMGCR_TEST_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * All output goes through one write(2) per line: stdio buffers would be part
 * of the dumped memory and a half-flushed buffer makes the "no gap, no
 * repeat" checks ambiguous.
 */
__attribute__((format(printf, 2, 3)))
static inline void outf(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (int off = 0; off < n;) {
		ssize_t w = write(fd, buf + off, (size_t)(n - off));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		off += (int)w;
	}
}

#define say(...) outf(1, __VA_ARGS__)

/*
 * The state letter of a /proc .../stat file ('T', 'S'...), or 0 if the
 * task is gone.  The comm field may contain spaces and ')': cut after the
 * last ')'.
 */
static inline char stat_state(const char *path)
{
	char buf[512];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : 0;
}

/* The state letter of /proc/PID/stat, or 0 if the task is gone. */
static inline char task_state(int pid)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	return stat_state(p);
}

/* The state letter of thread TID of PID, or 0 if it is gone. */
static inline char thread_state(int pid, int tid)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", pid, tid);
	return stat_state(p);
}

/*
 * snprintf at p, never past end - 1 (the NUL): for building a message
 * piece by piece.  Returns where the next piece goes.
 */
static inline char *addfmt(char *p, char *end, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p >= end - 1)
		return p;
	va_start(ap, fmt);
	n = vsnprintf(p, (size_t)(end - p), fmt, ap);
	va_end(ap);
	return n < 0 ? p : (p + n < end ? p + n : end - 1);
}

/* "EBUSY" rather than "Device or resource busy": tests grep for names. */
static inline const char *errname(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

/* Seconds on CLOCK_MONOTONIC. */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep @ms milliseconds, the rest of them again after a signal. */
static inline void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L }, rem;

	while (nanosleep(&ts, &rem) && errno == EINTR)
		ts = rem;
}

/* @path exists (stat succeeds). */
static inline int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/*
 * Poll every 20 ms until @path exists (e.g. "restored", which the tests
 * create after the restore).
 */
static inline void wait_file(const char *path)
{
	while (!exists(path))
		msleep(20);
}

#ifdef COMMON_VMFLAGS
/*
 * The VmFlags of the mapping holding @addr in /proc/self/smaps, as a bit
 * mask over @names (bit i: names[i], two letters each); -1 if not found.
 */
static int smaps_vmflags(unsigned long addr, const char *const *names, size_t nnames)
{
	static char buf[1 << 20];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	int in = 0;

	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long s, e;
		int out = 0;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = addr >= s && addr < e;
			continue;
		}
		if (!in || strncmp(line, "VmFlags:", 8))
			continue;
		for (char *t = line + 8; *t; t++) {
			if (*t == ' ')
				continue;
			for (size_t f = 0; f < nnames; f++)
				if (!strncmp(t, names[f], 2) && (t[2] == ' ' || !t[2]))
					out |= 1 << f;
			while (t[1] && t[1] != ' ')
				t++;
		}
		return out;
	}
	return -1;
}
#endif

#ifdef COMMON_TALLY
/*
 * For the hold-out programs (bb*.c), whose lines the tests grep: tally()
 * prints "ok WHAT" (the text up to its first ':') or "FAIL WHAT: ...";
 * tally_end() prints "PROG PASS" or "PROG FAIL N" and gives the exit
 * status; setup_die() reports a setup failure (exit 2).  Define
 * COMMON_TALLY before including.
 */
static int nfail;

__attribute__((format(printf, 2, 3)))
static void tally(int ok, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ok) {
		char *c = strchr(buf, ':');

		if (c)
			*c = 0;
		say("ok %s\n", buf);
	} else {
		say("FAIL %s\n", buf);
		nfail++;
	}
}

static void setup_die(const char *prog, const char *what)
{
	say("%s: setup: %s: %s\n", prog, what, strerror(errno));
	exit(2);
}

static int tally_end(const char *prog)
{
	if (nfail) {
		say("%s FAIL %d\n", prog, nfail);
		return 1;
	}
	say("%s PASS\n", prog);
	return 0;
}
#endif

#ifdef COMMON_MAP_INO
/*
 * map_ino(): the inode of a mapping, from /proc/self/maps.  Define
 * COMMON_MAP_INO before including.
 */
static unsigned long map_ino(void *addr)
{
	char buf[65536], *l;
	unsigned long start, ino;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY);

	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (sscanf(l, "%lx-%*x %*s %*x %*s %lu", &start, &ino) == 2 && start == (unsigned long)addr)
			return ino;
	return 0;
}
#endif

#ifdef COMMON_CHECK
/*
 * For the programs that report their checks one a line, as the tests grep
 * them: check() prints "ok WHAT: ..." or "BAD WHAT: ..."; bad is set by
 * any failed one (the exit status).  Define COMMON_CHECK before including.
 */
static int bad;

__attribute__((format(printf, 3, 4)))
static void check(int good, const char *what, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("%s %s: %s\n", good ? "ok" : "BAD", what, buf);
	bad |= !good;
}
#endif

#endif
