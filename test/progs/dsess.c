/*
 * dsess MODE: a parent R with two daemons in a session whose leader exited
 * (issue 22), as a daemon that forks twice makes them: R forks C, which
 * calls setsid(), forks D1 (left in C's group) and D2 (a group of its own,
 * setpgid(0, 0)) and exits; R reaps C, and D1 and D2 are R's children.
 *   sub    R is a child subreaper (PR_SET_CHILD_SUBREAPER) first
 *   init   R is the init of a PID namespace (started so by the test)
 *   unsub  as sub, but R stops being a subreaper once D1 and D2 are its
 *          children (imgcr dump refuses it: the restore could not give
 *          them back to R)
 *   ztop   as sub, and C forks D3 too, which exits with code 7 at once: a
 *          zombie at the top of the session (refused by imgcr dump), R
 *          reaps it after D1 and D2
 *   grp    as sub, and D2 forks E before it makes its own group: E is in
 *          group C, its parent in D2's (refused by imgcr dump: nothing
 *          could join group C once the session's keeper is gone)
 *   zlead  as sub, but R reaps C only at the end: C, the session's leader,
 *          is a zombie in the tree (refused by imgcr dump)
 * In every mode R first forks A, which waits for SIGUSR1 and exits 0 (R's
 * children are then A, D1, D2 in that order), and D1 first forks a worker W, left in group C (as nginx's
 * master forks its workers).
 * Prints "pids D1 D2 C D3 W E" (0: none) and "ready" once set up.  On
 * SIGUSR1 it sends SIGUSR1 to D1 and D2, which send it to their child
 * (W, E) and reap it; each checks getsid() (C), getpgrp() (C, D2, or C
 * for W and E) and getppid() (R; D1 for W, D2 for E) and prints "D1 ok"
 * or "D1 BAD ..." (D2, W, E too), exits 0 if right and its child exited
 * 0, and R prints "reaped ok" if D1 and D2 exited 0 and its own
 * subreaper flag is as set, "reaped BAD ..." if not.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "common.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/*
 * a daemon: wait for SIGUSR1, send it to its child @ch (0: none) and reap
 * it, then check its session, group and parent
 */
static void daemon_run(const char *name, pid_t c, pid_t g, pid_t r, pid_t ch)
{
	int st;

	while (!go)
		pause();
	if (ch > 0) {
		kill(ch, SIGUSR1);
		if (waitpid(ch, &st, 0) != ch || !WIFEXITED(st) || WEXITSTATUS(st)) {
			say("%s BAD child %d status %#x\n", name, (int)ch, st);
			_exit(1);
		}
	}
	if (getsid(0) == c && getpgrp() == g && getppid() == r) {
		say("%s ok sid %d pgrp %d ppid %d\n", name, (int)c, (int)g, (int)r);
		_exit(0);
	}
	say("%s BAD sid %d pgrp %d ppid %d, want %d %d %d\n", name, (int)getsid(0),
	    (int)getpgrp(), (int)getppid(), (int)c, (int)g, (int)r);
	_exit(1);
}

/* a record on the pipe to R: pid @pid is d[@idx] */
static void tell(int fd, int idx, pid_t pid)
{
	int rec[2] = { idx, (int)pid };

	(void)!write(fd, rec, sizeof(rec));
}

/* fork a child of this daemon, left in its group, that runs daemon_run() as @name */
static pid_t worker(const char *name, pid_t c, int pfd[2], int idx)
{
	pid_t me = getpid(), w = fork();

	if (w == 0) {
		close(pfd[0]);
		close(pfd[1]);
		daemon_run(name, c, c, me, 0);
	}
	tell(pfd[1], idx, w);
	return w;
}

