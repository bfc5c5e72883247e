/*
 * ptypair: a pty pair inside the tree, for t_tty_pair.  The parent opens
 * /dev/ptmx (window size 37x111, packet mode on); the child becomes a
 * session leader with the slave as controlling terminal and stdin, turns
 * echo off and sets VINTR ^G, VERASE ^H.  Before the dump, data is left
 * queued both ways: the child writes "out-before-dump\n" to the slave (the
 * master holds "out-before-dump\r\n") and the parent writes
 * "in-line-1\nlit^V^Hz\neof-line^D^Dpartial" to the master (a line, a line
 * with a literal ^H, its VERASE, a line ended by an end-of-file, an
 * end-of-file alone, and an unfinished line).
 * The parent also holds a second master, left locked as /dev/ptmx gives it
 * (no unlockpt: TIOCSPTLCK 1), its slave opened by no one.
 * Both print their fds ("fds master=M child=K pts=PATH", "locked=L
 * pts=PATH") and "ready", then wait until the file "restored" appears in
 * the cwd.  Then, printing ok/BAD:
 *   parent  the locked master is still locked (TIOCGPTLCK 1) and its slave
 *           cannot be opened (EIO), then unlocking it lets the slave open;
 *           packet mode and unlocked still; reads exactly the status byte 0
 *           and "out-before-dump\r\n" from the master, nothing more; writes
 *           "-TAIL\n"; the child exits 0.
 *   child   the slave is its controlling terminal (TIOCGSID, foreground
 *           group, ttyname), termios and window size as set; its fd 4,
 *           /dev/tty opened before the dump, is that terminal; reads exactly
 *           "in-line-1\n", "lit^Hz\n", "eof-line", nothing (end-of-file),
 *           then "partial-TAIL\n" (the unfinished line).
 * "done ok" at the end.  ptypair info DEV prints DEV's "rows= cols= echo=
 * intr= erase=" (from outside).
 * ptypair lockedslave: one task holds a master and its slave, and locks the
 * master again after opening the slave (TIOCSPTLCK 1).  Prints "fds
 * master=M slave=S pts=PATH" and "ready", waits for "restored", then checks:
 * the open slave fd still talks to the master both ways, the master is
 * still locked and the slave cannot be opened again by path (EIO); "done
 * ok".
 * ptypair orphan: the slave is the controlling terminal of a session outside
 * the parent's tree (a grandchild, orphaned, leads it): prints "fds
 * master=M session=S", then "tick N" every 100 ms.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>

#define COMMON_CHECK
#include "common.h"

/* Printable form of @n bytes of @b. */
static const char *vis(const char *b, ssize_t n)
{
	static char out[512];
	char *o = out;
	ssize_t i;

	for (i = 0; i < n && o < out + sizeof(out) - 8; i++) {
		unsigned char c = b[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			*o++ = c;
		else
			o += sprintf(o, "\\%03o", c);
	}
	*o = 0;
	return out;
}

static int child(int m)
{
	struct termios t;
	struct winsize w;
	char name[256], buf[256];
	pid_t sid = 0;
	ssize_t n;
	int s;

	setsid();
	s = open(ptsname(m), O_RDWR);
	close(m);
	if (s < 0 || ioctl(s, TIOCSCTTY, 0) || tcgetattr(s, &t)) {
		say("BAD child: slave: %s\n", strerror(errno));
		return 1;
	}
	t.c_lflag &= ~ECHO;
	t.c_cc[VINTR] = 7;
	t.c_cc[VERASE] = 8;
	tcsetattr(s, TCSANOW, &t);
	dup2(s, 0);
	close(s);
	/* fd 4: /dev/tty, the controlling terminal */
	s = open("/dev/tty", O_RDWR);
	if (s < 0 || dup2(s, 4) != 4) {
		say("BAD child: /dev/tty: %s\n", strerror(errno));
		return 1;
	}
	close(s);
	if (write(0, "out-before-dump\n", 16) != 16)
		return 1;
	close(open("child-ready", O_WRONLY | O_CREAT, 0644));
	wait_file("restored");

	check(!ttyname_r(0, name, sizeof(name)) && !strncmp(name, "/dev/pts/", 9), "child ttyname",
	      "%s", name);
	say("child tty %s\n", name);
	if (ioctl(0, TIOCGSID, &sid))
		sid = -errno;
	check(sid == getpid(), "child ctty", "TIOCGSID %d, want %d", (int)sid, (int)getpid());
	check(tcgetpgrp(0) == getpid(), "child foreground", "tcgetpgrp %d", (int)tcgetpgrp(0));
	tcgetattr(0, &t);
	ioctl(0, TIOCGWINSZ, &w);
	check(!(t.c_lflag & ECHO) && (t.c_lflag & ICANON) && t.c_cc[VINTR] == 7 &&
	      t.c_cc[VERASE] == 8, "child termios", "lflag 0%o intr %d erase %d", t.c_lflag,
	      t.c_cc[VINTR], t.c_cc[VERASE]);
	check(w.ws_row == 37 && w.ws_col == 111, "child winsize", "%dx%d", w.ws_row, w.ws_col);
	{
		struct stat a;
		unsigned int dev = 0;

		if (fstat(0, &a) || ioctl(4, TIOCGDEV, &dev))
			say("BAD child: fstat/TIOCGDEV: %s\n", strerror(errno));
		check(dev && dev == (unsigned int)a.st_rdev, "child /dev/tty",
		      "fd 4 is the terminal 0x%x, fd 0 0x%x", dev, (unsigned int)a.st_rdev);
	}
	{
		char l[64] = "";
		struct stat a;
		ssize_t k = readlink("/proc/self/fd/4", l, sizeof(l) - 1);

		l[k > 0 ? k : 0] = 0;
		check(!fstat(4, &a) && a.st_rdev == makedev(5, 0) && !strcmp(l, "/dev/tty"),
		      "child /dev/tty name", "fd 4 is '%s' rdev %u:%u, want /dev/tty 5:0", l,
		      major(a.st_rdev), minor(a.st_rdev));
	}
	n = read(0, buf, sizeof(buf));
	check(n == 10 && !memcmp(buf, "in-line-1\n", 10), "child input line 1", "'%s'",
	      vis(buf, n));
	n = read(0, buf, sizeof(buf));
	check(n == 6 && !memcmp(buf, "lit\010z\n", 6), "child input literal ^H", "'%s'",
	      vis(buf, n));
	n = read(0, buf, sizeof(buf));
	check(n == 8 && !memcmp(buf, "eof-line", 8), "child input line ended by EOF", "'%s'",
	      vis(buf, n));
	n = read(0, buf, sizeof(buf));
	check(n == 0, "child input EOF alone", "read %zd, want 0", n);
	n = read(0, buf, sizeof(buf));
	check(n == 13 && !memcmp(buf, "partial-TAIL\n", 13), "child input line 2", "'%s'",
	      vis(buf, n));
	return bad;
}

static int info(const char *dev)
{
	struct termios t;
	struct winsize w;
	int fd = open(dev, O_RDONLY | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 || tcgetattr(fd, &t) || ioctl(fd, TIOCGWINSZ, &w)) {
		say("BAD info %s: %s\n", dev, strerror(errno));
		return 1;
	}
	say("rows=%d cols=%d echo=%d intr=%d erase=%d\n", w.ws_row, w.ws_col,
	    !!(t.c_lflag & ECHO), t.c_cc[VINTR], t.c_cc[VERASE]);
	return 0;
}

/*
 * ptypair pktstatus: a master in packet mode whose slave's output was
 * flushed (tcflush TCOFLUSH): TIOCPKT_FLUSHWRITE waits to be read on the
 * master.  Prints "fds master=M" and ticks; a dump must refuse it.
 */
static int pktstatus(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s, one = 1, n = 0;
	struct pollfd pf;

	if (m < 0 || grantpt(m) || unlockpt(m) || ioctl(m, TIOCPKT, &one))
		return 1;
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0 || tcflush(s, TCOFLUSH))
		return 1;
	pf.fd = m;
	pf.events = POLLPRI;
	if (poll(&pf, 1, 1000) != 1 || !(pf.revents & POLLPRI)) {
		say("BAD no packet status pending\n");
		return 1;
	}
	say("fds master=%d\n", m);
	for (;;) {
		say("tick %d\n", ++n);
		usleep(100000);
	}
}

