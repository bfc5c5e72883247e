/*
 * shmfill MIB: map MIB MiB of shared anonymous memory (MAP_SHARED |
 * MAP_ANONYMOUS: a shmem object), write every page, print "ready", then
 * wait.  Its dump pins the object's pages and holds the object's file
 * (t_dump_pins: both are let go with the process).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "common.h"

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 0) << 20, i;
	char *p;

	if (!len)
		return 2;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (i = 0; i < len; i += 4096)
		p[i] = (char)(i >> 12 | 1);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
