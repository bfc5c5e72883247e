// SPDX-License-Identifier: GPL-2.0
/*
 * Packet sockets (AF_PACKET, SOCK_RAW and SOCK_DGRAM), "skpkt" and
 * "skpktmc" records after their "sk" record.
 *
 * dump: the protocol and the device it is bound to (sock_diag,
 * packet_diag: pdiag_num, PACKET_DIAG_INFO's index), its memberships
 * (PACKET_ADD_MEMBERSHIP: PACKET_DIAG_MCLIST, each with its count), the
 * SOL_PACKET options that differ from a new socket's (PACKET_VERSION,
 * PACKET_RESERVE, PACKET_AUXDATA, PACKET_ORIGDEV, PACKET_VNET_HDR and its
 * size, PACKET_LOSS, PACKET_TIMESTAMP, PACKET_TX_HAS_OFF,
 * PACKET_QDISC_BYPASS, PACKET_IGNORE_OUTGOING, PACKET_COPY_THRESH); the
 * classic filter, buffer sizes and timeouts are sk-opts.c's and sockets.c's
 * as for every family.
 *
 * Refused, naming the pid, the fd and the state: packets queued and not
 * yet read (the kernel alone queues a captured packet with its device,
 * its time stamp and its aux data), a pending error (ENETDOWN...), a
 * PACKET_RX_RING or PACKET_TX_RING (mapped by the task: its frames and
 * their status words are shared with the kernel), a fanout group
 * (PACKET_FANOUT: the group is the network namespace's, shared with
 * sockets imgcr may not see), a socket bound to a device that is down
 * (not receiving), SOCK_PACKET sockets.
 * Not seen: PACKET_STATISTICS (reading the counters resets them).
 *
 * restore (phase 1, sockets.c): socket() with protocol 0 (receiving
 * nothing yet), the filter, the options and the memberships, then bind()
 * to the protocol and the device index (0: every device), which starts
 * the capture exactly with its filter in place.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/packet_diag.h>
#include <linux/sockios.h>
#include <net/if.h>

#include "log.h"
#include "sockets.h"
#include "tree.h"

#ifndef PACKET_QDISC_BYPASS
#define PACKET_QDISC_BYPASS 20
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif
#ifndef PACKET_VNET_HDR_SZ
#define PACKET_VNET_HDR_SZ 24
#endif

/* the options kept (getsockopt reads them; PACKET_COPY_THRESH from packet_diag), set in this order */
static const struct {
	int opt;
	const char *name, *key;
} pk_opts[] = {
	{ PACKET_VERSION, "PACKET_VERSION", "version" },
	{ PACKET_RESERVE, "PACKET_RESERVE", "reserve" },
	{ PACKET_AUXDATA, "PACKET_AUXDATA", "auxdata" },
	{ PACKET_ORIGDEV, "PACKET_ORIGDEV", "origdev" },
	{ PACKET_VNET_HDR, "PACKET_VNET_HDR", "vnethdr" },
	{ PACKET_VNET_HDR_SZ, "PACKET_VNET_HDR_SZ", "vnethdrsz" },	/* 6.2 */
	{ PACKET_LOSS, "PACKET_LOSS", "loss" },
	{ PACKET_TIMESTAMP, "PACKET_TIMESTAMP", "timestamp" },
	{ PACKET_TX_HAS_OFF, "PACKET_TX_HAS_OFF", "txhasoff" },
	{ PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS", "qdiscbypass" },
	{ PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING", "ignoreoutgoing" },	/* 4.20 */
	{ PACKET_COPY_THRESH, "PACKET_COPY_THRESH", "copythresh" },	/* no getsockopt */
};
#define PK_NOPTS ((int)(sizeof(pk_opts) / sizeof(pk_opts[0])))

#define PK_MC_ADDR	32	/* MAX_ADDR_LEN */

struct sk_pkt_mc {
	int ifindex, type, count, alen;
	unsigned char addr[PK_MC_ADDR];
};

/* A packet socket's own state (tree_sk.fam) */
struct sk_pkt {
	unsigned int proto;	/* host order (ETH_P_ALL: 3); 0: not receiving */
	int ifindex;		/* bound to this device, 0: every device */
	int val[PK_NOPTS];	/* each option (0: as a new socket's) */
	int nmc;
	struct sk_pkt_mc *mc;
};

struct diag_find {
	unsigned long ino;
	int found, info, rings, fanout;
	struct packet_diag_msg m;
	struct packet_diag_info pi;
	struct sk_pkt *k;
};

static void diag_cb(void *msg, size_t len, void *arg)
{
	struct nlattr *tb[PACKET_DIAG_MAX + 1], *a;
	struct packet_diag_msg *m = msg;
	struct diag_find *d = arg;
	size_t j;

	if (len < NLMSG_ALIGN(sizeof(*m)) || m->pdiag_ino != d->ino || d->found)
		return;
	d->found = 1;
	d->m = *m;
	nla_parse((char *)m + NLMSG_ALIGN(sizeof(*m)), len - NLMSG_ALIGN(sizeof(*m)), tb,
		  PACKET_DIAG_MAX);
	a = tb[PACKET_DIAG_INFO];
	if (a && NLA_LEN(a) >= sizeof(d->pi)) {
		memcpy(&d->pi, NLA_DATA(a), sizeof(d->pi));
		d->info = 1;
	}
	d->rings = (tb[PACKET_DIAG_RX_RING] ? 1 : 0) | (tb[PACKET_DIAG_TX_RING] ? 2 : 0);
	d->fanout = !!tb[PACKET_DIAG_FANOUT];
	a = tb[PACKET_DIAG_MCLIST];
	for (j = 0; a && j < NLA_LEN(a) / sizeof(struct packet_diag_mclist); j++) {
		struct packet_diag_mclist *mc = (struct packet_diag_mclist *)NLA_DATA(a) + j;
		struct sk_pkt_mc *x;

		d->k->mc = tree_grow(d->k->mc, d->k->nmc, sizeof(*d->k->mc));
		x = &d->k->mc[d->k->nmc++];
		memset(x, 0, sizeof(*x));
		x->ifindex = mc->pdmc_index;
		x->type = mc->pdmc_type;
		x->count = mc->pdmc_count;
		x->alen = mc->pdmc_alen > PK_MC_ADDR ? PK_MC_ADDR : mc->pdmc_alen;
		memcpy(x->addr, mc->pdmc_addr, x->alen);
	}
}

static void pkt_free(struct sk_pkt *k)
{
	if (k) {
		free(k->mc);
		free(k);
	}
}

static const char *ifname(int idx, char *buf)
{
	if (!idx)
		return "every device";
	if (!if_indextoname(idx, buf))
		snprintf(buf, IF_NAMESIZE, "?");
	return buf;
}

static int pkt_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	struct packet_diag_req req = {
		.sdiag_family = AF_PACKET,
		.pdiag_ino = s->ino,
		.pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_MCLIST | PACKET_SHOW_RING_CFG |
			      PACKET_SHOW_FANOUT,
	};
	struct diag_find d = { .ino = s->ino };
	struct pollfd pf = { .fd = sfd, .events = POLLIN };
	char dev[IF_NAMESIZE];
	struct sk_pkt *k;
	int i, r = FD_FAILED;

	(void)c;
	if (s->type != SOCK_RAW && s->type != SOCK_DGRAM)
		return fd_refuse(p, "%s: packet sockets of type %d (SOCK_PACKET) are not supported",
				 p->link, s->type);
	k = calloc(1, sizeof(*k));
	if (!k) {
		pr_err("out of memory");
		return FD_FAILED;
	}
	d.k = k;
	if (sk_diag_dump(&req, sizeof(req), diag_cb, &d) || !d.found || !d.info) {
		pr_perror("pid %d fd %d: %s: sock_diag (packet_diag) does not list this packet socket",
			  p->pid, p->fd, p->link);
		goto out;
	}
	k->proto = d.m.pdiag_num;
	k->ifindex = d.pi.pdi_index;
	if (d.rings) {
		r = fd_refuse(p, "%s: packet socket with a %s%s%s (mapped by the task, shared with the kernel) is not supported",
			      p->link, d.rings & 1 ? "PACKET_RX_RING" : "", d.rings == 3 ? " and a " : "",
			      d.rings & 2 ? "PACKET_TX_RING" : "");
		goto out;
	}
	if (d.fanout) {
		r = fd_refuse(p, "%s: packet socket in a fanout group (PACKET_FANOUT) is not supported",
			      p->link);
		goto out;
	}
	if (k->proto && !(d.pi.pdi_flags & PDI_RUNNING)) {
		r = fd_refuse(p, "%s: packet socket bound to %s, which is down (not receiving), is not supported",
			      p->link, ifname(k->ifindex, dev));
		goto out;
	}
	if (poll(&pf, 1, 0) < 0) {
		pr_perror("pid %d fd %d: %s: poll", p->pid, p->fd, p->link);
		goto out;
	}
	if (pf.revents & POLLERR) {
		r = fd_refuse(p, "%s: packet socket: a pending error (SO_ERROR: ENETDOWN...) is not supported",
			      p->link);
		goto out;
	}
	if (pf.revents & POLLIN) {
		int n = -1;

		ioctl(sfd, SIOCINQ, &n);
		r = fd_refuse(p, "%s: packet socket on %s: packets queued and not yet read (the first: %d bytes) are not supported: only the kernel could queue them again as it captured them (docs/sockets.md)",
			      p->link, ifname(k->ifindex, dev), n);
		goto out;
	}
	for (i = 0; i < PK_NOPTS; i++) {
		if (pk_opts[i].opt == PACKET_COPY_THRESH) {
			k->val[i] = d.pi.pdi_copy_thresh;
			continue;
		}
		if (sk_getint(sfd, SOL_PACKET, pk_opts[i].opt, &k->val[i])) {
			k->val[i] = 0;
			if (errno == ENOPROTOOPT || errno == EINVAL)
				continue;	/* not this kernel's */
			pr_perror("pid %d fd %d: %s: getsockopt %s", p->pid, p->fd, p->link, pk_opts[i].name);
			goto out;
		}
	}
	/* the protocol is the skpkt record's (the sk record's is a byte) */
	s->proto = 0;
	s->state = 0;
	s->fam = k;
	if (sk_opts_dump(p, sfd, s)) {
		s->fam = NULL;
		goto out;
	}
	return FD_DESCRIBED;
out:
	pkt_free(k);
	return r;
}

static int pkt_sk_make(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	const struct sk_pkt *k = s->fam;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET };
	char what[128], dev[IF_NAMESIZE];
	int fd, j, n;

	sk_what(s, what, sizeof(what));
	if (!k) {
		pr_err("%s: no skpkt record", what);
		return -1;
	}
	/* protocol 0: receives nothing until bind() below */
	fd = r->fds[i] = socket(AF_PACKET, s->type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_perror("%s: socket(AF_PACKET, %d)", what, s->type);
		return -1;
	}
	if (sk_xopts_restore(fd, s, P_AFTER, what))
		return -1;
	for (j = 0; j < PK_NOPTS; j++)
		if (k->val[j] && setsockopt(fd, SOL_PACKET, pk_opts[j].opt, &k->val[j], sizeof(int))) {
			pr_perror("%s: cannot set %s to %d", what, pk_opts[j].name, k->val[j]);
			return -1;
		}
	for (j = 0; j < k->nmc; j++) {
		struct packet_mreq mr = { 0 };
		struct {
			struct packet_mreq h;
			unsigned char more[PK_MC_ADDR - 8];
		} big;
		const struct sk_pkt_mc *x = &k->mc[j];

		memset(&big, 0, sizeof(big));
		mr.mr_ifindex = x->ifindex;
		mr.mr_type = x->type;
		mr.mr_alen = x->alen;
		big.h = mr;
		memcpy(big.h.mr_address, x->addr, x->alen);
		for (n = 0; n < x->count; n++)
			if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &big,
				       x->alen > 8 ? sizeof(big) : sizeof(mr))) {
				pr_perror("%s: cannot add membership type %d on %s (PACKET_ADD_MEMBERSHIP)",
					  what, x->type, ifname(x->ifindex, dev));
				return -1;
			}
	}
	if (k->proto || k->ifindex) {
		ll.sll_protocol = htons(k->proto);
		ll.sll_ifindex = k->ifindex;
		if (bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
			pr_perror("%s: cannot bind to protocol 0x%04x on %s (index %d)", what, k->proto,
				  ifname(k->ifindex, dev), k->ifindex);
			return -1;
		}
	}
	return 0;
}

