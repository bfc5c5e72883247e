/*
 * sknet: sockets for t_sk_*.
 *
 * sknet tree DIR PORT ROUNDS OUT
 *   A server and 3 client processes (its children) exchanging checksummed
 *   messages over unix stream connections (clients 0 and 1 through the
 *   listener DIR/srv.sock, client 2 through the abstract "@sknet-PORT"),
 *   8 requests outstanding per client, answered in bursts, so data is
 *   queued both ways nearly all the time.  Each client checks every reply; at the end each prints
 *   "client I sent N fnv X recv M fnv Y ok" and the server, per client,
 *   "server client I recv N fnv X sent M fnv Y" (the test compares them).
 *   The server also holds, queued and unread until every client is done:
 *   datagrams in a socketpair(SOCK_DGRAM), messages in a
 *   socketpair(SOCK_SEQPACKET), datagrams sent to its datagram sockets
 *   bound to DIR/dg.sock and "@sknet-dg-PORT"; then it checks their
 *   contents and boundaries ("queues ok") and its socket options
 *   ("opts ok").  It serves, until killed: "hello" to any new connection
 *   on DIR/srv.sock, @sknet-PORT, TCP 127.0.0.1:PORT and [::1]:PORT; an
 *   echo of each datagram on UDP 127.0.0.1:PORT+1.
 * sknet cli unix PATH|@NAME | tcp 127.0.0.1|::1 PORT | udp PORT
 *   one line from the server ("hello") or the echo of a datagram, printed.
 * sknet hold othernet|hostnet  a UDP socket of a new network namespace
 *                             held by this process back in its own; one of
 *                             its own held once it is in a new one; sleeps.
 * sknet hold netlink|packet|tcp|scm  holds such a socket (tcp: an
 *                             established loopback connection, port 7399;
 *                             scm: an fd in flight in a socketpair), sleeps.
 * sknet pend DIR OUT          a connection not yet accepted (relative name),
 *                             a stream pair whose peer closed (see pend()).
 * sknet echosrv PATH [PEERS]  a unix stream server echoing lines; with PEERS,
 *                             "peer uid=U gid=G" (SO_PEERCRED) appended to
 *                             it for each connection.
 * sknet ping PATH OUT         connects to PATH; "ping N" every 50 ms, each
 *                             echoed reply counted in OUT ("N" lines).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "common.h"

#define NCLI 4
#define NC 3
#define WINDOW 8

static void die(const char *what)
{
	fprintf(stderr, "sknet %d: %s: %s\n", getpid(), what, strerror(errno));
	exit(2);
}

static socklen_t unaddr(struct sockaddr_un *sun, const char *name)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (name[0] == '@') {
		memcpy(sun->sun_path + 1, name + 1, strlen(name + 1));
		return offsetof(struct sockaddr_un, sun_path) + strlen(name);
	}
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", name);
	return sizeof(*sun);
}

static int unsock(int type, const char *bindto, const char *connto)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, type, 0);
	socklen_t l;

	if (fd < 0)
		die("socket");
	if (bindto) {
		l = unaddr(&sun, bindto);
		if (bindto[0] != '@')
			unlink(bindto);
		if (bind(fd, (struct sockaddr *)&sun, l))
			die(bindto);
	}
	if (connto) {
		l = unaddr(&sun, connto);
		if (connect(fd, (struct sockaddr *)&sun, l))
			die(connto);
	}
	return fd;
}

static uint32_t mix(uint32_t a, uint32_t b)
{
	uint32_t h = a * 2654435761u ^ (b + 0x9e3779b9u + (a << 6) + (a >> 2));

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return h;
}

static void fnv(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		*h = (*h ^ *c++) * 1099511628211ULL;
}

static int rd(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

static int wr(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

/* message r of client i (dir 0: request, 1: reply) into buf; its length */
static uint32_t msg(int i, int r, int dir, unsigned char *buf)
{
	uint32_t len = 1 + mix(i * 7 + dir, r) % (dir ? 2000 : 3000), k;

	for (k = 0; k < len; k++)
		buf[k] = mix(mix(i, r) + dir, k) & 0xff;
	return len;
}

struct stream {
	uint64_t sent, recv, hs, hr;
};

static int send_msg(int fd, struct stream *s, const unsigned char *p, uint32_t len)
{
	if (wr(fd, &len, 4) || (len && wr(fd, p, len)))
		return -1;
	fnv(&s->hs, &len, 4);
	fnv(&s->hs, p, len);
	s->sent += 4 + len;
	return 0;
}

