// SPDX-License-Identifier: GPL-2.0
/*
 * sk_udpq: UDP datagrams queued at the dump (t_sk_udpq).
 *
 *   sk_udpq run PORT OUT    receivers and senders of its own; writes "ready",
 *                           waits for SIGUSR1 (the outside sender has sent),
 *                           connects two receivers, sends more, writes
 *                           "queued N"; each later SIGUSR1: receives every
 *                           queued datagram, checks size, bytes, source and
 *                           order, "check ok N fail F"
 *   sk_udpq send PORT OUT   the sender outside the tree: from 127.0.0.1:PORT+6
 *                           (kept open: its port stays taken), from [::1]:PORT+7
 *                           (kept) and from an unbound socket (closed; its
 *                           port into OUT, "eph PORT"); then waits to be killed
 *   sk_udpq refuse PORT OUT a receiver with SO_TIMESTAMP and a datagram queued:
 *                           "fd N ready"
 *   sk_udpq peek0 PORT OUT  a receiver with a zero-length datagram, peeked at,
 *                           and another queued: "fd N ready"; on SIGUSR1
 *                           receives them: "got LEN PORT" each, "end"
 *   sk_udpq error PORT OUT  a receiver connected to PORT+1, where nothing
 *                           listens, after a send (ECONNREFUSED pending,
 *                           nothing queued): "fd N ready"
 *   sk_udpq sibling PORT OUT two SO_REUSEPORT sockets on PORT, the second
 *                           connected to PORT+1; a datagram from PORT+2
 *                           queued on the first: "fd N ready"
 *   sk_udpq src0 PORT OUT   a datagram from 127.0.0.1 port 0 (a raw
 *                           IPPROTO_UDP socket writes its UDP header) queued
 *                           on a receiver: "fd N ready"
 *
 * Ports: PORT 127.0.0.1 receiver, PORT+1 127.0.0.1 receiver connected to
 * PORT+2 (the sender inside for IPv4), PORT+3 [::] receiver, PORT+4 [::1]
 * receiver connected to PORT+5 (the sender inside for IPv6).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "common.h"

static volatile sig_atomic_t usr1;
static void on_usr1(int s) { (void)s; usr1++; }

static int out;
static int nfail;

#define FAIL(...) do { outf(out, "FAIL " __VA_ARGS__); nfail++; } while (0)

static int mk(int fam, const char *addr, int port)
{
	int s = socket(fam, SOCK_DGRAM, 0), zero = 0;

	if (s < 0) {
		outf(out, "socket: %s\n", strerror(errno));
		exit(1);
	}
	if (fam == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (addr) {
		struct sockaddr_storage ss;
		socklen_t l;

		memset(&ss, 0, sizeof(ss));
		if (fam == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			a->sin_family = AF_INET;
			a->sin_port = htons(port);
			inet_pton(AF_INET, addr, &a->sin_addr);
			l = sizeof(*a);
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			a->sin6_family = AF_INET6;
			a->sin6_port = htons(port);
			inet_pton(AF_INET6, addr, &a->sin6_addr);
			l = sizeof(*a);
		}
		if (bind(s, (struct sockaddr *)&ss, l)) {
			outf(out, "bind %s %d: %s\n", addr, port, strerror(errno));
			exit(1);
		}
	}
	return s;
}

static socklen_t sa(int fam, const char *addr, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		inet_pton(AF_INET, addr, &a->sin_addr);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	inet_pton(AF_INET6, addr, &a->sin6_addr);
	return sizeof(*a);
}

static unsigned char buf[70000];

static void fill(unsigned char *b, int len, int seed)
{
	for (int k = 0; k < len; k++)
		b[k] = (unsigned char)(seed * 31 + k * 7 + (k >> 8));
}

/* one datagram of @len bytes (pattern @seed) from @s to FAM ADDR PORT */
static void snd(int s, int fam, const char *addr, int port, int len, int seed)
{
	struct sockaddr_storage ss;
	socklen_t l = sa(fam, addr, port, &ss);

	fill(buf, len, seed);
	if (sendto(s, buf, len, 0, (struct sockaddr *)&ss, l) != len) {
		outf(out, "sendto %s %d (%d bytes): %s\n", addr, port, len, strerror(errno));
		exit(1);
	}
}

/* the datagrams each receiver expects, in order */
struct want {
	int rx;			/* receiver 0..3 */
	int len, seed;
	int fam;
	const char *addr;
	int port;		/* the source port; -1: the outside sender's unbound one */
};

static int port;

