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
 * again as it was (sock_diag's INET_DIAG_SHUTDOWN, udp_diag).  Datagrams queued
 * in it at the dump are dropped (their sender's address could not be given
 * back; UDP may lose datagrams anyway): imgcr says how many bytes.
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
#include <netinet/tcp.h>

#include "log.h"
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
		if (!ioctl(sfd, SIOCINQ, &n) && n > 0)
			pr_err("pid %d fd %d: note: the datagrams queued on the UDP socket %s are dropped (the first has %d bytes)",
			       p->pid, p->fd, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)), n);
	} else {
		n = dgram_dump(p, sfd, s, kind);
		if (n != FD_DESCRIBED)
			return n;
	}
	if (sk_opts_dump(p, sfd, s))
		return FD_FAILED;
	return FD_DESCRIBED;
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
