/*
 * dumpto PID OUT [wait]: the image of stopped task PID written to OUT by
 * the module itself (ioctl IMGCR_IOC_DUMP_TO on /proc/PID/dump), the route
 * imgcr dump takes.  With "wait": /proc/PID/dump is opened, "opened" is
 * printed, and the ioctl waits for SIGUSR1 (so a test can let the task run
 * in between).  OUT "-pipe": a pipe as the target (must be refused);
 * "-ro": OUT opened read-only; "-append": a file opened O_APPEND (must be
 * refused: the image is written at an offset).  Prints "written N" or "dumpto: ERRNAME";
 * exit 0 on success, 2 if the ioctl failed.  With DUMPTO_TIMES in the
 * environment, also "times open_ms=A ioctl_ms=B close_ms=C" on stderr:
 * open() (pins the pages), the ioctl (writes them) and close() (unpins).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "common.h"
#include "../../include/uapi/linux/imgcr.h"

static volatile sig_atomic_t go;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	char path[64];
	int in, out, pfd[2];
	sigset_t usr1, old;

	if (argc < 3) {
		outf(2, "usage: dumpto PID OUT [wait]\n");
		return 64;
	}
	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	snprintf(path, sizeof(path), "/proc/%s/dump", argv[1]);
	double t0 = now_ms();
	in = open(path, O_RDONLY);
	double t1 = now_ms();
	if (in < 0) {
		outf(1, "dumpto: open %s: %s\n", path, errname(errno));
		return 1;
	}
	if (!strcmp(argv[2], "-pipe")) {
		if (pipe(pfd))
			return 1;
		out = pfd[1];
	} else if (!strcmp(argv[2], "-append")) {
		out = open("append.img", O_WRONLY | O_CREAT | O_APPEND, 0600);
	} else if (!strcmp(argv[2], "-ro")) {
		out = open("/proc/self/exe", O_RDONLY);
	} else {
		out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0700);
	}
	if (out < 0) {
		outf(1, "dumpto: open %s: %s\n", argv[2], errname(errno));
		return 1;
	}
	if (argc > 3 && !strcmp(argv[3], "wait")) {
		outf(1, "opened\n");
		while (!go)
			sigsuspend(&old);
	}
	struct imgcr_dump_to to = { .fd = out };
	double t2 = now_ms();
	if (ioctl(in, IMGCR_IOC_DUMP_TO, &to)) {
		outf(1, "dumpto: %s\n", errname(errno));
		return 2;
	}
	double t3 = now_ms();
	close(in);
	double t4 = now_ms();
	if (getenv("DUMPTO_TIMES"))
		outf(2, "times open_ms=%.0f ioctl_ms=%.0f close_ms=%.0f\n",
		     t1 - t0, t3 - t2, t4 - t3);
	outf(1, "written %llu\n", (unsigned long long)to.written);
	return 0;
}
