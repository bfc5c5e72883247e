/*
 * skpaths: unix sockets whose names no longer lead to them (t_sk_unix_paths).
 *
 * skpaths MODE DIR OUT
 *   sets up MODE's sockets in DIR, says "ready" in OUT, waits for SIGUSR1,
 *   then checks them (each check "OK what" or "FAIL what: why") and ends
 *   with "done ok N fail M".  Before the dump, "names ok N fail M": the
 *   names (getsockname, getpeername) checked once already.
 *
 * MODE
 *   fifo     a datagram socket bound to DIR/f.sock whose file was removed
 *            and a FIFO made there; one bound to DIR/g.sock whose file is
 *            now a regular file: their names as before, and each sends a
 *            datagram to @skpaths-rx, which sees it from that name.
 *   rel      a datagram socket bound to the relative name r.sock in
 *            DIR/sub, the cwd then changed to DIR: getsockname "r.sock"; a
 *            datagram sent to DIR/sub/r.sock reaches it.
 *   deleted  a datagram socket bound to DIR/del.sock, its file removed;
 *            one bound to DIR/two.sock, its file removed, and another bound
 *            to DIR/two.sock again (live): both names as before, and a
 *            datagram sent to DIR/two.sock reaches the live one.
 *   dgramdel a datagram socket connected to DIR/peer.sock, whose file
 *            was removed, its peer still open: getpeername, a send reaches
 *            the peer; one connected to DIR/gone.sock, whose socket was
 *            closed and file removed: getpeername as before, a send fails
 *            with ECONNREFUSED.
 *   queue    a datagram socket bound to DIR/q.sock holding datagrams from
 *            senders gone: bound to DIR/s1.sock (its stale file left),
 *            to @skpaths-s2, unnamed; and one from DIR/live.sock, still
 *            open; and a datagram socketpair whose other end sent
 *            "pp" and closed: each datagram comes back in order, with its
 *            sender's name (recvfrom), the pair's end says ECONNREFUSED.
 *   refuse   a datagram queued from a socket bound by a relative name and
 *            closed: the dump is refused.
 *   deldir   a datagram socket bound to DIR/sub/x.sock, its file removed
 *            and then its directory DIR/sub: the dump is refused (nowhere
 *            to bind it again); after, its name as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"

static int out, nok, nfail;
static volatile sig_atomic_t woken;
static char dir[200];

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

static void die(const char *what)
{
	outf(out, "FAIL setup %s: %s\n", what, strerror(errno));
	exit(1);
}

static socklen_t mkaddr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (name[0] == '@') {
		memcpy(a->sun_path + 1, name + 1, strlen(name) - 1);
		return offsetof(struct sockaddr_un, sun_path) + strlen(name);
	}
	snprintf(a->sun_path, sizeof(a->sun_path), "%s", name);
	return offsetof(struct sockaddr_un, sun_path) + strlen(a->sun_path) + 1;
}

static const char *path(const char *base)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, base);
	return p[k];
}

static int dgram(const char *name)
{
	struct sockaddr_un a;
	socklen_t l;
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	if (name) {
		l = mkaddr(&a, name);
		if (bind(fd, (struct sockaddr *)&a, l))
			die(name);
	}
	return fd;
}

static void connect_to(int fd, const char *name)
{
	struct sockaddr_un a;
	socklen_t l = mkaddr(&a, name);

	if (connect(fd, (struct sockaddr *)&a, l))
		die(name);
}

static void send_to(int fd, const char *name, const char *msg)
{
	struct sockaddr_un a;
	socklen_t l = mkaddr(&a, name);

	if (sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&a, l) != (ssize_t)strlen(msg))
		die(msg);
}

/* a name as a string: "" unnamed, "@x" abstract */
static void show(const struct sockaddr_un *a, socklen_t l, char *buf, size_t size)
{
	size_t n = l > offsetof(struct sockaddr_un, sun_path) ? l - offsetof(struct sockaddr_un, sun_path) : 0;

	if (!n) {
		snprintf(buf, size, "%s", "");
	} else if (!a->sun_path[0]) {
		snprintf(buf, size, "@%.*s", (int)n - 1, a->sun_path + 1);
	} else {
		snprintf(buf, size, "%.*s", (int)strnlen(a->sun_path, n), a->sun_path);
	}
}

