/*
 * bbmem: memory state that must survive imgcr dump + restore (hold-out
 * tests of issue 10, test/guest/memory/t_bb_mem.sh).
 *
 *   bbmem madv   regions with MADV_WIPEONFORK, MADV_DONTFORK, MADV_HUGEPAGE,
 *                MADV_NOHUGEPAGE, MADV_DONTDUMP (and MAP_DROPPABLE where the
 *                kernel has it) and a plain one, each filled with its own
 *                byte.  Prints "ready PID plain=ADDR wf=ADDR dc=ADDR hg=ADDR
 *                nh=ADDR dd=ADDR dp=ADDR|none" and waits for SIGUSR1; then
 *                checks every region's contents, forks, and the child checks
 *                that wipe-on-fork memory reads zeros and don't-fork memory
 *                is not mapped while the others are inherited.
 *   bbmem cow MB a private anonymous mapping of MB MiB filled by the parent
 *                and shared copy-on-write with a child it forks; the child
 *                rewrites the first eighth.  Both print "ready PID" and wait
 *                for SIGUSR1.  The child then checks its view, rewrites the
 *                second eighth, checks again and exits with the number of
 *                failures ("child done"); the parent, on its SIGUSR1, reaps
 *                the child and checks that none of the child's writes (before
 *                or after the restore) shows in its own memory.
 *   bbmem cowmix a parent with a plain region (data A), a wipe-on-fork region
 *                (data W) and a don't-dump region (data D), 1 MiB each, forks
 *                a child with two threads; the child rewrites the first
 *                quarter of the plain region and fills its (zeroed)
 *                wipe-on-fork region with X.  Both print "ready PID" and
 *                wait for SIGUSR1: each checks its three regions, forks,
 *                and the grandchild must see the plain and don't-dump data
 *                and zeros in the wipe-on-fork region.  The child exits
 *                with its failures ("child done"); the parent reaps it.
 * Every check prints "ok NAME" or "FAIL NAME: ..."; the last line is
 * "bbmem PASS" (exit 0) or "bbmem FAIL N" (exit 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#define COMMON_TALLY
#include "common.h"

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

static void die(const char *what)
{
	setup_die("bbmem", what);
}

static void wait_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwaitinfo(&set, NULL) != SIGUSR1)
		;
}

/* the first offset in [p, p+len) that is not byte b, or -1 */
static long differs(const unsigned char *p, size_t len, unsigned char b)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != b)
			return (long)i;
	return -1;
}

static int finish(void)
{
	return tally_end("bbmem");
}

#define RLEN (16 * 4096UL)
#define HLEN (4UL << 20)

