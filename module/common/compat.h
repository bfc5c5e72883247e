/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels imgcr supports (Debian 12's 6.1 and
 * 6.12, Debian 13's 6.12, sid's 7.2), in one place so that the rest of the
 * code reads as if written for a single kernel.  Each check is at the
 * upstream release that made the change where that is known; the changes
 * between 6.12 and 7.2 whose release was not checked are put at 7.0, which
 * separates the supported kernels all the same.  Every branch is compiled
 * and tested on the kernel(s) it serves.
 */
#ifndef IMGCR_COMPAT_H
#define IMGCR_COMPAT_H

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/rcupdate.h>
#include <linux/prctl.h>
#include <linux/cred.h>
#include <linux/security.h>
#include <linux/version.h>
#include <uapi/linux/imgcr.h>
#include <linux/namei.h>
#include <linux/posix-timers.h>
#include <linux/shmem_fs.h>
#include <linux/hugetlb.h>
#include <linux/magic.h>
#include <linux/fcntl.h>
#include <linux/sched/signal.h>
#include <linux/sched/coredump.h>
#include <asm/fpu/types.h>
#include <asm/msr.h>
#include <asm/vdso.h>
/* struct folio_batch: linux/pagevec.h, renamed linux/folio_batch.h (7.x) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#include <linux/folio_batch.h>
#else
#include <linux/pagevec.h>
#endif
#include <linux/rseq.h>	/* 6.1: the uapi one (its helpers are in sched.h) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#include <linux/sched/exec_state.h>
#include <asm/vdso/vsyscall.h>
#endif

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

/*
 * The page cache index of the huge page of a hugetlbfs file at @pos, and
 * the position of the one at @index: 6.7 indexed hugetlbfs's page cache
 * in base pages (each huge page at the index of its first), before in
 * huge pages.
 */
static inline pgoff_t imgcr_hugetlb_index(struct hstate *h, loff_t pos)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return (pos & huge_page_mask(h)) >> PAGE_SHIFT;
#else
	return pos >> huge_page_shift(h);
#endif
}

static inline loff_t imgcr_hugetlb_pos(struct hstate *h, pgoff_t index)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return (loff_t)index << PAGE_SHIFT;
#else
	return (loff_t)index << huge_page_shift(h);
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

/*
 * The rseq registration: task->rseq, ->rseq_len (6.3), ->rseq_sig until
 * 6.19 moved them into task->rseq (struct rseq_data: usrptr, len, sig).
 * Before 6.3 the length is always 32.
 */
#ifdef CONFIG_RSEQ
static inline unsigned long imgcr_rseq_ptr(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return (unsigned long)t->rseq.usrptr;
#else
	return (unsigned long)t->rseq;
#endif
}

static inline u32 imgcr_rseq_sig(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return t->rseq.sig;
#else
	return t->rseq_sig;
#endif
}

static inline u32 imgcr_rseq_len(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return t->rseq.len;
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return t->rseq_len;
#else
	return t->rseq ? 32 : 0;
#endif
}

/*
 * Register current's rseq area as sys_rseq() would, minus its writes to
 * the area (the restored memory holds what the task's had).  7.2's
 * rseq_register() also records the ABI version (2 for an area larger than
 * the original 32 bytes, with the generic entry code x86 uses) and raises
 * TIF_RSEQ through rseq_force_update() so that the ids are written before
 * user space runs; before, the notify-resume flag did that.
 */
static inline void imgcr_rseq_register(u64 ptr, u32 len, u32 sig)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	current->rseq.usrptr = (struct rseq __user *)(unsigned long)ptr;
	current->rseq.len = len;
	current->rseq.sig = sig;
	current->rseq.event.has_rseq =
		IS_ENABLED(CONFIG_GENERIC_IRQ_ENTRY) && len > 32 ? 2 : 1;
	rseq_force_update();
#else
	current->rseq = (struct rseq __user *)(unsigned long)ptr;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	current->rseq_len = len;
#endif
	current->rseq_sig = sig;
	rseq_set_notify_resume(current);
#endif
}
#endif /* CONFIG_RSEQ */