int main(int argc, char **argv)
{
	int ztop = argc == 2 && !strcmp(argv[1], "ztop");
	int grp = argc == 2 && !strcmp(argv[1], "grp");
	int zlead = argc == 2 && !strcmp(argv[1], "zlead");
	int sub = ztop || grp || zlead || (argc == 2 && (!strcmp(argv[1], "sub") || !strcmp(argv[1], "unsub")));
	int unsub = sub && !strcmp(argv[1], "unsub");
	pid_t r = getpid(), a, c, d[5] = { 0, 0, 0, 0, 0 };
	int pfd[2], st, i, n, bad = 0, flag = -1, rec[2];

	if (argc != 2 || (!sub && strcmp(argv[1], "init"))) {
		outf(2, "usage: dsess sub|unsub|init|ztop|grp|zlead\n");
		return 64;
	}
	signal(SIGUSR1, on_usr1);
	if (sub && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		outf(2, "PR_SET_CHILD_SUBREAPER: %s\n", errname(errno));
		return 1;
	}
	a = fork();
	if (a == 0) {
		while (!go)
			pause();
		_exit(0);
	}
	if (pipe(pfd))
		return 1;
	c = fork();
	if (c == 0) {
		pid_t me;

		if (setsid() < 0)
			_exit(99);
		me = getpid();
		for (i = 0; i < 2; i++) {
			d[i] = fork();
			if (d[i] == 0) {
				pid_t ch = 0;

				/* D1's worker W; D2's E (grp), born in group C */
				if (i == 0 || grp)
					ch = worker(i ? "E" : "W", me, pfd, 3 + i);
				close(pfd[0]);
				close(pfd[1]);
				if (i == 1 && setpgid(0, 0))
					_exit(98);
				daemon_run(i ? "D2" : "D1", me, i ? getpid() : me, r, ch);
			}
			if (i == 1 && !grp)
				setpgid(d[1], d[1]);
		}
		if (ztop) {
			d[2] = fork();
			if (d[2] == 0)
				_exit(7);
			while (task_state(d[2]) != 'Z')
				usleep(10000);
		}
		for (i = 0; i < 3; i++)
			tell(pfd[1], i, d[i]);
		_exit(0);
	}
	close(pfd[1]);
	for (n = 0; n < 4 + grp && read(pfd[0], rec, sizeof(rec)) == sizeof(rec); n++)
		if (rec[0] >= 0 && rec[0] < 5)
			d[rec[0]] = rec[1];
	while (zlead && task_state(c) != 'Z')
		usleep(10000);
	if (n < 4 + grp || (!zlead && (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)))) {
		outf(2, "C failed\n");
		return 1;
	}
	close(pfd[0]);
	for (i = 0; i < 1000 && (task_state(d[0]) == 0 || getpgid(d[1]) != d[1]); i++)
		usleep(10000);
	if (unsub && prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0))
		return 1;
	say("pids %d %d %d %d %d %d\n", (int)d[0], (int)d[1], (int)c, (int)d[2], (int)d[3],
	    (int)d[4]);
	say("ready\n");
	while (!go)
		pause();
	prctl(PR_GET_CHILD_SUBREAPER, &flag, 0, 0, 0);
	kill(a, SIGUSR1);
	if (waitpid(a, &st, 0) != a || !WIFEXITED(st) || WEXITSTATUS(st)) {
		say("reaped BAD A status %#x\n", st);
		bad = 1;
	}
	for (i = 0; i < 2; i++) {
		kill(d[i], SIGUSR1);
		if (waitpid(d[i], &st, 0) != d[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			say("reaped BAD D%d status %#x\n", i + 1, st);
			bad = 1;
		}
	}
	if (zlead && (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))) {
		say("reaped BAD C status %#x\n", st);
		bad = 1;
	}
	if (ztop && (waitpid(d[2], &st, 0) != d[2] || !WIFEXITED(st) || WEXITSTATUS(st) != 7)) {
		say("reaped BAD D3 status %#x\n", st);
		bad = 1;
	}
	if (flag != (sub && !unsub)) {
		say("reaped BAD subreaper flag %d\n", flag);
		bad = 1;
	}
	if (!bad)
		say("reaped ok\n");
	return bad;
}
