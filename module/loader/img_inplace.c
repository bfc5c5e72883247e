// SPDX-License-Identifier: GPL-2.0
/*
 * Restore in place: memory a parent and its child still share
 * copy-on-write can only be shared again if the child's mm descends from
 * the parent's by fork(), and exec always builds a new mm.  So imgcr
 * restore maps that memory (filled from the parent's image) in the
 * parent's restorer before it forks the child's, at its final addresses,
 * and each of the two then executes its image with "--imgcr-keep=" naming
 * those mappings.  The exec keeps the caller's mm: it drops every other
 * mapping and rebuilds the rest as usual, and in the kept ones it writes
 * only the pages whose contents differ from the image (the pages that are
 * equal stay shared) and zeroes the ones the image has not.
 *
 * begin_new_exec() is not called: the caller's credentials stay as they
 * are, so they must already be what exec would make of them (same real,
 * effective, saved and fs IDs, no capabilities exec would drop, no
 * keep-caps, no thread or process keyring, no LSM label change), and what
 * exec would reset in the task is reset here or set from the image by
 * img_restore_task() as for any exec.  What cannot be reset without it is
 * refused before the point of no return: a caller with other threads, with
 * its mm (vfork included), files or signal handlers shared, with POSIX
 * timers, AIO contexts, io_uring, an LDT, a shadow stack, sealed or
 * userfaultfd-registered mappings, a 32-bit or CPUID-faulting caller, or
 * one that may not read the image (its contents would end up in a process
 * the caller can inspect).  Not reset: the caller's robust futex list
 * (imgcr's restorer holds no robust lock), perf events' enable-on-exec,
 * and a time namespace unshared for children.
 */
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/fs_struct.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pkeys.h>
#include <linux/prctl.h>
#include <linux/securebits.h>
#include <linux/security.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/syscall_user_dispatch.h>
#include <linux/uaccess.h>
#include <linux/userfaultfd_k.h>

#include "checks.h"
#include "compat.h"
#include "loader.h"

/* What a kept mapping may be in the caller: plain private anonymous memory. */
static bool caller_vma_keepable(struct vm_area_struct *vma)
{
	const unsigned long bad = VM_SHARED | VM_MAYSHARE | VM_IO | VM_PFNMAP |
		VM_MIXEDMAP | VM_HUGETLB | VM_GROWSDOWN | VM_GROWSUP |
		VM_LOCKED | VM_LOCKONFAULT | VM_DONTCOPY | VM_WIPEONFORK |
		VM_EXEC | __VM_UFFD_FLAGS | IMGCR_VM_DROPPABLE |
		IMGCR_VM_SEALED | IMGCR_VM_SHADOW_STACK | IMGCR_VM_MAYBE_GUARD;

	return vma_is_anonymous(vma) && !vma->vm_file && !vma_pkey(vma) &&
	       vma->vm_pgoff == vma->vm_start >> PAGE_SHIFT &&
	       !(vma->vm_flags & bad) &&
	       (vma->vm_flags & (VM_READ | VM_WRITE)) == (VM_READ | VM_WRITE);
}

/* A VMA anywhere in the caller that the unmapping must not meet. */
static const char *caller_vma_bad(struct vm_area_struct *vma)
{
	if (vma->vm_flags & IMGCR_VM_SEALED)
		return "the caller has sealed mappings";
#ifdef CONFIG_USERFAULTFD
	if (vma->vm_userfaultfd_ctx.ctx)
		return "the caller has mappings registered with userfaultfd";
#endif
	return NULL;
}

static const char *caller_mm_bad(struct img *img)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	const char *why = NULL;
	unsigned int i;

	VMA_ITERATOR(vmi, mm, 0);

	mmap_read_lock(mm);
	for_each_vma(vmi, vma) {
		why = caller_vma_bad(vma);
		if (why)
			break;
	}
#ifdef CONFIG_MODIFY_LDT_SYSCALL
	if (!why && mm->context.ldt)
		why = "the caller has an LDT";