static int recv_msg(int fd, struct stream *s, unsigned char *p, uint32_t *len)
{
	if (rd(fd, len, 4) || *len > 4000 || (*len && rd(fd, p, *len)))
		return -1;
	fnv(&s->hr, len, 4);
	fnv(&s->hr, p, *len);
	s->recv += 4 + *len;
	return 0;
}

static int client(int i, const char *to, int rounds, int out)
{
	unsigned char buf[4096], want[4096];
	struct stream s = { 0, 0, 14695981039346656037ULL, 14695981039346656037ULL };
	int fd = unsock(SOCK_STREAM, NULL, to), sent = 0, got = 0;
	struct timeval tv = { 30, 0 };
	uint32_t len, wl;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (wr(fd, &i, sizeof(i)))	/* who it is: the server accepts in any order */
		die("client hello");
	/*
	 * WINDOW requests outstanding: the server answers at most 4 per burst,
	 * so some stay queued there while its answers wait here.
	 */
	while (got < rounds) {
		while (sent < rounds && sent - got < WINDOW)
			if (send_msg(fd, &s, buf, msg(i, sent++, 0, buf)))
				die("client send");
		if (recv_msg(fd, &s, buf, &len))
			die("client recv");
		wl = msg(i, got, 1, want);
		if (len != wl || memcmp(buf, want, len)) {
			outf(out, "client %d BAD reply %d (length %u, expected %u)\n", i, got, len, wl);
			return 1;
		}
		got++;
		usleep(20000);
	}
	if (send_msg(fd, &s, buf, 0))
		die("client done");
	outf(out, "client %d sent %llu fnv %016llx recv %llu fnv %016llx ok\n", i,
	     (unsigned long long)s.sent, (unsigned long long)s.hs, (unsigned long long)s.recv,
	     (unsigned long long)s.hr);
	return 0;
}

static int inlisten(int fam, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK, 0), on = 1;

	if (fd < 0)
		die("tcp socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (fam == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
		inet_pton(AF_INET6, "::1", &sin6.sin6_addr);
		if (bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)))
			die("bind tcp6");
	} else {
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			die("bind tcp");
	}
	if (listen(fd, 7))
		die("listen tcp");
	return fd;
}

static int getint(int fd, int level, int opt)
{
	int v = -1;
	socklen_t l = sizeof(v);

	getsockopt(fd, level, opt, &v, &l);
	return v;
}

