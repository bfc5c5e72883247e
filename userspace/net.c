// SPDX-License-Identifier: GPL-2.0
/*
 * The network namespace kind (ns.h): the tree's network devices, their
 * addresses, its routes, its network sysctls and its nftables ruleset.
 *
 * dump (imgcr, the tree frozen): a rtnetlink socket made inside the tree's
 * network namespace (netns_socket) lists the devices: the loopback device,
 * and veth devices whose other end is in imgcr's network namespace (a
 * container's usual link to the host), whose other end is then recorded
 * too (name, MAC address, MTU, bridge, addresses).  Every other kind of
 * device is refused, naming it.  Addresses and routes are kept as the
 * kernel's own rtnetlink messages (hex, "netmsg" records), less what the
 * kernel makes itself (routes of protocol "kernel", the local table,
 * cached routes); the sysctls under net/ (a child in the namespace reads
 * them: /proc/sys/net is the reader's namespace); "nft list ruleset" run
 * in the namespace, if it has rules, into DIR/net-nft.img.
 *
 * restore: outside() (imgcr, in its own namespace) makes each veth pair
 * with the inner end already in the ns-root's namespace, under its index,
 * name, MAC and MTU, and gives the outer end its name, MAC, MTU, bridge,
 * addresses and state.  inside() (the ns-root, in the new namespace)
 * writes the sysctls, brings the devices up as they were, adds the
 * addresses (without duplicate address detection: they were in use) and
 * the routes, and loads the ruleset with nft.
 *
 * Not restored: the outer end's interface index (the host's indexes are
 * not ours to choose), device statistics, neighbour (ARP) caches.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "commands.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "sockets.h"
#include "tree.h"

#define NET_MAX_DEVS	64
#define NET_MAX_MSGS	4096
#define NET_MAX_SYSCTLS	8192
#define NET_MSG_MAX	4096		/* one address or route message */

struct netdev {
	int index;
	char name[IFNAMSIZ];
	char kind[16];		/* "lo", "veth" */
	unsigned int flags;	/* IFF_* (up) */
	unsigned int mtu;
	unsigned char mac[32];
	int maclen;
	/* veth: the outer end, in imgcr's namespace */
	int peer_index;		/* at dump; at restore, the new one */
	char peer[IFNAMSIZ], peer_master[IFNAMSIZ];
	unsigned int peer_flags, peer_mtu;
	unsigned char peer_mac[32];
	int peer_maclen;
};

/* an address or route message as the kernel gave it */
struct netmsg {
	int type;		/* RTM_NEWADDR, RTM_NEWROUTE */
	int outer;		/* an address of a veth's outer end (its netdev index) */
	size_t len;
	unsigned char *data;	/* the message payload (ifaddrmsg/rtmsg + attributes) */
};

struct netsysctl {
	char *name;		/* below /proc/sys/net/ */
	char *value;
};

struct net_ns {
	int ndevs, nmsgs, nsysctls;
	struct netdev *devs;
	struct netmsg *msgs;
	struct netsysctl *sysctls;
	int nft;		/* DIR/net-nft.img holds a ruleset */
};

/* ---- netlink ---- */

static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		pr_perror("cannot open a rtnetlink socket");
	return fd;
}

/* Append attribute @type to @h (room for @max bytes): its payload. */
static void *nla_put(struct nlmsghdr *h, size_t max, int type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	if (NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(NLA_HDRLEN + len) > max) {
		pr_err("netlink message too long");
		exit(1);
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return (char *)a + NLA_HDRLEN;
}

static struct nlattr *nla_nest(struct nlmsghdr *h, size_t max, int type)
{
	return (struct nlattr *)((char *)nla_put(h, max, type | NLA_F_NESTED, NULL, 0) - NLA_HDRLEN);
}

static void nla_nest_end(struct nlmsghdr *h, struct nlattr *a)
{
	a->nla_len = (char *)h + h->nlmsg_len - (char *)a;
}

void nla_parse(const void *p, size_t len, struct nlattr **tb, int max)
{
	const struct nlattr *a = p;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type <= max)
			tb[type] = (struct nlattr *)a;
		len -= (size_t)NLA_ALIGN(a->nla_len) < len ? (size_t)NLA_ALIGN(a->nla_len) : len;
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}


/*
 * Send @h; for a dump, call @cb on each answer; else wait for the ack.
 * 0, or -1 with errno (the kernel's error).
 */
static int nl_talk(int fd, struct nlmsghdr *h, int (*cb)(struct nlmsghdr *, void *), void *arg)
{
	static unsigned int seq;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[32768];
	ssize_t n;

	h->nlmsg_seq = ++seq;
	h->nlmsg_flags |= NLM_F_REQUEST | (cb ? 0 : NLM_F_ACK);
	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	for (;;) {
		struct nlmsghdr *r;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return -1;
		}
		for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_seq != h->nlmsg_seq)
				continue;
			if (r->nlmsg_type == NLMSG_DONE)
				return 0;
			if (r->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(r);

				if (!e->error)
					return 0;
				errno = -e->error;
				return -1;
			}
			if (cb && cb(r, arg))
				return -1;
		}
	}
}

/* A GET that is not a dump: one answer (or an error), no ack. */
static int nl_get(int fd, struct nlmsghdr *h, int (*cb)(struct nlmsghdr *, void *), void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[32768];
	struct nlmsghdr *r;
	ssize_t n;

	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = 0x7fffffff;
	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
		if (r->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(r);

			errno = -e->error;
			return e->error ? -1 : 0;
		}
		cb(r, arg);
	}
	return 0;
}

