// SPDX-License-Identifier: GPL-2.0
/*
 * Whose image directory a restore by root runs.
 *
 * Root may give any credentials, so a restore by root honours what DIR
 * says: the tasks' IDs and capabilities (tree, core-PID.img), the files
 * they open and map, their sockets' names and owners, deleted files to
 * recreate.  Whoever can write DIR or a file in it chooses all that.  So,
 * as root, DIR and every file in it (tree, images, seccomp filters, pipe,
 * ghost, socket, terminal and TCP data: everything the restore reads is
 * there) must be writable by root alone (a root DIR others may not enter,
 * as imgcr dump makes it, passes whoever owns its files: a root dump gives
 * the images the tasks' owners), or else by one user U only (its owner),
 * and then the tree must run entirely as U:
 *   - every task's real, effective, saved and fs uids are U, its gids and
 *     supplementary groups among U's (/etc/passwd and /etc/group);
 *   - every thread of every image has U's IDs (the same rule) and no
 *     capability (permitted, inheritable, ambient);
 *   - no chroot;
 *   - the owners the restore gives (pipes and sockets, a bound socket's
 *     file, a deleted file it recreates, a memfd, a pty) and the peer
 *     credentials it connects with (SO_PEERCRED) are U's (or root's where
 *     the dump found root: a root-owned terminal);
 *   - every live task's cgroup (hcg) is the restorer's own: root moves
 *     none and makes no cgroup for U (cgmember.c), unless --cgroups ignore.
 * What U could do itself, root then does for U: no more.  A directory
 * writable by a group or by everyone, or files of two users, are refused
 * outright.  --trust-images-dir lifts the check: root vouches for DIR.
 *
 * The image files are U's, so U may rewrite one after this check: the
 * restore passes "--imgcr-user=U:G" to binfmt_img, which checks the
 * image it executes again (img_args.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "files.h"
#include "image.h"
#include "log.h"
#include "sockets.h"
#include "tree.h"
#include "ns.h"
#include "trust.h"
#include "tty.h"

#define MAX_GROUPS	65536

uid_t trust_dir_user = (uid_t)-1;

struct trust {
	uid_t user;
	gid_t *gids;		/* U's primary group first, then its others */
	int ngids;
	char why[512];		/* what of the tree is not U's */
};

/* Who may write @st, other than root: a uid (>= 0), -1: root alone, -2: a group or everyone. */
static long long writer(const struct stat *st, char *how, size_t size)
{
	if (st->st_mode & S_IWOTH && !S_ISLNK(st->st_mode)) {
		snprintf(how, size, "is writable by every user (mode %04o)", st->st_mode & 07777);
		return -2;
	}
	if (st->st_mode & S_IWGRP && st->st_gid != 0 && !S_ISLNK(st->st_mode)) {
		snprintf(how, size, "is writable by group %u (mode %04o)", st->st_gid,
			 st->st_mode & 07777);
		return -2;
	}
	if (st->st_uid != 0) {
		snprintf(how, size, "is owned by uid %u", st->st_uid);
		return st->st_uid;
	}
	return -1;
}

/*
 * U's groups: its primary one (/etc/passwd) first, then those that list it
 * (/etc/group).  Read here, not through NSS: imgcr may be static.
 */
static int user_gids(struct trust *tr)
{
	char line[4096], name[256] = "", *f[4], *p;
	FILE *pw = fopen("/etc/passwd", "re"), *gr;
	int i, found = 0;

	tr->gids = calloc(MAX_GROUPS, sizeof(*tr->gids));
	if (!pw || !tr->gids) {
		if (pw)
			fclose(pw);
		return -1;
	}
	while (!found && fgets(line, sizeof(line), pw)) {
		for (i = 0, p = line; i < 4 && p; i++)
			f[i] = strsep(&p, ":");
		if (i == 4 && p && strtoul(f[2], NULL, 10) == tr->user && *f[2]) {
			snprintf(name, sizeof(name), "%s", f[0]);
			tr->gids[tr->ngids++] = strtoul(f[3], NULL, 10);
			found = 1;
		}
	}
	fclose(pw);
	if (!found)
		return -1;
	gr = fopen("/etc/group", "re");
	while (gr && fgets(line, sizeof(line), gr) && tr->ngids < MAX_GROUPS) {
		char *m;

		line[strcspn(line, "\n")] = 0;
		for (i = 0, p = line; i < 3 && p; i++)
			f[i] = strsep(&p, ":");
		if (i < 3 || !p)
			continue;
		while ((m = strsep(&p, ",")))
			if (!strcmp(m, name)) {
				tr->gids[tr->ngids++] = strtoul(f[2], NULL, 10);
				break;
			}
	}
	if (gr)
		fclose(gr);
	return 0;
}

