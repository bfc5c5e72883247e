/*
 * attrs MODE DIR: process attributes across dump + restore (t_attrs*.sh).
 * DIR is the test directory (the program polls DIR/restored through a
 * directory fd, whatever its cwd and root are).  Prints "ready pid=P
 * kid=K kid2=K2" (full) or "ready pid=P kid=0", waits for DIR/restored, then checks and prints "ok ..."/"BAD ..."
 * and "done ok" (or "done BAD").
 *
 *   full        (root) every resource limit set to its own soft/hard pair
 *               (an fd 400 above RLIMIT_NOFILE's soft 300), oom_score_adj
 *               -123, PR_SET_PDEATHSIG SIGUSR2, child subreaper, THP
 *               disable, not dumpable, membarrier PRIVATE_EXPEDITED
 *               (plain, SYNC_CORE, RSEQ) and GLOBAL_EXPEDITED
 *               registered, nice 7, SCHED_BATCH, ioprio
 *               best-effort 6, personality ADDR_NO_RANDOMIZE, no_new_privs,
 *               cwd DIR/cwdparent/gone deleted, a thread with its own
 *               parent-death signal (SIGUSR1).  A child (SCHED_RR 3 with
 *               SCHED_RESET_ON_FORK) chroots into DIR/jail with its cwd
 *               DIR/jail/sub ("/sub" inside) and checks all three; a
 *               second child shares the deleted cwd.  Each checks itself
 *               before "ready" too.
 *   user        (any user) RLIMIT_NOFILE 200/400, oom_score_adj 250, nice
 *               5, SCHED_IDLE, no_new_privs, membarrier PRIVATE_EXPEDITED,
 *               cwd DIR/cwdparent/gone deleted: checked before and after
 *   nofile-hard (root, then uid/gid 1000) RLIMIT_NOFILE hard limit above
 *               what uid 1000 has
 *   oom-low     (root, then uid/gid 1000) oom_score_adj -200
 *   as-low      soft RLIMIT_AS below what it maps: dump refused
 *   thread-nice a thread with another nice value: dump refused
 *   deadline    (root) SCHED_DEADLINE: dump refused
 *   root-gone   (root) chroot into DIR/gone-root, which the test removes
 * The refusal modes print "continued ok" once DIR/restored appears.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

#define IOPRIO_WHO_PROCESS	1
#define IOPRIO_BE_6		((2 << 13) | 6)
#define OOM_ADJ			-123
#define NICE			7
#define HIGH_FD			400	/* above RLIMIT_NOFILE's soft 300 */
#define HIGH_FD_S		"400"

static int dirfd_;

static const struct {
	int res;
	const char *name;
	rlim_t soft, hard;
} limits[] = {
	{ RLIMIT_CPU, "cpu", 5000, 6000 },
	{ RLIMIT_FSIZE, "fsize", 1ULL << 40, RLIM_INFINITY },
	{ RLIMIT_DATA, "data", 1ULL << 30, 2ULL << 30 },
	{ RLIMIT_STACK, "stack", 16 << 20, 32 << 20 },
	{ RLIMIT_CORE, "core", 0, 1 << 20 },
	{ RLIMIT_RSS, "rss", 1ULL << 30, 3ULL << 30 },
	{ RLIMIT_NPROC, "nproc", 3000, 4000 },
	{ RLIMIT_NOFILE, "nofile", 300, 600 },
	{ RLIMIT_MEMLOCK, "memlock", 1 << 20, 2 << 20 },
	{ RLIMIT_AS, "as", 4ULL << 30, 8ULL << 30 },
	{ RLIMIT_LOCKS, "locks", 100, 200 },
	{ RLIMIT_SIGPENDING, "sigpending", 500, 600 },
	{ RLIMIT_MSGQUEUE, "msgqueue", 100000, 200000 },
	{ RLIMIT_NICE, "nice", 10, 20 },
	{ RLIMIT_RTPRIO, "rtprio", 5, 10 },
	{ RLIMIT_RTTIME, "rttime", 1000000, 2000000 },
};

static void wait_restored(void)
{
	while (faccessat(dirfd_, "restored", F_OK, 0))
		msleep(20);
}

