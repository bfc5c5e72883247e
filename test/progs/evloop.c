/*
 * evloop: an event loop across dump + restore.  One epoll instance (ep)
 * watches an eventfd (EPOLLONESHOT, fired once and disarmed before the
 * dump), a 200 ms periodic timerfd (level), a signalfd for SIGUSR2
 * (EPOLLET, a SIGUSR2 queued), an inotify instance (watching the directory
 * w, IN_CREATE|IN_DELETE, and the file w/f, IN_MODIFY, with wds made
 * non-trivial by adding and removing watches first), a pidfd to the child
 * (PIDFD_NONBLOCK), a second epoll (ep2, watching a pipe), and, registered
 * by the child in the epoll it shares, the child's eventfd at fd 200 (an
 * fd the parent does not have).  Besides: a memfd "evl-mem" (data at 0
 * and at 1 MiB, a hole between, seals F_SEAL_SHRINK|F_SEAL_GROW, offset 3;
 * the child has it too)
 * and an O_RDONLY description of it opened through /proc/self/fd, an
 * O_PATH fd on w/f, and an O_DIRECTORY fd on d (7 entries) of which 3 were
 * read with getdents64.
 * It prints "fds ..." and "ready", then loops on epoll_wait (20 ms) until
 * the file "restored" appears in its cwd, then checks, printing ok/BAD:
 *   signalfd  ET: reported once before the dump and once after the
 *             restore (the ready list rebuilt); the queued SIGUSR2 is
 *             read; a new one is reported and read
 *   eventfd   not reported after the restore (still disarmed); EPOLL_CTL_MOD
 *             on its old fd number re-arms it: reported, counter 5
 *   timerfd   ticks through epoll with a 200 ms period (measured over 10)
 *   inotify   creating w/new and writing w/f after the restore: IN_CREATE
 *             on the dir's wd, IN_MODIFY on the file's wd; inotify_rm_watch
 *             on the old wd works (IN_IGNORED follows)
 *   nested    writing the pipe: ep reports ep2, ep2 reports the pipe
 *   shared    the child writes its eventfd: ep reports data 200
 *   pidfd     pidfd_send_signal(SIGKILL) to the child: reported in ep;
 *             a second pidfd, to the test's shell (outside the tree), works
 *   DEL       EPOLL_CTL_DEL of the timerfd by its old number
 *   memfd     name, offset, seals, data, hole, size, the read-only
 *             description sees writes through the other and cannot write
 *   O_PATH    still O_PATH, same inode as w/f
 *   dir       getdents64 continues: the 4 entries not read before
 * Exit 0 only if all passed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

#define D_EFD 1
#define D_TPER 2
#define D_SIG 3
#define D_INO 4
#define D_PIDFD 5
#define D_EP2 6
#define D_CHILD 200


static int ep, efd, tper, sfd, ino, pidfd, ep2, pp[2];
static int n_efd, n_sig, n_child, n_pidfd, n_ep2, n_ino;
static long long ticks;
static double tick_at[64];
static int ntick_at;

/* One epoll_wait (up to @ms): count what is reported; the timer is read. */
static void loop_once(int ms)
{
	struct epoll_event ev[16];
	int n, i;
	uint64_t v;

	n = epoll_wait(ep, ev, 16, ms);
	for (i = 0; i < n; i++) {
		switch (ev[i].data.u64) {
		case D_EFD: n_efd++; break;
		case D_SIG: n_sig++; break;
		case D_PIDFD: n_pidfd++; break;
		case D_EP2: n_ep2++; break;
		case D_INO: n_ino++; break;
		case D_CHILD: n_child++; break;
		case D_TPER:
			if (read(tper, &v, 8) == 8) {
				ticks += v;
				if (ntick_at < 64)
					tick_at[ntick_at++] = now();
			}
			break;
		default:
			check(0, "epoll", "unknown data 0x%llx", (unsigned long long)ev[i].data.u64);
		}
	}
}

/* Loop until *@counter reaches @min or @secs pass (by the clock: items may be ready all along). */
static void loop_until(const int *counter, int min, double secs)
{
	double end = now() + secs;

	while (*counter < min && now() < end)
		loop_once(20);
}

static int child(void)
{
	int cfd = eventfd(0, EFD_NONBLOCK), n;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = D_CHILD };
	uint64_t one = 1;

	if (cfd < 0 || dup2(cfd, 200) != 200 || epoll_ctl(ep, EPOLL_CTL_ADD, 200, &ev)) {
		say("BAD child setup: %s\n", strerror(errno));
		return 1;
	}
	close(cfd);
	say("child ready\n");
	while (!exists("restored"))
		msleep(20);
	for (n = 0; n < 500 && !exists("child-go"); n++)
		msleep(20);
	if (write(200, &one, 8) != 8)
		say("BAD child write: %s\n", strerror(errno));
	for (;;)
		pause();
}

