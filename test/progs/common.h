/* Small helpers shared by the imgcr test programs (static, single-file C11). */
#ifndef IMGCR_TEST_COMMON_H
#define IMGCR_TEST_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* "EBUSY" rather than "Device or resource busy": tests grep for names. */
static inline const char *errname(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

#endif
