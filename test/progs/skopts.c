/*
 * skopts: socket options and socket state for t_sk_opts.
 *
 * skopts run PORT OUT
 *   Makes, in one process:
 *     u1  UDP 127.0.0.1:PORT, SO_BROADCAST, SO_PRIORITY 5, SO_MARK 42,
 *         IP_TTL 33, SO_BINDTODEVICE lo, SO_RCVBUF 65536 then SO_BUF_LOCK 1
 *         (only the receive size locked), a classic BPF filter dropping
 *         datagrams that begin with 'X', SO_LOCK_FILTER;
 *     u2  UDP with IP_FREEBIND bound to 192.0.2.1:PORT+1 (not the host's);
 *     u3  UDP connected to u1, shut down for writing;
 *     l   TCP listening on 127.0.0.1:PORT+2: SO_REUSEADDR, TCP_KEEPIDLE 100,
 *         TCP_KEEPINTVL 20, TCP_KEEPCNT 4, TCP_DEFER_ACCEPT 5, TCP_MAXSEG 1000;
 *     c   TCP connected to l: SO_LINGER on 7 s, SO_REUSEADDR, SO_KEEPALIVE,
 *         TCP_KEEPIDLE 200, TCP_KEEPINTVL 30, TCP_KEEPCNT 5, TCP_NODELAY,
 *         TCP_USER_TIMEOUT 5000, TCP_CONGESTION reno, IP_TOS 0x10;
 *     a   c accepted by l: SO_LINGER on 3 s, SO_KEEPALIVE, TCP_KEEPIDLE 300,
 *         TCP_KEEPINTVL 40, TCP_KEEPCNT 6, TCP_NODELAY, SO_REUSEADDR inherited;
 *     v6  UDP IPv6, IPV6_V6ONLY, IPV6_FREEBIND, IPV6_RECVHOPOPTS, IPV6_FLOWINFO,
 *         IPV6_2292RTHDR, SO_TIMESTAMP_NEW, bound to [2001:db8::1]:PORT+3;
 *     un  a unix datagram pair, one end with SO_PASSCRED and SO_PASSSEC.
 *   Records each value as getsockopt reads it, checks them all ("pre"),
 *   prints "ready", then on each SIGUSR1 checks every value again with
 *   getsockopt, and by behaviour: the filter still drops 'X' datagrams,
 *   u3 says EPIPE to a send, c and a still exchange bytes.  One line per
 *   check, "OK NAME" or "FAIL NAME: ...", then "round N ok K fail F".
 *
 * skopts refuse ebpf|mcast|cork PORT OUT
 *   A UDP socket with an eBPF filter (SO_ATTACH_BPF), in a multicast group
 *   (224.0.0.251 on lo), or corked with a datagram not yet sent (UDP_CORK);
 *   prints "fd N ready" (its fd) and sleeps.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"
#include "skcheck.h"

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif
#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif
#ifndef SO_LOCK_FILTER
#define SO_LOCK_FILTER 44
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif
#ifndef UDP_CORK
#define UDP_CORK 1
#endif

/* the values checked: as getsockopt read them after the setup */
struct chk {
	const char *name;
	int fd, lvl, opt;
	unsigned char want[64];
	socklen_t len;
};
static struct chk chks[64];
static int nchk;

static void rec(const char *name, int fd, int lvl, int opt, socklen_t len)
{
	struct chk *c = &chks[nchk++];

	c->name = name;
	c->fd = fd;
	c->lvl = lvl;
	c->opt = opt;
	c->len = len;
	if (getsockopt(fd, lvl, opt, c->want, &c->len))
		die(name);
}

static int u1, u2, u3, l, c, a, v6, un[2], snd;
static int port;

static struct sock_filter prog[] = {
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 8),	/* the first byte after the UDP header */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'X', 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 0),
	BPF_STMT(BPF_RET | BPF_K, 0xffff),
};

static struct sockaddr_in sin4(const char *ip, int p)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(p) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

