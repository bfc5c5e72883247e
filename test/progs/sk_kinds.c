/*
 * sk_kinds: ICMP ("ping"), UDP-Lite and raw sockets for t_sk_kinds.
 *
 * sk_kinds run PORT OUT   (root: raw sockets; net.ipv4.ping_group_range
 *                          must include its group)
 *   Makes, in one process:
 *     p4    ping IPv4, bound to ident PORT, connected to 127.0.0.1 (port 0:
 *           getpeername says ENOTCONN), IP_TTL 17, SO_MARK 7, a classic BPF
 *           filter accepting everything;
 *     p6    ping IPv6, bound to [::1] ident PORT+1, IPV6_UNICAST_HOPS 9;
 *     l4    UDP-Lite IPv4 127.0.0.1:PORT, UDPLITE_SEND_CSCOV 20,
 *           UDPLITE_RECV_CSCOV 20;
 *     lsnd  UDP-Lite IPv4, unbound, UDPLITE_SEND_CSCOV 8 (a sender whose
 *           coverage l4 refuses);
 *     l6    UDP-Lite IPv6 [::1]:PORT+1, connected to itself,
 *           UDPLITE_SEND_CSCOV 12;
 *     lsh   UDP-Lite IPv4 127.0.0.1:PORT+2 connected to l4, shut down for
 *           writing;
 *     ricmp raw IPv4 IPPROTO_ICMP, ICMP_FILTER: echo replies only;
 *     r253  raw IPv4 protocol 253, bound to 127.0.0.1 and connected to
 *           127.0.0.1, SO_PRIORITY 3;
 *     rraw  raw IPv4 IPPROTO_RAW (IP_HDRINCL by itself), SO_MARK 5;
 *     rsh   raw IPv4 protocol 254, IP_HDRINCL 1, IP_NODEFRAG 1, shut down
 *           for writing;
 *     rtcp  raw IPv4 IPPROTO_TCP bound to and connected to 127.0.0.1 (not
 *           a TCP connection);
 *     ricmp6 raw IPv6 IPPROTO_ICMPV6, ICMPV6_FILTER: echo replies only;
 *     r6    raw IPv6 protocol 253, bound to ::1, IPV6_CHECKSUM 2.
 *   Records each option as getsockopt reads it and each address, checks
 *   them ("round 0"), prints "ready", then on each SIGUSR1 checks them all
 *   again, and by behaviour: p4 and p6 get echo replies (id: their ident),
 *   l4 receives its own datagram and not lsnd's (coverage 8 < 20), l6
 *   receives its own, lsh says EPIPE, ricmp gets the echo reply of the
 *   request it sent (and no request: filtered), r253 receives its own
 *   packet and the one rraw sent with its own header, rsh says EPIPE,
 *   ricmp6 gets its echo reply, r6 receives its own packet with the
 *   checksum the kernel put at offset 2.  Every raw socket is then
 *   drained (a queued datagram would refuse the dump).  One line per
 *   check, "OK NAME" or "FAIL NAME: ...", then "round N ok K fail F".
 *
 * sk_kinds refuse queued|error PORT OUT
 *   queued: a ping socket with an echo reply queued, not yet received;
 *   error: a UDP-Lite socket with IP_RECVERR connected to a closed port,
 *   its "port unreachable" queued.  Prints "fd N ready" and sleeps.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "skcheck.h"

#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif
#ifndef UDPLITE_SEND_CSCOV
#define UDPLITE_SEND_CSCOV 10
#define UDPLITE_RECV_CSCOV 11
#endif
#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif
#ifndef SOL_RAW
#define SOL_RAW 255
#endif
#ifndef SOL_ICMPV6
#define SOL_ICMPV6 58
#endif
#ifndef IP_NODEFRAG
#define IP_NODEFRAG 22
#endif

static int port;

/* the values checked: options as getsockopt read them, addresses, after the setup */
enum { K_OPT, K_NAME, K_PEER };
struct chk {
	const char *name;
	int kind, fd, lvl, opt;
	unsigned char want[128];
	socklen_t len;
	int err;	/* K_PEER: ENOTCONN wanted */
};
static struct chk chks[96];
static int nchk;