/* A socket of @domain made in @pid's network namespace (by a child). */
static int netns_socket(pid_t pid, int domain, int type, int proto)
{
	int sv[2], fd = -1, st;
	char path[64], byte = 0;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		pr_perror("cannot make a socket pair");
		return -1;
	}
	child = fork();
	if (child < 0) {
		pr_perror("cannot fork");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!child) {
		int ns, s;

		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		ns = open(path, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWNET)) {
			pr_perror("pid %d: cannot enter its network namespace", pid);
			_exit(1);
		}
		s = socket(domain, type | SOCK_CLOEXEC, proto);
		if (s < 0) {
			pr_perror("pid %d: cannot make a socket in its network namespace", pid);
			_exit(1);
		}
		_exit(fd_send(sv[1], &byte, 1, s) ? 1 : 0);
	}
	close(sv[1]);
	if (wait_child(child, &st))
		st = -1;
	if (WIFEXITED(st) && !WEXITSTATUS(st) && fd_recv(sv[0], &byte, 1, &fd) != 1 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	close(sv[0]);
	if (fd < 0)
		pr_err("pid %d: no socket from its network namespace", pid);
	return fd;
}

/* ---- dump ---- */

struct dump_arg {
	struct ns_ctx *c;
	struct net_ns *ns;
	int host_nsid;		/* imgcr's namespace as the tree's namespace numbers it */
	int fail;
};

struct link_info {
	int index, link, link_nsid, master;
	unsigned int flags, mtu, type;
	char name[IFNAMSIZ], kind[16];
	unsigned char mac[32];
	int maclen;
};

static void link_parse(struct nlmsghdr *h, struct link_info *l)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	struct nlattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];

	memset(l, 0, sizeof(*l));
	l->link_nsid = -1;
	l->index = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	l->type = ifi->ifi_type;
	nla_parse(IFLA_RTA(ifi), h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)), tb, IFLA_MAX);
	if (tb[IFLA_IFNAME])
		snprintf(l->name, sizeof(l->name), "%.*s", (int)NLA_LEN(tb[IFLA_IFNAME]),
			 (char *)NLA_DATA(tb[IFLA_IFNAME]));
	if (tb[IFLA_MTU])
		memcpy(&l->mtu, NLA_DATA(tb[IFLA_MTU]), 4);
	if (tb[IFLA_LINK])
		memcpy(&l->link, NLA_DATA(tb[IFLA_LINK]), 4);
	if (tb[IFLA_LINK_NETNSID])
		memcpy(&l->link_nsid, NLA_DATA(tb[IFLA_LINK_NETNSID]), 4);
	if (tb[IFLA_MASTER])
		memcpy(&l->master, NLA_DATA(tb[IFLA_MASTER]), 4);
	if (tb[IFLA_ADDRESS] && NLA_LEN(tb[IFLA_ADDRESS]) <= (int)sizeof(l->mac)) {
		l->maclen = NLA_LEN(tb[IFLA_ADDRESS]);
		memcpy(l->mac, NLA_DATA(tb[IFLA_ADDRESS]), l->maclen);
	}
	if (tb[IFLA_LINKINFO]) {
		nla_parse(NLA_DATA(tb[IFLA_LINKINFO]), NLA_LEN(tb[IFLA_LINKINFO]), li, IFLA_INFO_MAX);
		if (li[IFLA_INFO_KIND])
			snprintf(l->kind, sizeof(l->kind), "%.*s", (int)NLA_LEN(li[IFLA_INFO_KIND]),
				 (char *)NLA_DATA(li[IFLA_INFO_KIND]));
	}
}

static int get_link(int fd, int index, struct link_info *l);

static int link_cb(struct nlmsghdr *h, void *arg)
{
	struct dump_arg *a = arg;
	struct link_info l, p;
	struct netdev *d;
	int host;

	if (h->nlmsg_type != RTM_NEWLINK)
		return 0;
	link_parse(h, &l);
	if (a->ns->ndevs == NET_MAX_DEVS) {
		pr_err("pid %d: more than %d network devices", a->c->root, NET_MAX_DEVS);
		return -1;
	}
	if (l.type == ARPHRD_LOOPBACK) {
		snprintf(l.kind, sizeof(l.kind), "lo");
	} else if (strcmp(l.kind, "veth")) {
		pr_err("pid %d: network device %d (%s): type %s is not supported (only lo and veth)",
		       a->c->root, l.index, l.name, l.kind[0] ? l.kind : "?");
		return -1;
	} else if (l.link_nsid < 0 || l.link_nsid != a->host_nsid) {
		pr_err("pid %d: network device %d (%s): a veth whose other end is not in imgcr's network namespace: not supported",
		       a->c->root, l.index, l.name);
		return -1;
	}
	a->ns->devs = xrealloc(a->ns->devs, (a->ns->ndevs + 1) * sizeof(*a->ns->devs));
	d = &a->ns->devs[a->ns->ndevs++];
	memset(d, 0, sizeof(*d));
	d->index = l.index;
	snprintf(d->name, sizeof(d->name), "%s", l.name);
	snprintf(d->kind, sizeof(d->kind), "%s", l.kind);
	d->flags = l.flags & IFF_UP;
	d->mtu = l.mtu;
	d->maclen = l.maclen;
	memcpy(d->mac, l.mac, l.maclen);
	if (strcmp(l.kind, "veth"))
		return 0;
	host = nl_open();
	if (host < 0 || get_link(host, l.link, &p)) {
		pr_perror("pid %d: network device %s: cannot read its other end (index %d)",
			  a->c->root, l.name, l.link);
		if (host >= 0)
			close(host);
		return -1;
	}
	d->peer_index = l.link;
	snprintf(d->peer, sizeof(d->peer), "%s", p.name);
	d->peer_flags = p.flags & IFF_UP;
	d->peer_mtu = p.mtu;
	d->peer_maclen = p.maclen;
	memcpy(d->peer_mac, p.mac, p.maclen);
	if (p.master) {
		struct link_info m;

		if (get_link(host, p.master, &m)) {
			pr_perror("network device %s: cannot read its bridge", p.name);
			close(host);
			return -1;
		}
		snprintf(d->peer_master, sizeof(d->peer_master), "%s", m.name);
	}
	close(host);
	return 0;
}

static int one_link_cb(struct nlmsghdr *h, void *arg)
{
	if (h->nlmsg_type == RTM_NEWLINK)
		link_parse(h, arg);
	return 0;
}

