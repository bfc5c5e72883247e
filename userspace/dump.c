// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr dump -t PID -D DIR [--leave-running]: checkpoint a process tree.
 *
 * 1. Freeze (freeze.c): PTRACE_SEIZE + PTRACE_INTERRUPT every thread of
 *    every task, starting at PID, listing each task's threads again until
 *    no new one appears and reading each stopped task's children
 *    (/proc/PID/task/TID/children) until a full pass finds no new task.
 *    Nothing is read before a task is stopped, and a stopped thread cannot
 *    clone or fork.  The tree records each task's threads.
 * 2. Describe every task (ids, credentials, cwd/root/umask, fds) and check
 *    that everything is supported; save the data buffered in pipes (tee(2),
 *    which leaves the data in the live pipe).
 * 3. Read every image from /proc/PID/dump into DIR/core-PID.img (one image
 *    holds all the threads of a task: it must list exactly the frozen
 *    threads) and write DIR/tree (format: tree.c).
 * 4. SIGKILL the tree, or PTRACE_DETACH it with --leave-running.  On any
 *    error, the tree is detached untouched and the error names pid and fd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <linux/magic.h>

#include "commands.h"
#include "freeze.h"
#include "image.h"
#include "log.h"
#include "proc.h"
#include "tree.h"

struct dctx {
	struct tree t;
	struct freezer fz;
	const char *dir;
	int have_kcmp;
};

static const char *const ns_names[] = {
	"pid", "mnt", "net", "ipc", "uts", "user", "cgroup", "time",
};

static int ns_check(struct dctx *c, int i)
{
	pid_t pid = c->t.tasks[i].pid;
	char a[128], b[128], pa[96], pb[96];
	ssize_t la, lb;
	size_t k;

	for (k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++) {
		snprintf(pa, sizeof(pa), "/proc/%d/ns/%s", c->t.root, ns_names[k]);
		snprintf(pb, sizeof(pb), "/proc/%d/ns/%s", pid, ns_names[k]);
		la = readlink(pa, a, sizeof(a) - 1);
		lb = readlink(pb, b, sizeof(b) - 1);
		if (la < 0 && lb < 0 && errno == ENOENT)
			continue;
		if (la < 0 || lb < 0) {
			pr_perror("pid %d: cannot read its %s namespace", pid, ns_names[k]);
			return -1;
		}
		a[la] = b[lb] = 0;
		if (strcmp(a, b)) {
			pr_err("pid %d: %s namespace %s differs from the root task's (pid %d, %s): tasks in other namespaces are not supported",
			       pid, ns_names[k], b, c->t.root, a);
			return -1;
		}
	}
	if (pid == c->t.root) {
		snprintf(pb, sizeof(pb), "/proc/%d/ns/pid", pid);
		la = readlink("/proc/self/ns/pid", a, sizeof(a) - 1);
		lb = readlink(pb, b, sizeof(b) - 1);
		if (la > 0 && lb > 0) {
			a[la] = b[lb] = 0;
			if (strcmp(a, b)) {
				pr_err("pid %d: in another PID namespace than imgcr (%s, imgcr's %s): not supported",
				       pid, b, a);
				return -1;
			}
		}
	}
	return 0;
}

static int read_ids(const char *text, const char *key, unsigned int out[4])
{
	const char *v = status_field(text, key);

	return v && sscanf(v, "%u %u %u %u", &out[0], &out[1], &out[2], &out[3]) == 4 ? 0 : -1;
}

static char *read_link(const char *path)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlink(path, buf, PATH_MAX);

	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

