/*
 * tcpstream: a checksummed TCP byte stream, for t_tcp_*.
 *
 * The client sends the stream byte(0), byte(1), ... (byte(i) depends on
 * i alone: a byte lost, duplicated or reordered breaks every check after
 * it) as fast as the echo server sends it back, with up to 256 kB
 * outstanding, reading the echo at half the rate it writes (so the
 * window stays full and data is queued nearly all the time); the
 * server checks what it reads and echoes it, the client checks the echo.
 * Every 200 ms each writes a line "c SENT RECV" / "s RECV" to OUT (one
 * write(2) per line, O_APPEND); a check failing or the connection failing
 * (reset, end of file, an error) writes "BAD ..." and exits 1.
 * SIGTERM to the client: it stops sending, shuts its side down, reads the
 * rest of the echo and writes "client done sent N recv M port P ok"; the
 * server then sees the end of the stream and writes "server done recv N
 * port P ok" (P: the client's port, the same connection at both ends).
 * Both check first that the options they set are still set: the server
 * TCP_NODELAY, SO_KEEPALIVE, TCP_KEEPIDLE/INTVL/CNT, the client O_NONBLOCK
 * and SO_SNDBUF.
 *
 * tcpstream pair ADDR PORT OUT   server (this process) and client (its child,
 *                                waited for)
 * tcpstream srv ADDR PORT OUT    the server alone (one connection)
 * tcpstream cli ADDR PORT OUT    the client alone
 * tcpstream closewait PORT       holds a connection whose peer closed
 *                                (CLOSE-WAIT) and its listener; sleeps
 * tcpstream synsent PORT         a connection to 127.0.0.1:PORT never answered
 *                                (the test drops it): SYN-SENT; sleeps
 * tcpstream feed ADDR PORT OUT   sends the stream to one client that shut
 *                                its side (see feed())
 * tcpstream drain ADDR PORT OUT  that client, half-closed (see drain())
 * tcpstream sink ADDR PORT OUT   reads one client's stream at SIGUSR1 (sink())
 * tcpstream fill ADDR PORT OUT   that client: fills the connection, shuts
 *                                its side (FIN-WAIT-1) and sleeps (fill())
 * tcpstream fillq ADDR PORT OUT [SNDBUF]  the same, its side left open until
 *                                SIGTERM, with SO_SNDBUFFORCE SNDBUF if given
 *                                (fillq())
 * tcpstream reuse ADDR PORT OUT NAME  a SO_REUSEPORT listener answering each
 *                                connection with NAME (reuse())
 * tcpstream ask ADDR PORT OUT    40 connections to it: "ans NAME" each
 * tcpstream hold ADDR PORT OUT   a client that writes 1000 bytes, then at
 *                                SIGUSR1 says how its connection is (hold())
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define OUTSTANDING (256 << 10)

static int out = 2;
static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

static unsigned char byte_at(uint64_t i)
{
	uint32_t x = (uint32_t)i * 0x9E3779B1u;

	return (unsigned char)((x >> 24) ^ (uint32_t)(i >> 32));
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void bad(const char *fmt, const char *what, uint64_t at)
{
	outf(out, "BAD %s %s at byte %llu: %s\n", fmt, what, (unsigned long long)at,
	     errno ? strerror(errno) : "-");
	exit(1);
}

static socklen_t mkaddr(struct sockaddr_storage *ss, const char *addr, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return 0;
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
		return 0;
	return sizeof(*s4);
}

static int port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port :
						 ((const struct sockaddr_in *)ss)->sin_port);
}

static int listener(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port);
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), on = 1;

	if (!l || fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&ss, l) || listen(fd, 4)) {
		perror("tcpstream: listen");
		exit(2);
	}
	return fd;
}

static const int kopt[3] = { TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT };
static const int kval[3] = { 77, 13, 4 };

static int server(int lfd)
{
	static unsigned char buf[65536];
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	uint64_t recvd = 0;
	long long last = now_ms();
	int fd, one = 1;

	fd = accept(lfd, (struct sockaddr *)&peer, &pl);
	if (fd < 0)
		bad("server", "accept", 0);
	/* options the dump must keep, checked at the end */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	for (int k = 0; k < 3; k++)
		setsockopt(fd, IPPROTO_TCP, kopt[k], &kval[k], sizeof(kval[k]));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bad("server", "read", recvd);
		if (n == 0)
			break;
		for (ssize_t k = 0; k < n; k++)
			if (buf[k] != byte_at(recvd + k)) {
				errno = 0;
				bad("server", "wrong byte", recvd + k);
			}
		for (ssize_t o = 0; o < n;) {
			ssize_t w = write(fd, buf + o, n - o);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				bad("server", "write", recvd + o);
			o += w;
		}
		recvd += n;
		if (now_ms() - last >= 200) {
			last = now_ms();
			outf(out, "s %llu\n", (unsigned long long)recvd);
		}
	}
	{
		int v = 0;
		socklen_t vl = sizeof(v);

		if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl) || !v) {
			errno = 0;
			bad("server", "TCP_NODELAY lost", recvd);
		}
		if (getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &vl) || !v) {
			errno = 0;
			bad("server", "SO_KEEPALIVE lost", recvd);
		}
		for (int k = 0; k < 3; k++)
			if (getsockopt(fd, IPPROTO_TCP, kopt[k], &v, &vl) || v != kval[k]) {
				errno = 0;
				bad("server", "TCP_KEEPIDLE/INTVL/CNT lost", recvd);
			}
	}
	outf(out, "server done recv %llu port %d ok\n", (unsigned long long)recvd, port_of(&peer));
	close(fd);
	return 0;
}

