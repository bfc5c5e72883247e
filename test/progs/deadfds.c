/*
 * deadfds MODE: fds whose object is gone or no longer named by its number,
 * across dump + restore (test/guest/fds/t_fds_dead.sh).  Each mode sets
 * up, checks what it set up ("ok"/"BAD" lines), prints its fd numbers and
 * "ready", waits until the file "restored" appears, checks again, and
 * prints "done ok" (exit 0) if every check passed.
 *
 *   pidfd     two pidfds to a child that has exited and been reaped (one
 *             PIDFD_NONBLOCK): fdinfo Pid -1, the flags, poll readable,
 *             waitid(P_PIDFD) ECHILD, pidfd_send_signal ESRCH.
 *             "fds pfd=N pnb=N"
 *   epoll     an epoll with two items whose numbers no longer name their
 *             files: pipe A's read end added as fd a, then dup'ed to b,
 *             closed, and an eventfd opened at a; pipe B's read end added
 *             as fd c, then held only by a child (at c, without the epoll)
 *             and closed in the parent.  Checks: MOD of a gives ENOENT
 *             (the eventfd is not watched), DEL of b ENOENT (A is watched
 *             as a, not b), MOD of c EBADF; after the restore also a byte
 *             written to each pipe is reported with the items' data.
 *             "fds efd=N a=N b=N c=N child=PID"
 *   epollout  an epoll item whose file is held only by a process outside
 *             the tree (a grandchild, orphaned): "fds efd=N a=N out=PID";
 *             the dump must refuse it.
 *   inotify   an inotify instance watching w/ (IN_CREATE, wd 1), gone.dat
 *             (IN_MODIFY|IN_ATTRIB, wd 2), which is then deleted while
 *             held open at fd g, and keep.dat (IN_OPEN, wd 3); the
 *             IN_ATTRIB of the unlink read.  After the restore: nothing
 *             queued, watch 2 on g's inode with its mask (fdinfo), a write
 *             and an fchmod on g reported as IN_MODIFY and IN_ATTRIB of
 *             wd 2, w/new as IN_CREATE of wd 1, an open of keep.dat as
 *             IN_OPEN of wd 3.  "fds ifd=N g=N"
 *   inotifyout the same deleted file held only by a process outside the
 *             tree (orphaned grandchild): "fds ifd=N out=PID"; the dump
 *             must refuse it.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int bad;

#define CHECK(cond, ...) do { \
	if (cond) { say("ok " __VA_ARGS__); say("\n"); } \
	else { bad = 1; say("BAD " __VA_ARGS__); say(" (errno %s)\n", strerror(errno)); } \
} while (0)

static void wait_restored(void)
{
	struct stat st;

	while (stat("restored", &st))
		usleep(50000);
}

/* the "Pid:" of /proc/self/fdinfo/FD, or -9 */
static long fdinfo_pid(int fd)
{
	char p[64], buf[1024], *s;
	ssize_t n;
	int f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = open(p, O_RDONLY);
	if (f < 0)
		return -9;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -9;
	buf[n] = 0;
	s = strstr(buf, "\nPid:");
	return s ? strtol(s + 5, NULL, 10) : -9;
}

static void check_pidfd(int fd, int nonblock)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	siginfo_t si;
	int fl = fcntl(fd, F_GETFL);

	CHECK(fl >= 0 && !!(fl & O_NONBLOCK) == nonblock, "pidfd %d: O_NONBLOCK %d (flags 0%o)", fd,
	      nonblock, fl);
	CHECK(fdinfo_pid(fd) == -1, "pidfd %d: fdinfo Pid -1 (%ld)", fd, fdinfo_pid(fd));
	CHECK(poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN), "pidfd %d: poll readable (revents 0x%x)",
	      fd, pf.revents);
	errno = 0;
	CHECK(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG) < 0 && errno == ECHILD,
	      "pidfd %d: waitid(P_PIDFD) ECHILD", fd);
	errno = 0;
	CHECK(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH,
	      "pidfd %d: pidfd_send_signal ESRCH", fd);
}

static int mode_pidfd(void)
{
	int pfd, pnb;
	pid_t c = fork();

	if (c < 0)
		return 1;
	if (!c)
		_exit(0);
	pfd = syscall(SYS_pidfd_open, c, 0);
	pnb = syscall(SYS_pidfd_open, c, O_NONBLOCK);
	if (pfd < 0 || pnb < 0 || waitpid(c, NULL, 0) != c) {
		say("BAD setup: pidfd_open: %s\n", strerror(errno));
		return 1;
	}
	check_pidfd(pfd, 0);
	check_pidfd(pnb, 1);
	say("fds pfd=%d pnb=%d\n", pfd, pnb);
	say("ready\n");
	wait_restored();
	check_pidfd(pfd, 0);
	check_pidfd(pnb, 1);
	return bad;
}

