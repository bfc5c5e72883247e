// SPDX-License-Identifier: GPL-2.0
/*
 * memfds open as fds ("memfd" records, their data in DIR/memfd-INO.data):
 * the name (the fd's link is "/memfd:NAME (deleted)"), the contents and
 * size, the seals (F_GET_SEALS), and per open file description its flags
 * and offset.  Dump reads the memfd through a duplicate of the fd
 * (pidfd_getfd), copying only its data segments (SEEK_DATA/SEEK_HOLE):
 * the data file is as sparse as the memfd.
 *
 * Restore creates one memfd per inode (memfd_create with
 * MFD_ALLOW_SEALING unless its only seal is F_SEAL_SEAL, which is what a
 * memfd made without that flag has), writes the data, sets the size, then
 * adds the seals (after writing: F_SEAL_WRITE would forbid it).  Every
 * description of that inode is then the memfd itself (the first one
 * read-write) or the memfd opened again through /proc/self/fd with its
 * flags (O_RDONLY...), each with its offset.  Its mode (fchmod) and owner
 * (fchown) are set again by each task holding it, once its fds are in
 * place (memfd_late: a mode without read or write permission would have
 * kept the restorer from opening it again; the exec bits are set before
 * the seals, which may freeze them); a different owner needs root, else
 * the restore fails.
 *
 * A memfd both open as an fd and mapped shared: the module records the
 * mapping's object (IMGCR_FILE_SHMEM, "memfd:NAME", its inode number) in
 * the image and would recreate it as a new object, and the fd and the
 * mapping would come back as two memfds.  So the restore tells binfmt_img
 * (--imgcr-shmfd=I:FD, memfd_shm_arg) that file I of the image is the
 * memfd the task has on fd FD, restored here with its contents, seals,
 * name and mode: the loader maps that one (checking its name, size and
 * access) and does not refill it.  A private mapping of a memfd is made
 * again the same way, of that memfd, the pages the task wrote on top of it
 * (from the image, as for any private file mapping).  A shared mapping
 * that may be written (VM_MAYWRITE) of a memfd the task holds only
 * read-only now: the loader is given the memfd itself, imgcr restore's
 * read-write one (memfd_rw_copy), the task's fds as they were.  Refused
 * at dump: a task that maps such a memfd without holding a readable fd on
 * it itself; a memfd also held outside the tree (memfd_outside) or mapped
 * outside it (shmmaps.c).  (A memfd only mapped
 * shared, its fd closed everywhere, is the module's and works; mapped
 * privately, the module refuses it: its contents would be lost.)
 *
 * A memfd of 2 MiB huge pages (MFD_HUGETLB, "huge=1"): hugetlbfs has no
 * write() and no SEEK_DATA (a hole reads as zeros): dump saves only its
 * non-zero blocks; restore makes it with MFD_HUGETLB | MFD_HUGE_2MB, sizes
 * it and writes the data through a shared mapping of it, which reserves
 * its huge pages (no free ones: the restore fails, naming pid, fd and the
 * pages it needs).  The module records its shared mappings without
 * pages, its private ones with the huge pages the task wrote, and refuses
 * one not held as an fd; the loader maps the memfd given.  Refused: other
 * huge page sizes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.h"
#include "image.h"
#include "locks.h"
#include "log.h"
#include "proc.h"
#include "record.h"

#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif
#define HUGETLBFS_MAGIC_ 0x958458f6UL
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)
#endif

static const char deleted[] = " (deleted)";

/* @n bytes at @p all zero */
static int all_zero(const char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/*
 * Copy the data segments of @in (@size bytes) to @out at the same offsets;
 * 0 or -1 (errno).  @skip0: leave out 4 KiB blocks of zeros (a hugetlbfs
 * memfd, whose holes read as data).
 */
static int copy_sparse(int in, int out, off_t size, int skip0)
{
	static char buf[1 << 16];
	off_t data = 0, hole, o;
	ssize_t n, b;

	while (data < size) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? 0 : -1;	/* no data after this */
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		for (o = data; o < hole; o += n) {
			size_t want = hole - o < (off_t)sizeof(buf) ? (size_t)(hole - o) : sizeof(buf);

			n = pread(in, buf, want, o);
			if (n <= 0)
				return n < 0 ? -1 : 0;
			for (b = 0; skip0 && b < n; b += 4096) {
				size_t l = n - b < 4096 ? (size_t)(n - b) : 4096;

				if (!all_zero(buf + b, l) && pwrite(out, buf + b, l, o + b) != (ssize_t)l)
					return -1;
			}
			if (!skip0 && pwrite(out, buf, n, o) != n)
				return -1;
		}
		data = hole;
	}
	return 0;
}

