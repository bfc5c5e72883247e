/*
 * mapdel FILE private|shared: map the first two pages of FILE (MAP_PRIVATE
 * or MAP_SHARED), write one byte into the mapping, close the fd, print
 * "ready SUM", then print "tick N SUM" every ~100 ms forever, SUM being a
 * checksum of the mapping's bytes (it must never change).  t_deleted unlinks
 * FILE while this runs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "common.h"

static uint64_t sum(const unsigned char *p, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s = s * 131 + p[i];
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "private") && strcmp(argv[2], "shared"))) {
		outf(2, "usage: mapdel FILE private|shared\n");
		return 64;
	}
	int fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		say("open %s: %s\n", argv[1], errname(errno));
		return 1;
	}
	int flags = argv[2][0] == 'p' ? MAP_PRIVATE : MAP_SHARED;
	unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (m == MAP_FAILED) {
		say("mmap: %s\n", errname(errno));
		return 1;
	}
	close(fd);
	m[100] ^= 0x5a;
	uint64_t s0 = sum(m, 8192);
	say("ready %llu\n", (unsigned long long)s0);
	for (int n = 1;; n++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		say("tick %d %llu\n", n, (unsigned long long)sum(m, 8192));
	}
}
