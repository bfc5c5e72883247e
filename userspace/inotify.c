// SPDX-License-Identifier: GPL-2.0
/*
 * inotify instances ("inotify" records, one "watch" record per watch):
 * every watch with its mask (IN_ONESHOT, IN_EXCL_UNLINK included) and its
 * watch descriptor, from /proc/PID/fdinfo ("inotify wd:X ino:X sdev:X
 * mask:X ignored_mask:0 fhandle-bytes:X fhandle-type:X f_handle:HEX").
 *
 * The path: fdinfo gives the watched inode as a file handle.  Dump opens
 * it with open_by_handle_at() on the mount of that sdev and reads the
 * path back from /proc/self/fd.  That needs CAP_DAC_READ_SEARCH: an
 * ordinary user's dump of a tree with watches is refused, saying so.  A
 * watched inode that no longer has a path (deleted, or its handle is
 * stale) or whose filesystem gives no handles (no f_handle in fdinfo) is
 * refused.  At restore the watch is made on that path again (a new file
 * created there meanwhile is watched instead: it is the path that counts).
 *
 * A watched regular file that was deleted and that the tree still holds
 * open (a "ghost", files-ghost.c: the inode of the watch is the ghost's):
 * the watch record names that file ("watch ... ghost=FILE", its path the
 * ghost's old one).  At restore the watch goes on the restored ghost's
 * inode: the restorer makes the ghost now if not yet and adds the watch,
 * in its wd turn, through /proc/self/fd of the ghost's fd, with the mask
 * IN_DELETE_SELF only, which nothing the restorer does to the ghost
 * afterwards reports (opening its descriptions, its mode and mtime, its
 * unlink); then, once every file is open and the ghost unlinked, the first
 * task holding the instance sets the real mask (the late hook: adding a
 * watch on a watched inode replaces its mask and keeps its wd), through
 * /proc/self/fd of the restorer's description of the ghost.  Refused: a
 * deleted file the tree does not hold (its inode exists only while some
 * process outside the tree holds it: the watch could not be made on it
 * again), one the tree also maps (a mapped ghost stays linked until the
 * images run: its unlink would be reported), one in a tree with its own
 * mount namespace, and a deleted watched directory, FIFO or device.
 *
 * Same watch descriptors: the kernel hands them out cyclically per
 * instance (idr_alloc_cyclic(..., 1, 0) in inotify_add_to_idr, 6.1 and
 * 6.12 alike): each new watch gets the number after the last one given,
 * even if that one was removed since.  So restore adds the watches in
 * increasing wd order, and for each adds and removes it again until the
 * kernel hands out the wanted number (as CRIU does); the removals queue
 * IN_IGNORED events, read away before the instance is handed over.
 *
 * Events queued but not read at dump cannot be put back: an inotify queue
 * is only written by the kernel, and most events cannot be made again
 * without changing the files (IN_CREATE, IN_DELETE, IN_MOVED_* with their
 * names and cookies, IN_Q_OVERFLOW).  The program would see them missing,
 * so the dump is refused (FIONREAD on a duplicate of the fd gives their
 * size), naming the task and the fd: the tree runs on, reads them, and a
 * later dump goes through.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fhandle.h"
#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"

#define MAX_WD	(1 << 20)	/* add/remove cycles to reach a wd: refused beyond */

static int inotify_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	int fd, n = 0;

	(void)c;
	if (strcmp(p->link, "anon_inode:inotify"))
		return FD_OTHER;
	fd = fd_steal(p);
	if (fd < 0 || ioctl(fd, FIONREAD, &n)) {
		pr_perror("pid %d fd %d: inotify: cannot read how many events are queued (FIONREAD)",
			  p->pid, p->fd);
		if (fd >= 0)
			close(fd);
		return FD_FAILED;
	}
	close(fd);
	f->count = n;	/* refused by inotify_check, after the watches' own refusals */
	return FD_DESCRIBED;	/* the watches: inotify_check, with the file's id */
}

static const struct handle_why watch_why = {
	.nomount = "no mount of its device in the task's view",
	.deleted = "the watched file was deleted and no fd of the tree holds it (only a process outside the tree can): its inode cannot be watched again",
	.gone = "the watched file has no path any more in the task's view",
};

/*
 * handle_path() from the root of @pid, where the tree has a mount
 * namespace of its own: in a child chrooted there (through imgcr's /proc:
 * the paths, the mounts and the check are the container's), the path
 * back through a pipe.
 */
