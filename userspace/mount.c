// SPDX-License-Identifier: GPL-2.0
/*
 * The mount namespace kind (ns.h): the tree's whole mount tree.
 *
 * dump: /proc/ROOT/mountinfo lists the mounts of the root task's mount
 * namespace, parents first, paths relative to its root.  Each mount is
 * one "mnt" record and is restored one of four ways:
 *   - fresh: proc, sysfs, devpts, mqueue, cgroup2, bpf: a new superblock
 *     with the dumped options (their contents are the kernel's);
 *   - tmpfs: a new tmpfs, its files saved whole (fsimg.c) into
 *     DIR/tmpfs-ID.img from a detached copy of the mount (open_tree), so
 *     that files hidden under other mounts are saved too;
 *   - bind=ID: the same superblock as an earlier mount of the tree, of
 *     which it is a bind mount (of a subtree, or of a file);
 *   - ext=PATH: a superblock imgcr's own mount namespace also has (the
 *     container's root file system, an overlay, a host directory bound
 *     in): found at dump in imgcr's mountinfo by its device and root, and
 *     bound again from PATH at restore (CRIU's external mounts).
 * Any other mount is refused, naming its mount point and file system.
 * Mount flags (ro, nosuid, nodev, noexec, atime) and propagation (shared
 * within the tree, slave of a tree mount or of an external one,
 * unbindable) are restored; mount IDs and peer group numbers are new, as
 * after any boot.
 *
 * restore --root DIR (CRIU's --root, runc's and podman's root at restore):
 * the root mount, an ext one, is bound from DIR instead of its dumped
 * path, and so is every ext mount below that path (DIR and the rest);
 * --external mnt[MP]:PATH binds the ext mount at MP from PATH.  Such a
 * mount is "moved": the files the tree holds on it (and on binds of it)
 * are found there by path and compared by content where their device or
 * inode differ (files-reg.c; mapped files and the exe: the module).
 *
 * restore: outside() (imgcr) makes the "yard" directory, removed by
 * late() or cleanup() only if this restore made it; inside() (the
 * ns-root, which the clone gave a copy of imgcr's mount namespace):
 * everything a slave, each mount made on the yard parents first, flags,
 * propagation last, then pivot_root into it and the old root detached.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsimg.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "tree.h"
#include "tty.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE		1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC	O_CLOEXEC
#endif

#define MNT_MAX		4096		/* mounts of one namespace */
#define MNT_TMPFS_LIMIT	(64ULL << 20)	/* bytes of one tmpfs saved, at most */

enum mnt_how { MNT_FRESH, MNT_TMPFS, MNT_BIND, MNT_EXT };
static const char *const mnt_how_names[] = { "fresh", "tmpfs", "bind", "ext" };

struct mnt {
	int id, parent;
	unsigned int maj, min;
	char *root, *mp, *fs, *src, *mopts, *sopts;
	int shared, master;	/* peer group numbers, 0 if none */
	int unbindable;
	enum mnt_how how;
	int bind;		/* MNT_BIND: the tree mount it binds (its id) */
	char *ext;		/* MNT_EXT: the host path */
	/* restore */
	char *target;
	int moved;		/* bound from another directory than at the dump (--root) */
};

struct mnt_ns {
	int n;
	struct mnt *m;
	int yard_made;		/* restore: imgcr made the yard (outside()), so removes it */
};

/* The file systems made fresh at restore (their contents are the kernel's). */
static const char *const fresh_fs[] = {
	"proc", "sysfs", "devpts", "mqueue", "cgroup2", "bpf", "securityfs", "debugfs",
	"tracefs", "fusectl", "configfs", "pstore", "hugetlbfs",
};

static int is_fresh(const char *fs)
{
	size_t i;

	for (i = 0; i < sizeof(fresh_fs) / sizeof(fresh_fs[0]); i++)
		if (!strcmp(fs, fresh_fs[i]))
			return 1;
	return 0;
}

/* mountinfo's octal escapes (\040 for a space...) undone in place */
static char *unoct(char *s)
{
	char *o = s, *i = s;

	for (; *i; i++) {
		if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' && i[2] <= '7' &&
		    i[3] >= '0' && i[3] <= '7') {
			*o++ = (i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0');
			i += 3;
		} else {
			*o++ = *i;
		}
	}
	*o = 0;
	return s;
}

static void mnt_free_one(struct mnt *m)
{
	free(m->root);
	free(m->mp);
	free(m->fs);
	free(m->src);
	free(m->mopts);
	free(m->sopts);
	free(m->ext);
	free(m->target);
}

static void mnt_ns_free(struct mnt_ns *ns)
{
	int i;

	if (!ns)
		return;
	for (i = 0; i < ns->n; i++)
		mnt_free_one(&ns->m[i]);
	free(ns->m);
	free(ns);
}

static struct mnt *mnt_add(struct mnt_ns *ns)
{
	struct mnt *m;

	ns->m = tree_grow(ns->m, ns->n, sizeof(*ns->m));
	m = &ns->m[ns->n++];
	memset(m, 0, sizeof(*m));
	return m;
}

