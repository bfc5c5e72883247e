// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets: the fd kind ("sk" file records, one "sk" record per socket with
 * its state, DIR/sk-INO.data with the data queued in it).
 *
 * dump: a copy of the fd (pidfd_getfd; the tree is ptrace-frozen) tells the
 * family (SO_DOMAIN), type and protocol; unix sockets are described by
 * sk-unix.c, IPv4 and IPv6 ones (TCP, UDP, UDP-Lite, ping, raw) by sk-inet.c
 * (established TCP connections
 * by sk-tcp.c), netlink ones by sk-netlink.c, packet ones by sk-packet.c
 * (each file's struct sk_family_ops: its dump, make and show, looked up by
 * family here), every other family is refused
 * by name.  Both share the socket options kept here (SO_SNDBUF, SO_RCVBUF,
 * SO_PASSCRED, SO_RCVTIMEO, SO_SNDTIMEO, SO_PEEK_OFF, SO_REUSEADDR,
 * SO_REUSEPORT, SO_KEEPALIVE; every other option is in sk-opts.c's table,
 * dumped here for every family; O_NONBLOCK and the other file status flags are
 * the file record's) and the reading of a receive queue: MSG_PEEK with
 * SO_PEEK_OFF stepping through it, so nothing is consumed and the peek
 * offset is put back (the tree may be left running).  Datagram boundaries
 * are kept: one frame (a 32-bit length, then the bytes) per datagram.
 *
 * restore: the first socket opened makes every socket of the tree, in four
 * phases (create/bind/listen and socketpairs, with sk-opts.c's options
 * that must come before bind(); queued data; connects to names and shutdown
 * state; options), in the restorer, which then hands each
 * task its fds like any other file.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "log.h"
#include "proc.h"
#include "sockets.h"
#include "trust.h"
#include "record.h"

struct tree_sk *tree_sk_find(const struct tree *t, unsigned long ino)
{
	int i;

	for (i = 0; i < t->nsks; i++)
		if (t->sks[i].ino == ino)
			return &t->sks[i];
	return NULL;
}

struct tree_sk *tree_sk_add(struct tree *t, unsigned long ino)
{
	struct tree_sk *s;

	t->sks = tree_grow(t->sks, t->nsks, sizeof(*t->sks));
	s = &t->sks[t->nsks++];
	memset(s, 0, sizeof(*s));
	s->ino = ino;
	s->peek_off = -1;
	return s;
}


int sk_ext_unix;

const struct tree_file *sk_file_of(const struct tree *t, unsigned long ino)
{
	int i;

	for (i = 0; i < t->nfiles; i++)
		if (t->files[i].kind == TK_SK && t->files[i].ino == ino)
			return &t->files[i];
	return NULL;
}

const char *sk_addr_str(const unsigned char *a, int len, char *buf, size_t size)
{
	sa_family_t fam;
	char ip[INET6_ADDRSTRLEN];

	if (len < (int)sizeof(sa_family_t)) {
		snprintf(buf, size, "(none)");
		return buf;
	}
	memcpy(&fam, a, sizeof(fam));
	if (fam == AF_UNIX) {
		const char *p = (const char *)a + sizeof(fam);
		int n = len - (int)sizeof(fam), i, o;

		if (n <= 0) {
			snprintf(buf, size, "(unnamed)");
		} else if (p[0]) {
			snprintf(buf, size, "%.*s", (int)strnlen(p, n), p);
		} else {
			/* abstract: "@name", non-printable bytes as \xHH */
			o = snprintf(buf, size, "@");
			for (i = 1; i < n && o + 5 < (int)size; i++)
				o += snprintf(buf + o, size - o, p[i] > 0x20 && p[i] < 0x7f ? "%c" : "\\x%02x",
					      (unsigned char)p[i]);
		}
	} else if (fam == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, a, sizeof(sin));
		inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, ntohs(sin.sin_port));
	} else if (fam == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, a, sizeof(sin6));
		inet_ntop(AF_INET6, &sin6.sin6_addr, ip, sizeof(ip));
		snprintf(buf, size, "[%s]:%u", ip, ntohs(sin6.sin6_port));
	} else {
		snprintf(buf, size, "(family %u)", fam);
	}
	return buf;
}

const char *sk_what(const struct tree_sk *s, char *buf, size_t size)
{
	const char *fam = s->family == AF_UNIX ? "unix" : s->family == AF_INET ? "IPv4" :
			  s->family == AF_NETLINK ? "netlink" : s->family == AF_PACKET ? "packet" : "IPv6";
	int other = s->family == AF_NETLINK || s->family == AF_PACKET;
	char k[64];
	const char *type = (s->family == AF_INET || s->family == AF_INET6) ? inet_sk_kind(s, k, sizeof(k)) :
			   s->type == SOCK_STREAM ? "stream" :
			   s->type == SOCK_DGRAM ? "datagram" :
			   s->type == SOCK_RAW && other ? "raw" :
			   s->type == SOCK_SEQPACKET ? "seqpacket" : "?";

	snprintf(buf, size, "%s %s socket:[%lu]", fam, type, s->ino);
	return buf;
}