static char *handle_path_inside(int procfd, pid_t pid, struct file_handle *h, unsigned int sdev,
				unsigned long ino, const char **why)
{
	static char reason[160];
	char root[64], buf[PATH_MAX + 160];
	int pfd[2], st;
	ssize_t n = 0, r;
	pid_t child;

	if (pipe2(pfd, O_CLOEXEC)) {
		*why = "cannot make a pipe";
		return NULL;
	}
	child = fork();
	if (child < 0) {
		close(pfd[0]);
		close(pfd[1]);
		*why = "cannot fork";
		return NULL;
	}
	if (!child) {
		const char *w = "cannot enter the task's root";
		char *path = NULL;

		close(pfd[0]);
		snprintf(root, sizeof(root), "%d/root", pid);
		if (!fchdir(procfd) && !chdir(root) && !chroot(".") && !chdir("/"))
			path = handle_path(procfd, pid, h, sdev, ino, &watch_why, &w);
		/* one message, NUL-terminated: "P" and the path, or "E" and why */
		if (path)
			dprintf(pfd[1], "P%s%c", path, 0);
		else
			dprintf(pfd[1], "E%s%c", w, 0);
		_exit(0);
	}
	close(pfd[1]);
	/* a file system served by a task of the (stopped) tree could hang the look: 10 s */
	for (;;) {
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };

		if (n >= (ssize_t)sizeof(buf) - 1 || poll(&pf, 1, 10000) <= 0)
			break;
		r = read(pfd[0], buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += r;
	}
	close(pfd[0]);
	kill(child, SIGKILL);	/* done, or stuck: either way no longer needed */
	wait_child(child, &st);
	buf[n] = 0;
	if (n > 2 && buf[0] == 'P' && !buf[n - 1])
		return strdup(buf + 1);
	snprintf(reason, sizeof(reason), "%.150s",
		 n > 2 && buf[0] == 'E' ? buf + 1 : "the look inside the container failed or took more than 10 s");
	*why = reason;
	return NULL;
}

/*
 * The path of watch @wd (fdinfo fields after "inotify "), as the task
 * holding @f sees it (@own_mnt: the tree has its own mount namespace), or
 * NULL (printed).
 */
static char *watch_path(const struct tree_file *f, pid_t own_mnt, int wd, unsigned long ino,
			unsigned int sdev, const char *line)
{
	const char *why = "";
	struct file_handle *h;
	char *path;
	int procfd;

	h = fdinfo_handle(line);
	if (!h && errno != ENOMEM) {
		pr_err("pid %d fd %d: inotify: watch %d (inode %lu): its filesystem gives no file handle, so its path cannot be found: not supported",
		       f->pid, f->fd, wd, ino);
		return NULL;
	}
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!h || procfd < 0) {
		pr_perror("pid %d fd %d: inotify: watch %d", f->pid, f->fd, wd);
		free(h);
		if (procfd >= 0)
			close(procfd);
		return NULL;
	}
	if (own_mnt)
		path = handle_path_inside(procfd, own_mnt, h, sdev, ino, &why);
	else
		path = handle_path(procfd, getpid(), h, sdev, ino, &watch_why, &why);
	close(procfd);
	free(h);
	if (!path)
		pr_err("pid %d fd %d: inotify: watch %d (inode %lu): %s: not supported (device %u:%u%s)",
		       f->pid, f->fd, wd, ino, why, sdev >> 20, sdev & 0xfffff,
		       own_mnt ? ", in the tree's own mount namespace" : "");
	return path;
}

/*
 * The file of @t that opens the deleted regular file (ghost) of inode @ino
 * on device @sdev (the kernel's encoding, as fdinfo gives it), or -1.
 */
static int ghost_file(const struct tree *t, unsigned int sdev, unsigned long ino)
{
	unsigned long long dev = makedev(sdev >> 20, sdev & 0xfffff);
	const struct tree_ghost *g = tree_ghost_find(t, dev, ino);
	int i;

	if (!g || g->type != GHOST_REG || !g->path || g->path[0] != '/')
		return -1;
	for (i = 0; i < t->nfiles; i++)
		if (t->files[i].kind == TK_GHOST && t->files[i].dev == dev && t->files[i].sino == ino)
			return i;
	return -1;
}

/*
 * 1 if a task of @t maps inode @ino of device @sdev (a mapped ghost stays
 * linked until the images run: its unlink then would be reported).
 */
static int ghost_mapped(const struct tree *t, unsigned int sdev, unsigned long ino)
{
	char path[64], *text, *line, *save = NULL;
	unsigned int ma, mi;
	unsigned long i;
	int k, found = 0;

	for (k = 0; k < t->ntasks && !found; k++) {
		snprintf(path, sizeof(path), "/proc/%d/maps", t->tasks[k].pid);
		text = read_text(path, NULL);
		for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !found;
		     line = strtok_r(NULL, "\n", &save))
			found = sscanf(line, "%*s %*s %*s %x:%x %lu", &ma, &mi, &i) == 3 && i == ino &&
				ma == sdev >> 20 && mi == (sdev & 0xfffff);
		free(text);
	}
	return found;
}

