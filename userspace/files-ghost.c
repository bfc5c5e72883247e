// SPDX-License-Identifier: GPL-2.0
/*
 * Deleted regular files the tree still holds open ("ghost" file records,
 * one "ghost" record per deleted inode).  The /proc/PID/fd link of such a
 * file ends in " (deleted)" and it has no name left (st_nlink 0), so it
 * cannot be reopened by path: the dump saves its content, which nothing
 * else could bring back, in DIR/ghost-DEV-INO.data, copying only its data
 * ranges (SEEK_DATA/SEEK_HOLE) to the same offsets so that a sparse file
 * stays sparse, and records its size, mode, owner and mtime.  A file with more
 * bytes of data than imgcr dump --ghost-limit (default 1 MiB) is refused.
 *
 * At restore the restorer creates the file again, at its old path if that
 * name is free, else at a temporary name in the same directory (a note on
 * stderr says which), fills it, gives it its owner, opens it once per open
 * file description (flags, offset; through /proc/self/fd of the fd that
 * created it, not by path again), gives it its mode and mtime and, once
 * every file of the tree is open, unlinks it: the restored tasks see a
 * deleted file with the same data, and every description of one deleted
 * inode refers to one inode again.  A failed restore unlinks it too.
 *
 * The name: /proc/PID/fd shows a deleted file by the name its dentry had
 * when it was unlinked.  A ghost made at a temporary name because another
 * file took its old one is unlinked under its old name: renameat2
 * RENAME_EXCHANGE swaps it with that file, and renaming that file back
 * over it unlinks the ghost's dentry, which keeps the old name.  For that
 * instant the old name shows the ghost, and the other file's ctime
 * changes (a rename); its data and inode stay.  A directory at the old
 * name cannot be renamed over the ghost: that restore is refused.
 *
 * Other deleted things are ghosts too (the record's type=; no data file):
 * - dir: a deleted directory held open.  It can only have been empty: an
 *   empty directory is made (mkdirat), opened, given its owner, mode and
 *   mtime, and removed under its name.  A file at its name is refused at
 *   restore (a directory can be renamed over only by a directory).  A
 *   directory of /proc (of a process that has exited) is refused at dump.
 * - fifo: a deleted FIFO (fifo.c keeps its data as a pipe's): mkfifoat,
 *   opened O_RDWR, refilled by fifo.c, unlinked like the others.
 * - chr: a deleted node of /dev/null, zero, full, random or urandom:
 *   mknodat (CAP_MKNOD, else the restore fails naming it), opened O_PATH,
 *   each description opened through it.  Other devices: devices.c refuses.
 * - link: a deleted name of a file that still has other names (CRIU's
 *   "link remap").  Its content is not copied: the dump records the
 *   file's handle (name_to_handle_at, checked with open_by_handle_at); the
 *   restore finds the same live inode by it (root: CAP_DAC_READ_SEARCH),
 *   links it at the deleted name (or a free name: linkat through
 *   /proc/self/fd, which a file with names allows), opens it there and
 *   unlinks that name, so the fd is the live file again (writes reach its
 *   other names; its nlink is as before; its ctime changes).  Its mode and
 *   times are not touched.  A handle that finds no file with names, or
 *   another inode, fails the restore.
 *
 * Mapped ghosts: a deleted file a task maps (or runs) is in its image as
 * an IMGCR_FILE_DELETED record, by its old path, and the loader opens that
 * path at the exec.  After each image is saved its file table is read
 * (ghost_dump_mapped): such a file is the same ghost as an fd on it, or is
 * saved from /proc/PID/map_files/START-END (or /proc/PID/exe); the tree
 * marks it "ghost-mapped".  At restore it is made first, at its own path
 * only (a taken name fails the restore), its mode and mtime given back
 * with the others (the loader compares dev, size and mtime), and it stays
 * linked until the status pipe says every task has executed its image
 * (ghost_unlink_mapped, also on every failure).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"
#include "image.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "trust.h"

struct tree_ghost *tree_ghost_find(const struct tree *t, unsigned long long dev,
				   unsigned long long ino)
{
	int i;

	for (i = 0; i < t->nghosts; i++)
		if (t->ghosts[i].dev == dev && t->ghosts[i].ino == ino)
			return &t->ghosts[i];
	return NULL;
}

struct tree_ghost *tree_ghost_add(struct tree *t)
{
	struct tree_ghost *g;

	t->ghosts = tree_grow(t->ghosts, t->nghosts, sizeof(*t->ghosts));
	g = &t->ghosts[t->nghosts++];
	memset(g, 0, sizeof(*g));
	g->made_fd = g->made_dir = -1;
	return g;
}


#define DELETED " (deleted)"

/* DIR/ghost-DEV-INO.data (@dir NULL: the name in DIR only) */
static void ghost_data_path(char *out, size_t size, const char *dir, const struct tree_ghost *g)
{
	snprintf(out, size, "%s%sghost-%llu-%llu.data", dir ? dir : "", dir ? "/" : "",
		 g->dev, g->ino);
}

/*
 * Copy the data ranges of @in below @size to the same offsets of @out
 * (@out -1: only count them).  The bytes of data, or -1 (errno set).
 */