static int user_gid(const struct trust *tr, unsigned int g)
{
	int i;

	for (i = 0; i < tr->ngids; i++)
		if (tr->gids[i] == g)
			return 1;
	return 0;
}

__attribute__((format(printf, 2, 3)))
static int not_user(struct trust *tr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tr->why, sizeof(tr->why), fmt, ap);
	va_end(ap);
	return 0;
}

/* An owner (@uid, @gid) the restore gives: U's, or root's. */
static int owner_ok(const struct trust *tr, unsigned int uid, unsigned int gid)
{
	return (uid == tr->user || uid == 0) && (gid == 0 || user_gid(tr, gid));
}

/* The 4 uids and 4 gids of a thread or task are U's. */
static int ids_ok(const struct trust *tr, const unsigned int *uid, const unsigned int *gid)
{
	int i;

	for (i = 0; i < 4; i++)
		if (uid[i] != tr->user || !user_gid(tr, gid[i]))
			return 0;
	return 1;
}

/* Every thread of @k's image: U's IDs, no capability. */
static int image_ok(struct trust *tr, int dirfd, const char *dir, const struct tree_task *k)
{
	char path[PATH_MAX + 64], name[64];
	struct image im;
	unsigned int i;
	int ok = 1;

	snprintf(name, sizeof(name), "core-%d.img", k->pid);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (image_openat(&im, dirfd, name)) {
		image_close(&im);
		return not_user(tr, "its image %s cannot be read", path);
	}
	for (i = 0; i < im.nr_threads && ok; i++) {
		const struct imgcr_creds *c = &im.threads[i].creds;
		const unsigned int u[4] = { c->uid, c->euid, c->suid, c->fsuid };
		const unsigned int g[4] = { c->gid, c->egid, c->sgid, c->fsgid };

		if (!im.threads[i].has_creds)
			continue;	/* an old image: the restorer takes the tree's IDs */
		if (!ids_ok(tr, u, g))
			ok = not_user(tr, "pid %d thread %d has uid %u gid %u in %s", k->pid,
				      im.threads[i].prstatus.pid, c->uid, c->gid, path);
		else if (c->cap_permitted | c->cap_inheritable | c->cap_ambient)
			ok = not_user(tr, "pid %d thread %d has capabilities (permitted %#llx) in %s",
				      k->pid, im.threads[i].prstatus.pid,
				      (unsigned long long)c->cap_permitted, path);
	}
	image_close(&im);
	return ok;
}

/* The whole tree runs as U: 1, else 0 with tr->why. */
static int tree_is_user(struct trust *tr, const struct tree *t, int dirfd, const char *dir)
{
	unsigned int uid, gid;
	int i, j;

	if (user_gids(tr))
		return not_user(tr, "uid %u has no entry in the user database (its groups are unknown)",
				tr->user);
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		if (!ids_ok(tr, k->uid, k->gid))
			return not_user(tr, "pid %d runs as uid %u gid %u (euid %u, fsuid %u)", k->pid,
					k->uid[0], k->gid[0], k->uid[1], k->uid[3]);
		for (j = 0; j < k->ngroups; j++)
			if (!user_gid(tr, k->groups[j]))
				return not_user(tr, "pid %d has group %u, which uid %u is not in",
						k->pid, k->groups[j], tr->user);
		if (k->root && strcmp(k->root, "/"))
			return not_user(tr, "pid %d runs under chroot %s", k->pid, k->root);
		if (!k->zombie && !image_ok(tr, dirfd, dir, k))
			return 0;
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (f->has_owner && !owner_ok(tr, f->owner_uid, f->owner_gid))
			return not_user(tr, "file %d (%s) is given the owner %u:%u", i,
					tree_kind_names[f->kind], f->owner_uid, f->owner_gid);
		if (f->kind == TK_MEMFD && f->has_mode && !owner_ok(tr, f->uid, f->gid))
			return not_user(tr, "memfd %s is given the owner %u:%u", f->path,
					f->uid, f->gid);
	}
	for (i = 0; i < t->nghosts; i++) {
		const struct tree_ghost *g = &t->ghosts[i];

		if (!owner_ok(tr, g->uid, g->gid) || (g->mode & (S_ISUID | S_ISGID)))
			return not_user(tr, "the deleted file %s is recreated with owner %u:%u mode %04o",
					g->path, g->uid, g->gid, g->mode);
	}
	for (i = 0; i < t->nsks; i++) {
		const struct tree_sk *s = &t->sks[i];

		if (s->mode && !owner_ok(tr, s->uid, s->gid))
			return not_user(tr, "socket %lu's file is given the owner %u:%u", s->ino,
					s->uid, s->gid);
		/* an outside peer's are its own: not given by the restore */
		if (!(s->opts & SKO_EXTERNAL) && sk_peercred(s, &uid, &gid) &&
		    (uid != tr->user || !user_gid(tr, gid)))
			return not_user(tr, "socket %lu connects with the peer credentials %u:%u",
					s->ino, uid, gid);
	}
	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		if (y->has_mode && !owner_ok(tr, y->uid, y->gid))
			return not_user(tr, "pty %d is given the owner %u:%u", y->index, y->uid, y->gid);
	}
	/* hcgroup, hcg: root moves tasks and makes cgroups the user may not */
	if (!cgm_user_ok(t, tr->why, sizeof(tr->why)))
		return 0;
	return 1;
}

