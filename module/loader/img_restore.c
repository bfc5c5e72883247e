// SPDX-License-Identifier: GPL-2.0
/*
 * Apply a validated image to the exec'ing task, after begin_new_exec().
 * A failure here can no longer return to the caller: exec kills the task.
 *
 * Two things cannot be done inside load_binary() because exec undoes them
 * after it returns: rax is overwritten with execve's return value, and
 * rseq_execve() clears the rseq registration.  Both are finished by a
 * task_work that runs on the way back to user space, which also restores
 * the signal mask (all signals stay blocked until then).
 */
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/personality.h>
#include <linux/poll.h>
#include <linux/posix-timers.h>
#include <linux/alarmtimer.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/shmem_fs.h>
#include <linux/rseq.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/pkru.h>
#include <asm/prctl.h>
#include <asm/msr.h>

#include "checks.h"
#include "compat.h"
#include "loader.h"

/* Flags a restored task may set, as for PTRACE_SETREGS (arch/x86/kernel/ptrace.c). */
#define IMG_FLAG_MASK (X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
		       X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_TF | \
		       X86_EFLAGS_DF | X86_EFLAGS_OF | X86_EFLAGS_RF | \
		       X86_EFLAGS_AC)

#define FILL_CHUNK (64 * 1024)

static unsigned long vma_mmap_prot(const struct imgcr_vma *v)
{
	return (v->prot & IMGCR_PROT_READ ? PROT_READ : 0) |
	       (v->prot & IMGCR_PROT_WRITE ? PROT_WRITE : 0) |
	       (v->prot & IMGCR_PROT_EXEC ? PROT_EXEC : 0);
}

/*
 * A private mapping that was writable once is mapped writable, filled and
 * then mprotect()ed, as the task did: it keeps VM_ACCOUNT like the
 * original, so it does not merge with neighbours the original kept apart.
 */
static bool map_writable_first(const struct img *img, const struct imgcr_vma *v)
{
	/*
	 * huge pages (anonymous, or a private mapping of an MFD_HUGETLB
	 * memfd): a write through FOLL_FORCE is refused
	 */
	bool huge = v->flags & IMGCR_VMA_HUGETLB ||
		    (v->kind == IMGCR_VMA_FILE &&
		     !(v->flags & IMGCR_VMA_SHARED) &&
		     img->files[v->file].id.flags & IMGCR_FILE_HUGETLB);

	if (v->prot & IMGCR_PROT_WRITE)
		return false;
	/*
	 * huge pages only if there are pages to write: mprotect() would
	 * count the mapping in VmData (RLIMIT_DATA), which the original
	 * did not
	 */
	return v->flags & IMGCR_VMA_ACCOUNT ||
	       (huge && test_bit(v - img->vmas, img->loaded));
}

/* Give a fresh anonymous VMA the page offset the original had. */
static void set_anon_pgoff(const struct imgcr_vma *v)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	mmap_write_lock(mm);
	vma = find_vma(mm, v->start);
	/* not yet merged, no anon_vma, no pages: nothing depends on it yet */
	if (vma && vma->vm_start == v->start && vma->vm_end == v->end &&
	    !vma->anon_vma) {
		imgcr_vma_start_write(vma);
		vma->vm_pgoff = v->pgoff;
	}
	mmap_write_unlock(mm);
}

/*
 * The advice the task had given the mapping (IMGCR_VMA_DONTFORK, ...),
 * given again as it did, with madvise().  A droppable mapping has its
 * wipe-on-fork and don't-dump from mmap() already.
 */
static const struct {
	u32 flag;
	int advice;
} vma_advice[] = {
	{ IMGCR_VMA_DONTFORK, MADV_DONTFORK },
	{ IMGCR_VMA_WIPEONFORK, MADV_WIPEONFORK },
	{ IMGCR_VMA_HUGEPAGE, MADV_HUGEPAGE },
	{ IMGCR_VMA_NOHUGEPAGE, MADV_NOHUGEPAGE },
	{ IMGCR_VMA_DONTDUMP, MADV_DONTDUMP },
	{ IMGCR_VMA_SEQ_READ, MADV_SEQUENTIAL },
	{ IMGCR_VMA_RAND_READ, MADV_RANDOM },
	{ IMGCR_VMA_MERGEABLE, MADV_MERGEABLE },
};

static int advise_one(struct img *img, const struct imgcr_vma *v)
{
	u32 implied = v->flags & IMGCR_VMA_DROPPABLE ?
		      IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DONTDUMP : 0;
	unsigned int i;
	long ret;

	for (i = 0; i < ARRAY_SIZE(vma_advice); i++) {
		if (!(v->flags & vma_advice[i].flag & ~implied))
			continue;
		ret = img_call_sys(imgcr_sys_madvise, v->start, v->end - v->start,
				   vma_advice[i].advice, 0);
		if (ret) {
			img_err(img, "cannot give %#llx-%#llx its advice %d (%ld)",
				v->start, v->end, vma_advice[i].advice, ret);
			return ret;
		}
	}
	return 0;
}

