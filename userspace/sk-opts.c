// SPDX-License-Identifier: GPL-2.0
/*
 * Socket options: ONE table (sk_opts[]) of the options imgcr keeps, used by
 * the dump (getsockopt on the pidfd_getfd copy), by the restore (setsockopt,
 * in three phases) and by `imgcr show`.
 *
 * dump: each option that applies to the socket (its family, TCP or UDP, a
 * listening or unconnected TCP socket for the options whose value is the
 * connection's own otherwise) is read, and kept ("skopt INO NAME VALUE"
 * records of the tree file) only when it differs from what a new socket of
 * the same family, type and protocol reads: what a program left at its
 * default stays at the (sysctl) default.  An option the kernel does not
 * know (ENOPROTOOPT: an older kernel) is left out.
 *
 * restore, in a fixed order:
 *   P_BIND   before bind() (sk-inet.c, sk-tcp.c): SO_BINDTODEVICE,
 *            IP_FREEBIND, IPV6_FREEBIND, IP/IPV6_TRANSPARENT,
 *            IP_BIND_ADDRESS_NO_PORT, TCP_FASTOPEN... (SO_REUSEADDR,
 *            SO_REUSEPORT, IPV6_V6ONLY: the "sk" record, sk-inet.c);
 *   P_AFTER  once every socket is made, bound, connected and filled
 *            (sockets.c phase 4), before the buffer sizes (TCP's
 *            SO_RCVLOWAT may grow the receive buffer): the rest, the
 *            classic BPF filter (SO_ATTACH_FILTER, read with SO_GET_FILTER)
 *            included;
 *   P_FINAL  after the buffer sizes (SO_SNDBUF/SO_RCVBUF of the "sk"
 *            record, which lock them): SO_BUF_LOCK set to exactly what it
 *            was (also when it was 0), and SO_LOCK_FILTER last;
 *   P_NONE   never set: a unix socket's SO_PEERCRED, whose uid and gid
 *            sk-unix.c makes its connection under (sk_peercred).
 * Raw sockets have theirs (IP_HDRINCL, IP_NODEFRAG, IP_ROUTER_ALERT,
 * ICMP_FILTER, IPV6_CHECKSUM, IPV6_HDRINCL, IPV6_ROUTER_ALERT,
 * ICMPV6_FILTER), UDP-Lite its coverages (UDPLITE_SEND_CSCOV,
 * UDPLITE_RECV_CSCOV) besides UDP's; ping sockets the IP ones.
 * An accepted TCP socket's IP_MULTICAST_TTL, IPV6_MULTICAST_HOPS and
 * IPV6_MULTICAST_IF (the kernel takes them from the SYN) are datagram ones here:
 * setsockopt refuses them on a stream socket, and TCP sends no multicast.
 *
 * Refused at dump, naming the pid, the fd and the state: an eBPF socket
 * filter (SO_ATTACH_BPF: SO_GET_FILTER says EACCES, there is no classic
 * program to read), an upper layer protocol (TCP_ULP: kernel TLS...),
 * a multicast group membership (found through MCAST_MSFILTER for each group
 * of /proc/net/igmp and igmp6), and a UDP, UDP-Lite or raw socket holding
 * data not yet sent (corked with UDP_CORK or MSG_MORE: the kernel gives no
 * way to read it).
 * Not seen, so neither kept nor refused (README lists them): a reuseport
 * group's BPF program (SO_ATTACH_REUSEPORT_CBPF/EBPF), TCP_MD5SIG keys,
 * IPsec policies, IPv6 sticky options, IP_MULTICAST_IF set by interface
 * index only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "log.h"
#include "sockets.h"

#ifndef SO_GET_FILTER
#define SO_GET_FILTER SO_ATTACH_FILTER
#endif
#ifndef SO_LOCK_FILTER
#define SO_LOCK_FILTER 44
#endif
#ifndef SO_SELECT_ERR_QUEUE
#define SO_SELECT_ERR_QUEUE 45
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif
#ifndef SO_TXREHASH
#define SO_TXREHASH 74
#endif
#ifndef SO_RCVMARK
#define SO_RCVMARK 75
#endif
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif
#define SK_SO_TIMESTAMP		29	/* SO_TIMESTAMP_OLD */
#define SK_SO_TIMESTAMPNS	35	/* SO_TIMESTAMPNS_OLD */
#define SK_SO_TIMESTAMPING	37	/* SO_TIMESTAMPING_OLD */
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif
#ifndef IP_RECVFRAGSIZE
#define IP_RECVFRAGSIZE 25
#endif
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif
#ifndef IP_CHECKSUM
#define IP_CHECKSUM 23
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif
#ifndef IPV6_RECVFRAGSIZE
#define IPV6_RECVFRAGSIZE 77
#endif
#ifndef IPV6_MULTICAST_ALL
#define IPV6_MULTICAST_ALL 29
#endif
#ifndef IPV6_AUTOFLOWLABEL
#define IPV6_AUTOFLOWLABEL 70
#endif
#ifndef IPV6_MINHOPCOUNT
#define IPV6_MINHOPCOUNT 73
#endif
#ifndef TCP_ULP
#define TCP_ULP 31
#endif
#ifndef TCP_TX_DELAY
#define TCP_TX_DELAY 37
#endif
#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif
#ifndef TCP_INQ
#define TCP_INQ 36
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#define SK_UDP_CORK		1
#define SK_UDP_ENCAP		100
#define SK_UDP_NO_CHECK6_TX	101
#define SK_UDP_NO_CHECK6_RX	102
#define SK_UDP_SEGMENT		103
#define SK_UDP_GRO		104
#define SK_SOL_UDPLITE		136
#define SK_UDPLITE_SEND_CSCOV	10
#define SK_UDPLITE_RECV_CSCOV	11
#ifndef SOL_RAW
#define SOL_RAW 255
#endif
#define SK_ICMP_FILTER		1	/* SOL_RAW, a raw IPPROTO_ICMP socket's */
#ifndef SOL_ICMPV6
#define SOL_ICMPV6 58
#endif
#define SK_ICMPV6_FILTER	1	/* SOL_ICMPV6, a raw IPPROTO_ICMPV6 socket's */
#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL 36
#endif
#ifndef IP_NODEFRAG
#define IP_NODEFRAG 22
#endif

