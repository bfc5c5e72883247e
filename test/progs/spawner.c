/*
 * spawner: a tree whose tasks come and go all the time, for dumping while
 * it changes.  The main process starts a child every ~2 ms: child i exits
 * at once with code i % 100 + 1, or (every third) first forks a
 * grandchild that exits at once, reaps it, and exits with its code.  The
 * main process reaps its children only every 20 starts, so there are
 * zombies most of the time, and checks every status against the code it
 * gave: "BAD ..." if one differs.  One more child, "auto", ignores SIGCHLD
 * and keeps starting children the kernel reaps at once.
 *
 * Prints "ready", "n N" every 100 children, and on SIGUSR1 stops
 * starting, reaps every child left (waiting), kills "auto", and prints
 * "done ok N" (N children checked) or "done BAD".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

#define RING 8192

static volatile sig_atomic_t go;
static pid_t kids[RING];
static int codes[RING];
static int nkids, checked, bad;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

static void check(pid_t pid, int st)
{
	for (int i = 0; i < nkids; i++) {
		if (kids[i] != pid)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != codes[i]) {
			say("BAD child %d: status %#x, want exit %d\n", (int)pid, st, codes[i]);
			bad = 1;
		}
		kids[i] = kids[--nkids];
		codes[i] = codes[nkids];
		checked++;
		return;
	}
	say("BAD child %d: not one of ours (status %#x)\n", (int)pid, st);
	bad = 1;
}

static void reap(int flags)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, flags)) > 0)
		check(p, st);
}

static void autoreaped(void)
{
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		if (fork() == 0)
			_exit(0);
		nap_us(3000);
	}
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t autop;
	int i;

	sigaction(SIGUSR1, &sa, NULL);
	autop = fork();
	if (autop == 0)
		autoreaped();
	say("ready\n");
	for (i = 1; !go; i++) {
		int code = i % 100 + 1;
		pid_t p = fork();

		if (p == 0) {
			if (i % 3 == 0) {
				pid_t g = fork();
				int st;

				if (g == 0)
					_exit(code);
				if (waitpid(g, &st, 0) != g || !WIFEXITED(st))
					_exit(0);
				_exit(WEXITSTATUS(st));
			}
			_exit(code);
		}
		if (p < 0) {
			say("BAD fork: %s\n", errname(errno));
			bad = 1;
			break;
		}
		if (nkids == RING) {
			say("BAD too many children\n");
			bad = 1;
			break;
		}
		kids[nkids] = p;
		codes[nkids++] = code;
		if (i % 20 == 0)
			reap(WNOHANG);
		if (i % 100 == 0)
			say("n %d\n", i);
		nap_us(2000);
	}
	kill(autop, SIGKILL);
	waitpid(autop, NULL, 0);
	reap(0);
	if (nkids) {
		say("BAD %d children never reaped\n", nkids);
		bad = 1;
	}
	say("done %s %d\n", bad ? "BAD" : "ok", checked);
	return bad;
}
