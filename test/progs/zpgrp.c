/*
 * zpgrp MODE: a parent with a child Z in a process group whose leader is
 * not in the tree of the parent (issue 22):
 *   out   Z is forked in the parent's first group (its caller's: the test
 *         shell's, led outside), then the parent makes a group of its
 *         own; Z exits with code 3 and stays a zombie.
 *   gone  the parent forks L (leads a group of its own) and Z, which
 *         joins L's group and exits with code 3 (a zombie); L then exits
 *         and is reaped: Z's group has no leader any more.
 *   live  as gone, but Z lives on (pause()) instead of exiting; the
 *         parent holds a pipe whose read end sends SIGIO to group G
 *         (O_ASYNC, F_SETOWN -G), which makes Z exit with code 5.
 *   ext L Z joins with setpgid() the group of L, a process outside the
 *         tree in the same session (zpgrp lead), and exits with code 3
 *         (a zombie); a second child W joins it too and lives on.
 *   lead  (not a tree) makes a group of its own, prints "lead L" and
 *         sleeps until killed.
 * Prints "pids Z G [W]" (G: Z's group) and "ready" once Z is set up.  On
 * SIGUSR1 it checks getpgid() of Z (and W) is G still, reaps Z (live: the
 * pipe's owner is still -G and a byte written to it ends Z by SIGIO, else
 * SIGTERM after 5 s; ext: W too) and prints "reaped ok" if its status is as
 * expected (exit 3; live: exit 5), "reaped BAD ..." if not.
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

static void on_io(int sig)
{
	(void)sig;
	_exit(5);
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
	int ext = argc == 3 && !strcmp(argv[1], "ext");
	int pfd[2], io[2] = { -1, -1 }, st, n;
	pid_t z, l = 0, g, w = 0;

	if (argc == 2 && !strcmp(argv[1], "lead")) {
		if (setpgid(0, 0))
			return 1;
		say("lead %d\n", (int)getpid());
		for (;;)
			pause();
	}
	if (!ext && (argc != 2 || (!out && !live && strcmp(argv[1], "gone")))) {
		outf(2, "usage: zpgrp out|gone|live|lead|ext L\n");
		return 64;
	}
	signal(SIGUSR1, on_usr1);
	if (ext) {
		g = l = atoi(argv[2]);
		w = fork();
		if (w == 0) {
			if (setpgid(0, l))
				_exit(99);
			for (;;)
				pause();
		}
		z = fork();
		if (z == 0)
			_exit(setpgid(0, l) ? 99 : 3);
		for (n = 0; n < 1000 && (getpgid(w) != l || task_state(z) != 'Z'); n++)
			nap(10);
		if (getpgid(w) != l) {
			outf(2, "W did not join group %d\n", (int)l);
			return 1;
		}
	} else if (out) {
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
			if (live) {
				signal(SIGIO, on_io);
				for (;;)
					pause();
			}
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
	if (!out && !ext) {
		close(pfd[1]);
		if (waitpid(l, &st, 0) != l) {
			outf(2, "waitpid L: %s\n", errname(errno));
			return 1;
		}
	}
	if (live && (pipe(io) || fcntl(io[0], F_SETOWN, -g) ||
		     fcntl(io[0], F_SETFL, O_ASYNC | O_NONBLOCK))) {
		outf(2, "SIGIO pipe: %s\n", errname(errno));
		return 1;
	}
	if (ext)
		say("pids %d %d %d\n", (int)z, (int)g, (int)w);
	else
		say("pids %d %d\n", (int)z, (int)g);
	say("ready\n");
	while (!go)
		pause();
	if (getpgid(z) != g || (ext && getpgid(w) != g)) {
		say("reaped BAD group of Z %d, of W %d, want %d\n", (int)getpgid(z),
		    ext ? (int)getpgid(w) : 0, (int)g);
		return 1;
	}
	if (ext) {
		kill(w, SIGTERM);
		if (waitpid(w, &st, 0) != w || !WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM) {
			say("reaped BAD W status %#x\n", st);
			return 1;
		}
	}
	if (live) {
		if (fcntl(io[0], F_GETOWN) != -g) {
			say("reaped BAD owner of the SIGIO pipe %d, want %d\n",
			    fcntl(io[0], F_GETOWN), (int)-g);
			kill(z, SIGTERM);
			return 1;
		}
		(void)!write(io[1], "x", 1);
		for (n = 0; n < 500 && waitpid(z, &st, WNOHANG) == 0; n++)
			nap(10);
		if (n == 500) {
			kill(z, SIGTERM);
			waitpid(z, &st, 0);
			say("reaped BAD no SIGIO reached Z in 5 s\n");
			return 1;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 5) {
			say("reaped ok\n");
			return 0;
		}
		say("reaped BAD status %#x\n", st);
		return 1;
	}
	if (waitpid(z, &st, 0) != z) {
		say("reaped BAD waitpid: %s\n", errname(errno));
		return 1;
	}
	if (!live && WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		say("reaped ok\n");
		return 0;
	}
	say("reaped BAD status %#x\n", st);
	return 1;
}