enum { T_INT, T_LINGER, T_STR, T_BLOB, T_FILTER };

/* where an option applies */
#define W_UNIX	0x01
#define W_IP4	0x02
#define W_IP6	0x04
#define W_INET	(W_IP4 | W_IP6)
#define W_OTHER	0x200	/* netlink, packet (SOL_SOCKET options) */
#define W_ALL	(W_UNIX | W_INET | W_OTHER)
#define W_TCP	0x08	/* TCP sockets only */
#define W_UDP	0x10	/* UDP and UDP-Lite sockets only */
#define W_UNCONN 0x20	/* TCP: listening or not connected only (else the connection's own) */
#define W_DGRAM	0x40	/* every IPv4/IPv6 socket but TCP: UDP, UDP-Lite, ping, raw */
#define W_RAW	0x80	/* raw sockets only */
#define W_LITE	0x100	/* UDP-Lite sockets only */
/* one bit each: W_ALL must not carry a restriction bit (W_OTHER was W_DGRAM's once) */
_Static_assert(!(W_ALL & (W_TCP | W_UDP | W_UNCONN | W_DGRAM | W_RAW | W_LITE)),
	       "a family bit is also a restriction bit");

#define O(lvl, opt, type, where, phase, max) { #opt, lvl, opt, type, where, phase, max }
#define ON(name, lvl, opt, type, where, phase, max) { name, lvl, opt, type, where, phase, max }

