/*
 * manymaps NMAPS NRUNS: a process whose dump has many mappings and many
 * runs of pages.  It maps NRUNS * 2 pages and writes every other one (NRUNS
 * runs of one page, each its own PT_LOAD), then, below it, NMAPS one-page
 * mappings that cannot merge (alternating protections), prints "ready PID"
 * and stops itself.  Reading its /proc/PID/dump once cost runs x mappings
 * steps in the kernel (issue 25); the test times it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long nmaps = argc > 2 ? atol(argv[1]) : 0, nruns = argc > 2 ? atol(argv[2]) : 0;
	long pg = sysconf(_SC_PAGESIZE), i;
	char *big;

	if (nmaps < 1 || nruns < 1) {
		fprintf(stderr, "usage: manymaps NMAPS NRUNS\n");
		return 2;
	}
	/* first, so that it lies above the small ones (mmap goes top-down) */
	big = mmap(NULL, nruns * 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < nruns; i++)
		big[i * 2 * pg] = 1;
	for (i = 0; i < nmaps; i++)
		if (mmap(NULL, pg, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) {
			perror("mmap small");
			return 1;
		}
	printf("ready %d\n", getpid());
	fflush(stdout);
	raise(SIGSTOP);
	/* after a restore: the pages are still there */
	for (i = 0; i < nruns; i++)
		if (big[i * 2 * pg] != 1 || big[i * 2 * pg + pg] != 0) {
			printf("page %ld wrong\n", i);
			return 1;
		}
	printf("ok\n");
	return 0;
}
