/*
 * leaser: file leases across dump + restore (test/guest/fds/t_files_leases.sh).
 *
 * In the cwd: r.dat opened O_RDONLY with a read lease (fd R; plain SIGIO),
 * w.dat opened O_RDWR with a write lease (fd W; F_SETSIG SIGRTMIN+1, so a
 * break's signal carries the fd in si_fd).  Prints "fds R=.. W=..",
 * "ready", waits until the file "restored" appears, then checks (ok/BAD):
 * F_GETLEASE gives F_RDLCK and F_WRLCK again, F_GETOWN is the task and
 * F_GETSIG as set; a child's open(O_WRONLY|O_NONBLOCK) of r.dat fails with
 * EWOULDBLOCK and SIGIO arrives (the lease then breaks to F_UNLCK); a
 * child's open(O_RDONLY|O_NONBLOCK) of w.dat fails with EWOULDBLOCK and
 * SIGRTMIN+1 arrives with si_fd W (the lease breaks to F_RDLCK).  Prints
 * "done ok" and exits 0 if all passed.
 *
 * leaser hold: a read lease on h.dat, SIGIO ignored; prints "fd N",
 * "ready", then "tick I" every 100 ms for ever (a lease being broken is
 * refused at dump).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#define COMMON_CHECK
#include "common.h"

static volatile sig_atomic_t nsigio, nrt, rtfd = -1;

static void on_sigio(int sig)
{
	(void)sig;
	nsigio++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	nrt++;
	rtfd = si->si_fd;
}

/* a child opens @name with @flags: its errno (0: opened) */
static int child_open(const char *name, int flags)
{
	int st, fd;
	pid_t k = fork();

	if (k == 0) {
		fd = open(name, flags);
		_exit(fd < 0 ? errno : 0);
	}
	if (k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int wait_for(volatile sig_atomic_t *n)
{
	int i;

	for (i = 0; i < 500 && !*n; i++)
		usleep(10000);
	return *n;
}

static const char *ltype(int t)
{
	return t == F_RDLCK ? "F_RDLCK" : t == F_WRLCK ? "F_WRLCK" : t == F_UNLCK ? "F_UNLCK" : "?";
}

static int hold(void)
{
	int fd = open("h.dat", O_RDWR | O_CREAT, 0600), i;

	signal(SIGIO, SIG_IGN);
	close(fd);
	fd = open("h.dat", O_RDONLY);
	if (fd < 0 || fcntl(fd, F_SETLEASE, F_RDLCK)) {
		say("BAD lease: %s\n", strerror(errno));
		return 1;
	}
	say("fd %d\nready\n", fd);
	for (i = 0;; i++) {
		say("tick %d\n", i);
		usleep(100000);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigio, .sa_flags = SA_RESTART },
			 rt = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO | SA_RESTART };
	int r, w, e, t;

	if (argc == 2 && !strcmp(argv[1], "hold"))
		return hold();
	sigaction(SIGIO, &sa, NULL);
	sigaction(SIGRTMIN + 1, &rt, NULL);
	r = open("r.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (r < 0 || write(r, "read lease\n", 11) != 11)
		return 1;
	close(r);
	w = open("w.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (w < 0 || write(w, "write lease\n", 12) != 12)
		return 1;
	close(w);
	r = open("r.dat", O_RDONLY);
	w = open("w.dat", O_RDWR);
	if (r < 0 || w < 0 || fcntl(r, F_SETLEASE, F_RDLCK) || fcntl(w, F_SETLEASE, F_WRLCK) ||
	    fcntl(w, F_SETSIG, SIGRTMIN + 1)) {
		say("BAD setup: %s\n", strerror(errno));
		return 1;
	}
	say("fds R=%d W=%d\nready\n", r, w);
	while (access("restored", F_OK))
		usleep(50000);

	t = fcntl(r, F_GETLEASE);
	check(t == F_RDLCK, "read lease", "F_GETLEASE %s, want F_RDLCK", ltype(t));
	t = fcntl(w, F_GETLEASE);
	check(t == F_WRLCK, "write lease", "F_GETLEASE %s, want F_WRLCK", ltype(t));
	t = fcntl(r, F_GETOWN);
	check(t == getpid(), "owner", "F_GETOWN of R %d, want %d", t, getpid());
	t = fcntl(w, F_GETSIG);
	check(t == SIGRTMIN + 1, "sig", "F_GETSIG of W %d, want %d", t, SIGRTMIN + 1);
	check(!nsigio && !nrt, "no break", "%d SIGIO, %d SIGRTMIN+1 before any open", nsigio, nrt);

	e = child_open("r.dat", O_WRONLY | O_NONBLOCK);
	check(e == EWOULDBLOCK, "read lease break", "a child's open(O_WRONLY|O_NONBLOCK): %s, want EWOULDBLOCK",
	      e ? strerror(e) : "opened");
	check(wait_for(&nsigio), "SIGIO", "%d SIGIO after the child's open", nsigio);
	t = fcntl(r, F_GETLEASE);
	check(t == F_UNLCK, "read lease breaking", "F_GETLEASE %s, want F_UNLCK", ltype(t));
	fcntl(r, F_SETLEASE, F_UNLCK);

	e = child_open("w.dat", O_RDONLY | O_NONBLOCK);
	check(e == EWOULDBLOCK, "write lease break", "a child's open(O_RDONLY|O_NONBLOCK): %s, want EWOULDBLOCK",
	      e ? strerror(e) : "opened");
	check(wait_for(&nrt), "SIGRTMIN+1", "%d SIGRTMIN+1 after the child's open", nrt);
	check(rtfd == w, "si_fd", "SIGRTMIN+1 si_fd %d, want %d", rtfd, w);
	t = fcntl(w, F_GETLEASE);
	check(t == F_RDLCK, "write lease breaking", "F_GETLEASE %s, want F_RDLCK", ltype(t));
	fcntl(w, F_SETLEASE, F_UNLCK);
	e = child_open("w.dat", O_RDONLY | O_NONBLOCK);
	check(e == 0, "released", "a child's open after F_UNLCK: %s", e ? strerror(e) : "opened");
	say(bad ? "done BAD\n" : "done ok\n");
	return bad;
}
