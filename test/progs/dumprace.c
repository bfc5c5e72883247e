/*
 * dumprace [-t SECONDS] [-r RACERS] [-n TARGETS] [-s SEED]: race dumps of
 * /proc/PID/dump against targets that change under them (t_dump_race.sh).
 *
 * TARGETS processes (children of this one, respawned when they exit) loop
 * at random through: mmap (and touch) anonymous regions, munmap (whole or
 * a part), mremap (grow, shrink, move), mprotect, fork a child that
 * touches memory and exits, create a detached thread that does the same,
 * execve themselves (/proc/self/exe), and exit.  Their pids are written
 * to the file "targets" (one a line) whenever the set changes, for the
 * shell's own racers (cat, imgcr dump).
 *
 * RACERS processes loop: pick a target, stop it (SIGSTOP, or ptrace:
 * PTRACE_SEIZE + PTRACE_INTERRUPT, or PTRACE_ATTACH), sometimes without
 * waiting for the stop, open /proc/PID/dump and do one of: read() it all,
 * IMGCR_IOC_DUMP_TO into a file, IMGCR_IOC_DUMP_TO_SKIP with a range of
 * one of its anonymous mappings, IMGCR_IOC_PRECOPY of such a range, an
 * unknown ioctl, an ioctl with a bad pointer -- each possibly after
 * continuing the target (the image must be refused: EAGAIN) or SIGKILLing
 * it (ESRCH/EAGAIN), and with the descriptor sometimes kept open across
 * later rounds (up to 8 per racer) so it outlives its task.  Then the
 * target is continued or detached.
 *
 * Output at the end: "ops N", one line per operation "OP total=N ok=N
 * ERRNAME=N ...", "unexpected N" (errnos that none of the races explains:
 * EFAULT except from the bad pointer, EINVAL except from the bad range,
 * ENOMEM, EIO, ...) and one "UNEXPECTED OP ERRNAME" line for each kind.
 * Exit status 0 if nothing unexpected happened and every racer finished,
 * 1 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "common.h"
#include "../../include/uapi/linux/imgcr.h"

#define MAX_TARGETS 64
#define MAX_RACERS 32
#define NERR 160
#define KEEP 8

enum op { OP_OPEN, OP_READ, OP_DUMPTO, OP_SKIP, OP_PRECOPY, OP_BADCMD,
	  OP_BADPTR, OP_BADRANGE, OP_LATEREAD, OP_FILEMAPS, NOPS };
static const char *op_name[NOPS] = {
	"open", "read", "dump_to", "dump_to_skip", "precopy", "bad_cmd",
	"bad_ptr", "bad_range", "late_read", "file_maps",
};

struct shared {
	volatile int pids[MAX_TARGETS];
	volatile int stop;
	unsigned long count[NOPS][NERR];	/* [op][0]: ok */
};
static struct shared *sh;
static int ntargets = 4;

static uint64_t rng;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static void note(enum op op, int err)
{
	if (err < 0 || err >= NERR)
		err = NERR - 1;
	__atomic_add_fetch(&sh->count[op][err], 1, __ATOMIC_RELAXED);
}

/* ---- targets ---- */

#define NREG 12
struct region { char *p; size_t len; };

static void touch(char *p, size_t len)
{
	for (size_t o = 0; o < len; o += 4096)
		p[o] = (char)(o >> 12);
}

static void *thread_fn(void *arg)
{
	char buf[8192];

	(void)arg;
	touch(buf, sizeof(buf));
	usleep(rnd() % 3000);
	return NULL;
}