#endif
	for (i = 0; i < img->nr_keep && !why; i++) {
		unsigned long addr = img->keep[i].start;

		while (addr < img->keep[i].end) {
			vma = find_vma(mm, addr);
			if (!vma || vma->vm_start > addr) {
				why = "a mapping to keep is not mapped in the caller";
				break;
			}
			if (!caller_vma_keepable(vma)) {
				why = "a mapping to keep is not plain private anonymous memory in the caller";
				break;
			}
			addr = vma->vm_end;
		}
	}
	if (!why && mm_had_aio(mm))
		why = "the caller has AIO contexts";
	mmap_read_unlock(mm);
	return why;
}

static bool caller_has_posix_timers(void)
{
	struct signal_struct *sig = current->signal;
	struct k_itimer *k;
	bool any = false;

	spin_lock_irq(&current->sighand->siglock);
	imgcr_for_each_posix_timer(k, sig) {
		any = true;
		break;
	}
	spin_unlock_irq(&current->sighand->siglock);
	return any;
}

/*
 * The credentials exec would compute from the caller's for an image that
 * is not set-ID and has no file capabilities (prepare_exec_creds(),
 * cap_bprm_creds_from_file()): the caller's must be those already.
 */
static const char *caller_creds_bad(struct img *img)
{
	struct linux_binprm *bprm = img->bprm;
	const struct cred *c = current_cred();
	bool root = uid_eq(c->euid, make_kuid(c->user_ns, 0)) &&
		    !issecure(SECURE_NOROOT);

	if (!uid_eq(c->uid, c->euid) || !uid_eq(c->euid, c->suid) ||
	    !uid_eq(c->euid, c->fsuid) || !gid_eq(c->gid, c->egid) ||
	    !gid_eq(c->egid, c->sgid) || !gid_eq(c->egid, c->fsgid))
		return "the caller's real, effective, saved and file system IDs differ (exec would change them)";
	/*
	 * "--imgcr-creds": the capability sets and securebits are replaced
	 * by the image's after the exec (img_creds.c), checked to be within
	 * the caller's: what exec would make of them does not matter
	 */
	if (img->set_creds)
		goto caps_done;
	if (c->securebits & issecure_mask(SECURE_KEEP_CAPS))
		return "the caller has SECURE_KEEP_CAPS (exec would clear it)";
	if (root ? !cap_issubset(c->cap_permitted, c->cap_bset) ||
		   !cap_issubset(c->cap_effective, c->cap_bset) :
		   !cap_issubset(c->cap_permitted, c->cap_ambient) ||
		   !cap_issubset(c->cap_effective, c->cap_ambient))
		return "the caller has capabilities exec would drop";
caps_done:
#ifdef CONFIG_KEYS
	if (c->thread_keyring || c->process_keyring)
		return "the caller has a thread or process keyring (exec would drop it)";
#endif
	/* img_parse() refused a label change already: kept as a guard */
	if (!img_exec_keeps_label(bprm))
		return "exec would change the caller's security label (an LSM transition)";
	/*
	 * exec would make the mm the caller's namespace's: an ancestor (imgcr
	 * restore --pidns unshares a user namespace) is only stricter for
	 * ptrace; an unrelated one (after setns()) is refused
	 */
	if (!current_in_userns(imgcr_exec_user_ns(current)))
		return "the caller's memory belongs to a user namespace unrelated to its credentials'";
	return NULL;
}

static const char *caller_task_bad(void)
{
	if (test_thread_flag(TIF_ADDR32) || test_thread_flag(TIF_NOCPUID))
		return "the caller is a 32-bit process or has CPUID faulting on";
	if (imgcr_shstk_enabled(current))
		return "the caller has a shadow stack";
#ifdef CONFIG_IO_URING
	if (current->io_uring)
		return "the caller has used io_uring";
#endif
#ifdef CONFIG_UPROBES
	/* exec drops these with the mm; unmapped here, they would be stale */
	if (current->utask || READ_ONCE(current->mm->uprobes_state.xol_area))
		return "the caller has hit uprobes (their state is kept in its memory)";
#endif
	return NULL;
}

