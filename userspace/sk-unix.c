// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: stream, datagram and seqpacket.
 *
 * dump: sock_diag (NETLINK_SOCK_DIAG, unix_diag) lists every unix socket of
 * the network namespace once per dump with its type, state, peer inode,
 * queued connections (a listener's not yet accepted ones), the inode of its
 * socket file and its shutdown state; a copy of the fd (pidfd_getfd) gives
 * its name (getsockname), its peer's name, its options and its queued data
 * (sockets.c: peeked, never consumed).  A name bound to a path is kept as
 * an absolute path (a relative one is resolved from the task's cwd or
 * root, or from the socket's file itself (SIOCUNIXFILE), and marked
 * SKO_RELNAME: bound again by its last component from its directory, an
 * absolute one by its path, so getsockname gives the name it was bound
 * by) with the socket file's mode and owner; a socket whose file was
 * removed (or replaced by another file) is bound again by its path, the
 * file there now left as it is, and its own file removed once every
 * socket is connected (bind_hidden).  A datagram socket connected to a
 * socket closed since connects to a socket bound to its name, closed at
 * once; queued datagrams are sent again from a socket of their sender's
 * name (sender_of).
 *
 * The peers: two sockets of the tree that are each other's peer come
 * back connected with their data: a client and the socket a listener of
 * the tree accepted are connected to it and accepted again (the accepted
 * one's name is its listener's, the client's peer name too); a
 * socketpair, or a connection whose listener is gone, as a socketpair
 * (names unnamed).  Datagram sockets bound to a name are bound again and
 * connected to their peer's name.  A client whose connection was not yet
 * accepted by a listener of the tree connects to it again (it must not
 * have sent data yet: refused otherwise).  Connections queued on a
 * listener by processes outside the tree are reset (those clients see the
 * connection reset when the tree is killed).  A socket connected to a
 * socket outside the tree is refused, unless dump --ext-unix-sk: then it
 * connects again, at restore, to the same name as a new connection (its
 * peer is a new socket: a server's accepted one); nothing may be queued on
 * it.  A stream socket whose peer had closed is restored with its data and
 * end of file.
 *
 * The peer credentials (SO_PEERCRED, kept by sk-opts.c): a restorer running
 * as root makes each socketpair, listen() and connect() under the uid and
 * gid they had, and, when that pid was a task of the tree, in a process
 * with that very pid (peer_do(): the tree's tasks do not exist yet).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>

#include "log.h"
#include "proc.h"
#include "sockets.h"
#include "trust.h"

#ifndef TCP_ESTABLISHED
#define TCP_ESTABLISHED 1
#endif
#ifndef SIOCUNIXFILE
#define SIOCUNIXFILE (SIOCPROTOPRIVATE + 0)	/* linux/un.h: an O_PATH fd of the socket's file */
#endif
#define SK_ST_ESTABLISHED	1
#define SK_ST_CLOSE		7
#define SK_ST_LISTEN		10

/* One unix socket as sock_diag shows it. */
struct ud {
	unsigned long ino, peer;
	int type, state, shutdown;
	unsigned int rq, wq;
	unsigned long vfs_ino;
	int nicons;
	unsigned int *icons;
	int namelen;		/* UNIX_DIAG_NAME: sun_path's bytes */
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static struct ud *uds;
static int nuds;
static int uds_read;

static void ud_cb(void *msg, size_t len, void *arg)
{
	struct unix_diag_msg *m = msg;
	struct rtattr *a;
	struct ud *u;
	int alen;

	(void)arg;
	if (len < sizeof(*m))
		return;
	uds = realloc(uds, (nuds + 1) * sizeof(*uds));
	if (!uds) {
		pr_err("out of memory");
		exit(1);
	}
	u = &uds[nuds++];
	memset(u, 0, sizeof(*u));
	u->ino = m->udiag_ino;
	u->type = m->udiag_type;
	u->state = m->udiag_state;
	alen = len - NLMSG_ALIGN(sizeof(*m));
	for (a = (struct rtattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); RTA_OK(a, alen);
	     a = RTA_NEXT(a, alen)) {
		void *d = RTA_DATA(a);

		switch (a->rta_type) {
		case UNIX_DIAG_PEER:
			u->peer = *(uint32_t *)d;
			break;
		case UNIX_DIAG_VFS:
			u->vfs_ino = ((struct unix_diag_vfs *)d)->udiag_vfs_ino;
			break;
		case UNIX_DIAG_RQLEN:
			u->rq = ((struct unix_diag_rqlen *)d)->udiag_rqueue;
			u->wq = ((struct unix_diag_rqlen *)d)->udiag_wqueue;
			break;
		case UNIX_DIAG_NAME:
			u->namelen = RTA_PAYLOAD(a) < sizeof(u->name) ? RTA_PAYLOAD(a) : sizeof(u->name);
			memcpy(u->name, d, u->namelen);
			break;
		case UNIX_DIAG_SHUTDOWN:
			u->shutdown = *(uint8_t *)d;
			break;
		case UNIX_DIAG_ICONS:
			u->nicons = RTA_PAYLOAD(a) / sizeof(uint32_t);
			u->icons = malloc(RTA_PAYLOAD(a) + 1);
			if (u->icons)
				memcpy(u->icons, d, RTA_PAYLOAD(a));
			else
				u->nicons = 0;
			break;
		}
	}
}

static int ud_read(void)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0u,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,
	};

	if (uds_read)
		return 0;
	if (sk_diag_dump(&req, sizeof(req), ud_cb, NULL)) {
		pr_perror("sock_diag: cannot list the unix sockets (NETLINK_SOCK_DIAG, unix_diag)");
		return -1;
	}
	uds_read = 1;
	return 0;
}

static struct ud *ud_find(unsigned long ino)
{
	int i;

	for (i = 0; i < nuds; i++)
		if (uds[i].ino == ino)
			return &uds[i];
	return NULL;
}

/*
 * The listener whose queue holds a connection from client socket @ino (its
 * not yet accepted connections are listed by their clients' inodes), or NULL.
 */
static struct ud *ud_listener_of(unsigned long ino)
{
	int i, j;

	for (i = 0; i < nuds; i++)
		for (j = 0; j < uds[i].nicons; j++)
			if (uds[i].icons[j] == ino)
				return &uds[i];
	return NULL;
}

/* sun_path of a unix address of @len bytes (not NUL-terminated), and its length */
static const char *sun_path(const unsigned char *a, int len, int *n)
{
	*n = len - (int)sizeof(sa_family_t);
	return (const char *)a + sizeof(sa_family_t);
}

/*
 * The path of socket @sfd's file (SIOCUNIXFILE: an O_PATH fd of the very
 * file it is bound to, wherever the name it was bound by leads now; needs
 * CAP_NET_ADMIN), as imgcr sees it, into @path; *@gone: the file was
 * removed.  0, or -1 (errno).
 */
static int sk_file_path(int sfd, unsigned long vfs_ino, char *path, size_t size, int *gone)
{
	char link[64];
	struct stat st;
	ssize_t l;
	int pfd = ioctl(sfd, SIOCUNIXFILE, 0);

	if (pfd < 0)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
	l = readlink(link, path, size - 1);
	if (l < 0 || fstat(pfd, &st)) {
		close(pfd);
		return -1;
	}
	close(pfd);
	path[l] = 0;
	if (st.st_ino != vfs_ino || path[0] != '/') {
		errno = ESTALE;
		return -1;
	}
	*gone = st.st_nlink == 0;
	if (*gone && l > 10 && !strcmp(path + l - 10, " (deleted)"))
		path[l - 10] = 0;
	return 0;
}

/*
 * A bound path: made absolute, its file's mode and owner (or SKO_UNLINKED).
 * A relative name is the kernel's (getsockname gives it as it was bound):
 * the directory it was bound from is found from the task's cwd and root,
 * and when neither leads to the socket's file (the task changed its cwd,
 * or the file was removed) from the file itself (SIOCUNIXFILE, as CRIU
 * does): then the file's name must be the name's last component.
 */
static int bound_path(struct fd_parms *p, int sfd, struct tree_sk *s, const struct ud *u)
{
	char path[PATH_MAX + 110], dir[PATH_MAX], link[64];
	static const char *const dirs[] = { "cwd", "root" };
	struct sockaddr_un sun;
	struct stat st;
	const char *sp, *last;
	int n, k, gone = 0, found = 0;
	ssize_t l;

	sp = sun_path(s->name, s->namelen, &n);
	n = strnlen(sp, n);
	if (sp[0] == '/') {
		snprintf(path, sizeof(path), "%.*s", n, sp);
	} else {
		for (k = 0; k < 2 && !found; k++) {
			snprintf(link, sizeof(link), "/proc/%d/%s", p->pid, dirs[k]);
			l = readlink(link, dir, sizeof(dir) - 1);
			if (l < 0) {
				pr_perror("pid %d fd %d: cannot read its %s, to find the relative name %.*s it is bound to",
					  p->pid, p->fd, dirs[k], n, sp);
				return FD_FAILED;
			}
			dir[l] = 0;
			snprintf(path, sizeof(path), "%s/%.*s", strcmp(dir, "/") ? dir : "", n, sp);
			found = !stat(path, &st) && S_ISSOCK(st.st_mode) && st.st_ino == u->vfs_ino;
		}
		if (!found) {
			if (sk_file_path(sfd, u->vfs_ino, path, sizeof(path), &gone))
				return fd_refuse(p, "%s: bound to the relative name %.*s, which leads neither from the task's cwd nor from its root to the socket's file (the cwd changed, or the file was removed), and the file's own path cannot be read (SIOCUNIXFILE: %s%s): not supported",
						 p->link, n, sp, strerror(errno),
						 errno == EPERM ? ", which needs CAP_NET_ADMIN" : "");
			last = memrchr(sp, '/', n);
			last = last ? last + 1 : sp;
			if (strcmp(strrchr(path, '/') + 1, last) ||
			    (int)strlen(last) != n - (int)(last - sp))
				return fd_refuse(p, "%s: bound to the relative name %.*s, but its file is %s%s (renamed, or reached through a symbolic link): the directory it was bound from is not known",
						 p->link, n, sp, path, gone ? ", removed" : "");
		}
		if (strlen(path) >= sizeof(sun.sun_path))
			return fd_refuse(p, "%s: bound to %s, longer than a unix socket name may be",
					 p->link, path);
		/* bound again from its directory by the name it was bound by */
		if (strnlen(sp, n) != strlen(strrchr(path, '/') + 1))
			pr_err("pid %d fd %d: note: %s, bound by the relative name %.*s, is bound again as %s from its directory (getsockname shows that name)",
			       p->pid, p->fd, p->link, n, sp, strrchr(path, '/') + 1);
		s->opts |= SKO_RELNAME;
		memset(s->name, 0, sizeof(s->name));
		sun.sun_family = AF_UNIX;
		memcpy(s->name, &sun.sun_family, sizeof(sun.sun_family));
		memcpy(s->name + sizeof(sa_family_t), path, strlen(path) + 1);
		s->namelen = sizeof(sa_family_t) + strlen(path) + 1;
	}
	if (gone || stat(path, &st) || !S_ISSOCK(st.st_mode) || st.st_ino != u->vfs_ino) {
		char *slash = strrchr(path, '/');
		int bad;

		/*
		 * bound again in its directory at the restore (bind_hidden):
		 * removed with its directory, it has nowhere to be bound
		 */
		*slash = 0;
		bad = stat(path[0] ? path : "/", &st) || !S_ISDIR(st.st_mode);
		*slash = '/';
		if (bad)
			return fd_refuse(p, "%s: bound to %s, whose socket file was removed and whose directory is gone too: it cannot be bound again in its directory: not supported",
					 p->link, path);
		s->opts |= SKO_UNLINKED;
		return FD_DESCRIBED;
	}
	s->mode = st.st_mode & 07777;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	return FD_DESCRIBED;
}

static int unix_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	struct sockaddr_storage ss;
	struct ud *u, *l;
	socklen_t len;
	int n, r, outq, connected;

	if (ud_read())
		return FD_FAILED;
	u = ud_find(s->ino);
	if (!u) {
		pr_err("pid %d fd %d: %s: sock_diag does not list this unix socket", p->pid, p->fd,
		       p->link);
		return FD_FAILED;
	}
	if (s->type != SOCK_STREAM && s->type != SOCK_DGRAM && s->type != SOCK_SEQPACKET)
		return fd_refuse(p, "%s: unix sockets of type %d are not supported", p->link, s->type);
	s->state = u->state;
	s->peer = u->peer;
	s->shutdown = u->shutdown & 3;
	len = sizeof(ss);
	if (getsockname(sfd, (struct sockaddr *)&ss, &len)) {
		pr_perror("pid %d fd %d: %s: getsockname", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	s->namelen = len > sizeof(sa_family_t) && len <= TREE_SK_ADDR ? (int)len : 0;
	memcpy(s->name, &ss, s->namelen);
	len = sizeof(ss);
	connected = !getpeername(sfd, (struct sockaddr *)&ss, &len);
	if (connected && len > sizeof(sa_family_t) && len <= TREE_SK_ADDR) {
		s->peerlen = len;
		memcpy(s->peername, &ss, len);
	}
	if (s->namelen) {
		sun_path(s->name, s->namelen, &n);
		if (n > 0 && s->name[sizeof(sa_family_t)]) {
			r = bound_path(p, sfd, s, u);
			if (r != FD_DESCRIBED)
				return r;
		}
	}
	if (sk_opts_dump(p, sfd, s))
		return FD_FAILED;
	if (s->state == SK_ST_LISTEN) {
		s->backlog = u->wq;
		return FD_DESCRIBED;
	}
	/* a connection a listener has not accepted yet: connected again at restore */
	l = s->state == SK_ST_ESTABLISHED ? ud_listener_of(s->ino) : NULL;
	if (l && (ioctl(sfd, SIOCOUTQ, &outq) || outq > 0)) {
		char nm[256];

		return fd_refuse(p, "%s: connected to %s but not yet accepted, with data already sent: not supported",
				 p->link, sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
	}
	/*
	 * a datagram socket connected to a socket that was closed since: it
	 * still holds it (getpeername gives its name, a send ECONNREFUSED),
	 * which sock_diag shows as peer 0 (a datagram socket another one
	 * connected to is established too, with no peer: getpeername fails)
	 */
	if (s->type == SOCK_DGRAM && connected && !s->peer && !l)
		s->opts |= SKO_PEERDEAD;
	if (s->type == SOCK_DGRAM)
		return sk_queue_dump(c, p, sfd, s, -1);
	if (ioctl(sfd, SIOCINQ, &n)) {
		pr_perror("pid %d fd %d: %s: SIOCINQ", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	return sk_queue_dump(c, p, sfd, s, n);
}

/*
 * Whether a socket can be bound at restore to the name @a (@len bytes),
 * a closed peer's or a queued datagram's sender's (@tree_ok: the socket of
 * the tree bound to it sends it): NULL, or why not, in @why.
 */
static const char *name_unusable(const struct tree *t, const unsigned char *a, int len, int tree_ok,
				 char *why, size_t size)
{
	char dir[PATH_MAX];
	const char *sp;
	struct stat st;
	int n, k;

	sp = sun_path(a, len, &n);
	for (k = 0; tree_ok && k < t->nsks; k++)
		if (t->sks[k].family == AF_UNIX && t->sks[k].type == SOCK_DGRAM &&
		    t->sks[k].namelen == len && !memcmp(t->sks[k].name, a, len))
			return NULL;
	if (sp[0] && sp[0] != '/')
		return "it is a relative name (the directory it was bound from is not known)";
	if (!sp[0]) {
		for (k = 0; k < nuds; k++)
			if (uds[k].namelen == n && !memcmp(uds[k].name, sp, n)) {
				snprintf(why, size, "another socket, socket:[%lu], is bound to it now",
					 uds[k].ino);
				return why;
			}
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)strnlen(sp, n), sp);
	*strrchr(dir, '/') = 0;
	if (stat(dir[0] ? dir : "/", &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, size, "its directory %s is gone", dir);
		return why;
	}
	return NULL;
}

int unix_sk_check(const struct tree *t)
{
	char nm[256], w[128], wb[PATH_MAX + 64];
	const char *why;
	int i;

	for (i = 0; i < t->nsks; i++) {
		struct tree_sk *s = &t->sks[i];
		const struct tree_file *f = sk_file_of(t, s->ino);
		struct tree_sk *peer;
		struct ud *l;
		int j;

		if (s->family != AF_UNIX || !f)
			continue;
		if ((s->opts & SKO_PEERDEAD) && s->peerlen &&
		    (why = name_unusable(t, s->peername, s->peerlen, 0, wb, sizeof(wb)))) {
			pr_err("pid %d fd %d: %s: connected to a socket closed since, bound to %s, which cannot be bound again at restore to connect to: %s",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)),
			       sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)), why);
			return -1;
		}
		for (j = 0; j < s->nskq; j++)
			if (s->skq[j].fromlen &&
			    (why = name_unusable(t, s->skq[j].from, s->skq[j].fromlen, 1, wb, sizeof(wb)))) {
				pr_err("pid %d fd %d: %s: queued datagram %d was sent from %s, a name no socket of the tree has, which cannot be bound again at restore to send it from: %s",
				       f->pid, f->fd, sk_what(s, w, sizeof(w)), s->skq[j].seq,
				       sk_addr_str(s->skq[j].from, s->skq[j].fromlen, nm, sizeof(nm)), why);
				return -1;
			}
		if (s->state == SK_ST_LISTEN) {
			struct ud *u = ud_find(s->ino);
			int outside = 0;

			for (j = 0; u && j < u->nicons; j++)
				outside += !tree_sk_find(t, u->icons[j]);
			if (outside)
				pr_err("pid %d fd %d: note: %d connection(s) queued on the listening socket %s by processes outside the tree are reset at the dump",
				       f->pid, f->fd, outside, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
			continue;
		}
		l = s->state == SK_ST_ESTABLISHED ? ud_listener_of(s->ino) : NULL;
		peer = l ? tree_sk_find(t, l->ino) : NULL;
		if (peer) {
			/* not yet accepted by a listener of the tree: connects to it again */
			memcpy(s->peername, peer->name, peer->namelen);
			s->peerlen = peer->namelen;
			s->opts |= SKO_PENDING;
			continue;
		}
		if (l) {
			pr_err("pid %d fd %d: %s: connected to %s, a listener outside the tree, not yet accepted: not supported",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)),
			       sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
			return -1;
		}
		if (!s->peer)
			continue;
		peer = tree_sk_find(t, s->peer);
		if (peer && peer->peer != s->ino && !s->peerlen) {
			pr_err("pid %d fd %d: %s: connected to socket:[%lu] of the tree, which has no name to connect to again",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)), s->peer);
			return -1;
		}
		/* connect to the name the peer is bound to again (made absolute) */
		if (peer && peer->peer != s->ino && peer->namelen) {
			memcpy(s->peername, peer->name, peer->namelen);
			s->peerlen = peer->namelen;
		}
		if (peer)
			continue;
		if (!sk_ext_unix) {
			pr_err("pid %d fd %d: %s: connected to %s (socket:[%lu]) outside the tree: not supported (imgcr dump --ext-unix-sk connects it again at restore)",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)),
			       s->peerlen ? sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)) :
			       "an unnamed socket", s->peer);
			return -1;
		}
		if (!s->peerlen) {
			pr_err("pid %d fd %d: %s: connected to socket:[%lu] outside the tree, which has no name to connect to again",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)), s->peer);
			return -1;
		}
		if (s->qlen && s->type != SOCK_DGRAM) {
			pr_err("pid %d fd %d: %s: connected to %s outside the tree, with data queued from it: not supported",
			       f->pid, f->fd, sk_what(s, w, sizeof(w)),
			       sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
			return -1;
		}
		s->opts |= SKO_EXTERNAL;
	}
	return 0;
}

