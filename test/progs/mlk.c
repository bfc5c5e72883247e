/*
 * mlk: the subject of t_mlock.  Static.
 *
 * mlk parts   regions of anonymous memory, each page with its own pattern:
 *               part      8 pages, pages 2-5 mlock()ed (a split VMA: the
 *                         locked middle "partlo", the unlocked ends)
 *               onfault   8 pages, mlock2(MLOCK_ONFAULT), pages 0-1 written
 *                         (the others must stay absent: mincore)
 *               maplocked 4 pages, mmap(MAP_LOCKED)
 *               seq       4 pages, MADV_SEQUENTIAL
 *               rand      4 pages, MADV_RANDOM
 *               merge     4 pages, MADV_MERGEABLE (KSM)
 * mlk all     a 2-page PROT_NONE region (a guard page: locked, never
 *             populated), mlockall(MCL_CURRENT | MCL_FUTURE), then a
 *             4-page region (locked by MCL_FUTURE), all written
 * mlk allof   mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT), then a
 *             4-page region of which pages 0-1 are written
 * mlk over    64 pages mlock()ed, then RLIMIT_MEMLOCK lowered to 64 KiB
 *             (soft and hard): more locked than the limit allows
 * mlk lock    the same without lowering the limit
 * mlk mergeany
 *             prctl(PR_SET_MEMORY_MERGE, 1): KSM for the whole process,
 *             which the dump refuses; prints "mergeany unsupported" and
 *             "ready -" and exits 3 on a kernel without it (before 6.4)
 *
 * Each checks once before the dump ("precheck ok") and again on SIGUSR2
 * ("check ok pid=PID", exit 0; else "BAD what" lines, exit 1): every
 * region's data; the VmFlags lo, sr, rr, mg of each region in
 * /proc/self/smaps; which pages are present (mincore); VmLck in
 * /proc/self/status as it was before the dump.  all/allof also map 4 new
 * pages (then unmap them): MCL_FUTURE must lock them ("lo", VmLck 16 kB
 * more), populated for all, not for allof.  Prints "region NAME ADDR",
 * "vmlck KB" and "ready PID" in between, then sleeps in 20 ms nanosleeps.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define COMMON_VMFLAGS
#include "common.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

#define PG 4096UL

enum { F_LO = 1, F_SR = 2, F_RR = 4, F_MG = 8 };
static const char *const fnames[] = { "lo", "sr", "rr", "mg" };
#define NF (sizeof(fnames) / sizeof(fnames[0]))

struct region {
	const char *name;
	unsigned char *p;
	size_t np;		/* pages */
	unsigned int flags;	/* expected VmFlags among fnames[] */
	unsigned long present;	/* bit n: page n present (and written) */
};

#define NREG 10
static struct region regions[NREG];
static int nreg;
static const char *mode;
static long vmlck_before;
static volatile sig_atomic_t check_req;
static int bad;

static void on_usr2(int sig)
{
	(void)sig;
	check_req = 1;
}