static void target_main(const char *self) __attribute__((noreturn));
static void target_main(const char *self)
{
	struct region r[NREG] = { { 0 } };
	pthread_attr_t at;

	prctl(PR_SET_NAME, "racetgt");
	rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (;;) {
		struct region *g = &r[rnd() % NREG];
		size_t len = (1 + rnd() % 32) * 4096UL;
		pthread_t th;
		void *p;

		switch (rnd() % 24) {
		case 0: case 1: case 2: case 3:
			if (g->p)
				break;
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				break;
			g->p = p;
			g->len = len;
			touch(g->p, g->len);
			break;
		case 4: case 5:
			if (!g->p)
				break;
			if (g->len > 4096 && rnd() % 2) {	/* a hole */
				size_t off = (1 + rnd() % (g->len / 4096 - 1)) * 4096;

				munmap(g->p + off, g->len - off);
				g->len = off;
				break;
			}
			munmap(g->p, g->len);
			g->p = NULL;
			break;
		case 6: case 7: case 8:
			if (!g->p)
				break;
			p = mremap(g->p, g->len, len, MREMAP_MAYMOVE);
			if (p == MAP_FAILED)
				break;
			g->p = p;
			g->len = len;
			touch(g->p, g->len);
			break;
		case 9:
			if (g->p)
				mprotect(g->p, g->len, rnd() % 2 ? PROT_READ :
					 PROT_READ | PROT_WRITE);
			break;
		case 10: case 11:
			switch (fork()) {
			case 0:
				for (int i = 0; i < NREG; i++)
					if (r[i].p && !mprotect(r[i].p, r[i].len,
						PROT_READ | PROT_WRITE))
						touch(r[i].p, r[i].len);
				usleep(rnd() % 2000);
				_exit(0);
			case -1:
				break;
			}
			break;
		case 12: case 13:
			pthread_create(&th, &at, thread_fn, NULL);
			break;
		case 14:
			if (rnd() % 8 == 0) {
				execl(self, self, "-T", (char *)NULL);
				_exit(3);
			}
			break;
		case 15:
			if (rnd() % 16 == 0)
				exit(0);
			break;
		default:
			for (int i = 0; i < NREG; i++)
				if (r[i].p && !mprotect(r[i].p, r[i].len,
						PROT_READ | PROT_WRITE))
					touch(r[i].p, r[i].len);
			sched_yield();
			break;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

static void write_targets(void)
{
	char buf[MAX_TARGETS * 12];
	int n = 0, fd;

	for (int i = 0; i < ntargets; i++)
		if (sh->pids[i] > 0)
			n += snprintf(buf + n, sizeof(buf) - n, "%d\n", sh->pids[i]);
	fd = open("targets.new", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, n) != n) {
		close(fd);
		return;
	}
	close(fd);
	rename("targets.new", "targets");
}

static int spawn_target(const char *self)
{
	int pid = fork();

	if (pid == 0) {
		execl(self, self, "-T", (char *)NULL);
		_exit(3);
	}
	return pid;
}

/* ---- racers ---- */

/* An anonymous writable mapping of @pid, at most 256 pages: 0 if none. */
static int anon_range(int pid, unsigned long *start, unsigned long *end)
{
	char path[64], buf[16384];
	unsigned long s, e, cand_s[64], cand_e[64];
	int fd, n = 0;
	ssize_t len;
	char *line;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	for (line = buf; line && *line && n < 64; line = strchr(line, '\n')) {
		char perms[8];
		unsigned long off;
		int ino, consumed = 0;

		if (*line == '\n')
			line++;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %d%n", &s, &e, perms,
			   &off, &ino, &consumed) < 5)
			break;
		if (perms[0] == 'r' && perms[1] == 'w' && ino == 0 && e > s) {
			cand_s[n] = s;
			cand_e[n] = e - s > 256 * 4096UL ? s + 256 * 4096UL : e;
			n++;
		}
		line += consumed;
	}
	if (!n)
		return 0;
	n = rnd() % n;
	*start = cand_s[n];
	*end = cand_e[n];
	return 1;
}

static int wait_stopped(int pid)
{
	for (int i = 0; i < 200; i++) {
		char st = task_state(pid);

		if (st == 'T' || st == 't')
			return 1;
		if (!st || st == 'Z' || st == 'X')
			return 0;
		usleep(500);
	}
	return 0;
}

static char *bigbuf;
#define BIGBUF (256 * 4096UL)