static unsigned char *anon(size_t len, int extra)
{
	/* MAP_DROPPABLE is a mapping type of its own, instead of MAP_PRIVATE */
	int type = extra ? extra : MAP_PRIVATE;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, type | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int madv_main(void)
{
	unsigned char *plain, *wf, *dc, *hg, *nh, *dd, *dp, *hraw;

	plain = anon(RLEN, 0);
	wf = anon(RLEN, 0);
	dc = anon(RLEN, 0);
	nh = anon(RLEN, 0);
	dd = anon(RLEN, 0);
	hraw = anon(HLEN + (2UL << 20), 0);
	if (!plain || !wf || !dc || !nh || !dd || !hraw)
		die("mmap");
	/* a 2 MiB aligned 4 MiB region in the middle of hraw: trim the rest */
	hg = (unsigned char *)(((uintptr_t)hraw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	if (hg > hraw)
		munmap(hraw, (size_t)(hg - hraw));
	if (hraw + HLEN + (2UL << 20) > hg + HLEN)
		munmap(hg + HLEN, (size_t)(hraw + HLEN + (2UL << 20) - (hg + HLEN)));
	if (madvise(wf, RLEN, MADV_WIPEONFORK) || madvise(dc, RLEN, MADV_DONTFORK) ||
	    madvise(hg, HLEN, MADV_HUGEPAGE) || madvise(nh, RLEN, MADV_NOHUGEPAGE) ||
	    madvise(dd, RLEN, MADV_DONTDUMP))
		die("madvise");
	dp = anon(RLEN, MAP_DROPPABLE);	/* 6.11+; EINVAL before */
	memset(plain, 0x11, RLEN);
	memset(wf, 0x22, RLEN);
	memset(dc, 0x33, RLEN);
	memset(hg, 0x44, HLEN);
	memset(nh, 0x55, RLEN);
	memset(dd, 0x66, RLEN);
	if (dp)
		memset(dp, 0x77, RLEN);
	char dps[32] = "none";
	if (dp)
		snprintf(dps, sizeof(dps), "%lx", (unsigned long)dp);
	say("ready %d plain=%lx wf=%lx dc=%lx hg=%lx nh=%lx dd=%lx dp=%s\n", getpid(),
	    (unsigned long)plain, (unsigned long)wf, (unsigned long)dc, (unsigned long)hg,
	    (unsigned long)nh, (unsigned long)dd, dps);
	wait_usr1();
	say("checking\n");

	static const struct { const char *n; unsigned char b; } r[] = {
		{ "plain", 0x11 }, { "wipeonfork", 0x22 }, { "dontfork", 0x33 },
		{ "hugepage", 0x44 }, { "nohugepage", 0x55 }, { "dontdump", 0x66 },
	};
	unsigned char *ra[] = { plain, wf, dc, hg, nh, dd };
	size_t rl[] = { RLEN, RLEN, RLEN, HLEN, RLEN, RLEN };
	for (int i = 0; i < 6; i++) {
		long o = differs(ra[i], rl[i], r[i].b);
		tally(o < 0, "%s-data: filled with %#x, byte %ld reads %#x", r[i].n, r[i].b, o,
		      o < 0 ? 0 : ra[i][o]);
	}
	if (dp) {
		/* droppable pages may be gone (zero) but never other data */
		int bad = 0;
		for (size_t i = 0; i < RLEN; i++)
			if (dp[i] != 0x77 && dp[i] != 0)
				bad = 1;
		tally(!bad, "droppable-data: bytes are 0x77 or dropped (0)");
	}

	pid_t c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		nfail = 0;
		long o = differs(wf, RLEN, 0);
		tally(o < 0, "fork-wipeonfork: the child reads zeros, byte %ld reads %#x", o,
		      o < 0 ? 0 : wf[o]);
		unsigned char v;
		errno = 0;
		int m = mincore(dc, 4096, &v);
		tally(m < 0 && errno == ENOMEM, "fork-dontfork: not mapped in the child (mincore %d errno %d)",
		      m, errno);
		for (int i = 0; i < 6; i++) {
			if (i == 1 || i == 2)
				continue;
			o = differs(ra[i], rl[i], r[i].b);
			tally(o < 0, "fork-%s: inherited, byte %ld", r[i].n, o);
		}
		_exit(nfail);
	}
	int st = 0;
	waitpid(c, &st, 0);
	tally(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork-child: status %#x", st);
	/* the parent's wipe-on-fork memory is still its own */
	long o = differs(wf, RLEN, 0x22);
	tally(o < 0, "wipeonfork-parent-after-fork: byte %ld", o);
	return finish();
}

static unsigned char pat(size_t page, char gen)
{
	return (unsigned char)((page * 7) ^ (unsigned char)gen);
}

static int verify(const char *who, unsigned char *m, size_t len, size_t b_end, size_t c_end)
{
	size_t pages = len / 4096;
	int bad = 0;

	for (size_t pg = 0; pg < pages && bad < 3; pg++) {
		char gen = pg * 4096 < b_end ? 'B' : pg * 4096 < c_end ? 'C' : 'A';
		long o = differs(m + pg * 4096, 4096, pat(pg, gen));
		if (o >= 0) {
			tally(0, "%s-page%zu: want generation %c, byte %ld reads %#x", who, pg, gen, o,
			      m[pg * 4096 + o]);
			bad++;
		}
	}
	if (!bad)
		tally(1, "%s-contents", who);
	return bad;
}

static int cow_main(size_t mb)
{
	size_t len = mb << 20, pages = len / 4096;
	unsigned char *m = anon(len, 0);

	if (!m)
		die("mmap");
	for (size_t pg = 0; pg < pages; pg++)
		memset(m + pg * 4096, pat(pg, 'A'), 4096);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		for (size_t pg = 0; pg < pages / 8; pg++)
			memset(m + pg * 4096, pat(pg, 'B'), 4096);
		say("ready %d child\n", getpid());
		wait_usr1();
		verify("child-before-write", m, len, len / 8, 0);
		for (size_t pg = pages / 8; pg < pages / 4; pg++)
			memset(m + pg * 4096, pat(pg, 'C'), 4096);
		verify("child-after-write", m, len, len / 8, len / 4);
		say("child done\n");
		_exit(nfail);
	}
	say("ready %d parent child=%d\n", getpid(), c);
	wait_usr1();
	int st = 0;
	tally(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "child-status: %#x", st);
	verify("parent", m, len, 0, 0);
	return finish();
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

#define MLEN (1UL << 20)

static void cowmix_check(const char *who, unsigned char *pl, unsigned char *wf, unsigned char *dd,
			 int child)
{
	char n[64];
	long o;

	for (size_t pg = 0; pg < MLEN / 4096; pg++) {
		char gen = child && pg < MLEN / 4096 / 4 ? 'B' : 'A';
		o = differs(pl + pg * 4096, 4096, pat(pg, gen));
		if (o >= 0) {
			tally(0, "%s-plain-page%zu: want %c, byte %ld reads %#x", who, pg, gen, o,
			      pl[pg * 4096 + o]);
			break;
		}
	}
	snprintf(n, sizeof(n), "%s-plain", who);
	say("checked %s\n", n);
	o = differs(wf, MLEN, child ? 'X' : 'W');
	tally(o < 0, "%s-wipeonfork: want %c, byte %ld reads %#x", who, child ? 'X' : 'W', o,
	      o < 0 ? 0 : wf[o]);
	o = differs(dd, MLEN, 'D');
	tally(o < 0, "%s-dontdump: byte %ld reads %#x", who, o, o < 0 ? 0 : dd[o]);
	pid_t g = fork();
	if (g == 0) {
		nfail = 0;
		o = differs(wf, MLEN, 0);
		tally(o < 0, "%s-fork-wipeonfork-zero: byte %ld reads %#x", who, o, o < 0 ? 0 : wf[o]);
		o = differs(dd, MLEN, 'D');
		tally(o < 0, "%s-fork-dontdump: byte %ld", who, o);
		o = differs(pl + MLEN / 2, 4096, pat(MLEN / 2 / 4096, 'A'));
		tally(o < 0, "%s-fork-plain: byte %ld", who, o);
		_exit(nfail);
	}
	int st = 0;
	waitpid(g, &st, 0);
	tally(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s-fork: status %#x", who, st);
}

static int cowmix_main(void)
{
	unsigned char *pl = anon(MLEN, 0), *wf = anon(MLEN, 0), *dd = anon(MLEN, 0);
	sigset_t set;

	if (!pl || !wf || !dd)
		die("mmap");
	if (madvise(wf, MLEN, MADV_WIPEONFORK) || madvise(dd, MLEN, MADV_DONTDUMP))
		die("madvise");
	for (size_t pg = 0; pg < MLEN / 4096; pg++)
		memset(pl + pg * 4096, pat(pg, 'A'), 4096);
	memset(wf, 'W', MLEN);
	memset(dd, 'D', MLEN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		pthread_t t;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t, NULL, idle, NULL))
				die("pthread_create");
		for (size_t pg = 0; pg < MLEN / 4096 / 4; pg++)
			memset(pl + pg * 4096, pat(pg, 'B'), 4096);
		memset(wf, 'X', MLEN);
		say("ready %d child\n", getpid());
		wait_usr1();
		cowmix_check("child", pl, wf, dd, 1);
		say("child done\n");
		_exit(nfail);
	}
	say("ready %d parent child=%d\n", getpid(), c);
	wait_usr1();
	int st = 0;
	tally(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "child-status: %#x", st);
	cowmix_check("parent", pl, wf, dd, 0);
	return finish();
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "cowmix"))
		return cowmix_main();
	if (argc >= 2 && !strcmp(argv[1], "madv")) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		return madv_main();
	}
	if (argc >= 3 && !strcmp(argv[1], "cow"))
		return cow_main((size_t)atoi(argv[2]));
	say("usage: bbmem madv | bbmem cow MB | bbmem cowmix\n");
	return 2;
}