static void check(int ok, const char *what, const char *fmt, const char *got)
{
	if (ok) {
		nok++;
		outf(out, "OK %s\n", what);
	} else {
		nfail++;
		outf(out, "FAIL %s: %s%s\n", what, fmt, got);
	}
}

static void check_name(int fd, int peer, const char *what, const char *want)
{
	struct sockaddr_un a;
	socklen_t l = sizeof(a);
	char got[256], w[300];

	memset(&a, 0, sizeof(a));
	if ((peer ? getpeername(fd, (struct sockaddr *)&a, &l) : getsockname(fd, (struct sockaddr *)&a, &l))) {
		snprintf(got, sizeof(got), "error %s", strerror(errno));
	} else {
		show(&a, l, got, sizeof(got));
	}
	snprintf(w, sizeof(w), "%s %s %s", what, peer ? "peername" : "name", want);
	check(!strcmp(got, want), w, "got ", got);
}

/* a datagram on @fd: @want, from @from */
static void check_recv(int fd, const char *what, const char *want, const char *from)
{
	struct sockaddr_un a;
	socklen_t l = sizeof(a);
	char buf[256], f[256], got[600];
	ssize_t n;

	memset(&a, 0, sizeof(a));
	n = recvfrom(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT, (struct sockaddr *)&a, &l);
	if (n < 0) {
		snprintf(got, sizeof(got), "error %s", strerror(errno));
		check(0, what, "recv: ", got);
		return;
	}
	buf[n] = 0;
	show(&a, l, f, sizeof(f));
	snprintf(got, sizeof(got), "'%s' from '%s' (want '%s' from '%s')", buf, f, want, from);
	check(!strcmp(buf, want) && !strcmp(f, from), what, "", got);
}

static void check_send(int fd, const char *what, int want_errno)
{
	char got[64];
	ssize_t n = send(fd, "x", 1, MSG_DONTWAIT);

	snprintf(got, sizeof(got), "%s", n < 0 ? strerror(errno) : "sent");
	check(want_errno ? n < 0 && errno == want_errno : n == 1, what, "send: ", got);
}