static int client(const char *addr, int port)
{
	static unsigned char buf[65536];
	struct sockaddr_storage ss, me;
	socklen_t l = mkaddr(&ss, addr, port), ml = sizeof(me);
	uint64_t sent = 0, recvd = 0;
	long long last = now_ms();
	int fd, shut = 0, tries;

	signal(SIGTERM, on_term);
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	for (tries = 0; fd >= 0 && connect(fd, (struct sockaddr *)&ss, l); tries++) {
		if (tries > 100)
			bad("client", "connect", 0);
		usleep(20000);
	}
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&me, &ml))
		bad("client", "socket", 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	{
		int sz = 98304;

		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (term && !shut) {
			if (shutdown(fd, SHUT_WR))
				bad("client", "shutdown", sent);
			shut = 1;
		}
		if (!shut && sent - recvd < OUTSTANDING)
			p.events |= POLLOUT;
		if (poll(&p, 1, 200) < 0 && errno != EINTR)
			bad("client", "poll", sent);
		if (p.revents & POLLOUT) {
			size_t n = OUTSTANDING - (sent - recvd);

			if (n > 16384)
				n = 16384;
			for (size_t k = 0; k < n; k++)
				buf[k] = byte_at(sent + k);
			ssize_t w = write(fd, buf, n);

			if (w < 0 && errno != EAGAIN && errno != EINTR)
				bad("client", "write", sent);
			if (w > 0)
				sent += w;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			/*
			 * Half as much read as written per round while
			 * the stream runs: the echo piles up to
			 * OUTSTANDING in the queues, so a dump at any
			 * moment finds data queued (a loopback echo read
			 * as fast as it comes was often all caught up).
			 */
			ssize_t n = read(fd, buf, shut ? sizeof(buf) : 8192);

			if (n < 0 && errno != EAGAIN && errno != EINTR)
				bad("client", "read", recvd);
			if (n == 0) {
				if (!shut) {
					errno = 0;
					bad("client", "end of stream before its end", recvd);
				}
				break;
			}
			for (ssize_t k = 0; k < n; k++)
				if (buf[k] != byte_at(recvd + k)) {
					errno = 0;
					bad("client", "wrong byte", recvd + k);
				}
			if (n > 0)
				recvd += n;
		}
		if (now_ms() - last >= 200) {
			last = now_ms();
			outf(out, "c %llu %llu\n", (unsigned long long)sent, (unsigned long long)recvd);
		}
		usleep(1000);
	}
	if (recvd != sent) {
		errno = 0;
		bad("client", "echo shorter than the stream", recvd);
	}
	{
		int sz = 0;
		socklen_t sl = sizeof(sz);

		errno = 0;
		if (!(fcntl(fd, F_GETFL) & O_NONBLOCK))
			bad("client", "O_NONBLOCK lost", recvd);
		if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, &sl) || sz != 2 * 98304)
			bad("client", "SO_SNDBUF changed", sz);
	}
	outf(out, "client done sent %llu recv %llu port %d ok\n", (unsigned long long)sent,
	     (unsigned long long)recvd, port_of(&me));
	return 0;
}

