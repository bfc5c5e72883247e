/*
 * sknames: socket names and segment sizes for t_sk_names.
 *
 * sknames run DIR PORT OUT
 *   Makes, in one process:
 *     l1  a unix stream listener bound to the absolute path DIR/abs.sock;
 *     c1  connected to it, a1 accepted by l1 (its name is l1's);
 *     l2  (cwd DIR) a unix seqpacket listener bound to the relative name
 *         rel.sock; c2 connected to it by that name, a2 accepted;
 *     sp  a socketpair made as uid/gid 1000 (SO_PEERCRED of both ends);
 *     l3  a unix listener on the abstract name sknames-PORT, listening as
 *         1000; c3 connected to it as 2000 (its SO_PEERCRED: 1000), a3
 *         accepted (its SO_PEERCRED: 2000);
 *     t4  TCP 127.0.0.1:PORT connected to its listener (closed), s4 accepted,
 *         both with TCP_MAXSEG 1400 before the connection;
 *     t6  TCP [::1]:PORT+1 likewise (a dual-stack listener), 9000;
 *     tl  TCP 127.0.0.1:PORT+2, sl accepted: loopback's own segment sizes
 *         (above 32755 they come back as 32755, which is checked).
 *   Records getsockname and getpeername of the unix sockets, the uid and
 *   gid of SO_PEERCRED and whether its pid is this process's (every
 *   connection here is made by it), TCP_MAXSEG of the TCP ones
 *   and IPV6_V6ONLY of the IPv6 ones (0: not bound to ::1 by the program),
 *   SO_SNDBUF of t4 and SO_RCVBUF of s4 (set with SO_SNDBUFFORCE 1000000,
 *   SO_RCVBUFFORCE 700000: above twice net.core.wmem_max/rmem_max),
 *   SO_REUSEADDR of the TCP sockets (the accepted ones inherit their
 *   listener's 1, the connecting ones 0), SO_BUF_LOCK of the TCP sockets
 *   (t4 1 and s4 2 from the FORCE options, the others 0, also of tq and sq,
 *   a TCP connection 127.0.0.1:PORT+3 and q0, q1, a unix stream pair,
 *   each holding 100000 bytes not yet read, which the restore writes back
 *   after forcing the buffer sizes), checks them ("round 0"), prints "ready", then on each
 *   SIGUSR1 checks them again, and that each connection carries bytes both
 *   ways.  One line per check, "OK NAME" or "FAIL NAME: ...", then
 *   "round N ok K fail F".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif

#include "common.h"

static int out = 1, nok, nfail;
static volatile sig_atomic_t go;

static void on_usr1(int s)
{
	(void)s;
	go++;
}

static void die(const char *what)
{
	outf(out, "FAIL setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct chk {
	char name[32];
	int fd, kind;	/* 0 sockname, 1 peername, 2 TCP_MAXSEG, 3 SO_PEERCRED's uid and gid, 4 IPV6_V6ONLY, 5 SO_SNDBUF, 6 SO_RCVBUF, 7 SO_BUF_LOCK, 8 SO_REUSEADDR */
	char want[256];
};
static struct chk chks[64];
static int nchk;

static void value(const struct chk *c, char *buf, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	int v, r;

	if (c->kind == 3) {
		struct ucred u;

		l = sizeof(u);
		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &u, &l))
			snprintf(buf, size, "error %s", strerror(errno));
		else
			snprintf(buf, size, "pid %s uid %u gid %u",
				 u.pid == getpid() ? "self" : "other", u.uid, u.gid);
		return;
	}
	if (c->kind == 2 || c->kind >= 4) {
		static const int lv[] = { 0, 0, IPPROTO_TCP, 0, IPPROTO_IPV6, SOL_SOCKET, SOL_SOCKET,
					  SOL_SOCKET, SOL_SOCKET };
		static const int op[] = { 0, 0, TCP_MAXSEG, 0, IPV6_V6ONLY, SO_SNDBUF, SO_RCVBUF,
					  SO_BUF_LOCK, SO_REUSEADDR };

		l = sizeof(v);
		if (getsockopt(c->fd, lv[c->kind], op[c->kind], &v, &l))
			snprintf(buf, size, "error %s", strerror(errno));
		else
			snprintf(buf, size, "%d", v);
		return;
	}
	memset(&ss, 0, sizeof(ss));
	r = c->kind ? getpeername(c->fd, (struct sockaddr *)&ss, &l) :
		      getsockname(c->fd, (struct sockaddr *)&ss, &l);
	if (r) {
		snprintf(buf, size, "error %s", strerror(errno));
	} else if (l <= sizeof(sa_family_t)) {
		snprintf(buf, size, "unnamed");
	} else {
		struct sockaddr_un *u = (struct sockaddr_un *)&ss;

		snprintf(buf, size, "%s%.*s", u->sun_path[0] ? "" : "@",
			 (int)(l - sizeof(sa_family_t) - !u->sun_path[0]),
			 u->sun_path + !u->sun_path[0]);
	}
}

