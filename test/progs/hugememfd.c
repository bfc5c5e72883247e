/*
 * hugememfd: a memfd of 2 MiB huge pages (MFD_HUGETLB) held as an fd and
 * mapped shared, across dump + restore (test/guest/fds/t_memfd_huge.sh).
 *
 * The parent creates memfd "huge buf" (MFD_HUGETLB | MFD_ALLOW_SEALING) of
 * two huge pages (4 MiB), maps it MAP_SHARED read-write whole and its
 * second page again read-only (offset 2 MiB), writes marks at 0, 8192 and
 * 2 MiB + 5000 through the mapping (the rest stays zero), sets its mode
 * 0640 and the seals F_SEAL_SHRINK | F_SEAL_GROW.  "hugememfd fork": a
 * child (forked after, with the fd and both mappings) shares it.
 * "hugememfd private": the memfd mapped MAP_PRIVATE as well, whole: its
 * first huge page written through it ("private" at 100, the 4 KiB at 8192
 * zeroed: a copy-on-write copy, one piece all zeros over the memfd's
 * "third"), then "after cow" written through the shared mapping at 300 (the
 * memfd's alone), the private mapping made read-only; checked after: the
 * copy as it was (not the memfd's 300 nor its 8192), the second page still
 * the memfd's (a write through the shared mapping shows in it), made
 * writable again a write stays private.  "hugememfd file
 * PATH": a file PATH of a hugetlbfs mount instead, no seals; "hugememfd
 * big": also a memfd "big" of 1 TiB, no page in it; "hugememfd odd": also
 * a memfd "odd" of 2 MiB + 4 KiB (fallocate() without KEEP_SIZE) (the dump
 * must refuse these three).  "hugememfd rdonly": the fd opened again
 * read-only (through /proc/self/fd) in its place once mapped: the
 * mappings, made through the read-write fd, may still be written
 * (VM_MAYWRITE); checked after: the fd is read-only, the read-only
 * mapping can be made writable (mprotect) and writes show through it.
 * "hugememfd give PROG ARGS...": a caller other than imgcr restore giving
 * the loader a memfd it did not fill: memfd "huge buf" made the same way
 * (size, mode, seals) but with no page written nor reserved, on fd 9,
 * then exec PROG ARGS (tryexec IMAGE --imgcr-shmfd=...).
 * Prints "fd N map ADDR ro ADDR [child PID]", "ready", waits
 * until the file "restored" appears, then checks (ok/BAD), in each task:
 * the marks and zeros; the mappings' inode (/proc/self/maps) is the fd's;
 * name, mode, seals, size, hugetlbfs of 2048 kB pages (fstatfs); a write
 * through the read-write mapping shows in the read-only one, through the
 * fd (pread) and in a new mapping of the fd; the child sees the parent's
 * write.  Prints "done ok" and exits 0 if all passed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#define COMMON_CHECK
#define COMMON_MAP_INO
#include "common.h"

#define HUGE	(2L << 20)
#define SIZE	(2 * HUGE)
#define HUGETLBFS_MAGIC_ 0x958458f6L

/* bytes of @p (@n) that are not zero, skipping the marks' places */
static long nonzero(const char *p, long n, long base)
{
	long i, c = 0;

	for (i = 0; i < n; i += 64) {
		long o = base + i;

		if (o < 64 || (o >= 8192 && o < 8192 + 64) || (o >= HUGE + 4992 && o < HUGE + 5056))
			continue;
		c += p[i] != 0;
	}
	return c;
}

