/*
 * memprivate: private mappings of a memfd and of a /dev/shm file, with a
 * page written (copied on write) before the dump, across dump + restore
 * (test/guest/memory/t_shm_private.sh).
 *
 * Writes a pattern ('a' + i % 26) to the 3 pages of memfd "priv buf"
 * (its fd kept), of /dev/shm/imgcr-priv (its fd closed) and of
 * /dev/shm/imgcr-gone (its fd kept, unlinked once mapped), maps each
 * MAP_PRIVATE read-write and the memfd also MAP_SHARED, writes "cow" at
 * the start of each private mapping.  "memprivate nofd" closes the
 * memfd's fd and has no shared mapping (the dump must refuse it);
 * "memprivate huge" and "hugefd" map huge pages instead (see huge()).
 * Prints "fd N memfd ADDR shm ADDR", "ready", waits until the file
 * "restored" appears, then checks (ok/BAD), for both: the private
 * mapping holds "cow" and the pattern, is of the fd's inode (memfd), rw-p,
 * has one anonymous page (smaps Anonymous: 4 kB: the others are the
 * file's); the file still holds the pattern where the task wrote "cow".
 * Then a write to the file shows in the private mapping's unwritten
 * page, and a write to the private mapping reaches neither the file nor
 * the shared mapping.  Prints "done ok" and exits 0 if all passed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define COMMON_CHECK
#include "common.h"

#define SIZE	(3 * 4096)
#define SHM	"/dev/shm/imgcr-priv"
#define GONE	"/dev/shm/imgcr-gone"
#define HUGE	(2L << 20)

/* field @key (a number, kB) of the smaps entry at @addr, and its maps line in @line */
static long smaps_field(void *addr, const char *key, char *line, size_t size)
{
	static char buf[1 << 18];
	char head[32], *l, *e;
	int fd = open("/proc/self/smaps", O_RDONLY), in = 0;
	ssize_t n, got = 0;
	long v = -1;

	line[0] = 0;
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	snprintf(head, sizeof(head), "%lx-", (unsigned long)addr);
	for (l = buf; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		if (e)
			*e = 0;
		if (!strncmp(l, head, strlen(head))) {
			in = 1;
			n = strlen(l) < size ? (ssize_t)strlen(l) : (ssize_t)size - 1;
			memcpy(line, l, n);
			line[n] = 0;
		} else if (in && !strncmp(l, key, strlen(key))) {
			v = strtol(l + strlen(key), NULL, 10);
			break;
		}
	}
	return v;
}

static int pattern(const char *p, int from, int to)
{
	int i;

	for (i = from; i < to; i++)
		if (p[i] != (char)('a' + i % 26))
			return 0;
	return 1;
}

static void file_pattern(int fd)
{
	char c;
	int i;

	for (i = 0; i < SIZE; i++) {
		c = 'a' + i % 26;
		if (write(fd, &c, 1) != 1)
			exit(1);
	}
}

/* the checks of private mapping @priv of the file open on @fd, named @name */
static void same(const char *who, int fd, char *priv, const char *name)
{
	char line[512], want[300], buf[8];
	struct stat st;
	unsigned long ino = 0;
	long anon;

	check(!memcmp(priv, "cow", 3) && pattern(priv, 3, SIZE), who, "private contents '%.3s'%s",
	      priv, pattern(priv, 3, SIZE) ? "" : ", pattern lost");
	anon = smaps_field(priv, "Anonymous:", line, sizeof(line));
	check(anon == 4, who, "Anonymous: %ld kB (one page written)", anon);
	fstat(fd, &st);
	sscanf(line, "%*s %*s %*s %*s %lu", &ino);
	snprintf(want, sizeof(want), " %s", name);
	check(ino == st.st_ino && !strncmp(strchr(line, ' ') + 1, "rw-p 00000000 ", 14) &&
	      strlen(line) > strlen(want) && !strcmp(line + strlen(line) - strlen(want), want),
	      who, "mapping '%s', fd inode %lu", line, (unsigned long)st.st_ino);
	check(pread(fd, buf, 3, 0) == 3 && !memcmp(buf, "abc", 3), who, "the file holds '%.3s' (not the private 'cow')", buf);
	/* the file to the unwritten page; the private page stays private */
	if (pwrite(fd, "late", 4, 4096) != 4)
		say("BAD pwrite: %s\n", strerror(errno));
	check(!memcmp(priv + 4096, "late", 4), who, "file write seen in the private mapping: '%.4s'", priv + 4096);
	memcpy(priv + 8192, "priv2", 5);
	memset(buf, 0, sizeof(buf));
	check(pread(fd, buf, 5, 8192) == 5 && !memcmp(buf, "cdefg", 5), who,
	      "private write kept from the file: '%.5s'", buf);
}

