// SPDX-License-Identifier: GPL-2.0
/*
 * nsowner PID KIND...: for each namespace KIND (as in /proc/PID/ns/KIND)
 * of PID, the inode of the user namespace that owns it (ioctl
 * NS_GET_USERNS), one line "KIND INODE"; and "user INODE" for PID's own
 * user namespace.  t_ct_userns compares them: every namespace of a
 * restored container must be owned by its user namespace.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long long ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (unsigned long long)st.st_ino;
}

int main(int argc, char **argv)
{
	char path[128];
	int i, fd, u;

	if (argc < 3) {
		fprintf(stderr, "usage: nsowner PID KIND...\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%s/ns/user", argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	printf("user %llu\n", ino_of(fd));
	close(fd);
	for (i = 2; i < argc; i++) {
		snprintf(path, sizeof(path), "/proc/%s/ns/%s", argv[1], argv[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		u = fd < 0 ? -1 : ioctl(fd, NS_GET_USERNS);
		if (u < 0) {
			perror(path);
			return 1;
		}
		printf("%s %llu\n", argv[i], ino_of(u));
		close(u);
		close(fd);
	}
	return 0;
}