static void pkt_sk_show(const struct tree_sk *s, char *out, size_t size)
{
	const struct sk_pkt *k = s->fam;
	size_t o = strlen(out);
	char dev[IF_NAMESIZE];
	int j;

	if (!k)
		return;
	o += snprintf(out + o, size - o, " protocol 0x%04x on %s", k->proto,
		      k->ifindex ? ifname(k->ifindex, dev) : "every device");
	if (k->ifindex && o < size)
		o += snprintf(out + o, size - o, " (index %d)", k->ifindex);
	for (j = 0; j < PK_NOPTS && o < size; j++)
		if (k->val[j])
			o += snprintf(out + o, size - o, " %s=%d", pk_opts[j].name, k->val[j]);
	for (j = 0; j < k->nmc && o < size; j++) {
		static const char *const mt[] = { "multicast", "promisc", "allmulti", "unicast" };
		const struct sk_pkt_mc *x = &k->mc[j];
		int b;

		if (x->type >= 0 && x->type < 4)
			o += snprintf(out + o, size - o, " member %s", mt[x->type]);
		else
			o += snprintf(out + o, size - o, " member type %d", x->type);
		for (b = 0; b < x->alen && o < size; b++)
			o += snprintf(out + o, size - o, "%s%02x", b ? ":" : " ", x->addr[b]);
		if (o < size)
			o += snprintf(out + o, size - o, " on %s", ifname(x->ifindex, dev));
		if (x->count > 1 && o < size)
			o += snprintf(out + o, size - o, " x%d", x->count);
	}
}

