/*
 * bbattrs: process attributes that must survive imgcr dump + restore
 * (hold-out tests of issue 10, test/guest/attrs/t_bb_attrs.sh).
 *
 *   bbattrs [-t NTHREADS] [-c DIR] [-r ROOT] [-n NOFILE] [-o OOM] [-m KIDNOFILE]
 *           [-P SIG]
 *
 * Sets resource limits (soft != hard, RLIM_INFINITY), oom_score_adj
 * (negative), the parent-death signal (per thread), the child-subreaper
 * flag, PR_SET_THP_DISABLE and membarrier registrations, and makes a child
 * "mid" with a grandchild "grand" (grand's parent-death signal is SIGUSR2,
 * whose handler exits 7).  mid sets oom_score_adj 600 and a soft
 * RLIMIT_NOFILE of 150 (unless the hard one is lower; -m: soft = hard =
 * KIDNOFILE, as sshd's rlimit sandbox sets 1 for its child); after the
 * fork the parent lowers its RLIMIT_MSGQUEUE (mid keeps the higher one):
 * the test compares mid's from outside.  -t: NTHREADS more threads, each
 * with its own parent-death signal.  -c DIR: the cwd is DIR (the test
 * removes it).  -r ROOT: chroot(ROOT) and chdir("/sub") after the setup
 * (ROOT/marker must hold "bb-marker").  -n: RLIMIT_NOFILE soft = hard =
 * NOFILE (a low one) instead of 200/400.  -o: that oom_score_adj instead
 * of -345.  -P: the parent-death signal SIG (0: none) instead of SIGHUP.
 * Then it prints "ready PID" and waits for SIGUSR1.
 * On SIGUSR1 it compares everything with what it set, then kills mid: grand
 * must be re-parented to this process (subreaper) and get its parent-death
 * signal, so waitpid() of grand gives exit status 7.  Every check prints
 * "ok NAME" or "FAIL NAME: set X, got Y"; the last line is "bbattrs PASS"
 * (exit 0) or "bbattrs FAIL N" (exit 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#define COMMON_TALLY
#include "common.h"

static void die(const char *what)
{
	setup_die("bbattrs", what);
}

static struct {
	int res;
	const char *name;
	rlim_t soft, hard;
} lims[] = {
	{ RLIMIT_NOFILE, "NOFILE", 200, 400 },
	{ RLIMIT_CORE, "CORE", 0, RLIM_INFINITY },
	{ RLIMIT_FSIZE, "FSIZE", 1UL << 30, RLIM_INFINITY },
	{ RLIMIT_MEMLOCK, "MEMLOCK", 65536, 1UL << 20 },
	{ RLIMIT_MSGQUEUE, "MSGQUEUE", 2048, 4096 },	/* lowered after the fork */
	{ RLIMIT_NICE, "NICE", 5, 15 },
	{ RLIMIT_RTPRIO, "RTPRIO", 1, 3 },
	{ RLIMIT_NPROC, "NPROC", 3000, 4000 },
	{ RLIMIT_SIGPENDING, "SIGPENDING", 500, 700 },
	{ RLIMIT_LOCKS, "LOCKS", 100, RLIM_INFINITY },
	{ RLIMIT_CPU, "CPU", 100000, RLIM_INFINITY },
	{ RLIMIT_AS, "AS", 1UL << 40, RLIM_INFINITY },
	{ RLIMIT_DATA, "DATA", 1UL << 34, RLIM_INFINITY },
	{ RLIMIT_STACK, "STACK", 6UL << 20, 64UL << 20 },
	{ RLIMIT_RSS, "RSS", 1UL << 30, 1UL << 31 },
	{ RLIMIT_RTTIME, "RTTIME", 2000000, 5000000 },
};
#define NLIMS (sizeof(lims) / sizeof(lims[0]))

static int OOM_ADJ = -345;
static int kid_nofile = -1;
static int root_pdeath = SIGHUP;
#define MAXT 8

