// SPDX-License-Identifier: GPL-2.0
/*
 * What imgcr restore passes after the image's name, in argv[1..8]:
 *
 *   --imgcr-cloexec=3,7,9	the fds the task had marked close-on-exec
 *				(exec itself closed the caller's)
 *   --imgcr-stop		restore the process stopped (SIGSTOP)
 *   --imgcr-stop=SIG		stopped by SIG: SIGSTOP, SIGTSTP, SIGTTIN or
 *				SIGTTOU (the signal its parent's waitpid()
 *				reports; the caller checked that SIG stops it)
 *   --imgcr-keep=S-E,S-E	anonymous mappings the caller already holds at
 *				their place, shared copy-on-write with its
 *				parent: restore in place (img_inplace.c)
 *   --imgcr-root=FD		the caller's fd of a directory: the image's
 *				paths of mapped files are under it, not under
 *				the caller's root (a task restored under
 *				chroot whose program is outside the jail).
 *				Any directory the caller holds open: it could
 *				open those files through it itself.
 *   --imgcr-creds		set each thread's capabilities, securebits and
 *				no_new_privs exactly from the image, within
 *				what the caller holds (img_creds.c); without
 *				it the exec's are only reduced to the image's
 *   --imgcr-status=FD		the caller's write end of a non-blocking pipe:
 *				a refused exec writes its reason there (the
 *				text of the kernel log line, without the
 *				image's name) before it fails.  The caller
 *				reads it to say why; the kernel log keeps its
 *				rate-limited line.  Only refusals before the
 *				point of no return reach it: after it, the
 *				caller is the process being killed.
 *   --imgcr-ids		with --imgcr-creds: set each thread's real,
 *				effective, saved and fs uids and gids from the
 *				image too, last, after the threads are made
 *				with the caller's rights; only IDs the caller
 *				could give itself (img_creds.c)
 *   --imgcr-seccomp=FD	the caller's fd of the seccomp file imgcr dump
 *				wrote: each thread's filters (img_seccomp.c),
 *				read here, before the point of no return
 *   --imgcr-userns=INODE	with --imgcr-creds: capabilities the image
 *				records in the user namespace of inode INODE
 *				(the dumped tree's own) are checked against
 *				and given in the caller's, which is the
 *				namespace restored for it; never when the
 *				caller is in the initial one (img_creds.c)
 *
 * Anything else is ignored.  They are read from the argument pages exec
 * built in the new mm, by img_parse() once the image's mappings are known
 * and before it opens the mapped files: before the point of no return, so
 * that a bad list fails the exec with the caller intact.
 */
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/namei.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "compat.h"
#include "loader.h"

#define IMG_ARGS_MAX	(32 * 1024)
#define IMG_KEEP_MAX	512

#define CLOEXEC_OPT	"--imgcr-cloexec="
#define STOP_OPT	"--imgcr-stop"
#define KEEP_OPT	"--imgcr-keep="
#define ROOT_OPT	"--imgcr-root="
#define CREDS_OPT	"--imgcr-creds"
#define STATUS_OPT	"--imgcr-status="
#define IMG_NR_ARGS	10	/* argv[0], the image, and the nine above */
#define IDS_OPT		"--imgcr-ids"
#define SECCOMP_OPT	"--imgcr-seccomp="
#define USERNS_OPT	"--imgcr-userns="

/* Copy up to @len bytes of the argument strings (argv[0] first). */
static long read_arg_pages(struct linux_binprm *bprm, char *buf, size_t len)
{
	struct mm_struct *mm = bprm->mm;
	unsigned long pos = bprm->p;
	size_t done = 0;

	len = min_t(unsigned long, len, bprm->vma->vm_end - pos);
	mmap_read_lock(mm);
	while (done < len) {
		size_t off = offset_in_page(pos + done);
		size_t n = min_t(size_t, PAGE_SIZE - off, len - done);
		struct page *page;

		if (imgcr_gup_remote(mm, pos + done, 1, 0, &page) != 1)
			break;
		memcpy_from_page(buf + done, page, off, n);
		put_page(page);
		done += n;
	}
	mmap_read_unlock(mm);
	return done;
}

