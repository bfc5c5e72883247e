/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * imgcr image format.
 *
 * An image is an ELF64 ET_CORE file for x86_64, readable by readelf and gdb:
 *
 *   ELF header
 *   program headers: one PT_NOTE, then one PT_LOAD per run of dumped pages
 *   note segment, the main thread (the thread group leader) first:
 *     "CORE"  NT_PRSTATUS   struct imgcr_prstatus (general registers)
 *     "CORE"  NT_PRPSINFO   struct imgcr_prpsinfo
 *     "CORE"  NT_AUXV       the task's saved auxiliary vector
 *     "CORE"  NT_PRFPREG    512-byte FXSAVE area
 *     "LINUX" NT_X86_XSTATE full user XSAVE area, standard (uncompacted) format
 *     "IMGCR" NT_IMGCR_TASK    struct imgcr_task (the process, main thread)
 *     "IMGCR" NT_IMGCR_SIGACT  struct imgcr_sigaction[IMGCR_NSIG]
 *     "IMGCR" NT_IMGCR_VMAS    struct imgcr_vma[imgcr_task.nr_vmas]
 *     "IMGCR" NT_IMGCR_FILES   struct imgcr_file records (variable length)
 *     "IMGCR" NT_IMGCR_PROC    struct imgcr_proc (process-wide state)
 *     "IMGCR" NT_IMGCR_SIGQUEUE struct imgcr_sigqueue[imgcr_proc.nr_sigqueue]
 *     "IMGCR" NT_IMGCR_TIMERS  struct imgcr_posix_timer[imgcr_proc.nr_timers]
 *     "IMGCR" NT_IMGCR_VDSO    a copy of the vdso (imgcr_task.vdso_size bytes)
 *     "IMGCR" NT_IMGCR_CREDS   struct imgcr_creds (the main thread's)
 *     "IMGCR" NT_IMGCR_SECCOMP struct imgcr_seccomp[1 + imgcr_proc.nr_threads]
 *     "IMGCR" NT_IMGCR_SLEEPS  struct imgcr_sleep[] (threads in a nanosleep
 *                           or a poll)
 *     "IMGCR" NT_IMGCR_SIGWAITS struct imgcr_sigwait[] (threads with a
 *                           call's temporary signal mask)
 *   then for each further thread, in the order of its notes:
 *     "CORE"  NT_PRSTATUS   its registers (pid = its TID)
 *     "CORE"  NT_PRFPREG
 *     "LINUX" NT_X86_XSTATE
 *     "IMGCR" NT_IMGCR_THREAD  struct imgcr_thread
 *     "IMGCR" NT_IMGCR_CREDS   struct imgcr_creds (this thread's)
 *   page data, each PT_LOAD's p_offset page aligned
 *
 * This is the order of the kernel's own core dumps (each thread's register
 * notes follow its NT_PRSTATUS), so gdb shows every thread.  A note belongs
 * to the thread of the NT_PRSTATUS before it; NT_SIGQUEUE and NT_TIMERS may
 * be absent when their count is 0.  NT_IMGCR_VDSO is absent if the task had
 * no vdso, and in images of imgcr before 0.2: those restore only on a
 * kernel with the same vdso.  NT_IMGCR_CREDS is absent in images of older
 * imgcr versions (every thread or none has one): such images restore with
 * the caller's credentials.  NT_IMGCR_SECCOMP is present exactly in
 * version 3 images, and in version 4 images with a thread under seccomp.
 * NT_IMGCR_SLEEPS is present exactly when a thread has
 * IMGCR_TASK_RESTART_BLOCK, NT_IMGCR_SIGWAITS exactly when a thread has
 * IMGCR_TASK_TEMP_SIGMASK.
 *
 * PT_LOAD segments carry only pages the task had present and private to it:
 * p_filesz == p_memsz, both multiples of the page size, sorted by address,
 * not overlapping, each inside one dumped VMA.  Everything the loader needs
 * beyond registers is in the "IMGCR" notes, whose layout is defined only
 * here.  All fields are little-endian and fixed-width; structures are padded
 * explicitly to 8 bytes.
 */
#ifndef _UAPI_LINUX_IMGCR_H
#define _UAPI_LINUX_IMGCR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define IMGCR_NOTE_OWNER	"IMGCR"
/*
 * Version 2 added threads, pending signals and timers (NT_IMGCR_PROC,
 * _THREAD, _SIGQUEUE, _TIMERS).  Version 3 added NT_IMGCR_SECCOMP: a
 * dumper writes version 3 only for a process with a thread under seccomp
 * (and then always with the note), version 2 otherwise, so that a loader
 * that knows only version 2 refuses exactly the images whose seccomp state
 * it would drop.  Version 4 is written only for a process recorded in
 * namespaces of its own (IMGCR_PROC_OWN_NS) or that maps a SysV shared
 * memory segment (IMGCR_VMA_SYSVSHM), so that older loaders refuse exactly
 * those; in it NT_IMGCR_SECCOMP is present iff a thread is under seccomp.
 * A loader refuses every version it does not know.
 */
#define IMGCR_FORMAT_VERSION	4
#define IMGCR_FORMAT_VERSION_SECCOMP	3
#define IMGCR_FORMAT_VERSION_NOSECCOMP	2
#define IMGCR_PAGE_SIZE		4096

/* Note types under the "IMGCR" owner. */
#define NT_IMGCR_TASK		0x494d4301
#define NT_IMGCR_SIGACT		0x494d4302
#define NT_IMGCR_VMAS		0x494d4303
#define NT_IMGCR_FILES		0x494d4304
#define NT_IMGCR_PROC		0x494d4305
#define NT_IMGCR_THREAD		0x494d4306
#define NT_IMGCR_SIGQUEUE	0x494d4307
#define NT_IMGCR_TIMERS		0x494d4308
/*
 * The vdso text the task ran with: a kernel with another vdso maps its own
 * elsewhere and keeps this copy at the old address, each function's entry
 * point made a jump to the new vdso's function of the same name.
 */
#define NT_IMGCR_VDSO		0x494d4309
/* A thread's credentials: struct imgcr_creds (one per thread, or none). */
#define NT_IMGCR_CREDS		0x494d430b
/* Each thread's seccomp mode and filter count (version 3). */
#define NT_IMGCR_SECCOMP	0x494d430a
/* The restart blocks of threads with IMGCR_TASK_RESTART_BLOCK: struct imgcr_sleep[] */
#define NT_IMGCR_SLEEPS		0x494d430c
/* The temporary masks of threads with IMGCR_TASK_TEMP_SIGMASK: struct imgcr_sigwait[] */
#define NT_IMGCR_SIGWAITS	0x494d430d

/* Standard note types the image uses (same values as <elf.h>). */
#define IMGCR_NT_PRSTATUS	1
#define IMGCR_NT_PRFPREG	2
#define IMGCR_NT_PRPSINFO	3
#define IMGCR_NT_AUXV		6
#define IMGCR_NT_X86_XSTATE	0x202

/* Limits the loader enforces; a dumper never writes more. */
#define IMGCR_MAX_VMAS		65530	/* DEFAULT_MAX_MAP_COUNT */
#define IMGCR_MAX_PHDRS		65535	/* e_phnum; PN_XNUM is not used */
#define IMGCR_MAX_NOTES_SIZE	(16u << 20)
#define IMGCR_MAX_PATH		4096
#define IMGCR_NSIG		64
#define IMGCR_AUXV_WORDS	(2 * 64)	/* >= the kernel's AT_VECTOR_SIZE */
#define IMGCR_MAX_THREADS	4096	/* threads per image besides the main one */
#define IMGCR_MAX_SIGQUEUE	65536	/* queued signals per image */
#define IMGCR_MAX_TIMERS	4096	/* POSIX timers per image */
#define IMGCR_SIGINFO_SIZE	128	/* sizeof(siginfo_t) */

/* Index of each register in imgcr_prstatus.regs (struct user_regs_struct). */
enum imgcr_reg {
	IMGCR_REG_R15, IMGCR_REG_R14, IMGCR_REG_R13, IMGCR_REG_R12,
	IMGCR_REG_RBP, IMGCR_REG_RBX, IMGCR_REG_R11, IMGCR_REG_R10,
	IMGCR_REG_R9, IMGCR_REG_R8, IMGCR_REG_RAX, IMGCR_REG_RCX,
	IMGCR_REG_RDX, IMGCR_REG_RSI, IMGCR_REG_RDI, IMGCR_REG_ORIG_RAX,
	IMGCR_REG_RIP, IMGCR_REG_CS, IMGCR_REG_EFLAGS, IMGCR_REG_RSP,
	IMGCR_REG_SS, IMGCR_REG_FS_BASE, IMGCR_REG_GS_BASE, IMGCR_REG_DS,
	IMGCR_REG_ES, IMGCR_REG_FS, IMGCR_REG_GS,
	IMGCR_NR_REGS
};

struct imgcr_timeval {
	__s64 tv_sec;
	__s64 tv_usec;
};

/* NT_PRSTATUS: byte for byte the x86_64 struct elf_prstatus (336 bytes). */
struct imgcr_prstatus {
	__s32 si_signo;
	__s32 si_code;
	__s32 si_errno;
	__s16 cursig;
	__u16 pad0;
	__u64 sigpend;
	__u64 sighold;
	__s32 pid;
	__s32 ppid;
	__s32 pgrp;
	__s32 sid;
	struct imgcr_timeval utime;
	struct imgcr_timeval stime;
	struct imgcr_timeval cutime;
	struct imgcr_timeval cstime;
	__u64 regs[IMGCR_NR_REGS];	/* enum imgcr_reg */
	__s32 fpvalid;
	__u32 pad1;
};

/* NT_PRPSINFO: the x86_64 struct elf_prpsinfo (136 bytes). */
struct imgcr_prpsinfo {
	char state;
	char sname;
	char zomb;
	char nice;
	__u32 pad0;
	__u64 flag;
	__u32 uid;
	__u32 gid;
	__s32 pid;
	__s32 ppid;
	__s32 pgrp;
	__s32 sid;
	char fname[16];
	char psargs[80];
};

/* imgcr_task.flags */
#define IMGCR_TASK_RESTARTED_SYSCALL	0x1	/* ip was moved back onto a syscall */
#define IMGCR_TASK_INTERRUPTED_SYSCALL	0x2	/* a restart block became -EINTR */
/*
 * With IMGCR_TASK_RESTARTED_SYSCALL, at most one: the -ERESTART* code the
 * call had returned (rax holds the call's number, rip its syscall
 * instruction).  The loader puts the call back as it was interrupted
 * (rip after the instruction, orig_rax the number, rax the code), so that
 * a signal that comes before the thread runs again is handled as the
 * kernel would have: the call returns EINTR or is restarted.  Without
 * one (images of format 4 before these flags, a ptrace syscall-entry
 * stop) the call is restarted whatever comes.
 */
#define IMGCR_TASK_RESTART_SYS		0x4	/* -ERESTARTSYS (512) */
#define IMGCR_TASK_RESTART_NOINTR	0x8	/* -ERESTARTNOINTR (513) */
#define IMGCR_TASK_RESTART_NOHAND	0x10	/* -ERESTARTNOHAND (514) */
/*
 * -ERESTART_RESTARTBLOCK (516) of a relative nanosleep() or
 * clock_nanosleep() (the kernel's hrtimer_nanosleep_restart): the thread's
 * entry of NT_IMGCR_SLEEPS says what its restart block held.  The loader
 * makes the kernel's restart block again (the function chosen by the
 * loader, never by the image), so that with no signal the sleep goes on
 * for its remaining time through restart_syscall(), and a handled signal
 * makes it return EINTR.  The same for a poll() (do_restart_poll, entry
 * with IMGCR_SLEEP_POLL) and a futex wait with a timeout
 * (futex_wait_restart, IMGCR_SLEEP_FUTEX), a sleep on the process's CPU
 * clock (posix_cpu_nsleep_restart; also one with TIMER_ABSTIME) or on an
 * alarm clock (alarm_timer_nsleep_restart).  Other restart blocks
 * (32-bit calls) are dumped as IMGCR_TASK_INTERRUPTED_SYSCALL.  Loaders before it refuse the flag
 * (and loaders before IMGCR_SLEEP_POLL refuse that entry flag).
 */
#define IMGCR_TASK_RESTART_BLOCK	0x20
/*
 * The thread was stopped in sigsuspend(), ppoll(), pselect6() or
 * epoll_pwait() (the kernel's TS_RESTORE_SIGMASK): the call's temporary
 * mask is in force and the thread's own one (imgcr_thread.blocked, which
 * older loaders restore alone) comes back when the call returns, or in
 * the frame of the handler that interrupts it.  The thread's entry of
 * NT_IMGCR_SIGWAITS holds the temporary mask; the loader sets both and the
 * flag again.  Loaders before it refuse the flag.
 */
#define IMGCR_TASK_TEMP_SIGMASK		0x40
#define IMGCR_TASK_RESTART_CODES	(IMGCR_TASK_RESTART_SYS | \
					 IMGCR_TASK_RESTART_NOINTR | \
					 IMGCR_TASK_RESTART_NOHAND | \
					 IMGCR_TASK_RESTART_BLOCK)

/*
 * NT_IMGCR_TASK: everything about the process and its main thread that is
 * not a register (per-thread fields of the other threads: imgcr_thread).
 */
struct imgcr_task {
	__u32 version;		/* IMGCR_FORMAT_VERSION */
	__u32 flags;		/* IMGCR_TASK_* */
	__u32 pid;		/* informational: the loader never uses it */
	__u32 personality;
	__u32 nr_vmas;		/* entries in NT_IMGCR_VMAS */
	__u32 nr_files;		/* records in NT_IMGCR_FILES */
	__u32 xstate_size;	/* bytes of NT_X86_XSTATE */
	__u32 vdso_crc;		/* crc32 of the kernel's vdso text, 0 if no vdso */
	__u64 xfeatures;	/* XSTATE_BV of the dumped state */

	/* mm_struct layout fields, as in prctl(PR_SET_MM_MAP) */
	__u64 start_code;
	__u64 end_code;
	__u64 start_data;
	__u64 end_data;
	__u64 start_brk;
	__u64 brk;
	__u64 start_stack;
	__u64 arg_start;
	__u64 arg_end;
	__u64 env_start;
	__u64 env_end;
	__u64 vdso;		/* vdso text address, 0 if none */
	__u64 vdso_size;	/* vdso text bytes */
	__u64 vvar_size;	/* bytes of [vvar] just below the vdso */

	/* signal state besides the handlers */
	__u64 blocked;		/* bit n-1 is signal n */
	__u64 sas_ss_sp;
	__u64 sas_ss_size;
	__u32 sas_ss_flags;
	__u32 exe_file;		/* NT_IMGCR_FILES index of /proc/PID/exe, or IMGCR_NO_FILE */

	/* registrations the kernel keeps for the task */
	__u64 robust_list;
	__u64 robust_list_len;
	__u64 clear_child_tid;
	__u64 rseq;		/* struct rseq address, 0 if none */
	__u32 rseq_len;
	__u32 rseq_sig;

	char comm[16];
};

/* NT_IMGCR_SIGACT: one entry per signal, index n-1 for signal n. */
struct imgcr_sigaction {
	__u64 handler;		/* SIG_DFL (0), SIG_IGN (1) or an address */
	__u64 flags;		/* SA_* */
	__u64 restorer;
	__u64 mask;		/* bit n-1 is signal n */
};

/* imgcr_vma.kind */
#define IMGCR_VMA_ANON		0	/* private anonymous memory */
#define IMGCR_VMA_FILE		1	/* mapping of imgcr_vma.file */
#define IMGCR_VMA_VDSO		2	/* the kernel's vdso, mapped by the loader */
#define IMGCR_VMA_VVAR		3	/* the vdso's data pages */
/*
 * An attached SysV shared memory segment (shmat()), version 4 images only:
 * imgcr_vma.file is its shmid in the process's IPC namespace (not an index
 * in NT_IMGCR_FILES), imgcr_vma.pgoff the offset in pages of the mapping's
 * start in the segment.  The image carries none of its pages: the segment
 * must exist at restore (imgcr restore recreates the segments of a tree's
 * own IPC namespace, contents included), at least as large as the
 * mapping, and is attached again there (read-only unless a piece has
 * IMGCR_PROT_WRITE or IMGCR_VMA_SHM_MAYWRITE; never with SHM_EXEC: the
 * pieces are given their protection by mprotect(), which for a segment
 * does not ask for its x bits, as for the task itself).  Never _SHARED, _GROWSDOWN, _DROPPABLE; huge page
 * segments (SHM_HUGETLB) are not supported.
 */
#define IMGCR_VMA_SYSVSHM	4

/* imgcr_vma.prot: PROT_READ, PROT_WRITE, PROT_EXEC */
#define IMGCR_PROT_READ		0x1
#define IMGCR_PROT_WRITE	0x2
#define IMGCR_PROT_EXEC		0x4

/* imgcr_vma.flags */
#define IMGCR_VMA_GROWSDOWN	0x1	/* a stack that grows down */
#define IMGCR_VMA_SHARED	0x2	/* MAP_SHARED (IMGCR_VMA_FILE, or ANON with _HUGETLB) */
#define IMGCR_VMA_ACCOUNT	0x4	/* was writable once: VM_ACCOUNT, kept by mprotect */
#define IMGCR_VMA_NORESERVE	0x8	/* MAP_NORESERVE */
/*
 * Advice the task gave with madvise(), and MAP_DROPPABLE: each one is given
 * again at restore (before the pages are filled in, so that the THP advice
 * applies to them too).  None of them changes what the image carries:
 * the pages of an IMGCR_VMA_DONTDUMP mapping are in the image like any
 * other's (the process needs them; "don't dump" is for core dumps).
 */
#define IMGCR_VMA_DONTFORK	0x10	/* MADV_DONTFORK: absent in a child */
#define IMGCR_VMA_WIPEONFORK	0x20	/* MADV_WIPEONFORK: zero in a child (IMGCR_VMA_ANON only) */
#define IMGCR_VMA_HUGEPAGE	0x40	/* MADV_HUGEPAGE (never with _NOHUGEPAGE) */
#define IMGCR_VMA_NOHUGEPAGE	0x80	/* MADV_NOHUGEPAGE, or MAP_STACK since Linux 6.7 */
#define IMGCR_VMA_DONTDUMP	0x100	/* MADV_DONTDUMP: left out of core dumps */
/*
 * MAP_DROPPABLE (Linux 6.11+): IMGCR_VMA_ANON only, always with _WIPEONFORK,
 * _DONTDUMP and _NORESERVE, never with _GROWSDOWN or _ACCOUNT, as mmap()
 * makes it.  Its pages are the ones not yet dropped at the dump.  A kernel
 * without MAP_DROPPABLE refuses the image.
 */
#define IMGCR_VMA_DROPPABLE	0x200
/*
 * Memory locking (mlock(), mlock2(), MAP_LOCKED, mlockall(MCL_CURRENT)):
 * VM_LOCKED, with VM_LOCKONFAULT for MLOCK_ONFAULT and MCL_ONFAULT.  Given
 * again with mlock2() once the pages are filled in, within the restored
 * task's RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK (the loader refuses the
 * exec before its point of no return otherwise).  A mapping locked on
 * fault gets no pages beyond the image's.  Never with _DROPPABLE.
 */
#define IMGCR_VMA_LOCKED	0x400
#define IMGCR_VMA_LOCKONFAULT	0x800	/* with _LOCKED only */
/* Read-ahead advice: MADV_SEQUENTIAL, MADV_RANDOM (never both). */
#define IMGCR_VMA_SEQ_READ	0x1000
#define IMGCR_VMA_RAND_READ	0x2000
/* MADV_MERGEABLE (KSM): private mappings only, never with _DROPPABLE. */
#define IMGCR_VMA_MERGEABLE	0x4000
/*
 * IMGCR_VMA_SYSVSHM only, its one possible flag: attached for writing (no
 * SHM_RDONLY, VM_MAYWRITE), so that mprotect(PROT_WRITE) may make it
 * writable again even if no piece of the attachment is writable now.
 * Without it, the attachment is writable only if a piece is.
 */
#define IMGCR_VMA_SHM_MAYWRITE	0x8000

/*
 * A shared mapping of a shared memory object (IMGCR_FILE_SHMEM) through a
 * file not open for writing (no VM_SHARED, no VM_MAYWRITE: mprotect() can
 * never make it writable), never writable; the loader maps it so again,
 * through a read-only file of the object.  Without it a shared mapping of
 * such an object is made through a file open for writing.
 */
#define IMGCR_VMA_RDONLY_FILE	0x10000

/*
 * IMGCR_VMA_ANON only: anonymous memory of 2 MiB huge pages (MAP_HUGETLB),
 * private or, with IMGCR_VMA_SHARED, shared (by this mapping alone); start
 * and end 2 MiB aligned, pgoff 0, no other flags but _NORESERVE.  Mapped
 * again with MAP_HUGETLB | MAP_HUGE_2MB: the restore needs free huge pages
 * (vm.nr_hugepages) for it unless _NORESERVE.  Its PT_LOAD segments hold
 * its 4 KiB pieces that are not all zero.
 */
#define IMGCR_VMA_HUGETLB	0x20000

#define IMGCR_NO_FILE		0xffffffffu

/*
 * NT_IMGCR_VMAS: every mapping of the task, sorted by address.  PT_LOAD
 * segments carry the contents of private mappings (pages the task wrote)
 * and of shared memory objects (IMGCR_FILE_SHMEM); shared file mappings
 * are backed by their file.
 */
struct imgcr_vma {
	__u64 start;
	__u64 end;
	/*
	 * IMGCR_VMA_FILE: file offset in pages.  IMGCR_VMA_ANON: the kernel's
	 * vm_pgoff (start in pages, unless mremap() moved the region).
	 */
	__u64 pgoff;
	__u32 kind;		/* IMGCR_VMA_* */
	__u32 prot;		/* IMGCR_PROT_* */
	__u32 flags;		/* IMGCR_VMA_GROWSDOWN, _SHARED, ...; no others */
	__u32 file;		/* index in NT_IMGCR_FILES, or IMGCR_NO_FILE; SYSVSHM: shmid */
};

/* imgcr_file.flags */
/*
 * IMGCR_FILE_WRITE: opened for writing (a writable shared mapping).
 * IMGCR_FILE_SHMEM: shared anonymous memory or a memfd, recreated empty with
 * this name and size, its contents from the PT_LOAD segments of its shared
 * mappings.  A private mapping of one carries only the pages the task
 * wrote, like any private file mapping: the object must be a memfd the
 * caller gives the loader, already filled (--imgcr-shmfd); without it the
 * loader refuses the image.
 * IMGCR_FILE_DELETED: a regular file that was deleted while mapped; the path
 * is the one it had (without d_path()'s " (deleted)").  The image does not
 * carry its contents: imgcr dump saves them in the dump directory and imgcr
 * restore recreates the file at this path before the exec and unlinks it
 * after.  The loader opens the path and checks dev, size and mtime (not the
 * inode number, which is new); without the recreated file the exec fails.
 * Never together with IMGCR_FILE_SHMEM.
 * IMGCR_FILE_SEALS (IMGCR_FILE_SHMEM only): seals holds the object's seals
 * (F_SEAL_*, as F_GET_SEALS gives them), set again on the new object after
 * its contents and before its mappings are made.  Without it (images of
 * older dumps) the object keeps what the kernel gives a new one: F_SEAL_SEAL.
 * IMGCR_FILE_HUGETLB (IMGCR_FILE_SHMEM only): a memfd of 2 MiB huge pages
 * (memfd_create(MFD_HUGETLB)), mapped shared only.  The image carries none
 * of its pages: imgcr restore restores it from the fd the task holds (it
 * must hold one) and gives it to the loader (--imgcr-shmfd), which checks
 * it and maps it; without it the loader refuses the image (it cannot make
 * a hugetlbfs object itself).  Its shared mappings are 2 MiB aligned, in
 * start, end and offset, and within its size.
 */
#define IMGCR_FILE_WRITE	0x1
#define IMGCR_FILE_SHMEM	0x2
#define IMGCR_FILE_DELETED	0x4
#define IMGCR_FILE_SEALS	0x8
#define IMGCR_FILE_HUGETLB	0x10

/*
 * The seals IMGCR_FILE_SEALS may name: F_SEAL_SEAL, _SHRINK, _GROW, _WRITE,
 * _FUTURE_WRITE and _EXEC.  Under F_SEAL_WRITE or F_SEAL_FUTURE_WRITE no
 * shared mapping of the object is writable (the loader refuses such an
 * image), and each is made after the seals, as the kernel makes one then:
 * never to become writable (no VM_MAYWRITE).
 */
#define IMGCR_SEALS_KNOWN	0x3f

/*
 * NT_IMGCR_FILES: variable-length records, each starting 8-byte aligned.
 * The identity fields let the loader refuse a file that changed since the
 * dump (not checked for IMGCR_FILE_SHMEM, which has no path to reopen; the
 * inode number not for IMGCR_FILE_DELETED, whose file is a new copy).
 */
struct imgcr_file {
	__u32 reclen;		/* whole record, multiple of 8 */
	__u32 path_len;		/* bytes of path, including its NUL */
	__u64 dev;		/* st_dev as new_encode_dev() gives it */
	__u64 ino;
	__u64 size;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 mode;
	__u32 flags;		/* IMGCR_FILE_* */
	union {
		/*
		 * crc32_le(~0) of the first min(size, 4096) bytes: compared
		 * where the device or inode differ; 0: not recorded
		 */
		__u32 head_crc;
		/* IMGCR_FILE_SEALS: the seals of the shared memory object */
		__u32 seals;
	};
	/*
	 * Absolute, NUL-terminated; for IMGCR_FILE_SHMEM the object's name
	 * ("dev/zero", "memfd:NAME").
	 */
	char path[];
};

/* imgcr_proc.flags */
#define IMGCR_PROC_CHILD_SUBREAPER	0x1	/* PR_SET_CHILD_SUBREAPER */
#define IMGCR_PROC_THP_DISABLE		0x2	/* PR_SET_THP_DISABLE */
#define IMGCR_PROC_NOT_DUMPABLE		0x4	/* PR_SET_DUMPABLE 0 */
/*
 * membarrier(2) registrations of the process (mm->membarrier_state, which
 * exec clears): each is registered again at restore.
 */
#define IMGCR_PROC_MEMBARRIER_PRIVATE	0x8	/* MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED */
#define IMGCR_PROC_MEMBARRIER_SYNC_CORE	0x10	/* ..._PRIVATE_EXPEDITED_SYNC_CORE */
#define IMGCR_PROC_MEMBARRIER_RSEQ	0x20	/* ..._PRIVATE_EXPEDITED_RSEQ */
#define IMGCR_PROC_MEMBARRIER_GLOBAL	0x40	/* MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED */
/*
 * With IMGCR_PROC_THP_DISABLE: huge pages only where advised
 * (PR_THP_DISABLE_EXCEPT_ADVISED, Linux 6.18+).
 */
#define IMGCR_PROC_THP_EXCEPT_ADVISED	0x80
/*
 * mlockall(MCL_FUTURE): mm->def_flags VM_LOCKED, so that every mapping made
 * after the restore is locked too; with IMGCR_PROC_MCL_ONFAULT, locked on
 * fault (MCL_FUTURE | MCL_ONFAULT).  The mappings the process had are
 * locked through their own IMGCR_VMA_LOCKED.
 */
#define IMGCR_PROC_MCL_FUTURE		0x100
#define IMGCR_PROC_MCL_ONFAULT		0x200
/*
 * The process was in a PID or user namespace other than the dumper's:
 * TIDs (imgcr_thread.tid, imgcr_task.pid, NT_PRSTATUS pid, timer targets,
 * NT_IMGCR_SECCOMP tids) are as its own PID namespace sees them (the
 * numbers its memory holds: glibc's cached TIDs, futex owners), and the
 * credentials' IDs as its own user namespace sees them.  Without the flag
 * both are the dumper's, which were the same.  Queued siginfo's si_pid
 * and si_uid are always the receiver's view (the kernel stores them so).
 * Version 4 images only.
 */
#define IMGCR_PROC_OWN_NS		0x400
/*
 * Which of its namespaces IMGCR_PROC_OWN_NS stands for; set only with it,
 * and a dumper that knows them sets at least one: IMGCR_PROC_OWN_PIDNS,
 * its PID namespace was not the dumper's (its TIDs are that namespace's);
 * IMGCR_PROC_OWN_USERNS, a thread's user namespace was not the dumper's
 * (its IDs are that namespace's).  An image with IMGCR_PROC_OWN_NS and
 * neither was written before they existed and may have had either: a
 * loader takes it as possibly having had a PID namespace of its own.
 */
#define IMGCR_PROC_OWN_PIDNS		0x800
#define IMGCR_PROC_OWN_USERNS		0x1000
#define IMGCR_PROC_OWN_WHICH		(IMGCR_PROC_OWN_PIDNS | \
					 IMGCR_PROC_OWN_USERNS)
