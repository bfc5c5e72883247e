// SPDX-License-Identifier: GPL-2.0
/*
 * Read an image and check every byte the restore will use, before
 * begin_new_exec(): until then a failing execve() leaves the caller as it
 * was.  The rules mirror the format in include/uapi/linux/imgcr.h; anything
 * outside them is refused rather than guessed at.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/personality.h>
#include <linux/regset.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/auxvec.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/crc32.h>
#include <linux/futex.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/vdso.h>
#include <asm/segment.h>

#include "compat.h"
#include "loader.h"

/* The lowest address the loader maps (Debian's default mmap_min_addr). */
#define IMG_MIN_ADDR	65536UL

#define SA_KNOWN (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_RESTORER | \
		  SA_ONSTACK | SA_RESTART | SA_NODEFER | SA_RESETHAND | \
		  SA_EXPOSE_TAGBITS)

#define PER_FLAGS_OK (ADDR_NO_RANDOMIZE | ADDR_COMPAT_LAYOUT | \
		      READ_IMPLIES_EXEC | UNAME26 | WHOLE_SECONDS | \
		      STICKY_TIMEOUTS | SHORT_INODE)

static bool user_addr_ok(u64 a)
{
	return a < TASK_SIZE_MAX;
}

static bool user_range_ok(u64 a, u64 len)
{
	return a < TASK_SIZE_MAX && len <= TASK_SIZE_MAX - a;
}

static int img_read(struct img *img, void *buf, size_t len, loff_t pos)
{
	ssize_t n;

	if (pos < 0 || len > img->size || pos > img->size - len)
		return -EINVAL;
	n = kernel_read(img->bprm->file, buf, len, &pos);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/* ENOEXEC for anything that is not an x86_64 ELF core file. */
static int img_check_elf(struct img *img)
{
	const struct elf64_hdr *eh = (const void *)img->bprm->buf;

	BUILD_BUG_ON(sizeof(*eh) > BINPRM_BUF_SIZE);
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_type != ET_CORE || eh->e_machine != EM_X86_64)
		return -ENOEXEC;
	if (eh->e_phentsize != sizeof(struct elf64_phdr) || !eh->e_phnum ||
	    eh->e_phnum == PN_XNUM)
		return -ENOEXEC;
	img->nphdrs = eh->e_phnum;
	img->size = i_size_read(file_inode(img->bprm->file));
	img->phdrs = kvmalloc_array(img->nphdrs, sizeof(*img->phdrs),
				    GFP_KERNEL_ACCOUNT);
	if (!img->phdrs)
		return -ENOMEM;
	if (img_read(img, img->phdrs, img->nphdrs * sizeof(*img->phdrs),
		     eh->e_phoff))
		return -ENOEXEC;
	return 0;
}

struct note_slot {
	const char *owner;
	u32 type;
	const void *desc;
	size_t len;
};

enum { N_PRSTATUS, N_XSTATE, N_AUXV, N_TASK, N_SIGACT, N_VMAS, N_FILES, N_MAX };

static const struct note_slot note_kinds[N_MAX] = {
	[N_PRSTATUS] = { "CORE", IMGCR_NT_PRSTATUS },
	[N_XSTATE] = { "LINUX", IMGCR_NT_X86_XSTATE },
	[N_AUXV] = { "CORE", IMGCR_NT_AUXV },
	[N_TASK] = { IMGCR_NOTE_OWNER, NT_IMGCR_TASK },
	[N_SIGACT] = { IMGCR_NOTE_OWNER, NT_IMGCR_SIGACT },
	[N_VMAS] = { IMGCR_NOTE_OWNER, NT_IMGCR_VMAS },
	[N_FILES] = { IMGCR_NOTE_OWNER, NT_IMGCR_FILES },
};

/*
 * Walk the note segment.  Returns -ENOEXEC if it has no imgcr task note
 * (an ordinary core file), -EINVAL if it is malformed.
 */