static void one_op(int fd, int pid, char *outpath)
{
	unsigned long s = 0, e = 0;
	int have = anon_range(pid, &s, &e);
	int disturb = rnd() % 8;
	int ofd;
	ssize_t n;

	/* Disturb the target between open and use. */
	if (disturb == 0)
		kill(pid, SIGCONT);
	else if (disturb == 1)
		kill(pid, SIGKILL);

	switch (rnd() % 8) {
	case 0: case 1:
		do
			n = read(fd, bigbuf, 65536);
		while (n > 0);
		note(OP_READ, n < 0 ? errno : 0);
		break;
	case 2: {
		ofd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct imgcr_dump_to to = { .fd = ofd };

		note(OP_DUMPTO, ioctl(fd, IMGCR_IOC_DUMP_TO, &to) ? errno : 0);
		close(ofd);
		break;
	}
	case 3: {
		struct imgcr_range rg = { s, e };

		ofd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct imgcr_dump_to_skip sk = {
			.to = { .fd = ofd },
			.ranges = (uintptr_t)&rg,
			.nr_ranges = have,
		};
		note(OP_SKIP, ioctl(fd, IMGCR_IOC_DUMP_TO_SKIP, &sk) ? errno : 0);
		close(ofd);
		break;
	}
	case 4: case 5: {
		static unsigned char status[256];

		if (!have)
			break;
		struct imgcr_precopy pc = {
			.start = s, .end = e, .buf = (uintptr_t)bigbuf,
			.status = (uintptr_t)status,
		};
		note(OP_PRECOPY, ioctl(fd, IMGCR_IOC_PRECOPY, &pc) ? errno : 0);
		break;
	}
	case 6:
		note(OP_BADCMD, ioctl(fd, _IO(0xcc, 0x7f), 0) ? errno : 0);
		note(OP_BADPTR, ioctl(fd, rnd() % 2 ? IMGCR_IOC_DUMP_TO :
				      IMGCR_IOC_PRECOPY, (void *)16) ? errno : 0);
		{
			/* a file index that may be past the table or not shared memory */
			struct imgcr_file_maps fm = { .file = rnd() % 8 };

			note(OP_FILEMAPS, ioctl(fd, IMGCR_IOC_FILE_MAPS, &fm) ? errno : 0);
		}
		break;
	case 7: {
		struct imgcr_precopy pc = {
			.start = s + 1, .end = e, .buf = (uintptr_t)bigbuf,
			.status = (uintptr_t)bigbuf,
		};
		note(OP_BADRANGE, ioctl(fd, IMGCR_IOC_PRECOPY, &pc) ? errno : 0);
		break;
	}
	}
}