/* The robust futex list head moved into task->futex (checked: 7.2). */
#ifdef CONFIG_FUTEX
static inline struct robust_list_head __user **
imgcr_robust_list(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return &t->futex.robust_list;
#else
	return &t->robust_list;
#endif
}
#endif

/* Largest rseq area the kernel accepts (6.3 made it extensible). */
static inline bool imgcr_rseq_len_ok(u32 len)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return len >= 32 && len <= PAGE_SIZE;
#else
	return len == 32;
#endif
}

/* struct fd's file: a member until 6.12 made it a tagged word. */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

/*
 * vfs_iter_write() takes freeze protection (file_start_write()) itself
 * since 6.8; before, its caller does.
 */
static inline ssize_t imgcr_iter_write(struct file *f, struct iov_iter *it,
				       loff_t *pos)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0)
	ssize_t ret;

	file_start_write(f);
	ret = vfs_iter_write(f, it, pos, 0);
	file_end_write(f);
	return ret;
#else
	return vfs_iter_write(f, it, pos, 0);
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

/* Guard regions (MADV_GUARD_INSTALL) came in 6.13; VM_MAYBE_GUARD marks them in 7.x. */
#ifdef VM_MAYBE_GUARD
#define IMGCR_VM_MAYBE_GUARD	VM_MAYBE_GUARD
#else
#define IMGCR_VM_MAYBE_GUARD	VM_NONE
#endif

/*
 * Whether exec, which would give the caller the credentials @new, leaves
 * its LSM label as it is.  AppArmor has no cred_getsecid hook, so the
 * subjective one is asked, once as the caller is and once under
 * override_creds(@new); since 6.13 it fills a struct lsm_prop.
 */
static inline bool imgcr_exec_keeps_label(const struct cred *new)
{
	const struct cred *old;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	struct lsm_prop now, then;

	memset(&now, 0, sizeof(now));
	memset(&then, 0, sizeof(then));
	security_current_getlsmprop_subj(&now);
	old = override_creds(new);
	security_current_getlsmprop_subj(&then);
	revert_creds(old);
	return !memcmp(&now, &then, sizeof(now));
#else
	u32 now = 0, then = 0;

	security_current_getsecid_subj(&now);
	old = override_creds(new);
	security_current_getsecid_subj(&then);
	revert_creds(old);
	return now == then;
#endif
}

/* The user namespace exec would give the task's mm (mm->user_ns; 7.x: task->exec_state). */
static inline struct user_namespace *imgcr_exec_user_ns(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	struct user_namespace *ns;

	rcu_read_lock();
	ns = rcu_dereference(t->exec_state)->user_ns;
	rcu_read_unlock();
	return ns;
#else
	return t->mm->user_ns;
#endif
}

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

/*
 * lookup_one_len_unlocked(name, base, len) became lookup_one_unlocked(idmap,
 * qstr, base) in 6.16; both check MAY_EXEC on the parent.
 */
static inline struct dentry *imgcr_lookup_unlocked(const char *name,
						   struct dentry *base)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return lookup_one_unlocked(&nop_mnt_idmap, &QSTR(name), base);
#else
	return lookup_one_len_unlocked(name, base, strlen(name));
#endif
}

/*
 * The vvar pages below the vdso: the image's -sym_vvar_start until 6.15,
 * then the generic vdso data store's __VDSO_PAGES (checked on 7.2: two
 * mappings, [vvar] and [vvar_vclock], where 6.12 has one).
 */
static inline unsigned long imgcr_vvar_size(const struct vdso_image *vi)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	return __VDSO_PAGES * PAGE_SIZE;
#else
	return -vi->sym_vvar_start;
#endif
}

/*
 * The task's FPU state: thread.fpu until 6.15, then right after the
 * task_struct.  Debian's 7.2 has CONFIG_X86_DEBUG_FPU, which makes
 * x86_task_fpu() an unexported function; its body is the header's macro,
 * used here either way.
 */
static inline struct fpu *imgcr_task_fpu(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	return (struct fpu *)((void *)t + sizeof(*t));
#else
	return &t->thread.fpu;
#endif
}

/*
 * Checked at load (binfmt_img): the FPU state of the loading task is where
 * imgcr_task_fpu() says, its fpstate pointing at its own __fpstate (a task
 * that never enabled dynamic features such as AMX, as insmod).
 */
