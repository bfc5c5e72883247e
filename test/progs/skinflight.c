/*
 * skinflight: file descriptors in flight (SCM_RIGHTS queued, not received)
 * for t_sk_inflight.
 *
 * skinflight main DIR OUT
 *   Queues, in three socketpairs of its own, messages carrying fds and
 *   leaves them unreceived:
 *     stream pair:  "AAAAAAAAAA" (no fds), "fds1" [pipe read end, regular
 *                   file at offset 42], "BBBBB" (no fds), "fds2" [eventfd
 *                   (count 7), unix socket], "tail"
 *     datagram pair: "d1" (no fds), "d2" [the same eventfd]
 *     seqpacket pair: "s1" [the pipe's write end]
 *   The pipe holds "pipedata"; the read end and the file are held only in
 *   flight (closed here), the write end and the eventfd also here; the
 *   unix socket is one end of a pair whose other end it keeps, with
 *   "queued" waiting in the passed end's own queue; the passed end exists
 *   only in flight.  Prints "ready", waits for SIGUSR1 (dump and restore
 *   in between), receives everything with large buffers (the stream's
 *   messages come back glued as the kernel glues them: "AAAAAAAAAAfds1",
 *   "BBBBBfds2", "tail"), prints "received file=F efd=E sock=S pipe=P"
 *   and waits for SIGUSR1 again (the test reads their /proc fdinfo), then
 *   checks each: the pipe's data and that it is the pipe whose write end it
 *   holds, the file's offset and content, the eventfd's count and that it
 *   is the same eventfd it holds, the socket's queued data and that it
 *   talks to its peer.  "skinflight PASS", or "FAIL what" lines.
 * skinflight refuse loop|epoll
 *   Holds a socketpair with, queued in one end: that end itself (loop), or
 *   an epoll fd no one else holds (epoll); prints nothing, sleeps.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common.h"

static int out = 2, fails;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go++;
}

static void die(const char *what)
{
	outf(out, "FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		outf(out, "FAIL %s\n", what);
		fails++;
	}
}

static void send_fds(int sk, const char *data, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { (void *)data, strlen(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	if (sendmsg(sk, &mh, 0) != (ssize_t)strlen(data))
		die("sendmsg");
}

/* one recvmsg: its data (NUL-terminated) into @buf, its fds into @fds; the fd count */
static int recv_fds(int sk, char *buf, size_t size, int *fds, int max)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))];
	struct iovec iov = { buf, size - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sk, &mh, MSG_DONTWAIT);
	int nf = 0;

	if (n < 0)
		die("recvmsg");
	buf[n] = 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (nf + k > max)
				k = max - nf;
			memcpy(fds + nf, CMSG_DATA(cm), k * sizeof(int));
			nf += k;
		}
	check(!(mh.msg_flags & MSG_CTRUNC), "control data truncated");
	return nf;
}

static void wait_usr1(int n)
{
	while (go < n)
		pause();
}