/* One mountinfo line into @m: 0, or -1 if malformed. */
static int parse_line(char *line, struct mnt *m)
{
	char *f[64], *save = NULL, *tok;
	int n = 0, i, sep = -1;

	for (tok = strtok_r(line, " \n", &save); tok && n < 64; tok = strtok_r(NULL, " \n", &save))
		f[n++] = tok;
	for (i = 6; i < n; i++)
		if (!strcmp(f[i], "-")) {
			sep = i;
			break;
		}
	if (n < 10 || sep < 0 || sep + 3 >= n + 1 || sep + 3 > n)
		return -1;
	if (sscanf(f[0], "%d", &m->id) != 1 || sscanf(f[1], "%d", &m->parent) != 1 ||
	    sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2)
		return -1;
	m->root = xstrdup(unoct(f[3]));
	m->mp = xstrdup(unoct(f[4]));
	m->mopts = xstrdup(f[5]);
	for (i = 6; i < sep; i++) {
		if (!strncmp(f[i], "shared:", 7))
			m->shared = atoi(f[i] + 7);
		else if (!strncmp(f[i], "master:", 7))
			m->master = atoi(f[i] + 7);
		else if (!strcmp(f[i], "unbindable"))
			m->unbindable = 1;
		/* propagate_from: only with master, the nearest dominant peer */
	}
	m->fs = xstrdup(f[sep + 1]);
	m->src = xstrdup(unoct(f[sep + 2]));
	m->sopts = xstrdup(sep + 3 < n ? f[sep + 3] : "");
	return 0;
}

/* Every mount of /proc/@pid/mountinfo (@pid 0: imgcr's own): NULL if unreadable. */
static struct mnt_ns *read_mountinfo(pid_t pid)
{
	char path[64], *line = NULL;
	struct mnt_ns *ns;
	size_t len = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	f = fopen(path, "re");
	if (!f) {
		pr_perror("cannot read %s", path);
		return NULL;
	}
	ns = calloc(1, sizeof(*ns));
	if (!ns) {
		pr_err("out of memory");
		exit(1);
	}
	while (getline(&line, &len, f) > 0) {
		if (ns->n == MNT_MAX) {
			pr_err("%s: more than %d mounts", path, MNT_MAX);
			goto fail;
		}
		if (parse_line(line, mnt_add(ns))) {
			pr_err("%s: a line imgcr cannot read", path);
			goto fail;
		}
	}
	free(line);
	fclose(f);
	return ns;
fail:
	free(line);
	fclose(f);
	mnt_ns_free(ns);
	return NULL;
}

static struct mnt *mnt_by_id(struct mnt_ns *ns, int id)
{
	int i;

	for (i = 0; i < ns->n; i++)
		if (ns->m[i].id == id)
			return &ns->m[i];
	return NULL;
}

/* @path below @dir ("/a" below "/": yes; "/ab" below "/a": no): the rest, or NULL */
static const char *below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path;
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] ? path + n : "/";
}

/* The mount flags of a mountinfo options field that a bind remount sets. */
static unsigned long mnt_flags(const char *opts)
{
	char buf[512], *save = NULL, *o;
	unsigned long fl = 0;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro"))
			fl |= MS_RDONLY;
		else if (!strcmp(o, "nosuid"))
			fl |= MS_NOSUID;
		else if (!strcmp(o, "nodev"))
			fl |= MS_NODEV;
		else if (!strcmp(o, "noexec"))
			fl |= MS_NOEXEC;
		else if (!strcmp(o, "noatime"))
			fl |= MS_NOATIME;
		else if (!strcmp(o, "nodiratime"))
			fl |= MS_NODIRATIME;
		else if (!strcmp(o, "relatime"))
			fl |= MS_RELATIME;
		else if (!strcmp(o, "strictatime"))
			fl |= MS_STRICTATIME;
	}
	return fl;
}

/*
 * A superblock option string for mount(2)'s data: the dumped one without
 * "rw"/"ro" (the superblock's read-only flag is MS_RDONLY) and, for
 * devpts, with newinstance.
 */
static void sb_data(const struct mnt *m, char *out, size_t size, unsigned long *sbflags)
{
	char buf[1024], *save = NULL, *o;
	size_t len = 0;

	*sbflags = 0;
	out[0] = 0;
	snprintf(buf, sizeof(buf), "%s", m->sopts);
	for (o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "rw"))
			continue;
		if (!strcmp(o, "ro")) {
			*sbflags |= MS_RDONLY;
			continue;
		}
		/* kernel-made, not options: seclabel (LSM), inode64 is fine to pass */
		if (!strcmp(o, "seclabel"))
			continue;
		len += snprintf(out + len, len < size ? size - len : 0, "%s%s", len ? "," : "", o);
	}
	if (!strcmp(m->fs, "devpts") && !strstr(out, "newinstance"))
		snprintf(out + len, len < size ? size - len : 0, "%snewinstance", len ? "," : "");
}

/* ---- dump ---- */

struct tmpfs_job {
	const struct mnt *m;
	int imgfd, procfd;
	struct fsimg_stats st;
};

/*
 * In the tree's mount namespace: a detached copy of the mount at @m->mp,
 * saved.  The mount point is found by path as the tree sees it; a task of
 * the container that is not frozen (one that entered it with setns) could
 * swap a directory of that path for a link meanwhile: the mount found must
 * be @m (its mount ID and device), else another mount's files were saved.
 */
