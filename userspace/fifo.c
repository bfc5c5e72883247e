// SPDX-License-Identifier: GPL-2.0
/*
 * Named pipes ("fifo" records): an S_ISFIFO fd that is not on pipefs.  Its
 * buffered data is saved and refilled as a pipe's (pipes.c), under its
 * inode number.  At restore it is reopened by its path: the first file of
 * a FIFO opens it O_RDWR (which never blocks on a FIFO, whether or not
 * it has readers or writers), refills it and keeps that fd until every
 * file is open; each file of the FIFO is a new open file description of
 * it, through /proc/self/fd.  Like a pipe, a FIFO of the tree must not be
 * open outside it (pipes.c checks both).
 *
 * A deleted FIFO (its link ends in " (deleted)") has a ghost record of type
 * fifo (files-ghost.c; the file record says "ghost=DEV"): the restore makes
 * it again with mkfifo at its path (or a free name in its directory), opens
 * it O_RDWR there, refills it, gives it its mode, owner and mtime, and
 * unlinks it under its name once every file is open, as for a deleted
 * regular file.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/magic.h>

#include "files.h"
#include "log.h"
#include "pipes.h"
#include "record.h"

#define DELETED " (deleted)"

static int fifo_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	size_t len, dl = strlen(DELETED);

	if (!S_ISFIFO(p->st.st_mode))
		return FD_OTHER;
	if (pipe_open_fd(p))
		return FD_FAILED;
	if (p->fs_type == PIPEFS_MAGIC)
		return FD_OTHER;	/* an anonymous pipe */
	f->ino = p->st.st_ino;
	if (p->link[0] != '/')
		return fd_refuse(p, "FIFO %s: unreachable FIFOs are not supported", p->link);
	len = strlen(p->link);
	if (len > dl && !strcmp(p->link + len - dl, DELETED)) {
		/* deleted: made again from its ghost record, and unlinked (files-ghost.c) */
		int r = ghost_dump_fifo(c, p);

		if (r != FD_DESCRIBED)
			return r;
		f->ghost = 1;	/* the driver sets f->dev */
	}
	if (pipe_save_data(c, p, f->ino))
		return FD_FAILED;
	f->path = p->link;	/* a deleted one's with " (deleted)", as other processes see it */
	return FD_DESCRIBED;
}

/* Files @a and @b are opens of one FIFO. */
static int same_fifo(const struct tree_file *a, const struct tree_file *b)
{
	return a->kind == TK_FIFO && b->kind == TK_FIFO && a->ino == b->ino &&
	       !strcmp(a->path, b->path);
}

static int fifo_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree *t = r->t;
	const struct tree_file *f = &t->files[i];
	int first;

	for (first = 0; first < i && !same_fifo(&t->files[first], f); first++)
		;
	if (first == i && f->ghost) {
		/* deleted: made again (mkfifo), opened O_RDWR, unlinked (files-ghost.c) */
		struct tree_ghost *g = tree_ghost_find(t, f->dev, f->ino);

		if (ghost_make_now(t, r->dirfd, g))
			return -1;
		r->keep[i][0] = fd_high(dup(g->made_fd), r->base);
		if (r->keep[i][0] < 0 || pipe_refill(r, r->keep[i][0], f->ino, what))
			return -1;
	} else if (first == i) {
		/*
		 * Looked at before it is opened (O_PATH, no magic links: the
		 * path is resolved as root, maybe in the restored container's
		 * mount namespace): opening a device node may act (a watchdog),
		 * and the path may have become a regular file, never to be
		 * filled.  Then opened for real through that look, or by path
		 * again where no /proc is mounted, and looked at once more.
		 */
		int p = fd_tree_path_open(t, f, O_PATH | O_CLOEXEC), a = -1;
		struct stat st;
		char self[64];

		if (p < 0) {
			pr_perror("cannot open FIFO %s", f->path);
			return -1;
		}
		if (!fstat(p, &st) && S_ISFIFO(st.st_mode)) {
			snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
			a = open(self, O_RDWR | O_NONBLOCK | O_CLOEXEC);
			if (a < 0 && errno == ENOENT)
				a = fd_path_open(f->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
			if (a < 0) {
				pr_perror("cannot open FIFO %s", f->path);
				close(p);
				return -1;
			}
		}
		close(p);
		if (a < 0 || fstat(a, &st) || !S_ISFIFO(st.st_mode)) {
			pr_err("%s is no longer a FIFO", f->path);
			if (a >= 0)
				close(a);
			return -1;
		}
		r->keep[i][0] = fd_high(a, r->base);
		if (pipe_refill(r, r->keep[i][0], f->ino, what))
			return -1;
	}
	return pipe_opened(pipe_reopen(r->keep[first][0], f->flags), f->flags, what);
}


static void fifo_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " ino=%lu", x->ino);
	if (x->ghost)	/* deleted: its ghost record is DEV INO */
		fprintf(f, " ghost=%llu", x->dev);
	fd_rec_path(f, x->path);
}

static const char *fifo_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	const struct tree_ghost *g;

	if (REC_NUM(r, "ino", 0, LLONG_MAX, x->ino) || rec_str(r, "path", &x->path))
		return "bad file record";
	if (rec_has(r, "ghost") && (x->ghost = 1) &&
	    (rec_unum(r, "ghost", &x->dev) ||
	     !(g = tree_ghost_find(t, x->dev, x->ino)) || g->type != GHOST_FIFO))
		return "fifo file without its ghost record";
	return NULL;
}

static void fifo_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	snprintf(out, size, "fifo %s %s", t->files[i].path, mode);
}

static void fifo_rec_json(const struct tree *t, int i)
{
	printf(",\"ino\":%lu", t->files[i].ino);
	if (t->files[i].ghost)
		printf(",\"ghost_dev\":%llu", t->files[i].dev);
	fd_json_path(t->files[i].path);
}

const struct fd_kind fifo_fd_kind = {
	.name = "fifo",
	.type = TK_FIFO,
	.dump = fifo_dump,
	.open = fifo_open,
	.rec_write = fifo_rec_write,
	.rec_read = fifo_rec_read,
	.rec_show = fifo_rec_show,
	.rec_json = fifo_rec_json,
};