static int closewait(int port)
{
	int lfd = listener("127.0.0.1", port), c, a;
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, "127.0.0.1", port);

	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&ss, l) || (a = accept(lfd, NULL, NULL)) < 0) {
		perror("tcpstream closewait");
		return 2;
	}
	close(a);	/* c: CLOSE-WAIT */
	for (;;)
		pause();
}

/*
 * feed: accepts one connection, reads until its end (the client shuts its
 * side at once), then sends the stream until SIGTERM, closes, and writes
 * "feed done sent N".
 */
static int feed(int lfd)
{
	static unsigned char buf[16384];
	uint64_t sent = 0;
	int fd;

	signal(SIGTERM, on_term);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		bad("feed", "accept", 0);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	while (!term) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = byte_at(sent + k);
		ssize_t w = write(fd, buf, sizeof(buf));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			bad("feed", "write", sent);
		sent += w;
		usleep(2000);
	}
	close(fd);
	outf(out, "feed done sent %llu\n", (unsigned long long)sent);
	return 0;
}

/*
 * drain: connects, shuts its write side at once (FIN-WAIT-2 once the FIN
 * is acknowledged), reads the stream, checking every byte; "d RECV" every
 * 200 ms; at the end of the stream "drain done recv N ok".
 */
static int drain(const char *addr, int port)
{
	static unsigned char buf[65536];
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port);
	uint64_t recvd = 0;
	long long last = now_ms();
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), tries;

	for (tries = 0; fd >= 0 && connect(fd, (struct sockaddr *)&ss, l); tries++) {
		if (tries > 100)
			bad("drain", "connect", 0);
		usleep(20000);
	}
	if (fd < 0 || shutdown(fd, SHUT_WR))
		bad("drain", "shutdown", 0);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bad("drain", "read", recvd);
		if (n == 0)
			break;
		for (ssize_t k = 0; k < n; k++)
			if (buf[k] != byte_at(recvd + k)) {
				errno = 0;
				bad("drain", "wrong byte", recvd + k);
			}
		recvd += n;
		if (now_ms() - last >= 200) {
			last = now_ms();
			outf(out, "d %llu\n", (unsigned long long)recvd);
		}
	}
	outf(out, "drain done recv %llu ok\n", (unsigned long long)recvd);
	return 0;
}

/* synsent: a connection that never gets an answer (the test drops it): SYN-SENT */
static int synsent(int port)
{
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, "127.0.0.1", port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0 || (connect(fd, (struct sockaddr *)&ss, l) && errno != EINPROGRESS)) {
		perror("tcpstream synsent");
		return 2;
	}
	for (;;)
		pause();
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

/*
 * sink: accepts one connection and reads nothing until SIGUSR1 (the
 * client's data and FIN stay queued at the client: FIN-WAIT-1); then reads
 * to the end, checking every byte: "sink done recv N ok".
 */
static int sink(int lfd)
{
	static unsigned char buf[65536];
	uint64_t recvd = 0;
	int fd;

	signal(SIGUSR1, on_usr1);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		bad("sink", "accept", 0);
	while (!usr1)
		usleep(10000);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bad("sink", "read", recvd);
		if (n == 0)
			break;
		for (ssize_t k = 0; k < n; k++)
			if (buf[k] != byte_at(recvd + k)) {
				errno = 0;
				bad("sink", "wrong byte", recvd + k);
			}
		recvd += n;
	}
	outf(out, "sink done recv %llu ok\n", (unsigned long long)recvd);
	return 0;
}

/*
 * fill: connects, writes the stream until nothing more fits (the sink
 * reads nothing), "fill wrote N", shuts its write side (its FIN queued
 * behind the unsent data: FIN-WAIT-1) and sleeps.
 */
static int fill(const char *addr, int port)
{
	static unsigned char buf[16384];
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port);
	uint64_t sent = 0;
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), tries, idle = 0;

	for (tries = 0; fd >= 0 && connect(fd, (struct sockaddr *)&ss, l); tries++) {
		if (tries > 100)
			bad("fill", "connect", 0);
		usleep(20000);
	}
	if (fd < 0)
		bad("fill", "socket", 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (idle < 50) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = byte_at(sent + k);
		ssize_t w = write(fd, buf, sizeof(buf));

		if (w < 0 && errno != EAGAIN && errno != EINTR)
			bad("fill", "write", sent);
		if (w > 0) {
			sent += w;
			idle = 0;
		} else {
			idle++;
			usleep(10000);
		}
	}
	if (shutdown(fd, SHUT_WR))
		bad("fill", "shutdown", sent);
	outf(out, "fill wrote %llu\n", (unsigned long long)sent);
	while (!term)
		pause();
	return 0;
}