/* restore */

static int unix_sk_make(struct sk_restore *r, int i);

static int sk_index(const struct tree *t, unsigned long ino)
{
	struct tree_sk *s = ino ? tree_sk_find(t, ino) : NULL;

	return s ? (int)(s - t->sks) : -1;
}

/* Whether socket @i comes back as a socketpair with its peer (or a closed end). */
static int is_pair(const struct tree *t, int i)
{
	const struct tree_sk *s = &t->sks[i];
	int j = sk_index(t, s->peer);

	if (s->state == SK_ST_LISTEN || (s->opts & SKO_PENDING))
		return 0;
	if (!s->peer && s->type == SOCK_DGRAM)	/* its peer, unnamed, closed: the other end closed */
		return (s->opts & SKO_PEERDEAD) && !s->peerlen;
	if (!s->peer)
		return s->state == SK_ST_ESTABLISHED;	/* peer closed */
	if (j < 0 || t->sks[j].peer != s->ino)
		return 0;
	return s->type != SOCK_DGRAM || (!s->namelen && !t->sks[j].namelen);
}

/*
 * A stale socket file at @base in @dirfd, the cwd (no socket bound to it),
 * is removed; 0, or -1 (printed).
 */
static int clear_stale(int dirfd, const char *base, const char *path, int type)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r, e;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		pr_err("%s exists and is not a socket: cannot bind a unix socket there", path);
		return -1;
	}
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", base);
	r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	e = errno;
	close(fd);
	if (!r || e != ECONNREFUSED) {
		pr_err("%s: a live socket is bound to it (connect: %s): cannot bind the restored socket there",
		       path, r ? strerror(e) : "it accepts");
		return -1;
	}
	if (unlinkat(dirfd, base, 0)) {
		pr_perror("cannot remove the stale socket file %s", path);
		return -1;
	}
	return 0;
}