int sk_diag_dump(void *req, size_t len, void (*cb)(void *msg, size_t len, void *arg), void *arg)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		char body[256];
	} m;
	static char buf[1 << 16];
	int fd, done = 0, e;
	ssize_t n;

	if (len > sizeof(m.body)) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = NLMSG_LENGTH(len);
	m.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	m.h.nlmsg_seq = 1;
	memcpy(m.body, req, len);
	if (sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
		goto fail;
	while (!done) {
		struct nlmsghdr *h;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *er = NLMSG_DATA(h);

				errno = er->error ? -er->error : EPROTO;
				goto fail;
			}
			cb(NLMSG_DATA(h), h->nlmsg_len - NLMSG_LENGTH(0), arg);
		}
	}
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int sk_getint(int fd, int level, int opt, int *v)
{
	socklen_t l = sizeof(*v);

	*v = 0;
	return getsockopt(fd, level, opt, v, &l);
}

uint32_t csum_add(uint32_t sum, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	if (len & 1)
		sum += b[len - 1] << 8;
	return sum;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int setint(int fd, int level, int opt, int v)
{
	return setsockopt(fd, level, opt, &v, sizeof(v));
}

int sk_opts_dump(const struct fd_parms *p, int sfd, struct tree_sk *s)
{
	static const struct {
		int level, opt;
		unsigned int bit;
		int only;	/* 1 unix, 2 inet, 4 TCP, 8 IPv6 */
	} flags[] = {
		{ SOL_SOCKET, SO_PASSCRED, SKO_PASSCRED, 1 },
		{ SOL_SOCKET, SO_REUSEADDR, SKO_REUSEADDR, 2 },
		{ SOL_SOCKET, SO_REUSEPORT, SKO_REUSEPORT, 2 },
		{ SOL_SOCKET, SO_KEEPALIVE, SKO_KEEPALIVE, 2 },
		{ IPPROTO_TCP, TCP_NODELAY, SKO_NODELAY, 4 },
		{ IPPROTO_IPV6, IPV6_V6ONLY, SKO_V6ONLY, 8 },
	};
	int is = (s->family != AF_UNIX ? 2 : 1) | (sk_is_tcp(s) ? 4 : 0) |
		 (s->family == AF_INET6 ? 8 : 0);
	struct timeval tv;
	socklen_t l;
	size_t i;
	int v;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (flags[i].only && !(flags[i].only & is))
			continue;
		if (sk_getint(sfd, flags[i].level, flags[i].opt, &v))
			goto fail;
		if (v)
			s->opts |= flags[i].bit;
	}
	if (sk_getint(sfd, SOL_SOCKET, SO_SNDBUF, &s->sndbuf) ||
	    sk_getint(sfd, SOL_SOCKET, SO_RCVBUF, &s->rcvbuf))
		goto fail;
	/* not every protocol has a peek offset (TCP before 6.10) */
	if (sk_getint(sfd, SOL_SOCKET, SO_PEEK_OFF, &s->peek_off))
		s->peek_off = -1;
	l = sizeof(tv);
	if (getsockopt(sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, &l))
		goto fail;
	s->rcvtimeo_us = tv.tv_sec * 1000000LL + tv.tv_usec;
	l = sizeof(tv);
	if (getsockopt(sfd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l))
		goto fail;
	s->sndtimeo_us = tv.tv_sec * 1000000LL + tv.tv_usec;
	return 0;
fail:
	pr_perror("pid %d fd %d: %s: cannot read its socket options", p->pid, p->fd, p->link);
	return -1;
}

/*
 * A buffer size (@opt, SO_SNDBUF or SO_RCVBUF) as getsockopt read it, @want:
 * the kernel doubles what it is given; set only when it differs from a new
 * socket's.  @opt stops at twice net.core.wmem_max/rmem_max, which a size
 * TCP autotuned passes: then @force (CAP_NET_ADMIN; without it the capped
 * size stays).  0, or -1 (printed).
 */
static int set_buf(int fd, int opt, int force, int want, const char *name, const char *what)
{
	int v;

	if (!sk_getint(fd, SOL_SOCKET, opt, &v) && v == want)
		return 0;
	if (setint(fd, SOL_SOCKET, opt, want / 2)) {
		if (!setint(fd, SOL_SOCKET, force, want / 2))
			return 0;
	} else if (sk_getint(fd, SOL_SOCKET, opt, &v) || v == want ||
		   !setint(fd, SOL_SOCKET, force, want / 2) || errno == EPERM) {
		return 0;
	}
	pr_perror("%s: cannot set %s to %d", what, name, want / 2);
	return -1;
}

