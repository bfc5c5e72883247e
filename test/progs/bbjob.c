/*
 * bbjob: "real job" cases for imgcr dump + restore (hold-out tests of
 * issue 10, test/guest/trees/t_bb_jobs.sh).  Every check prints "ok NAME" or
 * "FAIL NAME: ..."; the last line is "bbjob PASS" (exit 0) or
 * "bbjob FAIL N" (exit 1).
 *
 *   bbjob evloop DIR   an epoll loop over a periodic timerfd (100 ms), a
 *       signalfd (SIGUSR1, SIGTERM), inotify watches on DIR and DIR/f.
 *       Not in the epoll set: an eventfd holding 41, a semaphore eventfd
 *       holding 3, and a signalfd for SIGRTMIN with one SIGRTMIN queued
 *       (sigqueue, value 1234).  Prints "ready PID wd DIRWD FWD", "tick N"
 *       for every timer expiration and "inotify WD MASK NAME" for events.
 *       On SIGUSR1: the eventfd must read 42 after one more write, the
 *       semaphore eventfd give exactly 3 reads, the SIGRTMIN signalfd the
 *       queued signal with its value; prints "checked".  On SIGTERM: the
 *       result line and exit.
 *   bbjob jobctl       a job-control "shell": a child in its own process
 *       group prints "n N" every 100 ms; the parent stops the group with
 *       SIGTSTP ("stopped AT N"), waits for SIGUSR1, then continues it
 *       with SIGCONT (as fg does), checks WIFCONTINUED, lets it print 5
 *       more lines and ends it.
 *   bbjob ghost FILE LOCKFILE   FILE (64 KiB of a pattern) open, mapped
 *       shared, flock()ed, then unlinked; a POSIX write lock on bytes
 *       10-109 of LOCKFILE.  Prints "ready PID FD" (FD: FILE's descriptor)
 *       and waits for SIGUSR1: contents through the mapping and the fd,
 *       the fd's offset (12345), nlink 0, a write through the mapping seen
 *       by read(), both locks still this process's (F_GETLK from a child).
 *   bbjob probe FILE flock|posix   from outside: exit 0 if the lock
 *       cannot be taken (held by someone), 1 if it could, 2 on error.
 *   bbjob zombie       two children: one exits 42, one is killed by
 *       SIGTERM; neither reaped.  "ready PID C1 C2"; on SIGUSR1 reaps both
 *       and checks their statuses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#define COMMON_TALLY
#include "common.h"

static void die(const char *what)
{
	setup_die("bbjob", what);
}

static int finish(void)
{
	return tally_end("bbjob");
}

static void block(sigset_t *set)
{
	sigprocmask(SIG_BLOCK, set, NULL);
}

static void wait_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	block(&set);
	while (sigwaitinfo(&set, NULL) != SIGUSR1)
		;
}

static int evloop(const char *dir)
{
	sigset_t set, rt;
	char path[512];
	int ep, tfd, sfd, rtfd, efd, sem, ino, wd_dir, wd_f;
	unsigned long long ticks = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	block(&set);
	block(&rt);
	ep = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sfd = signalfd(-1, &set, SFD_NONBLOCK);
	rtfd = signalfd(-1, &rt, SFD_NONBLOCK | SFD_CLOEXEC);
	efd = eventfd(41, EFD_NONBLOCK);
	sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	ino = inotify_init1(IN_NONBLOCK);
	if (ep < 0 || tfd < 0 || sfd < 0 || rtfd < 0 || efd < 0 || sem < 0 || ino < 0)
		die("fds");
	snprintf(path, sizeof(path), "%s/f", dir);
	wd_dir = inotify_add_watch(ino, dir, IN_CREATE | IN_DELETE);
	wd_f = inotify_add_watch(ino, path, IN_MODIFY);
	if (wd_dir < 0 || wd_f < 0)
		die("inotify_add_watch");
	struct itimerspec its = { { 0, 100000000 }, { 0, 100000000 } };
	if (timerfd_settime(tfd, 0, &its, NULL) < 0)
		die("timerfd_settime");
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.u64 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.u64 = 3;
	ev.events = EPOLLIN | EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_ADD, ino, &ev);
	union sigval sv = { .sival_int = 1234 };
	if (sigqueue(getpid(), SIGRTMIN, sv) < 0)
		die("sigqueue");
	say("ready %d wd %d %d\n", getpid(), wd_dir, wd_f);

	for (;;) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == 1) {
				uint64_t e;
				if (read(tfd, &e, 8) == 8) {
					ticks += e;
					say("tick %llu\n", ticks);
				}
			} else if (evs[i].data.u64 == 3) {
				char buf[4096] __attribute__((aligned(8)));
				ssize_t r;
				while ((r = read(ino, buf, sizeof(buf))) > 0) {
					for (char *p = buf; p < buf + r;) {
						struct inotify_event *ie = (void *)p;
						say("inotify %d %#x %s\n", ie->wd, ie->mask,
						    ie->len ? ie->name : "-");
						p += sizeof(*ie) + ie->len;
					}
				}
			} else if (evs[i].data.u64 == 2) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGTERM)
						return finish();
					if (si.ssi_signo != SIGUSR1)
						continue;
					uint64_t v = 1;
					if (write(efd, &v, 8) != 8)
						tally(0, "eventfd-write: errno %d", errno);
					v = 0;
					ssize_t r = read(efd, &v, 8);
					tally(r == 8 && v == 42, "eventfd-counter: 41 + 1 should read 42, read %zd gave %llu",
					      r, (unsigned long long)v);
					int k = 0;
					while (read(sem, &v, 8) == 8 && v == 1 && k < 10)
						k++;
					tally(k == 3, "eventfd-semaphore: counter 3 gives 3 reads of 1, got %d", k);
					struct signalfd_siginfo q;
					memset(&q, 0, sizeof(q));
					r = read(rtfd, &q, sizeof(q));
					tally(r == sizeof(q) && q.ssi_signo == (uint32_t)SIGRTMIN && q.ssi_int == 1234,
					      "signalfd-queued: SIGRTMIN value 1234 queued, read %zd signo %u value %d",
					      r, q.ssi_signo, q.ssi_int);
					say("checked\n");
				}
			}
		}
	}
}

static int jobctl(void)
{
	pid_t c;
	int st;

	c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		setpgid(0, 0);
		for (int n = 1;; n++) {
			say("n %d\n", n);
			usleep(100000);
		}
	}
	setpgid(c, c);
	/* let it print a few lines, then ^Z */
	usleep(500000);
	if (kill(-c, SIGTSTP) < 0)
		die("kill SIGTSTP");
	if (waitpid(c, &st, WUNTRACED) != c || !WIFSTOPPED(st))
		die("waitpid WUNTRACED");
	say("ready %d job %d stopped by %d\n", getpid(), c, WSTOPSIG(st));
	wait_usr1();
	say("fg\n");
	kill(-c, SIGCONT);
	/* a restored stopped task reports a new stop (SIGSTOP); skip stops */
	int seen_cont = 0;
	for (int k = 0; k < 5 && !seen_cont; k++) {
		if (waitpid(c, &st, WCONTINUED | WUNTRACED) != c)
			break;
		seen_cont = WIFCONTINUED(st);
	}
	tally(seen_cont, "job-continued: waitpid gave WIFCONTINUED after SIGCONT (status %#x)", st);
	usleep(700000);
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	return finish();
}