#define IMGCR_PROC_MEMBARRIER		(IMGCR_PROC_MEMBARRIER_PRIVATE | \
					 IMGCR_PROC_MEMBARRIER_SYNC_CORE | \
					 IMGCR_PROC_MEMBARRIER_RSEQ | \
					 IMGCR_PROC_MEMBARRIER_GLOBAL)

/* Indexes of imgcr_proc.itimer, as the which argument of setitimer(). */
#define IMGCR_ITIMER_REAL	0
#define IMGCR_ITIMER_VIRTUAL	1
#define IMGCR_ITIMER_PROF	2

struct imgcr_itimer {
	__u64 value_ns;		/* time to the next expiry; 0: disarmed */
	__u64 interval_ns;	/* reload value; 0: one-shot */
};

/* NT_IMGCR_PROC: process-wide state, and the main thread's newer fields. */
struct imgcr_proc {
	__u32 nr_threads;	/* NT_IMGCR_THREAD notes: threads but the main one */
	__u32 flags;		/* IMGCR_PROC_* */
	__u32 nr_sigqueue;	/* entries in NT_IMGCR_SIGQUEUE */
	__u32 nr_timers;	/* entries in NT_IMGCR_TIMERS */
	__u32 pdeath_signal;	/* main thread's PR_SET_PDEATHSIG */
	__u32 pad0;
	__u64 timer_slack_ns;	/* main thread's PR_SET_TIMERSLACK */
	__u64 default_timer_slack_ns;
	struct imgcr_itimer itimer[3];	/* IMGCR_ITIMER_* */
};

