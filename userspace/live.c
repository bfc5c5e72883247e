// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr dump --live: copy a tree's memory while it runs, so that it is
 * frozen only to write what changed.
 *
 * The kernel's soft-dirty bits say which pages a task wrote since they
 * were last cleared (write "4" to /proc/PID/clear_refs; bit 55 of each
 * /proc/PID/pagemap entry).  Each pass happens in two halves:
 *   - frozen, briefly (live_scan): read the bits of every page, mark the
 *     pages written since the last pass (or never copied) to be copied,
 *     and clear the bits;
 *   - running (live_copy): copy the marked pages into a buffer per
 *     mapping.  Not with process_vm_readv(), which reads whatever is mapped
 *     at an address at the time: the module copies the pages it pinned
 *     when live_scan() opened /proc/PID/dump, frozen (IMGCR_IOC_PRECOPY).
 * Reading the bits and clearing them must be one step, hence the stop: a
 * write in between would be cleared unseen.  A page copied after the bits
 * were cleared and not written since holds what the copy holds: a write
 * during the copy sets its bit (in its page table entry, which goes where
 * mremap() takes the page), and the next pass takes it again.
 *
 * The final freeze is the dump's own: for each task, live_clean_ranges()
 * lists the copied pages whose bit is still clear, the module writes the
 * image leaving their places empty (IMGCR_IOC_DUMP_TO_SKIP), and once the
 * tree has been released (killed, or running again) live_fill() writes
 * them from the copies: the same image as a dump of the frozen tree.
 *
 * Only private anonymous mappings are copied ahead (the bulk of a
 * process); file, shared and vdso pages are written frozen, as by a plain
 * dump.  A mapping that changed (another start or end) is copied
 * again.  The soft-dirty bit alone is not enough: mremap() can move
 * another mapping's page tables onto a copied range without setting it.
 * So each copied page also keeps its page frame (or swap entry) as
 * pagemap showed it when it was marked, and is clean only if that is
 * unchanged (a page migrated or swapped since is just copied again); the
 * frames are shown to CAP_SYS_ADMIN only, which --live therefore needs.
 * The copy being of the pinned pages themselves, a region moved away and
 * back while it was copied is no problem either.
 * A task is known by its pid and start time, and of tasks sharing one mm
 * only the first is tracked (its clear is theirs too).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "live.h"
#include "log.h"
#include "proc.h"

#define PG 4096UL
#define PM_PRESENT (1ULL << 63)
#define PM_SWAP (1ULL << 62)
#define PM_SOFT_DIRTY (1ULL << 55)
#define PM_FRAME ((1ULL << 55) - 1)	/* PFN, or swap type and offset */
#define PM_CHUNK 65536		/* pagemap entries read at once */

enum { PG_NONE, PG_COPY, PG_STAGED };

/* One private anonymous mapping: a copy of its pages, and their states. */
struct live_region {
	unsigned long start, end;
	unsigned char *data;	/* end - start bytes, filled as copied */
	unsigned char *st;	/* PG_* per page */
	uint64_t *frame;	/* per page: PM_SWAP | PM_FRAME bits when marked */
	int seen;		/* matched a mapping in this scan */
};

struct live_task {
	pid_t pid;
	int dump_fd;		/* /proc/PID/dump, opened frozen: its pages pinned */
	unsigned long long start_time;	/* /proc/PID/stat field 22 */
	int seen;
	int shared_mm;		/* shares its mm with a task tracked before it */
	struct live_region *reg;
	int nreg;
};

static void region_free(struct live_region *r)
{
	if (r->data)
		munmap(r->data, r->end - r->start);
	free(r->st);
	free(r->frame);
	r->data = NULL;
	r->st = NULL;
	r->frame = NULL;
}

static void task_free(struct live_task *k)
{
	int i;

	if (k->dump_fd >= 0)
		close(k->dump_fd);
	k->dump_fd = -1;
	for (i = 0; i < k->nreg; i++)
		region_free(&k->reg[i]);
	free(k->reg);
	k->reg = NULL;
	k->nreg = 0;
}