#define GLEN (64 * 1024)

static unsigned char gpat(size_t i)
{
	return (unsigned char)(i * 131 + 7);
}

static int ghost(const char *file, const char *lockfile)
{
	unsigned char *m, buf[GLEN];
	int fd, lfd;
	struct stat st;

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	lfd = open(lockfile, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || lfd < 0)
		die("open");
	for (size_t i = 0; i < GLEN; i++)
		buf[i] = gpat(i);
	if (write(fd, buf, GLEN) != GLEN || write(lfd, buf, 200) != 200)
		die("write");
	m = mmap(NULL, GLEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		die("flock");
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 100 };
	if (fcntl(lfd, F_SETLK, &fl) < 0)
		die("F_SETLK");
	if (unlink(file) < 0)
		die("unlink");
	lseek(fd, 12345, SEEK_SET);
	say("ready %d %d\n", getpid(), fd);
	wait_usr1();

	long o = -1;
	for (size_t i = 0; i < GLEN && o < 0; i++)
		if (m[i] != gpat(i))
			o = (long)i;
	tally(o < 0, "ghost-mapping: the deleted file's data through the mapping, byte %ld differs", o);
	off_t off = lseek(fd, 0, SEEK_CUR);
	tally(off == 12345, "ghost-offset: set 12345, got %lld", (long long)off);
	memset(buf, 0, sizeof(buf));
	ssize_t r = pread(fd, buf, GLEN, 0);
	o = -1;
	for (size_t i = 0; i < GLEN && o < 0; i++)
		if (buf[i] != gpat(i))
			o = (long)i;
	tally(r == GLEN && o < 0, "ghost-read: pread %zd bytes, byte %ld differs", r, o);
	tally(fstat(fd, &st) == 0 && st.st_nlink == 0 && st.st_size == GLEN,
	      "ghost-unlinked: nlink %lu size %lld", (unsigned long)st.st_nlink, (long long)st.st_size);
	tally(access(file, F_OK) < 0, "ghost-no-name: %s is gone again", file);
	m[100] = 0xEE;
	unsigned char b = 0;
	tally(pread(fd, &b, 1, 100) == 1 && b == 0xEE,
	      "ghost-shared: a write through the mapping is read through the fd (%#x)", b);
	/* the locks: a child (another process) must not get them */
	pid_t c = fork();
	if (c == 0) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		int f2 = open(p, O_RDWR);	/* a new open file description */
		int bad = 0;
		if (f2 < 0 || flock(f2, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
			bad |= 1;
		struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
		if (fcntl(lfd, F_GETLK, &q) < 0 || q.l_type != F_WRLCK || q.l_pid != getppid() ||
		    q.l_start != 10 || q.l_len != 100)
			bad |= 2;
		_exit(bad);
	}
	int ws = 0;
	waitpid(c, &ws, 0);
	tally(WIFEXITED(ws) && !(WEXITSTATUS(ws) & 1),
	      "flock-held: another open of the deleted file cannot flock it (child status %#x)", ws);
	tally(WIFEXITED(ws) && !(WEXITSTATUS(ws) & 2),
	      "posix-lock-held: F_GETLK from another process names us on bytes 10-109 (child status %#x)", ws);
	return finish();
}

static int probe(const char *file, const char *kind)
{
	int fd = open(file, O_RDWR);
	if (fd < 0)
		return 2;
	if (!strcmp(kind, "flock")) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 1;
		return errno == EWOULDBLOCK ? 0 : 2;
	}
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 1 };
	if (fcntl(fd, F_SETLK, &fl) == 0)
		return 1;
	return errno == EAGAIN || errno == EACCES ? 0 : 2;
}