static int keep_cmp(const void *a, const void *b)
{
	const struct img_keep *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* "FD": a directory the caller has open. */
static int parse_root(struct img *img, const char *arg)
{
	struct file *f;
	unsigned int fd;

	if (kstrtouint(arg, 10, &fd))
		goto bad;
	f = fget(fd);
	if (!f)
		goto bad;
	if (!d_is_dir(f->f_path.dentry)) {
		fput(f);
		goto bad;
	}
	img->root = f->f_path;
	path_get(&img->root);
	img->has_root = true;
	fput(f);
	return 0;
bad:
	img_err(img, "%s is not an open directory of the caller", ROOT_OPT);
	return -EINVAL;
}

/*
 * A mapping may be kept if it is plain private anonymous memory that was
 * writable (its pages can be the parent's), at the page offset a fresh
 * mapping at its address gets.
 */
static bool vma_keepable(const struct imgcr_vma *v)
{
	return v->kind == IMGCR_VMA_ANON &&
	       (v->prot & IMGCR_PROT_WRITE || v->flags & IMGCR_VMA_ACCOUNT) &&
	       !(v->flags & ~(IMGCR_VMA_ACCOUNT | IMGCR_VMA_HUGEPAGE |
			      IMGCR_VMA_NOHUGEPAGE | IMGCR_VMA_DONTDUMP)) &&
	       v->pgoff == v->start >> PAGE_SHIFT;
}

/* "S-E,S-E,...", hex: sorted, disjoint, each exactly a keepable VMA. */
static int parse_keep(struct img *img, char *arg)
{
	unsigned int n = 0, i, vi = 0;
	char *tok;

	img->keep = kvcalloc(IMG_KEEP_MAX, sizeof(*img->keep), GFP_KERNEL);
	img->kept = bitmap_zalloc(img->task.nr_vmas, GFP_KERNEL);
	if (!img->keep || !img->kept)
		return -ENOMEM;
	while ((tok = strsep(&arg, ","))) {
		char *end = strchr(tok, '-');
		u64 s, e;

		if (n == IMG_KEEP_MAX || !end)
			goto bad;
		*end++ = 0;
		if (kstrtou64(tok, 16, &s) || kstrtou64(end, 16, &e))
			goto bad;
		img->keep[n].start = s;
		img->keep[n++].end = e;
	}
	sort(img->keep, n, sizeof(*img->keep), keep_cmp, NULL);
	for (i = 0; i < n; i++) {
		const struct img_keep *k = &img->keep[i];

		if (i && k->start < img->keep[i - 1].end)
			goto bad;
		while (vi < img->task.nr_vmas && img->vmas[vi].end <= k->start)
			vi++;
		if (vi == img->task.nr_vmas || img->vmas[vi].start != k->start ||
		    img->vmas[vi].end != k->end ||
		    !vma_keepable(&img->vmas[vi]))
			goto bad;
		__set_bit(vi, img->kept);
	}
	img->nr_keep = n;
	return 0;
bad:
	img_err(img, "%s names a mapping the image has not as private anonymous memory",
		KEEP_OPT);
	return -EINVAL;
}

/*
 * "FD": a pipe the caller has open for writing, non-blocking (a full pipe
 * must not hold up the exec).  Writing to it is what the caller could do.
 */
static int parse_status(struct img *img, const char *arg)
{
	struct file *f;
	unsigned int fd;

	if (kstrtouint(arg, 10, &fd))
		goto bad;
	f = fget(fd);
	if (!f)
		goto bad;
	if (!S_ISFIFO(file_inode(f)->i_mode) || !(f->f_mode & FMODE_WRITE) ||
	    !(f->f_flags & O_NONBLOCK)) {
		fput(f);
		goto bad;
	}
	img->status = f;
	return 0;
bad:
	img_err(img, "%s is not a non-blocking pipe the caller writes to",
		STATUS_OPT);
	return -EINVAL;
}

/*
 * Read the arguments; all of them, or with @only_status only the status
 * pipe (a refusal before img_parse_args() ran).
 */
static int img_scan_args(struct img *img, bool only_status)
{
	struct linux_binprm *bprm = img->bprm;
	char *buf, *p, *end;
	long len;
	int i, ret = 0;

	img->status_parsed = true;

	buf = kvmalloc(IMG_ARGS_MAX + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	len = read_arg_pages(bprm, buf, IMG_ARGS_MAX);
	if (len < min_t(unsigned long, IMG_ARGS_MAX, bprm->vma->vm_end - bprm->p)) {
		kvfree(buf);
		return -EFAULT;
	}
	buf[len] = 0;
	p = buf;
	end = buf + len;
	for (i = 0; i < bprm->argc && i < IMG_NR_ARGS && p < end && !ret; i++) {
		char *arg = p;

		p += strlen(p) + 1;
		if (p > end && !strncmp(arg, "--imgcr-", 8)) {
			if (!only_status)
				img_err(img, "argument %d is too long", i);
			ret = -E2BIG;	/* not quietly a different restore */
			break;
		}
		if (!i || p > end)	/* argv[0]; a string cut by our limit */
			continue;
		if (!strncmp(arg, STATUS_OPT, strlen(STATUS_OPT))) {
			if (!img->status)
				ret = parse_status(img, arg + strlen(STATUS_OPT));
		} else if (only_status) {
			continue;
		} else if (!strncmp(arg, CLOEXEC_OPT, strlen(CLOEXEC_OPT))) {
			kfree(img->cloexec);
			img->cloexec = kstrdup(arg + strlen(CLOEXEC_OPT), GFP_KERNEL);
			if (!img->cloexec)
				ret = -ENOMEM;
		} else if (!strcmp(arg, STOP_OPT)) {
			img->stop_sig = SIGSTOP;
		} else if (!strncmp(arg, STOP_OPT "=", strlen(STOP_OPT "="))) {
			unsigned int sig;

			if (kstrtouint(arg + strlen(STOP_OPT "="), 10, &sig) ||
			    (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)) {
				img_err(img, "bad %s: not a stop signal", arg);
				ret = -EINVAL;
				break;
			}
			img->stop_sig = sig;
		} else if (!strcmp(arg, CREDS_OPT)) {
			img->set_creds = true;
		} else if (!strcmp(arg, IDS_OPT)) {
			img->set_ids = true;
		} else if (!strncmp(arg, KEEP_OPT, strlen(KEEP_OPT)) && !img->keep) {
			ret = parse_keep(img, arg + strlen(KEEP_OPT));
		} else if (!strncmp(arg, ROOT_OPT, strlen(ROOT_OPT)) && !img->has_root) {
			ret = parse_root(img, arg + strlen(ROOT_OPT));
		} else if (!strncmp(arg, USERNS_OPT, strlen(USERNS_OPT))) {
			if (kstrtou64(arg + strlen(USERNS_OPT), 10, &img->old_userns) ||
			    !img->old_userns) {
				img_err(img, "%s takes an inode number", USERNS_OPT);
				ret = -EINVAL;
			}
		} else if (!strncmp(arg, SECCOMP_OPT, strlen(SECCOMP_OPT))) {
			unsigned int fd;

			if (kstrtouint(arg + strlen(SECCOMP_OPT), 10, &fd)) {
				img_err(img, "%s takes an fd", SECCOMP_OPT);
				ret = -EINVAL;
			} else {
				ret = img_seccomp_read(img, fd);
			}
		}
	}
	kvfree(buf);
	return ret;
}

int img_parse_args(struct img *img)
{
	return img_scan_args(img, false);
}

/*
 * Before the point of no return only: the arguments are read from the new
 * mm, which bprm holds until then.
 */
void img_status_report(struct img *img)
{
	loff_t pos = 0;
	size_t len = strnlen(img->reason, sizeof(img->reason));

	if (!len)
		return;
	if (!img->status_parsed)
		img_scan_args(img, true);
	if (!img->status)
		return;
	/* one line; a full pipe (-EAGAIN) loses it, the kernel log has it */
	img->reason[min(len, sizeof(img->reason) - 1)] = '\n';
	kernel_write(img->status, img->reason,
		     min(len + 1, sizeof(img->reason)), &pos);
	img->reason[0] = 0;
}