static void die(const char *what)
{
	say("mlk: setup: %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned char pat(int r, size_t pg, size_t i)
{
	return (unsigned char)(0x11 * (r + 1) + pg * 7 + (i & 0x3f));
}

static void add(const char *name, void *p, size_t np, unsigned int flags,
		unsigned long present)
{
	struct region *g = &regions[nreg];

	g->name = name;
	g->p = p;
	g->np = np;
	g->flags = flags;
	g->present = present;
	for (size_t pg = 0; pg < np; pg++)
		if (present & (1UL << pg))
			for (size_t i = 0; i < PG; i++)
				g->p[pg * PG + i] = pat(nreg, pg, i);
	say("region %s %p\n", name, p);
	nreg++;
}

static void *map(size_t np, int extra)
{
	void *p = mmap(NULL, np * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void bad_say(const char *fmt, const char *name, long a, long b)
{
	char buf[200];

	snprintf(buf, sizeof(buf), fmt, a, b);
	say("BAD %s: %s\n", name, buf);
	bad = 1;
}

/* The VmFlags (F_*) of the mapping holding @addr, or -1. */
static int vmflags(unsigned long addr)
{
	return smaps_vmflags(addr, fnames, NF);
}

/* VmLck of /proc/self/status in kB, or -1. */
static long vmlck(void)
{
	char buf[4096], *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "VmLck:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static unsigned long resident(void *p, size_t np)
{
	unsigned char v[64];
	unsigned long m = 0;

	if (mincore(p, np * PG, v))
		return ~0UL;
	for (size_t i = 0; i < np; i++)
		if (v[i] & 1)
			m |= 1UL << i;
	return m;
}

/* MCL_FUTURE: a new mapping is locked, populated unless MCL_ONFAULT. */
static void check_future(void)
{
	long before = vmlck(), after;
	unsigned char *p = map(4, 0);
	unsigned long want = strcmp(mode, "allof") ? 0xf : 0, got;
	int f = vmflags((unsigned long)p);

	if (f < 0 || !(f & F_LO))
		bad_say("VmFlags %#lx%.0ld, want lo", "future", f, 0);
	got = resident(p, 4);
	if (got != want)
		bad_say("pages present %#lx, want %#lx", "future", (long)got, (long)want);
	after = vmlck();
	if (after != before + 16)
		bad_say("VmLck %ld kB after mapping 16 kB more, was %ld", "future",
			after, before);
	munmap(p, 4 * PG);
}

static void check_all(const char *when)
{
	long lck;

	bad = 0;
	for (int r = 0; r < nreg; r++) {
		struct region *g = &regions[r];
		unsigned long got;
		int f;

		for (size_t pg = 0; pg < g->np; pg++) {
			if (!(g->present & (1UL << pg)))
				continue;
			for (size_t i = 0; i < PG; i++)
				if (g->p[pg * PG + i] != pat(r, pg, i)) {
					bad_say("data wrong in page %ld at %ld",
						g->name, (long)pg, (long)i);
					break;
				}
		}
		f = vmflags((unsigned long)g->p);
		if (f != (int)g->flags)
			bad_say("VmFlags %#lx, want %#lx (lo 1 sr 2 rr 4 mg 8)",
				g->name, f, g->flags);
		/* locked, or written: exactly the written pages are there */
		got = resident(g->p, g->np);
		if (g->flags & F_LO && got != g->present)
			bad_say("pages present %#lx, want %#lx", g->name,
				(long)got, (long)g->present);
	}
	lck = vmlck();
	if (vmlck_before && lck != vmlck_before)
		bad_say("VmLck %ld kB, was %ld kB before the dump", "status",
			lck, vmlck_before);
	if (!strcmp(mode, "all") || !strcmp(mode, "allof"))
		check_future();
	if (!bad)
		say("%s ok pid=%d\n", when, getpid());
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	unsigned char *p;

	if (argc < 2)
		return 2;
	mode = argv[1];
	if (!strcmp(mode, "parts")) {
		p = map(8, 0);
		add("partlo", p + 2 * PG, 4, F_LO, 0xf);
		add("parthead", p, 2, 0, 0x3);
		add("parttail", p + 6 * PG, 2, 0, 0x3);
		if (mlock(p + 2 * PG, 4 * PG))
			die("mlock");
		p = map(8, 0);
		if (syscall(SYS_mlock2, p, 8 * PG, MLOCK_ONFAULT))
			die("mlock2 MLOCK_ONFAULT");
		add("onfault", p, 8, F_LO, 0x3);
		add("maplocked", map(4, MAP_LOCKED), 4, F_LO, 0xf);
		p = map(4, 0);
		if (madvise(p, 4 * PG, MADV_SEQUENTIAL))
			die("MADV_SEQUENTIAL");
		add("seq", p, 4, F_SR, 0xf);
		p = map(4, 0);
		if (madvise(p, 4 * PG, MADV_RANDOM))
			die("MADV_RANDOM");
		add("rand", p, 4, F_RR, 0xf);
		p = map(4, 0);
		if (madvise(p, 4 * PG, MADV_MERGEABLE))
			die("MADV_MERGEABLE");
		add("merge", p, 4, F_MG, 0xf);
	} else if (!strcmp(mode, "all") || !strcmp(mode, "allof")) {
		int of = !strcmp(mode, "allof");

		/* inaccessible: locked, never populated (a guard page) */
		void *none = mmap(NULL, 2 * PG, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (none == MAP_FAILED)
			die("mmap PROT_NONE");
		if (mlockall(MCL_CURRENT | MCL_FUTURE | (of ? MCL_ONFAULT : 0)))
			die("mlockall");
		add("none", none, 2, F_LO, 0);
		add("future", map(4, 0), 4, F_LO, of ? 0x3 : 0xf);
	} else if (!strcmp(mode, "over") || !strcmp(mode, "lock")) {
		struct rlimit rl = { 64 << 10, 64 << 10 };

		p = map(64, 0);
		if (mlock(p, 64 * PG))
			die("mlock 256 KiB");
		add("over", p, 4, F_LO, 0xf);
		if (!strcmp(mode, "over") && setrlimit(RLIMIT_MEMLOCK, &rl))
			die("setrlimit");
	} else if (!strcmp(mode, "mergeany")) {
		if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0)) {
			if (errno != EINVAL)
				die("PR_SET_MEMORY_MERGE");
			say("mergeany unsupported\nready -\n");
			return 3;
		}
		add("mergeany", map(4, 0), 4, F_MG, 0xf);
	} else {
		return 2;
	}
	sigaction(SIGUSR2, &sa, NULL);
	check_all("precheck");
	if (bad)
		return 1;
	vmlck_before = vmlck();
	say("vmlck %ld\n", vmlck_before);
	say("ready %d\n", getpid());
	while (!check_req)
		msleep(20);
	check_all("check");
	return bad;
}
