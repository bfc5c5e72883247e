/*
 * skpkt: packet sockets for t_sk_packet.
 *
 * skpkt run PORT OUT
 *   Makes, in one process:
 *     p1  SOCK_RAW, ETH_P_ALL, bound to lo, PACKET_IGNORE_OUTGOING,
 *         PACKET_AUXDATA, PACKET_ORIGDEV, PACKET_VERSION TPACKET_V2, a
 *         classic filter taking only UDP datagrams to PORT (8 instructions);
 *     p2  SOCK_DGRAM, protocol 0x88b5 (local experimental), every device,
 *         memberships on lo: PACKET_MR_PROMISC, PACKET_MR_ALLMULTI twice,
 *         PACKET_MR_MULTICAST 01:00:5e:00:00:fb;
 *     p3  SOCK_RAW, protocol 0 (receiving nothing), PACKET_VNET_HDR,
 *         PACKET_LOSS, PACKET_TX_HAS_OFF, PACKET_QDISC_BYPASS,
 *         PACKET_TIMESTAMP, PACKET_RESERVE 64, SO_RCVBUF 100000.
 *   Records what getsockname and the options read, prints "ready", then on
 *   each SIGUSR1 checks every value again and by behaviour: p1 receives a
 *   UDP datagram sent to 127.0.0.1:PORT and not one to PORT+1, p2 receives
 *   a 0x88b5 frame sent on lo.  One line per check, "OK NAME" or
 *   "FAIL NAME: ...", then "round N ok K fail F".
 *
 * skpkt refuse ring|queue|fanout OUT
 *   A packet socket with a PACKET_RX_RING, holding a packet not yet read,
 *   or in a fanout group; prints "fd N ready" and sleeps.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "skcheck.h"

#ifndef PACKET_QDISC_BYPASS
#define PACKET_QDISC_BYPASS 20
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif
#define PROTO_X 0x88b5

static int port, lo;

struct chk {
	char name[48];
	int fd, kind, lvl, opt;	/* kind 0: getsockopt, 1: getsockname */
	unsigned char want[128];
	socklen_t len;
};
static struct chk chks[128];
static int nchk;

static int readv_(const struct chk *c, unsigned char *buf, socklen_t *len)
{
	*len = c->lvl == SOL_SOCKET && c->opt == SO_GET_FILTER ? 16 : sizeof(int);
	if (c->kind == 1)
		*len = sizeof(c->want);
	memset(buf, 0, sizeof(c->want));
	if (c->kind == 1)
		return getsockname(c->fd, (struct sockaddr *)buf, len);
	return getsockopt(c->fd, c->lvl, c->opt, buf, len);
}

static void rec(const char *sk, const char *name, int fd, int kind, int lvl, int opt)
{
	struct chk *c = &chks[nchk++];

	snprintf(c->name, sizeof(c->name), "%s.%s", sk, name);
	c->fd = fd;
	c->kind = kind;
	c->lvl = lvl;
	c->opt = opt;
	if (readv_(c, c->want, &c->len))
		die(c->name);
}

static int p1, p2, p3;

static void check_all(void)
{
	unsigned char buf[128];
	socklen_t len;
	char a[90], b[90];

	for (int i = 0; i < nchk; i++) {
		struct chk *c = &chks[i];
		int r = readv_(c, buf, &len);

		hexn(a, c->want, c->len, 40);
		hexn(b, buf, r ? 0 : len, 40);
		result(!r && len == c->len && !memcmp(buf, c->want, len), c->name, "was %s, now %s%s",
		       a, b, r ? strerror(errno) : "");
	}
}

static void udp_to(int p, const char *msg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(p) };
	int u = socket(AF_INET, SOCK_DGRAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sendto(u, msg, strlen(msg), 0, (struct sockaddr *)&sin, sizeof(sin));
	close(u);
}

/* the next frame on @fd within 1 s: its length, -1 if none */
static ssize_t next(int fd, char *buf, size_t size)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	if (poll(&pf, 1, 1000) <= 0)
		return -1;
	return recv(fd, buf, size, MSG_DONTWAIT);
}