/*
 * Socket files kept at a temporary name: a socket whose file had been
 * removed (or replaced) before the dump is bound by its path, whatever
 * file is there now, and its file moved away at once, to a name of its
 * own in the same directory, until every socket is connected (a socket
 * connected to it connects to that name: getpeername gives the name the
 * socket was bound by, not the path it was reached by), then removed.
 */
struct hidden {
	int dirfd;		/* trust_dir_open() */
	char tmp[48];		/* its name there */
	char abs[PATH_MAX + 64];	/* its path, to reach it */
	int sk;			/* t->sks index; -1: a temporary socket's */
};
static struct hidden *hid;
static int nhid, hid_seq;

static void hidden_drop(int k)
{
	if (hid[k].dirfd < 0)
		return;
	if (unlinkat(hid[k].dirfd, hid[k].tmp, 0) && errno != ENOENT)
		pr_perror("cannot remove the socket file %s", hid[k].abs);
	close(hid[k].dirfd);
	hid[k].dirfd = -1;
}

void unix_sk_hidden_free(void)
{
	int k;

	for (k = 0; k < nhid; k++)
		hidden_drop(k);
	free(hid);
	hid = NULL;
	nhid = 0;
}

static int hidden_of(int sk)
{
	int k;

	for (k = 0; k < nhid; k++)
		if (hid[k].sk == sk && hid[k].dirfd >= 0)
			return k;
	return -1;
}

