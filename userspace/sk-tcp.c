// SPDX-License-Identifier: GPL-2.0
/*
 * Established TCP connections (IPv4 and IPv6), with the kernel's TCP
 * repair mode (TCP_REPAIR), and the network lock that holds their traffic
 * while the tree is frozen and until the restore.
 *
 * dump (a pidfd_getfd copy of the frozen task's socket):
 *   1. the lock: nftables rules dropping the connection's packets, both
 *      ways (table inet imgcr_PID, PID imgcr's; DIR/tcp-lock names it), so
 *      the peer's segments and retransmissions are neither answered (no
 *      RST once the tree is killed) nor half taken in;
 *   2. TCP_REPAIR on: the socket sends nothing more, and a socket closed in
 *      repair mode (the tree killed) goes away silently;
 *   3. what TCP_INFO, TCP_MAXSEG, TCP_TIMESTAMP, TCP_REPAIR_WINDOW give
 *      (options negotiated: window scales, SACK, timestamps; MSS; window),
 *      TCP_QUEUE_SEQ of each queue, SIOCINQ / SIOCOUTQ / SIOCOUTQNSD (data
 *      to read; sent and not acknowledged; not yet sent), the queues
 *      themselves by recv(MSG_PEEK) with TCP_REPAIR_QUEUE selecting each
 *      one (nothing consumed), the keepalive and user timeout settings:
 *      DIR/sk-INO.tcp (text), DIR/sk-INO.rcvq and DIR/sk-INO.sndq;
 *   4. at the end (tcp_sk_finish): the tree killed, repair mode and the
 *      lock stay; left running (--leave-running, or the dump failed),
 *      repair mode is switched off and the lock removed: the connection
 *      goes on, nothing changed.
 *
 * restore (in the restorer, phase 1 of sockets.c):
 *   socket, TCP_REPAIR on, bound to the same address (an IPv6 one that was
 *   not v6-only to [::]:PORT), TCP_QUEUE_SEQ of both queues set to where
 *   their saved data starts, TCP_MAXSEG for the segment size it had (taken
 *   back after), connect() (in repair mode
 *   it sends nothing: the socket is established at once), the options
 *   (TCP_REPAIR_OPTIONS, TCP_TIMESTAMP), the receive queue and the sent
 *   part of the send queue written back in repair mode (the latter counts
 *   as sent: retransmitted if not acknowledged), the window
 *   (TCP_REPAIR_WINDOW).  Once every file of the tree is open
 *   (tcp_sk_after): the lock removed, repair mode off (a window probe
 *   wakes the peer), the part not yet sent written normally.
 *
 * ESTABLISHED connections; FIN-WAIT-1/2 ones (the program shut its write
 * side; its FIN sent, acknowledged or not): restored established, then
 * shutdown(SHUT_WR) in repair mode queues the FIN as sent, after the data
 * (all of it counted as sent), at its sequence number: the peer gets it
 * again (or for the first time) and acknowledges it; CLOSE-WAIT ones (the
 * peer's FIN received): restored established, then that FIN is sent to the
 * restored socket again from the peer's address, through a raw socket
 * whose packets carry a mark the lock lets in (put_peer_fin).  LAST-ACK
 * (the peer's FIN, then ours: put_peer_fin, then shutdown) and CLOSING (a
 * simultaneous close: ours, then the peer's, which does not acknowledge
 * ours) get both, in that order, as CRIU's soccr; the state reached is
 * checked.  TIME-WAIT, SYN-SENT and SYN-RECV are refused by sk-inet.c,
 * naming the state.  Urgent data is not kept.
 *
 * Every IPv4/IPv6 socket is made again as its owner (inet_sk_socket: the
 * uid SO_REUSEPORT compares).  The part not yet sent is written with room
 * for all of it, the user's buffer sizes and locks put back after
 * (send_unsent).  --tcp-close (sk_tcp_close): nothing of a connection is
 * dumped, and the restore makes it a closed socket (tcp_make_closed).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "commands.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "sockets.h"

#define CAP_NET_ADMIN_BIT	12
/* the packet mark of the FIN sent to a restored socket: the lock lets it pass */
#define FIN_MARK	0x1c3e7f1

/*
 * the states restored: established, our FIN sent (FIN-WAIT-1/2), the
 * peer's received (CLOSE-WAIT), both (LAST-ACK: the peer's first; CLOSING:
 * ours first, a simultaneous close), as CRIU's soccr
 */
static int tcp_state_ok(int st)
{
	return st == TCP_ESTABLISHED || st == TCP_FIN_WAIT1 || st == TCP_FIN_WAIT2 ||
	       st == TCP_CLOSE_WAIT || st == TCP_LAST_ACK || st == TCP_CLOSING;
}

/* our FIN sent (or queued) */
static int tcp_fin_sent(int st)
{
	return st == TCP_FIN_WAIT1 || st == TCP_FIN_WAIT2 || st == TCP_LAST_ACK ||
	       st == TCP_CLOSING;
}

/* the peer's FIN received */
static int tcp_fin_rcvd(int st)
{
	return st == TCP_CLOSE_WAIT || st == TCP_LAST_ACK || st == TCP_CLOSING;
}

/* our FIN not yet acknowledged: SIOCOUTQ counts it */
static int tcp_fin_unacked(int st)
{
	return st == TCP_FIN_WAIT1 || st == TCP_LAST_ACK || st == TCP_CLOSING;
}

/* What DIR/sk-INO.tcp holds. */
struct tcp_img {
	unsigned long long snd_seq, rcv_seq;	/* TCP_QUEUE_SEQ: write_seq, rcv_nxt */
	unsigned long long outq, unsq, inq;	/* SIOCOUTQ, SIOCOUTQNSD, SIOCINQ */
	unsigned long long mss, snd_wscale, rcv_wscale, opts, ts;
	unsigned long long wl1, wnd, maxwnd, rwnd, rwup, havewin;	/* TCP_REPAIR_WINDOW */
	unsigned long long kidle, kintvl, kcnt, utimeout;
	unsigned long long fin;	/* 1: the write side was shut (FIN-WAIT-1/2...): FIN at snd_seq */
	unsigned long long finrcv;	/* 1: the peer's FIN was received (CLOSE-WAIT...): at rcv_seq */
	unsigned long long state;	/* TCP_ESTABLISHED... as dumped */
	unsigned long long snd_mss;	/* TCP_INFO's tcpi_snd_mss: the segment size in use (optional) */
};

