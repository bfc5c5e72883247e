/*
 * cgmember: a root task and its child (t_cgmember puts them in two
 * cgroups).  Each prints "ready ROLE PID" and sits in pause() until
 * SIGUSR1; then it prints "ROLE cgroup PATH", its cgroup as it sees it
 * (the "0::" line of /proc/self/cgroup).  The child exits 0; the root
 * waits for it and exits 0 (1 if the child did not exit 0).
 *
 * cgmember MIB [solo]: the root first maps MIB MiB of anonymous memory
 * and writes every page (a pattern), which the child inherits copy-on-write
 * (solo: the child unmaps it, so only the root has it); once woken, each
 * one that has it says "ROLE data ok" (or BAD) before its cgroup.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "common.h"

static volatile sig_atomic_t woken;
static unsigned char *data;
static size_t data_len;

static void check_data(const char *role)
{
	size_t i;

	if (!data)
		return;
	for (i = 0; i < data_len; i++)
		if (data[i] != (unsigned char)(i / 4096 * 7 + 1 + (i & 3)))
			break;
	outf(1, "%s data %s\n", role, i == data_len ? "ok" : "BAD");
}

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
	check_data(role);
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

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t child;
	size_t i;
	int st;

	sigaction(SIGUSR1, &sa, NULL);
	if (argc > 1) {
		data_len = strtoul(argv[1], NULL, 10) << 20;
		data = mmap(NULL, data_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (data == MAP_FAILED)
			return 1;
		for (i = 0; i < data_len; i++)
			data[i] = (unsigned char)(i / 4096 * 7 + 1 + (i & 3));
	}
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		if (argc > 2 && !strcmp(argv[2], "solo")) {
			munmap(data, data_len);
			data = NULL;
		}
		run("child");
		return 0;
	}
	run("root");
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
