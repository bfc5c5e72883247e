/*
 * cgmember: a root task and its child (t_cgmember puts them in two
 * cgroups).  Each prints "ready ROLE PID" and sits in pause() until
 * SIGUSR1; then it prints "ROLE cgroup PATH", its cgroup as it sees it
 * (the "0::" line of /proc/self/cgroup).  The child exits 0; the root
 * waits for it and exits 0 (1 if the child did not exit 0).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "common.h"

static volatile sig_atomic_t woken;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

static void run(const char *role)
{
	char buf[4096], *p;
	ssize_t n = -1;
	int fd;

	outf(1, "ready %s %d\n", role, getpid());
	while (!woken)
		pause();
	fd = open("/proc/self/cgroup", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
	p = strncmp(buf, "0::", 3) ? strstr(buf, "\n0::") : buf - 1;
	if (!p) {
		outf(1, "%s cgroup BAD (%s)\n", role, buf);
		return;
	}
	p += 4;
	p[strcspn(p, "\n")] = 0;
	outf(1, "%s cgroup %s\n", role, p);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t child;
	int st;

	sigaction(SIGUSR1, &sa, NULL);
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		run("child");
		return 0;
	}
	run("root");
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
