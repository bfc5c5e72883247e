/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * imgcr image format.
 *
 * An image is an ELF64 ET_CORE file for x86_64, readable by readelf and gdb:
 *
 *   ELF header
 *   program headers: one PT_NOTE, then one PT_LOAD per run of dumped pages
 *   note segment:
 *     "CORE"  NT_PRSTATUS   struct imgcr_prstatus (general registers)
 *     "CORE"  NT_PRPSINFO   struct imgcr_prpsinfo
 *     "CORE"  NT_PRFPREG    512-byte FXSAVE area
 *     "LINUX" NT_X86_XSTATE full user XSAVE area, standard (uncompacted) format
 *     "CORE"  NT_AUXV       the task's saved auxiliary vector
 *     "IMGCR" NT_IMGCR_TASK    struct imgcr_task
 *     "IMGCR" NT_IMGCR_SIGACT  struct imgcr_sigaction[IMGCR_NSIG]
 *     "IMGCR" NT_IMGCR_VMAS    struct imgcr_vma[imgcr_task.nr_vmas]
 *     "IMGCR" NT_IMGCR_FILES   struct imgcr_file records (variable length)
 *   page data, each PT_LOAD's p_offset page aligned
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

#include <linux/types.h>

#define IMGCR_NOTE_OWNER	"IMGCR"
#define IMGCR_FORMAT_VERSION	1
#define IMGCR_PAGE_SIZE		4096

/* Note types under the "IMGCR" owner. */
#define NT_IMGCR_TASK		0x494d4301
#define NT_IMGCR_SIGACT		0x494d4302
#define NT_IMGCR_VMAS		0x494d4303
#define NT_IMGCR_FILES		0x494d4304

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

/* NT_IMGCR_TASK: everything about the task that is not a register. */
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

/* imgcr_vma.prot: PROT_READ, PROT_WRITE, PROT_EXEC */
#define IMGCR_PROT_READ		0x1
#define IMGCR_PROT_WRITE	0x2
#define IMGCR_PROT_EXEC		0x4

/* imgcr_vma.flags */
#define IMGCR_VMA_GROWSDOWN	0x1	/* a stack that grows down */
#define IMGCR_VMA_SHARED	0x2	/* MAP_SHARED (IMGCR_VMA_FILE only) */
#define IMGCR_VMA_ACCOUNT	0x4	/* was writable once: VM_ACCOUNT, kept by mprotect */
#define IMGCR_VMA_NORESERVE	0x8	/* MAP_NORESERVE */

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
	__u32 flags;		/* IMGCR_VMA_GROWSDOWN, _SHARED, ... */
	__u32 file;		/* index in NT_IMGCR_FILES, or IMGCR_NO_FILE */
};

/* imgcr_file.flags */
/*
 * IMGCR_FILE_WRITE: opened for writing (a writable shared mapping).
 * IMGCR_FILE_SHMEM: shared anonymous memory or a memfd, recreated empty with
 * this name and size, its contents from the PT_LOAD segments of its mappings.
 */
#define IMGCR_FILE_WRITE	0x1
#define IMGCR_FILE_SHMEM	0x2

/*
 * NT_IMGCR_FILES: variable-length records, each starting 8-byte aligned.
 * The identity fields let the loader refuse a file that changed since the
 * dump (not checked for IMGCR_FILE_SHMEM, which has no path to reopen).
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
	__u32 pad0;
	/*
	 * Absolute, NUL-terminated; for IMGCR_FILE_SHMEM the object's name
	 * ("dev/zero", "memfd:NAME").
	 */
	char path[];
};

#endif /* _UAPI_LINUX_IMGCR_H */