int sk_opts_restore(int fd, const struct tree_sk *s, const char *what)
{
	static const struct {
		int level, opt;
		unsigned int bit;
		const char *name;
	} flags[] = {
		{ SOL_SOCKET, SO_PASSCRED, SKO_PASSCRED, "SO_PASSCRED" },
		{ SOL_SOCKET, SO_REUSEADDR, SKO_REUSEADDR, "SO_REUSEADDR" },
		{ SOL_SOCKET, SO_REUSEPORT, SKO_REUSEPORT, "SO_REUSEPORT" },
		{ SOL_SOCKET, SO_KEEPALIVE, SKO_KEEPALIVE, "SO_KEEPALIVE" },
		{ IPPROTO_TCP, TCP_NODELAY, SKO_NODELAY, "TCP_NODELAY" },
		{ IPPROTO_IPV6, IPV6_V6ONLY, SKO_V6ONLY, "IPV6_V6ONLY" },
	};
	struct timeval tv;
	size_t i;
	int v;

	/* sk-opts.c's, before the buffer sizes (TCP's SO_RCVLOWAT may grow the receive buffer) */
	if (sk_xopts_restore(fd, s, P_AFTER, what))
		return -1;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (flags[i].level == IPPROTO_TCP && !sk_is_tcp(s))
			continue;
		/*
		 * IPV6_V6ONLY: set by the maker before bind(), it cannot change
		 * after, and bind() to an IPv6 address sets it by itself
		 */
		if (flags[i].level == IPPROTO_IPV6)
			continue;
		/* as sk_opts_dump reads them: SO_PASSCRED on unix sockets only (7.x refuses it on others) */
		if ((s->family == AF_UNIX) != (flags[i].bit == SKO_PASSCRED))
			continue;
		if (sk_getint(fd, flags[i].level, flags[i].opt, &v))
			v = -1;
		if (v == !!(s->opts & flags[i].bit))
			continue;
		if (setint(fd, flags[i].level, flags[i].opt, !!(s->opts & flags[i].bit))) {
			pr_perror("%s: cannot set %s", what, flags[i].name);
			return -1;
		}
	}
	if (set_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE, s->sndbuf, "SO_SNDBUF", what) ||
	    set_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE, s->rcvbuf, "SO_RCVBUF", what))
		return -1;
	tv.tv_sec = s->rcvtimeo_us / 1000000;
	tv.tv_usec = s->rcvtimeo_us % 1000000;
	if (s->rcvtimeo_us && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		pr_perror("%s: cannot set SO_RCVTIMEO", what);
		return -1;
	}
	tv.tv_sec = s->sndtimeo_us / 1000000;
	tv.tv_usec = s->sndtimeo_us % 1000000;
	if (s->sndtimeo_us && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		pr_perror("%s: cannot set SO_SNDTIMEO", what);
		return -1;
	}
	if (s->peek_off >= 0 && setint(fd, SOL_SOCKET, SO_PEEK_OFF, s->peek_off)) {
		pr_perror("%s: cannot set SO_PEEK_OFF to %d", what, s->peek_off);
		return -1;
	}
	/* SO_BUF_LOCK as it was (the buffer sizes just set locked them), SO_LOCK_FILTER */
	return sk_xopts_restore(fd, s, P_FINAL, what);
}

#define PEEK_MAX (8 << 20)	/* the largest datagram read */
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif

/*
 * Peek at @sfd's queue from offset @off: up to @len bytes into @buf, its
 * control data into @mh's (@cbuf), a datagram's sender into @mh's
 * msg_name (@from).  The byte count (MSG_TRUNC: a datagram's whole size),
 * or -1 with errno set.
 */
static ssize_t peek_at(int sfd, int off, char *buf, size_t len, struct msghdr *mh, char *cbuf,
		       size_t clen, struct iovec *iov, struct sockaddr_storage *from)
{
	ssize_t n;

	if (off >= 0 && setint(sfd, SOL_SOCKET, SO_PEEK_OFF, off))
		return -1;
	iov->iov_base = buf;
	iov->iov_len = len;
	memset(mh, 0, sizeof(*mh));
	mh->msg_name = from;	/* a datagram's sender (sk-queue.c keeps it) */
	mh->msg_namelen = sizeof(*from);
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	mh->msg_control = cbuf;
	mh->msg_controllen = clen;
	do
		n = recvmsg(sfd, mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	return n;
}

int fd_send(int sk, const void *data, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)data, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sk, &m, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

ssize_t fd_recv(int sk, void *data, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { data, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sk, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return n;
}

/* The fds an SCM_RIGHTS of @mh received closed; their number. */
static int close_rights(struct msghdr *mh)
{
	struct cmsghdr *cm;
	int n = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(cm);
			size_t k, nf = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (k = 0; k < nf; k++)
				close(fds[k]);
			n += nf;
		}
	return n;
}

static int write_frame(int out, const char *path, const char *data, uint32_t len, struct tree_sk *s)
{
	if (write_all(out, &len, sizeof(len)) || write_all(out, data, len)) {
		pr_perror("cannot write %s", path);
		return -1;
	}
	s->qlen += sizeof(len) + len;
	return 0;
}

/*
 * a UDP datagram's source a send from it cannot give again: an address of
 * any or a port 0 (bind() picks them); an IPv6 one larger than a raw send
 * over lo takes; NULL if none
 */
static const char *udp_src_refused(const struct sockaddr_storage *ss, socklen_t len, ssize_t n)
{
	static const unsigned char zero[16];

	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		if (!a->sin_addr.s_addr || !a->sin_port)
			return "its source address is 0.0.0.0 or its port 0 (a send cannot give them again: bind() picks them)";
		return NULL;
	}
	if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		const unsigned char *b = a->sin6_addr.s6_addr;

		if (!memcmp(b, zero, 16) || !a->sin6_port ||
		    (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && !memcmp(b + 12, zero, 4)))
			return "its source address is :: (or 0.0.0.0) or its port 0 (a send cannot give them again: bind() picks them)";
		if (!IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && n > 65488)
			return "an IPv6 datagram larger than 65488 bytes (a raw send of it, with its headers, exceeds the loopback MTU)";
		return NULL;
	}
	return "its source address is not an IPv4 or IPv6 one";
}

