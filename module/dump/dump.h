/* SPDX-License-Identifier: GPL-2.0 */
/*
 * img_dump internals: the image of a stopped thread group, captured at
 * open() of /proc/<pid>/dump (dump.c) and served by read().
 */
#ifndef IMGCR_DUMP_H
#define IMGCR_DUMP_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/sched/signal.h>
#include <uapi/linux/imgcr.h>

#include "img_dump.h"

struct dump_run {
	unsigned long vaddr;
	unsigned long first;	/* index of its first page in dump_image.pages */
	unsigned long npages;
	bool anon;		/* of a private anonymous mapping */
};

/* One thread: threads[0] of a dump_image is the main thread. */
struct dump_thread {
	struct task_struct *task;	/* referenced */
	unsigned long switches;		/* its context switches at open() */
	/* its regsets, chosen under the siglock (see dump_gpregs()) */
	const struct user_regset_view *view;
	struct imgcr_prstatus prstatus;
	u8 fpregs[512];
	void *xstate;
	unsigned int xstate_size;
	struct imgcr_thread th;		/* per-thread state, main included */
	struct imgcr_creds creds;	/* its credentials */
	struct imgcr_seccomp seccomp;	/* its entry of NT_IMGCR_SECCOMP */
	struct imgcr_sleep sleep;	/* IMGCR_TASK_RESTART_BLOCK: its NT_IMGCR_SLEEPS entry */
	u64 temp_mask;			/* IMGCR_TASK_TEMP_SIGMASK: its call's mask */
	/* its SysV semaphore undo list and the list's users, read under the siglock */
	const void *sem_ulp;
	unsigned int sem_users;
};

struct dump_image {
	struct task_struct *task;	/* the thread group leader, referenced */
	struct mm_struct *mm;		/* mmget() reference */
	struct file *mem;		/* /proc/<pid>/mem: proof of access rights */
	int error;			/* sticky: once a thread ran, reads fail */

	struct dump_thread *threads;
	unsigned int nr_threads;	/* main thread included */

	/* captured state */
	struct imgcr_task tstate;
	struct imgcr_proc proc;
	struct imgcr_sigaction sigact[IMGCR_NSIG];
	struct imgcr_sigqueue *sigq;
	struct imgcr_posix_timer *timers;
	u64 auxv[IMGCR_AUXV_WORDS];
	unsigned int auxv_bytes;
	const void *vdso_text;		/* the kernel's vdso image: NT_IMGCR_VDSO */
	struct imgcr_seccomp *seccomp;	/* NT_IMGCR_SECCOMP, or NULL: none under seccomp */
	struct imgcr_sleep *sleeps;	/* NT_IMGCR_SLEEPS, or NULL: no thread in a nanosleep */
	size_t sleep_size;		/* of an entry: IMGCR_SLEEP_SIZE_V1 or the struct's */
	unsigned int nr_sleeps;
	struct imgcr_sigwait *sigwaits;	/* NT_IMGCR_SIGWAITS, or NULL: no temporary mask */
	unsigned int nr_sigwaits;
	struct imgcr_vma *vmas;
	size_t nr_vmas, cap_vmas;
	unsigned int nr_sysvshm;	/* IMGCR_VMA_SYSVSHM mappings */
	struct file **files;		/* distinct mapped files, referenced */
	size_t nr_files, cap_files;
	size_t *file_off;		/* offset of each file's record in filerecs */
	size_t cap_file_off;
	/* files by inode: bucket heads and chains, as index + 1 (0: none) */
	u32 *file_bucket;		/* 1 << file_hash_bits of them */
	unsigned int file_hash_bits;
	u32 *file_next;
	size_t cap_file_next;
	/* by file index: an fd of it found (check_shmem_private()) */
	unsigned long *file_held;
	size_t cap_file_held;		/* in longs */
	char *filerecs;			/* NT_IMGCR_FILES payload */
	size_t filerecs_len, cap_filerecs;
	struct page **pages;
	size_t nr_pages, cap_pages;
	struct dump_run *runs;
	size_t nr_runs, cap_runs;
	bool new_run;			/* next page starts a run (a new VMA) */
	bool run_anon;			/* ... of a private anonymous mapping */

	/* output layout */
	char *head;			/* ELF header, phdrs, notes, padding */
	size_t head_len;		/* == offset of the first page */

	/* an open dump: what it holds is let go once its process is gone */
	struct hlist_node open_node;	/* in the hash of open dumps */
	struct work_struct unpin_work;
	spinlock_t state_lock;		/* users and dying */
	unsigned int users;		/* reads and ioctls under way */
	bool dying;			/* its process is gone: no new user */
	bool unpinned;			/* pages, files and mem let go */

	/* why open() refused it, for the opener (dump_refusal.c) */
	char reason[IMGCR_REFUSAL_MAX];
};

/*
 * A refusal: one line in the kernel log, rate-limited (any user can make
 * refusals in a loop) ("img_dump: pid N: ..."
 * with @pid as the init namespace sees it), and the text after "pid N: "
 * kept as the reason dump_open() hands to its caller.  The first one
 * counts.  @fmt must name only what the caller, who passed the access
 * check, can see anyway (its maps, its threads in its own PID namespace).
 */
#define dump_refuse(img, pid, fmt, ...)					\
	do {								\
		pr_info_ratelimited(IMGCR_DUMP_NAME ": pid %d: " fmt "\n", \
				    (pid), ##__VA_ARGS__);		\
		if (!(img)->reason[0])					\
			snprintf((img)->reason, sizeof((img)->reason),	\
				 fmt, ##__VA_ARGS__);			\
	} while (0)

/*
 * lock_task_sighand() is not exported; this is its body.  Returns the
 * locked sighand, or NULL if the task has gone.
 */
static inline struct sighand_struct *dump_lock_sighand(struct task_struct *t,
						       unsigned long *flags)
{
	struct sighand_struct *sighand;

	rcu_read_lock();
	for (;;) {
		sighand = rcu_dereference(t->sighand);
		if (!sighand)
			break;
		spin_lock_irqsave(&sighand->siglock, *flags);
		if (likely(sighand == rcu_access_pointer(t->sighand)))
			break;
		spin_unlock_irqrestore(&sighand->siglock, *flags);
	}
	rcu_read_unlock();
	return sighand;
}

/* Pages handed to GUP at once; it stops early at the first hole. */
#define GUP_BATCH 64

/* dump.c */
int grow(void **arr, size_t *cap, size_t need, size_t elem);
bool dump_unchanged(struct dump_image *img);

/* The name alloc_file_pseudo() gave MAP_HUGETLB's file (HUGETLB_ANON_FILE). */
#define IMGCR_HUGETLB_ANON_FILE	"anon_hugepage"

/* dump_pages.c: the pages open() pins, and read() and the ioctls */
int dump_vma_pages(struct dump_image *img, struct vm_area_struct *vma);
int dump_shmem_pages(struct dump_image *img, struct vm_area_struct *vma);
ssize_t dump_read_img(struct dump_image *img, char __user *buf,
		      size_t count, loff_t *ppos);
long dump_ioctl_dump_to(struct dump_image *img, void __user *uarg,
			bool with_skip);
long dump_ioctl_precopy(struct dump_image *img, void __user *uarg);

/* dump_signals.c: pending signals, interval and POSIX timers, prctl state */
int dump_signals(struct dump_image *img);
int dump_timers(struct dump_image *img);
void dump_proc_state(struct dump_image *img);

#endif /* IMGCR_DUMP_H */