/*
 * A memfd of huge pages that could never be given back: one whose size is
 * not whole pages (fallocate() without FALLOC_FL_KEEP_SIZE makes one; the
 * restore fills it through a mapping of whole pages), or one larger than
 * the 2 MiB pool could ever hold (hugetlbfs has no SEEK_DATA: its dump
 * would read every byte, and its restore reserves the whole size).
 */
static int huge_size_check(struct fd_parms *p, long long size)
{
	char *n = read_text("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", NULL);
	char *o = read_text("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages", NULL);
	long long pool = (n ? atoll(n) : 0) + (o ? atoll(o) : 0);

	free(n);
	free(o);
	if (size % (2 << 20))
		return fd_refuse(p, "memfd %s: of huge pages (MFD_HUGETLB), its size %lld is not whole pages of 2048 kB (as fallocate() without FALLOC_FL_KEEP_SIZE leaves it): not supported",
				 p->link, size);
	if (size / (2 << 20) > pool)
		return fd_refuse(p, "memfd %s: of huge pages (MFD_HUGETLB), its size %lld needs %lld pages of 2048 kB, more than this system's pool can hold (nr_hugepages + nr_overcommit_hugepages: %lld): its restore could never get them: not supported",
				 p->link, size, size / (2 << 20), pool);
	return 0;
}

static int memfd_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	size_t len = strlen(p->link);
	char path[4096];
	struct statfs sfs;
	int fd, out, i, seals, ret;

	if (strncmp(p->link, "/memfd:", 7) || len < 7 + sizeof(deleted) - 1 ||
	    strcmp(p->link + len - (sizeof(deleted) - 1), deleted) || !S_ISREG(p->st.st_mode) ||
	    p->st.st_nlink)
		return FD_OTHER;
	if (p->flags & O_PATH)
		return fd_refuse(p, "memfd %s: O_PATH descriptors of memfds are not supported", p->link);
	fd = fd_steal(p);
	if (fd < 0) {
		pr_perror("pid %d fd %d: memfd: pidfd_getfd, to read it", p->pid, p->fd);
		return FD_FAILED;
	}
	p->file_fd = fd;	/* the driver closes it */
	if (fstatfs(fd, &sfs)) {
		pr_perror("pid %d fd %d: memfd: fstatfs", p->pid, p->fd);
		return FD_FAILED;
	}
	if ((unsigned long)sfs.f_type == HUGETLBFS_MAGIC_) {
		if (sfs.f_bsize != 2 << 20)
			return fd_refuse(p, "memfd %s: of huge pages of %ld kB (MFD_HUGETLB): only 2048 kB pages are supported",
					 p->link, (long)sfs.f_bsize >> 10);
		f->huge = 1;
		ret = huge_size_check(p, p->st.st_size);
		if (ret)
			return ret;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0) {
		pr_perror("pid %d fd %d: memfd: F_GET_SEALS", p->pid, p->fd);
		return FD_FAILED;
	}
	p->link[len - (sizeof(deleted) - 1)] = 0;
	f->path = p->link;	/* "/memfd:NAME" */
	f->ino = p->st.st_ino;
	f->seals = seals;
	f->size = p->st.st_size;
	f->has_mode = 1;
	f->mode = p->st.st_mode & 07777;
	f->uid = p->st.st_uid;
	f->gid = p->st.st_gid;
	/*
	 * The data, once per inode.  tmpfs and hugetlbfs number their inodes
	 * apart, and memfds are known by the number alone (the data file, the
	 * mappings' records): two of one number would become one.
	 */
	for (i = 0; i < c->t->nfiles; i++) {
		if (c->t->files[i].kind != TK_MEMFD || c->t->files[i].ino != f->ino)
			continue;
		if (c->t->files[i].huge != f->huge)
			return fd_refuse(p, "memfd %s: its inode number %lu is also that of another memfd of the tree (one of huge pages, one not): not supported",
					 f->path, f->ino);
		return FD_DESCRIBED;
	}
	snprintf(path, sizeof(path), "%s/memfd-%lu.data", c->dir, f->ino);
	out = img_create(path, 0600);
	if (out < 0) {
		pr_perror("cannot create %s", path);
		return FD_FAILED;
	}
	/* SEEK_DATA/SEEK_HOLE move the task's offset too (one description): put it back */
	if (ftruncate(out, f->size) || copy_sparse(fd, out, f->size, f->huge) ||
	    lseek(fd, p->pos, SEEK_SET) != p->pos || fsync(out)) {
		pr_perror("pid %d fd %d: memfd: cannot save its data in %s", p->pid, p->fd, path);
		lseek(fd, p->pos, SEEK_SET);
		close(out);
		return FD_FAILED;
	}
	close(out);
	return FD_DESCRIBED;
}