static void rec(const char *name, int fd, int kind)
{
	struct chk *c = &chks[nchk++];

	snprintf(c->name, sizeof(c->name), "%s", name);
	c->fd = fd;
	c->kind = kind;
	value(c, c->want, sizeof(c->want));
}

static int tcp_pair(int fam, int port, int *a, int mss)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr *sa = fam == AF_INET ? (struct sockaddr *)&s4 : (struct sockaddr *)&s6;
	socklen_t sl = fam == AF_INET ? sizeof(s4) : sizeof(s6);
	int l = socket(fam, SOCK_STREAM, 0), c = socket(fam, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	if (l < 0 || c < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* segment sizes below loopback's (the kernel takes TCP_MAXSEG up to 32767) */
	if (mss && (setsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)) ||
		    setsockopt(c, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss))))
		die("TCP_MAXSEG");
	/* IPv6: a dual-stack listener on [::] */
	if (bind(l, fam == AF_INET ? sa : (struct sockaddr *)&any, sl) || listen(l, 4))
		die("tcp listen");
	if (connect(c, sa, sl))
		die("tcp connect");
	*a = accept(l, NULL, NULL);
	if (*a < 0)
		die("accept");
	close(l);
	return c;
}

static int unix_conn(int type, const char *path, int *l, int *a)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int c;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	*l = socket(AF_UNIX, type, 0);
	c = socket(AF_UNIX, type, 0);
	if (*l < 0 || c < 0 || bind(*l, (struct sockaddr *)&sun, sizeof(sun)) || listen(*l, 4))
		die("unix listen");
	if (connect(c, (struct sockaddr *)&sun, sizeof(sun)))
		die("unix connect");
	*a = accept(*l, NULL, NULL);
	if (*a < 0)
		die("unix accept");
	return c;
}

/* run @f's socket call as euid/egid @id (the peer credentials it gives) */
static void as(int id)
{
	if (setresgid(-1, id, -1) || setresuid(-1, id, -1))
		die("setresuid");
}

static void unas(void)
{
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1))
		die("setresuid back");
}

static int pairs[7][2];

static void talk(int round)
{
	char b = 'a' + round % 26, r;
	int k, d;

	for (k = 0; k < 7; k++)
		for (d = 0; d < 2; d++) {
			int ok = write(pairs[k][d], &b, 1) == 1 && read(pairs[k][!d], &r, 1) == 1 && r == b;

			if (ok)
				nok++;
			else
				nfail++;
			outf(out, "%s talk %d %d\n", ok ? "OK" : "FAIL", k, d);
		}
}

static void check(int round)
{
	char now[256];
	int i;

	nok = nfail = 0;
	for (i = 0; i < nchk; i++) {
		const char *want = chks[i].want;

		/* restored, a segment size above 32755 is 32755 (TCP_MAXSEG takes 32767 at most: docs/sockets.md) */
		if (round && chks[i].kind == 2 && atoi(want) > 32755)
			want = "32755";
		value(&chks[i], now, sizeof(now));
		if (!strcmp(now, want)) {
			nok++;
			outf(out, "OK %s %s\n", chks[i].name, now);
		} else {
			nfail++;
			outf(out, "FAIL %s: %s, was %s (wanted %s)\n", chks[i].name, now, chks[i].want, want);
		}
	}
	talk(round);
	outf(out, "round %d ok %d fail %d\n", round, nok, nfail);
}

