/* SPDX-License-Identifier: GPL-2.0 */
/* Reading an image (include/uapi/linux/imgcr.h) in userspace. */
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
	unsigned int thread;		/* index in image.threads it belongs to */
};

/* One thread: the notes from its NT_PRSTATUS to the next one. */
struct image_thread {
	struct imgcr_prstatus prstatus;
	struct imgcr_thread thread;	/* threads[1..] only: NT_IMGCR_THREAD */
	int has_thread;
	struct imgcr_creds creds;	/* NT_IMGCR_CREDS, if has_creds */
	int has_creds;
	size_t fpreg_len;
	size_t xstate_len;
};

struct image {
	const char *path;
	unsigned char *data;		/* the file up to the end of its notes */
	size_t data_len;
	size_t size;			/* of the whole file */
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct image_note *notes;
	size_t nr_notes;
	/*
	 * Every thread, the main one (the first NT_PRSTATUS) first; the
	 * others in the order of their notes.
	 */
	struct image_thread *threads;
	unsigned int nr_threads;
	/*
	 * Decoded copies (note payloads are only 4-byte aligned in the file);
	 * the pointers are NULL when the note is absent.
	 */
	struct imgcr_prstatus *prstatus;	/* &threads[0].prstatus */
	struct imgcr_task *task;
	struct imgcr_sigaction *sigact;
	struct imgcr_vma *vmas;		/* task->nr_vmas entries */
	struct imgcr_proc *proc;
	struct imgcr_sigqueue *sigqueue;	/* proc->nr_sigqueue entries */
	struct imgcr_posix_timer *timers;	/* proc->nr_timers entries */
	const void *files;		/* raw: records are parsed on demand */
	size_t files_len;
	size_t xstate_len;		/* the main thread's */
};

/*
 * Read the headers and notes of @path (not the page data) and check them;
 * 0, or -1 after printing why.  image_close() in both cases.
 */
int image_open(struct image *img, const char *path);
/* The same for the file @name of the dump directory @dirfd (proc.h dir_open()). */
int image_openat(struct image *img, int dirfd, const char *name);
void image_close(struct image *img);
/* Record @i of the file table copied to @out (path truncated to fit); 0 or -1. */
int image_file(const struct image *img, unsigned int i, struct imgcr_file *out,
	       char *path, size_t path_size);
/*
 * @fn on each record of the file table in order, with its index and path,
 * until it returns nonzero (returned); -1 for a malformed table.
 */
int image_files_each(const struct image *img,
		     int (*fn)(unsigned int idx, const struct imgcr_file *rec, const char *path, void *arg),
		     void *arg);

#endif
