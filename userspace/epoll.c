// SPDX-License-Identifier: GPL-2.0
/*
 * epoll instances ("epoll" records, one "epitem" record per watched fd):
 * every item with its events mask (EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE,
 * EPOLLWAKEUP included) and its data, from /proc/PID/fdinfo ("tfd: N
 * events: X data: X ...").
 *
 * The kernel keys an item by (file, fd number): the program later calls
 * epoll_ctl(MOD/DEL) with its own fd number, so the item must be
 * registered again under that number, for the same open file description.
 * The restorer, which opens every description at other numbers, only
 * creates the empty epoll instance; each item is added by one task of the
 * tree, after its fds are in place and before its exec (the late hook in
 * restore.c), a task that holds the epoll and, at the item's fd number,
 * the file the item watches.  Dump finds that task with
 * kcmp(KCMP_EPOLL_TFD), over every task holding the epoll (an epoll shared
 * between processes is one description; its items may come from any of
 * them).
 *
 * Decisions:
 * - An item whose fd number no longer refers to its file in any task that
 *   holds the epoll (closed, or dup2'ed over, while the file stays open at
 *   another number or in another task): dump looks for the file among
 *   every fd of the tree (kcmp(KCMP_EPOLL_TFD) from each of them) and
 *   records it ("epitem ... via=FILE").  At restore the registering task
 *   puts that file at the item's number for a moment (dup2 of the
 *   restorer's description, which every task holds until its exec), adds
 *   the item under that number, and puts back what was there (or closes
 *   it): the item is keyed by the same (file, number) as at dump, so the
 *   program's epoll_ctl(MOD/DEL) on that number fails (or hits the other
 *   item of that number) as it did.  A file open only outside the tree
 *   is refused, naming the task, the epoll fd and the number.  (A file
 *   open nowhere else is not kept by the epoll: its last close removes
 *   the item, so kcmp(KCMP_EPOLL_TFD) only ever finds files that are
 *   open somewhere.)
 * - An epoll watching another epoll: the items are added in the order of
 *   the records, which does not matter: an epoll can be added to another
 *   before or after its own items (the dump had no loop, so neither has
 *   the restore).
 * - A disarmed EPOLLONESHOT item (fired: its events are only EPOLLONESHOT
 *   and the other flag bits) cannot be added disarmed: epoll_ctl always
 *   adds EPOLLERR|EPOLLHUP.  So its task adds it first, before its other
 *   items, armed for every event, and fires it with epoll_wait(timeout 0):
 *   reported, it is disarmed as it was.  A target ready for nothing (a
 *   timerfd not expired...) does not fire: the item is then set to
 *   EPOLLONESHOT|EPOLLERR|EPOLLHUP, which only an error or hang-up of its
 *   target would report.  (For an epoll shared with other tasks that
 *   register items at the same time, that epoll_wait could take one of
 *   theirs: a level-triggered one is reported again, an edge-triggered or
 *   one-shot one would be lost.)
 * - Events ready at dump are not saved: adding an item polls its target,
 *   so the kernel rebuilds the ready list from the restored targets'
 *   state (a readable pipe, a non-zero eventfd, ...).  An edge-triggered
 *   item already reported and not yet drained is reported once more.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "files.h"
#include "log.h"
#include "proc.h"
#include "record.h"

static int epoll_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	(void)c;
	(void)f;
	if (strcmp(p->link, "anon_inode:[eventpoll]"))
		return FD_OTHER;
	return FD_DESCRIBED;	/* the items: epoll_check, once every task is described */
}

/*
 * The task of @t holding epoll file @fi at some fd, and at @tfd the file
 * of its item (@tfd, @toff-th of that number); 0 if none, -1 (printed).
 */