static int img_find_notes(struct img *img, struct note_slot *slots)
{
	const char *p = img->notes, *end = p + img->notes_len;
	int i, ret = 0;

	memcpy(slots, note_kinds, sizeof(note_kinds));
	while (p < end) {
		const struct elf64_note *n = (const void *)p;
		const char *name, *desc;
		size_t nsz, dsz;

		if (end - p < sizeof(*n)) {
			ret = -EINVAL;
			break;
		}
		nsz = ALIGN((size_t)n->n_namesz, 4);
		dsz = ALIGN((size_t)n->n_descsz, 4);
		name = p + sizeof(*n);
		if (nsz > end - name || dsz > end - name - nsz) {
			ret = -EINVAL;
			break;
		}
		desc = name + nsz;
		p = desc + dsz;
		for (i = 0; i < N_MAX; i++) {
			struct note_slot *s = &slots[i];

			if (n->n_type != s->type ||
			    n->n_namesz != strlen(s->owner) + 1 ||
			    memcmp(name, s->owner, n->n_namesz))
				continue;
			if (s->desc)
				ret = -EINVAL;	/* duplicate */
			s->desc = desc;
			s->len = n->n_descsz;
		}
	}
	if (!slots[N_TASK].desc)
		return -ENOEXEC;
	if (ret)
		img_err(img, "malformed note segment");
	return ret;
}

static int img_read_notes(struct img *img, struct note_slot *slots)
{
	const struct elf64_phdr *note = NULL;
	unsigned int i;
	int ret;

	for (i = 0; i < img->nphdrs; i++) {
		if (img->phdrs[i].p_type != PT_NOTE)
			continue;
		if (note)
			return -ENOEXEC;	/* ours have exactly one */
		note = &img->phdrs[i];
	}
	if (!note || !note->p_filesz || note->p_filesz > IMGCR_MAX_NOTES_SIZE)
		return -ENOEXEC;
	img->notes_len = note->p_filesz;
	img->notes = kvmalloc(img->notes_len, GFP_KERNEL_ACCOUNT);
	if (!img->notes)
		return -ENOMEM;
	ret = img_read(img, img->notes, img->notes_len, note->p_offset);
	if (ret)
		return -ENOEXEC;
	return img_find_notes(img, slots);
}

static int img_copy_note(struct img *img, const struct note_slot *s,
			 void *dst, size_t len, const char *what)
{
	if (!s->desc || s->len != len) {
		img_err(img, "%s note missing or of wrong size", what);
		return -EINVAL;
	}
	memcpy(dst, s->desc, len);
	return 0;
}

static int img_check_regs(struct img *img)
{
	const u64 *r = img->prstatus.regs;

	if (r[IMGCR_REG_CS] != __USER_CS || r[IMGCR_REG_SS] != __USER_DS ||
	    r[IMGCR_REG_DS] || r[IMGCR_REG_ES] || r[IMGCR_REG_FS] ||
	    r[IMGCR_REG_GS]) {
		img_err(img, "unsupported segment registers");
		return -EINVAL;
	}
	if (!user_addr_ok(r[IMGCR_REG_RIP]) || !user_addr_ok(r[IMGCR_REG_RSP]) ||
	    !user_addr_ok(r[IMGCR_REG_FS_BASE]) ||
	    !user_addr_ok(r[IMGCR_REG_GS_BASE])) {
		img_err(img, "register outside user space");
		return -EINVAL;
	}
	return 0;
}

/* Log the first rule an image breaks; returns @ok. */
static bool require(struct img *img, bool ok, const char *what)
{
	if (!ok)
		img_err(img, "invalid image: %s", what);
	return ok;
}

/* What do_sigaltstack() may have stored: mode 0, SS_ONSTACK or SS_DISABLE. */
static bool sigaltstack_ok(const struct imgcr_task *t)
{
	u32 mode = t->sas_ss_flags & ~(u32)SS_AUTODISARM;

	return (mode == 0 || mode == SS_ONSTACK || mode == SS_DISABLE) &&
	       user_range_ok(t->sas_ss_sp, t->sas_ss_size);
}