static void same(const char *who, int fd, char *map, char *ro)
{
	struct statfs sfs;
	struct stat st;
	char link[256], path[64];
	ssize_t n;
	int seals;

	check(!memcmp(map, "huge one", 8) && !memcmp(map + 8192, "third", 5) &&
	      !memcmp(map + HUGE + 5000, "second", 6), who, "marks '%.8s' '%.5s' '%.6s'", map,
	      map + 8192, map + HUGE + 5000);
	check(!memcmp(ro + 5000, "second", 6), who, "read-only mapping of page 2: '%.6s'", ro + 5000);
	check(!nonzero(map, SIZE, 0), who, "zeros elsewhere (%ld nonzero samples)", nonzero(map, SIZE, 0));
	fstat(fd, &st);
	check(map_ino(map) == st.st_ino && map_ino(ro) == st.st_ino, who,
	      "mapping inodes %lu %lu, fd inode %lu", map_ino(map), map_ino(ro), (unsigned long)st.st_ino);
	check((st.st_mode & 07777) == 0640 && st.st_size == SIZE, who, "mode 0%o size %lld",
	      st.st_mode & 07777, (long long)st.st_size);
	check(!fstatfs(fd, &sfs) && sfs.f_type == HUGETLBFS_MAGIC_ && sfs.f_bsize == HUGE, who,
	      "fstatfs type %#lx block %ld", (long)sfs.f_type, (long)sfs.f_bsize);
	seals = fcntl(fd, F_GET_SEALS);
	check(seals == (F_SEAL_SHRINK | F_SEAL_GROW), who, "seals 0x%x", seals);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	check(!strcmp(link, "/memfd:huge buf (deleted)"), who, "name %s", link);
}

