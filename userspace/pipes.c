// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous pipes ("pipe" records) and the data buffered in pipes and FIFOs
 * ("pipe" data records, DIR/pipe-INO.data), which fifo.c shares.
 *
 * dump: an S_ISFIFO fd on pipefs (fstatfs(), PIPEFS_MAGIC) is an end of the
 * pipe its inode names; the access mode says which end.  The data buffered
 * in it is copied once per pipe with tee(2), which leaves it in the live
 * pipe, and saved with the pipe's capacity.  A pipe (or FIFO) of the tree
 * must not be open in a process outside it: the check scans /proc once
 * after every task is described.
 *
 * restore: the first file of a pipe creates it (pipe2) and refills it; the
 * restorer keeps both ends until every file is open.  The first reader and
 * the first writer without O_LARGEFILE (pipe2()'s; open() sets it) get the
 * pipe's own ends; every other file of the pipe is a new open file
 * description of it, through /proc/self/fd.
 *
 * External pipes (pipes.h: dump --external, restore --inherit-fd) are the
 * caller's: recorded without data, and given back by the caller.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "log.h"
#include "pipes.h"
#include "proc.h"
#include "record.h"

struct tree_pipe *tree_pipe_find(const struct tree *t, unsigned long ino)
{
	int i;

	for (i = 0; i < t->npipes; i++)
		if (t->pipes[i].ino == ino)
			return &t->pipes[i];
	return NULL;
}

#define PIPE_EXT_MAX	16
static struct { unsigned long ino; int fd; } ext_pipes[PIPE_EXT_MAX], inherit_pipes[PIPE_EXT_MAX];
static int n_ext_pipes, n_inherit_pipes;

/* "pipe:[INO]" into *@ino: 0, or -1 */
static int pipe_key(const char *key, unsigned long *ino)
{
	char *end;

	if (strncmp(key, "pipe:[", 6) || key[6] < '0' || key[6] > '9')
		return -1;
	errno = 0;
	*ino = strtoul(key + 6, &end, 10);
	return errno || strcmp(end, "]") || !*ino ? -1 : 0;
}

int pipe_external_add(const char *key)
{
	unsigned long ino;

	if (pipe_key(key, &ino)) {
		pr_err("external %s: only pipes are supported as external files (pipe:[INODE])", key);
		return -1;
	}
	if (n_ext_pipes == PIPE_EXT_MAX) {
		pr_err("external %s: more than %d external pipes", key, PIPE_EXT_MAX);
		return -1;
	}
	ext_pipes[n_ext_pipes++].ino = ino;
	return 0;
}

int pipe_inherit_add(const char *key, int fd)
{
	unsigned long ino;
	struct statfs fs;
	struct stat st;

	if (pipe_key(key, &ino)) {
		pr_err("inherit_fd %s: only pipes can be inherited (pipe:[INODE])", key);
		return -1;
	}
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		pr_err("inherit_fd %s: fd %d is not open", key, fd);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode) || fstatfs(fd, &fs) ||
	    fs.f_type != PIPEFS_MAGIC) {
		pr_err("inherit_fd %s: fd %d is not a pipe", key, fd);
		return -1;
	}
	if (n_inherit_pipes == PIPE_EXT_MAX) {
		pr_err("inherit_fd %s: more than %d inherited fds", key, PIPE_EXT_MAX);
		return -1;
	}
	inherit_pipes[n_inherit_pipes].ino = ino;
	inherit_pipes[n_inherit_pipes++].fd = fd;
	return 0;
}

static int pipe_is_external(unsigned long ino)
{
	for (int i = 0; i < n_ext_pipes; i++)
		if (ext_pipes[i].ino == ino)
			return 1;
	return 0;
}

struct tree_pipe *tree_pipe_add(struct tree *t, unsigned long ino)
{
	struct tree_pipe *p;

	t->pipes = tree_grow(t->pipes, t->npipes, sizeof(*t->pipes));
	p = &t->pipes[t->npipes++];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	return p;
}


/* the file status flags F_SETFL can set (O_ASYNC: SIGIO to the owner, files.c) */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT | O_ASYNC)