static const struct sk_opt {
	const char *name;	/* in the tree file and in messages */
	int level, opt, type, where, phase;
	int max;		/* T_STR, T_BLOB: bytes read at most */
} sk_opts[] = {
	/* before bind() */
	O(SOL_SOCKET, SO_BINDTODEVICE, T_STR, W_INET, P_BIND, 16),
	O(SOL_IP, IP_FREEBIND, T_INT, W_IP4, P_BIND, 0),
	O(SOL_IP, IP_TRANSPARENT, T_INT, W_IP4, P_BIND, 0),
	O(SOL_IP, IP_BIND_ADDRESS_NO_PORT, T_INT, W_IP4, P_BIND, 0),
	O(SOL_IP, IP_LOCAL_PORT_RANGE, T_INT, W_IP4, P_BIND, 0),	/* 6.3 */
	O(SOL_IPV6, IPV6_FREEBIND, T_INT, W_IP6, P_BIND, 0),	/* 4.15 */
	O(SOL_IPV6, IPV6_TRANSPARENT, T_INT, W_IP6, P_BIND, 0),
	O(SOL_TCP, TCP_FASTOPEN, T_INT, W_INET | W_TCP | W_UNCONN, P_BIND, 0),
	O(SOL_TCP, TCP_FASTOPEN_CONNECT, T_INT, W_INET | W_TCP | W_UNCONN, P_BIND, 0),
	O(SOL_TCP, TCP_MAXSEG, T_INT, W_INET | W_TCP | W_UNCONN, P_BIND, 0),
	O(SOL_TCP, TCP_WINDOW_CLAMP, T_INT, W_INET | W_TCP | W_UNCONN, P_BIND, 0),
	/* after every socket is made; IP_TOS first (it sets SO_PRIORITY too) */
	O(SOL_IP, IP_TOS, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_SOCKET, SO_BROADCAST, T_INT, W_INET, P_AFTER, 0),
	O(SOL_SOCKET, SO_DONTROUTE, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_OOBINLINE, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_LINGER, T_LINGER, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_PRIORITY, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_MARK, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_RCVLOWAT, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_PASSSEC, T_INT, W_UNIX, P_AFTER, 0),
	O(SOL_SOCKET, SO_PASSPIDFD, T_INT, W_UNIX, P_AFTER, 0),	/* 6.5 */
	ON("SO_TIMESTAMP", SOL_SOCKET, SK_SO_TIMESTAMP, T_INT, W_ALL, P_AFTER, 0),
	ON("SO_TIMESTAMPNS", SOL_SOCKET, SK_SO_TIMESTAMPNS, T_INT, W_ALL, P_AFTER, 0),
	ON("SO_TIMESTAMPING", SOL_SOCKET, SK_SO_TIMESTAMPING, T_BLOB, W_ALL, P_AFTER, 8),
	/* the _OLD names read 0 when set by these (SOCK_TSTAMP_NEW) */
	ON("SO_TIMESTAMP_NEW", SOL_SOCKET, 63, T_INT, W_ALL, P_AFTER, 0),
	ON("SO_TIMESTAMPNS_NEW", SOL_SOCKET, 64, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_NO_CHECK, T_INT, W_INET | W_DGRAM, P_AFTER, 0),
	O(SOL_SOCKET, SO_RXQ_OVFL, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_SELECT_ERR_QUEUE, T_INT, W_ALL, P_AFTER, 0),
	O(SOL_SOCKET, SO_BUSY_POLL, T_INT, W_INET, P_AFTER, 0),
	O(SOL_SOCKET, SO_ZEROCOPY, T_INT, W_INET, P_AFTER, 0),
	O(SOL_SOCKET, SO_TXREHASH, T_INT, W_INET, P_AFTER, 0),	/* 6.0 */
	O(SOL_SOCKET, SO_RCVMARK, T_INT, W_ALL, P_AFTER, 0),	/* 6.0 */
	O(SOL_SOCKET, SO_ATTACH_FILTER, T_FILTER, W_ALL, P_AFTER, 0),
	O(SOL_TCP, TCP_CORK, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_KEEPIDLE, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_KEEPINTVL, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_KEEPCNT, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_SYNCNT, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_LINGER2, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_DEFER_ACCEPT, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_USER_TIMEOUT, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_CONGESTION, T_STR, W_INET | W_TCP, P_AFTER, 16),
	O(SOL_TCP, TCP_NOTSENT_LOWAT, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_THIN_LINEAR_TIMEOUTS, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_INQ, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_TCP, TCP_SAVE_SYN, T_INT, W_INET | W_TCP | W_UNCONN, P_AFTER, 0),
	O(SOL_TCP, TCP_TX_DELAY, T_INT, W_INET | W_TCP, P_AFTER, 0),
	O(SOL_IP, IP_TTL, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_MINTTL, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_OPTIONS, T_BLOB, W_IP4, P_AFTER, 40),
	O(SOL_IP, IP_PKTINFO, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVERR, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVTTL, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVTOS, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVOPTS, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RETOPTS, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVORIGDSTADDR, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_RECVFRAGSIZE, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_PASSSEC, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_CHECKSUM, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_MTU_DISCOVER, T_INT, W_IP4, P_AFTER, 0),
	O(SOL_IP, IP_MULTICAST_TTL, T_INT, W_IP4 | W_DGRAM, P_AFTER, 0),
	O(SOL_IP, IP_MULTICAST_LOOP, T_INT, W_IP4 | W_DGRAM, P_AFTER, 0),
	O(SOL_IP, IP_MULTICAST_ALL, T_INT, W_IP4 | W_DGRAM, P_AFTER, 0),
	O(SOL_IP, IP_MULTICAST_IF, T_BLOB, W_IP4 | W_DGRAM, P_AFTER, 4),
	/* raw sockets */
	O(SOL_IP, IP_HDRINCL, T_INT, W_IP4 | W_RAW, P_AFTER, 0),
	O(SOL_IP, IP_NODEFRAG, T_INT, W_IP4 | W_RAW, P_AFTER, 0),
	O(SOL_IP, IP_ROUTER_ALERT, T_INT, W_IP4 | W_RAW, P_AFTER, 0),	/* getsockopt knows it on 6.12, not 6.1 */
	ON("ICMP_FILTER", SOL_RAW, SK_ICMP_FILTER, T_BLOB, W_IP4 | W_RAW, P_AFTER, 4),
	O(SOL_IPV6, IPV6_CHECKSUM, T_INT, W_IP6 | W_RAW, P_AFTER, 0),
	O(SOL_IPV6, IPV6_HDRINCL, T_INT, W_IP6 | W_RAW, P_AFTER, 0),
	O(SOL_IPV6, IPV6_ROUTER_ALERT, T_INT, W_IP6 | W_RAW, P_AFTER, 0),	/* getsockopt knows it on 6.12, not 6.1 */
	ON("ICMPV6_FILTER", SOL_ICMPV6, SK_ICMPV6_FILTER, T_BLOB, W_IP6 | W_RAW, P_AFTER, 32),
	O(SOL_IPV6, IPV6_UNICAST_HOPS, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_TCLASS, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MINHOPCOUNT, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVPKTINFO, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVHOPLIMIT, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVTCLASS, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVERR, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVPATHMTU, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVORIGDSTADDR, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVFRAGSIZE, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVHOPOPTS, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVDSTOPTS, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_RECVRTHDR, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_FLOWINFO", SOL_IPV6, 11, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_2292PKTINFO", SOL_IPV6, 2, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_2292HOPOPTS", SOL_IPV6, 3, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_2292DSTOPTS", SOL_IPV6, 4, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_2292RTHDR", SOL_IPV6, 5, T_INT, W_IP6, P_AFTER, 0),
	ON("IPV6_2292HOPLIMIT", SOL_IPV6, 8, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MTU_DISCOVER, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_DONTFRAG, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_AUTOFLOWLABEL, T_INT, W_IP6, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MULTICAST_HOPS, T_INT, W_IP6 | W_DGRAM, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MULTICAST_LOOP, T_INT, W_IP6 | W_DGRAM, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MULTICAST_IF, T_INT, W_IP6 | W_DGRAM, P_AFTER, 0),
	O(SOL_IPV6, IPV6_MULTICAST_ALL, T_INT, W_IP6 | W_DGRAM, P_AFTER, 0),
	ON("UDP_CORK", SOL_UDP, SK_UDP_CORK, T_INT, W_INET | W_UDP, P_AFTER, 0),
	ON("UDP_ENCAP", SOL_UDP, SK_UDP_ENCAP, T_INT, W_INET | W_UDP, P_AFTER, 0),
	ON("UDP_NO_CHECK6_TX", SOL_UDP, SK_UDP_NO_CHECK6_TX, T_INT, W_IP6 | W_UDP, P_AFTER, 0),
	ON("UDP_NO_CHECK6_RX", SOL_UDP, SK_UDP_NO_CHECK6_RX, T_INT, W_IP6 | W_UDP, P_AFTER, 0),
	ON("UDP_SEGMENT", SOL_UDP, SK_UDP_SEGMENT, T_INT, W_INET | W_UDP, P_AFTER, 0),
	ON("UDP_GRO", SOL_UDP, SK_UDP_GRO, T_INT, W_INET | W_UDP, P_AFTER, 0),
	ON("UDPLITE_SEND_CSCOV", SK_SOL_UDPLITE, SK_UDPLITE_SEND_CSCOV, T_INT, W_INET | W_LITE, P_AFTER, 0),
	ON("UDPLITE_RECV_CSCOV", SK_SOL_UDPLITE, SK_UDPLITE_RECV_CSCOV, T_INT, W_INET | W_LITE, P_AFTER, 0),
	/* kept, not set: a unix socket's peer credentials (sk-unix.c makes it under their uid and gid) */
	O(SOL_SOCKET, SO_PEERCRED, T_BLOB, W_UNIX, P_NONE, 12),
	/* after the buffer sizes */
	O(SOL_SOCKET, SO_BUF_LOCK, T_INT, W_ALL, P_FINAL, 0),	/* 5.14 */
	O(SOL_SOCKET, SO_LOCK_FILTER, T_INT, W_ALL, P_FINAL, 0),
};
#define NOPTS ((int)(sizeof(sk_opts) / sizeof(sk_opts[0])))

#define FILTER_MAX	BPF_MAXINSNS

static int applies(const struct sk_opt *o, const struct tree_sk *s)
{
	int w = s->family == AF_UNIX ? W_UNIX : s->family == AF_INET ? W_IP4 :
		s->family == AF_INET6 ? W_IP6 : W_OTHER;

	if (!(o->where & w))
		return 0;
	if ((o->where & W_TCP) && !sk_is_tcp(s))
		return 0;
	if ((o->where & W_UDP) && !sk_is_udp(s))
		return 0;
	if ((o->where & W_DGRAM) && (s->family == AF_UNIX || sk_is_tcp(s)))
		return 0;
	if ((o->where & W_RAW) && (s->family == AF_UNIX || s->type != SOCK_RAW))
		return 0;
	if ((o->where & W_LITE) && (!sk_is_udp(s) || s->proto != IPPROTO_UDPLITE))
		return 0;
	if ((o->where & W_UNCONN) && sk_tcp_will_repair(s))
		return 0;
	return 1;
}

int sk_opt_index(const char *name)
{
	int i;

	for (i = 0; i < NOPTS; i++)
		if (!strcmp(sk_opts[i].name, name))
			return i;
	return -1;
}

const char *sk_opt_name(int i)
{
	return i >= 0 && i < NOPTS ? sk_opts[i].name : "?";
}

/* @buf (at least 8 * FILTER_MAX bytes); the bytes read, 0: not known to this kernel, -1 (errno) */
static int read_opt(int fd, const struct sk_opt *o, unsigned char *buf)
{
	socklen_t l;

	if (o->type == T_FILTER) {
		/* the length is counted in instructions, both ways */
		l = 0;
		if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, NULL, &l))
			return -1;
		if (l == 0)
			return 0;
		if (l > FILTER_MAX) {
			errno = E2BIG;
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, buf, &l))
			return -1;
		return l * sizeof(struct sock_filter);
	}
	l = o->type == T_INT ? sizeof(int) : o->type == T_LINGER ? sizeof(struct linger) : (socklen_t)o->max;
	memset(buf, 0, l);
	if (getsockopt(fd, o->level, o->opt, buf, &l)) {
		if (errno == ENOPROTOOPT || errno == EOPNOTSUPP)
			return 0;	/* not this kernel's, or not this socket's */
		return -1;
	}
	if (o->type == T_STR)
		l = strnlen((char *)buf, l);
	return l;
}