static void setup(void)
{
	struct sockaddr_in s;
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sock_fprog fp = { .len = 4, .filter = prog };
	struct linger lg = { 1, 7 }, lg2 = { 1, 3 };
	char b;

	/* u1 */
	if ((u1 = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		die("socket u1");
	seti(u1, SOL_SOCKET, SO_BROADCAST, 1, "SO_BROADCAST");
	seti(u1, SOL_SOCKET, SO_PRIORITY, 5, "SO_PRIORITY");
	seti(u1, SOL_SOCKET, SO_MARK, 42, "SO_MARK");
	seti(u1, SOL_IP, IP_TTL, 33, "IP_TTL");
	if (setsockopt(u1, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3))
		die("SO_BINDTODEVICE");
	seti(u1, SOL_SOCKET, SO_RCVBUF, 65536, "SO_RCVBUF");
	seti(u1, SOL_SOCKET, SO_BUF_LOCK, 2 /* SOCK_RCVBUF_LOCK */, "SO_BUF_LOCK");
	if (setsockopt(u1, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
		die("SO_ATTACH_FILTER");
	seti(u1, SOL_SOCKET, SO_LOCK_FILTER, 1, "SO_LOCK_FILTER");
	s = sin4("127.0.0.1", port);
	if (bind(u1, (struct sockaddr *)&s, sizeof(s)))
		die("bind u1");
	rec("u1 SO_BROADCAST", u1, SOL_SOCKET, SO_BROADCAST, 4);
	rec("u1 SO_PRIORITY", u1, SOL_SOCKET, SO_PRIORITY, 4);
	rec("u1 SO_MARK", u1, SOL_SOCKET, SO_MARK, 4);
	rec("u1 IP_TTL", u1, SOL_IP, IP_TTL, 4);
	rec("u1 SO_BINDTODEVICE", u1, SOL_SOCKET, SO_BINDTODEVICE, 16);
	rec("u1 SO_RCVBUF", u1, SOL_SOCKET, SO_RCVBUF, 4);
	rec("u1 SO_BUF_LOCK", u1, SOL_SOCKET, SO_BUF_LOCK, 4);
	rec("u1 SO_LOCK_FILTER", u1, SOL_SOCKET, SO_LOCK_FILTER, 4);
	/* a sender for the filter check */
	if ((snd = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		die("socket snd");

	/* u2: freebind, bound to an address the host does not have */
	if ((u2 = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		die("socket u2");
	seti(u2, SOL_IP, IP_FREEBIND, 1, "IP_FREEBIND");
	s = sin4("192.0.2.1", port + 1);
	if (bind(u2, (struct sockaddr *)&s, sizeof(s)))
		die("bind u2");
	rec("u2 IP_FREEBIND", u2, SOL_IP, IP_FREEBIND, 4);

	/* u3: connected, shut down for writing */
	if ((u3 = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		die("socket u3");
	s = sin4("127.0.0.1", port);
	if (connect(u3, (struct sockaddr *)&s, sizeof(s)))
		die("connect u3");
	if (shutdown(u3, SHUT_WR))
		die("shutdown u3");

	/* l, c, a */
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket l");
	seti(l, SOL_SOCKET, SO_REUSEADDR, 1, "l SO_REUSEADDR");
	seti(l, SOL_TCP, TCP_KEEPIDLE, 100, "l TCP_KEEPIDLE");
	seti(l, SOL_TCP, TCP_KEEPINTVL, 20, "l TCP_KEEPINTVL");
	seti(l, SOL_TCP, TCP_KEEPCNT, 4, "l TCP_KEEPCNT");
	seti(l, SOL_TCP, TCP_DEFER_ACCEPT, 5, "l TCP_DEFER_ACCEPT");
	seti(l, SOL_TCP, TCP_MAXSEG, 1000, "l TCP_MAXSEG");
	s = sin4("127.0.0.1", port + 2);
	if (bind(l, (struct sockaddr *)&s, sizeof(s)) || listen(l, 8))
		die("bind/listen l");
	if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket c");
	if (connect(c, (struct sockaddr *)&s, sizeof(s)))
		die("connect c");
	if (write(c, "h", 1) != 1)	/* TCP_DEFER_ACCEPT: accepted once data came */
		die("write c");
	if ((a = accept(l, NULL, NULL)) < 0)
		die("accept");
	if (read(a, &b, 1) != 1)
		die("read a");
	rec("l SO_REUSEADDR", l, SOL_SOCKET, SO_REUSEADDR, 4);
	rec("l TCP_KEEPIDLE", l, SOL_TCP, TCP_KEEPIDLE, 4);
	rec("l TCP_KEEPINTVL", l, SOL_TCP, TCP_KEEPINTVL, 4);
	rec("l TCP_KEEPCNT", l, SOL_TCP, TCP_KEEPCNT, 4);
	rec("l TCP_DEFER_ACCEPT", l, SOL_TCP, TCP_DEFER_ACCEPT, 4);
	rec("l TCP_MAXSEG", l, SOL_TCP, TCP_MAXSEG, 4);

	if (setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		die("c SO_LINGER");
	seti(c, SOL_SOCKET, SO_REUSEADDR, 1, "c SO_REUSEADDR");
	seti(c, SOL_SOCKET, SO_KEEPALIVE, 1, "c SO_KEEPALIVE");
	seti(c, SOL_TCP, TCP_KEEPIDLE, 200, "c TCP_KEEPIDLE");
	seti(c, SOL_TCP, TCP_KEEPINTVL, 30, "c TCP_KEEPINTVL");
	seti(c, SOL_TCP, TCP_KEEPCNT, 5, "c TCP_KEEPCNT");
	seti(c, SOL_TCP, TCP_NODELAY, 1, "c TCP_NODELAY");
	seti(c, SOL_TCP, TCP_USER_TIMEOUT, 5000, "c TCP_USER_TIMEOUT");
	seti(c, SOL_IP, IP_TOS, 0x10, "c IP_TOS");
	if (setsockopt(c, SOL_TCP, TCP_CONGESTION, "reno", 4))
		die("c TCP_CONGESTION");
	rec("c SO_LINGER", c, SOL_SOCKET, SO_LINGER, sizeof(lg));
	rec("c SO_REUSEADDR", c, SOL_SOCKET, SO_REUSEADDR, 4);
	rec("c SO_KEEPALIVE", c, SOL_SOCKET, SO_KEEPALIVE, 4);
	rec("c TCP_KEEPIDLE", c, SOL_TCP, TCP_KEEPIDLE, 4);
	rec("c TCP_KEEPINTVL", c, SOL_TCP, TCP_KEEPINTVL, 4);
	rec("c TCP_KEEPCNT", c, SOL_TCP, TCP_KEEPCNT, 4);
	rec("c TCP_NODELAY", c, SOL_TCP, TCP_NODELAY, 4);
	rec("c TCP_USER_TIMEOUT", c, SOL_TCP, TCP_USER_TIMEOUT, 4);
	rec("c IP_TOS", c, SOL_IP, IP_TOS, 4);
	rec("c TCP_CONGESTION", c, SOL_TCP, TCP_CONGESTION, 16);

	if (setsockopt(a, SOL_SOCKET, SO_LINGER, &lg2, sizeof(lg2)))
		die("a SO_LINGER");
	seti(a, SOL_SOCKET, SO_KEEPALIVE, 1, "a SO_KEEPALIVE");
	seti(a, SOL_TCP, TCP_KEEPIDLE, 300, "a TCP_KEEPIDLE");
	seti(a, SOL_TCP, TCP_KEEPINTVL, 40, "a TCP_KEEPINTVL");
	seti(a, SOL_TCP, TCP_KEEPCNT, 6, "a TCP_KEEPCNT");
	seti(a, SOL_TCP, TCP_NODELAY, 1, "a TCP_NODELAY");
	rec("a SO_LINGER", a, SOL_SOCKET, SO_LINGER, sizeof(lg2));
	rec("a SO_REUSEADDR", a, SOL_SOCKET, SO_REUSEADDR, 4);
	rec("a SO_KEEPALIVE", a, SOL_SOCKET, SO_KEEPALIVE, 4);
	rec("a TCP_KEEPIDLE", a, SOL_TCP, TCP_KEEPIDLE, 4);
	rec("a TCP_KEEPINTVL", a, SOL_TCP, TCP_KEEPINTVL, 4);
	rec("a TCP_KEEPCNT", a, SOL_TCP, TCP_KEEPCNT, 4);
	rec("a TCP_NODELAY", a, SOL_TCP, TCP_NODELAY, 4);

	/* v6 */
	if ((v6 = socket(AF_INET6, SOCK_DGRAM, 0)) < 0)
		die("socket v6");
	seti(v6, SOL_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY");
	seti(v6, SOL_IPV6, IPV6_FREEBIND, 1, "IPV6_FREEBIND");
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	s6.sin6_port = htons(port + 3);
	if (bind(v6, (struct sockaddr *)&s6, sizeof(s6)))
		die("bind v6");
	rec("v6 IPV6_V6ONLY", v6, SOL_IPV6, IPV6_V6ONLY, 4);
	rec("v6 IPV6_FREEBIND", v6, SOL_IPV6, IPV6_FREEBIND, 4);
	/* receive options getsockopt of the older names does not show (sk-opts.c) */
	seti(v6, SOL_IPV6, IPV6_RECVHOPOPTS, 1, "IPV6_RECVHOPOPTS");
	seti(v6, SOL_IPV6, 11, 1, "IPV6_FLOWINFO");
	seti(v6, SOL_IPV6, 5, 1, "IPV6_2292RTHDR");
	seti(v6, SOL_SOCKET, 63, 1, "SO_TIMESTAMP_NEW");
	rec("v6 IPV6_RECVHOPOPTS", v6, SOL_IPV6, IPV6_RECVHOPOPTS, 4);
	rec("v6 IPV6_FLOWINFO", v6, SOL_IPV6, 11, 4);
	rec("v6 IPV6_2292RTHDR", v6, SOL_IPV6, 5, 4);
	rec("v6 SO_TIMESTAMP_NEW", v6, SOL_SOCKET, 63, 4);

	/* un */
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, un))
		die("socketpair");
	seti(un[0], SOL_SOCKET, SO_PASSCRED, 1, "SO_PASSCRED");
	seti(un[0], SOL_SOCKET, SO_PASSSEC, 1, "SO_PASSSEC");
	rec("un SO_PASSCRED", un[0], SOL_SOCKET, SO_PASSCRED, 4);
	rec("un SO_PASSSEC", un[0], SOL_SOCKET, SO_PASSSEC, 4);
}

/* the next datagram u1 has, within 2 s, into buf (its length; -1: none) */
static int u1_next(char *buf, int size)
{
	struct pollfd p = { .fd = u1, .events = POLLIN };

	if (poll(&p, 1, 2000) != 1)
		return -1;
	return recv(u1, buf, size, MSG_DONTWAIT);
}

static void check(int round)
{
	struct sockaddr_storage ss;
	struct sockaddr_in s;
	struct sock_filter f[8];
	socklen_t len;
	char g[64], w[64], buf[64];
	int i, n;

	nok = nfail = 0;
	for (i = 0; i < nchk; i++) {
		struct chk *k = &chks[i];
		unsigned char got[64];
		socklen_t gl = sizeof(got);

		memset(got, 0, sizeof(got));
		if (getsockopt(k->fd, k->lvl, k->opt, got, &gl)) {
			result(0, k->name, "getsockopt: %s", strerror(errno));
			continue;
		}
		hexn(g, got, gl, 20);
		hexn(w, k->want, k->len, 20);
		result(gl == k->len && !memcmp(got, k->want, gl), k->name, "got %s want %s", g, w);
	}
	/* the filter: the same program, and it still drops 'X' datagrams */
	len = 0;
	n = getsockopt(u1, SOL_SOCKET, SO_GET_FILTER, NULL, &len);
	result(!n && len == 4, "u1 filter length", "%d instructions (%s)", (int)len, n ? strerror(errno) : "");
	len = 8;
	n = getsockopt(u1, SOL_SOCKET, SO_GET_FILTER, f, &len);
	result(!n && len == 4 && !memcmp(f, prog, sizeof(prog)), "u1 filter program", "differs");
	s = sin4("127.0.0.1", port);
	sendto(snd, "Xdropped", 8, 0, (struct sockaddr *)&s, sizeof(s));
	sendto(snd, "kept", 4, 0, (struct sockaddr *)&s, sizeof(s));
	n = u1_next(buf, sizeof(buf));
	result(n == 4 && !memcmp(buf, "kept", 4), "u1 filter drops", "received %d bytes %.*s", n, n > 0 ? n : 0, buf);
	/* the filter lock: another filter is refused */
	{
		struct sock_fprog fp = { .len = 4, .filter = prog };

		n = setsockopt(u1, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
		result(n && errno == EPERM, "u1 filter locked", "SO_ATTACH_FILTER again: %s", n ? strerror(errno) : "accepted");
	}
	/* u2 bound where it was */
	len = sizeof(ss);
	getsockname(u2, (struct sockaddr *)&ss, &len);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, g, sizeof(g));
	result(!strcmp(g, "192.0.2.1") && ntohs(((struct sockaddr_in *)&ss)->sin_port) == port + 1,
	       "u2 bound", "bound to %s:%d", g, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	/* u3 shut down for writing */
	n = send(u3, "no", 2, MSG_NOSIGNAL | MSG_DONTWAIT);
	result(n < 0 && errno == EPIPE, "u3 shutdown", "send: %s", n < 0 ? strerror(errno) : "accepted");
	if (n > 0) {
		u1_next(buf, sizeof(buf));	/* it reached u1: taken away again */
	}
	/* v6 bound where it was */
	len = sizeof(ss);
	getsockname(v6, (struct sockaddr *)&ss, &len);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, g, sizeof(g));
	result(!strcmp(g, "2001:db8::1"), "v6 bound", "bound to %s", g);
	/* c and a still connected */
	n = write(c, "ping", 4);
	{
		struct pollfd p = { .fd = a, .events = POLLIN };

		if (n == 4 && poll(&p, 1, 5000) == 1)
			n = read(a, buf, sizeof(buf));
		else
			n = -1;
	}
	result(n == 4 && !memcmp(buf, "ping", 4), "c->a data", "read %d", n);
	/* the unix pair: a credential comes with a datagram */
	{
		char cb[CMSG_SPACE(sizeof(struct ucred)) + 256];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb,
				     .msg_controllen = sizeof(cb) };
		struct cmsghdr *cm;
		int cred = 0;

		n = write(un[1], "u", 1);
		n = recvmsg(un[0], &mh, MSG_DONTWAIT);
		for (cm = CMSG_FIRSTHDR(&mh); n == 1 && cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
				cred = 1;
		result(cred, "un SCM_CREDENTIALS", "recvmsg %d, no credentials", n);
	}
	outf(out, "round %d ok %d fail %d\n", round, nok, nfail);
}

static __attribute__((noreturn)) void refuse(const char *what)
{
	struct sockaddr_in s = sin4("127.0.0.1", port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	if (!strcmp(what, "ebpf")) {
		struct bpf_insn insn[2] = {
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0xffff },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		union bpf_attr at;
		int pfd;

		memset(&at, 0, sizeof(at));
		at.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		at.insns = (unsigned long)insn;
		at.insn_cnt = 2;
		at.license = (unsigned long)"GPL";
		pfd = syscall(__NR_bpf, BPF_PROG_LOAD, &at, sizeof(at));
		if (pfd < 0)
			die("BPF_PROG_LOAD");
		seti(fd, SOL_SOCKET, SO_ATTACH_BPF, pfd, "SO_ATTACH_BPF");
		close(pfd);
	} else if (!strcmp(what, "mcast")) {
		struct ip_mreqn m = { .imr_ifindex = if_nametoindex("lo") };

		inet_pton(AF_INET, "224.0.0.251", &m.imr_multiaddr);
		if (setsockopt(fd, SOL_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)))
			die("IP_ADD_MEMBERSHIP");
	} else if (!strcmp(what, "cork")) {
		seti(fd, SOL_UDP, UDP_CORK, 1, "UDP_CORK");
		if (sendto(fd, "corked", 6, 0, (struct sockaddr *)&s, sizeof(s)) != 6)
			die("sendto");
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