static const struct want wants[] = {
	/* the inside sender, IPv4 (PORT+2), before the outside one */
	{ 0, 100, 1, AF_INET, "127.0.0.1", 2 },
	{ 0, 0, 2, AF_INET, "127.0.0.1", 2 },
	{ 2, 1000, 3, AF_INET6, "::1", 5 },
	{ 2, 0, 4, AF_INET6, "::1", 5 },
	/* the outside sender (sk_udpq send) */
	{ 0, 65507, 10, AF_INET, "127.0.0.1", 6 },
	{ 0, 7, 11, AF_INET, "127.0.0.1", -1 },
	{ 1, 33, 12, AF_INET, "127.0.0.1", 6 },
	{ 2, 0, 13, AF_INET6, "::1", 7 },
	{ 2, 60000, 14, AF_INET6, "::1", 7 },
	{ 3, 44, 15, AF_INET6, "::1", 7 },
	/* the inside senders again, after the receivers 1 and 3 are connected */
	{ 1, 5, 20, AF_INET, "127.0.0.1", 2 },
	{ 1, 0, 21, AF_INET, "127.0.0.1", 2 },
	{ 3, 1200, 22, AF_INET6, "::1", 5 },
	{ 0, 1, 23, AF_INET, "127.0.0.1", 2 },
};
#define NW ((int)(sizeof(wants) / sizeof(wants[0])))

static const struct { int fam; const char *addr; int off; } rxs[] = {
	{ AF_INET, "127.0.0.1", 0 }, { AF_INET, "127.0.0.1", 1 },
	{ AF_INET6, "::", 3 }, { AF_INET6, "::1", 4 },
};

static int eph_port(const char *outpath)
{
	char p[512], line[128];
	FILE *f;
	int v = -1;

	snprintf(p, sizeof(p), "%s.send", outpath);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "eph %d", &v);
	fclose(f);
	return v;
}

static void check(int *rx, const char *outpath)
{
	int eph = eph_port(outpath), ok = 0;

	nfail = 0;
	for (int r = 0; r < 4; r++) {
		for (int w = 0; w < NW; w++) {
			const struct want *x = &wants[w];
			struct sockaddr_storage from, exp;
			socklen_t fl = sizeof(from), el;
			ssize_t n;

			if (x->rx != r)
				continue;
			el = sa(x->fam, x->addr, x->port < 0 ? eph : port + x->port, &exp);
			n = recvfrom(rx[r], buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
			if (n < 0) {
				FAIL("receiver %d, datagram %d (%d bytes): %s\n", r, w, x->len, strerror(errno));
				continue;
			}
			if (n != x->len) {
				FAIL("receiver %d, datagram %d: %zd bytes, not %d\n", r, w, n, x->len);
				continue;
			}
			static unsigned char e[70000];

			fill(e, x->len, x->seed);
			if (memcmp(buf, e, x->len)) {
				FAIL("receiver %d, datagram %d: its bytes differ\n", r, w);
				continue;
			}
			if (fl != el || memcmp(&from, &exp, el)) {
				char a[64] = "?";
				int p = 0;

				if (from.ss_family == AF_INET) {
					inet_ntop(AF_INET, &((struct sockaddr_in *)&from)->sin_addr, a, sizeof(a));
					p = ntohs(((struct sockaddr_in *)&from)->sin_port);
				} else if (from.ss_family == AF_INET6) {
					inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&from)->sin6_addr, a, sizeof(a));
					p = ntohs(((struct sockaddr_in6 *)&from)->sin6_port);
				}
				FAIL("receiver %d, datagram %d: from %s port %d, not %s port %d\n", r, w, a, p,
				     x->addr, x->port < 0 ? eph : port + x->port);
				continue;
			}
			ok++;
		}
		if (recv(rx[r], buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno != EAGAIN)
			FAIL("receiver %d: more queued than sent\n", r);
	}
	outf(out, "check ok %d fail %d\n", ok, nfail);
}