static int get(struct chk *c, unsigned char *buf, socklen_t *len)
{
	int r;

	*len = sizeof(c->want);
	memset(buf, 0, sizeof(c->want));
	if (c->kind == K_OPT) {
		*len = c->len;
		return getsockopt(c->fd, c->lvl, c->opt, buf, len) ? errno : 0;
	}
	r = c->kind == K_NAME ? getsockname(c->fd, (struct sockaddr *)buf, len) :
				getpeername(c->fd, (struct sockaddr *)buf, len);
	return r ? errno : 0;
}

static void rec(const char *name, int kind, int fd, int lvl, int opt, socklen_t len)
{
	struct chk *c = &chks[nchk++];

	c->name = name;
	c->kind = kind;
	c->fd = fd;
	c->lvl = lvl;
	c->opt = opt;
	c->len = len;
	c->err = get(c, c->want, &c->len);
	if (c->err && !(kind == K_PEER && c->err == ENOTCONN)) {
		errno = c->err;
		die(name);
	}
}

static int p4, p6, l4, lsnd, l6, lsh, ricmp, r253, rraw, rsh, rtcp, ricmp6, r6;
static int lite = 1;	/* the kernel has UDP-Lite (7.x dropped it) */

static struct sockaddr_in sin4(const char *ip, int p)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(p) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

static struct sockaddr_in6 sin6(const char *ip, int p)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(p) };

	inet_pton(AF_INET6, ip, &s.sin6_addr);
	return s;
}

static int mk(int fam, int type, int proto, const char *what)
{
	int fd = socket(fam, type, proto);

	if (fd < 0)
		die(what);
	return fd;
}

static struct sock_filter accept_all[] = { BPF_STMT(BPF_RET | BPF_K, 0xffff) };

