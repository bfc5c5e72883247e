// SPDX-License-Identifier: GPL-2.0
/*
 * IPv4 and IPv6 sockets: TCP, UDP, UDP-Lite, ICMP ("ping") and raw.
 *
 * TCP: a listening socket (its bound address and port, backlog, options)
 * comes back listening on the same address and port; the connections
 * queued on it and not yet accepted are reset (closed with the tree at the
 * dump; imgcr says how many).  A socket that is neither listening nor
 * connected (new, or only bound) is created and bound again.  Established
 * connections, and FIN-WAIT-1/2, CLOSE-WAIT, LAST-ACK and CLOSING ones, are
 * sk-tcp.c's (TCP repair mode); every other TCP state (SYN-SENT, SYN-RECV,
 * TIME-WAIT) is refused, naming the state.
 *
 * UDP: bound and connected again to the same addresses, and shut down
 * again as it was (sock_diag's INET_DIAG_SHUTDOWN, udp_diag).  The datagrams
 * queued in it at the dump come back (udp_queue_dump, udp_fill): peeked
 * (sockets.c, SO_PEEK_OFF stepping, nothing consumed) into DIR/sk-INO.data
 * with their sizes, and their source addresses into "skq" records; at the
 * restore they are sent again to it, in order, before it is connected (a
 * connected socket takes datagrams from its peer alone) and before its
 * filter (the datagrams passed it once) and buffer sizes are set, from a
 * temporary socket bound to the source address and port, or, where that
 * is taken (by a socket of the tree made before it, or a live one), from
 * a raw socket that writes the IP and UDP headers (IP_HDRINCL; root).
 * Each must arrive (its memory on the socket, SO_MEMINFO) or the restore
 * fails; before the first send, each destination must be a local unicast
 * address (local_unicast); after the last, the queue is peeked at and
 * compared with the image (udp_verify).  Root restoring a user's directory
 * (trust.c) neither sends by raw socket nor binds below the unprivileged
 * ports.  Refused at dump, before any peek: an error pending (any UDP
 * socket: a peek takes it), and with datagrams queued: an option that adds
 * data of their arrival to a receive (SO_TIMESTAMP*, IP_PKTINFO,
 * IP_RECVTTL...: sk_xopts_rx_cmsg, the options read first by sockets.c,
 * and rx_extra), SO_BINDTODEVICE to other than lo, a multicast or
 * broadcast name, a port another socket holds (udp_diag); while peeking
 * (sockets.c): a source of any address or port 0, an IPv6 datagram over
 * 65488 bytes, a zero-length datagram with SO_PEEK_OFF on.  A zero-length
 * head already peeked at (a peek with an offset passes it) is written as
 * the first frame from a peek without an offset.
 *
 * UDP-Lite (udp_diag too), ICMP "ping" sockets (SOCK_DGRAM, IPPROTO_ICMP
 * or IPPROTO_ICMPV6; the ident is the bound port) and raw sockets
 * (SOCK_RAW, any protocol; raw_diag for the shutdown state): bound and
 * connected again (a raw or ping socket connected to a port 0 says
 * ENOTCONN to getpeername: its peer is read from /proc/net), shut down
 * again, with their options (sk-opts.c: IP_HDRINCL, ICMP_FILTER,
 * IPV6_CHECKSUM, ICMPV6_FILTER, UDPLITE_SEND/RECV_CSCOV...).  Unlike UDP,
 * a datagram queued in them, not yet received, is refused (naming the
 * bytes queued), as is a pending error (SO_ERROR, or an ICMP error queued
 * by IP_RECVERR): neither can be put back.  Refused too: a raw IGMP (IPv4)
 * or ICMPv6 socket while multicast routing is on (it may be the multicast
 * routing socket, MRT_INIT, whose routes imgcr does not restore).
 *
 * SCTP and MPTCP are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/inet_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>

#include "log.h"
#include "proc.h"
#include "sockets.h"
#include "trust.h"

#define SK_ST_ESTABLISHED	1
#define SK_ST_CLOSE	7
#define SK_ST_LISTEN	10

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

int sk_is_tcp(const struct tree_sk *s)
{
	return s->family != AF_UNIX && s->type == SOCK_STREAM && s->proto == IPPROTO_TCP;
}

int sk_is_udp(const struct tree_sk *s)
{
	return s->family != AF_UNIX && s->type == SOCK_DGRAM &&
	       (s->proto == IPPROTO_UDP || s->proto == IPPROTO_UDPLITE);
}

/* an ICMP "ping" socket */
static int is_ping(const struct tree_sk *s)
{
	return s->type == SOCK_DGRAM &&
	       ((s->family == AF_INET && s->proto == IPPROTO_ICMP) ||
		(s->family == AF_INET6 && s->proto == IPPROTO_ICMPV6));
}

const char *inet_sk_kind(const struct tree_sk *s, char *buf, size_t size)
{
	if (sk_is_tcp(s))
		snprintf(buf, size, "TCP");
	else if (s->type == SOCK_DGRAM && s->proto == IPPROTO_UDP)
		snprintf(buf, size, "UDP");
	else if (s->type == SOCK_DGRAM && s->proto == IPPROTO_UDPLITE)
		snprintf(buf, size, "UDP-Lite");
	else if (is_ping(s))
		snprintf(buf, size, "ICMP (ping)");
	else if (s->type == SOCK_RAW)
		snprintf(buf, size, "raw (protocol %d)", s->proto);
	else
		snprintf(buf, size, "type %d protocol %d", s->type, s->proto);
	return buf;
}

struct listen_info {
	unsigned long ino;
	int found;
	unsigned int rq, wq;
	int shutdown;		/* INET_DIAG_SHUTDOWN (-1: not given) */
};

static void diag_cb(void *msg, size_t len, void *arg)
{
	struct inet_diag_msg *m = msg;
	struct listen_info *li = arg;
	struct rtattr *a;
	int rest;

	if (len < sizeof(*m) || m->idiag_inode != li->ino)
		return;
	li->found = 1;
	li->rq = m->idiag_rqueue;
	li->wq = m->idiag_wqueue;
	li->shutdown = -1;
	rest = len - NLMSG_ALIGN(sizeof(*m));
	for (a = (struct rtattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); RTA_OK(a, rest);
	     a = RTA_NEXT(a, rest))
		if (a->rta_type == INET_DIAG_SHUTDOWN && RTA_PAYLOAD(a) >= 1)
			li->shutdown = *(unsigned char *)RTA_DATA(a);
}

static const char *const tcp_states[] = {
	"?", "established", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT",
	"closed", "CLOSE-WAIT", "LAST-ACK", "listening", "closing",
};

