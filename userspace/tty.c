// SPDX-License-Identifier: GPL-2.0
/*
 * Terminals ("tty" file records and tty records, format in tree.c).
 *
 * A pty pair inside the tree (a task holds its master, /dev/ptmx): dump
 * saves its termios, window size, packet mode, lock state, the session it
 * is the controlling terminal of and that session's foreground group, and
 * the data queued both ways: output the slave wrote that the master did
 * not read, and input written to the master that the slave did not read.
 * Both are read through imgcr's own descriptors (a copy of the master,
 * fd_steal, and the slave opened from it with TIOCGPTPEER); the slave is
 * switched out of canonical mode for that, so a line not yet ended is read
 * too.  If the tree is left running, the data is written back.
 * Restore opens /dev/ptmx again, trying to get the same pts index (it opens
 * the lowest free one: keep opening until the index is reached or passed);
 * if the index is taken, the pair gets another one and the slave's path
 * changes (noted on stderr).  The slave's fds are opened from the new
 * master with TIOCGPTPEER, so no path is needed.  The slave's devpts node
 * gets back the owner and mode it had (read at dump through an O_PATH
 * TIOCGPTPEER, which works on a locked pair too): a login program or
 * terminal emulator chown'ed it to its user, mode 0620; another owner
 * than the restoring user's needs root, else the restore fails.  The queued data is
 * written back with echo, signals, input and output processing off, so
 * the line discipline holds the same bytes and, in canonical mode, the same
 * line ends (an unfinished line stays unfinished); what was already
 * processed (erased characters, echo, the column) is not replayed.
 * In canonical mode the ended lines are read first as the program would,
 * one read() each: a line that does not end in a newline (or VEOL, VEOL2)
 * was ended by an end-of-file typed but not read, and a read of 0 bytes is
 * one typed alone; both are saved as the terminal's VEOF character, and
 * every byte of the data that canonical mode would take as a control
 * character (VERASE, VKILL, VEOF, VWERASE, VREPRINT, ^V) is saved after a
 * ^V (VLNEXT), so that writing the saved bytes back in canonical mode with
 * ^V as VLNEXT gives the same lines and end-of-files.  The session leader that had the
 * slave as controlling terminal takes it again (TIOCSCTTY) before it
 * creates its children, and the foreground group is set again.
 *
 * A terminal outside the tree (the shell's pty or console a job was started
 * from, a pty whose master is not in the tree, a serial port, a vt) is
 * refused unless dump is given --shell-job.  Then (all such fds must be on
 * one terminal) its termios, window size and foreground group are saved,
 * and restore --shell-job puts those fds on the terminal imgcr restore runs
 * on (its stdin, which must be its controlling terminal), sets the saved
 * termios and window size there (the job expects them, e.g. an editor's raw
 * mode) and, if the job's group was in the foreground, puts it in the
 * foreground: the job joins imgcr's session, so job control works from the
 * shell imgcr was started from.  Data queued on that terminal belongs to
 * the outside and is not saved.
 *
 * /dev/tty refers to the caller's controlling terminal: it is restored as
 * /dev/tty opened again for a shell job.  For a pair in the tree it is
 * /dev/tty opened by a helper process whose controlling terminal the new
 * slave is for that moment (setsid, TIOCSCTTY, open /dev/tty, the fd sent
 * back over a socket; its exit leaves the terminal without a session, as
 * a pty is not hung up when its session leader exits): the fd reads and
 * writes that slave and shows /dev/tty (5:0) in /proc as it did.  The
 * descriptions are all opened before any restored session takes its
 * terminal, so the slave is nobody's controlling terminal then.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "files.h"
#include "notify.h"
#include "log.h"
#include "proc.h"
#include "tty.h"
#include "record.h"
#include "sockets.h"

struct tree_tty *tree_tty_find(const struct tree *t, int index)
{
	int i;

	for (i = 0; i < t->nttys; i++)
		if (t->ttys[i].index == index)
			return &t->ttys[i];
	return NULL;
}

struct tree_tty *tree_tty_add(struct tree *t, int index)
{
	struct tree_tty *y;

	t->ttys = tree_grow(t->ttys, t->nttys, sizeof(*t->ttys));
	y = &t->ttys[t->nttys++];
	memset(y, 0, sizeof(*y));
	y->index = index;
	return y;
}


int tty_shell_job;
int tty_orphan_master;

#define PTS_MAJOR	136	/* UNIX98_PTY_SLAVE_MAJOR, 8 majors */

static int is_pts(unsigned int ma)
{
	return ma >= PTS_MAJOR && ma < PTS_MAJOR + 8;
}

static int pts_index(unsigned int ma, unsigned int mi)
{
	return (ma - PTS_MAJOR) * 256 + mi;
}

/* The kind of terminal @ma:@mi, for messages. */
static const char *tty_kind(unsigned int ma, unsigned int mi)
{
	if (is_pts(ma))
		return "pty slave";
	if (ma == 5 && mi == 1)
		return "console";
	if (ma == 5 && mi == 0)
		return "controlling terminal";
	if (ma == 4 && mi < 64)
		return "virtual console";
	if (ma == 4 || ma == 204 || ma == 188)
		return "serial port";
	return "terminal";
}

/* The device as /proc/PID/stat's tty_nr encodes it. */
static unsigned int tty_nr(unsigned int ma, unsigned int mi)
{
	return (mi & 0xff) | (ma << 8) | ((mi & ~0xffu) << 12);
}

/*
 * The terminal on stdin (@st, its fstat) as tty_nr encodes it: for
 * /dev/console or /dev/tty the terminal behind it (TIOCGDEV).
 */
static unsigned int stdin_tty_nr(const struct stat *st)
{
	unsigned int dev;

	if (major(st->st_rdev) == 5 && minor(st->st_rdev) <= 1 && !ioctl(0, TIOCGDEV, &dev))
		return tty_nr(major(dev), minor(dev));
	return tty_nr(major(st->st_rdev), minor(st->st_rdev));
}

/* session, tty_nr and tpgid from /proc/PID/stat; 0 or -1. */
static int stat_tty(pid_t pid, pid_t *sid, unsigned int *nr, pid_t *tpgid)
{
	char path[64], *s, *p;
	int r = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	s = read_text(path, NULL);
	if (!s)
		return -1;
	p = strrchr(s, ')');
	if (p && sscanf(p + 1, " %*c %*d %*d %d %u %d", sid, nr, tpgid) == 3)
		r = 0;
	free(s);
	return r;
}

