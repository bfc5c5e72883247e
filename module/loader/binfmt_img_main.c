// SPDX-License-Identifier: GPL-2.0
/*
 * binfmt_img: execve() of an image made by /proc/<pid>/dump resumes the
 * task it was dumped from, in the calling process.
 *
 * Modelled on load_elf_binary(): everything is read and checked first, then
 * begin_new_exec() (the point of no return), then the new process is built.
 * The caller keeps its own credentials: begin_new_exec() applies the usual
 * exec rules (no_new_privs, LSM hooks, dumpability) and set-ID images are
 * refused.  An image names credentials only to a caller that asks for them
 * ("--imgcr-creds", "--imgcr-ids": img_creds.c), and only those the caller
 * could give itself.
 */
#include <linux/binfmts.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "compat.h"
#include "ksyms.h"
#include "loader.h"

unsigned long imgcr_sys_arch_prctl;
unsigned long imgcr_sys_mprotect;
unsigned long imgcr_sys_mmap;
unsigned long imgcr_sys_madvise;
unsigned long imgcr_sys_clone3;
unsigned long imgcr_sys_prctl;
unsigned long imgcr_sys_rt_sigqueueinfo;
unsigned long imgcr_sys_setitimer;
unsigned long imgcr_sys_timer_create;
unsigned long imgcr_sys_timer_settime;
unsigned long imgcr_sys_membarrier;
unsigned long imgcr_sys_mlock2;
unsigned long imgcr_sys_mlockall;
unsigned long imgcr_sys_setresuid;
unsigned long imgcr_sys_setresgid;
unsigned long imgcr_sys_seccomp;
unsigned long imgcr_sys_shmat;
/* not called: set as a restored thread's restart_block.fn (img_restore.c) */
unsigned long imgcr_hrtimer_nanosleep_restart;
unsigned long imgcr_do_restart_poll;
unsigned long imgcr_futex_wait_restart;
unsigned long imgcr_posix_cpu_nsleep_restart;
unsigned long imgcr_alarm_timer_nsleep_restart;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
unsigned long imgcr_fpu_copy_uabi_to_guest;	/* compat.h */
#endif

static struct imgcr_ksym loader_ksyms[] = {
	{ "__x64_sys_arch_prctl", &imgcr_sys_arch_prctl },
	{ "__x64_sys_mprotect", &imgcr_sys_mprotect },
	{ "__x64_sys_mmap", &imgcr_sys_mmap },
	{ "__x64_sys_madvise", &imgcr_sys_madvise },
	{ "__x64_sys_clone3", &imgcr_sys_clone3 },
	{ "__x64_sys_prctl", &imgcr_sys_prctl },
	{ "__x64_sys_rt_sigqueueinfo", &imgcr_sys_rt_sigqueueinfo },
	{ "__x64_sys_setitimer", &imgcr_sys_setitimer },
	{ "__x64_sys_timer_create", &imgcr_sys_timer_create },
	{ "__x64_sys_timer_settime", &imgcr_sys_timer_settime },
	{ "__x64_sys_membarrier", &imgcr_sys_membarrier },
	{ "__x64_sys_mlock2", &imgcr_sys_mlock2 },
	{ "__x64_sys_mlockall", &imgcr_sys_mlockall },
	{ "__x64_sys_setresuid", &imgcr_sys_setresuid },
	{ "__x64_sys_setresgid", &imgcr_sys_setresgid },
	{ "__x64_sys_seccomp", &imgcr_sys_seccomp },
	{ "__x64_sys_shmat", &imgcr_sys_shmat, .optional = true },
	{ "hrtimer_nanosleep_restart", &imgcr_hrtimer_nanosleep_restart,
	  .optional = true },
	{ "do_restart_poll", &imgcr_do_restart_poll, .optional = true },
	{ "futex_wait_restart", &imgcr_futex_wait_restart, .optional = true },
	{ "posix_cpu_nsleep_restart", &imgcr_posix_cpu_nsleep_restart,
	  .optional = true },
	{ "alarm_timer_nsleep_restart", &imgcr_alarm_timer_nsleep_restart,
	  .optional = true },
	IMGCR_COMPAT_LOADER_KSYMS
};

/*
 * From the point of no return until img_resume() sets the image's mask,
 * signals wait.  The handlers then are exec's defaults (it flushed the
 * caller's) or, in place, the caller's: a signal whose action is to kill
 * would kill the task as it arrives (complete_signal()) rather than reach
 * the image's handler once the task runs.  Blocked before the point of no
 * return, so that no moment is left open; a refused exec gets its own mask
 * back.
 */
static void block_signals(sigset_t *saved)
{
	sigset_t all;

	siginitsetinv(&all, sigmask(SIGKILL) | sigmask(SIGSTOP));
	sigprocmask(SIG_SETMASK, &all, saved);
}

static int load_img_binary(struct linux_binprm *bprm)
{
	struct img_group *group;
	struct img *img;
	sigset_t saved;
	int ret;

	/* a kernel thread's execve (init, usermode helpers): no image of ours */
	if (!current->mm)
		return -ENOEXEC;
	img = kzalloc(sizeof(*img), GFP_KERNEL_ACCOUNT);
	if (!img)
		return -ENOMEM;
	img->bprm = bprm;
	ret = img_parse(img);
	if (!ret)
		ret = img_inplace_check(img);
	if (ret)
		goto refused;
	group = img_group_prepare(img);
	if (IS_ERR(group)) {
		ret = PTR_ERR(group);
		goto refused;
	}
	/* the last check: it reserves huge pages on the caller's memfds */
	ret = img_reserve_huge(img);
	if (ret) {
		img_group_put(group);
		goto refused;
	}

	/* the point of no return */
	block_signals(&saved);
	if (img_in_place(img)) {
		ret = img_inplace_begin(img);
	} else {
		/* not dumpable from the start: exec then uses suid_dumpable */
		if (img->proc.flags & IMGCR_PROC_NOT_DUMPABLE)
			bprm->interp_flags |= BINPRM_FLAGS_ENFORCE_NONDUMP;
		ret = begin_new_exec(bprm);
	}
	if (ret && !bprm->point_of_no_return)
		sigprocmask(SIG_SETMASK, &saved, NULL);
	if (!ret)
		ret = img_restore_mm(img);
	if (ret) {
		img_group_put(group);
		goto out;
	}
	ret = img_restore_task(img, group);	/* takes over the group */
	goto out;
refused:
	/* the caller goes on: tell it why (argv "--imgcr-status=") */
	img_status_report(img);
out:
	img_free(img);
	kfree(img);
	return ret;
}

static struct linux_binfmt img_format = {
	.module = THIS_MODULE,
	.load_binary = load_img_binary,
};

static int __init binfmt_img_init(void)
{
	int ret;

	ret = imgcr_ksyms_resolve(IMGCR_LOADER_NAME, loader_ksyms,
				  ARRAY_SIZE(loader_ksyms));
	if (ret)
		return ret;
	ret = imgcr_task_fpu_check(IMGCR_LOADER_NAME);
	if (ret)
		return ret;
	ret = img_group_init();
	if (ret)
		return ret;
	register_binfmt(&img_format);
	return 0;
}

static void __exit binfmt_img_exit(void)
{
	unregister_binfmt(&img_format);
	img_group_exit();
	/* A task may still be about to run img_resume(): let it finish. */
	synchronize_rcu_tasks();
}

module_init(binfmt_img_init);
module_exit(binfmt_img_exit);
MODULE_DESCRIPTION("imgcr: execute /proc/<pid>/dump images to resume tasks");
MODULE_AUTHOR("imgcr developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(IMGCR_VERSION);
