// SPDX-License-Identifier: GPL-2.0
/* Load an image's headers and notes, index the notes per thread, check every bound. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "proc.h"

/*
 * Read the ELF header, the program headers and the note segments: the file
 * up to the end of the last of them (the page data follows; it is not
 * needed to describe the image).
 */
static int read_head(struct image *img, int dirfd)
{
	const char *path = img->path;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	struct stat st;
	size_t want, phsize;
	int fd, i, ret = -1;

	fd = dirfd == AT_FDCWD ? open(path, O_RDONLY | O_CLOEXEC) :
				 dir_open(dirfd, path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("cannot open image %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	img->size = st.st_size;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_CORE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > img->size ||
	    (size_t)eh.e_phnum * sizeof(Elf64_Phdr) > img->size - eh.e_phoff) {
		pr_err("%s: not an ELF64 core file", path);
		goto out;
	}
	phsize = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	want = eh.e_phoff + phsize;
	ph = malloc(phsize ? phsize : 1);
	if (!ph || pread(fd, ph, phsize, eh.e_phoff) != (ssize_t)phsize) {
		pr_perror("cannot read image %s", path);
		goto out;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		if (ph[i].p_offset > img->size || ph[i].p_filesz > img->size - ph[i].p_offset) {
			pr_err("%s: note segment outside the file", path);
			goto out;
		}
		if (ph[i].p_offset + ph[i].p_filesz > want)
			want = ph[i].p_offset + ph[i].p_filesz;
	}
	img->data = malloc(want ? want : 1);
	if (!img->data) {
		pr_err("%s: out of memory", path);
		goto out;
	}
	if (read_full(fd, img->data, want)) {
		pr_perror("cannot read image %s", path);
		goto out;
	}
	img->data_len = want;
	ret = 0;
out:
	free(ph);
	close(fd);
	return ret;
}

static void *copy_of(const struct image_note *n)
{
	void *p = malloc(n->len ? n->len : 1);

	if (!p) {
		pr_err("out of memory");
		exit(1);
	}
	memcpy(p, n->desc, n->len);
	return p;
}

static const char *note_name(unsigned int type)
{
	switch (type) {
	case NT_IMGCR_TASK: return "NT_IMGCR_TASK";
	case NT_IMGCR_SIGACT: return "NT_IMGCR_SIGACT";
	case NT_IMGCR_VMAS: return "NT_IMGCR_VMAS";
	case NT_IMGCR_FILES: return "NT_IMGCR_FILES";
	case NT_IMGCR_PROC: return "NT_IMGCR_PROC";
	case NT_IMGCR_THREAD: return "NT_IMGCR_THREAD";
	case NT_IMGCR_SIGQUEUE: return "NT_IMGCR_SIGQUEUE";
	case NT_IMGCR_TIMERS: return "NT_IMGCR_TIMERS";
	case NT_IMGCR_VDSO: return "NT_IMGCR_VDSO";
	case NT_IMGCR_CREDS: return "NT_IMGCR_CREDS";
	}
	return "an unknown IMGCR note";
}

/*
 * File @n under the thread it belongs to: that of the NT_PRSTATUS before it
 * (the order of core dumps).  The process-wide notes are the main thread's.
 */
static int decode(struct image *img, struct image_note *n)
{
	struct image_thread *th;
	const char *why = NULL;
	void **slot = NULL;
	size_t unit = 0;

	if (!strcmp(n->owner, "CORE") && n->type == IMGCR_NT_PRSTATUS) {
		if (n->len != sizeof(th->prstatus)) {
			pr_err("%s: NT_PRSTATUS of %zu bytes, want %zu", img->path, n->len,
			       sizeof(th->prstatus));
			return -1;
		}
		if (img->nr_threads > IMGCR_MAX_THREADS) {
			pr_err("%s: more than %d threads", img->path, IMGCR_MAX_THREADS + 1);
			return -1;
		}
		th = realloc(img->threads, (img->nr_threads + 1) * sizeof(*th));
		if (!th) {
			pr_err("out of memory");
			exit(1);
		}
		img->threads = th;
		th += img->nr_threads;
		memset(th, 0, sizeof(*th));
		memcpy(&th->prstatus, n->desc, sizeof(th->prstatus));
		n->thread = img->nr_threads++;
		return 0;
	}
	if (!img->nr_threads) {
		pr_err("%s: a note precedes the main thread's NT_PRSTATUS", img->path);
		return -1;
	}
	n->thread = img->nr_threads - 1;
	th = &img->threads[n->thread];
	if (!strcmp(n->owner, "CORE") && n->type == IMGCR_NT_PRFPREG) {
		th->fpreg_len = n->len;
		return 0;
	}
	if (!strcmp(n->owner, "LINUX") && n->type == IMGCR_NT_X86_XSTATE) {
		th->xstate_len = n->len;
		return 0;
	}
	if (strcmp(n->owner, IMGCR_NOTE_OWNER))
		return 0;
	if (n->type == NT_IMGCR_THREAD) {
		if (!n->thread)
			why = "among the main thread's notes";
		else if (th->has_thread)
			why = "twice for one thread";
		else if (n->len != sizeof(th->thread))
			why = "of the wrong size";
		if (why)
			goto bad;
		memcpy(&th->thread, n->desc, sizeof(th->thread));
		th->has_thread = 1;
		return 0;
	}
	if (n->type == NT_IMGCR_CREDS) {
		if (th->has_creds)
			why = "twice for one thread";
		else if (n->len != sizeof(th->creds))
			why = "of the wrong size";
		if (why)
			goto bad;
		memcpy(&th->creds, n->desc, sizeof(th->creds));
		th->has_creds = 1;
		return 0;
	}
	switch (n->type) {
	case NT_IMGCR_TASK:
		slot = (void **)&img->task;
		why = n->len != sizeof(*img->task) ? "of the wrong size" : NULL;
		break;
	case NT_IMGCR_SIGACT:
		slot = (void **)&img->sigact;
		why = n->len != IMGCR_NSIG * sizeof(*img->sigact) ? "of the wrong size" : NULL;
		break;
	case NT_IMGCR_VMAS:
		slot = (void **)&img->vmas;
		unit = sizeof(*img->vmas);
		break;
	case NT_IMGCR_PROC:
		slot = (void **)&img->proc;
		why = n->len != sizeof(*img->proc) ? "of the wrong size" : NULL;
		break;
	case NT_IMGCR_SIGQUEUE:
		slot = (void **)&img->sigqueue;
		unit = sizeof(*img->sigqueue);
		break;
	case NT_IMGCR_TIMERS:
		slot = (void **)&img->timers;
		unit = sizeof(*img->timers);
		break;
	case NT_IMGCR_FILES:
		if (img->files)
			why = "twice";
		else if (n->thread)
			why = "among a further thread's notes";
		if (why)
			goto bad;
		img->files = n->desc;
		img->files_len = n->len;
		return 0;
	default:
		return 0;	/* unknown: not ours to judge here */
	}
	if (*slot)
		why = "twice";
	else if (n->thread)
		why = "among a further thread's notes";
	else if (unit && n->len % unit)
		why = "of the wrong size";
	if (why)
		goto bad;
	*slot = copy_of(n);
	return 0;
bad:
	pr_err("%s: %s %s (note %zu)", img->path, note_name(n->type), why, img->nr_notes - 1);
	return -1;
}

static int index_notes(struct image *img, const Elf64_Phdr *ph)
{
	const unsigned char *p, *end;

	p = img->data + ph->p_offset;
	end = p + ph->p_filesz;
	while (p < end) {
		const Elf64_Nhdr *n = (const void *)p;
		size_t nsz, dsz;
		struct image_note *in;

		if ((size_t)(end - p) < sizeof(*n))
			goto bad;
		nsz = (n->n_namesz + 3) & ~3UL;
		dsz = (n->n_descsz + 3) & ~3UL;
		p += sizeof(*n);
		if (nsz > (size_t)(end - p) || dsz > (size_t)(end - p) - nsz ||
		    !n->n_namesz || p[n->n_namesz - 1])
			goto bad;
		in = realloc(img->notes, (img->nr_notes + 1) * sizeof(*in));
		if (!in)
			goto bad;
		img->notes = in;
		in += img->nr_notes++;
		in->owner = (const char *)p;
		in->type = n->n_type;
		in->desc = p + nsz;
		in->len = n->n_descsz;
		in->thread = 0;
		if (decode(img, in))
			return -1;
		p += nsz + dsz;
	}
	return 0;
bad:
	pr_err("%s: malformed note segment", img->path);
	return -1;
}

/* The counts of NT_IMGCR_PROC against the notes they count. */
static int check_threads(struct image *img)
{
	const struct imgcr_proc *pr = img->proc;
	unsigned int i;

	if (!pr) {
		pr_err("%s: no process note (NT_IMGCR_PROC)", img->path);
		return -1;
	}
	if (img->nr_threads - 1 != pr->nr_threads) {
		pr_err("%s: %u threads besides the main one, the process note says %u",
		       img->path, img->nr_threads - 1, pr->nr_threads);
		return -1;
	}
	for (i = 1; i < img->nr_threads; i++) {
		const struct image_thread *th = &img->threads[i];

		if (!th->has_thread) {
			pr_err("%s: thread %d (registers note %u) has no NT_IMGCR_THREAD note",
			       img->path, th->prstatus.pid, i);
			return -1;
		}
		if ((__s32)th->thread.tid != th->prstatus.pid) {
			pr_err("%s: thread %u: NT_IMGCR_THREAD tid %u, its NT_PRSTATUS says %d",
			       img->path, i, th->thread.tid, th->prstatus.pid);
			return -1;
		}
	}
	for (i = 0; i < img->nr_notes; i++) {
		const struct image_note *n = &img->notes[i];
		size_t want;

		if (strcmp(n->owner, IMGCR_NOTE_OWNER))
			continue;
		if (n->type == NT_IMGCR_SIGQUEUE)
			want = (size_t)pr->nr_sigqueue * sizeof(*img->sigqueue);
		else if (n->type == NT_IMGCR_TIMERS)
			want = (size_t)pr->nr_timers * sizeof(*img->timers);
		else
			continue;
		if (n->len != want) {
			pr_err("%s: %s of %zu bytes does not match the process note", img->path,
			       note_name(n->type), n->len);
			return -1;
		}
	}
	if ((pr->nr_sigqueue && !img->sigqueue) || (pr->nr_timers && !img->timers)) {
		pr_err("%s: the process note counts pending signals or timers the image lacks",
		       img->path);
		return -1;
	}
	return 0;
}

int image_open(struct image *img, const char *path)
{
	return image_openat(img, AT_FDCWD, path);
}

int image_openat(struct image *img, int dirfd, const char *path)
{
	int i;

	memset(img, 0, sizeof(*img));
	img->path = path;
	if (read_head(img, dirfd))
		return -1;
	img->eh = (const Elf64_Ehdr *)img->data;
	img->ph = (const Elf64_Phdr *)(img->data + img->eh->e_phoff);
	for (i = 0; i < img->eh->e_phnum; i++)
		if (img->ph[i].p_type == PT_NOTE && index_notes(img, &img->ph[i]))
			return -1;
	if (!img->task || !img->nr_threads) {
		pr_err("%s: a core file, but not an imgcr image (no imgcr task note)", path);
		return -1;
	}
	img->prstatus = &img->threads[0].prstatus;
	img->xstate_len = img->threads[0].xstate_len;
	if (img->task->version < IMGCR_FORMAT_VERSION_NOSECCOMP ||
	    img->task->version > IMGCR_FORMAT_VERSION) {
		pr_err("%s: image format version %u, this tool reads versions %u to %u",
		       path, img->task->version, IMGCR_FORMAT_VERSION_NOSECCOMP,
		       IMGCR_FORMAT_VERSION);
		return -1;
	}
	for (i = 0; img->vmas && i < (int)img->nr_notes; i++)
		if (img->notes[i].type == NT_IMGCR_VMAS &&
		    !strcmp(img->notes[i].owner, IMGCR_NOTE_OWNER) &&
		    img->notes[i].len != img->task->nr_vmas * sizeof(*img->vmas)) {
			pr_err("%s: memory map note does not match the task note", path);
			return -1;
		}
	return check_threads(img);
}

int image_files_each(const struct image *img,
		     int (*fn)(unsigned int idx, const struct imgcr_file *rec, const char *path, void *arg),
		     void *arg)
{
	const unsigned char *p = img->files, *end = p + img->files_len;
	struct imgcr_file rec;
	unsigned int i;
	int ret;

	for (i = 0; p && (size_t)(end - p) >= sizeof(rec); i++) {
		const char *name = (const char *)p + sizeof(rec);

		memcpy(&rec, p, sizeof(rec));
		if (rec.reclen < sizeof(rec) + rec.path_len ||
		    rec.reclen > (size_t)(end - p) || !rec.path_len ||
		    name[rec.path_len - 1])
			return -1;
		ret = fn(i, &rec, name, arg);
		if (ret)
			return ret;
		p += rec.reclen;
	}
	return 0;
}

int image_file(const struct image *img, unsigned int idx,
	       struct imgcr_file *out, char *path, size_t path_size)
{
	const unsigned char *p = img->files, *end = p + img->files_len;
	unsigned int i;

	for (i = 0; p && (size_t)(end - p) >= sizeof(*out); i++) {
		const char *name = (const char *)p + sizeof(*out);

		memcpy(out, p, sizeof(*out));
		if (out->reclen < sizeof(*out) + out->path_len ||
		    out->reclen > (size_t)(end - p) || !out->path_len ||
		    name[out->path_len - 1])
			return -1;
		if (i == idx) {
			snprintf(path, path_size, "%s", name);
			return 0;
		}
		p += out->reclen;
	}
	return -1;
}

void image_close(struct image *img)
{
	free(img->threads);
	free(img->task);
	free(img->sigact);
	free(img->vmas);
	free(img->proc);
	free(img->sigqueue);
	free(img->timers);
	free(img->notes);
	free(img->data);
	memset(img, 0, sizeof(*img));
}
