// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of a file system as one image file (fsimg.h): what a
 * container's tmpfs mounts hold, saved at dump and written back into a
 * fresh tmpfs at restore.
 *
 * The image is text lines with binary data blocks, parent entries first
 * (a pre-order walk, names sorted):
 *
 *   imgcr-fsimg 1
 *   d PATH MODE UID GID ATIME MTIME                 a directory ("." is the root)
 *   f PATH MODE UID GID ATIME MTIME SIZE NEXT       a regular file and its
 *     NEXT data extents, each a line "OFF LEN" and LEN bytes (holes stay holes)
 *   l PATH MODE UID GID ATIME MTIME TARGET          a symbolic link
 *   c|b PATH MODE UID GID ATIME MTIME MAJ:MIN       a device node
 *   p|s PATH MODE UID GID ATIME MTIME               a FIFO, a unix socket's inode
 *   h PATH FIRST                                    a hard link to the file FIRST
 *   x PATH NAME HEXVALUE                            an extended attribute of PATH
 *   end
 *
 * MODE is octal with the file type bits, times are SEC.NSEC, PATH, NAME and
 * TARGET are escaped as the tree file escapes text (%XX for bytes <= 0x20,
 * >= 0x7f and '%'; "%" alone for the empty string).
 *
 * Not kept, because no call can set them: inode numbers, ctime, the birth
 * time.  A unix socket's inode comes back as an inode without a socket
 * (as after a reboot); the socket bound to it is restored by sk-unix.c.
 *
 * Restore trusts nothing in the image: every path is checked (relative, no
 * "." or ".." component, no empty one), and every parent directory is
 * opened with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so that an entry can
 * never reach outside the target directory, through a symbolic link the
 * image made or otherwise.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsimg.h"
#include "log.h"

#define FSIMG_MAGIC	"imgcr-fsimg 1"
#define FSIMG_PATH_MAX	4096
#define FSIMG_LINE_MAX	(4 * FSIMG_PATH_MAX + 4 * 65536 + 256)	/* escaped path, xattr value */
#define FSIMG_XATTR_MAX	65536				/* the kernel's XATTR_SIZE_MAX */
#define FSIMG_BUF	(1 << 20)

static void fs_escape(FILE *f, const char *s)
{
	if (!*s)
		fputc('%', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= 0x20 || c >= 0x7f || c == '%')
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

/* @in unescaped in place; -1 if malformed (or a NUL byte). */
static int fs_unescape(char *in)
{
	char *o = in, *s = in;
	unsigned int c;

	if (!strcmp(in, "%")) {
		*in = 0;
		return 0;
	}
	for (; *s; s++) {
		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]) ||
		    sscanf(s + 1, "%2x", &c) != 1 || !c)
			return -1;
		*o++ = c;
		s += 2;
	}
	*o = 0;
	return 0;
}

static int fs_dump(int rootfd, int imgfd, int procfd, struct fsimg_stats *st);
static int fs_restore(int rootfd, int imgfd);

/* ---- dump ---- */

struct fs_link {
	ino_t ino;
	char *path;
};

struct fs_dump {
	FILE *f;
	struct fsimg_stats *st;
	dev_t dev;
	struct fs_link *links;
	size_t nlinks;
	char *buf;
	int procfd;		/* imgcr's /proc */
	int depth;		/* directories open above the entry */
};

/* @fd is the file @s described (a regular file or directory, as @s) */
static int same_file(int fd, const struct stat *s)
{
	struct stat o;

	return !fstat(fd, &o) && (o.st_mode & S_IFMT) == (s->st_mode & S_IFMT) &&
	       o.st_ino == s->st_ino && o.st_dev == s->st_dev;
}

/*
 * The regular file @name of @dirfd that @s describes, opened for reading;
 * -1 (errno; ESTALE: another file is there now).  Never opens anything
 * else: an O_PATH fd first (no open side effects), checked, then reopened.
 */
