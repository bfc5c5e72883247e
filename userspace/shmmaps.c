// SPDX-License-Identifier: GPL-2.0
/*
 * Shared memory objects (memfds, shared anonymous memory, MFD_HUGETLB
 * memfds: IMGCR_FILE_SHMEM in an image's file table, and the memfds the
 * tree holds as fds) mapped by a process outside the tree, or by the
 * kernel: imgcr restore makes each object again for the tree alone, so
 * what the outsider writes would no longer be seen by the tree, nor the
 * other way round.  Refused at dump, before the tree is killed.
 *
 * The module counts an object's mappings in every mm (the VMAs on its
 * inode's i_mmap tree, IMGCR_IOC_FILE_MAPS, taking no mm's lock); the tree
 * is frozen, so one more than its own images hold is someone else's (the
 * module refuses processes sharing one mm, which would count twice).
 * Reading every process's /proc/PID/maps instead would take each mm's
 * lock (a process can keep its own held and stall every dump) and miss
 * processes the dump may not inspect.  Fds held outside the tree are
 * memfd.c's (memfd_outside, through /proc/PID/fd, which takes no mm lock).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/imgcr.h>

#include "image.h"
#include "log.h"
#include "shmmaps.h"
#include "tree.h"

struct shm_map {
	dev_t dev;
	unsigned long long ino;
	unsigned long long all;		/* every process's mappings (the module's count) */
	unsigned long long tree;	/* the tree's (its images') */
	pid_t pid;			/* the first task seen with it, */
	unsigned long long at;		/* where it maps it (0: its exe, not mapped) */
	char name[256];			/* "memfd:NAME", "dev/zero" */
};

/* an image's dev (new_encode_dev()) as stat(2) gives it */
static dev_t image_dev(unsigned long long d)
{
	return makedev((d & 0xfff00) >> 8, (d & 0xff) | ((d >> 12) & 0xfff00));
}

static struct shm_map *shm_map_find(struct shm_maps *m, dev_t dev, unsigned long long ino)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].dev == dev && m->v[i].ino == ino)
			return &m->v[i];
	return NULL;
}

static struct shm_map *shm_map_get(struct shm_maps *m, dev_t dev, unsigned long long ino)
{
	struct shm_map *s = shm_map_find(m, dev, ino);

	if (s)
		return s;
	if (m->n == m->cap) {
		struct shm_map *x = realloc(m->v, (m->cap * 2 + 8) * sizeof(*x));

		if (!x)
			return NULL;
		m->v = x;
		m->cap = m->cap * 2 + 8;
	}
	memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
	m->v[m->n].dev = dev;
	m->v[m->n].ino = ino;
	return &m->v[m->n++];
}

void shm_maps_init(struct shm_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->dump_fd = -1;
}

struct add_ctx {
	struct shm_maps *m;
	const unsigned int *vmas;	/* per file index: the task's mappings of it */
	const unsigned long long *first;	/* and the first one's start */
	pid_t pid;
	int dump_fd;
};

static int add_file(unsigned int idx, const struct imgcr_file *rec, const char *path, void *arg)
{
	struct add_ctx *a = arg;
	struct imgcr_file_maps fm = { .file = idx };
	struct shm_map *s;

	if (!(rec->flags & IMGCR_FILE_SHMEM))
		return 0;
	if (ioctl(a->dump_fd, IMGCR_IOC_FILE_MAPS, &fm)) {
		pr_perror("pid %d: counting the mappings of its shared memory object /%s (IMGCR_IOC_FILE_MAPS%s)",
			  a->pid, path, errno == ENOTTY ?
			  ": the loaded img_dump module is older than this imgcr; load this version's" : "");
		return 1;
	}
	s = shm_map_get(a->m, image_dev(rec->dev), rec->ino);
	if (!s) {
		pr_err("out of memory");
		return 1;
	}
	if (fm.mappings > s->all)
		s->all = fm.mappings;
	if (!s->pid || (!s->at && a->vmas[idx])) {
		s->pid = a->pid;
		s->at = a->vmas[idx] ? a->first[idx] : 0;
		snprintf(s->name, sizeof(s->name), "%.255s", path);
	}
	s->tree += a->vmas[idx];
	return 0;
}