const struct sk_family_ops pkt_sk_ops = {
	.family = AF_PACKET,
	.dump = pkt_sk_dump,
	.make = pkt_sk_make,
	.show = pkt_sk_show,
};

/* ---- the tree file ---- */

static void pkt_records_write(FILE *f, const struct tree *t)
{
	int i, j, b;

	for (i = 0; i < t->nsks; i++) {
		const struct tree_sk *s = &t->sks[i];
		const struct sk_pkt *k = s->fam;

		if (s->family != AF_PACKET || !k)
			continue;
		fprintf(f, "skpkt ino=%lu proto=%u ifindex=%d", s->ino, k->proto, k->ifindex);
		for (j = 0; j < PK_NOPTS; j++)
			if (k->val[j])
				fprintf(f, " %s=%d", pk_opts[j].key, k->val[j]);
		fputc('\n', f);
		for (j = 0; j < k->nmc; j++) {
			const struct sk_pkt_mc *x = &k->mc[j];

			fprintf(f, "skpktmc ino=%lu ifindex=%d type=%d count=%d addr=", s->ino,
				x->ifindex, x->type, x->count);
			if (!x->alen)
				fputc('-', f);
			for (b = 0; b < x->alen; b++)
				fprintf(f, "%02x", x->addr[b]);
			fputc('\n', f);
		}
	}
}

