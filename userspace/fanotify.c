// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify groups ("file kind=fanotify" with the group's fanotify_init
 * flags and event flags, one "fanmark" record per mark), from
 * /proc/PID/fdinfo:
 *   fanotify flags:X event-flags:X
 *   fanotify ino:X sdev:X mflags:X mask:X ignored_mask:X fhandle-bytes:X fhandle-type:X f_handle:HEX
 *   fanotify mnt_id:X mflags:X mask:X ignored_mask:X
 *   fanotify sdev:X mflags:X mask:X ignored_mask:X
 *
 * An inode mark: its file handle is opened (open_by_handle_at, on a
 * mount of that sdev: needs CAP_DAC_READ_SEARCH) and the path read back
 * from /proc/self/fd, which must lead to that inode; the restore marks
 * that path again (FAN_MARK_INODE).  A mount mark: the mount point of
 * that mount id in the task's mountinfo, which must still be that mount
 * (name_to_handle_at's mount id); the restore marks the mount at that
 * path (FAN_MARK_MOUNT).  Each mark keeps its mask, its ignore mask (with
 * FAN_MARK_IGNORE or FAN_MARK_IGNORED_MASK as it was made, and
 * FAN_MARK_IGNORED_SURV_MODIFY) and FAN_MARK_EVICTABLE.
 *
 * Refused, naming the task and fd: a filesystem mark (FAN_MARK_FILESYSTEM);
 * a mark whose path cannot be found (deleted, no file handle); a tree in
 * a mount namespace of its own (the paths would be the container's);
 * permission events in a mask (FAN_OPEN_PERM, FAN_ACCESS_PERM,
 * FAN_OPEN_EXEC_PERM, pre-content events: an event read but not answered
 * is not visible, and its waiter cannot be restored); events queued and
 * not read (FIONREAD: only the kernel queues events).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fhandle.h"
#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"

#ifndef FAN_MARK_EVICTABLE
#define FAN_MARK_EVICTABLE	0x00000200
#endif
#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE		0x00000400
#endif
/* the permission events: FAN_OPEN_PERM, FAN_ACCESS_PERM, FAN_OPEN_EXEC_PERM, FAN_PRE_ACCESS (6.14) */
#define FAN_PERM_EVENTS		(0x00010000 | 0x00020000 | 0x00040000 | 0x00100000)
/* the mark flags fdinfo's mflags shows, all of them restored */
#define FAN_MFLAGS		(FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE | FAN_MARK_IGNORE)

enum { FM_INODE, FM_MOUNT, FM_NR };
static const char *const fm_names[FM_NR] = { "inode", "mount" };

static int fanotify_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	char *info, *l;
	int fd, n = 0;

	(void)c;
	if (strcmp(p->link, "anon_inode:[fanotify]"))
		return FD_OTHER;
	info = fd_info(p);
	l = info ? strstr(info, "fanotify flags:") : NULL;
	if (!l || sscanf(l, "fanotify flags:%x event-flags:%x", &f->fan_flags, &f->fan_event_flags) != 2) {
		free(info);
		return fd_refuse(p, "fanotify: cannot read its flags from fdinfo");
	}
	free(info);
	fd = fd_steal(p);
	if (fd < 0 || ioctl(fd, FIONREAD, &n)) {
		pr_perror("pid %d fd %d: fanotify: cannot read how many events are queued (FIONREAD)",
			  p->pid, p->fd);
		if (fd >= 0)
			close(fd);
		return FD_FAILED;
	}
	close(fd);
	f->count = n;	/* refused by fanotify_check, after the marks' own refusals */
	return FD_DESCRIBED;
}

static const struct handle_why mark_why = {
	.nomount = "no mount of its device",
	.deleted = "the marked file has no path any more",
	.gone = "the marked file has no path any more",
};

/* The mount point of mount @mnt_id in the mountinfo of @pid, still that mount, or NULL with @why. */
static char *mount_path(pid_t pid, int mnt_id, const char **why)
{
	char name[64], mnt[PATH_MAX], *text, *line, *save = NULL, *out = NULL;
	struct file_handle *h = calloc(1, sizeof(*h) + MAX_HANDLE_SZ);
	int id, got;

	snprintf(name, sizeof(name), "/proc/%d/mountinfo", pid);
	text = read_text(name, NULL);
	*why = "no such mount in the task's mountinfo";
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !out && h;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%d %*d %*s %*s %4095s", &id, mnt) != 2 || id != mnt_id)
			continue;
		h->handle_bytes = MAX_HANDLE_SZ;
		/* the mount at that path must be this one (not one mounted over it) */
		if (strchr(mnt, '\\') || name_to_handle_at(AT_FDCWD, mnt, h, &got, 0) || got != mnt_id) {
			*why = "its mount point is not reachable as that mount (escaped characters, or another mount over it)";
			break;
		}
		out = strdup(mnt);
	}
	free(text);
	free(h);
	return out;
}

