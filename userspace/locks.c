// SPDX-License-Identifier: GPL-2.0
/*
 * File locks held by the tree ("lock" records): flock(2) locks, POSIX
 * record locks (F_SETLK), open file description locks (F_OFD_SETLK) and
 * leases (F_SETLEASE).
 *
 * dump: /proc/PID/fdinfo/FD lists, as "lock:" lines, the flock and OFD
 * locks of the fd's open file description and the POSIX locks the task
 * took through it.  Each is recorded once (every fd of a description shows
 * the same lines).  Leases and delegations are refused.
 *
 * restore: flock and OFD locks belong to the open file description: an
 * OFD lock is taken by the restorer on the description it opened, which
 * the tasks then inherit; a flock lock by the task that took it (if in the
 * tree, else one that has it open) on its fd, so that /proc/locks names
 * it again.  A POSIX lock belongs to the process, and the kernel drops all
 * of a process's POSIX locks on a file whenever it closes ANY descriptor of
 * that file, at exec too.  So each task takes its POSIX locks itself, on
 * its own fd numbers, after closing the restorer's descriptors (which
 * exec would close: they are close-on-exec); the image's --imgcr-cloexec
 * list only marks fds, it closes none.  A lock that cannot be taken fails
 * the restore before any image runs, naming the file, the task and who
 * holds a conflicting lock (F_GETLK; for flock, /proc/locks).
 *
 * A lease is taken by its task on its fd like a flock lock (F_SETLEASE
 * records the fd for the SIGIO of a break, si_fd with F_SETSIG, and makes
 * the task the description's F_SETOWN owner, which fown_restore then sets
 * as it was; a description without an owner gets none again).  It fails if
 * the file is open for writing (a read lease) or open at all (a write
 * lease) by another description: the restore then names the file.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.h"
#include "locks.h"
#include "log.h"
#include "proc.h"
#include "record.h"

const char *const tree_lock_names[TL_NR] = { "flock", "posix", "ofd", "lease" };

struct tree_lock *tree_lock_add(struct tree *t)
{
	struct tree_lock *l;

	t->locks = tree_grow(t->locks, t->nlocks, sizeof(*t->locks));
	l = &t->locks[t->nlocks++];
	memset(l, 0, sizeof(*l));
	return l;
}


/* The same lock; a flock lock whichever task sees it. */
static int same_lock(const struct tree_lock *a, const struct tree_lock *b)
{
	return a->kind == b->kind && a->file == b->file &&
	       (a->pid == b->pid || a->kind == TL_FLOCK || a->kind == TL_LEASE) &&
	       a->write == b->write && a->start == b->start && a->end == b->end;
}

int locks_dump(struct tree *t, pid_t pid, int fd, int file)
{
	char path[96], *info, *line, *save = NULL;
	int i, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	info = read_text(path, NULL);
	if (!info) {
		pr_perror("pid %d fd %d: cannot read %s", pid, fd, path);
		return -1;
	}
	for (line = strtok_r(info, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save)) {
		char kind[16], adv[16], type[16], end[32];
		struct tree_lock l = { .file = file };
		long long start;
		int lpid;

		if (strncmp(line, "lock:", 5))
			continue;
		if (sscanf(line + 5, "%*s %15s %15s %15s %d %*s %lld %31s", kind, adv, type,
			   &lpid, &start, end) != 6) {
			pr_err("pid %d fd %d: cannot parse the lock line '%s' of %s", pid, fd, line, path);
			ret = -1;
			break;
		}
		if (!strcmp(kind, "FLOCK")) {
			l.kind = TL_FLOCK;
			l.pid = pid;
			l.fd = fd;
		} else if (!strcmp(kind, "POSIX")) {
			l.kind = TL_POSIX;
			l.pid = pid;
			l.fd = fd;
		} else if (!strcmp(kind, "OFDLCK")) {
			l.kind = TL_OFD;
		} else if (!strcmp(kind, "LEASE") && !strcmp(adv, "ACTIVE")) {
			l.kind = TL_LEASE;
			l.pid = pid;
			l.fd = fd;
		} else if (!strcmp(kind, "LEASE")) {
			pr_err("pid %d fd %d: file lock '%s': a lease being broken (%s: another process waits to open the file) cannot be restored",
			       pid, fd, line + 6, adv);
			ret = -1;
			break;
		} else {
			pr_err("pid %d fd %d: file lock '%s': %s locks (leases, delegations) are not supported",
			       pid, fd, line + 6, kind);
			ret = -1;
			break;
		}
		if (strcmp(type, "READ") && strcmp(type, "WRITE")) {
			pr_err("pid %d fd %d: file lock '%s': lock type %s is not supported", pid, fd,
			       line + 6, type);
			ret = -1;
			break;
		}
		l.write = !strcmp(type, "WRITE");
		l.lpid = lpid;
		if (l.kind == TL_POSIX || l.kind == TL_OFD) {
			l.start = start;
			l.end = strcmp(end, "EOF") ? atoll(end) : -1;
		}
		for (i = 0; i < t->nlocks && !same_lock(&t->locks[i], &l); i++)
			;
		if (i == t->nlocks)
			*tree_lock_add(t) = l;
		else if (l.kind == TL_FLOCK && lpid == pid)
			t->locks[i] = l;	/* seen from the task that took it */
		else if (l.kind == TL_LEASE && lpid == pid && t->locks[i].lpid != t->locks[i].pid)
			t->locks[i] = l;	/* its first fd in the task that took it */
	}
	free(info);
	return ret;
}