static const struct {
	const char *key;
	size_t off;
} tcp_keys[] = {
#define K(f) { #f, offsetof(struct tcp_img, f) }
	K(snd_seq), K(rcv_seq), K(outq), K(unsq), K(inq), K(mss), K(snd_wscale), K(rcv_wscale),
	K(opts), K(ts), K(wl1), K(wnd), K(maxwnd), K(rwnd), K(rwup), K(havewin), K(kidle),
	K(kintvl), K(kcnt), K(utimeout), K(fin), K(finrcv), K(state), K(snd_mss),
#undef K
};

/*
 * --tcp-close (dump and restore, as CRIU's): the dump saves no connection
 * (no repair mode, no lock: the tree killed, the kernel closes them), the
 * restore makes each one a new TCP socket in state CLOSE, neither bound nor
 * connected, with its options (a read or a write says ENOTCONN or EPIPE).
 */
int sk_tcp_close;

/* dump: sockets in repair mode (our copies), the lock, the dump directory */
static int *held;
static int *held_reuse;	/* SO_REUSEADDR before repair mode, which leaving clears */
static int nheld;
static char lock_table[64];
static char *lock_dir;

/* restore: sockets left in repair mode until tcp_sk_after */
struct tcp_pending {
	int i;			/* t->sks[i] */
	char *unsent;		/* the part of the send queue not yet sent */
	size_t unsq;
};
static struct tcp_pending *pend;
static int npend;

static int setint(int fd, int level, int opt, int v)
{
	return setsockopt(fd, level, opt, &v, sizeof(v));
}

static int have_net_admin(void)
{
	char *text = read_text("/proc/self/status", NULL);
	const char *v = text ? status_field(text, "CapEff") : NULL;
	unsigned long long caps = v ? strtoull(v, NULL, 16) : 0;

	free(text);
	return !!(caps & (1ULL << CAP_NET_ADMIN_BIT));
}

/*
 * The owner of an inet socket: its inode's uid and gid, the fsuid and
 * fsgid of the task that called socket().  The kernel takes the uid
 * (sk_uid) for SO_REUSEPORT: a socket shares a port with reuseport
 * siblings (listening, or bound) only if its uid is theirs, so a socket
 * of uid 1000 made again by a root restorer would find its siblings
 * outside the tree "in use".  Kept in the sk record's uid= and gid=
 * (unix sockets keep their socket file's owner there).
 */
void inet_sk_owner(int sfd, struct tree_sk *s)
{
	struct stat st;

	if (!fstat(sfd, &st)) {
		s->uid = st.st_uid;
		s->gid = st.st_gid;
	}
}

/*
 * restore: socket() for @s, made as its owner (inet_sk_owner) when the
 * restorer is root (setfsuid/setfsgid for the call alone: nothing else
 * the restorer does changes; an image without an owner, uid=0, or a
 * restorer that is not root: made as the restorer, its own ids).
 */
int inet_sk_socket(const struct tree_sk *s, int type)
{
	int fd, err;

	if (geteuid() || (!s->uid && !s->gid))
		return socket(s->family, type, s->proto);
	setfsgid(s->gid);
	setfsuid(s->uid);
	fd = socket(s->family, type, s->proto);
	err = errno;
	setfsuid(0);
	setfsgid(getegid());
	errno = err;
	return fd;
}

int nft_path(char *path, size_t size)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
	char *env = getenv("PATH"), *copy, *tok, *save = NULL;
	int found = 0;
	size_t i;

	copy = strdup(env ? env : "");
	for (tok = strtok_r(copy, ":", &save); tok && !found; tok = strtok_r(NULL, ":", &save)) {
		snprintf(path, size, "%s/nft", tok);
		found = *tok && !access(path, X_OK);
	}
	free(copy);
	for (i = 0; !found && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, size, "%s/nft", dirs[i]);
		found = !access(path, X_OK);
	}
	return found ? 0 : -1;
}

/*
 * Run "nft -f -" with @script on its standard input.  0, or -1 with what
 * went wrong (nft's own message) in @err.
 */