/*
 * NT_IMGCR_THREAD: a thread besides the main one; the same per-thread
 * fields as imgcr_task and imgcr_proc have for the main thread.
 */
struct imgcr_thread {
	__u32 tid;		/* restored as it was (clone3 set_tid) */
	__u32 flags;		/* IMGCR_TASK_RESTARTED_SYSCALL, ... */
	__u64 blocked;		/* bit n-1 is signal n */
	__u64 sas_ss_sp;
	__u64 sas_ss_size;
	__u32 sas_ss_flags;
	__u32 pdeath_signal;
	__u64 robust_list;
	__u64 robust_list_len;
	__u64 clear_child_tid;
	__u64 rseq;
	__u32 rseq_len;
	__u32 rseq_sig;
	__u64 timer_slack_ns;
	__u64 default_timer_slack_ns;
	__u64 xfeatures;	/* XSTATE_BV of its NT_X86_XSTATE */
	char comm[16];
};

/*
 * NT_IMGCR_SLEEPS: one entry per thread with IMGCR_TASK_RESTART_BLOCK, in
 * the order of the threads (the main thread first, then the others in the
 * order of their notes): a relative nanosleep() or clock_nanosleep() the
 * thread was stopped in, as the kernel's restart block kept it.  The
 * kernel keeps an absolute expiry on the clock; the image keeps the time
 * that was left at the dump, so that the time between dump and restore
 * does not count (as for timers) and the sleep is right on another boot,
 * whose clocks differ.  The loader sets the expiry to that clock's now +
 * remaining_ns.  (A sleep with TIMER_ABSTIME has no restart block: it is
 * an IMGCR_TASK_RESTART_NOHAND call, re-executed with its absolute time.)
 *
 * With IMGCR_SLEEP_POLL the entry is a poll() instead (the kernel's
 * do_restart_poll): clock CLOCK_MONOTONIC, on which poll() keeps its end
 * time, nfds and the pollfd array in rmtp; with IMGCR_SLEEP_TIMEOUT the
 * time left in remaining_ns (without, it waits with no timeout and
 * remaining_ns is 0).
 *
 * With IMGCR_SLEEP_FUTEX it is a futex wait with a timeout (the kernel's
 * futex_wait_restart; FUTEX_WAIT, or FUTEX_WAIT_BITSET with
 * FUTEX_BITSET_MATCH_ANY, on a 32-bit futex): rmtp is the futex word's
 * address, nfds the value waited for, IMGCR_SLEEP_SHARED for a futex not
 * FUTEX_PRIVATE_FLAG; clock CLOCK_MONOTONIC with the time left in
 * remaining_ns, or CLOCK_REALTIME (FUTEX_CLOCK_REALTIME) with the absolute
 * expiry in remaining_ns, kept as the kernel keeps it.  With
 * IMGCR_SLEEP_BITSET (FUTEX_WAIT_BITSET with another bitset) the bitset
 * is in bitset; without, the wait is FUTEX_BITSET_MATCH_ANY.
 *
 * A nanosleep entry may also be on a CPU clock (the kernel's
 * posix_cpu_nsleep_restart): clock CLOCK_PROCESS_CPUTIME_ID (the
 * process's own, whichever clockid named it) or the per-thread CPU clock
 * of another thread of the process (clockid as clock_getcpuclockid() or
 * pthread_getcpuclockid() make it, that thread's TID in it), remaining_ns
 * the CPU time left, which the loader adds to the restored clock's now.
 * A clock_nanosleep() with TIMER_ABSTIME on such a clock is dumped as
 * such an entry too (no rmtp): its absolute time is on the old process's
 * CPU clock, which the restored one does not continue.  Or on an alarm
 * clock (CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM; the kernel's
 * alarm_timer_nsleep_restart), which the loader restores only for a
 * caller with CAP_WAKE_ALARM, as clock_nanosleep() itself.
 *
 * The entries are the first 32 bytes of struct imgcr_sleep
 * (IMGCR_SLEEP_SIZE_V1), as loaders before IMGCR_SLEEP_BITSET know them,
 * unless an entry has IMGCR_SLEEP_BITSET: then all are the whole struct.
 */
