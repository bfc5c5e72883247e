/*
 * family DIR TICKS: a session leader (this process, after setsid) with five
 * children in one process group (led by the first child) and a grandchild
 * (child of the third), for the process-tree tests.
 *
 * Task IDX (0 = leader, 1-5 children, 6 grandchild) opens DIR/f-IDX and
 * writes a header of a different length ("task IDX pid PID" and IDX*37
 * dots), dup()s it to fd 10+IDX close-on-exec, opens DIR/a-IDX O_APPEND,
 * and shares DIR/shared.log (O_APPEND) and DIR/data (read, shared offset)
 * opened by the leader before forking.  Each task writes "tick N" lines
 * (N = 1..TICKS, 50 ms apart) to its f- file, then "paused" and waits for
 * SIGUSR1; then ticks TICKS+1..2*TICKS, writes "done", appends "IDX done"
 * to shared.log and to a-IDX, waits for its children and exits 0 if they
 * all did.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
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

static const char *dir;
static int ticks, shared, data;

static int task(int idx, int nkids, pid_t *kids)
{
	char path[4096], dots[512];
	int fd, afd, bad = 0, st;
	sigset_t block, old;

	snprintf(path, sizeof(path), "%s/f-%d", dir, idx);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "%s/a-%d", dir, idx);
	afd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || afd < 0)
		return 3;
	memset(dots, '.', sizeof(dots));
	outf(fd, "task %d pid %d\n%.*s\n", idx, (int)getpid(), idx * 37, dots);
	outf(afd, "task %d\n", idx);
	if (fcntl(fd, F_DUPFD_CLOEXEC, 10 + idx) != 10 + idx)
		return 3;
	if (idx) {
		char c;

		if (read(data, &c, 1) != 1)	/* moves the shared offset */
			return 3;
	}
	for (int n = 1; n <= ticks; n++) {
		outf(fd, "tick %d\n", n);
		msleep(50);
	}
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	outf(fd, "paused\n");
	while (!go)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int n = ticks + 1; n <= 2 * ticks; n++) {
		outf(fd, "tick %d\n", n);
		msleep(50);
	}
	outf(fd, "done\n");
	outf(shared, "%d done\n", idx);
	outf(afd, "%d done\n", idx);
	for (int i = 0; i < nkids; i++)
		if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pid_t kids[5], gpid = 0, grand;
	char path[4096];
	int dfd;

	if (argc < 3)
		return 2;
	dir = argv[1];
	ticks = atoi(argv[2]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	if (getsid(0) != getpid() && setsid() < 0)
		return 4;
	snprintf(path, sizeof(path), "%s/shared.log", dir);
	shared = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "%s/data", dir);
	dfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (shared < 0 || dfd < 0)
		return 3;
	outf(dfd, "0123456789abcdef\n");
	close(dfd);
	data = open(path, O_RDONLY);
	for (int i = 0; i < 5; i++) {
		pid_t p = fork();

		if (p < 0)
			return 5;
		if (p == 0) {
			setpgid(0, i ? gpid : 0);
			if (i == 2) {
				grand = fork();
				if (grand == 0)
					_exit(task(6, 0, NULL));
				_exit(task(i + 1, grand > 0, &grand));
			}
			_exit(task(i + 1, 0, NULL));
		}
		if (!i)
			gpid = p;
		setpgid(p, gpid);
		kids[i] = p;
	}
	return task(0, 5, kids);
}