static int get_link(int fd, int index, struct link_info *l)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg ifi;
	} req = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
			 .nlmsg_type = RTM_GETLINK },
		  .ifi = { .ifi_index = index } };

	memset(l, 0, sizeof(*l));
	l->index = -1;
	if (nl_get(fd, &req.h, one_link_cb, l))
		return -1;
	return l->index == index ? 0 : -1;
}

static void msg_add(struct net_ns *ns, int type, int outer, const void *p, size_t len)
{
	struct netmsg *m;

	ns->msgs = xrealloc(ns->msgs, (ns->nmsgs + 1) * sizeof(*ns->msgs));
	m = &ns->msgs[ns->nmsgs++];
	m->type = type;
	m->outer = outer;
	m->len = len;
	m->data = xrealloc(NULL, len);
	memcpy(m->data, p, len);
}

struct addr_arg {
	struct dump_arg *a;
	int only;		/* an outer end's index: its addresses only */
	int outer;
};

static int addr_cb(struct nlmsghdr *h, void *arg)
{
	struct addr_arg *x = arg;
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	size_t len = h->nlmsg_len - NLMSG_LENGTH(0);

	if (h->nlmsg_type != RTM_NEWADDR || (x->only && (int)ifa->ifa_index != x->only))
		return 0;
	if (x->a->ns->nmsgs == NET_MAX_MSGS || len > NET_MSG_MAX) {
		pr_err("pid %d: too many or too long network addresses", x->a->c->root);
		return -1;
	}
	msg_add(x->a->ns, RTM_NEWADDR, x->outer, ifa, len);
	return 0;
}

static int route_cb(struct nlmsghdr *h, void *arg)
{
	struct dump_arg *a = arg;
	struct rtmsg *rt = NLMSG_DATA(h);
	size_t len = h->nlmsg_len - NLMSG_LENGTH(0);
	struct nlattr *tb[RTA_MAX + 1];

	if (h->nlmsg_type != RTM_NEWROUTE)
		return 0;
	/* what the kernel makes itself: from addresses, the local table, caches */
	if (rt->rtm_protocol == RTPROT_KERNEL || rt->rtm_table == RT_TABLE_LOCAL ||
	    (rt->rtm_flags & RTM_F_CLONED))
		return 0;
	nla_parse(RTM_RTA(rt), len - NLMSG_ALIGN(sizeof(*rt)), tb, RTA_MAX);
	if (tb[RTA_TABLE] && *(unsigned int *)NLA_DATA(tb[RTA_TABLE]) == RT_TABLE_LOCAL)
		return 0;
	if (a->ns->nmsgs == NET_MAX_MSGS || len > NET_MSG_MAX) {
		pr_err("pid %d: too many or too long routes", a->c->root);
		return -1;
	}
	msg_add(a->ns, RTM_NEWROUTE, 0, rt, len);
	return 0;
}

/*
 * A route of imgcr's namespace through a veth's outer end (routed CNIs:
 * "ip route add 10.1.2.3/32 dev caliXXX"): not restored with the veth,
 * so refused, naming it.  Those the kernel made from addresses are fine.
 */
struct host_route_arg {
	const struct netdev *d;
	pid_t root;
};

static int host_route_cb(struct nlmsghdr *h, void *arg)
{
	struct host_route_arg *x = arg;
	struct rtmsg *rt = NLMSG_DATA(h);
	size_t len = h->nlmsg_len - NLMSG_LENGTH(0);
	struct nlattr *tb[RTA_MAX + 1];
	char dst[INET6_ADDRSTRLEN] = "default";

	if (h->nlmsg_type != RTM_NEWROUTE || rt->rtm_protocol == RTPROT_KERNEL ||
	    rt->rtm_table == RT_TABLE_LOCAL || (rt->rtm_flags & RTM_F_CLONED))
		return 0;
	nla_parse(RTM_RTA(rt), len - NLMSG_ALIGN(sizeof(*rt)), tb, RTA_MAX);
	if (!tb[RTA_OIF] || *(int *)NLA_DATA(tb[RTA_OIF]) != x->d->peer_index)
		return 0;
	if (tb[RTA_DST])
		inet_ntop(rt->rtm_family, NLA_DATA(tb[RTA_DST]), dst, sizeof(dst));
	pr_err("pid %d: network device %s (the outer end of its %s) has a route of the host to %s/%u (protocol %u), which a restore would not make again: not supported",
	       x->root, x->d->peer, x->d->name, dst, rt->rtm_dst_len, rt->rtm_protocol);
	errno = 0;
	return -1;
}

static int dump_family(int fd, int type, int family, int (*cb)(struct nlmsghdr *, void *), void *arg)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg rt;	/* as large as ifaddrmsg and rtgenmsg */
	} req = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)), .nlmsg_type = type,
			 .nlmsg_flags = NLM_F_DUMP },
		  .rt = { .rtm_family = family } };

	return nl_talk(fd, &req.h, cb, arg);
}

static int nsid_cb(struct nlmsghdr *h, void *arg)
{
	struct rtgenmsg *g = NLMSG_DATA(h);
	struct nlattr *tb[NETNSA_MAX + 1];

	if (h->nlmsg_type != RTM_NEWNSID)
		return 0;
	nla_parse((char *)g + NLMSG_ALIGN(sizeof(*g)), h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*g))),
		  tb, NETNSA_MAX);
	if (tb[NETNSA_NSID])
		memcpy(arg, NLA_DATA(tb[NETNSA_NSID]), 4);
	return 0;
}

/* imgcr's namespace as numbered in the namespace of @fd (-1: none). */
static int host_nsid(int fd)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
		char attrs[64];
	} req = { .h = { .nlmsg_len = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct rtgenmsg))),
			 .nlmsg_type = RTM_GETNSID },
		  .g = { .rtgen_family = AF_UNSPEC } };
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), id = -1;
	unsigned int ufd;

	if (self < 0)
		return -1;
	ufd = self;
	nla_put(&req.h, sizeof(req), NETNSA_FD, &ufd, 4);
	nl_get(fd, &req.h, nsid_cb, &id);
	close(self);
	return id;
}

/* The sysctls below /proc/sys/net, read in the namespace (a child) into a pipe. */

