/*
 * statetamper: the state check's negative test (t_statecheck).
 *
 *   statetamper hold OUT     a UDP socket at fd 3 (SO_BROADCAST 0), then
 *                            "ready" to OUT and sleep in a loop
 *   statetamper PID FD       change the state of a (frozen) restored task
 *                            from outside: SO_BROADCAST 1 on its fd FD (a
 *                            copy through pidfd_getfd) and its soft
 *                            RLIMIT_NOFILE to 77 (prlimit)
 *
 * t_statecheck runs the second as the state hook before statesnap, so the
 * check must report both differences.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		int sk = socket(AF_INET, SOCK_DGRAM, 0);
		int fd;

		/* a session of its own, made here: setsid(1) forks when it
		 * is a group leader, and the test's $! would be the parent */
		setsid();
		if (sk < 0 || dup2(sk, 3) != 3) {
			perror("socket");
			return 1;
		}
		if (sk != 3)
			close(sk);
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		outf(fd, "ready\n");
		close(fd);
		for (;;)
			usleep(10000);
	}
	if (argc == 3) {
		pid_t pid = atoi(argv[1]);
		int pfd = syscall(SYS_pidfd_open, pid, 0), one = 1, sk;
		struct rlimit rl;

		/*
		 * Once (6.12 deb13) pidfd_getfd gave EBADF here, not explained:
		 * a few tries, and the target's fds in the message if it fails.
		 */
		for (int i = 0; i < 10; i++) {
			sk = pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, atoi(argv[2]), 0);
			if (sk >= 0 || errno != EBADF)
				break;
			usleep(100000);
		}
		if (sk < 0 || setsockopt(sk, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one))) {
			char cmd[64];

			perror("statetamper: pidfd_getfd/setsockopt");
			snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd >&2", (int)pid);
			if (system(cmd))
				fprintf(stderr, "statetamper: cannot list /proc/%d/fd\n", (int)pid);
			return 1;
		}
		if (prlimit(pid, RLIMIT_NOFILE, NULL, &rl))
			return 1;
		rl.rlim_cur = 77;
		if (prlimit(pid, RLIMIT_NOFILE, &rl, NULL)) {
			perror("statetamper: prlimit");
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: statetamper hold OUT | statetamper PID FD\n");
	return 2;
}