/* Why this caller cannot become the task in place, or NULL. */
static const char *caller_bad(struct img *img)
{
	const char *why;

	/* exec makes an unreadable image's process undumpable; we cannot */
	would_dump(img->bprm, img->bprm->file);
	if (img->bprm->interp_flags & BINPRM_FLAGS_ENFORCE_NONDUMP)
		return "the caller may not read the image";
	if (current->vfork_done)
		return "the caller is a vfork() child: its memory is its parent's";
	if (!thread_group_empty(current))
		return "the caller has other threads";
	if (imgcr_mm_multiprocess(current->mm))
		return "the caller shares its memory with another process";
	/* kept here even with PR_MDWE_NO_INHERIT: the mm stays the caller's */
	if (imgcr_mm_has_mdwe(current->mm))
		return "the caller has memory-deny-write-execute (PR_SET_MDWE)";
	if (atomic_read(&current->files->count) != 1)
		return "the caller shares its file table";
	if (refcount_read(&current->sighand->count) != 1)
		return "the caller shares its signal handlers";
	if (caller_has_posix_timers())
		return "the caller has POSIX timers";
	/*
	 * /proc/PID/mem and the like, opened while the caller was dumpable,
	 * keep the mm: a normal exec leaves them on the old one
	 */
	if ((img->proc.flags & IMGCR_PROC_NOT_DUMPABLE) &&
	    !imgcr_not_dumpable(current, current->mm))
		return "the image was not dumpable and the caller is: what it opened of the caller would reach the task";
	why = caller_task_bad();
	if (!why)
		why = caller_creds_bad(img);
	if (!why)
		why = caller_mm_bad(img);
	return why;
}

/* Before the point of no return: can this caller's mm become the task's? */
int img_inplace_check(struct img *img)
{
	const char *why;

	if (!img_in_place(img))
		return 0;
	/*
	 * Another task's passing reference (a /proc reader): the caller may
	 * retry.  Threads, vfork and CLONE_VM are refused below.
	 */
	if (atomic_read(&current->mm->mm_users) != 1 && !current->vfork_done &&
	    thread_group_empty(current) &&
	    !imgcr_mm_multiprocess(current->mm))
		return -EBUSY;
	why = caller_bad(img);
	if (why) {
		img_err(img, "cannot restore in place (--imgcr-keep): %s", why);
		return -EINVAL;
	}
	/* /proc/PID/exe: as a new mm would have it, the image if nothing else */
	if (!img->exe) {
		if (imgcr_exe_deny_write(img->bprm->file)) {
			img_err(img, "the image is open for writing");
			return -ETXTBSY;
		}
		img->exe = img->bprm->file;
	}
	return 0;
}

/* do_close_on_exec(), which is not exported. */
static void close_on_exec_fds(void)
{
	struct files_struct *files = current->files;
	unsigned int fd = 0;

	for (;; fd++) {
		struct fdtable *fdt;

		spin_lock(&files->file_lock);
		fdt = files_fdtable(files);
		fd = find_next_bit(fdt->close_on_exec, fdt->max_fds, fd);
		if (fd >= fdt->max_fds) {
			spin_unlock(&files->file_lock);
			break;
		}
		spin_unlock(&files->file_lock);
		close_fd(fd);	/* a stale bit of a closed fd: -EBADF */
	}
}

/* Unmap everything but the kept mappings (the vdso included). */
static int unmap_all_but_kept(struct img *img)
{
	unsigned long prev = 0;
	unsigned int i;
	int ret;

	for (i = 0; i <= img->nr_keep; i++) {
		unsigned long next = i < img->nr_keep ? img->keep[i].start : TASK_SIZE;

		if (next > prev) {
			ret = vm_munmap(prev, next - prev);
			if (ret)
				return ret;
		}
		if (i < img->nr_keep)
			prev = img->keep[i].end;
	}
	return 0;
}

