// SPDX-License-Identifier: GPL-2.0
/*
 * test/unit/fsimg.sh's driver: "dump DIR IMG [LIMIT]" saves DIR (one
 * mount) into IMG, "restore DIR IMG" writes IMG into the empty DIR, with
 * userspace/fsimg.c.  Exit status 0 or 1; imgcr's messages on stderr.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsimg.h"

int main(int argc, char **argv)
{
	struct fsimg_stats st = { 0 };
	int dir, img, ret;

	if (argc < 4)
		return 2;
	dir = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "dump")) {
		img = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (argc > 4)
			st.limit = strtoull(argv[4], NULL, 0);
		if (img < 0) {
			perror(argv[3]);
			return 1;
		}
		ret = fsimg_dump(dir, img, open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC), &st);
		if (!ret)
			printf("entries=%" PRIu64 " bytes=%" PRIu64 "\n", st.entries, st.bytes);
	} else {
		img = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (img < 0) {
			perror(argv[3]);
			return 1;
		}
		ret = fsimg_restore(dir, img);
	}
	return ret ? 1 : 0;
}