/* Whether a line of /proc/PID/maps maps the memfd @f; its start in *@at, its perms in @perms. */
static int maps_memfd(const char *line, const struct tree_file *f, unsigned long *at, char *perms)
{
	unsigned int ma, mi;
	unsigned long ino;
	int off = 0;

	if (sscanf(line, "%lx-%*x %4s %*x %x:%x %lu %n", at, perms, &ma, &mi, &ino, &off) != 5 || !off)
		return 0;
	return ino == f->ino && makedev(ma, mi) == f->dev && !strncmp(line + off, "/memfd:", 7);
}

/*
 * The fd of task @k on the memfd of inode @ino that a mapping can use:
 * readable, and writable if @write; -1 if none.
 */
static int task_memfd_fd(const struct tree *t, const struct tree_task *k, unsigned long ino, int write)
{
	int n;

	for (n = 0; n < k->nfds; n++) {
		const struct tree_file *f = &t->files[k->fds[n].file];
		int acc = f->flags & O_ACCMODE;

		if (f->kind == TK_MEMFD && f->ino == ino && (write ? acc == O_RDWR : acc != O_WRONLY))
			return k->fds[n].fd;
	}
	return -1;
}

int memfd_given(const struct tree *t, const struct tree_task *k, unsigned long ino, int write)
{
	return task_memfd_fd(t, k, ino, write) >= 0 || (write && task_memfd_fd(t, k, ino, 0) >= 0);
}

/* a memfd of the tree (held or mapped), for memfd_outside() */
struct memfd_seen {
	dev_t dev;
	unsigned long ino;
	pid_t pid;
	int fd;			/* -1: mapped (at) */
	unsigned long at;
	char name[64];
};

/* Add the memfd of /proc/PID/maps line @line, if it is one, to @v (@n of @cap). */
static int seen_map(struct memfd_seen **v, int *n, int *cap, pid_t pid, const char *line)
{
	unsigned int ma, mi;
	unsigned long at, ino;
	int off = 0, i;
	char *c;

	if (sscanf(line, "%lx-%*x %*s %*x %x:%x %lu %n", &at, &ma, &mi, &ino, &off) != 4 || !off ||
	    strncmp(line + off, "/memfd:", 7))
		return 0;
	for (i = 0; i < *n; i++)
		if ((*v)[i].ino == ino && (*v)[i].dev == makedev(ma, mi))
			return 0;
	if (*n == *cap) {
		struct memfd_seen *x = realloc(*v, (*cap = *cap * 2 + 8) * sizeof(**v));

		if (!x)
			return -1;
		*v = x;
	}
	(*v)[*n] = (struct memfd_seen){ .dev = makedev(ma, mi), .ino = ino, .pid = pid, .fd = -1,
				       .at = at };
	snprintf((*v)[*n].name, sizeof((*v)[*n].name), "%s", line + off + 1);
	c = strstr((*v)[*n].name, deleted);
	if (c)
		*c = 0;
	(*n)++;
	return 0;
}

/* The memfd of @v (@n) of device @dev and inode @ino, or NULL. */
static const struct memfd_seen *seen_find(const struct memfd_seen *v, int n, dev_t dev,
					  unsigned long ino)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].dev == dev && v[i].ino == ino)
			return &v[i];
	return NULL;
}

static int seen_refuse(const struct memfd_seen *m, pid_t pid, const char *how)
{
	char comm[64] = "?", path[64], *c;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	c = read_text(path, NULL);
	if (c) {
		c[strcspn(c, "\n")] = 0;
		snprintf(comm, sizeof(comm), "%s", c);
		free(c);
	}
	if (m->fd >= 0)
		pr_err("pid %d fd %d: /%s: also %s by pid %d (%s), which is outside the tree: the restored tree would have a memfd of its own, no longer shared with it: not supported",
		       m->pid, m->fd, m->name, how, pid, comm);
	else
		pr_err("pid %d: /%s mapped at 0x%lx: also %s by pid %d (%s), which is outside the tree: the restored tree would have a memfd of its own, no longer shared with it: not supported",
		       m->pid, m->name, m->at, how, pid, comm);
	return -1;
}

