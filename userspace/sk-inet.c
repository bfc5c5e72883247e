// SPDX-License-Identifier: GPL-2.0
/*
 * TCP and UDP sockets, IPv4 and IPv6.
 *
 * TCP: a listening socket (its bound address and port, backlog, options)
 * comes back listening on the same address and port; the connections
 * queued on it and not yet accepted are reset (closed with the tree at the
 * dump; imgcr says how many).  A socket that is neither listening nor
 * connected (new, or only bound) is created and bound again.  Established
 * connections, and FIN-WAIT-1/2 and CLOSE-WAIT ones, are sk-tcp.c's (TCP
 * repair mode); every other TCP state (SYN-SENT, SYN-RECV, LAST-ACK,
 * CLOSING, TIME-WAIT) is refused, naming the state.
 *
 * UDP: bound and connected again to the same addresses, and shut down
 * again as it was (sock_diag's INET_DIAG_SHUTDOWN, udp_diag).  Datagrams queued
 * in it at the dump are dropped (their sender's address could not be given
 * back; UDP may lose datagrams anyway): imgcr says how many bytes.
 *
 * Raw sockets, UDP-Lite, ICMP ("ping") sockets, SCTP and MPTCP are refused.
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

#define SK_ST_CLOSE	7
#define SK_ST_LISTEN	10

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

int inet_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	const char *v = s->family == AF_INET ? "IPv4" : "IPv6";
	struct sockaddr_storage ss;
	struct tcp_info ti;
	socklen_t len;
	char nm[128];
	int n;

	if (s->type == SOCK_RAW)
		return fd_refuse(p, "%s: %s raw sockets are not supported", p->link, v);
	if (s->proto == IPPROTO_SCTP)
		return fd_refuse(p, "%s: SCTP sockets are not supported", p->link);
	if (s->proto == IPPROTO_MPTCP)
		return fd_refuse(p, "%s: MPTCP sockets are not supported", p->link);
	if (s->proto == IPPROTO_UDPLITE)
		return fd_refuse(p, "%s: UDP-Lite sockets are not supported", p->link);
	if (s->proto == IPPROTO_ICMP || s->proto == IPPROTO_ICMPV6)
		return fd_refuse(p, "%s: ICMP (ping) sockets are not supported", p->link);
	if (!(s->type == SOCK_STREAM && s->proto == IPPROTO_TCP) &&
	    !(s->type == SOCK_DGRAM && s->proto == IPPROTO_UDP))
		return fd_refuse(p, "%s: %s sockets of type %d, protocol %d are not supported",
				 p->link, v, s->type, s->proto);
	/* its owner, for SO_REUSEPORT's uid rule (sk-tcp.c) */
	inet_sk_owner(sfd, s);
	len = sizeof(ss);
	if (getsockname(sfd, (struct sockaddr *)&ss, &len) || len > TREE_SK_ADDR) {
		pr_perror("pid %d fd %d: %s: getsockname", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	/* port 0: not bound */
	if (((struct sockaddr_in *)&ss)->sin_port) {
		s->namelen = len;
		memcpy(s->name, &ss, len);
	}
	len = sizeof(ss);
	if (!getpeername(sfd, (struct sockaddr *)&ss, &len) && len <= TREE_SK_ADDR) {
		s->peerlen = len;
		memcpy(s->peername, &ss, len);
	}
	if (s->proto == IPPROTO_TCP) {
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
			return fd_refuse(p, "%s: %s TCP connection %s -> %s in state %s: not supported (established, FIN-WAIT-1/2 and CLOSE-WAIT connections are restored)",
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
	} else {
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
	}
	if (sk_opts_dump(p, sfd, s))
		return FD_FAILED;
	return FD_DESCRIBED;
}

int inet_sk_make(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	char what[128], nm[128];
	int fd, on = 1;

	if (s->proto == IPPROTO_TCP && sk_tcp_will_repair(s))
		return tcp_sk_make(r, i);
	sk_what(s, what, sizeof(what));
	fd = r->fds[i] = inet_sk_socket(s, s->type | SOCK_CLOEXEC);
	if (fd < 0) {
		pr_perror("%s: socket", what);
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
		int v6 = !!(s->opts & SKO_V6ONLY);

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6, sizeof(v6))) {
			pr_perror("%s: IPV6_V6ONLY", what);
			return -1;
		}
	}
	if (s->namelen && bind(fd, (struct sockaddr *)s->name, s->namelen)) {
		pr_perror("%s: cannot bind to %s", what, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		return -1;
	}
	if (s->state == SK_ST_LISTEN && listen(fd, s->backlog)) {
		pr_perror("%s: listen(%d) on %s", what, s->backlog,
			  sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		return -1;
	}
	if (s->type == SOCK_DGRAM && s->peerlen &&
	    connect(fd, (struct sockaddr *)s->peername, s->peerlen)) {
		pr_perror("%s: cannot connect to %s", what,
			  sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
		return -1;
	}
	/* UDP: the shutdown state (an unconnected socket takes it too, saying ENOTCONN) */
	if (s->type == SOCK_DGRAM && (s->shutdown & 3) &&
	    shutdown(fd, (s->shutdown & 3) - 1) && errno != ENOTCONN) {
		pr_perror("%s: shutdown", what);
		return -1;
	}
	return 0;
}
