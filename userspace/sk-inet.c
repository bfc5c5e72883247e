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
 * fails.  Refused: datagrams queued on a socket with an option that adds
 * data of their arrival to a receive (SO_TIMESTAMP*, IP_PKTINFO,
 * IP_RECVTTL...: sk_xopts_rx_cmsg, checked by sockets.c once the options
 * are read), or with an error pending (a peek takes
 * it), and a zero-length datagram at the head already peeked at (a peek
 * with an offset no longer sees it).
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

/*
 * UDP: the datagrams queued (sockets.c's sk_queue_dump: one frame and one
 * skq record with the source address each), or a refusal.  FD_*.
 */
static int udp_queue_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	const char *v = s->family == AF_INET ? "IPv4" : "IPv6";
	struct pollfd pf = { .fd = sfd, .events = POLLIN };
	struct sockaddr_storage from;
	socklen_t fromlen;
	const struct tree_skq *q;
	char nm[128], path[PATH_MAX];
	uint32_t first = 0, rmem, drops;
	ssize_t head;
	int r, fd;

	/* the memory of its datagrams (SO_MEMINFO and poll() consume nothing) */
	if (meminfo(sfd, &rmem, &drops)) {
		pr_perror("pid %d fd %d: %s: SO_MEMINFO", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	if (!rmem)
		return FD_DESCRIBED;
	if (poll(&pf, 1, 0) < 0) {
		pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	sk_addr_str(s->name, s->namelen, nm, sizeof(nm));
	/* a receive, even a peek, takes a pending error */
	if (pf.revents & POLLERR)
		return fd_refuse(p, "%s: %s UDP socket %s: datagrams queued and an error pending (SO_ERROR, or an ICMP error queued by IP_RECVERR/IPV6_RECVERR): not supported (a peek at the datagrams would take the error)",
				 p->link, v, nm);
	/*
	 * a zero-length datagram that was peeked at is marked so, and a peek
	 * with an offset passes it: the head, peeked at without an offset
	 * after sk_queue_dump (which marks it too), tells
	 */
	r = sk_queue_dump(c, p, sfd, s, -1);
	if (r != FD_DESCRIBED)
		return r;
	head = peek_head(sfd, &from, &fromlen);
	if (head < 0 && errno != EAGAIN) {
		pr_perror("pid %d fd %d: %s: peeking at the head of its queue", p->pid, p->fd,
			  p->link);
		return FD_FAILED;
	}
	if (head < 0 && !s->qlen)
		return FD_DESCRIBED;	/* a shutdown for reading, nothing queued */
	if (s->qlen >= sizeof(first)) {
		snprintf(path, sizeof(path), "%s/sk-%lu.data", c->dir, s->ino);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || pread(fd, &first, sizeof(first), 0) != sizeof(first)) {
			pr_perror("cannot read %s", path);
			if (fd >= 0)
				close(fd);
			return FD_FAILED;
		}
		close(fd);
	}
	q = skq_find(s, 0);
	if (head < 0 || !s->qlen || first != (uint32_t)head || !q || q->fromlen != (int)fromlen ||
	    memcmp(q->from, &from, fromlen))
		return fd_refuse(p, "%s: %s UDP socket %s: the first datagram a peek with an offset reads (%u bytes) is not the head of its queue (%zd bytes): a zero-length datagram at the head already peeked at (MSG_PEEK) is passed by such a peek: not supported",
				 p->link, v, nm, s->qlen ? first : 0, head);
	if (!s->namelen) {
		pr_err("pid %d fd %d: %s: datagrams queued on a UDP socket with no name", p->pid,
		       p->fd, p->link);
		return FD_FAILED;
	}
	pr_debug("pid %d fd %d: %s: %d datagram(s) queued, %zu bytes with their sizes", p->pid,
		 p->fd, p->link, s->nskq, s->qlen);
	return FD_DESCRIBED;
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

static uint32_t csum_add(uint32_t sum, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t k;

	for (k = 0; k + 1 < len; k += 2)
		sum += (b[k] << 8) | b[k + 1];
	if (len & 1)
		sum += b[len - 1] << 8;
	return sum;
}

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
	sum = csum_add(sum, u, ulen);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	u->check = htons(~sum & 0xffff) ? htons(~sum & 0xffff) : 0xffff;
	w = sendto(*raw, buf, len, 0, (struct sockaddr *)&dst,
		   v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (w >= 0 && (size_t)w != len) {
		errno = EMSGSIZE;
		return -1;
	}
	return w < 0 ? -1 : 0;
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
	int raw4 = -1, raw6 = -1, seq = 0, ret = -1, v;
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
	/* room for all of them, whatever their memory here (sk_opts_restore sets SO_RCVBUF again) */
	v = len * 2 + (len / 4 + 1) * 1024 + s->rcvbuf;
	if (v < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	while (off + sizeof(n) <= len) {
		const struct tree_skq *q = skq_find(s, seq);
		struct sockaddr_storage from;
		struct sockaddr_in f4;
		uint32_t rmem, drops, rmem2, drops2;
		int k, tmp, e, viaraw = 0;

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