/*
 * The memfds the tree holds or maps, held by no process outside it: the
 * restore makes each again, for the tree alone (CRIU does not check
 * this).  Seen through every process's /proc/PID/fd, which takes no mm
 * lock (those of a thread with an fd table of its own, an fd in flight in
 * a unix socket, an io_uring's files and kernel holders such as a loop
 * device are not seen, nor, for a dump that is not root's, the processes
 * it may not inspect).  Mappings outside the tree, of any shared memory
 * object, are counted by the module (shmmaps.c).  0, or -1 (printed).
 */
static int memfd_outside(const struct tree *t)
{
	struct memfd_seen *v = NULL;
	int n = 0, cap = 0, i, ret = -1;
	DIR *proc = NULL;
	struct dirent *e;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];

		if (f->kind != TK_MEMFD || seen_find(v, n, f->dev, f->ino))
			continue;
		if (n == cap) {
			struct memfd_seen *x = realloc(v, (cap = cap * 2 + 8) * sizeof(*v));

			if (!x)
				goto oom;
			v = x;
		}
		v[n] = (struct memfd_seen){ .dev = f->dev, .ino = f->ino, .pid = f->pid, .fd = f->fd };
		snprintf(v[n].name, sizeof(v[n].name), "%s", f->path + 1);
		n++;
	}
	for (i = 0; i < t->ntasks; i++) {
		char path[64], *maps, *line, *save = NULL;

		snprintf(path, sizeof(path), "/proc/%d/maps", t->tasks[i].pid);
		maps = read_text(path, NULL);
		for (line = maps ? strtok_r(maps, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save))
			if (seen_map(&v, &n, &cap, t->tasks[i].pid, line)) {
				free(maps);
				goto oom;
			}
		free(maps);
	}
	ret = 0;
	if (!n)
		goto out;
	proc = opendir("/proc");
	if (!proc) {
		pr_perror("cannot list /proc (to find memfds of the tree held outside it)");
		ret = -1;
	}
	while (proc && !ret && (e = readdir(proc))) {
		pid_t pid = atoi(e->d_name);
		char path[64], link[64], how[300];
		const struct memfd_seen *m;
		struct dirent *d;
		struct stat st;
		DIR *fds;

		if (pid <= 0 || pid == getpid())
			continue;
		for (i = 0; i < t->ntasks && t->tasks[i].pid != pid; i++)
			;
		if (i < t->ntasks)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		while (fds && !ret && (d = readdir(fds))) {
			ssize_t l = readlinkat(dirfd(fds), d->d_name, link, sizeof(link) - 1);

			if (l < 7 || strncmp(link, "/memfd:", 7) ||
			    fstatat(dirfd(fds), d->d_name, &st, 0) ||
			    !(m = seen_find(v, n, st.st_dev, st.st_ino)))
				continue;
			snprintf(how, sizeof(how), "held (fd %s)", d->d_name);
			ret = seen_refuse(m, pid, how);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	goto out;
oom:
	pr_err("out of memory");
out:
	free(v);
	return ret;
}

/* The shared mapping at @at of task @pid may be made writable (VM_MAYWRITE: smaps' "mw"); -1: unreadable */
static int vma_maywrite(pid_t pid, unsigned long at)
{
	char path[64], *smaps, *line, *save = NULL;
	unsigned long start;
	int in = 0, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	smaps = read_text(path, NULL);
	if (!smaps) {
		pr_perror("pid %d: cannot read %s", pid, path);
		return -1;
	}
	for (line = strtok_r(smaps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "VmFlags:", 8) && in) {
			ret = strstr(line + 8, " mw") != NULL;
			break;
		}
		if (sscanf(line, "%lx-%*x ", &start) == 1 && strchr(line, '-') &&
		    strspn(line, "0123456789abcdef") == (size_t)(strchr(line, '-') - line))
			in = start == at;
	}
	free(smaps);
	if (ret < 0)
		pr_err("pid %d: no VmFlags for the mapping at 0x%lx in %s", pid, at, path);
	return ret;
}

