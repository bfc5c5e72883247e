/*
 * madv: the subject of t_madvise.  Static.
 *
 * madv        sets up anonymous regions of 4 pages, each with its own byte
 *             pattern, under each advice (see regions[] below):
 *               plain  no advice; the first half of one 8-page mapping
 *               wf     MADV_WIPEONFORK: its second half (a split VMA)
 *               dc     MADV_DONTFORK
 *               hg     MADV_HUGEPAGE
 *               nh     MADV_NOHUGEPAGE
 *               dd     MADV_DONTDUMP
 *               ddro   MADV_DONTDUMP, then mprotect(PROT_READ)
 *               combo  MADV_WIPEONFORK + MADV_DONTDUMP + MADV_HUGEPAGE
 *               sdcdd  MAP_SHARED|MAP_ANONYMOUS, MADV_DONTFORK + MADV_DONTDUMP
 *               dp     MAP_DROPPABLE (only where the kernel has it)
 *             and checks, once before the dump ("precheck ok") and again on
 *             SIGUSR2 ("check ok pid=PID", exit 0; else "... BAD: what",
 *             exit 1): every region's pattern (dp: all zero on SIGUSR2,
 *             the image leaves droppable memory out); the smaps VmFlags wf, dc,
 *             hg, nh, dd, dp of each region are exactly the expected ones;
 *             and the behaviour: a forked child finds wipe-on-fork regions
 *             (wf, combo, dp) all zero, don't-fork regions (dc, sdcdd)
 *             unmapped, the others with their pattern, and the parent's
 *             wipe-on-fork regions keep their data.  Prints "droppable
 *             yes|no", "region NAME ADDR" lines and "ready PID" in between,
 *             then sleeps in 20 ms nanosleeps.
 * madv patch IN OUT MODE
 *             copies the image IN to OUT with NT_IMGCR_VMAS flags a loader
 *             must refuse: MODE unknown (bit 31 on the first anonymous
 *             mapping), wffile (IMGCR_VMA_WIPEONFORK on the first file
 *             mapping), hgnh (_HUGEPAGE and _NOHUGEPAGE), dpbad
 *             (_DROPPABLE alone), dpok (_DROPPABLE with _WIPEONFORK,
 *             _DONTDUMP, _NORESERVE: valid, refused by kernels without
 *             MAP_DROPPABLE), lof (_LOCKONFAULT without _LOCKED),
 *             seqrand (_SEQ_READ and _RAND_READ), mgshared (_MERGEABLE on
 *             the first shared file mapping), dplock (a valid droppable
 *             mapping, _LOCKED).  Exit 1 if the image has no such mapping.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_VMFLAGS
#include "common.h"
#include "../../include/uapi/linux/imgcr.h"

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

#define PG 4096UL
#define NP 4
#define LEN (NP * PG)

enum { F_WF = 1, F_DC = 2, F_HG = 4, F_NH = 8, F_DD = 16, F_DP = 32 };
static const char *const fnames[] = { "wf", "dc", "hg", "nh", "dd", "dp" };

/* What a forked child must see. */
enum { C_DATA, C_ZERO, C_ABSENT };

struct region {
	const char *name;
	unsigned int flags;	/* expected smaps VmFlags among fnames[] */
	int child;		/* C_* */
	unsigned char *p;
};

static struct region regions[] = {
	{ "plain", 0, C_DATA, NULL },
	{ "wf", F_WF, C_ZERO, NULL },
	{ "dc", F_DC, C_ABSENT, NULL },
	{ "hg", F_HG, C_DATA, NULL },
	{ "nh", F_NH, C_DATA, NULL },
	{ "dd", F_DD, C_DATA, NULL },
	{ "ddro", F_DD, C_DATA, NULL },
	{ "combo", F_WF | F_DD | F_HG, C_ZERO, NULL },
	{ "sdcdd", F_DC | F_DD, C_ABSENT, NULL },
	{ "dp", F_DP | F_WF | F_DD, C_ZERO, NULL },
};
#define NREG (sizeof(regions) / sizeof(regions[0]))

static int have_dp;
static volatile sig_atomic_t check_req;
static char bad[600];

static void bad_item(const char *fmt, ...)
{
	size_t l = strlen(bad);
	va_list ap;

	if (l + 2 >= sizeof(bad))
		return;
	if (l)
		bad[l++] = ' ';
	va_start(ap, fmt);
	vsnprintf(bad + l, sizeof(bad) - l, fmt, ap);
	va_end(ap);
}

static unsigned char pat(size_t r, size_t i)
{
	return (unsigned char)(r * 37 + 11 + i * 7 + (i >> 12));
}

static void die(const char *what)
{
	say("setup BAD: %s: %s\n", what, errname(errno));
	exit(1);
}

