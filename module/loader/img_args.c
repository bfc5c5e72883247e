// SPDX-License-Identifier: GPL-2.0
/*
 * What imgcr restore passes after the image's name, in argv[1..9]:
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
 *   --imgcr-user=U:G	the caller (root) vouches for a task of user U
 *				only (imgcr restore as root of a directory U
 *				can write, userspace/trust.c): every thread's
 *				uids must be U, its gids G or among the
 *				caller's supplementary groups (the task's, set
 *				before the exec), and it has no capability
 *				(permitted, inheritable, ambient).  The image
 *				is U's file, which U may have rewritten since
 *				imgcr read it: checked here, on what the exec
 *				runs
 *   --imgcr-shmfd=I:FD,...	file I of the image (IMGCR_FILE_SHMEM, a memfd)
 *				is the caller's memfd on fd FD, already
 *				filled: mapped as it is, not recreated (an fd
 *				and a mapping of one memfd stay one object;
 *				img_parse.c checks it is a memfd of that name,
 *				size and access)
 *   --imgcr-userns=INODE	with --imgcr-creds: capabilities the image
 *				records in the user namespace of inode INODE
 *				(the dumped tree's own) are checked against
 *				and given in the caller's, which is the
 *				namespace restored for it; never when the
 *				caller is in the initial one (img_creds.c)
 *
 * Any other argument that begins with "--imgcr-" (misspelt, from a newer
 * imgcr, given twice, or after argv[11]) fails the exec, with its reason
 * on the status pipe: never quietly a different restore (a dropped
 * --imgcr-ids would run the task as root).  Other arguments are the
 * program's own and ignored.  They are read from the argument pages exec
 * built in the new mm, by img_parse() once the image's mappings are known
 * and before it opens the mapped files: before the point of no return, so
 * that a bad list fails the exec with the caller intact.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/namei.h>
#include <linux/pipe_fs_i.h>
#include <linux/uio.h>
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
#define IMG_NR_ARGS	13	/* argv[0], the image, and the eleven options */
#define SHMFD_OPT	"--imgcr-shmfd="
#define IDS_OPT		"--imgcr-ids"
#define SECCOMP_OPT	"--imgcr-seccomp="
#define USER_OPT	"--imgcr-user="
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
 * The exec writes through an open file of its own, non-blocking for good:
 * whoever shares the caller's may clear its O_NONBLOCK, and before 6.5
 * pipe_write() does not look at IOCB_NOWAIT (a full pipe would hold the
 * refused exec, and cred_guard_mutex, until the caller is killed).
 * Opening the pipe again adds a writer: it is the caller's own, which
 * writes to it already, and no reader waits for its last one meanwhile.
 * A named FIFO without readers cannot be opened again (-ENXIO): nobody
 * would read the status, so there is none, as before the reopen.
 */
static int parse_status(struct img *img, const char *arg)
{
	struct file *f, *own;
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
	own = dentry_open(&f->f_path, O_WRONLY | O_NONBLOCK, current_cred());
	fput(f);
	/* a named FIFO no one reads (-ENXIO): no status to write, as if none */
	if (PTR_ERR_OR_ZERO(own) == -ENXIO)
		return 0;
	if (IS_ERR(own)) {
		img_err(img, "%s: cannot open the pipe again (%pe)",
			STATUS_OPT, own);
		return PTR_ERR(own);
	}
	img->status = own;
	return 0;
bad:
	img_err(img, "%s is not a non-blocking pipe the caller writes to",
		STATUS_OPT);
	return -EINVAL;
}

/* "U:G" */
static int parse_user(struct img *img, char *arg)
{
	char *colon = strchr(arg, ':');

	if (!colon)
		goto bad;
	*colon = 0;
	if (kstrtou32(arg, 10, &img->user_uid) ||
	    kstrtou32(colon + 1, 10, &img->user_gid))
		goto bad;
	img->only_user = true;
	return 0;
bad:
	img_err(img, "%s takes UID:GID", USER_OPT);
	return -EINVAL;
}

