/*
 * lockprobe FILE MODE ...: look at (or hold) the locks on FILE from
 * another process.
 *   posix START LEN    F_GETLK for a write lock: "W PID", "R PID" or "U"
 *   ofd START LEN      the same with F_OFD_GETLK (PID -1 for OFD locks)
 *   flock              "busy" if LOCK_EX|LOCK_NB fails, else "free"
 *   hold-flock         take LOCK_EX, print "held", sleep until killed
 *   hold-posix START LEN  take a POSIX write lock, print "held", sleep
 *   hold-ofd START LEN    the same with an OFD write lock (F_OFD_SETLK)
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/file.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd;

	if (argc < 3)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		say("error %s\n", errname(errno));
		return 1;
	}
	if (argc == 5) {
		fl.l_start = atol(argv[3]);
		fl.l_len = atol(argv[4]);
	}
	if (!strcmp(argv[2], "flock")) {
		say("%s\n", flock(fd, LOCK_EX | LOCK_NB) ? "busy" : "free");
		return 0;
	}
	if (!strncmp(argv[2], "hold-", 5)) {
		if (!strcmp(argv[2], "hold-flock") ? flock(fd, LOCK_EX | LOCK_NB) :
		    fcntl(fd, !strcmp(argv[2], "hold-ofd") ? F_OFD_SETLK : F_SETLK, &fl)) {
			say("error %s\n", errname(errno));
			return 1;
		}
		say("held\n");
		for (;;)
			pause();
	}
	if (fcntl(fd, !strcmp(argv[2], "ofd") ? F_OFD_GETLK : F_GETLK, &fl)) {
		say("error %s\n", errname(errno));
		return 1;
	}
	if (fl.l_type == F_UNLCK)
		say("U\n");
	else
		say("%c %d\n", fl.l_type == F_WRLCK ? 'W' : 'R', fl.l_pid);
	return 0;
}