static int tmpfs_save(void *arg)
{
	struct tmpfs_job *j = arg;
	const struct mnt *m = j->m;
	struct statx sx;
	int at, fd, ret;

	at = syscall(SYS_open_tree, AT_FDCWD, m->mp, AT_SYMLINK_NOFOLLOW | OPEN_TREE_CLOEXEC);
	if (at < 0 || statx(at, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) ||
	    !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != (unsigned long long)m->id ||
	    sx.stx_dev_major != m->maj || sx.stx_dev_minor != m->min) {
		if (at >= 0)
			pr_err("mount at %s: the path leads to another mount (id %llu, %u:%u) than the one dumped (id %d, %u:%u)",
			       m->mp, (unsigned long long)sx.stx_mnt_id, sx.stx_dev_major,
			       sx.stx_dev_minor, m->id, m->maj, m->min);
		else
			pr_perror("mount at %s: cannot open it", m->mp);
		if (at >= 0)
			close(at);
		return -1;
	}
	fd = syscall(SYS_open_tree, at, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	close(at);
	if (fd < 0) {
		pr_perror("mount at %s: cannot make a detached copy of it to save its files", m->mp);
		return -1;
	}
	ret = fsimg_dump(fd, j->imgfd, j->procfd, &j->st);
	close(fd);
	return ret;
}

static int mnt_dump(struct ns_ctx *c)
{
	struct mnt_ns *ns, *host;
	struct mnt *m, *h, *root = NULL;
	int i, j, nroots = 0, procfd = -1;

	ns = read_mountinfo(c->root);
	if (!ns)
		return -1;
	host = read_mountinfo(0);
	if (!host) {
		mnt_ns_free(ns);
		return -1;
	}
	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		if (!mnt_by_id(ns, m->parent) || m->parent == m->id) {
			root = m;
			nroots++;
		}
	}
	if (nroots != 1 || strcmp(root->mp, "/")) {
		pr_err("pid %d: its mount namespace has %d mounts without a parent (the root task is chrooted inside it?): not supported",
		       c->root, nroots);
		goto fail;
	}
	/* parents first: mountinfo's order, checked */
	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		if (m == root)
			continue;
		for (j = 0; j < i && ns->m[j].id != m->parent; j++)
			;
		if (j == i) {
			pr_err("pid %d: mount at %s is listed before its parent: not supported",
			       c->root, m->mp);
			goto fail;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(ns->m[j].mp, m->mp) && &ns->m[j] != root) {
				pr_err("pid %d: two mounts on %s (one hides the other): not supported",
				       c->root, m->mp);
				goto fail;
			}
	}
	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		/* a bind of a directory or file removed since: its path is not its own */
		if (strlen(m->root) >= 9 && !strcmp(m->root + strlen(m->root) - 9, "//deleted")) {
			pr_err("pid %d: mount at %s shows %s, which was deleted: not supported",
			       c->root, m->mp, m->root);
			goto fail;
		}
		/* a superblock seen before in the tree: a bind of it */
		for (j = 0; j < i; j++)
			if (ns->m[j].maj == m->maj && ns->m[j].min == m->min &&
			    below(m->root, ns->m[j].root))
				break;
		if (j < i) {
			m->how = MNT_BIND;
			m->bind = ns->m[j].id;
			continue;
		}
		/* a superblock imgcr sees too: bound from there again */
		for (j = 0; j < host->n; j++) {
			h = &host->m[j];
			if (h->maj == m->maj && h->min == m->min && below(m->root, h->root))
				break;
		}
		if (j < host->n) {
			const char *rest = below(m->root, h->root);
			size_t len = strlen(h->mp) + strlen(rest) + 2;

			m->how = MNT_EXT;
			m->ext = malloc(len);
			if (!m->ext) {
				pr_err("out of memory");
				exit(1);
			}
			snprintf(m->ext, len, "%s%s", strcmp(h->mp, "/") ? h->mp : "",
				 strcmp(rest, "/") || !strcmp(h->mp, "/") ? rest : "");
			continue;
		}
		/* another part of a superblock of the tree's own, that imgcr cannot see */
		for (j = 0; j < i; j++)
			if (ns->m[j].maj == m->maj && ns->m[j].min == m->min)
				break;
		if (j < i) {
			pr_err("pid %d: mount at %s shows %s of a %s file system that mount %s shows only %s of: not supported",
			       c->root, m->mp, m->root, m->fs, ns->m[j].mp, ns->m[j].root);
			goto fail;
		}
		if (!strcmp(m->fs, "tmpfs")) {
			m->how = MNT_TMPFS;
			continue;
		}
		if (is_fresh(m->fs)) {
			m->how = MNT_FRESH;
			if (strcmp(m->root, "/")) {
				pr_err("pid %d: mount at %s shows %s of a %s file system: only its root can be made again",
				       c->root, m->mp, m->root, m->fs);
				goto fail;
			}
			continue;
		}
		pr_err("pid %d: mount at %s: a %s file system (%s) that imgcr's mount namespace cannot reach: not supported (mount it where imgcr sees it too)",
		       c->root, m->mp, m->fs, m->src);
		goto fail;
	}
	/*
	 * Propagation: a shared mount is restored as the one member of a new
	 * peer group, a slave of a group imgcr's namespace has (an external
	 * mount, e.g. the container's root bound from a shared host mount) as
	 * a slave of that group again.  Peers within the tree and slaves of a
	 * tree mount are not restored yet: refused.
	 */
	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		for (j = 0; m->shared && j < i; j++)
			if (ns->m[j].shared == m->shared) {
				pr_err("pid %d: mounts at %s and %s are peers (shared:%d): not supported",
				       c->root, ns->m[j].mp, m->mp, m->shared);
				goto fail;
			}
		for (j = 0; m->master && j < ns->n; j++)
			if (ns->m[j].shared == m->master) {
				pr_err("pid %d: mount at %s receives mounts from the container's mount at %s: not supported",
				       c->root, m->mp, ns->m[j].mp);
				goto fail;
			}
		if (m->master && m->how != MNT_EXT) {
			pr_err("pid %d: mount at %s (%s) receives mounts from peer group %d outside the container: not supported",
			       c->root, m->mp, m->fs, m->master);
			goto fail;
		}
	}
	/* the files of each tmpfs, from inside the namespace (reopened through imgcr's /proc) */
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0) {
		pr_perror("pid %d: cannot open /proc (the tmpfs files are reopened through it)", c->root);
		goto fail;
	}
	for (i = 0; i < ns->n; i++) {
		struct tmpfs_job job = { .m = &ns->m[i], .procfd = procfd,
					 .st = { .limit = MNT_TMPFS_LIMIT } };
		char name[64];

		if (ns->m[i].how != MNT_TMPFS)
			continue;
		snprintf(name, sizeof(name), "tmpfs-%d.img", ns->m[i].id);
		job.imgfd = img_create_at(c->dirfd, name, 0600);
		if (job.imgfd < 0) {
			pr_perror("cannot create %s", name);
			goto fail;
		}
		if (ns_run_in(c->root, NS_BIT(NS_USER) & c->own ? NS_BIT(NS_USER) | NS_BIT(NS_MNT) :
				       NS_BIT(NS_MNT), tmpfs_save, &job)) {
			pr_err("pid %d: cannot save the files of the tmpfs at %s", c->root, ns->m[i].mp);
			close(job.imgfd);
			goto fail;
		}
		close(job.imgfd);
	}
	if (procfd >= 0)
		close(procfd);
	mnt_ns_free(host);
	ns_tree_get(c->t)->data[NS_MNT] = ns;
	return 0;
