/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a single-task image (include/uapi/linux/imgcr.h) in userspace. */
#ifndef IMGCR_IMAGE_H
#define IMGCR_IMAGE_H

#include <elf.h>
#include <stddef.h>
#include <linux/imgcr.h>

struct image_note {
	const char *owner;
	unsigned int type;
	const void *desc;
	size_t len;
};

struct image {
	const char *path;
	unsigned char *data;		/* whole file */
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct image_note *notes;
	size_t nr_notes;
	/*
	 * Decoded copies (note payloads are only 4-byte aligned in the file);
	 * the pointers are NULL when the note is absent.
	 */
	struct imgcr_prstatus *prstatus;
	struct imgcr_task *task;
	struct imgcr_sigaction *sigact;
	struct imgcr_vma *vmas;		/* task->nr_vmas entries */
	const void *files;		/* raw: records are parsed on demand */
	size_t files_len;
	size_t xstate_len;
};

int image_open(struct image *img, const char *path);
void image_close(struct image *img);
/* Record @i of the file table copied to @out (path truncated to fit); 0 or -1. */
int image_file(const struct image *img, unsigned int i, struct imgcr_file *out,
	       char *path, size_t path_size);

#endif