static long long copy_data(int in, int out, long long size)
{
	static char buf[1 << 16];
	long long pos = 0, n = 0;
	off_t d, h;

	while (pos < size) {
		d = lseek(in, pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break;			/* a hole up to the end */
		if (d < 0 && errno == EINVAL)
			d = pos;		/* no SEEK_DATA here: all data */
		else if (d < 0)
			return -1;
		h = lseek(in, d, SEEK_HOLE);
		if (h < 0 || h > size)
			h = size;
		n += h - d;
		for (pos = d; out >= 0 && pos < h;) {
			size_t want = h - pos < (long long)sizeof(buf) ? (size_t)(h - pos) : sizeof(buf);
			ssize_t got = pread(in, buf, want, pos);

			if (got <= 0) {
				if (!got)
					errno = EIO;	/* shorter than its size */
				return -1;
			}
			for (ssize_t w, o = 0; o < got; o += w) {
				w = pwrite(out, buf + o, got - o, pos + o);
				if (w < 0)
					return -1;
			}
			pos += got;
		}
		pos = h;
	}
	return n;
}

/*
 * Save the content of deleted file @in (named @what in messages) as ghost
 * record @g.  FD_DESCRIBED, FD_REFUSED (@p set: its why; else printed) or
 * FD_FAILED.
 */
static int ghost_save_fd(struct fd_dump *c, struct fd_parms *p, int in, const char *what,
			 struct tree_ghost *g)
{
	char dst[PATH_MAX];
	long long data;
	int out;

	data = copy_data(in, -1, g->size);
	if (data < 0) {
		pr_perror("%s: cannot read it", what);
		return FD_FAILED;
	}
	if (data > c->ghost_limit) {
		if (p)
			return fd_refuse(p, "%s: a deleted file with %lld bytes of data (size %lld) is not supported: more than the limit of %lld bytes (imgcr dump --ghost-limit BYTES raises it)",
					 p->link, data, g->size, c->ghost_limit);
		pr_err("%s: a deleted file with %lld bytes of data (size %lld) is not supported: more than the limit of %lld bytes (imgcr dump --ghost-limit BYTES raises it)",
		       what, data, g->size, c->ghost_limit);
		return FD_REFUSED;
	}
	ghost_data_path(dst, sizeof(dst), c->dir, g);
	out = img_create(dst, 0600);
	if (out < 0) {
		pr_perror("cannot create %s", dst);
		return FD_FAILED;
	}
	if (ftruncate(out, g->size) || copy_data(in, out, g->size) < 0 || fsync(out)) {
		pr_perror("%s: cannot save it in %s", what, dst);
		close(out);
		return FD_FAILED;
	}
	close(out);
	return FD_DESCRIBED;
}

/* Save the content of @p's deleted file as ghost record @g. */
static int ghost_save(struct fd_dump *c, struct fd_parms *p, struct tree_ghost *g)
{
	char src[64], what[PATH_MAX + 64];
	int in, ret;

	snprintf(src, sizeof(src), "/proc/%d/fd/%d", p->pid, p->fd);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		pr_perror("pid %d fd %d: %s: cannot open the deleted file to save it", p->pid, p->fd,
			  p->link);
		return FD_FAILED;
	}
	snprintf(what, sizeof(what), "pid %d fd %d: %s", p->pid, p->fd, p->link);
	ret = ghost_save_fd(c, p, in, what, g);
	close(in);
	return ret;
}

static int parent_exists(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;

	snprintf(dir, sizeof(dir), "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	return !stat(dir, &st) && S_ISDIR(st.st_mode);
}

/* the character devices a deleted node of which is made again (devices.c's) */
static int ghost_chr_ok(dev_t rdev)
{
	return major(rdev) == 1 && (minor(rdev) == 3 || minor(rdev) == 5 || minor(rdev) == 7 ||
				    minor(rdev) == 8 || minor(rdev) == 9);
}

static const char *ghost_what(const struct tree_ghost *g)
{
	static const char *const what[] = { "deleted file", "deleted directory", "deleted FIFO",
					    "deleted device node", "deleted name of a file" };

	return what[g->type];
}

static const char *const ghost_type_names[] = { "reg", "dir", "fifo", "chr", "link" };

/*
 * GHOST_LINK: the file handle of @p's file (a deleted name of a file with
 * other names), which restore opens again (open_by_handle_at) to link the
 * same inode back under a name; checked here that it opens it.  FD_DESCRIBED
 * or FD_REFUSED.
 */
static int ghost_handle(struct fd_parms *p, struct tree_ghost *g)
{
	struct {
		struct file_handle fh;
		unsigned char buf[GHOST_HANDLE_MAX];
	} h;
	char src[64], dir[PATH_MAX];
	int mnt, dfd, fd, e;
	struct stat st;

	snprintf(src, sizeof(src), "/proc/%d/fd/%d", p->pid, p->fd);
	h.fh.handle_bytes = GHOST_HANDLE_MAX;
	if (name_to_handle_at(AT_FDCWD, src, &h.fh, &mnt, AT_SYMLINK_FOLLOW))
		return fd_refuse(p, "%s: a deleted name of a file that still has %lu other name(s): its filesystem gives no file handle to find it again (name_to_handle_at: %s): not supported",
				 p->link, (unsigned long)p->st.st_nlink, strerror(errno));
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(g->path, '/') - g->path), g->path);
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = dfd < 0 ? -1 : (int)syscall(SYS_open_by_handle_at, dfd, &h.fh, O_PATH | O_CLOEXEC);
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0 || fstat(fd, &st) || st.st_dev != p->st.st_dev || st.st_ino != p->st.st_ino) {
		if (fd >= 0)
			close(fd);
		return fd_refuse(p, "%s: a deleted name of a file that still has %lu other name(s): its file handle does not open it again from %s (open_by_handle_at: %s): not supported",
				 p->link, (unsigned long)p->st.st_nlink, dir[0] ? dir : "/",
				 fd < 0 ? strerror(e) : "another file");
	}
	close(fd);
	g->htype = h.fh.handle_type;
	g->hlen = h.fh.handle_bytes;
	memcpy(g->handle, h.fh.f_handle, g->hlen);
	return FD_DESCRIBED;
}

