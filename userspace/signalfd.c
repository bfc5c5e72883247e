// SPDX-License-Identifier: GPL-2.0
/*
 * signalfds ("signalfd" records): the set of signals it reads, from
 * /proc/PID/fdinfo ("sigmask:", hex, bit N-1 for signal N), and the file
 * status flags (O_NONBLOCK...).  A signalfd holds nothing else: it reads
 * the pending signals of whichever task reads it, and those are part of
 * each task's image.  Recreated with signalfd4(2) directly, which takes
 * the 64-bit mask as it is (glibc's sigaddset refuses its own signals 32
 * and 33).
 */
#include <limits.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "proc.h"
#include "record.h"

static int signalfd_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	const char *mask;
	char *info, *end;
	int ret = FD_FAILED;

	(void)c;
	if (strcmp(p->link, "anon_inode:[signalfd]"))
		return FD_OTHER;
	info = fd_info(p);
	if (!info)
		return FD_FAILED;
	mask = status_field(info, "sigmask");
	if (mask) {
		errno = 0;
		f->sigmask = strtoull(mask, &end, 16);
		if (!errno && end != mask && (*end == '\n' || !*end))
			ret = FD_DESCRIBED;
	}
	if (ret != FD_DESCRIBED)
		pr_err("pid %d fd %d: signalfd: no sigmask in its fdinfo, or unparsable", p->pid,
		       p->fd);
	free(info);
	return ret;
}

static int signalfd_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	uint64_t mask = f->sigmask;
	int fd;

	fd = syscall(SYS_signalfd4, -1, &mask, sizeof(mask),
		     SFD_CLOEXEC | (f->flags & O_NONBLOCK ? SFD_NONBLOCK : 0));
	if (fd < 0) {
		pr_perror("%s: signalfd with mask 0x%llx", what, f->sigmask);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}


static void signalfd_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " sigmask=0x%llx", x->sigmask);
}

static const char *signalfd_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (rec_unum(r, "sigmask", &x->sigmask))
		return "bad file record";
	return NULL;
}

static void signalfd_rec_show(const struct tree *t, int i, const char *mode, char *out,
			      size_t size)
{
	(void)mode;
	snprintf(out, size, "signalfd sigmask 0x%llx", t->files[i].sigmask);
}

static void signalfd_rec_json(const struct tree *t, int i)
{
	printf(",\"sigmask\":%llu", t->files[i].sigmask);
}

const struct fd_kind signalfd_fd_kind = {
	.name = "signalfd",
	.type = TK_SIGNALFD,
	.dump = signalfd_dump,
	.open = signalfd_open,
	.rec_write = signalfd_rec_write,
	.rec_read = signalfd_rec_read,
	.rec_show = signalfd_rec_show,
	.rec_json = signalfd_rec_json,
};