fail:
	if (procfd >= 0)
		close(procfd);
	mnt_ns_free(host);
	mnt_ns_free(ns);
	return -1;
}

/*
 * The file /proc/@pid/@link leads to (fd/N, cwd, root, exe, map_files/A-B;
 * statx follows the magic link to the file itself, without opening it):
 * on a mount of the tree's (those mnt_dump() recorded, rebuilt at restore),
 * or not.  Mount IDs are unique among the mounts alive, whichever their
 * namespace, and the tree is frozen: the IDs of the dump's mountinfo
 * are still those mounts'.
 */
int mnt_file_outside(const struct tree *t, pid_t pid, const char *link, int *mnt_id)
{
	struct mnt_ns *ns = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->ns->data[NS_MNT] : NULL;
	char path[PATH_MAX];
	struct statx stx;

	if (!ns)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, link);
	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx))
		return -1;
	if (!(stx.stx_mask & STATX_MNT_ID)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	*mnt_id = (int)stx.stx_mnt_id;
	return mnt_by_id(ns, *mnt_id) ? 0 : 1;
}

/* ---- restore ---- */

static int mnt_mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

/*
 * Bind @src onto @target, @src resolved without following any symbolic
 * link: a container controls the files below its mounts, and a link it
 * planted must not make root bind a host path into it.
 */
static int bind_nofollow(const char *src, const char *target)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char fdpath[64];
	int fd, r;

	fd = syscall(SYS_openat2, AT_FDCWD, src, &how, sizeof(how));
	if (fd < 0)
		return -1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	r = mount(fdpath, target, NULL, MS_BIND, NULL);
	close(fd);
	return r;
}

static int mnt_make_at(struct ns_ctx *c, struct mnt_ns *ns, struct mnt *m, const char *yard,
		       int *tfd);

/*
 * Mount point @mp's directory in the yard, O_PATH: looked up from the yard
 * (its root) following no symbolic link.  A mount point's path from
 * mountinfo has none; one in the restored tree (a copy's `sub -> subsrc`,
 * or `run -> /proc`) would move the mount elsewhere, even out of the yard.
 * -1: errno ELOOP for such a link.  Before openat2 (5.6): lstat only, and
 * AT_FDCWD (the path mounted on as it is).
 */
static int mnt_target_open(const char *yard, const char *mp)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int yfd, fd, e;

	yfd = open(yard, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (yfd < 0)
		return -1;
	fd = syscall(SYS_openat2, yfd, mp, &how, sizeof(how));
	e = errno;
	close(yfd);
	errno = e;
	return fd;
}

static int mnt_make_one(struct ns_ctx *c, struct mnt_ns *ns, struct mnt *m, const char *yard)
{
	int tfd = -1, r;

	r = mnt_make_at(c, ns, m, yard, &tfd);
	if (tfd >= 0)
		close(tfd);
	return r;
}

/*
 * mnt_make_one: the mount made on its mount point, opened by
 * mnt_target_open (*@tfd, closed by the caller) and mounted on through
 * /proc/self/fd (that very directory, no lookup again).
 */