static void tio_save(struct tree_tty *y, const struct termios *tio, const struct winsize *ws)
{
	y->iflag = tio->c_iflag;
	y->oflag = tio->c_oflag;
	y->cflag = tio->c_cflag;
	y->lflag = tio->c_lflag;
	memcpy(y->cc, tio->c_cc, TREE_NCC);
	y->rows = ws->ws_row;
	y->cols = ws->ws_col;
	y->xpixel = ws->ws_xpixel;
	y->ypixel = ws->ws_ypixel;
}

static void tio_load(const struct tree_tty *y, struct termios *tio, struct winsize *ws)
{
	memset(tio, 0, sizeof(*tio));
	tio->c_iflag = y->iflag;
	tio->c_oflag = y->oflag;
	tio->c_cflag = y->cflag;
	tio->c_lflag = y->lflag;
	memcpy(tio->c_cc, y->cc, TREE_NCC);
	tio->c_ispeed = cfgetispeed(tio);
	tio->c_ospeed = cfgetospeed(tio);
	memset(ws, 0, sizeof(*ws));
	ws->ws_row = y->rows;
	ws->ws_col = y->cols;
	ws->ws_xpixel = y->xpixel;
	ws->ws_ypixel = y->ypixel;
}

/* Read what @fd has now without blocking (poll-guarded: @fd may be a task's blocking one). */
static void drain(int fd, char **buf, size_t *len)
{
	size_t cap = *len;

	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLIN))
			return;
		if (*len + 4096 > cap) {
			cap = *len + 65536;
			*buf = realloc(*buf, cap);
			if (!*buf) {
				pr_err("out of memory");
				exit(1);
			}
		}
		n = read(fd, *buf + *len, 4096);
		if (n <= 0)
			return;
		*len += n;
	}
}

static int write_poll(int fd, const char *buf, size_t len)
{
	int tries = 0;

	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && (errno == EAGAIN || errno == EINTR) && tries++ < 200) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			poll(&pf, 1, 10);
			continue;
		}
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * Wait until the line discipline behind @fd has processed what was written
 * to the other end: FIONREAD reaches @want (in canonical mode it counts the
 * bytes of ended lines only).  poll() makes n_tty flush the pending input
 * when it has none to offer, which covers an unfinished line.
 */
static void settle(int fd, size_t want)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int n, i;

	for (i = 0; i < 2000; i++) {
		poll(&pf, 1, 0);
		if (ioctl(fd, FIONREAD, &n) || (size_t)n >= want)
			return;
		usleep(1000);
	}
}

#define LNEXT	026	/* ^V: VLNEXT while the saved input is written back */

/* Whether byte @ch is a control character of canonical mode (@tio's, ^V as VLNEXT). */
static int canon_special(const struct termios *tio, unsigned char ch)
{
	static const int cc[] = { VERASE, VKILL, VEOF, VWERASE, VREPRINT };
	size_t i;

	if (ch == LNEXT)
		return 1;
	for (i = 0; i < sizeof(cc) / sizeof(cc[0]); i++)
		if (ch && ch == tio->c_cc[cc[i]])
			return 1;
	return 0;
}

/*
 * What FIONREAD shows once @in (saved input: ^V escapes, VEOF end-of-files)
 * is written back: in canonical mode (@tio's) the bytes of the ended lines,
 * without the escapes and end-of-files.
 */
static size_t ended_lines(const struct termios *tio, const char *in, size_t len)
{
	size_t i, n = 0, ended = 0;

	if (!(tio->c_lflag & ICANON))
		return len;
	for (i = 0; i < len; i++) {
		unsigned char ch = in[i];

		if (ch == LNEXT && i + 1 < len) {
			i++;
			n++;
		} else if (ch && ch == tio->c_cc[VEOF]) {
			ended = n;
		} else {
			n++;
			if (ch == '\n' || (ch && (ch == tio->c_cc[VEOL] || ch == tio->c_cc[VEOL2])))
				ended = n;
		}
	}
	return ended;
}

/* Append @n bytes of input data to @buf, a ^V before each control character. */
static void add_escaped(const struct termios *tio, char **buf, size_t *len, const char *in,
			size_t n)
{
	size_t i;

	*buf = realloc(*buf, *len + 2 * n + 2);
	if (!*buf) {
		pr_err("out of memory");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		if (canon_special(tio, in[i]))
			(*buf)[(*len)++] = LNEXT;
		(*buf)[(*len)++] = in[i];
	}
}

/*
 * The ended lines of the slave @s in canonical mode (@tio), one read()
 * each, as the program would get them, into @buf (escaped) with an
 * end-of-file as VEOF.  @s is non-blocking.
 */
static void drain_lines(int s, const struct termios *tio, char **buf, size_t *len)
{
	char line[4096];
	unsigned char eof = tio->c_cc[VEOF];
	int i;

	/* at most a line per byte of the 4 KiB n_tty buffer */
	for (i = 0; i <= 4096; i++) {
		struct pollfd pf = { .fd = s, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLIN))
			return;
		n = read(s, line, sizeof(line));
		if (n < 0)
			return;
		add_escaped(tio, buf, len, line, n);
		if (n == 0 || (line[n - 1] != '\n' &&
			       (!line[n - 1] || ((unsigned char)line[n - 1] != tio->c_cc[VEOL] &&
						 (unsigned char)line[n - 1] != tio->c_cc[VEOL2]))))
			(*buf)[(*len)++] = eof;	/* ended by an end-of-file */
	}
}

/*
 * Put @out (output of the slave) into the master's queue and @in (input
 * from the master) into the slave's, with echo, signals and all processing
 * off (the bytes were processed once already), then set @tio.
 * @m: the master, @s: the slave, both ours.  0, or -1 with errno set.
 */
static int pair_refill(int m, int s, const struct termios *tio, const char *in, size_t inlen,
		       const char *out, size_t outlen)
{
	struct termios q = *tio;

	q.c_iflag &= ~(ICRNL | INLCR | IGNCR | ISTRIP | IUCLC | IXON | BRKINT | PARMRK);
	q.c_oflag &= ~OPOST;
	q.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOKE | ISIG | IEXTEN);
	/* canonical: the saved ^V escapes and VEOF end-of-files (drain_lines) */
	if (q.c_lflag & ICANON) {
		q.c_lflag |= IEXTEN;
		q.c_cc[VLNEXT] = LNEXT;
		q.c_cc[VDISCARD] = 0;
	}
	if (tcsetattr(s, TCSANOW, &q))
		return -1;
	if (write_poll(s, out, outlen))
		return -1;
	settle(m, outlen);
	if (write_poll(m, in, inlen))
		return -1;
	settle(s, ended_lines(tio, in, inlen));
	return tcsetattr(s, TCSANOW, tio);
}

/* ---- dump ---- */

/* A pair whose master is in the tree, as the dump holds it. */
struct pair_dump {
	int m, s;		/* imgcr's copy of the master, the slave from it (-1) */
	struct termios tio;
	int pkt;
	char *in, *out;
	size_t inlen, outlen;
};

