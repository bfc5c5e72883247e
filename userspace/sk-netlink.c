// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink sockets (AF_NETLINK, SOCK_RAW or SOCK_DGRAM, any protocol:
 * NETLINK_ROUTE, NETLINK_KOBJECT_UEVENT, NETLINK_AUDIT, generic netlink...),
 * "sknl" records after their "sk" record.
 *
 * dump: the port id (getsockname; 0: never bound, left so: the kernel
 * binds it at its first use as it would have), the multicast groups
 * (NETLINK_LIST_MEMBERSHIPS: every group, also above 32), the destination
 * of a connected socket and whether it is connected at all (sock_diag,
 * netlink_diag: connect() to the kernel, dst 0, is a state too: a connected
 * socket takes unicasts from its peer only), the SOL_NETLINK options
 * (NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR, NETLINK_NO_ENOBUFS,
 * NETLINK_LISTEN_ALL_NSID, NETLINK_CAP_ACK, NETLINK_EXT_ACK,
 * NETLINK_GET_STRICT_CHK) and SO_PASSCRED; the buffer sizes, timeouts and
 * the classic filter are sockets.c's and sk-opts.c's as for every family.
 *
 * Refused, naming the pid, the fd and the state (docs/sockets.md):
 *   - messages queued and not yet read: they came from the kernel (sender
 *     port id 0, its credentials, the multicast group it was sent to) and
 *     only the kernel can queue such a message again: sent again by imgcr
 *     they would come from a user port id, which sd-netlink, libudev and
 *     others ignore; dropped, a program that keeps a cache from the events
 *     would miss one without the ENOBUFS the kernel gives when it drops;
 *   - a pending error (ENOBUFS after lost messages): reading it clears it,
 *     nothing sets it again;
 *   - a dump in progress (NLM_F_DUMP, the kernel's callback running: the
 *     rest of the answer is the kernel's state);
 *   - a destination group above 32 (connect() cannot name it).
 *
 * restore (phase 1, sockets.c): socket(); the filter and options first
 * (before anything can be received); bind() to the same port id (a port id
 * in use by another socket fails the restore, naming it: the kernel or a
 * peer may have learnt it: auditd's, a daemon's); NETLINK_ADD_MEMBERSHIP
 * for each group; connect() to the destination.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/netlink_diag.h>

#include "log.h"
#include "sockets.h"
#include "tree.h"

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
#ifndef NDIAG_FLAG_CB_RUNNING
#define NDIAG_FLAG_CB_RUNNING 0x1
#endif
#ifndef NDIAG_FLAG_LISTEN_ALL_NSID
#define NDIAG_FLAG_LISTEN_ALL_NSID 0x10
#endif

#define NL_MAX_GROUPS	4096	/* groups kept at most (generic netlink's ids stay far below) */

/* the options kept, a bit each in sk_nl.opts */
static const struct {
	int level, opt;
	const char *name;
} nl_opts[] = {
	{ SOL_NETLINK, NETLINK_PKTINFO, "NETLINK_PKTINFO" },
	{ SOL_NETLINK, NETLINK_BROADCAST_ERROR, "NETLINK_BROADCAST_ERROR" },
	{ SOL_NETLINK, NETLINK_NO_ENOBUFS, "NETLINK_NO_ENOBUFS" },
	{ SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, "NETLINK_LISTEN_ALL_NSID" },
	{ SOL_NETLINK, NETLINK_CAP_ACK, "NETLINK_CAP_ACK" },
	{ SOL_NETLINK, NETLINK_EXT_ACK, "NETLINK_EXT_ACK" },
	{ SOL_NETLINK, NETLINK_GET_STRICT_CHK, "NETLINK_GET_STRICT_CHK" },
	{ SOL_SOCKET, SO_PASSCRED, "SO_PASSCRED" },
};
#define NL_NOPTS ((int)(sizeof(nl_opts) / sizeof(nl_opts[0])))

/* A netlink socket's own state (tree_sk.fam) */
struct sk_nl {
	unsigned int portid;	/* 0: not bound */
	int connected;		/* NETLINK_CONNECTED */
	unsigned int dst_portid, dst_group;
	unsigned int opts;	/* a bit per nl_opts[] */
	int ngroups;
	unsigned int *groups;	/* the multicast groups, from 1, ascending */
	unsigned int glen;	/* no group, but a membership list of glen bytes (groups left) */
};

static const char *const protos[] = {
	[NETLINK_ROUTE] = "ROUTE", [NETLINK_USERSOCK] = "USERSOCK", [NETLINK_FIREWALL] = "FIREWALL",
	[NETLINK_SOCK_DIAG] = "SOCK_DIAG", [NETLINK_NFLOG] = "NFLOG", [NETLINK_XFRM] = "XFRM",
	[NETLINK_SELINUX] = "SELINUX", [NETLINK_ISCSI] = "ISCSI", [NETLINK_AUDIT] = "AUDIT",
	[NETLINK_FIB_LOOKUP] = "FIB_LOOKUP", [NETLINK_CONNECTOR] = "CONNECTOR",
	[NETLINK_NETFILTER] = "NETFILTER", [NETLINK_IP6_FW] = "IP6_FW",
	[NETLINK_DNRTMSG] = "DNRTMSG", [NETLINK_KOBJECT_UEVENT] = "KOBJECT_UEVENT",
	[NETLINK_GENERIC] = "GENERIC", [NETLINK_SCSITRANSPORT] = "SCSITRANSPORT",
	[NETLINK_ECRYPTFS] = "ECRYPTFS", [NETLINK_RDMA] = "RDMA", [NETLINK_CRYPTO] = "CRYPTO",
};

static const char *proto_name(int p)
{
	return p >= 0 && p < (int)(sizeof(protos) / sizeof(protos[0])) && protos[p] ? protos[p] : "?";
}

struct diag_find {
	unsigned long ino;
	int found;
	struct netlink_diag_msg m;
	unsigned int flags;
};

static void diag_cb(void *msg, size_t len, void *arg)
{
	struct nlattr *tb[NETLINK_DIAG_MAX + 1];
	struct netlink_diag_msg *m = msg;
	struct diag_find *d = arg;

	if (len < NLMSG_ALIGN(sizeof(*m)) || m->ndiag_ino != d->ino)
		return;
	d->found = 1;
	d->m = *m;
	nla_parse((char *)m + NLMSG_ALIGN(sizeof(*m)), len - NLMSG_ALIGN(sizeof(*m)), tb,
		  NETLINK_DIAG_MAX);
	if (tb[NETLINK_DIAG_FLAGS] && NLA_LEN(tb[NETLINK_DIAG_FLAGS]) >= sizeof(uint32_t))
		memcpy(&d->flags, NLA_DATA(tb[NETLINK_DIAG_FLAGS]), sizeof(uint32_t));
}

static void nl_free(struct sk_nl *n)
{
	if (n) {
		free(n->groups);
		free(n);
	}
}

static int nl_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	static uint32_t mask[NL_MAX_GROUPS / 32];
	struct netlink_diag_req req = {
		.sdiag_family = AF_NETLINK,
		.sdiag_protocol = s->proto,
		.ndiag_show = NDIAG_SHOW_FLAGS,
	};
	struct diag_find d = { .ino = s->ino };
	struct sockaddr_nl nl;
	struct pollfd pf = { .fd = sfd, .events = POLLIN };
	const char *pn = proto_name(s->proto);
	struct sk_nl *n;
	socklen_t l;
	int i, v;

	(void)c;
	if (s->type != SOCK_RAW && s->type != SOCK_DGRAM)
		return fd_refuse(p, "%s: netlink sockets of type %d are not supported", p->link, s->type);
	if (s->proto < 0 || s->proto > 255)
		return fd_refuse(p, "%s: netlink protocol %d is not supported", p->link, s->proto);
	l = sizeof(nl);
	if (getsockname(sfd, (struct sockaddr *)&nl, &l) || l < sizeof(nl)) {
		pr_perror("pid %d fd %d: %s: getsockname", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	/* bound sockets (and those in groups) are in netlink_diag's lists */
	if (sk_diag_dump(&req, sizeof(req), diag_cb, &d)) {
		pr_perror("pid %d fd %d: %s: sock_diag (netlink_diag) of netlink %s sockets", p->pid,
			  p->fd, p->link, pn);
		return FD_FAILED;
	}
	if (nl.nl_pid && !d.found) {
		pr_err("pid %d fd %d: %s: sock_diag (netlink_diag) does not list this netlink %s socket bound to port id %u",
		       p->pid, p->fd, p->link, pn, nl.nl_pid);
		return FD_FAILED;
	}
	if (d.found && (d.flags & NDIAG_FLAG_CB_RUNNING))
		return fd_refuse(p, "%s: netlink %s socket (port id %u): a dump request in progress (NLM_F_DUMP, the rest of the kernel's answer not yet read) is not supported",
				 p->link, pn, nl.nl_pid);
	if (poll(&pf, 1, 0) < 0) {
		pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	if (pf.revents & POLLERR)
		return fd_refuse(p, "%s: netlink %s socket (port id %u): a pending error (SO_ERROR: ENOBUFS after messages it lost) is not supported",
				 p->link, pn, nl.nl_pid);
	if (pf.revents & POLLIN) {
		struct nlmsghdr h;
		ssize_t k;

		memset(&h, 0, sizeof(h));
		k = recv(sfd, &h, sizeof(h), MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
		return fd_refuse(p, "%s: netlink %s socket (port id %u): messages queued and not yet read (the first: %zd bytes, type %u) are not supported: only the kernel could queue them again as it sent them (docs/sockets.md)",
				 p->link, pn, nl.nl_pid, k, k >= (ssize_t)sizeof(h) ? h.nlmsg_type : 0);
	}
	if (d.found && d.m.ndiag_state == NETLINK_CONNECTED && d.m.ndiag_dst_group > 32)
		return fd_refuse(p, "%s: netlink %s socket connected to group %u (above 32) is not supported",
				 p->link, pn, d.m.ndiag_dst_group);
	n = calloc(1, sizeof(*n));
	if (!n) {
		pr_err("out of memory");
		return FD_FAILED;
	}
	n->portid = nl.nl_pid;
	if (d.found && d.m.ndiag_state == NETLINK_CONNECTED) {
		n->connected = 1;
		n->dst_portid = d.m.ndiag_dst_portid;
		n->dst_group = d.m.ndiag_dst_group;
	}
	for (i = 0; i < NL_NOPTS; i++) {
		if (sk_getint(sfd, nl_opts[i].level, nl_opts[i].opt, &v)) {
			/*
			 * before 6.2 getsockopt does not read NETLINK_LISTEN_ALL_NSID:
			 * netlink_diag's flags show it for a socket bound or in a
			 * group (one that is neither receives no broadcast)
			 */
			if (errno == ENOPROTOOPT && nl_opts[i].opt == NETLINK_LISTEN_ALL_NSID &&
			    nl_opts[i].level == SOL_NETLINK && (d.flags & NDIAG_FLAG_LISTEN_ALL_NSID))
				n->opts |= 1U << i;
			if (errno == ENOPROTOOPT)
				continue;	/* not this kernel's */
			pr_perror("pid %d fd %d: %s: getsockopt %s", p->pid, p->fd, p->link, nl_opts[i].name);
			nl_free(n);
			return FD_FAILED;
		}
		if (v)
			n->opts |= 1U << i;
	}
	l = sizeof(mask);
	memset(mask, 0, sizeof(mask));
	if (getsockopt(sfd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, mask, &l)) {
		pr_perror("pid %d fd %d: %s: NETLINK_LIST_MEMBERSHIPS", p->pid, p->fd, p->link);
		nl_free(n);
		return FD_FAILED;
	}
	if (l > sizeof(mask)) {
		nl_free(n);
		return fd_refuse(p, "%s: netlink %s socket: multicast groups above %d are not supported",
				 p->link, pn, NL_MAX_GROUPS);
	}
	for (i = 0; i < (int)(l / 4) * 32; i++)
		if (mask[i / 32] & (1U << (i % 32))) {
			n->groups = tree_grow(n->groups, n->ngroups, sizeof(*n->groups));
			n->groups[n->ngroups++] = i + 1;
		}
	/*
	 * groups joined and all left (or only left): the kernel keeps the
	 * socket's group table, NETLINK_LIST_MEMBERSHIPS gives its length,
	 * zeros; never joined, it gives nothing
	 */
	if (!n->ngroups && l)
		n->glen = l;
	s->state = 0;	/* never a TCP state: sk_tcp_will_repair */
	s->fam = n;
	if (sk_opts_dump(p, sfd, s)) {
		s->fam = NULL;
		nl_free(n);
		return FD_FAILED;
	}
	return FD_DESCRIBED;
}

/*
 * The group table of a socket that left every group it joined (@glen
 * bytes of NETLINK_LIST_MEMBERSHIPS, zeros), with no group joined even for
 * a moment: NETLINK_DROP_MEMBERSHIP allocates the table (as for every
 * membership change) before it checks the group, and group 0 is refused
 * (EINVAL) without leaving anything or calling the protocol's unbind.
 * Then the list's length is checked.  0, or -1 (printed).
 */
static int nl_group_table(int fd, unsigned int glen, const char *what)
{
	unsigned int mask[NL_MAX_GROUPS / 32];
	socklen_t l = sizeof(mask);
	int g = 0;

	if (!setsockopt(fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, &g, sizeof(g)) || errno != EINVAL) {
		pr_perror("%s: NETLINK_DROP_MEMBERSHIP of group 0, for the group table of a socket that left its groups",
			  what);
		return -1;
	}
	if (getsockopt(fd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, mask, &l)) {
		pr_perror("%s: NETLINK_LIST_MEMBERSHIPS", what);
		return -1;
	}
	if (l != glen) {
		pr_err("%s: the socket had left its multicast groups, its membership list %u bytes long; made again it is %u bytes (the protocol's groups changed since the dump)",
		       what, glen, (unsigned int)l);
		return -1;
	}
	return 0;
}

static int nl_sk_make(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	const struct sk_nl *n = s->fam;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	char what[128];
	int fd, k, on = 1;

	sk_what(s, what, sizeof(what));
	if (!n) {
		pr_err("%s: no sknl record", what);
		return -1;
	}
	fd = r->fds[i] = socket(AF_NETLINK, s->type | SOCK_CLOEXEC, s->proto);
	if (fd < 0) {
		pr_perror("%s: socket(AF_NETLINK, %d, %s)", what, s->type, proto_name(s->proto));
		return -1;
	}
	/* the filter and the options before anything can be received */
	if (sk_xopts_restore(fd, s, P_AFTER, what))
		return -1;
	for (k = 0; k < NL_NOPTS; k++)
		if ((n->opts & (1U << k)) &&
		    setsockopt(fd, nl_opts[k].level, nl_opts[k].opt, &on, sizeof(on))) {
			pr_perror("%s: cannot set %s", what, nl_opts[k].name);
			return -1;
		}
	if (n->portid) {
		nl.nl_pid = n->portid;
		if (bind(fd, (struct sockaddr *)&nl, sizeof(nl))) {
			pr_perror("%s: cannot bind to port id %u%s", what, n->portid,
				  errno == EADDRINUSE ? " (another netlink socket of the protocol holds it)" : "");
			return -1;
		}
	}
	for (k = 0; k < n->ngroups; k++) {
		int g = n->groups[k];

		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g))) {
			pr_perror("%s: cannot join multicast group %d (NETLINK_ADD_MEMBERSHIP)", what, g);
			return -1;
		}
	}
	if (n->glen && nl_group_table(fd, n->glen, what))
		return -1;
	if (n->connected) {
		nl.nl_pid = n->dst_portid;
		nl.nl_groups = n->dst_group ? 1U << (n->dst_group - 1) : 0;
		if (connect(fd, (struct sockaddr *)&nl, sizeof(nl))) {
			pr_perror("%s: cannot connect to port id %u group %u", what, n->dst_portid,
				  n->dst_group);
			return -1;
		}
	}
	return 0;
}

static void nl_sk_show(const struct tree_sk *s, char *out, size_t size)
{
	const struct sk_nl *n = s->fam;
	size_t o = strlen(out);
	int k;

	if (!n)
		return;
	o += snprintf(out + o, size - o, " %s", proto_name(s->proto));
	if (o < size)
		o += snprintf(out + o, size - o, n->portid ? " port id %u" : " not bound", n->portid);
	for (k = 0; k < n->ngroups && o < size; k++)
		o += snprintf(out + o, size - o, "%s%u", k ? "," : " groups ", n->groups[k]);
	if (n->glen && o < size)
		o += snprintf(out + o, size - o, " groups left");
	if (n->connected && o < size)
		o += snprintf(out + o, size - o, " -> port id %u group %u", n->dst_portid, n->dst_group);
	for (k = 0; k < NL_NOPTS && o < size; k++)
		if (n->opts & (1U << k))
			o += snprintf(out + o, size - o, " %s=1", nl_opts[k].name);
}

const struct sk_family_ops nl_sk_ops = {
	.family = AF_NETLINK,
	.dump = nl_sk_dump,
	.make = nl_sk_make,
	.show = nl_sk_show,
};

/*
 * ---- the tree file: "sknl ino= portid= connected= dst= dstgroup= opts= groups=
 * [glen=]" (glen: groups left, the membership list's length; only then) ----
 */

static void nl_records_write(FILE *f, const struct tree *t)
{
	int i, k;

	for (i = 0; i < t->nsks; i++) {
		const struct tree_sk *s = &t->sks[i];
		const struct sk_nl *n = s->fam;

		if (s->family != AF_NETLINK || !n)
			continue;
		fprintf(f, "sknl ino=%lu portid=%u connected=%d dst=%u dstgroup=%u opts=0x%x groups=",
			s->ino, n->portid, n->connected, n->dst_portid, n->dst_group, n->opts);
		if (!n->ngroups)
			fputc('-', f);
		for (k = 0; k < n->ngroups; k++)
			fprintf(f, "%s%u", k ? "," : "", n->groups[k]);
		if (n->glen)
			fprintf(f, " glen=%u", n->glen);
		fputc('\n', f);
	}
}

static const char *nl_record_read(struct tree *t, struct rec *r)
{
	struct tree_sk *s = NULL;
	struct sk_nl *n;
	const char *g;
	long long ino;

	if (!REC_NUM(r, "ino", 1, LLONG_MAX, ino))
		s = tree_sk_find(t, ino);
	if (!s || s->family != AF_NETLINK || s->fam)
		return "sknl record without its netlink sk record (or a second one)";
	n = calloc(1, sizeof(*n));
	if (!n)
		return "out of memory";
	s->fam = n;
	if (REC_NUM(r, "portid", 0, UINT32_MAX, n->portid) ||
	    REC_NUM(r, "connected", 0, 1, n->connected) ||
	    REC_NUM(r, "dst", 0, UINT32_MAX, n->dst_portid) ||
	    REC_NUM(r, "dstgroup", 0, 32, n->dst_group) ||
	    REC_NUM(r, "opts", 0, (1LL << NL_NOPTS) - 1, n->opts) || !(g = rec_val(r, "groups")))
		return "bad sknl record";
	/* optional: groups left (no group then) */
	if (rec_has(r, "glen") && (REC_NUM(r, "glen", 4, NL_MAX_GROUPS / 8, n->glen) ||
				   (n->glen & 3) || strcmp(g, "-")))
		return "bad sknl record glen";
	if (strcmp(g, "-")) {
		while (*g) {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(g, &end, 10);
			if (errno || end == g || v < 1 || v > NL_MAX_GROUPS ||
			    (n->ngroups && v <= n->groups[n->ngroups - 1]) || (*end && *end != ','))
				return "bad sknl record groups";
			n->groups = tree_grow(n->groups, n->ngroups, sizeof(*n->groups));
			n->groups[n->ngroups++] = v;
			g = *end ? end + 1 : end;
		}
	}
	return NULL;
}

const struct tree_record nl_records[] = {
	{ "sknl", nl_record_read, nl_records_write, NULL },	/* after every sk record */
	{ NULL, NULL, NULL, NULL }
};
