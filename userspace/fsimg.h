/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contents of a file system (a container's tmpfs mounts) as one image
 * file: every entry's type, mode, owner, times, xattrs, data (sparse stays
 * sparse), symlink target, device number and hard links.
 */
#ifndef IMGCR_FSIMG_H
#define IMGCR_FSIMG_H

#include <stdint.h>

struct fsimg_stats {
	uint64_t limit;		/* in: most bytes of data to save, 0 for no limit */
	uint64_t entries, bytes;	/* out: what was saved */
};

/*
 * The tree under @rootfd (a detached clone of exactly one mount) into
 * @imgfd: 0, or -1 (printed, naming the path).  A file system with more
 * than @st->limit bytes of data, or directories nested deeper than
 * FSIMG_DEPTH_MAX, is refused.  Each file is found with O_PATH and read
 * only if that fd is a regular file (a device node or FIFO put in its
 * place while it runs is never opened): reopened through @procfd
 * (imgcr's /proc, "self/fd/N"), or, if -1, opened O_NONBLOCK|O_NOCTTY
 * and checked to be the same file.
 */
#define FSIMG_DEPTH_MAX	256
int fsimg_dump(int rootfd, int imgfd, int procfd, struct fsimg_stats *st);
/* The image @imgfd into the empty directory @rootfd: 0, or -1 (printed). */
int fsimg_restore(int rootfd, int imgfd);

#endif
