// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous memory a parent still shares copy-on-write with the child it
 * forked.  Each task's image holds all of its pages; sharing them again
 * needs the child's mm to be a fork of the parent's, and exec makes a new
 * mm.  So, as CRIU does, the memory is put in place before the fork:
 *
 *   - the restorer of a task maps, at their final addresses, its private
 *     anonymous mappings that one of its children has too (same start and
 *     end, written once), and fills them from its image;
 *   - its children's restorers inherit them with fork(); each keeps those
 *     it has itself and unmaps the rest; before it forks children of its
 *     own it makes the contents of those they inherit its own, writing only
 *     the pages that differ (the others stay shared) and dropping the pages
 *     its image has not;
 *   - every task that holds such mappings executes its image with
 *     "--imgcr-keep=START-END,..." and binfmt_img restores it in place
 *     (module/loader/img_inplace.c): those mappings stay, compared page by page
 *     with the image (the only such pass for a mapping no child inherits),
 *     and everything else is rebuilt as usual.
 *
 * Pages are shared when their contents are equal, as in CRIU: a page the
 * two had written apart to the same bytes comes back shared, which only
 * lowers memory use.  Only anonymous mappings that were never moved can be
 * kept (their page offset is their address's); the stack (it grows down),
 * the data of mapped files, and locked, don't-fork and wipe-on-fork
 * mappings are copied as before.  An address imgcr itself occupies in the
 * restorer cannot be mapped early: that mapping is copied too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cow.h"
#include "image.h"
#include "log.h"
#include "proc.h"

#define COW_MAX		512	/* the module's limit of kept mappings */
#define COW_CHUNK	(1 << 20)

struct cow_seg {		/* a PT_LOAD inside a candidate mapping */
	unsigned long vaddr, len;
	off_t off;
};

struct cow_vma {
	unsigned long start, end;
	unsigned int flags;	/* IMGCR_VMA_* */
	int seg, nseg;		/* its PT_LOADs in cow_task.segs */
};

struct cow_task {
	struct cow_vma *v;	/* sorted */
	int nv;
	struct cow_seg *segs;
	int nsegs;
};

static struct cow_task *plan;	/* per tree task; NULL: nothing to share */

/* What this process holds now: inherited from its parent, or its own. */
static struct {
	unsigned long start, end;
} kept[COW_MAX];
static int nkept;

static int candidate(const struct imgcr_vma *v)
{
	/* written once: writable now, or IMGCR_VMA_ACCOUNT kept from then */
	return v->kind == IMGCR_VMA_ANON &&
	       (v->prot & IMGCR_PROT_WRITE || v->flags & IMGCR_VMA_ACCOUNT) &&
	       !(v->flags & ~(IMGCR_VMA_ACCOUNT | IMGCR_VMA_HUGEPAGE |
			      IMGCR_VMA_NOHUGEPAGE | IMGCR_VMA_DONTDUMP)) &&
	       v->pgoff == v->start / (unsigned long)getpagesize();
}

static const struct cow_vma *find_vma(const struct cow_task *ct,
				      unsigned long start, unsigned long end)
{
	int i;

	for (i = 0; ct && i < ct->nv; i++)
		if (ct->v[i].start == start && ct->v[i].end == end)
			return &ct->v[i];
	return NULL;
}

/* Every candidate of one image, with its PT_LOADs. */
static int read_task(struct cow_task *ct, int dirfd, const char *path)
{
	struct image img;
	unsigned int i, n;
	int ns = 0;

	if (image_openat(&img, dirfd, path))
		return -1;
	n = img.task->nr_vmas;
	ct->v = calloc(n ? n : 1, sizeof(*ct->v));
	ct->segs = calloc(img.eh->e_phnum ? img.eh->e_phnum : 1, sizeof(*ct->segs));
	if (!ct->v || !ct->segs) {
		image_close(&img);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct imgcr_vma *v = &img.vmas[i];
		struct cow_vma *c = &ct->v[ct->nv];
		unsigned int p;

		if (!candidate(v))
			continue;
		c->start = v->start;
		c->end = v->end;
		c->flags = v->flags;
		c->seg = ns;
		for (p = 0; p < img.eh->e_phnum; p++) {
			const Elf64_Phdr *ph = &img.ph[p];

			if (ph->p_type != PT_LOAD || ph->p_vaddr < v->start ||
			    ph->p_vaddr >= v->end)
				continue;
			ct->segs[ns].vaddr = ph->p_vaddr;
			ct->segs[ns].len = ph->p_filesz;
			ct->segs[ns++].off = ph->p_offset;
		}
		c->nseg = ns - c->seg;
		ct->nv++;
	}
	ct->nsegs = ns;
	image_close(&img);
	return 0;
}

/*
 * Memory is only shared between tasks with the same credentials: a child
 * running as another user must never hold its parent's pages, not even
 * for the time the exec takes to rewrite them.
 */
static int same_creds(const struct tree_task *a, const struct tree_task *b)
{
	return !memcmp(a->uid, b->uid, sizeof(a->uid)) &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid)) && a->ngroups == b->ngroups &&
	       (!a->ngroups || !memcmp(a->groups, b->groups, a->ngroups * sizeof(*a->groups)));
}