static int img_check_task(struct img *img)
{
	struct imgcr_task *t = &img->task;
	int i;

	if (t->version != IMGCR_FORMAT_VERSION) {
		img_err(img, "image format version %u, this module reads version %u",
			t->version, IMGCR_FORMAT_VERSION);
		return -EINVAL;
	}
	if (!require(img, !(t->flags & ~(IMGCR_TASK_RESTARTED_SYSCALL |
				    IMGCR_TASK_INTERRUPTED_SYSCALL)),
		"unknown task flags"))
		return -EINVAL;
	if (!require(img, (t->personality & PER_MASK) == PER_LINUX &&
		!(t->personality & ~PER_MASK & ~PER_FLAGS_OK),
		"personality"))
		return -EINVAL;
	if (!require(img, t->nr_vmas && t->nr_vmas <= IMGCR_MAX_VMAS &&
		t->nr_files <= t->nr_vmas, "mapping count"))
		return -EINVAL;
	if (!require(img, user_addr_ok(t->start_code) && user_addr_ok(t->end_code) &&
		user_addr_ok(t->start_data) && user_addr_ok(t->end_data) &&
		user_addr_ok(t->start_brk) && user_addr_ok(t->brk) &&
		user_addr_ok(t->start_stack) && user_addr_ok(t->arg_start) &&
		user_addr_ok(t->arg_end) && user_addr_ok(t->env_start) &&
		user_addr_ok(t->env_end) && t->start_code <= t->end_code &&
		t->start_data <= t->end_data && t->start_brk <= t->brk &&
		t->arg_start <= t->arg_end && t->env_start <= t->env_end,
		"memory layout fields"))
		return -EINVAL;
	if (!require(img, sigaltstack_ok(t), "alternate signal stack"))
		return -EINVAL;
	if (!require(img, user_addr_ok(t->clear_child_tid), "clear_child_tid"))
		return -EINVAL;
	if (!require(img, user_addr_ok(t->robust_list) &&
		t->robust_list_len == (t->robust_list ?
				       sizeof(struct robust_list_head) : 0),
		"robust futex list"))
		return -EINVAL;
	if (t->rseq) {
		if (!require(img, imgcr_rseq_len_ok(t->rseq_len) && IS_ALIGNED(t->rseq, 32) &&
			user_range_ok(t->rseq, t->rseq_len), "rseq area"))
			return -EINVAL;
	} else {
		if (!require(img, !t->rseq_len && !t->rseq_sig, "rseq area"))
			return -EINVAL;
	}
	t->comm[sizeof(t->comm) - 1] = 0;
	t->blocked &= ~(sigmask(SIGKILL) | sigmask(SIGSTOP));

	for (i = 0; i < IMGCR_NSIG; i++) {
		struct imgcr_sigaction *sa = &img->sigact[i];

		if (!require(img, user_addr_ok(sa->handler) &&
			user_addr_ok(sa->restorer) &&
			!(sa->flags & ~(u64)SA_KNOWN), "signal action"))
			return -EINVAL;
		if (!require(img, (i + 1 != SIGKILL && i + 1 != SIGSTOP) ||
			(!sa->handler && !sa->flags), "SIGKILL/SIGSTOP action"))
			return -EINVAL;
		sa->mask &= ~(sigmask(SIGKILL) | sigmask(SIGSTOP));
	}
	return 0;
}

/*
 * The vdso is the running kernel's: an image can only go back to a kernel
 * whose vdso has the same size and contents, or its code would jump into
 * the middle of different instructions.
 */