static struct pair_dump *pairs;
static int npairs;

static int save_data(struct fd_dump *c, const struct fd_parms *p, int index,
		     const struct pair_dump *d)
{
	const struct tree_task *k = tree_find(c->t, p->pid);
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/tty-%d.data", c->dir, index);
	fd = img_create(path, 0600);
	if (fd < 0) {
		pr_perror("cannot create %s", path);
		return -1;
	}
	if (write_all(fd, d->in, d->inlen) || write_all(fd, d->out, d->outlen)) {
		pr_perror("cannot write %s", path);
		close(fd);
		return -1;
	}
	/* owned by the task's user, who may restore it */
	if (!geteuid() && k && fchown(fd, k->uid[0], k->gid[0]))
		pr_pwarn("cannot chown %s", path);
	close(fd);
	return 0;
}

/* The master @fd (imgcr's copy) of a pair: its record, and the pair's state once. */
static int master_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f, int fd)
{
	struct pair_dump *d;
	struct tree_tty *y;
	struct winsize ws;
	int index, lck = 0, off = 0;
	pid_t sid = 0, fg = 0;

	if (ioctl(fd, TIOCGPTN, &index)) {
		pr_perror("pid %d fd %d: %s: TIOCGPTN", p->pid, p->fd, p->link);
		close(fd);
		return FD_FAILED;
	}
	f->tty_role = TTY_MASTER;
	f->tty_index = index;
	if (tree_tty_find(c->t, index)) {
		close(fd);	/* another fd of the same master */
		return FD_DESCRIBED;
	}
	pairs = realloc(pairs, (npairs + 1) * sizeof(*pairs));
	if (!pairs) {
		pr_err("out of memory");
		exit(1);
	}
	d = &pairs[npairs++];
	memset(d, 0, sizeof(*d));
	d->m = fd;
	d->s = -1;
	y = tree_tty_add(c->t, index);
	y->major = PTS_MAJOR + index / 256;
	y->minor = index % 256;
	/* on a master these ask about the slave; ENOTTY: it is no one's ctty */
	if (ioctl(fd, TIOCGSID, &sid))
		sid = 0;
	if (ioctl(fd, TIOCGPGRP, &fg))
		fg = 0;
	y->sid = sid;
	y->fg = fg;
	ioctl(fd, TIOCGPTLCK, &lck);
	ioctl(fd, TIOCGPKT, &d->pkt);
	/*
	 * In packet mode a status (TIOCPKT_FLUSHREAD, _STOP, _DOSTOP...) the
	 * program has not read yet comes first on its next read: only the
	 * kernel sets one, and not every one can be made again on a new
	 * pair.  Refused before anything is changed on the pair.
	 */
	if (d->pkt) {
		struct pollfd pf = { .fd = fd, .events = POLLPRI };

		if (poll(&pf, 1, 0) > 0 && (pf.revents & POLLPRI)) {
			npairs--;
			close(fd);
			return fd_refuse(p, "pty master of /dev/pts/%d: a packet-mode status (TIOCPKT) is pending, not yet read by the program: it cannot be restored; not supported (dump again once the program has read it)",
					 index);
		}
	}
	y->locked = !!lck;
	y->pkt = !!d->pkt;
	if (tcgetattr(fd, &d->tio) || ioctl(fd, TIOCGWINSZ, &ws)) {
		pr_perror("pid %d fd %d: %s: cannot read the termios or window size", p->pid, p->fd,
			  p->link);
		return FD_FAILED;
	}
	tio_save(y, &d->tio, &ws);
	/* the slave's node (owner and mode, as grantpt or a login set them), locked or not */
	{
		int pfd = ioctl(fd, TIOCGPTPEER, O_PATH | O_CLOEXEC);
		struct stat st;

		if (pfd < 0 || fstat(pfd, &st)) {
			pr_perror("pid %d fd %d: %s: cannot read the owner and mode of its slave",
				  p->pid, p->fd, p->link);
			if (pfd >= 0)
				close(pfd);
			return FD_FAILED;
		}
		close(pfd);
		y->has_mode = 1;
		y->mode = st.st_mode & 07777;
		y->uid = st.st_uid;
		y->gid = st.st_gid;
	}
	if (!lck) {
		struct termios raw = d->tio;

		d->s = ioctl(fd, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (d->s < 0) {
			pr_perror("pid %d fd %d: %s: cannot open its slave (TIOCGPTPEER)", p->pid,
				  p->fd, p->link);
			return FD_FAILED;
		}
		/* output: without packet mode, which would add a status byte */
		if (d->pkt)
			ioctl(fd, TIOCPKT, &off);
		drain(fd, &d->out, &d->outlen);
		/* input: the ended lines as the program reads them, end-of-files too */
		if (d->tio.c_lflag & ICANON)
			drain_lines(d->s, &d->tio, &d->in, &d->inlen);
		/* then out of canonical mode, so an unfinished line is read too */
		raw.c_lflag &= ~ICANON;
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(d->s, TCSANOW, &raw)) {
			pr_perror("pid %d fd %d: %s: cannot set its termios", p->pid, p->fd, p->link);
			return FD_FAILED;
		}
		if (d->tio.c_lflag & ICANON) {
			char *part = NULL;
			size_t plen = 0;

			drain(d->s, &part, &plen);
			add_escaped(&d->tio, &d->in, &d->inlen, part, plen);
			free(part);
		} else {
			drain(d->s, &d->in, &d->inlen);
		}
		tcsetattr(d->s, TCSANOW, &d->tio);
	}
	y->inlen = d->inlen;
	y->outlen = d->outlen;
	if (save_data(c, p, index, d))
		return FD_FAILED;
	return FD_DESCRIBED;
}