/*
 * A deleted file of @p as ghost @g, type @type; the same one as
 * another description's if known.  FD_DESCRIBED, FD_REFUSED or FD_FAILED.
 */
static int ghost_describe(struct fd_dump *c, struct fd_parms *p, int type)
{
	size_t len = strlen(p->link), dl = strlen(DELETED);
	struct tree_ghost *g;
	int r;

	/* another description of a deleted inode already saved: the same ghost */
	g = tree_ghost_find(c->t, p->st.st_dev, p->st.st_ino);
	if (g)
		return g->type == type ? FD_DESCRIBED :
		       fd_refuse(p, "%s: one deleted file seen as a %s and a %s", p->link,
				 ghost_type_names[g->type], ghost_type_names[type]);
	g = tree_ghost_add(c->t);
	g->type = type;
	g->dev = p->st.st_dev;
	g->ino = p->st.st_ino;
	g->size = type == GHOST_REG || type == GHOST_LINK ? p->st.st_size : 0;
	g->mode = p->st.st_mode & 07777;
	g->uid = p->st.st_uid;
	g->gid = p->st.st_gid;
	g->mtime_ns = p->st.st_mtim.tv_sec * 1000000000LL + p->st.st_mtim.tv_nsec;
	g->major = major(p->st.st_rdev);
	g->minor = minor(p->st.st_rdev);
	g->path = strndup(p->link, len - dl);
	/* recreated where it was: its directory must still be there */
	if (!parent_exists(g->path))
		r = fd_refuse(p, "%s: a deleted %s whose directory was deleted too is not supported",
			      p->link, type == GHOST_DIR ? "directory" : "file");
	else if (type == GHOST_REG)
		r = ghost_save(c, p, g);
	else if (type == GHOST_LINK)
		r = ghost_handle(p, g);
	else
		r = FD_DESCRIBED;
	if (r != FD_DESCRIBED) {
		free(g->path);
		c->t->nghosts--;
	}
	return r;
}

int ghost_dump_fifo(struct fd_dump *c, struct fd_parms *p)
{
	return ghost_describe(c, p, GHOST_FIFO);
}

static int ghost_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	size_t len = strlen(p->link), dl = strlen(DELETED);
	struct statfs sfs;
	struct stat st;
	char src[64];

	(void)f;

	if (p->link[0] != '/' || len <= dl || strcmp(p->link + len - dl, DELETED))
		return FD_OTHER;
	/* a name that really ends in " (deleted)" */
	if (!lstat(p->link, &st) && st.st_dev == p->st.st_dev && st.st_ino == p->st.st_ino)
		return FD_OTHER;
	snprintf(src, sizeof(src), "/proc/%d/fd/%d", p->pid, p->fd);
	if (S_ISDIR(p->st.st_mode) && !statfs(src, &sfs) && sfs.f_type == PROC_SUPER_MAGIC)
		return fd_refuse(p, "%s: the /proc directory of a process that has exited is not supported (it cannot be made again)",
				 p->link);
	/* a removed cgroup or the like: a mkdir there would make another one */
	if (S_ISDIR(p->st.st_mode) && !statfs(src, &sfs) &&
	    (sfs.f_type == SYSFS_MAGIC || sfs.f_type == CGROUP_SUPER_MAGIC ||
	     sfs.f_type == CGROUP2_SUPER_MAGIC || sfs.f_type == DEBUGFS_MAGIC ||
	     sfs.f_type == TRACEFS_MAGIC || sfs.f_type == SECURITYFS_MAGIC ||
	     sfs.f_type == BPF_FS_MAGIC))
		return fd_refuse(p, "%s: a deleted directory of a kernel filesystem (magic 0x%lx: cgroup, sysfs...) is not supported",
				 p->link, (long)sfs.f_type);
	if (S_ISREG(p->st.st_mode))
		return ghost_describe(c, p, p->st.st_nlink ? GHOST_LINK : GHOST_REG);
	if (S_ISDIR(p->st.st_mode))
		return ghost_describe(c, p, GHOST_DIR);
	if (S_ISCHR(p->st.st_mode) && ghost_chr_ok(p->st.st_rdev))
		return ghost_describe(c, p, GHOST_CHR);
	return FD_OTHER;	/* FIFOs: fifo.c; other devices: refused by devices.c */
}