static int run_nft(const char *script, char *err, size_t size)
{
	char path[PATH_MAX];
	int in[2], out[2], status, found;
	size_t i, n = 0;
	ssize_t r;
	pid_t pid;

	found = !nft_path(path, sizeof(path));
	if (!found) {
		snprintf(err, size, "the nft command (Debian package nftables) was not found in PATH, /usr/sbin or /sbin");
		return -1;
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		snprintf(err, size, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, size, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		clone_mask_restore();
		execl(path, "nft", "-f", "-", (char *)NULL);
		dprintf(2, "cannot run %s: %s", path, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* small scripts: they fit in the pipe */
	signal(SIGPIPE, SIG_IGN);
	if (write_all(in[1], script, strlen(script)))
		snprintf(err, size, "writing to nft: %s", strerror(errno));
	close(in[1]);
	err[0] = 0;
	while (n + 1 < size && (r = read(out[0], err + n, size - n - 1)) > 0)
		n += r;
	err[n] = 0;
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	while (n && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = 0;
	for (i = 0; i < n; i++)
		if (err[i] == '\n')
			err[i] = ' ';
	if (!n)
		snprintf(err, size, "nft -f - failed (status 0x%x)", status);
	return -1;
}

/* "ip" or "ip6" and the address of @a (a sockaddr_in or _in6; a v4-mapped address as IPv4) */
static const char *nft_addr(const unsigned char *a, char *buf, size_t size, unsigned int *port)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	sa_family_t fam;

	memcpy(&fam, a, sizeof(fam));
	if (fam == AF_INET) {
		memcpy(&s4, a, sizeof(s4));
		inet_ntop(AF_INET, &s4.sin_addr, buf, size);
		*port = ntohs(s4.sin_port);
		return "ip";
	}
	memcpy(&s6, a, sizeof(s6));
	*port = ntohs(s6.sin6_port);
	if (IN6_IS_ADDR_V4MAPPED(&s6.sin6_addr)) {
		inet_ntop(AF_INET, &s6.sin6_addr.s6_addr[12], buf, size);
		return "ip";
	}
	inet_ntop(AF_INET6, &s6.sin6_addr, buf, size);
	return "ip6";
}

/* the lock on the connection of @s (both ways); 0, or -1 with why in @err */
static int lock_conn(const char *dir, const struct tree_sk *s, char *err, size_t size)
{
	char script[2048], la[INET6_ADDRSTRLEN], ra[INET6_ADDRSTRLEN], path[PATH_MAX];
	unsigned int lp, rp;
	const char *f = nft_addr(s->name, la, sizeof(la), &lp);
	FILE *fp;

	nft_addr(s->peername, ra, sizeof(ra), &rp);
	int n = 0;

	if (!lock_table[0]) {
		snprintf(lock_table, sizeof(lock_table), "imgcr_%d", (int)getpid());
		/* the FIN the restore sends a socket whose peer had closed passes */
		n = snprintf(script, sizeof(script),
			     "add table inet %s\n"
			     "add chain inet %s in { type filter hook input priority -300; policy accept; }\n"
			     "add chain inet %s out { type filter hook output priority -300; policy accept; }\n"
			     "add rule inet %s in meta mark 0x%x accept\n",
			     lock_table, lock_table, lock_table, lock_table, FIN_MARK);
	}
	snprintf(script + n, sizeof(script) - n,
		 "add rule inet %s in %s saddr %s %s daddr %s tcp sport %u tcp dport %u drop\n"
		 "add rule inet %s out %s saddr %s %s daddr %s tcp sport %u tcp dport %u drop\n",
		 lock_table, f, ra, f, la, rp, lp,
		 lock_table, f, la, f, ra, lp, rp);
	if (run_nft(script, err, size))
		return -1;
	if (!lock_dir) {
		lock_dir = strdup(dir);
		snprintf(path, sizeof(path), "%s/tcp-lock", dir);
		fp = img_fcreate(path);
		if (!fp || fprintf(fp, "%s\n", lock_table) < 0 || fclose(fp)) {
			pr_perror("cannot write %s", path);
			snprintf(err, size, "cannot write DIR/tcp-lock");
			return -1;
		}
	}
	return 0;
}

static int unlock_table(const char *table, char *err, size_t size)
{
	char script[128];

	snprintf(script, sizeof(script), "delete table inet %s\n", table);
	return run_nft(script, err, size);
}

static int save_bytes(const char *path, const char *buf, size_t len)
{
	int fd = img_create(path, 0600);

	if (fd < 0 || write_all(fd, buf, len)) {
		pr_perror("cannot write %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * Peek at queue @q (TCP_RECV_QUEUE or TCP_SEND_QUEUE) of @sfd, in repair
 * mode: @len bytes into a new buffer (*@out).  0, or -1 (printed).
 */
static int peek_queue(const struct fd_parms *p, int sfd, int q, size_t len, char **out)
{
	const char *name = q == TCP_RECV_QUEUE ? "receive" : "send";
	char *buf;
	ssize_t n;

	*out = NULL;
	if (setint(sfd, IPPROTO_TCP, TCP_REPAIR_QUEUE, q)) {
		pr_perror("pid %d fd %d: %s: TCP_REPAIR_QUEUE (%s queue)", p->pid, p->fd, p->link, name);
		return -1;
	}
	/* one byte more: the queue must not hold more than its size said */
	buf = malloc(len + 1);
	if (!buf) {
		pr_err("pid %d fd %d: out of memory for a %zu-byte %s queue", p->pid, p->fd, len, name);
		return -1;
	}
	if (!len) {
		*out = buf;
		return 0;
	}
	do
		n = recv(sfd, buf, len + 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (size_t)n != len) {
		if (n < 0)
			pr_perror("pid %d fd %d: %s: peeking at its %s queue (%zu bytes)", p->pid, p->fd,
				  p->link, name, len);
		else
			pr_err("pid %d fd %d: %s: its %s queue gave %zd bytes where %zu were queued",
			       p->pid, p->fd, p->link, name, n, len);
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

static int get_seq(int sfd, int q, unsigned long long *v)
{
	int seq;

	if (setint(sfd, IPPROTO_TCP, TCP_REPAIR_QUEUE, q) || sk_getint(sfd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq))
		return -1;
	*v = (unsigned int)seq;
	return 0;
}

static int write_img(const char *path, const struct tcp_img *m)
{
	FILE *f = img_fcreate(path);
	size_t i;

	if (!f) {
		pr_perror("cannot create %s", path);
		return -1;
	}
	for (i = 0; i < sizeof(tcp_keys) / sizeof(tcp_keys[0]); i++)
		fprintf(f, "%s %llu\n", tcp_keys[i].key,
			*(const unsigned long long *)((const char *)m + tcp_keys[i].off));
	if (fclose(f)) {
		pr_perror("cannot write %s", path);
		return -1;
	}
	return 0;
}

static int read_img(int dirfd, const char *path, struct tcp_img *m)
{
	char key[32];
	unsigned long long v;
	unsigned int seen = 0;
	size_t i, nk = sizeof(tcp_keys) / sizeof(tcp_keys[0]);
	int fd = dir_open(dirfd, path, O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	if (!f) {
		pr_perror("cannot open %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	while (fscanf(f, "%31s %llu", key, &v) == 2) {
		for (i = 0; i < nk; i++)
			if (!strcmp(key, tcp_keys[i].key)) {
				*(unsigned long long *)((char *)m + tcp_keys[i].off) = v;
				seen |= 1u << i;
			}
	}
	fclose(f);
	/* snd_mss (the last key) may be missing: an image of an older imgcr */
	if ((seen | (1u << (nk - 1))) != (1u << nk) - 1) {
		pr_err("%s: incomplete (a key is missing)", path);
		return -1;
	}
	if (m->unsq > m->outq || m->outq > (1u << 30) || m->inq > (1u << 30)) {
		pr_err("%s: inconsistent queue sizes (outq %llu, unsent %llu, inq %llu)", path, m->outq,
		       m->unsq, m->inq);
		return -1;
	}
	return 0;
}

static int read_bytes(int dirfd, const char *path, size_t len, char **out)
{
	char *buf = malloc(len + 1);
	int fd = dir_open(dirfd, path, O_RDONLY);
	struct stat st;

	*out = NULL;
	if (!buf || fd < 0 || fstat(fd, &st) || (size_t)st.st_size != len || read_full(fd, buf, len)) {
		if (fd >= 0 && !fstat(fd, &st) && (size_t)st.st_size != len)
			pr_err("%s: %lld bytes where %zu were queued", path, (long long)st.st_size, len);
		else
			pr_perror("cannot read %s", path);
		free(buf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	*out = buf;
	return 0;
}

int tcp_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s)
{
	char conn[160], nm[64], err[1024], path[PATH_MAX];
	char *rq = NULL, *sq = NULL;
	struct tcp_repair_window w;
	struct tcp_img m = { 0 };
	struct tcp_info ti;
	unsigned long long seq2;
	socklen_t len;
	int fd, v, tries, reuse, ret = FD_FAILED;

	snprintf(conn, sizeof(conn), "%s TCP connection %s -> %s",
		 s->family == AF_INET ? "IPv4" : "IPv6", sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
		 sk_addr_str(s->peername, s->peerlen, conn + 120, 40));
	/* --tcp-close: closed at restore; nothing of the connection kept (no DIR/sk-INO.tcp) */
	if (sk_tcp_close)
		return FD_DESCRIBED;
	if (!s->namelen || !s->peerlen)
		return fd_refuse(p, "%s: %s: its addresses cannot be read", p->link, conn);
	if (!have_net_admin())
		return fd_refuse(p, "%s: %s: dumping an established connection needs CAP_NET_ADMIN in its network namespace (TCP_REPAIR, and the nftables rules that hold its traffic), which imgcr has not",
				 p->link, conn);
	if (lock_conn(c->dir, s, err, sizeof(err)))
		return fd_refuse(p, "%s: %s: cannot hold its traffic while the tree is frozen (no network lock, so it is not dumped): %s",
				 p->link, conn, err);
	fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		pr_perror("pid %d fd %d: dup", p->pid, p->fd);
		return FD_FAILED;
	}
	if (sk_getint(fd, SOL_SOCKET, SO_REUSEADDR, &reuse)) {
		pr_perror("pid %d fd %d: SO_REUSEADDR", p->pid, p->fd);
		close(fd);
		return FD_FAILED;
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON)) {
		if (errno == EPERM)
			ret = fd_refuse(p, "%s: %s: TCP_REPAIR refused (EPERM): it needs CAP_NET_ADMIN in the socket's network namespace",
					p->link, conn);
		else
			pr_perror("pid %d fd %d: %s: %s: TCP_REPAIR on", p->pid, p->fd, p->link, conn);
		close(fd);
		return ret;
	}
	held = realloc(held, (nheld + 1) * sizeof(*held));
	held_reuse = realloc(held_reuse, (nheld + 1) * sizeof(*held_reuse));
	held_reuse[nheld] = reuse;
	held[nheld++] = fd;

	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		pr_perror("pid %d fd %d: %s: TCP_INFO", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	/* a segment may have come before the lock: FIN-WAIT-1 to 2, a FIN */
	if (!tcp_state_ok(ti.tcpi_state))
		return fd_refuse(p, "%s: %s: its state changed during the dump (from %d to %d), to one imgcr does not restore",
				 p->link, conn, s->state, ti.tcpi_state);
	s->state = m.state = ti.tcpi_state;
	/* our FIN sent (or queued), acknowledged or not; the peer's received */
	m.fin = tcp_fin_sent(ti.tcpi_state);
	m.finrcv = tcp_fin_rcvd(ti.tcpi_state);
	m.opts = ti.tcpi_options & (TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE);
	m.snd_wscale = ti.tcpi_snd_wscale;
	m.rcv_wscale = ti.tcpi_rcv_wscale;
	if (sk_getint(fd, IPPROTO_TCP, TCP_MAXSEG, &v)) {
		pr_perror("pid %d fd %d: %s: TCP_MAXSEG", p->pid, p->fd, p->link);
		return FD_FAILED;
	}
	m.mss = v;
	m.snd_mss = ti.tcpi_snd_mss;
	if (m.opts & TCPI_OPT_TIMESTAMPS) {
		if (sk_getint(fd, IPPROTO_TCP, TCP_TIMESTAMP, &v)) {
			pr_perror("pid %d fd %d: %s: TCP_TIMESTAMP", p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		m.ts = (unsigned int)v;
	}
	len = sizeof(w);
	if (!getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, &len) && len == sizeof(w)) {
		m.havewin = 1;
		m.wl1 = w.snd_wl1;
		m.wnd = w.snd_wnd;
		m.maxwnd = w.max_window;
		m.rwnd = w.rcv_wnd;
		m.rwup = w.rcv_wup;
	}
	{
		static const int kopt[] = { TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_USER_TIMEOUT };
		unsigned long long *kv[] = { &m.kidle, &m.kintvl, &m.kcnt, &m.utimeout };
		size_t k;

		for (k = 0; k < 4; k++) {
			if (sk_getint(fd, IPPROTO_TCP, kopt[k], &v)) {
				pr_perror("pid %d fd %d: %s: keepalive settings", p->pid, p->fd, p->link);
				return FD_FAILED;
			}
			*kv[k] = v;
		}
	}
	/* the queues: the lock holds the traffic, but a segment may be on its way in; read again if so */
	for (tries = 0;; tries++) {
		int in, out, uns;

		free(rq);
		free(sq);
		rq = sq = NULL;
		if (get_seq(fd, TCP_RECV_QUEUE, &m.rcv_seq) || get_seq(fd, TCP_SEND_QUEUE, &m.snd_seq) ||
		    ioctl(fd, SIOCINQ, &in) || ioctl(fd, SIOCOUTQ, &out) || ioctl(fd, SIOCOUTQNSD, &uns)) {
			pr_perror("pid %d fd %d: %s: reading its sequence numbers and queue sizes", p->pid,
				  p->fd, p->link);
			goto out;
		}
		m.inq = in;
		/*
		 * the FIN takes a sequence number but no byte: write_seq, SIOCOUTQ
		 * (FIN-WAIT-1) and SIOCOUTQNSD (a FIN not sent yet) count it; the
		 * image holds the data alone, all as sent (the FIN follows it)
		 */
		m.outq = out - tcp_fin_unacked(ti.tcpi_state);
		m.unsq = m.fin ? 0 : (unsigned int)uns;
		/* the peek offset would make MSG_PEEK start further in */
		if (s->peek_off >= 0 && setint(fd, SOL_SOCKET, SO_PEEK_OFF, -1)) {
			pr_perror("pid %d fd %d: %s: SO_PEEK_OFF", p->pid, p->fd, p->link);
			goto out;
		}
		v = peek_queue(p, fd, TCP_RECV_QUEUE, m.inq, &rq) ||
		    peek_queue(p, fd, TCP_SEND_QUEUE, m.outq, &sq);
		if (s->peek_off >= 0 && setint(fd, SOL_SOCKET, SO_PEEK_OFF, s->peek_off)) {
			pr_perror("pid %d fd %d: %s: cannot put SO_PEEK_OFF back", p->pid, p->fd, p->link);
			goto out;
		}
		if (v)
			goto out;
		if (get_seq(fd, TCP_RECV_QUEUE, &seq2)) {
			pr_perror("pid %d fd %d: %s: TCP_QUEUE_SEQ", p->pid, p->fd, p->link);
			goto out;
		}
		if (seq2 == m.rcv_seq && !ioctl(fd, SIOCINQ, &in) && (unsigned int)in == m.inq &&
		    !ioctl(fd, SIOCOUTQ, &out) &&
		    (unsigned int)out == m.outq + tcp_fin_unacked(ti.tcpi_state))
			break;
		if (tries == 20) {
			pr_err("pid %d fd %d: %s: %s: its queues kept changing while they were read, the network lock notwithstanding",
			       p->pid, p->fd, p->link, conn);
			goto out;
		}
		usleep(10000);
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE)) {
		pr_perror("pid %d fd %d: %s: TCP_REPAIR_QUEUE", p->pid, p->fd, p->link);
		goto out;
	}
	/* the FINs take sequence numbers, no bytes: the image has where they go */
	m.snd_seq = (unsigned int)(m.snd_seq - m.fin);
	m.rcv_seq = (unsigned int)(m.rcv_seq - m.finrcv);
	snprintf(path, sizeof(path), "%s/sk-%lu.tcp", c->dir, s->ino);
	if (write_img(path, &m))
		goto out;
	snprintf(path, sizeof(path), "%s/sk-%lu.rcvq", c->dir, s->ino);
	if (save_bytes(path, rq, m.inq))
		goto out;
	snprintf(path, sizeof(path), "%s/sk-%lu.sndq", c->dir, s->ino);
	if (save_bytes(path, sq, m.outq))
		goto out;
	ret = FD_DESCRIBED;
out:
	free(rq);
	free(sq);
	return ret;
}

void tcp_sk_finish(int killed)
{
	char err[1024], path[PATH_MAX];
	int i;

	for (i = 0; i < nheld; i++) {
		/* left running: out of repair mode, nothing else changed (no window probe) */
		if (!killed && setint(held[i], IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP) &&
		    setint(held[i], IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF))
			pr_perror("a TCP connection left running could not leave repair mode");
		/* leaving repair mode cleared SO_REUSEADDR */
		else if (!killed && held_reuse[i] && setint(held[i], SOL_SOCKET, SO_REUSEADDR, 1))
			pr_perror("a TCP connection left running could not get its SO_REUSEADDR back");
		close(held[i]);
	}
	free(held);
	free(held_reuse);
	held = NULL;
	held_reuse = NULL;
	nheld = 0;
	if (!killed && lock_table[0]) {
		if (unlock_table(lock_table, err, sizeof(err)))
			pr_err("cannot remove the network lock (nft delete table inet %s): %s", lock_table, err);
		if (lock_dir) {
			snprintf(path, sizeof(path), "%s/tcp-lock", lock_dir);
			unlink(path);
		}
	}
	lock_table[0] = 0;
	free(lock_dir);
	lock_dir = NULL;
}

/* write @len bytes of @buf to the socket's queue selected, in chunks the kernel takes */
static int fill_queue(int fd, const char *buf, size_t len, const char *what, const char *name)
{
	size_t off = 0, chunk = len;
	ssize_t n;

	while (off < len) {
		if (chunk > len - off)
			chunk = len - off;
		n = send(fd, buf + off, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (chunk > 1024) {
				chunk /= 2;
				continue;
			}
			pr_perror("%s: cannot refill its %s queue (%zu of %zu bytes written)", what, name,
				  off, len);
			return -1;
		}
		off += n;
	}
	return 0;
}

static int shut_wr(int fd, const char *what)
{
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) || shutdown(fd, SHUT_WR)) {
		pr_perror("%s: shutdown(SHUT_WR) in repair mode, for its FIN", what);
		return -1;
	}
	return 0;
}

static void put32(unsigned char *b, uint32_t v)
{
	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

/*
 * The peer's FIN, received before the dump, sent again to the restored
 * socket @fd (established, in repair mode) from the peer's address, by a
 * raw socket whose packets carry FIN_MARK (the lock lets them in): a TCP
 * segment FIN|ACK at the FIN's sequence number, acknowledging what the
 * peer had acknowledged.  Then wait until the socket took it.  0 or -1.
 */
static int put_peer_fin(int fd, const struct tree_sk *s, const struct tcp_img *m, const char *what)
{
	unsigned char pkt[40 + 20], *tcp;
	struct sockaddr_in6 l6, p6;
	struct sockaddr_in l4, p4;
	struct tcp_info ti;
	socklen_t len;
	int raw, v4, mark = FIN_MARK, tries;
	unsigned int wnd = (unsigned int)(m->wnd >> m->snd_wscale), before;
	uint32_t sum = 0;
	ssize_t n;

	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		pr_perror("%s: TCP_INFO", what);
		return -1;
	}
	before = ti.tcpi_state;
	memcpy(&l6, s->name, sizeof(l6) < (size_t)s->namelen ? sizeof(l6) : (size_t)s->namelen);
	memcpy(&p6, s->peername, sizeof(p6) < (size_t)s->peerlen ? sizeof(p6) : (size_t)s->peerlen);
	v4 = s->family == AF_INET || IN6_IS_ADDR_V4MAPPED(&l6.sin6_addr);
	memset(pkt, 0, sizeof(pkt));
	if (v4) {
		memset(&l4, 0, sizeof(l4));
		memset(&p4, 0, sizeof(p4));
		if (s->family == AF_INET) {
			memcpy(&l4, s->name, sizeof(l4));
			memcpy(&p4, s->peername, sizeof(p4));
		} else {
			l4.sin_family = p4.sin_family = AF_INET;
			l4.sin_port = l6.sin6_port;
			p4.sin_port = p6.sin6_port;
			memcpy(&l4.sin_addr, &l6.sin6_addr.s6_addr[12], 4);
			memcpy(&p4.sin_addr, &p6.sin6_addr.s6_addr[12], 4);
		}
		/* IPv4 header (IPPROTO_RAW: we give it; the kernel fills the checksum) */
		pkt[0] = 0x45;
		pkt[2] = 0;
		pkt[3] = 40;
		pkt[6] = 0x40;	/* DF */
		pkt[8] = 64;
		pkt[9] = IPPROTO_TCP;
		memcpy(pkt + 12, &p4.sin_addr, 4);
		memcpy(pkt + 16, &l4.sin_addr, 4);
		tcp = pkt + 20;
		memcpy(tcp, &p4.sin_port, 2);
		memcpy(tcp + 2, &l4.sin_port, 2);
		sum = csum_add(sum, &p4.sin_addr, 4);
		sum = csum_add(sum, &l4.sin_addr, 4);
		sum += IPPROTO_TCP + 20;
	} else {
		tcp = pkt;
		memcpy(tcp, &p6.sin6_port, 2);
		memcpy(tcp + 2, &l6.sin6_port, 2);
		sum = csum_add(sum, &p6.sin6_addr, 16);
		sum = csum_add(sum, &l6.sin6_addr, 16);
		sum += IPPROTO_TCP + 20;
	}
	put32(tcp + 4, (uint32_t)m->rcv_seq);
	put32(tcp + 8, (uint32_t)(m->snd_seq - m->outq));
	tcp[12] = 5 << 4;
	tcp[13] = 0x11;	/* FIN | ACK */
	if (wnd > 0xffff)
		wnd = 0xffff;
	tcp[14] = wnd >> 8;
	tcp[15] = wnd;
	sum = csum_add(sum, tcp, 20);
	sum = csum_fold(sum);
	tcp[16] = sum >> 8;
	tcp[17] = sum;

	raw = v4 ? socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW) :
		   socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP);
	if (raw < 0 || setsockopt(raw, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		pr_perror("%s: a raw socket (marked) to send the peer's FIN again", what);
		if (raw >= 0)
			close(raw);
		return -1;
	}
	if (v4) {
		n = sendto(raw, pkt, 40, 0, (struct sockaddr *)&l4, sizeof(l4));
	} else {
		int one = 1;

		/* the peer's address as the source, local or not */
		setsockopt(raw, IPPROTO_IPV6, 78 /* IPV6_FREEBIND */, &one, sizeof(one));
		p6.sin6_port = 0;
		if (bind(raw, (struct sockaddr *)&p6, sizeof(p6))) {
			pr_perror("%s: binding a raw socket to the peer's address", what);
			close(raw);
			return -1;
		}
		l6.sin6_port = 0;
		n = sendto(raw, pkt, 20, 0, (struct sockaddr *)&l6, sizeof(l6));
	}
	if (n < 0) {
		pr_perror("%s: sending the peer's FIN again", what);
		close(raw);
		return -1;
	}
	close(raw);
	for (tries = 0; tries < 200; tries++) {
		len = sizeof(ti);
		if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) && ti.tcpi_state != before)
			return 0;
		usleep(10000);
	}
	pr_err("%s: the peer's FIN, sent again to it, was not taken (state %u after 2 s)", what,
	       ti.tcpi_state);
	return -1;
}

/* the bytes of the timestamp option a connection made now carries (net.ipv4.tcp_timestamps) */
static int tcp_ts_len(void)
{
	char *v = read_text("/proc/sys/net/ipv4/tcp_timestamps", NULL);
	int on = v ? atoi(v) != 0 : 1;

	free(v);
	return on ? 12 : 0;
}

/*
 * restore --tcp-close: connection @i as a new TCP socket, state CLOSE,
 * neither bound nor connected (as CRIU makes it); its options are set as
 * every socket's (sk_opts_restore).  0 or -1.
 */
static int tcp_make_closed(struct sk_restore *r, int i, const char *what)
{
	const struct tree_sk *s = &r->t->sks[i];
	int fd = r->fds[i] = inet_sk_socket(s, SOCK_STREAM | SOCK_CLOEXEC);

	if (fd < 0) {
		pr_perror("%s: socket", what);
		return -1;
	}
	if (s->family == AF_INET6 &&
	    setint(fd, IPPROTO_IPV6, IPV6_V6ONLY, !!(s->opts & SKO_V6ONLY))) {
		pr_perror("%s: IPV6_V6ONLY", what);
		return -1;
	}
	if (sk_xopts_restore(fd, s, P_BIND, what))
		return -1;
	pr_debug("%s: restored closed (--tcp-close)", what);
	return 0;
}

int tcp_sk_make(struct sk_restore *r, int i)
{
	const struct tree_sk *s = &r->t->sks[i];
	char what[128], path[PATH_MAX], nm[64], nm2[64];
	char *rq = NULL, *sq = NULL;
	struct tcp_repair_opt o[4];
	struct tcp_repair_window w;
	struct tcp_img m;
	int fd, no = 0, ret = -1, umss, anyaddr;

	sk_what(s, what, sizeof(what));
	snprintf(path, sizeof(path), "sk-%lu.tcp", s->ino);
	if (!sk_tcp_close && faccessat(r->dirfd, path, F_OK, 0) && errno == ENOENT) {
		pr_err("%s: the connection %s -> %s was dumped with --tcp-close (no %s): restore it with imgcr restore --tcp-close (closed)",
		       what, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
		       sk_addr_str(s->peername, s->peerlen, nm2, sizeof(nm2)), path);
		return -1;
	}
	if (sk_tcp_close)
		return tcp_make_closed(r, i, what);
	if (read_img(r->dirfd, path, &m))
		return -1;
	snprintf(path, sizeof(path), "sk-%lu.rcvq", s->ino);
	if (read_bytes(r->dirfd, path, m.inq, &rq))
		return -1;
	snprintf(path, sizeof(path), "sk-%lu.sndq", s->ino);
	if (read_bytes(r->dirfd, path, m.outq, &sq))
		goto out;
	/*
	 * IPv6: bind() to an address other than :: or a v4-mapped one makes the
	 * socket v6-only; a connection that was not (accepted by a dual-stack
	 * listener, or made without bind) is bound to [::]:PORT (repair mode
	 * lets it share the port), its local address chosen by the route as
	 * connect() does; if that is not the address it had, it is made again
	 * bound to it (then v6-only: README).
	 */
	anyaddr = s->family == AF_INET6 && !(s->opts & SKO_V6ONLY) &&
		  s->namelen >= (int)sizeof(struct sockaddr_in6) &&
		  !IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)s->name)->sin6_addr);
again:
	fd = r->fds[i] = inet_sk_socket(s, SOCK_STREAM | SOCK_CLOEXEC);
	if (fd < 0) {
		pr_perror("%s: socket", what);
		goto out;
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON)) {
		pr_perror("%s: TCP_REPAIR on, to restore the connection %s -> %s%s", what,
			  sk_addr_str(s->name, s->namelen, nm, sizeof(nm)),
			  sk_addr_str(s->peername, s->peerlen, nm2, sizeof(nm2)),
			  errno == EPERM ? " (it needs CAP_NET_ADMIN in the network namespace)" : "");
		goto out;
	}
	if (s->family == AF_INET6 &&
	    setint(fd, IPPROTO_IPV6, IPV6_V6ONLY, !!(s->opts & SKO_V6ONLY))) {
		pr_perror("%s: IPV6_V6ONLY", what);
		goto out;
	}
	/* sk-opts.c's options that bind() depends on (SO_BINDTODEVICE, IP_FREEBIND...) */
	if (sk_xopts_restore(fd, s, P_BIND, what))
		goto out;
	/* room for the queues whatever the buffer sizes (sk_opts_restore sets them after) */
	if (setint(fd, SOL_SOCKET, SO_SNDBUFFORCE, (int)(m.outq * 2 + (1 << 16))) ||
	    setint(fd, SOL_SOCKET, SO_RCVBUFFORCE, (int)(m.inq * 2 + (1 << 16)))) {
		pr_perror("%s: SO_SNDBUFFORCE/SO_RCVBUFFORCE", what);
		goto out;
	}
	if (anyaddr) {
		struct sockaddr_in6 a6;

		memcpy(&a6, s->name, sizeof(a6));
		a6.sin6_addr = in6addr_any;
		a6.sin6_flowinfo = 0;
		a6.sin6_scope_id = 0;
		if (bind(fd, (const struct sockaddr *)&a6, sizeof(a6))) {
			pr_perror("%s: cannot bind to [::]:%u", what, ntohs(a6.sin6_port));
			goto out;
		}
	} else if (bind(fd, (const struct sockaddr *)s->name, s->namelen)) {
		pr_perror("%s: cannot bind to %s", what, sk_addr_str(s->name, s->namelen, nm, sizeof(nm)));
		goto out;
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE) ||
	    setint(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, (int)(unsigned int)(m.rcv_seq - m.inq)) ||
	    setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) ||
	    setint(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, (int)(unsigned int)(m.snd_seq - m.outq))) {
		pr_perror("%s: TCP_QUEUE_SEQ", what);
		goto out;
	}
	/*
	 * the segment size in use (TCP_MAXSEG reads it): connect() computes it,
	 * once, from the MSS clamp (the user's TCP_MAXSEG, else the 536-byte
	 * default) less the timestamp option if net.ipv4.tcp_timestamps is
	 * on; TCP_REPAIR_OPTIONS below sets the clamp but does not compute it
	 * again.  So a TCP_MAXSEG that gives the one the connection had; the
	 * kernel takes 88 to 32767 (a loopback connection's 32768 or more
	 * comes back as 32767 less the option: README).
	 */
	umss = m.snd_mss ? (int)m.snd_mss + tcp_ts_len() : (int)m.mss;
	if (umss > 32767)
		umss = 32767;
	if (umss >= 88 && setint(fd, IPPROTO_TCP, TCP_MAXSEG, umss)) {
		pr_perror("%s: TCP_MAXSEG %d, before connect", what, umss);
		goto out;
	}
	if (connect(fd, (const struct sockaddr *)s->peername, s->peerlen)) {
		pr_perror("%s: connect (in repair mode) to %s", what,
			  sk_addr_str(s->peername, s->peerlen, nm, sizeof(nm)));
		goto out;
	}
	/* not the program's own TCP_MAXSEG (which an established connection does not show) */
	if (anyaddr) {
		struct sockaddr_in6 got, want;
		socklen_t gl = sizeof(got);

		memcpy(&want, s->name, sizeof(want));
		if (getsockname(fd, (struct sockaddr *)&got, &gl) ||
		    memcmp(&got.sin6_addr, &want.sin6_addr, sizeof(want.sin6_addr)) ||
		    got.sin6_port != want.sin6_port) {
			close(fd);	/* in repair mode: nothing is sent */
			r->fds[i] = -1;
			anyaddr = 0;
			goto again;
		}
	}
	if (umss >= 88 && setint(fd, IPPROTO_TCP, TCP_MAXSEG, 0)) {
		pr_perror("%s: TCP_MAXSEG 0, after connect", what);
		goto out;
	}
	o[no].opt_code = TCPOPT_MAXSEG;
	o[no++].opt_val = m.mss;
	if (m.opts & TCPI_OPT_WSCALE) {
		o[no].opt_code = TCPOPT_WINDOW;
		o[no++].opt_val = m.snd_wscale | (m.rcv_wscale << 16);
	}
	if (m.opts & TCPI_OPT_SACK) {
		o[no].opt_code = TCPOPT_SACK_PERMITTED;
		o[no++].opt_val = 0;
	}
	if (m.opts & TCPI_OPT_TIMESTAMPS) {
		o[no].opt_code = TCPOPT_TIMESTAMP;
		o[no++].opt_val = 0;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_OPTIONS, o, no * sizeof(o[0]))) {
		pr_perror("%s: TCP_REPAIR_OPTIONS", what);
		goto out;
	}
	if ((m.opts & TCPI_OPT_TIMESTAMPS) && setint(fd, IPPROTO_TCP, TCP_TIMESTAMP, (int)m.ts)) {
		pr_perror("%s: TCP_TIMESTAMP", what);
		goto out;
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE) ||
	    fill_queue(fd, rq, m.inq, what, "receive"))
		goto out;
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) ||
	    fill_queue(fd, sq, m.outq - m.unsq, what, "send"))
		goto out;
	if (m.havewin) {
		w.snd_wl1 = m.wl1;
		w.snd_wnd = m.wnd;
		w.max_window = m.maxwnd;
		w.rcv_wnd = m.rwnd;
		/*
		 * the peer's FIN is not back yet: rcv_nxt is one short of what
		 * the window was last announced at; the kernel wants rcv_wup <= rcv_nxt
		 */
		w.rcv_wup = (int32_t)((uint32_t)m.rwup - (uint32_t)m.rcv_seq) > 0 ?
			    (uint32_t)m.rcv_seq : m.rwup;
		if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, sizeof(w))) {
			pr_perror("%s: TCP_REPAIR_WINDOW", what);
			goto out;
		}
	}
	if (setint(fd, IPPROTO_TCP, TCP_KEEPIDLE, m.kidle) ||
	    setint(fd, IPPROTO_TCP, TCP_KEEPINTVL, m.kintvl) ||
	    setint(fd, IPPROTO_TCP, TCP_KEEPCNT, m.kcnt) ||
	    setint(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, m.utimeout)) {
		pr_perror("%s: TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT/TCP_USER_TIMEOUT", what);
		goto out;
	}
	/*
	 * the write side shut: shutdown() queues the FIN after the data, as sent
	 * (FIN-WAIT-1 until acknowledged); the peer's FIN: sent to the socket
	 * (CLOSE-WAIT).  Both, in the order the state says (soccr's): LAST-ACK
	 * took the peer's FIN first (CLOSE-WAIT, then our shutdown); CLOSING,
	 * ours first (FIN-WAIT-1, then the peer's FIN, which does not
	 * acknowledge ours)
	 */
	if (m.state == TCP_LAST_ACK) {
		if (put_peer_fin(fd, s, &m, what) || shut_wr(fd, what))
			goto out;
	} else {
		if (m.fin && shut_wr(fd, what))
			goto out;
		if (m.finrcv && put_peer_fin(fd, s, &m, what))
			goto out;
	}
	if (m.state == TCP_LAST_ACK || m.state == TCP_CLOSING) {
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) || ti.tcpi_state != m.state) {
			pr_err("%s: restored in state %u, not %llu as dumped", what,
			       ti.tcpi_state, m.state);
			goto out;
		}
	}
	if (setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE)) {
		pr_perror("%s: TCP_REPAIR_QUEUE", what);
		goto out;
	}
	pend = realloc(pend, (npend + 1) * sizeof(*pend));
	pend[npend].i = i;
	pend[npend].unsq = m.unsq;
	pend[npend].unsent = malloc(m.unsq + 1);
	memcpy(pend[npend].unsent, sq + (m.outq - m.unsq), m.unsq);
	npend++;
	ret = 0;
