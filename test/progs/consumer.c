/*
 * consumer FILE N [CHUNK] [MS]: read stdin CHUNK bytes (default 16) every MS
 * milliseconds (default 30), append what it reads to FILE ("-": nowhere),
 * and check it against the stream "producer N | transform" must give.  At
 * EOF it writes "consumer ok BYTES SUM" (or "consumer BAD ...") to FILE and
 * stdout, and exits 0 if the whole stream arrived exactly once and in order.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static int n_lines;
static int line = 1;
static char expect[64];
static int epos, elen;

/* next byte of the expected stream, -1 at its end */
static int next_expected(void)
{
	if (epos == elen) {
		if (line > n_lines)
			return -1;
		elen = snprintf(expect, sizeof(expect), "line %d of %d\n", line++, n_lines);
		for (int i = 0; i < elen; i++)
			expect[i] = expect[i] == ' ' ? '_' : toupper((unsigned char)expect[i]);
		epos = 0;
	}
	return (unsigned char)expect[epos++];
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int out = strcmp(argv[1], "-") ? open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
	int chunk = argc > 3 ? atoi(argv[3]) : 16;
	long ms = argc > 4 ? atol(argv[4]) : 30;
	uint32_t sum = 2166136261u;
	uint64_t total = 0;
	int bad = 0;
	char buf[4096];

	n_lines = atoi(argv[2]);
	if (chunk < 1 || chunk > (int)sizeof(buf))
		return 2;
	for (;;) {
		ssize_t n = read(0, buf, chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			sum = (sum ^ (unsigned char)buf[i]) * 16777619u;
			if (next_expected() != (unsigned char)buf[i])
				bad = 1;
		}
		total += n;
		if (out >= 0)
			for (ssize_t off = 0; off < n;) {
				ssize_t w = write(out, buf + off, n - off);

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
	if (next_expected() != -1)
		bad = 1;
	if (out >= 0)
		outf(out, "consumer %s %llu %08x\n", bad ? "BAD" : "ok", (unsigned long long)total, sum);
	say("consumer %s %llu %08x\n", bad ? "BAD" : "ok", (unsigned long long)total, sum);
	return bad;
}