struct ofd_search {
	char id[64];		/* " MAJ:MIN:INO START " of an fdinfo "lock:" line */
	const struct flock *fl;
	char *out;
	size_t size, off;
};

static int ofd_fd(pid_t pid, int fd, void *arg)
{
	struct ofd_search *s = arg;
	char path[64], *text, *l, *end;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	text = read_text(path, NULL);
	for (l = text ? strstr(text, "\nlock:") : NULL; l; l = strstr(l + 1, "\nlock:")) {
		end = strchr(l + 1, '\n');
		if (end)
			*end = 0;
		if (strstr(l, "OFDLCK") && strstr(l, s->id) && !strstr(l, "->")) {
			s->off += snprintf(s->out + s->off, s->size - s->off,
					   "%s pid %d (an OFD %s lock on bytes %lld-%lld, fd %d)",
					   s->off ? "," : "", pid,
					   s->fl->l_type == F_WRLCK ? "write" : "read",
					   (long long)s->fl->l_start,
					   s->fl->l_len ? (long long)(s->fl->l_start + s->fl->l_len - 1) : -1LL,
					   fd);
			break;
		}
		if (end)
			*end = '\n';
	}
	free(text);
	return s->off + 80 >= s->size;	/* full: stop */
}

static int ofd_process(pid_t pid, void *arg)
{
	return proc_each_fd(pid, ofd_fd, arg);
}

/*
 * The processes holding the OFD lock @fl (F_OFD_GETLK) on the file @st:
 * an OFD lock has no pid (-1 in F_OFD_GETLK and /proc/locks), but shows in
 * the "lock:" lines of the fdinfo of every fd on its description.
 */
static void ofd_holders(const struct stat *st, const struct flock *fl, char *out, size_t size)
{
	struct ofd_search s = { .fl = fl, .out = out, .size = size };

	snprintf(s.id, sizeof(s.id), " %02x:%02x:%llu %lld ", major(st->st_dev), minor(st->st_dev),
		 (unsigned long long)st->st_ino, (long long)fl->l_start);
	if (size > 80)
		proc_each_process(ofd_process, &s);
}

/*
 * Who holds a lock on @fd's inode that conflicts with @l, into @out ("" if
 * unknown): for a byte range F_GETLK (F_OFD_GETLK) names the holder; for
 * flock, /proc/locks lists the flock locks on the inode.
 */
static void lock_holders(const struct tree_lock *l, int fd, char *out, size_t size)
{
	struct flock fl = {
		.l_type = l->write ? F_WRLCK : F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = l->start,
		.l_len = l->end < 0 ? 0 : l->end - l->start + 1,
	};
	char id[64], *text = read_text("/proc/locks", NULL), *line, *save = NULL;
	struct stat st;
	size_t off = 0;

	out[0] = 0;
	if (l->kind != TL_FLOCK) {
		free(text);
		if (fcntl(fd, l->kind == TL_OFD ? F_OFD_GETLK : F_GETLK, &fl) || fl.l_type == F_UNLCK)
			return;
		if (fl.l_pid > 0)
			snprintf(out, size, " pid %d (a %s lock on bytes %lld-%lld)", fl.l_pid,
				 fl.l_type == F_WRLCK ? "write" : "read", (long long)fl.l_start,
				 fl.l_len ? (long long)(fl.l_start + fl.l_len - 1) : -1LL);
		else if (!fstat(fd, &st))
			ofd_holders(&st, &fl, out, size);
		if (!out[0])
			snprintf(out, size, " an OFD lock on bytes %lld-%lld",
				 (long long)fl.l_start,
				 fl.l_len ? (long long)(fl.l_start + fl.l_len - 1) : -1LL);
		return;
	}
	if (!text || fstat(fd, &st)) {
		free(text);
		return;
	}
	snprintf(id, sizeof(id), " %02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[16], type[16];
		int pid;

		/* "N: KIND ADVISORY TYPE PID DEV:INO START END"; blocked waiters have "->" */
		if (!strstr(line, id) || strstr(line, "->") ||
		    sscanf(line, "%*s %15s %*s %15s %d", kind, type, &pid) != 3 ||
		    strcmp(kind, "FLOCK"))
			continue;
		if (off + 64 < size)
			off += snprintf(out + off, size - off, "%s pid %d (%s %s)", off ? "," : "",
					pid, kind, type);
	}
	free(text);
}