int shm_maps_add(struct shm_maps *m, pid_t pid, int dump_fd, const struct image *img)
{
	unsigned int *vmas = NULL, j;
	unsigned long long *first = NULL;
	int ret = -1;

	vmas = calloc(img->task->nr_files + 1, sizeof(*vmas));
	first = calloc(img->task->nr_files + 1, sizeof(*first));
	if (!vmas || !first) {
		pr_err("out of memory");
		goto out;
	}
	for (j = 0; j < img->task->nr_vmas; j++) {
		const struct imgcr_vma *v = &img->vmas[j];

		if (v->kind != IMGCR_VMA_FILE || v->file >= img->task->nr_files)
			continue;
		if (!vmas[v->file]++)
			first[v->file] = v->start;
	}
	struct add_ctx a = { .m = m, .vmas = vmas, .first = first, .pid = pid,
			     .dump_fd = dump_fd };

	ret = image_files_each(img, add_file, &a);
	if (ret == -1)
		pr_err("%s: bad file table", img->path);
	if (ret)
		ret = -1;
out:
	free(vmas);
	free(first);
	if (!ret) {
		if (m->dump_fd >= 0)
			close(m->dump_fd);
		m->dump_fd = dup(dump_fd);
		if (m->dump_fd < 0) {
			pr_perror("dup");
			ret = -1;
		}
	}
	return ret;
}

/* A memfd task @f->pid holds as fd @f->fd, which no task of the tree maps: its mappings (-1: error, printed) */
static long long held_maps(const struct shm_maps *m, const struct tree_file *f)
{
	struct imgcr_file_maps fm = { .flags = IMGCR_FILE_MAPS_FD };
	int pfd = syscall(SYS_pidfd_open, f->pid, 0), fd = -1;

	if (pfd >= 0)
		fd = syscall(SYS_pidfd_getfd, pfd, f->fd, 0);
	if (fd < 0) {
		pr_perror("pid %d fd %d: cannot take its memfd %s (pidfd_getfd)", f->pid, f->fd, f->path);
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	fm.file = fd;
	if (ioctl(m->dump_fd, IMGCR_IOC_FILE_MAPS, &fm)) {
		pr_perror("pid %d fd %d: counting the mappings of its memfd %s (IMGCR_IOC_FILE_MAPS)",
			  f->pid, f->fd, f->path);
		fm.mappings = -1;
	}
	close(fd);
	close(pfd);
	return fm.mappings;
}

int shm_maps_check(struct shm_maps *m, const struct tree *t)
{
	int i, ret = -1;

	for (i = 0; i < m->n; i++) {
		const struct shm_map *s = &m->v[i];
		char at[64];

		if (s->all <= s->tree)
			continue;
		if (s->at)
			snprintf(at, sizeof(at), "mapped at 0x%llx", s->at);
		else
			snprintf(at, sizeof(at), "its executable");
		pr_err("pid %d: /%s (%s): the kernel counts %llu mappings of it, the tree has %llu: a process outside the tree (or the kernel) maps it too, and the restored tree would have an object of its own, no longer shared with it: not supported",
		       s->pid, s->name, at, s->all, s->tree);
		goto out;
	}
	/* the memfds only held: no image counted them */
	for (i = 0; m->dump_fd >= 0 && i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		struct shm_map *s;
		long long n;

		if (f->kind != TK_MEMFD || shm_map_find(m, f->dev, f->ino))
			continue;
		n = held_maps(m, f);
		if (n < 0)
			goto out;
		s = shm_map_get(m, f->dev, f->ino);
		if (!s) {
			pr_err("out of memory");
			goto out;
		}
		s->all = n;
		if (n) {
			pr_err("pid %d fd %d: %s: mapped %lld time%s by processes outside the tree (no task of the tree maps it): the restored tree would have a memfd of its own, no longer shared with them: not supported",
			       f->pid, f->fd, f->path, n, n == 1 ? "" : "s");
			goto out;
		}
	}
	ret = 0;
out:
	if (m->dump_fd >= 0)
		close(m->dump_fd);
	m->dump_fd = -1;
	return ret;
}

void shm_maps_free(struct shm_maps *m)
{
	if (m->dump_fd >= 0)
		close(m->dump_fd);
	free(m->v);
	shm_maps_init(m);
}