static void sysctl_dir(FILE *out, const char *dir)
{
	char path[PATH_MAX], val[4096];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	ssize_t n;
	int fd;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			sysctl_dir(out, path);
			continue;
		}
		/* only what can be written back; unreadable ones (stable_secret unset) skipped */
		if (!(st.st_mode & 0200) || !(st.st_mode & 0444))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, val, sizeof(val) - 1);
		close(fd);
		if (n <= 0)
			continue;
		val[n] = 0;
		if (val[n - 1] == '\n')
			val[n - 1] = 0;
		fprintf(out, "%s\t", path + strlen("/proc/sys/net/"));
		for (n = 0; val[n]; n++)
			fputc(val[n] == '\n' || val[n] == '\t' ? ' ' : val[n], out);
		fputc('\n', out);
	}
	closedir(d);
}

static int sysctl_read(void *arg)
{
	int *wfd = arg;
	FILE *out = fdopen(*wfd, "w");

	if (!out)
		return -1;
	/* devices' conf, the core and unix tables, the ipv4/ipv6 globals */
	sysctl_dir(out, "/proc/sys/net");
	return fclose(out) ? -1 : 0;
}

/* sysctls whose values are this host's, not the namespace's (or that refuse writes) */
static int sysctl_skip(const char *name)
{
	static const char *const skip[] = {
		"ipv4/route/flush", "ipv6/route/flush", "ipv4/neigh/", "ipv6/neigh/",
		"core/", "netfilter/nf_conntrack_", "nf_conntrack_max", "ipv4/tcp_fastopen_key",
	};
	size_t i;

	if (!strncmp(name, "core/somaxconn", 14))
		return 0;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strncmp(name, skip[i], strlen(skip[i])))
			return 1;
	return 0;
}