/*
 * Task @k maps memfd @f shared at @at, holds it open for reading: refuse
 * (1, printed) if the restore would give the loader a spare fd of the memfd
 * (memfd_rw_copy: mapped VM_MAYWRITE, no read-write fd) while @k holds
 * POSIX locks on it: the exec closes the spare, and closing any fd of a
 * file drops all of the process's POSIX locks on it (OFD and flock locks
 * belong to the open file description and stay).  -1 on an error (printed).
 */
static int spare_drops_locks(const struct tree *t, const struct tree_task *k,
			     const struct tree_file *f, unsigned long at)
{
	const struct tree_lock *l = NULL;
	char end[32];
	int i, mw;

	if (task_memfd_fd(t, k, f->ino, 1) >= 0)
		return 0;
	for (i = 0; i < t->nlocks && !l; i++)
		if (t->locks[i].kind == TL_POSIX && t->locks[i].pid == k->pid &&
		    t->files[t->locks[i].file].kind == TK_MEMFD &&
		    t->files[t->locks[i].file].ino == f->ino)
			l = &t->locks[i];
	if (!l)
		return 0;
	mw = vma_maywrite(k->pid, at);
	if (mw <= 0)
		return mw;
	if (l->end < 0)
		snprintf(end, sizeof(end), "EOF");
	else
		snprintf(end, sizeof(end), "%lld", l->end);
	pr_err("pid %d fd %d: memfd %s: POSIX %s lock (bytes %lld-%s) held by pid %d, which maps the memfd shared at 0x%lx so that the mapping may become writable but holds it open only read-only: the restore would give the loader a read-write fd of it, and the exec closing that fd would drop the lock: not supported",
	       k->pid, l->fd, f->path, l->write ? "write" : "read", l->start, end, k->pid, at);
	return 1;
}

/*
 * A memfd open as an fd and mapped: each task mapping it must hold an fd
 * of it itself (the loader maps that fd's memfd, shared or privately).
 * And no memfd of the tree is another process's too (memfd_outside).
 */
static int memfd_check(const struct tree *t)
{
	char perms[8];
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		char path[64], *maps, *line, *save = NULL;
		unsigned long at;

		snprintf(path, sizeof(path), "/proc/%d/maps", t->tasks[i].pid);
		maps = read_text(path, NULL);
		if (!maps) {
			pr_perror("pid %d: cannot read %s", t->tasks[i].pid, path);
			return -1;
		}
		for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			for (j = 0; j < t->nfiles; j++) {
				const struct tree_file *f = &t->files[j];

				if (f->kind != TK_MEMFD || !maps_memfd(line, f, &at, perms))
					continue;
				/*
				 * The seals are back before the exec, and under
				 * F_SEAL_WRITE or _FUTURE_WRITE the kernel
				 * refuses a new writable shared mapping.  A
				 * read-only one is made again as the kernel
				 * makes it under the seal: the module's dump
				 * refuses one made before it (VM_MAYWRITE).
				 */
				if (perms[3] == 's' && perms[1] == 'w' &&
				    (f->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
					pr_err("pid %d fd %d: memfd %s: sealed against writes (seals 0x%x) and also mapped shared (%s) by pid %d at 0x%lx: the mapping cannot be made again under that seal: not supported",
					       f->pid, f->fd, f->path, f->seals, perms, t->tasks[i].pid, at);
				else if (perms[3] == 's' &&
					 task_memfd_fd(t, &t->tasks[i], f->ino, 0) >= 0 &&
					 spare_drops_locks(t, &t->tasks[i], f, at))
					;	/* printed */
				else if (perms[3] == 's' &&
					 task_memfd_fd(t, &t->tasks[i], f->ino, 0) >= 0)
					break;	/* restored as one object: memfd_shm_arg */
				else if (perms[3] != 's' &&
					 task_memfd_fd(t, &t->tasks[i], f->ino, 0) >= 0)
					break;	/* the same memfd, its written pages on top */
				else if (perms[3] == 's')
					pr_err("pid %d fd %d: memfd %s: also mapped (%s) by pid %d at 0x%lx, which holds no fd of it open for reading: the mapping would be restored as a separate memfd: not supported",
					       f->pid, f->fd, f->path, perms, t->tasks[i].pid, at);
				else
					pr_err("pid %d fd %d: memfd %s: also mapped privately (%s) by pid %d at 0x%lx, which holds no fd of it open for reading: the mapping would show another memfd: not supported",
					       f->pid, f->fd, f->path, perms, t->tasks[i].pid, at);
				free(maps);
				return -1;
			}
		free(maps);
	}
	return memfd_outside(t);
}

/* restore: the memfd of each inode, created once (the restorer is one process) */
static struct {
	unsigned long ino;
	int fd;
} made[256];
static int nmade;

/*
 * Size the MFD_HUGETLB memfd @fd and write its data from @in (no write() on
 * hugetlbfs): through a shared mapping, which reserves all its huge pages.
 * 0, or -1 with a message naming its task, fd and the pages it needs.
 */
static int huge_fill(int fd, int in, const struct tree_file *f, const char *what)
{
	static char buf[1 << 16];
	unsigned long pages = f->size >> 21;
	off_t data = 0, hole, o;
	char *free_txt, *m;
	ssize_t n;

	if (f->size & ((2 << 20) - 1)) {
		pr_err("%s: size %lld is not a multiple of the huge page size 2048 kB", what, f->size);
		return -1;
	}
	if (ftruncate(fd, f->size)) {
		pr_perror("%s: cannot set its size %lld", what, f->size);
		return -1;
	}
	if (!f->size)
		return 0;
	m = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		free_txt = read_text("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", NULL);
		if (free_txt)
			free_txt[strcspn(free_txt, "\n")] = 0;
		pr_err("%s (MFD_HUGETLB): cannot get its %lu huge page(s) of 2048 kB (%s; %s free): reserve them (sysctl vm.nr_hugepages) before the restore",
		       what, pages, strerror(e), free_txt ? free_txt : "?");
		free(free_txt);
		return -1;
	}
	while (data < f->size) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			goto fail;
		if (hole > f->size)
			hole = f->size;
		for (o = data; o < hole; o += n) {
			n = pread(in, buf, hole - o < (off_t)sizeof(buf) ? (size_t)(hole - o) : sizeof(buf), o);
			if (n <= 0) {
				if (!n)
					errno = EIO;
				goto fail;
			}
			if (!all_zero(buf, n))
				memcpy(m + o, buf, n);
		}
		data = hole;
	}
	munmap(m, f->size);
	return 0;
