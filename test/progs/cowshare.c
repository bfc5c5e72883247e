/*
 * cowshare: the subject of t_cow.  Static.
 *
 * cowshare DIR
 *     A parent maps 48 MiB of anonymous memory, writes pattern A on every
 *     page, and forks a child; the child rewrites the first 4 MiB with
 *     pattern B and forks a grandchild, which rewrites the next 4 MiB with
 *     pattern C.  So the three still share most of the memory copy-on-write:
 *     [0,4M) P alone (A) | C and G (B);  [4M,8M) P and C (A) | G alone (C);
 *     [8M,48M) all three (A).  Before the fork the parent also maps three
 *     4 MiB regions with advice, MADV_HUGEPAGE ("hg"), MADV_NOHUGEPAGE
 *     ("nh") and MADV_DONTDUMP ("dd"), and writes pattern E on them; no
 *     one writes them after, so all three tasks share them whole.  Each
 *     writes to DIR/p, DIR/c, DIR/g: "region ADDR", "xregion NAME ADDR"
 *     for the three, and "ready PID", then sleeps in 20 ms nanosleeps.
 *     On SIGUSR1 each checks its data and, from /proc/self/smaps, how much
 *     of the region is shared with another process ("shared KIB private
 *     KIB" and ok/BAD lines: P and G at most 5 MiB private, C at most
 *     1 MiB, all at least 40 MiB shared; of each advised region its data,
 *     its advice in the VmFlags of /proc/self/smaps, and at least 3 MiB
 *     shared, at most 256 KiB private), then says "checked".  Once all
 *     three have checked, a SIGUSR2 to the child alone makes it write
 *     pattern D into [8M,12M) ("wrote"; not before: the others would count
 *     those pages as their own if they read their smaps after it).  On
 *     SIGUSR2 (the child: its second) each checks its data and advice
 *     again (the child's write stayed its own: copy-on-write still
 *     separates them; not the sharing, the others may have exited by
 *     then), says "done" and exits 0, or 1 after a BAD line.
 *
 * cowshare DIR UID
 *     The same, but the grandchild runs as UID (and its gid) once it has
 *     written: memory is never shared again between tasks of different
 *     credentials, so after a restore it checks that the region is all its
 *     own (at least 44 MiB private) instead of shared, and the child's
 *     first 4 MiB, which it shared with the grandchild, are its own too.
 *
 * cowshare DIR nodump
 *     The same, all three not dumpable (PR_SET_DUMPABLE 0, as ssh-agent):
 *     binfmt_img will not restore them in place for a dumpable restorer,
 *     so imgcr restore executes them the plain way (a warning each) and
 *     each checks that the region is all its own.
 *
 * cowshare keep MODE IMAGE START END
 *     Maps [START,END) (hex) as MODE says, then executes IMAGE with
 *     "--imgcr-keep=START-END" (an in-place restore).  MODE: rw (anonymous
 *     read-write: a valid caller), ro (read-only), shared (MAP_SHARED),
 *     none (nothing mapped), exec (read-write-execute), thread (rw, with
 *     a second thread), timer (rw, with a POSIX timer), vfork (rw, the
 *     exec done by a vfork() child), ids (rw, saved user ID 1: as root).
 *     It retries an exec refused with EBUSY (another task held its mm for
 *     a moment).  If the exec fails it prints "cowshare: execve failed:
 *     ENAME" and exits 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define COMMON_CHECK
#include "common.h"

#define MIB (1024 * 1024)
#define SIZE (48 * MIB)

static volatile sig_atomic_t got1, got2;
static unsigned char *r;
static char who;
static int own_uid = -1;	/* cowshare DIR UID: the grandchild's uid */
static int nodump;		/* cowshare DIR nodump */

/* The regions with advice: all three tasks share them, pattern E. */
#define XSIZE (4 * MIB)
static const struct {
	const char *name;	/* its VmFlags in smaps */
	int advice;
} xadv[] = { { "hg", MADV_HUGEPAGE }, { "nh", MADV_NOHUGEPAGE }, { "dd", MADV_DONTDUMP } };
#define NX (sizeof(xadv) / sizeof(xadv[0]))
static unsigned char *xr[NX];

static void on_sig(int s)
{
	if (s == SIGUSR1)
		got1 = 1;
	else
		got2 = 1;
}

/* The byte at offset @off of a page written with pattern @pat. */
static unsigned char pat_byte(char pat, size_t page, size_t off)
{
	return (unsigned char)(pat * 31 + page * 7 + off / 64);
}

