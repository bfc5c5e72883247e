/*
 * ghost: deleted files still open, across dump + restore.
 *
 *   ghost        in the cwd: a.dat (5000 bytes, pattern 'a'), opened twice
 *                (fd A O_RDWR at offset 1234, shared with a forked child;
 *                fd A2 O_RDONLY at offset 100, another description of the
 *                same inode); s.dat, a 64 MiB sparse file with "HEAD" at 0,
 *                "MIDDLE" at 32 MiB and "TAIL" at its end, O_RDWR|O_APPEND;
 *                b.dat, 900 KiB of pattern 'b', mode 0640, offset 4096.
 *                All unlinked.  Prints "fds A=.. A2=.. S=.. B=.. child=.."
 *                and "ready", then waits until the file "restored" appears
 *                and checks, printing ok/BAD:
 *                  every fd: st_nlink 0, the same data at the same offset,
 *                  the same /proc/self/fd link ("DIR/a.dat (deleted)",
 *                  even when another a.dat took the name meanwhile)
 *                  A and A2 one inode (fstat), their offsets kept
 *                  the child reads 10 bytes through A: the parent's offset
 *                  moves by 10 (one description)
 *                  s.dat: size, the marks, still sparse (st_blocks), O_APPEND
 *                  b.dat: mode 0640, mtime, its 900 KiB
 *                "done ok" if all passed (exit 0).
 *   ghost big N  one deleted file of N KiB of data open; prints "fd N",
 *                "ready", then "tick I" every 100 ms for ever (for the
 *                refusal test).
 *   ghost link   the same with h1.dat, which has a second name h2.dat,
 *                open through its deleted name h1.dat.
 *   ghost dir    the same with the directory dd, removed.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

static char pat(char c, long long off)
{
	return (char)(c + off % 23);
}

static int make(const char *name, char c, long long len, int flags, mode_t mode)
{
	char buf[4096];
	long long off;
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600), i;

	if (fd < 0)
		return -1;
	for (off = 0; off < len; off += sizeof(buf)) {
		for (i = 0; i < (int)sizeof(buf); i++)
			buf[i] = pat(c, off + i);
		if (write(fd, buf, len - off < (long long)sizeof(buf) ? (size_t)(len - off) : sizeof(buf)) < 0)
			return -1;
	}
	fchmod(fd, mode);
	close(fd);
	return open(name, flags);
}

/* read N bytes at the current offset of fd and compare with pattern c from off */
static void expect_data(int fd, char c, long long off, int n, const char *what)
{
	char buf[64];
	int i, ok;
	ssize_t got = read(fd, buf, n);

	ok = got == n;
	for (i = 0; ok && i < n; i++)
		ok = buf[i] == pat(c, off + i);
	check(ok, what, "read %zd bytes at %lld", got, off);
}

/* The /proc/self/fd link of @fd into @out (PATH_MAX). */
static void fd_link(int fd, char *out)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, out, PATH_MAX - 1);
	out[n > 0 ? n : 0] = 0;
}

static int big(long long kib, int hardlink)
{
	const char *name = hardlink ? "h1.dat" : "big.dat";
	int fd = make(name, 'x', kib * 1024, O_RDONLY, 0600), i;

	if (fd < 0 || (hardlink && link("h1.dat", "h2.dat")) || unlink(name))
		return 1;
	say("fd %d\nready\n", fd);
	for (i = 0;; i++) {
		say("tick %d\n", i);
		msleep(100);
	}
}

