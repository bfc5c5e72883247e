/*
 * edges MODE: where two kinds of state meet (t_tree_edges.sh).
 *   memlock  a memfd with a POSIX write lock on bytes 0-9 and 16 bytes
 *            "memfd-lock-data!"; prints "fd N", "ready", then "tick I"
 *            every 100 ms; on SIGUSR1 checks its data, "check ok"/"check bad"
 *   opath    a unix socket bound to ./sock, closed; an O_PATH fd of ./sock;
 *            prints "fd N", "ready", ticks; on SIGUSR1 checks that fd N is
 *            an O_PATH fd of a socket file: "check ok"/"check bad"
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static int check_memfd(int fd)
{
	char buf[17] = { 0 };

	return pread(fd, buf, 16, 0) == 16 && !strcmp(buf, "memfd-lock-data!");
}

static int check_opath(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_PATH) && !fstat(fd, &st) && S_ISSOCK(st.st_mode);
}

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 10 };
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int fd, memlock, i;

	if (argc != 2)
		return 2;
	memlock = !strcmp(argv[1], "memlock");
	if (memlock) {
		fd = memfd_create("locked", 0);
		if (fd < 0 || write(fd, "memfd-lock-data!", 16) != 16 || fcntl(fd, F_SETLK, &fl))
			return 1;
	} else {
		struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "sock" };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)))
			return 1;
		close(s);
		fd = open("sock", O_PATH);
		if (fd < 0)
			return 1;
	}
	signal(SIGUSR1, on_usr1);
	say("fd %d\n", fd);
	say("ready\n");
	for (i = 0;; i++) {
		if (usr1) {
			usr1 = 0;
			say("check %s\n", (memlock ? check_memfd(fd) : check_opath(fd)) ? "ok" : "bad");
		}
		say("tick %d\n", i);
		nanosleep(&ts, NULL);
	}
}