static int fanotify_check(const struct tree *ct)
{
	struct tree *t = (struct tree *)ct;	/* the marks go into the tree */
	int own_mnt = t->ns && (t->ns->own & NS_BIT(NS_MNT));
	int i, ret = 0;

	for (i = 0; i < t->nfiles && !ret; i++) {
		const struct tree_file *f = &t->files[i];
		struct fd_parms p = { .pid = f->pid, .fd = f->fd };
		char *info, *line, *save = NULL;

		if (f->kind != TK_FANOTIFY)
			continue;
		info = fd_info(&p);
		if (!info)
			return -1;
		for (line = strtok_r(info, "\n", &save); line && !ret;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int sdev, mflags, mask, ign;
			const char *why = "";
			struct file_handle *h;
			struct tree_item *it;
			unsigned long ino;
			char *path = NULL;
			int mnt_id, type;

			if (strncmp(line, "fanotify ", 9) || !strncmp(line, "fanotify flags:", 15))
				continue;
			if (sscanf(line, "fanotify ino:%lx sdev:%x mflags:%x mask:%x ignored_mask:%x",
				   &ino, &sdev, &mflags, &mask, &ign) == 5) {
				type = FM_INODE;
			} else if (sscanf(line, "fanotify mnt_id:%x mflags:%x mask:%x ignored_mask:%x",
					  &mnt_id, &mflags, &mask, &ign) == 4) {
				type = FM_MOUNT;
			} else if (!strncmp(line, "fanotify sdev:", 14)) {
				pr_err("pid %d fd %d: fanotify: a filesystem mark (FAN_MARK_FILESYSTEM: '%s') is not supported",
				       f->pid, f->fd, line + 9);
				ret = -1;
				break;
			} else {
				pr_err("pid %d fd %d: fanotify: cannot parse its fdinfo line '%s'", f->pid, f->fd, line);
				ret = -1;
				break;
			}
			if ((mask | ign) & FAN_PERM_EVENTS) {
				pr_err("pid %d fd %d: fanotify: a mark with permission events (mask 0x%x, '%s'): an event read and not answered cannot be seen nor restored: not supported",
				       f->pid, f->fd, (mask | ign) & FAN_PERM_EVENTS, line + 9);
				ret = -1;
				break;
			}
			if (mflags & ~FAN_MFLAGS) {
				pr_err("pid %d fd %d: fanotify: mark flags 0x%x ('%s') are not supported",
				       f->pid, f->fd, mflags & ~FAN_MFLAGS, line + 9);
				ret = -1;
				break;
			}
			if (own_mnt) {
				pr_err("pid %d fd %d: fanotify: a mark ('%s') in a tree with a mount namespace of its own is not supported",
				       f->pid, f->fd, line + 9);
				ret = -1;
				break;
			}
			if (type == FM_INODE) {
				int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

				h = fdinfo_handle(line);
				why = procfd < 0 ? "cannot open /proc" :
					"its filesystem gives no file handle, so its path cannot be found";
				if (h && procfd >= 0)
					path = handle_path(procfd, getpid(), h, sdev, ino, &mark_why, &why);
				if (procfd >= 0)
					close(procfd);
				free(h);
			} else {
				path = mount_path(f->pid, mnt_id, &why);
			}
			if (!path) {
				pr_err("pid %d fd %d: fanotify: %s mark ('%s'): %s: not supported", f->pid, f->fd,
				       fm_names[type], line + 9, why);
				ret = -1;
				break;
			}
			it = tree_item_add(t, IT_FANMARK, i);
			it->num = type;
			it->mask = mask;
			it->data = ign;
			it->flags = mflags;
			it->path = path;
		}
		free(info);
		if (!ret && f->count) {
			pr_err("pid %d fd %d: fanotify: %llu bytes of events queued and not read: they cannot be restored (only the kernel queues events); dump again once the program has read them",
			       f->pid, f->fd, f->count);
			ret = -1;
		}
	}
	return ret;
}