static void fill_at(unsigned char *m, char pat, size_t from, size_t to)
{
	size_t o;

	for (o = from; o < to; o++)
		m[o] = pat_byte(pat, o / 4096, o % 4096);
}

static void fill(char pat, size_t from, size_t to)
{
	fill_at(r, pat, from, to);
}

/* The pattern each range must have, for this task, after the child's write. */
static char want(size_t o, int after_write)
{
	if (o < 4 * MIB)
		return who == 'p' ? 'A' : 'B';
	if (o < 8 * MIB)
		return who == 'g' ? 'C' : 'A';
	if (o < 12 * MIB && after_write && who == 'c')
		return 'D';
	return 'A';
}

static void check_data(int after_write)
{
	size_t o, bad_at = SIZE;

	for (o = 0; o < SIZE && bad_at == SIZE; o++)
		if (r[o] != pat_byte(want(o, after_write), o / 4096, o % 4096))
			bad_at = o;
	check(bad_at == SIZE, "data", "offset %zu (want pattern %c)", bad_at,
	      bad_at < SIZE ? want(bad_at, after_write) : '-');
}

/*
 * Shared and private KiB of the mapping at @m, from /proc/self/smaps, and
 * its VmFlags line in @vmflags (@size bytes) if not NULL.
 */
static void sharing_at(const void *m, long *shared, long *priv, char *vmflags, size_t size)
{
	char line[512], start[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0;
	long v;

	*shared = *priv = -1;
	if (vmflags)
		vmflags[0] = 0;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)(uintptr_t)m);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's header starts with its address, keys capitalised */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
			in = !strncmp(line, start, strlen(start));
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "Shared_Clean: %ld", &v) == 1 ||
		    sscanf(line, "Shared_Dirty: %ld", &v) == 1)
			*shared = (*shared < 0 ? 0 : *shared) + v;
		if (sscanf(line, "Private_Clean: %ld", &v) == 1 ||
		    sscanf(line, "Private_Dirty: %ld", &v) == 1)
			*priv = (*priv < 0 ? 0 : *priv) + v;
		if (vmflags && !strncmp(line, "VmFlags:", 8)) {
			size_t n = strcspn(line + 8, "\n");

			n = n < size - 2 ? n : size - 2;	/* room for the caller's " " */
			memcpy(vmflags, line + 8, n);
			vmflags[n] = 0;
		}
	}
	fclose(f);
}

static void sharing(long *shared, long *priv)
{
	sharing_at(r, shared, priv, NULL, 0);
}

/*
 * The advised regions: data, advice and, if @shared_too, sharing.  Only
 * before anyone writes or exits: after SIGUSR2 the others may be gone.
 */
static void check_x(int shared_too)
{
	char flags[256], want[8];
	long shared, priv;
	size_t i, o, bad_at;

	for (i = 0; i < NX; i++) {
		for (bad_at = XSIZE, o = 0; o < XSIZE && bad_at == XSIZE; o++)
			if (xr[i][o] != pat_byte('E', o / 4096, o % 4096))
				bad_at = o;
		check(bad_at == XSIZE, "advised data", "%s region: offset %zu (want pattern E)",
		      xadv[i].name, bad_at);
		sharing_at(xr[i], &shared, &priv, flags, sizeof(flags));
		snprintf(want, sizeof(want), " %s ", xadv[i].name);
		strcat(flags, " ");
		check(strstr(flags, want) != NULL, "advice", "%s region: VmFlags%s", xadv[i].name,
		      flags);
		/* t_cow's job: cow_uid checks its sharing by Pss */
		if (shared_too && own_uid < 0 && !nodump)
			check(shared >= 3 * 1024 && priv >= 0 && priv <= 256, "advised shared",
			      "%s region: shared %ld private %ld KiB", xadv[i].name, shared, priv);
	}
}