static struct live_task *find_task(struct live *lv, pid_t pid)
{
	int i;

	for (i = 0; i < lv->ntasks; i++)
		if (lv->tasks[i].pid == pid)
			return &lv->tasks[i];
	return NULL;
}

/* A mapping copied ahead: private, anonymous, readable, not the vdso. */
static int copyable(const char *perms, unsigned long ino, const char *path)
{
	if (perms[0] != 'r' || perms[3] != 'p' || ino)
		return 0;
	return !*path || !strcmp(path, "[heap]") || !strcmp(path, "[stack]") ||
	       !strncmp(path, "[anon:", 6);
}

/* Call @fn for each mapping live dumps copy ahead.  0 or -1. */
static int for_each_mapping(pid_t pid, int (*fn)(void *, unsigned long, unsigned long),
			    void *arg)
{
	char name[64], perms[8], *line = NULL, *path;
	unsigned long start, end, ino;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int ret = 0, n;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f) {
		pr_perror("pid %d: cannot open %s", pid, name);
		return -1;
	}
	/* whole lines: a long path must not read as another mapping */
	while (!ret && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			continue;
		line[len - 1] = 0;
		n = 0;
		if (sscanf(line, "%lx-%lx %7s %*x %*s %lu %n", &start, &end, perms,
			   &ino, &n) < 4 || !n)
			continue;
		path = line + n;
		if (copyable(perms, ino, path))
			ret = fn(arg, start, end);
	}
	free(line);
	fclose(f);
	return ret;
}

struct scan_arg {
	struct live_task *k;
};

static int add_mapping(void *p, unsigned long start, unsigned long end)
{
	struct live_task *k = ((struct scan_arg *)p)->k;
	struct live_region *r, *n;
	size_t pages = (end - start) / PG;
	int i;

	for (i = 0; i < k->nreg; i++)
		if (k->reg[i].start == start && k->reg[i].end == end) {
			k->reg[i].seen = 1;
			return 0;
		}
	n = realloc(k->reg, (k->nreg + 1) * sizeof(*n));
	if (!n)
		return 0;	/* not copied ahead */
	k->reg = n;
	r = &k->reg[k->nreg];
	memset(r, 0, sizeof(*r));
	r->start = start;
	r->end = end;
	r->seen = 2;		/* new: every present page is copied */
	r->st = calloc(pages, 1);
	r->frame = calloc(pages, sizeof(*r->frame));
	r->data = mmap(NULL, end - start, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!r->st || !r->frame || r->data == MAP_FAILED) {
		/* not copied ahead: the frozen dump writes it */
		r->data = r->data == MAP_FAILED ? NULL : r->data;
		region_free(r);
		return 0;
	}
	k->nreg++;
	return 0;
}

/*
 * Mark the regions of @k that still match a mapping (seen 1), add a region
 * for each new mapping (seen 2); the others keep seen 0.  0 or -1.
 */
static int match_mappings(struct live_task *k)
{
	struct scan_arg a = { k };
	int i;

	for (i = 0; i < k->nreg; i++)
		k->reg[i].seen = 0;
	return for_each_mapping(k->pid, add_mapping, &a);
}

/* Read the pagemap entries of @r into @pm (PM_CHUNK at a time) and call @fn. */
static int walk_pagemap(int pm, pid_t pid, struct live_region *r,
			void (*fn)(struct live_region *, size_t, uint64_t, void *), void *arg)
{
	static uint64_t buf[PM_CHUNK];
	size_t pages = (r->end - r->start) / PG, i = 0, n, j;
	ssize_t got;

	while (i < pages) {
		n = pages - i < PM_CHUNK ? pages - i : PM_CHUNK;
		got = pread(pm, buf, n * 8, (off_t)((r->start / PG + i) * 8));
		if (got != (ssize_t)(n * 8)) {
			if (got >= 0)
				errno = EIO;
			pr_perror("pid %d: reading /proc/%d/pagemap", pid, pid);
			return -1;
		}
		for (j = 0; j < n; j++)
			fn(r, i + j, buf[j], arg);
		i += n;
	}
	return 0;
}