static int orphan(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), p[2], n = 0;
	pid_t kid, sess = 0;

	if (m < 0 || grantpt(m) || unlockpt(m) || pipe(p))
		return 1;
	kid = fork();
	if (kid == 0) {
		if (fork() == 0) {
			setsid();
			if (open(ptsname(m), O_RDWR) < 0)
				_exit(1);
			sess = getpid();
			if (write(p[1], &sess, sizeof(sess)) != sizeof(sess))
				_exit(1);
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	if (read(p[0], &sess, sizeof(sess)) != sizeof(sess))
		return 1;
	close(p[0]);
	close(p[1]);
	say("fds master=%d session=%d\n", m, (int)sess);
	for (;;) {
		say("tick %d\n", ++n);
		usleep(100000);
	}
}

static int lockedslave(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s = -1, one = 1, lck = -1, x, e;
	struct termios t;
	struct pollfd pf;
	char buf[64];
	ssize_t n;

	if (m < 0 || grantpt(m) || unlockpt(m) ||
	    (s = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0 || tcgetattr(s, &t)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	cfmakeraw(&t);
	if (tcsetattr(s, TCSANOW, &t) || ioctl(m, TIOCSPTLCK, &one)) {
		say("BAD setup: raw, lock: %s\n", strerror(errno));
		return 1;
	}
	say("fds master=%d slave=%d pts=%s\n", m, s, ptsname(m));
	say("ready\n");
	wait_file("restored");
	pf.fd = m;
	pf.events = POLLIN;
	n = write(s, "to-master", 9) == 9 && poll(&pf, 1, 5000) == 1 ? read(m, buf, sizeof(buf)) : -1;
	check(n == 9 && !memcmp(buf, "to-master", 9), "slave to master", "'%s'", vis(buf, n));
	pf.fd = s;
	n = write(m, "to-slave", 8) == 8 && poll(&pf, 1, 5000) == 1 ? read(s, buf, sizeof(buf)) : -1;
	check(n == 8 && !memcmp(buf, "to-slave", 8), "master to slave", "'%s'", vis(buf, n));
	/* last: a refused open sets TTY_IO_ERROR on the slave, failing its I/O */
	if (ioctl(m, TIOCGPTLCK, &lck))
		say("BAD TIOCGPTLCK: %s\n", strerror(errno));
	check(lck == 1, "locked pty", "TIOCGPTLCK %d (want 1)", lck);
	x = open(ptsname(m), O_RDWR | O_NOCTTY);
	e = errno;
	check(x < 0 && e == EIO, "locked pty", "opening %s again: %s (want EIO)", ptsname(m),
	      x < 0 ? errname(e) : "opened");
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	struct winsize ws = { 37, 111, 0, 0 };
	struct pollfd pf;
	char buf[256];
	int m, ml, s, zero = 0, one = 1, pkt = -1, lck = -1, st = -1, e;
	ssize_t n;
	pid_t kid;

	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "orphan"))
		return orphan();
	if (argc == 2 && !strcmp(argv[1], "pktstatus"))
		return pktstatus();
	if (argc == 2 && !strcmp(argv[1], "lockedslave"))
		return lockedslave();
	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m) || ioctl(m, TIOCSWINSZ, &ws) ||
	    ioctl(m, TIOCPKT, &one)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0)
		return child(m);
	wait_file("child-ready");
	if (write(m, "in-line-1\nlit\026\010z\neof-line\004\004partial", 34) != 34)
		return 1;
	ml = posix_openpt(O_RDWR | O_NOCTTY);
	if (ml < 0) {
		say("BAD setup: second /dev/ptmx: %s\n", strerror(errno));
		return 1;
	}
	say("fds master=%d child=%d pts=%s\n", m, (int)kid, ptsname(m));
	say("locked=%d pts=%s\n", ml, ptsname(ml));
	say("ready\n");
	wait_file("restored");

	lck = -1;
	if (ioctl(ml, TIOCGPTLCK, &lck))
		say("BAD ioctl TIOCGPTLCK: %s\n", strerror(errno));
	check(lck == 1, "locked pty", "%s: TIOCGPTLCK %d (want 1)", ptsname(ml), lck);
	s = open(ptsname(ml), O_RDWR | O_NOCTTY);
	e = errno;
	check(s < 0 && e == EIO, "locked pty", "opening its slave %s: %s (want EIO)", ptsname(ml),
	      s < 0 ? errname(e) : "opened");
	if (s >= 0)
		close(s);
	s = ioctl(ml, TIOCSPTLCK, &zero) ? -1 : open(ptsname(ml), O_RDWR | O_NOCTTY);
	check(s >= 0, "locked pty", "unlocked, its slave opens: %s", s >= 0 ? "yes" : strerror(errno));
	if (s >= 0)
		close(s);
	lck = -1;

	say("parent pts %s\n", ptsname(m));
	if (ioctl(m, TIOCGPKT, &pkt) || ioctl(m, TIOCGPTLCK, &lck))
		say("BAD ioctl: %s\n", strerror(errno));
	check(pkt == 1, "packet mode", "TIOCGPKT %d", pkt);
	check(lck == 0, "lock", "TIOCGPTLCK %d", lck);
	pf.fd = m;
	pf.events = POLLIN;
	n = poll(&pf, 1, 5000) == 1 ? read(m, buf, sizeof(buf)) : -1;
	check(n == 18 && buf[0] == 0 && !memcmp(buf + 1, "out-before-dump\r\n", 17),
	      "master output", "'%s'", vis(buf, n));
	n = poll(&pf, 1, 300) == 1 ? read(m, buf, sizeof(buf)) : 0;
	check(n == 0, "master output", "nothing more: '%s'", vis(buf, n));
	if (write(m, "-TAIL\n", 6) != 6)
		return 1;
	n = waitpid(kid, &st, 0);
	check(n == kid && WIFEXITED(st) && !WEXITSTATUS(st), "child", "exit status 0x%x", st);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
