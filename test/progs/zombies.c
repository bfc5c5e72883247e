/*
 * zombies: a parent with three children that it does not reap until told:
 *   A  leads its own process group, then exits with code 3
 *   B  leads its own session, then kills itself with SIGTERM
 *   C  joins A's process group (before A exits) and lives on, in pause()
 *   D  is killed by SIGKILL from the parent
 *   E  aborts (SIGABRT) with RLIMIT_CORE unlimited: it dumps core if the
 *      system lets it
 * A also catches SIGUSR2, ignores SIGHUP and has RLIMIT_NOFILE 77/900 and
 * RLIMIT_CORE 4096/8192 when it exits: what /proc still shows of a zombie.
 * The parent prints "pids A B C D E" and, once A, B, D and E are zombies
 * (it looks at /proc, it does not wait), "ready".  On SIGUSR2 it reaps E
 * (a dump refuses a zombie with the core-dump flag) and prints "reaped E
 * signaled 6 [core]", "e gone".  On SIGUSR1 it checks A's SigIgn, SigCgt
 * and limits in /proc ("ok A dispositions"; not in a child PID namespace,
 * whose pids this /proc does not show), reaps A, B and D with waitpid()
 * and prints for each "reaped PID exited N" or "reaped PID signaled S
 * [core]" plus "ok ..." or "BAD ..." against what it expects (A: exit 3,
 * B: SIGTERM, D: SIGKILL; none with the core-dump flag), then kills and
 * reaps C and prints "done ok" or "done BAD".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t go, reap_e;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void on_usr2(int sig)
{
	(void)sig;
	reap_e = 1;
}

/* A's SigIgn/SigCgt and two limits in /proc, as it set them; 0 if so. */
static int zombie_state(pid_t a)
{
	char path[64], line[256];
	int ns = 0, ok = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6))
			ns = strchr(line + 7, '\t') != NULL || strchr(line + 7, ' ') != NULL;
	if (f)
		fclose(f);
	if (ns) {
		say("ok A dispositions: not checked in a child PID namespace\n");
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)a);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long m;

		/* SIGHUP ignored (SIGINT, SIGQUIT too when started in the background by a shell) */
		if ((sscanf(line, "SigIgn: %llx", &m) == 1 && (m & ~6ULL) == 1) ||
		    !strcmp(line, "SigCgt:\t0000000000000a00\n"))
			ok++;
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)a);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, h;

		if (sscanf(line, "Max open files %lu %lu", &s, &h) == 2 && s == 77 && h == 900)
			ok++;
		if (sscanf(line, "Max core file size %lu %lu", &s, &h) == 2 && s == 4096 && h == 8192)
			ok++;
	}
	if (f)
		fclose(f);
	if (ok != 4) {
		say("BAD A dispositions: %d of SigIgn 0x1 (|0x6), SigCgt 0xa00, NOFILE 77/900, CORE 4096/8192\n", ok);
		return 1;
	}
	say("ok A dispositions: SigIgn 0x1 (|0x6), SigCgt 0xa00, NOFILE 77/900, CORE 4096/8192\n");
	return 0;
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Reap @pid and check its status; 0 if as expected. */
static int reap(pid_t pid, int code, int sig, int core)
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
		if (!sig || WTERMSIG(st) != sig || !WCOREDUMP(st) != !core) {
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
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(p))
		return 2;
	a = fork();
	if (a == 0) {
		struct rlimit nofile = { 77, 900 }, core = { 4096, 8192 };

		setpgid(0, 0);
		signal(SIGHUP, SIG_IGN);	/* SIGUSR2 stays caught (on_usr2) */
		if (setrlimit(RLIMIT_NOFILE, &nofile) || setrlimit(RLIMIT_CORE, &core))
			_exit(10);
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
	while (!go) {
		if (reap_e) {
			char path[64], *t = NULL;
			int core;

			snprintf(path, sizeof(path), "/proc/%d/stat", (int)e);
			{
				FILE *f = fopen(path, "r");
				static char buf[1024];

				if (f && fgets(buf, sizeof(buf), f))
					t = buf;
				if (f)
					fclose(f);
			}
			/* field 52, the last one: the wait status */
			core = t && strrchr(t, ' ') && (atoi(strrchr(t, ' ') + 1) & 0x80);
			bad |= reap(e, 0, SIGABRT, core);
			say("e gone\n");
			reap_e = 0;
		}
		nap(20);
	}
	bad |= zombie_state(a);
	bad |= reap(a, 3, 0, 0);
	bad |= reap(b, 0, SIGTERM, 0);
	bad |= reap(d, 0, SIGKILL, 0);
	kill(c, SIGKILL);
	bad |= reap(c, 0, SIGKILL, 0);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