#define IMGCR_SLEEP_RMTP	0x1	/* rmtp is a native struct timespec * */
#define IMGCR_SLEEP_POLL	0x2	/* a poll(): rmtp is its struct pollfd * */
#define IMGCR_SLEEP_TIMEOUT	0x4	/* IMGCR_SLEEP_POLL with a timeout */
#define IMGCR_SLEEP_FUTEX	0x8	/* a futex wait: rmtp is its u32 * */
#define IMGCR_SLEEP_SHARED	0x10	/* IMGCR_SLEEP_FUTEX, not private */
#define IMGCR_SLEEP_BITSET	0x20	/* IMGCR_SLEEP_FUTEX with bitset */

struct imgcr_sleep {
	__u32 tid;		/* the thread's, as in its imgcr_thread */
	__s32 clock;		/* CLOCK_MONOTONIC, _BOOTTIME, _TAI, a CPU or alarm clock */
	__u32 flags;		/* IMGCR_SLEEP_* */
	__u32 nfds;		/* IMGCR_SLEEP_POLL: poll()'s nfds; _FUTEX: val; else 0 */
	__u64 rmtp;		/* where EINTR stores the time left; 0 without _RMTP */
	__u64 remaining_ns;	/* left at the dump, at most KTIME_MAX */
	/* only in entries of IMGCR_SLEEP_BITSET images (see above) */
	__u32 bitset;		/* IMGCR_SLEEP_BITSET: the futex bitset (not 0); else 0 */
	__u32 pad;		/* 0 */
};
#define IMGCR_SLEEP_SIZE_V1	32

