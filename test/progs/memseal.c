/*
 * memseal: sealed memfds that the task has only mapped (all its fds
 * closed), across dump + restore (test/guest/fds/t_memfd_seals.sh).
 *
 * "memseal": three memfds of 3 pages each, a pattern written through the
 * fd, then the fd closed:
 *   "sealed"    mapped shared read-write, then F_SEAL_SHRINK | F_SEAL_GROW |
 *               F_SEAL_SEAL; "mapped" written through the mapping;
 *   "fwsealed"  F_SEAL_FUTURE_WRITE, then mapped shared read-only;
 *   "unsealed"  made with MFD_ALLOW_SEALING, no seal, mapped read-write.
 * "memseal wseal": one memfd "wsealed", F_SEAL_WRITE | F_SEAL_SEAL, then
 *   mapped shared read-only (Linux 6.7+).
 * "memseal fwafter": "fwafter" mapped shared read-write, then sealed
 *   F_SEAL_FUTURE_WRITE (a dump must refuse it).
 * "memseal fwfd": "fwfd", F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK, then mapped
 *   shared read-only, its fd kept open: imgcr restore recreates it with its
 *   seals and the loader maps that memfd (--imgcr-shmfd); checked also
 *   through the fd (one memfd, same seals).
 * Prints "NAME ADDR" per mapping and "ready", waits until the file
 * "restored" appears, then checks (ok/BAD) each by reopening it through
 * /proc/self/map_files/: F_GET_SEALS, what the seals forbid (ftruncate,
 * F_ADD_SEALS, mprotect(PROT_WRITE), a writable shared mmap) fails with
 * EPERM/EACCES and what they allow works, the contents are intact.
 * Prints "reopened NAME FD" for each fd it keeps open, "checked", waits for
 * the file "seen" (the test looks at /proc/PID/fdinfo), prints "done ok"
 * and exits 0 if all passed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#define COMMON_CHECK
#include "common.h"

#define SIZE	(3 * 4096)

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

struct mfd {
	const char *name;
	unsigned int seals;	/* added after the mapping, or before if @after */
	int prot;
	int after;		/* mapped after the seals */
	char *map;
	int keep;		/* keeps its fd open (restored by imgcr restore) */
	int fd;
};

static char *make(struct mfd *m)
{
	int fd = memfd_create(m->name, MFD_ALLOW_SEALING), i;
	char c;

	if (fd < 0)
		return NULL;
	for (i = 0; i < SIZE; i++) {
		c = 'a' + i % 26;
		if (write(fd, &c, 1) != 1)
			return NULL;
	}
	if (m->after && m->seals && fcntl(fd, F_ADD_SEALS, m->seals))
		return NULL;
	if (m->seals & F_SEAL_WRITE) {
		/* before 6.7 a shared mapping under F_SEAL_WRITE needs a read-only file */
		char path[64];
		int ro;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY);
		m->map = ro < 0 ? MAP_FAILED : mmap(NULL, SIZE, m->prot, MAP_SHARED, ro, 0);
		if (ro >= 0)
			close(ro);
	} else {
		m->map = mmap(NULL, SIZE, m->prot, MAP_SHARED, fd, 0);
	}
	if (m->map == MAP_FAILED)
		return NULL;
	if (!m->after && m->seals && fcntl(fd, F_ADD_SEALS, m->seals))
		return NULL;
	if (m->prot & PROT_WRITE)
		memcpy(m->map, "mapped", 6);
	if (m->keep)
		m->fd = fd;
	else
		close(fd);
	return m->map;
}

/* the fd of the object mapped at @m->map, reopened through map_files */
static int reopen(struct mfd *m, int flags)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)m->map,
		 (unsigned long)m->map + SIZE);
	return open(path, flags);
}