static int zombie(void)
{
	pid_t c1, c2;

	c1 = fork();
	if (c1 == 0)
		_exit(42);
	c2 = fork();
	if (c2 == 0) {
		for (;;)
			pause();
	}
	kill(c2, SIGTERM);
	/* both zombies before "ready" */
	for (int n = 0; n < 500 && (task_state(c1) != 'Z' || task_state(c2) != 'Z'); n++)
		usleep(10000);
	say("ready %d %d %d\n", getpid(), c1, c2);
	wait_usr1();
	int s1 = 0, s2 = 0;
	pid_t w1 = waitpid(c1, &s1, WNOHANG), w2 = waitpid(c2, &s2, WNOHANG);
	tally(w1 == c1 && WIFEXITED(s1) && WEXITSTATUS(s1) == 42,
	      "zombie-exit: waitpid(%d) gave %d status %#x, want exit 42", c1, w1, s1);
	tally(w2 == c2 && WIFSIGNALED(s2) && WTERMSIG(s2) == SIGTERM,
	      "zombie-signal: waitpid(%d) gave %d status %#x, want SIGTERM", c2, w2, s2);
	errno = 0;
	tally(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no-more-children: errno %d", errno);
	return finish();
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "evloop"))
		return evloop(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "jobctl"))
		return jobctl();
	if (argc >= 4 && !strcmp(argv[1], "ghost"))
		return ghost(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "probe"))
		return probe(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "zombie"))
		return zombie();
	say("usage: bbjob evloop DIR | jobctl | ghost FILE LOCKFILE | probe FILE flock|posix | zombie\n");
	return 2;
}