int main(int argc, char **argv)
{
	int a, a2, s, b, st, i;
	long long mid = 32LL << 20, ssize = 64LL << 20;
	struct stat sa, sa2, ss, sb, sb0;
	char buf[16];
	pid_t kid;

	if (argc == 3 && !strcmp(argv[1], "big"))
		return big(atoll(argv[2]), 0);
	if (argc == 2 && !strcmp(argv[1], "link"))
		return big(1, 1);
	if (argc == 2 && !strcmp(argv[1], "dir")) {
		b = mkdir("dd", 0700) ? -1 : open("dd", O_RDONLY | O_DIRECTORY);
		if (b < 0 || rmdir("dd"))
			return 1;
		say("fd %d\nready\n", b);
		for (i = 0;; i++) {
			say("tick %d\n", i);
			msleep(100);
		}
	}
	a = make("a.dat", 'a', 5000, O_RDWR, 0600);
	a2 = open("a.dat", O_RDONLY);
	b = make("b.dat", 'b', 900 * 1024, O_RDONLY, 0640);
	s = open("s.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	/* O_APPEND after the writes: pwrite appends on an O_APPEND file */
	if (a < 0 || a2 < 0 || b < 0 || s < 0 || ftruncate(s, ssize) ||
	    pwrite(s, "HEAD", 4, 0) != 4 || pwrite(s, "MIDDLE", 6, mid) != 6 ||
	    pwrite(s, "TAIL", 4, ssize - 4) != 4 || fcntl(s, F_SETFL, O_APPEND)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	lseek(a, 1234, SEEK_SET);
	lseek(a2, 100, SEEK_SET);
	lseek(b, 4096, SEEK_SET);
	lseek(s, mid, SEEK_SET);
	unlink("a.dat");
	unlink("b.dat");
	fstat(b, &sb0);
	unlink("s.dat");
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		wait_file("restored");
		expect_data(a, 'a', 1234, 10, "child A");
		return bad;
	}
	{
		int fds[4] = { a, a2, s, b };
		char links[4][PATH_MAX];

		for (i = 0; i < 4; i++)
			fd_link(fds[i], links[i]);
		say("fds A=%d A2=%d S=%d B=%d child=%d\n", a, a2, s, b, kid);
		say("ready\n");
		wait_file("restored");
		for (i = 0; i < 4; i++) {
			char now[PATH_MAX];

			fd_link(fds[i], now);
			check(!strcmp(now, links[i]), "fd name", "fd %d: '%s', was '%s'", fds[i], now,
			      links[i]);
		}
	}

	waitpid(kid, &st, 0);
	check(WIFEXITED(st) && !WEXITSTATUS(st), "child", "status 0x%x", st);
	check(lseek(a, 0, SEEK_CUR) == 1244, "A shared", "offset %lld after the child read 10 bytes (want 1244)",
	      (long long)lseek(a, 0, SEEK_CUR));
	expect_data(a, 'a', 1244, 20, "A data");
	check(lseek(a2, 0, SEEK_CUR) == 100, "A2 offset", "%lld", (long long)lseek(a2, 0, SEEK_CUR));
	expect_data(a2, 'a', 100, 20, "A2 data");
	fstat(a, &sa);
	fstat(a2, &sa2);
	check(sa.st_nlink == 0 && sa2.st_nlink == 0, "A deleted", "nlink %lu %lu",
	      (unsigned long)sa.st_nlink, (unsigned long)sa2.st_nlink);
	check(sa.st_ino == sa2.st_ino && sa.st_dev == sa2.st_dev, "A one inode",
	      "A ino %lu, A2 ino %lu", (unsigned long)sa.st_ino, (unsigned long)sa2.st_ino);
	check(sa.st_size == 5000, "A size", "%lld", (long long)sa.st_size);
	/* a write through A is read through A2: one inode */
	check(pwrite(a, "ZZ", 2, 100) == 2 && pread(a2, buf, 2, 100) == 2 && !memcmp(buf, "ZZ", 2),
	      "A write seen by A2", "%.2s", buf);

	fstat(s, &ss);
	check(ss.st_nlink == 0 && ss.st_size == ssize, "S size", "nlink %lu size %lld",
	      (unsigned long)ss.st_nlink, (long long)ss.st_size);
	check(ss.st_blocks < 4096, "S sparse", "%lld blocks of 512 bytes for a 64 MiB file",
	      (long long)ss.st_blocks);
	check(lseek(s, 0, SEEK_CUR) == mid, "S offset", "%lld", (long long)lseek(s, 0, SEEK_CUR));
	check(pread(s, buf, 4, 0) == 4 && !memcmp(buf, "HEAD", 4), "S head", "%.4s", buf);
	check(pread(s, buf, 6, mid) == 6 && !memcmp(buf, "MIDDLE", 6), "S middle", "%.6s", buf);
	check(pread(s, buf, 4, ssize - 4) == 4 && !memcmp(buf, "TAIL", 4), "S tail", "%.4s", buf);
	check(pread(s, buf, 8, 4096) == 8 && !memcmp(buf, "\0\0\0\0\0\0\0\0", 8), "S hole", "zeros");
	check(fcntl(s, F_GETFL) & O_APPEND, "S O_APPEND", "flags 0%o", fcntl(s, F_GETFL));
	check(write(s, "END", 3) == 3 && lseek(s, 0, SEEK_CUR) == ssize + 3, "S append",
	      "offset %lld after a write", (long long)lseek(s, 0, SEEK_CUR));

	fstat(b, &sb);
	check(sb.st_nlink == 0 && (sb.st_mode & 07777) == 0640 && sb.st_size == 900 * 1024,
	      "B stat", "nlink %lu mode 0%o size %lld", (unsigned long)sb.st_nlink,
	      sb.st_mode & 07777, (long long)sb.st_size);
	check(sb.st_mtim.tv_sec == sb0.st_mtim.tv_sec && sb.st_mtim.tv_nsec == sb0.st_mtim.tv_nsec,
	      "B mtime", "%lld.%09ld (was %lld.%09ld)", (long long)sb.st_mtim.tv_sec,
	      sb.st_mtim.tv_nsec, (long long)sb0.st_mtim.tv_sec, sb0.st_mtim.tv_nsec);
	check(lseek(b, 0, SEEK_CUR) == 4096, "B offset", "%lld", (long long)lseek(b, 0, SEEK_CUR));
	for (i = 0; i < 900 * 1024; i += 4096 * 7) {
		char c;

		if (pread(b, &c, 1, i) != 1 || c != pat('b', i)) {
			check(0, "B data", "byte %d", i);
			break;
		}
	}
	if (i >= 900 * 1024)
		check(1, "B data", "sampled every 28 KiB");
	expect_data(b, 'b', 4096, 32, "B read");
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