/*
 * Bind @fd by @sun at @base in @dirfd (the cwd), the directory @dir,
 * leaving the file that is there now (another file, a FIFO, another
 * socket's, live or not) where it is: it is moved to a temporary name,
 * the socket bound, its file moved to another temporary name (kept in
 * hid[] with @sk), and the file that was there put back (the path lacks
 * it between the two renames; CRIU does the same for a removed socket
 * whose path is taken, criu/sk-unix.c).  0, or -1 (printed).
 */
static int bind_hidden(int dirfd, const char *dir, const char *base, int fd,
		       const struct sockaddr_un *sun, int sk, const char *what)
{
	char aside[48];
	struct hidden *h;
	struct stat st;
	int moved = 0, ret = -1;

	if (!fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		snprintf(aside, sizeof(aside), ".imgcr-%d-%d", getpid(), hid_seq++);
		if (renameat2(dirfd, base, dirfd, aside, RENAME_NOREPLACE)) {
			pr_perror("%s: cannot move %s/%s aside to bind the socket by its name", what,
				  dir, base);
			return -1;
		}
		moved = 1;
	}
	if (bind(fd, (const struct sockaddr *)sun, sizeof(*sun))) {
		pr_perror("%s: cannot bind to %s/%s", what, dir, base);
		goto back;
	}
	hid = tree_grow(hid, nhid, sizeof(*hid));
	h = &hid[nhid];
	snprintf(h->tmp, sizeof(h->tmp), ".imgcr-%d-%d", getpid(), hid_seq++);
	snprintf(h->abs, sizeof(h->abs), "%s/%s", dir, h->tmp);
	h->sk = sk;
	if (renameat2(dirfd, base, dirfd, h->tmp, RENAME_NOREPLACE)) {
		pr_perror("%s: cannot move its socket file %s/%s to %s", what, dir, base, h->tmp);
		unlinkat(dirfd, base, 0);
		goto back;
	}
	h->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (h->dirfd < 0) {
		pr_perror("%s: F_DUPFD", what);
		unlinkat(dirfd, h->tmp, 0);
		goto back;
	}
	nhid++;
	ret = 0;
back:
	if (moved && renameat2(dirfd, aside, dirfd, base, RENAME_NOREPLACE)) {
		pr_perror("%s: cannot put %s/%s back (it is %s/%s)", what, dir, base, dir, aside);
		ret = -1;
	}
	return ret;
}

/*
 * Bind @fd to the unix address @a (@alen bytes): an abstract name, or an
 * absolute path, bound by the path or (@relname) by its last component
 * from its directory.  @s: a socket of the tree (its file's mode and
 * owner), or NULL.  @hide: the file at the path is left as it is, the
 * socket's own kept at a temporary name (bind_hidden, with @sk).
 * 0, or -1 (printed).
 */