/*
 * dump: the deleted files that task @pid's image @img (open) maps or runs
 * (IMGCR_FILE_DELETED records: the loader opens them by their path) are
 * ghosts marked "mapped", which restore recreates at their own path.  A
 * ghost the fds already saved is only marked; the others are read through
 * /proc/PID/map_files/START-END of one of their mappings (or /proc/PID/exe).
 * 0, or -1 after printing why.
 */
int ghost_dump_mapped(struct fd_dump *c, pid_t pid, const struct image *img)
{
	char path[PATH_MAX], src[96], what[PATH_MAX + 64];
	struct imgcr_file rec;
	unsigned int i, j;
	int ret = -1;

	for (i = 0; i < img->task->nr_files; i++) {
		struct tree_ghost *g;
		struct stat st;
		int in = -1, r;

		if (image_file(img, i, &rec, path, sizeof(path))) {
			pr_err("%s: bad file table", img->path);
			goto out;
		}
		if (!(rec.flags & IMGCR_FILE_DELETED))
			continue;
		g = tree_ghost_find(c->t, rec.dev, rec.ino);
		if (g && g->type != GHOST_REG) {
			pr_err("pid %d: maps %s (deleted): a mapped %s is not supported", pid, path,
			       ghost_what(g));
			goto out;
		}
		if (g) {
			g->mapped = 1;
			continue;
		}
		for (j = 0; in < 0 && j < img->task->nr_vmas; j++) {
			const struct imgcr_vma *v = &img->vmas[j];

			if (v->kind != IMGCR_VMA_FILE || v->file != i)
				continue;
			snprintf(src, sizeof(src), "/proc/%d/map_files/%llx-%llx", pid,
				 (unsigned long long)v->start, (unsigned long long)v->end);
			in = open(src, O_RDONLY | O_CLOEXEC);
		}
		if (in < 0 && i == img->task->exe_file) {
			snprintf(src, sizeof(src), "/proc/%d/exe", pid);
			in = open(src, O_RDONLY | O_CLOEXEC);
		}
		if (in < 0) {
			pr_perror("pid %d: %s: cannot open the deleted file it maps to save it (%s; /proc/PID/map_files needs CAP_CHECKPOINT_RESTORE)",
				  pid, path, src);
			goto out;
		}
		if (fstat(in, &st) || !S_ISREG(st.st_mode) || st.st_dev != rec.dev ||
		    st.st_ino != rec.ino) {
			pr_err("pid %d: %s: %s is not the deleted file its image maps", pid, path, src);
			close(in);
			goto out;
		}
		if (st.st_nlink) {
			pr_err("pid %d: maps %s (deleted): a deleted name of a file that still has %lu other name(s) is not supported",
			       pid, path, (unsigned long)st.st_nlink);
			close(in);
			goto out;
		}
		if (!parent_exists(path)) {
			pr_err("pid %d: maps %s (deleted): a deleted file whose directory was deleted too is not supported",
			       pid, path);
			close(in);
			goto out;
		}
		g = tree_ghost_add(c->t);
		g->dev = st.st_dev;
		g->ino = st.st_ino;
		g->size = st.st_size;
		g->mode = st.st_mode & 07777;
		g->uid = st.st_uid;
		g->gid = st.st_gid;
		g->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		g->path = strdup(path);
		g->mapped = 1;
		snprintf(what, sizeof(what), "pid %d: mapped deleted file %s", pid, path);
		r = ghost_save_fd(c, NULL, in, what, g);
		close(in);
		if (r != FD_DESCRIBED) {
			free(g->path);
			c->t->nghosts--;
			goto out;
		}
	}
	ret = 0;
out:
	return ret;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The file at @name (its base) in @g's directory, created as the user whose
 * tree root restores (trust.c), so that the kernel checks that user's right
 * to create it there; O_NOFOLLOW, O_EXCL: a regular file (open O_RDWR), an
 * empty directory (O_RDONLY), a FIFO (O_RDWR: it never blocks), a device
 * node (O_PATH: not the device yet), or a new name of the file that
 * @link (GHOST_LINK: opened by its handle) is (O_PATH).  -1 and errno
 * EEXIST if the name is taken.
 */
static int ghost_creat(const struct tree_ghost *g, const char *name, int link)
{
	int as_user = trust_dir_user != (uid_t)-1 && g->uid != 0, fd = -1, e, r = 0;
	const char *b = base_of(name);
	char self[64];

	if (as_user) {
		setfsgid(g->gid);
		setfsuid(g->uid);
	}
	switch (g->type) {
	case GHOST_REG:
		fd = openat(g->made_dir, b, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		break;
	case GHOST_DIR:
		r = mkdirat(g->made_dir, b, 0700);
		break;
	case GHOST_FIFO:
		r = mkfifoat(g->made_dir, b, 0600);
		break;
	case GHOST_CHR:
		r = mknodat(g->made_dir, b, S_IFCHR | 0600, makedev(g->major, g->minor));
		break;
	case GHOST_LINK:
		snprintf(self, sizeof(self), "/proc/self/fd/%d", link);
		r = linkat(AT_FDCWD, self, g->made_dir, b, AT_SYMLINK_FOLLOW);
		break;
	}
	e = errno;
	if (as_user) {
		setfsuid(0);
		setfsgid(0);
	}
	if (g->type != GHOST_REG && !r) {
		static const int how[] = { 0, O_RDONLY | O_DIRECTORY, O_RDWR | O_NONBLOCK, O_PATH,
					   O_PATH };

		fd = openat(g->made_dir, b, how[g->type] | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (fd < 0)
			unlinkat(g->made_dir, b, g->type == GHOST_DIR ? AT_REMOVEDIR : 0);
	}
	errno = e;
	return fd;
}

/*
 * Unlink @name (g->made or g->path) in @g's directory if it is the ghost
 * still (the inode it was made as): a name swapped since is left.  0, or
 * -1 with errno.
 */
static int ghost_unlinkat(const struct tree_ghost *g, const char *name)
{
	struct stat st;

	if (fstatat(g->made_dir, base_of(name), &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	if (st.st_dev != g->made_dev || st.st_ino != g->made_ino) {
		errno = ESTALE;
		return -1;
	}
	return unlinkat(g->made_dir, base_of(name), g->type == GHOST_DIR ? AT_REMOVEDIR : 0);
}

static int ghost_renameat(const struct tree_ghost *g, const char *from, const char *to,
			  unsigned int flags)
{
	return syscall(SYS_renameat2, g->made_dir, base_of(from), g->made_dir, base_of(to), flags);
}

/* The ghost is gone: its name and directory forgotten. */
static void ghost_forget(struct tree_ghost *g)
{
	free(g->made);
	g->made = NULL;
	if (g->made_dir >= 0)
		close(g->made_dir);
	g->made_dir = -1;
}

/*
 * A free name in @path's directory, malloc'ed; the file created, its fd in
 * *@fd.  The temporary names tried are .imgcr-ghost-INO-N: whatever takes
 * one (a file, a directory, a symbolic link...) is passed over.
 */
static char *ghost_create(const struct tree_ghost *g, int *fd, int link)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(g->path, '/');
	int n;

	struct stat st;

	*fd = ghost_creat(g, g->path, link);
	if (*fd >= 0)
		return strdup(g->path);
	if (errno != EEXIST)
		return NULL;
	/* unlinked under its own name at the end: renamed over what is there */
	if (!fstatat(g->made_dir, base_of(g->path), &st, AT_SYMLINK_NOFOLLOW) &&
	    !S_ISDIR(st.st_mode) != (g->type != GHOST_DIR)) {
		pr_err("%s %s: its name is %s now: it cannot be restored under its name; rename that and restore again",
		       ghost_what(g), g->path, S_ISDIR(st.st_mode) ? "a directory" : "not a directory");
		errno = EEXIST;
		return NULL;
	}
	for (n = 0; n < 1000; n++) {
		snprintf(tmp, sizeof(tmp), "%.*s/.imgcr-ghost-%llu-%d", (int)(slash - g->path),
			 g->path, g->ino, n);
		*fd = ghost_creat(g, tmp, link);
		if (*fd >= 0)
			return strdup(tmp);
		if (errno != EEXIST)
			return NULL;
	}
	return NULL;
}

/*
 * Recreate @g from its data file in @dir: g->made, or -1 (printed).  A
 * mapped ghost only at its own path: the image names it.
 */
static int ghost_make(const struct tree *t, int dirfd, struct tree_ghost *g)
{
	char data[PATH_MAX], dir[PATH_MAX];
	const char *what = ghost_what(g);
	const char *mmp = mnt_moved_path(t, g->path);
	int in = -1, out, link = -1;
	struct stat st;

	/*
	 * on a mount bound from a copy (--root, --external mnt[]): a deleted
	 * name of a file with other names is not there (its handle would find
	 * the original's inode if the original's filesystem is the copy's)
	 */
	if (mmp && g->type == GHOST_LINK) {
		pr_err("%s %s: on mount %s, bound from another directory than at the dump (--root, --external): a deleted name of a file with other names cannot be found in a copy; restore refused",
		       what, g->path, mmp);
		return -1;
	}
	if (g->type == GHOST_REG) {
		ghost_data_path(data, sizeof(data), NULL, g);
		in = dir_open(dirfd, data, O_RDONLY);
		if (in < 0) {
			pr_perror("deleted file %s: cannot open its content %s", g->path, data);
			return -1;
		}
	}
	/*
	 * its directory, by a walk that follows no other user's symbolic
	 * link: every later operation is relative to it (trust.c); on a
	 * moved mount, on that mount from its mount point, following no link
	 * and crossing no mount (mnt_path_open, as files-reg.c's files): a
	 * root-extracted copy's links are all root's
	 */
	if (!strrchr(g->path, '/') ||
	    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(g->path, '/') - g->path),
		     g->path) >= (int)sizeof(dir) ||
	    (g->made_dir = mmp ? mnt_path_open(mmp, dir[0] ? dir : "/",
					       O_PATH | O_DIRECTORY | O_CLOEXEC) :
			   trust_dir_open(dir[0] ? dir : "/")) < 0) {
		pr_perror("%s %s: cannot open its directory%s", what, g->path,
			  errno == ELOOP ? (mmp ? " (a symbolic link on the way in the copy)" :
					    " (a symbolic link not root's on the way)") :
			  errno == EXDEV && mmp ? " (another mount on the way in the copy)" : "");
		if (in >= 0)
			close(in);
		return -1;
	}
	if (g->type == GHOST_LINK) {
		/* the same inode, found by its handle (on the directory's filesystem) */
		struct {
			struct file_handle fh;
			unsigned char buf[GHOST_HANDLE_MAX];
		} h;

		h.fh.handle_bytes = g->hlen;
		h.fh.handle_type = g->htype;
		memcpy(h.fh.f_handle, g->handle, g->hlen);
		/* its mount fd may not be O_PATH (trust_dir_open's is) */
		int mfd = openat(g->made_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		link = mfd < 0 ? -1 : open_by_handle_at(mfd, &h.fh, O_PATH | O_CLOEXEC);
		if (mfd >= 0) {
			int e = errno;

			close(mfd);
			errno = e;
		}
		if (link < 0 || fstat(link, &st) || st.st_ino != g->ino || !st.st_nlink) {
			if (link < 0)
				pr_perror("%s %s: cannot find the file again by its handle (open_by_handle_at%s)",
					  what, g->path, errno == EPERM ? ": needs CAP_DAC_READ_SEARCH, restore as root" : "");
			else
				pr_err("%s %s: its handle finds another file (inode %llu, links %lu; want inode %llu with its other names): it was removed or its filesystem changed",
				       what, g->path, (unsigned long long)st.st_ino,
				       (unsigned long)st.st_nlink, g->ino);
			if (link >= 0)
				close(link);
			ghost_forget(g);
			return -1;
		}
	}
	if (g->mapped) {
		out = ghost_creat(g, g->path, link);
		g->made = out >= 0 ? strdup(g->path) : NULL;
		if (out < 0 && errno == EEXIST) {
			pr_err("deleted file %s: the tree maps it, so it must be recreated at its path, but that name is taken: remove or rename it and restore again",
			       g->path);
			close(in);
			ghost_forget(g);
			return -1;
		}
	} else {
		g->made = ghost_create(g, &out, link);
	}
	if (link >= 0)
		close(link);
	if (!g->made) {
		pr_perror("%s %s: cannot create it again (its directory must exist%s)", what,
			  g->path, g->type == GHOST_CHR ? "; mknod needs CAP_MKNOD: restore as root" : "");
		if (in >= 0)
			close(in);
		ghost_forget(g);
		return -1;
	}
	if (!fstat(out, &st)) {
		g->made_dev = st.st_dev;
		g->made_ino = st.st_ino;
	}
	if ((g->type == GHOST_REG && (ftruncate(out, g->size) || copy_data(in, out, g->size) < 0)) ||
	    (g->type != GHOST_LINK && !geteuid() &&
	     fchownat(out, "", g->uid, g->gid, AT_EMPTY_PATH))) {
		pr_perror("%s %s: cannot fill %s%s%s", what, g->path, g->made,
			  in >= 0 ? " from " : "", in >= 0 ? data : "");
		if (in >= 0)
			close(in);
		close(out);
		ghost_unlinkat(g, g->made);
		ghost_forget(g);
		return -1;
	}
	if (in >= 0)
		close(in);
	g->made_fd = out;
	if (g->mapped)
		pr_info("deleted file %s recreated at its path, unlinked again once the images have opened it",
			g->path);
	else
		pr_info("%s %s %s %s%s, unlinked again %sbefore the tree runs", what,
			g->path, g->type == GHOST_LINK ? "linked again" : "recreated",
			strcmp(g->made, g->path) ? "at the free name " : "at its path",
			strcmp(g->made, g->path) ? g->made : "",
			strcmp(g->made, g->path) ? "under its own name (swapped with the file there) " : "");
	return 0;
}

int ghost_make_now(const struct tree *t, int dirfd, struct tree_ghost *g)
{
	return g->made ? 0 : ghost_make(t, dirfd, g);
}

int ghost_make_mapped(struct tree *t, int dirfd)
{
	int i;

	for (i = 0; i < t->nghosts; i++)
		if (t->ghosts[i].mapped && ghost_make(t, dirfd, &t->ghosts[i])) {
			ghost_unlink_mapped(t);
			return -1;
		}
	return 0;
}

void ghost_unlink_mapped(struct tree *t)
{
	int i;

	for (i = 0; i < t->nghosts; i++) {
		struct tree_ghost *g = &t->ghosts[i];

		if (!g->mapped || !g->made)
			continue;
		if (ghost_unlinkat(g, g->made))
			pr_perror("deleted file %s: cannot unlink it again", g->made);
		if (g->made_fd >= 0)
			close(g->made_fd);
		g->made_fd = -1;
		ghost_forget(g);
	}
}

static int ghost_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	struct tree_ghost *g = tree_ghost_find(r->t, f->dev, f->sino);
	char self[64];
	int fd;

	if (!g->made && ghost_make(r->t, r->dirfd, g))
		return -1;
	/* through the fd that created it: the same inode, whatever the path is now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", g->made_fd);
	fd = open(self, fd_open_flags(f->flags));
	if (fd < 0) {
		pr_perror("deleted file %s: cannot open %s", g->path, g->made);
		return -1;
	}
	if (fd_set_flags(fd, f->flags, what))
		goto fail;
	if (f->pos && lseek(fd, f->pos, SEEK_SET) != f->pos) {
		pr_perror("deleted file %s: cannot seek to %lld", g->path, f->pos);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * Unlink ghost @g, made at a temporary name, under its own name, which
 * another file has taken: swap the two, then rename that file back over
 * the ghost (whose dentry, unlinked, keeps the name).  0, or -1 (printed;
 * the ghost is unlinked anyway).
 */
static int unlink_as(struct tree_ghost *g)
{
	if (ghost_renameat(g, g->made, g->path, RENAME_EXCHANGE)) {
		if (errno != ENOENT) {
			pr_perror("deleted file %s: cannot swap it with the file at its name (renameat2 RENAME_EXCHANGE)",
				  g->path);
			ghost_unlinkat(g, g->made);
			return -1;
		}
		/* the name is free again: take it, and unlink it there */
		if (ghost_renameat(g, g->made, g->path, RENAME_NOREPLACE) ||
		    ghost_unlinkat(g, g->path)) {
			pr_perror("deleted file %s: cannot unlink it under its name", g->path);
			ghost_unlinkat(g, g->made);
			return -1;
		}
		return 0;
	}
	/* g->made is the other file now: back to its name, over the ghost */
	if (ghost_renameat(g, g->made, g->path, 0)) {
		pr_perror("deleted file %s: cannot move the file now at %s back to its name",
			  g->path, g->made);
		ghost_renameat(g, g->made, g->path, RENAME_EXCHANGE);
		ghost_unlinkat(g, g->made);
		return -1;
	}
	return 0;
}

/* Every description is open: its mode, and deleted again (also after a failure). */
static int ghost_after(struct fd_restore *r, int ok)
{
	int i, ret = 0;

	for (i = 0; i < r->t->nghosts; i++) {
		struct tree_ghost *g = &r->t->ghosts[i];
		char self[64];
		struct timespec times[2] = {
			{ .tv_nsec = UTIME_OMIT },	/* atime: as it is */
			{ g->mtime_ns / 1000000000, g->mtime_ns % 1000000000 },
		};

		if (!g->made)
			continue;
		/* a name linked again is the live file's: its mode and times are its own */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", g->made_fd);
		if (ok && g->type != GHOST_LINK &&
		    (chmod(self, g->mode) || utimensat(AT_FDCWD, self, times, 0))) {
			pr_perror("%s %s: chmod/utimensat %s", ghost_what(g), g->path, g->made);
			ret = -1;
		}
		/* mapped: linked until the images have opened it (ghost_unlink_mapped) */
		if (g->mapped && ok && !ret) {
			close(g->made_fd);
			g->made_fd = -1;
			continue;
		}
		if (ok && !ret && strcmp(g->made, g->path)) {
			if (unlink_as(g))
				ret = -1;
		} else if (ghost_unlinkat(g, g->made)) {
			pr_perror("%s %s: cannot unlink %s again", ghost_what(g), g->path, g->made);
			ret = -1;
		}
		close(g->made_fd);
		g->made_fd = -1;
		ghost_forget(g);
	}
	return ret;
}


static void ghost_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " dev=%llu ino=%llu", x->dev, x->sino);
}

static const char *ghost_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	if (rec_unum(r, "dev", &x->dev) || rec_unum(r, "ino", &x->sino))
		return "bad file record";
	if (!tree_ghost_find(t, x->dev, x->sino))
		return "ghost file without its ghost record";
	return NULL;
}

