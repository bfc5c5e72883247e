/*
 * mempol MODE DIR: per-task state kept by exec that imgcr restores or
 * refuses (userspace/attrs.c): coredump_filter, the NUMA memory policy,
 * speculation control.  DIR is the test directory (the program polls
 * DIR/restored).
 *
 *   keep      coredump_filter 0x3f; the task's NUMA memory policy
 *             MPOL_BIND|MPOL_F_NUMA_BALANCING on node 0, then a thread
 *             (inheriting it); store bypass speculation disabled
 *             (PR_SPEC_DISABLE) where the machine lets a task choose it.
 *             Prints "ready pid=P tid=T spec=1|0", waits for DIR/restored,
 *             checks all of it again from the main thread and the thread
 *             ("ok keep ..." or "BAD ...").
 *   vma       a mapping with a policy of its own (mbind MPOL_BIND node 0)
 *   vmasame   the same, the task's policy being that one too (numa_maps
 *             shows no difference: the module refuses it)
 *   shmpol    a memfd whose second half has a policy of its own (mbind on
 *             a shared mapping, since unmapped), its first half mapped:
 *             numa_maps shows nothing, the module refuses it
 *   thread    a thread whose policy (MPOL_PREFERRED node 0) is not the
 *             main thread's (default)
 *   static    the task's policy MPOL_BIND|MPOL_F_STATIC_NODES
 *   noexec    store bypass disabled until exec (PR_SPEC_DISABLE_NOEXEC);
 *             prints "ready ... spec=0" where the machine does not allow it
 * The refusal modes print "ready pid=P tid=T spec=S" and "continued ok"
 * once DIR/restored appears.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "common.h"

#define MPOL_DEFAULT		0
#define MPOL_PREFERRED		1
#define MPOL_BIND		2
#define MPOL_F_STATIC_NODES	(1 << 15)
#define MPOL_F_NUMA_BALANCING	(1 << 13)
#ifndef PR_SPEC_DISABLE_NOEXEC
#define PR_SPEC_DISABLE_NOEXEC	(1UL << 4)
#endif

static int dirfd_ = -1, bad;
static pid_t thread_tid;
static volatile int thread_go;
static int thread_mode;	/* 0: inherit, 1: set MPOL_PREFERRED */
static char thread_result[256];

static void die(const char *what)
{
	say("BAD setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long set_policy(int mode, unsigned long mask)
{
	return syscall(SYS_set_mempolicy, mode, mask ? &mask : NULL, mask ? 64 : 0);
}

/* the calling thread's policy as "MODE MASK" */
static void get_policy(char *out, size_t size)
{
	unsigned long mask[16] = { 0 };
	int mode = -1;

	if (syscall(SYS_get_mempolicy, &mode, mask, 1024, NULL, 0))
		snprintf(out, size, "error %s", strerror(errno));
	else
		snprintf(out, size, "mode %#x nodes %#lx", mode, mask[0]);
}

static void *thread_fn(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	if (thread_mode == 1 && set_policy(MPOL_PREFERRED, 1))
		die("thread set_mempolicy");
	thread_go = 1;
	for (;;) {
		if (thread_go == 2) {
			get_policy(thread_result, sizeof(thread_result));
			thread_go = 3;
		}
		msleep(10);
	}
	return NULL;
}

static void start_thread(int mode)
{
	pthread_t t;

	thread_mode = mode;
	if (pthread_create(&t, NULL, thread_fn, NULL))
		die("pthread_create");
	while (!thread_go)
		msleep(5);
}

static void wait_restored(void)
{
	while (faccessat(dirfd_, "restored", F_OK, 0))
		msleep(20);
}

static unsigned long coredump_filter(void)
{
	char buf[32] = "";
	int fd = open("/proc/self/coredump_filter", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return ~0UL;
	close(fd);
	return strtoul(buf, NULL, 16);
}

static void check(int cond, const char *fmt, const char *a)
{
	if (!cond) {
		say("BAD ");
		say(fmt, a);
		say("\n");
		bad = 1;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	char want[64], got[256];
	int spec = 0, fd;

	if (argc != 3)
		return 2;
	dirfd_ = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (dirfd_ < 0)
		die(argv[2]);
	if (!strcmp(mode, "keep")) {
		fd = open("/proc/self/coredump_filter", O_WRONLY);
		if (fd < 0 || write(fd, "0x3f", 4) != 4)
			die("coredump_filter");
		close(fd);
		if (set_policy(MPOL_BIND | MPOL_F_NUMA_BALANCING, 1))
			die("set_mempolicy");
		spec = !prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_DISABLE, 0, 0);
		start_thread(0);
	} else if (!strcmp(mode, "vma") || !strcmp(mode, "vmasame")) {
		unsigned long mask = 1;
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (!strcmp(mode, "vmasame") && set_policy(MPOL_BIND, 1))
			die("set_mempolicy");
		if (p == MAP_FAILED || syscall(SYS_mbind, p, 1 << 16, MPOL_BIND, &mask, 64, 0))
			die("mbind");
		memset(p, 1, 1 << 16);
		start_thread(0);
	} else if (!strcmp(mode, "shmpol")) {
		unsigned long mask = 1;
		int fd = memfd_create("shmpol", 0);
		char *p;

		if (fd < 0 || ftruncate(fd, 1 << 17))
			die("memfd");
		p = mmap(NULL, 1 << 17, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED ||
		    syscall(SYS_mbind, p + (1 << 16), 1 << 16, MPOL_BIND, &mask, 64, 0))
			die("mbind");
		memset(p, 1, 1 << 17);
		munmap(p, 1 << 17);
		p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap");
		start_thread(0);
	} else if (!strcmp(mode, "thread")) {
		start_thread(1);
	} else if (!strcmp(mode, "static")) {
		if (set_policy(MPOL_BIND | MPOL_F_STATIC_NODES, 1))
			die("set_mempolicy static");
		start_thread(0);
	} else if (!strcmp(mode, "noexec")) {
		spec = !prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_DISABLE_NOEXEC,
			      0, 0);
		start_thread(0);
	} else {
		return 2;
	}
	say("ready pid=%d tid=%d spec=%d\n", getpid(), thread_tid, spec);
	wait_restored();
	if (strcmp(mode, "keep")) {
		say("continued ok\n");
		return 0;
	}
	snprintf(want, sizeof(want), "mode %#x nodes 0x1", MPOL_BIND | MPOL_F_NUMA_BALANCING);
	get_policy(got, sizeof(got));
	check(!strcmp(got, want), "main thread's policy %s", got);
	thread_go = 2;
	while (thread_go != 3)
		msleep(5);
	check(!strcmp(thread_result, want), "thread's policy %s", thread_result);
	snprintf(got, sizeof(got), "%#lx", coredump_filter());
	check(!strcmp(got, "0x3f"), "coredump_filter %s", got);
	if (spec) {
		int v = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0);

		snprintf(got, sizeof(got), "%#x", v);
		check(v == (PR_SPEC_PRCTL | PR_SPEC_DISABLE), "store bypass control %s", got);
	}
	if (!bad)
		say("ok keep %s spec=%d\n", want, spec);
	return bad;
}