/* A socket's line of /proc/self/net/FILE (the tables of UDP-Lite, ping and raw sockets). */
struct procnet {
	struct sockaddr_storage rem;	/* its remote address and port */
	socklen_t remlen;
	int st;				/* sk_state */
	unsigned long txq, rxq;		/* sk_wmem_alloc, sk_rmem_alloc (UDP-Lite: less what was read) */
};

/* 0: found, 1: not listed (not hashed: a socket neither bound nor connected), -1: error */
static int procnet_find(const char *file, int family, unsigned long ino, struct procnet *e)
{
	char path[64], line[512], loc[64], rem[64];
	unsigned long txq, rxq, inode;
	unsigned int st, port, uid;
	int ret = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/net/%s", file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (ret == 1 && fgets(line, sizeof(line), f)) {
		char *colon;

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %63s %63s %x %lx:%lx %*x:%*x %*x %u %*d %lu", loc, rem, &st,
			   &txq, &rxq, &uid, &inode) != 7 || inode != ino)
			continue;
		colon = strchr(rem, ':');
		if (!colon || sscanf(colon + 1, "%x", &port) != 1)
			break;
		*colon = 0;
		memset(e, 0, sizeof(*e));
		e->st = st;
		e->txq = txq;
		e->rxq = rxq;
		if (family == AF_INET && strlen(rem) == 8) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&e->rem;

			sin->sin_family = AF_INET;
			sin->sin_port = htons(port);
			/* printed as the raw 32-bit value */
			sin->sin_addr.s_addr = strtoul(rem, NULL, 16);
			e->remlen = sizeof(*sin);
			ret = 0;
		} else if (family == AF_INET6 && strlen(rem) == 32) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&e->rem;
			uint32_t w;
			int k;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			for (k = 0; k < 4; k++) {
				char h[9];

				memcpy(h, rem + 8 * k, 8);
				h[8] = 0;
				w = strtoul(h, NULL, 16);
				memcpy(&sin6->sin6_addr.s6_addr[4 * k], &w, 4);
			}
			e->remlen = sizeof(*sin6);
			ret = 0;
		} else {
			break;
		}
	}
	fclose(f);
	return ret == 1 || ret == 0 ? ret : -1;
}

/* an address of any: 0.0.0.0 or :: */
static int addr_any(const struct sockaddr_storage *ss)
{
	static const unsigned char zero[16];

	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == 0;
	return !memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, zero, 16);
}

/* a file of /proc/sys that holds a number: its value (0 if it cannot be read) */
static long sysctl_num(const char *path)
{
	char b[32];
	long v = 0;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fgets(b, sizeof(b), f))
			v = strtol(b, NULL, 10);
		fclose(f);
	}
	return v;
}

/*
 * UDP-Lite, ping and raw sockets: their connected state and peer, shut down
 * state, and what cannot be restored (data queued, a pending error, the
 * multicast routing socket).  FD_DESCRIBED, FD_REFUSED or FD_FAILED.
 */
static int dgram_dump(struct fd_parms *p, int sfd, struct tree_sk *s, const char *kind)
{
	const char *v = s->family == AF_INET ? "IPv4" : "IPv6";
	const char *file = s->type == SOCK_RAW ? (s->family == AF_INET ? "raw" : "raw6") :
			   is_ping(s) ? (s->family == AF_INET ? "icmp" : "icmp6") :
			   (s->family == AF_INET ? "udplite" : "udplite6");
	struct pollfd pf = { .fd = sfd, .events = POLLIN | POLLRDHUP };
	struct procnet e;
	char nm[128];
	int r, diag;
	ssize_t n;

	if (s->type == SOCK_RAW &&
	    ((s->family == AF_INET && s->proto == IPPROTO_IGMP &&
	      sysctl_num("/proc/sys/net/ipv4/conf/all/mc_forwarding") > 0) ||
	     (s->family == AF_INET6 && s->proto == IPPROTO_ICMPV6 &&
	      sysctl_num("/proc/sys/net/ipv6/conf/all/mc_forwarding") > 0)))
		return fd_refuse(p, "%s: %s %s socket while multicast routing is on (net.%s.conf.all.mc_forwarding): it may be the multicast routing socket (MRT_INIT), whose routes imgcr does not restore: not supported",
				 p->link, v, kind, s->family == AF_INET ? "ipv4" : "ipv6");
	r = procnet_find(file, s->family, s->ino, &e);
	if (r < 0) {
		pr_perror("pid %d fd %d: %s: cannot read /proc/net/%s", p->pid, p->fd, p->link, file);
		return FD_FAILED;
	}
	/* connected to a port 0 (raw sockets, ping): getpeername says ENOTCONN */
	if (!s->peerlen && !r && e.st == SK_ST_ESTABLISHED && e.remlen) {
		s->peerlen = e.remlen;
		memcpy(s->peername, &e.rem, e.remlen);
	}
	s->state = s->peerlen ? SK_ST_ESTABLISHED : SK_ST_CLOSE;
	/* raw: bind() sets the address alone (the "port" is the protocol) */
	if (s->type == SOCK_RAW && s->namelen && addr_any((struct sockaddr_storage *)s->name))
		s->namelen = 0;

	/*
	 * the queues: nothing can be put back in them.  poll() first: it
	 * consumes nothing (a receive, even a peek, takes a pending SO_ERROR)
	 */
	if (poll(&pf, 1, 0) < 0) {
		pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	if (pf.revents & POLLERR)
		return fd_refuse(p, "%s: %s %s socket %s: an error pending (SO_ERROR, or an ICMP error queued by IP_RECVERR/IPV6_RECVERR): not supported (it cannot be queued again)",
				 p->link, v, kind, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
	/* EPOLLIN: a datagram queued, or a shutdown for reading; /proc/net: its memory */
	if ((!r && e.rxq) || ((pf.revents & POLLIN) && !(pf.revents & POLLRDHUP))) {
		static char peek[65536];

		n = recv(sfd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
		return fd_refuse(p, "%s: %s %s socket %s: datagrams queued, not yet received (%s%zd bytes in the first): not supported (they cannot be queued again)",
				 p->link, v, kind, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
				 n < 0 ? "?" : "", n < 0 ? (ssize_t)0 : n);
	}

	/* the shutdown state: sock_diag (udp_diag, raw_diag) shows it; ping sockets have no sock_diag */
	diag = !is_ping(s);
	if (diag) {
		struct inet_diag_req_v2 req = {
			.sdiag_family = s->family,
			.sdiag_protocol = s->type == SOCK_RAW ? IPPROTO_RAW : s->proto,
			.idiag_states = ~0U,
		};
		struct listen_info li = { .ino = s->ino };

		if (sk_diag_dump(&req, sizeof(req), diag_cb, &li)) {
			pr_perror("pid %d fd %d: %s: sock_diag (%s), for the %s socket's shutdown state",
				  p->pid, p->fd, p->link, s->type == SOCK_RAW ? "raw_diag" : "udp_diag", kind);
			return FD_FAILED;
		}
		if (li.found && li.shutdown >= 0) {
			s->shutdown = li.shutdown & 3;
			return FD_DESCRIBED;
		}
		if (s->namelen || s->peerlen || s->type == SOCK_RAW) {
			pr_err("pid %d fd %d: %s: sock_diag does not list this %s socket (its shutdown state)",
			       p->pid, p->fd, p->link, kind);
			return FD_FAILED;
		}
	}
	/*
	 * not listed by sock_diag: poll() shows a shutdown for reading
	 * (EPOLLRDHUP) or both (EPOLLHUP), not one for writing alone
	 */
	s->shutdown = (pf.revents & POLLHUP) ? 3 : (pf.revents & POLLRDHUP) ? 1 : 0;
	return FD_DESCRIBED;
}

/* SO_MEMINFO: the memory of the datagrams queued (SK_MEMINFO_RMEM_ALLOC) and the drops */
static int meminfo(int fd, uint32_t *rmem, uint32_t *drops)
{
	uint32_t m[16] = { 0 };
	socklen_t l = sizeof(m);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, m, &l) || l < 9 * sizeof(uint32_t))
		return -1;
	*rmem = m[0];	/* SK_MEMINFO_RMEM_ALLOC */
	*drops = m[8];	/* SK_MEMINFO_DROPS */
	return 0;
}

/* a peek at the head of @sfd's queue (no peek offset): its size (MSG_TRUNC) and sender, or -1 (errno) */
static ssize_t peek_head(int sfd, struct sockaddr_storage *from, socklen_t *fromlen)
{
	char b[1];
	ssize_t n;
	int old = -1, off = -1;

	if (sk_getint(sfd, SOL_SOCKET, SO_PEEK_OFF, &old))
		return -1;
	if (old >= 0 && setsockopt(sfd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)))
		return -1;
	do {
		*fromlen = sizeof(*from);
		n = recvfrom(sfd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)from, fromlen);
	} while (n < 0 && errno == EINTR);
	if (old >= 0) {
		int e = errno;

		if (setsockopt(sfd, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)))
			return -1;
		errno = e;
	}
	return n;
}