static int bind_addr(struct sk_restore *r, int fd, const unsigned char *a, int alen, int relname,
		     int hide, const struct tree_sk *s, int sk, const char *what)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[PATH_MAX], *slash, nm[256];
	struct trust_as as = { 0 };
	const char *sp, *base;
	int n, dirfd, cwd, ret = -1;

	sp = sun_path(a, alen, &n);
	if (!sp[0]) {
		if (bind(fd, (const struct sockaddr *)a, alen)) {
			pr_perror("%s: cannot bind to the abstract name %s", what,
				  sk_addr_str(a, alen, nm, sizeof(nm)));
			return -1;
		}
		return 0;
	}
	snprintf(path, sizeof(path), "%.*s", (int)strnlen(sp, n), sp);
	slash = strrchr(path, '/');
	if (!slash) {	/* the dump writes absolute names; an edited tree file */
		pr_err("%s: the name %s is not an absolute path", what, path);
		return -1;
	}
	base = slash + 1;
	*slash = 0;
	/* bind in the directory itself: the whole path may be longer than sun_path */
	/* no symbolic link of another user on the way (trust.c) */
	dirfd = trust_dir_open(path[0] ? path : "/");
	if (dirfd < 0) {
		*slash = '/';
		pr_perror("%s: cannot open the directory of %s%s", what, path,
			  errno == ELOOP ? " (a symbolic link not root's on the way)" : "");
		return -1;
	}
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/*
	 * the name it was bound by (getsockname gives it back): the absolute
	 * path, or the relative name, from the directory
	 */
	if (relname || strlen(path) + 1 + strlen(base) >= sizeof(sun.sun_path)) {
		sp = base;
	} else {
		*slash = '/';
		sp = path;
	}
	n = strnlen(sp, sizeof(sun.sun_path) - 1);
	memcpy(sun.sun_path, sp, n);
	sun.sun_path[n] = 0;
	*slash = 0;
	if (cwd < 0 || fchdir(dirfd)) {
		pr_perror("%s: cannot enter the directory %s", what, path);
		goto out;
	}
	/*
	 * maps that move ids: the sockets are made by root, a name bound by
	 * the task that holds the socket, with its rights (docs/containers.md)
	 */
	if (r->fr && r->fr->moves && s && trust_enter(trust_sk_holder(r->t, s->ino), &as, what)) {
		n = -1;
	} else if (hide) {
		n = bind_hidden(dirfd, path, base, fd, &sun, sk, what);
	} else {
		*slash = '/';
		n = clear_stale(dirfd, base, path, s ? s->type : SOCK_DGRAM);
		if (!n) {
			n = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
			if (n)
				pr_perror("%s: cannot bind to %s", what, path);
		}
	}
	if (trust_leave(&as))
		n = -1;
	*slash = '/';
	if (fchdir(cwd)) {
		pr_perror("cannot go back to the restorer's cwd");
		n = -1;
	}
	if (n || hide) {
		ret = n ? -1 : 0;
		goto out;
	}
	r->bound_dir[r->nbound] = dirfd;
	r->bound[r->nbound++] = strdup(base);
	dirfd = -1;	/* kept in bound_dir */
	if (s && trust_sock_own(r->bound_dir[r->nbound - 1], base, s->uid, s->gid, s->mode)) {
		pr_perror("%s: cannot give %s its mode 0%o and owner %u:%u", what, path, s->mode,
			  s->uid, s->gid);
		goto out;
	}
	ret = 0;
out:
	if (cwd >= 0)
		close(cwd);
	if (dirfd >= 0)
		close(dirfd);
	return ret;
}

static int bind_name(struct sk_restore *r, int i, int fd, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];

	return bind_addr(r, fd, s->name, s->namelen, !!(s->opts & SKO_RELNAME),
			 !!(s->opts & SKO_UNLINKED), s, i, what);
}

/*
 * The address to reach socket @i of the tree by (connect, sendto): its
 * name, or the temporary name of its file (bind_hidden).  Its length, or
 * -1 (printed).
 */
static int reach_addr(struct sk_restore *r, int i, struct sockaddr_un *sun, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];
	int k = hidden_of(i);

	if (k < 0) {
		memcpy(sun, s->name, s->namelen);
		return s->namelen;
	}
	if (strlen(hid[k].abs) >= sizeof(sun->sun_path)) {
		pr_err("%s: cannot reach socket:[%lu], whose file was removed, by the temporary name of its file %s: too long",
		       what, s->ino, hid[k].abs);
		return -1;
	}
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, hid[k].abs);
	return sizeof(sa_family_t) + strlen(sun->sun_path) + 1;
}

/*
 * SO_PEERCRED: the kernel gives a connection the credentials of the task
 * that makes it (socketpair(), listen(), connect()).  A restorer running as
 * root makes each one under the effective uid and gid socket @i's peer had
 * (kept at the dump), so a program that trusts its peer's uid (dbus...)
 * is not shown root; *@saved holds what to go back to.  An id this user
 * namespace does not map (a --pidns restore by a user, whose own ids are
 * the ones kept) is left.  0, or -1 (printed).
 */
struct saved_cred {
	int on;
	uid_t uid;
	gid_t gid;
	int dumpable, pdeath;	/* a change of euid clears both: put back */
};

static int cred_enter(const struct tree_sk *s, const char *what, struct saved_cred *sv)
{
	unsigned int uid, gid;

	sv->on = 0;
	if (!sk_peercred(s, &uid, &gid) || geteuid() != 0 || (uid == geteuid() && gid == getegid()))
		return 0;
	sv->uid = geteuid();
	sv->gid = getegid();
	sv->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (prctl(PR_GET_PDEATHSIG, &sv->pdeath, 0, 0, 0))
		sv->pdeath = 0;
	if (setresgid(-1, gid, -1)) {
		if (errno == EINVAL)
			return 0;
		pr_perror("%s: setegid(%u), for its peer credentials", what, gid);
		return -1;
	}
	if (setresuid(-1, uid, -1)) {
		int e = errno;

		if (setresgid(-1, sv->gid, -1))
			pr_perror("cannot go back to gid %u", (unsigned int)sv->gid);
		if (e == EINVAL)
			return 0;
		errno = e;
		pr_perror("%s: seteuid(%u), for its peer credentials", what, uid);
		return -1;
	}
	sv->on = 1;
	return 0;
}

static int cred_leave(struct saved_cred *sv)
{
	if (!sv->on)
		return 0;
	sv->on = 0;
	if (setresuid(-1, sv->uid, -1) || setresgid(-1, sv->gid, -1)) {
		pr_perror("cannot go back to the restorer's uid %u gid %u", (unsigned int)sv->uid,
			  (unsigned int)sv->gid);
		return -1;
	}
	if ((sv->dumpable > 0 && prctl(PR_SET_DUMPABLE, sv->dumpable, 0, 0, 0)) ||
	    (sv->pdeath && prctl(PR_SET_PDEATHSIG, sv->pdeath, 0, 0, 0))) {
		pr_perror("cannot set the restorer's dumpable flag and parent-death signal back");
		return -1;
	}
	return 0;
}

/*
 * SO_PEERCRED's pid is the task's that called socketpair(), listen() or
 * connect().  The sockets are made before the tree's tasks exist, so a root
 * restorer makes such a call, when that pid was a task of the tree, in a
 * short-lived process with that very pid (clone3() with set_tid, which
 * needs CAP_CHECKPOINT_RESTORE), sharing the restorer's fd table, under
 * the uid and gid kept; it exits at once, so the pid is free again when
 * the task is made.  The socket keeps the number (SO_PEERCRED, what
 * /proc shows); SO_PEERPIDFD, which needs the process itself, fails with
 * ESRCH.  Not in a new PID namespace (--pidns: the pids are the
 * namespace's, whose tasks are made later), nor for an ordinary user, nor
 * when the pid is taken: then the restorer makes the call itself, as
 * before (its pid).
 */