static int do_main(const char *dir, const char *outpath)
{
	int st[2], dg[2], sq[2], pp[2], us[2], file, efd, fds[4], r[8], nf;
	char path[4096], buf[256], data[100];
	uint64_t v;
	int i;

	out = open(outpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 1;
	signal(SIGUSR1, on_usr1);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, st) || socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sq) || socketpair(AF_UNIX, SOCK_STREAM, 0, us))
		die("socketpair");
	if (pipe(pp) || write(pp[1], "pipedata", 8) != 8)
		die("pipe");
	snprintf(path, sizeof(path), "%s/file", dir);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (i = 0; i < 100; i++)
		data[i] = 'a' + i % 26;
	if (file < 0 || write(file, data, 100) != 100 || lseek(file, 42, SEEK_SET) != 42)
		die("file");
	efd = eventfd(7, 0);
	if (efd < 0)
		die("eventfd");
	if (write(us[0], "queued", 6) != 6)
		die("write queued");

	send_fds(st[0], "AAAAAAAAAA", NULL, 0);
	fds[0] = pp[0];
	fds[1] = file;
	send_fds(st[0], "fds1", fds, 2);
	send_fds(st[0], "BBBBB", NULL, 0);
	fds[0] = efd;
	fds[1] = us[1];
	send_fds(st[0], "fds2", fds, 2);
	send_fds(st[0], "tail", NULL, 0);
	send_fds(dg[0], "d1", NULL, 0);
	send_fds(dg[0], "d2", &efd, 1);
	send_fds(sq[0], "s1", &pp[1], 1);
	/* held only in flight from now on */
	close(pp[0]);
	close(file);
	close(us[1]);
	outf(out, "ready\n");
	wait_usr1(1);

	nf = recv_fds(st[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "AAAAAAAAAAfds1") && nf == 2, "stream message 1 (\"AAAAAAAAAAfds1\", 2 fds)");
	if (nf != 2)
		goto out;
	int rpipe = r[0], rfile = r[1];

	nf = recv_fds(st[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "BBBBBfds2") && nf == 2, "stream message 2 (\"BBBBBfds2\", 2 fds)");
	if (nf != 2)
		goto out;
	int refd = r[0], rsock = r[1];

	nf = recv_fds(st[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "tail") && nf == 0, "stream message 3 (\"tail\", no fds)");
	nf = recv_fds(dg[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "d1") && nf == 0, "datagram 1 (\"d1\", no fds)");
	nf = recv_fds(dg[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "d2") && nf == 1, "datagram 2 (\"d2\", 1 fd)");
	int refd2 = nf == 1 ? r[0] : -1;

	nf = recv_fds(sq[1], buf, sizeof(buf), r, 8);
	check(!strcmp(buf, "s1") && nf == 1, "seqpacket message (\"s1\", 1 fd)");
	int rpw = nf == 1 ? r[0] : -1;

	outf(out, "received file=%d efd=%d sock=%d pipe=%d\n", rfile, refd, rsock, rpipe);
	wait_usr1(2);

	/* the pipe: its data, and the write end held here is its own */
	check(read(rpipe, buf, 8) == 8 && !memcmp(buf, "pipedata", 8), "pipe data");
	check(write(pp[1], "more", 4) == 4 && read(rpipe, buf, 4) == 4 && !memcmp(buf, "more", 4),
	      "the pipe in flight is the one whose write end the task holds");
	check(rpw >= 0 && write(rpw, "wend", 4) == 4 && read(rpipe, buf, 4) == 4 &&
	      !memcmp(buf, "wend", 4), "the write end in flight (seqpacket) is the same pipe");
	/* the file: offset and content */
	check(lseek(rfile, 0, SEEK_CUR) == 42, "file offset 42");
	check(read(rfile, buf, 10) == 10 && !memcmp(buf, data + 42, 10), "file content at 42");
	/* the eventfd: its count, the same one as held here (and in the datagram) */
	check(read(refd, &v, 8) == 8 && v == 7, "eventfd count 7");
	v = 5;
	check(write(efd, &v, 8) == 8 && read(refd, &v, 8) == 8 && v == 5,
	      "the eventfd in flight is the one the task holds");
	v = 3;
	check(refd2 >= 0 && write(refd2, &v, 8) == 8 && read(refd, &v, 8) == 8 && v == 3,
	      "the eventfd of the datagram is the same one");
	/* the socket: its own queue, then both ways with its peer */
	check(read(rsock, buf, 6) == 6 && !memcmp(buf, "queued", 6), "passed socket's queued data");
	check(write(rsock, "ping", 4) == 4 && read(us[0], buf, 4) == 4 && !memcmp(buf, "ping", 4),
	      "passed socket -> its peer");
	check(write(us[0], "pong", 4) == 4 && read(rsock, buf, 4) == 4 && !memcmp(buf, "pong", 4),
	      "peer -> passed socket");
out:
	if (!fails)
		outf(out, "skinflight PASS\n");
	return fails ? 1 : 0;
}

static __attribute__((noreturn)) void do_refuse(const char *kind)
{
	int sp[2], fd;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("socketpair");
	if (!strcmp(kind, "loop")) {
		send_fds(sp[0], "x", &sp[1], 1);	/* sp[1] queued in sp[1] */
	} else {
		fd = epoll_create1(0);
		if (fd < 0)
			die("epoll_create1");
		send_fds(sp[0], "x", &fd, 1);
		close(fd);
	}
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "main"))
		return do_main(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "refuse"))
		do_refuse(argv[2]);
	outf(2, "usage: skinflight main DIR OUT | refuse loop|epoll\n");
	return 2;
}
