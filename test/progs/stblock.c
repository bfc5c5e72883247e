/*
 * stblock IMAGE N: binfmt_img's status pipe never holds up a refused exec
 * (review s11 M3).  Fills a non-blocking pipe, then, N times, a child
 * execs IMAGE with "--imgcr-status=FD" and an unknown "--imgcr-" argument
 * (refused: the reason goes to the full pipe), while another child, which
 * shares the pipe's open file, clears and sets its O_NONBLOCK in a loop.
 * Before 6.5 pipe_write() ignored IOCB_NOWAIT: a write into the full pipe
 * while O_NONBLOCK was clear blocked the exec until a signal.  Each child
 * has 5 s (alarm()).  Prints "stblock ok N" (exit 0) or "stblock BLOCKED
 * at try I" (exit 1).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "common.h"

extern char **environ;

int main(int argc, char **argv)
{
	char status_arg[32], buf[4096];
	int fds[2], n, i, st;
	pid_t tog, c;

	if (argc != 3) {
		outf(2, "usage: stblock IMAGE N\n");
		return 64;
	}
	n = atoi(argv[2]);
	if (pipe2(fds, O_NONBLOCK)) {
		say("stblock FAIL pipe2: %s\n", strerror(errno));
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	while (write(fds[1], buf, sizeof(buf)) > 0)
		;
	tog = fork();
	if (!tog) {
		for (;;) {
			fcntl(fds[1], F_SETFL, 0);
			fcntl(fds[1], F_SETFL, O_NONBLOCK);
		}
	}
	snprintf(status_arg, sizeof(status_arg), "--imgcr-status=%d", fds[1]);
	for (i = 0; i < n; i++) {
		c = fork();
		if (!c) {
			char *args[] = { argv[1], status_arg, "--imgcr-nosuch", NULL };

			alarm(5);
			execve(argv[1], args, environ);
			_exit(2);
		}
		if (waitpid(c, &st, 0) != c)
			break;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
			kill(tog, SIGKILL);
			say("stblock BLOCKED at try %d\n", i);
			return 1;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 2) {
			kill(tog, SIGKILL);
			say("stblock FAIL try %d: status %#x (the exec was not refused)\n", i, st);
			return 2;
		}
	}
	kill(tog, SIGKILL);
	waitpid(tog, &st, 0);
	say("stblock ok %d\n", n);
	return 0;
}