static int add(int fd, unsigned int events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* getdents64 one entry at a time (a small buffer); names appended to @seen. */
static int read_dir(int fd, int max, char *seen, size_t size)
{
	char buf[40];	/* room for one short entry */
	int n = 0;

	while (n < max) {
		long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		long off = 0;

		if (r <= 0)
			break;
		while (off < r) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			unsigned short reclen;

			memcpy(&reclen, buf + off + 16, 2);
			snprintf(seen + strlen(seen), size - strlen(seen), "%s/", buf + off + 19);
			off += reclen;
			n++;
		}
	}
	return n;
}

int main(void)
{
	struct itimerspec per = { { 0, 200000000 }, { 0, 200000000 } };
	char path[64], buf[4096], seen[512] = "/", link[256];
	struct epoll_event ev;
	struct stat st, st2;
	sigset_t set;
	int wdd, wdf, w, mem, memro, opath, dir, pidout, i, n, e;
	uint64_t v;
	pid_t kid;
	double t0;

	mkdir("w", 0755);
	mkdir("d", 0755);
	close(open("w/f", O_CREAT | O_WRONLY, 0644));
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "d/%c", 'a' + i);
		close(open(path, O_CREAT | O_WRONLY, 0644));
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ep2 = epoll_create1(0);
	efd = eventfd(5, EFD_NONBLOCK);
	tper = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	sfd = signalfd(-1, &set, SFD_NONBLOCK);
	ino = inotify_init1(IN_NONBLOCK);
	if (ep < 0 || ep2 < 0 || efd < 0 || tper < 0 || sfd < 0 || ino < 0 || pipe(pp)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	/* wds 1 and 2 used and gone: the watches get 3 (w) and 4 (w/f) */
	for (i = 0; i < 2; i++)
		inotify_rm_watch(ino, inotify_add_watch(ino, "d", IN_ACCESS));
	wdd = inotify_add_watch(ino, "w", IN_CREATE | IN_DELETE);
	wdf = inotify_add_watch(ino, "w/f", IN_MODIFY);
	while (read(ino, buf, sizeof(buf)) > 0)
		;	/* the IN_IGNOREDs */
	/* memfd: "hello" at 0, "world" at 1 MiB, a hole between; offset 3; the child
	 * shares it (one description in two tasks) */
	mem = memfd_create("evl-mem", MFD_ALLOW_SEALING);
	if (mem < 0 || pwrite(mem, "hello", 5, 0) != 5 || pwrite(mem, "world", 5, 1 << 20) != 5 ||
	    fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) || lseek(mem, 3, SEEK_SET) != 3) {
		say("BAD memfd setup: %s\n", strerror(errno));
		return 1;
	}
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0)
		return child();
	pidfd = syscall(SYS_pidfd_open, kid, O_NONBLOCK);
	pidout = syscall(SYS_pidfd_open, getppid(), 0);	/* the test's shell: outside the tree */
	ev.events = EPOLLIN;
	ev.data.u64 = 0;
	if (pidfd < 0 || pidout < 0 || epoll_ctl(ep2, EPOLL_CTL_ADD, pp[0], &ev) ||
	    add(efd, EPOLLIN | EPOLLONESHOT, D_EFD) || add(tper, EPOLLIN, D_TPER) ||
	    add(sfd, EPOLLIN | EPOLLET, D_SIG) || add(ino, EPOLLIN, D_INO) ||
	    add(pidfd, EPOLLIN, D_PIDFD) || add(ep2, EPOLLIN, D_EP2)) {
		say("BAD epoll setup: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mem);
	memro = open(path, O_RDONLY);
	opath = open("w/f", O_PATH);
	dir = open("d", O_RDONLY | O_DIRECTORY);
	if (memro < 0 || opath < 0 || dir < 0 || read_dir(dir, 3, seen, sizeof(seen)) != 3) {
		say("BAD file setup: %s\n", strerror(errno));
		return 1;
	}
	kill(getpid(), SIGUSR2);
	if (timerfd_settime(tper, 0, &per, NULL)) {
		say("BAD timerfd_settime: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < 500 && (!n_sig || !n_efd); i++)
		loop_once(20);
	say("fds ep=%d ep2=%d efd=%d tper=%d sfd=%d ino=%d wdd=%d wdf=%d pidfd=%d pidout=%d mem=%d memro=%d opath=%d dir=%d pipe=%d child=%d\n",
	    ep, ep2, efd, tper, sfd, ino, wdd, wdf, pidfd, pidout, mem, memro, opath, dir, pp[1], (int)kid);
	say("before: sig %d efd %d ticks %lld dir %s\n", n_sig, n_efd, ticks, seen);
	check(n_sig == 1 && n_efd == 1, "before the dump", "signalfd reported %d, eventfd %d (want 1, 1)",
	      n_sig, n_efd);
	say("ready\n");
	while (!exists("restored"))
		loop_once(20);
	say("restored\n");
	for (i = 0; i < 10; i++)
		loop_once(20);

	/* signalfd: reported again (ready list rebuilt), the queued signal read */
	check(n_sig == 2, "signalfd", "EPOLLET reports: %d (want 2: before the dump, after the restore)",
	      n_sig);
	struct signalfd_siginfo si;

	memset(&si, 0, sizeof(si));
	n = read(sfd, &si, sizeof(si));
	check(n == sizeof(si) && si.ssi_signo == SIGUSR2, "signalfd", "read signal %u (want %d)",
	      si.ssi_signo, SIGUSR2);
	kill(getpid(), SIGUSR2);
	loop_until(&n_sig, 3, 2);
	n = read(sfd, &si, sizeof(si));
	check(n_sig == 3 && n == sizeof(si), "signalfd", "a new SIGUSR2 reported (%d) and read (%d)",
	      n_sig, n);

	/* eventfd: disarmed, then re-armed by its old number */
	check(n_efd == 1, "eventfd", "oneshot reports: %d (want 1: still disarmed)", n_efd);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = D_EFD;
	e = epoll_ctl(ep, EPOLL_CTL_MOD, efd, &ev) ? errno : 0;
	loop_until(&n_efd, 2, 2);
	v = 0;
	n = read(efd, &v, 8);
	check(!e && n_efd == 2 && n == 8 && v == 5, "eventfd",
	      "EPOLL_CTL_MOD: %s, reported %d, counter %llu (want 5)", e ? strerror(e) : "ok", n_efd,
	      (unsigned long long)v);

	/* timer period through epoll */
	ntick_at = 0;
	t0 = now();
	loop_until(&ntick_at, 11, 10);
	if (ntick_at >= 11) {
		double per_ms = (tick_at[10] - tick_at[0]) * 100;

		check(per_ms > 150 && per_ms < 260, "timerfd", "period %.0f ms over 10 ticks (want 200)",
		      per_ms);
	} else {
		check(0, "timerfd", "only %d ticks in %.1f s", ntick_at, now() - t0);
	}

	/* inotify: same wds */
	close(open("w/new", O_CREAT | O_WRONLY, 0644));
	w = open("w/f", O_WRONLY | O_APPEND);
	if (w < 0 || write(w, "x", 1) != 1)
		say("BAD write w/f: %s\n", strerror(errno));
	close(w);
	loop_until(&n_ino, 1, 2);
	{
		int got_create = 0, got_modify = 0, other = 0;
		ssize_t r;

		msleep(50);
		while ((r = read(ino, buf, sizeof(buf))) > 0) {
			for (char *p = buf; p < buf + r;) {
				struct inotify_event *ie = (struct inotify_event *)p;

				if (ie->wd == wdd && (ie->mask & IN_CREATE) && ie->len &&
				    !strcmp(ie->name, "new"))
					got_create = 1;
				else if (ie->wd == wdf && (ie->mask & IN_MODIFY))
					got_modify = 1;
				else
					other++;
				p += sizeof(*ie) + ie->len;
			}
		}
		check(n_ino >= 1 && got_create && got_modify && !other, "inotify",
		      "reported %d; IN_CREATE new on wd %d: %d, IN_MODIFY on wd %d: %d, other %d",
		      n_ino, wdd, got_create, wdf, got_modify, other);
		e = inotify_rm_watch(ino, wdf) ? errno : 0;
		msleep(20);
		r = read(ino, buf, sizeof(buf));
		check(!e && r > 0 && ((struct inotify_event *)buf)->wd == wdf &&
		      (((struct inotify_event *)buf)->mask & IN_IGNORED), "inotify",
		      "inotify_rm_watch(wd %d): %s, then IN_IGNORED: %s", wdf, e ? strerror(e) : "ok",
		      r > 0 ? "yes" : "no");
	}

	/* nested epoll */
	if (write(pp[1], "p", 1) != 1)
		say("BAD pipe write\n");
	loop_until(&n_ep2, 1, 2);
	n = epoll_wait(ep2, &ev, 1, 0);
	check(n_ep2 >= 1 && n == 1, "nested epoll", "ep reports ep2: %d, ep2 reports the pipe: %d",
	      n_ep2, n);
	if (read(pp[0], buf, 1) != 1)	/* else ep2 stays ready */
		say("BAD pipe read\n");

	/* shared epoll: the child's item */
	close(open("child-go", O_CREAT | O_WRONLY, 0644));
	loop_until(&n_child, 1, 10);
	check(n_child >= 1, "shared epoll", "the child's fd 200 reported %d times (child state %c)",
	      n_child, task_state(kid));

	/* pidfd */
	e = syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) ? errno : 0;
	loop_until(&n_pidfd, 1, 10);
	{
		struct pollfd pf = { .fd = pidfd, .events = POLLIN };
		int pr = poll(&pf, 1, 0);

		check(!e && n_pidfd >= 1 && (fcntl(pidfd, F_GETFL) & O_NONBLOCK), "pidfd",
		      "pidfd_send_signal: %s, exit reported %d, O_NONBLOCK %d (child state %c, poll %d 0x%x)",
		      e ? strerror(e) : "ok", n_pidfd, !!(fcntl(pidfd, F_GETFL) & O_NONBLOCK),
		      task_state(kid), pr, pf.revents);
	}
	n = waitpid(kid, NULL, 0);
	check(n == kid, "child", "waitpid: %d %s", n, n < 0 ? strerror(errno) : "");

	e = syscall(SYS_pidfd_send_signal, pidout, 0, NULL, 0) ? errno : 0;
	check(!e && !(fcntl(pidout, F_GETFL) & O_NONBLOCK), "pidfd outside",
	      "to the shell: pidfd_send_signal(0): %s", e ? strerror(e) : "ok");

	/* DEL by the old number */
	e = epoll_ctl(ep, EPOLL_CTL_DEL, tper, NULL) ? errno : 0;
	check(!e, "epoll DEL", "timerfd fd %d: %s", tper, e ? strerror(e) : "ok");

	/* memfd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mem);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	check(!strcmp(link, "/memfd:evl-mem (deleted)"), "memfd name", "%s", link);
	check(lseek(mem, 0, SEEK_CUR) == 3, "memfd offset", "%lld (want 3)",
	      (long long)lseek(mem, 0, SEEK_CUR));
	n = fcntl(mem, F_GET_SEALS);
	check(n == (F_SEAL_SHRINK | F_SEAL_GROW), "memfd seals", "0x%x (want 0x%x)", n,
	      F_SEAL_SHRINK | F_SEAL_GROW);
	memset(buf, 0, 16);
	memset(&st, 0, sizeof(st));
	e = fstat(mem, &st);
	check(e == 0 && st.st_size == (1 << 20) + 5 && pread(mem, buf, 5, 0) == 5 &&
	      !memcmp(buf, "hello", 5) && pread(mem, buf + 8, 5, 1 << 20) == 5 &&
	      !memcmp(buf + 8, "world", 5), "memfd data", "size %lld, '%.5s' '%.5s'",
	      (long long)st.st_size, buf, buf + 8);
	check(lseek(mem, 4096, SEEK_DATA) == 1 << 20, "memfd hole", "data after 4096 at %lld (want %d)",
	      (long long)lseek(mem, 4096, SEEK_DATA), 1 << 20);
	lseek(mem, 3, SEEK_SET);
	e = ftruncate(mem, 1 << 21) ? errno : 0;
	check(e == EPERM, "memfd seal", "growing: %s (want EPERM)", e ? strerror(e) : "allowed");
	memset(buf, 0, 16);
	check(pwrite(mem, "HELLO", 5, 0) == 5 && pread(memro, buf, 5, 0) == 5 &&
	      !memcmp(buf, "HELLO", 5) && write(memro, "x", 1) < 0 && errno == EBADF,
	      "memfd descriptions", "the O_RDONLY one reads '%.5s' (want HELLO), cannot write", buf);

	/* O_PATH */
	n = fcntl(opath, F_GETFL);
	memset(&st2, 0, sizeof(st2));
	e = fstat(opath, &st) || stat("w/f", &st2);
	check((n & O_PATH) && !e && st.st_ino == st2.st_ino,
	      "O_PATH", "flags 0%o, inode %lu (w/f %lu)", n, (unsigned long)st.st_ino,
	      (unsigned long)st2.st_ino);

	/* directory position */
	n = read_dir(dir, 100, seen, sizeof(seen));
	{
		const char *want[] = { ".", "..", "a", "b", "c", "d", "e" };
		int all = 1;

		for (i = 0; i < 7; i++) {
			char key[8];
			const char *p1, *p2;

			snprintf(key, sizeof(key), "/%s/", want[i]);
			p1 = strstr(seen, key);
			p2 = p1 ? strstr(p1 + 1, key) : NULL;
			all &= p1 && !p2;
		}
		check(n == 4 && all, "directory", "%d entries after the restore, all: %s", n, seen);
	}
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
