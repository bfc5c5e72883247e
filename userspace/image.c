// SPDX-License-Identifier: GPL-2.0
/* Load an image file and index its notes, checking every bound. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"

static int read_all(const char *path, unsigned char **data, size_t *size)
{
	struct stat st;
	size_t done = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("cannot open image %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*size = st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data) {
		pr_err("%s: out of memory", path);
		close(fd);
		return -1;
	}
	while (done < *size) {
		ssize_t n = read(fd, *data + done, *size - done);

		if (n <= 0) {
			pr_perror("cannot read image %s", path);
			close(fd);
			return -1;
		}
		done += n;
	}
	close(fd);
	return 0;
}

static void *copy_of(const struct image_note *n)
{
	void *p = malloc(n->len ? n->len : 1);

	if (p)
		memcpy(p, n->desc, n->len);
	return p;
}

static void decode(struct image *img, const struct image_note *n)
{
	if (!strcmp(n->owner, "CORE") && n->type == IMGCR_NT_PRSTATUS &&
	    n->len == sizeof(*img->prstatus) && !img->prstatus)
		img->prstatus = copy_of(n);
	else if (!strcmp(n->owner, "LINUX") && n->type == IMGCR_NT_X86_XSTATE)
		img->xstate_len = n->len;
	else if (strcmp(n->owner, IMGCR_NOTE_OWNER))
		return;
	else if (n->type == NT_IMGCR_TASK && n->len == sizeof(*img->task) &&
		 !img->task)
		img->task = copy_of(n);
	else if (n->type == NT_IMGCR_SIGACT && !img->sigact &&
		 n->len == IMGCR_NSIG * sizeof(*img->sigact))
		img->sigact = copy_of(n);
	else if (n->type == NT_IMGCR_VMAS && !img->vmas &&
		 n->len % sizeof(*img->vmas) == 0)
		img->vmas = copy_of(n);
	else if (n->type == NT_IMGCR_FILES) {
		img->files = n->desc;
		img->files_len = n->len;
	}
}

static int index_notes(struct image *img, const Elf64_Phdr *ph)
{
	const unsigned char *p, *end;

	if (ph->p_offset > img->size || ph->p_filesz > img->size - ph->p_offset) {
		pr_err("%s: note segment outside the file", img->path);
		return -1;
	}
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
		decode(img, in);
		p += nsz + dsz;
	}
	return 0;
bad:
	pr_err("%s: malformed note segment", img->path);
	return -1;
}

int image_open(struct image *img, const char *path)
{
	int i;

	memset(img, 0, sizeof(*img));
	img->path = path;
	if (read_all(path, &img->data, &img->size))
		return -1;
	img->eh = (const Elf64_Ehdr *)img->data;
	if (img->size < sizeof(*img->eh) || memcmp(img->eh->e_ident, ELFMAG, SELFMAG) ||
	    img->eh->e_ident[EI_CLASS] != ELFCLASS64 || img->eh->e_type != ET_CORE ||
	    img->eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    img->eh->e_phoff > img->size ||
	    (size_t)img->eh->e_phnum * sizeof(Elf64_Phdr) > img->size - img->eh->e_phoff) {
		pr_err("%s: not an ELF64 core file", path);
		return -1;
	}
	img->ph = (const Elf64_Phdr *)(img->data + img->eh->e_phoff);
	for (i = 0; i < img->eh->e_phnum; i++)
		if (img->ph[i].p_type == PT_NOTE && index_notes(img, &img->ph[i]))
			return -1;
	if (!img->task || !img->prstatus) {
		pr_err("%s: a core file, but not an imgcr image (no imgcr task note)", path);
		return -1;
	}
	if (img->task->version != IMGCR_FORMAT_VERSION) {
		pr_err("%s: image format version %u, this tool reads version %u",
		       path, img->task->version, IMGCR_FORMAT_VERSION);
		return -1;
	}
	for (i = 0; img->vmas && i < (int)img->nr_notes; i++)
		if (img->notes[i].type == NT_IMGCR_VMAS &&
		    img->notes[i].len != img->task->nr_vmas * sizeof(*img->vmas)) {
			pr_err("%s: memory map note does not match the task note", path);
			return -1;
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
	free(img->prstatus);
	free(img->task);
	free(img->sigact);
	free(img->vmas);
	free(img->notes);
	free(img->data);
}