int main(int argc, char **argv)
{
	int forked = argc > 1 && !strcmp(argv[1], "fork");
	int private = argc > 1 && !strcmp(argv[1], "private");
	int rdonly = argc > 1 && !strcmp(argv[1], "rdonly");
	const char *file = argc > 2 && !strcmp(argv[1], "file") ? argv[2] : NULL;
	int fd = file ? open(file, O_RDWR | O_CREAT, 0640) :
			memfd_create("huge buf", MFD_HUGETLB | MFD_ALLOW_SEALING), st, sync[2], back[2];
	char *map, *ro, *priv = NULL, *again, buf[16], c;
	pid_t kid = 0;
	int extra;

	if (fd < 0 || pipe(sync) || pipe(back) || ftruncate(fd, SIZE)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	if (argc > 2 && !strcmp(argv[1], "give")) {
		if (fchmod(fd, 0640) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) ||
		    dup2(fd, 9) != 9) {
			say("BAD setup: %s\n", strerror(errno));
			return 1;
		}
		execvp(argv[2], argv + 2);
		say("BAD exec %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	/* "big": also a 1 TiB memfd with no page; "odd": one of 2 MiB + 4 KiB */
	if (argc > 1 && (!strcmp(argv[1], "big") || !strcmp(argv[1], "odd"))) {
		extra = memfd_create(argv[1], MFD_HUGETLB);
		if (extra < 0 || (argv[1][0] == 'b' ? ftruncate(extra, 1L << 40) :
			     fallocate(extra, 0, 0, HUGE + 4096))) {
			say("BAD setup of %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
	}
	/*
	 * "privzero": also a memfd "privzero" of 4 MiB mapped MAP_PRIVATE,
	 * its first huge page written through that mapping (a copy), its
	 * second fallocate()d (present, all zeros); "privread": the same, no
	 * copy, the second page read through a shared mapping instead (which
	 * makes it present): the dump must refuse both
	 */
	if (argc > 1 && (!strcmp(argv[1], "privzero") || !strcmp(argv[1], "privread"))) {
		int z = !strcmp(argv[1], "privzero");
		char *zs, *zp;

		extra = memfd_create(argv[1], MFD_HUGETLB);
		zs = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, extra, 0);
		zp = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, extra, 0);
		if (extra < 0 || ftruncate(extra, SIZE) || zs == MAP_FAILED || zp == MAP_FAILED ||
		    (z && fallocate(extra, FALLOC_FL_KEEP_SIZE, HUGE, HUGE))) {
			say("BAD setup of %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		if (z)
			memcpy(zp, "copy", 4);
		else if (*(volatile char *)(zs + HUGE))
			return 1;
		say("%s %p\n", argv[1], (void *)zp);
	}
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ro = mmap(NULL, HUGE, PROT_READ, MAP_SHARED, fd, HUGE);
	if (private)
		priv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED || ro == MAP_FAILED || priv == MAP_FAILED || fchmod(fd, 0640) ||
	    (!file && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	memcpy(map, "huge one", 8);
	memcpy(map + 8192, "third", 5);
	memcpy(map + HUGE + 5000, "second", 6);
	if (private) {
		/* a copy of the first huge page; its 4 KiB at 8192 all zeros */
		memcpy(priv + 100, "private", 7);
		memset(priv + 8192, 0, 4096);
		memcpy(map + 300, "after cow", 9);
		if (mprotect(priv, SIZE, PROT_READ)) {
			say("BAD setup: mprotect: %s\n", strerror(errno));
			return 1;
		}
	}
	if (rdonly) {
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = open(path, O_RDONLY);
		if (r < 0 || dup2(r, fd) != fd || close(r)) {
			say("BAD setup: read-only fd: %s\n", strerror(errno));
			return 1;
		}
	}
	if (forked) {
		kid = fork();
		if (kid == 0) {
			while (access("restored", F_OK))
				usleep(50000);
			same("child", fd, map, ro);
			if (write(back[1], "x", 1) != 1)
				_exit(1);
			if (read(sync[0], &c, 1) != 1)
				_exit(1);
			check(!memcmp(ro + 100, "by parent", 9), "child sees", "'%.9s' in its mapping",
			      ro + 100);
			_exit(bad);
		}
		say("fd %d map %p ro %p child %d\nready\n", fd, (void *)map, (void *)ro, kid);
	} else {
		say("fd %d map %p ro %p%s%p\nready\n", fd, (void *)map, (void *)ro,
		    private ? " private " : " none ", (void *)priv);
	}
	while (access("restored", F_OK))
		usleep(50000);
	if (private) {
		/* the memfd's "after cow" at 300 is not in the private copy */
		check(!memcmp(map + 300, "after cow", 9), "memfd", "'%.9s' at 300", map + 300);
		memcpy(map + 300, "\0\0\0\0\0\0\0\0\0", 9);
		check(!memcmp(priv, "huge one", 8) && !memcmp(priv + 100, "private", 7) &&
		      !nonzero(priv, HUGE, 0) && !priv[300] && !priv[8192], "private copy",
		      "'%.8s' '%.7s', %ld nonzero samples, at 300 '%.9s', at 8192 '%.5s'", priv,
		      priv + 100, nonzero(priv, HUGE, 0), priv + 300, priv + 8192);
		check(!memcmp(priv + HUGE + 5000, "second", 6), "private shared page",
		      "'%.6s' at 2 MiB + 5000", priv + HUGE + 5000);
		memcpy(map + HUGE + 400, "shared on", 9);
		check(!memcmp(priv + HUGE + 400, "shared on", 9), "private shared page",
		      "a write through the memfd: '%.9s'", priv + HUGE + 400);
		memset(map + HUGE + 400, 0, 9);
		check(!mprotect(priv, SIZE, PROT_READ | PROT_WRITE), "private", "mprotect: %s",
		      strerror(errno));
		memcpy(priv + 600, "mine", 4);
		memcpy(priv + HUGE + 600, "mine too", 8);
		check(map[600] == 0 && map[HUGE + 600] == 0, "private", "writes stay private: '%.4s' '%.8s'",
		      map + 600, map + HUGE + 600);
	}
	same("parent", fd, map, ro);
	if (kid && read(back[0], &c, 1) != 1)	/* the child has checked */
		return 1;
	if (rdonly) {
		check((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "rdonly", "fd flags %#x",
		      fcntl(fd, F_GETFL));
		check(!mprotect(ro, HUGE, PROT_READ | PROT_WRITE), "rdonly",
		      "read-only mapping made writable: %s", strerror(errno));
		memcpy(ro + 200, "via ro", 6);
		check(!memcmp(map + HUGE + 200, "via ro", 6), "rdonly", "'%.6s' in the other mapping",
		      map + HUGE + 200);
		mprotect(ro, HUGE, PROT_READ);
	}
	memcpy(map + HUGE + 100, "by parent", 9);
	check(!memcmp(ro + 100, "by parent", 9), "map to map", "'%.9s' in the read-only mapping", ro + 100);
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, 9, HUGE + 100) != 9)
		say("BAD pread: %s\n", strerror(errno));
	check(!memcmp(buf, "by parent", 9), "map to fd", "'%s' read through the fd", buf);
	again = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
	check(again != MAP_FAILED && !memcmp(again + HUGE + 100, "by parent", 9) &&
	      !memcmp(again, "huge one", 8), "new mapping", "of the fd sees the writes");
	if (kid) {
		if (write(sync[1], "x", 1) != 1 || waitpid(kid, &st, 0) != kid)
			return 1;
		check(WIFEXITED(st) && !WEXITSTATUS(st), "child", "status 0x%x", st);
	}
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
