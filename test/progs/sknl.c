/*
 * sknl: netlink sockets for t_sk_netlink.
 *
 * sknl run OUT
 *   Makes, in one process:
 *     r1  NETLINK_ROUTE, port id the kernel assigned (bind to 0), groups
 *         RTNLGRP_IPV4_IFADDR (bind's nl_groups), RTNLGRP_LINK and 33, 35
 *         (NETLINK_ADD_MEMBERSHIP, above 32), NETLINK_PKTINFO,
 *         NETLINK_NO_ENOBUFS, NETLINK_CAP_ACK, NETLINK_EXT_ACK,
 *         NETLINK_GET_STRICT_CHK, SO_RCVBUF 100000;
 *     r2  NETLINK_ROUTE bound to the port id 4242421 it chose, connected to
 *         the kernel (dst 0), NETLINK_BROADCAST_ERROR, NETLINK_LISTEN_ALL_NSID;
 *     ue  NETLINK_KOBJECT_UEVENT, kernel-assigned port id, group 1, a
 *         classic filter accepting everything (1 instruction), SO_PASSCRED;
 *     au  NETLINK_AUDIT bound to the port id 4242422;
 *     nb  NETLINK_ROUTE, never bound (port id 0);
 *     lg  NETLINK_ROUTE, joined RTNLGRP_LINK and left it: no group, but a
 *         membership list (NETLINK_LIST_MEMBERSHIPS) of zeros, not empty.
 *   Records what getsockname, getpeername, NETLINK_LIST_MEMBERSHIPS and
 *   the options read, prints "ready", then on each SIGUSR1 checks every
 *   value again and by behaviour: a unicast from another socket to r2 is
 *   refused (ECONNREFUSED: connected), nb is still unbound; prints
 *   "waiting N" and waits (10 s) for an RTM_NEWADDR on r1 and a uevent on ue
 *   (the test adds an address to lo and writes "change" to lo's uevent).
 *   One line per check, "OK NAME" or "FAIL NAME: ...", then
 *   "round N ok K fail F".
 *
 * sknl refuse queue OUT
 *   A NETLINK_ROUTE socket holding the kernel's answer to an RTM_GETLINK it
 *   did not read; prints "fd N ready" and sleeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "skcheck.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_LISTEN_ALL_NSID
#define NETLINK_LISTEN_ALL_NSID 8
#endif
#ifndef NETLINK_LIST_MEMBERSHIPS
#define NETLINK_LIST_MEMBERSHIPS 9
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define R2_PORT 4242421
#define AU_PORT 4242422

/* every value checked, as read after the setup */
struct chk {
	char name[48];
	int fd, kind, lvl, opt;	/* kind 0: getsockopt, 1: getsockname, 2: getpeername */
	unsigned char want[128];
	socklen_t len;
};
static struct chk chks[128];
static int nchk;

static int readv_(const struct chk *c, unsigned char *buf, socklen_t *len)
{
	*len = sizeof(c->want);
	memset(buf, 0, sizeof(c->want));
	if (c->kind == 1)
		return getsockname(c->fd, (struct sockaddr *)buf, len);
	if (c->kind == 2)
		return getpeername(c->fd, (struct sockaddr *)buf, len);
	if (c->lvl == SOL_SOCKET && c->opt == SO_RCVBUF)
		*len = sizeof(int);
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
	if (readv_(c, c->want, &c->len)) {
		if (errno == ENOPROTOOPT) {	/* not read by this kernel (LISTEN_ALL_NSID before 6.2) */
			nchk--;
			return;
		}
		die(c->name);
	}
}

static int r1, r2, ue, au, nb, lg;

static int nlsock(int proto, unsigned int pid, unsigned int groups)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_pid = pid, .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW, proto);

	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&nl, sizeof(nl)))
		die("bind");
	return fd;
}

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

