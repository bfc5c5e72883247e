/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where imgcr reaches kernel code that is not exported.
 *
 * Every non-exported function either module calls is listed in
 * IMGCR_KSYMS below and resolved by imgcr_ksyms_resolve() at module load.
 * A symbol that cannot be found, or that could not be called safely
 * through a pointer, makes the load fail with a message naming it.
 *
 * Why the address check: on kernels built with CONFIG_X86_KERNEL_IBT (the
 * Debian 6.12 build) an indirect call must land on an ENDBR64 instruction,
 * or an IBT-enforcing CPU raises #CP and the kernel BUG()s.  At boot the
 * kernel "seals" functions whose address is never taken by overwriting
 * their ENDBR64 with a 4-byte NOP.  QEMU/TCG does not enforce IBT, so tests
 * cannot catch a call into a sealed function: we check the bytes instead
 * and refuse to load.
 *
 * Addresses come from a registered-but-disabled kprobe rather than from
 * kallsyms_lookup_name(), which is neither exported nor, on 6.12, callable
 * (it is sealed itself).
 */
#ifndef IMGCR_KSYMS_H
#define IMGCR_KSYMS_H

#include <linux/kprobes.h>
#include <linux/printk.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86_KERNEL_IBT
#include <asm/ibt.h>
#endif

struct imgcr_ksym {
	const char *name;
	unsigned long *addr;
	/*
	 * a feature the module refuses without it (before the point of no
	 * return) rather than a reason not to load: *addr stays 0
	 */
	bool optional;
};

/*
 * Resolve one function and check that an indirect call to it is safe.
 * Returns 0 or a negative errno; logs why on failure.  An optional one
 * that is missing or sealed leaves *addr 0 and returns 0.
 */
static inline int imgcr_ksym_resolve(const char *mod, struct imgcr_ksym *ks)
{
	struct kprobe kp = {
		.symbol_name = ks->name,
		.flags = KPROBE_FLAG_DISABLED,	/* registered, never armed */
	};
	unsigned long a;
	int ret;

	*ks->addr = 0;
	ret = register_kprobe(&kp);
	if (ret < 0 && ks->optional) {
		pr_info("%s: kernel symbol %s not found (%d); what needs it is refused\n",
			mod, ks->name, ret);
		return 0;
	}
	if (ret < 0) {
		pr_err("%s: kernel symbol %s not found (%d); this kernel is not supported\n",
		       mod, ks->name, ret);
		return -ENOENT;
	}
	a = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

#ifdef CONFIG_X86_KERNEL_IBT
	{
		u32 insn;

		/*
		 * kprobes skips a leading ENDBR64 (or its seal) by 4 bytes.
		 * Only ENDBR64 itself will do (not its sealed form), so
		 * compare with gen_endbr() rather than use is_endbr(),
		 * which also accepts the seal and became an out-of-line
		 * function taking a pointer in 6.15.
		 */
		bool sealed = copy_from_kernel_nofault(&insn, (void *)(a - 4), 4) ||
			      insn != gen_endbr();

		if (sealed && ks->optional) {
			pr_info("%s: kernel function %s has no ENDBR64 (sealed by IBT); what needs it is refused\n",
				mod, ks->name);
			return 0;
		}
		if (sealed) {
			pr_err("%s: kernel function %s has no ENDBR64 (sealed by IBT); calling it could crash this kernel, refusing to load\n",
			       mod, ks->name);
			return -ENOEXEC;
		}
		a -= 4;
	}
#endif
	*ks->addr = a;
	return 0;
}