static void verify(struct mfd *m)
{
	int fd = reopen(m, O_RDWR), seals, i, good = 1, r;
	struct stat st;
	char link[128], path[64];
	ssize_t n;
	void *p;

	check(fd >= 0, m->name, "reopened through map_files: %s", fd < 0 ? strerror(errno) : "yes");
	if (fd < 0)
		return;
	for (i = 8; i < SIZE; i++)
		good &= m->map[i] == (char)('a' + i % 26);
	check(good && (!(m->prot & PROT_WRITE) || !memcmp(m->map, "mapped", 6)), m->name,
	      "contents after the restore%s", good ? "" : ": pattern lost");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	check(!strncmp(link, "/memfd:", 7) && !strncmp(link + 7, m->name, strlen(m->name)), m->name,
	      "name %s", link);
	seals = fcntl(fd, F_GET_SEALS);
	check(seals == (int)m->seals, m->name, "seals 0x%x (expected 0x%x)", seals, m->seals);
	fstat(fd, &st);
	check(st.st_size == SIZE, m->name, "size %lld", (long long)st.st_size);
	if (m->keep) {
		struct stat kst;

		check(!fstat(m->fd, &kst) && kst.st_ino == st.st_ino, m->name,
		      "its fd %d and its mapping one memfd (inodes %lu, %lu)", m->fd,
		      (unsigned long)kst.st_ino, (unsigned long)st.st_ino);
		check(fcntl(m->fd, F_GET_SEALS) == (int)m->seals, m->name, "seals through its own fd 0x%x",
		      fcntl(m->fd, F_GET_SEALS));
	}

	if (m->seals & F_SEAL_SHRINK) {
		r = ftruncate(fd, SIZE - 4096);
		check(r && errno == EPERM, m->name, "shrink under F_SEAL_SHRINK: %s", r ? strerror(errno) : "succeeded");
	}
	if (m->seals & F_SEAL_GROW) {
		r = ftruncate(fd, SIZE + 4096);
		check(r && errno == EPERM, m->name, "grow under F_SEAL_GROW: %s", r ? strerror(errno) : "succeeded");
	}
	if (m->seals & F_SEAL_SEAL) {
		r = fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE);
		check(r && errno == EPERM, m->name, "F_ADD_SEALS under F_SEAL_SEAL: %s",
		      r ? strerror(errno) : "succeeded");
	}
	if (m->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) {
		r = mprotect(m->map, SIZE, PROT_READ | PROT_WRITE);
		check(r && errno == EACCES, m->name, "mprotect(PROT_WRITE) under a write seal: %s",
		      r ? strerror(errno) : "succeeded");
		p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		check(p == MAP_FAILED && errno == EPERM, m->name, "writable shared mmap under a write seal: %s",
		      p == MAP_FAILED ? strerror(errno) : "succeeded");
		r = pwrite(fd, "x", 1, 0);
		check(r < 0 && errno == EPERM, m->name, "pwrite under a write seal: %s",
		      r < 0 ? strerror(errno) : "succeeded");
	}
	if (!m->seals) {
		/* no F_SEAL_SEAL: seals may still be added (then the object is frozen) */
		r = fcntl(fd, F_ADD_SEALS, F_SEAL_GROW);
		check(!r, m->name, "F_ADD_SEALS(F_SEAL_GROW) without F_SEAL_SEAL: %s", r ? strerror(errno) : "ok");
	}
	if (m->prot & PROT_WRITE) {
		memcpy(m->map + 4096, "via map", 7);
		memset(link, 0, sizeof(link));
		r = pread(fd, link, 7, 4096);
		check(r == 7 && !memcmp(link, "via map", 7), m->name, "a write through the mapping read through the fd");
	}
	say("reopened %s %d\n", m->name, fd);
}

int main(int argc, char **argv)
{
	struct mfd all[] = {
		{ "sealed", F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, PROT_READ | PROT_WRITE, 0, NULL, 0, -1 },
		{ "fwsealed", F_SEAL_FUTURE_WRITE, PROT_READ, 1, NULL, 0, -1 },
		{ "unsealed", 0, PROT_READ | PROT_WRITE, 0, NULL, 0, -1 },
	};
	struct mfd wseal[] = { { "wsealed", F_SEAL_WRITE | F_SEAL_SEAL, PROT_READ, 1, NULL, 0, -1 } };
	struct mfd fwafter[] = { { "fwafter", F_SEAL_FUTURE_WRITE, PROT_READ | PROT_WRITE, 0, NULL, 0, -1 } };
	struct mfd fwfd[] = {
		{ "fwfd", F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK, PROT_READ, 1, NULL, 1, -1 },
	};
	struct mfd *m = all;
	size_t n = 3, i;

	if (argc > 1 && !strcmp(argv[1], "wseal")) {
		m = wseal;
		n = 1;
	} else if (argc > 1 && !strcmp(argv[1], "fwafter")) {
		m = fwafter;
		n = 1;
	} else if (argc > 1 && !strcmp(argv[1], "fwfd")) {
		m = fwfd;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		if (!make(&m[i])) {
			say("BAD setup %s: %s\n", m[i].name, strerror(errno));
			return 1;
		}
		say("%s %p\n", m[i].name, (void *)m[i].map);
	}
	say("ready\n");
	while (access("restored", F_OK))
		usleep(50000);
	for (i = 0; i < n; i++)
		verify(&m[i]);
	say("checked\n");
	while (access("seen", F_OK))
		usleep(50000);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
