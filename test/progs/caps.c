/*
 * caps MODE DIR: capabilities, securebits, no_new_privs and the audit
 * loginuid across dump + restore (t_caps.sh).  Run as root.  DIR is the
 * test directory: every task polls DIR/restored (through a directory fd
 * opened first), then checks that each of its threads has the same
 * credentials as before the dump, and prints "ok MODE ..." or
 * "FAIL MODE ...", then "MODE PASS" (or "MODE FAIL").
 *
 *   tree      the root task forks one child per mode below (keep, ambient,
 *             threads, loginuid), waits until they are set up, then
 *             drops capabilities itself (mode root) and prints
 *             "ready pid=P keep=K ambient=A threads=T loginuid=L"
 *   root      (a) permitted without CAP_SYS_ADMIN and CAP_NET_RAW,
 *             effective without CAP_DAC_OVERRIDE too, inheritable
 *             CAP_NET_ADMIN, CAP_SYS_MODULE and CAP_SYS_BOOT dropped from
 *             the bounding set, securebits SECBIT_NOROOT |
 *             SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS
 *   keep      (b) setresuid to 1000 with SECBIT_KEEP_CAPS, then capset:
 *             CAP_NET_BIND_SERVICE permitted and effective only
 *   ambient   (b) the same, CAP_NET_BIND_SERVICE also inheritable and
 *             ambient, KEEP_CAPS cleared again
 *   threads   (c, d) a thread that drops CAP_KILL and CAP_CHOWN (capset in
 *             it only), another that sets no_new_privs (in it only)
 *   loginuid  (e) audit loginuid 1234
 *   single-keep  keep, alone (for the refusal test): "ready pid=P"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"

#define CAPBIT(c) (1ULL << (c))

struct creds {
	uint64_t eff, perm, inh, bset, amb;
	int secbits, nnp;
};

static int dirfd_;
static char ready_msg[160];	/* printed once set up */
static const char *mode;
static int nfail;

static int capget_all(struct creds *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int i;

	if (syscall(SYS_capget, &h, d))
		return -1;
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->perm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	c->bset = c->amb = 0;
	for (i = 0; i <= CAP_LAST_CAP; i++) {
		if (prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1)
			c->bset |= CAPBIT(i);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i, 0, 0) == 1)
			c->amb |= CAPBIT(i);
	}
	c->secbits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	c->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	return 0;
}

static int capset_all(uint64_t eff, uint64_t perm, uint64_t inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)eff, (uint32_t)perm, (uint32_t)inh },
		{ (uint32_t)(eff >> 32), (uint32_t)(perm >> 32), (uint32_t)(inh >> 32) },
	};

	return syscall(SYS_capset, &h, d);
}

static void die(const char *what)
{
	say("FAIL %s setup: %s: %s\n", mode, what, errname(errno));
	exit(2);
}

static void show(const char *who, const struct creds *c)
{
	say("%s %s tid=%ld eff=%llx perm=%llx inh=%llx bset=%llx amb=%llx secbits=%x nnp=%d\n",
	    who, mode, (long)syscall(SYS_gettid), (unsigned long long)c->eff,
	    (unsigned long long)c->perm, (unsigned long long)c->inh,
	    (unsigned long long)c->bset, (unsigned long long)c->amb, c->secbits, c->nnp);
}

/* After the restore: the calling thread's credentials are @want. */
static void check(const char *who, const struct creds *want)
{
	struct creds now;

	if (capget_all(&now)) {
		say("FAIL %s %s: capget: %s\n", mode, who, errname(errno));
		nfail++;
		return;
	}
	if (memcmp(&now, want, sizeof(now))) {
		show("FAIL before", want);
		show("FAIL after", &now);
		say("FAIL %s %s: credentials differ\n", mode, who);
		nfail++;
		return;
	}
	say("ok %s %s eff=%llx perm=%llx bset=%llx amb=%llx secbits=%x nnp=%d\n", mode, who,
	    (unsigned long long)now.eff, (unsigned long long)now.perm,
	    (unsigned long long)now.bset, (unsigned long long)now.amb, now.secbits, now.nnp);
}

static void wait_restored(void)
{
	struct stat st;

	while (fstatat(dirfd_, "restored", &st, 0))
		msleep(20);
}

static void setup_root(void)
{
	struct creds c;

	if (capget_all(&c))
		die("capget");
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS,
		  0, 0, 0))
		die("PR_SET_SECUREBITS");
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_MODULE, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0))
		die("PR_CAPBSET_DROP");
	c.perm &= ~(CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_NET_RAW));
	c.eff = c.perm & ~CAPBIT(CAP_DAC_OVERRIDE);
	if (capset_all(c.eff, c.perm, CAPBIT(CAP_NET_ADMIN)))
		die("capset");
}

