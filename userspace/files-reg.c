// SPDX-License-Identifier: GPL-2.0
/*
 * Regular files and directories ("file kind=reg" records): reopened by their path
 * with their flags, then seeked to their offset.  The path is the one
 * /proc/PID/fd shows: one outside the dumper's root is refused (deleted
 * files, directories and names are ghosts: files-ghost.c; one held with
 * O_PATH is refused).  A file of /proc/N/ is refused if N is a task of the
 * tree (the restorer opens every file before it creates the tasks) or a
 * process that has exited.  The file's content is not saved:
 * it must be there at restore, unchanged: the dump records its identity
 * (an "fstat" record: dev, inode, size, mtime, and the mount point it was
 * under), and a restore refuses a file that differs, naming what changed,
 * unless --allow-changed-files.  Directories: dev and inode only (their
 * size and mtime change with every entry made in them).
 *
 * A regular file's record also holds the checksum of its first page
 * (crc32 as the module's imgcr_file.head_crc: crc32_le(~0) of the first
 * min(size, 4096) bytes), read at dump through /proc/PID/fd/N in a tree
 * with a mount namespace of its own (reg_dump_crc).  On a
 * mount restore --root (or --external mnt[]) binds from another directory
 * (mount.c: mnt_moved) the files are copies: a device or inode that
 * differs is not a change there, and such a file is the dump's if its
 * size, mtime and first page are (as the module checks mapped files),
 * found on that mount without symbolic links (reg_mnt_open), and files
 * that were one inode are one there (reg_links); a directory there is
 * found by its path alone, where the dump had one (dir=1).  Files of /proc,
 * /sys and the like: not checked (their inodes are made anew).
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
#include <limits.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/kcmp.h>
#include <linux/openat2.h>

#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"

/*
 * On the kernel's pseudo filesystems inodes are made anew (a /proc/PID
 * file of a restored task is another inode) and sizes and times mean
 * little: no identity check there.
 */
static int pseudo_fs(const struct fd_parms *p)
{
	static const long types[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
		DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC,
	};
	char path[64];
	struct statfs sfs;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	if (statfs(path, &sfs))
		return 0;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (sfs.f_type == types[i])
			return 1;
	return 0;
}