static int mnt_make_at(struct ns_ctx *c, struct mnt_ns *ns, struct mnt *m, const char *yard,
		       int *tfd)
{
	char data[1024], src[PATH_MAX], name[64], tpath[PATH_MAX];
	unsigned long sbfl, fl = mnt_flags(m->mopts);
	struct mnt *b;
	struct stat st;
	size_t len = strlen(yard) + strlen(m->mp) + 2;

	m->target = malloc(len);
	if (!m->target) {
		pr_err("out of memory");
		exit(1);
	}
	snprintf(m->target, len, "%s%s", yard, strcmp(m->mp, "/") ? m->mp : "");
	/* the mount point: it exists in the parent (restored) unless it is the root */
	if (!strcmp(m->mp, "/") && mnt_mkdir_p(m->target)) {
		pr_perror("cannot make %s", m->target);
		return -1;
	}
	if (lstat(m->target, &st)) {
		pr_perror("mount at %s: its mount point is missing", m->mp);
		return -1;
	}
	snprintf(tpath, sizeof(tpath), "%s", m->target);
	if (strcmp(m->mp, "/")) {
		*tfd = mnt_target_open(yard, m->mp);
		if (*tfd < 0 && errno == ELOOP) {
			pr_err("mount at %s: in the restored tree (the root's copy, --root/--external, or a mount's content) its mount point's path has a symbolic link (mountinfo's had none): the mount would be made elsewhere; restore refused",
			       m->mp);
			return -1;
		}
		if (*tfd < 0 && errno != ENOSYS) {
			pr_perror("mount at %s: cannot open its mount point", m->mp);
			return -1;
		}
		if (*tfd >= 0)
			snprintf(tpath, sizeof(tpath), "/proc/self/fd/%d", *tfd);
	}
	switch (m->how) {
	case MNT_FRESH:
	case MNT_TMPFS:
		sb_data(m, data, sizeof(data), &sbfl);
		/* a read-only tmpfs (runc's masked directories): made read-only once filled */
		if (mount(m->src, tpath, m->fs,
			  (m->how == MNT_TMPFS ? sbfl & ~MS_RDONLY : sbfl) | (fl & ~MS_RDONLY), data)) {
			pr_perror("mount at %s: cannot mount %s (%s)", m->mp, m->fs, data);
			return -1;
		}
		if (m->how == MNT_TMPFS) {
			int img, dir, ret;

			snprintf(name, sizeof(name), "tmpfs-%d.img", m->id);
			img = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (img < 0) {
				pr_perror("mount at %s: cannot open %s", m->mp, name);
				return -1;
			}
			dir = open(m->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
			ret = dir < 0 ? -1 : fsimg_restore(dir, img);
			if (dir < 0)
				pr_perror("mount at %s: cannot open it", m->mp);
			if (dir >= 0)
				close(dir);
			close(img);
			if (ret)
				return -1;
			if ((sbfl & MS_RDONLY) && mount(NULL, m->target, NULL, MS_REMOUNT | MS_RDONLY, NULL)) {
				pr_perror("mount at %s: cannot make the tmpfs read-only", m->mp);
				return -1;
			}
		}
		break;
	case MNT_BIND:
		b = mnt_by_id(ns, m->bind);
		if (!b || !b->target || !below(m->root, b->root)) {
			pr_err("mount at %s: bad bind record", m->mp);
			return -1;
		}
		snprintf(src, sizeof(src), "%s%s", b->target,
			 strcmp(below(m->root, b->root), "/") ? below(m->root, b->root) : "");
		/* a pty's slave bound elsewhere (runc's /dev/console): the pty made now */
		if (!strcmp(b->fs, "devpts") && !strcmp(b->root, "/")) {
			int idx, n = 0;

			if (sscanf(m->root, "/%d%n", &idx, &n) == 1 && !m->root[n] && idx >= 0 &&
			    lstat(src, &st) && errno == ENOENT &&
			    tty_devpts_prepare(c->t, b->target, idx))
				return -1;
		}
		if (bind_nofollow(src, tpath)) {
			pr_perror("mount at %s: cannot bind %s%s", m->mp, b->mp, m->root);
			return -1;
		}
		break;
	case MNT_EXT:
		if (bind_nofollow(m->ext, tpath)) {
			pr_perror("mount at %s: cannot bind %s from imgcr's mount namespace", m->mp,
				  m->ext);
			return -1;
		}
		break;
	}
	/* the per-mount flags, on the bind mount (a fresh mount has them already) */
	if (mount(NULL, m->target, NULL, MS_REMOUNT | MS_BIND | fl, NULL)) {
		pr_perror("mount at %s: cannot set its flags %s", m->mp, m->mopts);
		return -1;
	}
	/*
	 * A bind of a mount imgcr's namespace has is a slave of its group
	 * (inside() made every mount a slave): kept for a mount that was one,
	 * cut off for the others.
	 */
	if (!m->master && mount(NULL, m->target, NULL, MS_PRIVATE, NULL)) {
		pr_perror("mount at %s: cannot make it private", m->mp);
		return -1;
	}
	return 0;
}

/* Shared and unbindable mounts, once every mount exists (see mnt_dump). */
static int mnt_propagation(struct mnt_ns *ns)
{
	struct mnt *m;
	int i;

	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		if (m->shared && mount(NULL, m->target, NULL, MS_SHARED, NULL)) {
			pr_perror("mount at %s: cannot make it shared", m->mp);
			return -1;
		}
		if (m->unbindable && mount(NULL, m->target, NULL, MS_UNBINDABLE, NULL)) {
			pr_perror("mount at %s: cannot make it unbindable", m->mp);
			return -1;
		}
	}
	return 0;
}

/*
 * The directory the mounts are built on before pivot_root: on imgcr's
 * /tmp, named after the image directory so that late() (in imgcr) finds
 * and removes it once the ns-root has pivoted away from it.
 */