/*
 * fillq: fill() with the connection left open: "fill wrote N sndbuf B
 * rcvbuf R lock L" (SO_SNDBUF, SO_RCVBUF, SO_BUF_LOCK), then at SIGTERM
 * checks those are as they were ("BAD" if not), shuts its side, reads to
 * the end (the sink closes after reading everything): "fillq done ok".
 */
static int bufs(int fd, int v[3])
{
	socklen_t l = sizeof(int);
	int r = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v[0], &l);

	l = sizeof(int);
	r |= getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v[1], &l);
	l = sizeof(int);
	v[2] = -1;
	getsockopt(fd, SOL_SOCKET, 72 /* SO_BUF_LOCK */, &v[2], &l);
	return r;
}

static int fillq(const char *addr, int port, int sndbuf)
{
	static unsigned char buf[16384];
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port);
	uint64_t sent = 0;
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), tries, idle = 0, v[3], v2[3];

	signal(SIGTERM, on_term);
	if (fd >= 0 && sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		bad("fillq", "SO_SNDBUFFORCE", 0);
	for (tries = 0; fd >= 0 && connect(fd, (struct sockaddr *)&ss, l); tries++) {
		if (tries > 100)
			bad("fillq", "connect", 0);
		usleep(20000);
	}
	if (fd < 0)
		bad("fillq", "socket", 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (idle < 100) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = byte_at(sent + k);
		ssize_t w = write(fd, buf, sizeof(buf));

		if (w < 0 && errno != EAGAIN && errno != EINTR)
			bad("fillq", "write", sent);
		if (w > 0) {
			sent += w;
			idle = 0;
		} else {
			idle++;
			usleep(10000);
		}
	}
	if (bufs(fd, v))
		bad("fillq", "getsockopt", sent);
	outf(out, "fill wrote %llu sndbuf %d rcvbuf %d lock %d\n", (unsigned long long)sent, v[0], v[1], v[2]);
	while (!term)
		pause();
	if (bufs(fd, v2))
		bad("fillq", "getsockopt", sent);
	if (v2[0] != v[0] || v2[1] != v[1] || v2[2] != v[2]) {
		outf(out, "BAD fillq: sndbuf %d rcvbuf %d lock %d, were %d %d %d\n", v2[0], v2[1], v2[2],
		     v[0], v[1], v[2]);
		exit(1);
	}
	outf(out, "fillq bufs ok\n");
	if (shutdown(fd, SHUT_WR))
		bad("fillq", "shutdown", sent);
	fcntl(fd, F_SETFL, 0);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bad("fillq", "read", sent);
		if (n == 0)
			break;
	}
	outf(out, "fillq done ok\n");
	return 0;
}

/* reuse: a SO_REUSEPORT listener on ADDR PORT answering NAME to each connection */
static int reuse(const char *addr, int port, const char *name)
{
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port), ol;
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), on = 1, c;

	if (!l || fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&ss, l) || listen(fd, 16))
		bad("reuse", "listen", 0);
	outf(out, "reuse %s listening\n", name);
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0 && errno == EINTR)
			continue;
		if (c < 0)
			bad("reuse", "accept", 0);
		on = 0;
		ol = sizeof(on);
		if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &ol) || !on)
			bad("reuse", "SO_REUSEPORT lost", 0);
		if (dprintf(c, "%s\n", name) < 0)
			bad("reuse", "write", 0);
		close(c);
	}
	return 0;
}

static int ask(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(&ss, addr, port);
	char b[64];
	int i;

	for (i = 0; i < 40; i++) {
		int fd = socket(ss.ss_family, SOCK_STREAM, 0);
		ssize_t n;

		if (fd < 0 || connect(fd, (struct sockaddr *)&ss, l))
			bad("ask", "connect", i);
		n = read(fd, b, sizeof(b) - 1);
		if (n <= 0)
			bad("ask", "read", i);
		b[n] = 0;
		outf(out, "ans %s", b);
		close(fd);
	}
	return 0;
}