static void lock_what(char *out, size_t size, const struct tree *t, const struct tree_lock *l)
{
	const struct tree_file *f = &t->files[l->file];
	const struct tree_ghost *g = f->kind == TK_GHOST ? tree_ghost_find(t, f->dev, f->sino) : NULL;
	const char *path = f->path ? f->path : g ? g->path : "?";

	if (l->kind == TL_FLOCK)
		snprintf(out, size, "%s flock %s lock on %s%s", l->write ? "an exclusive" : "a shared",
			 l->write ? "LOCK_EX" : "LOCK_SH", path, g ? " (deleted)" : "");
	else if (l->kind == TL_LEASE)
		snprintf(out, size, "%s lease (F_SETLEASE %s) on %s%s", l->write ? "a write" : "a read",
			 l->write ? "F_WRLCK" : "F_RDLCK", path, g ? " (deleted)" : "");
	else
		snprintf(out, size, "%s %s lock on bytes %lld-%s%.0lld of %s%s",
			 l->write ? "a write" : "a read", l->kind == TL_OFD ? "OFD" : "POSIX",
			 l->start, l->end < 0 ? "EOF" : "", l->end < 0 ? 0 : l->end, path,
			 g ? " (deleted)" : "");
}

static int take(const struct tree_lock *l, int fd)
{
	struct flock fl = {
		.l_type = l->write ? F_WRLCK : F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = l->start,
		.l_len = l->end < 0 ? 0 : l->end - l->start + 1,
	};

	if (l->kind == TL_FLOCK)
		return flock(fd, (l->write ? LOCK_EX : LOCK_SH) | LOCK_NB);
	if (l->kind == TL_LEASE)
		return fcntl(fd, F_SETLEASE, l->write ? F_WRLCK : F_RDLCK);
	return fcntl(fd, l->kind == TL_OFD ? F_OFD_SETLK : F_SETLK, &fl);
}

/* Why @l could not be taken on @fd (errno @e), into @out. */
static void take_failed(const struct tree *t, const struct tree_lock *l, int fd, int e,
			char *out, size_t size)
{
	char what[4200], who[512];

	lock_what(what, sizeof(what), t, l);
	if (l->kind == TL_LEASE) {
		snprintf(out, size, "cannot take %s again: %s%s", what, strerror(e),
			 e != EAGAIN ? "" : l->write ? " (another process has the file open)" :
			 " (another process has the file open for writing)");
		return;
	}
	lock_holders(l, fd, who, sizeof(who));
	snprintf(out, size, "cannot take %s again: %s%s%s", what, strerror(e),
		 e == EAGAIN || e == EWOULDBLOCK || e == EACCES ? " (a conflicting lock is held" : "",
		 e == EAGAIN || e == EWOULDBLOCK || e == EACCES ? (who[0] ? " by" : ")") : "");
	if ((e == EAGAIN || e == EWOULDBLOCK || e == EACCES) && who[0]) {
		size_t n = strlen(out);

		snprintf(out + n, size - n, "%s)", who);
	}
}

int locks_restore_files(const struct tree *t, const int *desc)
{
	char why[8192];
	int i;

	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		const struct tree_task *k = NULL;
		int j, fd = -1;

		if (l->kind != TL_OFD || !take(l, desc[l->file]))
			continue;
		take_failed(t, l, desc[l->file], errno, why, sizeof(why));
		/* the task that will hold it: the first with an fd on the description */
		for (j = 0; j < t->ntasks && fd < 0; j++) {
			int n;

			for (n = 0; n < t->tasks[j].nfds && fd < 0; n++)
				if (t->tasks[j].fds[n].file == l->file) {
					k = &t->tasks[j];
					fd = t->tasks[j].fds[n].fd;
				}
		}
		if (k)
			pr_err("restore failed: pid %d: fd %d: %s", k->pid, fd, why);
		else
			pr_err("restore failed: %s", why);
		return -1;
	}
	return 0;
}