static inline int imgcr_task_fpu_check(const char *mod)
{
	struct fpu *fpu = imgcr_task_fpu(current);

	if (fpu->fpstate != &fpu->__fpstate) {
		pr_err("%s: the FPU state is not where this kernel's headers place it; this kernel is not supported\n",
		       mod);
		return -ENOEXEC;
	}
	return 0;
}

/* wrmsrl() was renamed wrmsrq() in 6.16. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define imgcr_wrmsr(msr, val)	wrmsrq(msr, val)
#else
#define imgcr_wrmsr(msr, val)	wrmsrl(msr, val)
#endif

/* shmem_file_setup() takes vma_flags_t (checked: 7.2) instead of vm flags. */
static inline struct file *imgcr_shmem_file_setup(const char *name, loff_t size)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return shmem_file_setup(name, size, mk_vma_flags(VMA_NORESERVE_BIT));
#else
	return shmem_file_setup(name, size, VM_NORESERVE);
#endif
}

/*
 * Seals of a shared memory object (struct shmem_inode_info.seals, the
 * same unsigned int on 6.1, 6.12 and 7.2).  F_SEAL_EXEC came in 6.3: an
 * older kernel would not enforce it.
 */
#ifdef F_SEAL_EXEC
#define IMGCR_SEALS_HERE	IMGCR_SEALS_KNOWN
#else
#define IMGCR_SEALS_HERE	(IMGCR_SEALS_KNOWN & ~0x20)
#endif

/*
 * Of a tmpfs object, or of a hugetlbfs one (an MFD_HUGETLB memfd: struct
 * hugetlbfs_inode_info.seals, likewise on 6.1, 6.12 and 7.2).
 */
static inline unsigned int imgcr_shmem_seals(struct inode *inode)
{
#ifdef CONFIG_HUGETLBFS
	if (inode->i_sb->s_magic == HUGETLBFS_MAGIC)
		return READ_ONCE(HUGETLBFS_I(inode)->seals);
#endif
	return READ_ONCE(SHMEM_I(inode)->seals);
}

/* mm->flags became a bitmap read with mm_flags_test() in 6.18. */
static inline bool imgcr_mm_multiprocess(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
	return mm_flags_test(MMF_MULTIPROCESS, mm);
#else
	return test_bit(MMF_MULTIPROCESS, &mm->flags);
#endif
}

/* inode_permission() takes the mount's idmap since 6.3, its userns before. */
static inline int imgcr_path_permission(const struct path *p, int mask)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return inode_permission(mnt_idmap(p->mnt), d_inode(p->dentry), mask);
#else
	return inode_permission(mnt_user_ns(p->mnt), d_inode(p->dentry), mask);
#endif
}

/*
 * PR_SET_MDWE (6.3+): MMF_HAS_MDWE, which exec keeps, refuses mprotect()
 * making a mapping executable -- which every restore does.
 */
static inline bool imgcr_mm_has_mdwe(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
	return mm_flags_test(MMF_HAS_MDWE, mm);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return test_bit(MMF_HAS_MDWE, &mm->flags);
#else
	return false;
#endif
}

/*
 * PR_SET_MEMORY_MERGE (6.4+): MMF_VM_MERGE_ANY, KSM for every mapping of
 * the process, later ones included.
 */
static inline bool imgcr_mm_merge_any(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
	return mm_flags_test(MMF_VM_MERGE_ANY, mm);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return test_bit(MMF_VM_MERGE_ANY, &mm->flags);
#else
	return false;
#endif
}

/*
 * PR_SET_THP_DISABLE: MMF_DISABLE_THP in mm->flags until 6.18, then
 * MMF_DISABLE_THP_COMPLETELY (arg3 0) or _EXCEPT_ADVISED (arg3
 * PR_THP_DISABLE_EXCEPT_ADVISED) tested with mm_flags_test().  The image
 * records which (IMGCR_PROC_THP_*); a kernel before 6.18 has only the
 * complete form, and refuses an image with the other.
 */