/* The mount point of @p's file (its "mnt_id" in mountinfo), malloc'ed; NULL if unknown. */
static char *mount_point(const struct fd_parms *p)
{
	char path[64], *info = fd_info(p), *mi, *line, *save = NULL, *mnt = NULL;
	const char *v = info ? status_field(info, "mnt_id") : NULL;
	int id = v ? atoi(v) : -1, lid;
	char where[4096 + 1];

	free(info);
	if (id < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", p->pid);
	mi = read_text(path, NULL);
	for (line = mi ? strtok_r(mi, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%d %*d %*s %*s %4096s", &lid, where) == 2 && lid == id) {
			/* mountinfo escapes space, tab, newline, backslash as \ooo */
			char *o = where, *i = where;
			unsigned int c;

			for (; *i; i++) {
				if (*i == '\\' && sscanf(i + 1, "%3o", &c) == 1 && i[1] && i[2] && i[3]) {
					*o++ = (char)c;
					i += 3;
				} else {
					*o++ = *i;
				}
			}
			*o = 0;
			mnt = strdup(where);
			break;
		}
	free(mi);
	return mnt;
}

/* crc32_le(~0) without the final inversion, as the kernel's crc32_le() (file_head.h) */
static unsigned int head_crc32(const unsigned char *b, size_t n)
{
	unsigned int crc = ~0u;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		crc ^= b[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

/* The checksum of the first min(@size, 4096) bytes of @fd: 0, or -1 if they cannot all be read. */
static int fd_head_crc(int fd, long long size, unsigned int *crc)
{
	unsigned char buf[4096];
	size_t n = size < (long long)sizeof(buf) ? (size_t)size : sizeof(buf);
	ssize_t r;

	if (size < 0)
		return -1;
	r = pread(fd, buf, n, 0);
	if (r < 0 || (size_t)r != n)
		return -1;
	*crc = head_crc32(buf, n);
	return 0;
}

/* @dir (a /proc/PID/task/TID/fd) holds an inotify or fanotify fd: 1, 0, or 1 if it cannot tell */
static int fds_watch(const char *dir)
{
	char link[160], target[64];
	struct dirent *d;
	int watches = 0;
	ssize_t n;
	DIR *fds;

	fds = opendir(dir);
	if (!fds)
		return 1;
	while (!watches && (d = readdir(fds))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%.16s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		watches = !strcmp(target, "anon_inode:inotify") ||
			  !strcmp(target, "anon_inode:[fanotify]");
	}
	closedir(fds);
	return watches;
}

/*
 * A thread of a task of the tree holds an inotify or fanotify fd (each
 * fd table once: a thread may have its own, unshare(CLONE_FILES); one
 * sharing its leader's, kcmp KCMP_FILES, is not read again; tasks do not
 * share one, shared_check refuses that): imgcr's own open and read of a
 * file it watches would queue events in it (or ask a listener), a change
 * of the tree's state.  Asked once per dump (*c->watches, the driver's,
 * the tasks frozen).  Not seen: such an fd only in flight (SCM_RIGHTS).
 */
static int tree_watches(struct fd_dump *c)
{
	const struct tree *t = c->t;
	char dir[128];
	struct dirent *d;
	int i, w = 0;
	pid_t pid, tid;
	DIR *tasks;

	if (c->watches && *c->watches)
		return *c->watches == 2;
	for (i = 0; !w && i < t->ntasks; i++) {
		pid = t->tasks[i].pid;
		snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
		tasks = opendir(dir);
		if (!tasks) {
			w = 1;	/* cannot tell: no checksum */
			break;
		}
		while (!w && (d = readdir(tasks))) {
			if (d->d_name[0] == '.')
				continue;
			tid = atoi(d->d_name);
			if (tid != pid && syscall(SYS_kcmp, pid, tid, KCMP_FILES, 0, 0) == 0)
				continue;	/* the leader's table, read with it */
			snprintf(dir, sizeof(dir), "/proc/%d/task/%d/fd", pid, tid);
			w = fds_watch(dir);
		}
		closedir(tasks);
	}
	if (c->watches)
		*c->watches = w ? 2 : 1;
	return w;
}

/*
 * The first page's checksum of @p's regular file, through /proc/PID/fd/N
 * (O_NOATIME: its access time left alone), for a tree with a mount
 * namespace of its own (the only one restore --root binds elsewhere), on
 * a mount that could be bound from elsewhere (mnt_may_move: not a tmpfs,
 * not FUSE, whose daemon may be a frozen task of the tree).  Not
 * read (f->has_crc 0) if the fd holds a lease (opening the file could
 * break it), if the tree watches files (tree_watches), if the file
 * cannot be opened again with O_NOATIME, or if its size or mtime changed
 * meanwhile: a restore then accepts it only on the same device and inode.
 */
static void reg_dump_crc(struct fd_dump *c, const struct fd_parms *p, struct tree_file *f)
{
	char path[64], *info;
	struct stat st;
	int fd, lease;

	if (!S_ISREG(p->st.st_mode) || !c->t->ns || !(c->t->ns->own & NS_BIT(NS_MNT)) ||
	    !mnt_may_move(c->t, f->mnt) || tree_watches(c))
		return;
	info = fd_info(p);
	lease = info && strstr(info, "LEASE");
	free(info);
	if (lease)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	/* without O_NOATIME (not the file's owner, no CAP_FOWNER): no checksum, atime untouched */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOATIME);
	if (fd < 0)
		return;
	/* the size and mtime recorded (p->st) are the ones the checksum is of */
	if (!fstat(fd, &st) && st.st_dev == p->st.st_dev && st.st_ino == p->st.st_ino &&
	    st.st_size == p->st.st_size && st.st_mtim.tv_sec == p->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == p->st.st_mtim.tv_nsec &&
	    !fd_head_crc(fd, p->st.st_size, &f->head_crc))
		f->has_crc = 1;
	close(fd);
}

static int reg_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	static char mnt[4096 + 1];
	char *m;

	if (!S_ISREG(p->st.st_mode) && !S_ISDIR(p->st.st_mode) && !(p->flags & O_PATH))
		return FD_OTHER;
	if (p->link[0] != '/')
		return fd_refuse(p, "%s: files outside the dumper's root are not supported", p->link);
	if (strstr(p->link, " (deleted)"))
		return fd_refuse(p, "%s: a deleted %s held through O_PATH is not supported", p->link,
				 S_ISDIR(p->st.st_mode) ? "directory" : "file");
	f->path = p->link;
	if (pseudo_fs(p)) {
		pid_t n = 0;
		char rest;

		/*
		 * /proc/N/...: the restorer opens every file before it
		 * creates the tasks, so N must be a process that exists then
		 */
		int k = sscanf(p->link, "/proc/%d%c", &n, &rest);
		char dir[64];
		struct stat st;

		if (k >= 1 && (k == 1 || rest == '/') && n > 0 && tree_find_tid(c->t, n))
			return fd_refuse(p, "%s: a file of /proc of a task of the tree (%d) is not supported (restore opens the files before it creates the tasks)",
					 p->link, n);
		snprintf(dir, sizeof(dir), "/proc/%d", n);
		if (k >= 1 && (k == 1 || rest == '/') && n > 0 && stat(dir, &st))
			return fd_refuse(p, "%s: a file of /proc of a process that has exited (%d) is not supported (it cannot be opened again)",
					 p->link, n);
		return FD_DESCRIBED;
	}
	f->has_stat = 1;
	f->dir = S_ISDIR(p->st.st_mode);
	f->size = p->st.st_size;
	f->mtime_ns = p->st.st_mtim.tv_sec * 1000000000LL + p->st.st_mtim.tv_nsec;
	m = mount_point(p);
	snprintf(mnt, sizeof(mnt), "%s", m ? m : "/");
	free(m);
	f->mnt = mnt;	/* borrowed, like path: the driver copies it */
	reg_dump_crc(c, p, f);
	return FD_DESCRIBED;
}

/* @f's file could not be opened (errno @e): say whether its mount point is gone. */
static void reg_open_failed(const struct tree_file *f, int e)
{
	struct stat st;

	if (f->has_stat && f->mnt && strcmp(f->mnt, "/") &&
	    (stat(f->mnt, &st) || st.st_dev != (dev_t)f->dev)) {
		pr_err("cannot open %s: %s: the filesystem it was on at dump (dev %u:%u, mounted at %s) is not mounted there any more",
		       f->path, strerror(e), major(f->dev), minor(f->dev), f->mnt);
		return;
	}
	errno = e;
	pr_perror("cannot open %s", f->path);
}

/*
 * @f's path opened on the mount it was on at the dump, for a mount bound
 * from another directory (--root, --external mnt[]): from its mount
 * point (the mount seen there), beneath it, following no symbolic link
 * and crossing no mount.  The dumped path (/proc/PID/fd) has none, so a
 * link or mount on the way in the copy (that could lead out of it, to the
 * host's files or another mount) is a difference: -1, errno ELOOP or
 * EXDEV.  Before openat2 (5.6): the path as it is.
 */
static int reg_mnt_open(const struct tree_file *f, int flags)
{
	return mnt_path_open(f->mnt ? f->mnt : "/", f->path, flags);
}

/* "pid P fd N: " of a task holding file @i (the first), for messages */
static void reg_holder(const struct tree *t, int i, char *out, size_t size)
{
	int j, m;

	for (j = 0; j < t->ntasks; j++)
		for (m = 0; m < t->tasks[j].nfds; m++)
			if (t->tasks[j].fds[m].file == i) {
				const struct tree_task *k = &t->tasks[j];

				/* the pid of the dump, and the one in its namespace if they differ */
				if (k->dump_pid && k->dump_pid != k->pid)
					snprintf(out, size, "pid %d fd %d (pid %d in its PID namespace): ",
						 k->dump_pid, k->fds[m].fd, k->pid);
				else
					snprintf(out, size, "pid %d fd %d: ", k->pid, k->fds[m].fd);
				return;
			}
	out[0] = 0;
}

/*
 * On a moved mount (--root): @fd's file, of the dump's size and mtime, has
 * another device or inode.  0 if it is the dump's copy (a directory; a
 * regular file whose first page has the dumped checksum), else -1 and why.
 */
static int reg_copy_same(const struct tree_file *f, int fd, const struct stat *st, char *why,
			 size_t size)
{
	unsigned int crc;
	struct stat st2;
	/*
	 * a directory: found by its path, if the dump had one (dir=1; an older
	 * imgcr's image has no dir=1: a directory there is taken only for an
	 * fd opened with O_DIRECTORY, which was one at the dump)
	 */
	int rfd, r, dir = f->dir || (f->flags & O_DIRECTORY);

	if (S_ISDIR(st->st_mode) != dir) {
		snprintf(why, size, dir ? "not a directory (mode 0%o), where the dump had one" :
			 f->has_crc ? "a directory, where the dump had a regular file" :
			 "a directory, where the dump had a regular file (or, an image of an older imgcr, whose records do not say)",
			 st->st_mode & S_IFMT);
		return -1;
	}
	if (S_ISDIR(st->st_mode))
		return 0;
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, size, "not a regular file or directory (mode 0%o): only those are compared by content",
			 st->st_mode & S_IFMT);
		return -1;
	}
	if (!f->has_crc) {
		snprintf(why, size, "the dump recorded no checksum of its first page (an older imgcr, a tree that watches files with inotify or fanotify, a leased file)");
		return -1;
	}
	/*
	 * its first page: through @fd if it reads (pread: the offset stays),
	 * else (write-only, O_PATH, O_DIRECT's alignment) a read-only open of
	 * the same path on the same mount, without following links, checked
	 * to be the same inode
	 */
	if ((f->flags & (O_PATH | O_DIRECT)) || (f->flags & O_ACCMODE) == O_WRONLY) {
		rfd = reg_mnt_open(f, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOATIME);
		if (rfd < 0 && errno == EPERM)
			rfd = reg_mnt_open(f, O_RDONLY | O_NONBLOCK | O_NOCTTY);
		if (rfd < 0) {
			snprintf(why, size, "cannot open it to read its first page: %s", strerror(errno));
			return -1;
		}
	} else {
		rfd = fd;
	}
	r = fstat(rfd, &st2) || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino ||
	    fd_head_crc(rfd, st->st_size, &crc);
	if (rfd != fd)
		close(rfd);
	if (r) {
		snprintf(why, size, "cannot read its first page");
		return -1;
	}
	if (crc != f->head_crc) {
		snprintf(why, size, "another file of the same size and mtime: its first page differs (checksum %08x, was %08x)",
			 crc, f->head_crc);
		return -1;
	}
	return 0;
}