int locks_restore_task(const struct tree *t, pid_t pid, char *err, size_t size)
{
	char why[8192];
	int i;

	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		if (l->kind == TL_OFD || l->pid != pid)
			continue;
		if (!take(l, l->fd)) {
			const struct tree_file *f = &t->files[l->file];

			/* F_SETLEASE made us the owner: a description without one has none */
			if (l->kind == TL_LEASE && !f->own_pid && fcntl(l->fd, F_SETOWN, 0)) {
				snprintf(err, size, "fd %d: cannot clear the owner (F_SETOWN 0) that F_SETLEASE set: %s",
					 l->fd, strerror(errno));
				return -1;
			}
			continue;
		}
		take_failed(t, l, l->fd, errno, why, sizeof(why));
		snprintf(err, size, "fd %d: %s", l->fd, why);
		return -1;
	}
	return 0;
}

/* ---- the tree file: lock records (record.h; the format: imgcr-image(5)) ---- */

static void lock_records_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		fprintf(f, "lock kind=%s", tree_lock_names[l->kind]);
		if (l->kind != TL_OFD)
			fprintf(f, " pid=%d fd=%d", l->pid, l->fd);
		fprintf(f, " file=%d type=%c", l->file, l->write ? 'w' : 'r');
		if (l->kind == TL_POSIX || l->kind == TL_OFD)
			fprintf(f, " start=%lld end=%lld", l->start, l->end);
		fputc('\n', f);
	}
}

static const char *lock_record_read(struct tree *t, struct rec *r)
{
	const char *kn = rec_val(r, "kind"), *type;
	struct tree_lock *l = tree_lock_add(t);
	struct tree_task *k;
	int i;

	for (l->kind = 0; kn && l->kind < TL_NR; l->kind++)
		if (!strcmp(kn, tree_lock_names[l->kind]))
			break;
	if (!kn || l->kind == TL_NR)
		return "bad lock record";
	if (REC_NUM(r, "file", INT_MIN, INT_MAX, l->file))
		return "bad lock record";
	if (l->kind != TL_OFD) {
		if (REC_NUM(r, "pid", INT_MIN, INT_MAX, l->pid) ||
		    REC_NUM(r, "fd", INT_MIN, INT_MAX, l->fd))
			return "bad lock record";
		k = tree_find(t, l->pid);
		for (i = 0; k && i < k->nfds && k->fds[i].fd != l->fd; i++)
			;
		if (!k || i == k->nfds || k->fds[i].file != l->file)
			return "lock record of an fd that has no fd record";
	}
	type = rec_val(r, "type");
	if (l->file < 0 || l->file >= t->nfiles || !type || (strcmp(type, "r") && strcmp(type, "w")))
		return "bad lock record";
	l->write = !strcmp(type, "w");
	if (l->kind == TL_POSIX || l->kind == TL_OFD) {
		if (REC_NUM(r, "start", LLONG_MIN, LLONG_MAX, l->start) ||
		    REC_NUM(r, "end", LLONG_MIN, LLONG_MAX, l->end))
			return "bad lock record";
		if (l->start < 0 || l->end < -1 || (l->end >= 0 && l->end < l->start))
			return "bad lock range";
	}
	return NULL;
}

/* imgcr show (record.h) */
static void lock_records_show(const struct tree *t, int json)
{
	int i;

	if (json)
		printf(",\"locks\":[");
	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		if (json) {
			printf("%s{\"kind\":\"%s\",\"file\":%d,\"type\":\"%s\"", i ? "," : "",
			       tree_lock_names[l->kind], l->file, l->write ? "write" : "read");
			if (l->kind != TL_OFD)
				printf(",\"pid\":%d,\"fd\":%d", l->pid, l->fd);
			if (l->kind == TL_POSIX || l->kind == TL_OFD)
				printf(",\"start\":%lld,\"end\":%lld", l->start, l->end);
			putchar('}');
			continue;
		}
		printf("lock %s %s", tree_lock_names[l->kind], l->write ? "write" : "read");
		if (l->kind != TL_OFD)
			printf(" pid %d fd %d", l->pid, l->fd);
		if (l->kind == TL_POSIX || l->kind == TL_OFD)
			printf(" bytes %lld-%s%.0lld", l->start, l->end < 0 ? "EOF" : "",
			       l->end < 0 ? 0 : l->end);
		printf(" (file %d)\n", l->file);
	}
	if (json)
		putchar(']');
}

const struct tree_record locks_records[] = {
	{ "lock", lock_record_read, lock_records_write, lock_records_show },
	{ NULL, NULL, NULL, NULL }
};