enum { PEER_PAIR, PEER_LISTEN, PEER_CONNECT };

struct peer_op {
	int kind;
	int fd;				/* listen, connect */
	int arg;			/* the socketpair's type, listen's backlog */
	const struct sockaddr *sa;	/* connect */
	socklen_t salen;
	int sv[2];			/* the socketpair made */
	pid_t maker;			/* the pid that made it */
};

static int peer_call(struct peer_op *o)
{
	if (o->kind == PEER_PAIR)
		return socketpair(AF_UNIX, o->arg | SOCK_CLOEXEC, 0, o->sv);
	if (o->kind == PEER_LISTEN)
		return listen(o->fd, o->arg);
	return connect(o->fd, o->sa, o->salen);
}

/* imgcr's children are in the tree's new PID namespace (restore.c, sk_late_open) */
static int peer_pidns;

void unix_sk_peer_pidns(int on)
{
	peer_pidns = on;
}

/* Are the restorer's children in its own PID namespace? */
static int same_pidns(void)
{
	static int same = -1;
	char a[64], b[64];
	ssize_t n, m;

	if (same < 0) {
		n = readlink("/proc/self/ns/pid", a, sizeof(a));
		m = readlink("/proc/self/ns/pid_for_children", b, sizeof(b));
		same = n > 0 && n == m && !memcmp(a, b, n);
	}
	return same;
}

/* 1: done by a process of pid @pid (its result in *@res, errno set); 0: not possible */
static int peer_as_pid(pid_t pid, const struct tree_sk *s, struct peer_op *o, int *res)
{
	struct clone_args ca = { .flags = CLONE_FILES, .exit_signal = SIGCHLD,
				 .set_tid = (uintptr_t)&pid, .set_tid_size = 1 };
	struct { int ret, err, sv[2]; } out = { -1, EIO, { -1, -1 } };
	unsigned int uid, gid;
	int p[2], st;
	pid_t c;

	if (pipe2(p, O_CLOEXEC))
		return 0;
	c = syscall(SYS_clone3, &ca, sizeof(ca));
	if (c == 0) {
		/* a copy of the restorer sharing its fds: raw system calls only, then gone */
		if (sk_peercred(s, &uid, &gid) &&
		    ((syscall(SYS_setresgid, -1, gid, -1) && errno != EINVAL) ||
		     (syscall(SYS_setresuid, -1, uid, -1) && errno != EINVAL))) {
			out.err = errno;
		} else {
			out.ret = peer_call(o);
			out.err = out.ret ? errno : 0;
			out.sv[0] = o->sv[0];
			out.sv[1] = o->sv[1];
		}
		if (write(p[1], &out, sizeof(out)) != sizeof(out))
			syscall(SYS_exit_group, 1);
		syscall(SYS_exit_group, 0);
	}
	if (c < 0) {
		close(p[0]);
		close(p[1]);
		return 0;	/* EPERM, EEXIST...: the restorer makes it itself */
	}
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	close(p[1]);
	if (read(p[0], &out, sizeof(out)) != sizeof(out))
		out.ret = -1, out.err = EIO;
	close(p[0]);
	o->sv[0] = out.sv[0];
	o->sv[1] = out.sv[1];
	o->maker = c;	/* its pid as the restorer sees it (SO_PEERCRED here) */
	*res = out.ret;
	errno = out.err;
	return 1;
}

/*
 * The call of @o for socket @s, by the task whose credentials its
 * SO_PEERCRED kept: 0, -1 (errno: the call failed, not printed), or -2
 * (printed).
 */
static int peer_do(const struct tree *t, const struct tree_sk *s, const char *what,
		   struct peer_op *o)
{
	struct saved_cred sv;
	pid_t pid = sk_peercred_pid(s);
	int k, r, e;

	o->sv[0] = o->sv[1] = -1;
	if (pid > 0 && geteuid() == 0 && peer_pidns)
		/* imgcr's children in the tree's PID namespace: the pid kept is the task's at the dump */
		for (k = 0; k < t->ntasks; k++)
			if ((t->tasks[k].dump_pid ? t->tasks[k].dump_pid : t->tasks[k].pid) == pid) {
				if (peer_as_pid(t->tasks[k].pid, s, o, &r))
					return r;
				break;
			}
	if (pid > 0 && geteuid() == 0 && !peer_pidns && same_pidns())
		for (k = 0; k < t->ntasks; k++)
			if (t->tasks[k].pid == pid) {
				if (peer_as_pid(pid, s, o, &r))
					return r;
				break;
			}
	o->maker = getpid();
	if (cred_enter(s, what, &sv))
		return -2;
	r = peer_call(o);
	e = errno;
	if (cred_leave(&sv))
		return -2;
	errno = e;
	return r;
}

/* The listener of the tree bound to the name @a of @len bytes, for sockets of @type; -1 if none. */
static int listener_named(const struct tree *t, int type, const unsigned char *a, int len)
{
	int k;

	if (len <= (int)sizeof(sa_family_t))
		return -1;
	for (k = 0; k < t->nsks; k++) {
		const struct tree_sk *l = &t->sks[k];

		if (l->family == AF_UNIX && l->type == type && l->state == SK_ST_LISTEN &&
		    !(l->opts & SKO_UNLINKED) && l->namelen == len && !memcmp(l->name, a, len))
			return k;
	}
	return -1;
}

/*
 * A connection between two sockets of the tree, @c the client and @a the
 * socket its listener @l accepted (a stream or seqpacket socket whose name
 * is the listener's): made again as it was, @c connecting to @l, which
 * accepts it, so both have their names (getsockname, getpeername) back.
 * 1: made; 0: not this kind of pair (a socketpair, or no listener of the
 * tree to connect to: the caller makes a socketpair); -1: failed (printed).
 */