static int tty_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	unsigned int ma = major(p->st.st_rdev), mi = minor(p->st.st_rdev), dev;
	int known, fd;
	struct termios tio;

	if (!S_ISCHR(p->st.st_mode) || ma == 1)
		return FD_OTHER;	/* devices.c: /dev/null and the like */
	known = ma == 4 || (ma == 5 && mi <= 2) || is_pts(ma);
	fd = fd_steal(p);
	if (fd < 0) {
		if (!known)
			return FD_OTHER;
		pr_perror("pid %d fd %d: %s: cannot take a copy of the terminal fd", p->pid, p->fd,
			  p->link);
		return FD_FAILED;
	}
	if (tcgetattr(fd, &tio)) {
		int e = errno;

		close(fd);
		if (!known)
			return FD_OTHER;
		return fd_refuse(p, "%s %s (%u:%u): not a usable terminal (%s): not supported",
				 tty_kind(ma, mi), p->link, ma, mi, strerror(e));
	}
	if (tio.c_line) {
		close(fd);
		return fd_refuse(p, "%s %s (%u:%u): line discipline %d: not supported (only N_TTY)",
				 tty_kind(ma, mi), p->link, ma, mi, tio.c_line);
	}
	f->path = p->link;
	f->major = ma;
	f->minor = mi;
	if (ma == 5 && mi == 2)
		return master_dump(c, p, f, fd);	/* keeps fd */
	if (ma == 5 && mi == 0) {
		/* /dev/tty: which terminal it is */
		if (ioctl(fd, TIOCGDEV, &dev)) {
			pr_perror("pid %d fd %d: %s: TIOCGDEV", p->pid, p->fd, p->link);
			close(fd);
			return FD_FAILED;
		}
		f->major = major(dev);
		f->minor = minor(dev);
		f->tty_role = TTY_DEVTTY;
	} else {
		f->tty_role = is_pts(ma) ? TTY_SLAVE : TTY_JOB;
	}
	/* a pair's slave while its master is in the tree (tty_check decides) */
	f->tty_index = is_pts(f->major) ? pts_index(f->major, f->minor) : -1;
	close(fd);
	return FD_DESCRIBED;
}

