/*
 * holddump PID: open /proc/PID/dump, print "opened MS" (how long the open()
 * took, in ms), then wait for a line on stdin (at end of file: exit 0);
 * then read the dump and print "read ok BYTES" or "read ERRNO" (the errno
 * name), and exit 0.  What a holder of an open dump keeps: after its
 * process is gone, nothing (t_dump_pins); the open's cost (t_dump_scale).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>

#include "common.h"

int main(int argc, char **argv)
{
	char path[64], line[16], buf[65536];
	ssize_t n, total = 0;
	struct timespec t0, t1;
	int fd;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "/proc/%s/dump", argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(path, O_RDONLY);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (fd < 0) {
		printf("open %s\n", errname(errno));
		return 1;
	}
	printf("opened %ld\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 +
				      (t1.tv_nsec - t0.tv_nsec) / 1000000));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (n < 0)
		printf("read %s\n", errname(errno));
	else
		printf("read ok %zd\n", total);
	fflush(stdout);
	return 0;
}