static int pair_by_listener(struct sk_restore *r, int i)
{
	const struct tree *t = r->t;
	const struct tree_sk *x = &t->sks[i], *y;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int j = sk_index(t, x->peer), a, c, l, fd, afd, fl, tries;
	char what[128], nm[256];
	const char *sp;
	struct peer_op op = { 0 };
	struct ucred uc;
	socklen_t ul;
	int n;

	if (j < 0 || x->type == SOCK_DGRAM)
		return 0;
	y = &t->sks[j];
	/* the accepted one: its name is a listener's, and its peer has a peer name */
	if (y->peerlen > (int)sizeof(sa_family_t) &&
	    (l = listener_named(t, x->type, x->name, x->namelen)) >= 0)
		a = i, c = j;
	else if (x->peerlen > (int)sizeof(sa_family_t) &&
		 (l = listener_named(t, x->type, y->name, y->namelen)) >= 0)
		a = j, c = i;
	else
		return 0;
	sp = sun_path(t->sks[a].name, t->sks[a].namelen, &n);
	if (sp[0] && strnlen(sp, n) >= sizeof(sun.sun_path))
		return 0;	/* a path too long to connect to at once */
	if (unix_sk_make(r, l))
		return -1;
	sk_what(&t->sks[c], what, sizeof(what));
	fd = r->fds[c] = socket(AF_UNIX, t->sks[c].type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_perror("%s: socket", what);
		return -1;
	}
	if (t->sks[c].namelen > (int)sizeof(sa_family_t) && bind_name(r, c, fd, what))
		return -1;
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	/* the accepted socket's peer credentials are the connecting task's */
	op.kind = PEER_CONNECT;
	op.fd = fd;
	op.sa = (const struct sockaddr *)t->sks[a].name;
	op.salen = t->sks[a].namelen;
	n = peer_do(t, &t->sks[a], what, &op);
	if (n == -2)
		return -1;
	if (n) {
		pr_perror("%s: cannot connect again to %s, the listener of the tree that had accepted it",
			  what, sk_addr_str(t->sks[a].name, t->sks[a].namelen, nm, sizeof(nm)));
		return -1;
	}
	fcntl(fd, F_SETFL, fl);
	/* ours (made by this process), not a connection from outside in the meantime */
	for (tries = 0;; tries++) {
		afd = accept4(r->fds[l], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		ul = sizeof(uc);
		if (afd < 0 || tries > 64) {
			pr_perror("%s: cannot accept its connection again on %s", what,
				  sk_addr_str(t->sks[a].name, t->sks[a].namelen, nm, sizeof(nm)));
			if (afd >= 0)
				close(afd);
			return -1;
		}
		if (!getsockopt(afd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) && uc.pid == op.maker)
			break;
		close(afd);	/* a connection from outside the tree: reset */
	}
	fcntl(afd, F_SETFL, fcntl(afd, F_GETFL) & ~O_NONBLOCK);
	r->fds[a] = afd;
	return 1;
}

static int unix_sk_make(struct sk_restore *r, int i)
{
	const struct tree *t = r->t;
	const struct tree_sk *s = &t->sks[i];
	struct peer_op op = { 0 };
	char what[128];
	int j;

	if (r->fds[i] >= 0)
		return 0;
	sk_what(s, what, sizeof(what));
	if (is_pair(t, i)) {
		j = pair_by_listener(r, i);
		if (j)
			return j < 0 ? -1 : 0;
		/* both ends' peer credentials are the maker's */
		op.kind = PEER_PAIR;
		op.arg = s->type;
		j = peer_do(t, s, what, &op);
		if (j == -2)
			return -1;
		if (j) {
			pr_perror("%s: socketpair", what);
			return -1;
		}
		r->fds[i] = op.sv[0];
		j = sk_index(t, s->peer);
		if (j >= 0)
			r->fds[j] = op.sv[1];
		else
			r->dead[i] = op.sv[1];
		/* a datagram socket bound after its socketpair() */
		if (j < 0 && s->type == SOCK_DGRAM && s->namelen > (int)sizeof(sa_family_t) &&
		    bind_name(r, i, r->fds[i], what))
			return -1;
		return 0;
	}
	r->fds[i] = socket(AF_UNIX, s->type | SOCK_CLOEXEC, 0);
	if (r->fds[i] < 0) {
		pr_perror("%s: socket", what);
		return -1;
	}
	if (s->namelen > (int)sizeof(sa_family_t) && bind_name(r, i, r->fds[i], what))
		return -1;
	if (s->state == SK_ST_LISTEN) {
		/* its peer credentials (those its clients see) are the task's that called listen() */
		op.kind = PEER_LISTEN;
		op.fd = r->fds[i];
		op.arg = s->backlog;
		j = peer_do(t, s, what, &op);
		if (j == -2)
			return -1;
		if (j) {
			pr_perror("%s: listen(%d)", what, s->backlog);
			return -1;
		}
	}
	return 0;
}

/*
 * Datagram socket @i was connected to a socket closed since, bound to the
 * name in its peername: connected to a socket bound to that name (by its
 * path whatever file is there now, bind_hidden), which is closed at once.
 * 0, or -1 (printed).
 */
static int dead_peer(struct sk_restore *r, int i, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, len, k, n, ret = -1;
	const char *sp;
	char nm[256];

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_perror("%s: socket", what);
		return -1;
	}
	sp = sun_path(s->peername, s->peerlen, &n);
	if (bind_addr(r, fd, s->peername, s->peerlen, 0, 1, NULL, -2, what))
		goto out;
	k = sp[0] ? nhid - 1 : -1;
	if (k >= 0 && strlen(hid[k].abs) < sizeof(sun.sun_path)) {
		strcpy(sun.sun_path, hid[k].abs);
		len = sizeof(sa_family_t) + strlen(sun.sun_path) + 1;
	} else if (k < 0) {
		memcpy(&sun, s->peername, s->peerlen);
		len = s->peerlen;
	} else {
		pr_err("%s: the temporary name %s is too long to connect to", what, hid[k].abs);
		goto out;
	}
	if (connect(r->fds[i], (struct sockaddr *)&sun, len)) {
		pr_perror("%s: cannot connect to a socket bound to %s, closed again (its peer had closed)",
			  what, sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
		goto out;
	}
	ret = 0;
out:
	close(fd);
	if (sp[0] && nhid && hid[nhid - 1].sk == -2)
		hidden_drop(nhid - 1);
	return ret;
}

int unix_sk_connect(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	char what[128], nm[256];
	int fl, ret;

	sk_what(s, what, sizeof(what));
	if ((s->opts & SKO_PEERDEAD) && !is_pair(r->t, i) && dead_peer(r, i, what))
		return -1;
	if ((s->peer || (s->opts & SKO_PENDING)) && !is_pair(r->t, i) && s->state != SK_ST_LISTEN) {
		struct sockaddr_un sun;
		struct trust_as as;
		int e, j = sk_index(r->t, s->peer), len = s->peerlen;

		memcpy(&sun, s->peername, s->peerlen);
		/* a peer of the tree whose file was removed: by its file's temporary name */
		if (j >= 0 && s->type == SOCK_DGRAM && hidden_of(j) >= 0 &&
		    (len = reach_addr(r, j, &sun, what)) < 0)
			return -1;
		fl = fcntl(r->fds[i], F_GETFL);
		fcntl(r->fds[i], F_SETFL, fl | O_NONBLOCK);
		/* as the task that holds it: its path lookup, its SO_PEERCRED (trust.c) */
		if (trust_enter(trust_sk_holder(r->t, s->ino), &as, what))
			return -1;
		ret = connect(r->fds[i], (struct sockaddr *)&sun, len);
		e = errno;
		if (trust_leave(&as))
			return -1;
		errno = e;
		if (ret)
			pr_perror("%s: cannot connect again to %s%s", what,
				  sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)),
				  s->opts & SKO_EXTERNAL ? " (outside the tree, --ext-unix-sk)" : "");
		fcntl(r->fds[i], F_SETFL, fl);
		if (ret)
			return -1;
	}
	if ((s->shutdown & 2) && shutdown(r->fds[i], SHUT_WR) && errno != ENOTCONN) {
		pr_perror("%s: shutdown(SHUT_WR)", what);
		return -1;
	}
	if ((s->shutdown & 1) && shutdown(r->fds[i], SHUT_RD) && errno != ENOTCONN) {
		pr_perror("%s: shutdown(SHUT_RD)", what);
		return -1;
	}
	return 0;
}

