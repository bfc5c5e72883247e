/*
 * memprivate: private mappings of a memfd and of a /dev/shm file, with a
 * page written (copied on write) before the dump, across dump + restore
 * (test/guest/memory/t_shm_private.sh).
 *
 * Writes a pattern ('a' + i % 26) to the 3 pages of memfd "priv buf"
 * (its fd kept) and of /dev/shm/imgcr-priv (its fd closed), maps each
 * MAP_PRIVATE read-write and the memfd also MAP_SHARED, writes "cow" at
 * the start of each private mapping.  "memprivate nofd" closes the
 * memfd's fd and has no shared mapping (the dump must refuse it);
 * "memprivate huge" maps huge pages instead (refused too).
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

#define COMMON_CHECK
#include "common.h"

#define SIZE	(3 * 4096)
#define SHM	"/dev/shm/imgcr-priv"

/* field @key (a number, kB) of the smaps entry at @addr, and its maps line in @line */
static long smaps_field(void *addr, const char *key, char *line, size_t size)
{
	static char buf[1 << 18];
	char head[32], *l, *e;
	int fd = open("/proc/self/smaps", O_RDONLY), in = 0;
	ssize_t n, got = 0;
	long v = -1;

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

/* "memprivate huge": a MAP_HUGETLB private and shared mapping, written; the dump must refuse it */
static int huge(void)
{
	char *p = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	char *s = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (p == MAP_FAILED || s == MAP_FAILED) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	memcpy(p, "huge", 4);
	memcpy(s, "huge", 4);
	say("private %p shared %p\nready\n", (void *)p, (void *)s);
	while (access("restored", F_OK))
		usleep(50000);
	return 0;
}

int main(int argc, char **argv)
{
	int nofd = argc > 1 && !strcmp(argv[1], "nofd");
	int fd = memfd_create("priv buf", 0), sfd;
	char *priv, *shr = NULL, *spriv;

	if (argc > 1 && !strcmp(argv[1], "huge"))
		return huge();
	if (fd < 0)
		return 1;
	file_pattern(fd);
	priv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!nofd)
		shr = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unlink(SHM);
	sfd = open(SHM, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (sfd < 0)
		return 1;
	file_pattern(sfd);
	spriv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, sfd, 0);
	if (priv == MAP_FAILED || shr == MAP_FAILED || spriv == MAP_FAILED) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	close(sfd);
	memcpy(priv, "cow", 3);
	memcpy(spriv, "cow", 3);
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
	unlink(SHM);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