static int tree(const char *dir, int port, int rounds, const char *outpath)
{
	char path[256], dgpath[256], abs[64], dgabs[64];
	unsigned char buf[4096], want[4096];
	struct stream st[NC];
	int out, lis, labs, t4, t6, udp, dg, dga, sp[2], qp[2], conn[NC], i, done = 0, k;
	int sndbuf0, on = 1, pc;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port + 1) };
	struct timeval tv = { 7, 0 };
	int rcnt[NC] = { 0 };

	out = open(outpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		die(outpath);
	snprintf(path, sizeof(path), "%s/srv.sock", dir);
	snprintf(dgpath, sizeof(dgpath), "%s/dg.sock", dir);
	snprintf(abs, sizeof(abs), "@sknet-%d", port);
	snprintf(dgabs, sizeof(dgabs), "@sknet-dg-%d", port);
	lis = unsock(SOCK_STREAM | SOCK_NONBLOCK, path, NULL);
	chmod(path, 0640);
	k = 65536;
	setsockopt(lis, SOL_SOCKET, SO_SNDBUF, &k, sizeof(k));
	sndbuf0 = getint(lis, SOL_SOCKET, SO_SNDBUF);
	pc = socket(AF_UNIX, SOCK_DGRAM, 0);
	setsockopt(pc, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	if (listen(lis, 5))
		die("listen");
	labs = unsock(SOCK_STREAM | SOCK_NONBLOCK, abs, NULL);
	if (listen(labs, 5))
		die("listen abs");
	t4 = inlisten(AF_INET, port);
	t6 = inlisten(AF_INET6, port);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (udp < 0 || bind(udp, (struct sockaddr *)&sin, sizeof(sin)))
		die("udp");
	dg = unsock(SOCK_DGRAM, dgpath, NULL);
	chmod(dgpath, 0604);
	dga = unsock(SOCK_DGRAM, dgabs, NULL);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, qp))
		die("socketpair");
	/* the queues kept unread until the clients are done */
	for (k = 0; k < 6; k++) {
		uint32_t l = msg(100 + k, k, 0, buf);
		int s = unsock(SOCK_DGRAM, NULL, NULL);
		struct sockaddr_un sun;
		socklen_t sl;

		if (send(sp[0], buf, l, 0) != (ssize_t)l || send(qp[0], buf, l, 0) != (ssize_t)l)
			die("queue pair");
		sl = unaddr(&sun, dgpath);
		if (k < 3 && sendto(s, buf, l, 0, (struct sockaddr *)&sun, sl) != (ssize_t)l)
			die("queue dg");
		sl = unaddr(&sun, dgabs);
		if (k < 3 && sendto(s, buf, l, 0, (struct sockaddr *)&sun, sl) != (ssize_t)l)
			die("queue dg abs");
		close(s);
	}
	for (i = 0; i < NC; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (!p) {
			close(lis);
			close(labs);
			exit(client(i, i == 2 ? abs : path, rounds, out));
		}
	}
	for (i = 0; i < NC; i++) {
		memset(&st[i], 0, sizeof(st[i]));
		st[i].hs = st[i].hr = 14695981039346656037ULL;
		conn[i] = -1;
	}
	for (i = 0; i < NC;) {
		struct pollfd pf[2] = { { lis, POLLIN, 0 }, { labs, POLLIN, 0 } };
		int c, id = -1;

		poll(pf, 2, 10000);
		c = accept4(pf[0].revents ? lis : labs, NULL, NULL, 0);
		if (c < 0 && errno == EAGAIN)
			continue;
		if (c < 0 || rd(c, &id, sizeof(id)) || id < 0 || id >= NC || conn[id] >= 0)
			die("accept");
		conn[id] = c;
		i++;
	}
	setsockopt(conn[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		struct pollfd pf[6 + NC];
		int n = 0;

		pf[n++] = (struct pollfd){ lis, POLLIN, 0 };
		pf[n++] = (struct pollfd){ labs, POLLIN, 0 };
		pf[n++] = (struct pollfd){ t4, POLLIN, 0 };
		pf[n++] = (struct pollfd){ t6, POLLIN, 0 };
		pf[n++] = (struct pollfd){ udp, POLLIN, 0 };
		for (i = 0; i < NC; i++)
			pf[n++] = (struct pollfd){ conn[i], conn[i] >= 0 ? POLLIN : 0, 0 };
		if (poll(pf, n, -1) < 0 && errno != EINTR)
			die("poll");
		for (k = 0; k < 4; k++) {
			int c;

			if (!(pf[k].revents & POLLIN))
				continue;
			c = accept4(pf[k].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				wr(c, "hello\n", 6);
				close(c);
			}
		}
		if (pf[4].revents & POLLIN) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			ssize_t r = recvfrom(udp, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);

			if (r >= 0)
				sendto(udp, buf, r, 0, (struct sockaddr *)&ss, sl);
		}
		/* in bursts, slower than the clients: requests stay queued here, replies there */
		usleep(60000);
		for (i = 0; i < NC; i++) {
			uint32_t len;
			int m, avail = 0;

			if (!(pf[5 + i].revents & (POLLIN | POLLHUP)))
				continue;
			for (m = 0; m < 4 && conn[i] >= 0; m++) {
				if (m && (ioctl(conn[i], FIONREAD, &avail) || avail < 4))
					break;
				if (recv_msg(conn[i], &st[i], buf, &len)) {
					outf(out, "server client %d BAD read\n", i);
					exit(1);
				}
				if (!len) {
					outf(out, "server client %d recv %llu fnv %016llx sent %llu fnv %016llx\n", i,
					     (unsigned long long)st[i].recv, (unsigned long long)st[i].hr,
					     (unsigned long long)st[i].sent, (unsigned long long)st[i].hs);
					close(conn[i]);
					conn[i] = -1;
					done++;
					break;
				}
				if (len != msg(i, rcnt[i], 0, want) || memcmp(buf, want, len)) {
					outf(out, "server client %d BAD request %d\n", i, rcnt[i]);
					exit(1);
				}
				if (send_msg(conn[i], &st[i], buf, msg(i, rcnt[i], 1, buf)))
					die("server send");
				rcnt[i]++;
			}
		}
		if (done == NC) {
			const char *bad = NULL;

			for (k = 0; k < 6 && !bad; k++) {
				uint32_t l = msg(100 + k, k, 0, want);
				ssize_t r;

				r = recv(sp[1], buf, sizeof(buf), MSG_DONTWAIT);
				if (r != (ssize_t)l || memcmp(buf, want, l))
					bad = "socketpair datagram";
				r = recv(qp[1], buf, sizeof(buf), MSG_DONTWAIT);
				if (!bad && (r != (ssize_t)l || memcmp(buf, want, l)))
					bad = "seqpacket message";
				r = k < 3 ? recv(dg, buf, sizeof(buf), MSG_DONTWAIT) : (ssize_t)l;
				if (!bad && k < 3 && (r != (ssize_t)l || memcmp(buf, want, l)))
					bad = "datagram on dg.sock";
				r = k < 3 ? recv(dga, buf, sizeof(buf), MSG_DONTWAIT) : (ssize_t)l;
				if (!bad && k < 3 && (r != (ssize_t)l || memcmp(buf, want, l)))
					bad = "datagram on the abstract socket";
			}
			if (!bad && (recv(sp[1], buf, 1, MSG_DONTWAIT) >= 0 || recv(dg, buf, 1, MSG_DONTWAIT) >= 0))
				bad = "more datagrams than sent";
			outf(out, bad ? "queues BAD %s\n" : "queues ok\n", bad);
			bad = NULL;
			if (getint(lis, SOL_SOCKET, SO_SNDBUF) != sndbuf0)
				bad = "SO_SNDBUF";
			else if (!(fcntl(lis, F_GETFL) & O_NONBLOCK))
				bad = "O_NONBLOCK";
			else if (getint(t4, SOL_SOCKET, SO_REUSEADDR) != 1 || getint(pc, SOL_SOCKET, SO_PASSCRED) != 1 ||
				 getint(t4, IPPROTO_TCP, TCP_NODELAY) != 1)
				bad = "SO_REUSEADDR/TCP_NODELAY/SO_PASSCRED";
			else if (getint(t6, IPPROTO_IPV6, IPV6_V6ONLY) != 1)
				bad = "IPV6_V6ONLY";
			outf(out, bad ? "opts BAD %s\n" : "opts ok\n", bad);
			while (wait(NULL) > 0)
				;
			outf(out, "server done\n");
			done++;
		}
	}
	return 0;
}

