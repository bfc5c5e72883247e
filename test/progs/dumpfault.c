/*
 * dumpfault MODE PID ...: /proc/PID/dump under interference (t_faults.sh).
 * Prints one result line; exit 0 unless something could not be set up.
 *   cont PID        open the dump, SIGCONT the task, wait 200 ms, read
 *                   twice: "cont read1=R read2=R" (R: ok:BYTES or ENAME)
 *   kill PID OUT    open the dump, SIGKILL the task, wait until it is a
 *                   zombie or gone, read everything into OUT:
 *                   "kill ok bytes=N" or "kill read failed: ENAME after N"
 *   multi PID N     N opens first, then N threads read one each in
 *                   parallel: "multi n=N bytes=B identical" or "... DIFFER"
 *   pread PID       one open, two threads pread alternating chunks (odd
 *                   sizes, three rounds) into one buffer, compared with a
 *                   separate plain read: "pread bytes=B identical"/"DIFFER"
 *   hold PID        open the dump, print "held", sleep until killed
 *   holdpath PID    open the dump O_PATH (no file operations, no module
 *                   reference through them), print "held path", and on
 *                   SIGUSR1 open it again through /proc/self/fd and read
 *                   it: "reopen ok bytes=N" or "reopen failed: ENAME";
 *                   then sleep until killed
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static char path[64];

/* Read fd to EOF into a malloc'ed buffer; returns -errno on failure. */
static long slurp(int fd, unsigned char **out)
{
	size_t cap = 1 << 20, len = 0;
	unsigned char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		ssize_t n = read(fd, b + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(b);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = b;
	return (long)len;
}

static int open_dump(void)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		say("open failed: %s\n", errname(errno));
		exit(2);
	}
	return fd;
}

struct reader {
	int fd;
	long len;
	unsigned char *buf;
};

static void *read_one(void *arg)
{
	struct reader *r = arg;
	r->len = slurp(r->fd, &r->buf);
	return NULL;
}

struct preader {
	int fd, parity;
	size_t chunk, size;
	unsigned char *buf;
	int err;
};

static void *pread_half(void *arg)
{
	struct preader *r = arg;
	for (size_t i = (size_t)r->parity; i * r->chunk < r->size; i += 2) {
		size_t off = i * r->chunk, want = r->chunk;
		if (off + want > r->size)
			want = r->size - off;
		while (want) {
			ssize_t n = pread(r->fd, r->buf + off, want, (off_t)off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				r->err = n < 0 ? errno : EIO;
				return NULL;
			}
			off += (size_t)n;
			want -= (size_t)n;
		}
	}
	return NULL;
}

static const char *res(long n, char *buf, size_t sz)
{
	if (n >= 0)
		snprintf(buf, sz, "ok:%ld", n);
	else
		snprintf(buf, sz, "%s", errname((int)-n));
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		outf(2, "usage: dumpfault cont|kill|multi|pread|hold|holdpath PID ...\n");
		return 64;
	}
	const char *m = argv[1];
	int pid = atoi(argv[2]);
	snprintf(path, sizeof(path), "/proc/%d/dump", pid);

	if (!strcmp(m, "cont")) {
		int fd = open_dump();
		char a[32], b[32], buf[4096];
		kill(pid, SIGCONT);
		msleep(200);
		ssize_t n1 = read(fd, buf, sizeof(buf));
		long r1 = n1 < 0 ? -errno : n1;
		ssize_t n2 = pread(fd, buf, sizeof(buf), 0);
		long r2 = n2 < 0 ? -errno : n2;
		say("cont read1=%s read2=%s\n", res(r1, a, sizeof(a)), res(r2, b, sizeof(b)));
		return 0;
	}
	if (!strcmp(m, "kill") && argc == 4) {
		int fd = open_dump();
		unsigned char *b;
		kill(pid, SIGKILL);
		for (int i = 0; i < 500; i++) {
			char s = task_state(pid);
			if (!s || s == 'Z' || s == 'X')
				break;
			msleep(10);
		}
		long n = slurp(fd, &b);
		if (n < 0) {
			say("kill read failed: %s\n", errname((int)-n));
			return 0;
		}
		int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (out < 0 || write(out, b, (size_t)n) != n || close(out)) {
			say("cannot write %s\n", argv[3]);
			return 2;
		}
		say("kill ok bytes=%ld\n", n);
		return 0;
	}
	if (!strcmp(m, "multi") && argc == 4) {
		int n = atoi(argv[3]);
		if (n < 2 || n > 64)
			return 64;
		struct reader r[64];
		pthread_t t[64];
		for (int i = 0; i < n; i++)
			r[i].fd = open_dump();
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, read_one, &r[i])) {
				say("pthread_create failed\n");
				return 2;
			}
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		int same = 1;
		for (int i = 0; i < n; i++) {
			if (r[i].len < 0) {
				say("multi reader %d failed: %s\n", i, errname((int)-r[i].len));
				return 0;
			}
			same &= r[i].len == r[0].len && !memcmp(r[i].buf, r[0].buf, (size_t)r[0].len);
		}
		say("multi n=%d bytes=%ld %s\n", n, r[0].len, same ? "identical" : "DIFFER");
		return 0;
	}
	if (!strcmp(m, "pread")) {
		unsigned char *ref;
		int rfd = open_dump();
		long size = slurp(rfd, &ref);
		close(rfd);
		if (size <= 0) {
			say("pread reference read failed: %s\n", size < 0 ? errname((int)-size) : "empty");
			return 0;
		}
		int fd = open_dump();
		static const size_t chunks[] = { 4096, 5003, 65536 + 17 };
		for (int round = 0; round < 3; round++) {
			unsigned char *buf = calloc(1, (size_t)size);
			struct preader a = { fd, 0, chunks[round], (size_t)size, buf, 0 };
			struct preader b = a;
			b.parity = 1;
			pthread_t ta, tb;
			if (!buf || pthread_create(&ta, NULL, pread_half, &a) ||
			    pthread_create(&tb, NULL, pread_half, &b)) {
				say("setup failed\n");
				return 2;
			}
			pthread_join(ta, NULL);
			pthread_join(tb, NULL);
			if (a.err || b.err) {
				say("pread failed: %s (round %d)\n", errname(a.err ? a.err : b.err), round);
				return 0;
			}
			if (memcmp(buf, ref, (size_t)size)) {
				say("pread bytes=%ld DIFFER (round %d, chunk %zu)\n", size, round, chunks[round]);
				return 0;
			}
			free(buf);
		}
		say("pread bytes=%ld identical\n", size);
		return 0;
	}
	if (!strcmp(m, "hold")) {
		open_dump();
		say("held\n");
		for (;;)
			pause();
	}
	if (!strcmp(m, "holdpath")) {
		char fdpath[64];
		unsigned char *img;
		sigset_t set;
		long n;
		int pfd, fd, sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		pfd = open(path, O_PATH | O_CLOEXEC);
		if (pfd < 0) {
			say("open O_PATH failed: %s\n", errname(errno));
			return 1;
		}
		say("held path\n");
		sigwait(&set, &sig);
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", pfd);
		fd = open(fdpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("reopen failed: %s\n", errname(errno));
		} else {
			n = slurp(fd, &img);
			if (n < 0)
				say("reopen failed: %s\n", errname((int)-n));
			else
				say("reopen ok bytes=%ld\n", n);
			close(fd);
		}
		for (;;)
			pause();
	}
	outf(2, "dumpfault: bad mode %s\n", m);
	return 64;
}
