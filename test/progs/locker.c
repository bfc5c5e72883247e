/*
 * locker: file locks across dump + restore.
 *
 *   locker       in the cwd:
 *                f.dat  flock LOCK_EX on fd F
 *                s.dat  flock LOCK_SH on fd SH (a description shared with the child)
 *                p.dat  POSIX write lock on bytes 0-99 and read lock on
 *                       200-EOF, taken through fd P; a second description
 *                       P2 of p.dat, close-on-exec (closing any fd of the
 *                       file drops a process's POSIX locks: the restore
 *                       must not lose them)
 *                o.dat  OFD write lock on bytes 10-19 on fd O (shared with the child)
 *                the child opens p.dat itself (fd CP) and takes a POSIX
 *                write lock on bytes 100-149.
 *                Prints "fds F=.. SH=.. P=.. P2=.. O=.. CP=.. child=..",
 *                "ready", waits until the file "restored" appears, and
 *                checks (ok/BAD) that the locks are held again: the child
 *                sees the parent's POSIX locks with F_GETLK (type, pid),
 *                the parent the child's; a new description of f.dat
 *                cannot flock it, of s.dat can share but not take it
 *                exclusively, of o.dat sees the OFD lock; P2 is still
 *                close-on-exec.  "done ok" and exit 0 if all passed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

static int posix(int fd, int cmd, int type, long start, long len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/* F_GETLK (or F_OFD_GETLK) for a write lock on start/len: "W pid", "R pid" or "U" */
static const char *probe(int fd, int cmd, long start, long len)
{
	static char out[64];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	if (fcntl(fd, cmd, &fl))
		snprintf(out, sizeof(out), "error %s", errname(errno));
	else if (fl.l_type == F_UNLCK)
		snprintf(out, sizeof(out), "U");
	else
		snprintf(out, sizeof(out), "%c %d", fl.l_type == F_WRLCK ? 'W' : 'R', fl.l_pid);
	return out;
}

static int mk(const char *name, int flags)
{
	int fd = open(name, O_RDWR | O_CREAT, 0600);

	if (fd >= 0 && write(fd, "0123456789abcdefghijklmnopqrstuvwxyz", 36) != 36)
		return -1;
	close(fd);
	return open(name, flags);
}

int main(void)
{
	int f, sh, p, p2, o, cp, x, st, sync[2];
	char c, want[64];
	pid_t kid, me = getpid();

	f = mk("f.dat", O_RDWR);
	sh = mk("s.dat", O_RDONLY);
	p = mk("p.dat", O_RDWR);
	p2 = open("p.dat", O_RDONLY | O_CLOEXEC);
	o = mk("o.dat", O_RDWR);
	if (f < 0 || sh < 0 || p < 0 || p2 < 0 || o < 0 || pipe(sync) ||
	    flock(f, LOCK_EX | LOCK_NB) || flock(sh, LOCK_SH | LOCK_NB) ||
	    posix(p, F_SETLK, F_WRLCK, 0, 100) || posix(p, F_SETLK, F_RDLCK, 200, 0) ||
	    posix(o, F_OFD_SETLK, F_WRLCK, 10, 10)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	cp = 20;
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		close(sync[1]);
		/* (closing x after the lock would drop it: x is of the same file) */
		x = open("p.dat", O_RDWR);
		if (x < 0 || dup2(x, cp) < 0 || close(x) || posix(cp, F_SETLK, F_WRLCK, 100, 50)) {
			say("BAD child setup: %s\n", strerror(errno));
			return 1;
		}
		say("child ready\n");
		wait_file("restored");
		snprintf(want, sizeof(want), "W %d", me);
		check(!strcmp(probe(cp, F_GETLK, 0, 100), want), "child sees parent's write lock",
		      "%s (want %s)", probe(cp, F_GETLK, 0, 100), want);
		snprintf(want, sizeof(want), "R %d", me);
		check(!strcmp(probe(cp, F_GETLK, 200, 10), want), "child sees parent's read lock",
		      "%s (want %s)", probe(cp, F_GETLK, 200, 10), want);
		check(!strcmp(probe(cp, F_GETLK, 150, 50), "U"), "child: bytes 150-199 free",
		      "%s", probe(cp, F_GETLK, 150, 50));
		/* hold the lock until the parent has looked */
		while (read(sync[0], &c, 1) > 0)
			;
		return bad;
	}
	close(sync[0]);
	/* until the child holds its lock */
	while (!strcmp(probe(p, F_GETLK, 100, 50), "U"))
		msleep(10);
	say("fds F=%d SH=%d P=%d P2=%d O=%d CP=%d child=%d\n", f, sh, p, p2, o, cp, kid);
	say("ready\n");
	wait_file("restored");

	snprintf(want, sizeof(want), "W %d", kid);
	check(!strcmp(probe(p, F_GETLK, 100, 50), want), "parent sees child's lock",
	      "%s (want %s)", probe(p, F_GETLK, 100, 50), want);
	x = open("f.dat", O_RDONLY);
	check(flock(x, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK, "f.dat flocked",
	      "a new description's LOCK_EX|LOCK_NB: %s", errname(errno));
	close(x);
	x = open("s.dat", O_RDONLY);
	check(flock(x, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK, "s.dat shared lock held",
	      "LOCK_EX|LOCK_NB: %s", errname(errno));
	check(!flock(x, LOCK_SH | LOCK_NB), "s.dat shared lock is shared", "LOCK_SH|LOCK_NB ok");
	close(x);
	x = open("o.dat", O_RDWR);
	check(!strcmp(probe(x, F_OFD_GETLK, 0, 36), "W -1"), "o.dat OFD lock",
	      "F_OFD_GETLK from a new description: %s", probe(x, F_OFD_GETLK, 0, 36));
	check(!strcmp(probe(x, F_OFD_GETLK, 20, 16), "U"), "o.dat bytes 20- free", "%s",
	      probe(x, F_OFD_GETLK, 20, 16));
	close(x);
	check(fcntl(p2, F_GETFD) == FD_CLOEXEC, "P2 close-on-exec", "F_GETFD %d", fcntl(p2, F_GETFD));
	close(sync[1]);
	waitpid(kid, &st, 0);
	check(WIFEXITED(st) && !WEXITSTATUS(st), "child", "status 0x%x", st);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