/*
 * reg_links' files checked so far, in two hash tables (open addressing):
 * by the dumped key (dev, inode) and by the found one.  Every file of a
 * class of either key has the same key of the other kind (else it was
 * refused), so one entry per key stands for its class.  For one restore
 * (one tree per process), sized for its files.
 */
struct reg_key {
	unsigned long long dev, ino;	/* the key */
	unsigned long long odev, oino;	/* the class's key of the other kind */
	int file;			/* a file of the class (+1; 0: a free slot) */
	int moved;			/* one of the class is on a moved mount */
};
static struct reg_key *reg_dumped, *reg_found;
static size_t reg_slots;

static struct reg_key *reg_key_slot(struct reg_key *h, unsigned long long dev,
				    unsigned long long ino)
{
	size_t k = (size_t)((dev * 0x9e3779b97f4a7c15ULL) ^ (ino * 0xc2b2ae3d27d4eb4fULL));

	for (k &= reg_slots - 1; h[k].file; k = (k + 1) & (reg_slots - 1))
		if (h[k].dev == dev && h[k].ino == ino)
			break;
	return &h[k];
}

/*
 * Hard links on a mount bound from a copy (--root, --external mnt[]): file
 * @i (found: @st) and each file checked before it (by reg_check, which
 * compares a file elsewhere by device and inode) were one inode at the
 * dump (dev, inode) exactly if they are one now, where one of the two is
 * on such a mount.  A copy that broke a link (cp without -a, rsync
 * without -H) would make one file two: writes through one no longer seen
 * through the other; one that joined two, two files one.  0, or -1 and
 * why (naming the other file).  Each file looked up once by either key.
 */