static int img_check_vdso(struct img *img)
{
	const struct vdso_image *vi = current->mm->context.vdso_image;
	const struct imgcr_task *t = &img->task;

	if (!t->vdso)
		return 0;
	if (!vi || !current->mm->context.vdso) {
		img_err(img, "the image uses a vdso but this process has none");
		return -EOPNOTSUPP;
	}
	if (t->vdso_size != vi->size || t->vvar_size != -vi->sym_vvar_start ||
	    t->vdso_crc != crc32_le(~0, vi->data, vi->size)) {
		img_err(img, "image was dumped on a different kernel (vdso differs)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static bool file_is_noexec(struct file *f)
{
	return (f->f_path.mnt->mnt_flags & MNT_NOEXEC) ||
	       (f->f_path.mnt->mnt_sb->s_iflags & SB_I_NOEXEC);
}

static int img_check_vmas(struct img *img)
{
	const struct imgcr_task *t = &img->task;
	unsigned int i, nvdso = 0, nvvar = 0;
	u64 prev_end = IMG_MIN_ADDR;
	const struct img_file *f;
	bool shared;

	for (i = 0; i < t->nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		if (v->start < prev_end || v->start >= v->end ||
		    !PAGE_ALIGNED(v->start) || !PAGE_ALIGNED(v->end) ||
		    v->end > TASK_SIZE_MAX || v->prot & ~7u)
			goto bad;
		prev_end = v->end;
		switch (v->kind) {
		case IMGCR_VMA_ANON:
			if (v->file != IMGCR_NO_FILE || v->flags &
			    ~(IMGCR_VMA_GROWSDOWN | IMGCR_VMA_ACCOUNT | IMGCR_VMA_NORESERVE) ||
			    v->pgoff > (ULONG_MAX >> PAGE_SHIFT) -
				       ((v->end - v->start) >> PAGE_SHIFT))
				goto bad;
			break;
		case IMGCR_VMA_FILE:
			if (v->file >= img->nr_files || v->flags &
			    ~(IMGCR_VMA_SHARED | IMGCR_VMA_ACCOUNT | IMGCR_VMA_NORESERVE) ||
			    v->pgoff > (ULONG_MAX >> PAGE_SHIFT) -
				       ((v->end - v->start) >> PAGE_SHIFT))
				goto bad;
			f = &img->files[v->file];
			shared = v->flags & IMGCR_VMA_SHARED;
			/* shmem objects only shared; writes need a writable file */
			if ((f->id.flags & IMGCR_FILE_SHMEM && !shared) ||
			    (shared && v->flags & IMGCR_VMA_ACCOUNT) ||
			    (shared && v->prot & IMGCR_PROT_WRITE &&
			     !(f->id.flags & (IMGCR_FILE_WRITE | IMGCR_FILE_SHMEM))))
				goto bad;
			if (v->prot & IMGCR_PROT_EXEC && file_is_noexec(f->file)) {
				img_err(img, "%s is on a noexec mount", f->path);
				return -EACCES;
			}
			break;
		case IMGCR_VMA_VDSO:
			if (v->start != t->vdso ||
			    v->end - v->start != t->vdso_size)
				goto bad;
			nvdso++;
			break;
		case IMGCR_VMA_VVAR:
			if (v->start != t->vdso - t->vvar_size ||
			    v->end != t->vdso)
				goto bad;
			nvvar++;
			break;
		default:
			goto bad;
		}
		if (v->kind != IMGCR_VMA_FILE && v->file != IMGCR_NO_FILE)
			goto bad;
		if (v->kind >= IMGCR_VMA_VDSO && (v->flags || v->pgoff))
			goto bad;
	}
	if (nvdso != (t->vdso ? 1 : 0) || nvvar != nvdso)
		goto bad;
	return 0;
bad:
	img_err(img, "invalid memory map (mapping %u)", i);
	return -EINVAL;
}

/* PT_LOAD segments: sorted, page aligned, each inside one dumped VMA. */
static int img_check_loads(struct img *img)
{
	const struct imgcr_vma *v = img->vmas, *vend = v + img->task.nr_vmas;
	u64 prev_end = 0;
	unsigned int i;

	for (i = 0; i < img->nphdrs; i++) {
		const struct elf64_phdr *ph = &img->phdrs[i];

		if (ph->p_type == PT_NOTE)
			continue;
		if (ph->p_type != PT_LOAD || !ph->p_filesz ||
		    ph->p_filesz != ph->p_memsz ||
		    !PAGE_ALIGNED(ph->p_filesz) || !PAGE_ALIGNED(ph->p_vaddr) ||
		    !PAGE_ALIGNED(ph->p_offset) || ph->p_offset > img->size ||
		    ph->p_filesz > img->size - ph->p_offset ||
		    ph->p_vaddr < prev_end ||
		    !user_range_ok(ph->p_vaddr, ph->p_filesz))
			goto bad;
		prev_end = ph->p_vaddr + ph->p_filesz;
		while (v < vend && v->end <= ph->p_vaddr)
			v++;
		if (v == vend || ph->p_vaddr < v->start || prev_end > v->end ||
		    v->kind > IMGCR_VMA_FILE)
			goto bad;
		/* a shared file's contents are the file's, not the image's */
		if (v->kind == IMGCR_VMA_FILE && v->flags & IMGCR_VMA_SHARED &&
		    !(img->files[v->file].id.flags & IMGCR_FILE_SHMEM))
			goto bad;
	}
	return 0;
bad:
	img_err(img, "invalid memory segment (program header %u, %#llx+%#llx at offset %#llx)",
		i, img->phdrs[i].p_vaddr, img->phdrs[i].p_filesz,
		img->phdrs[i].p_offset);
	return -EINVAL;
}

/* A file the image maps, opened with the caller's rights as it was. */
static int img_open_file(struct img *img, struct img_file *f)
{
	int flags = O_LARGEFILE | (f->id.flags & IMGCR_FILE_WRITE ? O_RDWR : O_RDONLY);
	struct path path;
	struct inode *inode;
	struct timespec64 mt;
	int ret;

	if (f->id.flags & IMGCR_FILE_SHMEM) {
		/* Recreated empty; PT_LOAD segments refill it after the exec. */
		if (f->id.size > MAX_LFS_FILESIZE)
			return -EINVAL;
		f->file = shmem_file_setup(f->path, f->id.size, VM_NORESERVE);
		if (IS_ERR(f->file)) {
			ret = PTR_ERR(f->file);
			f->file = NULL;
			img_err(img, "cannot create shared memory %s (%d)", f->path, ret);
			return ret;
		}
		return 0;
	}
	/*
	 * Only a regular file can be the one that was mapped: look before
	 * opening, so that an image naming a FIFO or a device can neither
	 * block the exec nor open the device.  O_NONBLOCK covers a swap of
	 * the path in between; the identity check below catches it.
	 */
	ret = kern_path(f->path, LOOKUP_FOLLOW, &path);
	if (!ret) {
		if (!d_is_reg(path.dentry))
			ret = -ESTALE;
		path_put(&path);
	}
	if (ret) {
		img_err(img, "mapped file %s is missing or not a regular file (%d)",
			f->path, ret);
		return ret;
	}
	f->file = filp_open(f->path, flags | O_NONBLOCK | O_NOCTTY, 0);
	if (IS_ERR(f->file)) {
		ret = PTR_ERR(f->file);
		f->file = NULL;
		img_err(img, "cannot open mapped file %s (%d)", f->path, ret);
		return ret;
	}
	inode = file_inode(f->file);
	mt = imgcr_inode_mtime(inode);
	if (f->id.dev != new_encode_dev(inode->i_sb->s_dev) ||
	    f->id.ino != inode->i_ino || f->id.size != i_size_read(inode) ||
	    f->id.mtime_sec != mt.tv_sec || f->id.mtime_nsec != mt.tv_nsec ||
	    !S_ISREG(inode->i_mode)) {
		img_err(img, "mapped file %s changed since the dump", f->path);
		return -ESTALE;
	}
	would_dump(img->bprm, f->file);
	return 0;
}

/* Parse the file table, then open every file. */
static int img_open_files(struct img *img, const struct note_slot *s)
{
	const char *p = s->desc, *end = p + s->len;
	unsigned int i;
	int ret;

	if (!s->desc)
		return img->task.nr_files ? -EINVAL : 0;
	img->files = kvcalloc(img->task.nr_files, sizeof(*img->files),
			      GFP_KERNEL_ACCOUNT);
	if (!img->files && img->task.nr_files)
		return -ENOMEM;
	for (i = 0; i < img->task.nr_files; i++) {
		struct img_file *f = &img->files[i];

		if (end - p < sizeof(f->id))
			goto bad;
		memcpy(&f->id, p, sizeof(f->id));
		if (f->id.reclen % 8 || f->id.reclen > end - p ||
		    f->id.path_len < 2 || f->id.path_len > IMGCR_MAX_PATH ||
		    f->id.reclen < sizeof(f->id) + f->id.path_len ||
		    f->id.flags & ~(IMGCR_FILE_WRITE | IMGCR_FILE_SHMEM) ||
		    f->id.pad0)
			goto bad;
		f->path = p + sizeof(f->id);
		if (strnlen(f->path, f->id.path_len) != f->id.path_len - 1)
			goto bad;
		if (f->id.flags & IMGCR_FILE_SHMEM ?
		    f->id.path_len > NAME_MAX + 1 : f->path[0] != '/')
			goto bad;
		p += f->id.reclen;
	}
	if (p != end)
		goto bad;
	for (i = 0; i < img->task.nr_files; i++) {
		img->nr_files = i + 1;
		ret = img_open_file(img, &img->files[i]);
		if (ret)
			return ret;
	}
	return 0;
bad:
	img_err(img, "invalid file table");
	return -EINVAL;
}

/*
 * /proc/PID/exe.  The kernel lets a task change it (prctl PR_SET_MM_MAP)
 * only with CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN in its user namespace,
 * and only to a file it may execute: /proc/PID/exe is what tools trust to
 * tell which program a process is.  A caller without the capability keeps
 * what exec set, the image file.  exec's own rule applies too: nobody may
 * be writing to the file.
 */
static int img_take_exe(struct img *img)
{
	struct user_namespace *ns = current_user_ns();
	struct img_file *f;

	if (img->task.exe_file == IMGCR_NO_FILE)
		return 0;
	if (img->task.exe_file >= img->nr_files)
		return -EINVAL;
	f = &img->files[img->task.exe_file];
	if (f->id.flags & IMGCR_FILE_SHMEM)
		return -EINVAL;
	if (!ns_capable_noaudit(ns, CAP_CHECKPOINT_RESTORE) &&
	    !ns_capable_noaudit(ns, CAP_SYS_ADMIN))
		return 0;
	if (file_is_noexec(f->file) || file_permission(f->file, MAY_EXEC)) {
		img_err(img, "%s: the caller may not execute it (/proc/PID/exe)",
			f->path);
		return -EACCES;
	}
	if (imgcr_exe_deny_write(f->file)) {
		img_err(img, "%s is open for writing", f->path);
		return -ETXTBSY;
	}
	img->exe = f->file;
	return 0;
}

static const struct user_regset *xstate_regset(void)
{
	const struct user_regset_view *view = task_user_regset_view(current);
	unsigned int i;

	for (i = 0; i < view->n; i++)
		if (view->regsets[i].core_note_type == IMGCR_NT_X86_XSTATE)
			return &view->regsets[i];
	return NULL;
}

/*
 * Check the xstate by loading it into a scratch copy of our own fpstate
 * with the very function the restore will use: if this succeeds, so will
 * the real one after the point of no return.
 */
static int img_check_xstate(struct img *img, const struct note_slot *s)
{
	struct fpstate *cur = current->thread.fpu.fpstate, *scratch;
	const struct user_regset *rs = xstate_regset();
	struct fpu_guest g = {};
	size_t fsize;
	u64 xfeatures;
	int ret;

	if (!rs || !s->desc || s->len != rs->n * rs->size ||
	    s->len != img->task.xstate_size) {
		img_err(img, "xstate note missing or of a size this CPU does not use");
		return -EINVAL;
	}
	memcpy(&xfeatures, (const u8 *)s->desc + 512, sizeof(xfeatures));
	if (xfeatures & ~cur->user_xfeatures) {
		img_err(img, "image uses CPU state components %#llx this CPU lacks",
			xfeatures & ~cur->user_xfeatures);
		return -EOPNOTSUPP;
	}
	/*
	 * Dynamically enabled state would WARN in the copy below if the
	 * caller has not enabled it, and is gone after exec if it has.
	 */
	if (xfeatures & (cur->xfd | XFEATURE_MASK_XTILE_DATA)) {
		img_err(img, "image uses dynamically enabled state (AMX); not supported");
		return -EOPNOTSUPP;
	}
	img->xstate_size = s->len;
	img->xstate = kvmalloc(s->len, GFP_KERNEL_ACCOUNT);
	if (!img->xstate)
		return -ENOMEM;
	memcpy(img->xstate, s->desc, s->len);

	fsize = offsetof(struct fpstate, regs) + cur->size;
	scratch = kvmalloc(fsize, GFP_KERNEL_ACCOUNT);
	if (!scratch)
		return -ENOMEM;
	memcpy(scratch, cur, fsize);
	g.fpstate = scratch;
	ret = fpu_copy_uabi_to_guest_fpstate(&g, img->xstate,
					     cur->user_xfeatures, &img->pkru);
	kvfree(scratch);
	if (ret) {
		img_err(img, "invalid xstate (%d)", ret);
		return -EINVAL;
	}
	return 0;
}

/*
 * Readers of mm->saved_auxv (/proc/PID/auxv, core dumps) scan it up to the
 * AT_NULL entry, as prctl(PR_SET_MM_AUXV) guarantees by force: an image
 * without one would make them run past the array.  Copy the note and keep
 * the vector up to and including its first AT_NULL.
 */
static int img_check_auxv(struct img *img, const struct note_slot *s)
{
	size_t i, len = s->len;

	if (!s->desc || len % 16 || len > sizeof(current->mm->saved_auxv)) {
		img_err(img, "invalid auxv note");
		return -EINVAL;
	}
	memcpy(img->auxv, s->desc, len);
	for (i = 0; i + 1 < len / sizeof(u64); i += 2) {
		if (img->auxv[i] == AT_NULL) {
			img->auxv_bytes = (i + 2) * sizeof(u64);
			return 0;
		}
	}
	img_err(img, "auxv note without an AT_NULL entry");
	return -EINVAL;
}

int img_parse(struct img *img)
{
	struct note_slot slots[N_MAX];
	struct inode *inode = file_inode(img->bprm->file);
	size_t vmas_len;
	int ret;

	ret = img_check_elf(img);
	if (ret)
		return ret;
	ret = img_read_notes(img, slots);
	if (ret)
		return ret;

	/* From here on it claims to be ours: errors are EINVAL and logged. */
	if (inode->i_mode & S_ISUID ||
	    (inode->i_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) {
		img_err(img, "set-user/group-ID images are refused");
		return -EPERM;
	}
	ret = img_copy_note(img, &slots[N_PRSTATUS], &img->prstatus,
			    sizeof(img->prstatus), "NT_PRSTATUS");
	if (!ret)
		ret = img_copy_note(img, &slots[N_TASK], &img->task,
				    sizeof(img->task), "task");
	if (!ret)
		ret = img_copy_note(img, &slots[N_SIGACT], img->sigact,
				    sizeof(img->sigact), "signal");
	if (ret)
		return ret;
	ret = img_check_auxv(img, &slots[N_AUXV]);
	if (ret)
		return ret;

	ret = img_check_task(img);
	if (!ret)
		ret = img_check_regs(img);
	if (ret)
		return ret;

	vmas_len = img->task.nr_vmas * sizeof(*img->vmas);
	if (!slots[N_VMAS].desc || slots[N_VMAS].len != vmas_len) {
		img_err(img, "memory map note missing or of wrong size");
		return -EINVAL;
	}
	img->vmas = kvmalloc(vmas_len, GFP_KERNEL_ACCOUNT);
	if (!img->vmas)
		return -ENOMEM;
	memcpy(img->vmas, slots[N_VMAS].desc, vmas_len);
	img->nr_files = 0;

	ret = img_open_files(img, &slots[N_FILES]);
	if (!ret && img->nr_files != img->task.nr_files)
		ret = -EINVAL;
	if (!ret)
		ret = img_check_vmas(img);
	if (!ret)
		ret = img_take_exe(img);
	if (!ret)
		ret = img_check_loads(img);
	if (!ret)
		ret = img_check_vdso(img);
	if (!ret)
		ret = img_check_xstate(img, &slots[N_XSTATE]);
	return ret;
}

void img_free(struct img *img)
{
	unsigned int i;

	if (img->exe)		/* the exec failed before taking it over */
		imgcr_exe_allow_write(img->exe);

	for (i = 0; i < img->nr_files; i++)
		if (img->files[i].file)
			fput(img->files[i].file);
	kvfree(img->files);
	kvfree(img->vmas);
	kvfree(img->xstate);
	kvfree(img->notes);
	kvfree(img->phdrs);
}