static void racer_main(int id) __attribute__((noreturn));
static void racer_main(int id)
{
	int keep[KEEP], nkeep = 0;
	char outpath[64], path[64];

	rng = (uint64_t)(id + 1) * 0x2545f4914f6cdd1dULL ^ (uint64_t)getpid();
	bigbuf = mmap(NULL, BIGBUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bigbuf == MAP_FAILED)
		_exit(2);
	snprintf(outpath, sizeof(outpath), "race-%d.img", id);
	while (!sh->stop) {
		int pid = sh->pids[rnd() % ntargets];
		int how = rnd() % 4, traced = 0, fd;

		if (pid <= 0)
			continue;
		if (how == 0 || how == 1) {
			kill(pid, SIGSTOP);
			if (how == 0)
				wait_stopped(pid);
		} else if (how == 2) {
			if (!ptrace(PTRACE_SEIZE, pid, 0, 0) &&
			    !ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
				traced = 1;
				waitpid(pid, NULL, __WALL);
			}
		} else {
			if (!ptrace(PTRACE_ATTACH, pid, 0, 0)) {
				traced = 1;
				waitpid(pid, NULL, __WALL);
			}
		}
		snprintf(path, sizeof(path), "/proc/%d/dump", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		note(OP_OPEN, fd < 0 ? errno : 0);
		if (fd >= 0)
			one_op(fd, pid, outpath);
		if (traced)
			ptrace(PTRACE_DETACH, pid, 0, 0);
		kill(pid, SIGCONT);
		if (fd >= 0) {
			if (nkeep < KEEP && rnd() % 3 == 0) {
				keep[nkeep++] = fd;
			} else {
				close(fd);
			}
		}
		if (nkeep == KEEP || (nkeep && rnd() % 16 == 0)) {
			/* a descriptor whose task may be gone, ran, or exec'd */
			int k = rnd() % nkeep;
			ssize_t n = read(keep[k], bigbuf, 4096);

			note(OP_LATEREAD, n < 0 ? errno : 0);
			close(keep[k]);
			keep[k] = keep[--nkeep];
		}
		while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
			;
	}
	while (nkeep)
		close(keep[--nkeep]);
	_exit(0);
}

/* ---- the verdict ---- */

/* errnos each operation may see from the races above */
static int expected(enum op op, int err)
{
	switch (err) {
	case EBUSY: case EAGAIN: case ESRCH: case ENOENT: case EINTR:
		return 1;
	case EFAULT:
		return op == OP_BADPTR;
	case EINVAL:
		return op == OP_BADRANGE || op == OP_FILEMAPS;
	case ENOTTY:
		return op == OP_BADCMD;
	case EACCES: case EPERM:
		/* an exec'ing target, whose credentials are being replaced */
		return op == OP_OPEN;
	case EOPNOTSUPP:
		/* refused: the main thread has exited, the others not yet */
		return op == OP_OPEN;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int secs = 10, nracers = 4, c, racer[MAX_RACERS], bad = 0;
	unsigned long total = 0, unexpected = 0;
	const char *self = "/proc/self/exe";
	char selfpath[4096];
	ssize_t sl;

	while ((c = getopt(argc, argv, "Tt:r:n:")) != -1) {
		switch (c) {
		case 'T':
			sl = readlink("/proc/self/exe", selfpath, sizeof(selfpath) - 1);
			if (sl > 0) {
				selfpath[sl] = 0;
				self = selfpath;
			}
			target_main(self);
		case 't': secs = atoi(optarg); break;
		case 'r': nracers = atoi(optarg); break;
		case 'n': ntargets = atoi(optarg); break;
		default:
			outf(2, "usage: dumprace [-t SECONDS] [-r RACERS] [-n TARGETS]\n");
			return 64;
		}
	}
	if (nracers < 1 || nracers > MAX_RACERS || ntargets < 1 ||
	    ntargets > MAX_TARGETS) {
		outf(2, "dumprace: 1..%d racers, 1..%d targets\n", MAX_RACERS,
		     MAX_TARGETS);
		return 64;
	}
	sl = readlink("/proc/self/exe", selfpath, sizeof(selfpath) - 1);
	if (sl <= 0)
		return 2;
	selfpath[sl] = 0;
	self = selfpath;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	for (int i = 0; i < ntargets; i++)
		sh->pids[i] = spawn_target(self);
	write_targets();
	for (int i = 0; i < nracers; i++) {
		racer[i] = fork();
		if (racer[i] == 0)
			racer_main(i);
	}
	say("started %d targets, %d racers, %d s\n", ntargets, nracers, secs);

	unsigned long respawned = 0;
	time_t end = time(NULL) + secs;

	while (time(NULL) < end) {
		int st, pid = waitpid(-1, &st, WNOHANG);

		if (pid <= 0) {
			usleep(10000);
			continue;
		}
		for (int i = 0; i < ntargets; i++) {
			if (sh->pids[i] != pid)
				continue;
			sh->pids[i] = spawn_target(self);
			respawned++;
			write_targets();
		}
		for (int i = 0; i < nracers; i++)
			if (racer[i] == pid) {
				outf(1, "racer %d died early (status 0x%x)\n", i, st);
				racer[i] = 0;
				bad = 1;
			}
	}
	sh->stop = 1;
	for (int i = 0; i < nracers; i++) {
		int st, n = 0;

		if (!racer[i])
			continue;
		/* a racer is never stuck for long: 20 s to finish */
		while (waitpid(racer[i], &st, WNOHANG) == 0) {
			if (++n > 2000) {
				outf(1, "racer %d hangs (still running 20 s after the end)\n", i);
				bad = 1;
				kill(racer[i], SIGKILL);
				waitpid(racer[i], &st, 0);
				break;
			}
			usleep(10000);
		}
		if (WIFEXITED(st) && WEXITSTATUS(st)) {
			outf(1, "racer %d exit %d\n", i, WEXITSTATUS(st));
			bad = 1;
		}
	}
	for (int i = 0; i < ntargets; i++) {
		if (sh->pids[i] > 0) {
			kill(sh->pids[i], SIGKILL);
			kill(sh->pids[i], SIGCONT);
		}
	}
	while (wait(NULL) > 0)
		;

	for (int op = 0; op < NOPS; op++) {
		char line[1024];
		int n;
		unsigned long t = 0;

		for (int e = 0; e < NERR; e++)
			t += sh->count[op][e];
		total += t;
		n = snprintf(line, sizeof(line), "%s total=%lu ok=%lu", op_name[op], t,
			     sh->count[op][0]);
		for (int e = 1; e < NERR; e++) {
			if (!sh->count[op][e])
				continue;
			n += snprintf(line + n, sizeof(line) - n, " %s=%lu",
				      errname(e), sh->count[op][e]);
			if (!expected(op, e))
				unexpected += sh->count[op][e];
		}
		say("%s\n", line);
	}
	for (int op = 0; op < NOPS; op++)
		for (int e = 1; e < NERR; e++)
			if (sh->count[op][e] && !expected(op, e))
				say("UNEXPECTED %s %s (%lu)\n", op_name[op], errname(e),
				    sh->count[op][e]);
	say("ops %lu respawned %lu\n", total, respawned);
	say("unexpected %lu\n", unexpected);
	return bad || unexpected ? 1 : 0;
}