static void setup(void)
{
	struct sockaddr_in s = sin4("0.0.0.0", port);
	struct sockaddr_in6 s6 = sin6("::1", port + 1);
	struct sock_fprog fp = { .len = 1, .filter = accept_all };
	struct icmp_filter f4 = { .data = ~(1U << ICMP_ECHOREPLY) };
	struct icmp6_filter f6;

	/* p4 */
	p4 = mk(AF_INET, SOCK_DGRAM, IPPROTO_ICMP, "socket p4 (ping, net.ipv4.ping_group_range)");
	seti(p4, SOL_IP, IP_TTL, 17, "p4 IP_TTL");
	seti(p4, SOL_SOCKET, SO_MARK, 7, "p4 SO_MARK");
	if (setsockopt(p4, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
		die("p4 SO_ATTACH_FILTER");
	if (bind(p4, (struct sockaddr *)&s, sizeof(s)))
		die("bind p4");
	s = sin4("127.0.0.1", 0);
	if (connect(p4, (struct sockaddr *)&s, sizeof(s)))
		die("connect p4");
	rec("p4 IP_TTL", K_OPT, p4, SOL_IP, IP_TTL, 4);
	rec("p4 SO_MARK", K_OPT, p4, SOL_SOCKET, SO_MARK, 4);
	rec("p4 SO_PROTOCOL", K_OPT, p4, SOL_SOCKET, SO_PROTOCOL, 4);
	rec("p4 sockname", K_NAME, p4, 0, 0, 0);
	rec("p4 peername", K_PEER, p4, 0, 0, 0);

	/* p6 */
	p6 = mk(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, "socket p6");
	seti(p6, SOL_IPV6, IPV6_UNICAST_HOPS, 9, "p6 IPV6_UNICAST_HOPS");
	if (bind(p6, (struct sockaddr *)&s6, sizeof(s6)))
		die("bind p6");
	rec("p6 IPV6_UNICAST_HOPS", K_OPT, p6, SOL_IPV6, IPV6_UNICAST_HOPS, 4);
	rec("p6 SO_PROTOCOL", K_OPT, p6, SOL_SOCKET, SO_PROTOCOL, 4);
	rec("p6 sockname", K_NAME, p6, 0, 0, 0);

	/* l4, lsnd, l6, lsh: when the kernel has UDP-Lite (13 checks fewer without) */
	l4 = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
	if (l4 < 0 && (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT)) {
		lite = 0;
		l4 = lsnd = l6 = lsh = -1;
		outf(out, "nolite\n");
	} else {
		if (l4 < 0)
			die("socket l4");
		seti(l4, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 20, "l4 UDPLITE_SEND_CSCOV");
		seti(l4, SOL_UDPLITE, UDPLITE_RECV_CSCOV, 20, "l4 UDPLITE_RECV_CSCOV");
		s = sin4("127.0.0.1", port);
		if (bind(l4, (struct sockaddr *)&s, sizeof(s)))
			die("bind l4");
		rec("l4 UDPLITE_SEND_CSCOV", K_OPT, l4, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 4);
		rec("l4 UDPLITE_RECV_CSCOV", K_OPT, l4, SOL_UDPLITE, UDPLITE_RECV_CSCOV, 4);
		rec("l4 SO_PROTOCOL", K_OPT, l4, SOL_SOCKET, SO_PROTOCOL, 4);
		rec("l4 sockname", K_NAME, l4, 0, 0, 0);
		lsnd = mk(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE, "socket lsnd");
		seti(lsnd, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 8, "lsnd UDPLITE_SEND_CSCOV");
		rec("lsnd UDPLITE_SEND_CSCOV", K_OPT, lsnd, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 4);
		l6 = mk(AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE, "socket l6");
		seti(l6, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 12, "l6 UDPLITE_SEND_CSCOV");
		s6 = sin6("::1", port + 1);
		if (bind(l6, (struct sockaddr *)&s6, sizeof(s6)) || connect(l6, (struct sockaddr *)&s6, sizeof(s6)))
			die("bind/connect l6");
		rec("l6 UDPLITE_SEND_CSCOV", K_OPT, l6, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 4);
		rec("l6 sockname", K_NAME, l6, 0, 0, 0);
		rec("l6 peername", K_PEER, l6, 0, 0, 0);
		lsh = mk(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE, "socket lsh");
		s = sin4("127.0.0.1", port + 2);
		if (bind(lsh, (struct sockaddr *)&s, sizeof(s)))
			die("bind lsh");
		s = sin4("127.0.0.1", port);
		if (connect(lsh, (struct sockaddr *)&s, sizeof(s)) || shutdown(lsh, SHUT_WR))
			die("connect/shutdown lsh");
		rec("lsh sockname", K_NAME, lsh, 0, 0, 0);
		rec("lsh peername", K_PEER, lsh, 0, 0, 0);
	}

	/* ricmp */
	ricmp = mk(AF_INET, SOCK_RAW, IPPROTO_ICMP, "socket ricmp");
	if (setsockopt(ricmp, SOL_RAW, ICMP_FILTER, &f4, sizeof(f4)))
		die("ricmp ICMP_FILTER");
	rec("ricmp ICMP_FILTER", K_OPT, ricmp, SOL_RAW, ICMP_FILTER, sizeof(f4));
	rec("ricmp SO_PROTOCOL", K_OPT, ricmp, SOL_SOCKET, SO_PROTOCOL, 4);

	/* r253 */
	r253 = mk(AF_INET, SOCK_RAW, 253, "socket r253");
	seti(r253, SOL_SOCKET, SO_PRIORITY, 3, "r253 SO_PRIORITY");
	s = sin4("127.0.0.1", 0);
	if (bind(r253, (struct sockaddr *)&s, sizeof(s)) || connect(r253, (struct sockaddr *)&s, sizeof(s)))
		die("bind/connect r253");
	rec("r253 SO_PRIORITY", K_OPT, r253, SOL_SOCKET, SO_PRIORITY, 4);
	rec("r253 SO_PROTOCOL", K_OPT, r253, SOL_SOCKET, SO_PROTOCOL, 4);
	rec("r253 IP_HDRINCL", K_OPT, r253, SOL_IP, IP_HDRINCL, 4);
	rec("r253 sockname", K_NAME, r253, 0, 0, 0);
	rec("r253 peername", K_PEER, r253, 0, 0, 0);

	/* rraw */
	rraw = mk(AF_INET, SOCK_RAW, IPPROTO_RAW, "socket rraw");
	seti(rraw, SOL_SOCKET, SO_MARK, 5, "rraw SO_MARK");
	rec("rraw SO_MARK", K_OPT, rraw, SOL_SOCKET, SO_MARK, 4);
	rec("rraw IP_HDRINCL", K_OPT, rraw, SOL_IP, IP_HDRINCL, 4);
	rec("rraw SO_PROTOCOL", K_OPT, rraw, SOL_SOCKET, SO_PROTOCOL, 4);

	/* rsh */
	rsh = mk(AF_INET, SOCK_RAW, 254, "socket rsh");
	seti(rsh, SOL_IP, IP_HDRINCL, 1, "rsh IP_HDRINCL");
	seti(rsh, SOL_IP, IP_NODEFRAG, 1, "rsh IP_NODEFRAG");
	if (shutdown(rsh, SHUT_WR) && errno != ENOTCONN)
		die("shutdown rsh");
	rec("rsh IP_HDRINCL", K_OPT, rsh, SOL_IP, IP_HDRINCL, 4);
	rec("rsh IP_NODEFRAG", K_OPT, rsh, SOL_IP, IP_NODEFRAG, 4);

	/* rtcp: a raw socket of protocol TCP, connected (not a TCP connection) */
	rtcp = mk(AF_INET, SOCK_RAW, IPPROTO_TCP, "socket rtcp");
	s = sin4("127.0.0.1", 0);
	if (bind(rtcp, (struct sockaddr *)&s, sizeof(s)) || connect(rtcp, (struct sockaddr *)&s, sizeof(s)))
		die("bind/connect rtcp");
	rec("rtcp SO_TYPE", K_OPT, rtcp, SOL_SOCKET, SO_TYPE, 4);
	rec("rtcp SO_PROTOCOL", K_OPT, rtcp, SOL_SOCKET, SO_PROTOCOL, 4);
	rec("rtcp sockname", K_NAME, rtcp, 0, 0, 0);

	/* ricmp6 */
	ricmp6 = mk(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, "socket ricmp6");
	/* a set bit blocks its type */
	memset(&f6, 0xff, sizeof(f6));
	f6.data[ICMPV6_ECHO_REPLY >> 5] &= ~(1U << (ICMPV6_ECHO_REPLY & 31));
	if (setsockopt(ricmp6, SOL_ICMPV6, ICMPV6_FILTER, &f6, sizeof(f6)))
		die("ricmp6 ICMPV6_FILTER");
	rec("ricmp6 ICMPV6_FILTER", K_OPT, ricmp6, SOL_ICMPV6, ICMPV6_FILTER, sizeof(f6));

	/* r6 */
	r6 = mk(AF_INET6, SOCK_RAW, 253, "socket r6");
	seti(r6, SOL_IPV6, IPV6_CHECKSUM, 2, "r6 IPV6_CHECKSUM");
	s6 = sin6("::1", 0);
	if (bind(r6, (struct sockaddr *)&s6, sizeof(s6)))
		die("bind r6");
	rec("r6 IPV6_CHECKSUM", K_OPT, r6, SOL_IPV6, IPV6_CHECKSUM, 4);
	rec("r6 SO_PROTOCOL", K_OPT, r6, SOL_SOCKET, SO_PROTOCOL, 4);
	rec("r6 sockname", K_NAME, r6, 0, 0, 0);
}

/* the next datagram of @fd within @ms, into buf (its length; -1: none) */
static int next(int fd, void *buf, int size, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1 || !(p.revents & POLLIN))
		return -1;
	return recv(fd, buf, size, MSG_DONTWAIT);
}

static void drain(int fd)
{
	char b[2048];

	while (next(fd, b, sizeof(b), 0) >= 0)
		;
}

static uint16_t csum(const void *d, int n)
{
	const unsigned char *p = d;
	uint32_t s = 0;

	for (int i = 0; i + 1 < n; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (n & 1)
		s += p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons(~s);
}

static void check(int round)
{
	unsigned char buf[2048];
	char g[80], w[80], pay[32];
	struct sockaddr_in s;
	struct sockaddr_in6 s6;
	socklen_t len;
	int i, n, found;

	nok = nfail = 0;
	for (i = 0; i < nchk; i++) {
		struct chk *k = &chks[i];
		unsigned char got[128];
		socklen_t gl;
		int e = get(k, got, &gl);

		if (e != k->err) {
			result(0, k->name, "%s (wanted %s)", e ? strerror(e) : "no error",
			       k->err ? strerror(k->err) : "no error");
			continue;
		}
		if (e)
			result(1, k->name, "");
		else {
			hexn(g, got, gl, 32);
			hexn(w, k->want, k->len, 32);
			result(gl == k->len && !memcmp(got, k->want, gl), k->name, "got %s want %s", g, w);
		}
	}
	/* p4: the filter is there, an echo to the connected peer comes back with its ident */
	len = 0;
	n = getsockopt(p4, SOL_SOCKET, SO_GET_FILTER, NULL, &len);
	result(!n && len == 1, "p4 filter", "%d instructions (%s)", (int)len, n ? strerror(errno) : "");
	{
		struct icmphdr h = { .type = ICMP_ECHO, .un.echo.sequence = htons(100 + round) };

		n = send(p4, &h, sizeof(h), 0);
		found = 0;
		while (n >= 0 && !found && (n = next(p4, buf, sizeof(buf), 2000)) >= 0) {
			struct icmphdr *r = (void *)buf;

			found = n >= 8 && r->type == ICMP_ECHOREPLY && ntohs(r->un.echo.id) == port &&
				ntohs(r->un.echo.sequence) == 100 + round;
		}
		result(found, "p4 echo", "no echo reply (%s)", n < 0 ? strerror(errno) : "other");
	}
	{
		struct icmp6hdr h = { .icmp6_type = ICMPV6_ECHO_REQUEST, .icmp6_sequence = htons(200 + round) };

		s6 = sin6("::1", 0);
		n = sendto(p6, &h, sizeof(h), 0, (struct sockaddr *)&s6, sizeof(s6));
		found = 0;
		while (n >= 0 && !found && (n = next(p6, buf, sizeof(buf), 2000)) >= 0) {
			struct icmp6hdr *r = (void *)buf;

			found = n >= 8 && r->icmp6_type == ICMPV6_ECHO_REPLY &&
				ntohs(r->icmp6_identifier) == port + 1 && ntohs(r->icmp6_sequence) == 200 + round;
		}
		result(found, "p6 echo", "no echo reply (%s)", n < 0 ? strerror(errno) : "other");
	}
	/* l4: lsnd's coverage 8 is below its 20: dropped; its own (20) comes */
	if (lite) {
		s = sin4("127.0.0.1", port);
		sendto(lsnd, "short", 5, 0, (struct sockaddr *)&s, sizeof(s));
		usleep(100000);
		sendto(l4, "self", 4, 0, (struct sockaddr *)&s, sizeof(s));
		n = next(l4, buf, sizeof(buf), 2000);
		result(n == 4 && !memcmp(buf, "self", 4), "l4 coverage", "received %d bytes %.*s", n,
		       n > 0 ? n : 0, buf);
		drain(l4);
		n = send(l6, "six", 3, 0);
		n = n == 3 ? next(l6, buf, sizeof(buf), 2000) : -1;
		result(n == 3 && !memcmp(buf, "six", 3), "l6 self", "received %d", n);
		n = send(lsh, "no", 2, MSG_NOSIGNAL | MSG_DONTWAIT);
		result(n < 0 && errno == EPIPE, "lsh shutdown", "send: %s", n < 0 ? strerror(errno) : "accepted");
		drain(l4);
	}
	/* ricmp: its own echo request's reply, and the request filtered out */
	{
		struct icmphdr h = { .type = ICMP_ECHO, .un.echo.id = htons(0x5151),
				     .un.echo.sequence = htons(300 + round) };
		int req = 0;

		h.checksum = csum(&h, sizeof(h));
		s = sin4("127.0.0.1", 0);
		n = sendto(ricmp, &h, sizeof(h), 0, (struct sockaddr *)&s, sizeof(s));
		found = 0;
		while (n >= 0 && !found && (n = next(ricmp, buf, sizeof(buf), 2000)) >= 0) {
			int hl = (buf[0] & 15) * 4;
			struct icmphdr *r = (void *)(buf + hl);

			if (n < hl + 8)
				continue;
			if (r->type == ICMP_ECHO)
				req++;
			found = r->type == ICMP_ECHOREPLY && ntohs(r->un.echo.id) == 0x5151 &&
				ntohs(r->un.echo.sequence) == 300 + round;
		}
		result(found && !req, "ricmp echo, filtered", "reply %d, requests seen %d (%s)", found, req,
		       n < 0 ? strerror(errno) : "");
	}
	/* r253: its own packet (connected: send), then rraw's, with rraw's own IPv4 header */
	snprintf(pay, sizeof(pay), "r253-%d", round);
	n = send(r253, pay, strlen(pay), 0);
	found = 0;
	while (n >= 0 && !found && (n = next(r253, buf, sizeof(buf), 2000)) >= 0) {
		int hl = (buf[0] & 15) * 4;

		found = n == hl + (int)strlen(pay) && !memcmp(buf + hl, pay, strlen(pay));
	}
	result(found, "r253 self", "%s", n < 0 ? strerror(errno) : "other");
	{
		unsigned char p[64] = { 0x45, 0 };
		int pl;

		snprintf(pay, sizeof(pay), "viaraw-%d", round);
		pl = 20 + strlen(pay);
		p[2] = pl >> 8;
		p[3] = pl & 255;
		p[8] = 64;	/* TTL */
		p[9] = 253;
		inet_pton(AF_INET, "127.0.0.1", p + 12);
		inet_pton(AF_INET, "127.0.0.1", p + 16);
		memcpy(p + 20, pay, strlen(pay));
		s = sin4("127.0.0.1", 0);
		n = sendto(rraw, p, pl, 0, (struct sockaddr *)&s, sizeof(s));
		found = 0;
		while (n >= 0 && !found && (n = next(r253, buf, sizeof(buf), 2000)) >= 0) {
			int hl = (buf[0] & 15) * 4;

			found = n == hl + (int)strlen(pay) && !memcmp(buf + hl, pay, strlen(pay));
		}
		result(found, "rraw header included", "%s", n < 0 ? strerror(errno) : "other");
		/* rsh: shut down for writing */
		p[9] = 254;
		n = sendto(rsh, p, pl, MSG_DONTWAIT, (struct sockaddr *)&s, sizeof(s));
		result(n < 0 && errno == EPIPE, "rsh shutdown", "sendto: %s", n < 0 ? strerror(errno) : "accepted");
	}
	/* ricmp6: its echo reply (the kernel checksums ICMPv6) */
	{
		struct icmp6hdr h = { .icmp6_type = ICMPV6_ECHO_REQUEST, .icmp6_identifier = htons(0x6161),
				      .icmp6_sequence = htons(400 + round) };

		s6 = sin6("::1", 0);
		n = sendto(ricmp6, &h, sizeof(h), 0, (struct sockaddr *)&s6, sizeof(s6));
		found = 0;
		while (n >= 0 && !found && (n = next(ricmp6, buf, sizeof(buf), 2000)) >= 0) {
			struct icmp6hdr *r = (void *)buf;

			found = n >= 8 && r->icmp6_type == ICMPV6_ECHO_REPLY &&
				ntohs(r->icmp6_identifier) == 0x6161 && ntohs(r->icmp6_sequence) == 400 + round;
		}
		result(found, "ricmp6 echo", "%s", n < 0 ? strerror(errno) : "other");
	}
	/* r6: its own packet, the checksum at offset 2 put by the kernel (IPV6_CHECKSUM 2) */
	{
		unsigned char p[16] = { 'r', '6', 0, 0, 'c', 'k', (unsigned char)round, 0x5a };

		s6 = sin6("::1", 0);
		n = sendto(r6, p, 8, 0, (struct sockaddr *)&s6, sizeof(s6));
		found = 0;
		while (n >= 0 && !found && (n = next(r6, buf, sizeof(buf), 2000)) >= 0)
			found = n == 8 && buf[0] == 'r' && buf[6] == (unsigned char)round;
		result(found && (buf[2] || buf[3]), "r6 checksum", "received %d, checksum %02x%02x", found,
		       buf[2], buf[3]);
	}
	/* nothing left queued (a late packet would refuse the dump) */
	usleep(200000);
	drain(p4);
	drain(p6);
	drain(ricmp);
	drain(r253);
	drain(rtcp);
	drain(ricmp6);
	drain(r6);
	drain(l4);
	drain(l6);
	outf(out, "round %d ok %d fail %d\n", round, nok, nfail);
}

static __attribute__((noreturn)) void refuse(const char *what)
{
	int fd;

	if (!strcmp(what, "queued")) {
		struct icmphdr h = { .type = ICMP_ECHO, .un.echo.sequence = htons(7) };
		struct sockaddr_in s = sin4("127.0.0.1", 0);
		struct pollfd p;

		fd = mk(AF_INET, SOCK_DGRAM, IPPROTO_ICMP, "socket");
		if (sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&s, sizeof(s)) < 0)
			die("sendto");
		p.fd = fd;
		p.events = POLLIN;
		if (poll(&p, 1, 5000) != 1)
			die("no echo reply");
	} else if (!strcmp(what, "error")) {
		struct sockaddr_in s = sin4("127.0.0.1", port + 9);
		struct pollfd p;

		fd = mk(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE, "socket");
		seti(fd, SOL_IP, IP_RECVERR, 1, "IP_RECVERR");
		if (connect(fd, (struct sockaddr *)&s, sizeof(s)) || send(fd, "x", 1, 0) != 1)
			die("connect/send");
		p.fd = fd;
		p.events = 0;
		if (poll(&p, 1, 5000) != 1 || !(p.revents & POLLERR))
			die("no error");
	} else {
		die("refuse what?");
	}
	outf(out, "fd %d ready\n", fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int round = 0, r = argc == 5 && !strcmp(argv[1], "refuse");

	if (argc != 4 && !r)
		return 2;
	port = atoi(argv[2 + r]);
	out = open(argv[3 + r], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 2;
	if (r)
		refuse(argv[2]);
	signal(SIGUSR1, on_usr1);
	setup();
	check(0);
	outf(out, "ready\n");
	for (;;) {
		while (go == round)
			usleep(50000);
		round++;
		check(round);
	}
}