fail:
	pr_perror("%s: cannot write its data", what);
	munmap(m, f->size);
	return -1;
}

static int memfd_create_one(struct fd_restore *r, const struct tree_file *f, const char *what)
{
	int fd, in, i;
	char path[PATH_MAX + 32];
	unsigned int flags = MFD_CLOEXEC;

	for (i = 0; i < nmade; i++)
		if (made[i].ino == f->ino)
			return made[i].fd;
	if (nmade == (int)(sizeof(made) / sizeof(made[0]))) {
		pr_err("%s: more than %d memfds: not supported", what, nmade);
		return -1;
	}
	if (f->seals != F_SEAL_SEAL)
		flags |= MFD_ALLOW_SEALING;
	if (f->huge)
		flags |= MFD_HUGETLB | MFD_HUGE_2MB;
	fd = memfd_create(f->path + 7, flags);
	if (fd < 0) {
		pr_perror("%s: memfd_create%s", what, f->huge ? " (MFD_HUGETLB, 2048 kB pages)" : "");
		return -1;
	}
	snprintf(path, sizeof(path), "memfd-%lu.data", f->ino);
	in = dir_open(r->dirfd, path, O_RDONLY);
	if (in < 0) {
		pr_perror("%s: cannot open its data %s", what, path);
		goto fail;
	}
	if (f->huge ? huge_fill(fd, in, f, what) :
	    ftruncate(fd, f->size) || copy_sparse(in, fd, f->size, 0)) {
		if (!f->huge)
			pr_perror("%s: cannot write its data from %s", what, path);
		close(in);
		goto fail;
	}
	close(in);
	/*
	 * Its exec bits before the seals (F_SEAL_EXEC freezes them); read
	 * and write for its owner until every description is open again
	 * (memfd_late sets the mode exactly).
	 */
	if (f->has_mode && fchmod(fd, f->mode | 0600)) {
		pr_perror("%s: cannot set its mode %04o", what, f->mode | 0600);
		goto fail;
	}
	/* F_SEAL_SEAL alone: made without MFD_ALLOW_SEALING, it has it already */
	if (f->seals && f->seals != F_SEAL_SEAL && fcntl(fd, F_ADD_SEALS, f->seals)) {
		pr_perror("%s: cannot add the seals 0x%x", what, f->seals);
		goto fail;
	}
	fd = fd_high(fd, r->base);
	made[nmade].ino = f->ino;
	made[nmade++].fd = fd;
	return fd;
fail:
	close(fd);
	return -1;
}