static inline u32 imgcr_thp_disabled(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
	if (mm_flags_test(MMF_DISABLE_THP_COMPLETELY, mm))
		return IMGCR_PROC_THP_DISABLE;
	if (mm_flags_test(MMF_DISABLE_THP_EXCEPT_ADVISED, mm))
		return IMGCR_PROC_THP_DISABLE | IMGCR_PROC_THP_EXCEPT_ADVISED;
	return 0;
#else
	return test_bit(MMF_DISABLE_THP, &mm->flags) ? IMGCR_PROC_THP_DISABLE : 0;
#endif
}

/* prctl(PR_SET_THP_DISABLE, 1, arg3) of @flags (IMGCR_PROC_THP_*), or -1: not on this kernel */
static inline long imgcr_thp_disable_arg(u32 flags)
{
	if (!(flags & IMGCR_PROC_THP_EXCEPT_ADVISED))
		return 0;
#ifdef PR_THP_DISABLE_EXCEPT_ADVISED
	return PR_THP_DISABLE_EXCEPT_ADVISED;
#else
	return -1;
#endif
}

/*
 * Dumpability (PR_SET_DUMPABLE 0): per mm until 7.x, then per task in
 * task->exec_state (checked: 7.2; its getter is not exported, the
 * structure is in <linux/sched/exec_state.h>).
 */
static inline bool imgcr_not_dumpable(struct task_struct *t, struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	struct task_exec_state *es;
	bool off;

	rcu_read_lock();
	es = rcu_dereference(t->exec_state);
	off = READ_ONCE(es->dumpable) == TASK_DUMPABLE_OFF;
	rcu_read_unlock();
	return off;
#else
	return get_dumpable(mm) == SUID_DUMP_DISABLE;
#endif
}

/*
 * The dumpable value PR_GET_DUMPABLE gives (0, 1 or 2, stable ABI) of the
 * current task: of its mm until 7.x, of its exec_state since.
 */
#define IMGCR_DUMPABLE_ROOT 2	/* SUID_DUMP_ROOT, TASK_DUMPABLE_ROOT */
static inline int imgcr_get_dumpable(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	struct task_exec_state *es;
	int v;

	rcu_read_lock();
	es = rcu_dereference(current->exec_state);
	v = READ_ONCE(es->dumpable);
	rcu_read_unlock();
	return v;
#else
	return get_dumpable(current->mm);
#endif
}

/*
 * POSIX timers: 6.14 embedded the sigqueue in k_itimer and replaced
 * it_active by it_status; timer_create() hands out
 * signal->next_posix_timer_id, an atomic_t since 6.15 (checked: 7.2 takes
 * the first free id from there).
 */
static inline struct sigqueue *imgcr_timer_sigq(struct k_itimer *k)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	return &k->sigq;
#else
	return k->sigq;
#endif
}

static inline bool imgcr_timer_armed(struct k_itimer *k)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	/*
	 * The enum is private to kernel/time/posix-timers.h: DISARMED,
	 * ARMED, REQUEUE_PENDING (checked: 7.2).
	 */
	return k->it_status == 1;
#else
	return k->it_active;
#endif
}

static inline void imgcr_set_next_timer_id(struct signal_struct *sig, int id)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	atomic_set(&sig->next_posix_timer_id, id);
#else
	sig->next_posix_timer_id = id;
#endif
}

/*
 * fpu_copy_uabi_to_guest_fpstate(): EXPORT_SYMBOL_GPL until 7.x, then
 * exported to the KVM modules only (EXPORT_SYMBOL_FOR_KVM, checked: 7.2),
 * which modpost refuses to any other module.  There binfmt_img resolves it
 * like its other kernel symbols (IMGCR_COMPAT_LOADER_KSYMS, ksyms.h; an
 * exported function keeps its ENDBR64).
 */
#ifdef CONFIG_X86_64
#include <asm/fpu/api.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
extern unsigned long imgcr_fpu_copy_uabi_to_guest;
#define IMGCR_COMPAT_LOADER_KSYMS \
	{ "fpu_copy_uabi_to_guest_fpstate", &imgcr_fpu_copy_uabi_to_guest },