static int reg_links(const struct fd_restore *r, int i, const struct stat *st, char *why,
		     size_t size)
{
	const struct tree_file *f = &r->t->files[i];
	int mi = !f->host && mnt_moved(r->t, f->mnt), was;
	unsigned long long fdev = st->st_dev, fino = st->st_ino;
	struct reg_key *d, *n;
	const struct tree_file *g;
	char who[64];

	if (!mnt_moved(r->t, NULL))
		return 0;	/* no mount bound from elsewhere: dev and inode compared */
	if (!reg_slots) {
		for (reg_slots = 16; reg_slots < 2 * (size_t)r->t->nfiles; reg_slots *= 2)
			;
		reg_dumped = calloc(reg_slots, sizeof(*reg_dumped));
		reg_found = calloc(reg_slots, sizeof(*reg_found));
		if (!reg_dumped || !reg_found) {
			pr_err("out of memory");
			exit(1);
		}
	}
	d = reg_key_slot(reg_dumped, f->dev, f->sino);
	n = reg_key_slot(reg_found, fdev, fino);
	/* one at the dump, two now; or two at the dump, one now */
	was = d->file && (mi || d->moved) && (d->odev != fdev || d->oino != fino);
	if (was || (n->file && (mi || n->moved) && (n->odev != f->dev || n->oino != f->sino))) {
		g = &r->t->files[(was ? d->file : n->file) - 1];
		reg_holder(r->t, (was ? d->file : n->file) - 1, who, sizeof(who));
		snprintf(why, size, was ?
			 "it and %s%s were one file at the dump (inode %llu), in the copy they are two (inodes %llu and %llu): a hard link the copy broke" :
			 "it and %s%s were two files at the dump (inodes %llu and %llu), in the copy they are one (inode %llu)",
			 who, g->path, f->sino, was ? fino : g->sino, was ? d->oino : fino);
		return -1;
	}
	if (!d->file)
		*d = (struct reg_key){ f->dev, f->sino, fdev, fino, i + 1, 0 };
	if (!n->file)
		*n = (struct reg_key){ fdev, fino, f->dev, f->sino, i + 1, 0 };
	d->moved |= mi;
	n->moved |= mi;
	return 0;
}