/*
 * NT_IMGCR_SIGWAITS: one entry per thread with IMGCR_TASK_TEMP_SIGMASK, in
 * the order of the threads (as NT_IMGCR_SLEEPS): the temporary mask of the
 * call it was stopped in.  Its own mask is imgcr_thread.blocked.
 */
struct imgcr_sigwait {
	__u32 tid;		/* the thread's, as in its imgcr_thread */
	__u32 pad0;		/* 0 */
	__u64 mask;		/* bit n-1 is signal n; never SIGKILL or SIGSTOP */
};

/* imgcr_creds.flags */
#define IMGCR_CREDS_NO_NEW_PRIVS	0x1	/* PR_SET_NO_NEW_PRIVS (per thread) */

/*
 * NT_IMGCR_CREDS: a thread's credentials as the kernel keeps them in its
 * struct cred.  Capability sets are bit masks, bit n for capability n
 * (CAP_CHOWN is bit 0).  IDs are as seen from the dumper's user namespace
 * (IMGCR_PROC_OWN_NS: from the thread's own).
 * The capability sets, securebits and no_new_privs are set from it when
 * the caller asks (argv "--imgcr-creds", see binfmt_img), never beyond
 * what the caller holds; otherwise it only drops what the thread did not
 * have.  The IDs are taken only when the caller asks too (argv
 * "--imgcr-ids", read in the caller's user namespace) and only IDs the
 * caller could give itself; otherwise the caller's are kept.
 */