static int memfd_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	char path[64], who[PATH_MAX + 64];
	int mfd, fd, first, j;

	if (f->huge) {
		/* its messages name a task and fd holding it */
		const struct tree_task *k;
		int n;

		for (k = r->t->tasks; k < r->t->tasks + r->t->ntasks; k++)
			for (n = 0; n < k->nfds; n++)
				if (k->fds[n].file == i) {
					snprintf(who, sizeof(who), "pid %d fd %d: %s", k->pid,
						 k->fds[n].fd, what);
					goto named;
				}
	}
	snprintf(who, sizeof(who), "%s", what);
named:
	mfd = memfd_create_one(r, f, who);
	if (mfd < 0)
		return -1;
	/* the memfd itself for the first read-write description of it, else opened again */
	for (j = 0; j < i; j++)
		if (r->t->files[j].kind == TK_MEMFD && r->t->files[j].ino == f->ino &&
		    (r->t->files[j].flags & O_ACCMODE) == O_RDWR)
			break;
	first = j == i && (f->flags & O_ACCMODE) == O_RDWR;
	if (first) {
		fd = fcntl(mfd, F_DUPFD_CLOEXEC, r->base);
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
		fd = open(path, fd_open_flags(f->flags));
	}
	if (fd < 0) {
		pr_perror("%s: cannot open the memfd again", what);
		return -1;
	}
	if ((f->pos && lseek(fd, f->pos, SEEK_SET) != f->pos) || fd_set_flags(fd, f->flags, what)) {
		pr_perror("%s: cannot seek to %lld", what, f->pos);
		close(fd);
		return -1;
	}
	return fd;
}


/*
 * The mode and owner of the memfds of task @k, on its fds (in place):
 * 0, or -1 with @err set.
 */
static int memfd_late(const struct tree *t, const struct tree_task *k, char *err, size_t size)
{
	struct stat st;
	int i;

	for (i = 0; i < k->nfds; i++) {
		const struct tree_file *f = &t->files[k->fds[i].file];
		int fd = k->fds[i].fd;

		if (f->kind != TK_MEMFD || !f->has_mode)
			continue;
		if (fstat(fd, &st))
			goto fail;
		if ((st.st_uid != f->uid || st.st_gid != f->gid) && fchown(fd, f->uid, f->gid))
			goto fail;
		if ((st.st_mode & 07777) != f->mode && fchmod(fd, f->mode))
			goto fail;
	}
	return 0;
fail:
	snprintf(err, size, "pid %d fd %d: memfd %s: cannot restore its mode %04o and owner %u:%u (%s)%s",
		 k->pid, k->fds[i].fd, t->files[k->fds[i].file].path + 7,
		 t->files[k->fds[i].file].mode, t->files[k->fds[i].file].uid,
		 t->files[k->fds[i].file].gid, strerror(errno),
		 errno == EPERM ? ": another owner than the restoring user's needs root" : "");
	return -1;
}

static void memfd_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " ino=%lu seals=0x%x size=%lld", x->ino, x->seals, x->size);
	if (x->huge)
		fprintf(f, " huge=1");
	fd_rec_path(f, x->path);
	if (x->has_mode)
		fprintf(f, " mode=0%o uid=%u gid=%u", x->mode, x->uid, x->gid);
}

static const char *memfd_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (REC_NUM(r, "ino", 0, LLONG_MAX, x->ino) || REC_NUM(r, "seals", 0, 0xffff, x->seals) ||
	    REC_NUM(r, "size", 0, LLONG_MAX, x->size) || rec_str(r, "path", &x->path))
		return "bad file record";
	if (rec_has(r, "mode") || rec_has(r, "uid") || rec_has(r, "gid")) {
		/* mode and owner (images before them have none: left as made) */
		if (REC_NUM(r, "mode", 0, 07777, x->mode) ||
		    REC_NUM(r, "uid", 0, 0xfffffffeLL, x->uid) ||
		    REC_NUM(r, "gid", 0, 0xfffffffeLL, x->gid))
			return "bad memfd record";
		x->has_mode = 1;
	}
	if (rec_has(r, "huge") && REC_NUM(r, "huge", 0, 1, x->huge))
		return "bad memfd record";
	if (strncmp(x->path, "/memfd:", 7))
		return "bad memfd record";
	return NULL;
}