static void die(const char *what)
{
	say("BAD setup: %s: %s\n", what, errname(errno));
	exit(1);
}

static int read_int(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -9999;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atoi(buf);
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die(path);
	close(fd);
}

static void drop_to_1000(void)
{
	if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		die("drop to uid 1000");
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

static void check_main(const char *when, const cpu_set_t *cpus)
{
	char link[4096], w[64];
	struct rlimit rl;
	cpu_set_t now;
	ssize_t n;
	size_t i;
	int v;

	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		snprintf(w, sizeof(w), "%s rlimit %s", when, limits[i].name);
		getrlimit(limits[i].res, &rl);
		check(rl.rlim_cur == limits[i].soft && rl.rlim_max == limits[i].hard, w,
		      "%llu/%llu", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	}
	v = read_int("/proc/self/oom_score_adj");
	snprintf(w, sizeof(w), "%s oom_score_adj", when);
	check(v == OOM_ADJ, w, "%d", v);
	v = 0;
	prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0);
	snprintf(w, sizeof(w), "%s pdeathsig", when);
	check(v == SIGUSR2, w, "%d", v);
	v = 0;
	prctl(PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0);
	snprintf(w, sizeof(w), "%s child subreaper", when);
	check(v == 1, w, "%d", v);
	v = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	snprintf(w, sizeof(w), "%s thp disable", when);
	check(v == 1, w, "%d", v);
	v = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	snprintf(w, sizeof(w), "%s dumpable", when);
	check(v == 0, w, "%d", v);
	v = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	snprintf(w, sizeof(w), "%s membarrier private expedited", when);
	check(v == 0, w, "%d %s", v, v ? errname(errno) : "");
	v = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
	snprintf(w, sizeof(w), "%s membarrier sync core", when);
	check(v == 0, w, "%d %s", v, v ? errname(errno) : "");
	v = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
	snprintf(w, sizeof(w), "%s membarrier rseq", when);
	check(v == 0, w, "%d %s", v, v ? errname(errno) : "");
	errno = 0;
	v = getpriority(PRIO_PROCESS, 0);
	snprintf(w, sizeof(w), "%s nice", when);
	check(v == NICE, w, "%d", v);
	v = sched_getscheduler(0);
	snprintf(w, sizeof(w), "%s policy", when);
	check(v == SCHED_BATCH, w, "%d", v);
	v = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	snprintf(w, sizeof(w), "%s ioprio", when);
	check(v == IOPRIO_BE_6, w, "%#x", v);
	v = personality(0xffffffff);
	snprintf(w, sizeof(w), "%s personality", when);
	check(v == ADDR_NO_RANDOMIZE, w, "%#x", v);
	v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	snprintf(w, sizeof(w), "%s no_new_privs", when);
	check(v == 1, w, "%d", v);
	sched_getaffinity(0, sizeof(now), &now);
	snprintf(w, sizeof(w), "%s affinity", when);
	check(CPU_EQUAL(&now, cpus), w, "%d cpus", CPU_COUNT(&now));
	v = fcntl(HIGH_FD, F_GETFD);
	snprintf(w, sizeof(w), "%s fd " HIGH_FD_S " above RLIMIT_NOFILE", when);
	check(v >= 0, w, "F_GETFD %d", v);
	n = readlink("/proc/self/cwd", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(w, sizeof(w), "%s cwd", when);
	n = strlen(link);
	check(n > 25 && !strcmp(link + n - 25, "/cwdparent/gone (deleted)"), w, "%s", link);
}

static void check_kid(const char *when)
{
	struct sched_param sp = { 0 };
	char cwd[256] = "", w[64];
	int v;

	v = sched_getscheduler(0);
	sched_getparam(0, &sp);
	snprintf(w, sizeof(w), "%s kid policy", when);
	check(v == (SCHED_RR | SCHED_RESET_ON_FORK) && sp.sched_priority == 3, w,
	      "%#x priority %d", v, sp.sched_priority);

	snprintf(w, sizeof(w), "%s kid cwd", when);
	check(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, "/sub"), w, "%s", cwd);
	snprintf(w, sizeof(w), "%s kid root", when);
	check(!access("/marker", F_OK) && access("/cwdparent", F_OK), w, "/marker %s",
	      access("/marker", F_OK) ? "missing" : "seen");
}