/* The terminal of the job (outside the tree), from its first fd @f. */
static int job_save(struct tree *t, const struct tree_file *f)
{
	struct fd_parms p = { .pid = f->pid, .fd = f->fd };
	unsigned int nr, want = tty_nr(f->major, f->minor);
	struct tree_tty *y;
	struct termios tio;
	struct winsize ws;
	pid_t sid, fg;
	int fd, i;

	fd = fd_steal(&p);
	if (fd < 0 || tcgetattr(fd, &tio) || ioctl(fd, TIOCGWINSZ, &ws)) {
		pr_perror("pid %d fd %d: %s: cannot read the terminal's termios or window size",
			  f->pid, f->fd, f->path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	y = tree_tty_add(t, -1);
	y->major = f->major;
	y->minor = f->minor;
	tio_save(y, &tio, &ws);
	/* the foreground group, as a task whose controlling terminal it is sees it */
	for (i = 0; i < t->ntasks; i++)
		if (!stat_tty(t->tasks[i].pid, &sid, &nr, &fg) && nr == want) {
			y->sid = sid;
			y->fg = fg > 0 ? fg : 0;
			break;
		}
	return 0;
}

/*
 * The pty of slave fd @f, its master outside the tree (tty_orphan_master):
 * an orphan pair record (one such pty at most, as CRIU).  0 or -1 (printed).
 */
static int orphan_save(struct tree *t, struct tree_file *f)
{
	struct fd_parms p = { .pid = f->pid, .fd = f->fd };
	unsigned int nr, want = tty_nr(f->major, f->minor);
	int index = pts_index(f->major, f->minor), fd, i, queued = 0;
	struct tree_tty *y;
	struct termios tio;
	struct winsize ws;
	struct stat st;
	pid_t sid, fg;

	for (i = 0; i < t->nttys; i++)
		if (t->ttys[i].orphan) {
			pr_err("pid %d fd %d: pty slave %s (%u:%u), its master not in the tree: a second such pty (besides /dev/pts/%d): not supported (one pty's master can be handed to the caller)",
			       f->pid, f->fd, f->path, f->major, f->minor, t->ttys[i].index);
			return -1;
		}
	fd = fd_steal(&p);
	if (fd < 0 || tcgetattr(fd, &tio) || ioctl(fd, TIOCGWINSZ, &ws) ||
	    ioctl(fd, FIONREAD, &queued) || fstat(fd, &st)) {
		pr_perror("pid %d fd %d: %s: cannot read the pty's termios, window size or input queue",
			  f->pid, f->fd, f->path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (queued > 0) {
		pr_err("pid %d fd %d: pty slave %s (%u:%u), its master not in the tree: %d bytes of input the tree has not read: not supported (the new pty would not have them)",
		       f->pid, f->fd, f->path, f->major, f->minor, queued);
		return -1;
	}
	y = tree_tty_add(t, index);
	y->orphan = 1;
	y->major = f->major;
	y->minor = f->minor;
	tio_save(y, &tio, &ws);
	if (f->tty_role == TTY_SLAVE) {
		y->has_mode = 1;
		y->mode = st.st_mode & 07777;
		y->uid = st.st_uid;
		y->gid = st.st_gid;
	}
	for (i = 0; i < t->ntasks; i++)
		if (!stat_tty(t->tasks[i].pid, &sid, &nr, &fg) && nr == want) {
			y->sid = sid;
			y->fg = fg > 0 ? fg : 0;
			break;
		}
	return 0;
}

static int tty_check(const struct tree *ct)
{
	/* the dump's own tree: the check completes it (slaves without their master, the job) */
	struct tree *t = (struct tree *)ct;
	struct tree_file *job = NULL;
	int i, j;

	for (i = 0; i < t->nfiles; i++) {
		struct tree_file *f = &t->files[i];

		if (f->kind != TK_TTY || f->tty_role == TTY_MASTER)
			continue;
		if (f->tty_index >= 0 && tree_tty_find(t, f->tty_index))
			continue;	/* a pair in the tree (or the orphan one) */
		if (tty_orphan_master && is_pts(f->major) && f->tty_index >= 0) {
			if (orphan_save(t, f))
				return -1;
			continue;
		}
		if (f->tty_role == TTY_SLAVE)
			f->tty_role = TTY_JOB;
		f->tty_index = -1;
		if (!tty_shell_job) {
			pr_err("pid %d fd %d: %s %s (%u:%u)%s: a terminal outside the tree is not supported without --shell-job (give --shell-job to dump and to restore: the job is then restored on the terminal imgcr restore runs on)",
			       f->pid, f->fd, tty_kind(f->major, f->minor), f->path, f->major,
			       f->minor, is_pts(f->major) ? ", its master not in the tree" : "");
			return -1;
		}
		if (job && (job->major != f->major || job->minor != f->minor)) {
			pr_err("pid %d fd %d: %s %s (%u:%u): a second terminal outside the tree (besides %s %u:%u): not supported, a shell job has one terminal",
			       f->pid, f->fd, tty_kind(f->major, f->minor), f->path, f->major,
			       f->minor, job->path, job->major, job->minor);
			return -1;
		}
		if (!job)
			job = f;
	}
	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		if (y->index < 0 || !y->sid || tree_find(t, y->sid))
			continue;
		if (y->orphan) {
			pr_err("pty slave /dev/pts/%d, its master not in the tree: the controlling terminal of session %d, outside the tree: not supported",
			       y->index, y->sid);
			return -1;
		}
		for (j = 0; j < t->nfiles; j++)
			if (t->files[j].kind == TK_TTY && t->files[j].tty_role == TTY_MASTER &&
			    t->files[j].tty_index == y->index)
				break;
		pr_err("pid %d fd %d: pty master of /dev/pts/%d: its slave is the controlling terminal of session %d, outside the tree: not supported",
		       t->files[j].pid, t->files[j].fd, y->index, y->sid);
		return -1;
	}
	return job ? job_save(t, job) : 0;
}

static void tty_finish(int killed)
{
	int i;

	for (i = 0; i < npairs; i++) {
		struct pair_dump *d = &pairs[i];
		int on = 1;

		if (!killed && d->s >= 0 &&
		    pair_refill(d->m, d->s, &d->tio, d->in, d->inlen, d->out, d->outlen))
			pr_pwarn("cannot put the queued data back into a pty");
		if (!killed && d->pkt)
			ioctl(d->m, TIOCPKT, &on);
		close(d->m);
		if (d->s >= 0)
			close(d->s);
		free(d->in);
		free(d->out);
	}
	free(pairs);
	pairs = NULL;
	npairs = 0;
}

/* ---- restore ---- */

/* The restorer's master of each pair, once opened. */
static struct pair_restore {
	int index, m, orphan;
} *rpairs;
static int nrpairs, job_ready;
/* the orphan pair: its master opened early (tty_devpts_prepare); the socket to imgcr */
static int orphan_pre_m = -1, orphan_pre_index = -1;
static int orphan_sk[2] = { -1, -1 };

static int master_record(const struct tree *t, int index)
{
	int j;

	for (j = 0; j < t->nfiles; j++)
		if (t->files[j].kind == TK_TTY && t->files[j].tty_role == TTY_MASTER &&
		    t->files[j].tty_index == index)
			return j;
	return -1;
}

/* @ptmx (/dev/ptmx), with the pts index @want if it is free (the lowest free one is given). */
static int open_ptmx_at(const char *ptmx, int want, int *got)
{
	int extra[256], nextra = 0, fd, n = -1, i;

	for (;;) {
		fd = open(ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, TIOCGPTN, &n)) {
			pr_perror("cannot open a pty (%s)", ptmx);
			if (fd >= 0)
				close(fd);
			fd = -1;
			break;
		}
		if (n >= want || nextra == (int)(sizeof(extra) / sizeof(extra[0])))
			break;
		extra[nextra++] = fd;	/* a lower index: hold it, ask again */
	}
	for (i = 0; i < nextra; i++)
		close(extra[i]);
	*got = n;
	return fd;
}

static int open_ptmx(int want, int *got)
{
	return open_ptmx_at("/dev/ptmx", want, got);
}

/*
 * The owner and mode of the new slave's node @s as they were (a login or
 * terminal emulator chown'ed it to its user, mode 0620): 0 or -1 (printed).
 * Another owner than the restorer's needs root.
 */
static int slave_mode(int s, const struct tree_tty *y, const char *what)
{
	struct stat st;

	if (fstat(s, &st) ||
	    ((st.st_uid != y->uid || st.st_gid != y->gid) && fchown(s, y->uid, y->gid)) ||
	    ((st.st_mode & 07777) != y->mode && fchmod(s, y->mode))) {
		pr_perror("%s: cannot give the new pty's slave its owner %u:%u and mode %04o%s", what,
			  y->uid, y->gid, y->mode,
			  errno == EPERM ? " (another owner than the restoring user's needs root)" : "");
		return -1;
	}
	return 0;
}

/* The pair @index recreated (once): its master, or -1 (printed). */
static int pair_master(struct fd_restore *r, int index, const char *what)
{
	const struct tree_tty *y = tree_tty_find(r->t, index);
	int i, j = master_record(r->t, index), m, s, got, zero = 0, on = 1;
	char path[4096], *data = NULL;
	struct termios tio;
	struct winsize ws;
	size_t len = 0;

	for (i = 0; i < nrpairs; i++)
		if (rpairs[i].index == index)
			return rpairs[i].m;
	if (!y || (j < 0 && !y->orphan)) {
		pr_err("%s: the tree has no pty pair %d", what, index);
		return -1;
	}
	if (y->inlen + y->outlen) {
		snprintf(path, sizeof(path), "tty-%d.data", index);
		data = read_text_dir(r->dirfd, path, &len);
		if (!data || len != y->inlen + y->outlen) {
			pr_err("%s: %s holds %zu bytes, not %zu", what, path, data ? len : 0,
			       y->inlen + y->outlen);
			free(data);
			return -1;
		}
	}
	if (y->orphan && orphan_pre_m >= 0 && orphan_pre_index == index) {
		m = orphan_pre_m;	/* opened for a bind mount of its slave */
		got = index;
		orphan_pre_m = -1;
	} else {
		m = open_ptmx(index, &got);
	}
	if (m < 0) {
		free(data);
		return -1;
	}
	if (got != index)
		pr_info("pty /dev/pts/%d is restored as /dev/pts/%d (the index is in use)",
			index, got);
	tio_load(y, &tio, &ws);
	/*
	 * Unlocked to refill it through its slave; a pair that was locked
	 * (its slave possibly opened before the lock) is locked again after.
	 */
	if (ioctl(m, TIOCSPTLCK, &zero)) {
		pr_perror("%s: cannot unlock the new pty", what);
		goto fail;
	}
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (s < 0) {
		pr_perror("%s: cannot open the new slave (TIOCGPTPEER)", what);
		goto fail;
	}
	if (pair_refill(m, s, &tio, data, y->inlen, data ? data + y->inlen : NULL,
			y->outlen)) {
		close(s);
		goto fail_tio;
	}
	if (y->has_mode && slave_mode(s, y, what)) {
		close(s);
		goto fail;
	}
	close(s);
	if (y->locked && ioctl(m, TIOCSPTLCK, &on)) {
		pr_perror("%s: cannot lock the new pty again", what);
		goto fail;
	}
	if (ioctl(m, TIOCSWINSZ, &ws) || (y->pkt && ioctl(m, TIOCPKT, &on)))
		goto fail_tio;
	if (j >= 0 && fd_set_flags(m, r->t->files[j].flags, what))
		goto fail;
	m = fd_high(m, r->base);
	if (m < 0) {
		pr_perror("%s: F_DUPFD", what);
		goto fail;
	}
	free(data);
	rpairs = realloc(rpairs, (nrpairs + 1) * sizeof(*rpairs));
	if (!rpairs) {
		pr_err("out of memory");
		exit(1);
	}
	rpairs[nrpairs].index = index;
	rpairs[nrpairs].orphan = y->orphan;
	rpairs[nrpairs++].m = m;
	return m;
fail_tio:
	pr_perror("%s: cannot set the termios, window size, packet mode or data of the new pty",
		  what);
fail:
	close(m);
	free(data);
	return -1;
}

/* The terminal imgcr restore runs on, set up for the job once: 0 or -1 (printed). */
static int job_terminal(struct fd_restore *r, const char *what)
{
	const struct tree_tty *y = tree_tty_find(r->t, -1);
	unsigned int nr;
	pid_t sid, fg;
	struct stat st;
	struct termios tio;
	struct winsize ws;
	sigset_t ttou, old;
	int ret = 0;

	if (!tty_shell_job) {
		pr_err("%s: the tree is a shell job (dumped with --shell-job, it has fds on a terminal outside it): restore it with --shell-job, from a terminal",
		       what);
		return -1;
	}
	if (job_ready)
		return 0;
	if (!y) {
		pr_err("%s: the tree has no tty record of the job's terminal", what);
		return -1;
	}
	if (fstat(0, &st) || !S_ISCHR(st.st_mode) || !isatty(0) ||
	    stat_tty(getpid(), &sid, &nr, &fg) || nr != stdin_tty_nr(&st)) {
		pr_err("%s: --shell-job: imgcr restore's stdin must be a terminal, its controlling terminal (run it from a shell on a terminal)",
		       what);
		return -1;
	}
	/* the job expects its termios and window size; imgcr may be in the background */
	tio_load(y, &tio, &ws);
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetattr(0, TCSANOW, &tio) || ioctl(0, TIOCSWINSZ, &ws)) {
		pr_perror("%s: cannot set the termios or window size of imgcr's terminal", what);
		ret = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	job_ready = !ret;
	return ret;
}


/*
 * The slave of master @m (TIOCGPTPEER), also when the pair is locked: a
 * slave the tree had opened before its master locked the pair.
 */
#define KERNEL_O_LARGEFILE 0100000

static int open_peer(int m, int flags)
{
	int lck = 0, zero = 0, one = 1, s, e;

	if (ioctl(m, TIOCGPTLCK, &lck))
		lck = 0;
	if (lck && ioctl(m, TIOCSPTLCK, &zero))
		return -1;
	/*
	 * TIOCGPTPEER keeps the flags it is given in the file's flags, which
	 * F_GETFL and fdinfo show: not O_CLOEXEC (set on the fd instead), as
	 * open() would not keep it either.
	 */
	s = ioctl(m, TIOCGPTPEER, flags & ~O_CLOEXEC);
	e = errno;
	if (s >= 0 && flags & O_CLOEXEC && fcntl(s, F_SETFD, FD_CLOEXEC)) {
		e = errno;
		close(s);
		s = -1;
	}
	if (lck && ioctl(m, TIOCSPTLCK, &one)) {
		e = errno;
		if (s >= 0)
			close(s);
		s = -1;
	}
	errno = e;
	return s;
}

/* Receive one fd over socket @sk, or -1. */
static int recv_fd(int sk)
{
	char c;
	int fd;

	if (fd_recv(sk, &c, 1, &fd) != 1 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * /dev/tty opened with @flags by a process whose controlling terminal is
 * the slave of master @m (see the top of this file), or -1 (printed).
 */
static int open_devtty(int m, int flags, const char *what)
{
	int sk[2], fd = -1, st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("%s: socketpair", what);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		pr_perror("%s: fork", what);
		close(sk[0]);
		close(sk[1]);
		return -1;
	}
	if (!pid) {
		int s;

		s = setsid() < 0 ? -1 : open_peer(m, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0))
			_exit(1);
		fd = open("/dev/tty", flags | O_NOCTTY);
		if (fd < 0)
			_exit(2);
		_exit(fd_send(sk[1], "t", 1, fd) ? 3 : 0);
	}
	close(sk[1]);
	fd = recv_fd(sk[0]);
	close(sk[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		fprintf(stderr, "imgcr: %s: cannot open /dev/tty as the new slave's controlling terminal (step %d)\n",
			what, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return fd;
}

static int tty_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	int m, fd;

	if (f->tty_index < 0) {
		if (job_terminal(r, what))
			return -1;
		if (f->tty_role == TTY_DEVTTY)
			fd = open("/dev/tty", fd_open_flags(f->flags));
		else
			fd = open("/proc/self/fd/0", fd_open_flags(f->flags) | O_NOCTTY);
		if (fd < 0)
			pr_perror("%s: cannot open imgcr's terminal", what);
		if (fd >= 0 && fd_set_flags(fd, f->flags, what)) {
			close(fd);
			return -1;
		}
		return fd;
	}
	m = pair_master(r, f->tty_index, what);
	if (m < 0 || f->tty_role == TTY_MASTER)
		return m;
	if (f->tty_role == TTY_DEVTTY) {
		fd = open_devtty(m, fd_open_flags(f->flags), what);
		if (fd >= 0 && fd_set_flags(fd, f->flags, what)) {
			close(fd);
			return -1;
		}
		return fd;
	}
	/* O_LARGEFILE as open() gave it (the kernel's value: glibc's is 0) */
	fd = open_peer(m, (f->flags & (O_ACCMODE | KERNEL_O_LARGEFILE)) | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("%s: cannot open the slave of the new pty (TIOCGPTPEER)", what);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}

const char *tty_restore_session(const struct tree *t, const int *desc,
				const struct tree_task *k)
{
	static char why[256];
	int i, j, s;

	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		if (y->index < 0 || y->sid != k->pid)
			continue;
		j = master_record(t, y->index);
		if (j < 0 && y->orphan) {
			/* no master in the tree: one of its slave's descriptions */
			for (j = 0; j < t->nfiles; j++)
				if (t->files[j].kind == TK_TTY && t->files[j].tty_role == TTY_SLAVE &&
				    t->files[j].tty_index == y->index)
					break;
			s = j < t->nfiles ? fcntl(desc[j], F_DUPFD_CLOEXEC, 0) : -1;
			if (j == t->nfiles)
				j = -1;
		} else {
			s = j < 0 ? -1 : open_peer(desc[j], O_RDWR | O_NOCTTY | O_CLOEXEC);
		}
		if (s < 0 || ioctl(s, TIOCSCTTY, 0)) {
			snprintf(why, sizeof(why), "cannot make the slave of pty %d its controlling terminal: %s",
				 y->index, j < 0 ? "no master or slave" : strerror(errno));
			if (s >= 0)
				close(s);
			return why;
		}
		close(s);
	}
	return NULL;
}

const char *tty_restore_pgrp(const struct tree *t, const struct tree_task *k)
{
	static char why[256];
	sigset_t ttou, old;
	int i, fd, r, e;

	if (k->pgid != k->pid)
		return NULL;
	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		if (y->fg != k->pid)
			continue;
		/* a pair's session, or the job's, which is imgcr's now */
		if (y->index >= 0 ? y->sid != k->sid : tree_find(t, k->sid) != NULL)
			continue;
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(why, sizeof(why), "cannot open its controlling terminal: %s",
				 strerror(errno));
			return why;
		}
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		r = tcsetpgrp(fd, k->pid);
		e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fd);
		if (r) {
			snprintf(why, sizeof(why), "cannot put its process group in the foreground of its terminal: %s",
				 strerror(e));
			return why;
		}
	}
	return NULL;
}


/* ---- the orphan pty (tty.h): its master handed to orphan_master_hook ---- */

static const struct tree_tty *orphan_of(const struct tree *t)
{
	int i;

	for (i = 0; i < t->nttys; i++)
		if (t->ttys[i].orphan)
			return &t->ttys[i];
	return NULL;
}

int tty_orphan_check(const struct tree *t)
{
	const struct tree_tty *y = orphan_of(t);

	if (y && !orphan_master_hook) {
		pr_err("pty /dev/pts/%d: its master was outside the tree at dump (a container's console, dumped by imgcr-criu with orphan_pts_master): only imgcr-criu restores it, handing the new master to its client (runc's console socket)",
		       y->index);
		return -1;
	}
	return 0;
}

int tty_orphan_begin(const struct tree *t, int base)
{
	int sk[2];

	if (!orphan_of(t))
		return 0;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("socketpair");
		return -1;
	}
	orphan_sk[0] = fd_high(sk[0], base);
	orphan_sk[1] = fd_high(sk[1], base);
	if (orphan_sk[0] < 0 || orphan_sk[1] < 0) {
		pr_perror("cannot move a socket above the tree's fds");
		return -1;
	}
	return 0;
}

