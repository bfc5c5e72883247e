// SPDX-License-Identifier: GPL-2.0
/*
 * Regular files and directories ("file" records): reopened by their path
 * with their flags, then seeked to their offset.  The path is the one
 * /proc/PID/fd shows: a deleted file, or one outside the dumper's root, is
 * refused.  The file's content is not saved: it must be there at restore.
 *
 * O_PATH descriptors (fdinfo flags with 010000000) are reopened with their
 * flags as they are: O_PATH, and O_NOFOLLOW for one that refers to a
 * symbolic link itself, O_DIRECTORY...  (fd_open_flags() drops only
 * O_CREAT, O_EXCL, O_TRUNC, O_NOCTTY).  They may refer to anything with a
 * path: files, directories, symlinks, devices, FIFOs, sockets (nothing of
 * which is opened).
 *
 * A directory's offset is restored with lseek: the next getdents
 * continues from that cookie (a hash on ext4, an index or offset on
 * tmpfs), which is where it was if the directory has not changed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "log.h"

static int reg_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	(void)c;
	if (!S_ISREG(p->st.st_mode) && !S_ISDIR(p->st.st_mode) && !(p->flags & O_PATH))
		return FD_OTHER;
	if (p->link[0] != '/' || strstr(p->link, " (deleted)"))
		return fd_refuse(p, "%s: deleted or unreachable files are not supported", p->link);
	f->path = p->link;
	return FD_DESCRIBED;
}

static int reg_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	int fd;

	(void)what;
	fd = fd_reopen(f);
	if (fd < 0)
		return -1;
	if (f->pos && !(f->flags & O_PATH) && lseek(fd, f->pos, SEEK_SET) != f->pos) {
		pr_perror("%s: cannot seek to %lld", f->path, f->pos);
		close(fd);
		return -1;
	}
	return fd;
}

const struct fd_kind reg_fd_kind = {
	.name = "file",
	.type = TK_FILE,
	.dump = reg_dump,
	.open = reg_open,
};