static pid_t registrar(const struct tree *t, int fi, int tfd, int toff)
{
	const struct tree_file *f = &t->files[fi];
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		for (j = 0; j < k->nfds; j++) {
			struct kcmp_epoll_slot slot = {
				.efd = k->fds[j].fd, .tfd = tfd, .toff = toff,
			};
			long r;

			if (k->fds[j].file != fi)
				continue;
			r = syscall(SYS_kcmp, k->pid, k->pid, KCMP_EPOLL_TFD, tfd,
				    (unsigned long)&slot);
			if (!r)
				return k->pid;
			if (r < 0 && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
				pr_perror("pid %d fd %d: epoll: kcmp(KCMP_EPOLL_TFD), needed to find its watched files",
					  f->pid, f->fd);
				return -1;
			}
			break;	/* EBADF: no fd tfd; else another file: next task */
		}
	}
	return 0;
}

/*
 * The file of the tree that item (@tfd, @toff-th of that number) of epoll
 * file @fi is, looked for among every fd of the tree (its number @tfd no
 * longer names it); its index, -2 if none, -1 (printed).
 */
static int target_file(const struct tree *t, int fi, int tfd, int toff)
{
	const struct tree_file *f = &t->files[fi];
	const struct tree_task *h = NULL;
	struct kcmp_epoll_slot slot = { .tfd = tfd, .toff = toff };
	int i, j;

	/* a task that holds the epoll: the slot is read in it */
	for (i = 0; i < t->ntasks && !h; i++)
		for (j = 0; j < t->tasks[i].nfds && !h; j++)
			if (t->tasks[i].fds[j].file == fi) {
				h = &t->tasks[i];
				slot.efd = h->fds[j].fd;
			}
	if (!h)
		return -2;
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		for (j = 0; j < k->nfds; j++) {
			long r = syscall(SYS_kcmp, k->pid, h->pid, KCMP_EPOLL_TFD, k->fds[j].fd,
					 (unsigned long)&slot);

			if (!r)
				return k->fds[j].file;
			if (r < 0 && errno != EBADF && errno != ENOENT) {
				pr_perror("pid %d fd %d: epoll: kcmp(KCMP_EPOLL_TFD) of its item fd %d with fd %d of pid %d",
					  f->pid, f->fd, tfd, k->fds[j].fd, k->pid);
				return -1;
			}
		}
	}
	return -2;
}

/* Every epoll file's items, once every task's fds are known. */
static int epoll_check(const struct tree *ct)
{
	/* the items go into the tree: the check hook has it const */
	struct tree *t = (struct tree *)ct;
	int i, ret = 0;

	for (i = 0; i < t->nfiles && !ret; i++) {
		const struct tree_file *f = &t->files[i];
		struct fd_parms p = { .pid = f->pid, .fd = f->fd };
		char *info, *line, *save = NULL;
		int n = 0, tfds[4096];

		if (f->kind != TK_EPOLL)
			continue;
		info = fd_info(&p);
		if (!info)
			return -1;
		for (line = strtok_r(info, "\n", &save); line && !ret;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int ev;
			unsigned long long data;
			int tfd, toff = 0, j, other;
			struct tree_item *it;
			pid_t who;

			if (strncmp(line, "tfd:", 4))
				continue;
			if (sscanf(line, "tfd: %d events: %x data: %llx", &tfd, &ev, &data) != 3 ||
			    tfd < 0) {
				pr_err("pid %d fd %d: epoll: cannot parse its fdinfo line '%s'",
				       f->pid, f->fd, line);
				ret = -1;
				break;
			}
			if (n == (int)(sizeof(tfds) / sizeof(tfds[0]))) {
				pr_err("pid %d fd %d: epoll: more than %d items: not supported",
				       f->pid, f->fd, n);
				ret = -1;
				break;
			}
			for (j = 0; j < n; j++)
				toff += tfds[j] == tfd;
			tfds[n++] = tfd;
			who = registrar(t, i, tfd, toff);
			if (who < 0) {
				ret = -1;
				break;
			}
			other = -2;
			if (!who) {
				/* closed or replaced at tfd: the file, at another fd of the tree */
				other = target_file(t, i, tfd, toff);
				if (other == -1) {
					ret = -1;
					break;
				}
				if (other < 0) {
					pr_err("pid %d fd %d: epoll: the file it watches as fd %d is no longer open at fd %d in any task holding this epoll, nor at any other fd of the tree (open only outside it): not supported",
					       f->pid, f->fd, tfd, tfd);
					ret = -1;
					break;
				}
				who = f->pid;
			}
			it = tree_item_add(t, IT_EPOLL, i);
			it->other = other >= 0 ? other + 1 : 0;
			it->pid = who;
			it->num = tfd;
			it->mask = ev;
			it->data = data;
		}
		free(info);
	}
	return ret;
}

