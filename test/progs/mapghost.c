/*
 * mapghost PDIR SDIR: mappings of deleted files across imgcr dump + restore.
 *
 * PDIR/p.dat (3 pages of pattern 'p') is mapped MAP_PRIVATE read-write,
 * page 1 overwritten through the mapping with 'W', the fd closed.
 * SDIR/s.dat (2 pages of pattern 's') is opened O_RDWR (the fd kept, at
 * offset 777) and mapped MAP_SHARED read-write, "SHARED" written at 10
 * through the mapping.  Both files unlinked.  Prints "fd S", "ready",
 * then "tick N" every 100 ms until the file "restored" appears in the cwd,
 * and checks (ok/BAD lines):
 *   the private mapping: pages 0 and 2 the file's, page 1 the writes
 *   the shared mapping: the file's bytes and "SHARED" at 10; the fd reads
 *   "SHARED" at 10 (one inode); a pwrite through the fd shows in the
 *   mapping, a write through the mapping in a pread; st_nlink 0, offset 777
 * "done ok" if all passed, then ticks on until killed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

#define PG 4096

static char pat(char c, long off)
{
	return (char)(c + off % 23);
}

static int make(const char *name, char c, long len)
{
	char buf[PG];
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	for (long off = 0; off < len; off += PG) {
		for (int i = 0; i < PG; i++)
			buf[i] = pat(c, off + i);
		if (write(fd, buf, PG) != PG)
			return -1;
	}
	return fd;
}

/* bytes [from, to) of m are pattern c */
static int is_pat(const char *m, char c, long from, long to)
{
	for (long i = from; i < to; i++)
		if (m[i] != pat(c, i))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	char ppath[4096], spath[4096], buf[16];
	struct stat st;
	char *p, *s;
	int fd, sfd, n;

	if (argc != 3) {
		outf(2, "usage: mapghost PDIR SDIR\n");
		return 64;
	}
	snprintf(ppath, sizeof(ppath), "%s/p.dat", argv[1]);
	snprintf(spath, sizeof(spath), "%s/s.dat", argv[2]);
	fd = make(ppath, 'p', 3 * PG);
	sfd = make(spath, 's', 2 * PG);
	if (fd < 0 || sfd < 0) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	s = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	if (p == MAP_FAILED || s == MAP_FAILED) {
		say("BAD mmap: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	memset(p + PG, 'W', PG);
	memcpy(s + 10, "SHARED", 6);
	lseek(sfd, 777, SEEK_SET);
	if (unlink(ppath) || unlink(spath)) {
		say("BAD unlink: %s\n", strerror(errno));
		return 1;
	}
	say("fd %d\nready\n", sfd);
	for (n = 0; stat("restored", &st); n++) {
		say("tick %d\n", n);
		msleep(100);
	}
	check(is_pat(p, 'p', 0, PG) && is_pat(p, 'p', 2 * PG, 3 * PG), "private", "file pages");
	n = 1;
	for (int i = PG; i < 2 * PG; i++)
		n &= p[i] == 'W';
	check(n, "private", "written page kept");
	check(is_pat(s, 's', 0, 10) && !memcmp(s + 10, "SHARED", 6) &&
	      is_pat(s, 's', 16, 2 * PG), "shared", "contents");
	check(pread(sfd, buf, 6, 10) == 6 && !memcmp(buf, "SHARED", 6), "shared", "fd reads the mapping's write");
	check(pwrite(sfd, "BYFD", 4, PG + 5) == 4 && !memcmp(s + PG + 5, "BYFD", 4), "shared",
	      "a write through the fd shows in the mapping");
	memcpy(s + 100, "BYMAP", 5);
	check(pread(sfd, buf, 5, 100) == 5 && !memcmp(buf, "BYMAP", 5), "shared",
	      "a write through the mapping shows through the fd");
	check(!fstat(sfd, &st) && st.st_nlink == 0 && st.st_size == 2 * PG, "shared",
	      "deleted, size %lld", (long long)st.st_size);
	check(lseek(sfd, 0, SEEK_CUR) == 777, "shared", "offset kept");
	say(bad ? "done BAD\n" : "done ok\n");
	for (;;)
		msleep(1000);
}