static void *map(int prot, int flags)
{
	void *p = mmap(NULL, LEN, prot, flags, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void advise(void *p, size_t len, int advice, const char *what)
{
	if (madvise(p, len, advice))
		die(what);
}

static void setup(void)
{
	int anon = MAP_PRIVATE | MAP_ANONYMOUS, rw = PROT_READ | PROT_WRITE;
	unsigned char *two = mmap(NULL, 2 * LEN, rw, anon, -1, 0);
	size_t r, i;

	if (two == MAP_FAILED)
		die("mmap");
	regions[0].p = two;
	regions[1].p = two + LEN;
	for (r = 2; r < NREG; r++) {
		if (!strcmp(regions[r].name, "sdcdd")) {
			regions[r].p = map(rw, MAP_SHARED | MAP_ANONYMOUS);
		} else if (!strcmp(regions[r].name, "dp")) {
			void *p = mmap(NULL, LEN, rw, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED) {
				if (errno != EINVAL && errno != EOPNOTSUPP)
					die("mmap MAP_DROPPABLE");
				continue;
			}
			have_dp = 1;
			regions[r].p = p;
		} else {
			regions[r].p = map(rw, anon);
		}
	}
	for (r = 0; r < NREG; r++)
		for (i = 0; regions[r].p && i < LEN; i++)
			regions[r].p[i] = pat(r, i);
	advise(regions[1].p, LEN, MADV_WIPEONFORK, "MADV_WIPEONFORK");
	advise(regions[2].p, LEN, MADV_DONTFORK, "MADV_DONTFORK");
	advise(regions[3].p, LEN, MADV_HUGEPAGE, "MADV_HUGEPAGE");
	advise(regions[4].p, LEN, MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE");
	advise(regions[5].p, LEN, MADV_DONTDUMP, "MADV_DONTDUMP");
	advise(regions[6].p, LEN, MADV_DONTDUMP, "MADV_DONTDUMP");
	if (mprotect(regions[6].p, LEN, PROT_READ))
		die("mprotect");
	advise(regions[7].p, LEN, MADV_WIPEONFORK, "MADV_WIPEONFORK");
	advise(regions[7].p, LEN, MADV_DONTDUMP, "MADV_DONTDUMP");
	advise(regions[7].p, LEN, MADV_HUGEPAGE, "MADV_HUGEPAGE");
	advise(regions[8].p, LEN, MADV_DONTFORK, "MADV_DONTFORK");
	advise(regions[8].p, LEN, MADV_DONTDUMP, "MADV_DONTDUMP");
}

/* The VmFlags line of the mapping at @addr in /proc/self/smaps, as F_*. */
static int vmflags(unsigned long addr, unsigned int *out)
{
	int f = smaps_vmflags(addr, fnames, sizeof(fnames) / sizeof(fnames[0]));

	if (f < 0)
		return -1;
	*out = f;
	return 0;
}

static void flag_str(unsigned int f, char *out)
{
	out[0] = 0;
	for (size_t i = 0; i < sizeof(fnames) / sizeof(fnames[0]); i++)
		if (f & (1u << i)) {
			strcat(out, fnames[i]);
			strcat(out, ",");
		}
	if (!out[0])
		strcpy(out, "-");
}

/* @r's pattern is intact (@zero: or all zero); returns the first bad offset or -1. */
static long check_data(size_t r, int zero)
{
	for (size_t i = 0; i < LEN; i++)
		if (regions[r].p[i] != (zero ? 0 : pat(r, i)))
			return (long)i;
	return -1;
}

/* In a forked child: what it must see; exit 0, or 1 after saying why. */
static void child_check(void)
{
	bad[0] = 0;
	for (size_t r = 0; r < NREG; r++) {
		struct region *g = &regions[r];
		int mapped;
		long off;

		if (!g->p)
			continue;
		mapped = !msync(g->p, LEN, MS_ASYNC);
		if (g->child == C_ABSENT) {
			if (mapped)
				bad_item("child:%s-mapped", g->name);
			continue;
		}
		if (!mapped) {
			bad_item("child:%s-unmapped", g->name);
			continue;
		}
		off = check_data(r, g->child == C_ZERO);
		if (off >= 0)
			bad_item("child:%s-%s-at-%ld(%#x)", g->name,
				 g->child == C_ZERO ? "not-zero" : "data", off,
				 g->p[off]);
	}
	if (bad[0]) {
		say("fork BAD: %s\n", bad);
		_exit(1);
	}
	_exit(0);
}

static int check_all(int after)
{
	char got[40], want[40];
	pid_t c;
	int st, dropped;

	bad[0] = 0;
	for (size_t r = 0; r < NREG; r++) {
		struct region *g = &regions[r];
		unsigned int f;
		long off;

		if (!g->p)
			continue;
		/*
		 * A droppable region is left out of the image (the kernel may
		 * drop it any time; glibc keeps getrandom's state in one): zero
		 * after the restore.
		 */
		dropped = after && !strcmp(g->name, "dp");
		off = check_data(r, dropped);
		if (off >= 0)
			bad_item("%s:data-at-%ld(%#x,want-%#x)", g->name, off,
				 g->p[off], dropped ? 0 : pat(r, (size_t)off));
		if (vmflags((unsigned long)g->p, &f)) {
			bad_item("%s:not-in-smaps", g->name);
			continue;
		}
		if (f != g->flags) {
			flag_str(f, got);
			flag_str(g->flags, want);
			bad_item("%s:VmFlags-%s-want-%s", g->name, got, want);
		}
	}
	/* the fork behaviour is checked even if the flags are wrong: what breaks */
	c = fork();
	if (c < 0) {
		bad_item("fork:%s", errname(errno));
		return -1;
	}
	if (!c)
		child_check();
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) {
		bad_item("the-forked-child-saw-it-wrong(status-%#x)", st);
		return -1;
	}
	/* the parent's wipe-on-fork regions are untouched by the fork */
	for (size_t r = 0; r < NREG; r++)
		if (regions[r].p &&
		    check_data(r, after && !strcmp(regions[r].name, "dp")) >= 0)
			bad_item("%s:data-changed-by-fork", regions[r].name);
	return bad[0] ? -1 : 0;
}

static void on_usr2(int sig)
{
	(void)sig;
	check_req = 1;
}

/* ---- madv patch ---- */

static int patch(const char *in, const char *out, const char *mode)
{
	static unsigned char b[64 << 20];
	int fd = open(in, O_RDONLY);
	size_t size = 0;
	ssize_t n;

	if (fd < 0)
		return 1;
	while ((n = read(fd, b + size, sizeof(b) - size)) > 0)
		size += (size_t)n;
	close(fd);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return 1;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
	struct imgcr_vma *v = NULL;
	size_t nv = 0;

	for (int i = 0; i < eh->e_phnum && !v; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		size_t off = ph[i].p_offset, end = off + ph[i].p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(b + off);
			size_t nsz = (nh->n_namesz + 3) & ~3u;
			size_t dsz = (nh->n_descsz + 3) & ~3u;

			if (nh->n_type == NT_IMGCR_VMAS &&
			    !strcmp((char *)(nh + 1), IMGCR_NOTE_OWNER)) {
				v = (struct imgcr_vma *)(b + off + sizeof(*nh) + nsz);
				nv = nh->n_descsz / sizeof(*v);
				break;
			}
			off += sizeof(*nh) + nsz + dsz;
		}
	}
	if (!v)
		return 1;
	int want_file = !strcmp(mode, "wffile");
	int want_shared = !strcmp(mode, "mgshared");
	size_t k;

	for (k = 0; k < nv; k++)
		if (want_shared ? v[k].kind == IMGCR_VMA_FILE && v[k].flags & IMGCR_VMA_SHARED :
		    want_file ? v[k].kind == IMGCR_VMA_FILE && !(v[k].flags & IMGCR_VMA_SHARED) :
		    v[k].kind == IMGCR_VMA_ANON && !(v[k].flags & IMGCR_VMA_GROWSDOWN))
			break;
	if (k == nv)
		return 1;
	if (!strcmp(mode, "unknown"))
		v[k].flags |= 0x80000000u;
	else if (want_file)
		v[k].flags |= IMGCR_VMA_WIPEONFORK;
	else if (!strcmp(mode, "hgnh"))
		v[k].flags |= IMGCR_VMA_HUGEPAGE | IMGCR_VMA_NOHUGEPAGE;
	else if (!strcmp(mode, "dpbad"))
		v[k].flags |= IMGCR_VMA_DROPPABLE;
	else if (!strcmp(mode, "lof"))
		v[k].flags |= IMGCR_VMA_LOCKONFAULT;
	else if (!strcmp(mode, "seqrand"))
		v[k].flags |= IMGCR_VMA_SEQ_READ | IMGCR_VMA_RAND_READ;
	else if (want_shared)
		v[k].flags |= IMGCR_VMA_MERGEABLE;
	else if (!strcmp(mode, "dplock"))
		v[k].flags = (v[k].flags & ~IMGCR_VMA_ACCOUNT) | IMGCR_VMA_DROPPABLE |
			     IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DONTDUMP | IMGCR_VMA_NORESERVE |
			     IMGCR_VMA_LOCKED;
	else if (!strcmp(mode, "dpok"))
		v[k].flags = (v[k].flags & ~IMGCR_VMA_ACCOUNT) | IMGCR_VMA_DROPPABLE |
			     IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DONTDUMP | IMGCR_VMA_NORESERVE;
	else
		return 1;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, b, size) != (ssize_t)size)
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_usr2 };

	if (argc == 5 && !strcmp(argv[1], "patch"))
		return patch(argv[2], argv[3], argv[4]);
	setup();
	say("droppable %s\n", have_dp ? "yes" : "no");
	for (size_t r = 0; r < NREG; r++)
		if (regions[r].p)
			say("region %s %lx\n", regions[r].name, (unsigned long)regions[r].p);
	if (check_all(0)) {
		say("precheck BAD: %s\n", bad);
		return 1;
	}
	say("precheck ok\n");
	sigaction(SIGUSR2, &sa, NULL);
	say("ready %d\n", getpid());
	while (!check_req)
		nanosleep(&ts, NULL);
	if (check_all(1)) {
		say("check BAD: %s\n", bad);
		return 1;
	}
	say("check ok pid=%d\n", getpid());
	return 0;
}