static int epoll_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0) {
		pr_perror("%s: epoll_create1", what);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;	/* empty: epoll_late adds the items */
}

#define EP_FLAG_BITS (EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE)
#define EP_ANY_EVENT (EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDNORM | EPOLLRDBAND | EPOLLWRNORM | \
		      EPOLLWRBAND | EPOLLMSG | EPOLLRDHUP)

/* A fired EPOLLONESHOT item, added to @epfd and fired again (see the top). */
static int add_disarmed(int epfd, const struct tree_item *it)
{
	struct epoll_event ev = { .events = it->mask | EP_ANY_EVENT, .data.u64 = it->data }, out;

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, it->num, &ev))
		return -1;
	if (epoll_wait(epfd, &out, 1, 0) == 1 && out.data.u64 == it->data)
		return 0;
	ev.events = it->mask;
	return epoll_ctl(epfd, EPOLL_CTL_MOD, it->num, &ev);
}

/* The restorer's descriptions (fd_restore.desc), which each task holds until its exec. */
static const int *descs;

static int epoll_after(struct fd_restore *r, int ok)
{
	descs = ok ? r->desc : NULL;
	return 0;
}

/*
 * Item @it, whose file is not at its number in this task: that file
 * (the restorer's description) put at it->num for the time of add(),
 * then what was there put back, or the number closed.
 */
static int add_via(int epfd, const struct tree_item *it, int disarmed)
{
	struct epoll_event ev = { .events = it->mask, .data.u64 = it->data };
	int saved, fdfl = 0, r, e;

	if (!descs || descs[it->other - 1] < 0) {
		errno = EBADF;
		return -1;
	}
	saved = fcntl(it->num, F_DUPFD_CLOEXEC, 0);
	if (saved < 0 && errno != EBADF)
		return -1;
	if (saved >= 0)
		fdfl = fcntl(it->num, F_GETFD);
	if (dup2(descs[it->other - 1], it->num) < 0) {
		e = errno;
		if (saved >= 0)
			close(saved);
		errno = e;
		return -1;
	}
	r = disarmed ? add_disarmed(epfd, it) : epoll_ctl(epfd, EPOLL_CTL_ADD, it->num, &ev);
	e = errno;
	if (saved >= 0) {
		if (dup2(saved, it->num) < 0 || fcntl(it->num, F_SETFD, fdfl < 0 ? 0 : fdfl) < 0) {
			e = errno;
			r = -1;
		}
		close(saved);
	} else {
		close(it->num);
	}
	errno = e;
	return r;
}

/* In task @k, its fds in place: the items it registers, under their fd numbers. */
static int epoll_late(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	int i, j, pass, r;

	/* the disarmed one-shot items first, then the others */
	for (pass = 0; pass < 2; pass++)
	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];
		struct epoll_event ev = { .events = it->mask, .data.u64 = it->data };
		int disarmed = (it->mask & EPOLLONESHOT) && !(it->mask & ~EP_FLAG_BITS);

		if (it->kind != IT_EPOLL || it->pid != k->pid || disarmed != !pass)
			continue;
		for (j = 0; j < k->nfds && k->fds[j].file != it->file; j++)
			;
		if (j == k->nfds) {
			snprintf(err, size, "epoll (file %d): the task registering its fd %d does not hold it",
				 it->file, it->num);
			return -1;
		}
		if (it->other)
			r = add_via(k->fds[j].fd, it, disarmed);
		else
			r = disarmed ? add_disarmed(k->fds[j].fd, it) :
				       epoll_ctl(k->fds[j].fd, EPOLL_CTL_ADD, it->num, &ev);
		if (r) {
			snprintf(err, size, "epoll fd %d: cannot add fd %d (events 0x%x%s): %s",
				 k->fds[j].fd, it->num, it->mask,
				 it->other ? ", through another fd of its file" : "", strerror(errno));
			return -1;
		}
	}
	return 0;
}