static void wait_usr1(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!woken)
		sigsuspend(&none);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t blk;
	const char *mode;
	int rx = -1, a = -1, b = -1, c = -1, d = -1, fd;

	if (argc != 4) {
		fprintf(stderr, "usage: skpaths MODE DIR OUT\n");
		return 2;
	}
	mode = argv[1];
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 2;
	sigemptyset(&blk);
	sigaddset(&blk, SIGUSR1);
	sigprocmask(SIG_BLOCK, &blk, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	if (!strcmp(mode, "fifo")) {
		rx = dgram("@skpaths-rx");
		a = dgram(path("f.sock"));
		unlink(path("f.sock"));
		if (mkfifo(path("f.sock"), 0640))
			die("mkfifo");
		b = dgram(path("g.sock"));
		unlink(path("g.sock"));
		fd = open(path("g.sock"), O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || write(fd, "regular\n", 8) != 8)
			die("g.sock");
		close(fd);
	} else if (!strcmp(mode, "rel")) {
		if (chdir(path("sub")))
			die("chdir sub");
		a = dgram("r.sock");
		if (chdir(dir))
			die("chdir");
		b = dgram(NULL);
	} else if (!strcmp(mode, "deleted")) {
		a = dgram(path("del.sock"));
		unlink(path("del.sock"));
		b = dgram(path("two.sock"));
		unlink(path("two.sock"));
		c = dgram(path("two.sock"));
		/* the live one first in fd order (the restore makes them in that order) */
		fd = dup(b);
		if (fd < 0 || dup2(c, b) < 0)
			die("dup");
		close(c);
		c = b;
		b = fd;
		d = dgram(NULL);
	} else if (!strcmp(mode, "dgramdel")) {
		a = dgram(path("peer.sock"));
		b = dgram(NULL);
		connect_to(b, path("peer.sock"));
		unlink(path("peer.sock"));
		c = dgram(path("gone.sock"));
		d = dgram(NULL);
		connect_to(d, path("gone.sock"));
		close(c);
		c = -1;
		unlink(path("gone.sock"));
	} else if (!strcmp(mode, "queue")) {
		int sv[2];

		a = dgram(path("q.sock"));
		fd = dgram(path("s1.sock"));
		send_to(fd, path("q.sock"), "one");
		close(fd);
		fd = dgram("@skpaths-s2");
		send_to(fd, path("q.sock"), "two");
		close(fd);
		fd = dgram(NULL);
		send_to(fd, path("q.sock"), "three");
		close(fd);
		b = dgram(path("live.sock"));
		send_to(b, path("q.sock"), "four");
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
			die("socketpair");
		c = sv[0];
		if (send(sv[1], "pp", 2, 0) != 2)
			die("send pp");
		close(sv[1]);
	} else if (!strcmp(mode, "refuse")) {
		a = dgram(path("q.sock"));
		if (chdir(dir))
			die("chdir");
		fd = dgram("rel.snd");
		send_to(fd, path("q.sock"), "rel");
		close(fd);
	} else if (!strcmp(mode, "deldir")) {
		a = dgram(path("sub/x.sock"));
		if (unlink(path("sub/x.sock")) || rmdir(path("sub")))
			die("unlink, rmdir sub");
	} else {
		fprintf(stderr, "skpaths: unknown mode %s\n", mode);
		return 2;
	}

	/* the names, before the dump */
	if (!strcmp(mode, "fifo")) {
		check_name(a, 0, "f", path("f.sock"));
		check_name(b, 0, "g", path("g.sock"));
	} else if (!strcmp(mode, "rel")) {
		check_name(a, 0, "r", "r.sock");
	} else if (!strcmp(mode, "deleted")) {
		check_name(a, 0, "del", path("del.sock"));
		check_name(b, 0, "two-old", path("two.sock"));
		check_name(c, 0, "two-live", path("two.sock"));
	} else if (!strcmp(mode, "dgramdel")) {
		check_name(b, 1, "to-peer", path("peer.sock"));
		check_name(d, 1, "to-gone", path("gone.sock"));
	} else if (!strcmp(mode, "queue") || !strcmp(mode, "refuse")) {
		check_name(a, 0, "q", path("q.sock"));
	} else if (!strcmp(mode, "deldir")) {
		check_name(a, 0, "x", path("sub/x.sock"));
	}
	outf(out, "names ok %d fail %d\n", nok, nfail);
	nok = nfail = 0;
	outf(out, "ready\n");
	wait_usr1();

	if (!strcmp(mode, "fifo")) {
		check_name(a, 0, "f", path("f.sock"));
		check_name(b, 0, "g", path("g.sock"));
		send_to(a, "@skpaths-rx", "from f");
		send_to(b, "@skpaths-rx", "from g");
		check_recv(rx, "rx f", "from f", path("f.sock"));
		check_recv(rx, "rx g", "from g", path("g.sock"));
	} else if (!strcmp(mode, "rel")) {
		check_name(a, 0, "r", "r.sock");
		send_to(b, path("sub/r.sock"), "to r");
		check_recv(a, "r recv", "to r", "");
	} else if (!strcmp(mode, "deleted")) {
		check_name(a, 0, "del", path("del.sock"));
		check_name(b, 0, "two-old", path("two.sock"));
		check_name(c, 0, "two-live", path("two.sock"));
		send_to(d, path("two.sock"), "to two");
		check_recv(c, "two-live recv", "to two", "");
		send_to(a, path("two.sock"), "from del");
		check_recv(c, "del sends", "from del", path("del.sock"));
	} else if (!strcmp(mode, "dgramdel")) {
		check_name(b, 1, "to-peer", path("peer.sock"));
		check_name(d, 1, "to-gone", path("gone.sock"));
		check_send(b, "to-peer send", 0);
		check_recv(a, "peer recv", "x", "");
		check_send(d, "to-gone send", ECONNREFUSED);
	} else if (!strcmp(mode, "queue")) {
		check_name(a, 0, "q", path("q.sock"));
		check_recv(a, "q 1", "one", path("s1.sock"));
		check_recv(a, "q 2", "two", "@skpaths-s2");
		check_recv(a, "q 3", "three", "");
		check_recv(a, "q 4", "four", path("live.sock"));
		check_recv(c, "pair", "pp", "");
		check_send(c, "pair send", ECONNREFUSED);
	} else if (!strcmp(mode, "deldir")) {
		check_name(a, 0, "x", path("sub/x.sock"));
	}
	outf(out, "done ok %d fail %d\n", nok, nfail);
	return nfail ? 1 : 0;
}