void tty_orphan_parent(void)
{
	if (orphan_sk[1] >= 0)
		close(orphan_sk[1]);
	orphan_sk[1] = -1;
}

void tty_orphan_end(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (orphan_sk[i] >= 0)
			close(orphan_sk[i]);
		orphan_sk[i] = -1;
	}
	if (orphan_pre_m >= 0)
		close(orphan_pre_m);
	orphan_pre_m = -1;
}

/* every file is open: the orphan pair's master goes to imgcr, none stays here */
static int tty_after(struct fd_restore *r, int ok)
{
	int i, ret = 0;

	(void)r;
	for (i = 0; i < nrpairs; i++) {
		if (!rpairs[i].orphan || rpairs[i].m < 0)
			continue;
		if (ok && (orphan_sk[1] < 0 || fd_send(orphan_sk[1], "m", 1, rpairs[i].m))) {
			pr_perror("pty /dev/pts/%d: cannot hand its new master to imgcr", rpairs[i].index);
			ret = -1;
		}
		close(rpairs[i].m);
		rpairs[i].m = -1;
	}
	if (orphan_sk[1] >= 0)
		close(orphan_sk[1]);
	orphan_sk[1] = -1;
	return ret;
}

int tty_orphan_deliver(const struct tree *t)
{
	const struct tree_tty *y = orphan_of(t);
	struct pollfd pf = { .fd = orphan_sk[0], .events = POLLIN };
	int fd, ret, n;

	if (!y)
		return 0;
	if (orphan_sk[0] < 0) {
		pr_err("pty /dev/pts/%d: no socket for its new master", y->index);
		return -1;
	}
	do
		n = poll(&pf, 1, 60000);
	while (n < 0 && errno == EINTR);
	fd = n == 1 ? recv_fd(orphan_sk[0]) : -1;
	close(orphan_sk[0]);
	orphan_sk[0] = -1;
	if (fd < 0) {
		pr_err("pty /dev/pts/%d: the new pair's master never came from the process that opens the tree's files%s",
		       y->index, n == 0 ? " (60 s)" : "");
		return -1;
	}
	pr_debug("pty /dev/pts/%d: its new master (fd %d) to the caller", y->index, fd);
	ret = orphan_master_hook(fd);
	close(fd);
	return ret;
}