static int img_twice(struct img *img, const char *opt)
{
	img_err(img, "%s is given twice", opt);
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
	for (i = 0; i < bprm->argc && p < end && !ret; i++) {
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
			if (i >= IMG_NR_ARGS && !only_status) {
				img_err(img, "argument %d (%s) comes after the %d the exec reads",
					i, STATUS_OPT, IMG_NR_ARGS - 1);
				ret = -E2BIG;
			} else if (!img->status_parsed && i < IMG_NR_ARGS) {
				/* the first one counts, also when it means none */
				img->status_parsed = true;
				ret = parse_status(img, arg + strlen(STATUS_OPT));
			}
		} else if (only_status || strncmp(arg, "--imgcr-", 8)) {
			continue;	/* not ours: the program's own */
		} else if (i >= IMG_NR_ARGS) {
			img_err(img, "argument %d (%.32s) comes after the %d the exec reads",
				i, arg, IMG_NR_ARGS - 1);
			ret = -E2BIG;
		} else if (!strncmp(arg, CLOEXEC_OPT, strlen(CLOEXEC_OPT))) {
			kfree(img->cloexec);
			img->cloexec = kstrdup(arg + strlen(CLOEXEC_OPT), GFP_KERNEL);
			if (!img->cloexec)
				ret = -ENOMEM;
		} else if (!strncmp(arg, SHMFD_OPT, strlen(SHMFD_OPT))) {
			if (img->shmfd) {
				ret = img_twice(img, SHMFD_OPT);
			} else {
				img->shmfd = kstrdup(arg + strlen(SHMFD_OPT), GFP_KERNEL);
				if (!img->shmfd)
					ret = -ENOMEM;
			}
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
		} else if (!strncmp(arg, KEEP_OPT, strlen(KEEP_OPT))) {
			ret = img->keep ? img_twice(img, KEEP_OPT) :
					  parse_keep(img, arg + strlen(KEEP_OPT));
		} else if (!strncmp(arg, ROOT_OPT, strlen(ROOT_OPT))) {
			ret = img->has_root ? img_twice(img, ROOT_OPT) :
					      parse_root(img, arg + strlen(ROOT_OPT));
		} else if (!strncmp(arg, USER_OPT, strlen(USER_OPT))) {
			ret = img->only_user ? img_twice(img, USER_OPT) :
					       parse_user(img, arg + strlen(USER_OPT));
		} else if (!strncmp(arg, USERNS_OPT, strlen(USERNS_OPT))) {
			if (img->old_userns) {
				ret = img_twice(img, USERNS_OPT);
			} else if (kstrtou64(arg + strlen(USERNS_OPT), 10, &img->old_userns) ||
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
		} else {
			/* misspelt, or from a newer imgcr: not a different restore */
			img_err(img, "unknown argument %d: %.32s", i, arg);
			ret = -EINVAL;
		}
	}
	/*
	 * all of them looked at; after an earlier refusal the status pipe,
	 * which comes last, is still to be found (img_status_report())
	 */
	if (!ret)
		img->status_parsed = true;
	kvfree(buf);
	return ret;
}

static bool caller_in_group(kgid_t g)
{
	const struct group_info *gi = current_cred()->group_info;
	int i;

	for (i = 0; i < gi->ngroups; i++)
		if (gid_eq(gi->gid[i], g))
			return true;
	return false;
}

/* --imgcr-user=U:G: the thread's credentials @t are entirely U's. */
static int img_user_creds(struct img *img, const struct imgcr_creds *t,
			  const char *who)
{
	struct user_namespace *ns = current_user_ns();
	const u32 uids[4] = { t->uid, t->euid, t->suid, t->fsuid };
	const u32 gids[4] = { t->gid, t->egid, t->sgid, t->fsgid };
	int i;

	for (i = 0; i < 4; i++) {
		kgid_t g = make_kgid(ns, gids[i]);

		if (uids[i] != img->user_uid ||
		    (gids[i] != img->user_gid &&
		     (!gid_valid(g) || !caller_in_group(g)))) {
			img_err(img, "%sthe task has uid %u gid %u, but the caller vouches only for uid %u's (%s%u:%u)",
				who, uids[i], gids[i], img->user_uid, USER_OPT,
				img->user_uid, img->user_gid);
			return -EPERM;
		}
	}
	if (t->cap_permitted | t->cap_inheritable | t->cap_ambient) {
		img_err(img, "%sthe task has capabilities, but the caller vouches only for uid %u's task without any (%s)",
			who, img->user_uid, USER_OPT);
		return -EPERM;
	}
	return 0;
}

/*
 * Under --imgcr-user, a thread with seccomp filters must have had
 * no_new_privs: the filters are installed with the caller's (root's)
 * CAP_SYS_ADMIN, and a filtered process without no_new_privs could carry
 * them into a set-user-ID program (the reason the kernel asks for one of
 * the two).  Entry @idx of img->seccomp: 0 the main thread.
 */
static int img_user_seccomp(struct img *img, unsigned int idx, const struct imgcr_creds *t,
			    const char *who)
{
	const struct imgcr_seccomp *sc = img->seccomp ? &img->seccomp[idx] : NULL;

	if (sc && (sc->nr_filters || sc->mode) && !(t->flags & IMGCR_CREDS_NO_NEW_PRIVS)) {
		img_err(img, "%sthe task ran under seccomp without no_new_privs, which only its own rights could allow; the caller vouches only for uid %u (%s)",
			who, img->user_uid, USER_OPT);
		return -EPERM;
	}
	return 0;
}

/*
 * A SysV shm segment is attached with the caller's rights (root's, with
 * CAP_IPC_OWNER): under --imgcr-user, an image that names one could map
 * any segment.  Refused.
 */
static int img_user_sysvshm(struct img *img)
{
	unsigned int i;

	for (i = 0; i < img->task.nr_vmas; i++)
		if (img->vmas[i].kind == IMGCR_VMA_SYSVSHM) {
			img_err(img, "the task maps SysV shm segment %llu, which the caller would attach with its own rights; the caller vouches only for uid %u (%s)",
				(unsigned long long)img->vmas[i].file, img->user_uid, USER_OPT);
			return -EPERM;
		}
	return 0;
}