/* Is all of [@start, @end) mapped, and locked (VM_LOCKED)? */
static bool range_locked(u64 start, u64 end)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool ok = true;

	mmap_read_lock(mm);
	while (ok && start < end) {
		vma = find_vma(mm, start);
		ok = vma && vma->vm_start <= start && vma->vm_flags & VM_LOCKED;
		if (ok)
			start = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ok;
}

/*
 * Lock the mappings the task had locked (IMGCR_VMA_LOCKED), once their
 * pages are filled in, as mlock2() locks: a mapping locked on fault keeps
 * the pages the image has and gets no others, any other one is populated
 * whole, as mlock() made it.  img_check_mlock() has checked RLIMIT_MEMLOCK
 * and CAP_IPC_LOCK before the point of no return; mlock2() judges them
 * again.  Then mlockall(MCL_FUTURE), so that the task's later mappings are
 * locked too: after the last mapping of the restore.
 *
 * mlock() locks a mapping it cannot populate (PROT_NONE, such as a thread
 * stack's guard page under mlockall(MCL_CURRENT), or a file mapping past
 * the end of its file) and then says ENOMEM; mlockall() ignores that.  So
 * does this: ENOMEM with the whole range locked is what the task had.
 */
static int lock_mappings(struct img *img)
{
	unsigned int i;
	long ret;

	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		if (v->kind > IMGCR_VMA_FILE || !(v->flags & IMGCR_VMA_LOCKED))
			continue;
		ret = img_call_sys(imgcr_sys_mlock2, v->start, v->end - v->start,
				   v->flags & IMGCR_VMA_LOCKONFAULT ?
				   MLOCK_ONFAULT : 0, 0);
		if (ret == -ENOMEM && range_locked(v->start, v->end))
			ret = 0;
		if (ret) {
			img_err(img, "cannot lock %#llx-%#llx (%ld)",
				v->start, v->end, ret);
			return ret;
		}
	}
	return 0;
}

static int lock_future(struct img *img)
{
	u32 f = img->proc.flags;
	long ret;

	if (!(f & IMGCR_PROC_MCL_FUTURE))
		return 0;
	ret = img_call_sys(imgcr_sys_mlockall, MCL_FUTURE |
			   (f & IMGCR_PROC_MCL_ONFAULT ? MCL_ONFAULT : 0),
			   0, 0, 0);
	if (ret)
		img_err(img, "cannot lock future mappings (mlockall MCL_FUTURE: %ld)",
			ret);
	return ret;
}

/*
 * Map one VMA.  Private ones are mapped PROT_NONE first so that they merge
 * with nothing; an anonymous one then gets its original page offset (a
 * region moved by mremap() keeps its old one, which keeps it apart from
 * its neighbours), and only then does mprotect() give it the protection to
 * fill it with, merging it where the kernel would have merged it.
 */