static int describe_task(struct dctx *c, int i)
{
	struct tree_task *k = &c->t.tasks[i];
	char path[96], *text, state;
	const char *v;

	if (proc_stat(k->pid, &state, &k->ppid, &k->pgid, &k->sid)) {
		pr_perror("pid %d: cannot read /proc/%d/stat", k->pid, k->pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", k->pid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", k->pid, path);
		return -1;
	}
	if (read_ids(text, "Uid", k->uid) || read_ids(text, "Gid", k->gid)) {
		pr_err("pid %d: cannot parse Uid/Gid in %s", k->pid, path);
		free(text);
		return -1;
	}
	v = status_field(text, "Name");
	if (v)
		sscanf(v, "%63[^\n]", k->comm);
	v = status_field(text, "Umask");
	k->umask = v ? strtoul(v, NULL, 8) : 022;
	v = status_field(text, "Groups");
	k->groups = calloc(65537, sizeof(*k->groups));
	while (v && *v && *v != '\n' && k->ngroups < 65536) {
		char *end;
		unsigned long g = strtoul(v, &end, 10);

		if (end == v)
			break;
		k->groups[k->ngroups++] = g;
		v = end;
		while (*v == ' ')
			v++;
	}
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/cwd", k->pid);
	k->cwd = read_link(path);
	snprintf(path, sizeof(path), "/proc/%d/root", k->pid);
	k->root = read_link(path);
	if (!k->cwd || !k->root) {
		pr_perror("pid %d: cannot read its cwd/root", k->pid);
		return -1;
	}
	if (k->cwd[0] != '/' || strstr(k->cwd, " (deleted)")) {
		pr_err("pid %d: cwd %s: not reachable or deleted: not supported", k->pid, k->cwd);
		return -1;
	}
	return 0;
}

static int save_pipe_data(struct dctx *c, pid_t pid, int fd, int pfd, unsigned long ino)
{
	struct tree_pipe *tp;
	char path[4096], *buf = NULL;
	int q[2] = { -1, -1 }, out = -1, n = 0, size;
	ssize_t t;

	if (tree_pipe_find(&c->t, ino))
		return 0;
	size = fcntl(pfd, F_GETPIPE_SZ);
	if (size < 0 || ioctl(pfd, FIONREAD, &n)) {
		pr_perror("pid %d fd %d: pipe:[%lu]: cannot read its size", pid, fd, ino);
		return -1;
	}
	tp = tree_pipe_add(&c->t, ino);
	tp->size = size;
	tp->len = n;
	if (n > 0) {
		if (pipe2(q, O_CLOEXEC | O_NONBLOCK) ||
		    (fcntl(q[1], F_GETPIPE_SZ) < size && fcntl(q[1], F_SETPIPE_SZ, size) < 0)) {
			pr_perror("pid %d fd %d: pipe:[%lu]: cannot make a copy pipe of %d bytes",
				  pid, fd, ino, size);
			goto fail;
		}
		/* tee(2) duplicates the buffers: the data stays in the live pipe */
		t = tee(pfd, q[1], n, SPLICE_F_NONBLOCK);
		if (t != n) {
			if (t < 0)
				pr_perror("pid %d fd %d: pipe:[%lu]: tee of the buffered data", pid, fd, ino);
			else
				pr_err("pid %d fd %d: pipe:[%lu]: tee copied %zd of %d buffered bytes",
				       pid, fd, ino, t, n);
			goto fail;
		}
		buf = malloc(n);
		if (!buf || read_full(q[0], buf, n)) {
			pr_perror("pid %d fd %d: pipe:[%lu]: reading the copied data", pid, fd, ino);
			goto fail;
		}
	}
	snprintf(path, sizeof(path), "%s/pipe-%lu.data", c->dir, ino);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0 || write_all(out, buf, n)) {
		pr_perror("cannot write %s", path);
		goto fail;
	}
	close(out);
	if (q[0] >= 0) {
		close(q[0]);
		close(q[1]);
	}
	free(buf);
	return 0;
fail:
	if (out >= 0)
		close(out);
	if (q[0] >= 0) {
		close(q[0]);
		close(q[1]);
	}
	free(buf);
	return -1;
}

static int allowed_chr(unsigned int ma, unsigned int mi)
{
	return (ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9)) ||
	       (ma == 5 && mi == 0);
}

static int same_description(struct dctx *c, const struct tree_file *f, pid_t pid, int fd)
{
	long r;

	if (c->have_kcmp) {
		r = syscall(SYS_kcmp, f->pid, pid, KCMP_FILE, f->fd, fd);
		if (r >= 0)
			return r == 0;
		if (errno != ENOSYS && errno != EPERM && errno != EACCES)
			return 0;
		c->have_kcmp = 0;
	}
	/* without kcmp: only pipe ends of one pipe are known to be shared */
	return f->kind == TK_PIPE && f->pid != pid;
}