/*
 * The point of no return of an in-place restore, and the parts of
 * begin_new_exec() that concern a caller imgcr restore made: what the
 * image sets anyway (registers, FPU, signal handlers, comm, the alternate
 * stack, robust list...) is left to img_restore_task().
 */
int img_inplace_begin(struct img *img)
{
	struct mm_struct *mm = current->mm;
	int ret;

	img->bprm->point_of_no_return = true;
	/*
	 * No one may read the memory while it still holds what the caller
	 * had: img_inplace_end() makes it dumpable again once it is the
	 * task's.
	 */
	ret = img_set_undumpable(img);
	if (ret)
		return ret;
	close_on_exec_fds();
	ret = unmap_all_but_kept(img);
	if (ret) {
		img_err(img, "cannot unmap the caller's own memory (%d)", ret);
		return ret;
	}
	mmap_write_lock(mm);
	mm->def_flags = 0;		/* mlockall(MCL_FUTURE) does not carry over */
	mm->context.vdso = NULL;	/* unmapped; map_vdso() sets it again */
	mmap_write_unlock(mm);
	current->flags &= ~(PF_RANDOMIZE | PF_FORKNOEXEC);
	clear_syscall_work_syscall_user_dispatch(current);
	current->sas_ss_sp = 0;
	current->sas_ss_size = 0;
	WRITE_ONCE(current->self_exec_id, current->self_exec_id + 1);
	return 0;
}

/*
 * After img_restore_mm(): the memory is the task's.  What exec sets for a
 * readable image and unchanged IDs (checked), and what setup_new_exec()
 * does once the new mm is in place: the credentials exec prepared are not
 * used, and attaching a tracer may wait no longer.
 */
void img_inplace_end(struct img *img)
{
	struct linux_binprm *bprm = img->bprm;

	if (!(img->proc.flags & IMGCR_PROC_NOT_DUMPABLE))
		img_call_sys(imgcr_sys_prctl, PR_SET_DUMPABLE, 1, 0, 0);
	if (bprm->cred) {
		/* what begin_new_exec() or free_bprm() would do, as in exec */
		current->fs->in_exec = 0;
		abort_creds(bprm->cred);
		bprm->cred = NULL;
		mutex_unlock(&current->signal->cred_guard_mutex);
	}
}

/*
 * Inside a kept mapping, the pages the image has not are zero in the
 * task: drop whatever the caller has there.
 */
static int zap(unsigned long from, unsigned long to)
{
	if (to <= from)
		return 0;
	return img_call_sys(imgcr_sys_madvise, from, to - from, MADV_DONTNEED, 0);
}

int img_inplace_zap_holes(struct img *img)
{
	unsigned int i, j = 0;
	int ret;

	/* kept VMAs and PT_LOADs are both sorted; each PT_LOAD in one VMA */
	for_each_set_bit(i, img->kept, img->task.nr_vmas) {
		const struct imgcr_vma *v = &img->vmas[i];
		u64 cur = v->start;

		for (; j < img->nphdrs; j++) {
			const struct elf64_phdr *ph = &img->phdrs[j];

			if (ph->p_type != PT_LOAD || ph->p_vaddr < v->start)
				continue;
			if (ph->p_vaddr >= v->end)
				break;
			ret = zap(cur, ph->p_vaddr);
			if (ret)
				return ret;
			cur = ph->p_vaddr + ph->p_filesz;
		}
		ret = zap(cur, v->end);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Fill @n bytes at @addr of a kept mapping with @want: a page whose
 * contents are already right is left alone, so it stays shared with the
 * parent.  @have is scratch space of @n bytes.
 */
int img_fill_kept(unsigned long addr, const void *want, void *have, size_t n)
{
	size_t off;

	if (copy_from_user(have, (const void __user *)addr, n))
		return -EFAULT;
	for (off = 0; off < n; off += PAGE_SIZE)
		if (memcmp(want + off, have + off, PAGE_SIZE) &&
		    copy_to_user((void __user *)(addr + off), want + off, PAGE_SIZE))
			return -EFAULT;
	return 0;
}