static int cli(int argc, char **argv)
{
	char buf[256];
	ssize_t n;
	int fd;

	if (argc >= 4 && !strcmp(argv[2], "unix")) {
		fd = unsock(SOCK_STREAM, NULL, argv[3]);
	} else if (argc >= 5 && !strcmp(argv[2], "tcp")) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[4])) };
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(atoi(argv[4])) };
		int v6 = strchr(argv[3], ':') != NULL;

		fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
		if (v6 ? inet_pton(AF_INET6, argv[3], &sin6.sin6_addr) != 1 :
			 inet_pton(AF_INET, argv[3], &sin.sin_addr) != 1)
			die("address");
		if (v6 ? connect(fd, (struct sockaddr *)&sin6, sizeof(sin6)) :
			 connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			die("connect");
	} else if (argc >= 4 && !strcmp(argv[2], "udp")) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[3])) };
		struct timeval tv = { 5, 0 };

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) || send(fd, "udp echo\n", 9, 0) != 9)
			die("udp send");
	} else {
		fprintf(stderr, "usage: sknet cli unix PATH | tcp ADDR PORT | udp PORT\n");
		return 2;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		die("read");
	buf[n] = 0;
	fputs(buf, stdout);
	return 0;
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void wait_usr1(void)
{
	sigset_t m, old;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigprocmask(SIG_BLOCK, &m, &old);
	while (!usr1)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * pend DIR OUT: in DIR, a listener bound to the relative name rel.sock
 * with a connection from its child not yet accepted, and a stream
 * socketpair whose other end was closed with data queued.  At SIGUSR1 (to
 * both) the server reads that data and its end of file ("deadpeer ok"),
 * accepts the child's connection and answers it ("pend ok" from each).
 */
static int pend(const char *dir, const char *outpath)
{
	int out = open(outpath, O_WRONLY | O_CREAT | O_APPEND, 0644), lis, sp[2], c;
	char buf[64];
	ssize_t n;
	pid_t kid;

	if (out < 0 || chdir(dir))
		die(dir);
	signal(SIGUSR1, on_usr1);
	lis = unsock(SOCK_STREAM, "rel.sock", NULL);
	if (listen(lis, 3) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("listen");
	if (wr(sp[1], "dead-peer-data", 14))
		die("write");
	close(sp[1]);
	kid = fork();
	if (!kid) {
		c = unsock(SOCK_STREAM, NULL, "rel.sock");
		outf(out, "client connected\n");
		wait_usr1();
		if (wr(c, "client hello", 12) || rd(c, buf, 12) || memcmp(buf, "server reply", 12)) {
			outf(out, "pend client BAD\n");
			return 1;
		}
		outf(out, "pend client ok\n");
		return 0;
	}
	wait_usr1();
	n = read(sp[0], buf, sizeof(buf));
	if (n != 14 || memcmp(buf, "dead-peer-data", 14) || read(sp[0], buf, 1) != 0)
		outf(out, "deadpeer BAD (%zd bytes)\n", n);
	else
		outf(out, "deadpeer ok\n");
	c = accept(lis, NULL, NULL);
	if (c < 0 || rd(c, buf, 12) || memcmp(buf, "client hello", 12) || wr(c, "server reply", 12)) {
		outf(out, "pend server BAD\n");
		return 1;
	}
	outf(out, "pend server ok\n");
	waitpid(kid, NULL, 0);
	return 0;
}

static int echosrv(const char *path, const char *peers)
{
	int lis = unsock(SOCK_STREAM, path, NULL), c;
	int log = peers ? open(peers, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
	struct ucred uc;
	socklen_t ul;
	char buf[256];
	ssize_t n;

	if (listen(lis, 5))
		die("listen");
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		c = accept(lis, NULL, NULL);
		if (c < 0)
			continue;
		ul = sizeof(uc);
		if (log >= 0 && !getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &ul))
			outf(log, "peer uid=%u gid=%u\n", uc.uid, uc.gid);
		if (!fork()) {
			while ((n = read(c, buf, sizeof(buf))) > 0)
				wr(c, buf, n);
			_exit(0);
		}
		close(c);
	}
}

static int ping(const char *path, const char *outpath)
{
	int fd = unsock(SOCK_STREAM, NULL, path), out = open(outpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	char buf[64], got[64];
	struct timeval tv = { 2, 0 };
	int n, i;

	if (out < 0)
		die(outpath);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0;; i++) {
		n = snprintf(buf, sizeof(buf), "ping %d\n", i);
		if (wr(fd, buf, n))
			die("ping write");
		/* a new connection (restored with --ext-unix-sk) may have lost it: again */
		while (rd(fd, got, n) && errno == EAGAIN)
			if (wr(fd, buf, n))
				die("ping write");
		if (memcmp(buf, got, n)) {
			outf(out, "ping BAD %d\n", i);
			return 1;
		}
		outf(out, "%d\n", i);
		usleep(50000);
	}
}

int main(int argc, char **argv)
{
	int fd;

	if (argc >= 6 && !strcmp(argv[1], "tree"))
		return tree(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (argc >= 2 && !strcmp(argv[1], "cli"))
		return cli(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "hold")) {
		if (!strcmp(argv[2], "netlink")) {
			fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
		} else if (!strcmp(argv[2], "scm")) {
			/* a file descriptor in flight, queued in a socketpair */
			int sp[2], pass = open("/", O_RDONLY);
			char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
			struct iovec iov = { &c, 1 };
			struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
					     .msg_controllen = sizeof(cbuf) };
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || pass < 0)
				die("socketpair");
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &pass, sizeof(int));
			if (sendmsg(sp[0], &mh, 0) != 1)
				die("sendmsg");
			fd = sp[0];
		} else if (!strcmp(argv[2], "othernet") || !strcmp(argv[2], "hostnet")) {
			/*
			 * othernet: a UDP socket made in a new network namespace,
			 * this process back in its own; hostnet: one made here,
			 * this process then in a new network namespace
			 */
			int here = open("/proc/self/ns/net", O_RDONLY), other = !strcmp(argv[2], "othernet");

			if (here < 0 || (other && unshare(CLONE_NEWNET)))
				die("unshare");
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			if (fd < 0 || (other ? setns(here, CLONE_NEWNET) : unshare(CLONE_NEWNET)))
				die("setns");
			close(here);
			printf("ready\n");
			fflush(stdout);
		} else if (!strcmp(argv[2], "tcp")) {
			/* an established loopback connection, both ends here */
			struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7399) };
			int l = inlisten(AF_INET, 7399);

			sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
				die("connect");
			usleep(100000);
			fd = accept(l, NULL, NULL);
		} else
			fd = socket(AF_PACKET, SOCK_DGRAM, htons(0x0003));
		if (fd < 0)
			die(argv[2]);
		for (;;)
			pause();
	}
	if (argc >= 4 && !strcmp(argv[1], "pend"))
		return pend(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "echosrv"))
		return echosrv(argv[2], argc >= 4 ? argv[3] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "ping"))
		return ping(argv[2], argv[3]);
	fprintf(stderr, "usage: sknet tree DIR PORT ROUNDS OUT | cli ... | hold netlink|packet | pend DIR OUT | echosrv PATH [PEERS] | ping PATH OUT\n");
	return 2;
}