static int open_reg(struct fs_dump *d, int dirfd, const char *name, struct stat *s)
{
	char p[64];
	int pfd, fd;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (!same_file(pfd, s)) {
		close(pfd);
		errno = ESTALE;
		return -1;
	}
	/* through the checked O_PATH fd: a name looked up again could be another file */
	snprintf(p, sizeof(p), "self/fd/%d", pfd);
	fd = openat(d->procfd, p, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(d->procfd, p, O_RDONLY | O_CLOEXEC);
	close(pfd);
	if (fd >= 0 && !same_file(fd, s)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	/* the size read is the open file's */
	if (fd >= 0 && fstat(fd, s)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void put_head(struct fs_dump *d, char type, const char *path, const struct stat *s)
{
	fprintf(d->f, "%c ", type);
	fs_escape(d->f, path);
	fprintf(d->f, " %o %u %u %lld.%09ld %lld.%09ld", (unsigned int)s->st_mode,
		(unsigned int)s->st_uid, (unsigned int)s->st_gid, (long long)s->st_atim.tv_sec,
		s->st_atim.tv_nsec, (long long)s->st_mtim.tv_sec, s->st_mtim.tv_nsec);
}

/* The extended attributes of @name in @dirfd (not following it). */
static int dump_xattrs(struct fs_dump *d, int dirfd, const char *name, const char *path)
{
	const char *p = name;
	char *list, *n;
	ssize_t len, vlen, i;

	/*
	 * l*xattr() relative to the directory: no call takes a directory fd,
	 * O_PATH fds have no xattr calls, and /proc/self may be another PID
	 * namespace's (the dump runs in the tree's mount namespace).
	 */
	if (fchdir(dirfd)) {
		pr_perror("%s: cannot enter its directory", path);
		return -1;
	}
	len = llistxattr(p, NULL, 0);
	if (len < 0 && (errno == ENOTSUP || errno == ENODATA))
		return 0;
	if (len < 0) {
		pr_perror("%s: cannot list its extended attributes", path);
		return -1;
	}
	if (!len)
		return 0;
	list = xmalloc(len + 1);
	len = llistxattr(p, list, len);
	if (len < 0) {
		pr_perror("%s: cannot list its extended attributes", path);
		free(list);
		return -1;
	}
	list[len] = 0;
	for (n = list; n < list + len; n += strlen(n) + 1) {
		vlen = lgetxattr(p, n, d->buf, FSIMG_XATTR_MAX);
		if (vlen < 0) {
			pr_perror("%s: cannot read its extended attribute %s", path, n);
			free(list);
			return -1;
		}
		fputs("x ", d->f);
		fs_escape(d->f, path);
		fputc(' ', d->f);
		fs_escape(d->f, n);
		fputc(' ', d->f);
		if (!vlen)
			fputc('-', d->f);
		for (i = 0; i < vlen; i++)
			fprintf(d->f, "%02x", (unsigned char)d->buf[i]);
		fputc('\n', d->f);
	}
	free(list);
	return 0;
}

/* A regular file's data as extents: SEEK_DATA/SEEK_HOLE keep holes. */
static int dump_data(struct fs_dump *d, int fd, const struct stat *s, const char *path)
{
	off_t off = 0, end, next;
	size_t n = 0, i;
	struct { off_t off, len; } *ext = NULL;

	while (off < s->st_size) {
		off = lseek(fd, off, SEEK_DATA);
		if (off < 0 && errno == ENXIO)
			break;
		if (off < 0)
			goto fail;
		end = lseek(fd, off, SEEK_HOLE);
		if (end < 0)
			goto fail;
		if (end > s->st_size)
			end = s->st_size;
		if (end <= off)
			break;
		ext = realloc(ext, (n + 1) * sizeof(*ext));
		if (!ext) {
			pr_err("out of memory");
			exit(1);
		}
		ext[n].off = off;
		ext[n].len = end - off;
		n++;
		off = end;
	}
	fprintf(d->f, " %lld %zu\n", (long long)s->st_size, n);
	for (i = 0; i < n; i++) {
		d->st->bytes += ext[i].len;
		if (d->st->limit && d->st->bytes > d->st->limit) {
			pr_err("%s: the file system holds more than %" PRIu64 " bytes of data (the limit)",
			       path, d->st->limit);
			free(ext);
			return -1;
		}
		fprintf(d->f, "%lld %lld\n", (long long)ext[i].off, (long long)ext[i].len);
		for (off = ext[i].off; off < ext[i].off + ext[i].len; off = next) {
			size_t want = ext[i].off + ext[i].len - off;
			ssize_t r;

			if (want > FSIMG_BUF)
				want = FSIMG_BUF;
			r = pread(fd, d->buf, want, off);
			if (r <= 0) {
				/* the file shrank under us: the tree is frozen, so this is not ours */
				if (!r)
					errno = EIO;
				free(ext);
				goto fail;
			}
			if (fwrite(d->buf, 1, r, d->f) != (size_t)r) {
				free(ext);
				pr_perror("%s: cannot write the image", path);
				return -1;
			}
			next = off + r;
		}
	}
	free(ext);
	return 0;
fail:
	pr_perror("%s: cannot read its data", path);
	return -1;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dump_dir(struct fs_dump *d, int dirfd, const char *dpath);

static int dump_entry(struct fs_dump *d, int dirfd, const char *name, const char *dpath)
{
	char path[FSIMG_PATH_MAX], target[FSIMG_PATH_MAX];
	struct stat s;
	ssize_t len;
	size_t i;
	int fd, ret;

	if (snprintf(path, sizeof(path), "%s%s%s", strcmp(dpath, ".") ? dpath : "",
		     strcmp(dpath, ".") ? "/" : "", name) >= (int)sizeof(path)) {
		pr_err("%s/%s: path too long", dpath, name);
		return -1;
	}
	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW)) {
		pr_perror("%s: cannot stat it", path);
		return -1;
	}
	if (s.st_dev != d->dev) {
		pr_err("%s: another file system is mounted on it (only one mount is saved)", path);
		return -1;
	}
	d->st->entries++;
	if (!S_ISDIR(s.st_mode) && s.st_nlink > 1) {
		for (i = 0; i < d->nlinks; i++)
			if (d->links[i].ino == s.st_ino) {
				fputs("h ", d->f);
				fs_escape(d->f, path);
				fputc(' ', d->f);
				fs_escape(d->f, d->links[i].path);
				fputc('\n', d->f);
				return 0;
			}
		d->links = realloc(d->links, (d->nlinks + 1) * sizeof(*d->links));
		if (!d->links) {
			pr_err("out of memory");
			exit(1);
		}
		d->links[d->nlinks].ino = s.st_ino;
		d->links[d->nlinks].path = strdup(path);
		if (!d->links[d->nlinks++].path) {
			pr_err("out of memory");
			exit(1);
		}
	}
	switch (s.st_mode & S_IFMT) {
	case S_IFDIR:
		put_head(d, 'd', path, &s);
		fputc('\n', d->f);
		if (dump_xattrs(d, dirfd, name, path))
			return -1;
		if (d->depth >= FSIMG_DEPTH_MAX) {
			pr_err("%s: directories nested more than %d deep: not supported", path,
			       FSIMG_DEPTH_MAX);
			return -1;
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && !same_file(fd, &s)) {
			close(fd);
			fd = -1;
			errno = ESTALE;
		}
		if (fd < 0) {
			pr_perror("%s: cannot open the directory", path);
			return -1;
		}
		d->depth++;
		ret = dump_dir(d, fd, path);
		d->depth--;
		close(fd);
		return ret;
	case S_IFREG:
		fd = open_reg(d, dirfd, name, &s);
		if (fd < 0) {
			pr_perror("%s: cannot open the file%s", path,
				  errno == ESTALE ? " (replaced by another while imgcr saved it)" : "");
			return -1;
		}
		put_head(d, 'f', path, &s);
		ret = dump_data(d, fd, &s, path);
		close(fd);
		return ret ? -1 : dump_xattrs(d, dirfd, name, path);
	case S_IFLNK:
		len = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (len < 0) {
			pr_perror("%s: cannot read the symbolic link", path);
			return -1;
		}
		target[len] = 0;
		put_head(d, 'l', path, &s);
		fputc(' ', d->f);
		fs_escape(d->f, target);
		fputc('\n', d->f);
		return dump_xattrs(d, dirfd, name, path);
	case S_IFCHR:
	case S_IFBLK:
		put_head(d, S_ISCHR(s.st_mode) ? 'c' : 'b', path, &s);
		fprintf(d->f, " %u:%u\n", major(s.st_rdev), minor(s.st_rdev));
		return dump_xattrs(d, dirfd, name, path);
	case S_IFIFO:
	case S_IFSOCK:
		put_head(d, S_ISFIFO(s.st_mode) ? 'p' : 's', path, &s);
		fputc('\n', d->f);
		return dump_xattrs(d, dirfd, name, path);
	}
	pr_err("%s: a file of unknown type 0%o", path, (unsigned int)(s.st_mode & S_IFMT));
	return -1;
}

static int dump_dir(struct fs_dump *d, int dirfd, const char *dpath)
{
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *e;
	DIR *dir;
	int fd, ret = 0;

	/* @dirfd may be O_PATH (open_tree() gives one): open it for reading */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		pr_perror("%s: cannot read the directory", dpath);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	errno = 0;
	while ((e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names || !(names[n] = strdup(e->d_name))) {
			pr_err("out of memory");
			exit(1);
		}
		n++;
	}
	if (errno) {
		pr_perror("%s: cannot read the directory", dpath);
		ret = -1;
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n && !ret; i++)
		ret = dump_entry(d, dirfd, names[i], dpath);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* The working directory, kept across the fchdir()s of the xattr calls. */
static int cwd_save(void)
{
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		pr_perror("cannot keep the working directory");
	return fd;
}

static void cwd_back(int fd)
{
	if (fchdir(fd))
		pr_pwarn("cannot go back to the working directory");
	close(fd);
}

int fsimg_dump(int rootfd, int imgfd, int procfd, struct fsimg_stats *st)
{
	int cwd = cwd_save(), ret;

	if (cwd < 0)
		return -1;
	ret = fs_dump(rootfd, imgfd, procfd, st);
	cwd_back(cwd);
	return ret;
}

int fsimg_restore(int rootfd, int imgfd)
{
	int cwd = cwd_save(), ret;

	if (cwd < 0)
		return -1;
	ret = fs_restore(rootfd, imgfd);
	cwd_back(cwd);
	return ret;
}

static int fs_dump(int rootfd, int imgfd, int procfd, struct fsimg_stats *st)
{
	struct fs_dump d = { .st = st, .procfd = procfd };
	struct stat s;
	size_t i;
	int fd, ret;

	st->entries = st->bytes = 0;
	fd = dup(imgfd);
	d.f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!d.f) {
		pr_perror("cannot write a file system image");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fstat(rootfd, &s)) {
		pr_perror("cannot stat the file system's root");
		fclose(d.f);
		return -1;
	}
	d.dev = s.st_dev;
	d.buf = xmalloc(FSIMG_BUF);
	fprintf(d.f, "%s\n", FSIMG_MAGIC);
	put_head(&d, 'd', ".", &s);
	fputc('\n', d.f);
	st->entries++;
	ret = dump_xattrs(&d, rootfd, ".", ".");
	if (!ret)
		ret = dump_dir(&d, rootfd, ".");
	if (!ret)
		fputs("end\n", d.f);
	if (fflush(d.f) || ferror(d.f)) {
		if (!ret)
			pr_perror("cannot write a file system image");
		ret = -1;
	}
	fclose(d.f);
	for (i = 0; i < d.nlinks; i++)
		free(d.links[i].path);
	free(d.links);
	free(d.buf);
	return ret;
}

/* ---- restore ---- */

struct fs_rest {
	FILE *f;
	int rootfd;
	int line;
	char *buf;
	struct fs_time {	/* directories' times, set once all entries exist */
		char *path;
		struct timespec t[2];
	} *dirs;
	size_t ndirs;
};

/* A path of the image: relative, no empty, "." or ".." component. */
static int path_ok(const char *p)
{
	const char *c = p;

	if (!strcmp(p, "."))
		return 1;
	if (!*p || *p == '/' || strlen(p) >= FSIMG_PATH_MAX)
		return 0;
	while (*c) {
		const char *e = strchrnul(c, '/');
		size_t n = e - c;

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c = *e ? e + 1 : e;
		if (*e && !*c)
			return 0;	/* trailing slash */
	}
	return 1;
}

/*
 * The directory that holds @path (opened beneath the root, no symbolic
 * link followed) and @path's last component in @name: an fd, or -1.
 */
static int open_parent(struct fs_rest *r, const char *path, const char **name)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	char dir[FSIMG_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		*name = path;
		return dup(r->rootfd);
	}
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	*name = slash + 1;
	fd = syscall(SYS_openat2, r->rootfd, dir, &how, sizeof(how));
	if (fd < 0)
		pr_perror("file system image, line %d: cannot open the directory %s", r->line, dir);
	return fd;
}

static int parse_time(const char *s, struct timespec *t)
{
	long long sec;
	long nsec;
	char end;

	const char *dot = strchr(s, '.');

	/* as written: SEC.NSEC with nine digits */
	if (!dot || strlen(dot + 1) != 9 || strspn(dot + 1, "0123456789") != 9 ||
	    sscanf(s, "%lld.%9ld%c", &sec, &nsec, &end) != 2 || nsec < 0)
		return -1;
	t->tv_sec = sec;
	t->tv_nsec = nsec;
	return 0;
}

static int split(char *line, char **f, int max)
{
	int n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == max)
			return -1;
		f[n++] = tok;
	}
	return n;
}

