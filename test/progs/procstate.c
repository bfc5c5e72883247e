/*
 * procstate: process state that README once listed as "lost by choice"
 * although a program can see it (issue 20), test/guest/t_procstate.sh.
 * Every mode prints its "ready" lines, loops every 20 ms until the file
 * "restored" appears in the cwd (the test makes it after the restore),
 * checks its own state and prints "ok WHAT" / "FAIL WHAT: ..." lines and
 * "procstate PASS" or "procstate FAIL N".  Output goes to stdout (the test
 * opens it O_APPEND).
 *
 *   inotify   an inotify instance watching "w" for IN_CREATE with the
 *             event of "w/before" queued ("ino FD wd WD"); when the file
 *             "drain" appears it reads the queue ("drained EVENTS").
 *             After the restore: nothing queued (FIONREAD 0), and the
 *             creation of "w/after" (made by the test) is reported under
 *             the same wd
 *   owner     a pipe's read end with O_ASYNC, F_SETOWN_EX to its child
 *             (F_OWNER_TID... see below) and F_SETSIG SIGRTMIN+2, another
 *             fd with F_SETOWN to its own process group ("fds R O child
 *             PID"); after the restore F_GETOWN_EX and F_GETSIG are the
 *             same, and a write to the pipe sends SIGRTMIN+2 to the child
 *             (the child says "child sigio")
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
	for (i = 0; i < 250 && !exists("w/after"); i++)
		msleep(20);
	msleep(100);
	evs = inotify_events(ino);
	snprintf(want, sizeof(want), "%d:%x:after", wd, IN_CREATE);
	tally(!strcmp(evs, want), "inotify events: '%s', want '%s'", evs, want);
	return tally_end("procstate");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "inotify"))
		return mode_inotify();
	say("usage: procstate inotify\n");
	return 2;
}
