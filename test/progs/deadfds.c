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
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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
	else
		return 2;
	if (!r)
		say("done ok\n");
	return r;
}