/* "epoll: fd T events 0x.. data 0x.. (by pid P), ..." */
static void epoll_rec_show(const struct tree *t, int i, const char *mode, char *out,
			   size_t size)
{
	size_t off;
	int j, n = 0;

	(void)mode;
	off = snprintf(out, size, "epoll");
	for (j = 0; j < t->nitems && off < size; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file == i && it->kind == IT_EPOLL)
			off += snprintf(out + off, size - off,
					"%s fd %d events 0x%x data 0x%llx (by pid %d%s)",
					n++ ? "," : ":", it->num, it->mask, it->data, it->pid,
					it->other ? ", closed at that fd: its file is another fd's" : "");
	}
	if (!n && off < size)
		snprintf(out + off, size - off, " (empty)");
}

static void epoll_rec_json(const struct tree *t, int i)
{
	int j, n = 0;

	printf(",\"items\":[");
	for (j = 0; j < t->nitems; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file == i && it->kind == IT_EPOLL)
			printf("%s{\"fd\":%d,\"events\":%u,\"data\":%llu,\"pid\":%d%s",
			       n++ ? "," : "", it->num, it->mask, it->data, it->pid,
			       it->other ? ",\"via\":" : "}");
		if (it->file == i && it->kind == IT_EPOLL && it->other)
			printf("%d}", it->other - 1);
	}
	putchar(']');
}

const struct fd_kind epoll_fd_kind = {
	.name = "epoll",
	.type = TK_EPOLL,
	.dump = epoll_dump,
	.check = epoll_check,
	.open = epoll_open,
	.late = epoll_late,
	.after = epoll_after,
	.rec_read = fd_rec_none,	/* its items are records of their own */
	.rec_show = epoll_rec_show,
	.rec_json = epoll_rec_json,
};

/* ---- the tree file: epitem records (record.h; the format: imgcr-image(5)) ---- */

static void epitem_records_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind != IT_EPOLL)
			continue;
		fprintf(f, "epitem file=%d pid=%d tfd=%d events=0x%x data=0x%llx", it->file,
			it->pid, it->num, it->mask, it->data);
		if (it->other)
			fprintf(f, " via=%d", it->other - 1);
		fputc('\n', f);
	}
}

static const char *epitem_record_read(struct tree *t, struct rec *r)
{
	unsigned long long ev, data;
	struct tree_item *it;
	int file, tfd, via;
	pid_t pid;

	if (REC_NUM(r, "file", 0, t->nfiles - 1, file) || t->files[file].kind != TK_EPOLL ||
	    REC_NUM(r, "pid", INT_MIN, INT_MAX, pid) || !tree_find(t, pid) ||
	    REC_NUM(r, "tfd", 0, 1 << 20, tfd) || rec_unum(r, "events", &ev) ||
	    ev > 0xffffffffULL || rec_unum(r, "data", &data))
		return "bad epitem record";
	it = tree_item_add(t, IT_EPOLL, file);
	it->pid = pid;
	it->num = tfd;
	it->mask = ev;
	it->data = data;
	if (rec_has(r, "via")) {
		if (REC_NUM(r, "via", 0, t->nfiles - 1, via))
			return "bad epitem record";
		it->other = via + 1;
	}
	return NULL;
}

const struct tree_record epoll_records[] = {
	{ "epitem", epitem_record_read, epitem_records_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
