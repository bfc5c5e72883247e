// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets in the tree's own network namespace, at dump.
 *
 * A socket's network namespace (SIOCGSKNS) is either imgcr's, or the
 * tree's own one (the root task's, which net.c dumps and the restore makes
 * again: the ns-root makes the tree's sockets inside it), or the socket is
 * refused naming that namespace.  A socket of the tree's namespace is read
 * with imgcr inside it (setns, and back after each socket): sock_diag,
 * /proc/net, /proc/sys/net and the nft command of the network lock (its
 * child) are all per namespace.  A tree with a network namespace of its own
 * holding a socket of imgcr's is refused too (it would be made in the
 * new namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "log.h"
#include "ns.h"
#include "proc.h"
#include "sockets.h"

/* the tree's network namespace (-1: no socket in it), imgcr's own */
static int sk_netns = -1, sk_self_netns = -1;

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

int sk_netns_switch(int in)
{
	if (sk_netns < 0)
		return 0;
	if (!setns(in ? sk_netns : sk_self_netns, CLONE_NEWNET))
		return 1;
	pr_perror("cannot enter %s network namespace", in ? "the tree's" : "imgcr's own");
	return -1;
}

/* The cookie of a socket's network namespace (SO_NETNS_COOKIE, 5.14), 0 if unknown. */
static unsigned long long netns_cookie(int fd)
{
	unsigned long long v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &v, &l))
		return 0;
	return v;
}

/* without CAP_NET_ADMIN over it (SIOCGSKNS), the namespace cookie is compared with imgcr's */
int sk_netns_of(struct fd_dump *c, struct fd_parms *p, int sfd, int *inside)
{
	unsigned long long self = ns_ino(0, "net"), tree = 0;
	int own = c->t->ns && (c->t->ns->own & NS_BIT(NS_NET)), nsfd, e;
	struct stat st;

	if (own)
		tree = c->t->ns->ino[NS_NET];
	*inside = 0;
	nsfd = ioctl(sfd, SIOCGSKNS);
	if (nsfd < 0) {
		int me = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		unsigned long long a = netns_cookie(sfd), b = me >= 0 ? netns_cookie(me) : 0;

		e = errno;
		if (me >= 0)
			close(me);
		if (!own && a && a == b)
			return FD_DESCRIBED;
		if (!a || !b) {
			errno = e;
			pr_perror("pid %d fd %d: %s: cannot tell its network namespace (SIOCGSKNS, SO_NETNS_COOKIE)",
				  p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		return fd_refuse(p, "%s: its network namespace is not %s (SIOCGSKNS needs CAP_NET_ADMIN to tell which it is): sockets in another network namespace are not supported",
				 p->link, own ? "the tree's own" : "imgcr's");
	}
	if (fstat(nsfd, &st)) {
		pr_perror("pid %d fd %d: %s: its network namespace", p->pid, p->fd, p->link);
		close(nsfd);
		return FD_FAILED;
	}
	if (!own && st.st_ino == self) {
		close(nsfd);
		return FD_DESCRIBED;
	}
	if (own && st.st_ino == tree) {
		if (sk_netns < 0) {
			sk_self_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
			if (sk_self_netns < 0) {
				pr_perror("/proc/self/ns/net");
				close(nsfd);
				return FD_FAILED;
			}
			sk_netns = nsfd;
		} else {
			close(nsfd);
		}
		*inside = 1;
		return FD_DESCRIBED;
	}
	close(nsfd);
	if (st.st_ino == self)
		return fd_refuse(p, "%s: its network namespace net:[%llu] is imgcr's, not the tree's own (net:[%llu]), where the restore makes the tree's sockets: sockets in another network namespace than the tree's are not supported",
				 p->link, (unsigned long long)st.st_ino, tree);
	if (own)
		return fd_refuse(p, "%s: its network namespace net:[%llu] is neither imgcr's nor the tree's own (net:[%llu]): sockets in another network namespace are not supported",
				 p->link, (unsigned long long)st.st_ino, tree);
	return fd_refuse(p, "%s: its network namespace net:[%llu] is not imgcr's: sockets in another network namespace are not supported",
			 p->link, (unsigned long long)st.st_ino);
}

void sk_netns_free(void)
{
	if (sk_netns < 0)
		return;
	close(sk_netns);
	close(sk_self_netns);
	sk_netns = sk_self_netns = -1;
}
