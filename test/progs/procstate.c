/*
 * procstate: process state that README once listed as "lost by choice"
 * although a program can see it (issue 20), test/guest/attrs/t_procstate.sh.
 * Every mode prints its "ready" lines, loops every 20 ms until the file
 * "restored" appears in the cwd (the test makes it after the restore),
 * checks its own state and prints "ok WHAT" / "FAIL WHAT: ..." lines and
 * "procstate PASS" or "procstate FAIL N".  Output goes to stdout (the test
 * opens it O_APPEND).
 *
 *   inotify   an inotify instance watching "w" for IN_CREATE with the
 *             event of "w/before" queued ("ino FD wd WD"); when the file
 *             "drain" appears it reads the queue ("drained EVENTS").
 *             After the restore: nothing queued (FIONREAD 0: "queue
 *             checked"), and the creation of "w/after" (made by the test
 *             then) is reported under the same wd
 *   stopsig   a child in its own process group (not orphaned: we are
 *             in another group of the same session) stopped by SIGTTIN;
 *             we see it stopped in /proc, not by waitpid ("child PID").
 *             After the restore waitpid(WUNTRACED) reports it stopped by
 *             SIGTTIN (not SIGSTOP); SIGCONT continues it (WCONTINUED)
 *   owner     a pipe's read end with O_ASYNC owned (F_SETOWN_EX
 *             F_OWNER_PID) by its child with F_SETSIG SIGRTMIN+2, and a
 *             second pipe's read end owned by the child's process group
 *             (F_OWNER_PGRP), plain SIGIO ("fds R1 R2 child PID").  After
 *             the restore F_GETOWN_EX and F_GETSIG of both are the same,
 *             and a write to each pipe signals the child (it counts
 *             SIGRTMIN+2 with si_fd R1 and SIGIO: "child got N M fd F",
 *             and the file "sigio-ok" once it has one of each)
 *   owner-out the same plus a third pipe's read end owned by our parent
 *             (outside the tree: "outside FD")
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define COMMON_TALLY
#include "common.h"

/* Every event queued on inotify fd @ino: "WD:MASK:NAME ..." (empty if none). */
static const char *inotify_events(int ino)
{
	static char out[512];
	char buf[4096] __attribute__((aligned(8))), *p;
	char *o = out;
	ssize_t n;

	out[0] = 0;
	while ((n = read(ino, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			o = addfmt(o, out + sizeof(out), "%s%d:%x:%s", o == out ? "" : " ", ev->wd,
				   ev->mask, ev->len ? ev->name : "");
			p += sizeof(*ev) + ev->len;
		}
	return out;
}

static int mode_inotify(void)
{
	int ino, wd, n = -1, drained = 0, i;
	char want[64];
	const char *evs;

	ino = inotify_init1(IN_NONBLOCK);
	if (ino < 0 || (mkdir("w", 0755) && errno != EEXIST))
		setup_die("procstate", "inotify");
	wd = inotify_add_watch(ino, "w", IN_CREATE);
	if (wd < 0)
		setup_die("procstate", "inotify_add_watch");
	close(open("w/before", O_WRONLY | O_CREAT, 0644));
	say("ino %d wd %d\n", ino, wd);
	say("ready\n");
	while (!exists("restored")) {
		if (!drained && exists("drain")) {
			say("drained %s\n", inotify_events(ino));
			drained = 1;
		}
		msleep(20);
	}
	i = ioctl(ino, FIONREAD, &n);
	tally(!i && n == 0, "inotify queue: %d bytes queued after the restore, want 0 (ioctl %d: %s)", n,
	      i, i ? strerror(errno) : "ok");
	say("queue checked\n");
	for (i = 0; i < 250 && !exists("w/after"); i++)
		msleep(20);
	msleep(100);
	evs = inotify_events(ino);
	snprintf(want, sizeof(want), "%d:%x:after", wd, IN_CREATE);
	tally(!strcmp(evs, want), "inotify events: '%s', want '%s'", evs, want);
	return tally_end("procstate");
}

static int mode_stopsig(void)
{
	pid_t kid;
	int st = 0, i;

	kid = fork();
	if (kid < 0)
		setup_die("procstate", "fork");
	if (!kid) {
		setpgid(0, 0);
		for (;;)
			msleep(20);
	}
	setpgid(kid, kid);
	kill(kid, SIGTTIN);
	for (i = 0; i < 500 && task_state(kid) != 'T'; i++)
		msleep(20);
	if (task_state(kid) != 'T')
		setup_die("procstate", "the child did not stop");
	say("child %d\n", (int)kid);
	say("ready\n");
	while (!exists("restored"))
		msleep(20);
	i = waitpid(kid, &st, WUNTRACED | WNOHANG);
	tally(i == kid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN,
	      "stop signal: waitpid %d status %#x: %s %d, want stopped by SIGTTIN (%d)", i, st,
	      WIFSTOPPED(st) ? "stopped by" : "not stopped", WIFSTOPPED(st) ? WSTOPSIG(st) : 0,
	      SIGTTIN);
	kill(kid, SIGCONT);
	i = waitpid(kid, &st, WCONTINUED);
	tally(i == kid && WIFCONTINUED(st), "continued: waitpid %d status %#x", i, st);
	kill(kid, SIGKILL);
	waitpid(kid, &st, 0);
	return tally_end("procstate");
}

static volatile sig_atomic_t got_rt, got_io, rt_fd;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGIO) {
		got_io++;
	} else {
		got_rt++;
		rt_fd = si->si_fd;
	}
}