/*
 * @len bytes sent on @fd without blocking (one datagram for datagram
 * sockets), the first sendmsg with SCM_RIGHTS of the @nfds fds @fds if
 * any; 0 or -1
 */
static int send_all(int fd, const char *p, size_t len, const int *fds, int nfds,
		    const struct sockaddr_un *to, int tolen)
{
	static char cbuf[CMSG_SPACE(SKQ_MAX_FDS * sizeof(int))];

	do {
		struct iovec iov = { (void *)p, len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t w;

		if (to) {
			mh.msg_name = (void *)to;
			mh.msg_namelen = tolen;
		}

		if (nfds > 0) {
			struct cmsghdr *cm;

			mh.msg_control = cbuf;
			mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
		}
		w = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		nfds = 0;	/* passed with the first part */
		p += w;
		len -= w;
	} while (len);
	return 0;
}

/* Raise @fd's send buffer to hold @len more bytes (root: beyond wmem_max). */
static void big_sndbuf(int fd, size_t len)
{
	int v = len + (1 << 16);

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/*
 * The socket a queued datagram of socket @i is sent again from, so that
 * the receiver's recvfrom gives the name it gave: the socket of the tree
 * bound to that name, or a temporary socket bound to it (by its path
 * whatever file is there now: bind_hidden), kept in *@tmp while the next
 * datagrams come from the same name (*@tmpq); -1 (printed).
 */
static int sender_of(struct sk_restore *r, const struct tree_skq *q, int *tmp,
		     const struct tree_skq **tmpq, const char *what)
{
	const struct tree *t = r->t;
	int k;

	for (k = 0; k < t->nsks; k++) {
		const struct tree_sk *x = &t->sks[k];

		if (x->family == AF_UNIX && x->type == SOCK_DGRAM && x->namelen == q->fromlen &&
		    !memcmp(x->name, q->from, q->fromlen) && r->fds[k] >= 0)
			return r->fds[k];
	}
	if (*tmp >= 0 && *tmpq && (*tmpq)->fromlen == q->fromlen &&
	    !memcmp((*tmpq)->from, q->from, q->fromlen))
		return *tmp;
	if (*tmp >= 0)
		close(*tmp);
	*tmpq = NULL;
	*tmp = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*tmp < 0) {
		pr_perror("%s: socket", what);
		return -1;
	}
	if (bind_addr(r, *tmp, q->from, q->fromlen, 0, 1, NULL, -3, what))
		return -1;
	/* its file is not needed to send from it */
	if (sun_path(q->from, q->fromlen, &k)[0] && hid[nhid - 1].sk == -3)
		hidden_drop(nhid - 1);
	*tmpq = q;
	return *tmp;
}

int unix_sk_fill(struct sk_restore *r, int i)
{
	const struct tree *t = r->t;
	const struct tree_sk *s = &t->sks[i];
	char path[PATH_MAX], what[128];
	size_t len, off = 0;
	const struct tree_skq *q, *tmpq = NULL;
	struct sockaddr_un to;
	char *data = NULL;
	int w = -1, anon = -1, tmp = -1, j, ret = -1, seq = 0, k, used = 0, pair, tolen = 0;
	int fds[SKQ_MAX_FDS];
	uint32_t n;

	sk_what(s, what, sizeof(what));
	if (s->qlen) {
		snprintf(path, sizeof(path), "sk-%lu.data", s->ino);
		data = read_text_dir(r->dirfd, path, &len);
		if (!data) {
			pr_perror("%s: cannot read %s", what, path);
			return -1;
		}
		if (len != s->qlen) {
			pr_err("%s: %s has %zu bytes, the tree says %zu", what, path, len, s->qlen);
			goto out;
		}
		/* the data comes from the peer, or else is sent to the socket's name */
		j = sk_index(t, s->peer);
		pair = is_pair(t, i);
		if (pair) {
			w = j >= 0 ? r->fds[j] : r->dead[i];
		} else if (s->type == SOCK_DGRAM && s->namelen > (int)sizeof(sa_family_t)) {
			tolen = reach_addr(r, i, &to, what);
			if (tolen < 0)
				goto out;
		} else {
			pr_err("%s: %zu bytes queued, but no peer to queue them again from", what, len);
			goto out;
		}
		while (off + sizeof(n) <= len) {
			memcpy(&n, data + off, sizeof(n));
			off += sizeof(n);
			if (n > len - off) {
				pr_err("%s: %s is truncated", what, path);
				goto out;
			}
			q = skq_find(s, seq);
			for (k = 0; q && k < q->nfds; k++) {
				/* the files in flight: restored (opened early if not yet) */
				fds[k] = skq_file_fd(r->fr, q->files[k]);
				if (fds[k] < 0) {
					pr_err("%s: cannot open file %d, in flight in its queued message %d",
					       what, q->files[k], seq);
					goto out;
				}
			}
			if (!pair && q && q->fromlen) {
				/* from a socket of the name it came from */
				w = sender_of(r, q, &tmp, &tmpq, what);
				if (w < 0)
					goto out;
			} else if (!pair) {
				/* from an unnamed socket */
				if (anon < 0)
					anon = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
				if (anon < 0) {
					pr_perror("%s: socket", what);
					goto out;
				}
				w = anon;
			}
			big_sndbuf(w, len);
			if (send_all(w, data + off, n, fds, q ? q->nfds : 0, pair ? NULL : &to, tolen)) {
				pr_perror("%s: cannot queue %u bytes again%s", what, n,
					  q && q->nfds ? " with their fds in flight (SCM_RIGHTS)" : "");
				goto out;
			}
			used += q != NULL;
			off += n;
			seq++;
		}
	}
	if (used != s->nskq) {
		pr_err("%s: %d of its skq records name no frame of its queued data", what,
		       s->nskq - used);
		goto out;
	}
	ret = 0;
out:
	if (anon >= 0)
		close(anon);
	if (tmp >= 0)
		close(tmp);
	free(data);
	return ret;
}

const struct sk_family_ops unix_sk_ops = {
	.family = AF_UNIX,
	.dump = unix_sk_dump,
	.make = unix_sk_make,
	.show = sk_addr_show,
};