static int kid(int ready)
{
	struct sched_param sp = { 3 };

	if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp))
		die("kid SCHED_RR");
	if (chdir("jail/sub") || chroot(".."))
		die("kid chroot");
	check_kid("before");
	if (write(ready, "k", 1) != 1)
		die("kid ready pipe");
	close(ready);
	wait_restored();
	check_kid("after");
	say("kid %s\n", bad ? "BAD" : "ok");
	return bad;
}

/* a thread with a parent-death signal of its own (per thread) */
static void *pdeath_thread(void *arg)
{
	int v = 0;

	(void)arg;
	if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0))
		die("thread pdeathsig");
	prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0);
	check(v == SIGUSR1, "before thread pdeathsig", "%d", v);
	wait_restored();
	v = 0;
	prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0);
	check(v == SIGUSR1, "after thread pdeathsig", "%d", v);
	return NULL;
}

/* the second child: in the same deleted cwd as its parent */
static int kid2(void)
{
	char link[4096];
	ssize_t n;

	wait_restored();
	n = readlink("/proc/self/cwd", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	n = strlen(link);
	check(n > 25 && !strcmp(link + n - 25, "/cwdparent/gone (deleted)"), "after kid2 cwd",
	      "%s", link);
	say("kid2 %s\n", bad ? "BAD" : "ok");
	return bad;
}

static int full(void)
{
	pthread_t th;
	struct sched_param sp = { 0 };
	cpu_set_t cpus;
	size_t i;
	int p[2], st;
	char c;
	pid_t k, k2;
	int v;

	/* an fd above the RLIMIT_NOFILE soft limit set next */
	v = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (v < 0 || dup2(v, HIGH_FD) != HIGH_FD)
		die("fd " HIGH_FD_S);
	close(v);
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct rlimit rl = { limits[i].soft, limits[i].hard };

		if (setrlimit(limits[i].res, &rl))
			die(limits[i].name);
	}
	write_str("/proc/self/oom_score_adj", "-123");
	if (prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0) ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) ||
	    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		die("prctl");
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0))
		die("membarrier register");
	if (sched_setscheduler(0, SCHED_BATCH, &sp) || setpriority(PRIO_PROCESS, 0, NICE))
		die("scheduling");
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_BE_6))
		die("ioprio_set");
	if (personality(ADDR_NO_RANDOMIZE) < 0)
		die("personality");
	sched_getaffinity(0, sizeof(cpus), &cpus);
	if (pipe(p))
		die("pipe");
	k = fork();
	if (k == 0) {
		close(p[0]);
		return kid(p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		die("kid did not start");
	close(p[0]);
	/* last: these change what the kid inherits or can do */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("prctl dumpable/no_new_privs");
	if (mkdir("cwdparent/gone", 0755) || chdir("cwdparent/gone") || rmdir("../gone"))
		die("deleted cwd");
	k2 = fork();
	if (k2 == 0)
		return kid2();
	if (pthread_create(&th, NULL, pdeath_thread, NULL))
		die("pthread_create");
	msleep(100);
	check_main("before", &cpus);
	say("ready pid=%d kid=%d kid2=%d\n", getpid(), k, k2);
	wait_restored();
	check_main("after", &cpus);
	pthread_join(th, NULL);
	while (waitpid(k, &st, 0) < 0 && errno == EINTR)
		;
	check(WIFEXITED(st) && !WEXITSTATUS(st), "kid exit", "status %#x", st);
	while (waitpid(k2, &st, 0) < 0 && errno == EINTR)
		;
	check(WIFEXITED(st) && !WEXITSTATUS(st), "kid2 exit", "status %#x", st);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}

static void *nice_thread(void *arg)
{
	(void)arg;
	if (setpriority(PRIO_PROCESS, syscall(SYS_gettid), 5))
		die("thread nice");
	for (;;)
		pause();
	return NULL;
}

/* what an ordinary user may set, and restore */
static void check_user(const char *when)
{
	char link[4096], w[64];
	struct rlimit rl;
	ssize_t n;
	int v;

	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(w, sizeof(w), "%s rlimit nofile", when);
	check(rl.rlim_cur == 200 && rl.rlim_max == 400, w, "%llu/%llu",
	      (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	v = read_int("/proc/self/oom_score_adj");
	snprintf(w, sizeof(w), "%s oom_score_adj", when);
	check(v == 250, w, "%d", v);
	v = getpriority(PRIO_PROCESS, 0);
	snprintf(w, sizeof(w), "%s nice", when);
	check(v == 5, w, "%d", v);
	v = sched_getscheduler(0);
	snprintf(w, sizeof(w), "%s policy", when);
	check(v == SCHED_IDLE, w, "%d", v);
	v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	snprintf(w, sizeof(w), "%s no_new_privs", when);
	check(v == 1, w, "%d", v);
	v = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	snprintf(w, sizeof(w), "%s membarrier private expedited", when);
	check(v == 0, w, "%d %s", v, v ? errname(errno) : "");
	n = readlink("/proc/self/cwd", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	n = strlen(link);
	snprintf(w, sizeof(w), "%s cwd", when);
	check(n > 25 && !strcmp(link + n - 25, "/cwdparent/gone (deleted)"), w, "%s", link);
}

static int user(void)
{
	struct rlimit rl = { 200, 400 };
	struct sched_param sp = { 0 };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE");
	write_str("/proc/self/oom_score_adj", "250");
	if (setpriority(PRIO_PROCESS, 0, 5) || sched_setscheduler(0, SCHED_IDLE, &sp))
		die("scheduling");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("no_new_privs");
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		die("membarrier register");
	if (mkdir("cwdparent", 0755) || mkdir("cwdparent/gone", 0755) ||
	    chdir("cwdparent/gone") || rmdir("../gone"))
		die("deleted cwd");
	check_user("before");
	say("ready pid=%d kid=0\n", getpid());
	wait_restored();
	check_user("after");
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}

static int refused(const char *mode)
{
	struct rlimit rl;
	pthread_t th;

	if (!strcmp(mode, "nofile-hard")) {
		int max = read_int("/proc/sys/fs/nr_open");

		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_max += 4096;
		if (max > 0 && rl.rlim_max > (rlim_t)max)
			rl.rlim_max = max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			die("raise RLIMIT_NOFILE");
		drop_to_1000();
	} else if (!strcmp(mode, "oom-low")) {
		write_str("/proc/self/oom_score_adj", "-200");
		drop_to_1000();
	} else if (!strcmp(mode, "as-low")) {
		getrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = 1 << 20;
		if (setrlimit(RLIMIT_AS, &rl))
			die("lower RLIMIT_AS");
	} else if (!strcmp(mode, "thread-nice")) {
		if (pthread_create(&th, NULL, nice_thread, NULL))
			die("pthread_create");
		msleep(100);
	} else if (!strcmp(mode, "deadline")) {
		/* struct sched_attr, SCHED_ATTR_SIZE_VER0: 2 ms every 100 ms */
		struct {
			uint32_t size, policy;
			uint64_t flags;
			int32_t nice;
			uint32_t prio;
			uint64_t runtime, deadline, period;
		} sa = { sizeof(sa), 6, 0, 0, 0, 2000000, 100000000, 100000000 };

		if (syscall(SYS_sched_setattr, 0, &sa, 0))
			die("sched_setattr SCHED_DEADLINE");
	} else if (!strcmp(mode, "root-gone")) {
		if (chroot("gone-root"))
			die("chroot gone-root");
	} else {
		say("BAD mode %s\n", mode);
		return 2;
	}
	say("ready pid=%d kid=0\n", getpid());
	wait_restored();
	say("continued ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		outf(2, "usage: attrs MODE DIR\n");
		return 2;
	}
	dirfd_ = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0 || chdir(argv[2]))
		die(argv[2]);
	if (!strcmp(argv[1], "full"))
		return full();
	if (!strcmp(argv[1], "user"))
		return user();
	return refused(argv[1]);
}
