/*
 * flagfds MNT: file status flags and another mount point across dump +
 * restore.  Opens in the cwd (each file 5 bytes "hello"):
 *   ap.dat O_WRONLY|O_APPEND        nb.dat O_RDONLY|O_NONBLOCK
 *   na.dat O_RDONLY|O_NOATIME       sy.dat O_RDWR|O_SYNC
 *   ds.dat O_WRONLY|O_DSYNC         as.dat O_RDONLY, then F_SETFL O_NONBLOCK
 *   di.dat O_RDWR|O_DIRECT (if the filesystem takes it: else "nodirect")
 *   "."    O_RDONLY|O_DIRECTORY
 * and MNT/m.dat O_RDWR at offset 3.  Each fd is seeked to 2 (but the
 * directory and m.dat).  Prints "fd NAME N" per fd and "ready", waits until
 * the file "restored" appears, then checks (ok/BAD) that F_GETFL and the
 * offset of every fd are what they were, and that m.dat is on MNT's
 * filesystem (st_dev of MNT).  "done ok" and exit 0 if all passed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define COMMON_CHECK
#include "common.h"

struct f {
	const char *name;
	int flags, setfl;
	int fd, fl;
	long long pos;
};

int main(int argc, char **argv)
{
	static char mpath[4096];
	struct f fs[] = {
		{ "ap.dat", O_WRONLY | O_APPEND, 0, 0, 0, 0 },
		{ "nb.dat", O_RDONLY | O_NONBLOCK, 0, 0, 0, 0 },
		{ "na.dat", O_RDONLY | O_NOATIME, 0, 0, 0, 0 },
		{ "sy.dat", O_RDWR | O_SYNC, 0, 0, 0, 0 },
		{ "ds.dat", O_WRONLY | O_DSYNC, 0, 0, 0, 0 },
		{ "as.dat", O_RDONLY, O_NONBLOCK, 0, 0, 0 },
		{ "di.dat", O_RDWR | O_DIRECT, 0, 0, 0, 0 },
		{ ".", O_RDONLY | O_DIRECTORY, 0, 0, 0, 0 },
		{ mpath, O_RDWR, 0, 0, 0, 0 },
	};
	int n = sizeof(fs) / sizeof(fs[0]), i, fd;
	struct stat st, sm;

	if (argc != 2)
		return 2;
	snprintf(mpath, sizeof(mpath), "%s/m.dat", argv[1]);
	for (i = 0; i < n; i++) {
		if (fs[i].name[0] != '.') {
			fd = open(fs[i].name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, "hello", 5) != 5) {
				say("BAD setup %s: %s\n", fs[i].name, strerror(errno));
				return 1;
			}
			close(fd);
		}
		fs[i].fd = open(fs[i].name, fs[i].flags);
		if (fs[i].fd < 0 && (fs[i].flags & O_DIRECT) && errno == EINVAL) {
			say("nodirect\n");
			continue;
		}
		if (fs[i].fd < 0 || (fs[i].setfl && fcntl(fs[i].fd, F_SETFL,
							fcntl(fs[i].fd, F_GETFL) | fs[i].setfl))) {
			say("BAD setup %s: %s\n", fs[i].name, strerror(errno));
			return 1;
		}
		if (fs[i].name == mpath)
			lseek(fs[i].fd, 3, SEEK_SET);
		else if (fs[i].name[0] != '.')
			lseek(fs[i].fd, 2, SEEK_SET);
		fs[i].fl = fcntl(fs[i].fd, F_GETFL);
		fs[i].pos = lseek(fs[i].fd, 0, SEEK_CUR);
		say("fd %s %d\n", fs[i].name == mpath ? "m.dat" : fs[i].name, fs[i].fd);
	}
	say("ready\n");
	while (stat("restored", &st)) {
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
	}
	for (i = 0; i < n; i++) {
		int fl;

		if (fs[i].fd < 0)
			continue;
		fl = fcntl(fs[i].fd, F_GETFL);
		check(fl == fs[i].fl, fs[i].name, "F_GETFL 0%o (was 0%o)", fl, fs[i].fl);
		check(lseek(fs[i].fd, 0, SEEK_CUR) == fs[i].pos, fs[i].name, "offset %lld (was %lld)",
		      (long long)lseek(fs[i].fd, 0, SEEK_CUR), fs[i].pos);
	}
	check(!fstat(fs[n - 1].fd, &st) && !stat(argv[1], &sm) && st.st_dev == sm.st_dev,
	      "m.dat on the mount", "dev %lx, %s dev %lx", (long)st.st_dev, argv[1], (long)sm.st_dev);
	say("done %s\n", bad ? "BAD" : "ok");
	return bad;
}
