/*
 * transform [CHUNK] [MS]: copy stdin to stdout upper-casing letters and
 * turning spaces into '_', CHUNK bytes (default 16) every MS milliseconds
 * (default 20): slower than the producer, so the pipe before it fills up.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

int main(int argc, char **argv)
{
	int chunk = argc > 1 ? atoi(argv[1]) : 16;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	char buf[4096];

	if (chunk < 1 || chunk > (int)sizeof(buf))
		return 2;
	for (;;) {
		ssize_t n = read(0, buf, chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0;
		for (ssize_t i = 0; i < n; i++)
			buf[i] = buf[i] == ' ' ? '_' : toupper((unsigned char)buf[i]);
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(1, buf + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return 1;
			off += w;
		}
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 }, rem;

		while (nanosleep(&ts, &rem) && errno == EINTR)
			ts = rem;
	}
}