out:
	free(rq);
	free(sq);
	return ret;
}

/*
 * write what had not been sent, the socket out of repair mode.  Room
 * first: the user's buffer size (sk_opts_restore set it) may not hold the
 * queue again (its bytes count here as new skbs, at their truesize, and a
 * TCP_NOTSENT_LOWAT stops writes while that much is unsent; the kernel took
 * them in when the buffer held less, or autotuning had grown it), so
 * SO_SNDBUFFORCE gives room for all of it and TCP_NOTSENT_LOWAT is lifted
 * (UINT_MAX); then SO_SNDBUF, SO_BUF_LOCK and TCP_NOTSENT_LOWAT are put
 * back exactly as they were (the kernel then lets the program write once
 * the queue is below its buffer again, as it would have).
 */
#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif
static int send_unsent(int fd, const char *buf, size_t len, const char *what)
{
	int snd, lock = -1, lowat = -1, outq = 0, room, got, ret = 0;
	size_t off = 0;
	ssize_t n;

	if (!len)
		return 0;
	if (sk_getint(fd, SOL_SOCKET, SO_SNDBUF, &snd) || ioctl(fd, SIOCOUTQ, &outq)) {
		pr_perror("%s: SO_SNDBUF, SIOCOUTQ", what);
		return -1;
	}
	if (sk_getint(fd, SOL_SOCKET, SO_BUF_LOCK, &lock))
		lock = -1;	/* before 5.14 */
	if (sk_getint(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat))
		lowat = -1;
	/* the kernel doubles it: four times the bytes, for their skbs */
	room = (int)(((unsigned long long)outq + len) * 2 + (1 << 16) > INT_MAX / 2 ?
		     INT_MAX / 2 : ((unsigned long long)outq + len) * 2 + (1 << 16));
	if (room > snd / 2 && setint(fd, SOL_SOCKET, SO_SNDBUFFORCE, room)) {
		pr_perror("%s: SO_SNDBUFFORCE %d, room for the %zu bytes of its send queue not yet sent at the dump",
			  what, room, len);
		return -1;
	}
	if (lowat != -1 && setint(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, -1)) {
		pr_perror("%s: TCP_NOTSENT_LOWAT", what);
		return -1;
	}
	while (off < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		n = send(fd, buf + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			pr_perror("%s: writing the %zu bytes of its send queue not yet sent at the dump (%zu written)",
				  what, len, off);
			ret = -1;
			break;
		}
		if (n < 0 && errno == EAGAIN && poll(&pfd, 1, 10000) == 0) {
			pr_err("%s: no room after 10 s for the %zu bytes of its send queue not yet sent at the dump (%zu written, SO_SNDBUF %d, %d queued before)",
			       what, len, off, room * 2, outq);
			ret = -1;
			break;
		}
	}
	/* the buffer as sk_opts_restore left it: the size, then its lock (SO_SNDBUFFORCE locks) */
	if (room > snd / 2 &&
	    (setint(fd, SOL_SOCKET, SO_SNDBUFFORCE, snd / 2) ||
	     (lock >= 0 && setint(fd, SOL_SOCKET, SO_BUF_LOCK, lock)))) {
		pr_perror("%s: SO_SNDBUF %d (SO_BUF_LOCK %d) again, after its send queue", what, snd, lock);
		ret = -1;
	}
	if (lowat != -1 && setint(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, lowat)) {
		pr_perror("%s: TCP_NOTSENT_LOWAT %d again", what, lowat);
		ret = -1;
	}
	if (!ret && !sk_getint(fd, SOL_SOCKET, SO_SNDBUF, &got) && got != snd && got != (snd & ~1))
		pr_info("%s: note: SO_SNDBUF %d where %d was set", what, got, snd);
	return ret;
}