int pipe_open_fd(struct fd_parms *p)
{
	struct statfs sfs;
	char path[96];

	if (p->file_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	p->file_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (p->file_fd < 0 || fstatfs(p->file_fd, &sfs)) {
		pr_perror("pid %d fd %d: %s: cannot open the pipe", p->pid, p->fd, p->link);
		return -1;
	}
	p->fs_type = sfs.f_type;
	return 0;
}

int pipe_save_data(struct fd_dump *c, const struct fd_parms *p, unsigned long ino)
{
	struct tree_pipe *tp;
	char path[4096], *buf = NULL;
	int q[2] = { -1, -1 }, out = -1, n = 0, size;
	int pid = p->pid, fd = p->fd, pfd = p->file_fd;
	ssize_t t;

	if (tree_pipe_find(c->t, ino))
		return 0;
	size = fcntl(pfd, F_GETPIPE_SZ);
	if (size < 0 || ioctl(pfd, FIONREAD, &n)) {
		pr_perror("pid %d fd %d: pipe:[%lu]: cannot read its size", pid, fd, ino);
		return -1;
	}
	tp = tree_pipe_add(c->t, ino);
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
	out = img_create(path, 0600);
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

static int pipe_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	if (!S_ISFIFO(p->st.st_mode))
		return FD_OTHER;
	if (pipe_open_fd(p))
		return FD_FAILED;
	if (p->fs_type != PIPEFS_MAGIC)
		return FD_OTHER;	/* a FIFO */
	f->ino = p->st.st_ino;
	if (pipe_is_external(f->ino)) {
		if (!tree_pipe_find(c->t, f->ino))
			tree_pipe_add(c->t, f->ino)->ext = 1;
		return FD_DESCRIBED;
	}
	return pipe_save_data(c, p, f->ino) ? FD_FAILED : FD_DESCRIBED;
}

static int pipe_outside_fd(pid_t pid, int fd, void *arg)
{
	const struct tree *t = arg;
	char path[64], link[PATH_MAX + 1], want[64];
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, link, PATH_MAX);
	if (n <= 0)
		return 0;
	link[n] = 0;
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (f->kind == TK_PIPE) {
			if (pipe_is_external(f->ino))
				continue;
			snprintf(want, sizeof(want), "pipe:[%lu]", f->ino);
			if (strcmp(link, want))
				continue;
		} else if (f->kind != TK_FIFO || strcmp(link, f->path)) {
			continue;
		}
		pr_err("pid %d fd %d: %s%s is also open in pid %d fd %d, outside the tree: pipes shared with other processes are not supported",
		       f->pid, f->fd, f->kind == TK_FIFO ? "FIFO " : "", link, pid, fd);
		return -1;
	}
	return 0;
}

static int pipe_outsider(pid_t pid, void *arg)
{
	if (tree_find(arg, pid))
		return 0;
	return proc_each_fd(pid, pipe_outside_fd, arg);
}

/* Pipes and FIFOs of the tree must not be open in any other process. */
static int pipe_check(const struct tree *t)
{
	return proc_each_process(pipe_outsider, (void *)t);
}

int pipe_refill(const struct fd_restore *r, int wfd, unsigned long ino, const char *what)
{
	const struct tree_pipe *p = tree_pipe_find(r->t, ino);
	char path[PATH_MAX + 64], *data;
	size_t len;
	int cur, fl;

	if (!p) {
		pr_err("%s: no pipe record for inode %lu in %s/tree", what, ino, r->dir);
		return -1;
	}
	cur = fcntl(wfd, F_GETPIPE_SZ);
	if (p->size && cur != (int)p->size && fcntl(wfd, F_SETPIPE_SZ, p->size) < 0 &&
	    p->len > (size_t)cur) {
		pr_perror("%s: cannot set the pipe size to %u for its %zu bytes", what, p->size, p->len);
		return -1;
	}
	if (!p->len)
		return 0;
	snprintf(path, sizeof(path), "pipe-%lu.data", ino);
	data = read_text_dir(r->dirfd, path, &len);
	if (!data) {
		pr_perror("%s: cannot read %s", what, path);
		return -1;
	}
	if (len != p->len) {
		pr_err("%s: %s has %zu bytes, the tree says %zu", what, path, len, p->len);
		free(data);
		return -1;
	}
	fl = fcntl(wfd, F_GETFL);
	fcntl(wfd, F_SETFL, fl | O_NONBLOCK);
	if (write_all(wfd, data, len)) {
		pr_perror("%s: cannot refill %zu bytes", what, len);
		free(data);
		return -1;
	}
	fcntl(wfd, F_SETFL, fl);
	free(data);
	return 0;
}

int pipe_reopen(int fd, unsigned int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, fd_open_flags(flags) | O_NONBLOCK);
}

int pipe_opened(int fd, unsigned int flags, const char *what)
{
	if (fd < 0) {
		pr_perror("%s: cannot open it again", what);
		return -1;
	}
	if (fcntl(fd, F_SETFL, flags & SETFL_MASK)) {
		pr_perror("%s: F_SETFL", what);
		close(fd);
		return -1;
	}
	return fd;
}

/* the kernel's O_LARGEFILE (glibc's is 0 on x86-64), as fdinfo shows it */
#define PIPE_O_LARGEFILE	0100000

/* Files @a and @b are ends of one pipe. */
static int same_pipe(const struct tree_file *a, const struct tree_file *b)
{
	return a->kind == TK_PIPE && b->kind == TK_PIPE && a->ino == b->ino;
}