struct imgcr_creds {
	__u32 uid, euid, suid, fsuid;
	__u32 gid, egid, sgid, fsgid;
	__u64 cap_inheritable;
	__u64 cap_permitted;
	__u64 cap_effective;
	__u64 cap_bset;
	__u64 cap_ambient;
	__u32 securebits;	/* SECBIT_* (prctl PR_GET_SECUREBITS) */
	__u32 flags;		/* IMGCR_CREDS_* */
	/*
	 * inode number of the user namespace the capabilities are held in
	 * (/proc/PID/ns/user): capabilities are only given again in it
	 */
	__u64 user_ns;
};

/* imgcr_seccomp.mode: as the kernel's task->seccomp.mode */
#define IMGCR_SECCOMP_DISABLED	0
#define IMGCR_SECCOMP_STRICT	1	/* SECCOMP_SET_MODE_STRICT; never with filters */
#define IMGCR_SECCOMP_FILTER	2	/* SECCOMP_SET_MODE_FILTER */

/*
 * NT_IMGCR_SECCOMP: one entry per thread, the main thread first, then the
 * other threads in the order of their notes.  The image does not carry the
 * filter programs (the kernel keeps no copy a module may read on every
 * kernel): imgcr dump reads them with ptrace(PTRACE_SECCOMP_GET_FILTER)
 * into a seccomp file (below), which imgcr restore hands to the exec as
 * "--imgcr-seccomp=FD".  A loader without it, or that cannot install
 * exactly these filters again, refuses the image, so that a restore never
 * runs a sandboxed process without its sandbox.
 */