/* @fd, just opened for file @i: is it the file of the dump?  0, or -1 (printed). */
static int reg_check(struct fd_restore *r, int i, int fd)
{
	const struct tree_file *f = &r->t->files[i];
	char why[1024], who[64];
	long long mtime;
	struct stat st;
	size_t off = 0;
	int moved, other;

	if (!f->has_stat)
		return 0;
	if (fstat(fd, &st)) {
		pr_perror("%s: fstat", f->path);
		return -1;
	}
	why[0] = 0;
	mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	other = st.st_dev != (dev_t)f->dev || st.st_ino != (ino_t)f->sino;
	/* a copy in the directory restore --root binds from: its content compared below */
	moved = other && !f->host && mnt_moved(r->t, f->mnt);
	if (st.st_dev != (dev_t)f->dev && !moved)
		off += snprintf(why + off, sizeof(why) - off, ", device %u:%u -> %u:%u (mount %s)",
				major(f->dev), minor(f->dev), major(st.st_dev), minor(st.st_dev),
				f->mnt ? f->mnt : "?");
	if (st.st_ino != (ino_t)f->sino && !moved && off < sizeof(why))
		off += snprintf(why + off, sizeof(why) - off, ", inode %llu -> %llu",
				f->sino, (unsigned long long)st.st_ino);
	if (S_ISREG(st.st_mode) && st.st_size != f->size && off < sizeof(why))
		off += snprintf(why + off, sizeof(why) - off, ", size %lld -> %lld",
				f->size, (long long)st.st_size);
	if (S_ISREG(st.st_mode) && mtime != f->mtime_ns && off < sizeof(why))
		off += snprintf(why + off, sizeof(why) - off, ", mtime %lld.%09lld -> %lld.%09lld",
				f->mtime_ns / 1000000000, f->mtime_ns % 1000000000,
				mtime / 1000000000, mtime % 1000000000);
	if (!off && moved && off < sizeof(why)) {
		char how[512];

		if (reg_copy_same(f, fd, &st, how, sizeof(how)))
			off += snprintf(why + off, sizeof(why) - off, ", %s (mount %s, bound from another directory than at the dump: inode %llu -> %llu)",
					how, f->mnt, f->sino, (unsigned long long)st.st_ino);
	}
	if (!off && off < sizeof(why)) {
		char how[1024];

		if (reg_links(r, i, &st, how, sizeof(how)))
			off += snprintf(why + off, sizeof(why) - off, ", %s", how);
	}
	if (!off)
		return 0;
	reg_holder(r->t, i, who, sizeof(who));
	if (r->allow_changed) {
		pr_info("%s%s changed since the dump (%s): restored anyway (--allow-changed-files)",
			who, f->path, why + 2);
		return 0;
	}
	pr_err("%s%s changed since the dump: %s; restore with --allow-changed-files to restore it anyway",
	       who, f->path, why + 2);
	return -1;
}