/* an IPv4 address as an IPv6 socket gives it (::ffff:a.b.c.d) into @sin; 1 if it is one */
static int v4mapped(const struct sockaddr_storage *ss, struct sockaddr_in *sin)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return 0;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = s6->sin6_port;
	memcpy(&sin->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	return 1;
}

/* another UDP socket on a port (udp_diag): the first one found that may take its datagrams */
struct port_info {
	unsigned long ino;		/* the socket itself */
	int family;			/* its family, */
	unsigned char addr[16];		/* its address (IPv4: 4 bytes; mapped to IPv6 otherwise) */
	int any;			/* 0.0.0.0 or :: */
	uint16_t port;			/* network order */
	unsigned long other;		/* the other socket's inode, 0: none */
	char desc[160];
};

/* an address of udp_diag (@fam) as IPv6 (IPv4 mapped); 1 if an address of any */
static int diag_addr(int fam, const __be32 *a, unsigned char *out)
{
	static const unsigned char zero[16];

	if (fam == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, a, 4);
		return !a[0];
	}
	memcpy(out, a, 16);
	return !memcmp(out, zero, 16) ||
	       (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)out) && !memcmp(out + 12, zero, 4));
}

static void port_cb(void *msg, size_t len, void *arg)
{
	struct inet_diag_msg *m = msg;
	struct port_info *pi = arg;
	unsigned char a[16];
	int any;

	if (len < sizeof(*m) || m->idiag_inode == pi->ino || pi->other ||
	    m->id.idiag_sport != pi->port)
		return;
	any = diag_addr(m->idiag_family, m->id.idiag_src, a);
	/* an IPv4 socket and an IPv6 one bound to [::] share IPv4 datagrams (V6ONLY aside) */
	if (!any && !pi->any && memcmp(a, pi->addr, 16))
		return;
	pi->other = m->idiag_inode ? m->idiag_inode : 1;
	snprintf(pi->desc, sizeof(pi->desc), "socket:[%u]%s", m->idiag_inode,
		 m->id.idiag_dport ? " (connected)" : "");
}

/* the extra receive options sk-opts.c's table cannot see: the name of one set, or NULL */
static const char *rx_extra(int sfd, const struct tree_sk *s)
{
	static const struct {
		int level, opt;
		const char *name;
	} o[] = {
#ifndef SO_TIMESTAMP_NEW
#define SO_TIMESTAMP_NEW 63
#define SO_TIMESTAMPNS_NEW 64
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO 11
#endif
		{ SOL_SOCKET, SO_TIMESTAMP_NEW, "SO_TIMESTAMP_NEW" },
		{ SOL_SOCKET, SO_TIMESTAMPNS_NEW, "SO_TIMESTAMPNS_NEW" },
		{ SOL_SOCKET, SO_TIMESTAMP, "SO_TIMESTAMP" },
		{ SOL_SOCKET, SO_TIMESTAMPNS, "SO_TIMESTAMPNS" },
		{ SOL_SOCKET, SO_TIMESTAMPING, "SO_TIMESTAMPING" },
		{ IPPROTO_IPV6, IPV6_RECVHOPOPTS, "IPV6_RECVHOPOPTS" },
		{ IPPROTO_IPV6, IPV6_RECVDSTOPTS, "IPV6_RECVDSTOPTS" },
		{ IPPROTO_IPV6, IPV6_RECVRTHDR, "IPV6_RECVRTHDR" },
		{ IPPROTO_IPV6, IPV6_FLOWINFO, "IPV6_FLOWINFO" },
		{ IPPROTO_IPV6, 2, "IPV6_2292PKTINFO" },
		{ IPPROTO_IPV6, 3, "IPV6_2292HOPOPTS" },
		{ IPPROTO_IPV6, 4, "IPV6_2292DSTOPTS" },
		{ IPPROTO_IPV6, 5, "IPV6_2292RTHDR" },
		{ IPPROTO_IPV6, 8, "IPV6_2292HOPLIMIT" },
	};
	size_t k;
	int v;

	for (k = 0; k < sizeof(o) / sizeof(o[0]); k++)
		if ((o[k].level != IPPROTO_IPV6 || s->family == AF_INET6) &&
		    !sk_getint(sfd, o[k].level, o[k].opt, &v) && v)
			return o[k].name;
	return NULL;
}