static void mnt_yard(struct ns_ctx *c, char *out, size_t size)
{
	struct stat st;

	if (fstat(c->dirfd, &st))
		memset(&st, 0, sizeof(st));
	snprintf(out, size, "/tmp/.imgcr-yard-%llu-%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
}

/* The yard as imgcr made it: a directory of root's, mode 0700, empty. */
static int stat_yard(const char *yard)
{
	struct stat st;
	int fd = open(yard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700 ||
	    st.st_nlink != 2) {
		pr_perror("%s: not the directory imgcr made to build the mounts on", yard);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * imgcr, the ns-root cloned and waiting: the yard made here, so that only
 * the restore that made it removes it (two restores of one DIR: the
 * second one fails here and leaves the first one's yard alone).
 */
static int mnt_outside(struct ns_ctx *c)
{
	struct mnt_ns *ns = c->t->ns ? c->t->ns->data[NS_MNT] : NULL;
	char yard[128];

	if (!ns)
		return 0;
	mnt_yard(c, yard, sizeof(yard));
	if (mkdir(yard, 0700)) {
		pr_perror("cannot make %s to build the mounts on (another restore from the same directory?)",
			  yard);
		return -1;
	}
	ns->yard_made = 1;
	return 0;
}

static int mnt_inside(struct ns_ctx *c)
{
	struct mnt_ns *ns = c->t->ns ? c->t->ns->data[NS_MNT] : NULL;
	char yard[128];
	int i;

	if (!ns)
		return 0;
	/*
	 * The new namespace is a copy of imgcr's: everything a slave, so
	 * that nothing made here reaches imgcr's, while binds of its shared
	 * mounts still receive from them (see mnt_make_one).
	 */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		pr_perror("cannot make the new mount namespace a slave of imgcr's");
		return -1;
	}
	/* made by imgcr (outside()): a directory, not a link someone put there */
	mnt_yard(c, yard, sizeof(yard));
	if (stat_yard(yard))
		return -1;
	for (i = 0; i < ns->n; i++)
		if (mnt_make_one(c, ns, &ns->m[i], yard))
			return -1;
	if (mnt_propagation(ns))
		return -1;
	/* pivot onto the root mount, and let go of imgcr's */
	if (chdir(ns->m[0].target) || syscall(SYS_pivot_root, ".", ".") ||
	    umount2(".", MNT_DETACH) || chdir("/")) {
		pr_perror("cannot make the restored mounts the root (pivot_root)");
		return -1;
	}
	return 0;
}

/* imgcr, the ns-root done with inside() (or gone): the yard's directory removed */
static int mnt_late(struct ns_ctx *c)
{
	struct mnt_ns *ns = c->t->ns ? c->t->ns->data[NS_MNT] : NULL;
	char yard[128];

	if (!ns || !ns->yard_made)
		return 0;
	mnt_yard(c, yard, sizeof(yard));
	if (rmdir(yard) && errno != ENOENT)
		pr_pwarn("cannot remove %s", yard);
	ns->yard_made = 0;
	return 0;
}

static void mnt_cleanup(struct ns_ctx *c)
{
	mnt_late(c);
}

/* ---- restore --root DIR, --external mnt[MP]:PATH ---- */

static char *opt_root;
static struct mnt_opt_ext {
	char *mp, *path;
} *opt_ext;
static int opt_next;

/* @path as an absolute path without links (bind_nofollow follows none); a directory if @dir */
static char *real_path(const char *what, const char *path, int dir)
{
	char *r = realpath(path, NULL);
	struct stat st;

	if (r && !stat(r, &st)) {
		if (!dir || S_ISDIR(st.st_mode))
			return r;
		errno = ENOTDIR;
	}
	pr_perror("restore: %s %s", what, path);
	free(r);
	return NULL;
}

/* a restore starts with neither (imgcr-criu runs several in one process) */
void mnt_options_reset(void)
{
	int i;

	for (i = 0; i < opt_next; i++) {
		free(opt_ext[i].mp);
		free(opt_ext[i].path);
	}
	free(opt_ext);
	free(opt_root);
	opt_ext = NULL;
	opt_root = NULL;
	opt_next = 0;
}

int mnt_root_option(const char *dir)
{
	free(opt_root);
	opt_root = real_path("--root", dir, 1);
	return opt_root ? 0 : -1;
}

int mnt_ext_option(const char *arg)
{
	const char *end = strstr(arg, "]:");
	struct mnt_opt_ext *e;
	char *mp;

	if (strncmp(arg, "mnt[", 4) || !end || end == arg + 4 || !end[2]) {
		pr_err("restore: --external %s: not mnt[MOUNTPOINT]:PATH (the only kind a restore takes)",
		       arg);
		return -1;
	}
	mp = strndup(arg + 4, end - arg - 4);
	if (!mp || !abs_path_ok(mp)) {
		pr_err("restore: --external %s: the mount point is not an absolute path", arg);
		free(mp);
		return -1;
	}
	opt_ext = tree_grow(opt_ext, opt_next, sizeof(*opt_ext));
	e = &opt_ext[opt_next];
	e->mp = mp;
	e->path = real_path("--external", end + 2, 0);
	if (!e->path) {
		free(mp);
		return -1;
	}
	opt_next++;
	return 0;
}

/*
 * The mount of @ns at @mp that is seen there: of several stacked at one
 * mount point, the one no other of them is mounted on (the last mounted);
 * NULL if none is at @mp.
 */
static struct mnt *mnt_top(struct mnt_ns *ns, const char *mp)
{
	struct mnt *top = NULL;
	int i, j;

	for (i = 0; ns && mp && i < ns->n; i++) {
		if (strcmp(ns->m[i].mp, mp))
			continue;
		for (j = 0; j < ns->n; j++)
			if (j != i && ns->m[j].parent == ns->m[i].id && !strcmp(ns->m[j].mp, mp))
				break;
		if (j == ns->n)
			top = &ns->m[i];
	}
	return top;
}

static void mnt_move(struct mnt *m, const char *from, const char *to, const char *rest)
{
	size_t len = strlen(to) + strlen(rest) + 2;
	char *n = malloc(len);

	if (!n) {
		pr_err("out of memory");
		exit(1);
	}
	snprintf(n, len, "%s%s", to, strcmp(rest, "/") ? (strcmp(to, "/") ? rest : rest + 1) : "");
	pr_info("mount at %s: bound from %s (%s at the dump)", m->mp, n, from);
	free(m->ext);
	m->ext = n;
	m->moved = 1;
}

int mnt_restore_options(struct tree *t)
{
	struct mnt_ns *ns = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->ns->data[NS_MNT] : NULL;
	struct mnt *m, *b;
	char *old;
	int i, j;

	/* a cgroup2 mount of the namespace root restored in the caller's cgroup (cgroup.c) */
	for (i = 0; ns && cg_caller_base && i < ns->n; i++) {
		char *n;

		m = &ns->m[i];
		if (m->how != MNT_EXT || strcmp(m->fs, "cgroup2"))
			continue;
		n = cg_caller_mount(t, m->ext, m->root);
		if (n) {
			old = xstrdup(m->ext);
			mnt_move(m, old, n, "/");
			free(old);
			free(n);
		}
	}
	if (!opt_root && !opt_next)
		return 0;
	if (!ns || !ns->n) {
		pr_err("restore: --root/--external mnt[]: the tree has no mount namespace of its own (its files are the restorer's)");
		return -1;
	}
	if (opt_root) {
		if (ns->m[0].how != MNT_EXT) {
			pr_err("restore: --root %s: the tree's root mount is not bound from a directory of imgcr's (it is %s, %s): only such a root can be bound from another one",
			       opt_root, mnt_how_names[ns->m[0].how], ns->m[0].fs);
			return -1;
		}
		old = xstrdup(ns->m[0].ext);
		for (i = 0; i < ns->n; i++) {
			const char *rest;
			char *was;

			m = &ns->m[i];
			rest = m->how == MNT_EXT ? below(m->ext, old) : NULL;
			if (!rest)
				continue;
			was = xstrdup(m->ext);
			mnt_move(m, was, opt_root, rest);
			free(was);
		}
		free(old);
	}
	/* of mounts stacked at MP, the one seen there (the top one) */
	for (j = 0; j < opt_next; j++) {
		m = mnt_top(ns, opt_ext[j].mp);
		if (!m || m->how != MNT_EXT) {
			pr_err("restore: --external mnt[%s]: %s", opt_ext[j].mp,
			       !m ? "the tree has no mount there" :
			       "that mount (the top one there) is not bound from a directory of imgcr's (not external)");
			return -1;
		}
		old = xstrdup(m->ext);
		mnt_move(m, old, opt_ext[j].path, "/");
		free(old);
	}
	/* binds of a moved mount show its new files (parents and bound mounts first) */
	for (i = 0; i < ns->n; i++) {
		m = &ns->m[i];
		b = m->how == MNT_BIND ? mnt_by_id(ns, m->bind) : NULL;
		if (b && b->moved)
			m->moved = 1;
	}
	/*
	 * the dump refuses mounts stacked at one mount point except over the
	 * root mount at "/": there a file's mount point ("/") does not say
	 * which of them it was on, the hidden root or one over it; that
	 * matters only if one of them is bound from elsewhere (its files
	 * compared as copies)
	 */
	m = mnt_top(ns, "/");
	if (m && m != &ns->m[0] && (m->moved || ns->m[0].moved)) {
		pr_err("restore: --root/--external mnt[]: a mount (%s) is stacked over the tree's root mount at /, and %s is bound from another directory: which of them a file at / was on is not recorded: not supported",
		       m->fs, m->moved ? "it" : "the root mount");
		return -1;
	}
	return 0;
}

int mnt_may_move(const struct tree *t, const char *mp)
{
	struct mnt_ns *ns = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->ns->data[NS_MNT] : NULL;
	struct mnt *m = mnt_top(ns, mp);

	if (m && m->how == MNT_BIND)
		m = mnt_by_id(ns, m->bind);
	return m && m->how == MNT_EXT && strncmp(m->fs, "fuse", 4);
}

int mnt_moved(const struct tree *t, const char *mp)
{
	struct mnt_ns *ns = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->ns->data[NS_MNT] : NULL;
	struct mnt *m;
	int i;

	for (i = 0; !mp && ns && i < ns->n; i++)
		if (ns->m[i].moved)
			return 1;
	/* a file's path leads to the mount seen at its mount point (files-reg.c opens it there) */
	m = mnt_top(ns, mp);
	return m ? m->moved : 0;
}

const char *mnt_moved_path(const struct tree *t, const char *path)
{
	struct mnt_ns *ns = t->ns && (t->ns->own & NS_BIT(NS_MNT)) ? t->ns->data[NS_MNT] : NULL;
	const char *best = NULL;
	size_t n, bn = 0;
	int i;

	for (i = 0; ns && i < ns->n; i++) {
		const char *mp = ns->m[i].mp;

		n = strcmp(mp, "/") ? strlen(mp) : 0;
		if ((!n || (!strncmp(path, mp, n) && (path[n] == '/' || !path[n]))) &&
		    (!best || n > bn)) {
			best = mp;
			bn = n;
		}
	}
	return best && mnt_moved(t, best) ? best : NULL;
}

int mnt_path_open(const char *mnt, const char *path, int flags)
{
	struct open_how how = {
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
			   RESOLVE_NO_MAGICLINKS,
	};
	struct open_how mhow = { .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *rest;
	size_t n = strlen(mnt);
	int dfd, fd, e;

	if (strcmp(mnt, "/") && (strncmp(path, mnt, n) || (path[n] && path[n] != '/'))) {
		errno = EXDEV;	/* not below its mount point: not a dumped path */
		return -1;
	}
	rest = strcmp(mnt, "/") ? path + n : path;
	while (*rest == '/')
		rest++;
	if (flags & O_PATH)
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	/*
	 * the mount point itself without symbolic links too (mountinfo's path
	 * has none; mnt_make_one made the mount there without following any)
	 */
	mhow.flags = *rest ? O_PATH | O_DIRECTORY | O_CLOEXEC : (unsigned int)flags;
	dfd = syscall(SYS_openat2, AT_FDCWD, mnt, &mhow, sizeof(mhow));
	if (dfd < 0 && errno == ENOSYS)
		dfd = open(mnt, (int)mhow.flags);
	if (dfd < 0 || !*rest)	/* the mount's root (a directory or a bound file) */
		return dfd;
	how.flags = (unsigned int)flags;
	fd = syscall(SYS_openat2, dfd, rest, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, flags);
	e = errno;
	close(dfd);
	errno = e;
	return fd;
}

/* ---- records ---- */

static void mnt_write(FILE *f, const struct tree *t)
{
	struct mnt_ns *ns = t->ns ? t->ns->data[NS_MNT] : NULL;
	char e[6][4 * PATH_MAX + 1];
	int i;

	for (i = 0; ns && i < ns->n; i++) {
		const struct mnt *m = &ns->m[i];

		tree_escape(e[0], sizeof(e[0]), m->mp);
		tree_escape(e[1], sizeof(e[1]), m->root);
		tree_escape(e[2], sizeof(e[2]), m->fs);
		tree_escape(e[3], sizeof(e[3]), m->src);
		tree_escape(e[4], sizeof(e[4]), m->mopts);
		tree_escape(e[5], sizeof(e[5]), m->sopts);
		fprintf(f, "mnt id=%d parent=%d dev=%u:%u mp=%s root=%s fs=%s src=%s mflags=%s sbopts=%s how=%s",
			m->id, m->parent, m->maj, m->min, e[0], e[1], e[2], e[3], e[4], e[5],
			mnt_how_names[m->how]);
		if (m->how == MNT_BIND)
			fprintf(f, " bind=%d", m->bind);
		if (m->how == MNT_EXT) {
			tree_escape(e[0], sizeof(e[0]), m->ext);
			fprintf(f, " ext=%s", e[0]);
		}
		if (m->shared)
			fprintf(f, " shared=%d", m->shared);
		if (m->master)
			fprintf(f, " master=%d", m->master);
		if (m->unbindable)
			fprintf(f, " unbindable=1");
		fputc('\n', f);
	}
}

static const char *mnt_read(struct tree *t, struct rec *r)
{
	struct ns_tree *nt = ns_tree_get(t);
	struct mnt_ns *ns = nt->data[NS_MNT];
	const char *how = rec_val(r, "how");
	struct mnt *m, *p;
	int i;

	if (!ns) {
		ns = calloc(1, sizeof(*ns));
		if (!ns) {
			pr_err("out of memory");
			exit(1);
		}
		nt->data[NS_MNT] = ns;
	}
	if (ns->n == MNT_MAX)
		return "too many mnt records";
	m = mnt_add(ns);
	if (REC_NUM(r, "id", 0, INT_MAX, m->id) || REC_NUM(r, "parent", 0, INT_MAX, m->parent) ||
	    rec_dev(r, "dev", &m->maj, &m->min) || rec_str(r, "mp", &m->mp) ||
	    rec_str(r, "root", &m->root) || rec_str(r, "fs", &m->fs) || rec_str(r, "src", &m->src) ||
	    rec_str(r, "mflags", &m->mopts) || rec_str(r, "sbopts", &m->sopts) || !how)
		return "bad mnt record";
	for (i = 0; i < 4 && strcmp(how, mnt_how_names[i]); i++)
		;
	if (i == 4)
		return "bad mnt record: unknown how";
	m->how = i;
	/* what the dump can have written: never another kind of superblock */
	if ((m->how == MNT_FRESH && !is_fresh(m->fs)) ||
	    (m->how == MNT_TMPFS && strcmp(m->fs, "tmpfs")))
		return "bad mnt record: a file system type not made fresh";
	if (m->how == MNT_BIND && REC_NUM(r, "bind", 0, INT_MAX, m->bind))
		return "bad mnt record: no bind";
	if (m->how == MNT_EXT && rec_str(r, "ext", &m->ext))
		return "bad mnt record: no ext";
	if ((rec_has(r, "shared") && REC_NUM(r, "shared", 1, INT_MAX, m->shared)) ||
	    (rec_has(r, "master") && REC_NUM(r, "master", 1, INT_MAX, m->master)) ||
	    (rec_has(r, "unbindable") && REC_NUM(r, "unbindable", 1, 1, m->unbindable)))
		return "bad mnt record";
	/* paths absolute, no ".." (they are joined to the yard at restore) */
	if (!abs_path_ok(m->mp) || !abs_path_ok(m->root) || (m->ext && !abs_path_ok(m->ext)))
		return "bad mnt record: path not absolute, or with an empty, . or .. component";
	if (ns->n == 1) {
		if (strcmp(m->mp, "/"))
			return "the first mnt record is not the root";
		return NULL;
	}
	/* parents first, binds of earlier mounts, no two ids alike */
	for (i = 0; i < ns->n - 1 && ns->m[i].id != m->parent; i++)
		;
	if (i == ns->n - 1 || !strcmp(m->mp, "/"))
		return "mnt record before its parent's";
	for (i = 0; i < ns->n - 1; i++)
		if (ns->m[i].id == m->id)
			return "mnt id listed twice";
	if (m->how == MNT_BIND) {
		p = NULL;
		for (i = 0; i < ns->n - 1; i++)
			if (ns->m[i].id == m->bind)
				p = &ns->m[i];
		if (!p || !below(m->root, p->root))
			return "mnt record binds a mount not before it";
	}
	return NULL;
}

static void mnt_tree_free(struct tree *t)
{
	mnt_ns_free(t->ns->data[NS_MNT]);
	t->ns->data[NS_MNT] = NULL;
}

const struct ns_ops ns_mnt_ops = {
	.name = "mnt",
	.clone_flag = CLONE_NEWNS,
	.dump = mnt_dump,
	.outside = mnt_outside,
	.inside = mnt_inside,
	.late = mnt_late,
	.cleanup = mnt_cleanup,
	.free = mnt_tree_free,
};

const struct tree_record mnt_records[] = {
	{ "mnt", mnt_read, mnt_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