static int add_opt(struct tree_sk *s, int idx, const unsigned char *v, int len)
{
	struct tree_skopt *x;

	x = realloc(s->xopts, (s->nxopts + 1) * sizeof(*x));
	if (!x)
		return -1;
	s->xopts = x;
	x = &x[s->nxopts];
	x->idx = idx;
	x->len = len;
	x->val = malloc(len + 1);
	if (!x->val)
		return -1;
	memcpy(x->val, v, len);
	x->val[len] = 0;
	s->nxopts++;
	return 0;
}

/* refused: a multicast group the socket joined (found per group of /proc/net/igmp, igmp6) */
static int mcast_member(int sfd, const struct tree_sk *s, char *grp, size_t size)
{
	char line[512], dev[64];
	unsigned int idx, a;
	int found = 0;
	FILE *f;

	if (s->family == AF_UNIX || sk_is_tcp(s))
		return 0;	/* multicast memberships are joined by datagram and raw sockets */
	f = fopen(s->family == AF_INET ? "/proc/net/igmp" : "/proc/net/igmp6", "re");
	if (!f)
		return 0;
	idx = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		struct group_filter gf;
		socklen_t l = sizeof(gf);
		char g6[48];

		memset(&gf, 0, sizeof(gf));
		if (s->family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&gf.gf_group;

			/* "IDX\tDEV : COUNT QUERIER" per device, then "\t\t\t\tGROUP USERS ..." */
			if (line[0] != '\t') {
				if (sscanf(line, "%u %63s", &idx, dev) != 2)
					idx = 0;
				continue;
			}
			if (!idx || sscanf(line, "%x", &a) != 1)
				continue;
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = a;	/* printed as the raw 32-bit value */
			gf.gf_interface = idx;
			if (!getsockopt(sfd, SOL_IP, MCAST_MSFILTER, &gf, &l)) {
				inet_ntop(AF_INET, &sin->sin_addr, g6, sizeof(g6));
				snprintf(grp, size, "%.40s on %.32s", g6, dev);
				found = 1;
			}
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&gf.gf_group;
			int k;

			if (sscanf(line, "%u %63s %32s", &idx, dev, g6) != 3 || strlen(g6) != 32)
				continue;
			for (k = 0; k < 16; k++)
				sscanf(g6 + 2 * k, "%2hhx", &sin6->sin6_addr.s6_addr[k]);
			sin6->sin6_family = AF_INET6;
			gf.gf_interface = idx;
			if (!getsockopt(sfd, SOL_IPV6, MCAST_MSFILTER, &gf, &l)) {
				char g[INET6_ADDRSTRLEN];

				inet_ntop(AF_INET6, &sin6->sin6_addr, g, sizeof(g));
				snprintf(grp, size, "%.46s on %.32s", g, dev);
				found = 1;
			}
		}
	}
	fclose(f);
	return found;
}