/* "TYPE:PID SIG" of @fd's owner and signal */
static const char *owner_of(int fd)
{
	static char out[2][64];
	static int k;
	struct f_owner_ex o = { 0, 0 };

	k ^= 1;
	if (fcntl(fd, F_GETOWN_EX, &o))
		snprintf(out[k], sizeof(out[k]), "error %s", strerror(errno));
	else
		snprintf(out[k], sizeof(out[k]), "%d:%d sig %d", o.type, o.pid, fcntl(fd, F_GETSIG));
	return out[k];
}

static int mode_owner(int outside)
{
	int p1[2], p2[2], i;
	struct f_owner_ex o;
	char before1[64], before2[64], c;
	pid_t kid;

	if (pipe(p1) || pipe(p2))
		setup_die("procstate", "pipe");
	kid = fork();
	if (kid < 0)
		setup_die("procstate", "fork");
	if (!kid) {
		struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO | SA_RESTART };
		int last = -1;

		sigaction(SIGRTMIN + 2, &sa, NULL);
		sigaction(SIGIO, &sa, NULL);
		setpgid(0, 0);
		for (;;) {
			if (got_rt + got_io != last) {
				last = got_rt + got_io;
				say("child got %d %d fd %d\n", (int)got_rt, (int)got_io, (int)rt_fd);
				if (got_rt == 1 && got_io == 1 && rt_fd == p1[0])
					close(open("sigio-ok", O_WRONLY | O_CREAT, 0644));
			}
			msleep(20);
		}
	}
	setpgid(kid, kid);
	/* the child's handlers first: an early signal would kill it */
	for (i = 0; i < 500; i++) {
		char path[64], line[128];
		FILE *f;
		int ok = 0;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)kid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigCgt:", 7) && strtoull(line + 8, NULL, 16) & (1ULL << (SIGRTMIN + 1)))
				ok = 1;
		if (f)
			fclose(f);
		if (ok)
			break;
		msleep(20);
	}
	o.type = F_OWNER_PID;
	o.pid = kid;
	if (fcntl(p1[0], F_SETOWN_EX, &o) || fcntl(p1[0], F_SETSIG, SIGRTMIN + 2) ||
	    fcntl(p1[0], F_SETFL, O_ASYNC | O_NONBLOCK))
		setup_die("procstate", "F_SETOWN_EX pid");
	o.type = F_OWNER_PGRP;
	o.pid = kid;
	if (fcntl(p2[0], F_SETOWN_EX, &o) || fcntl(p2[0], F_SETFL, O_ASYNC | O_NONBLOCK))
		setup_die("procstate", "F_SETOWN_EX pgrp");
	snprintf(before1, sizeof(before1), "%s", owner_of(p1[0]));
	snprintf(before2, sizeof(before2), "%s", owner_of(p2[0]));
	say("fds %d %d child %d\n", p1[0], p2[0], (int)kid);
	if (outside) {
		int p3[2];

		o.type = F_OWNER_PID;
		o.pid = getppid();
		if (pipe(p3) || fcntl(p3[0], F_SETOWN_EX, &o))
			setup_die("procstate", "F_SETOWN_EX parent");
		say("outside %d\n", p3[0]);
	}
	say("owners %s, %s\n", before1, before2);
	say("ready\n");
	while (!exists("restored"))
		msleep(20);
	tally(!strcmp(owner_of(p1[0]), before1), "owner 1: %s, was %s", owner_of(p1[0]), before1);
	tally(!strcmp(owner_of(p2[0]), before2), "owner 2: %s, was %s", owner_of(p2[0]), before2);
	if (write(p1[1], "x", 1) != 1 || write(p2[1], "y", 1) != 1)
		setup_die("procstate", "write");
	for (i = 0; i < 250 && !exists("sigio-ok"); i++)
		msleep(20);
	tally(exists("sigio-ok"), "sigio: the child did not get SIGRTMIN+2 with si_fd %d and SIGIO once each",
	      p1[0]);
	while (read(p1[0], &c, 1) == 1 || read(p2[0], &c, 1) == 1)
		;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	return tally_end("procstate");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "inotify"))
		return mode_inotify();
	if (argc > 1 && !strcmp(argv[1], "stopsig"))
		return mode_stopsig();
	if (argc > 1 && !strcmp(argv[1], "owner"))
		return mode_owner(0);
	if (argc > 1 && !strcmp(argv[1], "owner-out"))
		return mode_owner(1);
	say("usage: procstate inotify|stopsig|owner|owner-out\n");
	return 2;
}
