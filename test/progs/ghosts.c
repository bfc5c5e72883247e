// SPDX-License-Identifier: GPL-2.0
/*
 * ghosts MODE: deleted things still held, for t_files_ghosts.sh.  Every mode
 * sets up in the current directory, prints "ready" (after "ino N" where
 * the test needs an inode), waits until the file "restored" appears, then
 * checks the restored state itself ("ok ..." / "BAD ..." lines) and prints
 * "done ok" if all passed.
 *   dir      an empty directory dd (mode 0751, owner 1234:1235) held open,
 *            and a cwd cwdd (mode 0710, owner 1234:1235), both removed.
 *   fifo     FIFO f.fifo (mode 0640) open O_RDWR and O_RDONLY, 13 bytes
 *            in it, removed.
 *   link     h1.dat, with a second name h2.dat, open O_RDWR through h1.dat,
 *            which is removed: after the restore the fd is the inode h2.dat
 *            names (writes through it show in h2.dat).
 *   symlink  t.dat opened through the symbolic link s.lnk, removed.
 *   dev      a node n.null (char 1:3, mode 0620) open O_WRONLY, removed.
 *   spare    g.dat open O_RDWR, removed ("ino N": the test takes its
 *            spare names).
 *   procfd   a child holding /proc/PARENT/stat ("child N", "fd N"); then
 *            "tick" for ever (a refused dump).
 *   proccwd  cwd /proc/N of a child that has exited; "tick" for ever.
 *   holddir DIR  DIR held open ("fd N"), "tick" for ever (the test removes
 *            it: a cgroup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define COMMON_CHECK
#include "common.h"

static void fd_link(int fd, char *out)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, out, PATH_MAX - 1);
	out[n > 0 ? n : 0] = 0;
}

static void want_link(int fd, const char *cwd, const char *name, const char *what)
{
	char l[PATH_MAX], w[PATH_MAX + 64];

	fd_link(fd, l);
	snprintf(w, sizeof(w), "%s/%s", cwd, name);
	check(!strcmp(l, w), what, "link '%s' want '%s'", l, w);
}

static void want_stat(int fd, mode_t type, mode_t mode, uid_t uid, nlink_t nlink, const char *what)
{
	struct stat st;

	if (fstat(fd, &st)) {
		check(0, what, "fstat: %s", strerror(errno));
		return;
	}
	check((st.st_mode & S_IFMT) == type && (st.st_mode & 07777) == mode && st.st_uid == uid &&
	      st.st_nlink == nlink, what, "mode %o uid %u nlink %lu; want %o %o %u %lu",
	      st.st_mode, st.st_uid, (unsigned long)st.st_nlink, type, mode, uid,
	      (unsigned long)nlink);
}

static void ticks(void)
{
	for (int i = 0;; i++) {
		say("tick %d\n", i);
		msleep(100);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char cwd[PATH_MAX], buf[64];
	int fd = -1, fd2 = -1, dd = -1;
	struct stat st, st2;

	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	if (!strcmp(mode, "dir")) {
		if (mkdir("dd", 0700) || chown("dd", 1234, 1235) || chmod("dd", 0751) ||
		    mkdir("cwdd", 0700) || chown("cwdd", 1234, 1235) || chmod("cwdd", 0710))
			return 1;
		dd = open("dd", O_RDONLY | O_DIRECTORY);
		if (dd < 0 || rmdir("dd") || chdir("cwdd") || rmdir("../cwdd"))
			return 1;
		say("fd %d\n", dd);
	} else if (!strcmp(mode, "fifo")) {
		if (mkfifo("f.fifo", 0600) || chmod("f.fifo", 0640))
			return 1;
		fd = open("f.fifo", O_RDWR | O_NONBLOCK);
		fd2 = open("f.fifo", O_RDONLY | O_NONBLOCK);
		if (fd < 0 || fd2 < 0 || write(fd, "fifodata-1234", 13) != 13 || unlink("f.fifo"))
			return 1;
		say("fd %d %d\n", fd, fd2);
	} else if (!strcmp(mode, "link")) {
		int w = open("h1.dat", O_RDWR | O_CREAT | O_TRUNC, 0640);

		if (w < 0 || write(w, "live data", 9) != 9 || close(w) || link("h1.dat", "h2.dat"))
			return 1;
		fd = open("h1.dat", O_RDWR);
		if (fd < 0 || lseek(fd, 5, SEEK_SET) != 5 || unlink("h1.dat"))
			return 1;
		say("fd %d\n", fd);
	} else if (!strcmp(mode, "symlink")) {
		int w = open("t.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);

		if (w < 0 || write(w, "target", 6) != 6 || close(w) || symlink("t.dat", "s.lnk"))
			return 1;
		fd = open("s.lnk", O_RDONLY);
		if (fd < 0 || unlink("s.lnk"))
			return 1;
		say("fd %d\n", fd);
	} else if (!strcmp(mode, "dev")) {
		if (mknod("n.null", S_IFCHR | 0600, makedev(1, 3)) || chmod("n.null", 0620))
			return 1;
		fd = open("n.null", O_WRONLY);
		if (fd < 0 || unlink("n.null"))
			return 1;
		say("fd %d\n", fd);
	} else if (!strcmp(mode, "spare")) {
		int w = open("g.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);

		if (w < 0 || write(w, "ghostly", 7) != 7 || fstat(w, &st) || unlink("g.dat"))
			return 1;
		fd = w;
		say("fd %d\nino %llu\n", fd, (unsigned long long)st.st_ino);
	} else if (!strcmp(mode, "procfd")) {
		pid_t parent = getpid(), kid = fork();

		if (kid < 0)
			return 1;
		if (!kid) {
			snprintf(buf, sizeof(buf), "/proc/%d/stat", parent);
			fd = open(buf, O_RDONLY);
			say("child %d\nfd %d\n", getpid(), fd);
			pause();
			_exit(0);
		}
		msleep(300);
		say("ready\n");
		ticks();
	} else if (!strcmp(mode, "proccwd")) {
		pid_t kid = fork();

		if (kid < 0)
			return 1;
		if (!kid) {
			pause();
			_exit(0);
		}
		snprintf(buf, sizeof(buf), "/proc/%d", kid);
		if (chdir(buf))
			return 1;
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		say("ready\n");
		ticks();
	} else if (!strcmp(mode, "holddir") && argc > 2) {
		fd = open(argv[2], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return 1;
		say("fd %d\nready\n", fd);
		ticks();
	} else {
		fprintf(stderr, "usage: ghosts dir|fifo|link|symlink|dev|spare|procfd|proccwd|holddir DIR\n");
		return 2;
	}
	say("ready\n");
	wait_file(strcat(strcpy(buf, cwd), "/restored"));

	if (!strcmp(mode, "dir")) {
		char l[PATH_MAX], w[PATH_MAX + 16];
		struct dirent *e;
		DIR *d;
		int n = 0;

		want_stat(dd, S_IFDIR, 0751, 1234, 0, "fd dd");
		want_link(dd, cwd, "dd (deleted)", "fd dd link");
		d = fdopendir(dup(dd));
		while (d && (e = readdir(d)))
			n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
		check(d && !n, "fd dd empty", "%d entries", n);
		if (d)
			closedir(d);
		dd = open(".", O_RDONLY | O_DIRECTORY);
		want_stat(dd, S_IFDIR, 0710, 1234, 0, "cwd");
		n = readlink("/proc/self/cwd", l, sizeof(l) - 1);
		l[n > 0 ? n : 0] = 0;
		snprintf(w, sizeof(w), "%s/cwdd (deleted)", cwd);
		check(!strcmp(l, w), "cwd link", "'%s' want '%s'", l, w);
		check(!fstat(dd, &st) && !fstatat(dd, "..", &st2, 0) && !stat(cwd, &st) &&
		      st2.st_ino == st.st_ino, "cwd parent", "..");
	} else if (!strcmp(mode, "fifo")) {
		want_stat(fd, S_IFIFO, 0640, 0, 0, "fifo");
		want_link(fd, cwd, "f.fifo (deleted)", "fifo link");
		memset(buf, 0, sizeof(buf));
		check(read(fd2, buf, sizeof(buf)) == 13 && !memcmp(buf, "fifodata-1234", 13),
		      "fifo data", "'%s'", buf);
		check(write(fd, "again", 5) == 5 && read(fd2, buf, sizeof(buf)) == 5 &&
		      !memcmp(buf, "again", 5), "fifo one pipe", "write fd, read fd2");
	} else if (!strcmp(mode, "link")) {
		want_stat(fd, S_IFREG, 0640, 0, 1, "link");
		want_link(fd, cwd, "h1.dat (deleted)", "link link");
		check(!fstat(fd, &st) && !stat("h2.dat", &st2) && st.st_ino == st2.st_ino &&
		      st.st_dev == st2.st_dev, "link inode", "ino %llu, h2.dat %llu",
		      (unsigned long long)st.st_ino, (unsigned long long)st2.st_ino);
		check(lseek(fd, 0, SEEK_CUR) == 5, "link pos", "%lld", (long long)lseek(fd, 0, SEEK_CUR));
		memset(buf, 0, sizeof(buf));
		check(pread(fd, buf, 9, 0) == 9 && !strcmp(buf, "live data"), "link data", "'%s'", buf);
		if (pwrite(fd, "LIVE", 4, 0) == 4) {
			int h = open("h2.dat", O_RDONLY);

			memset(buf, 0, sizeof(buf));
			check(h >= 0 && read(h, buf, 9) == 9 && !strcmp(buf, "LIVE data"),
			      "link same file", "h2.dat reads '%s'", buf);
		}
	} else if (!strcmp(mode, "symlink")) {
		want_stat(fd, S_IFREG, 0644, 0, 1, "symlink target");
		want_link(fd, cwd, "t.dat", "symlink link");
		check(!fstat(fd, &st) && !stat("t.dat", &st2) && st.st_ino == st2.st_ino,
		      "symlink inode", "t.dat");
		memset(buf, 0, sizeof(buf));
		check(read(fd, buf, sizeof(buf)) == 6 && !strcmp(buf, "target"), "symlink data",
		      "'%s'", buf);
	} else if (!strcmp(mode, "dev")) {
		want_stat(fd, S_IFCHR, 0620, 0, 0, "dev");
		want_link(fd, cwd, "n.null (deleted)", "dev link");
		check(!fstat(fd, &st) && st.st_rdev == makedev(1, 3), "dev rdev", "%u:%u",
		      major(st.st_rdev), minor(st.st_rdev));
		check(write(fd, "x", 1) == 1, "dev write", "%s", strerror(errno));
	} else if (!strcmp(mode, "spare")) {
		want_stat(fd, S_IFREG, 0600, 0, 0, "spare");
		want_link(fd, cwd, "g.dat (deleted)", "spare link");
		memset(buf, 0, sizeof(buf));
		check(pread(fd, buf, sizeof(buf), 0) == 7 && !strcmp(buf, "ghostly"), "spare data",
		      "'%s'", buf);
	}
	if (!bad)
		say("done ok\n");
	return bad;
}