int sk_xopts_dump(struct fd_parms *p, int sfd, struct tree_sk *s)
{
	static unsigned char *a, *b;
	int fresh = -1, i, la, lb, ret = FD_FAILED, n;
	char grp[128];

	if (!a && (!(a = malloc(FILTER_MAX * 8)) || !(b = malloc(FILTER_MAX * 8)))) {
		pr_err("out of memory");
		return FD_FAILED;
	}
	if (sk_is_tcp(s)) {
		socklen_t l = sizeof(grp);

		if (!getsockopt(sfd, SOL_TCP, TCP_ULP, grp, &l) && l > 0 && grp[0])
			return fd_refuse(p, "%s: an upper layer protocol (TCP_ULP \"%.*s\", e.g. kernel TLS) is not supported",
					 p->link, (int)strnlen(grp, l), grp);
	}
	if (mcast_member(sfd, s, grp, sizeof(grp)))
		return fd_refuse(p, "%s: a multicast group membership (%s; IP_ADD_MEMBERSHIP) is not supported",
				 p->link, grp);
	/* a datagram just sent may still be on its way out (a device queue): 100 ms for it */
	/* (UDP, UDP-Lite, raw: ping sockets cannot cork, and have no SIOCOUTQ) */
	for (i = 0; s->family != AF_UNIX && !sk_is_tcp(s) && i < 10 &&
		    !ioctl(sfd, SIOCOUTQ, &n) && n > 0; i++)
		usleep(10000);
	if (s->family != AF_UNIX && !sk_is_tcp(s) && !ioctl(sfd, SIOCOUTQ, &n) && n > 0)
		return fd_refuse(p, "%s: a datagram not yet sent (corked: %sMSG_MORE; %d bytes of send buffer) is not supported",
				 p->link, sk_is_udp(s) ? "UDP_CORK or " : "", n);
	fresh = socket(s->family, s->type | SOCK_CLOEXEC, s->family == AF_UNIX ? 0 : s->proto);
	/*
	 * a ping socket imgcr's group may not open (net.ipv4.ping_group_range):
	 * a UDP one has the same defaults (the socket and IP levels, its only ones)
	 */
	if (fresh < 0 && errno == EACCES && s->type == SOCK_DGRAM &&
	    (s->proto == IPPROTO_ICMP || s->proto == IPPROTO_ICMPV6))
		fresh = socket(s->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fresh < 0) {
		pr_perror("pid %d fd %d: %s: a new socket of its kind, for the defaults of its options%s",
			  p->pid, p->fd, p->link,
			  s->type == SOCK_RAW && errno == EPERM ? " (a raw socket needs CAP_NET_RAW)" : "");
		return FD_FAILED;
	}
	for (i = 0; i < NOPTS; i++) {
		const struct sk_opt *o = &sk_opts[i];

		if (!applies(o, s))
			continue;
		la = read_opt(sfd, o, a);
		if (la < 0 && o->type == T_FILTER && errno == EACCES) {
			ret = fd_refuse(p, "%s: an eBPF socket filter (SO_ATTACH_BPF) is not supported (classic filters, SO_ATTACH_FILTER, are)",
					p->link);
			goto out;
		}
		if (la < 0) {
			pr_perror("pid %d fd %d: %s: getsockopt %s", p->pid, p->fd, p->link, o->name);
			goto out;
		}
		lb = read_opt(fresh, o, b);
		if (lb < 0)
			lb = 0;
		if (la == lb && !memcmp(a, b, la))
			continue;	/* as a new socket has it */
		if (add_opt(s, i, a, la)) {
			pr_err("out of memory");
			goto out;
		}
	}
	ret = FD_DESCRIBED;
out:
	close(fresh);
	return ret;
}

