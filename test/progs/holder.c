/*
 * holder KIND FILE: a root process and a child, both appending "PID tick N"
 * to FILE every 50 ms forever, where the child (or, for "zombie", an extra
 * child that is never reaped) holds something imgcr dump refuses:
 *   socket   a unix socket          epoll    an epoll fd (anon inode)
 *   dev      /dev/mem (or /dev/kmsg) console /dev/console (a terminal)
 *   ns       its own UTS namespace  zombie   an unreaped dead child
 *   threads  a second thread        none     nothing (dumpable)
 *   deadmain its main thread exited (pthread_exit), a second thread ticks
 * (zombie and threads are dumpable now.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "common.h"

static int out;

static void tick_forever(void);

static void *tick_fn(void *arg)
{
	(void)arg;
	tick_forever();
	return NULL;
}

static void *thread_fn(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void tick_forever(void)
{
	for (int n = 1;; n++) {
		outf(out, "%d tick %d\n", (int)getpid(), n);
		struct timespec ts = { 0, 50 * 1000 * 1000 }, rem;

		while (nanosleep(&ts, &rem) && errno == EINTR)
			ts = rem;
	}
}

int main(int argc, char **argv)
{
	const char *kind = argc > 2 ? argv[1] : "";
	pid_t p;

	if (argc < 3)
		return 2;
	out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 3;
	if (!strcmp(kind, "zombie")) {
		p = fork();
		if (p == 0)
			_exit(0);
	}
	p = fork();
	if (p < 0)
		return 4;
	if (p == 0) {
		int r = 0;
		pthread_t th;

		if (!strcmp(kind, "socket"))
			r = socket(AF_UNIX, SOCK_DGRAM, 0);
		else if (!strcmp(kind, "epoll"))
			r = epoll_create1(0);
		else if (!strcmp(kind, "dev"))
			r = (r = open("/dev/mem", O_RDONLY)) >= 0 ? r : open("/dev/kmsg", O_RDONLY);
		else if (!strcmp(kind, "console"))
			r = open("/dev/console", O_RDONLY | O_NOCTTY);
		else if (!strcmp(kind, "ns"))
			r = unshare(CLONE_NEWUTS);
		else if (!strcmp(kind, "threads"))
			r = -pthread_create(&th, NULL, thread_fn, NULL);
		else if (!strcmp(kind, "deadmain") && !pthread_create(&th, NULL, tick_fn, NULL))
			pthread_exit(NULL);
		if (r < 0) {
			outf(2, "holder: %s failed: %s\n", kind, errname(errno));
			_exit(5);
		}
		tick_forever();
	}
	tick_forever();
}