int sk_queue_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s, long inq)
{
	return sk_queue_dump_head(c, p, sfd, s, inq, NULL, 0);
}

int sk_queue_dump_head(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s, long inq,
		       const struct sockaddr_storage *head, socklen_t headlen)
{
	char path[PATH_MAX];
	static char cbuf[CMSG_SPACE(SKQ_MAX_FDS * sizeof(int)) + 256];
	static char *buf;
	int out = -1, old_off = -1, ret = FD_FAILED, set = 0, seq = 0;
	long total = 0;

	if (!buf && !(buf = malloc(PEEK_MAX))) {
		pr_err("out of memory");
		return FD_FAILED;
	}
	snprintf(path, sizeof(path), "%s/sk-%lu.data", c->dir, s->ino);
	out = img_create(path, 0600);
	if (out < 0) {
		pr_perror("cannot create %s", path);
		return FD_FAILED;
	}
	if (sk_getint(sfd, SOL_SOCKET, SO_PEEK_OFF, &old_off) || setint(sfd, SOL_SOCKET, SO_PEEK_OFF, 0)) {
		pr_perror("pid %d fd %d: %s: SO_PEEK_OFF, to read its queue without consuming it",
			  p->pid, p->fd, p->link);
		goto out;
	}
	set = 1;
	/* UDP: a zero-length head peeked at (sk-inet.c), which the pass below skips, first */
	if (head) {
		if (old_off >= 0) {
			ret = fd_refuse(p, "%s: a zero-length datagram queued on a socket with a peek offset (SO_PEEK_OFF %d): not supported (a peek with an offset may have passed another one)",
					p->link, old_off);
			goto out;
		}
		const char *why = udp_src_refused(head, headlen, 0);

		if (why) {
			char nm[128];

			ret = fd_refuse(p, "%s: UDP socket %s: datagram 0 (0 bytes) from %s: %s: not supported",
					p->link, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
					sk_addr_str((const unsigned char *)head, headlen, nm + 64, 64), why);
			goto out;
		}
		if (write_frame(out, path, buf, 0, s))
			goto out;
		skq_from_add(s, seq++, head, headlen);
	}
	while (inq < 0 || total < inq) {
		struct sockaddr_storage from;
		struct iovec iov;
		struct msghdr mh;
		struct cmsghdr *cm;
		int *fds = NULL, nf = 0;
		ssize_t n = peek_at(sfd, -1, buf, PEEK_MAX, &mh, cbuf, sizeof(cbuf), &iov, &from);

		if (n < 0 && errno == EAGAIN && inq < 0)
			break;
		if (n < 0) {
			pr_perror("pid %d fd %d: %s: peeking at its queued data (%ld of %ld bytes read)",
				  p->pid, p->fd, p->link, total, inq);
			goto out;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && !fds) {
				fds = (int *)CMSG_DATA(cm);
				nf = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				continue;
			}
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
				close_rights(&mh);
				ret = fd_refuse(p, "%s: queued messages carrying credentials (SO_PASSCRED, SCM_CREDENTIALS) are not supported",
						p->link);
				goto out;
			}
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_PIDFD) {
				close(*(int *)CMSG_DATA(cm));
				close_rights(&mh);
				ret = fd_refuse(p, "%s: queued messages carrying their sender's pidfd (SO_PASSPIDFD, SCM_PIDFD) are not supported",
						p->link);
				goto out;
			}
			/* SCM_SECURITY (SO_PASSSEC): made by the receive, not queued */
		}
		if (mh.msg_flags & MSG_CTRUNC) {
			close_rights(&mh);
			ret = fd_refuse(p, "%s: a queued message carries more control data than imgcr reads (more than %d fds in flight?)",
					p->link, SKQ_MAX_FDS);
			goto out;
		}
		if (n > PEEK_MAX || (fds && n == PEEK_MAX && inq >= 0)) {
			close_rights(&mh);
			ret = fd_refuse(p, "%s: a queued %s of %zd bytes is larger than imgcr reads (%d)",
					p->link, fds ? "message with fds in flight" : "datagram", n, PEEK_MAX);
			goto out;
		}
		/* UDP: a zero-length datagram is one like any other (sk-inet.c) */
		if (n == 0 && s->family == AF_UNIX && (inq < 0 || s->type == SOCK_SEQPACKET)) {
			close_rights(&mh);
			ret = fd_refuse(p, "%s: a queued zero-length message is not supported", p->link);
			goto out;
		}
		if (sk_is_udp(s)) {
			const char *why = n == 0 && old_off >= 0 ?
				"a zero-length datagram queued on a socket with a peek offset (SO_PEEK_OFF): not supported (a peek with an offset may have passed another one)" :
				udp_src_refused(&from, mh.msg_namelen, n);

			if (why) {
				char nm[128];

				ret = fd_refuse(p, "%s: UDP socket %s: datagram %d (%zd bytes) from %s: %s: not supported",
						p->link, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)), seq, n,
						sk_addr_str((const unsigned char *)&from, mh.msg_namelen, nm + 64, 64), why);
				goto out;
			}
		}
		if (n == 0 && inq >= 0) {
			pr_err("pid %d fd %d: %s: its queue ended after %ld of %ld bytes", p->pid, p->fd,
			       p->link, total, inq);
			goto out;
		}
		/*
		 * a stream socket's peek glues the data queued before a
		 * message with fds to it, and stops after it (and the fds
		 * of a message come with a peek of any length that reaches
		 * the data before it: where it begins cannot be read): one
		 * frame, sent again at once with the fds
		 */
		if (fds && (ret = skq_dump_add(p, s, seq, fds, nf)) != FD_DESCRIBED)
			goto out;
		ret = FD_FAILED;
		if (write_frame(out, path, buf, n, s))
			goto out;
		if ((s->family == AF_UNIX && s->type == SOCK_DGRAM) || sk_is_udp(s))
			skq_from_add(s, seq, mh.msg_name, mh.msg_namelen);
		seq++;
		total += n;
	}
	ret = FD_DESCRIBED;