static int describe_fd(struct dctx *c, int ti, int fd)
{
	pid_t pid = c->t.tasks[ti].pid;
	char path[96], *link, *info, *sflags, *spos;
	unsigned int flags;
	long long pos;
	enum tree_kind kind;
	struct tree_file *f;
	struct stat st;
	unsigned long ino = 0;
	int cloexec, i, pfd = -1, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	link = read_link(path);
	if (!link) {
		pr_perror("pid %d fd %d: cannot read the link", pid, fd);
		return -1;
	}
	if (!strncmp(link, "socket:", 7)) {
		pr_err("pid %d fd %d: socket: sockets are not supported (%s)", pid, fd, link);
		goto out;
	}
	if (!strncmp(link, "anon_inode:", 11)) {
		pr_err("pid %d fd %d: anon inode %s: anon inodes (eventfd, epoll, signalfd, timerfd, ...) are not supported",
		       pid, fd, link + 11);
		goto out;
	}
	if (stat(path, &st)) {
		pr_perror("pid %d fd %d: %s: cannot stat", pid, fd, link);
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	info = read_text(path, NULL);
	if (!info) {
		pr_perror("pid %d fd %d: cannot read %s", pid, fd, path);
		goto out;
	}
	sflags = (char *)status_field(info, "flags");
	spos = (char *)status_field(info, "pos");
	flags = sflags ? strtoul(sflags, NULL, 8) : 0;
	pos = spos ? strtoll(spos, NULL, 10) : 0;
	free(info);
	if (!sflags || !spos) {
		pr_err("pid %d fd %d: cannot parse %s", pid, fd, path);
		goto out;
	}
	cloexec = !!(flags & O_CLOEXEC);
	flags &= ~O_CLOEXEC;

	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		kind = TK_FILE;
		if (link[0] != '/' || strstr(link, " (deleted)")) {
			pr_err("pid %d fd %d: %s: deleted or unreachable files are not supported", pid, fd, link);
			goto out;
		}
	} else if (S_ISFIFO(st.st_mode)) {
		struct statfs sfs;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		pfd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (pfd < 0 || fstatfs(pfd, &sfs)) {
			pr_perror("pid %d fd %d: %s: cannot open the pipe", pid, fd, link);
			goto out;
		}
		kind = sfs.f_type == PIPEFS_MAGIC ? TK_PIPE : TK_FIFO;
		ino = st.st_ino;
		if (kind == TK_FIFO && (link[0] != '/' || strstr(link, " (deleted)"))) {
			pr_err("pid %d fd %d: FIFO %s: deleted or unreachable FIFOs are not supported", pid, fd, link);
			goto out;
		}
		if (save_pipe_data(c, pid, fd, pfd, ino))
			goto out;
	} else if (S_ISCHR(st.st_mode)) {
		kind = TK_CHR;
		if (!allowed_chr(major(st.st_rdev), minor(st.st_rdev))) {
			pr_err("pid %d fd %d: character device %s (%u:%u): not supported (only /dev/null, zero, full, random, urandom and tty)",
			       pid, fd, link, major(st.st_rdev), minor(st.st_rdev));
			goto out;
		}
	} else if (S_ISSOCK(st.st_mode)) {
		pr_err("pid %d fd %d: socket: sockets are not supported (%s)", pid, fd, link);
		goto out;
	} else if (S_ISBLK(st.st_mode)) {
		pr_err("pid %d fd %d: block device %s: not supported", pid, fd, link);
		goto out;
	} else {
		pr_err("pid %d fd %d: %s: unsupported kind of file (mode %o)", pid, fd, link, st.st_mode);
		goto out;
	}

	for (i = 0; i < c->t.nfiles; i++) {
		f = &c->t.files[i];
		if (f->kind == kind && f->dev == st.st_dev && f->sino == st.st_ino &&
		    (f->flags & O_ACCMODE) == (flags & O_ACCMODE) &&
		    same_description(c, f, pid, fd))
			break;
	}
	if (i == c->t.nfiles) {
		f = tree_file_add(&c->t);
		f->kind = kind;
		f->flags = flags;
		f->pos = pos;
		f->ino = ino;
		f->pid = pid;
		f->fd = fd;
		f->dev = st.st_dev;
		f->sino = st.st_ino;
		if (kind == TK_CHR) {
			f->major = major(st.st_rdev);
			f->minor = minor(st.st_rdev);
		}
		if (kind != TK_PIPE)
			f->path = strdup(link);
	}
	tree_fd_add(&c->t.tasks[ti], fd, i, cloexec);
	ret = 0;
out:
	if (pfd >= 0)
		close(pfd);
	free(link);
	return ret;
}