/* a unicast to r2 from another socket: refused, r2 is connected to the kernel */
static void check_connected(void)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = R2_PORT };
	struct nlmsghdr h = { .nlmsg_len = sizeof(h), .nlmsg_type = NLMSG_NOOP };
	int t = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	ssize_t n = sendto(t, &h, sizeof(h), MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));

	result(n < 0 && errno == ECONNREFUSED, "r2.connected", "a unicast to it: %zd %s", n,
	       n < 0 ? strerror(errno) : "delivered");
	close(t);
}

/* wait for an RTM_NEWADDR on r1 and a uevent on ue */
static void check_events(int round)
{
	int got_addr = 0, got_ue = 0;
	char buf[8192];

	outf(out, "waiting %d\n", round);
	for (int k = 0; k < 100 && !(got_addr && got_ue); k++) {
		struct pollfd pf[2] = { { .fd = r1, .events = POLLIN }, { .fd = ue, .events = POLLIN } };

		if (poll(pf, 2, 100) <= 0)
			continue;
		if (pf[0].revents & POLLIN) {
			ssize_t n = recv(r1, buf, sizeof(buf), MSG_DONTWAIT);

			for (struct nlmsghdr *h = (void *)buf; n > 0 && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
				if (h->nlmsg_type == RTM_NEWADDR)
					got_addr = 1;
		}
		if (pf[1].revents & POLLIN) {
			ssize_t n = recv(ue, buf, sizeof(buf) - 1, MSG_DONTWAIT);

			if (n > 0) {
				buf[n] = 0;
				if (strstr(buf, "change@") && strstr(buf, "/net/lo"))
					got_ue = 1;
			}
		}
	}
	/* what came after (the uevents of the address): read, the next dump finds the queues empty */
	for (int k = 0; k < 5; k++) {
		struct pollfd pf[2] = { { .fd = r1, .events = POLLIN }, { .fd = ue, .events = POLLIN } };

		if (poll(pf, 2, 100) > 0) {
			while (recv(r1, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
			while (recv(ue, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
		}
	}
	result(got_addr, "r1.event", "no RTM_NEWADDR in 10 s");
	result(got_ue, "ue.event", "no change@.../net/lo uevent in 10 s");
}

static int run(const char *path)
{
	static struct sock_filter all[] = { BPF_STMT(BPF_RET | BPF_K, 0xffff) };
	struct sock_fprog fp = { 1, all };
	struct sockaddr_nl kern = { .nl_family = AF_NETLINK };
	int round = 0;

	out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 1;
	signal(SIGUSR1, on_usr1);
	r1 = nlsock(NETLINK_ROUTE, 0, RTMGRP_IPV4_IFADDR);
	seti(r1, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_LINK, "r1 RTNLGRP_LINK");
	seti(r1, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 33, "r1 group 33");
	seti(r1, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 35, "r1 group 35");
	seti(r1, SOL_NETLINK, NETLINK_PKTINFO, 1, "NETLINK_PKTINFO");
	seti(r1, SOL_NETLINK, NETLINK_NO_ENOBUFS, 1, "NETLINK_NO_ENOBUFS");
	seti(r1, SOL_NETLINK, NETLINK_CAP_ACK, 1, "NETLINK_CAP_ACK");
	seti(r1, SOL_NETLINK, NETLINK_EXT_ACK, 1, "NETLINK_EXT_ACK");
	seti(r1, SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1, "NETLINK_GET_STRICT_CHK");
	seti(r1, SOL_SOCKET, SO_RCVBUF, 100000, "SO_RCVBUF");
	r2 = nlsock(NETLINK_ROUTE, R2_PORT, 0);
	if (connect(r2, (struct sockaddr *)&kern, sizeof(kern)))
		die("connect r2");
	seti(r2, SOL_NETLINK, NETLINK_BROADCAST_ERROR, 1, "NETLINK_BROADCAST_ERROR");
	seti(r2, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, 1, "NETLINK_LISTEN_ALL_NSID");
	ue = nlsock(NETLINK_KOBJECT_UEVENT, 0, 1);
	if (setsockopt(ue, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
		die("SO_ATTACH_FILTER");
	seti(ue, SOL_SOCKET, SO_PASSCRED, 1, "SO_PASSCRED");
	au = nlsock(NETLINK_AUDIT, AU_PORT, 0);
	nb = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (nb < 0)
		die("socket nb");
	lg = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (lg < 0)
		die("socket lg");
	seti(lg, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_LINK, "lg join RTNLGRP_LINK");
	seti(lg, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, RTNLGRP_LINK, "lg leave RTNLGRP_LINK");

	static const struct {
		int lvl, opt;
		const char *name;
	} o[] = {
		{ SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, "groups" },
		{ SOL_NETLINK, NETLINK_PKTINFO, "NETLINK_PKTINFO" },
		{ SOL_NETLINK, NETLINK_BROADCAST_ERROR, "NETLINK_BROADCAST_ERROR" },
		{ SOL_NETLINK, NETLINK_NO_ENOBUFS, "NETLINK_NO_ENOBUFS" },
		{ SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, "NETLINK_LISTEN_ALL_NSID" },
		{ SOL_NETLINK, NETLINK_CAP_ACK, "NETLINK_CAP_ACK" },
		{ SOL_NETLINK, NETLINK_EXT_ACK, "NETLINK_EXT_ACK" },
		{ SOL_NETLINK, NETLINK_GET_STRICT_CHK, "NETLINK_GET_STRICT_CHK" },
		{ SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF" },
		{ SOL_SOCKET, SO_PASSCRED, "SO_PASSCRED" },
		{ SOL_SOCKET, SO_GET_FILTER, "filter" },
	};
	static const char *names[] = { "r1", "r2", "ue", "au", "nb", "lg" };
	int fds[] = { r1, r2, ue, au, nb, lg };

	for (int k = 0; k < 6; k++) {
		rec(names[k], "sockname", fds[k], 1, 0, 0);
		rec(names[k], "peername", fds[k], 2, 0, 0);
		for (size_t j = 0; j < sizeof(o) / sizeof(o[0]); j++)
			rec(names[k], o[j].name, fds[k], 0, o[j].lvl, o[j].opt);
	}
	{
		struct sockaddr_nl nl;
		socklen_t l = sizeof(nl);
		unsigned int g[4] = { 0 };

		getsockname(r2, (struct sockaddr *)&nl, &l);
		result(nl.nl_pid == R2_PORT, "pre.r2.port", "%u", nl.nl_pid);
		getsockname(nb, (struct sockaddr *)&nl, &l);
		result(nl.nl_pid == 0, "pre.nb.unbound", "%u", nl.nl_pid);
		l = sizeof(g);
		getsockopt(r1, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &l);
		result(g[0] == ((1U << (RTNLGRP_IPV4_IFADDR - 1)) | (1U << (RTNLGRP_LINK - 1))) &&
		       g[1] == ((1U << 0) | (1U << 2)), "pre.r1.groups", "%x %x", g[0], g[1]);
		l = sizeof(g);
		memset(g, 0, sizeof(g));
		getsockopt(lg, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &l);
		result(l >= 4 && !g[0] && !g[1], "pre.lg.left", "%u bytes %x %x", (unsigned int)l, g[0], g[1]);
	}
	outf(out, "round 0 ok %d fail %d\n", nok, nfail);
	outf(out, "ready\n");
	for (;;) {
		while (go == round)
			pause();
		round++;
		nok = nfail = 0;
		check_all();
		check_connected();
		check_events(round);
		outf(out, "round %d ok %d fail %d\n", round, nok, nfail);
	}
}

static int refuse(const char *what, const char *path)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST },
		  .i = { .ifi_family = AF_UNSPEC, .ifi_index = 1 } };
	int fd;

	out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0 || strcmp(what, "queue"))
		return 1;
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (fd < 0 || send(fd, &req, sizeof(req), 0) != sizeof(req))
		die("RTM_GETLINK");
	usleep(100000);
	outf(out, "fd %d ready\n", fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return run(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "refuse"))
		return refuse(argv[2], argv[3]);
	fprintf(stderr, "usage: sknl run OUT | refuse queue OUT\n");
	return 2;
}