out:
	if (set && setint(sfd, SOL_SOCKET, SO_PEEK_OFF, old_off)) {
		pr_perror("pid %d fd %d: %s: cannot put SO_PEEK_OFF back to %d", p->pid, p->fd,
			  p->link, old_off);
		ret = FD_FAILED;
	}
	close(out);
	return ret;
}

static const char *family_name(int f)
{
	static const struct {
		int f;
		const char *name;
	} names[] = {
		{ AF_NETLINK, "netlink" }, { AF_PACKET, "packet" }, { AF_VSOCK, "vsock" },
		{ AF_ALG, "AF_ALG (kernel crypto)" }, { AF_TIPC, "TIPC" },
		{ AF_BLUETOOTH, "bluetooth" }, { AF_CAN, "CAN" }, { AF_XDP, "XDP" },
		{ AF_KCM, "KCM" }, { AF_QIPCRTR, "QIPCRTR" }, { AF_SMC, "SMC" },
		{ AF_RDS, "RDS" }, { AF_KEY, "PF_KEY" }, { AF_APPLETALK, "appletalk" },
		{ AF_AX25, "AX.25" }, { AF_X25, "X.25" }, { AF_LLC, "LLC" }, { AF_PPPOX, "PPPoX" },
		{ AF_IUCV, "IUCV" }, { AF_NFC, "NFC" }, { AF_IEEE802154, "IEEE 802.15.4" },
		{ AF_CAIF, "CAIF" }, { AF_RXRPC, "RxRPC" }, { AF_ISDN, "ISDN" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].f == f)
			return names[i].name;
	return NULL;
}

/* the families of their own files (sockets.h); every other is refused at the dump */
static const struct sk_family_ops *const sk_families[] = {
	&unix_sk_ops, &inet_sk_ops, &inet6_sk_ops, &nl_sk_ops, &pkt_sk_ops,
};

static const struct sk_family_ops *sk_family(int family)
{
	size_t i;

	for (i = 0; i < sizeof(sk_families) / sizeof(sk_families[0]); i++)
		if (sk_families[i]->family == family)
			return sk_families[i];
	return NULL;
}

/* socket @s's family; one of no file (not one imgcr dumps: a tree file's own) goes to sk-inet.c's */
static const struct sk_family_ops *sk_family_of(const struct tree_sk *s)
{
	const struct sk_family_ops *o = sk_family(s->family);

	return o ? o : &inet_sk_ops;
}

static void free_xopts(struct tree_sk *s)
{
	int i;

	for (i = 0; i < s->nxopts; i++)
		free(s->xopts[i].val);
	free(s->xopts);
	s->xopts = NULL;
	s->nxopts = 0;
}