static int pipe_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree *t = r->t;
	const struct tree_file *f = &t->files[i];
	unsigned int acc = f->flags & O_ACCMODE;
	int first, j, fd, own;

	const struct tree_pipe *tp = tree_pipe_find(t, f->ino);

	if (tp && tp->ext) {
		for (j = 0; j < n_inherit_pipes && inherit_pipes[j].ino != f->ino; j++)
			;
		if (j == n_inherit_pipes) {
			pr_err("%s: an external pipe (dumped with --external pipe:[%lu]): restore needs --inherit-fd fd[N]:pipe:[%lu], the pipe to use instead",
			       what, f->ino, f->ino);
			return -1;
		}
		fd = fcntl(inherit_pipes[j].fd, F_GETFL);
		if (fd < 0 || (fd & O_ACCMODE) != (int)acc) {
			pr_err("%s: inherited fd %d is open %s, the pipe's fd was open %s", what,
			       inherit_pipes[j].fd, fd < 0 ? "not at all" : (fd & O_ACCMODE) == O_RDONLY ? "for reading" : "for writing",
			       acc == O_RDONLY ? "for reading" : "for writing");
			return -1;
		}
		fd = fcntl(inherit_pipes[j].fd, F_DUPFD_CLOEXEC, r->base);
		return pipe_opened(fd, f->flags, what);
	}
	/* the first file of the pipe creates it and keeps its ends */
	for (first = 0; first < i && !same_pipe(&t->files[first], f); first++)
		;
	if (first == i) {
		int p[2];

		if (pipe2(p, O_CLOEXEC)) {
			pr_perror("%s: pipe", what);
			return -1;
		}
		r->keep[i][0] = fd_high(p[0], r->base);
		r->keep[i][1] = fd_high(p[1], r->base);
		if (pipe_refill(r, r->keep[i][1], f->ino, what))
			return -1;
	}
	/*
	 * The first reader and the first writer that pipe2() made get those
	 * ends; a file opened through /proc/PID/fd has O_LARGEFILE, which
	 * open() sets and pipe2() does not: it is a new open again.
	 */
	own = !(f->flags & PIPE_O_LARGEFILE);
	for (j = first; j < i && own; j++)
		if (same_pipe(&t->files[j], f) && (t->files[j].flags & O_ACCMODE) == acc &&
		    !(t->files[j].flags & PIPE_O_LARGEFILE))
			own = 0;
	if (own && acc == O_RDONLY)
		fd = fcntl(r->keep[first][0], F_DUPFD_CLOEXEC, r->base);
	else if (own && acc == O_WRONLY)
		fd = fcntl(r->keep[first][1], F_DUPFD_CLOEXEC, r->base);
	else
		fd = pipe_reopen(r->keep[first][0], f->flags);
	return pipe_opened(fd, f->flags, what);
}


static void pipe_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " ino=%lu", x->ino);
}

static const char *pipe_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (REC_NUM(r, "ino", 0, LLONG_MAX, x->ino))
		return "bad file record";
	return NULL;
}

static void pipe_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	snprintf(out, size, "pipe:[%lu] %s", t->files[i].ino, mode);
}

static void pipe_rec_json(const struct tree *t, int i)
{
	printf(",\"ino\":%lu", t->files[i].ino);
}

const struct fd_kind pipe_fd_kind = {
	.name = "pipe",
	.type = TK_PIPE,
	.dump = pipe_dump,
	.check = pipe_check,
	.open = pipe_open,
	.rec_write = pipe_rec_write,
	.rec_read = pipe_rec_read,
	.rec_show = pipe_rec_show,
	.rec_json = pipe_rec_json,
};

/* ---- the tree file: pipe records (record.h; the format: imgcr-image(5)) ---- */

static void pipe_records_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->npipes; i++)
		fprintf(f, "pipe ino=%lu size=%u len=%zu%s\n", t->pipes[i].ino, t->pipes[i].size,
			t->pipes[i].len, t->pipes[i].ext ? " ext=1" : "");
}

static const char *pipe_record_read(struct tree *t, struct rec *r)
{
	long long ino, size, len, ext = 0;
	struct tree_pipe *p;

	if (REC_NUM(r, "ino", 0, LLONG_MAX, ino) || REC_NUM(r, "size", 0, UINT32_MAX, size) ||
	    REC_NUM(r, "len", 0, size, len) || tree_pipe_find(t, ino))
		return "bad pipe record";
	if (rec_val(r, "ext") && (REC_NUM(r, "ext", 0, 1, ext) || (ext && len)))
		return "bad pipe record";
	p = tree_pipe_add(t, ino);
	p->size = size;
	p->len = len;
	p->ext = ext;
	return NULL;
}

/* imgcr show (record.h) */
static void pipe_records_show(const struct tree *t, int json)
{
	int i;

	if (json)
		printf(",\"pipes\":[");
	for (i = 0; i < t->npipes; i++) {
		const struct tree_pipe *p = &t->pipes[i];

		if (json)
			printf("%s{\"ino\":%lu,\"size\":%u,\"len\":%zu}", i ? "," : "", p->ino,
			       p->size, p->len);
		else
			printf("pipe %lu: size %u, %zu bytes buffered (pipe-%lu.data)\n", p->ino,
			       p->size, p->len, p->ino);
	}
	if (json)
		putchar(']');
}

const struct tree_record pipe_records[] = {
	{ "pipe", pipe_record_read, pipe_records_write, pipe_records_show },
	{ NULL, NULL, NULL, NULL }
};
