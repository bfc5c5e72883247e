/*
 * memshare: a memfd both open as an fd and mapped shared, across dump +
 * restore (test/guest/fds/t_memfd_mapped.sh).
 *
 * The parent creates the memfd "shared buf" (MFD_ALLOW_SEALING), writes a
 * pattern to its 3 pages, maps it MAP_SHARED read-write, sets its mode
 * 0640 and the seals F_SEAL_SHRINK | F_SEAL_GROW, writes "mapped" through
 * the mapping; a child (forked after, with the fd and the mapping) maps it
 * a second time read-only.  Prints "fd N map ADDR child PID", "ready",
 * waits until the file "restored" appears, then checks (ok/BAD), in both:
 * the pattern and "mapped" are there; the mapping's inode (/proc/self/maps)
 * is the fd's; name, mode, seals, size.  Then the parent writes through the
 * fd and sees it in its mapping, writes through the mapping and reads it
 * through the fd, and the child sees both in its own mapping.  Prints
 * "done ok" and exits 0 if all passed.  "memshare rdonly": the parent's
 * mapping made read-only (mprotect: it may become writable again) and its
 * fd opened again read-only in its place (through /proc/self/fd) before
 * the fork: checked after, the fd is read-only and the mapping can be
 * made writable again; the parent writes through the mapping, not the fd.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define COMMON_CHECK
#define COMMON_MAP_INO
#include "common.h"

#define SIZE	(3 * 4096)

static void same(const char *who, int fd, char *map)
{
	struct stat st;
	char link[256], path[64];
	ssize_t n;
	int i, good = 1, seals;

	for (i = 8; i < SIZE; i++)
		good &= map[i] == (char)('a' + i % 26);
	check(good && !memcmp(map, "mapped", 6), who, "contents after the restore%s", good ? "" : ": pattern lost");
	fstat(fd, &st);
	check(map_ino(map) == st.st_ino, who, "mapping inode %lu, fd inode %lu", map_ino(map),
	      (unsigned long)st.st_ino);
	check((st.st_mode & 07777) == 0640 && st.st_size == SIZE, who, "mode 0%o size %lld",
	      st.st_mode & 07777, (long long)st.st_size);
	seals = fcntl(fd, F_GET_SEALS);
	check(seals == (F_SEAL_SHRINK | F_SEAL_GROW), who, "seals 0x%x", seals);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	check(!strcmp(link, "/memfd:shared buf (deleted)"), who, "name %s", link);
}

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/*
 * "memshare fwseal": F_SEAL_FUTURE_WRITE added after the mapping (a dump must
 * refuse it).  "memshare rdlock": rdonly, and a POSIX read lock on bytes
 * 0-4095 through the read-only fd (a dump must refuse it).
 */
/*
 * "memshare mapout": the memfd mapped shared by the parent and, after a
 * fork, by its child, neither holding an fd of it; "memshare anonout": the
 * same with shared anonymous memory; "memshare heldout": the child holds
 * the memfd as fd 3 and does not map it, the parent maps it and holds no
 * fd.  Prints "map ADDR child PID" and "ready", and both wait: a dump of
 * the child alone must refuse it (the parent, outside that tree, maps the
 * object too).
 */
static int map_outside(const char *mode)
{
	int anon = !strcmp(mode, "anonout"), held = !strcmp(mode, "heldout");
	int fd = anon ? -1 : memfd_create("shared buf", 0);
	char *map;
	pid_t kid;

	if (!anon && (fd < 0 || (held && fd != 3) || ftruncate(fd, SIZE)))
		return 1;
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | (anon ? MAP_ANONYMOUS : 0), fd, 0);
	if (map == MAP_FAILED)
		return 1;
	memcpy(map, "outside", 7);
	if (held)
		munmap(map, SIZE);	/* mapped again after the fork, by the parent alone */
	else if (!anon && close(fd))
		return 1;
	kid = fork();
	if (kid == 0)
		for (;;)
			pause();
	if (held) {
		map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED || close(fd))
			return 1;
	}
	say("map %p child %d\nready\n", (void *)map, kid);
	for (;;)
		pause();
}