static int sk_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	unsigned long ino;
	struct tree_sk s, *old;
	const struct sk_family_ops *o;
	int sfd, fam, type, proto, r, inside = 0, early;

	/* an O_PATH fd of a socket file opens nothing: files-reg.c takes it */
	if (strncmp(p->link, "socket:", 7)) {
		if (!S_ISSOCK(p->st.st_mode) || (p->flags & O_PATH))
			return FD_OTHER;
		return fd_refuse(p, "socket: %s: an open socket file that is not a socket", p->link);
	}
	if (sscanf(p->link, "socket:[%lu]", &ino) != 1)
		return fd_refuse(p, "socket: cannot parse %s", p->link);
	f->ino = ino;
	sk_ext_unix = c->ext_unix_sk;
	old = tree_sk_find(c->t, ino);
	if (old)
		return FD_DESCRIBED;	/* another fd of a socket already described */

	sfd = fd_steal(p);
	if (sfd < 0) {
		pr_perror("pid %d fd %d: %s: pidfd_getfd, to read the socket", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	/* imgcr's network namespace, or the tree's own: read inside it (sk_netns_of) */
	r = sk_netns_of(c, p, sfd, &inside);
	if (r != FD_DESCRIBED) {
		close(sfd);
		return r;
	}
	if (sk_getint(sfd, SOL_SOCKET, SO_DOMAIN, &fam) || sk_getint(sfd, SOL_SOCKET, SO_TYPE, &type) ||
	    sk_getint(sfd, SOL_SOCKET, SO_PROTOCOL, &proto)) {
		pr_perror("pid %d fd %d: %s: cannot read its family, type and protocol", p->pid,
			  p->fd, p->link);
		close(sfd);
		return FD_FAILED;
	}
	if (inside && sk_netns_switch(1) < 0) {
		close(sfd);
		return FD_FAILED;
	}
	memset(&s, 0, sizeof(s));
	s.ino = ino;
	s.family = fam;
	s.type = type;
	s.proto = fam == AF_UNIX ? 0 : proto;
	s.peek_off = -1;
	o = sk_family(fam);
	/* UDP: the options first, so a receive option refuses a queue before it is peeked at */
	early = o && sk_is_udp(&s);
	r = early ? sk_xopts_dump(p, sfd, &s) : FD_DESCRIBED;
	if (o) {
		if (r == FD_DESCRIBED)
			r = o->dump(c, p, sfd, &s);
	} else if (family_name(fam))
		r = fd_refuse(p, "%s: %s sockets are not supported", p->link, family_name(fam));
	else
		r = fd_refuse(p, "%s: sockets of family %d are not supported", p->link, fam);
	/* the options of sk-opts.c's table, for every family */
	if (r == FD_DESCRIBED && !early)
		r = sk_xopts_dump(p, sfd, &s);
	if (inside && sk_netns_switch(0) < 0)
		r = FD_FAILED;
	close(sfd);
	if (r == FD_DESCRIBED)
		*tree_sk_add(c->t, ino) = s;
	else
		free_xopts(&s);
	return r;
}

static int sk_check(const struct tree *t)
{
	return unix_sk_check(t);
}

static struct sk_restore *rs;

static void sk_finish(int killed)
{
	/* the network lock of connections in the tree's namespace is there */
	int in = sk_netns_switch(1) == 1;

	tcp_sk_finish(killed);
	if (in)
		sk_netns_switch(0);
	sk_netns_free();
	skq_dump_free();	/* the fds in flight the peeks gave imgcr */
}

int sk_tcp_will_repair(const struct tree_sk *s)
{
	/* ESTABLISHED, FIN-WAIT-1/2, CLOSE-WAIT, LAST-ACK, CLOSING: sk-tcp.c */
	return sk_is_tcp(s) && (s->state == 1 || s->state == 4 || s->state == 5 ||
				s->state == 8 || s->state == 9 || s->state == 11);
}

/* raw (IPv4, IPv6) and packet sockets: they depend on no other socket of the tree */
static int sk_made_late(const struct tree_sk *s)
{
	return ((s->family == AF_INET || s->family == AF_INET6) && s->type == SOCK_RAW) ||
	       s->family == AF_PACKET;
}

static int sk_restore_all(struct fd_restore *fr)
{
	const struct tree *t = fr->t;
	char what[256];
	int i;

	rs = calloc(1, sizeof(*rs));
	rs->t = t;
	rs->dir = fr->dir;
	rs->dirfd = fr->dirfd;
	rs->fr = fr;
	rs->fds = calloc(t->nsks + 1, sizeof(int));
	rs->dead = calloc(t->nsks + 1, sizeof(int));
	rs->bound = calloc(t->nsks + 1, sizeof(char *));
	rs->bound_dir = calloc(t->nsks + 1, sizeof(int));
	for (i = 0; i < t->nsks; i++)
		rs->fds[i] = rs->dead[i] = -1;
	/* established TCP connections last: bound after the listeners of their ports */
	pr_debug("sockets: making %d", t->nsks);
	for (i = 0; i < t->nsks; i++)
		if (!sk_tcp_will_repair(&t->sks[i]) && !sk_made_late(&t->sks[i]) &&
		    sk_family_of(&t->sks[i])->make(rs, i))
			return -1;
	/* raw and packet sockets after the UDP queues are filled: they would get a copy */
	for (i = 0; i < t->nsks; i++)
		if (sk_made_late(&t->sks[i]) && sk_family_of(&t->sks[i])->make(rs, i))
			return -1;
	pr_debug("sockets: established connections");
	for (i = 0; i < t->nsks; i++)
		if (sk_tcp_will_repair(&t->sks[i]) && inet_sk_ops.make(rs, i))
			return -1;
	pr_debug("sockets: unix queues");
	for (i = 0; i < t->nsks; i++)
		if (t->sks[i].family == AF_UNIX && unix_sk_fill(rs, i))
			return -1;
	pr_debug("sockets: unix connections by name");
	for (i = 0; i < t->nsks; i++)
		if (t->sks[i].family == AF_UNIX && unix_sk_connect(rs, i))
			return -1;
	pr_debug("sockets: options");
	for (i = 0; i < t->nsks; i++)
		if (sk_opts_restore(rs->fds[i], &t->sks[i], sk_what(&t->sks[i], what, sizeof(what))))
			return -1;
	for (i = 0; i < t->nsks; i++)
		if (rs->dead[i] >= 0) {
			close(rs->dead[i]);	/* the peer that had closed: closed again */
			rs->dead[i] = -1;
		}
	unix_sk_hidden_free();
	return 0;
}

/*
 * restore: file @i, a socket.  The first call restores every socket of the
 * tree at once (sk_restore_all: the order between them matters), every
 * call hands out a duplicate of its own socket.
 */
static int sk_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	struct tree_sk *s = tree_sk_find(r->t, f->ino);
	int fd;

	if (!s) {
		pr_err("%s: no sk record for socket:[%lu] in %s/tree", what, f->ino, r->dir);
		return -1;
	}
	if (!rs && sk_restore_all(r))
		return -1;
	fd = fcntl(rs->fds[s - r->t->sks], F_DUPFD_CLOEXEC, r->base);
	if (fd < 0) {
		pr_perror("%s: F_DUPFD", what);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int sk_after(struct fd_restore *r, int ok)
{
	int i, ret;

	skq_restore_free(r);	/* files in flight opened early and not taken */
	unix_sk_hidden_free();
	if (!rs)
		return 0;
	ret = tcp_sk_after(rs, ok);
	for (i = 0; i < rs->t->nsks; i++) {
		if (rs->fds[i] >= 0)
			close(rs->fds[i]);
		if (rs->dead[i] >= 0)
			close(rs->dead[i]);
	}
	/* relative to the directory it was bound in: never another's by a swap */
	for (i = 0; i < rs->nbound; i++) {
		if (!ok)
			trust_sock_unlink(rs->bound_dir[i], rs->bound[i]);
		close(rs->bound_dir[i]);
		free(rs->bound[i]);
	}
	free(rs->bound_dir);
	free(rs->fds);
	free(rs->dead);
	free(rs->bound);
	free(rs);
	rs = NULL;
	return ret;
}


static void sk_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " ino=%lu", x->ino);
}