static int img_check_user(struct img *img)
{
	char who[48];
	unsigned int i;
	int ret;

	if (!img->only_user)
		return 0;
	/* without its credentials, the task would run with the caller's (root's) */
	if (!img->has_creds) {
		img_err(img, "the image has no credentials; the caller vouches only for uid %u (%s)",
			img->user_uid, USER_OPT);
		return -EPERM;
	}
	ret = img_user_creds(img, &img->creds, "") ?:
	      img_user_seccomp(img, 0, &img->creds, "") ?: img_user_sysvshm(img);
	for (i = 0; i < img->proc.nr_threads && !ret; i++) {
		snprintf(who, sizeof(who), "thread %u (TID %u): ", i + 1,
			 img->threads[i].th.tid);
		ret = img_user_creds(img, &img->threads[i].creds, who) ?:
		      img_user_seccomp(img, i + 1, &img->threads[i].creds, who);
	}
	/*
	 * Its IDs are given only with --imgcr-creds --imgcr-ids; else the
	 * caller must already be that user (imgcr sets them itself when no
	 * thread needs the caller's right to choose TIDs), or U's image would
	 * run with the caller's (root's) IDs.
	 */
	if (!ret && !(img->set_creds && img->set_ids) &&
	    (!uid_eq(current_uid(), make_kuid(current_user_ns(), img->user_uid)) ||
	     !uid_eq(current_euid(), make_kuid(current_user_ns(), img->user_uid)))) {
		img_err(img, "the caller vouches for uid %u (%s) but neither is it nor asks for the task's IDs (--imgcr-creds --imgcr-ids)",
			img->user_uid, USER_OPT);
		return -EPERM;
	}
	return ret;
}

int img_parse_args(struct img *img)
{
	int ret = img_scan_args(img, false);

	return ret ? ret : img_check_user(img);
}

/*
 * "--imgcr-ids": the exec runs as the caller (root, so that the threads
 * get their TIDs), but the files the image maps are opened as the task
 * would open them, not with root's rights (an image names them: its user
 * could otherwise map any file root can read).  The credentials to open
 * them with: the caller's, with the main thread's fs uid and gid (checked
 * first as IDs the caller may give, so that no one opens as an ID it
 * could not take), the groups the caller set for the task before the
 * exec, and the effective capabilities it had among the caller's.  Its
 * real, effective and saved IDs are the task's too (checked the same):
 * whatever later judges an opened file by its f_cred sees the task's,
 * not root's.  NULL: open as the caller (no --imgcr-ids); an ERR_PTR:
 * refused.
 */
struct cred *img_task_fs_cred(struct img *img)
{
	const struct imgcr_creds *t = &img->creds;
	struct user_namespace *ns = current_user_ns();
	struct cred *new;
	int ret;

	if (!img->set_ids || !img->has_creds)
		return NULL;
	ret = img_ids_allowed(img, t, "");
	if (ret)
		return ERR_PTR(ret);
	new = prepare_creds();
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->uid = make_kuid(ns, t->uid);
	new->euid = make_kuid(ns, t->euid);
	new->suid = make_kuid(ns, t->suid);
	new->fsuid = make_kuid(ns, t->fsuid);
	new->gid = make_kgid(ns, t->gid);
	new->egid = make_kgid(ns, t->egid);
	new->sgid = make_kgid(ns, t->sgid);
	new->fsgid = make_kgid(ns, t->fsgid);
	new->cap_effective = cap_intersect(new->cap_effective,
					   imgcr_u64_cap(t->cap_effective));
	return new;
}

/*
 * Before the point of no return only: the arguments are read from the new
 * mm, which bprm holds until then.  The write never blocks: the file is
 * the exec's own, opened non-blocking (parse_status()), and is skipped
 * when no one reads the pipe (the write would send the caller SIGPIPE, killing
 * the process whose refused exec must let it go on).  Racy, harmless:
 * a reader closing in between makes the SIGPIPE the caller asked for.
 */
void img_status_report(struct img *img)
{
	size_t len = strnlen(img->reason, sizeof(img->reason));
	struct pipe_inode_info *pipe;
	struct iov_iter iter;
	struct kiocb kiocb;
	struct kvec kv;

	if (!len)
		return;
	if (!img->status_parsed)
		img_scan_args(img, true);
	if (!img->status)
		return;
	pipe = file_inode(img->status)->i_pipe;
	if (!pipe || !READ_ONCE(pipe->readers))
		goto out;
	/* one line; a full pipe (-EAGAIN) loses it, the kernel log has it */
	img->reason[min(len, sizeof(img->reason) - 1)] = '\n';
	kv.iov_base = img->reason;
	kv.iov_len = min(len + 1, sizeof(img->reason));
	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, kv.iov_len);
	init_sync_kiocb(&kiocb, img->status);
	kiocb.ki_flags |= IOCB_NOWAIT;
	vfs_iocb_iter_write(img->status, &kiocb, &iter);
out:
	img->reason[0] = 0;
}