/* expected byte @i of a huge page mapping: a mark in some of its 4 KiB pieces, zero elsewhere */
static char huge_byte(long i, char tag)
{
	long page = i / 4096, off = i % 4096;

	if ((page == 0 || page == 7 || page == 511) && off < 64)
		return tag + off % 16;
	return 0;
}

static void huge_fill(char *p, char tag)
{
	long i;

	for (i = 0; i < HUGE; i++)
		if (huge_byte(i, tag))
			p[i] = huge_byte(i, tag);
}

static long huge_diff(const char *p, char tag)
{
	long i;

	for (i = 0; i < HUGE; i++)
		if (p[i] != huge_byte(i, tag))
			return i;
	return -1;
}

/*
 * "memprivate huge": a private (read-write) and a shared (made read-only)
 * MAP_HUGETLB mapping, marked; after the restore checks the marks, the
 * page size and kind (smaps), then that a child's write reaches the shared
 * one and not the private one.  "memprivate hugefd": an MFD_HUGETLB memfd
 * mapped shared, its fd closed; "hugefdpriv": the same mapped private;
 * "hugefork": the shared one only, shared with a child (the dump must
 * refuse these three).
 */
static int huge(int memfd)
{
	int file = memfd == 1 || memfd == 3;
	int fd = file ? memfd_create("huge", MFD_HUGETLB) : -1, st = 0;
	int sized = !file || (fd >= 0 && !ftruncate(fd, HUGE));
	char *p = memfd ? NULL : mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	char *s = mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
		       (memfd == 3 ? MAP_PRIVATE : MAP_SHARED) |
		       (file ? 0 : MAP_ANONYMOUS | MAP_HUGETLB), fd, 0);
	char line[512];
	long d;
	pid_t kid;

	if (p == MAP_FAILED || s == MAP_FAILED || !sized) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	if (memfd == 2) {
		/* "hugefork": a child shares the shared one */
		memcpy(s, "huge", 4);
		kid = fork();
		if (kid == 0) {
			while (access("restored", F_OK))
				usleep(50000);
			_exit(0);
		}
		say("shared %p child %d\nready\n", (void *)s, (int)kid);
		while (access("restored", F_OK))
			usleep(50000);
		waitpid(kid, &st, 0);
		return 0;
	}
	if (memfd) {
		close(fd);
		memcpy(s, "huge", 4);
		say("shared %p\nready\n", (void *)s);
		while (access("restored", F_OK))
			usleep(50000);
		return 0;
	}
	huge_fill(p, 'A');
	huge_fill(s, 'a');
	if (mprotect(s, HUGE, PROT_READ)) {
		say("BAD mprotect: %s\n", strerror(errno));
		return 1;
	}
	say("private %p shared %p\nready\n", (void *)p, (void *)s);
	while (access("restored", F_OK))
		usleep(50000);
	d = huge_diff(p, 'A');
	check(d < 0, "huge private", "contents%s%ld", d < 0 ? "" : " differ at ", d);
	d = huge_diff(s, 'a');
	check(d < 0, "huge shared", "contents%s%ld", d < 0 ? "" : " differ at ", d);
	d = smaps_field(p, "KernelPageSize:", line, sizeof(line));
	check(d == 2048 && strstr(line, " rw-p 00000000 ") && strstr(line, "/anon_hugepage"),
	      "huge private", "KernelPageSize: %ld kB, '%s'", d, line);
	d = smaps_field(s, "KernelPageSize:", line, sizeof(line));
	check(d == 2048 && strstr(line, " r--s 00000000 ") && strstr(line, "/anon_hugepage"),
	      "huge shared", "KernelPageSize: %ld kB, '%s'", d, line);
	kid = fork();
	if (kid == 0) {
		if (mprotect(s, HUGE, PROT_READ | PROT_WRITE))
			_exit(2);
		memcpy(s + 4096, "kid", 3);
		memcpy(p + 4096, "kid", 3);
		_exit(0);
	}
	if (kid < 0 || waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st))
		say("BAD child: status 0x%x\n", st);
	check(!memcmp(s + 4096, "kid", 3), "huge shared", "a child's write seen: '%.3s'", s + 4096);
	check(!p[4096], "huge private", "a child's write not seen: %d", p[4096]);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}

/*
 * "memprivate hugebig": 256 GiB of private MAP_HUGETLB|MAP_NORESERVE memory
 * with one huge page written in its middle (the dump skips the holes a
 * huge page at a time).  "memprivate sparse": a 64 MiB memfd with only its
 * first page written, mapped privately with that page copied on write
 * (the dump must not fill the holes).  Both check their contents after
 * the restore; "sparse" also that the memfd's blocks are as before.
 */
