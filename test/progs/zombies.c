/*
 * zombies: a parent with three children that it does not reap until told:
 *   A  leads its own process group, then exits with code 3
 *   B  leads its own session, then kills itself with SIGTERM
 *   C  joins A's process group (before A exits) and lives on, in pause()
 *   D  is killed by SIGKILL from the parent
 *   E  aborts (SIGABRT) with RLIMIT_CORE unlimited: it dumps core if the
 *      system lets it
 * The parent prints "pids A B C D E" and, once A, B, D and E are zombies
 * (it looks at /proc, it does not wait), "ready".  On SIGUSR1 it reaps A,
 * B, D and E with waitpid() and prints for each "reaped PID exited N" or
 * "reaped PID signaled S [core]" plus "ok ..." or "BAD ..." against what
 * it expects (A: exit 3, B: SIGTERM, D: SIGKILL, E: SIGABRT; none with the
 * core-dump flag: it is meant to be reaped after a restore, which does not
 * give it back), then kills and reaps C and prints "done ok" or "done
 * BAD".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
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

/* Reap @pid and check its status; 0 if as expected. */
static int reap(pid_t pid, int code, int sig)
{
	int st;
	pid_t r;

	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (r != pid) {
		say("BAD waitpid %d: %s\n", (int)pid, errname(errno));
		return 1;
	}
	if (WIFEXITED(st)) {
		say("reaped %d exited %d\n", (int)pid, WEXITSTATUS(st));
		if (sig || WEXITSTATUS(st) != code) {
			say("BAD %d: want %s %d\n", (int)pid, sig ? "signal" : "exit", sig ? sig : code);
			return 1;
		}
	} else if (WIFSIGNALED(st)) {
		say("reaped %d signaled %d%s\n", (int)pid, WTERMSIG(st), WCOREDUMP(st) ? " core" : "");
		if (!sig || WTERMSIG(st) != sig || WCOREDUMP(st)) {
			say("BAD %d: want %s %d\n", (int)pid, sig ? "signal" : "exit", sig ? sig : code);
			return 1;
		}
	} else {
		say("BAD %d: status %#x\n", (int)pid, st);
		return 1;
	}
	say("ok %d\n", (int)pid);
	return 0;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t a, b, c, d, e;
	int bad = 0, p[2];
	char x;

	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(p))
		return 2;
	a = fork();
	if (a == 0) {
		setpgid(0, 0);
		/* wait until C has joined the group */
		if (read(p[0], &x, 1) != 1)
			_exit(9);
		_exit(3);
	}
	setpgid(a, a);
	b = fork();
	if (b == 0) {
		setsid();
		kill(getpid(), SIGTERM);
		_exit(9);
	}
	c = fork();
	if (c == 0) {
		if (setpgid(0, a))
			_exit(8);
		if (write(p[1], "j", 1) != 1)
			_exit(7);
		for (;;)
			pause();
	}
	d = fork();
	if (d == 0) {
		for (;;)
			pause();
	}
	e = fork();
	if (e == 0) {
		struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_CORE, &r);
		abort();
	}
	kill(d, SIGKILL);
	say("pids %d %d %d %d %d\n", (int)a, (int)b, (int)c, (int)d, (int)e);
	while (task_state(a) != 'Z' || task_state(b) != 'Z' || task_state(d) != 'Z' ||
	       task_state(e) != 'Z')
		nap(10);
	say("ready\n");
	while (!go)
		nap(20);
	bad |= reap(a, 3, 0);
	bad |= reap(b, 0, SIGTERM);
	bad |= reap(d, 0, SIGKILL);
	bad |= reap(e, 0, SIGABRT);
	kill(c, SIGKILL);
	bad |= reap(c, 0, SIGKILL);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