/*
 * UDP: the datagrams queued (sockets.c's sk_queue_dump: one frame and one
 * skq record with the source address each), or a refusal.  FD_*.  What
 * refuses comes before any peek, so a refused dump changes nothing.
 */
static int udp_queue_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	const char *v = s->family == AF_INET ? "IPv4" : "IPv6";
	struct pollfd pf = { .fd = sfd, .events = POLLIN };
	struct sockaddr_storage from;
	struct sockaddr_in n4;
	socklen_t fromlen;
	char nm[128], dev[IFNAMSIZ + 1];
	const char *o;
	uint32_t rmem, drops;
	ssize_t head;
	socklen_t l;
	int fam;

	sk_addr_str(s->name, s->namelen, nm, sizeof(nm));
	/* a receive, even a peek, takes a pending error; poll() consumes nothing */
	if (poll(&pf, 1, 0) < 0) {
		pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	if (pf.revents & POLLERR)
		return fd_refuse(p, "%s: %s UDP socket %s: an error pending (SO_ERROR, e.g. ECONNREFUSED, or an ICMP error queued by IP_RECVERR/IPV6_RECVERR): not supported (it cannot be made again)",
				 p->link, v, nm);
	/* the memory of its datagrams (SO_MEMINFO consumes nothing) */
	if (meminfo(sfd, &rmem, &drops)) {
		pr_perror("pid %d fd %d: %s: SO_MEMINFO", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	if (!rmem)
		return FD_DESCRIBED;
	if (!s->namelen) {
		pr_err("pid %d fd %d: %s: datagrams queued on a UDP socket with no name", p->pid,
		       p->fd, p->link);
		return FD_FAILED;
	}
	/* a receive option (sk-opts.c's table, read first by sockets.c, and those it cannot see) */
	o = sk_xopts_rx_cmsg(s);
	if (!o)
		o = rx_extra(sfd, s);
	if (o)
		return fd_refuse(p, "%s: %s UDP socket %s: datagrams queued on a socket with %s set: not supported (a receive shows data of their arrival that a datagram queued again would not have)",
				 p->link, v, nm, o);
	/* bound to a device other than lo: a datagram sent again over lo would not reach it */
	l = sizeof(dev) - 1;
	memset(dev, 0, sizeof(dev));
	if (!getsockopt(sfd, SOL_SOCKET, SO_BINDTODEVICE, dev, &l) && dev[0] && strcmp(dev, "lo"))
		return fd_refuse(p, "%s: %s UDP socket %s: datagrams queued on a socket bound to device %s (SO_BINDTODEVICE): not supported (they are sent again over lo)",
				 p->link, v, nm, dev);
	/* a multicast or broadcast address: a send to it leaves the host, or reaches others */
	memset(&from, 0, sizeof(from));
	memcpy(&from, s->name, s->namelen);
	if (v4mapped(&from, &n4) || from.ss_family == AF_INET) {
		uint32_t a = ntohl(from.ss_family == AF_INET ?
				   ((struct sockaddr_in *)&from)->sin_addr.s_addr : n4.sin_addr.s_addr);

		if (IN_MULTICAST(a) || a == INADDR_BROADCAST)
			return fd_refuse(p, "%s: %s UDP socket %s: datagrams queued on a socket bound to a multicast or broadcast address: not supported (a send to it reaches other sockets, or leaves the host)",
					 p->link, v, nm);
	} else if (IN6_IS_ADDR_MULTICAST(&((struct sockaddr_in6 *)&from)->sin6_addr)) {
		return fd_refuse(p, "%s: %s UDP socket %s: datagrams queued on a socket bound to a multicast address: not supported (a send to it reaches other sockets, or leaves the host)",
				 p->link, v, nm);
	}
	/* another socket on its port (SO_REUSEPORT/REUSEADDR, connected ones): it may take them */
	for (fam = AF_INET; fam; fam = fam == AF_INET ? AF_INET6 : 0) {
		struct inet_diag_req_v2 req = {
			.sdiag_family = fam,
			.sdiag_protocol = IPPROTO_UDP,
			.idiag_states = ~0U,
		};
		struct port_info pi = { .ino = s->ino, .family = s->family };

		if (s->family == AF_INET) {
			const struct sockaddr_in *a = (const struct sockaddr_in *)s->name;

			pi.any = diag_addr(AF_INET, (const __be32 *)&a->sin_addr, pi.addr);
			pi.port = a->sin_port;
		} else {
			const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)s->name;

			pi.any = diag_addr(AF_INET6, (const __be32 *)&a->sin6_addr, pi.addr);
			pi.port = a->sin6_port;
		}
		if (sk_diag_dump(&req, sizeof(req), port_cb, &pi)) {
			pr_perror("pid %d fd %d: %s: sock_diag (udp_diag), for the other sockets on its port",
				  p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		if (pi.other)
			return fd_refuse(p, "%s: %s UDP socket %s (port %u): datagrams queued on a port another socket also holds (%s; SO_REUSEPORT, SO_REUSEADDR or a connected one): not supported (a datagram sent again to the port may reach the other)",
					 p->link, v, nm, ntohs(pi.port), pi.desc);
	}
	/*
	 * the head, peeked at without an offset: a zero-length one is marked
	 * so, and the pass with an offset skips it: it is written first
	 */
	head = peek_head(sfd, &from, &fromlen);
	if (head < 0 && errno != EAGAIN) {
		pr_perror("pid %d fd %d: %s: peeking at the head of its queue", p->pid, p->fd,
			  p->link);
		return FD_FAILED;
	}
	if (head < 0)
		return FD_DESCRIBED;	/* a shutdown for reading, nothing queued */
	if (head == 0 && (fromlen > sizeof(from) || fromlen < sizeof(struct sockaddr_in))) {
		pr_err("pid %d fd %d: %s: the head of its queue has no source address", p->pid,
		       p->fd, p->link);
		return FD_FAILED;
	}
	return sk_queue_dump_head(c, p, sfd, s, -1, head == 0 ? &from : NULL, fromlen);
}

static int inet_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	const char *v = s->family == AF_INET ? "IPv4" : "IPv6";
	struct sockaddr_storage ss;
	struct tcp_info ti;
	socklen_t len;
	char nm[128], kind[64];
	int n;

	if (s->proto == IPPROTO_SCTP && s->type != SOCK_RAW)
		return fd_refuse(p, "%s: SCTP sockets are not supported", p->link);
	if (s->proto == IPPROTO_MPTCP)
		return fd_refuse(p, "%s: MPTCP sockets are not supported", p->link);
	if (!sk_is_tcp(s) && !sk_is_udp(s) && !is_ping(s) && s->type != SOCK_RAW)
		return fd_refuse(p, "%s: %s sockets of type %d, protocol %d are not supported",
				 p->link, v, s->type, s->proto);
	inet_sk_kind(s, kind, sizeof(kind));
	/* its owner, for SO_REUSEPORT's uid rule (sk-tcp.c) */
	inet_sk_owner(sfd, s);
	len = sizeof(ss);
	if (getsockname(sfd, (struct sockaddr *)&ss, &len) || len > TREE_SK_ADDR) {
		pr_perror("pid %d fd %d: %s: getsockname", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	/* port 0: not bound (a ping socket's port is its ident; a raw socket's, its protocol) */
	if (((struct sockaddr_in *)&ss)->sin_port) {
		s->namelen = len;
		memcpy(s->name, &ss, len);
	}
	len = sizeof(ss);
	if (!getpeername(sfd, (struct sockaddr *)&ss, &len) && len <= TREE_SK_ADDR) {
		s->peerlen = len;
		memcpy(s->peername, &ss, len);
	}
	if (sk_is_tcp(s)) {
		len = sizeof(ti);
		if (getsockopt(sfd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
			pr_perror("pid %d fd %d: %s: TCP_INFO", p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		s->state = ti.tcpi_state;
		if (sk_tcp_will_repair(s)) {
			/* sk-tcp.c, which needs the peek offset first */
			if (sk_opts_dump(p, sfd, s))
				return FD_FAILED;
			return tcp_sk_dump(c, p, sfd, s);
		}
		if (s->state != SK_ST_LISTEN && s->state != SK_ST_CLOSE)
			return fd_refuse(p, "%s: %s TCP connection %s -> %s in state %s: not supported (established, FIN-WAIT-1/2, CLOSE-WAIT, LAST-ACK and CLOSING connections are restored)",
					 p->link, v, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
					 sk_addr_str(s->peername, s->peerlen, nm + 64, 64),
					 s->state < 12 ? tcp_states[s->state] : "?");
		if (s->state == SK_ST_LISTEN) {
			struct inet_diag_req_v2 req = {
				.sdiag_family = s->family,
				.sdiag_protocol = IPPROTO_TCP,
				.idiag_states = 1 << SK_ST_LISTEN,
			};
			struct listen_info li = { .ino = s->ino };

			if (sk_diag_dump(&req, sizeof(req), diag_cb, &li) || !li.found) {
				pr_perror("pid %d fd %d: %s: sock_diag (inet_diag) does not list this listening socket",
					  p->pid, p->fd, p->link);
				return FD_FAILED;
			}
			s->backlog = li.wq;
			if (li.rq)
				pr_err("pid %d fd %d: note: %u connection(s) queued on the listening socket %s and not yet accepted are reset",
				       p->pid, p->fd, li.rq, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		}
	} else if (s->type == SOCK_DGRAM && s->proto == IPPROTO_UDP) {
		struct inet_diag_req_v2 req = {
			.sdiag_family = s->family,
			.sdiag_protocol = IPPROTO_UDP,
			.idiag_states = ~0U,
		};
		struct listen_info li = { .ino = s->ino };

		s->state = s->peerlen ? 1 : SK_ST_CLOSE;
		/* its shutdown state: sock_diag (udp_diag) alone shows it */
		if (sk_diag_dump(&req, sizeof(req), diag_cb, &li)) {
			pr_perror("pid %d fd %d: %s: sock_diag (udp_diag), for the UDP socket's shutdown state",
				  p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		if (li.found && li.shutdown >= 0) {
			s->shutdown = li.shutdown & 3;
		} else if (!s->namelen && !s->peerlen) {
			/*
			 * neither bound nor connected: not in the UDP tables sock_diag
			 * lists; poll() shows a shutdown for reading (EPOLLRDHUP) or
			 * both (EPOLLHUP), not one for writing alone (README)
			 */
			struct pollfd pf = { .fd = sfd, .events = POLLIN | POLLRDHUP };

			if (poll(&pf, 1, 0) < 0) {
				pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
				return FD_FAILED;
			}
			s->shutdown = (pf.revents & POLLHUP) ? 3 : (pf.revents & POLLRDHUP) ? 1 : 0;
		} else {
			pr_err("pid %d fd %d: %s: sock_diag (udp_diag) does not list this UDP socket (its shutdown state)",
			       p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		n = udp_queue_dump(c, p, sfd, s);
		if (n != FD_DESCRIBED)
			return n;
	} else {
		n = dgram_dump(p, sfd, s, kind);
		if (n != FD_DESCRIBED)
			return n;
	}
	if (sk_opts_dump(p, sfd, s))
		return FD_FAILED;
	return FD_DESCRIBED;
}

/* ---- restore: a UDP socket's queued datagrams sent again ---- */

/*
 * One datagram of @n bytes from @from to @to (same family) by a raw
 * socket that writes the IP (IPv6) and UDP headers itself; 0 or -1 (errno).
 */
static int raw_send(int *raw, const struct sockaddr_storage *from, const struct sockaddr_storage *to,
		    const char *data, uint32_t n)
{
	int v6 = from->ss_family == AF_INET6;
	size_t hl = v6 ? sizeof(struct ip6_hdr) : sizeof(struct iphdr);
	size_t len = hl + sizeof(struct udphdr) + n;
	static unsigned char *buf;
	struct udphdr *u;
	uint32_t sum = 0, ulen = sizeof(struct udphdr) + n;
	struct sockaddr_storage dst = *to;
	ssize_t w;

	if (ulen > 0xffff || (!v6 && len > 0xffff)) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!buf && !(buf = malloc(0x10000 + 64)))
		return -1;
	if (*raw < 0)
		*raw = socket(from->ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (*raw < 0)
		return -1;
	memset(buf, 0, hl + sizeof(*u));
	u = (struct udphdr *)(buf + hl);
	if (v6) {
		struct ip6_hdr *h = (struct ip6_hdr *)buf;
		const struct sockaddr_in6 *f = (const struct sockaddr_in6 *)from;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&dst;

		h->ip6_flow = htonl(6U << 28);
		h->ip6_plen = htons(ulen);
		h->ip6_nxt = IPPROTO_UDP;
		h->ip6_hlim = 64;
		h->ip6_src = f->sin6_addr;
		h->ip6_dst = d->sin6_addr;
		u->source = f->sin6_port;
		u->dest = d->sin6_port;
		sum = csum_add(sum, &h->ip6_src, 32);
		d->sin6_port = 0;
	} else {
		struct iphdr *h = (struct iphdr *)buf;
		const struct sockaddr_in *f = (const struct sockaddr_in *)from;
		struct sockaddr_in *d = (struct sockaddr_in *)&dst;

		/* the kernel fills in the total length, the id and the checksum */
		h->version = 4;
		h->ihl = 5;
		h->ttl = 64;
		h->protocol = IPPROTO_UDP;
		h->tot_len = htons(len);
		h->saddr = f->sin_addr.s_addr;
		h->daddr = d->sin_addr.s_addr;
		u->source = f->sin_port;
		u->dest = d->sin_port;
		sum = csum_add(sum, &h->saddr, 8);
		d->sin_port = 0;
	}
	u->len = htons(ulen);
	memcpy(buf + hl + sizeof(*u), data, n);
	sum += IPPROTO_UDP + ulen;
	sum = csum_fold(csum_add(sum, u, ulen));
	u->check = sum ? htons(sum) : 0xffff;	/* 0: no checksum (UDP over IPv4) */
	w = sendto(*raw, buf, len, 0, (struct sockaddr *)&dst,
		   v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (w >= 0 && (size_t)w != len) {
		errno = EMSGSIZE;
		return -1;
	}
	return w < 0 ? -1 : 0;
}

/*
 * @to, where a UDP socket's datagrams are sent again: a unicast address of
 * this host (a socket binds it without IP_FREEBIND, and connects to it
 * without SO_BROADCAST), not a multicast or broadcast one; 0, or -1 printed
 */
static int local_unicast(const struct sockaddr_storage *to, const char *what)
{
	struct sockaddr_storage a = *to;
	socklen_t l = to->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	char nm[128];
	int fd, ok;

	sk_addr_str((const unsigned char *)to, l, nm, sizeof(nm));
	if (to->ss_family == AF_INET) {
		uint32_t v = ntohl(((const struct sockaddr_in *)to)->sin_addr.s_addr);

		ok = !IN_MULTICAST(v) && v != INADDR_BROADCAST;
		((struct sockaddr_in *)&a)->sin_port = 0;
	} else {
		ok = !IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)to)->sin6_addr);
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	}
	/* an address of an interface here, or of the loopback range (net.ipv4.ip_nonlocal_bind aside) */
	if (ok) {
		struct ifaddrs *ifs, *f;
		int found = 0;

		if (to->ss_family == AF_INET)
			found = (ntohl(((const struct sockaddr_in *)to)->sin_addr.s_addr) >> 24) == 127;
		else
			found = IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)to)->sin6_addr);
		if (!found) {
			if (getifaddrs(&ifs)) {
				pr_perror("%s: getifaddrs, to check its address %s", what, nm);
				return -1;
			}
			for (f = ifs; f && !found; f = f->ifa_next)
				if (f->ifa_addr && f->ifa_addr->sa_family == to->ss_family)
					found = to->ss_family == AF_INET ?
						((struct sockaddr_in *)f->ifa_addr)->sin_addr.s_addr ==
						((const struct sockaddr_in *)to)->sin_addr.s_addr :
						!memcmp(&((struct sockaddr_in6 *)f->ifa_addr)->sin6_addr,
							&((const struct sockaddr_in6 *)to)->sin6_addr, 16);
			freeifaddrs(ifs);
		}
		ok = found;
	}
	fd = socket(to->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		pr_perror("%s: a socket to check its address %s", what, nm);
		return -1;
	}
	if (ok && bind(fd, (struct sockaddr *)&a, l))
		ok = 0;
	if (ok && connect(fd, (const struct sockaddr *)to, l))
		ok = 0;
	close(fd);
	if (!ok) {
		pr_err("%s: its queued datagrams would be sent again to %s, which is not a unicast address of this host (multicast, broadcast, or not local: IP_FREEBIND?): refused, nothing sent",
		       what, nm);
		return -1;
	}
	return 0;
}

/* a UDP source address as the socket of @s reads it: equal to @b (family, port, address) */
static int same_src(const struct sockaddr_storage *a, socklen_t al, const unsigned char *b, int bl)
{
	struct sockaddr_storage x;

	memset(&x, 0, sizeof(x));
	memcpy(&x, b, bl < (int)sizeof(x) ? bl : (int)sizeof(x));
	if (a->ss_family != x.ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return al >= sizeof(struct sockaddr_in) &&
		       ((const struct sockaddr_in *)a)->sin_port == ((struct sockaddr_in *)&x)->sin_port &&
		       ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((struct sockaddr_in *)&x)->sin_addr.s_addr;
	return al >= sizeof(struct sockaddr_in6) &&
	       ((const struct sockaddr_in6 *)a)->sin6_port == ((struct sockaddr_in6 *)&x)->sin6_port &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((struct sockaddr_in6 *)&x)->sin6_addr, 16);
}

/*
 * After the fill: the queue of @fd peeked at (SO_PEEK_OFF stepping) and
 * compared with the image, datagram by datagram (size, source, bytes), and
 * nothing more; 0, or -1 printed.  A zero-length datagram after the head
 * is not peeked at (a peek marks it, and a peek with an offset then passes
 * it: the next dump would lose it): the check stops before it.
 */
static int udp_verify(const struct tree_sk *s, int fd, const char *data, size_t len, const char *what)
{
	static char *buf;
	size_t off = 0;
	int seq = 0, ret = -1, zero = 0, all = 1;
	uint32_t n;
	char nm[128];

	if (!buf && !(buf = malloc(0x10000)))
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero))) {
		pr_perror("%s: SO_PEEK_OFF, to check its queue", what);
		return -1;
	}
	for (; off + sizeof(n) <= len; seq++) {
		const struct tree_skq *q = skq_find(s, seq);
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t k;

		memcpy(&n, data + off, sizeof(n));
		off += sizeof(n);
		if (!n && seq) {
			all = 0;
			break;
		}
		do {
			k = recvfrom(fd, buf, 0x10000, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
		} while (k < 0 && errno == EINTR);
		if (k < 0) {
			pr_perror("%s: its queue, checked after the fill: datagram %d (%u bytes) missing",
				  what, seq, n);
			goto out;
		}
		if ((uint32_t)k != n || !q || !same_src(&from, fl, q->from, q->fromlen) ||
		    memcmp(buf, data + off, n)) {
			pr_err("%s: its queue, checked after the fill: datagram %d is %zd bytes from %s, not the image's %u bytes from %s (another datagram arrived, or one went to another socket)",
			       what, seq, k, sk_addr_str((unsigned char *)&from, fl, nm, 64), n,
			       q ? sk_addr_str(q->from, q->fromlen, nm + 64, 64) : "?");
			goto out;
		}
		off += n;
	}
	if (all) {
		ssize_t k = recv(fd, buf, 1, MSG_PEEK | MSG_DONTWAIT);

		if (k >= 0 || errno != EAGAIN) {
			pr_err("%s: its queue, checked after the fill: more than the image's %d datagrams (another arrived meanwhile)",
			       what, seq);
			goto out;
		}
	}
	pr_debug("%s: its queue checked after the fill: %d datagram(s) as in the image%s", what, seq,
		 all ? "" : " (up to a zero-length one)");
	ret = 0;
out:
	zero = -1;
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero))) {
		pr_perror("%s: SO_PEEK_OFF", what);
		ret = -1;
	}
	return ret;
}

/*
 * Phase 1, UDP socket @i (made in @fd, bound, not yet connected): its
 * queued datagrams sent to it again, each from its source address and
 * port, each waited for; 0 or -1 (printed, naming the socket).
 */
static int udp_fill(struct sk_restore *r, int i, int fd, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];
	struct sockaddr_storage to4, to6, *to;
	char path[64], nm[128];
	size_t len, off = 0;
	char *data;
	int raw4 = -1, raw6 = -1, seq = 0, ret = -1, v, k, chk4 = 0, chk6 = 0;
	long unpriv;
	uint32_t n;

	snprintf(path, sizeof(path), "sk-%lu.data", s->ino);
	data = read_text_dir(r->dirfd, path, &len);
	if (!data) {
		pr_perror("%s: cannot read %s", what, path);
		return -1;
	}
	if (len != s->qlen || !s->namelen) {
		pr_err("%s: %s has %zu bytes, the tree says %zu%s", what, path, len, s->qlen,
		       s->namelen ? "" : " (and the socket has no name)");
		goto out;
	}
	/* the destination: its name, or the loopback address for an address of any */
	memset(&to4, 0, sizeof(to4));
	memset(&to6, 0, sizeof(to6));
	memcpy(&to6, s->name, s->namelen);
	if (!v4mapped(&to6, (struct sockaddr_in *)&to4))
		memcpy(&to4, s->name, s->namelen);
	if (to4.ss_family == AF_INET && addr_any(&to4))
		((struct sockaddr_in *)&to4)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (to6.ss_family == AF_INET6 && addr_any(&to6))
		((struct sockaddr_in6 *)&to6)->sin6_addr = in6addr_loopback;
	if (to4.ss_family == AF_INET6 && addr_any(&to4)) {
		/* an IPv6 socket bound to [::]: IPv4 datagrams come to 127.0.0.1 */
		memset(&to4, 0, sizeof(to4));
		((struct sockaddr_in *)&to4)->sin_family = AF_INET;
		((struct sockaddr_in *)&to4)->sin_port = ((struct sockaddr_in6 *)&to6)->sin6_port;
		((struct sockaddr_in *)&to4)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	/* before anything is sent: each destination a local unicast address */
	for (k = 0; k < s->nskq; k++) {
		const struct tree_skq *q = skq_find(s, k);
		struct sockaddr_storage f;
		struct sockaddr_in f4;

		if (!q || q->fromlen < (int)sizeof(struct sockaddr_in) || q->fromlen > (int)sizeof(f)) {
			pr_err("%s: %s, datagram %d: no source address", what, path, k);
			goto out;
		}
		memset(&f, 0, sizeof(f));
		memcpy(&f, q->from, q->fromlen);
		if (v4mapped(&f, &f4))
			f.ss_family = AF_INET;
		if (f.ss_family == AF_INET ? !chk4++ : !chk6++) {
			to = f.ss_family == AF_INET ? &to4 : &to6;
			if (to->ss_family == f.ss_family && local_unicast(to, what))
				goto out;
		}
	}
	/* root restoring a user's directory: only what the user could do (trust.c) */
	unpriv = sysctl_num("/proc/sys/net/ipv4/ip_unprivileged_port_start");
	/* room for all of them, whatever their memory here (sk_opts_restore sets SO_RCVBUF again) */
	v = len * 2 + (len / 4 + 1) * 1024 + s->rcvbuf;
	if (v < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	while (off + sizeof(n) <= len) {
		const struct tree_skq *q = skq_find(s, seq);
		struct sockaddr_storage from;
		struct sockaddr_in f4;
		uint32_t rmem, drops, rmem2, drops2;
		int tmp, e, viaraw = 0;

		memcpy(&n, data + off, sizeof(n));
		off += sizeof(n);
		if (n > len - off || !q || q->nfds || q->fromlen < (int)sizeof(struct sockaddr_in)) {
			pr_err("%s: %s, datagram %d: truncated, or no source address", what, path, seq);
			goto out;
		}
		memset(&from, 0, sizeof(from));
		memcpy(&from, q->from, q->fromlen);
		if (v4mapped(&from, &f4))
			memcpy(&from, &f4, sizeof(f4));
		to = from.ss_family == AF_INET ? &to4 : &to6;
		if (trust_dir_user != (uid_t)-1 &&
		    ntohs(((struct sockaddr_in *)&from)->sin_port) < unpriv) {
			pr_err("%s: datagram %d came from %s, a port below net.ipv4.ip_unprivileged_port_start (%ld) that uid %u could not bind: refused (root restores a user's directory)",
			       what, seq, sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)), unpriv,
			       (unsigned int)trust_dir_user);
			goto out;
		}
		if (to->ss_family != from.ss_family) {
			pr_err("%s: datagram %d came from %s, which it cannot receive from here", what,
			       seq, sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)));
			goto out;
		}
		if (meminfo(fd, &rmem, &drops)) {
			pr_perror("%s: SO_MEMINFO", what);
			goto out;
		}
		/* from a socket bound to its source address and port, if they are free */
		tmp = socket(from.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
		k = 1;
		if (tmp >= 0 && from.ss_family == AF_INET6)
			setsockopt(tmp, IPPROTO_IPV6, IPV6_V6ONLY, &k, sizeof(k));
		if (tmp >= 0 && !bind(tmp, (struct sockaddr *)&from,
				      from.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
				      sizeof(struct sockaddr_in6))) {
			k = len + (1 << 16);
			if (setsockopt(tmp, SOL_SOCKET, SO_SNDBUFFORCE, &k, sizeof(k)))
				setsockopt(tmp, SOL_SOCKET, SO_SNDBUF, &k, sizeof(k));
			k = sendto(tmp, data + off, n, 0, (struct sockaddr *)to,
				   to->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6)) == (ssize_t)n ? 0 : -1;
		} else {
			/* taken (a socket of the tree made before, or a live one), or not local */
			e = errno;
			viaraw = 1;
			if (trust_dir_user != (uid_t)-1) {
				pr_err("%s: datagram %d (%u bytes) came from %s, where no socket can be bound now (%s); a raw socket would send it with root's rights, which the user whose directory root restores (uid %u) has not: refused",
				       what, seq, n, sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)),
				       strerror(e), (unsigned int)trust_dir_user);
				if (tmp >= 0)
					close(tmp);
				goto out;
			}
			k = raw_send(from.ss_family == AF_INET ? &raw4 : &raw6, &from, to, data + off, n);
			if (k && (errno == EPERM || errno == EACCES)) {
				pr_err("%s: datagram %d (%u bytes) came from %s, where no socket can be bound now (%s) and a raw socket cannot be made (%s: it needs CAP_NET_RAW)",
				       what, seq, n, sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)),
				       strerror(e), strerror(errno));
				if (tmp >= 0)
					close(tmp);
				goto out;
			}
		}
		e = errno;
		pr_debug("%s: datagram %d (%u bytes) from %s: sent again by a %s", what, seq, n,
			 sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)),
			 viaraw ? "raw socket" : "socket bound to it");
		if (tmp >= 0)
			close(tmp);
		if (k) {
			errno = e;
			pr_perror("%s: cannot queue datagram %d (%u bytes, from %s) again", what, seq, n,
				  sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)));
			goto out;
		}
		/* its arrival: its memory on the socket (nothing reads it), or a drop */
		for (k = 0; k < 2000; k++) {
			if (meminfo(fd, &rmem2, &drops2)) {
				pr_perror("%s: SO_MEMINFO", what);
				goto out;
			}
			if (drops2 != drops || rmem2 != rmem)
				break;
			usleep(1000);
		}
		if (drops2 != drops || rmem2 == rmem) {
			pr_err("%s: datagram %d (%u bytes, from %s), queued again, %s", what, seq, n,
			       sk_addr_str(q->from, q->fromlen, nm, sizeof(nm)),
			       drops2 != drops ? "was dropped (its receive buffer full?)" :
			       "did not arrive in 2 s");
			goto out;
		}
		off += n;
		seq++;
	}
	if (off != len || seq != s->nskq) {
		pr_err("%s: %s: %d datagrams, %d skq records", what, path, seq, s->nskq);
		goto out;
	}
	pr_debug("%s: %d datagram(s) queued again", what, seq);
	if (udp_verify(s, fd, data, len, what))
		goto out;
	ret = 0;