static int describe_fds(struct dctx *c, int ti)
{
	pid_t pid = c->t.tasks[ti].pid;
	struct dirent **names;
	char path[64];
	int n, i, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	n = scandir(path, &names, NULL, NULL);
	if (n < 0) {
		pr_perror("pid %d: cannot list %s", pid, path);
		return -1;
	}
	/* numeric order */
	int *fds = calloc(n + 1, sizeof(int)), nf = 0;

	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			fds[nf++] = atoi(names[i]->d_name);
		free(names[i]);
	}
	free(names);
	for (i = 1; i < nf; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int x = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = x;
		}
	for (i = 0; i < nf && !ret; i++)
		ret = describe_fd(c, ti, fds[i]);
	free(fds);
	return ret;
}

/* Pipes and FIFOs of the tree must not be open in any other process. */
static int check_external_pipes(struct dctx *c)
{
	struct dirent *d, *e;
	DIR *proc, *fdd;
	char path[96], link[PATH_MAX + 1], want[64];
	int i, ret = 0;

	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!ret && (d = readdir(proc))) {
		pid_t pid = atoi(d->d_name);

		if (pid <= 0 || pid == getpid() || tree_find(&c->t, pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fdd = opendir(path);
		if (!fdd)
			continue;
		while (!ret && (e = readdir(fdd))) {
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", pid, e->d_name);
			n = readlink(path, link, PATH_MAX);
			if (n <= 0)
				continue;
			link[n] = 0;
			for (i = 0; i < c->t.nfiles; i++) {
				const struct tree_file *f = &c->t.files[i];

				if (f->kind == TK_PIPE) {
					snprintf(want, sizeof(want), "pipe:[%lu]", f->ino);
					if (strcmp(link, want))
						continue;
				} else if (f->kind != TK_FIFO || strcmp(link, f->path)) {
					continue;
				}
				pr_err("pid %d fd %d: %s%s is also open in pid %d fd %s, outside the tree: pipes shared with other processes are not supported",
				       f->pid, f->fd, f->kind == TK_FIFO ? "FIFO " : "", link, pid, e->d_name);
				ret = -1;
				break;
			}
		}
		closedir(fdd);
	}
	closedir(proc);
	return ret;
}

static int save_image(struct dctx *c, const struct tree_task *k)
{
	char src[64], dst[4096], buf[1 << 16];
	int in, out;
	ssize_t n;

	snprintf(src, sizeof(src), "/proc/%d/dump", k->pid);
	snprintf(dst, sizeof(dst), "%s/core-%d.img", c->dir, k->pid);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		pr_perror("pid %d: cannot open %s", k->pid, src);
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (out < 0) {
		pr_perror("cannot create %s", dst);
		close(in);
		return -1;
	}
	fchmod(out, 0700);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(out, buf, n)) {
			pr_perror("cannot write %s", dst);
			goto fail;
		}
	if (n < 0) {
		pr_perror("pid %d: reading %s", k->pid, src);
		goto fail;
	}
	/* owned by the task's user, who must be able to exec it */
	if (!geteuid() && fchown(out, k->uid[0], k->gid[0])) {
		pr_perror("cannot chown %s", dst);
		goto fail;
	}
	close(in);
	close(out);
	return 0;
fail:
	close(in);
	close(out);
	return -1;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static void tid_list(char *out, size_t size, const pid_t *tids, int n)
{
	size_t off = 0;
	int i;

	out[0] = 0;
	if (!n)
		snprintf(out, size, "none");
	for (i = 0; i < n && off + 16 < size; i++)
		off += snprintf(out + off, size - off, "%s%d", i ? " " : "", tids[i]);
	if (i < n)
		snprintf(out + off, size - off, " ...");
}

/*
 * The image must hold exactly the threads the tree records for the task:
 * a restore recreates the TIDs the tree lists and checks them against these.
 */
static int check_image_threads(struct dctx *c, const struct tree_task *k)
{
	char path[4096], a[256], b[256];
	struct image img;
	pid_t *tids = NULL;
	unsigned int i;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/core-%d.img", c->dir, k->pid);
	if (image_open(&img, path))
		goto out;
	tids = calloc(img.nr_threads + 1, sizeof(*tids));
	if (!tids) {
		pr_err("out of memory");
		goto out;
	}
	for (i = 1; i < img.nr_threads; i++)
		tids[i - 1] = img.threads[i].thread.tid;
	qsort(tids, img.nr_threads - 1, sizeof(*tids), cmp_tid);
	if (img.nr_threads - 1 != (unsigned int)k->nthreads ||
	    (k->nthreads && memcmp(tids, k->threads, k->nthreads * sizeof(*tids)))) {
		tid_list(a, sizeof(a), tids, img.nr_threads - 1);
		tid_list(b, sizeof(b), k->threads, k->nthreads);
		pr_err("pid %d: the image %s holds the threads %s besides the main one, the frozen task has %s",
		       k->pid, path, a, b);
		goto out;
	}
	ret = 0;
out:
	free(tids);
	image_close(&img);
	return ret;
}

static void chown_dir(struct dctx *c, int created)
{
	const struct tree_task *r = tree_find(&c->t, c->t.root);
	char path[4096];
	int i;

	if (geteuid() || !r)
		return;
	if (created && chown(c->dir, r->uid[0], r->gid[0]))
		pr_perror("warning: cannot chown %s", c->dir);
	snprintf(path, sizeof(path), "%s/%s", c->dir, TREE_FILE);
	if (chown(path, r->uid[0], r->gid[0]))
		pr_perror("warning: cannot chown %s", path);
	for (i = 0; i < c->t.npipes; i++) {
		snprintf(path, sizeof(path), "%s/pipe-%lu.data", c->dir, c->t.pipes[i].ino);
		if (chown(path, r->uid[0], r->gid[0]))
			pr_perror("warning: cannot chown %s", path);
	}
}

int cmd_dump(int argc, char **argv)
{
	struct dctx c = { .have_kcmp = 1 };
	const char *spid = NULL;
	int leave = 0, i, created = 0, ok = 0;
	char *end;
	pid_t root;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			spid = argv[++i];
		else if (!strcmp(argv[i], "-D") && i + 1 < argc)
			c.dir = argv[++i];
		else if (!strcmp(argv[i], "--leave-running"))
			leave = 1;
		else
			return usage_error("dump -t PID -D DIR [--leave-running]");
	}
	if (!spid || !c.dir)
		return usage_error("dump needs -t PID and -D DIR");
	root = strtol(spid, &end, 10);
	if (*end || root <= 0)
		return usage_error("dump: -t needs a pid");
	if (mkdir(c.dir, 0700) == 0)
		created = 1;
	else if (errno != EEXIST) {
		pr_perror("cannot create %s", c.dir);
		return 1;
	}

	if (freeze_tree(&c.fz, &c.t, root))
		goto out;
	for (i = 0; i < c.t.ntasks; i++)
		if (ns_check(&c, i) || describe_task(&c, i) || describe_fds(&c, i))
			goto out;
	if (check_external_pipes(&c))
		goto out;
	for (i = 0; i < c.t.ntasks; i++)
		if (save_image(&c, &c.t.tasks[i]) || check_image_threads(&c, &c.t.tasks[i]))
			goto out;
	if (tree_write(&c.t, c.dir))
		goto out;
	chown_dir(&c, created);
	ok = 1;
out:
	if (!ok)
		pr_err("dump failed; the tree was left running untouched");
	freeze_release(&c.fz, &c.t, ok && !leave);
	freeze_free(&c.fz);
	tree_free(&c.t);
	return ok ? 0 : 1;
}