static int reg_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	int fd;

	/*
	 * no magic link (fd_path_open); O_NONBLOCK|O_NOCTTY until reg_check()
	 * saw the file (a FIFO or tty put at the path must not block or
	 * become the controlling terminal), fd_set_flags() sets the dumped ones
	 */
	int flags = fd_open_flags(f->flags) | (f->flags & O_PATH ? 0 : O_NONBLOCK | O_NOCTTY);
	int moved = f->has_stat && !f->host && mnt_moved(r->t, f->mnt);

	/*
	 * on a mount bound from a copy: found on that mount, by no link
	 * (reg_mnt_open).  Looked up first without opening (O_PATH): only a
	 * regular file or a directory (what the dump records of this kind)
	 * is opened, through that look (a device node's open may act, a
	 * FIFO's block); by path again where no /proc is mounted.
	 */
	fd = moved ? reg_mnt_open(f, flags | O_PATH) : fd_path_open(f->path, flags | O_PATH);
	if (fd >= 0 && !(f->flags & O_PATH)) {
		struct stat st = { 0 };
		char self[64];
		int p = fd, e;

		if (fstat(p, &st) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
			char who[64];

			reg_holder(r->t, i, who, sizeof(who));
			pr_err("%s%s: not a regular file or directory at restore (mode 0%o), where the dump had one: restore refused",
			       who, f->path, st.st_mode & S_IFMT);
			close(p);
			return -1;
		}
		/* O_NOFOLLOW: taken by the look, not for the magic link */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
		fd = open(self, flags & ~O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT)
			fd = moved ? reg_mnt_open(f, flags) : fd_path_open(f->path, flags);
		e = errno;
		close(p);
		errno = e;
	}
	if (fd < 0 && moved && (errno == ELOOP || errno == EXDEV)) {
		char who[64];

		reg_holder(r->t, i, who, sizeof(who));
		pr_err("%s%s: in the copy its path has %s (mount %s, bound from another directory than at the dump): it would not be the file on that mount; restore refused",
		       who, f->path, errno == ELOOP ? "a symbolic link (the dumped path had none)" :
		       "another mount on the way, or leads off the mount", f->mnt);
		return -1;
	}
	if (fd < 0) {
		reg_open_failed(f, errno);
		return -1;
	}
	/* an O_PATH fd takes no F_SETFL and has no offset */
	if (reg_check(r, i, fd) || (!(f->flags & O_PATH) && fd_set_flags(fd, f->flags, what)))
		goto fail;
	if (f->pos && !(f->flags & O_PATH) && lseek(fd, f->pos, SEEK_SET) != f->pos) {
		pr_perror("%s: cannot seek to %lld", f->path, f->pos);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}


static void reg_rec_write(FILE *f, const struct tree_file *x)
{
	if (x->host)
		fprintf(f, " host=1");
	fd_rec_path(f, x->path);
}