const struct tree_skopt *sk_xopt_find(const struct tree_sk *s, int idx)
{
	int i;

	for (i = 0; i < s->nxopts; i++)
		if (s->xopts[i].idx == idx)
			return &s->xopts[i];
	return NULL;
}

static int set_opt(int fd, const struct sk_opt *o, const unsigned char *v, int len)
{
	if (o->type == T_FILTER) {
		struct sock_fprog fp = { .len = len / sizeof(struct sock_filter),
					 .filter = (struct sock_filter *)v };

		return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	}
	if (o->type == T_STR && len == 0)
		return setsockopt(fd, o->level, o->opt, "", 0);
	return setsockopt(fd, o->level, o->opt, v, len);
}

int sk_xopts_restore(int fd, const struct tree_sk *s, int phase, const char *what)
{
	unsigned char cur[64];
	int i, j, len;

	for (i = 0; i < NOPTS; i++) {
		const struct sk_opt *o = &sk_opts[i];
		const struct tree_skopt *x;
		const unsigned char *v;
		int zero = 0;

		if (o->phase != phase || !applies(o, s))
			continue;
		x = sk_xopt_find(s, i);
		if (x) {
			v = x->val;
			len = x->len;
		} else if (o->level == SOL_SOCKET && o->opt == SO_BUF_LOCK) {
			/* SO_SNDBUF/SO_RCVBUF lock what they set: the lock as it was, 0 too */
			v = (const unsigned char *)&zero;
			len = sizeof(zero);
		} else {
			continue;
		}
		if (o->type != T_FILTER) {
			/* as it is already (a listener's, the maker's): left alone */
			j = read_opt(fd, o, cur);
			if (j == len && !memcmp(cur, v, len))
				continue;
			if (!x && j == 0)
				continue;	/* SO_BUF_LOCK unknown to this kernel */
		}
		if (set_opt(fd, o, v, len)) {
			pr_perror("%s: cannot set %s", what, o->name);
			return -1;
		}
	}
	return 0;
}