int tty_devpts_prepare(const struct tree *t, const char *devpts, int index)
{
	const struct tree_tty *y = tree_tty_find(t, index);
	char ptmx[PATH_MAX];
	int got = -1, m;

	if (!y || !y->orphan) {
		pr_err("a bind mount of pty /dev/pts/%d, which does not exist yet when the mounts are made: not supported (only the pty whose master was outside the tree, a container's console)",
		       index);
		return -1;
	}
	if (orphan_pre_m >= 0)
		return orphan_pre_index == index ? 0 : -1;
	snprintf(ptmx, sizeof(ptmx), "%s/ptmx", devpts);
	m = open_ptmx_at(ptmx, index, &got);
	if (m < 0)
		return -1;
	if (got != index) {
		pr_err("pty /dev/pts/%d (bound to another path in the tree's mounts): the new devpts gives index %d: not supported",
		       index, got);
		close(m);
		return -1;
	}
	orphan_pre_m = m;
	orphan_pre_index = index;
	return 0;
}

static void tty_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " role=%s index=%d dev=%u:%u", tree_tty_role_names[x->tty_role], x->tty_index,
		x->major, x->minor);
	fd_rec_path(f, x->path);
}

static const char *tty_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	const char *rn = rec_val(r, "role");
	int role;

	(void)t;
	if (!rn || REC_NUM(r, "index", -1, (1 << 20) - 1, x->tty_index) ||
	    rec_dev(r, "dev", &x->major, &x->minor))
		return "bad file record";
	for (role = 0; role < TTY_NROLES; role++)
		if (!strcmp(rn, tree_tty_role_names[role]))
			break;
	if (role == TTY_NROLES || (role == TTY_JOB && x->tty_index != -1) ||
	    ((role == TTY_MASTER || role == TTY_SLAVE) && x->tty_index < 0))
		return "bad tty file record";
	x->tty_role = role;
	if (rec_str(r, "path", &x->path))
		return "bad file record";
	return NULL;
}

static void tty_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	const struct tree_file *f = &t->files[i];

	if (f->tty_index >= 0)
		snprintf(out, size, "tty %s of pty %d %s (%u:%u) %s",
			 tree_tty_role_names[f->tty_role], f->tty_index, f->path, f->major,
			 f->minor, mode);
	else
		snprintf(out, size, "tty %s, the job's terminal %s (%u:%u) %s",
			 tree_tty_role_names[f->tty_role], f->path, f->major, f->minor, mode);
}