static int dump_sysctls(struct ns_ctx *c, struct net_ns *ns)
{
	int p[2], st = 0, wst;
	char *line = NULL, *tab;
	size_t len = 0;
	pid_t child;
	FILE *in;

	if (pipe2(p, O_CLOEXEC)) {
		pr_perror("cannot make a pipe");
		return -1;
	}
	child = fork();
	if (child < 0) {
		pr_perror("cannot fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!child) {
		close(p[0]);
		_exit(ns_run_in(c->root, NS_BIT(NS_NET), sysctl_read, &p[1]) ? 1 : 0);
	}
	close(p[1]);
	in = fdopen(p[0], "r");
	while (in && getline(&line, &len, in) > 0) {
		line[strcspn(line, "\n")] = 0;
		tab = strchr(line, '\t');
		if (!tab || sysctl_skip(line))
			continue;
		*tab = 0;
		if (ns->nsysctls == NET_MAX_SYSCTLS) {
			pr_err("pid %d: more than %d network sysctls", c->root, NET_MAX_SYSCTLS);
			st = -1;
			break;
		}
		ns->sysctls = xrealloc(ns->sysctls, (ns->nsysctls + 1) * sizeof(*ns->sysctls));
		ns->sysctls[ns->nsysctls].name = xrealloc(NULL, strlen(line) + 1);
		strcpy(ns->sysctls[ns->nsysctls].name, line);
		ns->sysctls[ns->nsysctls].value = xrealloc(NULL, strlen(tab + 1) + 1);
		strcpy(ns->sysctls[ns->nsysctls++].value, tab + 1);
	}
	free(line);
	if (in)
		fclose(in);
	else
		close(p[0]);
	if (wait_child(child, &wst) || !WIFEXITED(wst) || WEXITSTATUS(wst) || !ns->nsysctls) {
		pr_err("pid %d: cannot read its network sysctls", c->root);
		return -1;
	}
	return st;
}

/* "nft list ruleset" in the namespace into DIR/net-nft.img: 1 if it has rules */
struct nft_arg {
	int fd;
};

/*
 * nft @a1 @a2 (found by nft_path()), its stdin @in and stdout @out, its
 * stderr imgcr's, no other fd: its exit status (127: no nft), or -1.
 */
static int run_nft(int in, int out, const char *a1, const char *a2)
{
	char path[PATH_MAX];
	pid_t child;
	int st;

	if (nft_path(path, sizeof(path)))
		return 127;
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		if (dup2(in, 0) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
		    syscall(SYS_close_range, 3, ~0U, 0))
			_exit(127);
		clone_mask_restore();
		execl(path, "nft", a1, a2, (char *)NULL);
		_exit(127);
	}
	if (wait_child(child, &st) || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int nft_list(void *arg)
{
	struct nft_arg *a = arg;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), r;

	if (null < 0)
		return -1;
	r = run_nft(null, a->fd, "list", "ruleset");
	close(null);
	return r ? -1 : 0;
}

static int dump_nft(struct ns_ctx *c, struct net_ns *ns)
{
	struct nft_arg a;
	struct stat st;
	int r;

	a.fd = img_create_at(c->dirfd, "net-nft.img", 0600);
	if (a.fd < 0) {
		pr_perror("cannot create net-nft.img");
		return -1;
	}
	r = ns_run_in(c->root, NS_BIT(NS_NET), nft_list, &a);
	if (fstat(a.fd, &st))
		st.st_size = 0;
	close(a.fd);
	if (r) {
		/* without nft, a ruleset would go unseen: never dropped silently */
		pr_err("pid %d: cannot list its network namespace's nftables ruleset (nft list ruleset failed, or no nft program: install nftables)",
		       c->root);
		return -1;
	}
	/* an empty ruleset: nothing to restore */
	ns->nft = st.st_size > 0;
	if (!ns->nft)
		unlinkat(c->dirfd, "net-nft.img", 0);
	return 0;
}

static int legacy_iptables(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	/* legacy (x_tables) tables in use show in the namespace's ip_tables_names */
	snprintf(path, sizeof(path), "/proc/%d/net/ip_tables_names", pid);
	f = fopen(path, "re");
	if (f) {
		found = fgets(line, sizeof(line), f) != NULL;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/net/ip6_tables_names", pid);
	f = fopen(path, "re");
	if (f) {
		found |= fgets(line, sizeof(line), f) != NULL;
		fclose(f);
	}
	return found;
}

static void net_ns_free(struct net_ns *ns)
{
	int i;

	if (!ns)
		return;
	for (i = 0; i < ns->nmsgs; i++)
		free(ns->msgs[i].data);
	for (i = 0; i < ns->nsysctls; i++) {
		free(ns->sysctls[i].name);
		free(ns->sysctls[i].value);
	}
	free(ns->msgs);
	free(ns->sysctls);
	free(ns->devs);
	free(ns);
}

static int net_dump(struct ns_ctx *c)
{
	struct net_ns *ns = calloc(1, sizeof(*ns));
	struct dump_arg a = { .c = c, .ns = ns };
	struct addr_arg x = { .a = &a };
	struct host_route_arg hr = { .root = c->root };
	int fd, host, i;

	if (!ns) {
		pr_err("out of memory");
		exit(1);
	}
	if (legacy_iptables(c->root)) {
		pr_err("pid %d: its network namespace has legacy iptables rules (x_tables): not supported (nftables rules are)",
		       c->root);
		goto fail;
	}
	fd = netns_socket(c->root, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (fd < 0)
		goto fail;
	a.host_nsid = host_nsid(fd);
	if (dump_family(fd, RTM_GETLINK, AF_UNSPEC, link_cb, &a) ||
	    dump_family(fd, RTM_GETADDR, AF_UNSPEC, addr_cb, &x) ||
	    dump_family(fd, RTM_GETROUTE, AF_INET, route_cb, &a) ||
	    dump_family(fd, RTM_GETROUTE, AF_INET6, route_cb, &a)) {
		if (errno)
			pr_perror("pid %d: cannot read its network devices, addresses and routes",
				  c->root);
		close(fd);
		goto fail;
	}
	close(fd);
	/* the outer ends' addresses, in imgcr's namespace */
	host = -1;
	for (i = 0; i < ns->ndevs; i++) {
		if (strcmp(ns->devs[i].kind, "veth"))
			continue;
		if (host < 0)
			host = nl_open();
		if (host < 0)
			goto fail;
		x.outer = ns->devs[i].index;
		x.only = ns->devs[i].peer_index;
		hr.d = &ns->devs[i];
		errno = 0;
		if (dump_family(host, RTM_GETADDR, AF_UNSPEC, addr_cb, &x) ||
		    dump_family(host, RTM_GETROUTE, AF_INET, host_route_cb, &hr) ||
		    dump_family(host, RTM_GETROUTE, AF_INET6, host_route_cb, &hr)) {
			if (errno)
				pr_perror("network device %s: cannot read its addresses and routes",
					  ns->devs[i].peer);
			close(host);
			goto fail;
		}
	}
	if (host >= 0)
		close(host);
	if (dump_sysctls(c, ns) || dump_nft(c, ns))
		goto fail;
	ns_tree_get(c->t)->data[NS_NET] = ns;
	return 0;
fail:
	net_ns_free(ns);
	return -1;
}

/* ---- restore ---- */

static struct net_ns *net_of(const struct tree *t)
{
	return t->ns ? t->ns->data[NS_NET] : NULL;
}

#define REQ_MAX	8192

struct nlreq {
	struct nlmsghdr h;
	char buf[REQ_MAX];
};

/* Set @index's flags (IFF_UP) and MTU. */
static int link_set(int fd, int index, unsigned int up, unsigned int mtu, const char *name)
{
	struct nlreq r = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
				  .nlmsg_type = RTM_NEWLINK } };
	struct ifinfomsg *ifi = NLMSG_DATA(&r.h);

	ifi->ifi_index = index;
	ifi->ifi_flags = up ? IFF_UP : 0;
	ifi->ifi_change = IFF_UP;
	if (mtu)
		nla_put(&r.h, sizeof(r), IFLA_MTU, &mtu, 4);
	if (nl_talk(fd, &r.h, NULL, NULL)) {
		pr_perror("network device %s: cannot set its MTU %u and state %s", name, mtu,
			  up ? "up" : "down");
		return -1;
	}
	return 0;
}

/* @name's index in the namespace of netlink socket @fd: > 0, or -1 */
static int if_nametoindex_fd(int fd, const char *name)
{
	struct nlreq r = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
				  .nlmsg_type = RTM_GETLINK } };
	struct link_info l;

	nla_put(&r.h, sizeof(r), IFLA_IFNAME, name, strlen(name) + 1);
	memset(&l, 0, sizeof(l));
	l.index = -1;
	if (nl_get(fd, &r.h, one_link_cb, &l) || strcmp(l.name, name))
		return -1;
	return l.index;
}

static int sysctl_write(const struct netsysctl *s)
{
	char path[PATH_MAX], cur[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/%s", s->name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("network sysctl %s", s->name);
		return -1;
	}
	n = read(fd, cur, sizeof(cur) - 1);
	if (n > 0) {
		cur[n] = 0;
		for (n = 0; cur[n]; n++)
			if (cur[n] == '\t' || cur[n] == '\n')
				cur[n] = cur[n + 1] ? ' ' : 0;
		if (!strcmp(cur, s->value)) {
			close(fd);
			return 0;
		}
	}
	if (pwrite(fd, s->value, strlen(s->value), 0) < 0) {
		pr_perror("network sysctl %s: cannot set it to %s (it is %s)", s->name, s->value,
			  n > 0 ? cur : "?");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * IPv6 duplicate address detection off for device @dev ("all" too) while
 * the addresses are added and the devices brought up: the addresses were
 * in use (a tentative address cannot be bound), and IFA_F_NODAD would be
 * seen in their flags.  The dumped values are written back afterwards.
 * 0, or -1 if the device has no IPv6 (nothing to do).
 */
static void dad_off(const char *dev)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/accept_dad", dev);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "0", 1) != 1)
		pr_pwarn("cannot turn off duplicate address detection on %s", dev);
	close(fd);
}

static int tentative_cb(struct nlmsghdr *h, void *arg)
{
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	struct nlattr *tb[IFA_MAX + 1];
	unsigned int fl = ifa->ifa_flags;

	if (h->nlmsg_type != RTM_NEWADDR)
		return 0;
	nla_parse((char *)ifa + NLMSG_ALIGN(sizeof(*ifa)),
		  h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*ifa))), tb, IFA_MAX);
	if (tb[IFA_FLAGS] && NLA_LEN(tb[IFA_FLAGS]) == 4)
		memcpy(&fl, NLA_DATA(tb[IFA_FLAGS]), 4);
	if (fl & IFA_F_TENTATIVE)
		*(int *)arg = 1;
	return 0;
}