/*
 * hold: connects, writes 1000 bytes of the stream ("hold connected"),
 * then at SIGUSR1 looks at its socket: "hold closed ok" if it is a TCP
 * socket in state CLOSE (TCP_INFO), without a peer (getpeername: ENOTCONN)
 * and a write says EPIPE (imgcr restore --tcp-close); "hold open ok" if it
 * is still established; else BAD.
 */
static int hold(const char *addr, int port)
{
	unsigned char buf[1000];
	struct sockaddr_storage ss, peer;
	socklen_t l = mkaddr(&ss, addr, port), pl = sizeof(peer), tl;
	struct tcp_info ti;
	int fd = socket(ss.ss_family, SOCK_STREAM, 0), tries, perr;
	ssize_t n;

	signal(SIGUSR1, on_usr1);
	for (tries = 0; fd >= 0 && connect(fd, (struct sockaddr *)&ss, l); tries++) {
		if (tries > 100)
			bad("hold", "connect", 0);
		usleep(20000);
	}
	if (fd < 0)
		bad("hold", "socket", 0);
	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = byte_at(k);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		bad("hold", "write", 0);
	outf(out, "hold connected\n");
	while (!usr1)
		pause();
	tl = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
		bad("hold", "TCP_INFO", 0);
	perr = getpeername(fd, (struct sockaddr *)&peer, &pl) ? errno : 0;
	if (ti.tcpi_state == TCP_ESTABLISHED && !perr) {
		outf(out, "hold open ok\n");
		return 0;
	}
	n = send(fd, buf, 1, MSG_NOSIGNAL);
	if (ti.tcpi_state == TCP_CLOSE && perr == ENOTCONN && n < 0 && errno == EPIPE) {
		outf(out, "hold closed ok\n");
		return 0;
	}
	outf(out, "BAD hold: state %d, getpeername errno %d, send %zd errno %d\n", ti.tcpi_state, perr, n,
	     n < 0 ? errno : 0);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && (!strcmp(argv[1], "pair") || !strcmp(argv[1], "srv") ||
			  !strcmp(argv[1], "cli") || !strcmp(argv[1], "feed") ||
			  !strcmp(argv[1], "drain") || !strcmp(argv[1], "sink") ||
			  !strcmp(argv[1], "fill") || !strcmp(argv[1], "fillq") ||
			  !strcmp(argv[1], "reuse") || !strcmp(argv[1], "ask") ||
			  !strcmp(argv[1], "hold"))) {
		int port = atoi(argv[3]), lfd = -1;
		pid_t pid;

		out = open(argv[4], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (out < 0) {
			perror(argv[4]);
			return 2;
		}
		if (!strcmp(argv[1], "cli"))
			return client(argv[2], port);
		if (!strcmp(argv[1], "drain"))
			return drain(argv[2], port);
		if (!strcmp(argv[1], "fill"))
			return fill(argv[2], port);
		if (!strcmp(argv[1], "fillq"))
			return fillq(argv[2], port, argc > 5 ? atoi(argv[5]) : 0);
		if (!strcmp(argv[1], "reuse"))
			return reuse(argv[2], port, argc > 5 ? argv[5] : "?");
		if (!strcmp(argv[1], "ask"))
			return ask(argv[2], port);
		if (!strcmp(argv[1], "hold"))
			return hold(argv[2], port);
		lfd = listener(argv[2], port);
		if (!strcmp(argv[1], "feed"))
			return feed(lfd);
		if (!strcmp(argv[1], "sink"))
			return sink(lfd);
		if (!strcmp(argv[1], "srv"))
			return server(lfd);
		pid = fork();
		if (pid < 0)
			return 2;
		if (!pid) {
			close(lfd);
			return client(argv[2], port);
		}
		/*
		 * The client ends last (it reads the echo to the end after the
		 * server's close): as a container's pid 1, an exit now would
		 * kill it before it says so.
		 */
		{
			int r = server(lfd);

			waitpid(pid, NULL, 0);
			return r;
		}
	}
	if (argc == 3 && !strcmp(argv[1], "closewait"))
		return closewait(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "synsent"))
		return synsent(atoi(argv[2]));
	fprintf(stderr, "usage: tcpstream pair|srv|cli|feed|drain|sink|fill|fillq|reuse|ask|hold ADDR PORT OUT | closewait|synsent PORT\n");
	return 2;
}