/* The identity of the page behind a pagemap entry: its frame, or swap entry. */
static uint64_t frame_of(uint64_t e)
{
	return e & (PM_SWAP | PM_FRAME);
}

static void mark_scan(struct live_region *r, size_t i, uint64_t e, void *arg)
{
	long *todo = arg;

	if (!(e & (PM_PRESENT | PM_SWAP))) {
		r->st[i] = PG_NONE;
		return;
	}
	if (r->seen == 2 || r->st[i] != PG_STAGED || (e & PM_SOFT_DIRTY) ||
	    r->frame[i] != frame_of(e)) {
		r->st[i] = PG_COPY;
		r->frame[i] = frame_of(e);
		(*todo)++;
	}
}

static int open_pagemap(pid_t pid)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/pagemap", pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		pr_perror("pid %d: cannot open %s", pid, name);
	return fd;
}

static int clear_soft_dirty(pid_t pid)
{
	char name[64];
	int fd, ret;

	snprintf(name, sizeof(name), "/proc/%d/clear_refs", pid);
	fd = open(name, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: cannot open %s", pid, name);
		return -1;
	}
	ret = write(fd, "4", 1) == 1 ? 0 : -1;
	if (ret)
		pr_perror("pid %d: clearing its soft-dirty bits (%s; --live needs a kernel with CONFIG_MEM_SOFT_DIRTY)",
			  pid, name);
	close(fd);
	return ret;
}

/* /proc/PID/stat field 22, the start time: a pid used again is another task. */
static unsigned long long start_time(pid_t pid)
{
	char name[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd, i;

	snprintf(name, sizeof(name), "/proc/%d/stat", pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static long scan_task(struct live_task *k)
{
	char name[64];
	long todo = 0;
	int i, pm;

	if (match_mappings(k))
		return -1;
	/* mappings gone or changed: their copies are of no use */
	for (i = 0; i < k->nreg; i++)
		if (!k->reg[i].seen) {
			region_free(&k->reg[i]);
			k->reg[i--] = k->reg[--k->nreg];
		}
	/* the pages as they are now, pinned for live_copy() */
	if (k->dump_fd >= 0)
		close(k->dump_fd);
	snprintf(name, sizeof(name), "/proc/%d/dump", k->pid);
	k->dump_fd = open(name, O_RDONLY | O_CLOEXEC);
	if (k->dump_fd < 0) {
		pr_dump_open_error(k->pid, name);
		return -1;
	}
	pm = open_pagemap(k->pid);
	if (pm < 0)
		return -1;
	for (i = 0; i < k->nreg; i++)
		if (walk_pagemap(pm, k->pid, &k->reg[i], mark_scan, &todo)) {
			close(pm);
			return -1;
		}
	close(pm);
	if (clear_soft_dirty(k->pid))
		return -1;
	return todo;
}

int live_usable(void)
{
	volatile char probe = 1;
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)&probe / PG * 8)) != sizeof(e))
			e = 0;
		close(fd);
	}
	if (!(e & PM_PRESENT) || !(e & PM_FRAME)) {
		pr_err("--live needs CAP_SYS_ADMIN: /proc/PID/pagemap shows page frames only to it, and a page moved by mremap() is told from the one copied by its frame");
		return -1;
	}
	return 0;
}