/* The kernel's DAD work (asynchronous, skipped with accept_dad 0) done. */
static int dad_wait(int fd)
{
	int i, tentative = 1;

	for (i = 0; i < 500 && tentative; i++) {
		tentative = 0;
		if (dump_family(fd, RTM_GETADDR, AF_INET6, tentative_cb, &tentative)) {
			pr_perror("cannot list the restored addresses");
			return -1;
		}
		if (tentative)
			usleep(10000);
	}
	if (tentative)
		pr_warn("IPv6 addresses of the restored network namespace still tentative after 5 s");
	return 0;
}

static int dad_back(const struct net_ns *ns, const char *dev)
{
	char name[64];
	int i;

	snprintf(name, sizeof(name), "ipv6/conf/%s/accept_dad", dev);
	for (i = 0; i < ns->nsysctls; i++)
		if (!strcmp(ns->sysctls[i].name, name))
			return sysctl_write(&ns->sysctls[i]);
	return 0;
}

/*
 * A dumped address or route made again (an address replaces one the
 * kernel made, a route must be new); @index, if not 0, the device of an
 * address (an outer end's new index).  0, or -1 (errno).
 */
static int msg_replay(int fd, const struct netmsg *m, int index)
{
	struct nlreq r = { .h = { .nlmsg_type = m->type, .nlmsg_len = NLMSG_LENGTH(m->len),
				  .nlmsg_flags = NLM_F_CREATE | (m->type == RTM_NEWADDR ?
								 NLM_F_REPLACE : NLM_F_EXCL) } };

	memcpy(NLMSG_DATA(&r.h), m->data, m->len);
	if (index)
		((struct ifaddrmsg *)NLMSG_DATA(&r.h))->ifa_index = index;
	return nl_talk(fd, &r.h, NULL, NULL);
}

/* imgcr: each veth pair, its inner end made in the ns-root's namespace */
static int net_outside(struct ns_ctx *c)
{
	struct net_ns *ns = net_of(c->t);
	int fd, i, j;

	if (!ns)
		return 0;
	fd = nl_open();
	if (fd < 0)
		return -1;
	for (i = 0; i < ns->ndevs; i++) {
		struct netdev *d = &ns->devs[i];
		struct nlreq r = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
					  .nlmsg_type = RTM_NEWLINK,
					  .nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL } };
		struct nlattr *li, *data, *peer;
		struct ifinfomsg *pi;
		unsigned int pid = c->root;

		if (strcmp(d->kind, "veth"))
			continue;
		nla_put(&r.h, sizeof(r), IFLA_IFNAME, d->peer, strlen(d->peer) + 1);
		nla_put(&r.h, sizeof(r), IFLA_MTU, &d->peer_mtu, 4);
		if (d->peer_maclen)
			nla_put(&r.h, sizeof(r), IFLA_ADDRESS, d->peer_mac, d->peer_maclen);
		li = nla_nest(&r.h, sizeof(r), IFLA_LINKINFO);
		nla_put(&r.h, sizeof(r), IFLA_INFO_KIND, "veth", 5);
		data = nla_nest(&r.h, sizeof(r), IFLA_INFO_DATA);
		peer = nla_nest(&r.h, sizeof(r), VETH_INFO_PEER);
		/* the peer's ifinfomsg, then its attributes, inside VETH_INFO_PEER */
		pi = (struct ifinfomsg *)((char *)&r.h + NLMSG_ALIGN(r.h.nlmsg_len));
		memset(pi, 0, sizeof(*pi));
		pi->ifi_index = d->index;
		r.h.nlmsg_len = NLMSG_ALIGN(r.h.nlmsg_len) + NLMSG_ALIGN(sizeof(*pi));
		nla_put(&r.h, sizeof(r), IFLA_IFNAME, d->name, strlen(d->name) + 1);
		nla_put(&r.h, sizeof(r), IFLA_MTU, &d->mtu, 4);
		if (d->maclen)
			nla_put(&r.h, sizeof(r), IFLA_ADDRESS, d->mac, d->maclen);
		nla_put(&r.h, sizeof(r), IFLA_NET_NS_PID, &pid, 4);
		nla_nest_end(&r.h, peer);
		nla_nest_end(&r.h, data);
		nla_nest_end(&r.h, li);
		if (nl_talk(fd, &r.h, NULL, NULL)) {
			pr_perror("cannot make the veth pair %s (here) and %s (index %d, in the tree's network namespace)%s",
				  d->peer, d->name, d->index,
				  errno == EEXIST ? ": a device of that name exists here" : "");
			goto fail;
		}
		d->peer_index = if_nametoindex_fd(fd, d->peer);
		if (d->peer_index <= 0) {
			pr_err("network device %s: made but not found", d->peer);
			goto fail;
		}
		if (d->peer_master[0]) {
			struct nlreq m = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
						  .nlmsg_type = RTM_NEWLINK } };
			struct ifinfomsg *mi = NLMSG_DATA(&m.h);
			int br = if_nametoindex_fd(fd, d->peer_master);

			mi->ifi_index = d->peer_index;
			if (br > 0)
				nla_put(&m.h, sizeof(m), IFLA_MASTER, &br, 4);
			if (br <= 0 || nl_talk(fd, &m.h, NULL, NULL)) {
				pr_perror("network device %s: cannot put it in bridge %s", d->peer,
					  d->peer_master);
				goto fail;
			}
		}
		/*
		 * the outer end's addresses as they were (IPv6 ones go through
		 * duplicate address detection again: nothing of the tree binds
		 * them, and the host's "all" setting is not ours to change)
		 */
		for (j = 0; j < ns->nmsgs; j++) {
			if (ns->msgs[j].outer != d->index)
				continue;
			if (msg_replay(fd, &ns->msgs[j], d->peer_index)) {
				pr_perror("network device %s: cannot give it its address", d->peer);
				goto fail;
			}
		}
		if (link_set(fd, d->peer_index, d->peer_flags & IFF_UP, 0, d->peer))
			goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

