/*
 * ttyjob: a shell job on a terminal, for t_tty_job.
 *
 * ttyjob shell   run on a terminal as its session leader (ptyrun): sets the
 *                terminal's termios (VERASE ^H, VEOL ^A, IUTF8), then acts
 *                as an interactive shell starting one foreground job: forks
 *                it into a process group of its own, makes that group the
 *                terminal's foreground group and waits for it.
 * ttyjob shell bg  the same, the job started in the background.
 *   the job      prints "job pid= pgid= sid= tty= fg= rows= cols=", then
 *                "tick N" every 200 ms and "got LINE" for each line read
 *                from its stdin.  When ttyname(0) changes (restored on
 *                another terminal) it prints "moved tty=NAME termios=same|DIFF
 *                winsize=ROWSxCOLS fg=yes|no ctty=yes|no": the termios and
 *                window size compared with those it started with, whether
 *                its group is the terminal's foreground group, and whether
 *                the terminal is its controlling terminal (TIOCGSID).
 * ttyjob info DEV  prints DEV's "rows= cols= iflag= oflag= lflag= erase= eol="
 *                (from outside the job).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "common.h"

static int same_tio(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag &&
	       a->c_cflag == b->c_cflag && a->c_lflag == b->c_lflag &&
	       !memcmp(a->c_cc, b->c_cc, 19);
}

static int job(void)
{
	struct termios t0, t;
	struct winsize w0, w;
	char name[256], last[256], buf[256];
	pid_t sid;
	int tick = 0;

	if (tcgetattr(0, &t0) || ioctl(0, TIOCGWINSZ, &w0) || ttyname_r(0, last, sizeof(last))) {
		say("BAD job: no terminal: %s\n", strerror(errno));
		return 1;
	}
	say("job pid=%d pgid=%d sid=%d tty=%s fg=%d rows=%d cols=%d\n", (int)getpid(),
	    (int)getpgrp(), (int)getsid(0), last, (int)tcgetpgrp(0), w0.ws_row, w0.ws_col);
	for (;;) {
		struct pollfd pf = { 0, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 200) > 0 && (pf.revents & POLLIN)) {
			n = read(0, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = 0;
				buf[strcspn(buf, "\n")] = 0;
				say("got %s\n", buf);
			}
		}
		say("tick %d\n", ++tick);
		if (ttyname_r(0, name, sizeof(name)) || !strcmp(name, last))
			continue;
		tcgetattr(0, &t);
		ioctl(0, TIOCGWINSZ, &w);
		say("moved tty=%s termios=%s winsize=%dx%d fg=%s ctty=%s\n", name,
		    same_tio(&t, &t0) ? "same" : "DIFF", w.ws_row, w.ws_col,
		    tcgetpgrp(0) == getpgrp() ? "yes" : "no",
		    !ioctl(0, TIOCGSID, &sid) && sid == getsid(0) ? "yes" : "no");
		snprintf(last, sizeof(last), "%s", name);
	}
}

static int shell(int bg)
{
	struct termios t;
	sigset_t ttou;
	int st;
	pid_t kid;

	if (tcgetattr(0, &t))
		return 1;
	t.c_cc[VERASE] = 8;
	t.c_cc[VEOL] = 1;
	t.c_iflag |= IUTF8;
	if (tcsetattr(0, TCSANOW, &t))
		return 1;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, NULL);
	kid = fork();
	if (kid == 0) {
		setpgid(0, 0);
		sigprocmask(SIG_UNBLOCK, &ttou, NULL);
		while (!bg && tcgetpgrp(0) != getpgrp())
			usleep(10000);
		return job();
	}
	setpgid(kid, kid);
	if (!bg && tcsetpgrp(0, kid))
		say("BAD shell: tcsetpgrp: %s\n", strerror(errno));
	for (;;) {
		if (waitpid(kid, &st, WUNTRACED) < 0)
			return 0;
		if (!WIFSTOPPED(st))
			return 0;
	}
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
	say("rows=%d cols=%d iflag=0%o oflag=0%o lflag=0%o erase=%d eol=%d\n", w.ws_row,
	    w.ws_col, t.c_iflag, t.c_oflag, t.c_lflag, t.c_cc[VERASE], t.c_cc[VEOL]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "shell"))
		return shell(0);
	if (argc == 3 && !strcmp(argv[1], "shell") && !strcmp(argv[2], "bg"))
		return shell(1);
	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	fprintf(stderr, "usage: ttyjob shell [bg] | ttyjob info DEV\n");
	return 2;
}
