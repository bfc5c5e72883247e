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
 *   another number or in another process) is refused: it could only be
 *   registered under another number, and epoll_ctl(MOD/DEL) on the old
 *   number would then fail or hit another file.  (A file open nowhere
 *   else is not kept by the epoll: its last close removes the item, so
 *   kcmp(KCMP_EPOLL_TFD) only ever finds files that are open somewhere.)
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
			int tfd, toff = 0, j;
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
			if (!who) {
				pr_err("pid %d fd %d: epoll: the file it watches as fd %d is no longer open at fd %d in any task holding this epoll (closed or replaced while registered): not supported",
				       f->pid, f->fd, tfd, tfd);
				ret = -1;
				break;
			}
			it = tree_item_add(t, IT_EPOLL, i);
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
		r = disarmed ? add_disarmed(k->fds[j].fd, it) :
			       epoll_ctl(k->fds[j].fd, EPOLL_CTL_ADD, it->num, &ev);
		if (r) {
			snprintf(err, size, "epoll fd %d: cannot add fd %d (events 0x%x): %s",
				 k->fds[j].fd, it->num, it->mask, strerror(errno));
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
					"%s fd %d events 0x%x data 0x%llx (by pid %d)",
					n++ ? "," : ":", it->num, it->mask, it->data, it->pid);
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
			printf("%s{\"fd\":%d,\"events\":%u,\"data\":%llu,\"pid\":%d}",
			       n++ ? "," : "", it->num, it->mask, it->data, it->pid);
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

		if (it->kind == IT_EPOLL)
			fprintf(f, "epitem file=%d pid=%d tfd=%d events=0x%x data=0x%llx\n", it->file,
				it->pid, it->num, it->mask, it->data);
	}
}

static const char *epitem_record_read(struct tree *t, struct rec *r)
{
	unsigned long long ev, data;
	struct tree_item *it;
	int file, tfd;
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
	return NULL;
}

const struct tree_record epoll_records[] = {
	{ "epitem", epitem_record_read, epitem_records_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