static int map_one(struct img *img, const struct imgcr_vma *v)
{
	unsigned long len = v->end - v->start, addr;
	unsigned long flags = MAP_FIXED_NOREPLACE;
	unsigned long prot = vma_mmap_prot(v);
	bool shared = v->flags & IMGCR_VMA_SHARED;
	struct file *file = NULL, *rofile = NULL;
	unsigned long off = 0;
	long ret;

	if (shared)
		flags |= MAP_SHARED;
	else if (v->flags & IMGCR_VMA_DROPPABLE)
		flags |= IMGCR_MAP_DROPPABLE;	/* checked: the kernel has it */
	else
		flags |= MAP_PRIVATE;
	if (v->flags & IMGCR_VMA_NORESERVE)
		flags |= MAP_NORESERVE;
	if (map_writable_first(img, v))
		prot |= PROT_WRITE;
	if (v->kind == IMGCR_VMA_FILE) {
		rofile = img->files[v->file].rofile;
		file = v->flags & IMGCR_VMA_RDONLY_FILE ?
		       rofile : img->files[v->file].file;
		off = v->pgoff << PAGE_SHIFT;
	} else {
		flags |= MAP_ANONYMOUS;
		if (v->flags & IMGCR_VMA_GROWSDOWN)
			flags |= MAP_GROWSDOWN;
	}
	if (v->flags & IMGCR_VMA_HUGETLB)
		/* its hugetlbfs file is made by the syscall only */
		addr = img_call_sys6(imgcr_sys_mmap, v->start, len,
				     shared ? prot : PROT_NONE,
				     flags | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
	else
		addr = vm_mmap(file, v->start, len, shared ? prot : PROT_NONE,
			       flags, off);
	/*
	 * A read-only shared mapping of an object sealed with F_SEAL_WRITE,
	 * through its writable file: a kernel without 6.7's
	 * memfd_check_seals_mmap() (or its stable backport) refuses it.  The
	 * read-only file (opened for it by img_check_vmas()) maps the same
	 * pages, never writable either way; only VM_SHARED differs.
	 */
	if (addr == (unsigned long)-EPERM && rofile && file != rofile)
		addr = vm_mmap(rofile, v->start, len, prot, flags, off);
	if (addr != v->start) {
		img_err(img, "cannot map %#llx-%#llx (%ld)", v->start, v->end,
			IS_ERR_VALUE(addr) ? (long)addr : -EEXIST);
		return IS_ERR_VALUE(addr) ? (int)addr : -EEXIST;
	}
	if (shared)
		return 0;
	if (v->kind == IMGCR_VMA_ANON && !(v->flags & IMGCR_VMA_HUGETLB) &&
	    v->pgoff != v->start >> PAGE_SHIFT)
		set_anon_pgoff(v);
	if (prot == PROT_NONE)
		return 0;
	ret = img_call_sys(imgcr_sys_mprotect, v->start, len, prot, 0);
	if (ret) {
		img_err(img, "cannot set protection of %#llx-%#llx (%ld)",
			v->start, v->end, ret);
		return ret;
	}
	return 0;
}

/*
 * IMGCR_VMA_SYSVSHM, first in the empty address space: shmat() maps the
 * whole segment at the address its first page had (the mapping's start
 * less its offset in the segment), read-only unless a piece of the
 * attachment is writable or was attached so (IMGCR_VMA_SHM_MAYWRITE: the
 * task may mprotect() it writable again; see img_check_sysvshm()); the
 * other mappings may share that range with it once it is trimmed to its
 * pieces, each given the protection it had by mprotect().  Never
 * SHM_EXEC, which would ask for the segment's x bits: the task's own
 * mprotect(PROT_EXEC) did not, and the attachment's VM_MAYEXEC is the
 * same either way.  Mapping @i and its further pieces.
 */
static int attach_sysvshm(struct img *img, unsigned int i)
{
#if IMGCR_HAVE_SYSVSHM
	const struct imgcr_vma *v = &img->vmas[i], *p;
	unsigned long base = v->start - (v->pgoff << PAGE_SHIFT);
	unsigned long prot = PROT_READ, end = 0, cur;
	struct imgcr_shmid_kernel *shp;
	struct inode *inode;
	unsigned int j, last = i;
	long ret = 0;
	int flags = 0;

	for (j = i; j < img->task.nr_vmas; j++) {
		p = &img->vmas[j];
		if (p->kind != IMGCR_VMA_SYSVSHM)
			continue;
		if (j != i && !img_sysvshm_piece(img, j))
			break;
		last = j;
		if (p->prot & IMGCR_PROT_WRITE || p->flags & IMGCR_VMA_SHM_MAYWRITE)
			prot |= PROT_WRITE;
	}
	if (!(prot & PROT_WRITE))
		flags |= SHM_RDONLY;
	ret = img_call_sys(imgcr_sys_shmat, v->file, base, flags, 0);
	if (ret != (long)base) {
		img_err(img, "cannot attach SysV shm segment %u at %#lx (%ld)",
			v->file, base, ret < 0 ? ret : -EEXIST);
		return ret < 0 ? ret : -EEXIST;
	}
	/* how far shmat() mapped: the whole segment, which is attached */
	rcu_read_lock();
	shp = imgcr_shm_find(current->nsproxy->ipc_ns, v->file);
	inode = shp ? imgcr_shm_inode(shp) : NULL;
	if (inode)
		end = base + PAGE_ALIGN(i_size_read(inode));
	rcu_read_unlock();
	ret = 0;
	cur = base;
	for (j = i; j <= last && !ret; j++) {
		p = &img->vmas[j];
		if (p->kind != IMGCR_VMA_SYSVSHM)
			continue;
		if (p->end > end) {
			img_err(img, "SysV shm segment %u changed during the restore",
				v->file);
			return -EINVAL;
		}
		if (p->start > cur)
			ret = vm_munmap(cur, p->start - cur);
		if (!ret && vma_mmap_prot(p) != prot)
			ret = img_call_sys(imgcr_sys_mprotect, p->start,
					   p->end - p->start, vma_mmap_prot(p), 0);
		cur = p->end;
	}
	if (!ret && end > cur)
		ret = vm_munmap(cur, end - cur);
	if (ret)
		img_err(img, "cannot trim SysV shm segment %u to its mappings (%ld)",
			v->file, ret);
	return ret;
#else
	return -EOPNOTSUPP;	/* refused by img_check_sysvshm() */
#endif
}

/*
 * Copy the PT_LOAD pages from the image: with @shm, those of the shared
 * memory objects the loader made, into the objects themselves (before
 * they are mapped: their seals come in between); else the others, into
 * the new address space.
 */
static int fill_pages(struct img *img, bool shm_pass)
{
	const struct imgcr_vma *v = img->vmas;
	void *buf, *have = NULL;
	unsigned int i;
	int ret = 0;

	buf = kvmalloc(FILL_CHUNK, GFP_KERNEL);
	if (img_in_place(img))
		have = kvmalloc(FILL_CHUNK, GFP_KERNEL);
	if (!buf || (img_in_place(img) && !have)) {
		kvfree(buf);
		kvfree(have);
		return -ENOMEM;
	}
	for (i = 0; i < img->nphdrs && !ret; i++) {
		const struct elf64_phdr *ph = &img->phdrs[i];
		struct file *shm;
		u64 done = 0;
		bool writable, kept;

		if (ph->p_type != PT_LOAD)
			continue;
		while (v->end <= ph->p_vaddr)	/* sorted, checked to exist */
			v++;
		shm = v->kind == IMGCR_VMA_FILE && v->flags & IMGCR_VMA_SHARED ?
		      img->files[v->file].file : NULL;
		if (shm && img->files[v->file].given)
			continue;	/* the caller's memfd, filled already */
		writable = v->prot & IMGCR_PROT_WRITE || map_writable_first(img, v);
		kept = img->kept && test_bit(v - img->vmas, img->kept);
		if (shm_pass != (shm && !kept))
			continue;
		while (done < ph->p_filesz) {
			size_t n = min_t(u64, FILL_CHUNK, ph->p_filesz - done);
			unsigned long addr = ph->p_vaddr + done;
			loff_t pos = ph->p_offset + done;
			loff_t shm_pos;

			if (kernel_read(img->bprm->file, buf, n, &pos) != n) {
				ret = -EIO;
				break;
			}
			if (kept) {
				/* the caller's, maybe shared with its parent */
				ret = img_fill_kept(addr, buf, have, n);
			} else if (shm) {
				/* shared memory: write the object itself */
				shm_pos = (v->pgoff << PAGE_SHIFT) + addr - v->start;
				if (kernel_write(shm, buf, n, &shm_pos) != n)
					ret = -EIO;
			} else if (writable) {
				if (copy_to_user((void __user *)addr, buf, n))
					ret = -EFAULT;
			} else if (access_process_vm(current, addr, buf, n,
						     FOLL_FORCE | FOLL_WRITE) != n) {
				/* read-only or PROT_NONE: written like ptrace does */
				ret = -EFAULT;
			}
			if (ret)
				break;
			done += n;
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
	}
	kvfree(buf);
	kvfree(have);
	if (ret)
		img_err(img, "cannot load memory contents (%d)", ret);
	return ret;
}

/*
 * The seals of each shared memory object the loader made (checked by
 * img_check_vmas()), once it is filled and before it is mapped: the
 * mappings are then made as the kernel makes them under these seals
 * (under a write seal without VM_MAYWRITE).  Cannot fail: the object is
 * new, open nowhere else and not mapped yet.
 */
static void set_shm_seals(struct img *img)
{
	unsigned int i;

	for (i = 0; i < img->nr_files; i++) {
		struct img_file *f = &img->files[i];
		struct inode *inode;

		if (!f->file || f->given || !(f->id.flags & IMGCR_FILE_SEALS))
			continue;
		inode = file_inode(f->file);
		inode_lock(inode);
		/* as memfd_add_seals(): no writable mapping from now on */
		if (!(f->id.seals & F_SEAL_WRITE) ||
		    !mapping_deny_writable(f->file->f_mapping))
			SHMEM_I(inode)->seals = f->id.seals;
		inode_unlock(inode);
	}
}

/*
 * ARCH_MAP_VDSO_64 at the original address, through the syscall's body;
 * the proxy if the image's vdso is another kernel's.
 */
static int map_vdso(struct img *img)
{
	long ret;

	if (!img->task.vdso)
		return 0;
	if (img->vdso.old)
		return img_vdso_map_proxy(img);
	ret = img_call_sys(imgcr_sys_arch_prctl, ARCH_MAP_VDSO_64,
			   img->task.vdso - img->task.vvar_size, 0, 0);
	if (ret < 0 || (unsigned long)current->mm->context.vdso != img->task.vdso) {
		img_err(img, "cannot map the vdso at %#llx (%ld)", img->task.vdso, ret);
		return ret < 0 ? ret : -EEXIST;
	}
	return 0;
}

static void set_mm_fields(struct img *img)
{
	struct mm_struct *mm = current->mm;
	const struct imgcr_task *t = &img->task;

	mmap_write_lock(mm);
	mm->start_code = t->start_code;
	mm->end_code = t->end_code;
	mm->start_data = t->start_data;
	mm->end_data = t->end_data;
	mm->start_brk = t->start_brk;
	mm->brk = t->brk;
	mm->start_stack = t->start_stack;
	spin_lock(&mm->arg_lock);
	mm->arg_start = t->arg_start;
	mm->arg_end = t->arg_end;
	mm->env_start = t->env_start;
	mm->env_end = t->env_end;
	spin_unlock(&mm->arg_lock);
	memset(mm->saved_auxv, 0, sizeof(mm->saved_auxv));
	memcpy(mm->saved_auxv, img->auxv, img->auxv_bytes);
	mmap_write_unlock(mm);
}

/* The 64-bit part of SET_PERSONALITY (set_personality_64bit is not exported). */
static void set_personality_64(struct img *img)
{
	clear_thread_flag(TIF_ADDR32);
	task_pt_regs(current)->orig_ax = __NR_execve;
	current_thread_info()->status &= ~TS_COMPAT;
	imgcr_set_has_vsyscall(current->mm);
	current->personality = img->task.personality;
	/* randomize_va_space is not exported: follow the personality alone */
	if (!(current->personality & ADDR_NO_RANDOMIZE))
		current->flags |= PF_RANDOMIZE;
}

/*
 * Build the address space: personality and exec bookkeeping, then every
 * mapping at its address, the page contents, the vdso and the mm fields.
 */
/* Take write access away where the task had (see map_writable_first()). */
static int drop_fill_write(struct img *img)
{
	unsigned int i;
	long ret;

	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		bool kept = img->kept && test_bit(i, img->kept);

		/* a kept one gets exactly its protection (and loses the caller's) */
		if (v->kind > IMGCR_VMA_FILE || (!map_writable_first(img, v) && !kept))
			continue;
		ret = img_call_sys(imgcr_sys_mprotect, v->start,
				   v->end - v->start, vma_mmap_prot(v), 0);
		if (ret) {
			img_err(img, "cannot set protection of %#llx-%#llx (%ld)",
				v->start, v->end, ret);
			return ret;
		}
	}
	return 0;
}

/* /proc/PID/exe: what set_mm_exe_file() does; it is not exported. */
static void set_exe_file(struct img *img)
{
	struct mm_struct *mm = current->mm;
	struct file *old;

	if (!img->exe)
		return;
	old = rcu_dereference_raw(mm->exe_file);
	rcu_assign_pointer(mm->exe_file, get_file(img->exe));
	img->exe = NULL;	/* its write denial now belongs to the mm */
	if (old) {
		imgcr_exe_allow_write(old);
		fput(old);
	}
}

/* Mark again the fds the task had marked close-on-exec (img_args.c). */
static void apply_cloexec(struct img *img)
{
	struct files_struct *files = current->files;
	char *arg = img->cloexec, *tok;
	unsigned long fd;

	while ((tok = strsep(&arg, ","))) {
		struct fdtable *fdt;

		if (kstrtoul(tok, 10, &fd))
			continue;
		spin_lock(&files->file_lock);
		fdt = files_fdtable(files);
		if (fd < fdt->max_fds && rcu_access_pointer(fdt->fd[fd]))
			__set_bit(fd, fdt->close_on_exec);
		spin_unlock(&files->file_lock);
	}
}

/* PR_SET_DUMPABLE 0 (set_dumpable() is not exported); 0 or an error, logged. */
int img_set_undumpable(struct img *img)
{
	int ret = img_call_sys(imgcr_sys_prctl, PR_SET_DUMPABLE, 0, 0, 0);

	if (ret)
		img_err(img, "cannot make the task not dumpable (%d)", ret);
	return ret;
}

/*
 * The image's THP switch, before any page is filled: exec and the kept mm
 * carry the caller's (the restorer's) over otherwise.
 */
static int set_thp(struct img *img)
{
	const u32 mask = IMGCR_PROC_THP_DISABLE | IMGCR_PROC_THP_EXCEPT_ADVISED;
	u32 want = img->proc.flags & mask;
	int ret;

	if (imgcr_thp_disabled(current->mm) == want)
		return 0;
	ret = img_call_sys(imgcr_sys_prctl, PR_SET_THP_DISABLE, !!want,
			   imgcr_thp_disable_arg(want), 0);
	if (ret)
		img_err(img, "cannot set the THP switch %#x (%d)", want, ret);
	return ret;
}

int img_restore_mm(struct img *img)
{
	struct linux_binprm *bprm = img->bprm;
	struct vm_area_struct *stack;
	unsigned int i;
	int ret;

	set_personality_64(img);
	/*
	 * A task that was not dumpable is not, from its first page on (the
	 * in-place path made it so at its point of no return).
	 */
	if ((img->proc.flags & IMGCR_PROC_NOT_DUMPABLE) && !img_in_place(img)) {
		ret = img_set_undumpable(img);
		if (ret)
			return ret;
	}
	ret = set_thp(img);
	if (ret)
		return ret;
	if (!img_in_place(img)) {
		setup_new_exec(bprm);
		/* exec left the argument pages in a stack VMA of its own */
		stack = bprm->vma;
		ret = vm_munmap(stack->vm_start, stack->vm_end - stack->vm_start);
		if (ret)
			return ret;
	}
	apply_cloexec(img);

	/*
	 * The layout fields first: LSMs judge the mprotect() calls below by
	 * them (SELinux execheap/execstack look at brk and the stack).
	 */
	set_mm_fields(img);
	/*
	 * Each mapping gets its advice right away, before any page is filled
	 * in: the faults of the fill then follow MADV_NOHUGEPAGE (Debian's
	 * THP default is "always") and MADV_HUGEPAGE.
	 */
	for (i = 0; i < img->task.nr_vmas; i++) {
		if (img->vmas[i].kind != IMGCR_VMA_SYSVSHM ||
		    img_sysvshm_piece(img, i))
			continue;
		ret = attach_sysvshm(img, i);
		if (ret)
			return ret;
	}
	ret = fill_pages(img, true);
	if (ret)
		return ret;
	set_shm_seals(img);
	for (i = 0; i < img->task.nr_vmas; i++) {
		if (img->vmas[i].kind > IMGCR_VMA_FILE)
			continue;
		ret = 0;
		if (!img->kept || !test_bit(i, img->kept))
			ret = map_one(img, &img->vmas[i]);
		if (!ret)
			ret = advise_one(img, &img->vmas[i]);
		if (ret)
			return ret;
	}
	if (img_in_place(img)) {
		ret = img_inplace_zap_holes(img);
		if (ret) {
			img_err(img, "cannot clear the pages of a kept mapping the image has not (%d)",
				ret);
			return ret;
		}
	}
	ret = fill_pages(img, false);
	if (!ret)
		ret = drop_fill_write(img);
	if (!ret)
		ret = lock_mappings(img);
	if (!ret)
		ret = map_vdso(img);
	if (!ret)
		ret = lock_future(img);
	if (ret)
		return ret;
	set_exe_file(img);
	set_binfmt(NULL);
	if (img_in_place(img))
		img_inplace_end(img);
	return 0;
}

struct img_resume {
	struct callback_head work;
	struct img_group *group;	/* the other threads, signals, timers */
	u64 ax;
	const struct imgcr_thread *th;	/* in group: the main thread's */
	struct img_call call;		/* the main thread's interrupted call */
	sigset_t blocked;
	int stop_sig;			/* stop the group by it once it is whole (0: not) */
};

/* The -ERESTART* code an interrupted call had returned, or 0. */
static long img_restart_code(u32 flags)
{
	switch (flags & IMGCR_TASK_RESTART_CODES) {
	case IMGCR_TASK_RESTART_SYS:
		return -ERESTARTSYS;
	case IMGCR_TASK_RESTART_NOINTR:
		return -ERESTARTNOINTR;
	case IMGCR_TASK_RESTART_NOHAND:
		return -ERESTARTNOHAND;
	case IMGCR_TASK_RESTART_BLOCK:
		return -ERESTART_RESTARTBLOCK;
	}
	return 0;	/* checked by img_parse(): one code at most */
}

/*
 * rax, rseq and the mask: what exec would undo, so set on the way out.
 * The thread is not in a system call while the rest of its task_work runs
 * (orig_ax -1: clone3() copies these registers, in_x32_syscall() reads
 * orig_ax): an interrupted call is put back by img_restart_pending(), last.
 */
void img_set_late_fields(u64 ax, const struct imgcr_thread *t)
{
	struct pt_regs *regs = current_pt_regs();

	regs->ax = ax;
	regs->orig_ax = -1;	/* not in a syscall: no restart */
#ifdef CONFIG_RSEQ
	if (t->rseq)
		imgcr_rseq_register(t->rseq, t->rseq_len, t->rseq_sig);
#endif
}

/*
 * The restart block hrtimer_nanosleep(), posix_cpu_nsleep(),
 * alarm_timer_nsleep(), sys_poll() or futex_wait() had left (img_parse()
 * checked @s): its own function (the image never names one), a 64-bit
 * call (arch_data without TS_COMPAT: restart_syscall() is the 64-bit
 * one), the clock and rmtp (poll: the fds; futex: the word and bitset),
 * and the expiry the time left from now on that clock (a CLOCK_REALTIME
 * futex wait: the expiry itself; a CPU clock: the restored process's,
 * which does not go on from the old one's).
 */
static void img_set_restart_block(const struct imgcr_sleep *s)
{
	struct restart_block *rb = &current->restart_block;
	ktime_t now = 0;

	sleep_clock_now(s->clock, &now);
	rb->arch_data = 0;
	if (s->flags & IMGCR_SLEEP_POLL) {
		/* sys_poll()'s: the end time on CLOCK_MONOTONIC (now) */
		rb->poll.ufds = (struct pollfd __user *)(unsigned long)s->rmtp;
		rb->poll.nfds = s->nfds;
		rb->poll.has_timeout = !!(s->flags & IMGCR_SLEEP_TIMEOUT);
		imgcr_poll_set_end(rb, ktime_add_safe(now, (ktime_t)s->remaining_ns));
		rb->fn = (long (*)(struct restart_block *))imgcr_do_restart_poll;
		return;
	}
	if (s->flags & IMGCR_SLEEP_FUTEX) {
		/* futex_wait()'s: an expiry on CLOCK_MONOTONIC or _REALTIME */
		rb->futex.uaddr = (u32 __user *)(unsigned long)s->rmtp;
		rb->futex.val = s->nfds;
		rb->futex.bitset = s->flags & IMGCR_SLEEP_BITSET ? s->bitset :
				   FUTEX_BITSET_MATCH_ANY;
		rb->futex.flags = IMGCR_FUTEX_SIZE_32 | IMGCR_FUTEX_HAS_TIMEOUT;
		if (s->flags & IMGCR_SLEEP_SHARED)
			rb->futex.flags |= IMGCR_FUTEX_SHARED;
		if (s->clock == CLOCK_REALTIME) {
			rb->futex.flags |= IMGCR_FUTEX_CLOCKRT;
			rb->futex.time = s->remaining_ns;
		} else {
			rb->futex.time = ktime_add_safe(now, (ktime_t)s->remaining_ns);
		}
		rb->fn = (long (*)(struct restart_block *))imgcr_futex_wait_restart;
		return;
	}
	rb->nanosleep.clockid = s->clock;
	rb->nanosleep.type = s->flags & IMGCR_SLEEP_RMTP ? TT_NATIVE : TT_NONE;
	rb->nanosleep.rmtp = (struct __kernel_timespec __user *)(unsigned long)s->rmtp;
	rb->fn = (long (*)(struct restart_block *))imgcr_hrtimer_nanosleep_restart;
	if (s->clock == CLOCK_PROCESS_CPUTIME_ID) {
		/* posix_cpu_nsleep()'s: the group clock, an expiry on it */
		rb->nanosleep.clockid = make_process_cpuclock(0, CPUCLOCK_SCHED);
		now = imgcr_group_sched_runtime(current);
		rb->fn = (long (*)(struct restart_block *))imgcr_posix_cpu_nsleep_restart;
	} else if (alarm_clock_now(s->clock, &now)) {
		/* alarm_timer_nsleep()'s: enum alarmtimer_type, not the clockid */
		rb->nanosleep.clockid = s->clock == CLOCK_REALTIME_ALARM ?
					ALARM_REALTIME : ALARM_BOOTTIME;
		rb->fn = (long (*)(struct restart_block *))imgcr_alarm_timer_nsleep_restart;
	}
	rb->nanosleep.expires = ktime_add_safe(now, (ktime_t)s->remaining_ns);
}

/*
 * The temporary mask of the sigsuspend(), ppoll(), pselect6() or
 * epoll_pwait() the thread was stopped in, over its own (just set), which
 * waits in saved_sigmask as the kernel had it: a handler's frame saves the
 * own mask, and with no handler arch_do_signal_or_restart() puts it back
 * (restore_saved_sigmask()) before the call is restarted or returns.
 * TIF_NOTIFY_SIGNAL makes that run even for a call that returns at once
 * (epoll_pwait()'s EINTR, no restart code).
 */
static void img_set_temp_mask(u64 mask)
{
	sigset_t temp;

	siginitset(&temp, mask);
	current->saved_sigmask = current->blocked;
	sigprocmask(SIG_SETMASK, &temp, NULL);
	set_restore_sigmask();
	set_thread_flag(TIF_NOTIFY_SIGNAL);
}

/*
 * The last thing a thread's task_work does, once the mask is its own.
 *
 * A call the dump found interrupted (an -ERESTART* code in the flags) is
 * put back as the kernel left it: rip after the syscall instruction,
 * orig_ax its number (@nr, the image's rax), ax the code, as the dumped
 * thread had them in get_signal(), and for -ERESTART_RESTARTBLOCK the
 * restart block of its nanosleep; a call's temporary mask first
 * (img_set_temp_mask()).  TIF_NOTIFY_SIGNAL, which no
 * recalc_sigpending() clears (the mask's would clear TIF_SIGPENDING with
 * nothing pending), makes exit_to_user_mode_loop() call
 * arch_do_signal_or_restart() before any user instruction: from
 * get_signal(), which ran this task_work, or in its next pass, as it reads
 * the flags again after resume_user_mode_work().  With no signal to
 * deliver it restarts the call (ax = orig_ax, ip -= 2: the image's
 * registers; a restart block through restart_syscall(), which sleeps
 * until the new expiry); with one, handle_signal() returns EINTR or
 * restarts as for the original task.  Nothing between here and the
 * restart can run a handler or clear the flag: no handler frame is set up
 * before this task_work returns (the image's own mask is in place by
 * now), and only get_signal() clears it.  Task_works queued
 * before this one (the deferred fput()s of the files exec closed) run
 * after it, with signal_pending() true, as with a signal that came then:
 * an interruptible wait in their ->release() may end early.  rseq's ip
 * fixup runs before the restart moves ip back; only a syscall instruction
 * inside a critical section, which the rseq ABI forbids, would see it.
 */
void img_restart_pending(u32 flags, u64 nr, const struct img_call *c)
{
	struct pt_regs *regs = current_pt_regs();
	long code = img_restart_code(flags);

	if (flags & IMGCR_TASK_TEMP_SIGMASK)
		img_set_temp_mask(c->temp_mask);
	if (!code)
		return;
	if (code == -ERESTART_RESTARTBLOCK)
		img_set_restart_block(&c->sleep);
	regs->ip += 2;
	regs->orig_ax = nr;
	regs->ax = code;
	set_thread_flag(TIF_NOTIFY_SIGNAL);
}

/* Runs on the way back to user space, after exec stored its own rax. */
static void img_resume(struct callback_head *work)
{
	struct img_resume *r = container_of(work, struct img_resume, work);
	/* r->th is the group's: img_group_run() drops the group */
	u32 flags = r->th->flags;

	img_set_late_fields(r->ax, r->th);
	/*
	 * The other threads, pending signals and timers; the mask stays
	 * all-blocked until they are all there.  On failure the group is
	 * being killed and the mask does not matter.
	 */
	if (!img_group_run(r->group, r->stop_sig)) {
		sigprocmask(SIG_SETMASK, &r->blocked, NULL);
		img_restart_pending(flags, r->ax, &r->call);
	}
	kfree(r);
	module_put(THIS_MODULE);
}

void img_set_fsgs(const u64 *r)
{
	/* start_thread() or clone left null selectors; now the bases */
	preempt_disable();
	current->thread.fsindex = 0;
	current->thread.fsbase = r[IMGCR_REG_FS_BASE];
	current->thread.gsindex = 0;
	current->thread.gsbase = r[IMGCR_REG_GS_BASE];
	imgcr_wrmsr(MSR_FS_BASE, r[IMGCR_REG_FS_BASE]);
	imgcr_wrmsr(MSR_KERNEL_GS_BASE, r[IMGCR_REG_GS_BASE]);
	preempt_enable();
}

/* @xstate was checked by img_parse() with this very copy function. */
int img_set_xstate(const void *xstate)
{
	struct fpu *fpu = imgcr_task_fpu(current);
	struct fpu_guest g = { .fpstate = fpu->fpstate };
	u32 pkru = 0;
	int ret;

	/*
	 * Writing fpstate and marking the registers stale is all it takes:
	 * they are loaded from fpstate on return to user space.
	 */
	fpregs_lock();
	ret = imgcr_fpu_copy_uabi_to_guest_fpstate(&g, xstate,
					     fpu->fpstate->user_xfeatures, &pkru);
	fpu->last_cpu = -1;
	set_thread_flag(TIF_NEED_FPU_LOAD);
	fpregs_unlock();
	if (ret)
		return ret;
	/* PKRU is not reloaded from fpstate; it is written eagerly. */
	preempt_disable();
	current->thread.pkru = pkru;
	write_pkru(pkru);
	preempt_enable();
	return 0;
}

/* The general registers but rax (see img_set_late_fields()). */
void img_set_regs(const u64 *ir)
{
	struct pt_regs *regs = current_pt_regs();

	regs->ip = ir[IMGCR_REG_RIP];
	regs->sp = ir[IMGCR_REG_RSP];
	regs->r15 = ir[IMGCR_REG_R15];
	regs->r14 = ir[IMGCR_REG_R14];
	regs->r13 = ir[IMGCR_REG_R13];
	regs->r12 = ir[IMGCR_REG_R12];
	regs->bp = ir[IMGCR_REG_RBP];
	regs->bx = ir[IMGCR_REG_RBX];
	regs->r11 = ir[IMGCR_REG_R11];
	regs->r10 = ir[IMGCR_REG_R10];
	regs->r9 = ir[IMGCR_REG_R9];
	regs->r8 = ir[IMGCR_REG_R8];
	regs->cx = ir[IMGCR_REG_RCX];
	regs->dx = ir[IMGCR_REG_RDX];
	regs->si = ir[IMGCR_REG_RSI];
	regs->di = ir[IMGCR_REG_RDI];
	regs->flags = (regs->flags & ~IMG_FLAG_MASK) |
		      (ir[IMGCR_REG_EFLAGS] & IMG_FLAG_MASK);
	img_set_fsgs(ir);
}

/* What the kernel keeps for one thread and exec or clone reset. */
void img_set_thread_fields(const struct imgcr_thread *t)
{
	task_lock(current);
	strscpy_pad(current->comm, t->comm, sizeof(current->comm));
	task_unlock(current);
#ifdef CONFIG_FUTEX
	*imgcr_robust_list(current) = (void __user *)(unsigned long)t->robust_list;
#endif
	current->clear_child_tid = (int __user *)(unsigned long)t->clear_child_tid;
	current->sas_ss_sp = t->sas_ss_sp;
	current->sas_ss_size = t->sas_ss_size;
	current->sas_ss_flags = t->sas_ss_flags;
	current->pdeath_signal = t->pdeath_signal;
	current->timer_slack_ns = t->timer_slack_ns;
	current->default_timer_slack_ns = t->default_timer_slack_ns;
}

static void set_sigactions(struct img *img)
{
	struct sighand_struct *sighand = current->sighand;
	int i;

	spin_lock_irq(&sighand->siglock);
	for (i = 0; i < IMGCR_NSIG; i++) {
		struct k_sigaction *ka = &sighand->action[i];
		const struct imgcr_sigaction *sa = &img->sigact[i];

		ka->sa.sa_handler = (__sighandler_t)(unsigned long)sa->handler;
		ka->sa.sa_flags = sa->flags;
		ka->sa.sa_restorer = (__sigrestore_t)(unsigned long)sa->restorer;
		siginitset(&ka->sa.sa_mask, sa->mask);
	}
	spin_unlock_irq(&sighand->siglock);
}

/*
 * Registers and the kernel's per-task state; the last step of the exec.
 * @group was made before the point of no return; it is handed on to
 * img_resume() (or dropped here on failure).
 */
int img_restore_task(struct img *img, struct img_group *group)
{
	struct pt_regs *regs = current_pt_regs();
	const u64 *ir = img->prstatus.regs;
	struct img_resume *r;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		img_group_put(group);
		return -ENOMEM;
	}
	ret = img_set_xstate(img->xstate);
	if (ret) {
		img_group_put(group);
		kfree(r);
		return ret;
	}
	finalize_exec(img->bprm);
	start_thread(regs, ir[IMGCR_REG_RIP], ir[IMGCR_REG_RSP]);
	img_set_regs(ir);
	img_set_thread_fields(&img->main_th);
	set_sigactions(img);

	/*
	 * No handler may run before img_resume() has fixed rax: the mask
	 * stays all-blocked (load_img_binary()) until then.
	 */
	siginitset(&r->blocked, img->main_th.blocked);

	r->ax = ir[IMGCR_REG_RAX];
	r->call = img->main_call;
	r->group = group;
	r->stop_sig = img->stop_sig;
	r->th = img_group_main(group);
	init_task_work(&r->work, img_resume);
	__module_get(THIS_MODULE);	/* img_resume() is our code */
	ret = task_work_add(current, &r->work, TWA_RESUME);
	if (ret) {
		module_put(THIS_MODULE);
		img_group_put(group);
		kfree(r);
	}
	return ret;
}
