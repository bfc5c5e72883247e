/*
 * inowatch PATH: an inotify watch on the directory PATH (IN_CREATE), as a
 * program in a container sees it.  Prints "ready wd=N", then one line per
 * event, "event wd=N mask=0xX name=S", until killed.  Lines go out at once
 * (no stdio buffering): the test reads them from a file.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd, wd;
	ssize_t n, i;

	if (argc != 2)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	fd = inotify_init1(IN_CLOEXEC);
	wd = fd < 0 ? -1 : inotify_add_watch(fd, argv[1], IN_CREATE);
	if (wd < 0) {
		perror("inowatch");
		return 1;
	}
	printf("ready wd=%d\n", wd);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		for (i = 0; i < n;) {
			struct inotify_event *e = (struct inotify_event *)(buf + i);

			printf("event wd=%d mask=0x%x name=%s\n", e->wd, e->mask,
			       e->len ? e->name : "");
			i += sizeof(*e) + e->len;
		}
	}
}
