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
 * an absolute path (a relative one is resolved from the task's cwd, and
 * marked SKO_RELNAME: bound again by its last component from its
 * directory, an absolute one by its path, so getsockname gives the name
 * it was bound by) with the socket file's mode and owner; a socket whose
 * file was removed (or replaced) is bound again and its file removed.
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
 * gid they had; their pid is the restorer's (the tree's tasks do not
 * exist yet), as with CRIU.
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
#include <sys/un.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>

#include "log.h"
#include "proc.h"
#include "sockets.h"

#ifndef TCP_ESTABLISHED
#define TCP_ESTABLISHED 1
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

/* A bound path: made absolute, its file's mode and owner (or SKO_UNLINKED). */
static int bound_path(struct fd_parms *p, struct tree_sk *s, const struct ud *u)
{
	char path[PATH_MAX + 110], cwd[PATH_MAX], link[64];
	struct sockaddr_un sun;
	struct stat st;
	const char *sp;
	int n;
	ssize_t l;

	sp = sun_path(s->name, s->namelen, &n);
	n = strnlen(sp, n);
	if (sp[0] == '/') {
		snprintf(path, sizeof(path), "%.*s", n, sp);
	} else {
		snprintf(link, sizeof(link), "/proc/%d/cwd", p->pid);
		l = readlink(link, cwd, sizeof(cwd) - 1);
		if (l < 0) {
			pr_perror("pid %d fd %d: cannot read its cwd, to find the relative name %.*s it is bound to",
				  p->pid, p->fd, n, sp);
			return FD_FAILED;
		}
		cwd[l] = 0;
		snprintf(path, sizeof(path), "%s/%.*s", strcmp(cwd, "/") ? cwd : "", n, sp);
		if (stat(path, &st) || st.st_ino != u->vfs_ino)
			return fd_refuse(p, "%s: bound to the relative path %.*s, which is not %s (the task's cwd changed): not supported",
					 p->link, n, sp, path);
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
	if (stat(path, &st) || !S_ISSOCK(st.st_mode) || st.st_ino != u->vfs_ino) {
		s->opts |= SKO_UNLINKED;
		return FD_DESCRIBED;
	}
	s->mode = st.st_mode & 07777;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	return FD_DESCRIBED;
}

int unix_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	struct sockaddr_storage ss;
	struct ud *u, *l;
	socklen_t len;
	int n, r, outq;

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
	if (!getpeername(sfd, (struct sockaddr *)&ss, &len) && len > sizeof(sa_family_t) &&
	    len <= TREE_SK_ADDR) {
		s->peerlen = len;
		memcpy(s->peername, &ss, len);
	}
	if (s->namelen) {
		sun_path(s->name, s->namelen, &n);
		if (n > 0 && s->name[sizeof(sa_family_t)]) {
			r = bound_path(p, s, u);
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
	if (s->type == SOCK_DGRAM)
		return sk_queue_dump(c, p, sfd, s, -1);
	if (ioctl(sfd, SIOCINQ, &n)) {
		pr_perror("pid %d fd %d: %s: SIOCINQ", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	return sk_queue_dump(c, p, sfd, s, n);
}

int unix_sk_check(const struct tree *t)
{
	char nm[256], w[128];
	int i;

	for (i = 0; i < t->nsks; i++) {
		struct tree_sk *s = &t->sks[i];
		const struct tree_file *f = sk_file_of(t, s->ino);
		struct tree_sk *peer;
		struct ud *l;
		int j;

		if (s->family != AF_UNIX || !f)
			continue;
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
	if (!s->peer)
		return s->type != SOCK_DGRAM && s->state == SK_ST_ESTABLISHED;	/* peer closed */
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

static int bind_name(struct sk_restore *r, int i, int fd, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[PATH_MAX], *slash, nm[256];
	const char *sp, *base;
	int n, dirfd, cwd, ret = -1;

	sp = sun_path(s->name, s->namelen, &n);
	if (!sp[0]) {
		if (bind(fd, (struct sockaddr *)s->name, s->namelen)) {
			pr_perror("%s: cannot bind to the abstract name %s", what,
				  sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
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
	dirfd = open(path[0] ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (dirfd < 0) {
		pr_perror("%s: cannot open the directory of %s", what, path);
		return -1;
	}
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/*
	 * the name it was bound by (getsockname gives it back): the absolute
	 * path, or the relative name, from the directory
	 */
	sp = (s->opts & SKO_RELNAME) || strlen(path) >= sizeof(sun.sun_path) ? base : path;
	n = strnlen(sp, sizeof(sun.sun_path) - 1);
	memcpy(sun.sun_path, sp, n);
	sun.sun_path[n] = 0;
	if (cwd < 0 || fchdir(dirfd)) {
		pr_perror("%s: cannot enter the directory of %s", what, path);
		goto out;
	}
	n = clear_stale(dirfd, base, path, s->type);
	if (!n) {
		n = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
		if (n)
			pr_perror("%s: cannot bind to %s", what, path);
	}
	if (fchdir(cwd)) {
		pr_perror("cannot go back to the restorer's cwd");
		n = -1;
	}
	if (n)
		goto out;
	r->bound[r->nbound++] = strdup(path);
	if (s->opts & SKO_UNLINKED) {
		if (unlinkat(dirfd, base, 0)) {
			pr_perror("%s: cannot remove %s (removed before the dump)", what, path);
			goto out;
		}
		r->nbound--;
		free(r->bound[r->nbound]);
	} else if (fchownat(dirfd, base, s->uid, s->gid, AT_SYMLINK_NOFOLLOW) ||
		   fchmodat(dirfd, base, s->mode, 0)) {
		pr_perror("%s: cannot give %s its mode 0%o and owner %u:%u", what, path, s->mode,
			  s->uid, s->gid);
		goto out;
	}
	ret = 0;
out:
	if (cwd >= 0)
		close(cwd);
	close(dirfd);
	return ret;
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
	struct saved_cred sv;
	struct ucred uc;
	socklen_t ul;
	int n, e;

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
	if (cred_enter(&t->sks[a], what, &sv))
		return -1;
	n = connect(fd, (struct sockaddr *)t->sks[a].name, t->sks[a].namelen);
	e = errno;
	if (cred_leave(&sv))
		return -1;
	if (n) {
		errno = e;
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
		if (!getsockopt(afd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) && uc.pid == getpid())
			break;
		close(afd);	/* a connection from outside the tree: reset */
	}
	fcntl(afd, F_SETFL, fcntl(afd, F_GETFL) & ~O_NONBLOCK);
	r->fds[a] = afd;
	return 1;
}

int unix_sk_make(struct sk_restore *r, int i)
{
	const struct tree *t = r->t;
	const struct tree_sk *s = &t->sks[i];
	struct saved_cred cr;
	char what[128];
	int sv[2], j, e;

	if (r->fds[i] >= 0)
		return 0;
	sk_what(s, what, sizeof(what));
	if (is_pair(t, i)) {
		j = pair_by_listener(r, i);
		if (j)
			return j < 0 ? -1 : 0;
		/* both ends' peer credentials are the maker's */
		if (cred_enter(s, what, &cr))
			return -1;
		j = socketpair(AF_UNIX, s->type | SOCK_CLOEXEC, 0, sv);
		e = errno;
		if (cred_leave(&cr))
			return -1;
		if (j) {
			errno = e;
			pr_perror("%s: socketpair", what);
			return -1;
		}
		r->fds[i] = sv[0];
		j = sk_index(t, s->peer);
		if (j >= 0)
			r->fds[j] = sv[1];
		else
			r->dead[i] = sv[1];
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
		if (cred_enter(s, what, &cr))
			return -1;
		j = listen(r->fds[i], s->backlog);
		e = errno;
		if (cred_leave(&cr))
			return -1;
		if (j) {
			errno = e;
			pr_perror("%s: listen(%d)", what, s->backlog);
			return -1;
		}
	}
	return 0;
}

int unix_sk_connect(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	char what[128], nm[256];
	int fl, ret;

	sk_what(s, what, sizeof(what));
	if ((s->peer || (s->opts & SKO_PENDING)) && !is_pair(r->t, i) && s->state != SK_ST_LISTEN) {
		fl = fcntl(r->fds[i], F_GETFL);
		fcntl(r->fds[i], F_SETFL, fl | O_NONBLOCK);
		ret = connect(r->fds[i], (struct sockaddr *)s->peername, s->peerlen);
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

/* @len bytes sent on @fd without blocking (one datagram for datagram sockets); 0 or -1 */
static int send_all(int fd, const char *p, size_t len)
{
	do {
		ssize_t w = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
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

int unix_sk_fill(struct sk_restore *r, int i)
{
	const struct tree *t = r->t;
	const struct tree_sk *s = &t->sks[i];
	char path[PATH_MAX], what[128];
	size_t len, off = 0;
	char *data = NULL;
	int w = -1, tmp = -1, j, ret = -1;
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
		if (is_pair(t, i))
			w = j >= 0 ? r->fds[j] : r->dead[i];
		else if (s->type == SOCK_DGRAM && s->namelen > (int)sizeof(sa_family_t)) {
			tmp = w = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (w < 0 || connect(w, (struct sockaddr *)s->name, s->namelen)) {
				pr_perror("%s: cannot connect to it to queue its datagrams again", what);
				goto out;
			}
		} else {
			pr_err("%s: %zu bytes queued, but no peer to queue them again from", what, len);
			goto out;
		}
		big_sndbuf(w, len);
		while (off + sizeof(n) <= len) {
			memcpy(&n, data + off, sizeof(n));
			off += sizeof(n);
			if (n > len - off) {
				pr_err("%s: %s is truncated", what, path);
				goto out;
			}
			if (send_all(w, data + off, n)) {
				pr_perror("%s: cannot queue %u bytes again", what, n);
				goto out;
			}
			off += n;
		}
	}
	ret = 0;
out:
	if (tmp >= 0)
		close(tmp);
	free(data);
	return ret;
}
