/*
 * fanwatch: a fanotify group across dump + restore
 * (test/guest/fds/t_fanotify.sh).
 *
 *   fanwatch     in the cwd, with a tmpfs mounted on mnt/: a group
 *                (FAN_CLASS_NOTIF, FAN_CLOEXEC | FAN_NONBLOCK, events
 *                O_RDONLY) marks the inode m.dat for FAN_OPEN | FAN_MODIFY,
 *                the mount mnt/ for FAN_CLOSE_WRITE, and ignores
 *                FAN_CLOSE_WRITE on mnt/quiet (an inode mark with only an
 *                ignore mask, FAN_MARK_IGNORED_SURV_MODIFY).  Prints "fd N",
 *                "ready", waits until the file "restored" appears, then
 *                checks (ok/BAD): nothing queued; opening and writing m.dat
 *                gives FAN_OPEN and FAN_MODIFY for m.dat; writing mnt/quiet
 *                gives nothing, mnt/x gives FAN_CLOSE_WRITE for mnt/x.
 *                Prints "done ok" and exits 0 if all passed.
 *   fanwatch queued  the same group with an event queued and not read
 *                (m.dat opened once): prints "fd N", "ready", then
 *                "tick I" every 100 ms for ever.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <sys/fanotify.h>

#define COMMON_CHECK
#include "common.h"

static char cwd[PATH_MAX];

/* read every queued event: the mask of those on @want (a path under the cwd), other events in @other */
static unsigned long long events(int g, const char *want, int *other)
{
	char buf[8192], link[64], path[PATH_MAX + 1], full[PATH_MAX + 64];
	unsigned long long got = 0;
	struct fanotify_event_metadata *m;
	ssize_t n, l;

	snprintf(full, sizeof(full), "%s/%s", cwd, want);
	while ((n = read(g, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			path[0] = 0;
			if (m->fd >= 0) {
				snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
				l = readlink(link, path, PATH_MAX);
				path[l > 0 ? l : 0] = 0;
				close(m->fd);
			}
			if (!strcmp(path, full))
				got |= m->mask;
			else {
				say("other event 0x%llx on %s\n", (unsigned long long)m->mask, path);
				(*other)++;
			}
		}
	}
	return got;
}

static int touchw(const char *name, int flags)
{
	int fd = open(name, O_WRONLY | O_CREAT | flags, 0600);

	if (fd < 0 || write(fd, "x\n", 2) != 2)
		return -1;
	return close(fd);
}

int main(int argc, char **argv)
{
	int g, other = 0, i;
	unsigned long long got;

	if (!getcwd(cwd, sizeof(cwd)) || touchw("m.dat", O_TRUNC) || touchw("mnt/quiet", O_TRUNC)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE);
	if (g < 0 || fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN | FAN_MODIFY, AT_FDCWD, "m.dat") ||
	    fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_WRITE, AT_FDCWD, "mnt") ||
	    fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
			  FAN_CLOSE_WRITE, AT_FDCWD, "mnt/quiet")) {
		say("BAD fanotify: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "queued")) {
		close(open("m.dat", O_RDONLY));
		say("fd %d\nready\n", g);
		for (i = 0;; i++) {
			say("tick %d\n", i);
			usleep(100000);
		}
	}
	say("fd %d\nready\n", g);
	while (access("restored", F_OK))
		usleep(50000);

	got = events(g, "m.dat", &other);
	check(!got && !other, "nothing queued", "mask 0x%llx on m.dat, %d other events", got, other);
	if (touchw("m.dat", 0))
		say("BAD write m.dat: %s\n", strerror(errno));
	usleep(100000);
	got = events(g, "m.dat", &other);
	check((got & (FAN_OPEN | FAN_MODIFY)) == (FAN_OPEN | FAN_MODIFY), "inode mark",
	      "events 0x%llx on m.dat, want FAN_OPEN|FAN_MODIFY (0x%x)", got, FAN_OPEN | FAN_MODIFY);
	if (touchw("mnt/quiet", 0) || touchw("mnt/x", 0))
		say("BAD write mnt/: %s\n", strerror(errno));
	usleep(100000);
	got = events(g, "mnt/x", &other);
	check(got == FAN_CLOSE_WRITE, "mount mark", "events 0x%llx on mnt/x, want FAN_CLOSE_WRITE (0x%x)", got,
	      FAN_CLOSE_WRITE);
	check(!other, "ignore mask", "%d other events (mnt/quiet is ignored)", other);
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