int tcp_sk_after(struct sk_restore *r, int ok)
{
	char table[64], err[1024], what[128];
	int k, ret = 0;
	FILE *f;

	table[0] = 0;
	{
		int fd = dir_open(r->dirfd, "tcp-lock", O_RDONLY);

		f = fd >= 0 ? fdopen(fd, "re") : NULL;
		if (fd >= 0 && !f)
			close(fd);
	}
	if (f) {
		if (fscanf(f, "%63s", table) != 1)
			table[0] = 0;
		fclose(f);
	}
	/* the lock was in the tree's own network namespace (sk-netns.c): gone with it, not in the new one */
	if (r->t->ns && (r->t->ns->own & NS_BIT(NS_NET)))
		table[0] = 0;
	if (!ok) {
		/* the sockets are closed in repair mode (silently); the lock stays for another try */
		if (table[0] && npend)
			pr_info("the network lock (nftables table inet %s) stays, for another restore; 'nft delete table inet %s' removes it",
			       table, table);
		goto out;
	}
	if (table[0] && unlock_table(table, err, sizeof(err)))
		pr_info("cannot remove the network lock (nft delete table inet %s): %s", table, err);
	for (k = 0; k < npend; k++) {
		int fd = r->fds[pend[k].i];

		sk_what(&r->t->sks[pend[k].i], what, sizeof(what));
		if (setint(fd, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF)) {
			pr_perror("%s: TCP_REPAIR off", what);
			ret = -1;
			continue;
		}
		/* leaving repair mode cleared SO_REUSEADDR */
		if ((r->t->sks[pend[k].i].opts & SKO_REUSEADDR) && setint(fd, SOL_SOCKET, SO_REUSEADDR, 1)) {
			pr_perror("%s: SO_REUSEADDR", what);
			ret = -1;
		}
		if (send_unsent(fd, pend[k].unsent, pend[k].unsq, what))
			ret = -1;
	}
out:
	for (k = 0; k < npend; k++)
		free(pend[k].unsent);
	free(pend);
	pend = NULL;
	npend = 0;
	return ret;
}