int cow_plan(const struct tree *t, int dirfd)
{
	char path[4096];
	int i, j, any = 0;

	plan = calloc(t->ntasks, sizeof(*plan));
	if (!plan)
		return -1;
	for (i = 0; i < t->ntasks; i++) {
		if (t->tasks[i].zombie)
			continue;
		snprintf(path, sizeof(path), "core-%d.img", TASK_IMG_PID(&t->tasks[i]));
		if (read_task(&plan[i], dirfd, path))
			return -1;
	}
	/*
	 * keep only what a parent and a child with the same credentials have
	 * in common
	 */
	for (i = 0; i < t->ntasks; i++) {
		struct cow_task *ct = &plan[i];
		int n = 0;

		for (j = 0; j < ct->nv; j++) {
			const struct cow_vma *v = &ct->v[j];
			int k, shared = 0;

			for (k = 0; k < t->ntasks && !shared; k++) {
				if (k == i || t->tasks[k].zombie)
					continue;
				if (t->tasks[k].pid != t->tasks[i].ppid &&
				    t->tasks[k].ppid != t->tasks[i].pid)
					continue;
				if (!same_creds(&t->tasks[i], &t->tasks[k]))
					continue;
				shared = find_vma(&plan[k], v->start, v->end) != NULL;
			}
			if (shared)
				ct->v[n++] = *v;
		}
		ct->nv = n;
		any |= n;
	}
	if (!any) {
		free(plan);	/* the segments are few: not worth walking */
		plan = NULL;
	}
	return 0;
}

static int has_child_with(const struct tree *t, int ti, const struct cow_vma *v)
{
	int k;

	for (k = 0; k < t->ntasks; k++)
		if (t->tasks[k].ppid == t->tasks[ti].pid && k != ti &&
		    !t->tasks[k].zombie && same_creds(&t->tasks[k], &t->tasks[ti]) &&
		    find_vma(&plan[k], v->start, v->end))
			return 1;
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, off);

		if (n <= 0)
			return -1;
		buf = (char *)buf + n;
		len -= n;
		off += n;
	}
	return 0;
}

/* The pages the image has not, in [from, to): zero, as in the task. */
static int zap(unsigned long from, unsigned long to)
{
	return to > from ? madvise((void *)from, to - from, MADV_DONTNEED) : 0;
}

/* Make an inherited mapping's contents the image's, page by page. */
static int make_own(int fd, const struct cow_task *ct, const struct cow_vma *v,
		    char *buf)
{
	unsigned long cur = v->start, ps = getpagesize();
	int s;

	for (s = v->seg; s < v->seg + v->nseg; s++) {
		const struct cow_seg *g = &ct->segs[s];
		unsigned long done;

		if (zap(cur, g->vaddr))
			return -1;
		for (done = 0; done < g->len; done += COW_CHUNK) {
			size_t n = g->len - done < COW_CHUNK ? g->len - done : COW_CHUNK;
			char *mem = (char *)(g->vaddr + done);
			size_t p;

			if (pread_all(fd, buf, n, g->off + done))
				return -1;
			for (p = 0; p < n; p += ps)
				if (memcmp(mem + p, buf + p, ps))
					memcpy(mem + p, buf + p, ps);
		}
		cur = g->vaddr + g->len;
	}
	return zap(cur, v->end);
}

