/*
 * zpgrp MODE: a parent with a child Z in a process group whose leader is
 * not in the tree of the parent (issue 22):
 *   out   Z is forked in the parent's first group (its caller's: the test
 *         shell's, led outside), then the parent makes a group of its
 *         own; Z exits with code 3 and stays a zombie.
 *   gone  the parent forks L (leads a group of its own) and Z, which
 *         joins L's group and exits with code 3 (a zombie); L then exits
 *         and is reaped: Z's group has no leader any more.
 *   live  as gone, but Z lives on (pause()) instead of exiting.
 * Prints "pids Z G" (G: Z's group) and "ready" once Z is set up.  On
 * SIGUSR1 it reaps Z (live: kills it first) and prints "reaped ok" if its
 * status is as expected (exit 3; live: SIGTERM), "reaped BAD ..." if not.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int out = argc == 2 && !strcmp(argv[1], "out");
	int live = argc == 2 && !strcmp(argv[1], "live");
	int pfd[2], st, n;
	pid_t z, l = 0, g;

	if (argc != 2 || (!out && !live && strcmp(argv[1], "gone"))) {
		outf(2, "usage: zpgrp out|gone|live\n");
		return 64;
	}
	signal(SIGUSR1, on_usr1);
	if (out) {
		z = fork();
		if (z == 0)
			_exit(3);
		if (setpgid(0, 0)) {
			outf(2, "setpgid: %s\n", errname(errno));
			return 1;
		}
		g = getpgid(z);
	} else {
		if (pipe(pfd))
			return 1;
		l = fork();
		if (l == 0) {
			char c;

			setpgid(0, 0);
			close(pfd[1]);
			(void)!read(pfd[0], &c, 1);
			_exit(0);
		}
		setpgid(l, l);
		close(pfd[0]);
		z = fork();
		if (z == 0) {
			close(pfd[1]);
			if (setpgid(0, l))
				_exit(99);
			if (live)
				for (;;)
					pause();
			_exit(3);
		}
		setpgid(z, l);
		g = l;
	}
	/* Z set up: a zombie, or (live) in L's group */
	for (n = 0; n < 1000; n++) {
		if (live ? getpgid(z) == l : task_state(z) == 'Z')
			break;
		nap(10);
	}
	if (!out) {
		close(pfd[1]);
		if (waitpid(l, &st, 0) != l) {
			outf(2, "waitpid L: %s\n", errname(errno));
			return 1;
		}
	}
	say("pids %d %d\n", (int)z, (int)g);
	say("ready\n");
	while (!go)
		pause();
	if (live)
		kill(z, SIGTERM);
	if (waitpid(z, &st, 0) != z) {
		say("reaped BAD waitpid: %s\n", errname(errno));
		return 1;
	}
	if (live ? WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM :
		   WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		say("reaped ok\n");
		return 0;
	}
	say("reaped BAD status %#x\n", st);
	return 1;
}