static void ghost_rec_show(const struct tree *t, int i, const char *mode, char *out,
			   size_t size)
{
	const struct tree_file *f = &t->files[i];
	const struct tree_ghost *g = tree_ghost_find(t, f->dev, f->sino);

	snprintf(out, size, "%s %s %s (ghost %llu:%llu)", g ? ghost_what(g) : "deleted file",
		 g ? g->path : "?", mode, f->dev, f->sino);
}

static void ghost_rec_json(const struct tree *t, int i)
{
	printf(",\"ghost\":{\"dev\":%llu,\"ino\":%llu}", t->files[i].dev, t->files[i].sino);
}

const struct fd_kind ghost_fd_kind = {
	.name = "ghost",
	.type = TK_GHOST,
	.dump = ghost_dump,
	.open = ghost_open,
	.after = ghost_after,
	.rec_write = ghost_rec_write,
	.rec_read = ghost_rec_read,
	.rec_show = ghost_rec_show,
	.rec_json = ghost_rec_json,
};

/* ---- the tree file: ghost and ghost-mapped records (record.h; imgcr-image(5)) ---- */

static void ghost_records_write(FILE *f, const struct tree *t)
{
	char e[3 * 4096 + 4];
	int i;

	for (i = 0; i < t->nghosts; i++) {
		const struct tree_ghost *g = &t->ghosts[i];

		tree_escape(e, sizeof(e), g->path);
		fprintf(f, "ghost dev=%llu ino=%llu size=%lld mode=0%o uid=%u gid=%u mtime=%lld path=%s",
			g->dev, g->ino, g->size, g->mode, g->uid, g->gid, g->mtime_ns, e);
		/* not a regular file with its content saved: its type */
		if (g->type != GHOST_REG)
			fprintf(f, " type=%s", ghost_type_names[g->type]);
		if (g->type == GHOST_CHR)
			fprintf(f, " rdev=%u:%u", g->major, g->minor);
		if (g->type == GHOST_LINK) {
			fprintf(f, " htype=%d handle=", g->htype);
			for (unsigned int j = 0; j < g->hlen; j++)
				fprintf(f, "%02x", g->handle[j]);
		}
		fputc('\n', f);
		if (g->mapped)
			fprintf(f, "ghost-mapped dev=%llu ino=%llu\n", g->dev, g->ino);
	}
}