static const char *sk_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (REC_NUM(r, "ino", 1, LLONG_MAX, x->ino))
		return "bad file record";
	return NULL;
}

void sk_addr_show(const struct tree_sk *s, char *out, size_t size)
{
	size_t n = strlen(out);
	char a[256], b[256];

	snprintf(out + n, size - n, " %s%s%s%s%s",
		 s->state == 10 ? "listening on " :
		 s->state == 1 && sk_is_tcp(s) ? "established " : "",
		 s->namelen ? sk_addr_str(s->name, s->namelen, a, sizeof(a)) : "unnamed",
		 s->peerlen || s->peer ? " -> " : "",
		 s->peerlen ? sk_addr_str(s->peername, s->peerlen, b, sizeof(b)) :
		 s->peer ? "peer" : "",
		 s->qlen ? " (data queued)" : "");
}

static void sk_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	const struct tree_file *f = &t->files[i];
	const struct tree_sk *s = tree_sk_find(t, f->ino);
	char w[128];

	(void)mode;
	if (!s)
		snprintf(out, size, "socket:[%lu] (no sk record)", f->ino);
	else
		sk_family_of(s)->show(s, strcpy(out, sk_what(s, w, sizeof(w))), size);
	if (s) {
		size_t n = strlen(out);

		for (int k = 0, c = 0; k < s->nskq; k++) {
			if (!s->skq[k].nfds)
				continue;	/* a datagram's sender only */
			n = strlen(out);
			snprintf(out + n, size - n, "%s", c++ ? "," : " fds in flight: files ");
			for (int j = 0; j < s->skq[k].nfds; j++) {
				n = strlen(out);
				snprintf(out + n, size - n, "%s%d", j ? "+" : "", s->skq[k].files[j]);
			}
		}
		n = strlen(out);
		if (s->shutdown && s->family != AF_UNIX)
			snprintf(out + n, size - n, " shut down for %s",
				 s->shutdown == 3 ? "both" : s->shutdown == 2 ? "writing" : "reading");
		sk_xopts_show(s, out, size);
	}
}

static void sk_rec_json(const struct tree *t, int i)
{
	printf(",\"ino\":%lu", t->files[i].ino);
}

const struct fd_kind socket_fd_kind = {
	.name = "socket",
	.type = TK_SK,
	.dump = sk_dump,
	.check = sk_check,
	.finish = sk_finish,
	.open = sk_open,
	.after = sk_after,
	.rec_write = sk_rec_write,
	.rec_read = sk_rec_read,
	.rec_show = sk_rec_show,
	.rec_json = sk_rec_json,
};

/* ---- the tree file: sk and skopt records (record.h; the format: imgcr-image(5)) ---- */

/* A socket address as hex ("-": none), and back (its length, -1: malformed). */
static void hex_addr(char *out, const unsigned char *a, int len)
{
	int i;

	if (len <= 0) {
		strcpy(out, "-");
		return;
	}
	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", a[i]);
}