static int membar(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

static int nthreads;
static pid_t tids[MAXT];
static int tok[MAXT];
static int go;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int nready;

static void *worker(void *arg)
{
	int i = (int)(intptr_t)arg, sig = SIGRTMIN + 1 + i, got = -1;

	if (prctl(PR_SET_PDEATHSIG, sig) < 0)
		die("PR_SET_PDEATHSIG (thread)");
	pthread_mutex_lock(&mu);
	tids[i] = (pid_t)syscall(SYS_gettid);
	nready++;
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	prctl(PR_GET_PDEATHSIG, &got);
	tally(got == sig, "thread%d-pdeathsig: set %d, got %d", i, sig, got);
	tally(syscall(SYS_gettid) == tids[i], "thread%d-tid: was %d, now %ld", i,
	      tids[i], (long)syscall(SYS_gettid));
	tok[i] = 1;
	return NULL;
}

static void grand_sig(int sig)
{
	(void)sig;
	outf(1, "grand %d got its parent-death signal, parent now %d\n", getpid(), getppid());
	_exit(7);
}

int main(int argc, char **argv)
{
	const char *cwd = NULL, *root = NULL;
	char cwdlink[512] = "";
	pthread_t th[MAXT];
	sigset_t set;
	pid_t mid, grand;
	int opt, p[2], got;

	while ((opt = getopt(argc, argv, "t:c:r:n:o:m:P:")) != -1) {
		switch (opt) {
		case 'm': kid_nofile = atoi(optarg); break;
		case 'P': root_pdeath = atoi(optarg); break;
		case 'n': lims[0].soft = lims[0].hard = (rlim_t)atoi(optarg); break;
		case 'o': OOM_ADJ = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'c': cwd = optarg; break;
		case 'r': root = optarg; break;
		default:
			say("usage: bbattrs [-t N] [-c DIR] [-r ROOT] [-n NOFILE] [-o OOM] [-m KIDNOFILE] [-P SIG]\n");
			return 2;
		}
	}
	if (nthreads > MAXT)
		nthreads = MAXT;

	/* Control: without a registration the expedited command is refused. */
	errno = 0;
	tally(membar(MEMBARRIER_CMD_PRIVATE_EXPEDITED) < 0 && errno == EPERM,
	      "membarrier-control: unregistered PRIVATE_EXPEDITED gives EPERM, got errno %d", errno);

	for (unsigned i = 0; i < NLIMS; i++) {
		struct rlimit rl = { lims[i].soft, lims[i].hard };

		if (setrlimit(lims[i].res, &rl) < 0)
			die(lims[i].name);
	}
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0 || dprintf(fd, "%d\n", OOM_ADJ) < 0)
		die("oom_score_adj");
	close(fd);
	if (prctl(PR_SET_PDEATHSIG, root_pdeath) < 0)
		die("PR_SET_PDEATHSIG");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER");
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0)
		die("PR_SET_THP_DISABLE");
	if (membar(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) < 0)
		die("membarrier REGISTER_PRIVATE_EXPEDITED");
	if (membar(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) < 0)
		die("membarrier REGISTER_PRIVATE_EXPEDITED_SYNC_CORE");
	if (membar(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ) < 0)
		die("membarrier REGISTER_PRIVATE_EXPEDITED_RSEQ");

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* mid -> grand; grand's parent-death signal (SIGUSR2) exits 7. */
	if (pipe(p) < 0)
		die("pipe");
	mid = fork();
	if (mid < 0)
		die("fork");
	if (mid == 0) {
		/* mid differs from its parent: its own oom_score_adj and soft
		 * NOFILE, and a higher hard MSGQUEUE (the parent lowers its own) */
		struct rlimit nf = { lims[0].hard > 150 ? 150 : lims[0].hard, lims[0].hard };

		if (kid_nofile >= 0)
			nf.rlim_cur = nf.rlim_max = (rlim_t)kid_nofile;
		int ofd = open("/proc/self/oom_score_adj", O_WRONLY);

		if (ofd < 0 || dprintf(ofd, "600\n") < 0 || setrlimit(RLIMIT_NOFILE, &nf) < 0)
			_exit(4);
		close(ofd);
		grand = fork();
		if (grand == 0) {
			signal(SIGUSR2, grand_sig);
			prctl(PR_SET_PDEATHSIG, SIGUSR2);
			if (write(p[1], "g", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &got, 1) != 1)
		die("grand did not start");
	{
		struct rlimit mq = { 2048, 4096 };

		if (setrlimit(RLIMIT_MSGQUEUE, &mq) < 0)
			die("lowering MSGQUEUE");
	}
	close(p[0]);
	/* grand's pid: mid's only child */
	{
		char path[64], buf[64] = "";
		for (int n = 0; n < 500 && !buf[0]; n++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", mid, mid);
			int cfd = open(path, O_RDONLY);
			if (cfd >= 0) {
				ssize_t r = read(cfd, buf, sizeof(buf) - 1);
				buf[r > 0 ? r : 0] = 0;
				close(cfd);
			}
			if (!buf[0])
				usleep(10000);
		}
		grand = atoi(buf);
		if (grand <= 0)
			die("grand's pid");
	}

	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			die("pthread_create");
	pthread_mutex_lock(&mu);
	while (nready < nthreads)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	if (cwd && chdir(cwd) < 0)
		die("chdir");
	if (root) {
		if (chroot(root) < 0)
			die("chroot");
		if (chdir("/sub") < 0)
			die("chdir /sub");
	}
	if (cwd) {
		/* what the cwd link will read once the test removed it */
		snprintf(cwdlink, sizeof(cwdlink), "%s (deleted)", cwd);
	}

	say("ready %d mid %d grand %d\n", getpid(), mid, grand);

	int sig;
	do
		sig = sigwaitinfo(&set, NULL);
	while (sig != SIGUSR1);
	say("checking\n");

	for (unsigned i = 0; i < NLIMS; i++) {
		struct rlimit rl = { 0, 0 };

		getrlimit(lims[i].res, &rl);
		tally(rl.rlim_cur == lims[i].soft && rl.rlim_max == lims[i].hard,
		      "rlimit-%s: set %lld/%lld, got %lld/%lld", lims[i].name,
		      (long long)lims[i].soft, (long long)lims[i].hard,
		      (long long)rl.rlim_cur, (long long)rl.rlim_max);
	}
	if (!root) {
		char buf[32] = "";
		fd = open("/proc/self/oom_score_adj", O_RDONLY);
		if (fd >= 0) {
			ssize_t r = read(fd, buf, sizeof(buf) - 1);
			buf[r > 0 ? r : 0] = 0;
			close(fd);
		}
		tally(atoi(buf) == OOM_ADJ, "oom_score_adj: set %d, got %s", OOM_ADJ, buf);
	}
	got = -1;
	prctl(PR_GET_PDEATHSIG, &got);
	tally(got == root_pdeath, "pdeathsig: set %d, got %d", root_pdeath, got);
	got = -1;
	prctl(PR_GET_CHILD_SUBREAPER, &got);
	tally(got == 1, "subreaper: set 1, got %d", got);
	got = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	tally(got == 1, "thp-disable: set 1, got %d", got);
	errno = 0;
	got = membar(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	tally(got == 0, "membarrier-private-expedited: registered, the command gives %d errno %d", got, errno);
	errno = 0;
	got = membar(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
	tally(got == 0, "membarrier-sync-core: registered, the command gives %d errno %d", got, errno);
	errno = 0;
	got = membar(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ);
	tally(got == 0, "membarrier-rseq: registered, the command gives %d errno %d", got, errno);
	if (cwd) {
		char l[512] = "";
		ssize_t r = readlink("/proc/self/cwd", l, sizeof(l) - 1);
		l[r > 0 ? r : 0] = 0;
		tally(!strcmp(l, cwdlink), "deleted-cwd: was '%s', now '%s'", cwdlink, l);
		errno = 0;
		int cf = open("newfile", O_CREAT | O_WRONLY, 0600);
		tally(cf < 0 && errno == ENOENT,
		      "deleted-cwd-create: a file in a removed directory gives ENOENT, got fd %d errno %d",
		      cf, errno);
	}
	if (root) {
		char buf[64] = "", l[256] = "";
		fd = open("/marker", O_RDONLY);
		if (fd >= 0) {
			ssize_t r = read(fd, buf, sizeof(buf) - 1);
			buf[r > 0 ? r : 0] = 0;
			close(fd);
		}
		tally(!strncmp(buf, "bb-marker", 9), "chroot-marker: /marker read '%s'", buf);
		tally(access("/imgcr", F_OK) < 0 && errno == ENOENT,
		      "chroot-confined: /imgcr of the real root is not visible (errno %d)", errno);
		tally(getcwd(l, sizeof(l)) && !strcmp(l, "/sub"), "chroot-cwd: was /sub, now '%s'", l);
	}

	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		tally(tok[i], "thread%d-done: it ran its checks", i);
	}

	/* Subreaper and parent-death signal at work. */
	int st = 0;
	kill(mid, SIGKILL);
	tally(waitpid(mid, &st, 0) == mid && WIFSIGNALED(st), "mid-reaped: status %#x", st);
	pid_t w = -1;
	st = 0;
	for (int n = 0; n < 300; n++) {
		w = waitpid(grand, &st, WNOHANG);
		if (w != 0)
			break;
		usleep(10000);
	}
	tally(w == grand && WIFEXITED(st) && WEXITSTATUS(st) == 7,
	      "grand-reparented: waitpid(grand %d) gives %d status %#x (want exit 7: re-parented to the subreaper, then its parent-death signal; errno %d)",
	      grand, w, st, errno);

	return tally_end("bbattrs");
}