long live_scan(struct live *lv, const struct tree *t)
{
	struct live_task *n;
	long todo = 0, r;
	int i;

	for (i = 0; i < lv->ntasks; i++)
		lv->tasks[i].seen = 0;
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *tk = &t->tasks[i];
		unsigned long long born;
		struct live_task *k;

		if (tk->zombie)
			continue;
		born = start_time(tk->pid);
		k = find_task(lv, tk->pid);
		if (k && k->start_time != born) {
			task_free(k);	/* another task with that pid */
			k->start_time = born;
		}
		if (!k) {
			n = realloc(lv->tasks, (lv->ntasks + 1) * sizeof(*n));
			if (!n) {
				pr_err("out of memory for the live copy");
				return -1;
			}
			lv->tasks = n;
			k = &lv->tasks[lv->ntasks++];
			memset(k, 0, sizeof(*k));
			k->dump_fd = -1;
			k->pid = tk->pid;
			k->start_time = born;
		}
		k->seen = 1;
		k->shared_mm = 0;
		for (int j = 0; j < lv->ntasks; j++)
			if (lv->tasks[j].seen && &lv->tasks[j] != k && !lv->tasks[j].shared_mm &&
			    syscall(SYS_kcmp, lv->tasks[j].pid, k->pid, KCMP_VM, 0, 0) == 0)
				k->shared_mm = 1;
		if (k->shared_mm) {
			task_free(k);	/* left to the frozen dump */
			continue;
		}
		r = scan_task(k);
		if (r < 0)
			return -1;
		todo += r;
	}
	for (i = 0; i < lv->ntasks; i++)
		if (!lv->tasks[i].seen) {
			task_free(&lv->tasks[i]);
			lv->tasks[i--] = lv->tasks[--lv->ntasks];
		}
	return todo;
}

/* Copy pages [i, j) of @r from the pinned pages; the others stay uncopied. */
static int copy_run(struct live *lv, struct live_task *k, struct live_region *r,
		    size_t i, size_t j)
{
	static unsigned char status[1024];
	struct imgcr_precopy pc = {
		.start = r->start + i * PG,
		.end = r->start + j * PG,
		.buf = (uintptr_t)(r->data + i * PG),
		.status = (uintptr_t)status,
	};
	size_t p;

	memset(status, 0, j - i);
	if (ioctl(k->dump_fd, IMGCR_IOC_PRECOPY, &pc)) {
		pr_perror("pid %d: copying its pages %#lx-%#lx while it runs%s", k->pid,
			  (unsigned long)pc.start, (unsigned long)pc.end,
			  errno == ENOTTY ? " (--live needs a module with IMGCR_IOC_PRECOPY)" : "");
		return -1;
	}
	for (p = i; p < j; p++)
		r->st[p] = status[p - i] ? PG_STAGED : PG_NONE;
	lv->copied += pc.copied;
	return 0;
}

int live_copy(struct live *lv)
{
	int t, g, ret = 0;
	size_t i, j, pages;

	for (t = 0; t < lv->ntasks; t++) {
		struct live_task *k = &lv->tasks[t];

		for (g = 0; g < k->nreg && !ret; g++) {
			struct live_region *r = &k->reg[g];

			pages = (r->end - r->start) / PG;
			for (i = 0; i < pages && !ret; i = j) {
				for (; i < pages && r->st[i] != PG_COPY; i++)
					;
				/* runs of at most 4 MiB (the status buffer) */
				for (j = i; j < pages && r->st[j] == PG_COPY && j - i < 1024; j++)
					;
				if (j > i && k->dump_fd >= 0)
					ret = copy_run(lv, k, r, i, j);
			}
		}
		/* the pins are not needed any more */
		if (k->dump_fd >= 0)
			close(k->dump_fd);
		k->dump_fd = -1;
	}
	lv->rounds++;
	return ret;
}

struct clean_arg {
	struct imgcr_range *r;
	size_t n, cap;
	int oom;
};

static void mark_clean(struct live_region *r, size_t i, uint64_t e, void *arg)
{
	struct clean_arg *c = arg;
	unsigned long va = r->start + i * PG;
	struct imgcr_range *n;

	if (r->st[i] != PG_STAGED || !(e & (PM_PRESENT | PM_SWAP)) || (e & PM_SOFT_DIRTY) ||
	    r->frame[i] != frame_of(e))
		return;
	if (c->n == IMGCR_MAX_SKIP_RANGES && c->r[c->n - 1].end != va)
		return;		/* the module's limit: the rest is written frozen */
	if (c->n && c->r[c->n - 1].end == va) {
		c->r[c->n - 1].end += PG;
		return;
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		n = realloc(c->r, c->cap * sizeof(*n));
		if (!n) {
			c->oom = 1;
			c->cap = c->n;
			return;
		}
		c->r = n;
	}
	if (c->n < c->cap)
		c->r[c->n++] = (struct imgcr_range){ va, va + PG };
}