static void check_epoll(int efd, int a, int b, int c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	errno = 0;
	CHECK(epoll_ctl(efd, EPOLL_CTL_MOD, a, &ev) < 0 && errno == ENOENT,
	      "epoll MOD of fd %d (an eventfd now): ENOENT", a);
	errno = 0;
	CHECK(epoll_ctl(efd, EPOLL_CTL_DEL, b, NULL) < 0 && errno == ENOENT,
	      "epoll DEL of fd %d (pipe A, watched as fd %d): ENOENT", b, a);
	errno = 0;
	CHECK(epoll_ctl(efd, EPOLL_CTL_MOD, c, &ev) < 0 && errno == EBADF,
	      "epoll MOD of fd %d (closed): EBADF", c);
}

static int mode_epoll(void)
{
	int pa[2], pb[2], efd, a, b, c, x, i, n, seen = 0;
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	pid_t child;

	efd = epoll_create1(0);
	if (efd < 0 || pipe(pa) || pipe(pb))
		return 1;
	a = pa[0];
	c = pb[0];
	ev.data.u64 = 0xa1;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, a, &ev))
		return 1;
	ev.data.u64 = 0xb2;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, c, &ev))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		/* holds pipe B at c, without the epoll */
		close(efd);
		for (;;)
			pause();
	}
	b = dup(a);
	close(a);
	x = eventfd(0, 0);
	if (x != a && (dup2(x, a) != a || close(x)))
		return 1;
	close(c);
	check_epoll(efd, a, b, c);
	say("fds efd=%d a=%d b=%d c=%d child=%d\n", efd, a, b, c, child);
	say("ready\n");
	wait_restored();
	check_epoll(efd, a, b, c);
	if (write(pa[1], "x", 1) != 1 || write(pb[1], "y", 1) != 1)
		bad = 1;
	for (i = 0; i < 20 && seen != 3; i++) {
		n = epoll_wait(efd, out, 4, 200);
		while (n-- > 0)
			seen |= out[n].data.u64 == 0xa1 ? 1 : out[n].data.u64 == 0xb2 ? 2 : 4;
	}
	CHECK(seen == 3, "epoll: both pipes reported with their items' data (seen %d)", seen);
	kill(child, SIGKILL);
	return bad;
}

static int mode_epollout(void)
{
	int p[2], efd, a, r[2];
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xc3 };
	pid_t child, out = 0;

	efd = epoll_create1(0);
	if (efd < 0 || pipe(p) || pipe(r))
		return 1;
	a = p[0];
	if (epoll_ctl(efd, EPOLL_CTL_ADD, a, &ev))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		pid_t g = fork();

		if (!g) {
			close(efd);
			for (;;)
				pause();
		}
		if (write(r[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		_exit(0);
	}
	if (read(r[0], &out, sizeof(out)) != sizeof(out) || waitpid(child, NULL, 0) != child)
		return 1;
	close(r[0]);
	close(r[1]);
	close(a);
	say("fds efd=%d a=%d out=%d\n", efd, a, out);
	say("ready\n");
	wait_restored();
	kill(out, SIGKILL);
	return bad;
}

/* the next event of @ifd (waiting up to 2 s): its wd and mask, or wd -1 */
static int next_event(int ifd, unsigned int *mask, char *name, size_t size)
{
	static char buf[4096] __attribute__((aligned(8)));
	static ssize_t len, off;
	struct pollfd pf = { .fd = ifd, .events = POLLIN };
	struct inotify_event *e;

	if (off >= len) {
		off = 0;
		len = poll(&pf, 1, 2000) == 1 ? read(ifd, buf, sizeof(buf)) : -1;
		if (len <= 0)
			return -1;
	}
	e = (struct inotify_event *)(buf + off);
	off += sizeof(*e) + e->len;
	*mask = e->mask;
	snprintf(name, size, "%s", e->len ? e->name : "");
	return e->wd;
}

/* the mask and inode of watch @wd in /proc/self/fdinfo/@ifd */
static int watch_info(int ifd, int wd, unsigned int *mask, unsigned long *ino)
{
	char p[64], buf[4096], *l;
	ssize_t n;
	int f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", ifd);
	f = open(p, O_RDONLY);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned int w, sdev;

		if (sscanf(l, "inotify wd:%x ino:%lx sdev:%x mask:%x", &w, ino, &sdev, mask) == 4 &&
		    (int)w == wd)
			return 0;
	}
	return -1;
}