static inline int imgcr_fpu_copy_uabi_to_guest_fpstate(struct fpu_guest *g,
						       const void *buf,
						       u64 xcr0, u32 *vpkru)
{
	int (*fn)(struct fpu_guest *g, const void *buf, u64 xcr0, u32 *vpkru) =
		(void *)imgcr_fpu_copy_uabi_to_guest;

	return fn(g, buf, xcr0, vpkru);
}
#else
#define IMGCR_COMPAT_LOADER_KSYMS
#define imgcr_fpu_copy_uabi_to_guest_fpstate fpu_copy_uabi_to_guest_fpstate
#endif
#endif

#ifdef IMGCR_WANT_EXIT_TP
#include <trace/events/sched.h>
/*
 * sched_process_exit gained a group_dead argument after 6.12 (7.2 has
 * it): tell which by the prototype the header declares, and give the
 * probe the arguments the tracepoint passes.  Another prototype is a
 * build error.
 */
#define IMGCR_EXIT_TP_GROUP_DEAD					\
	_Generic(&trace_sched_process_exit,				\
		 void (*)(struct task_struct *): false,		\
		 void (*)(struct task_struct *, bool): true)
#endif

#ifdef CONFIG_SYSVIPC
/*
 * ipc/sem.c's private struct sem_undo_list (the same from 4.11 to 7.2): a
 * thread's list of semaphore adjustments, shared by CLONE_SYSVSEM.
 */
struct imgcr_sem_undo_list {
	refcount_t refcnt;
	spinlock_t lock;		/* of list_proc */
	struct list_head list_proc;	/* struct sem_undo, one per set */
};

/*
 * Whether @t has SEM_UNDO adjustments.  The caller holds its siglock and
 * saw it stopped and off its CPU: it cannot exit (exit_sem() frees the
 * list) meanwhile.  The list is only read for being empty: a set removed
 * meanwhile takes its entry out, and the stopped task adds none (nor does
 * any other task, unless the list is shared outside the stopped group:
 * the caller refuses that, imgcr_sem_undo_users()).
 */
static inline bool imgcr_sem_undo_pending(struct task_struct *t)
{
	struct imgcr_sem_undo_list *ulp;

	ulp = (struct imgcr_sem_undo_list *)READ_ONCE(t->sysvsem.undo_list);
	return ulp && !list_empty(&ulp->list_proc);
}

/* @t's undo list (an opaque cookie to compare), or NULL; as above */
static inline const void *imgcr_sem_undo_list(struct task_struct *t)
{
	return READ_ONCE(t->sysvsem.undo_list);
}

/*
 * How many tasks share the undo list @ulp (imgcr_sem_undo_list()): each
 * holds a reference (copy_semundo(), dropped by exit_sem()).
 */
static inline unsigned int imgcr_sem_undo_users(const void *ulp)
{
	return refcount_read(&((const struct imgcr_sem_undo_list *)ulp)->refcnt);
}
#endif

/*
 * SysV shm mappings (IMGCR_VMA_SYSVSHM) need ipc/shm.c's private struct
 * shmid_kernel, which is __randomize_layout: on a kernel built with
 * CONFIG_RANDSTRUCT_FULL or _PERFORMANCE its members are in an order this
 * copy cannot know (Debian's four kernels are RANDSTRUCT_NONE, checked).
 * There, and without CONFIG_SYSVIPC, the feature is compiled out: the
 * dump refuses such a mapping, the loader an image with one, before the
 * point of no return.
 */
#if defined(CONFIG_SYSVIPC) && !defined(CONFIG_RANDSTRUCT)
#define IMGCR_HAVE_SYSVSHM	1
#else
#define IMGCR_HAVE_SYSVSHM	0
#endif

#if IMGCR_HAVE_SYSVSHM
#include <linux/idr.h>
#include <linux/ipc.h>
#include <linux/ipc_namespace.h>
#include <linux/shm.h>
#include <uapi/linux/shm.h>

/* ipc/util.h's IPC_SHM_IDS, ipc/shm.c's SHM_DEST (the same since 2.6) */
#define IMGCR_IPC_SHM_IDS	2
#define IMGCR_SHM_DEST		01000	/* IPC_RMID while attached */

/*
 * ipc/shm.c's private struct shmid_kernel begins so (2.6 to 7.2), without
 * randstruct (IMGCR_HAVE_SYSVSHM).
 */
