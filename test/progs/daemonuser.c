/*
 * daemonuser MODE DIR: multi-threaded processes running as users other
 * than root, as packaged daemons run (t_daemon_user.sh).  Run as root.
 * DIR is the test directory: every thread polls DIR/restored (through a
 * directory fd opened first), then checks that its TID, its real,
 * effective, saved and fs uids and gids, its groups and its capabilities
 * are what they were before the dump, and prints "ok MODE ..." or
 * "FAIL MODE ...", then "MODE PASS" (or "MODE FAIL").
 *
 *   tree    the root task (root, one thread) forks one child per mode
 *           below, waits until they are set up and prints
 *           "ready pid=P user=U mixed=M thread=T"
 *   user    groups 1001 1002, gids 1001, uids 1000 (setresuid after start,
 *           as a daemon that drops root), then 3 threads
 *   mixed   groups 2005; gids real 2001, effective 2002, saved 2003,
 *           fs 2004; uids 1001, 1002, 1003, fs 1004; no capability;
 *           then 2 threads
 *   thread  gids 1000 1000 1007, uids 1000 1000 1006, no groups; 2 threads,
 *           the first of which makes itself uids 1006 1006 1000 and gids
 *           1007 1007 1000 (raw setresuid/setresgid: that thread only)
 *   single-user  user, alone: "ready pid=P" (for the dump refusal test;
 *           started as a user, it keeps that user's ids)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"

#define MAX_THREADS 4

struct ids {
	pid_t tid;
	uid_t uid[4];
	gid_t gid[4];
	int ngroups;
	gid_t groups[8];
	uint32_t cap[6];	/* effective, permitted, inheritable x 2 words */
};

static int dirfd_;
static const char *mode;
static int nfail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

static void die(const char *what)
{
	say("FAIL %s %s: %s\n", mode, what, errname(errno));
	exit(1);
}

static void get_ids(struct ids *s)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int i;

	memset(s, 0, sizeof(*s));
	s->tid = syscall(SYS_gettid);
	if (syscall(SYS_getresuid, &s->uid[0], &s->uid[1], &s->uid[2]) ||
	    syscall(SYS_getresgid, &s->gid[0], &s->gid[1], &s->gid[2]))
		die("getresuid");
	s->uid[3] = syscall(SYS_setfsuid, -1);
	s->gid[3] = syscall(SYS_setfsgid, -1);
	s->ngroups = syscall(SYS_getgroups, 8, s->groups);
	if (syscall(SYS_capget, &h, d))
		die("capget");
	for (i = 0; i < 2; i++) {
		s->cap[3 * i] = d[i].effective;
		s->cap[3 * i + 1] = d[i].permitted;
		s->cap[3 * i + 2] = d[i].inheritable;
	}
}

static void show(char *buf, size_t len, const struct ids *s)
{
	snprintf(buf, len, "tid %d uid %u %u %u %u gid %u %u %u %u groups %d cap %x/%x/%x",
		 s->tid, s->uid[0], s->uid[1], s->uid[2], s->uid[3],
		 s->gid[0], s->gid[1], s->gid[2], s->gid[3], s->ngroups,
		 s->cap[0], s->cap[1], s->cap[2]);
}

static void wait_restored(void)
{
	struct stat st;

	while (fstatat(dirfd_, "restored", &st, 0))
		msleep(20);
}

/* In each thread: after the restore, the same as @before. */
static void check(const char *who, const struct ids *before)
{
	struct ids now;
	char a[256], b[256];

	get_ids(&now);
	show(a, sizeof(a), before);
	show(b, sizeof(b), &now);
	pthread_mutex_lock(&lock);
	if (memcmp(before, &now, sizeof(now))) {
		say("FAIL %s %s: before %s, after %s\n", mode, who, a, b);
		nfail++;
	} else {
		say("ok %s %s %s\n", mode, who, b);
	}
	pthread_mutex_unlock(&lock);
}