int sk_peercred(const struct tree_sk *s, unsigned int *uid, unsigned int *gid)
{
	const struct tree_skopt *x = sk_xopt_find(s, sk_opt_index("SO_PEERCRED"));
	struct ucred u;

	if (!x || x->len != sizeof(u))
		return 0;
	memcpy(&u, x->val, sizeof(u));
	*uid = u.uid;
	*gid = u.gid;
	return 1;
}

int sk_peercred_pid(const struct tree_sk *s)
{
	const struct tree_skopt *x = sk_xopt_find(s, sk_opt_index("SO_PEERCRED"));
	struct ucred u;

	if (!x || x->len != sizeof(u))
		return 0;
	memcpy(&u, x->val, sizeof(u));
	return u.pid;
}

int sk_xopt_format(const struct tree_skopt *x, char *buf, size_t size)
{
	const struct sk_opt *o = &sk_opts[x->idx];
	size_t i, n = 0;

	if (o->type == T_INT && x->len == sizeof(int)) {
		int v;

		memcpy(&v, x->val, sizeof(v));
		return snprintf(buf, size, "%d", v) >= (int)size ? -1 : 0;
	}
	if (!x->len)
		return snprintf(buf, size, "-") >= (int)size ? -1 : 0;
	for (i = 0; i < (size_t)x->len; i++) {
		if (n + 3 > size)
			return -1;
		n += snprintf(buf + n, size - n, "%02x", x->val[i]);
	}
	return 0;
}

int sk_xopt_parse(struct tree_sk *s, const char *name, const char *val)
{
	int idx = sk_opt_index(name), len, i;
	const struct sk_opt *o;
	unsigned char *v;

	if (idx < 0 || sk_xopt_find(s, idx))
		return -1;
	o = &sk_opts[idx];
	if (o->type == T_INT) {
		char *end;
		long n;

		errno = 0;
		n = strtol(val, &end, 10);
		if (errno || *end || end == val || n < INT32_MIN || n > INT32_MAX)
			return -1;
		i = n;
		return add_opt(s, idx, (unsigned char *)&i, sizeof(i));
	}
	if (!strcmp(val, "-"))
		return add_opt(s, idx, (const unsigned char *)"", 0);
	len = strlen(val);
	if (len % 2 || len / 2 > FILTER_MAX * 8)
		return -1;
	len /= 2;
	if ((o->type == T_INT && len != sizeof(int)) ||
	    (o->type == T_LINGER && len != sizeof(struct linger)) ||
	    ((o->type == T_STR || o->type == T_BLOB) && len > o->max) ||
	    (o->type == T_FILTER && (len % sizeof(struct sock_filter) || !len)))
		return -1;
	v = malloc(len + 1);
	if (!v)
		return -1;
	for (i = 0; i < len; i++)
		if (sscanf(val + 2 * i, "%2hhx", &v[i]) != 1) {
			free(v);
			return -1;
		}
	i = add_opt(s, idx, v, len);
	free(v);
	return i;
}