/* restore failed: the outer ends made here are removed (their pairs go with them) */
static void net_cleanup(struct ns_ctx *c)
{
	struct net_ns *ns = net_of(c->t);
	int fd, i;

	if (!ns || (fd = nl_open()) < 0)
		return;
	for (i = 0; i < ns->ndevs; i++) {
		struct nlreq r = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
					  .nlmsg_type = RTM_DELLINK } };
		struct ifinfomsg *ifi = NLMSG_DATA(&r.h);

		/*
		 * the tree was killed first: its network namespace, and with it
		 * the pair, may be gone already and the index another device's
		 */
		if (strcmp(ns->devs[i].kind, "veth") || ns->devs[i].peer_index <= 0 ||
		    if_nametoindex_fd(fd, ns->devs[i].peer) != ns->devs[i].peer_index)
			continue;
		ifi->ifi_index = ns->devs[i].peer_index;
		nl_talk(fd, &r.h, NULL, NULL);
	}
	close(fd);
}

static int net_inside(struct ns_ctx *c)
{
	struct net_ns *ns = net_of(c->t);
	int fd, i, pass;

	if (!ns)
		return 0;
	fd = nl_open();
	if (fd < 0)
		return -1;
	/*
	 * Sysctls first (disable_ipv6, forwarding...), then the addresses on
	 * devices still down (so that the kernel makes no link-local address
	 * of its own), then the devices as they were (the veths' inner ends
	 * came from outside()), then the routes, which need them up.
	 */
	for (i = 0; i < ns->nsysctls; i++)
		if (sysctl_write(&ns->sysctls[i]))
			goto fail;
	dad_off("all");
	for (i = 0; i < ns->ndevs; i++)
		dad_off(ns->devs[i].name);
	for (pass = RTM_NEWADDR; pass; pass = pass == RTM_NEWADDR ? RTM_NEWLINK :
					       pass == RTM_NEWLINK ? RTM_NEWROUTE : 0) {
		if (pass == RTM_NEWLINK) {
			for (i = 0; i < ns->ndevs; i++)
				if (link_set(fd, ns->devs[i].index, ns->devs[i].flags & IFF_UP,
					     ns->devs[i].mtu, ns->devs[i].name))
					goto fail;
			continue;
		}
		for (i = 0; i < ns->nmsgs; i++) {
			struct netmsg *m = &ns->msgs[i];

			if (m->outer || m->type != pass)
				continue;
			if (msg_replay(fd, m, 0)) {
				pr_perror("cannot restore %s %d of the tree's network namespace",
					  m->type == RTM_NEWADDR ? "address" : "route", i);
				goto fail;
			}
		}
	}
	if (dad_wait(fd))
		goto fail;
	for (i = 0; i < ns->ndevs; i++)
		if (dad_back(ns, ns->devs[i].name))
			goto fail;
	if (dad_back(ns, "all"))
		goto fail;
	close(fd);
	if (ns->nft) {
		int img = dir_open(c->dirfd, "net-nft.img", O_RDONLY), st;

		if (img < 0) {
			pr_perror("cannot open net-nft.img");
			return -1;
		}
		/* stdin the ruleset, stdout and stderr imgcr's: nothing else of the ns-root */
		st = run_nft(img, -1, "-f", "/dev/stdin");
		close(img);
		if (st) {
			pr_err("cannot load the tree's nftables ruleset (nft -f failed)");
			return -1;
		}
	}
	return 0;
fail:
	close(fd);
	return -1;
}

/* ---- records ---- */