static void setup_user(int ambient)
{
	uint64_t nbs = CAPBIT(CAP_NET_BIND_SERVICE);

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		die("PR_SET_KEEPCAPS");
	if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		die("setresuid 1000");
	if (capset_all(nbs, nbs, ambient ? nbs : 0))
		die("capset");
	if (ambient) {
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0))
			die("PR_CAP_AMBIENT_RAISE");
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
			die("PR_SET_KEEPCAPS 0");
	}
}

static void setup_loginuid(void)
{
	int fd = open("/proc/self/loginuid", O_WRONLY);

	if (fd < 0 || write(fd, "1234", 4) != 4)
		die("write /proc/self/loginuid");
	close(fd);
}

/* threads mode: each thread sets itself up, then waits and checks. */
static pthread_barrier_t barrier;

static void *thread_main(void *arg)
{
	long which = (long)arg;
	struct creds c;

	if (which == 1) {
		if (capget_all(&c))
			die("capget");
		c.perm &= ~(CAPBIT(CAP_KILL) | CAPBIT(CAP_CHOWN));
		c.eff &= c.perm;
		if (capset_all(c.eff, c.perm, c.inh))
			die("capset in the thread");
	} else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		die("PR_SET_NO_NEW_PRIVS in the thread");
	}
	if (capget_all(&c))
		die("capget");
	say("thread %ld tid=%ld\n", which, (long)syscall(SYS_gettid));
	pthread_barrier_wait(&barrier);
	wait_restored();
	check(which == 1 ? "thread-capset" : "thread-nnp", &c);
	pthread_barrier_wait(&barrier);
	return NULL;
}

/* Set up for @m, then wait for the restore and check. */
static int run_mode(const char *m, int ready_fd)
{
	pthread_t t[2];
	struct creds c;
	long i;

	mode = m;
	if (!strcmp(m, "root"))
		setup_root();
	else if (!strcmp(m, "keep") || !strcmp(m, "single-keep"))
		setup_user(0);
	else if (!strcmp(m, "ambient"))
		setup_user(1);
	else if (!strcmp(m, "loginuid"))
		setup_loginuid();
	else if (strcmp(m, "threads"))
		die("unknown mode");
	if (!strcmp(m, "threads")) {
		pthread_barrier_init(&barrier, NULL, 3);
		for (i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, thread_main, (void *)(i + 1)))
				die("pthread_create");
		pthread_barrier_wait(&barrier);
	}
	if (capget_all(&c))
		die("capget");
	show("before", &c);
	if (ready_fd >= 0) {
		if (write(ready_fd, "x", 1) != 1)
			die("ready pipe");
		close(ready_fd);
	}
	if (!strcmp(m, "single-keep"))
		say("ready pid=%d\n", getpid());
	if (ready_msg[0])
		say("%s", ready_msg);
	wait_restored();
	check("main", &c);
	if (!strcmp(m, "threads"))
		pthread_barrier_wait(&barrier);
	say("%s %s\n", m, nfail ? "FAIL" : "PASS");
	return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const char *const kids[] = { "keep", "ambient", "threads", "loginuid" };
	pid_t pid[4];
	int p[2], i, st, ret;
	char x;

	if (argc != 3) {
		outf(2, "usage: caps MODE DIR\n");
		return 2;
	}
	dirfd_ = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0) {
		outf(2, "caps: %s: %s\n", argv[2], errname(errno));
		return 2;
	}
	if (strcmp(argv[1], "tree"))
		return run_mode(argv[1], -1);
	mode = "tree";
	if (pipe(p))
		die("pipe");
	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork");
		if (!pid[i]) {
			close(p[0]);
			_exit(run_mode(kids[i], p[1]));
		}
	}
	close(p[1]);
	for (i = 0; i < 4; i++)
		if (read(p[0], &x, 1) != 1)
			die("a child did not set up");
	close(p[0]);
	snprintf(ready_msg, sizeof(ready_msg), "ready pid=%d keep=%d ambient=%d threads=%d loginuid=%d\n",
		 getpid(), pid[0], pid[1], pid[2], pid[3]);
	ret = run_mode("root", -1);
	for (i = 0; i < 4; i++) {
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			say("FAIL child %s (pid %d) status %#x\n", kids[i], pid[i], st);
			ret = 1;
		}
	}
	say("tree %s\n", ret ? "FAIL" : "PASS");
	return ret;
}