static void setup(void)
{
	if (!strcmp(mode, "single-user") && getuid())
		return;		/* started as the user */
	if (!strcmp(mode, "user") || !strcmp(mode, "single-user")) {
		static const gid_t g[] = { 1001, 1002 };

		if (setgroups(2, g) || setresgid(1001, 1001, 1001) ||
		    setresuid(1000, 1000, 1000))
			die("setup");
	} else if (!strcmp(mode, "mixed")) {
		static const gid_t g[] = { 2005 };
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];

		if (setgroups(1, g) || setresgid(2001, 2002, 2003))
			die("setup gids");
		setfsgid(2004);
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setresuid(1001, 1002, 1003))
			die("setup uids");
		/* the fs uid needs CAP_SETUID, kept across the change */
		memset(d, 0, sizeof(d));
		d[0].effective = d[0].permitted = 1u << CAP_SETUID;
		if (syscall(SYS_capset, &h, d))
			die("capset");
		setfsuid(1004);
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d) || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
			die("drop caps");
	} else if (!strcmp(mode, "thread")) {
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1007) ||
		    setresuid(1000, 1000, 1006))
			die("setup");
	} else {
		die("unknown mode");
	}
}

static void *thread_main(void *arg)
{
	long i = (long)arg;
	struct ids before;
	char who[32];

	/* this thread only: a raw system call, not glibc's broadcast */
	if (!strcmp(mode, "thread") && i == 1 &&
	    (syscall(SYS_setresgid, 1007, 1007, 1000) ||
	     syscall(SYS_setresuid, 1006, 1006, 1000)))
		die("thread setresuid");
	get_ids(&before);
	pthread_barrier_wait(&barrier);
	wait_restored();
	snprintf(who, sizeof(who), "thread%ld", i);
	check(who, &before);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static int run_mode(const char *m, int ready_fd)
{
	pthread_t t[MAX_THREADS];
	int n = !strcmp(m, "user") || !strcmp(m, "single-user") ? 3 : 2;
	struct ids before;
	long i;

	mode = m;
	setup();
	pthread_barrier_init(&barrier, NULL, n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)(i + 1)))
			die("pthread_create");
	pthread_barrier_wait(&barrier);
	get_ids(&before);
	if (ready_fd >= 0) {
		if (write(ready_fd, "x", 1) != 1)
			die("ready pipe");
		close(ready_fd);
	} else {
		say("ready pid=%d\n", getpid());
	}
	wait_restored();
	check("main", &before);
	pthread_barrier_wait(&barrier);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	say("%s %s\n", m, nfail ? "FAIL" : "PASS");
	return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const char *const kids[] = { "user", "mixed", "thread" };
	pid_t pid[3];
	int p[2], i, st, ret = 0;
	char x;

	if (argc != 3) {
		outf(2, "usage: daemonuser MODE DIR\n");
		return 2;
	}
	dirfd_ = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0) {
		outf(2, "daemonuser: %s: %s\n", argv[2], errname(errno));
		return 2;
	}
	if (strcmp(argv[1], "tree"))
		return run_mode(argv[1], -1);
	mode = "tree";
	if (pipe(p))
		die("pipe");
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork");
		if (!pid[i]) {
			close(p[0]);
			_exit(run_mode(kids[i], p[1]));
		}
	}
	close(p[1]);
	for (i = 0; i < 3; i++)
		if (read(p[0], &x, 1) != 1)
			die("a child did not set up");
	close(p[0]);
	say("ready pid=%d user=%d mixed=%d thread=%d\n", getpid(), pid[0], pid[1], pid[2]);
	wait_restored();
	for (i = 0; i < 3; i++) {
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			say("FAIL child %s (pid %d) status %#x\n", kids[i], pid[i], st);
			ret = 1;
		}
	}
	say("tree %s\n", ret ? "FAIL" : "PASS");
	return ret;
}