int main(int argc, char **argv)
{
	int rx[4], s4, s6;

	if (argc < 4)
		return 2;
	port = atoi(argv[2]);
	out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 1;
	signal(SIGUSR1, on_usr1);
	if (!strcmp(argv[1], "send")) {
		int a = mk(AF_INET, "127.0.0.1", port + 6), b = mk(AF_INET6, "::1", port + 7);
		int u = mk(AF_INET, NULL, 0);
		struct sockaddr_in me;
		socklen_t l = sizeof(me);

		snd(a, AF_INET, "127.0.0.1", port, 65507, 10);
		snd(u, AF_INET, "127.0.0.1", port, 7, 11);
		snd(a, AF_INET, "127.0.0.1", port + 1, 33, 12);
		snd(b, AF_INET6, "::1", port + 3, 0, 13);
		snd(b, AF_INET6, "::1", port + 3, 60000, 14);
		snd(b, AF_INET6, "::1", port + 4, 44, 15);
		getsockname(u, (struct sockaddr *)&me, &l);
		close(u);
		outf(out, "eph %d\n", ntohs(me.sin_port));
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "error")) {
		int r = mk(AF_INET, "127.0.0.1", port);
		struct sockaddr_storage ss;
		socklen_t l = sa(AF_INET, "127.0.0.1", port + 1, &ss);
		struct pollfd pf = { .fd = r, .events = POLLIN };

		if (connect(r, (struct sockaddr *)&ss, l) || send(r, "x", 1, 0) != 1)
			outf(out, "FAIL connect/send: %s\n", strerror(errno));
		if (poll(&pf, 1, 2000) != 1 || !(pf.revents & POLLERR))
			outf(out, "FAIL no error pending (revents %#x)\n", pf.revents);
		outf(out, "fd %d ready\n", r);
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "sibling")) {
		int on = 1, r = socket(AF_INET, SOCK_DGRAM, 0), r2 = socket(AF_INET, SOCK_DGRAM, 0);
		int w = mk(AF_INET, "127.0.0.1", port + 2);
		struct sockaddr_storage ss;
		socklen_t l = sa(AF_INET, "127.0.0.1", port, &ss);
		struct pollfd pf = { .fd = r, .events = POLLIN };

		setsockopt(r, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
		setsockopt(r2, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
		if (bind(r, (struct sockaddr *)&ss, l) || bind(r2, (struct sockaddr *)&ss, l))
			outf(out, "FAIL bind: %s\n", strerror(errno));
		l = sa(AF_INET, "127.0.0.1", port + 1, &ss);
		if (connect(r2, (struct sockaddr *)&ss, l))
			outf(out, "FAIL connect: %s\n", strerror(errno));
		snd(w, AF_INET, "127.0.0.1", port, 12, 1);
		if (poll(&pf, 1, 2000) != 1)
			outf(out, "FAIL the datagram is not on the first socket\n");
		outf(out, "fd %d ready\n", r);
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "src0")) {
		int r = mk(AF_INET, "127.0.0.1", port), raw = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
		unsigned char pkt[8 + 5] = { 0, 0, port >> 8, port & 0xff, 0, 13, 0, 0, 'h', 'e', 'l', 'l', 'o' };
		struct sockaddr_storage ss;
		socklen_t l = sa(AF_INET, "127.0.0.1", 0, &ss);
		struct pollfd pf = { .fd = r, .events = POLLIN };

		if (raw < 0 || sendto(raw, pkt, sizeof(pkt), 0, (struct sockaddr *)&ss, l) != sizeof(pkt))
			outf(out, "FAIL raw send: %s\n", strerror(errno));
		if (poll(&pf, 1, 2000) != 1)
			outf(out, "FAIL the datagram from port 0 did not arrive\n");
		close(raw);
		outf(out, "fd %d ready\n", r);
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "refuse") || !strcmp(argv[1], "peek0")) {
		int r = mk(AF_INET, "127.0.0.1", port), on = 1;

		if (argv[1][0] == 'r') {
			setsockopt(r, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on));
			snd(r, AF_INET, "127.0.0.1", port, 12, 1);
		} else {
			/* a zero-length datagram peeked at: a peek with an offset passes it */
			snd(r, AF_INET, "127.0.0.1", port, 0, 1);
			snd(r, AF_INET, "127.0.0.1", port, 12, 2);
			if (recv(r, buf, 1, MSG_PEEK) != 0)
				outf(out, "FAIL the head is not the zero-length datagram\n");
		}
		outf(out, "fd %d ready\n", r);
		while (!usr1)
			pause();
		for (;;) {
			struct sockaddr_in f;
			socklen_t fl = sizeof(f);
			ssize_t n = recvfrom(r, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&f, &fl);

			if (n < 0)
				break;
			outf(out, "got %zd %d\n", n, ntohs(f.sin_port));
		}
		outf(out, "end\n");
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "run"))
		return 2;
	/* the IPv4 sender first (made before the receivers at the restore), the IPv6 one last */
	s4 = mk(AF_INET, "127.0.0.1", port + 2);
	for (int r = 0; r < 4; r++) {
		int big = 1 << 20;

		rx[r] = mk(rxs[r].fam, rxs[r].addr, port + rxs[r].off);
		setsockopt(rx[r], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	}
	s6 = mk(AF_INET6, "::1", port + 5);
	for (int w = 0; w < 4; w++)
		snd(wants[w].fam == AF_INET ? s4 : s6, wants[w].fam, wants[w].fam == AF_INET ? "127.0.0.1" : "::1",
		    port + rxs[wants[w].rx].off, wants[w].len, wants[w].seed);
	outf(out, "ready\n");
	while (!usr1)
		pause();
	{
		struct sockaddr_storage ss;
		socklen_t l;

		l = sa(AF_INET, "127.0.0.1", port + 2, &ss);
		if (connect(rx[1], (struct sockaddr *)&ss, l))
			FAIL("connect: %s\n", strerror(errno));
		l = sa(AF_INET6, "::1", port + 5, &ss);
		if (connect(rx[3], (struct sockaddr *)&ss, l))
			FAIL("connect: %s\n", strerror(errno));
	}
	for (int w = 10; w < NW; w++)
		snd(wants[w].fam == AF_INET ? s4 : s6, wants[w].fam, wants[w].fam == AF_INET ? "127.0.0.1" : "::1",
		    port + rxs[wants[w].rx].off, wants[w].len, wants[w].seed);
	outf(out, "queued %d\n", NW);
	for (int seen = 1;;) {
		while (usr1 == seen)
			pause();
		seen = usr1;
		check(rx, argv[3]);
	}
}