/*
 * The tree file asks for namespace work: a kind of its own or external,
 * or any kind's records (those of a kind not listed as own are refused
 * later, but nothing of a user's directory should get that far).  What
 * root would do on the host for it (review M5): mounts of host paths and
 * of file systems, tmpfs files with any owner, mode, device number and
 * xattr; veth outer ends with their names, addresses (host routes with
 * them) and bridge; cgroups and their limits in the host's tree; SysV
 * objects with any owner; the host name, clock offsets.
 */
static int ns_any(const struct tree *t)
{
	int k;

	if (!t->ns)
		return 0;
	if (t->ns->own || t->ns->ext)
		return 1;
	for (k = 0; k < NS_N; k++)
		if (t->ns->data[k])
			return 1;
	return 0;
}

int trust_check(const struct tree *t, int dirfd, const char *dir, int trusted, uid_t *user)
{
	struct trust tr = { .user = (uid_t)-1 };
	char how[128], first[PATH_MAX + 160] = "";
	struct dirent *d;
	struct stat st;
	long long w;
	DIR *list;
	int fd, ret = -1;

	*user = (uid_t)-1;
	if (geteuid() != 0)
		return 0;
	if (trusted) {
		pr_debug("%s: trusted (--trust-images-dir)", dir);
		return 0;
	}
	if (fstat(dirfd, &st)) {
		pr_perror("%s", dir);
		return -1;
	}
	w = writer(&st, how, sizeof(how));
	if (w == -2) {
		pr_err("%s %s: as root, imgcr restore runs what the directory says with root's rights; refused (restore it as its owner, or pass --trust-images-dir if you trust whoever can write it)",
		       dir, how);
		return -1;
	}
	if (w >= 0) {
		tr.user = w;
		snprintf(first, sizeof(first), "%s %s", dir, how);
	}
	/*
	 * root's, and no one else may even enter it (imgcr dump makes it
	 * 0700): its files are out of reach whoever owns them (a root dump
	 * gives the images the tasks' owners)
	 */
	if (w == -1 && !(st.st_mode & (S_IXGRP | S_IXOTH)))
		return 0;
	fd = dup(dirfd);
	list = fd >= 0 ? fdopendir(fd) : NULL;
	if (!list) {
		pr_perror("%s", dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(list);
	while ((d = readdir(list))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			pr_perror("%s/%s", dir, d->d_name);
			goto out;
		}
		w = writer(&st, how, sizeof(how));
		if (w == -1)
			continue;
		if (w == -2 || (tr.user != (uid_t)-1 && (uid_t)w != tr.user)) {
			pr_err("%s/%s %s%s%s: as root, imgcr restore runs what the directory says with root's rights; refused (pass --trust-images-dir if you trust whoever can write it)",
			       dir, d->d_name, how, first[0] ? ", and " : "", first);
			goto out;
		}
		if (tr.user == (uid_t)-1) {
			tr.user = w;
			snprintf(first, sizeof(first), "%s/%s %s", dir, d->d_name, how);
		}
	}
	if (tr.user == (uid_t)-1) {
		ret = 0;	/* root's alone */
		goto out;
	}
	/*
	 * A tree with namespaces of its own makes root act on the host: bind
	 * host paths, mount file systems, make device nodes and setuid files
	 * (tmpfs images), veths, cgroups.  None of it is a user's to ask for.
	 */
	if (ns_any(t)) {
		pr_err("%s: as root, a tree with namespaces of its own (mounts, network, cgroups...) is restored only from a directory only root can write; refused (pass --trust-images-dir if you trust whoever can write it)",
		       first);
		goto out;
	}
	if (!tree_is_user(&tr, t, dirfd, dir)) {
		pr_err("%s: as root, imgcr restore runs what the directory says with root's rights, so a directory another user can write is restored only if its tree runs entirely as that user (uid %u); but %s: refused (restore it as uid %u, or pass --trust-images-dir if you trust it)",
		       first, tr.user, tr.why, tr.user);
		goto out;
	}
	pr_debug("%s: the tree runs entirely as uid %u, the owner", first, tr.user);
	*user = trust_dir_user = tr.user;
	ret = 0;
out:
	closedir(list);
	free(tr.gids);
	return ret;
}

void trust_user_arg(char *buf, size_t size, uid_t user, gid_t gid)
{
	if (user == (uid_t)-1)
		buf[0] = 0;
	else
		snprintf(buf, size, "--imgcr-user=%u:%u", user, gid);
}

const struct tree_task *trust_sk_holder(const struct tree *t, unsigned long ino)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++)
		for (j = 0; j < t->tasks[i].nfds; j++) {
			const struct tree_file *f = &t->files[t->tasks[i].fds[j].file];

			if (f->kind == TK_SK && f->ino == ino)
				return &t->tasks[i];
		}
	return NULL;
}

