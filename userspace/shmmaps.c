// SPDX-License-Identifier: GPL-2.0
/*
 * Shared memory objects (memfds, shared anonymous memory, MFD_HUGETLB
 * memfds: IMGCR_FILE_SHMEM in an image's file table) mapped by a process
 * outside the tree, or by the kernel: imgcr restore makes each object
 * again for the tree alone, so what the outsider writes would no longer
 * be seen by the tree, nor the other way round.  Refused at dump, before
 * the tree is killed.
 *
 * The module counts an object's mappings in every mm (the VMAs on its
 * inode's i_mmap tree, IMGCR_IOC_FILE_MAPS, taking no mm's lock); the tree
 * is frozen, so one more than its own images hold is someone else's.
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
#include <linux/imgcr.h>

#include "image.h"
#include "log.h"
#include "shmmaps.h"

struct shm_map {
	unsigned long long dev, ino;
	unsigned long long all;		/* every process's mappings (the module's count) */
	unsigned long long tree;	/* the tree's (its images') */
	pid_t pid;			/* the first task seen mapping it, */
	unsigned long long at;		/* where */
	char name[256];			/* "memfd:NAME", "dev/zero" */
};

static struct shm_map *shm_map_get(struct shm_maps *m, const struct imgcr_file *rec)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].dev == rec->dev && m->v[i].ino == rec->ino)
			return &m->v[i];
	if (m->n == m->cap) {
		struct shm_map *x = realloc(m->v, (m->cap * 2 + 8) * sizeof(*x));

		if (!x)
			return NULL;
		m->v = x;
		m->cap = m->cap * 2 + 8;
	}
	memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
	m->v[m->n].dev = rec->dev;
	m->v[m->n].ino = rec->ino;
	return &m->v[m->n++];
}

int shm_maps_add(struct shm_maps *m, pid_t pid, int dump_fd, const char *path)
{
	char name[4096];
	struct imgcr_file rec;
	struct image img;
	unsigned int i, j;
	int ret = -1;

	if (image_open(&img, path))
		return -1;
	for (i = 0; i < img.task->nr_files; i++) {
		struct imgcr_file_maps fm = { .file = i };
		struct shm_map *s;

		if (image_file(&img, i, &rec, name, sizeof(name))) {
			pr_err("%s: bad file table", path);
			goto out;
		}
		if (!(rec.flags & IMGCR_FILE_SHMEM))
			continue;
		if (ioctl(dump_fd, IMGCR_IOC_FILE_MAPS, &fm)) {
			pr_perror("pid %d: counting the mappings of its shared memory object /%s (IMGCR_IOC_FILE_MAPS%s)",
				  pid, name, errno == ENOTTY ?
				  ": the loaded img_dump module is older than this imgcr; load this version's" : "");
			goto out;
		}
		s = shm_map_get(m, &rec);
		if (!s) {
			pr_err("out of memory");
			goto out;
		}
		if (fm.mappings > s->all)
			s->all = fm.mappings;
		for (j = 0; j < img.task->nr_vmas; j++) {
			const struct imgcr_vma *v = &img.vmas[j];

			if (v->kind != IMGCR_VMA_FILE || v->file != i)
				continue;
			if (!s->tree++) {
				s->pid = pid;
				s->at = v->start;
				snprintf(s->name, sizeof(s->name), "%.255s", name);
			}
		}
	}
	ret = 0;
out:
	image_close(&img);
	return ret;
}

int shm_maps_check(const struct shm_maps *m)
{
	int i;

	for (i = 0; i < m->n; i++) {
		const struct shm_map *s = &m->v[i];

		if (s->all <= s->tree)
			continue;
		pr_err("pid %d: /%s mapped at 0x%llx: the kernel counts %llu mappings of it, the tree has %llu: a process outside the tree (or the kernel) maps it too, and the restored tree would have an object of its own, no longer shared with it: not supported",
		       s->pid, s->name, s->at, s->all, s->tree);
		return -1;
	}
	return 0;
}

void shm_maps_free(struct shm_maps *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}