static int mode_inotify(int out)
{
	int ifd, g, w1, w2, w3, r[2], q = -1, k, wd;
	unsigned int mask;
	unsigned long ino;
	char name[64], buf[256];
	struct stat st;
	pid_t child, gc = 0;

	if (mkdir("w", 0755) && errno != EEXIST)
		return 1;
	g = open("gone.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	k = open("keep.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	ifd = inotify_init1(IN_NONBLOCK);
	if (g < 0 || k < 0 || ifd < 0 || write(g, "hello", 5) != 5 || pipe(r))
		return 1;
	close(k);
	w1 = inotify_add_watch(ifd, "w", IN_CREATE);
	w2 = inotify_add_watch(ifd, "gone.dat", IN_MODIFY | IN_ATTRIB);
	w3 = inotify_add_watch(ifd, "keep.dat", IN_OPEN);
	if (w1 != 1 || w2 != 2 || w3 != 3 || unlink("gone.dat"))
		return 1;
	if (out) {
		child = fork();
		if (child < 0)
			return 1;
		if (!child) {
			pid_t x = fork();

			if (!x) {
				close(ifd);
				for (;;)
					pause();
			}
			if (write(r[1], &x, sizeof(x)) != sizeof(x))
				_exit(1);
			_exit(0);
		}
		if (read(r[0], &gc, sizeof(gc)) != sizeof(gc) || waitpid(child, NULL, 0) != child)
			return 1;
		close(g);
	}
	/* the unlink's IN_ATTRIB */
	wd = next_event(ifd, &mask, name, sizeof(name));
	CHECK(wd == 2 && (mask & IN_ATTRIB), "setup: the unlink's IN_ATTRIB on wd 2 (wd %d mask 0x%x)", wd, mask);
	if (out) {
		say("fds ifd=%d out=%d\n", ifd, gc);
		say("ready\n");
		wait_restored();
		kill(gc, SIGKILL);
		return bad;
	}
	say("fds ifd=%d g=%d\n", ifd, g);
	say("ready\n");
	wait_restored();
	CHECK(!ioctl(ifd, FIONREAD, &q) && !q, "inotify: nothing queued after the restore (%d bytes)", q);
	CHECK(!fstat(g, &st) && st.st_nlink == 0, "gone.dat: still deleted (nlink %lu)",
	      (unsigned long)st.st_nlink);
	CHECK(!watch_info(ifd, 2, &mask, &ino) && ino == st.st_ino && (mask & (IN_MODIFY | IN_ATTRIB)) ==
	      (IN_MODIFY | IN_ATTRIB), "watch 2: on g's inode %lu (%lu), mask 0x%x", (unsigned long)st.st_ino,
	      ino, mask);
	if (write(g, "x", 1) != 1)
		bad = 1;
	wd = next_event(ifd, &mask, name, sizeof(name));
	CHECK(wd == 2 && mask == IN_MODIFY, "write on g: IN_MODIFY of wd 2 (wd %d mask 0x%x)", wd, mask);
	fchmod(g, 0600);
	wd = next_event(ifd, &mask, name, sizeof(name));
	CHECK(wd == 2 && mask == IN_ATTRIB, "fchmod on g: IN_ATTRIB of wd 2 (wd %d mask 0x%x)", wd, mask);
	close(open("w/new", O_CREAT | O_WRONLY, 0644));
	wd = next_event(ifd, &mask, name, sizeof(name));
	CHECK(wd == 1 && mask == IN_CREATE && !strcmp(name, "new"), "w/new: IN_CREATE of wd 1 (wd %d mask 0x%x %s)",
	      wd, mask, name);
	close(open("keep.dat", O_RDONLY));
	wd = next_event(ifd, &mask, name, sizeof(name));
	CHECK(wd == 3 && mask == IN_OPEN, "keep.dat: IN_OPEN of wd 3 (wd %d mask 0x%x)", wd, mask);
	(void)buf;
	return bad;
}

int main(int argc, char **argv)
{
	int r;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "pidfd"))
		r = mode_pidfd();
	else if (!strcmp(argv[1], "epoll"))
		r = mode_epoll();
	else if (!strcmp(argv[1], "epollout"))
		r = mode_epollout();
	else if (!strcmp(argv[1], "inotify"))
		r = mode_inotify(0);
	else if (!strcmp(argv[1], "inotifyout"))
		r = mode_inotify(1);
	else
		return 2;
	if (!r)
		say("done ok\n");
	return r;
}
