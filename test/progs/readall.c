/*
 * readall PATH [OUT]: open PATH, copy it to OUT (or discard it), and print
 * "ok bytes=N", "open failed: ENAME" or "read failed: ENAME" so that tests
 * can assert the exact errno of /proc/PID/dump.  Exit 0 / 2 / 3.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long long total = 0;
	int out = -1;

	if (argc < 2) {
		outf(2, "usage: readall PATH [OUT]\n");
		return 64;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		say("open failed: %s\n", errname(errno));
		return 2;
	}
	if (argc > 2 && (out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
		say("cannot create %s: %s\n", argv[2], errname(errno));
		return 4;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			say("read failed: %s after %lld bytes\n", errname(errno), total);
			return 3;
		}
		if (n == 0)
			break;
		if (out >= 0 && write(out, buf, (size_t)n) != n) {
			say("write failed: %s\n", errname(errno));
			return 4;
		}
		total += n;
	}
	say("ok bytes=%lld\n", total);
	return 0;
}
