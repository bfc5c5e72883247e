// SPDX-License-Identifier: GPL-2.0
/*
 * eventfds ("eventfd" records): the counter and EFD_SEMAPHORE, from
 * /proc/PID/fdinfo ("eventfd-count:", hex; "eventfd-semaphore:"), and the
 * file status flags (O_NONBLOCK...).  At restore a new eventfd with that
 * counter: every fd that shared the description (in one task or several)
 * shares the new one, but a reader or writer outside the tree is no
 * longer connected to it.
 *
 * Kernels before 6.6 (Debian's 6.1) do not print eventfd-semaphore.  There
 * dump asks the eventfd itself, through a duplicate (pidfd_getfd) while
 * the tree is frozen: with the counter raised to at least 2, one read(2)
 * takes 1 from a semaphore and everything from the others; the counter is
 * then put back as it was.  Readers and pollers outside the tree may see
 * it move meanwhile (a wake-up, like a write and a read).
 */
#include <limits.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "files.h"
#include "record.h"
#include "log.h"
#include "proc.h"

static int rw8(int fd, int wr, uint64_t *v)
{
	ssize_t n = wr ? write(fd, v, sizeof(*v)) : read(fd, v, sizeof(*v));

	return n == sizeof(*v) ? 0 : -1;
}

/* Whether the eventfd of @p, whose counter is @count, is a semaphore: 1, 0, or -1 (printed). */
static int probe_semaphore(const struct fd_parms *p, unsigned long long count)
{
	uint64_t add = count < 2 ? 2 - count : 0, got, v;
	int fd = fd_steal(p), sem = -1;
	unsigned int i;

	if (fd < 0) {
		pr_perror("pid %d fd %d: eventfd: this kernel does not say whether it is a semaphore, and pidfd_getfd to ask it failed",
			  p->pid, p->fd);
		return -1;
	}
	/* never blocks: the counter is at least 1 before each read, at most count + 2 */
	if ((add && rw8(fd, 1, &add)) || rw8(fd, 0, &got))
		goto out;
	sem = got == 1;
	if (sem && !add) {
		v = 1;
		if (rw8(fd, 1, &v))
			goto out;
	}
	for (i = 1; sem && i < add; i++)
		if (rw8(fd, 0, &v))
			goto out;
	if (!sem && count) {
		v = count;
		if (rw8(fd, 1, &v))
			goto out;
	}
	close(fd);
	return sem;
out:
	pr_perror("pid %d fd %d: eventfd: probing for EFD_SEMAPHORE (the counter may have changed)",
		  p->pid, p->fd);
	close(fd);
	return -1;
}

static int eventfd_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	const char *count, *sem;
	char *info, *end;
	int ret = FD_FAILED;

	(void)c;
	if (strcmp(p->link, "anon_inode:[eventfd]"))
		return FD_OTHER;
	info = fd_info(p);
	if (!info)
		return FD_FAILED;
	count = status_field(info, "eventfd-count");
	sem = status_field(info, "eventfd-semaphore");
	if (!count) {
		pr_err("pid %d fd %d: eventfd: no eventfd-count in its fdinfo", p->pid, p->fd);
		goto out;
	}
	errno = 0;
	f->count = strtoull(count, &end, 16);
	if (errno || end == count || f->count == ~0ULL) {
		pr_err("pid %d fd %d: eventfd: cannot parse eventfd-count", p->pid, p->fd);
		goto out;
	}
	f->semaphore = sem ? *sem == '1' : probe_semaphore(p, f->count);
	if (f->semaphore >= 0)
		ret = FD_DESCRIBED;
out:
	free(info);
	return ret;
}

static int eventfd_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	uint64_t v = f->count;
	int fd;

	fd = eventfd(0, EFD_CLOEXEC | (f->semaphore ? EFD_SEMAPHORE : 0));
	if (fd < 0) {
		pr_perror("%s: eventfd", what);
		return -1;
	}
	/* write(2), not eventfd()'s initval: the counter is 64-bit */
	if (v && rw8(fd, 1, &v)) {
		pr_perror("%s: cannot set the counter to %llu", what, f->count);
		close(fd);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}


static void eventfd_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " count=%llu semaphore=%d", x->count, x->semaphore);
}

static const char *eventfd_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (rec_unum(r, "count", &x->count) || x->count == ~0ULL ||
	    REC_NUM(r, "semaphore", 0, 1, x->semaphore))
		return "bad file record";
	return NULL;
}

static void eventfd_rec_show(const struct tree *t, int i, const char *mode, char *out,
			     size_t size)
{
	(void)mode;
	snprintf(out, size, "eventfd count %llu%s", t->files[i].count,
		 t->files[i].semaphore ? " semaphore" : "");
}

static void eventfd_rec_json(const struct tree *t, int i)
{
	printf(",\"count\":%llu,\"semaphore\":%s", t->files[i].count,
	       t->files[i].semaphore ? "true" : "false");
}

const struct fd_kind eventfd_fd_kind = {
	.name = "eventfd",
	.type = TK_EVENTFD,
	.dump = eventfd_dump,
	.open = eventfd_open,
	.rec_write = eventfd_rec_write,
	.rec_read = eventfd_rec_read,
	.rec_show = eventfd_rec_show,
	.rec_json = eventfd_rec_json,
};