static void hex_write(FILE *f, const unsigned char *p, size_t n)
{
	size_t i;

	if (!n)
		fputc('-', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* @s (hex) into @out (at most @max bytes): the length, or -1 */
static int hex_read(const char *s, unsigned char *out, size_t max)
{
	size_t n = strlen(s), i;
	unsigned int b;

	if (!strcmp(s, "-"))
		return 0;
	if (n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (!strchr("0123456789abcdef", s[2 * i]) || !strchr("0123456789abcdef", s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	return n / 2;
}

static void net_write(FILE *f, const struct tree *t)
{
	struct net_ns *ns = net_of(t);
	char e[2][4 * 4096 + 1];
	int i;

	for (i = 0; ns && i < ns->ndevs; i++) {
		const struct netdev *d = &ns->devs[i];

		fprintf(f, "netdev index=%d name=%s kind=%s up=%d mtu=%u mac=", d->index, d->name,
			d->kind, !!(d->flags & IFF_UP), d->mtu);
		hex_write(f, d->mac, d->maclen);
		if (!strcmp(d->kind, "veth")) {
			fprintf(f, " peer=%s peer_up=%d peer_mtu=%u peer_mac=", d->peer,
				!!(d->peer_flags & IFF_UP), d->peer_mtu);
			hex_write(f, d->peer_mac, d->peer_maclen);
			if (d->peer_master[0])
				fprintf(f, " peer_master=%s", d->peer_master);
		}
		fputc('\n', f);
	}
	for (i = 0; ns && i < ns->nmsgs; i++) {
		fprintf(f, "netmsg type=%s", ns->msgs[i].type == RTM_NEWADDR ? "addr" : "route");
		if (ns->msgs[i].outer)
			fprintf(f, " outer=%d", ns->msgs[i].outer);
		fputs(" msg=", f);
		hex_write(f, ns->msgs[i].data, ns->msgs[i].len);
		fputc('\n', f);
	}
	for (i = 0; ns && i < ns->nsysctls; i++) {
		tree_escape(e[0], sizeof(e[0]), ns->sysctls[i].name);
		tree_escape(e[1], sizeof(e[1]), ns->sysctls[i].value);
		fprintf(f, "netsysctl name=%s value=%s\n", e[0], e[1]);
	}
	if (ns && ns->nft)
		fprintf(f, "netnft img=net-nft.img\n");
}

static struct net_ns *net_get(struct tree *t)
{
	struct ns_tree *nt = ns_tree_get(t);

	if (!nt->data[NS_NET]) {
		nt->data[NS_NET] = calloc(1, sizeof(struct net_ns));
		if (!nt->data[NS_NET]) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return nt->data[NS_NET];
}

static int ifname_ok(const char *s)
{
	return *s && strlen(s) < IFNAMSIZ && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") &&
	       !strpbrk(s, " \t\n:");
}

static const char *netdev_read(struct tree *t, struct rec *r)
{
	struct net_ns *ns = net_get(t);
	const char *name = rec_val(r, "name"), *kind = rec_val(r, "kind"), *v;
	struct netdev *d;
	int up, i, n;

	if (ns->ndevs == NET_MAX_DEVS)
		return "too many netdev records";
	ns->devs = xrealloc(ns->devs, (ns->ndevs + 1) * sizeof(*ns->devs));
	d = &ns->devs[ns->ndevs++];
	memset(d, 0, sizeof(*d));
	if (REC_NUM(r, "index", 1, INT_MAX, d->index) || !name || !ifname_ok(name) || !kind ||
	    (strcmp(kind, "lo") && strcmp(kind, "veth")) || REC_NUM(r, "up", 0, 1, up) ||
	    REC_NUM(r, "mtu", 0, 1 << 20, d->mtu) || !(v = rec_val(r, "mac")) ||
	    (n = hex_read(v, d->mac, sizeof(d->mac))) < 0)
		return "bad netdev record";
	d->maclen = n;
	d->flags = up ? IFF_UP : 0;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->kind, sizeof(d->kind), "%s", kind);
	for (i = 0; i < ns->ndevs - 1; i++)
		if (ns->devs[i].index == d->index || !strcmp(ns->devs[i].name, d->name))
			return "netdev listed twice";
	if (!strcmp(kind, "veth")) {
		const char *peer = rec_val(r, "peer"), *m;

		if (!peer || !ifname_ok(peer) || REC_NUM(r, "peer_up", 0, 1, up) ||
		    REC_NUM(r, "peer_mtu", 0, 1 << 20, d->peer_mtu) || !(v = rec_val(r, "peer_mac")) ||
		    (n = hex_read(v, d->peer_mac, sizeof(d->peer_mac))) < 0)
			return "bad netdev record (veth)";
		d->peer_maclen = n;
		d->peer_flags = up ? IFF_UP : 0;
		snprintf(d->peer, sizeof(d->peer), "%s", peer);
		if (rec_has(r, "peer_master")) {
			m = rec_val(r, "peer_master");
			if (!ifname_ok(m))
				return "bad netdev record (bridge)";
			snprintf(d->peer_master, sizeof(d->peer_master), "%s", m);
		}
	}
	return NULL;
}

static const char *netmsg_read(struct tree *t, struct rec *r)
{
	struct net_ns *ns = net_get(t);
	const char *type = rec_val(r, "type"), *v = rec_val(r, "msg");
	unsigned char buf[NET_MSG_MAX];
	struct netmsg m = { 0 };
	int n, i;

	if (ns->nmsgs == NET_MAX_MSGS)
		return "too many netmsg records";
	if (!type || !v || (n = hex_read(v, buf, sizeof(buf))) < 0)
		return "bad netmsg record";
	if (!strcmp(type, "addr") && n >= (int)sizeof(struct ifaddrmsg))
		m.type = RTM_NEWADDR;
	else if (!strcmp(type, "route") && n >= (int)sizeof(struct rtmsg))
		m.type = RTM_NEWROUTE;
	else
		return "bad netmsg record";
	if (rec_has(r, "outer")) {
		if (m.type != RTM_NEWADDR || REC_NUM(r, "outer", 1, INT_MAX, m.outer))
			return "bad netmsg record (outer)";
		for (i = 0; i < ns->ndevs && ns->devs[i].index != m.outer; i++)
			;
		if (i == ns->ndevs || strcmp(ns->devs[i].kind, "veth"))
			return "netmsg of an outer end no netdev record names";
	}
	msg_add(ns, m.type, m.outer, buf, n);
	return NULL;
}

static const char *netsysctl_read(struct tree *t, struct rec *r)
{
	struct net_ns *ns = net_get(t);
	struct netsysctl *s;

	if (ns->nsysctls == NET_MAX_SYSCTLS)
		return "too many netsysctl records";
	ns->sysctls = xrealloc(ns->sysctls, (ns->nsysctls + 1) * sizeof(*ns->sysctls));
	s = &ns->sysctls[ns->nsysctls++];
	s->name = s->value = NULL;
	if (rec_str(r, "name", &s->name) || rec_str(r, "value", &s->value))
		return "bad netsysctl record";
	/* below /proc/sys/net, nothing else */
	if (!*s->name || s->name[0] == '/' || strstr(s->name, "..") ||
	    strspn(s->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./@") !=
		    strlen(s->name) ||
	    strchr(s->value, '\n'))
		return "bad netsysctl record";
	return NULL;
}

static const char *netnft_read(struct tree *t, struct rec *r)
{
	const char *img = rec_val(r, "img");

	if (!img || strcmp(img, "net-nft.img"))
		return "bad netnft record";
	net_get(t)->nft = 1;
	return NULL;
}

static void net_tree_free(struct tree *t)
{
	net_ns_free(t->ns->data[NS_NET]);
	t->ns->data[NS_NET] = NULL;
}

const struct ns_ops ns_net_ops = {
	.name = "net",
	.clone_flag = CLONE_NEWNET,
	.dump = net_dump,
	.outside = net_outside,
	.inside = net_inside,
	.cleanup = net_cleanup,
	.free = net_tree_free,
};

const struct tree_record net_records[] = {
	{ "netdev", netdev_read, net_write, NULL },
	{ "netmsg", netmsg_read, NULL, NULL },
	{ "netsysctl", netsysctl_read, NULL, NULL },
	{ "netnft", netnft_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};
