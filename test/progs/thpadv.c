// SPDX-License-Identifier: GPL-2.0
/*
 * thpadv: PR_SET_THP_DISABLE with PR_THP_DISABLE_EXCEPT_ADVISED (Linux
 * 6.18+) and one MADV_HUGEPAGE region; after a restore (SIGUSR1) it checks
 * that PR_GET_THP_DISABLE still says "disabled except where advised" and
 * its data, and prints "after OK" or "after BAD ...".
 * Prints "unsupported" and exits 3 on kernels without the flag.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif
#define LEN (4 << 20)

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(void)
{
	unsigned char *p;
	int r, i;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (prctl(PR_SET_THP_DISABLE, 1, PR_THP_DISABLE_EXCEPT_ADVISED, 0, 0)) {
		printf("unsupported %s\n", strerror(errno));
		return 3;
	}
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, LEN, MADV_HUGEPAGE))
		return 2;
	for (i = 0; i < LEN; i += 4096)
		p[i] = (unsigned char)(i >> 12);
	signal(SIGUSR1, on_usr1);
	printf("ready %d %p\n", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), (void *)p);
	while (!go)
		pause();
	r = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	for (i = 0; i < LEN; i += 4096)
		if (p[i] != (unsigned char)(i >> 12))
			break;
	if (r != (1 | PR_THP_DISABLE_EXCEPT_ADVISED) || i < LEN)
		printf("after BAD PR_GET_THP_DISABLE %d, data %s\n", r, i < LEN ? "wrong" : "ok");
	else
		printf("after OK %d\n", r);
	return 0;
}