static int run(const char *dir, char name)
{
	char path[4096];
	long shared, priv, max_priv = name == 'c' && own_uid < 0 ? 1024 : 5 * 1024;
	struct sigaction sa;
	int fd;

	who = name;
	snprintf(path, sizeof(path), "%s/%c", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0)
		return 1;
	close(fd);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	say("region %lx\n", (unsigned long)(uintptr_t)r);
	for (size_t i = 0; i < NX; i++)
		say("xregion %s %lx\n", xadv[i].name, (unsigned long)(uintptr_t)xr[i]);
	say("ready %d\n", getpid());
	while (!got1)
		msleep(20);
	check_data(0);
	check_x(1);
	sharing(&shared, &priv);
	say("smaps read at %.3f\n", now());
	say("shared %ld private %ld\n", shared, priv);
	if ((name == 'g' && own_uid >= 0) || nodump) {
		check(priv >= 44 * 1024, "private", "%ld KiB of the region (at least 45056)", priv);
	} else {
		check(shared >= 40 * 1024, "shared", "%ld KiB of the region", shared);
		check(priv >= 0 && priv <= max_priv, "private",
		      "%ld KiB of the region (at most %ld)", priv, max_priv);
	}
	say("checked\n");
	/*
	 * The child writes on its first SIGUSR2, sent once all three have
	 * checked: a write any earlier would turn pages the others still
	 * count as shared into their own (up to 4 MiB more private).
	 */
	if (name == 'c') {
		while (!got2)
			msleep(20);
		got2 = 0;
		say("writing at %.3f\n", now());
		fill('D', 8 * MIB, 12 * MIB);
		say("wrote at %.3f\n", now());
	}
	while (!got2)
		msleep(20);
	check_data(1);
	check_x(0);
	say("done\n");
	return bad;
}

static void *idle(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

static int keep(char **argv)
{
	unsigned long s = strtoul(argv[4], NULL, 16), e = strtoul(argv[5], NULL, 16);
	const char *mode = argv[2];
	char arg[64], *args[3];
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE;

	if (!strcmp(mode, "ro"))
		prot = PROT_READ;
	if (!strcmp(mode, "shared"))
		flags = MAP_SHARED;
	if (!strcmp(mode, "exec"))
		prot |= PROT_EXEC;
	if (strcmp(mode, "none") &&
	    mmap((void *)s, e - s, prot, flags | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0) != (void *)s) {
		say("cowshare: cannot map %lx-%lx: %s\n", s, e, strerror(errno));
		return 3;
	}
	if (!strcmp(mode, "thread")) {
		pthread_t t;

		pthread_create(&t, NULL, idle, NULL);
	}
	if (!strcmp(mode, "timer")) {
		timer_t t;

		timer_create(CLOCK_MONOTONIC, NULL, &t);
	}
	if (!strcmp(mode, "ids") && setresuid(0, 0, 1)) {
		say("cowshare: setresuid: %s\n", strerror(errno));
		return 3;
	}
	snprintf(arg, sizeof(arg), "--imgcr-keep=%lx-%lx", s, e);
	args[0] = argv[3];
	args[1] = arg;
	args[2] = NULL;
	if (!strcmp(mode, "vfork")) {
		int st;
		pid_t p = vfork();

		if (p == 0) {
			execv(argv[3], args);
			say("cowshare: execve failed: %s (%d)\n", errname(errno), errno);
			_exit(2);
		}
		if (p < 0 || waitpid(p, &st, 0) != p)
			return 3;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
	}
	/* EBUSY: a /proc reader held our mm for a moment; retry as imgcr does */
	for (int i = 0; i < 2000; i++) {
		execv(argv[3], args);
		if (errno != EBUSY)
			break;
		msleep(5);
	}
	say("cowshare: execve failed: %s (%d)\n", errname(errno), errno);
	return 2;
}

int main(int argc, char **argv)
{
	pid_t c, g;

	if (argc == 6 && !strcmp(argv[1], "keep"))
		return keep(argv);
	if (argc != 2 && argc != 3) {
		outf(2, "usage: cowshare DIR [UID|nodump] | cowshare keep MODE IMAGE START END\n");
		return 64;
	}
	if (argc == 3)
		nodump = !strcmp(argv[2], "nodump");
	if (argc == 3 && !nodump)
		own_uid = atoi(argv[2]);
	/* inherited by the child and the grandchild */
	if (nodump && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return 1;
	r = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	fill('A', 0, SIZE);
	for (size_t i = 0; i < NX; i++) {
		xr[i] = mmap(NULL, XSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (xr[i] == MAP_FAILED || madvise(xr[i], XSIZE, xadv[i].advice))
			return 1;
		fill_at(xr[i], 'E', 0, XSIZE);
	}
	c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		fill('B', 0, 4 * MIB);
		g = fork();
		if (g < 0)
			return 1;
		if (g == 0) {
			fill('C', 4 * MIB, 8 * MIB);
			if (own_uid >= 0 && (setresgid(own_uid, own_uid, own_uid) ||
					     setresuid(own_uid, own_uid, own_uid)))
				return 1;
			return run(argv[1], 'g');
		}
		if (run(argv[1], 'c'))
			return 1;
		return waitpid(g, NULL, 0) == g ? 0 : 1;
	}
	if (run(argv[1], 'p'))
		return 1;
	return waitpid(c, NULL, 0) == c ? 0 : 1;
}