static void memfd_rec_show(const struct tree *t, int i, const char *mode, char *out,
			   size_t size)
{
	const struct tree_file *f = &t->files[i];

	if (f->has_mode)
		snprintf(out, size, "memfd %s ino %lu size %lld mode %04o owner %u:%u seals 0x%x%s %s",
			 f->path + 7, f->ino, f->size, f->mode, f->uid, f->gid, f->seals,
			 f->huge ? " hugetlb 2048 kB" : "", mode);
	else
		snprintf(out, size, "memfd %s ino %lu size %lld seals 0x%x%s %s", f->path + 7,
			 f->ino, f->size, f->seals, f->huge ? " hugetlb 2048 kB" : "", mode);
}

static void memfd_rec_json(const struct tree *t, int i)
{
	const struct tree_file *f = &t->files[i];

	printf(",\"ino\":%lu,\"seals\":%u,\"size\":%lld", f->ino, f->seals, f->size);
	if (f->huge)
		printf(",\"huge\":1");
	if (f->has_mode)
		printf(",\"mode\":%u,\"uid\":%u,\"gid\":%u", f->mode, f->uid, f->gid);
	fd_json_path(f->path);
}

const struct fd_kind memfd_fd_kind = {
	.name = "memfd",
	.type = TK_MEMFD,
	.dump = memfd_dump,
	.check = memfd_check,
	.open = memfd_open,
	.late = memfd_late,
	.rec_write = memfd_rec_write,
	.rec_read = memfd_rec_read,
	.rec_show = memfd_rec_show,
	.rec_json = memfd_rec_json,
};

/*
 * The memfd of inode @ino itself (made read-write by memfd_create_one) on
 * a spare fd of this process, close-on-exec: between task @k's highest fd
 * and the restorer's (MEMFD_SPARE_FDS of them), a number none of its fds
 * takes, so that it stays open until the exec and goes with it.  The fd,
 * or -1 (printed).
 */
static int memfd_rw_copy(const struct tree_task *k, unsigned long ino, int base)
{
	int i, fd;

	for (i = 0; i < nmade && made[i].ino != ino; i++)
		;
	if (i == nmade) {
		pr_err("pid %d: memfd of inode %lu: not made", k->pid, ino);
		return -1;
	}
	/* above every task's fds (restore: base = their highest + 1 + MEMFD_SPARE_FDS) */
	for (fd = base - MEMFD_SPARE_FDS; fd < base; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return dup3(made[i].fd, fd, O_CLOEXEC) < 0 ? -1 : fd;
	pr_err("pid %d: more than %d memfds it maps writable but holds open read-only: not supported",
	       k->pid, MEMFD_SPARE_FDS);
	return -1;
}

int memfd_shm_arg(const struct tree *t, const struct tree_task *k, int dirfd, const char *name,
		  int base, char *out, size_t size)
{
	char path[4096];
	struct imgcr_file rec;
	struct image img;
	size_t off = 0;
	unsigned int i;
	int fd, ret = 0;

	out[0] = 0;
	if (image_openat(&img, dirfd, name))
		return -1;
	for (i = 0; i < img.task->nr_files && !ret; i++) {
		if (image_file(&img, i, &rec, path, sizeof(path))) {
			pr_err("pid %d: %s: bad file table", k->pid, name);
			ret = -1;
			break;
		}
		if (!(rec.flags & IMGCR_FILE_SHMEM) || strncmp(path, "memfd:", 6))
			continue;
		fd = task_memfd_fd(t, k, rec.ino, rec.flags & IMGCR_FILE_WRITE);
		if (fd < 0 && rec.flags & IMGCR_FILE_WRITE && task_memfd_fd(t, k, rec.ino, 0) >= 0) {
			/*
			 * Mapped so that it may be written (VM_MAYWRITE: made
			 * through a read-write fd) but held open read-only
			 * now: the loader maps the memfd itself (as CRIU
			 * opens it by its own path), the task's fd as it was.
			 */
			fd = memfd_rw_copy(k, rec.ino, base);
			if (fd < 0) {
				ret = -1;
				break;
			}
		}
		if (fd < 0)
			continue;	/* a memfd only mapped: the module's */
		if (off + 40 >= size) {
			pr_err("pid %d: too many memfds both open and mapped", k->pid);
			ret = -1;
			break;
		}
		off += snprintf(out + off, size - off, "%s%u:%d", off ? "," : "--imgcr-shmfd=", i, fd);
	}
	image_close(&img);
	return ret;
}
