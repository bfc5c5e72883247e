/* SPDX-License-Identifier: GPL-2.0 */
/*
 * binfmt_img internals: an image parsed and validated in full
 * (img_parse.c) before the point of no return, then applied to the
 * exec'ing task (img_restore.c).
 */
#ifndef IMGCR_LOADER_H
#define IMGCR_LOADER_H

#include <linux/binfmts.h>
#include <linux/elf.h>
#include <uapi/linux/imgcr.h>

#define IMGCR_LOADER_NAME "binfmt_img"

#define img_err(img, fmt, ...)						\
	pr_info_ratelimited(IMGCR_LOADER_NAME ": %s: " fmt "\n",	\
			    (img)->bprm->filename, ##__VA_ARGS__)

struct img_file {
	struct imgcr_file id;		/* identity recorded at dump */
	const char *path;		/* inside img->notes */
	struct file *file;		/* opened with the caller's rights */
};

struct img {
	struct linux_binprm *bprm;
	loff_t size;			/* of the image file */

	struct elf64_phdr *phdrs;
	unsigned int nphdrs;
	void *notes;
	size_t notes_len;

	/* copies of the notes, naturally aligned */
	struct imgcr_prstatus prstatus;
	struct imgcr_task task;
	struct imgcr_sigaction sigact[IMGCR_NSIG];
	u64 auxv[IMGCR_AUXV_WORDS];
	size_t auxv_bytes;
	void *xstate;
	size_t xstate_size;
	struct imgcr_vma *vmas;
	struct img_file *files;
	unsigned int nr_files;

	u32 pkru;			/* from xstate, if it has PKRU */
	struct file *exe;		/* denied writes until it becomes mm->exe_file */
};

/* img_parse.c */
int img_parse(struct img *img);
void img_free(struct img *img);

/* binfmt_img_main.c: syscall bodies, resolved at load (ksyms.h) */
extern unsigned long imgcr_sys_arch_prctl;
extern unsigned long imgcr_sys_mprotect;

/* img_restore.c */
int img_restore_mm(struct img *img);
int img_restore_task(struct img *img);

#endif /* IMGCR_LOADER_H */