int trust_enter(const struct tree_task *k, struct trust_as *sv, const char *what)
{
	gid_t *g;
	int i;

	memset(sv, 0, sizeof(*sv));
	if (geteuid() != 0 || !k || k->uid[1] == 0)
		return 0;
	sv->groups = calloc(MAX_GROUPS, sizeof(*sv->groups));
	g = calloc(k->ngroups + 1, sizeof(*g));
	if (!sv->groups || !g) {
		free(sv->groups);
		free(g);
		pr_err("out of memory");
		return -1;
	}
	for (i = 0; i < k->ngroups; i++)
		g[i] = k->groups[i];
	sv->ngroups = getgroups(MAX_GROUPS, sv->groups);
	sv->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (prctl(PR_GET_PDEATHSIG, &sv->pdeath, 0, 0, 0))
		sv->pdeath = 0;
	sv->on = 1;
	if (sv->ngroups < 0 || setgroups(k->ngroups, g) ||
	    setresgid(-1, k->gid[1], -1) || setresuid(-1, k->uid[1], -1)) {
		int e = errno;

		trust_leave(sv);
		free(g);
		if (e == EINVAL)	/* not mapped here (--pidns): as before */
			return 0;
		errno = e;
		pr_perror("%s: cannot take the credentials of pid %d (uid %u gid %u)", what,
			  k->pid, k->uid[1], k->gid[1]);
		return -1;
	}
	free(g);
	return 0;
}

int trust_leave(struct trust_as *sv)
{
	int ret = 0;

	if (!sv->on)
		return 0;
	sv->on = 0;
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1) ||
	    (sv->ngroups >= 0 && setgroups(sv->ngroups, sv->groups))) {
		pr_perror("cannot go back to the restorer's credentials");
		ret = -1;
	}
	if ((sv->dumpable > 0 && prctl(PR_SET_DUMPABLE, sv->dumpable, 0, 0, 0)) ||
	    (sv->pdeath && prctl(PR_SET_PDEATHSIG, sv->pdeath, 0, 0, 0))) {
		pr_perror("cannot set the restorer's dumpable flag and parent-death signal back");
		ret = -1;
	}
	free(sv->groups);
	sv->groups = NULL;
	return ret;
}

/* Open @name in @dirfd as a directory, following it if it is root's symbolic link. */
static int walk_one(int dirfd, const char *name, int depth);

/* Resolve @path (absolute, or relative to @dirfd) to an O_PATH directory fd. */
static int walk(int dirfd, const char *path, int depth)
{
	char *copy = strdup(path), *p, *c;
	int cur, next;

	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) :
			       openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (p = copy; cur >= 0 && (c = strsep(&p, "/"));) {
		if (!*c || !strcmp(c, "."))
			continue;
		next = walk_one(cur, c, depth);
		close(cur);
		cur = next;
	}
	free(copy);
	return cur;
}

static int walk_one(int dirfd, const char *name, int depth)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || errno != ENOTDIR)
		return fd;
	/* a symbolic link (O_NOFOLLOW|O_PATH gives ENOTDIR), or not a directory */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode))
		return -1;
	if (st.st_uid != 0 || depth >= 40) {
		errno = ELOOP;
		return -1;
	}
	n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = 0;
	return walk(dirfd, target, depth + 1);
}

int trust_dir_open(const char *path)
{
	return walk(AT_FDCWD, path, 0);
}

int trust_sock_own(int dirfd, const char *base, unsigned int uid, unsigned int gid,
		   unsigned int mode)
{
	char proc[64];
	struct stat st;
	int fd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		goto out;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;	/* swapped for something else */
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!fchownat(fd, "", uid, gid, AT_EMPTY_PATH) && !chmod(proc, mode))
		ret = 0;
out:
	close(fd);
	return ret;
}

int trust_sock_unlink(int dirfd, const char *base)
{
	struct stat st;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode))
		return -1;
	return unlinkat(dirfd, base, 0);
}