static int inotify_check(const struct tree *ct)
{
	/* the watches go into the tree: the check hook has it const */
	struct tree *t = (struct tree *)ct;
	/*
	 * In a mount namespace of its own, paths as the tree's root task sees
	 * them: the namespace's root (mount.c requires it), from which the
	 * restore adds the watches (a task chrooted inside gets the path
	 * through its chroot)
	 */
	pid_t own_mnt = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->root : 0;
	int i, ret = 0;

	for (i = 0; i < t->nfiles && !ret; i++) {
		const struct tree_file *f = &t->files[i];
		struct fd_parms p = { .pid = f->pid, .fd = f->fd };
		char *info, *line, *save = NULL;

		if (f->kind != TK_INOTIFY)
			continue;
		info = fd_info(&p);
		if (!info)
			return -1;
		for (line = strtok_r(info, "\n", &save); line && !ret;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int wd, sdev, mask;
			unsigned long ino;
			struct tree_item *it;
			char *path;
			int other;

			if (strncmp(line, "inotify ", 8))
				continue;
			if (sscanf(line, "inotify wd:%x ino:%lx sdev:%x mask:%x", &wd, &ino, &sdev,
				   &mask) != 4 || !wd || wd > MAX_WD) {
				pr_err("pid %d fd %d: inotify: cannot parse its fdinfo line '%s' (or a wd beyond %d)",
				       f->pid, f->fd, line, MAX_WD);
				ret = -1;
				break;
			}
			other = own_mnt ? -1 : ghost_file(t, sdev, ino);
			if (other >= 0 && ghost_mapped(t, sdev, ino)) {
				pr_err("pid %d fd %d: inotify: watch %d (inode %lu): a deleted file that the tree also maps: not supported",
				       f->pid, f->fd, wd, ino);
				ret = -1;
				break;
			}
			path = other >= 0 ? strdup(tree_ghost_find(t, t->files[other].dev,
								   t->files[other].sino)->path) :
					    watch_path(f, own_mnt, wd, ino, sdev, line);
			if (!path) {
				ret = -1;
				break;
			}
			it = tree_item_add(t, IT_WATCH, i);
			it->num = wd;
			it->mask = mask;
			it->path = path;
			it->other = other + 1;
		}
		free(info);
		if (!ret && f->count) {
			pr_err("pid %d fd %d: inotify: %llu bytes of events queued and not read: they cannot be restored (only the kernel queues events); dump again once the program has read them",
			       f->pid, f->fd, f->count);
			ret = -1;
		}
	}
	return ret;
}

/* Read away what the instance queued (the IN_IGNORED of our removals). */
static void drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static int inotify_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree *t = r->t;
	const struct tree_file *f = &t->files[i];
	int fd, last = 0, n, wd, cycles = 0;
	unsigned int mask;
	const char *path;
	char self[64];

	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd < 0) {
		pr_perror("%s: inotify_init1", what);
		return -1;
	}
	/* in increasing wd order */
	for (;;) {
		const struct tree_item *next = NULL;

		for (n = 0; n < t->nitems; n++) {
			const struct tree_item *it = &t->items[n];

			if (it->kind == IT_WATCH && it->file == i && it->num > last &&
			    (!next || it->num < next->num))
				next = it;
		}
		if (!next)
			break;
		path = next->path;
		/* IN_MASK_ADD/CREATE are how a mask was set, not part of it */
		mask = next->mask & ~(IN_MASK_ADD | IN_MASK_CREATE | IN_ISDIR);
		if (next->other) {
			/* a deleted file: the restored ghost's inode; the mask: inotify_late */
			const struct tree_file *gf = &t->files[next->other - 1];
			struct tree_ghost *g = tree_ghost_find(t, gf->dev, gf->sino);

			if (!g || ghost_make_now(t, r->dirfd, g))
				goto fail;
			snprintf(self, sizeof(self), "/proc/self/fd/%d", g->made_fd);
			path = self;
			mask = IN_DELETE_SELF;
		}
		for (;;) {
			wd = inotify_add_watch(fd, path, mask);
			if (wd < 0) {
				pr_perror("%s: cannot watch %s%s again (wd %d, mask 0x%x)", what,
					  next->path, next->other ? " (deleted)" : "", next->num,
					  next->mask);
				goto fail;
			}
			if (wd == next->num)
				break;
			if (wd > next->num || ++cycles > MAX_WD) {
				pr_err("%s: watch %s got wd %d, not %d: the watched paths are one file now?",
				       what, next->path, wd, next->num);
				goto fail;
			}
			inotify_rm_watch(fd, wd);
			if (!(cycles % 1024))
				drain(fd);
		}
		last = next->num;
	}
	drain(fd);
	if (fd_set_flags(fd, f->flags, what))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* The restorer's descriptions (fd_restore.desc), which each task holds until its exec. */
static const int *descs;