static int unhex_addr(unsigned char *a, const char *in)
{
	size_t len = strlen(in), i;
	unsigned int b;

	if (!strcmp(in, "-"))
		return 0;
	if (len % 2 || len / 2 > TREE_SK_ADDR || len < 4)
		return -1;
	for (i = 0; i < len / 2; i++) {
		if (sscanf(in + 2 * i, "%2x", &b) != 1)
			return -1;
		a[i] = b;
	}
	return len / 2;
}

static void sk_records_write(FILE *f, const struct tree *t)
{
	static char v[2 * 8 * 4096 + 2];
	int i, j;

	for (i = 0; i < t->nsks; i++) {
		const struct tree_sk *s = &t->sks[i];
		char nm[2 * TREE_SK_ADDR + 2], pn[2 * TREE_SK_ADDR + 2];

		hex_addr(nm, s->name, s->namelen);
		hex_addr(pn, s->peername, s->peerlen);
		fprintf(f, "sk ino=%lu family=%d type=%d proto=%d state=%d peer=%lu backlog=%d sndbuf=%d rcvbuf=%d opts=0x%x rcvtimeo=%lld sndtimeo=%lld peekoff=%d shutdown=%d mode=0%o uid=%u gid=%u qlen=%zu name=%s peername=%s\n",
			s->ino, s->family, s->type, s->proto, s->state, s->peer, s->backlog,
			s->sndbuf, s->rcvbuf, s->opts, s->rcvtimeo_us, s->sndtimeo_us, s->peek_off,
			s->shutdown, s->mode, s->uid, s->gid, s->qlen, nm, pn);
		for (j = 0; j < s->nxopts; j++) {
			if (sk_xopt_format(&s->xopts[j], v, sizeof(v)))
				snprintf(v, sizeof(v), "?");	/* never: the reader refuses it */
			fprintf(f, "skopt ino=%lu name=%s value=%s\n", s->ino,
				sk_opt_name(s->xopts[j].idx), v);
		}
		skq_records_write(f, s);
	}
}

static const char *sk_record_read(struct tree *t, struct rec *r)
{
	const char *nm, *pn;
	struct tree_sk *s;
	unsigned long ino;

	if (REC_NUM(r, "ino", 1, LLONG_MAX, ino) || tree_sk_find(t, ino))
		return "bad sk record";
	s = tree_sk_add(t, ino);
	if (REC_NUM(r, "family", 1, 255, s->family) || REC_NUM(r, "type", 1, 15, s->type) ||
	    REC_NUM(r, "proto", 0, 255, s->proto) || REC_NUM(r, "state", 0, 15, s->state) ||
	    REC_NUM(r, "peer", 0, LLONG_MAX, s->peer) ||
	    REC_NUM(r, "backlog", 0, INT_MAX, s->backlog) ||
	    REC_NUM(r, "sndbuf", 0, INT_MAX, s->sndbuf) ||
	    REC_NUM(r, "rcvbuf", 0, INT_MAX, s->rcvbuf) || REC_NUM(r, "opts", 0, SKO_ALL, s->opts) ||
	    REC_NUM(r, "rcvtimeo", 0, LLONG_MAX, s->rcvtimeo_us) ||
	    REC_NUM(r, "sndtimeo", 0, LLONG_MAX, s->sndtimeo_us) ||
	    REC_NUM(r, "peekoff", -1, INT_MAX, s->peek_off) ||
	    REC_NUM(r, "shutdown", 0, 3, s->shutdown) || REC_NUM(r, "mode", 0, 07777, s->mode) ||
	    REC_NUM(r, "uid", 0, UINT32_MAX, s->uid) || REC_NUM(r, "gid", 0, UINT32_MAX, s->gid) ||
	    REC_NUM(r, "qlen", 0, LLONG_MAX, s->qlen) || !(nm = rec_val(r, "name")) ||
	    !(pn = rec_val(r, "peername")))
		return "bad sk record";
	s->namelen = unhex_addr(s->name, nm);
	s->peerlen = unhex_addr(s->peername, pn);
	if (s->namelen < 0 || s->peerlen < 0)
		return "bad sk record address";
	return NULL;
}

static const char *skopt_record_read(struct tree *t, struct rec *r)
{
	struct tree_sk *s = NULL;
	const char *name, *val;
	long long ino;

	if (!REC_NUM(r, "ino", 1, LLONG_MAX, ino))
		s = tree_sk_find(t, ino);
	if (!s)
		return "skopt record before its sk record";
	name = rec_val(r, "name");
	val = rec_val(r, "value");
	if (!name || !val || sk_xopt_parse(s, name, val))
		return "bad skopt record (an unknown or repeated option, or a bad value)";
	return NULL;
}

const struct tree_record sk_records[] = {
	{ "sk", sk_record_read, sk_records_write, NULL },	/* each followed by its skopt records */
	{ "skopt", skopt_record_read, NULL, NULL },
	{ "skq", skq_record_read, NULL, NULL },	/* after its sk and skopt records (sk-queue.c) */
	{ NULL, NULL, NULL, NULL }
};