out:
	if (raw4 >= 0)
		close(raw4);
	if (raw6 >= 0)
		close(raw6);
	free(data);
	return ret;
}

static int inet_sk_make(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	char what[128], nm[128];
	int fd, on = 1, v6;

	if (sk_tcp_will_repair(s))
		return tcp_sk_make(r, i);
	sk_what(s, what, sizeof(what));
	fd = r->fds[i] = inet_sk_socket(s, s->type | SOCK_CLOEXEC);
	if (fd < 0 && errno == EACCES && is_ping(s)) {
		char range[64] = "?";
		FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "re");

		if (f) {
			if (!fgets(range, sizeof(range), f))
				strcpy(range, "?");
			range[strcspn(range, "\n")] = 0;
			fclose(f);
		}
		pr_err("%s: socket: %s (net.ipv4.ping_group_range, \"%s\", does not include the restorer's group)",
		       what, strerror(EACCES), range);
		return -1;
	}
	if (fd < 0) {
		pr_perror("%s: socket%s", what,
			  s->type == SOCK_RAW && errno == EPERM ? " (a raw socket needs CAP_NET_RAW)" : "");
		return -1;
	}
	/* sk-opts.c's options that bind() depends on (SO_BINDTODEVICE, IP_FREEBIND...) */
	if (sk_xopts_restore(fd, s, P_BIND, what))
		return -1;
	/* what bind() depends on, before it (sk_opts_restore sets them again, harmlessly) */
	if ((s->opts & SKO_REUSEADDR) && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on))) {
		pr_perror("%s: SO_REUSEADDR", what);
		return -1;
	}
	if ((s->opts & SKO_REUSEPORT) && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on))) {
		pr_perror("%s: SO_REUSEPORT", what);
		return -1;
	}
	if (s->family == AF_INET6) {
		socklen_t l = sizeof(v6);
		int want = !!(s->opts & SKO_V6ONLY);

		/* a raw socket cannot change it (it has its "port" at once): left if it is right */
		if ((getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6, &l) || v6 != want) &&
		    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &want, sizeof(want))) {
			pr_perror("%s: IPV6_V6ONLY", what);
			return -1;
		}
	}
	if (s->namelen && bind(fd, (struct sockaddr *)s->name, s->namelen)) {
		pr_perror("%s: cannot bind to %s", what, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		return -1;
	}
	/* UDP: the queued datagrams, before connect() (they may come from others than its peer) */
	if (s->qlen && s->type == SOCK_DGRAM && s->proto == IPPROTO_UDP && udp_fill(r, i, fd, what))
		return -1;
	if (sk_is_tcp(s) && s->state == SK_ST_LISTEN && listen(fd, s->backlog)) {
		pr_perror("%s: listen(%d) on %s", what, s->backlog,
			  sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		return -1;
	}
	if ((s->type == SOCK_DGRAM || s->type == SOCK_RAW) && s->peerlen &&
	    connect(fd, (struct sockaddr *)s->peername, s->peerlen)) {
		pr_perror("%s: cannot connect to %s", what,
			  sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
		return -1;
	}
	/* datagram and raw: the shutdown state (an unconnected socket takes it too, saying ENOTCONN) */
	if ((s->type == SOCK_DGRAM || s->type == SOCK_RAW) && (s->shutdown & 3) &&
	    shutdown(fd, (s->shutdown & 3) - 1) && errno != ENOTCONN) {
		pr_perror("%s: shutdown", what);
		return -1;
	}
	return 0;
}

/* IPv4 and IPv6: the same functions */
const struct sk_family_ops inet_sk_ops = {
	.family = AF_INET,
	.dump = inet_sk_dump,
	.make = inet_sk_make,
	.show = sk_addr_show,
};

const struct sk_family_ops inet6_sk_ops = {
	.family = AF_INET6,
	.dump = inet_sk_dump,
	.make = inet_sk_make,
	.show = sk_addr_show,
};