static int cmp_region(const void *a, const void *b)
{
	const struct live_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int live_clean_ranges(struct live *lv, pid_t pid, struct imgcr_range **ranges,
		      size_t *n)
{
	struct live_task *k = find_task(lv, pid);
	struct clean_arg c = { 0 };
	int i, pm;

	*ranges = NULL;
	*n = 0;
	if (k && k->dump_fd >= 0) {
		close(k->dump_fd);	/* a pass that ended without a copy */
		k->dump_fd = -1;
	}
	if (!k || k->shared_mm || k->start_time != start_time(pid))
		return 0;
	if (match_mappings(k))
		return -1;
	pm = open_pagemap(pid);
	if (pm < 0)
		return -1;
	/* the module wants the ranges in rising order */
	qsort(k->reg, k->nreg, sizeof(*k->reg), cmp_region);
	for (i = 0; i < k->nreg; i++)
		if (k->reg[i].seen == 1 &&
		    walk_pagemap(pm, pid, &k->reg[i], mark_clean, &c)) {
			close(pm);
			free(c.r);
			return -1;
		}
	close(pm);
	if (c.oom) {
		/* fewer pages left out is always right */
		pr_err("pid %d: out of memory listing its copied pages; writing them frozen", pid);
	}
	*ranges = c.r;
	*n = c.n;
	return 0;
}

static struct live_region *region_of(struct live_task *k, unsigned long va)
{
	int i;

	for (i = 0; i < k->nreg; i++)
		if (k->reg[i].start <= va && va < k->reg[i].end)
			return &k->reg[i];
	return NULL;
}

/* The first of @n sorted ranges that ends after @va. */
static size_t first_range_after(const struct imgcr_range *r, size_t n, uint64_t va)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r[mid].end <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int live_fill(struct live *lv, pid_t pid, const char *path,
	      const struct imgcr_range *ranges, size_t n)
{
	struct live_task *k = find_task(lv, pid);
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	size_t i, g;
	int fd, ret = -1;

	if (!n)
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open %s", path);
		return -1;
	}
	if (!k || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || !eh.e_phnum ||
	    eh.e_phentsize != sizeof(*ph)) {
		pr_err("%s: no ELF header to fill the live copy in", path);
		goto out;
	}
	ph = calloc(eh.e_phnum, sizeof(*ph));
	if (!ph || pread(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) !=
		   (ssize_t)(eh.e_phnum * sizeof(*ph))) {
		pr_err("%s: cannot read its program headers", path);
		goto out;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		uint64_t lo = ph[i].p_vaddr, hi = ph[i].p_vaddr + ph[i].p_filesz;

		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		g = first_range_after(ranges, n, lo);
		for (size_t r = g; r < n && ranges[r].start < hi; r++) {
			uint64_t a = ranges[r].start > lo ? ranges[r].start : lo;
			uint64_t b = ranges[r].end < hi ? ranges[r].end : hi;
			struct live_region *reg = region_of(k, a);

			if (!reg || b > reg->end) {
				pr_err("%s: no copy of %#llx-%#llx", path,
				       (unsigned long long)a, (unsigned long long)b);
				goto out;
			}
			if (pwrite(fd, reg->data + (a - reg->start), b - a,
				   ph[i].p_offset + (a - lo)) != (ssize_t)(b - a)) {
				pr_perror("cannot write %s", path);
				goto out;
			}
		}
	}
	ret = 0;
out:
	free(ph);
	close(fd);
	return ret;
}

void live_free(struct live *lv)
{
	int i;

	for (i = 0; i < lv->ntasks; i++)
		task_free(&lv->tasks[i]);
	free(lv->tasks);
	lv->tasks = NULL;
	lv->ntasks = 0;
}

unsigned long long live_vaddr_at(const char *path, unsigned long long off)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned long long va = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && eh.e_phentsize == sizeof(ph))
		for (int i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph))
				break;
			if (ph.p_type == PT_LOAD && off >= ph.p_offset &&
			    off < ph.p_offset + ph.p_filesz)
				va = ph.p_vaddr + (off - ph.p_offset);
		}
	close(fd);
	return va;
}