struct imgcr_shmid_kernel {
	struct kern_ipc_perm shm_perm;
	struct file *shm_file;
};

/*
 * The SysV shm segment @id of @ns, not removed (IPC_RMID), or NULL.  Under
 * rcu_read_lock(), which keeps what it returns in memory (ipc objects and
 * files are freed after a grace period).  An index is the id's low 15 bits,
 * or 24 with ipcmni_extend (ipc/util.h, private): both are tried, and the
 * object's own id decides.
 */
static inline struct imgcr_shmid_kernel *
imgcr_shm_find(struct ipc_namespace *ns, int id)
{
	static const int idx_bits[] = { 15, 24 };
	struct kern_ipc_perm *perm;
	unsigned int i;

	if (id < 0)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(idx_bits); i++) {
		perm = idr_find(&ns->ids[IMGCR_IPC_SHM_IDS].ipcs_idr,
				id & ((1 << idx_bits[i]) - 1));
		if (perm && perm->id == id) {
			if (READ_ONCE(perm->deleted) ||
			    (READ_ONCE(perm->mode) & IMGCR_SHM_DEST))
				return NULL;
			return container_of(perm, struct imgcr_shmid_kernel,
					    shm_perm);
		}
	}
	return NULL;
}

/*
 * The inode of a segment imgcr_shm_find() gave, or NULL; under the same
 * rcu_read_lock().  A segment removed meanwhile may have its file freed
 * and reused (files are SLAB_TYPESAFE_BY_RCU since 6.7): what this reads is
 * then in memory but maybe not the segment's, so it is only compared or
 * looked at, never trusted for more than a check the attach repeats.
 */
static inline struct inode *imgcr_shm_inode(struct imgcr_shmid_kernel *shp)
{
	struct file *f = READ_ONCE(shp->shm_file);

	return f ? READ_ONCE(f->f_inode) : NULL;
}
#endif

/* 6.3 made kernel_cap_t one u64 (it was two u32). */
static inline u64 imgcr_cap_u64(kernel_cap_t c)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return c.val;
#else
	return (u64)c.cap[1] << 32 | c.cap[0];
#endif
}

static inline kernel_cap_t imgcr_u64_cap(u64 v)
{
	kernel_cap_t c;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	c.val = v;
#else
	c.cap[0] = (u32)v;
	c.cap[1] = v >> 32;
#endif
	return c;
}

/*
 * poll()'s restart block keeps its end time (CLOCK_MONOTONIC): as a
 * timespec's two fields up to 6.12, as a struct timespec64 in 7.2.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
static inline ktime_t imgcr_poll_end(const struct restart_block *rb)
{
	return timespec64_to_ktime(rb->poll.end_time);
}

static inline void imgcr_poll_set_end(struct restart_block *rb, ktime_t t)
{
	rb->poll.end_time = ktime_to_timespec64(t);
}
#else
static inline ktime_t imgcr_poll_end(const struct restart_block *rb)
{
	return ktime_set(rb->poll.tv_sec, rb->poll.tv_nsec);
}

static inline void imgcr_poll_set_end(struct restart_block *rb, ktime_t t)
{
	struct timespec64 ts = ktime_to_timespec64(t);

	rb->poll.tv_sec = ts.tv_sec;
	rb->poll.tv_nsec = ts.tv_nsec;
}
#endif

/*
 * The flags futex_wait() keeps in its restart block (kernel/futex/futex.h,
 * private): a 32-bit futex waited on with FUTEX_WAIT(_BITSET) has
 * FLAGS_SIZE_32 from 6.7 on, and the other bits moved then.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define IMGCR_FUTEX_SIZE_32	0x02
#define IMGCR_FUTEX_SHARED	0x10
#define IMGCR_FUTEX_CLOCKRT	0x20
#define IMGCR_FUTEX_HAS_TIMEOUT	0x40
#else
#define IMGCR_FUTEX_SIZE_32	0x00
#define IMGCR_FUTEX_SHARED	0x01
#define IMGCR_FUTEX_CLOCKRT	0x02
#define IMGCR_FUTEX_HAS_TIMEOUT	0x04
#endif

#endif /* IMGCR_COMPAT_H */
