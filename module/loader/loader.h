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
#include <linux/hrtimer.h>
#include <linux/posix-timers.h>
#include <linux/sched/signal.h>
#include <uapi/linux/imgcr.h>

#define IMGCR_LOADER_NAME "binfmt_img"

struct vdso_image;

/* the longest reason given to the caller (argv "--imgcr-status=") */
#define IMG_REASON_MAX	256

/*
 * A refusal: a line in the kernel log, rate-limited, and the first one's
 * text kept as the reason img_status_report() writes to the caller's
 * status pipe.  It names only what the caller may know: what its own
 * image and arguments hold, what it holds itself.
 */
#define img_err(img, fmt, ...)						\
	do {								\
		pr_info_ratelimited(IMGCR_LOADER_NAME ": %s: " fmt "\n",	\
				    (img)->bprm->filename, ##__VA_ARGS__); \
		if (!(img)->reason[0])					\
			snprintf((img)->reason, sizeof((img)->reason),	\
				 fmt, ##__VA_ARGS__);			\
	} while (0)

struct img_file {
	struct imgcr_file id;		/* identity recorded at dump */
	const char *path;		/* inside img->notes */
	struct file *file;		/* opened with the caller's rights */
	bool given;			/* IMGCR_FILE_SHMEM: the caller's memfd (--imgcr-shmfd=),
					 * which has its contents already */
	/*
	 * IMGCR_FILE_SHMEM: the object read-only, for IMGCR_VMA_RDONLY_FILE
	 * and a read-only mapping under F_SEAL_WRITE (map_one())
	 */
	struct file *rofile;
};

/* A mapping the caller already holds (argv "--imgcr-keep="). */
struct img_keep {
	u64 start, end;
};

/* What a thread's interrupted call needs back, besides its registers. */
struct img_call {
	struct imgcr_sleep sleep;	/* IMGCR_TASK_RESTART_BLOCK: its sleep */
	u64 temp_mask;			/* IMGCR_TASK_TEMP_SIGMASK: the call's mask */
};

/* One thread of the image: the main thread's comes from the task note. */
struct img_thread {
	struct imgcr_prstatus prstatus;	/* registers */
	struct imgcr_thread th;
	void *xstate;			/* img->xstate_size bytes */
	u32 pkru;			/* from xstate, if it has PKRU */
	struct imgcr_creds creds;	/* if img->has_creds */
	bool seccomp_strict;		/* enters seccomp strict mode last */
	struct img_call call;		/* its sleep, its call's mask */
};

/* img_vdso.c: a jump at the old vdso's @old_off to the new one's @new_off */
struct img_vdso_patch {
	u32 old_off, new_off;
};

struct img_vdso {
	void *old;			/* the image's vdso; NULL: the same as ours */
	const struct vdso_image *vi;	/* the running kernel's */
	unsigned int nr;
	struct img_vdso_patch patch[32];
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
	struct imgcr_proc proc;
	struct imgcr_thread main_th;	/* the main thread, from task and proc */
	struct img_call main_call;	/* the main thread's sleep, call's mask */
	struct img_thread *threads;	/* proc.nr_threads further threads */
	struct imgcr_sigqueue *sigq;	/* proc.nr_sigqueue */
	struct imgcr_posix_timer *timers;	/* proc.nr_timers */
	struct imgcr_seccomp *seccomp;	/* 1 + proc.nr_threads, or NULL (version 2) */
	bool main_strict;		/* the main thread was in seccomp strict mode */
	struct img_seccomp_set *sc;	/* argv "--imgcr-seccomp=": the filters */
	loff_t sc_size;
	struct imgcr_sigaction sigact[IMGCR_NSIG];
	u64 auxv[IMGCR_AUXV_WORDS];
	size_t auxv_bytes;
	void *xstate;
	size_t xstate_size;
	struct imgcr_vma *vmas;
	struct img_file *files;
	unsigned int nr_files;

	u32 pkru;			/* from xstate, if it has PKRU */
	struct imgcr_creds creds;	/* the main thread's, if has_creds */
	bool has_creds;			/* every thread has NT_IMGCR_CREDS */
	bool set_creds;			/* argv "--imgcr-creds": set them exactly */
	int stop_sig;			/* argv "--imgcr-stop[=SIG]": restore it stopped by SIG (0: not) */
	bool set_ids;			/* argv "--imgcr-ids": and the uids, gids */
	bool only_user;			/* argv "--imgcr-user=U:G": a user's task only */
	u32 user_uid, user_gid;
	u64 old_userns;			/* argv "--imgcr-userns=": the tree's user ns inode, or 0 */
	char *cloexec;			/* argv "--imgcr-cloexec=": fds to mark */
	char *shmfd;			/* argv "--imgcr-shmfd=": IDX:FD,... */
	struct img_keep *keep;		/* argv "--imgcr-keep=", sorted */
	unsigned int nr_keep;		/* non-zero: restore in place */
	unsigned long *kept;		/* bitmap over vmas: the kept ones */
	unsigned long *loaded;		/* bitmap over vmas: those with a PT_LOAD */
	struct path root;		/* argv "--imgcr-root=": where mapped files are */
	bool has_root;
	struct file *exe;		/* denied writes until it becomes mm->exe_file */
	struct img_vdso vdso;		/* the proxy, if the vdso differs */
	struct file *status;		/* argv "--imgcr-status=": the caller's pipe */
	bool status_parsed;		/* the arguments were looked at for it */
	char reason[IMG_REASON_MAX];	/* the first refusal (img_err()) */
};

/* img_parse.c */
int img_parse(struct img *img);
int img_reserve_huge(struct img *img);
bool img_sysvshm_piece(const struct img *img, unsigned int i);
bool img_exec_keeps_label(struct linux_binprm *bprm);
void img_free(struct img *img);

/* img_args.c: the arguments imgcr restore passes (img_parse() calls it) */
int img_parse_args(struct img *img);
/* a refused exec: its reason to the caller's --imgcr-status= pipe, if any */
void img_status_report(struct img *img);
/* --imgcr-ids: the credentials the mapped files are opened with (or NULL) */
struct cred *img_task_fs_cred(struct img *img);

/*
 * img_inplace.c: an image whose anonymous memory is partly the caller's
 * own already (shared copy-on-write with its parent) is restored into the
 * caller's mm instead of a new one.
 */
static inline bool img_in_place(const struct img *img)
{
	return img->nr_keep;
}

int img_inplace_check(struct img *img);
int img_inplace_begin(struct img *img);
int img_inplace_zap_holes(struct img *img);
void img_inplace_end(struct img *img);

/* img_restore.c: PR_SET_DUMPABLE 0, its failure logged */
int img_set_undumpable(struct img *img);
int img_fill_kept(unsigned long addr, const void *want, void *have, size_t n);

/* img_creds.c: capabilities, securebits, no_new_privs of each thread */
int img_check_creds(struct img *img, const struct imgcr_creds *t,
		    const char *who);
int img_creds_allowed(struct img *img, const struct imgcr_creds *t,
		      const char *who);
int img_ids_allowed(struct img *img, const struct imgcr_creds *t,
		    const char *who);
bool img_capable_after_exec(struct user_namespace *ns, int cap);
/* img_set_creds()'s @dumpable for a thread other than the main one */
#define IMGCR_DUMPABLE_HOLD	(-1)
int img_set_creds(const struct imgcr_creds *t, bool exact, bool ids,
		  int dumpable,
		  int pdeath);

/*
 * img_seccomp.c: the seccomp filters of each thread, from the file imgcr
 * restore hands in ("--imgcr-seccomp=FD"), checked before the point of
 * no return, installed last
 */
struct img_seccomp_set;
int img_seccomp_read(struct img *img, unsigned int fd);
int img_seccomp_check(struct img *img);
void img_seccomp_free(struct img_seccomp_set *s);
unsigned int img_seccomp_make_order(const struct img_seccomp_set *s,
				    unsigned int k);
int img_seccomp_before_thread(struct img_seccomp_set *s, unsigned int t);
int img_seccomp_install_own(const struct img_seccomp_set *s, unsigned int i);

/* img_vdso.c: an image from a kernel with another vdso */
int img_vdso_plan(struct img *img, const struct vdso_image *vi,
		  const void *old);
int img_vdso_map_proxy(struct img *img);

/* binfmt_img_main.c: syscall bodies, resolved at load (ksyms.h) */
extern unsigned long imgcr_sys_arch_prctl;
extern unsigned long imgcr_sys_mprotect;
extern unsigned long imgcr_sys_madvise;
extern unsigned long imgcr_sys_clone3;
extern unsigned long imgcr_sys_prctl;
extern unsigned long imgcr_sys_rt_sigqueueinfo;
extern unsigned long imgcr_sys_setitimer;
extern unsigned long imgcr_sys_timer_create;
extern unsigned long imgcr_sys_timer_settime;
extern unsigned long imgcr_sys_membarrier;
extern unsigned long imgcr_sys_mlock2;
extern unsigned long imgcr_sys_mlockall;
extern unsigned long imgcr_sys_setresuid;
extern unsigned long imgcr_sys_setresgid;
extern unsigned long imgcr_sys_seccomp;
extern unsigned long imgcr_sys_shmat;
extern unsigned long imgcr_sys_mmap;
extern unsigned long imgcr_hrtimer_nanosleep_restart;
extern unsigned long imgcr_do_restart_poll;
extern unsigned long imgcr_futex_wait_restart;
extern unsigned long imgcr_posix_cpu_nsleep_restart;
extern unsigned long imgcr_alarm_timer_nsleep_restart;

/* Call a syscall body resolved at load; see ksyms.h. */
static inline long img_call_sys(unsigned long fn, unsigned long a0,
				unsigned long a1, unsigned long a2,
				unsigned long a3)
{
	long (*sys)(const struct pt_regs *regs) = (void *)fn;
	struct pt_regs regs = { .di = a0, .si = a1, .dx = a2, .r10 = a3 };

	return sys(&regs);
}

/* The same with six arguments (mmap). */
static inline long img_call_sys6(unsigned long fn, unsigned long a0,
				 unsigned long a1, unsigned long a2,
				 unsigned long a3, unsigned long a4,
				 unsigned long a5)
{
	long (*sys)(const struct pt_regs *regs) = (void *)fn;
	struct pt_regs regs = { .di = a0, .si = a1, .dx = a2, .r10 = a3,
				.r8 = a4, .r9 = a5 };

	return sys(&regs);
}

/*
 * Interval timers survive exec: the caller's would go on firing in the
 * restored process unless the restore disarms them.
 */
static inline bool img_caller_has_itimers(void)
{
	struct signal_struct *sig = current->signal;
	bool armed;

	spin_lock_irq(&current->sighand->siglock);
	armed = hrtimer_active(&sig->real_timer) ||
		sig->it[CPUCLOCK_PROF].expires || sig->it[CPUCLOCK_VIRT].expires;
	spin_unlock_irq(&current->sighand->siglock);
	return armed;
}

/* img_restore.c */
struct img_group;
int img_restore_mm(struct img *img);
int img_restore_task(struct img *img, struct img_group *group);
void img_set_regs(const u64 *r);
void img_set_fsgs(const u64 *r);
int img_set_xstate(const void *xstate);
void img_set_thread_fields(const struct imgcr_thread *t);
void img_set_late_fields(u64 ax, const struct imgcr_thread *t);
void img_restart_pending(u32 flags, u64 nr, const struct img_call *c);

/*
 * img_group.c: the other threads, pending signals, timers and process
 * switches, recreated by the main thread on its way back to user space.
 */
struct img_group *img_group_prepare(struct img *img);
const struct imgcr_thread *img_group_main(struct img_group *g);
int img_group_run(struct img_group *g, int stop_sig);
void img_group_put(struct img_group *g);
int img_group_init(void);
void img_group_exit(void);

#endif /* IMGCR_LOADER_H */