static void tty_rec_json(const struct tree *t, int i)
{
	const struct tree_file *f = &t->files[i];

	printf(",\"role\":\"%s\",\"index\":%d,\"major\":%u,\"minor\":%u",
	       tree_tty_role_names[f->tty_role], f->tty_index, f->major, f->minor);
	fd_json_path(f->path);
}

const struct fd_kind tty_fd_kind = {
	.name = "tty",
	.type = TK_TTY,
	.dump = tty_dump,
	.check = tty_check,
	.finish = tty_finish,
	.open = tty_open,
	.after = tty_after,
	.rec_write = tty_rec_write,
	.rec_read = tty_rec_read,
	.rec_show = tty_rec_show,
	.rec_json = tty_rec_json,
};

/* ---- the tree file: tty records (record.h; the format: imgcr-image(5)) ---- */

static void tty_records_write(FILE *f, const struct tree *t)
{
	int i, j;

	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		fprintf(f, "tty index=%d dev=%u:%u sid=%d fg=%d locked=%d pkt=%d iflag=0%o oflag=0%o cflag=0%o lflag=0%o cc=",
			y->index, y->major, y->minor, y->sid, y->fg, y->locked, y->pkt, y->iflag,
			y->oflag, y->cflag, y->lflag);
		for (j = 0; j < TREE_NCC; j++)
			fprintf(f, "%02x", y->cc[j]);
		fprintf(f, " rows=%u cols=%u xpixel=%u ypixel=%u inlen=%zu outlen=%zu", y->rows,
			y->cols, y->xpixel, y->ypixel, y->inlen, y->outlen);
		if (y->has_mode)
			fprintf(f, " mode=0%o uid=%u gid=%u", y->mode, y->uid, y->gid);
		if (y->orphan)
			fprintf(f, " orphan=1");
		fputc('\n', f);
	}
}

static const char *tty_record_read(struct tree *t, struct rec *r)
{
	struct tree_tty *y;
	const char *cc;
	int index, i;

	if (REC_NUM(r, "index", -1, (1 << 20) - 1, index) || tree_tty_find(t, index))
		return "bad tty record";
	y = tree_tty_add(t, index);
	if (rec_dev(r, "dev", &y->major, &y->minor) ||
	    REC_NUM(r, "sid", 0, INT_MAX, y->sid) || REC_NUM(r, "fg", 0, INT_MAX, y->fg) ||
	    REC_NUM(r, "locked", 0, 1, y->locked) || REC_NUM(r, "pkt", 0, 1, y->pkt) ||
	    REC_NUM(r, "iflag", 0, UINT32_MAX, y->iflag) ||
	    REC_NUM(r, "oflag", 0, UINT32_MAX, y->oflag) ||
	    REC_NUM(r, "cflag", 0, UINT32_MAX, y->cflag) ||
	    REC_NUM(r, "lflag", 0, UINT32_MAX, y->lflag) ||
	    !(cc = rec_val(r, "cc")) || strlen(cc) != 2 * TREE_NCC ||
	    REC_NUM(r, "rows", 0, 65535, y->rows) || REC_NUM(r, "cols", 0, 65535, y->cols) ||
	    REC_NUM(r, "xpixel", 0, 65535, y->xpixel) ||
	    REC_NUM(r, "ypixel", 0, 65535, y->ypixel) ||
	    REC_NUM(r, "inlen", 0, 1 << 24, y->inlen) ||
	    REC_NUM(r, "outlen", 0, 1 << 24, y->outlen) ||
	    (index < 0 && (y->inlen || y->outlen)))
		return "bad tty record";
	for (i = 0; i < TREE_NCC; i++) {
		unsigned int b;

		if (sscanf(cc + 2 * i, "%2x", &b) != 1)
			return "bad tty record";
		y->cc[i] = b;
	}
	if (rec_has(r, "mode") || rec_has(r, "uid") || rec_has(r, "gid")) {
		/* a pair's slave node (absent in older images) */
		if (index < 0 || REC_NUM(r, "mode", 0, 07777, y->mode) ||
		    REC_NUM(r, "uid", 0, 0xfffffffeLL, y->uid) ||
		    REC_NUM(r, "gid", 0, 0xfffffffeLL, y->gid))
			return "bad tty record";
		y->has_mode = 1;
	}
	if (rec_has(r, "orphan") &&
	    (index < 0 || REC_NUM(r, "orphan", 0, 1, y->orphan) || y->inlen || y->outlen ||
	     y->locked || y->pkt))
		return "bad tty record";
	return NULL;
}

/* imgcr show (record.h) */
static void tty_show_text(const struct tree_tty *y)
{
	int j;

	if (y->index >= 0)
		printf("pty %d (/dev/pts/%d):", y->index, y->index);
	else
		printf("job terminal %u:%u:", y->major, y->minor);
	printf(" session %d foreground group %d%s%s%s\n", y->sid, y->fg,
	       y->locked ? " locked" : "", y->pkt ? " packet mode" : "",
	       y->orphan ? " master outside the tree (handed to the caller at restore)" : "");
	printf("  termios iflag 0%o oflag 0%o cflag 0%o lflag 0%o cc", y->iflag, y->oflag,
	       y->cflag, y->lflag);
	for (j = 0; j < TREE_NCC; j++)
		printf(" %02x", y->cc[j]);
	printf("\n  window %ux%u (%ux%u pixels)", y->rows, y->cols, y->xpixel, y->ypixel);
	if (y->index >= 0)
		printf(", %zu bytes of input and %zu of output queued (tty-%d.data)",
		       y->inlen, y->outlen, y->index);
	putchar('\n');
	if (y->has_mode)
		printf("  slave node mode %04o owner %u:%u\n", y->mode, y->uid, y->gid);
}

static void tty_records_show(const struct tree *t, int json)
{
	int i;

	if (json)
		printf(",\"ttys\":[");
	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		if (!json) {
			tty_show_text(y);
			continue;
		}
		printf("%s{\"index\":%d,\"major\":%u,\"minor\":%u,\"sid\":%d,\"fg\":%d,\"locked\":%s,\"pkt\":%s,\"iflag\":%u,\"oflag\":%u,\"cflag\":%u,\"lflag\":%u,\"rows\":%u,\"cols\":%u,\"inlen\":%zu,\"outlen\":%zu%s}",
		       i ? "," : "", y->index, y->major, y->minor, y->sid, y->fg,
		       y->locked ? "true" : "false", y->pkt ? "true" : "false", y->iflag, y->oflag,
		       y->cflag, y->lflag, y->rows, y->cols, y->inlen, y->outlen,
		       y->orphan ? ",\"orphan\":true" : "");
	}
	if (json)
		putchar(']');
}

const struct tree_record tty_records[] = {
	{ "tty", tty_record_read, tty_records_write, tty_records_show },
	{ NULL, NULL, NULL, NULL }
};