#define BIG	(256L << 30)
#define SPARSE	(64L << 20)
static int big(int sparse)
{
	int fd = sparse ? memfd_create("sparse", 0) : -1;
	char *b, buf[8] = "";
	struct stat st;
	long blocks = -1;

	if (sparse) {
		if (fd < 0 || ftruncate(fd, SPARSE) || pwrite(fd, "file", 4, 0) != 4) {
			say("BAD setup: %s\n", strerror(errno));
			return 1;
		}
		b = mmap(NULL, SPARSE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	} else {
		b = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE, -1, 0);
	}
	if (b == MAP_FAILED) {
		say("BAD mmap: %s\n", strerror(errno));
		return 1;
	}
	if (sparse) {
		b[4096 - 1] = 'c';	/* the first page copied on write */
		if (fstat(fd, &st)) {
			say("BAD fstat: %s\n", strerror(errno));
			return 1;
		}
		blocks = st.st_blocks;
		say("fd %d blocks %ld\n", fd, blocks);
	} else {
		memcpy(b + BIG / 2 + 4096, "big", 3);
	}
	say("ready\n");
	while (access("restored", F_OK))
		usleep(50000);
	if (sparse) {
		check(!memcmp(b, "file", 4) && b[4095] == 'c', "sparse private", "contents '%.4s' %d", b, b[4095]);
		check(pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "file", 4) &&
		      pread(fd, buf, 1, 4095) == 1 && !buf[0], "sparse memfd", "contents '%.4s'", buf);
		check(!fstat(fd, &st) && st.st_blocks == blocks, "sparse memfd",
		      "blocks %ld, before the dump %ld", (long)st.st_blocks, blocks);
	} else {
		check(!memcmp(b + BIG / 2 + 4096, "big", 3) && !b[BIG / 2] && !b[BIG / 2 + 4099] &&
		      !b[BIG / 2 + HUGE - 1], "huge big", "contents '%.3s'", b + BIG / 2 + 4096);
	}
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}

int main(int argc, char **argv)
{
	int nofd = argc > 1 && !strcmp(argv[1], "nofd");
	int fd = memfd_create("priv buf", 0), sfd, gfd;
	char *priv, *shr = NULL, *spriv, *gpriv;

	if (argc > 1 && !strcmp(argv[1], "huge"))
		return huge(0);
	if (argc > 1 && !strcmp(argv[1], "hugefd"))
		return huge(1);
	if (argc > 1 && !strcmp(argv[1], "hugefdpriv"))
		return huge(3);
	if (argc > 1 && !strcmp(argv[1], "hugefork"))
		return huge(2);
	if (argc > 1 && !strcmp(argv[1], "hugebig"))
		return big(0);
	if (argc > 1 && !strcmp(argv[1], "sparse"))
		return big(1);
	if (fd < 0) {
		say("BAD memfd_create: %s\n", strerror(errno));
		return 1;
	}
	file_pattern(fd);
	priv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!nofd)
		shr = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unlink(SHM);
	sfd = open(SHM, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (sfd < 0) {
		say("BAD open %s: %s\n", SHM, strerror(errno));
		return 1;
	}
	file_pattern(sfd);
	spriv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, sfd, 0);
	unlink(GONE);
	gfd = open(GONE, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (gfd < 0) {
		say("BAD open %s: %s\n", GONE, strerror(errno));
		return 1;
	}
	file_pattern(gfd);
	gpriv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, gfd, 0);
	if (priv == MAP_FAILED || shr == MAP_FAILED || spriv == MAP_FAILED || gpriv == MAP_FAILED ||
	    unlink(GONE)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	close(sfd);
	memcpy(priv, "cow", 3);
	memcpy(spriv, "cow", 3);
	memcpy(gpriv, "cow", 3);
	if (nofd)
		close(fd);
	say("fd %d memfd %p shm %p\nready\n", fd, (void *)priv, (void *)spriv);
	while (access("restored", F_OK))
		usleep(50000);
	same("memfd", fd, priv, "/memfd:priv buf (deleted)");
	check(pattern(shr, 0, 4096) && shr[4096 + 4] == 's' && !memcmp(shr + 4096, "late", 4) && pattern(shr, 8192, SIZE), "memfd shared",
	      "the shared mapping shows the file: '%.3s' '%.4s' '%.3s'", shr, shr + 4096, shr + 8192);
	sfd = open(SHM, O_RDWR);
	same("shm", sfd, spriv, SHM);
	same("deleted shm", gfd, gpriv, GONE " (deleted)");
	unlink(SHM);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