static int inotify_after(struct fd_restore *r, int ok)
{
	descs = ok ? r->desc : NULL;
	return 0;
}

/*
 * In task @k, its fds in place: the masks of the watches on deleted files
 * of the instances it is the first task (not a zombie) to hold.
 */
static int inotify_late(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	int i, j, m, wd, fd;
	char self[64];

	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];
		const struct tree_task *h = NULL;

		if (it->kind != IT_WATCH || !it->other)
			continue;
		for (j = 0; j < t->ntasks && !h; j++)
			for (m = 0; m < t->tasks[j].nfds && !h; m++)
				if (t->tasks[j].fds[m].file == it->file && !t->tasks[j].zombie)
					h = &t->tasks[j];
		if (h != k)
			continue;
		for (m = 0; k->fds[m].file != it->file; m++)
			;
		fd = k->fds[m].fd;
		if (!descs || descs[it->other - 1] < 0) {
			snprintf(err, size, "inotify fd %d: watch %d on deleted %s: its file is not open", fd,
				 it->num, it->path);
			return -1;
		}
		snprintf(self, sizeof(self), "/proc/self/fd/%d", descs[it->other - 1]);
		wd = inotify_add_watch(fd, self, it->mask & ~(IN_MASK_ADD | IN_MASK_CREATE | IN_ISDIR));
		if (wd != it->num) {
			snprintf(err, size, "inotify fd %d: watch %d on deleted %s: its mask 0x%x not set (%s %d)",
				 fd, it->num, it->path, it->mask, wd < 0 ? strerror(errno) : "wd", wd);
			return -1;
		}
	}
	return 0;
}

/* "inotify: wd W mask 0x.. PATH, ..." */
static void inotify_rec_show(const struct tree *t, int i, const char *mode, char *out,
			     size_t size)
{
	size_t off;
	int j, n = 0;

	(void)mode;
	off = snprintf(out, size, "inotify");
	for (j = 0; j < t->nitems && off < size; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file == i && it->kind == IT_WATCH)
			off += snprintf(out + off, size - off, "%s wd %d mask 0x%x %s%s",
					n++ ? "," : ":", it->num, it->mask, it->path,
					it->other ? " (deleted, held open)" : "");
	}
	if (!n && off < size)
		snprintf(out + off, size - off, " (empty)");
}

static void inotify_rec_json(const struct tree *t, int i)
{
	int j, n = 0;

	printf(",\"items\":[");
	for (j = 0; j < t->nitems; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file != i || it->kind != IT_WATCH)
			continue;
		printf("%s{\"wd\":%d,\"mask\":%u,\"path\":", n++ ? "," : "", it->num,
		       it->mask);
		json_str(it->path);
		if (it->other)
			printf(",\"ghost\":%d", it->other - 1);
		putchar('}');
	}
	putchar(']');
}

const struct fd_kind inotify_fd_kind = {
	.name = "inotify",
	.type = TK_INOTIFY,
	.dump = inotify_dump,
	.check = inotify_check,
	.open = inotify_open,
	.late = inotify_late,
	.after = inotify_after,
	.rec_read = fd_rec_none,	/* its watches are records of their own */
	.rec_show = inotify_rec_show,
	.rec_json = inotify_rec_json,
};

/* ---- the tree file: watch records (record.h; the format: imgcr-image(5)) ---- */

static void watch_records_write(FILE *f, const struct tree *t)
{
	char e[3 * 4096 + 4];
	int i;

	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind != IT_WATCH)
			continue;
		tree_escape(e, sizeof(e), it->path);
		fprintf(f, "watch file=%d wd=%d mask=0x%x path=%s", it->file, it->num, it->mask, e);
		if (it->other)
			fprintf(f, " ghost=%d", it->other - 1);
		fputc('\n', f);
	}
}

static const char *watch_record_read(struct tree *t, struct rec *r)
{
	unsigned long long mask;
	struct tree_item *it;
	int file, wd, g;

	if (REC_NUM(r, "file", 0, t->nfiles - 1, file) || t->files[file].kind != TK_INOTIFY ||
	    REC_NUM(r, "wd", 1, INT_MAX, wd) || rec_unum(r, "mask", &mask) ||
	    mask > 0xffffffffULL || !rec_has(r, "path"))
		return "bad watch record";
	it = tree_item_add(t, IT_WATCH, file);
	it->num = wd;
	it->mask = mask;
	rec_str(r, "path", &it->path);
	if (it->path[0] != '/')
		return "watch path is not absolute";
	if (rec_has(r, "ghost")) {
		if (REC_NUM(r, "ghost", 0, t->nfiles - 1, g) || t->files[g].kind != TK_GHOST)
			return "bad watch record";
		it->other = g + 1;
	}
	return NULL;
}

const struct tree_record inotify_records[] = {
	{ "watch", watch_record_read, watch_records_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
