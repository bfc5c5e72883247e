/*
 * TCP connections closed from both sides, for t_sk_tcp_closing: a peer
 * (outside the dumped tree) and a node (the tree) on 127.0.0.1:PORT.
 *
 *   tcpclosing peer PORT OUT: listens, accepts one connection, writes 1000
 *     bytes (pattern), reads the node's 500; at SIGUSR1 shuts its write
 *     side; then reads to the end of file ("peer eof"), and waits until
 *     the connection is closed on its side ("peer done").
 *   tcpclosing node lastack|closing PORT OUT: connects, writes 500 bytes,
 *     reads nothing yet.  At SIGUSR1 it shuts its write side (lastack: once
 *     the peer's FIN is in, CLOSE-WAIT, so it goes to LAST-ACK; closing:
 *     at once) and waits for the state it was asked for (LAST-ACK, or
 *     CLOSING once the peer's FIN comes in): "node held STATE".  At SIGUSR2
 *     (after a restore) it checks from inside: TCP_INFO says the same
 *     state, the 1000 bytes then end of file are read, a write fails with
 *     EPIPE: "node restored ok"; then it waits (200 s at most) until the
 *     peer's ACK of its FIN closes the connection: "node closed ok".
 * Any mismatch: a line with BAD, exit 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "common.h"

static volatile sig_atomic_t usr1, usr2;
static int out;

static void on_usr1(int s)
{
	(void)s;
	usr1 = 1;
}

static void on_usr2(int s)
{
	(void)s;
	usr2 = 1;
}

static int state(int fd)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l))
		return -1;
	return ti.tcpi_state;
}

/* until @fd is in state @want, at most @secs seconds: 0, or -1 */
static int wait_state(int fd, int want, int secs)
{
	for (int k = 0; k < secs * 20; k++) {
		if (state(fd) == want)
			return 0;
		usleep(50000);
	}
	return -1;
}

static void bad(const char *fmt, int a, int b)
{
	outf(out, "BAD ");
	outf(out, fmt, a, b);
	outf(out, "\n");
	exit(1);
}

static int full_write(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static void pattern(char *b, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i * 7 + seed);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_usr1 };
	char buf[2048], want[1000];
	int node, port, fd, one = 1, target = 0;
	ssize_t n;
	size_t got = 0;

	if (argc < 4 || (strcmp(argv[1], "peer") && strcmp(argv[1], "node")))
		return 2;
	node = !strcmp(argv[1], "node");
	if (node && (argc != 5 || (strcmp(argv[2], "lastack") && strcmp(argv[2], "closing"))))
		return 2;
	if (node)
		target = strcmp(argv[2], "lastack") ? TCP_CLOSING : TCP_LAST_ACK;
	port = atoi(argv[node ? 3 : 2]);
	out = open(argv[node ? 4 : 3], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		bad("socket %d %d", errno, 0);
	pattern(want, sizeof(want), 3);	/* the peer's 1000 bytes */
	if (!node) {
		int l = fd;

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			bad("bind/listen errno %d %d", errno, 0);
		fd = accept(l, NULL, NULL);
		if (fd < 0)
			bad("accept errno %d %d", errno, 0);
		close(l);
		outf(out, "peer accepted\n");
		if (full_write(fd, want, sizeof(want)))
			bad("peer write errno %d %d", errno, 0);
		pattern(want, 500, 1);
		while (got < 500) {
			n = read(fd, buf, 500 - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || memcmp(buf, want + got, (size_t)n))
				bad("peer read %d at %d", (int)n, (int)got);
			got += (size_t)n;
		}
		outf(out, "peer got 500\n");
		while (!usr1)
			pause();
		if (shutdown(fd, SHUT_WR))
			bad("peer shutdown errno %d %d", errno, 0);
		outf(out, "peer shut\n");
		for (;;) {
			n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n)
				bad("peer read %d at the end (errno %d)", (int)n, errno);
			break;
		}
		outf(out, "peer eof\n");
		for (int k = 0; k < 400 && state(fd) != TCP_CLOSE; k++)
			usleep(50000);
		outf(out, "peer done state=%d\n", state(fd));
		return 0;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		bad("connect errno %d %d", errno, 0);
	{
		struct sockaddr_in me;
		socklen_t l = sizeof(me);

		getsockname(fd, (struct sockaddr *)&me, &l);
		outf(out, "node connected port=%d\n", ntohs(me.sin_port));
	}
	pattern(buf, 500, 1);
	if (full_write(fd, buf, 500))
		bad("node write errno %d %d", errno, 0);
	while (!usr1)
		pause();
	if (target == TCP_LAST_ACK && wait_state(fd, TCP_CLOSE_WAIT, 60))
		bad("node: state %d, not CLOSE-WAIT (%d), before its shutdown", state(fd), TCP_CLOSE_WAIT);
	if (shutdown(fd, SHUT_WR))
		bad("node shutdown errno %d %d", errno, 0);
	if (wait_state(fd, target, 60))
		bad("node: state %d, not %d, after its shutdown", state(fd), target);
	outf(out, "node held %d\n", target);
	while (!usr2)
		pause();
	/* restored: the same state, the data, the end, no more writing */
	if (state(fd) != target)
		bad("node restored in state %d, not %d", state(fd), target);
	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bad("node read errno %d after %d bytes (the end of file was lost)", errno, (int)got);
		if (!n)
			break;
		if (got + (size_t)n > sizeof(want) || memcmp(buf, want + got, (size_t)n))
			bad("node read %d bytes at %d: not the peer's", (int)n, (int)got);
		got += (size_t)n;
	}
	if (got != sizeof(want))
		bad("node read %d bytes, not %d, before the end", (int)got, (int)sizeof(want));
	n = send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != -1 || errno != EPIPE)
		bad("node: a write gave %d (errno %d), not EPIPE", (int)n, errno);
	outf(out, "node restored ok state=%d\n", target);
	if (wait_state(fd, TCP_CLOSE, 200))
		bad("node: state %d, not closed (%d), 200 s after", state(fd), TCP_CLOSE);
	{
		int err = 0;
		socklen_t l = sizeof(err);

		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
		if (err)
			bad("node: closed with error %d (a reset, not the peer's ACK) %d", err, 0);
	}
	outf(out, "node closed ok\n");
	return 0;
}
