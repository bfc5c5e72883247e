/*
 * ptyrun [-w ROWSxCOLS] OUT IN CMD [ARGS...]: a terminal for a test.  Makes
 * a pty pair (window size ROWSxCOLS), runs CMD as a session leader with the
 * slave as its controlling terminal and stdio, appends everything read from
 * the master to the file OUT, and writes to the master whatever arrives on
 * the FIFO IN.  Prints "pts=/dev/pts/N child=PID" on stdout.  Exits with
 * the child's status once it has exited and no one holds the slave.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct winsize ws = { 24, 80, 0, 0 };
	int m, in, out, i = 1, st = 0, done = 0;
	pid_t kid;
	char buf[4096];

	if (argc > 2 && !strcmp(argv[1], "-w")) {
		if (sscanf(argv[2], "%hux%hu", &ws.ws_row, &ws.ws_col) != 2)
			return 2;
		i = 3;
	}
	if (argc - i < 3) {
		fprintf(stderr, "usage: ptyrun [-w ROWSxCOLS] OUT IN CMD [ARGS...]\n");
		return 2;
	}
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m) || ioctl(m, TIOCSWINSZ, &ws)) {
		perror("ptyrun: pty");
		return 1;
	}
	out = open(argv[i], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	in = open(argv[i + 1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (out < 0 || in < 0) {
		perror("ptyrun: OUT or IN");
		return 1;
	}
	kid = fork();
	if (kid == 0) {
		int s;

		setsid();
		s = open(ptsname(m), O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0)) {
			perror("ptyrun: slave");
			_exit(127);
		}
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		execvp(argv[i + 2], argv + i + 2);
		perror("ptyrun: exec");
		_exit(127);
	}
	say("pts=%s child=%d\n", ptsname(m), (int)kid);
	for (;;) {
		struct pollfd pf[2] = { { m, POLLIN, 0 }, { in, POLLIN, 0 } };
		ssize_t n;

		if (!done && waitpid(kid, &st, WNOHANG) == kid)
			done = 1;
		if (poll(pf, 2, 100) < 0)
			continue;
		if (pf[0].revents & POLLIN) {
			n = read(m, buf, sizeof(buf));
			if (n > 0 && write(out, buf, n) != n)
				return 1;
		} else if (pf[0].revents & POLLHUP) {
			/* no slave open: before the child opened it, or after everyone closed it */
			if (done)
				break;
			usleep(20000);
		}
		if (pf[1].revents & POLLIN) {
			n = read(in, buf, sizeof(buf));
			if (n > 0 && write(m, buf, n) != n)
				perror("ptyrun: write to the master");
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
