/*
 * execwait [-n THREADS] NAME IMAGE [ARG...]: fork, execute IMAGE in the
 * child, and print "restored ms=N pid=P" once the child is back in user
 * space as the program NAME: /proc/P/exe ends in "/NAME" and the task
 * sleeps (state S, e.g. in pause()), and so does every other thread in
 * /proc/P/task (a restored thread waits in state D until the whole group
 * is back, then returns to its own wait); with -n, there are exactly
 * THREADS threads (main included).  The benchmark's restore time, measured
 * without a polling shell competing for the guest's single CPU: this polls
 * every millisecond with no fork.  The child is left running (stdio
 * inherited).  Exit 0, or 1 (with "failed: ...") if the child died or
 * 600 s passed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static int exe_is(pid_t pid, const char *name)
{
	char path[64], link[4096];
	size_t ln = strlen(name);
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= (ssize_t)ln)
		return 0;
	link[n] = 0;
	return link[n - ln - 1] == '/' && !strcmp(link + n - ln, name);
}

/* Every thread of PID sleeps (S); with want > 0, there are want of them. */
static int all_asleep(pid_t pid, long want)
{
	char path[64];
	struct dirent *e;
	long n = 0;
	int ok = 1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (ok && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		ok = thread_state((int)pid, atoi(e->d_name)) == 'S';
	}
	closedir(d);
	return ok && n > 0 && (want <= 0 || n == want);
}

int main(int argc, char **argv)
{
	const struct timespec ms1 = { 0, 1000000 };
	long long t0, deadline;
	long want = 0;
	pid_t pid;
	int st;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		want = strtol(argv[2], NULL, 10);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		outf(2, "usage: execwait [-n THREADS] NAME IMAGE [ARG...]\n");
		return 64;
	}
	t0 = now_ms();
	deadline = t0 + 600000;
	pid = fork();
	if (pid < 0) {
		say("failed: fork: %s\n", errname(errno));
		return 1;
	}
	if (!pid) {
		execv(argv[2], argv + 2);
		say("failed: exec %s: %s\n", argv[2], errname(errno));
		_exit(127);
	}
	while (now_ms() < deadline) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			say("failed: pid %d ended (status %#x) before it was restored\n",
			    (int)pid, st);
			return 1;
		}
		if (exe_is(pid, argv[1]) && task_state(pid) == 'S' &&
		    all_asleep(pid, want)) {
			say("restored ms=%lld pid=%d\n", now_ms() - t0, (int)pid);
			return 0;
		}
		nanosleep(&ms1, NULL);
	}
	say("failed: pid %d not restored after 600 s\n", (int)pid);
	kill(pid, SIGKILL);
	return 1;
}