static int clone_vm_child(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/*
 * "memshare clonevm": a child made with clone(CLONE_VM) (not a thread, not
 * vfork) shares the parent's memory.  Prints "child PID" and "ready" and
 * waits: a dump of the parent (and so of both) must refuse it.
 */
static int clone_vm(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t kid = clone(clone_vm_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);

	if (kid < 0)
		return 1;
	say("child %d\nready\n", kid);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int fwseal = argc > 1 && !strcmp(argv[1], "fwseal");
	int rdlock = argc > 1 && !strcmp(argv[1], "rdlock");
	int rdonly = rdlock || (argc > 1 && !strcmp(argv[1], "rdonly"));
	int fd, i, st, sync[2], back[2];
	char *map, *ro, buf[16], c;
	pid_t kid;

	if (argc > 1 && (!strcmp(argv[1], "mapout") || !strcmp(argv[1], "anonout") ||
			 !strcmp(argv[1], "heldout")))
		return map_outside(argv[1]);
	if (argc > 1 && !strcmp(argv[1], "clonevm"))
		return clone_vm();
	fd = memfd_create("shared buf", MFD_ALLOW_SEALING);
	if (fd < 0 || pipe(sync) || pipe(back))
		return 1;
	for (i = 0; i < SIZE; i++) {
		c = 'a' + i % 26;
		if (write(fd, &c, 1) != 1)
			return 1;
	}
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || fchmod(fd, 0640) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) ||
	    (fwseal && fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	memcpy(map, "mapped", 6);
	if (rdonly) {
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = open(path, O_RDONLY);
		if (r < 0 || dup2(r, fd) != fd || close(r) || mprotect(map, SIZE, PROT_READ)) {
			say("BAD setup: read-only: %s\n", strerror(errno));
			return 1;
		}
	}
	if (rdlock) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 4096 };

		if (fcntl(fd, F_SETLK, &fl)) {
			say("BAD setup: lock: %s\n", strerror(errno));
			return 1;
		}
	}
	kid = fork();
	if (kid == 0) {
		ro = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
		if (ro == MAP_FAILED)
			_exit(1);
		while (access("restored", F_OK))
			usleep(50000);
		same("child", fd, ro);
		if (write(back[1], "x", 1) != 1)
			_exit(1);
		/* the parent's writes, once it says so */
		if (read(sync[0], &c, 1) != 1)
			_exit(1);
		check(!memcmp(ro + 4096, "via fd", 6) && !memcmp(ro + 8192, "via map", 7), "child sees",
		      "'%.6s' '%.7s' in its own mapping", ro + 4096, ro + 8192);
		_exit(bad);
	}
	say("fd %d map %p child %d\nready\n", fd, (void *)map, kid);
	while (access("restored", F_OK))
		usleep(50000);
	same("parent", fd, map);
	if (read(back[0], &c, 1) != 1)	/* the child has checked the contents */
		return 1;
	if (rdonly) {
		check((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "rdonly", "fd flags %#x",
		      fcntl(fd, F_GETFL));
		check(!mprotect(map, SIZE, PROT_READ | PROT_WRITE), "rdonly",
		      "mapping made writable again: %s", strerror(errno));
		memcpy(map + 4096, "via fd", 6);
	} else if (pwrite(fd, "via fd", 6, 4096) != 6) {
		say("BAD pwrite: %s\n", strerror(errno));
	}
	check(!memcmp(map + 4096, "via fd", 6), "fd to map", "'%.6s' in the mapping", map + 4096);
	memcpy(map + 8192, "via map", 7);
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, 7, 8192) != 7)
		say("BAD pread: %s\n", strerror(errno));
	check(!memcmp(buf, "via map", 7), "map to fd", "'%s' read through the fd", buf);
	if (write(sync[1], "x", 1) != 1 || waitpid(kid, &st, 0) != kid)
		return 1;
	check(WIFEXITED(st) && !WEXITSTATUS(st), "child", "status 0x%x", st);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