static struct tree_sk *pkt_sk(struct tree *t, struct rec *r)
{
	struct tree_sk *s = NULL;
	long long ino;

	if (!REC_NUM(r, "ino", 1, LLONG_MAX, ino))
		s = tree_sk_find(t, ino);
	return s && s->family == AF_PACKET ? s : NULL;
}

static const char *pkt_record_read(struct tree *t, struct rec *r)
{
	struct tree_sk *s = pkt_sk(t, r);
	struct sk_pkt *k;
	int j;

	if (!s || s->fam)
		return "skpkt record without its packet sk record (or a second one)";
	k = calloc(1, sizeof(*k));
	if (!k)
		return "out of memory";
	s->fam = k;
	if (REC_NUM(r, "proto", 0, 0xffff, k->proto) || REC_NUM(r, "ifindex", 0, INT_MAX, k->ifindex))
		return "bad skpkt record";
	for (j = 0; j < PK_NOPTS; j++)
		if (rec_has(r, pk_opts[j].key) && REC_NUM(r, pk_opts[j].key, INT_MIN, INT_MAX, k->val[j]))
			return "bad skpkt record option";
	return NULL;
}

static const char *pktmc_record_read(struct tree *t, struct rec *r)
{
	struct tree_sk *s = pkt_sk(t, r);
	struct sk_pkt *k = s ? s->fam : NULL;
	struct sk_pkt_mc *x;
	const char *a;
	size_t len, b;

	if (!k)
		return "skpktmc record before its skpkt record";
	k->mc = tree_grow(k->mc, k->nmc, sizeof(*k->mc));
	x = &k->mc[k->nmc++];
	memset(x, 0, sizeof(*x));
	if (REC_NUM(r, "ifindex", 0, INT_MAX, x->ifindex) || REC_NUM(r, "type", 0, 0xffff, x->type) ||
	    REC_NUM(r, "count", 1, 1 << 20, x->count) || !(a = rec_val(r, "addr")))
		return "bad skpktmc record";
	if (strcmp(a, "-")) {
		len = strlen(a);
		if (len % 2 || len / 2 > PK_MC_ADDR)
			return "bad skpktmc record address";
		for (b = 0; b < len / 2; b++)
			if (sscanf(a + 2 * b, "%2hhx", &x->addr[b]) != 1)
				return "bad skpktmc record address";
		x->alen = len / 2;
	}
	return NULL;
}

const struct tree_record pkt_records[] = {
	{ "skpkt", pkt_record_read, pkt_records_write, NULL },	/* after every sk record */
	{ "skpktmc", pktmc_record_read, NULL, NULL },		/* after its skpkt record */
	{ NULL, NULL, NULL, NULL }
};
