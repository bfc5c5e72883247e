/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels imgcr supports (Debian's 6.1 and
 * 6.12), in one place so that the rest of the code reads as if written for
 * a single kernel.
 */
#ifndef IMGCR_COMPAT_H
#define IMGCR_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/rcupdate.h>
#include <linux/version.h>

/* 6.5 dropped the vmas argument of get_user_pages_remote(). */
static inline long imgcr_gup_remote(struct mm_struct *mm, unsigned long addr,
				    unsigned long n, unsigned int flags,
				    struct page **pages)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return get_user_pages_remote(mm, addr, n, flags, pages, NULL);
#else
	return get_user_pages_remote(mm, addr, n, flags, pages, NULL, NULL);
#endif
}

/* 6.7 hid inode->i_mtime behind accessors. */
static inline struct timespec64 imgcr_inode_mtime(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return inode_get_mtime(inode);
#else
	return inode->i_mtime;
#endif
}

/* 6.3 records the registered rseq length; before, it is always 32. */
static inline u32 imgcr_rseq_len(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return t->rseq_len;
#else
	return t->rseq ? 32 : 0;
#endif
}

static inline void imgcr_set_rseq_len(struct task_struct *t, u32 len)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	t->rseq_len = len;
#endif
}

/* Largest rseq area the kernel accepts (6.3 made it extensible). */
static inline bool imgcr_rseq_len_ok(u32 len)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return len >= 32 && len <= PAGE_SIZE;
#else
	return len == 32;
#endif
}

/* MM_CONTEXT_HAS_VSYSCALL became a bit number in 6.2. */
static inline void imgcr_set_has_vsyscall(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	__set_bit(MM_CONTEXT_HAS_VSYSCALL, &mm->context.flags);
#else
	mm->context.flags = MM_CONTEXT_HAS_VSYSCALL;
#endif
}

/* get_mm_exe_file() is not exported; 6.7 changed get_file_rcu(). */
static inline struct file *imgcr_get_mm_exe_file(struct mm_struct *mm)
{
	struct file *exe;

	rcu_read_lock();
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	exe = get_file_rcu(&mm->exe_file);
#else
	exe = rcu_dereference(mm->exe_file);
	if (exe && !get_file_rcu(exe))
		exe = NULL;
#endif
	rcu_read_unlock();
	return exe;
}

/* Exec's write denial on the executable (6.12 skips HSM-watched files). */
static inline int imgcr_exe_deny_write(struct file *f)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	return exe_file_deny_write_access(f);
#else
	return deny_write_access(f);
#endif
}

static inline void imgcr_exe_allow_write(struct file *f)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	exe_file_allow_write_access(f);
#else
	allow_write_access(f);
#endif
}

/* 6.4 added per-VMA locks: changing a VMA then needs its write lock. */
static inline void imgcr_vma_start_write(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	vma_start_write(vma);
#endif
}

/*
 * signal_struct.posix_timers became an hlist (checked: a list_head on
 * 6.1, an hlist_head on 6.12).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define imgcr_for_each_posix_timer(k, sig) \
	hlist_for_each_entry(k, &(sig)->posix_timers, list)
#else
#define imgcr_for_each_posix_timer(k, sig) \
	list_for_each_entry(k, &(sig)->posix_timers, list)
#endif

/*
 * MAP_DROPPABLE / VM_DROPPABLE came in 6.11 (checked: absent from 6.1,
 * VM_DROPPABLE = BIT(40) on Debian's 64-bit 6.12).  IMGCR_VM_DROPPABLE is
 * VM_NONE where the kernel has no droppable mappings.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define IMGCR_VM_DROPPABLE	VM_DROPPABLE
#define IMGCR_MAP_DROPPABLE	MAP_DROPPABLE
#else
#define IMGCR_VM_DROPPABLE	VM_NONE
#define IMGCR_MAP_DROPPABLE	0
#endif

/* mseal() came in 6.10: a sealed mapping cannot be unmapped. */
#ifdef VM_SEALED
#define IMGCR_VM_SEALED		VM_SEALED
#else
#define IMGCR_VM_SEALED		VM_NONE
#endif

/* User shadow stacks came in 6.6 (Debian's 6.12 has them). */
#ifdef VM_SHADOW_STACK
#define IMGCR_VM_SHADOW_STACK	VM_SHADOW_STACK
#else
#define IMGCR_VM_SHADOW_STACK	VM_NONE
#endif

static inline bool imgcr_shstk_enabled(struct task_struct *t)
{
#ifdef CONFIG_X86_USER_SHADOW_STACK
	return t->thread.features;
#else
	return false;
#endif
}

static inline bool imgcr_have_droppable(void)
{
	return IMGCR_VM_DROPPABLE != VM_NONE;
}

#endif /* IMGCR_COMPAT_H */