/* Map one of the task's own mappings at its place and fill it; 0 if taken. */
static int map_own(int fd, const struct cow_task *ct, const struct cow_vma *v, int pid)
{
	size_t len = v->end - v->start;
	void *p;
	int s;

	p = mmap((void *)v->start, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != MAP_FAILED && p != (void *)v->start) {
		munmap(p, len);
		p = MAP_FAILED;
		errno = EEXIST;
	}
	if (p == MAP_FAILED) {
		/* imgcr is there: this one is copied (more memory, same data) */
		pr_info("pid %d: %#lx-%#lx is copied, not shared with the children that have it (%s)", pid,
			v->start, v->end, errno == EEXIST ? "imgcr's restorer uses that address" : strerror(errno));
		return 1;
	}
	/* as the module will advise it: the faults below follow it */
	if (v->flags & IMGCR_VMA_HUGEPAGE)
		madvise(p, len, MADV_HUGEPAGE);
	if (v->flags & IMGCR_VMA_NOHUGEPAGE)
		madvise(p, len, MADV_NOHUGEPAGE);
	for (s = v->seg; s < v->seg + v->nseg; s++) {
		const struct cow_seg *g = &ct->segs[s];

		if (pread_all(fd, (void *)g->vaddr, g->len, g->off))
			return -1;
	}
	return 0;
}

const char *cow_prepare(const struct tree *t, int ti, int dirfd,
			char *err, size_t len)
{
	const struct cow_task *ct = plan ? &plan[ti] : NULL;
	const struct tree_task *parent;
	unsigned long nstart[COW_MAX], nend[COW_MAX];
	char path[4096], *buf = NULL;
	int i, n = 0, fd = -1, ret;

	if (!ct || !ct->nv) {
		/* nothing to keep: drop what the parent had */
		for (i = 0; i < nkept; i++)
			munmap((void *)kept[i].start, kept[i].end - kept[i].start);
		nkept = 0;
		return NULL;
	}
	snprintf(path, sizeof(path), "core-%d.img", TASK_IMG_PID(&t->tasks[ti]));
	fd = dir_open(dirfd, path, O_RDONLY);
	buf = malloc(COW_CHUNK);
	if (fd < 0 || !buf) {
		snprintf(err, len, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	parent = tree_find(t, t->tasks[ti].ppid);
	for (i = 0; i < nkept; i++) {
		const struct cow_vma *v = find_vma(ct, kept[i].start, kept[i].end);

		if (!v || !parent || !same_creds(parent, &t->tasks[ti])) {
			munmap((void *)kept[i].start, kept[i].end - kept[i].start);
			continue;
		}
		/*
		 * Its children must inherit the task's own contents; if none
		 * will, the exec compares and writes the pages itself.
		 */
		if (has_child_with(t, ti, v) && make_own(fd, ct, v, buf)) {
			snprintf(err, len, "cannot fill %#lx-%#lx from %s: %s",
				 v->start, v->end, path, strerror(errno));
			goto fail;
		}
		nstart[n] = v->start;
		nend[n++] = v->end;
	}
	for (i = 0; i < ct->nv && n < COW_MAX; i++) {
		const struct cow_vma *v = &ct->v[i];
		int j, have = 0;

		for (j = 0; j < nkept; j++)
			have |= kept[j].start == v->start;
		if (have || !has_child_with(t, ti, v))
			continue;
		ret = map_own(fd, ct, v, TASK_IMG_PID(&t->tasks[ti]));
		if (ret < 0) {
			snprintf(err, len, "cannot fill %#lx-%#lx from %s: %s",
				 v->start, v->end, path, strerror(errno));
			goto fail;
		}
		if (!ret) {
			nstart[n] = v->start;
			nend[n++] = v->end;
		}
	}
	for (i = 0; i < n; i++) {
		kept[i].start = nstart[i];
		kept[i].end = nend[i];
	}
	nkept = n;
	free(buf);
	close(fd);
	return NULL;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

unsigned long long cow_kept_bytes(const struct tree *t, int ti, int filled)
{
	const struct cow_task *ct = plan ? &plan[ti] : NULL;
	const struct tree_task *p = tree_find(t, t->tasks[ti].ppid);
	const struct cow_task *pt = p && plan ? &plan[p - t->tasks] : NULL;
	unsigned long long n = 0;
	int i, j;

	for (i = 0; ct && i < ct->nv; i++) {
		if (filled && pt && same_creds(p, &t->tasks[ti]) &&
		    find_vma(pt, ct->v[i].start, ct->v[i].end))
			continue;	/* its parent's */
		for (j = 0; j < ct->v[i].nseg; j++)
			n += ct->segs[ct->v[i].seg + j].len;
	}
	return n;
}

void cow_keep_arg(char *buf, size_t len)
{
	size_t off;
	int i;

	buf[0] = 0;
	if (!nkept)
		return;
	off = snprintf(buf, len, "--imgcr-keep=");
	for (i = 0; i < nkept && off + 40 < len; i++)
		off += snprintf(buf + off, len - off, "%s%lx-%lx", i ? "," : "",
				kept[i].start, kept[i].end);
}
