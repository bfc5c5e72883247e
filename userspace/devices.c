// SPDX-License-Identifier: GPL-2.0
/*
 * Character devices ("chr" records): only the standard ones that hold no
 * state worth saving, /dev/null, zero, full, random and urandom.  They are
 * reopened by path, and must still be the same device there.  Terminals,
 * /dev/tty included, are tty.c's (asked first); every other device, and
 * every block device, is refused.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.h"
#include "record.h"
#include "log.h"

static int allowed_chr(unsigned int ma, unsigned int mi)
{
	return ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9);
}

static int dev_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	unsigned int ma = major(p->st.st_rdev), mi = minor(p->st.st_rdev);

	(void)c;
	if (S_ISBLK(p->st.st_mode))
		return fd_refuse(p, "block device %s: not supported", p->link);
	if (!S_ISCHR(p->st.st_mode))
		return FD_OTHER;
	if (!allowed_chr(ma, mi))
		return fd_refuse(p, "character device %s (%u:%u): not supported (only /dev/null, zero, full, random, urandom, and terminals)",
				 p->link, ma, mi);
	f->major = ma;
	f->minor = mi;
	f->path = p->link;
	return FD_DESCRIBED;
}

/* @st is the character device @f records: 1, or 0 (said) */
static int is_dev(const struct tree_file *f, const struct stat *st)
{
	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == f->major && minor(st->st_rdev) == f->minor)
		return 1;
	pr_err("%s is not the character device %u:%u", f->path, f->major, f->minor);
	return 0;
}

static int dev_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	int flags = fd_open_flags(f->flags) | O_NONBLOCK | O_NOCTTY;
	char self[64];
	struct stat st;
	int p, fd;

	/*
	 * Looked at first (O_PATH: opening a device may act, a watchdog
	 * arms itself), then opened through that look, or by path again
	 * where no /proc is mounted, and looked at once more.  Non-blocking
	 * until checked: a path swapped for a FIFO must not block the
	 * restore (fd_set_flags puts the flags back).
	 */
	p = fd_tree_path_open(r->t, f, O_PATH | O_CLOEXEC);
	if (p < 0) {
		pr_perror("cannot open %s", f->path);
		return -1;
	}
	if (fstat(p, &st) || !is_dev(f, &st)) {
		close(p);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
	fd = open(self, flags);
	if (fd < 0 && errno == ENOENT)
		fd = fd_path_open(f->path, flags);
	close(p);
	if (fd < 0) {
		pr_perror("cannot open %s", f->path);
		return -1;
	}
	if (fstat(fd, &st) || !is_dev(f, &st)) {
		close(fd);
		return -1;
	}
	/* O_ASYNC: open() would not register it (fd_open_flags) */
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}


static void dev_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " dev=%u:%u", x->major, x->minor);
	if (x->host)
		fprintf(f, " host=1");
	fd_rec_path(f, x->path);
}

static const char *dev_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (rec_dev(r, "dev", &x->major, &x->minor) || rec_str(r, "path", &x->path) ||
	    (rec_has(r, "host") && REC_NUM(r, "host", 0, 1, x->host)))
		return "bad file record";
	return NULL;
}

static void dev_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	const struct tree_file *f = &t->files[i];

	snprintf(out, size, "chr %u:%u %s %s%s", f->major, f->minor, f->path, mode,
		 f->host ? " (host's, outside the mount namespace)" : "");
}

static void dev_rec_json(const struct tree *t, int i)
{
	printf(",\"major\":%u,\"minor\":%u", t->files[i].major, t->files[i].minor);
	if (t->files[i].host)
		printf(",\"host\":true");
	fd_json_path(t->files[i].path);
}

const struct fd_kind dev_fd_kind = {
	.name = "chr",
	.type = TK_CHR,
	.dump = dev_dump,
	.open = dev_open,
	.rec_write = dev_rec_write,
	.rec_read = dev_rec_read,
	.rec_show = dev_rec_show,
	.rec_json = dev_rec_json,
};