static int fanotify_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree *t = r->t;
	const struct tree_file *f = &t->files[i];
	int fd, n;

	fd = fanotify_init(f->fan_flags, f->fan_event_flags);
	if (fd < 0) {
		pr_perror("%s: fanotify_init(0x%x, 0x%x)", what, f->fan_flags, f->fan_event_flags);
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		pr_perror("%s: F_SETFD", what);
		goto fail;
	}
	/* fdinfo lists the newest mark first: added oldest first, they list the same again */
	for (n = t->nitems - 1; n >= 0; n--) {
		const struct tree_item *it = &t->items[n];
		unsigned int how = it->num == FM_MOUNT ? FAN_MARK_MOUNT : 0;

		if (it->kind != IT_FANMARK || it->file != i)
			continue;
		how |= it->flags & FAN_MARK_EVICTABLE;
		if (it->mask && fanotify_mark(fd, FAN_MARK_ADD | how, it->mask, AT_FDCWD, it->path)) {
			pr_perror("%s: cannot mark the %s %s again (mask 0x%x)", what, fm_names[it->num],
				  it->path, it->mask);
			goto fail;
		}
		how |= it->flags & FAN_MARK_IGNORED_SURV_MODIFY;
		how |= it->flags & FAN_MARK_IGNORE ? FAN_MARK_IGNORE : FAN_MARK_IGNORED_MASK;
		if ((it->data || (it->flags & (FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_IGNORE))) &&
		    fanotify_mark(fd, FAN_MARK_ADD | how, it->data, AT_FDCWD, it->path)) {
			pr_perror("%s: cannot set the ignore mask 0x%llx (mark flags 0x%x) of the %s %s again",
				  what, it->data, it->flags, fm_names[it->num], it->path);
			goto fail;
		}
	}
	if (fd_set_flags(fd, f->flags, what))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static void fanotify_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " init=0x%x event=0x%x", x->fan_flags, x->fan_event_flags);
}

static const char *fanotify_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	unsigned long long a, b;

	(void)t;
	if (rec_unum(r, "init", &a) || rec_unum(r, "event", &b) || a > 0xffffffffULL || b > 0xffffffffULL)
		return "bad fanotify file record";
	x->fan_flags = a;
	x->fan_event_flags = b;
	return NULL;
}

/* "fanotify init 0x.. event 0x..: inode mask 0x.. PATH, ..." */
static void fanotify_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	size_t off;
	int j, n = 0;

	(void)mode;
	off = snprintf(out, size, "fanotify init 0x%x event 0x%x", t->files[i].fan_flags,
		       t->files[i].fan_event_flags);
	for (j = 0; j < t->nitems && off < size; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file == i && it->kind == IT_FANMARK)
			off += snprintf(out + off, size - off, "%s %s mask 0x%x ignore 0x%llx flags 0x%x %s",
					n++ ? "," : ":", fm_names[it->num], it->mask, it->data, it->flags,
					it->path);
	}
}

static void fanotify_rec_json(const struct tree *t, int i)
{
	int j, n = 0;

	printf(",\"init\":%u,\"event\":%u,\"marks\":[", t->files[i].fan_flags, t->files[i].fan_event_flags);
	for (j = 0; j < t->nitems; j++) {
		const struct tree_item *it = &t->items[j];

		if (it->file != i || it->kind != IT_FANMARK)
			continue;
		printf("%s{\"type\":\"%s\",\"mask\":%u,\"ignore\":%llu,\"flags\":%u,\"path\":", n++ ? "," : "",
		       fm_names[it->num], it->mask, it->data, it->flags);
		json_str(it->path);
		putchar('}');
	}
	putchar(']');
}

const struct fd_kind fanotify_fd_kind = {
	.name = "fanotify",
	.type = TK_FANOTIFY,
	.dump = fanotify_dump,
	.check = fanotify_check,
	.open = fanotify_open,
	.rec_write = fanotify_rec_write,
	.rec_read = fanotify_rec_read,
	.rec_show = fanotify_rec_show,
	.rec_json = fanotify_rec_json,
};

/* ---- the tree file: fanmark records (record.h; the format: imgcr-image(5)) ---- */

static void fanmark_records_write(FILE *f, const struct tree *t)
{
	char e[3 * 4096 + 4];
	int i;

	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind != IT_FANMARK)
			continue;
		tree_escape(e, sizeof(e), it->path);
		fprintf(f, "fanmark file=%d type=%s mask=0x%x ignore=0x%llx flags=0x%x path=%s\n", it->file,
			fm_names[it->num], it->mask, it->data, it->flags, e);
	}
}

static const char *fanmark_record_read(struct tree *t, struct rec *r)
{
	unsigned long long mask, ign, flags;
	const char *type = rec_val(r, "type");
	struct tree_item *it;
	int file, k;

	if (REC_NUM(r, "file", 0, t->nfiles - 1, file) || t->files[file].kind != TK_FANOTIFY || !type ||
	    rec_unum(r, "mask", &mask) || rec_unum(r, "ignore", &ign) || rec_unum(r, "flags", &flags) ||
	    mask > 0xffffffffULL || ign > 0xffffffffULL || (flags & ~(unsigned long long)FAN_MFLAGS) ||
	    !rec_has(r, "path"))
		return "bad fanmark record";
	for (k = 0; k < FM_NR && strcmp(type, fm_names[k]); k++)
		;
	if (k == FM_NR)
		return "bad fanmark type";
	it = tree_item_add(t, IT_FANMARK, file);
	it->num = k;
	it->mask = mask;
	it->data = ign;
	it->flags = flags;
	rec_str(r, "path", &it->path);
	if (it->path[0] != '/')
		return "fanmark path is not absolute";
	return NULL;
}

const struct tree_record fanotify_records[] = {
	{ "fanmark", fanmark_record_read, fanmark_records_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
