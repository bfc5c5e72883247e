#define _GNU_SOURCE
/*
 * consock: a container runtime's console socket receiver (runc's
 * --console-socket, as runc's recvtty), for t_runc's runc-tty.
 *   consock SOCK DIR
 * listens on the AF_UNIX stream socket SOCK; each connection brings one pty
 * master (SCM_RIGHTS, runc's SendFd: the name as data), kept open for good
 * (the Nth: DIR/gotN says "pts=INDEX rows=R cols=C lflag=0OCT intr=N
 * echo=0|1", read from the master: a pty master's TCGETS and TIOCGWINSZ are
 * its slave's).  Everything the newest master gives is appended to
 * DIR/outN; bytes written to the fifo DIR/in go to the newest master.  Runs
 * until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static int recv_master(int c)
{
	char name[4096], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { name, sizeof(name) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(c, &msg, MSG_CMSG_CLOEXEC) < 0)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[4096], buf[4096];
	int l, in, m = -1, out = -1, n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: consock SOCK DIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	unlink(argv[1]);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 4)) {
		perror("consock: socket");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/in", argv[2]);
	unlink(path);
	if (mkfifo(path, 0600)) {
		perror("consock: mkfifo");
		return 1;
	}
	in = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (in < 0) {
		perror("consock: fifo");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ready", argv[2]);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	for (;;) {
		struct pollfd pf[3] = { { l, POLLIN, 0 }, { in, POLLIN, 0 }, { m, POLLIN, 0 } };
		ssize_t r;

		if (poll(pf, m >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("consock: poll");
			return 1;
		}
		if (pf[0].revents & POLLIN) {
			int c = accept4(l, NULL, NULL, SOCK_CLOEXEC), fd, pts = -1;
			struct termios tio;
			struct winsize ws;
			FILE *f;

			fd = c < 0 ? -1 : recv_master(c);
			if (c >= 0)
				close(c);
			if (fd < 0) {
				perror("consock: no master received");
				continue;
			}
			/* the old master stays open (its holder keeps it), unread */
			m = fd;
			n++;
			memset(&tio, 0, sizeof(tio));
			memset(&ws, 0, sizeof(ws));
			ioctl(m, TIOCGPTN, &pts);
			tcgetattr(m, &tio);
			ioctl(m, TIOCGWINSZ, &ws);
			snprintf(path, sizeof(path), "%s/out%d", argv[2], n);
			if (out >= 0)
				close(out);
			out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			snprintf(path, sizeof(path), "%s/got%d.tmp", argv[2], n);
			f = fopen(path, "w");
			if (f) {
				char fin[4096];

				fprintf(f, "pts=%d rows=%u cols=%u lflag=0%o intr=%u echo=%d\n", pts,
					ws.ws_row, ws.ws_col, tio.c_lflag, tio.c_cc[VINTR],
					!!(tio.c_lflag & ECHO));
				fclose(f);
				snprintf(fin, sizeof(fin), "%s/got%d", argv[2], n);
				rename(path, fin);
			}
		}
		if (pf[1].revents & POLLIN) {
			r = read(in, buf, sizeof(buf));
			if (r > 0 && m >= 0 && write(m, buf, r) != r)
				perror("consock: write to the master");
		}
		if (m >= 0 && (pf[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			r = read(m, buf, sizeof(buf));
			if (r > 0 && out >= 0) {
				if (write(out, buf, r) != r)
					perror("consock: out");
			} else if (r <= 0) {
				/* the slave side is gone (the container checkpointed): wait for the next */
				m = -1;
			}
		}
	}
}