struct imgcr_seccomp {
	__u32 tid;		/* the thread's TID, as in its NT_IMGCR_THREAD */
	__u32 mode;		/* IMGCR_SECCOMP_* */
	__u32 nr_filters;	/* filters in its chain (task->seccomp.filter_count) */
	__u32 pad0;
};

/*
 * The seccomp file (DIR/seccomp-PID.img, "--imgcr-seccomp=FD"): the
 * classic BPF filters of every thread of one process, as the kernel ran
 * them.  A struct imgcr_seccomp_file, then for each entry of
 * NT_IMGCR_SECCOMP, in the same order, a struct imgcr_seccomp_chain and
 * its nr_filters filters, the oldest (installed first) first, each a
 * struct imgcr_seccomp_filter followed by len struct sock_filter (8 bytes
 * each: __u16 code, __u8 jt, jf, __u32 k).  Threads whose chains begin
 * with the same filters share those in the restored process (installed
 * once before the threads are made, as SECCOMP_FILTER_FLAG_TSYNC or
 * inheritance had made them shared); the rest each thread installs
 * itself, last before its first user instruction.
 */
#define IMGCR_SECCOMP_MAGIC	0x504d4353	/* "SCMP" */
#define IMGCR_SECCOMP_VERSION	1
#define IMGCR_SECCOMP_MAX_SIZE	(16u << 20)	/* the loader reads no more */
#define IMGCR_SECCOMP_MAX_INSNS	4096		/* BPF_MAXINSNS, per filter */
/* each thread's chain: sum of (len + 4) but the newest's len (the kernel's) */
#define IMGCR_SECCOMP_MAX_PATH	32768