static const char *reg_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (rec_str(r, "path", &x->path) ||
	    (rec_has(r, "host") && REC_NUM(r, "host", 0, 1, x->host)))
		return "bad file record";
	return NULL;
}

static void reg_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	const struct tree_file *f = &t->files[i];

	snprintf(out, size, "file %s %s%s%s", f->path, mode, f->flags & O_PATH ? " O_PATH" : "",
		 f->host ? " (host's, outside the mount namespace)" : "");
}

/* its path, then what its fstat record holds */
static void reg_rec_json(const struct tree *t, int i)
{
	const struct tree_file *f = &t->files[i];

	fd_json_path(f->path);
	if (f->host)
		printf(",\"host\":true");
	if (f->has_stat) {
		printf(",\"stat\":{\"dev\":%llu,\"ino\":%llu,\"size\":%lld,\"mtime_ns\":%lld,",
		       f->dev, f->sino, f->size, f->mtime_ns);
		if (f->has_crc)
			printf("\"head_crc\":%u,", f->head_crc);
		if (f->dir)
			printf("\"dir\":true,");
		printf("\"mount\":");
		json_str(f->mnt);
		putchar('}');
	}
}

const struct fd_kind reg_fd_kind = {
	.name = "file",
	.type = TK_REG,
	.dump = reg_dump,
	.open = reg_open,
	.rec_write = reg_rec_write,
	.rec_read = reg_rec_read,
	.rec_show = reg_rec_show,
	.rec_json = reg_rec_json,
};

/* ---- the tree file: fstat records (record.h; the format: imgcr-image(5)) ---- */

static void fstat_records_write(FILE *f, const struct tree *t)
{
	char e[3 * 4096 + 4];
	int i;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];

		if (!x->has_stat)
			continue;
		tree_escape(e, sizeof(e), x->mnt ? x->mnt : "/");
		fprintf(f, "fstat id=%d dev=%llu ino=%llu size=%lld mtime=%lld mnt=%s", x->id,
			x->dev, x->sino, x->size, x->mtime_ns, e);
		if (x->has_crc)
			fprintf(f, " crc=%u", x->head_crc);
		if (x->dir)
			fprintf(f, " dir=1");
		fputc('\n', f);
	}
}

static const char *fstat_record_read(struct tree *t, struct rec *r)
{
	struct tree_file *x;
	int id;

	if (REC_NUM(r, "id", 0, t->nfiles - 1, id))
		return "bad fstat record";
	x = &t->files[id];
	if (x->kind != TK_REG || x->has_stat || rec_unum(r, "dev", &x->dev) ||
	    rec_unum(r, "ino", &x->sino) || REC_NUM(r, "size", 0, LLONG_MAX, x->size) ||
	    REC_NUM(r, "mtime", LLONG_MIN, LLONG_MAX, x->mtime_ns) || rec_str(r, "mnt", &x->mnt))
		return "bad fstat record";
	if (rec_has(r, "crc")) {
		if (REC_NUM(r, "crc", 0, UINT_MAX, x->head_crc))
			return "bad fstat record: crc";
		x->has_crc = 1;
	}
	if (rec_has(r, "dir") && REC_NUM(r, "dir", 0, 1, x->dir))
		return "bad fstat record: dir";
	x->has_stat = 1;
	return NULL;
}

/* imgcr show (record.h): in JSON, in the file's object (reg_rec_json) */
static void fstat_records_show(const struct tree *t, int json)
{
	int i;

	for (i = 0; !json && i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (f->has_stat) {
			printf("file %d: %s dev %llu ino %llu size %lld mtime %lld.%09lld mount %s",
			       i, f->path, f->dev, f->sino, f->size, f->mtime_ns / 1000000000,
			       f->mtime_ns % 1000000000, f->mnt);
			if (f->has_crc)
				printf(" head_crc %08x", f->head_crc);
			if (f->dir)
				printf(" directory");
			putchar('\n');
		}
	}
}

const struct tree_record reg_records[] = {
	{ "fstat", fstat_record_read, fstat_records_write, fstat_records_show },
	{ NULL, NULL, NULL, NULL }
};