static int hexval(const char *s, char *out, size_t *len)
{
	size_t n = strlen(s), i;
	unsigned int c;

	if (!strcmp(s, "-")) {
		*len = 0;
		return 0;
	}
	if (n % 2 || n / 2 > FSIMG_XATTR_MAX)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &c) != 1)
			return -1;
		out[i] = c;
	}
	*len = n / 2;
	return 0;
}

/* Data extents of a new regular file @fd: "OFF LEN" lines and LEN bytes. */
static int rest_data(struct fs_rest *r, int fd, long long size, long long next, const char *path)
{
	long long off, len, prev = 0;
	char line[128];
	char end;

	while (next-- > 0) {
		r->line++;
		if (!fgets(line, sizeof(line), r->f) ||
		    sscanf(line, "%lld %lld%c", &off, &len, &end) != 3 || end != '\n' ||
		    off < prev || len <= 0 || len > size || off > size - len) {
			pr_err("file system image, line %d: %s: bad data extent", r->line, path);
			return -1;
		}
		prev = off + len;
		while (len > 0) {
			size_t want = len > FSIMG_BUF ? FSIMG_BUF : len;

			if (fread(r->buf, 1, want, r->f) != want) {
				pr_err("file system image: %s: its data is cut short", path);
				return -1;
			}
			if (pwrite(fd, r->buf, want, off) != (ssize_t)want) {
				pr_perror("%s: cannot write its data", path);
				return -1;
			}
			off += want;
			len -= want;
		}
	}
	if (ftruncate(fd, size)) {
		pr_perror("%s: cannot set its size", path);
		return -1;
	}
	return 0;
}