static void check_recv(int round)
{
	char buf[2048], msg[32];
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO_X),
				  .sll_ifindex = lo, .sll_halen = 6 };
	ssize_t n;
	int s;

	/* p1: a datagram to PORT+1 (filtered out), then one to PORT */
	snprintf(msg, sizeof(msg), "drop%d", round);
	udp_to(port + 1, msg);
	snprintf(msg, sizeof(msg), "take%d", round);
	udp_to(port, msg);
	n = next(p1, buf, sizeof(buf));
	result(n > 28 && !memcmp(buf + n - strlen(msg), msg, strlen(msg)), "p1.recv",
	       "got %zd bytes", n);
	n = next(p1, buf, sizeof(buf));
	result(n < 0, "p1.filter", "one more frame (%zd bytes): not filtered, or seen twice", n);
	/* p2: a frame of PROTO_X on lo */
	s = socket(AF_PACKET, SOCK_DGRAM, 0);	/* sends only */
	snprintf(msg, sizeof(msg), "frame%d", round);
	if (sendto(s, msg, strlen(msg), 0, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		result(0, "p2.send", "%s", strerror(errno));
	close(s);
	n = next(p2, buf, sizeof(buf));
	result(n >= (ssize_t)strlen(msg) && !memcmp(buf, msg, strlen(msg)), "p2.recv", "got %zd bytes", n);
	while ((n = next(p2, buf, sizeof(buf))) >= 0)
		;	/* lo shows it twice to a socket of every device (out and in) */
}

static int run(const char *path)
{
	/* UDP to PORT: ether type IPv4, IP protocol 17, destination port (IHL 5) */
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 5),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 3),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 36),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog fp = { 8, prog };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { 0 };
	unsigned char mc[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
	int round = 0;

	out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 1;
	signal(SIGUSR1, on_usr1);
	lo = if_nametoindex("lo");
	/* the filter before the protocol: nothing unfiltered is queued */
	p1 = socket(AF_PACKET, SOCK_RAW, 0);
	if (p1 < 0 || setsockopt(p1, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
		die("p1 filter");
	seti(p1, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
	seti(p1, SOL_PACKET, PACKET_AUXDATA, 1, "PACKET_AUXDATA");
	seti(p1, SOL_PACKET, PACKET_ORIGDEV, 1, "PACKET_ORIGDEV");
	seti(p1, SOL_PACKET, PACKET_VERSION, TPACKET_V2, "PACKET_VERSION");
	ll.sll_ifindex = lo;
	if (bind(p1, (struct sockaddr *)&ll, sizeof(ll)))
		die("bind p1");
	p2 = socket(AF_PACKET, SOCK_DGRAM, htons(PROTO_X));
	if (p2 < 0)
		die("p2");
	mr.mr_ifindex = lo;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(p2, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		die("PACKET_MR_PROMISC");
	mr.mr_type = PACKET_MR_ALLMULTI;
	if (setsockopt(p2, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) ||
	    setsockopt(p2, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		die("PACKET_MR_ALLMULTI");
	mr.mr_type = PACKET_MR_MULTICAST;
	mr.mr_alen = 6;
	memcpy(mr.mr_address, mc, 6);
	if (setsockopt(p2, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		die("PACKET_MR_MULTICAST");
	p3 = socket(AF_PACKET, SOCK_RAW, 0);
	if (p3 < 0)
		die("p3");
	seti(p3, SOL_PACKET, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR");
	seti(p3, SOL_PACKET, PACKET_LOSS, 1, "PACKET_LOSS");
	seti(p3, SOL_PACKET, PACKET_TX_HAS_OFF, 1, "PACKET_TX_HAS_OFF");
	seti(p3, SOL_PACKET, PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS");
	seti(p3, SOL_PACKET, PACKET_TIMESTAMP, 1 << 4, "PACKET_TIMESTAMP");
	seti(p3, SOL_PACKET, PACKET_RESERVE, 64, "PACKET_RESERVE");
	seti(p3, SOL_SOCKET, SO_RCVBUF, 100000, "SO_RCVBUF");

	static const struct {
		int lvl, opt;
		const char *name;
	} o[] = {
		{ SOL_PACKET, PACKET_VERSION, "PACKET_VERSION" },
		{ SOL_PACKET, PACKET_RESERVE, "PACKET_RESERVE" },
		{ SOL_PACKET, PACKET_AUXDATA, "PACKET_AUXDATA" },
		{ SOL_PACKET, PACKET_ORIGDEV, "PACKET_ORIGDEV" },
		{ SOL_PACKET, PACKET_VNET_HDR, "PACKET_VNET_HDR" },
		{ SOL_PACKET, PACKET_LOSS, "PACKET_LOSS" },
		{ SOL_PACKET, PACKET_TIMESTAMP, "PACKET_TIMESTAMP" },
		{ SOL_PACKET, PACKET_TX_HAS_OFF, "PACKET_TX_HAS_OFF" },
		{ SOL_PACKET, PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS" },
		{ SOL_PACKET, PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING" },
		{ SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF" },
		{ SOL_SOCKET, SO_GET_FILTER, "filter" },
	};
	static const char *names[] = { "p1", "p2", "p3" };
	int fds[] = { p1, p2, p3 };

	for (int k = 0; k < 3; k++) {
		rec(names[k], "sockname", fds[k], 1, 0, 0);
		for (size_t j = 0; j < sizeof(o) / sizeof(o[0]); j++)
			rec(names[k], o[j].name, fds[k], 0, o[j].lvl, o[j].opt);
	}
	outf(out, "round 0 ok %d fail %d\n", nok, nfail);
	outf(out, "ready\n");
	for (;;) {
		while (go == round)
			pause();
		round++;
		nok = nfail = 0;
		check_all();
		check_recv(round);
		outf(out, "round %d ok %d fail %d\n", round, nok, nfail);
	}
}

static int refuse(const char *what, const char *path)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO_X) };
	int fd = socket(AF_PACKET, SOCK_DGRAM, htons(PROTO_X));

	out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0 || fd < 0)
		return 1;
	if (!strcmp(what, "ring")) {
		struct tpacket_req req = { .tp_block_size = 4096, .tp_block_nr = 1,
					   .tp_frame_size = 2048, .tp_frame_nr = 2 };

		if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
			die("PACKET_RX_RING");
	} else if (!strcmp(what, "queue")) {
		int s = socket(AF_PACKET, SOCK_DGRAM, 0);	/* sends only */

		ll.sll_ifindex = if_nametoindex("lo");
		ll.sll_halen = 6;
		if (sendto(s, "queued", 6, 0, (struct sockaddr *)&ll, sizeof(ll)) < 0)
			die("sendto");
		usleep(100000);
	} else if (!strcmp(what, "fanout")) {
		seti(fd, SOL_PACKET, PACKET_FANOUT, 77 | (PACKET_FANOUT_HASH << 16), "PACKET_FANOUT");
	} else {
		return 2;
	}
	outf(out, "fd %d ready\n", fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "run")) {
		port = atoi(argv[2]);
		return run(argv[3]);
	}
	if (argc >= 4 && !strcmp(argv[1], "refuse"))
		return refuse(argv[2], argv[3]);
	fprintf(stderr, "usage: skpkt run PORT OUT | refuse ring|queue|fanout OUT\n");
	return 2;
}