static const char *ghost_record_read(struct tree *t, struct rec *r)
{
	unsigned long long dev, ino;
	struct tree_ghost *g;

	if (rec_unum(r, "dev", &dev) || rec_unum(r, "ino", &ino) || tree_ghost_find(t, dev, ino))
		return "bad ghost record";
	g = tree_ghost_add(t);
	g->dev = dev;
	g->ino = ino;
	if (REC_NUM(r, "size", 0, LLONG_MAX, g->size) || REC_NUM(r, "mode", 0, 07777, g->mode) ||
	    REC_NUM(r, "uid", 0, UINT32_MAX, g->uid) || REC_NUM(r, "gid", 0, UINT32_MAX, g->gid) ||
	    REC_NUM(r, "mtime", LLONG_MIN, LLONG_MAX, g->mtime_ns) || rec_str(r, "path", &g->path))
		return "bad ghost record";
	if (g->path[0] != '/')
		return "ghost path is not absolute";
	if (rec_has(r, "type")) {
		const char *v = rec_val(r, "type");

		for (g->type = GHOST_DIR; g->type <= GHOST_LINK; g->type++)
			if (!strcmp(v, ghost_type_names[g->type]))
				break;
		if (g->type > GHOST_LINK)
			return "bad ghost type";
	}
	if (g->type == GHOST_CHR && (rec_dev(r, "rdev", &g->major, &g->minor) ||
				     !ghost_chr_ok(makedev(g->major, g->minor))))
		return "bad ghost rdev (only /dev/null, zero, full, random, urandom)";
	if (g->type == GHOST_LINK) {
		const char *h;
		size_t n;

		if (REC_NUM(r, "htype", INT_MIN, INT_MAX, g->htype) || !(h = rec_val(r, "handle")))
			return "bad ghost handle";
		n = strlen(h);
		if (!n || n % 2 || n / 2 > GHOST_HANDLE_MAX)
			return "bad ghost handle";
		for (g->hlen = 0; g->hlen < n / 2; g->hlen++)
			if (sscanf(h + 2 * g->hlen, "%2hhx", &g->handle[g->hlen]) != 1)
				return "bad ghost handle";
	}
	return NULL;
}