static int rest_owner_mode(struct fs_rest *r, int pfd, const char *name, const char *path,
			   char type, uid_t uid, gid_t gid, mode_t mode)
{
	if (fchownat(pfd, name, uid, gid, AT_SYMLINK_NOFOLLOW)) {
		pr_perror("file system image, line %d: %s: cannot give it to %u:%u", r->line, path,
			  (unsigned int)uid, (unsigned int)gid);
		return -1;
	}
	/* after the owner: chown clears the set-user-ID and set-group-ID bits */
	if (type != 'l' && fchmodat(pfd, name, mode & 07777, 0)) {
		pr_perror("%s: cannot set its mode 0%o", path, (unsigned int)(mode & 07777));
		return -1;
	}
	return 0;
}

static int rest_entry(struct fs_rest *r, char *line)
{
	char *f[10], *path, *name_dup = NULL;
	const char *name;
	struct timespec t[2];
	unsigned int mode, uid, gid, maj, min;
	long long size, next;
	char type, tail;
	int n, pfd = -1, fd = -1, ret = -1;

	n = split(line, f, 10);
	if (n < 2 || strlen(f[0]) != 1 || fs_unescape(f[1]) || !path_ok(f[1]))
		goto bad;
	type = f[0][0];
	path = f[1];
	if (type == 'h') {
		const char *fname;
		int ffd;

		if (n != 3 || fs_unescape(f[2]) || !path_ok(f[2]) || !strcmp(f[2], "."))
			goto bad;
		pfd = open_parent(r, path, &name);
		if (pfd < 0)
			return -1;
		ffd = open_parent(r, f[2], &fname);
		if (ffd < 0)
			goto out;
		if (linkat(ffd, fname, pfd, name, 0)) {
			pr_perror("%s: cannot link it to %s", path, f[2]);
			close(ffd);
			goto out;
		}
		close(ffd);
		ret = 0;
		goto out;
	}
	if (type == 'x') {
		size_t vlen;

		if (n != 4 || fs_unescape(f[2]) || !*f[2] || hexval(f[3], r->buf, &vlen))
			goto bad;
		pfd = strcmp(path, ".") ? open_parent(r, path, &name) : dup(r->rootfd);
		if (pfd < 0)
			return -1;
		if (!strcmp(path, "."))
			name = ".";
		/* relative to the directory, as dump_xattrs() reads them */
		if (fchdir(pfd)) {
			pr_perror("%s: cannot enter its directory", path);
			goto out;
		}
		if (lsetxattr(name, f[2], r->buf, vlen, 0)) {
			pr_perror("%s: cannot set its extended attribute %s", path, f[2]);
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (n < 7 || sscanf(f[2], "%o%c", &mode, &tail) != 1 || sscanf(f[3], "%u%c", &uid, &tail) != 1 ||
	    sscanf(f[4], "%u%c", &gid, &tail) != 1 || parse_time(f[5], &t[0]) ||
	    parse_time(f[6], &t[1]) || uid == (unsigned int)-1 || gid == (unsigned int)-1)
		goto bad;
	/* the root first, and only there */
	if ((r->line == 2) != (type == 'd' && !strcmp(path, ".")))
		goto bad;
	if (!strcmp(path, ".")) {
		if (n != 7 || !S_ISDIR(mode))
			goto bad;
		pfd = dup(r->rootfd);
		name = ".";
	} else {
		pfd = open_parent(r, path, &name);
		if (pfd < 0)
			return -1;
	}
	switch (type) {
	case 'd':
		if (n != 7 || !S_ISDIR(mode))
			goto bad;
		if (strcmp(path, ".") && mkdirat(pfd, name, 0700)) {
			pr_perror("%s: cannot make the directory", path);
			goto out;
		}
		if (rest_owner_mode(r, pfd, name, path, type, uid, gid, mode))
			goto out;
		r->dirs = realloc(r->dirs, (r->ndirs + 1) * sizeof(*r->dirs));
		name_dup = strdup(path);
		if (!r->dirs || !name_dup) {
			pr_err("out of memory");
			exit(1);
		}
		r->dirs[r->ndirs].path = name_dup;
		memcpy(r->dirs[r->ndirs++].t, t, sizeof(t));
		ret = 0;
		goto out;
	case 'f':
		if (n != 9 || !S_ISREG(mode) || sscanf(f[7], "%lld%c", &size, &tail) != 1 ||
		    sscanf(f[8], "%lld%c", &next, &tail) != 1 || size < 0 || next < 0 ||
		    next > size)
			goto bad;
		fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			pr_perror("%s: cannot create the file", path);
			goto out;
		}
		if (rest_data(r, fd, size, next, path))
			goto out;
		break;
	case 'l':
		if (n != 8 || !S_ISLNK(mode) || fs_unescape(f[7]) || !*f[7])
			goto bad;
		if (symlinkat(f[7], pfd, name)) {
			pr_perror("%s: cannot make the symbolic link", path);
			goto out;
		}
		break;
	case 'c':
	case 'b':
		if (n != 8 || (type == 'c' ? !S_ISCHR(mode) : !S_ISBLK(mode)) ||
		    sscanf(f[7], "%u:%u%c", &maj, &min, &tail) != 2)
			goto bad;
		if (mknodat(pfd, name, mode & (S_IFMT | 0700), makedev(maj, min))) {
			pr_perror("%s: cannot make the device node %u:%u", path, maj, min);
			goto out;
		}
		break;
	case 'p':
	case 's':
		if (n != 7 || (type == 'p' ? !S_ISFIFO(mode) : !S_ISSOCK(mode)))
			goto bad;
		if (mknodat(pfd, name, mode & (S_IFMT | 0700), 0)) {
			pr_perror("%s: cannot make the %s", path, type == 'p' ? "FIFO" : "socket inode");
			goto out;
		}
		break;
	default:
		goto bad;
	}
	if (rest_owner_mode(r, pfd, name, path, type, uid, gid, mode))
		goto out;
	if (utimensat(pfd, name, t, AT_SYMLINK_NOFOLLOW)) {
		pr_perror("%s: cannot set its times", path);
		goto out;
	}
	ret = 0;
	goto out;
bad:
	pr_err("file system image, line %d: malformed entry", r->line);
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	return ret;
}

static int fs_restore(int rootfd, int imgfd)
{
	struct fs_rest r = { .rootfd = rootfd };
	char *line;
	size_t i;
	int fd, ret = -1, ended = 0;

	fd = dup(imgfd);
	r.f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!r.f) {
		pr_perror("cannot read a file system image");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	line = xmalloc(FSIMG_LINE_MAX);
	r.buf = xmalloc(FSIMG_BUF);
	r.line = 1;
	if (!fgets(line, FSIMG_LINE_MAX, r.f) || strcmp(line, FSIMG_MAGIC "\n")) {
		pr_err("not a file system image of this version (want \"%s\")", FSIMG_MAGIC);
		goto out;
	}
	while (fgets(line, FSIMG_LINE_MAX, r.f)) {
		size_t len = strlen(line);

		r.line++;
		if (!len || line[len - 1] != '\n') {
			pr_err("file system image, line %d: too long or cut short", r.line);
			goto out;
		}
		line[len - 1] = 0;
		if (!strcmp(line, "end")) {
			ended = 1;
			break;
		}
		if (rest_entry(&r, line))
			goto out;
	}
	if (!ended || fgetc(r.f) != EOF) {
		pr_err("file system image: %s", ended ? "data after its end" : "cut short");
		goto out;
	}
	/* directories last, when nothing more is made in them */
	for (i = r.ndirs; i-- > 0;) {
		const char *name;
		int pfd;

		if (!strcmp(r.dirs[i].path, ".")) {
			/* @rootfd may be O_PATH: futimens() refuses those */
			if (utimensat(rootfd, ".", r.dirs[i].t, 0)) {
				pr_perror("the file system's root: cannot set its times");
				goto out;
			}
			continue;
		}
		pfd = open_parent(&r, r.dirs[i].path, &name);
		if (pfd < 0)
			goto out;
		if (utimensat(pfd, name, r.dirs[i].t, AT_SYMLINK_NOFOLLOW)) {
			pr_perror("%s: cannot set its times", r.dirs[i].path);
			close(pfd);
			goto out;
		}
		close(pfd);
	}
	ret = 0;
out:
	for (i = 0; i < r.ndirs; i++)
		free(r.dirs[i].path);
	free(r.dirs);
	free(r.buf);
	free(line);
	fclose(r.f);
	return ret;
}