int main(int argc, char **argv)
{
	int round = 0, port, l1, a1, c1, l2, a2, c2, t4, s4, t6, s6, sp[2], l3, c3, a3, tl, sl;
	int tq, sq, q[2];
	static char junk[100000];
	char path[200];

	if (argc != 5 || strcmp(argv[1], "run"))
		return 2;
	port = atoi(argv[3]);
	out = open(argv[4], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 2;
	signal(SIGUSR1, on_usr1);
	snprintf(path, sizeof(path), "%s/abs.sock", argv[2]);
	c1 = unix_conn(SOCK_STREAM, path, &l1, &a1);
	if (chdir(argv[2]))
		die("chdir");
	c2 = unix_conn(SOCK_SEQPACKET, "rel.sock", &l2, &a2);
	/* a socketpair made as 1000, an abstract listener listening as 1000, a client as 2000 */
	as(1000);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("socketpair");
	unas();
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		socklen_t sl = sizeof(sa_family_t) + 1 + snprintf(sun.sun_path + 1, 100, "sknames-%d", port);

		l3 = socket(AF_UNIX, SOCK_STREAM, 0);
		c3 = socket(AF_UNIX, SOCK_STREAM, 0);
		if (l3 < 0 || c3 < 0 || bind(l3, (struct sockaddr *)&sun, sl))
			die("abstract bind");
		as(1000);
		if (listen(l3, 2))
			die("listen");
		unas();
		as(2000);
		if (connect(c3, (struct sockaddr *)&sun, sl))
			die("abstract connect");
		unas();
		a3 = accept(l3, NULL, NULL);
		if (a3 < 0)
			die("abstract accept");
	}
	t4 = tcp_pair(AF_INET, port, &s4, 1400);
	t6 = tcp_pair(AF_INET6, port + 1, &s6, 9000);
	tl = tcp_pair(AF_INET, port + 2, &sl, 0);
	/* 100000 bytes not yet read on a TCP connection and a unix pair */
	tq = tcp_pair(AF_INET, port + 3, &sq, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, q))
		die("socketpair q");
	memset(junk, 'q', sizeof(junk));
	if (write(tq, junk, sizeof(junk)) != sizeof(junk) ||
	    write(q[0], junk, sizeof(junk)) != sizeof(junk))
		die("write queued");
	/* buffer sizes above twice net.core.wmem_max/rmem_max (root: the FORCE options) */
	{
		int sb = 1000000, rb = 700000;

		if (setsockopt(t4, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)) ||
		    setsockopt(s4, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)))
			die("SO_SNDBUFFORCE/SO_RCVBUFFORCE");
	}
	pairs[0][0] = c1, pairs[0][1] = a1;
	pairs[1][0] = c2, pairs[1][1] = a2;
	pairs[2][0] = t4, pairs[2][1] = s4;
	pairs[3][0] = t6, pairs[3][1] = s6;
	pairs[4][0] = sp[0], pairs[4][1] = sp[1];
	pairs[5][0] = c3, pairs[5][1] = a3;
	pairs[6][0] = tl, pairs[6][1] = sl;
	/* a first exchange: the kernel computes the segment sizes again once data flowed */
	talk(0);
	rec("l1.name", l1, 0);
	rec("c1.name", c1, 0);
	rec("c1.peer", c1, 1);
	rec("a1.name", a1, 0);
	rec("a1.peer", a1, 1);
	rec("l2.name", l2, 0);
	rec("c2.name", c2, 0);
	rec("c2.peer", c2, 1);
	rec("a2.name", a2, 0);
	rec("a2.peer", a2, 1);
	rec("sp0.cred", sp[0], 3);
	rec("sp1.cred", sp[1], 3);
	rec("l3.name", l3, 0);
	rec("c3.peer", c3, 1);
	rec("a3.name", a3, 0);
	rec("c3.cred", c3, 3);
	rec("a3.cred", a3, 3);
	rec("t4.mss", t4, 2);
	rec("s4.mss", s4, 2);
	rec("t6.mss", t6, 2);
	rec("s6.mss", s6, 2);
	rec("tl.mss", tl, 2);
	rec("sl.mss", sl, 2);
	rec("t6.v6only", t6, 4);
	rec("t4.sndbuf", t4, 5);
	rec("s4.rcvbuf", s4, 6);
	rec("s6.v6only", s6, 4);
	rec("t4.reuse", t4, 8);
	rec("s4.reuse", s4, 8);
	rec("s6.reuse", s6, 8);
	rec("sl.reuse", sl, 8);
	rec("sq.reuse", sq, 8);
	rec("t4.buflock", t4, 7);
	rec("s4.buflock", s4, 7);
	rec("tl.buflock", tl, 7);
	rec("sl.buflock", sl, 7);
	rec("tq.buflock", tq, 7);
	rec("sq.buflock", sq, 7);
	rec("q0.buflock", q[0], 7);
	rec("q1.buflock", q[1], 7);
	check(0);
	outf(out, "ready\n");
	for (;;) {
		while (go == round)
			usleep(50000);
		round++;
		check(round);
	}
}