static const char *ghost_mapped_record_read(struct tree *t, struct rec *r)
{
	unsigned long long dev, ino;
	struct tree_ghost *g;

	if (rec_unum(r, "dev", &dev) || rec_unum(r, "ino", &ino) ||
	    !(g = tree_ghost_find(t, dev, ino)) || g->mapped || g->type != GHOST_REG)
		return "bad ghost-mapped record";
	g->mapped = 1;
	return NULL;
}

/* imgcr show (record.h) */
static void ghost_records_show(const struct tree *t, int json)
{
	int i;

	if (json)
		printf(",\"ghosts\":[");
	for (i = 0; i < t->nghosts; i++) {
		const struct tree_ghost *g = &t->ghosts[i];

		if (!json) {
			if (g->type == GHOST_REG)
				printf("ghost %llu:%llu: deleted file %s, size %lld, mode %04o, owner %u:%u (ghost-%llu-%llu.data)%s\n",
				       g->dev, g->ino, g->path, g->size, g->mode, g->uid, g->gid,
				       g->dev, g->ino, g->mapped ? ", mapped" : "");
			else
				printf("ghost %llu:%llu: %s %s, mode %04o, owner %u:%u%s\n", g->dev,
				       g->ino, ghost_what(g), g->path, g->mode, g->uid, g->gid,
				       g->type == GHOST_LINK ? " (linked again by its file handle)" : "");
			continue;
		}
		printf("%s{\"dev\":%llu,\"ino\":%llu,\"size\":%lld,\"mode\":%u,\"uid\":%u,\"gid\":%u,\"path\":",
		       i ? "," : "", g->dev, g->ino, g->size, g->mode, g->uid, g->gid);
		json_str(g->path);
		printf(",\"type\":\"%s\",\"mapped\":%s}", ghost_type_names[g->type],
		       g->mapped ? "true" : "false");
	}
	if (json)
		putchar(']');
}

const struct tree_record ghost_records[] = {
	{ "ghost", ghost_record_read, ghost_records_write, ghost_records_show },	/* and their ghost-mapped */
	{ "ghost-mapped", ghost_mapped_record_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};