static inline int imgcr_ksyms_resolve(const char *mod, struct imgcr_ksym *tab,
				      size_t n)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = imgcr_ksym_resolve(mod, &tab[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The complete list.  img_dump:
 *   proc_pident_instantiate - builds a /proc/<pid>/ inode from a pid_entry
 *                             (static, address-taken: keeps its ENDBR64)
 *   proc_tgid_base_readdir  - the original readdir of /proc/<pid>/, called
 *                             from our readdir hook (a file_operations member)
 *   proc_pid_status         - the original /proc/<pid>/status, called from
 *                             the hook that appends "Children:" (a pid_entry
 *                             show function)
 * binfmt_img (sys_call_table entries, then one both modules use):
 *   __x64_sys_arch_prctl    - ARCH_MAP_VDSO_64 maps the vdso at a chosen
 *                             address
 *   __x64_sys_mprotect      - drops write access from a mapping filled while
 *                             writable, as the task's own mprotect() did
 *   __x64_sys_mmap          - maps anonymous huge pages (MAP_HUGETLB):
 *                             vm_mmap() does not make their hugetlbfs file,
 *                             and hugetlb_file_setup() is not exported
 *   __x64_sys_madvise       - gives each mapping its advice again
 *                             (MADV_DONTFORK, _WIPEONFORK, _HUGEPAGE,
 *                             _NOHUGEPAGE, _DONTDUMP, _SEQUENTIAL, _RANDOM,
 *                             _MERGEABLE); do_madvise() is not exported
 *   __x64_sys_mlock2        - locks each locked mapping again once filled
 *                             (MLOCK_ONFAULT for those locked on fault),
 *                             RLIMIT_MEMLOCK and CAP_IPC_LOCK checks
 *                             included; do_mlock() is static
 *   __x64_sys_mlockall      - MCL_FUTURE[|MCL_ONFAULT] as the process had
 *                             it (mm->def_flags), after the last mapping
 *   __x64_sys_clone3        - recreates each further thread with its TID
 *                             (set_tid), RLIMIT_NPROC, pids cgroup and LSM
 *                             checks included
 *   __x64_sys_prctl         - PR_SET_CHILD_SUBREAPER, PR_SET_THP_DISABLE,
 *                             PR_SET_DUMPABLE as the process had them
 *   __x64_sys_rt_sigqueueinfo - queues process-wide pending signals again
 *                             with their siginfo
 *   __x64_sys_setitimer     - re-arms ITIMER_REAL/VIRTUAL/PROF
 *   __x64_sys_timer_create, __x64_sys_timer_settime
 *                           - recreate POSIX timers under their ids
 *   __x64_sys_membarrier    - registers the process's membarrier commands
 *                             again (exec cleared mm->membarrier_state)
 *   __x64_sys_setresuid, __x64_sys_setresgid
 *                           - give each thread its IDs last ("--imgcr-ids"):
 *                             the user's struct and ucounts move with the
 *                             real uid (alloc_uid() is not exported), LSM
 *                             setid hooks included
 *   __x64_sys_seccomp       - installs each thread's seccomp filters again
 *                             (SECCOMP_SET_MODE_FILTER, the program in user
 *                             memory); seccomp_set_mode_filter() is static
 *   __x64_sys_shmat         - attaches each SysV shm segment the process had
 *                             mapped again at its address (do_shmat() is not
 *                             exported), its permission and LSM checks
 *                             included.  Optional (a kernel without
 *                             CONFIG_SYSVIPC has none): without it an image
 *                             with a SysV shm mapping is refused
 *
 *   hrtimer_nanosleep_restart - (both modules) never called: the dump
 *                             compares a stopped thread's restart_block.fn
 *                             with it, the loader sets it as a restored
 *                             sleep's restart_block.fn, which
 *                             restart_syscall() calls (address-taken: keeps
 *                             its ENDBR64).  Optional: without it a sleep
 *                             is dumped as EINTR, and an image with one is
 *                             refused
 *   do_restart_poll         - (both modules) the same for poll()
 *   futex_wait_restart      - (both modules) the same for a futex wait
 *                             with a timeout
 *   posix_cpu_nsleep_restart - (both modules) the same for a sleep on a
 *                             CPU clock; without it the dump refuses such
 *                             a sleep
 *   alarm_timer_nsleep_restart - (both modules) the same for a sleep on an
 *                             alarm clock; the same
 *
 * Tracepoint (exported API, found with for_each_kernel_tracepoint()):
 *   sched_process_fork      - hands each recreated thread the task_work that
 *                             sets its state before it first runs
 *
 * Hooked by name through ftrace (no address needed):
 *   proc_tgid_base_lookup, proc_tgid_base_readdir, proc_pid_status
 *
 * Private layouts copied from fs/proc (see proc_private.h):
 *   struct proc_inode, struct pid_entry
 */

#endif /* IMGCR_KSYMS_H */