struct imgcr_seccomp_file {
	__u32 magic;		/* IMGCR_SECCOMP_MAGIC */
	__u32 version;		/* IMGCR_SECCOMP_VERSION */
	__u32 nr_threads;	/* entries of NT_IMGCR_SECCOMP */
	__u32 pad0;
};

struct imgcr_seccomp_chain {
	__u32 tid;		/* as in NT_IMGCR_SECCOMP */
	__u32 nr_filters;	/* as in NT_IMGCR_SECCOMP */
};

/* imgcr_seccomp_filter.flags: SECCOMP_FILTER_FLAG_* the kernel reports */
#define IMGCR_SECCOMP_FILTER_LOG	2	/* SECCOMP_FILTER_FLAG_LOG */

struct imgcr_seccomp_filter {
	__u32 flags;		/* IMGCR_SECCOMP_FILTER_* */
	__u32 len;		/* instructions, 1..IMGCR_SECCOMP_MAX_INSNS */
};

/*
 * NT_IMGCR_SIGQUEUE: pending signals in the order they were queued, each
 * with the siginfo_t a handler would be given.  Process-wide ones first,
 * then each thread's.
 */
struct imgcr_sigqueue {
	__u32 tid;		/* 0: process-wide (shared) pending; else the thread's */
	__u32 pad0;
	__u8 info[IMGCR_SIGINFO_SIZE];	/* siginfo_t; si_signo 1..64 */
};

/* imgcr_posix_timer.notify: the sigevent's sigev_notify */
#define IMGCR_SIGEV_SIGNAL	0
#define IMGCR_SIGEV_NONE	1
#define IMGCR_SIGEV_THREAD_ID	4	/* | IMGCR_SIGEV_SIGNAL: to tid */

/* NT_IMGCR_TIMERS: POSIX timers (timer_create), by id. */
struct imgcr_posix_timer {
	__s32 id;		/* restored as it was */
	__s32 clock;		/* CLOCK_REALTIME, _MONOTONIC, _BOOTTIME, _TAI */
	__s32 notify;		/* IMGCR_SIGEV_* */
	__s32 signo;
	__u64 value;		/* sigev_value */
	__u32 tid;		/* IMGCR_SIGEV_THREAD_ID target */
	__s32 overrun;		/* timer_getoverrun() of the last expiry */
	__u64 value_ns;		/* time to the next expiry; 0: disarmed */
	__u64 interval_ns;
};

/*
 * ioctl on an open /proc/PID/dump: write the whole image to the regular
 * file @fd (open for writing) at @offset, straight from the task's pages
 * (one copy, where read() and a write() make two), and check as read()
 * does that the task has not run meanwhile (EAGAIN: the file then holds a
 * torn image).  @written: bytes written.  Same image as read() gives.
 */
struct imgcr_dump_to {
	__s32 fd;
	__u32 flags;		/* 0 */
	__u64 offset;
	__u64 written;		/* out */
};

#define IMGCR_IOC_DUMP_TO	_IOWR(0xcc, 0x01, struct imgcr_dump_to)

/* A range of user addresses [start, end), both page-aligned. */
struct imgcr_range {
	__u64 start;
	__u64 end;
};

/*
 * IMGCR_IOC_DUMP_TO, leaving out the pages at the addresses of @ranges
 * (@nr_ranges struct imgcr_range, sorted, not overlapping, at most
 * IMGCR_MAX_SKIP_RANGES): their place in the file is passed over, for the
 * caller to fill with a copy it knows to be the same.  imgcr dump --live
 * does: pages it copied while the task ran, which the kernel's soft-dirty
 * bits show were not written since.  @skipped: pages left out.
 */
struct imgcr_dump_to_skip {
	struct imgcr_dump_to to;
	__u64 ranges;		/* user pointer to struct imgcr_range[] */
	__u64 nr_ranges;
	__u64 skipped;		/* out */
};

#define IMGCR_MAX_SKIP_RANGES	(1U << 20)
#define IMGCR_IOC_DUMP_TO_SKIP	_IOWR(0xcc, 0x02, struct imgcr_dump_to_skip)

/*
 * Copy the pages the open pinned in [start, end) (page-aligned) of private
 * anonymous mappings to @buf (the page at start + N * 4096 to buf +
 * N * 4096), and set status[N] to 1 for each page copied (0: not in the
 * image, as an all-zero page).  Allowed after the task ran: what is copied
 * is the pinned pages themselves, as they are now.  imgcr dump --live
 * opens /proc/PID/dump while the tree is frozen, lets it run, copies, and
 * at its final freeze keeps a copy only if the page frame is the same and
 * its soft-dirty bit is still clear.  @copied: pages copied.
 */
struct imgcr_precopy {
	__u64 start;
	__u64 end;
	__u64 buf;		/* user pointer, end - start bytes */
	__u64 status;		/* user pointer, (end - start) / 4096 bytes */
	__u32 flags;		/* 0 */
	__u32 pad;
	__u64 copied;		/* out */
};

#define IMGCR_IOC_PRECOPY	_IOWR(0xcc, 0x03, struct imgcr_precopy)

/*
 * The mappings of shared memory object @file (its index in the image's
 * file table: a memfd or shared anonymous memory, IMGCR_FILE_SHMEM; with
 * IMGCR_FILE_MAPS_FD, a memfd open as fd @file of the caller) in every
 * process, as the kernel counts them now (the VMAs on its inode's i_mmap
 * tree).  imgcr dump compares them with the tree's own: one more is a
 * process outside the tree (or the kernel) sharing the object, which a
 * restore would no longer share.  EINVAL for another kind of file.
 */
struct imgcr_file_maps {
	__u32 file;
	__u32 flags;		/* IMGCR_FILE_MAPS_* */
	__u64 mappings;		/* out */
};

#define IMGCR_FILE_MAPS_FD	0x1

#define IMGCR_IOC_FILE_MAPS	_IOWR(0xcc, 0x04, struct imgcr_file_maps)

#endif /* _UAPI_LINUX_IMGCR_H */
