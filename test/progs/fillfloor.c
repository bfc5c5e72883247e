/*
 * fillfloor FILE: the least work an eager restore of FILE can do, for
 * test/bench.sh's "fill" row: map fresh private anonymous memory of the
 * file's size and read() the file's bytes into it (1 MiB a call), then
 * exit.  Prints "filled N"; exit 1 on an error.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct stat st;
	size_t done = 0;
	char *mem;
	int fd;

	if (argc != 2) {
		outf(2, "usage: fillfloor FILE\n");
		return 64;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		outf(1, "fillfloor: %s: %s\n", argv[1], errname(errno));
		return 1;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		outf(1, "fillfloor: mmap: %s\n", errname(errno));
		return 1;
	}
	while (done < (size_t)st.st_size) {
		size_t want = (size_t)st.st_size - done;
		ssize_t n = read(fd, mem + done, want < (1 << 20) ? want : (1 << 20));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			outf(1, "fillfloor: read: %s\n", n ? errname(errno) : "EOF");
			return 1;
		}
		done += (size_t)n;
	}
	outf(1, "filled %zu\n", done);
	return 0;
}