void sk_xopts_show(const struct tree_sk *s, char *out, size_t size)
{
	size_t n = strlen(out);
	int i;

	for (i = 0; i < s->nxopts && n + 1 < size; i++) {
		const struct tree_skopt *x = &s->xopts[i];
		const struct sk_opt *o = &sk_opts[x->idx];
		struct linger lg;
		int v;

		if (o->type == T_INT && x->len == sizeof(int)) {
			memcpy(&v, x->val, sizeof(v));
			n += snprintf(out + n, size - n, " %s=%d", o->name, v);
		} else if (o->type == T_LINGER && x->len == sizeof(lg)) {
			memcpy(&lg, x->val, sizeof(lg));
			n += snprintf(out + n, size - n, " %s=%s,%ds", o->name, lg.l_onoff ? "on" : "off",
				      lg.l_linger);
		} else if (o->type == T_STR) {
			n += snprintf(out + n, size - n, " %s=%s", o->name, x->len ? (char *)x->val : "\"\"");
		} else if (o->level == SOL_SOCKET && o->opt == SO_PEERCRED && x->len == sizeof(struct ucred)) {
			struct ucred u;

			memcpy(&u, x->val, sizeof(u));
			n += snprintf(out + n, size - n, " peer=pid %d uid %u gid %u", (int)u.pid, u.uid, u.gid);
		} else if (o->type == T_FILTER) {
			n += snprintf(out + n, size - n, " %s=%d-instruction classic BPF program", o->name,
				      x->len / (int)sizeof(struct sock_filter));
		} else {
			char h[2 * 64 + 1];
			struct tree_skopt y = *x;

			if (y.len > 64)
				y.len = 64;
			if (sk_xopt_format(&y, h, sizeof(h)))
				h[0] = 0;
			n += snprintf(out + n, size - n, " %s=0x%s", o->name, h);
		}
	}
	if (n >= size && size > 4)
		memcpy(out + size - 4, "...", 4);
}

const char *sk_xopts_rx_cmsg(const struct tree_sk *s)
{
	/*
	 * what a receive adds to each datagram from the skb: made by the
	 * network at its arrival (time, TTL, TOS, destination, interface,
	 * drops, mark, options...), not by a send from the restorer
	 */
	static const char *const rx[] = {
		"SO_TIMESTAMP", "SO_TIMESTAMPNS", "SO_TIMESTAMPING", "SO_RXQ_OVFL", "SO_RCVMARK",
		"IP_PKTINFO", "IP_RECVTTL", "IP_RECVTOS", "IP_RECVOPTS", "IP_RETOPTS",
		"IP_RECVORIGDSTADDR", "IP_RECVFRAGSIZE", "IP_PASSSEC", "IP_CHECKSUM",
		"IPV6_RECVPKTINFO", "IPV6_RECVHOPLIMIT", "IPV6_RECVTCLASS", "IPV6_RECVPATHMTU",
		"IPV6_RECVORIGDSTADDR", "IPV6_RECVFRAGSIZE", "UDP_GRO", "SO_TIMESTAMP_NEW",
		"SO_TIMESTAMPNS_NEW", "IPV6_RECVHOPOPTS", "IPV6_RECVDSTOPTS", "IPV6_RECVRTHDR",
		"IPV6_FLOWINFO", "IPV6_2292PKTINFO", "IPV6_2292HOPOPTS", "IPV6_2292DSTOPTS",
		"IPV6_2292RTHDR", "IPV6_2292HOPLIMIT",
	};
	int i;
	size_t k;

	for (i = 0; i < s->nxopts; i++)
		for (k = 0; k < sizeof(rx) / sizeof(rx[0]); k++)
			if (!strcmp(sk_opt_name(s->xopts[i].idx), rx[k]))
				return rx[k];
	return NULL;
}
