// SPDX-License-Identifier: GPL-2.0
/*
 * Read an image and check every byte the restore will use, before
 * begin_new_exec(): until then a failing execve() leaves the caller as it
 * was.  The rules mirror the format in include/uapi/linux/imgcr.h; anything
 * outside them is refused rather than guessed at.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/personality.h>
#include <linux/poll.h>
#include <linux/ptrace.h>
#include <linux/regset.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/auxvec.h>
#include <linux/bsearch.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/crc32.h>
#include <linux/futex.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/seccomp.h>
#include <linux/security.h>
#include <linux/securebits.h>
#include <linux/signal.h>
#include <linux/sort.h>
#include <linux/threads.h>
#include <linux/xattr.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/vdso.h>
#include <asm/segment.h>

#include "checks.h"
#include "compat.h"
#include "file_head.h"
#include "loader.h"

/* The lowest address the loader maps (Debian's default mmap_min_addr). */
#define IMG_MIN_ADDR	65536UL

/* Longest time an image may give a timer, in ns (146 years; < KTIME_MAX). */
#define IMG_MAX_NS	(1ULL << 62)

#define SA_KNOWN (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_RESTORER | \
		  SA_ONSTACK | SA_RESTART | SA_NODEFER | SA_RESETHAND | \
		  SA_EXPOSE_TAGBITS)

#define PER_FLAGS_OK (ADDR_NO_RANDOMIZE | ADDR_COMPAT_LAYOUT | \
		      READ_IMPLIES_EXEC | UNAME26 | WHOLE_SECONDS | \
		      STICKY_TIMEOUTS | SHORT_INODE)

static bool user_addr_ok(u64 a)
{
	return a < TASK_SIZE_MAX;
}

static bool user_range_ok(u64 a, u64 len)
{
	return a < TASK_SIZE_MAX && len <= TASK_SIZE_MAX - a;
}

static int img_read(struct img *img, void *buf, size_t len, loff_t pos)
{
	ssize_t n;

	if (pos < 0 || len > img->size || pos > img->size - len)
		return -EINVAL;
	n = kernel_read(img->bprm->file, buf, len, &pos);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/* ENOEXEC for anything that is not an x86_64 ELF core file. */
static int img_check_elf(struct img *img)
{
	const struct elf64_hdr *eh = (const void *)img->bprm->buf;

	BUILD_BUG_ON(sizeof(*eh) > BINPRM_BUF_SIZE);
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_type != ET_CORE || eh->e_machine != EM_X86_64)
		return -ENOEXEC;
	if (eh->e_phentsize != sizeof(struct elf64_phdr) || !eh->e_phnum ||
	    eh->e_phnum == PN_XNUM)
		return -ENOEXEC;
	img->nphdrs = eh->e_phnum;
	img->size = i_size_read(file_inode(img->bprm->file));
	img->phdrs = kvmalloc_array(img->nphdrs, sizeof(*img->phdrs),
				    GFP_KERNEL_ACCOUNT);
	if (!img->phdrs)
		return -ENOMEM;
	if (img_read(img, img->phdrs, img->nphdrs * sizeof(*img->phdrs),
		     eh->e_phoff))
		return -ENOEXEC;
	return 0;
}

struct note_slot {
	const char *owner;
	u32 type;
	const void *desc;
	size_t len;
};

/* The main thread's notes, and the process-wide ones: at most one of each. */
enum {
	N_PRSTATUS, N_XSTATE, N_AUXV, N_TASK, N_SIGACT, N_VMAS, N_FILES,
	N_PROC, N_SIGQUEUE, N_TIMERS, N_VDSO, N_CREDS, N_SECCOMP, N_SLEEPS,
	N_SIGWAITS, N_MAX
};

static const struct note_slot note_kinds[N_MAX] = {
	[N_PRSTATUS] = { "CORE", IMGCR_NT_PRSTATUS },
	[N_XSTATE] = { "LINUX", IMGCR_NT_X86_XSTATE },
	[N_AUXV] = { "CORE", IMGCR_NT_AUXV },
	[N_TASK] = { IMGCR_NOTE_OWNER, NT_IMGCR_TASK },
	[N_SIGACT] = { IMGCR_NOTE_OWNER, NT_IMGCR_SIGACT },
	[N_VMAS] = { IMGCR_NOTE_OWNER, NT_IMGCR_VMAS },
	[N_FILES] = { IMGCR_NOTE_OWNER, NT_IMGCR_FILES },
	[N_PROC] = { IMGCR_NOTE_OWNER, NT_IMGCR_PROC },
	[N_SIGQUEUE] = { IMGCR_NOTE_OWNER, NT_IMGCR_SIGQUEUE },
	[N_TIMERS] = { IMGCR_NOTE_OWNER, NT_IMGCR_TIMERS },
	[N_VDSO] = { IMGCR_NOTE_OWNER, NT_IMGCR_VDSO },
	[N_CREDS] = { IMGCR_NOTE_OWNER, NT_IMGCR_CREDS },
	[N_SECCOMP] = { IMGCR_NOTE_OWNER, NT_IMGCR_SECCOMP },
	[N_SLEEPS] = { IMGCR_NOTE_OWNER, NT_IMGCR_SLEEPS },
	[N_SIGWAITS] = { IMGCR_NOTE_OWNER, NT_IMGCR_SIGWAITS },
};

/*
 * The notes of each further thread, exactly these in this order, then
 * NT_IMGCR_CREDS if the image has credentials (T_CREDS, not counted in
 * T_MAX: images of older imgcr versions have none).
 */
enum { T_PRSTATUS, T_FPREG, T_XSTATE, T_THREAD, T_MAX, T_CREDS = T_MAX, T_ALL };

static const struct note_slot thread_kinds[T_MAX] = {
	[T_PRSTATUS] = { "CORE", IMGCR_NT_PRSTATUS },
	[T_FPREG] = { "CORE", IMGCR_NT_PRFPREG },
	[T_XSTATE] = { "LINUX", IMGCR_NT_X86_XSTATE },
	[T_THREAD] = { IMGCR_NOTE_OWNER, NT_IMGCR_THREAD },
};

static const char *const thread_note_names[T_MAX] = {
	"NT_PRSTATUS", "NT_PRFPREG", "NT_X86_XSTATE", "NT_IMGCR_THREAD",
};

/* A note as found in the segment; its name is not NUL-terminated. */
struct note {
	const char *name;
	u32 namesz;
	u32 type;
	const void *desc;
	size_t len;
};

struct img_notes {
	struct note_slot slot[N_MAX];	/* the main thread's, process-wide */
	const char *threads;		/* the second NT_PRSTATUS, or NULL */
};

/* The note at *p, which then moves past it; false if it overruns @end. */
static bool next_note(const char **p, const char *end, struct note *n)
{
	const struct elf64_note *h = (const void *)*p;
	const char *name;
	size_t nsz, dsz;

	if (end - *p < sizeof(*h))
		return false;
	nsz = ALIGN((size_t)h->n_namesz, 4);
	dsz = ALIGN((size_t)h->n_descsz, 4);
	name = *p + sizeof(*h);
	if (nsz > end - name || dsz > end - name - nsz)
		return false;
	n->name = name;
	n->namesz = h->n_namesz;
	n->type = h->n_type;
	n->desc = name + nsz;
	n->len = h->n_descsz;
	*p = name + nsz + dsz;
	return true;
}

static bool note_is(const struct note *n, const struct note_slot *kind)
{
	return n->type == kind->type && n->namesz == strlen(kind->owner) + 1 &&
	       !memcmp(n->name, kind->owner, n->namesz);
}

/* A note of a kind the loader reads, for any thread. */
static bool note_known(const struct note *n)
{
	int i;

	for (i = 0; i < N_MAX; i++)
		if (note_is(n, &note_kinds[i]))
			return true;
	for (i = 0; i < T_MAX; i++)
		if (note_is(n, &thread_kinds[i]))
			return true;
	return false;
}

/*
 * Walk the note segment: the main thread's notes and the process-wide ones
 * come before the second NT_PRSTATUS, where the further threads' notes
 * start (img_read_threads() walks those).  Returns -ENOEXEC if there is no
 * imgcr task note (an ordinary core file), -EINVAL if it is malformed.
 */
static int img_find_notes(struct img *img, struct img_notes *nt)
{
	const char *p = img->notes, *end = p + img->notes_len, *at;
	const char *bad = NULL;
	struct note n;
	int i;

	memcpy(nt->slot, note_kinds, sizeof(note_kinds));
	nt->threads = NULL;
	while (p < end) {
		at = p;
		if (!next_note(&p, end, &n)) {
			bad = bad ?: "a note runs past the end of the segment";
			break;
		}
		if (!nt->threads && nt->slot[N_PRSTATUS].desc &&
		    note_is(&n, &note_kinds[N_PRSTATUS]))
			nt->threads = at;
		if (nt->threads)
			continue;
		if (note_is(&n, &thread_kinds[T_THREAD]))
			bad = bad ?: "NT_IMGCR_THREAD before the second NT_PRSTATUS";
		for (i = 0; i < N_MAX; i++) {
			struct note_slot *s = &nt->slot[i];

			if (!note_is(&n, s))
				continue;
			if (s->desc)
				bad = bad ?: "a main thread or process note appears twice";
			s->desc = n.desc;
			s->len = n.len;
		}
	}
	if (!nt->slot[N_TASK].desc)
		return -ENOEXEC;
	if (bad) {
		img_err(img, "malformed note segment: %s", bad);
		return -EINVAL;
	}
	return 0;
}

static int img_read_notes(struct img *img, struct img_notes *nt)
{
	const struct elf64_phdr *note = NULL;
	unsigned int i;
	int ret;

	for (i = 0; i < img->nphdrs; i++) {
		if (img->phdrs[i].p_type != PT_NOTE)
			continue;
		if (note)
			return -ENOEXEC;	/* ours have exactly one */
		note = &img->phdrs[i];
	}
	if (!note || !note->p_filesz || note->p_filesz > IMGCR_MAX_NOTES_SIZE)
		return -ENOEXEC;
	img->notes_len = note->p_filesz;
	img->notes = kvmalloc(img->notes_len, GFP_KERNEL_ACCOUNT);
	if (!img->notes)
		return -ENOMEM;
	ret = img_read(img, img->notes, img->notes_len, note->p_offset);
	if (ret)
		return -ENOEXEC;
	return img_find_notes(img, nt);
}

static int img_copy_note(struct img *img, const struct note_slot *s,
			 void *dst, size_t len, const char *what)
{
	if (!s->desc || s->len != len) {
		img_err(img, "%s note missing or of wrong size", what);
		return -EINVAL;
	}
	memcpy(dst, s->desc, len);
	return 0;
}

/*
 * General registers of any thread; @who names it in messages ("" for the
 * main thread).
 */
static int img_check_regs(struct img *img, const u64 *r, u32 flags,
			  const char *who)
{
	if (r[IMGCR_REG_CS] != __USER_CS || r[IMGCR_REG_SS] != __USER_DS ||
	    r[IMGCR_REG_DS] || r[IMGCR_REG_ES] || r[IMGCR_REG_FS] ||
	    r[IMGCR_REG_GS]) {
		img_err(img, "%sunsupported segment registers", who);
		return -EINVAL;
	}
	if (!user_addr_ok(r[IMGCR_REG_RIP]) || !user_addr_ok(r[IMGCR_REG_RSP]) ||
	    !user_addr_ok(r[IMGCR_REG_FS_BASE]) ||
	    !user_addr_ok(r[IMGCR_REG_GS_BASE])) {
		img_err(img, "%sregister outside user space", who);
		return -EINVAL;
	}
	/*
	 * An interrupted call is put back with rip after its instruction
	 * and rax (its number) in orig_rax: a system call number (as the
	 * int syscall_get_nr() makes of it), or the kernel would take it for
	 * no call and return the -ERESTART* code to the program.
	 */
	if ((flags & IMGCR_TASK_RESTART_CODES) &&
	    (r[IMGCR_REG_RAX] > INT_MAX || !user_addr_ok(r[IMGCR_REG_RIP] + 2))) {
		img_err(img, "%sinterrupted system call with a bad number or address",
			who);
		return -EINVAL;
	}
	return 0;
}

/* Log the first rule an image breaks; returns @ok. */
static bool require(struct img *img, bool ok, const char *what)
{
	if (!ok)
		img_err(img, "invalid image: %s", what);
	return ok;
}

/* What do_sigaltstack() may have stored: mode 0, SS_ONSTACK or SS_DISABLE. */
static bool sigaltstack_ok(const struct imgcr_thread *t)
{
	u32 mode = t->sas_ss_flags & ~(u32)SS_AUTODISARM;

	return (mode == 0 || mode == SS_ONSTACK || mode == SS_DISABLE) &&
	       user_range_ok(t->sas_ss_sp, t->sas_ss_size);
}

static bool robust_list_ok(const struct imgcr_thread *t)
{
	return user_addr_ok(t->robust_list) &&
	       t->robust_list_len == (t->robust_list ?
				      sizeof(struct robust_list_head) : 0);
}

/* What sys_rseq() accepts, or no registration at all. */
static bool rseq_ok(const struct imgcr_thread *t)
{
	if (!t->rseq)
		return !t->rseq_len && !t->rseq_sig;
	return imgcr_rseq_len_ok(t->rseq_len) && IS_ALIGNED(t->rseq, 32) &&
	       user_range_ok(t->rseq, t->rseq_len);
}

/*
 * The first per-thread field out of range, or NULL; the same rules for
 * the main thread (img->main_th) and the others.  Timer slack needs none:
 * PR_SET_TIMERSLACK takes any unsigned long, and a thread forked by a
 * real-time one has a default of 0.
 */
static const char *thread_field_bad(const struct imgcr_thread *t)
{
	u32 code = t->flags & IMGCR_TASK_RESTART_CODES;

	BUILD_BUG_ON(sizeof(current->timer_slack_ns) != sizeof(t->timer_slack_ns) ||
		     sizeof(current->default_timer_slack_ns) !=
		     sizeof(t->default_timer_slack_ns));
	if (t->flags & ~(IMGCR_TASK_RESTARTED_SYSCALL |
			 IMGCR_TASK_INTERRUPTED_SYSCALL |
			 IMGCR_TASK_RESTART_CODES |
			 IMGCR_TASK_TEMP_SIGMASK))
		return "unknown task flags";
	/*
	 * One code, only for a call moved back onto its instruction, and
	 * never for one the dump made return EINTR
	 */
	if (code && ((code & (code - 1)) ||
		     !(t->flags & IMGCR_TASK_RESTARTED_SYSCALL) ||
		     (t->flags & IMGCR_TASK_INTERRUPTED_SYSCALL)))
		return "syscall-restart flags";
	if (!sigaltstack_ok(t))
		return "alternate signal stack";
	if (!user_addr_ok(t->clear_child_tid))
		return "clear_child_tid";
	if (!robust_list_ok(t))
		return "robust futex list";
	if (!rseq_ok(t))
		return "rseq area";
	if (!valid_signal(t->pdeath_signal))
		return "parent-death signal";
	return NULL;
}

/* Check a thread's fields, then make the harmless ones what the kernel keeps. */
static int img_check_thread(struct img *img, struct imgcr_thread *t,
			    const char *who)
{
	const char *bad = thread_field_bad(t);

	/* a length a later kernel takes (6.3+), but not this one (6.1) */
	if (t->rseq && t->rseq_len > 32 && t->rseq_len <= PAGE_SIZE &&
	    !imgcr_rseq_len_ok(t->rseq_len)) {
		img_err(img, "%srseq area of %u bytes, registered on a later kernel: this one takes 32 only",
			who, t->rseq_len);
		return -EOPNOTSUPP;
	}
	if (bad) {
		img_err(img, "invalid image: %s%s", who, bad);
		return -EINVAL;
	}
	t->comm[sizeof(t->comm) - 1] = 0;
	t->blocked &= ~(sigmask(SIGKILL) | sigmask(SIGSTOP));
	return 0;
}

static int img_check_task(struct img *img)
{
	struct imgcr_task *t = &img->task;
	int i;

	if (t->version < IMGCR_FORMAT_VERSION_NOSECCOMP ||
	    t->version > IMGCR_FORMAT_VERSION) {
		img_err(img, "image format version %u, this module reads versions %u to %u",
			t->version, IMGCR_FORMAT_VERSION_NOSECCOMP,
			IMGCR_FORMAT_VERSION);
		return -EINVAL;
	}
	if (!require(img, (t->personality & PER_MASK) == PER_LINUX &&
		!(t->personality & ~PER_MASK & ~PER_FLAGS_OK),
		"personality"))
		return -EINVAL;
	if (!require(img, t->nr_vmas && t->nr_vmas <= IMGCR_MAX_VMAS &&
		t->nr_files <= t->nr_vmas, "mapping count"))
		return -EINVAL;
	if (!require(img, user_addr_ok(t->start_code) && user_addr_ok(t->end_code) &&
		user_addr_ok(t->start_data) && user_addr_ok(t->end_data) &&
		user_addr_ok(t->start_brk) && user_addr_ok(t->brk) &&
		user_addr_ok(t->start_stack) && user_addr_ok(t->arg_start) &&
		user_addr_ok(t->arg_end) && user_addr_ok(t->env_start) &&
		user_addr_ok(t->env_end) && t->start_code <= t->end_code &&
		t->start_data <= t->end_data && t->start_brk <= t->brk &&
		t->arg_start <= t->arg_end && t->env_start <= t->env_end,
		"memory layout fields"))
		return -EINVAL;

	for (i = 0; i < IMGCR_NSIG; i++) {
		struct imgcr_sigaction *sa = &img->sigact[i];

		if (!require(img, user_addr_ok(sa->handler) &&
			user_addr_ok(sa->restorer) &&
			!(sa->flags & ~(u64)SA_KNOWN), "signal action"))
			return -EINVAL;
		if (!require(img, (i + 1 != SIGKILL && i + 1 != SIGSTOP) ||
			(!sa->handler && !sa->flags), "SIGKILL/SIGSTOP action"))
			return -EINVAL;
		sa->mask &= ~(sigmask(SIGKILL) | sigmask(SIGSTOP));
	}
	return 0;
}

static bool itimer_ok(const struct imgcr_itimer *it)
{
	return it->value_ns < IMG_MAX_NS && it->interval_ns < IMG_MAX_NS;
}

/* A count and its note: absent iff the count is 0, else of exact size. */
static bool counted_note_ok(const struct note_slot *s, u32 count, size_t elem)
{
	if (!s->desc)
		return !count;
	return count && s->len == count * elem;
}

/* NT_IMGCR_PROC; its main-thread fields are checked in img->main_th. */
static int img_check_proc(struct img *img, const struct img_notes *nt)
{
	const struct imgcr_proc *p = &img->proc;
	int i;

	if (!require(img, p->nr_threads <= IMGCR_MAX_THREADS, "more threads than IMGCR_MAX_THREADS"))
		return -EINVAL;
	if (!require(img, !(p->flags & ~(IMGCR_PROC_CHILD_SUBREAPER |
					 IMGCR_PROC_THP_DISABLE |
					 IMGCR_PROC_THP_EXCEPT_ADVISED |
					 IMGCR_PROC_NOT_DUMPABLE |
					 IMGCR_PROC_MEMBARRIER |
					 IMGCR_PROC_MCL_FUTURE |
					 IMGCR_PROC_MCL_ONFAULT |
					 IMGCR_PROC_OWN_NS |
					 IMGCR_PROC_OWN_WHICH)),
		"unknown process flags"))
		return -EINVAL;
	if (!require(img, !(p->flags & IMGCR_PROC_OWN_WHICH) ||
		     (p->flags & IMGCR_PROC_OWN_NS),
		     "own PID or user namespace flag without the own-namespace flag"))
		return -EINVAL;
	if (!require(img, !(p->flags & IMGCR_PROC_OWN_NS) ||
		     img->task.version == IMGCR_FORMAT_VERSION,
		     "own-namespace flag in an image before version 4"))
		return -EINVAL;
	if (!require(img, !(p->flags & IMGCR_PROC_MCL_ONFAULT) ||
		     (p->flags & IMGCR_PROC_MCL_FUTURE),
		     "MCL_ONFAULT without MCL_FUTURE"))
		return -EINVAL;
	if (!require(img, !(p->flags & IMGCR_PROC_THP_EXCEPT_ADVISED) ||
		     (p->flags & IMGCR_PROC_THP_DISABLE),
		     "THP except-advised flag without THP disable"))
		return -EINVAL;
	if (imgcr_thp_disable_arg(p->flags) < 0) {
		img_err(img, "THP disabled except where advised (PR_THP_DISABLE_EXCEPT_ADVISED), which this kernel does not have (Linux 6.18+)");
		return -EOPNOTSUPP;
	}
	if (!require(img, !p->pad0, "process note padding"))
		return -EINVAL;
	if (!require(img, p->nr_sigqueue <= IMGCR_MAX_SIGQUEUE &&
		counted_note_ok(&nt->slot[N_SIGQUEUE], p->nr_sigqueue,
				sizeof(struct imgcr_sigqueue)),
		"pending signal count or NT_IMGCR_SIGQUEUE size"))
		return -EINVAL;
	if (!require(img, p->nr_timers <= IMGCR_MAX_TIMERS &&
		counted_note_ok(&nt->slot[N_TIMERS], p->nr_timers,
				sizeof(struct imgcr_posix_timer)),
		"POSIX timer count or NT_IMGCR_TIMERS size"))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(p->itimer); i++)
		if (!require(img, itimer_ok(&p->itimer[i]), "interval timer"))
			return -EINVAL;
	return 0;
}

/*
 * The main thread as the others are, from the task and process notes, and
 * checked by the same rules.  img->task gets the fixed-up fields back, for
 * the restore code that reads them there.
 */
static int img_check_main_thread(struct img *img)
{
	struct imgcr_thread *m = &img->main_th;
	struct imgcr_task *t = &img->task;
	int ret;

	memset(m, 0, sizeof(*m));
	m->tid = t->pid;
	m->flags = t->flags;
	m->blocked = t->blocked;
	m->sas_ss_sp = t->sas_ss_sp;
	m->sas_ss_size = t->sas_ss_size;
	m->sas_ss_flags = t->sas_ss_flags;
	m->pdeath_signal = img->proc.pdeath_signal;
	m->robust_list = t->robust_list;
	m->robust_list_len = t->robust_list_len;
	m->clear_child_tid = t->clear_child_tid;
	m->rseq = t->rseq;
	m->rseq_len = t->rseq_len;
	m->rseq_sig = t->rseq_sig;
	m->timer_slack_ns = img->proc.timer_slack_ns;
	m->default_timer_slack_ns = img->proc.default_timer_slack_ns;
	m->xfeatures = t->xfeatures;
	memcpy(m->comm, t->comm, sizeof(m->comm));

	ret = img_check_thread(img, m, "");
	if (ret)
		return ret;
	t->blocked = m->blocked;
	memcpy(t->comm, m->comm, sizeof(t->comm));
	return 0;
}

/*
 * The vdso is the running kernel's.  The same one (size and contents): it
 * is mapped where it was.  Another one (another kernel build): the image's
 * copy of the old one stays at its address, its entry points made jumps to
 * the new one's (img_vdso.c), if the image has that copy.
 */
static int img_check_vdso(struct img *img, const struct note_slot *s)
{
	const struct vdso_image *vi = current->mm->context.vdso_image;
	const struct imgcr_task *t = &img->task;

	if (!t->vdso)
		return 0;
	if (!vi || !current->mm->context.vdso) {
		img_err(img, "the image uses a vdso but this process has none");
		return -EOPNOTSUPP;
	}
	if (s->desc && (s->len != t->vdso_size ||
			crc32_le(~0, s->desc, s->len) != t->vdso_crc)) {
		img_err(img, "invalid image: its copy of the vdso does not match its size or checksum");
		return -EINVAL;
	}
	if (t->vdso_size == vi->size && t->vvar_size == imgcr_vvar_size(vi) &&
	    t->vdso_crc == crc32_le(~0, vi->data, vi->size))
		return 0;
	if (!s->desc) {
		img_err(img, "image was dumped on a different kernel (vdso differs) and has no copy of its vdso to keep (dumped by imgcr 0.1)");
		return -EOPNOTSUPP;
	}
	return img_vdso_plan(img, vi, s->desc);
}

/* 0 if the first page of @f's file has the checksum of the dump, -ESTALE if not. */
static int img_file_head_same(struct img_file *f)
{
	u32 crc;
	int ret = imgcr_file_head_crc(f->file, f->id.size, &crc);

	if (ret == -ENOMEM)
		return ret;
	return !ret && crc == f->id.head_crc ? 0 : -ESTALE;
}

static bool file_is_noexec(struct file *f)
{
	return (f->f_path.mnt->mnt_flags & MNT_NOEXEC) ||
	       (f->f_path.mnt->mnt_sb->s_iflags & SB_I_NOEXEC);
}

#define VMA_ADVICE (IMGCR_VMA_DONTFORK | IMGCR_VMA_WIPEONFORK | \
		    IMGCR_VMA_HUGEPAGE | IMGCR_VMA_NOHUGEPAGE | \
		    IMGCR_VMA_DONTDUMP | IMGCR_VMA_DROPPABLE | \
		    IMGCR_VMA_LOCKED | IMGCR_VMA_LOCKONFAULT | \
		    IMGCR_VMA_SEQ_READ | IMGCR_VMA_RAND_READ | \
		    IMGCR_VMA_MERGEABLE)

/*
 * The advice flags of a private or file mapping (IMGCR_VMA_DONTFORK, ...):
 * what madvise() and mmap() would refuse, or give otherwise, is refused
 * here, before the point of no return.  Returns why, or NULL; *err gets
 * EINVAL for an invalid image, EOPNOTSUPP for one this kernel cannot give.
 */
static const char *vma_advice_bad(const struct imgcr_vma *v, int *err)
{
	u32 f = v->flags;

	*err = -EINVAL;
	if (f & (IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DROPPABLE) &&
	    v->kind != IMGCR_VMA_ANON)
		return "wipe-on-fork or droppable on a file or shared mapping";
	if (f & IMGCR_VMA_HUGEPAGE && f & IMGCR_VMA_NOHUGEPAGE)
		return "both MADV_HUGEPAGE and MADV_NOHUGEPAGE";
	if (f & IMGCR_VMA_LOCKONFAULT && !(f & IMGCR_VMA_LOCKED))
		return "locked on fault but not locked";
	if (f & IMGCR_VMA_SEQ_READ && f & IMGCR_VMA_RAND_READ)
		return "both MADV_SEQUENTIAL and MADV_RANDOM";
	/* what mlock() and MADV_MERGEABLE would leave as it is */
	if (f & IMGCR_VMA_DROPPABLE &&
	    f & (IMGCR_VMA_LOCKED | IMGCR_VMA_MERGEABLE))
		return "locked or mergeable droppable mapping";
	if (f & IMGCR_VMA_MERGEABLE && f & IMGCR_VMA_SHARED)
		return "mergeable (KSM) shared mapping";
	*err = -EOPNOTSUPP;
	if (f & IMGCR_VMA_MERGEABLE && !IS_ENABLED(CONFIG_KSM))
		return "MADV_MERGEABLE on a kernel without KSM";
	if (f & (IMGCR_VMA_HUGEPAGE | IMGCR_VMA_NOHUGEPAGE) &&
	    !IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		return "MADV_HUGEPAGE/NOHUGEPAGE on a kernel without transparent huge pages";
	if (f & IMGCR_VMA_DROPPABLE) {
		*err = -EINVAL;
		if ((f & (IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DONTDUMP |
			  IMGCR_VMA_NORESERVE | IMGCR_VMA_GROWSDOWN |
			  IMGCR_VMA_ACCOUNT)) !=
		    (IMGCR_VMA_WIPEONFORK | IMGCR_VMA_DONTDUMP |
		     IMGCR_VMA_NORESERVE))
			return "droppable mapping without wipe-on-fork, don't-dump and no-reserve, or growing down or accounted";
		*err = -EOPNOTSUPP;
		if (!imgcr_have_droppable())
			return "MAP_DROPPABLE mapping, which this kernel does not have (Linux 6.11+)";
	}
	*err = 0;
	return NULL;
}

static int img_check_vmas(struct img *img)
{
	const struct imgcr_task *t = &img->task;
	unsigned int i, nvdso = 0, nvvar = 0;
	u64 vvar_end = 0;
	u64 prev_end = IMG_MIN_ADDR;
	struct img_file *f;
	bool shared;

	for (i = 0; i < t->nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		if (v->start < prev_end || v->start >= v->end ||
		    !PAGE_ALIGNED(v->start) || !PAGE_ALIGNED(v->end) ||
		    v->end > TASK_SIZE_MAX || v->prot & ~7u)
			goto bad;
		prev_end = v->end;
		switch (v->kind) {
		case IMGCR_VMA_ANON:
			/* 2 MiB huge pages: the whole mapping, no advice */
			if (v->flags & IMGCR_VMA_HUGETLB) {
				if (v->file != IMGCR_NO_FILE || v->pgoff ||
				    v->flags & ~(IMGCR_VMA_HUGETLB |
						 IMGCR_VMA_SHARED |
						 IMGCR_VMA_NORESERVE) ||
				    !IS_ALIGNED(v->start, SZ_2M) ||
				    !IS_ALIGNED(v->end, SZ_2M))
					goto bad;
				if (!IS_ENABLED(CONFIG_HUGETLB_PAGE)) {
					img_err(img, "huge page mapping at %#llx: this kernel has no hugetlbfs",
						v->start);
					return -EOPNOTSUPP;
				}
				break;
			}
			if (v->file != IMGCR_NO_FILE || v->flags &
			    ~(IMGCR_VMA_GROWSDOWN | IMGCR_VMA_ACCOUNT |
			      IMGCR_VMA_NORESERVE | VMA_ADVICE) ||
			    v->pgoff > (ULONG_MAX >> PAGE_SHIFT) -
				       ((v->end - v->start) >> PAGE_SHIFT))
				goto bad;
			break;
		case IMGCR_VMA_FILE:
			if (v->file >= img->nr_files || v->flags &
			    ~(IMGCR_VMA_SHARED | IMGCR_VMA_ACCOUNT |
			      IMGCR_VMA_NORESERVE | IMGCR_VMA_RDONLY_FILE |
			      VMA_ADVICE) ||
			    v->pgoff > (ULONG_MAX >> PAGE_SHIFT) -
				       ((v->end - v->start) >> PAGE_SHIFT))
				goto bad;
			f = &img->files[v->file];
			shared = v->flags & IMGCR_VMA_SHARED;
			/*
			 * a private mapping of a shared memory object shows
			 * the object's contents, which the image does not
			 * carry: only of the caller's memfd (--imgcr-shmfd)
			 */
			if (f->id.flags & IMGCR_FILE_SHMEM && !shared && !f->given) {
				img_err(img, "private mapping at %#llx of shared memory %s, which is not given as a memfd (--imgcr-shmfd)",
					v->start, f->path);
				return -EINVAL;
			}
			/*
			 * an MFD_HUGETLB memfd (given: img_open_file()):
			 * 2 MiB aligned, within its size (mmap() would
			 * refuse, or grow it), no advice
			 */
			if (f->id.flags & IMGCR_FILE_HUGETLB &&
			    (!IS_ALIGNED(v->start, SZ_2M) ||
			     !IS_ALIGNED(v->end, SZ_2M) ||
			     !IS_ALIGNED(v->pgoff, SZ_2M >> PAGE_SHIFT) ||
			     v->flags & ~(IMGCR_VMA_SHARED |
					  IMGCR_VMA_NORESERVE |
					  IMGCR_VMA_RDONLY_FILE) ||
			     v->pgoff > (f->id.size >> PAGE_SHIFT) ||
			     (v->end - v->start) >> PAGE_SHIFT >
			     (f->id.size >> PAGE_SHIFT) - v->pgoff))
				goto bad;
			/* writes need a writable file */
			if ((shared && v->flags & IMGCR_VMA_ACCOUNT) ||
			    (shared && v->prot & IMGCR_PROT_WRITE &&
			     !(f->id.flags & (IMGCR_FILE_WRITE | IMGCR_FILE_SHMEM))))
				goto bad;
			if (v->flags & IMGCR_VMA_RDONLY_FILE &&
			    (!shared || !(f->id.flags & IMGCR_FILE_SHMEM) ||
			     v->prot & IMGCR_PROT_WRITE))
				goto bad;
			/*
			 * the caller's memfd (--imgcr-shmfd) as it is, not one
			 * made here read-write without seals: a shared
			 * mapping that may be written (no RDONLY_FILE:
			 * VM_MAYWRITE) needs it open for writing, and no
			 * write seal the image does not record (mmap() would
			 * fail after the point of no return, or the mapping
			 * lose VM_MAYWRITE)
			 */
			if (shared && f->given &&
			    ((!(v->flags & IMGCR_VMA_RDONLY_FILE) &&
			      !(f->file->f_mode & FMODE_WRITE)) ||
			     (!(f->id.flags & IMGCR_FILE_SEALS) &&
			      imgcr_shmem_seals(file_inode(f->file)) &
			      (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))) {
				img_err(img, "shared memory %s: the memfd given (--imgcr-shmfd) is not open for writing or is sealed against writes (seals %#x), but mapped shared at %#llx%s",
					f->path,
					imgcr_shmem_seals(file_inode(f->file)),
					v->start,
					v->prot & IMGCR_PROT_WRITE ?
					" writable" : "");
				return -EINVAL;
			}
			/*
			 * mapped after the seals (uapi imgcr.h); they restrict
			 * shared mappings only: a private one of a write-sealed
			 * memfd may be writable, as the kernel allows
			 */
			if (shared && f->id.flags & IMGCR_FILE_SEALS &&
			    f->id.seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE) &&
			    v->prot & IMGCR_PROT_WRITE) {
				img_err(img, "shared memory %s: sealed against writes (seals %#x) but mapped writable at %#llx",
					f->path, f->id.seals, v->start);
				return -EINVAL;
			}
			/* the read-only file, also for map_one()'s fallback */
			if ((v->flags & IMGCR_VMA_RDONLY_FILE ||
			     (shared && f->id.flags & IMGCR_FILE_SEALS &&
			      f->id.seals & F_SEAL_WRITE)) && !f->rofile) {
				f->rofile = dentry_open(&f->file->f_path,
							O_RDONLY | O_LARGEFILE,
							current_cred());
				if (IS_ERR(f->rofile)) {
					int ret = PTR_ERR(f->rofile);

					f->rofile = NULL;
					img_err(img, "shared memory %s: cannot open it read-only (%d)",
						f->path, ret);
					return ret;
				}
			}
			if (v->prot & IMGCR_PROT_EXEC && file_is_noexec(f->file)) {
				img_err(img, "%s is on a noexec mount", f->path);
				return -EACCES;
			}
			break;
		case IMGCR_VMA_VDSO:
			if (v->start != t->vdso ||
			    v->end - v->start != t->vdso_size)
				goto bad;
			nvdso++;
			break;
		case IMGCR_VMA_VVAR:
			/*
			 * One mapping or more (7.2: [vvar], [vvar_vclock])
			 * tiling the vvar_size bytes below the vdso.
			 */
			if (v->start != (nvvar ? vvar_end : t->vdso - t->vvar_size) ||
			    v->end <= v->start || v->end > t->vdso)
				goto bad;
			vvar_end = v->end;
			nvvar++;
			break;
		case IMGCR_VMA_SYSVSHM:
			/* file is the shmid; checked by img_check_sysvshm() */
			if (t->version != IMGCR_FORMAT_VERSION ||
			    (v->flags & ~IMGCR_VMA_SHM_MAYWRITE) ||
			    v->file > INT_MAX ||
			    v->pgoff > (v->start >> PAGE_SHIFT))
				goto bad;
			break;
		default:
			goto bad;
		}
		if (v->kind != IMGCR_VMA_FILE && v->kind != IMGCR_VMA_SYSVSHM &&
		    v->file != IMGCR_NO_FILE)
			goto bad;
		if (v->kind <= IMGCR_VMA_FILE) {
			int err;
			const char *why = vma_advice_bad(v, &err);

			if (why) {
				img_err(img, "mapping %u (%#llx-%#llx): %s",
					i, v->start, v->end, why);
				return err;
			}
		}
		if ((v->kind == IMGCR_VMA_VDSO || v->kind == IMGCR_VMA_VVAR) &&
		    (v->flags || v->pgoff))
			goto bad;
	}
	if (nvdso != (t->vdso ? 1 : 0) || !nvvar != !nvdso ||
	    (nvvar && vvar_end != t->vdso))
		goto bad;
	return 0;
bad:
	img_err(img, "invalid memory map (mapping %u)", i);
	return -EINVAL;
}

/*
 * Whether SysV shm mapping @i is a further piece of the attachment of an
 * earlier one: the same shmid at the same base address, no other SysV
 * shm mapping between them.
 */
bool img_sysvshm_piece(const struct img *img, unsigned int i)
{
	const struct imgcr_vma *v = &img->vmas[i];
	u64 base = v->start - (v->pgoff << PAGE_SHIFT);

	while (i--) {
		const struct imgcr_vma *p = &img->vmas[i];

		if (p->kind != IMGCR_VMA_SYSVSHM)
			continue;
		return p->file == v->file &&
		       p->start - (p->pgoff << PAGE_SHIFT) == base;
	}
	return false;
}

#if IMGCR_HAVE_SYSVSHM
/* What shmat()'s permission check looks at, copied under RCU. */
struct img_shm_perm {
	kuid_t uid, cuid;
	kgid_t gid, cgid;
	umode_t mode;
};

/* shmat()'s permission check (ipcperms(), less the LSM hook) for @acc. */
static bool shm_may_attach(struct ipc_namespace *ns, const struct img_shm_perm *p,
			   int acc)
{
	int granted = p->mode;
	int requested = (acc >> 6) | (acc >> 3) | acc;
	kuid_t euid = current_euid();

	if (uid_eq(euid, p->cuid) || uid_eq(euid, p->uid))
		granted >>= 6;
	else if (in_group_p(p->cgid) || in_group_p(p->gid))
		granted >>= 3;
	return !(requested & ~granted & 0007) ||
	       ns_capable_noaudit(ns->user_ns, CAP_IPC_OWNER);
}
#endif

/*
 * Each IMGCR_VMA_SYSVSHM attachment, before the point of no return: its
 * segment exists in the caller's IPC namespace (where the restored task
 * will be), is no huge page one (SHM_HUGETLB), is large enough for the
 * mapping at its offset, may be attached by the caller with the
 * mappings' protection, and the whole attachment (shmat() maps all of the
 * segment, trimmed to the mappings afterwards) overlaps no other one.  The
 * mappings of one segment at one base address (the start less the offset)
 * are pieces of one attachment (mprotect() or munmap() split it): attached
 * once (img_sysvshm_piece()).  The segment's size is taken again at the
 * attach.
 */
static int img_check_sysvshm(struct img *img)
{
#if IMGCR_HAVE_SYSVSHM
	struct ipc_namespace *ns = current->nsproxy->ipc_ns;
	u64 prev_end = 0, end = 0;
	unsigned int i;

	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];
		struct imgcr_shmid_kernel *shp;
		struct img_shm_perm perm;
		bool found = false, huge = false;
		u64 pages = 0, base;
		int acc;

		if (v->kind != IMGCR_VMA_SYSVSHM)
			continue;
		if (!imgcr_sys_shmat) {
			img_err(img, "SysV shm segment %u (mapped at %#llx): this kernel has no shmat() binfmt_img may call (see the kernel log of its load)",
				v->file, v->start);
			return -EOPNOTSUPP;
		}
		if (img_in_place(img)) {
			img_err(img, "a restore in place of an image with a SysV shm mapping (%#llx): not supported",
				v->start);
			return -EOPNOTSUPP;
		}
		rcu_read_lock();
		shp = imgcr_shm_find(ns, v->file);
		if (shp) {
			struct inode *inode = imgcr_shm_inode(shp);

			if (inode) {
				found = true;
				perm.uid = shp->shm_perm.uid;
				perm.cuid = shp->shm_perm.cuid;
				perm.gid = shp->shm_perm.gid;
				perm.cgid = shp->shm_perm.cgid;
				perm.mode = shp->shm_perm.mode;
				huge = inode->i_sb->s_magic == HUGETLBFS_MAGIC;
				pages = DIV_ROUND_UP_ULL(i_size_read(inode), PAGE_SIZE);
			}
		}
		rcu_read_unlock();
		if (!found) {
			img_err(img, "SysV shm segment %u (mapped at %#llx) does not exist",
				v->file, v->start);
			return -ENOENT;
		}
		if (huge) {
			img_err(img, "SysV shm segment %u (mapped at %#llx) is of huge pages (SHM_HUGETLB): not supported",
				v->file, v->start);
			return -EOPNOTSUPP;
		}
		if (pages < v->pgoff + ((v->end - v->start) >> PAGE_SHIFT)) {
			img_err(img, "SysV shm segment %u has %llu pages, the mapping at %#llx needs %llu",
				v->file, pages, v->start,
				v->pgoff + ((v->end - v->start) >> PAGE_SHIFT));
			return -EINVAL;
		}
		base = v->start - (v->pgoff << PAGE_SHIFT);
		if (!img_sysvshm_piece(img, i)) {
			end = base + (pages << PAGE_SHIFT);
			if (base < IMG_MIN_ADDR || base < prev_end ||
			    !user_range_ok(base, pages << PAGE_SHIFT)) {
				img_err(img, "SysV shm segment %u: attached at %#llx it would overlap another attachment or leave the address space",
					v->file, base);
				return -EINVAL;
			}
			prev_end = end;
		} else if (v->end > end) {
			goto bad;	/* a piece beyond its attachment */
		}
		/*
		 * no x bits: attached without SHM_EXEC, made executable by
		 * mprotect(), which does not ask for them (attach_sysvshm())
		 */
		acc = 0444;
		if (v->prot & IMGCR_PROT_WRITE || v->flags & IMGCR_VMA_SHM_MAYWRITE)
			acc |= 0222;
		if (!shm_may_attach(ns, &perm, acc)) {
			img_err(img, "SysV shm segment %u: the caller may not attach it (mode %o)",
				v->file, perm.mode & 0777);
			return -EACCES;
		}
	}
	return 0;
bad:
	img_err(img, "invalid SysV shm mapping %u", i);
	return -EINVAL;
#else
	unsigned int i;

	for (i = 0; i < img->task.nr_vmas; i++)
		if (img->vmas[i].kind == IMGCR_VMA_SYSVSHM) {
			img_err(img, "SysV shm segment %llu (mapped at %#llx): not supported by this kernel (built without CONFIG_SYSVIPC or with CONFIG_RANDSTRUCT)",
				(unsigned long long)img->vmas[i].file,
				img->vmas[i].start);
			return -EOPNOTSUPP;
		}
	return 0;
#endif
}

/*
 * Would the restored task have CAP_IPC_LOCK, as mlock() asks (capable(),
 * in the initial user namespace)?  Without --imgcr-creds, the credentials
 * exec computes for an image (not set-ID, no file capabilities): root
 * keeps what its bounding set allows, anyone else its ambient ones.  The in-place path
 * keeps the caller's, which it checked are those already.
 */
static bool img_can_ipc_lock(struct img *img)
{
	const struct cred *c = current_cred();

	if (c->user_ns != &init_user_ns ||
	    !ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK))
		return false;
	/*
	 * --imgcr-creds: the task gets its own sets (which the caller may
	 * give it, img_check_all_creds()), whoever the caller is; mlock()
	 * looks at the effective one.
	 */
	if (img->has_creds && img->set_creds)
		return img->creds.cap_effective & BIT_ULL(CAP_IPC_LOCK);
	if (uid_eq(c->euid, GLOBAL_ROOT_UID) && !issecure(SECURE_NOROOT))
		return cap_raised(c->cap_bset, CAP_IPC_LOCK);
	return cap_raised(c->cap_ambient, CAP_IPC_LOCK);
}

/*
 * Would the restored thread whose image credentials are @tc have @cap in
 * the initial user namespace (capable())?  As img_can_ipc_lock(), for any
 * thread: with --imgcr-creds, its own effective set (img_check_all_creds()
 * checks the caller may give it); otherwise what exec leaves the caller
 * (img_capable_after_exec()), or in place the caller's own (which
 * img_inplace_check() found exec keeps), within the image's effective set
 * if it has credentials (img_set_creds() intersects them).
 */
static bool img_can_cap(struct img *img, const struct imgcr_creds *tc,
			int cap)
{
	const struct cred *c = current_cred();

	if (c->user_ns != &init_user_ns ||
	    !ns_capable_noaudit(&init_user_ns, cap))
		return false;
	if (img->has_creds && img->set_creds)
		return tc->cap_effective & BIT_ULL(cap);
	if (img->has_creds && !(tc->cap_effective & BIT_ULL(cap)))
		return false;
	return img_in_place(img) || img_capable_after_exec(&init_user_ns, cap);
}

/*
 * A sleep on an alarm clock goes on after the restore in its restart
 * function, which never checks CAP_WAKE_ALARM: as clock_nanosleep() itself
 * asks it of the sleeper, the restored thread must have it.
 */
static int img_check_alarm_caps(struct img *img)
{
	unsigned int i, nr = 1 + img->proc.nr_threads;
	ktime_t now;

	for (i = 0; i < nr; i++) {
		const struct imgcr_thread *t = i ? &img->threads[i - 1].th :
						   &img->main_th;
		const struct imgcr_sleep *d = i ? &img->threads[i - 1].call.sleep :
						  &img->main_call.sleep;
		const struct imgcr_creds *tc = i ? &img->threads[i - 1].creds :
						   &img->creds;

		if (!(t->flags & IMGCR_TASK_RESTART_BLOCK) ||
		    d->flags & (IMGCR_SLEEP_POLL | IMGCR_SLEEP_FUTEX) ||
		    !alarm_clock_now(d->clock, &now))
			continue;
		if (!img_can_cap(img, tc, CAP_WAKE_ALARM)) {
			img_err(img, "thread %u was stopped in a sleep on an alarm clock (%d), which needs CAP_WAKE_ALARM, and the restored thread would not have it",
				t->tid, d->clock);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * Locked memory is locked again after the pages are filled in, past the
 * point of no return: refuse here what mlock() and mlockall() would refuse
 * then, by the kernel's own rules (mm/mlock.c): every locked page within
 * RLIMIT_MEMLOCK -- the caller's, which imgcr restore has made the task's
 * -- unless the task has CAP_IPC_LOCK, and none at all with a zero limit.
 */
static int img_check_mlock(struct img *img)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long locked = 0;
	unsigned int i;

	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		if (v->kind <= IMGCR_VMA_FILE && v->flags & IMGCR_VMA_LOCKED)
			locked += (v->end - v->start) >> PAGE_SHIFT;
	}
	if (!locked && !(img->proc.flags & IMGCR_PROC_MCL_FUTURE))
		return 0;
	if (img_can_ipc_lock(img))
		return 0;
	if (!limit) {
		img_err(img, "the task locked memory (mlock, mlockall) and the caller has neither RLIMIT_MEMLOCK nor CAP_IPC_LOCK");
		return -EPERM;
	}
	if (locked > limit) {
		img_err(img, "the task has %lu KiB of locked memory (mlock), above the caller's RLIMIT_MEMLOCK of %lu KiB, and the caller has no CAP_IPC_LOCK",
			locked << (PAGE_SHIFT - 10), limit << (PAGE_SHIFT - 10));
		return -EPERM;
	}
	return 0;
}

/* PT_LOAD segments: sorted, page aligned, each inside one dumped VMA. */
static int img_check_loads(struct img *img)
{
	const struct imgcr_vma *v = img->vmas, *vend = v + img->task.nr_vmas;
	u64 prev_end = 0;
	unsigned int i;

	img->loaded = bitmap_zalloc(img->task.nr_vmas, GFP_KERNEL);
	if (!img->loaded)
		return -ENOMEM;
	for (i = 0; i < img->nphdrs; i++) {
		const struct elf64_phdr *ph = &img->phdrs[i];

		if (ph->p_type == PT_NOTE)
			continue;
		if (ph->p_type != PT_LOAD || !ph->p_filesz ||
		    ph->p_filesz != ph->p_memsz ||
		    !PAGE_ALIGNED(ph->p_filesz) || !PAGE_ALIGNED(ph->p_vaddr) ||
		    !PAGE_ALIGNED(ph->p_offset) || ph->p_offset > img->size ||
		    ph->p_filesz > img->size - ph->p_offset ||
		    ph->p_vaddr < prev_end ||
		    !user_range_ok(ph->p_vaddr, ph->p_filesz))
			goto bad;
		prev_end = ph->p_vaddr + ph->p_filesz;
		while (v < vend && v->end <= ph->p_vaddr)
			v++;
		if (v == vend || ph->p_vaddr < v->start || prev_end > v->end ||
		    v->kind > IMGCR_VMA_FILE)
			goto bad;
		/*
		 * a private MFD_HUGETLB memfd mapping's copies: whole huge
		 * pages (a part would mix the memfd's page with the image's)
		 */
		if (v->kind == IMGCR_VMA_FILE && !(v->flags & IMGCR_VMA_SHARED) &&
		    img->files[v->file].id.flags & IMGCR_FILE_HUGETLB &&
		    (!IS_ALIGNED(ph->p_vaddr, SZ_2M) ||
		     !IS_ALIGNED(ph->p_filesz, SZ_2M)))
			goto bad;
		__set_bit(v - img->vmas, img->loaded);
		/*
		 * a shared file's contents are the file's, not the image's;
		 * so are an MFD_HUGETLB memfd's (given filled)
		 */
		if (v->kind == IMGCR_VMA_FILE && v->flags & IMGCR_VMA_SHARED &&
		    (img->files[v->file].id.flags &
		     (IMGCR_FILE_SHMEM | IMGCR_FILE_HUGETLB)) != IMGCR_FILE_SHMEM)
			goto bad;
	}
	return 0;
bad:
	img_err(img, "invalid memory segment (program header %u, %#llx+%#llx at offset %#llx)",
		i, img->phdrs[i].p_vaddr, img->phdrs[i].p_filesz,
		img->phdrs[i].p_offset);
	return -EINVAL;
}

/*
 * The huge pages a private mapping of an MFD_HUGETLB memfd, and a
 * MAP_HUGETLB one (private or shared), reserve at their mmap() after the
 * point of no return: all of them, or for MAP_NORESERVE those the image
 * fills.  More than the pool has free and unreserved: refused now, as
 * imgcr restore does (free_hugepages less resv_hugepages), rather than the
 * task killed.  Only an early check (another process may take them in
 * between).  The pool is found through a given memfd (2 MiB pages, the
 * only size an image has): without one, MAP_HUGETLB mappings are left to
 * imgcr restore's check.  Kept mappings (in place) are not mapped again.
 */
static int img_check_huge_pool(struct img *img)
{
	const struct elf64_phdr *ph = img->phdrs, *phend = ph + img->nphdrs;
	unsigned long need = 0, free, resv, first, last, prev;
	struct hstate *h = NULL;
	unsigned int i;

	for (i = 0; i < img->nr_files && !h; i++)
		if (img->files[i].id.flags & IMGCR_FILE_HUGETLB &&
		    img->files[i].file)
			h = hstate_file(img->files[i].file);
	if (!h)
		return 0;
	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];
		bool memfd = v->kind == IMGCR_VMA_FILE &&
			     !(v->flags & IMGCR_VMA_SHARED) &&
			     img->files[v->file].id.flags & IMGCR_FILE_HUGETLB;

		if ((!memfd && !(v->flags & IMGCR_VMA_HUGETLB)) ||
		    (img->kept && test_bit(i, img->kept)))
			continue;
		if (!(v->flags & IMGCR_VMA_NORESERVE)) {
			need += (v->end - v->start) >> huge_page_shift(h);
			continue;
		}
		/* the huge pages the PT_LOADs in it touch (sorted) */
		prev = ULONG_MAX;
		for (; ph < phend && (ph->p_type != PT_LOAD ||
				      ph->p_vaddr < v->end); ph++) {
			if (ph->p_type != PT_LOAD || ph->p_vaddr < v->start)
				continue;
			first = ph->p_vaddr >> huge_page_shift(h);
			last = (ph->p_vaddr + ph->p_filesz - 1) >>
			       huge_page_shift(h);
			if (prev != ULONG_MAX && first <= prev)
				first = prev + 1;
			if (last >= first)
				need += last - first + 1;
			prev = last;
		}
	}
	free = READ_ONCE(h->free_huge_pages);
	resv = READ_ONCE(h->resv_huge_pages);
	if (need <= free - min(free, resv))
		return 0;
	img_err(img, "its private MFD_HUGETLB memfd and MAP_HUGETLB mappings need %lu huge page(s) of %lu kB, and %lu are free and not reserved",
		need, huge_page_size(h) >> 10, free - min(free, resv));
	return -ENOMEM;
}

/* A file the image maps, opened with the caller's rights as it was. */
/*
 * The huge pages of the shared mappings of the given MFD_HUGETLB memfds
 * (but MAP_NORESERVE ones) reserved now, before the point of no return:
 * a shared mapping reserves them on the inode, where they stay after
 * munmap(), so the loader's mmap() needs no more.  imgcr restore
 * reserved them all when it filled the memfd; another caller may not
 * have, and without free pages the mmap() after begin_new_exec() would
 * fail.  Mapped PROT_NONE at any free address of the caller, then
 * unmapped; so refused if the caller's memory is another process's too
 * (vfork, CLONE_VM without CLONE_THREAD), which could move that mapping
 * or keep it if the unmap fails (killed).  The last check before the
 * point of no return (load_img_binary()): a later refusal would leave the
 * caller's memfd with the reservation.
 */
int img_reserve_huge(struct img *img)
{
	unsigned int i;
	int ret;

	for (i = 0; i < img->task.nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];
		unsigned long len = v->end - v->start, addr;
		struct img_file *f;

		/* a private one reserves its own, checked by imgcr restore */
		if (v->kind != IMGCR_VMA_FILE ||
		    !(v->flags & IMGCR_VMA_SHARED) ||
		    v->flags & IMGCR_VMA_NORESERVE)
			continue;
		f = &img->files[v->file];
		if (!(f->id.flags & IMGCR_FILE_HUGETLB) || !f->given)
			continue;
		if (current->vfork_done || imgcr_mm_multiprocess(current->mm)) {
			img_err(img, "huge page memfd %s (MFD_HUGETLB) given: its huge pages are reserved through a mapping in the caller's memory, which another process shares (vfork or CLONE_VM): not supported",
				f->path);
			return -EINVAL;
		}
		addr = vm_mmap(f->file, 0, len, PROT_NONE, MAP_SHARED,
			       v->pgoff << PAGE_SHIFT);
		if (IS_ERR_VALUE(addr)) {
			img_err(img, "huge page memfd %s (MFD_HUGETLB): cannot reserve the %lu huge page(s) of its mapping at %#llx (%ld): reserve them (vm.nr_hugepages)",
				f->path, len >> 21, v->start, (long)addr);
			return (long)addr;
		}
		ret = vm_munmap(addr, len);
		if (ret) {
			img_err(img, "huge page memfd %s (MFD_HUGETLB): cannot unmap its reservation mapping at %#lx (%d)",
				f->path, addr, ret);
			return ret;
		}
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/* 0 if @name (under img->root, if given) is a regular file. */
static int img_lookup_reg(struct img *img, const char *name)
{
	struct file *o;
	struct path path;
	int ret;

	if (img->has_root) {
		/* O_PATH opens nothing: a FIFO or a device is only looked at */
		o = file_open_root(&img->root, name, O_PATH, 0);
		if (IS_ERR(o))
			return PTR_ERR(o);
		ret = d_is_reg(o->f_path.dentry) ? 0 : -ESTALE;
		fput(o);
		return ret;
	}
	ret = kern_path(name, LOOKUP_FOLLOW, &path);
	if (!ret) {
		if (!d_is_reg(path.dentry))
			ret = -ESTALE;
		path_put(&path);
	}
	return ret;
}

/*
 * --imgcr-shmfd=I:FD,...: the fd given for file @idx, -1 if none, or
 * -EINVAL (printed) if the list is malformed.
 */
static int img_shm_fd(struct img *img, unsigned int idx)
{
	const char *p = img->shmfd;
	unsigned int i, fd;
	int n;

	while (p && *p) {
		n = 0;
		if (sscanf(p, "%u:%u%n", &i, &fd, &n) != 2 || !n || fd > INT_MAX ||
		    (p[n] && p[n] != ',')) {
			img_err(img, "bad --imgcr-shmfd= list");
			return -EINVAL;
		}
		if (i == idx)
			return fd;
		p += n + (p[n] == ',');
	}
	return -1;
}

/* @file is of hugetlbfs, of 2 MiB pages. */
static bool img_given_huge_2m(struct file *file)
{
#ifdef CONFIG_HUGETLBFS
	struct inode *inode = file_inode(file);

	return inode->i_sb->s_magic == HUGETLBFS_MAGIC &&
	       huge_page_size(hstate_inode(inode)) == SZ_2M;
#else
	return false;
#endif
}

/*
 * Shared memory file @f is the caller's memfd on @fd: the same name
 * ("memfd:NAME"), a tmpfs object without a path (of hugetlbfs, of 2 MiB
 * pages, for IMGCR_FILE_HUGETLB), the size the image records, open for
 * writing if a mapping writes it.
 */
static int img_open_given(struct img *img, struct img_file *f, int fd)
{
	struct file *file = fget(fd);
	const struct dentry *d;

	if (!file) {
		img_err(img, "shared memory %s: fd %d (--imgcr-shmfd) is not open", f->path, fd);
		return -EBADF;
	}
	d = file->f_path.dentry;
	if (file_inode(file)->i_sb->s_magic !=
	    (f->id.flags & IMGCR_FILE_HUGETLB ? HUGETLBFS_MAGIC : TMPFS_MAGIC) ||
	    !img_given_huge_2m(file) != !(f->id.flags & IMGCR_FILE_HUGETLB) ||
	    !IS_ROOT(d) ||
	    d == d->d_sb->s_root || strcmp(d->d_name.name, f->path) ||
	    i_size_read(file_inode(file)) != f->id.size ||
	    !(file->f_mode & FMODE_READ) ||
	    (f->id.flags & IMGCR_FILE_WRITE && !(file->f_mode & FMODE_WRITE)) ||
	    (f->id.flags & IMGCR_FILE_SEALS &&
	     imgcr_shmem_seals(file_inode(file)) != f->id.seals)) {
		img_err(img, "shared memory %s (size %llu%s, seals %#x): fd %d (--imgcr-shmfd) is not that memfd",
			f->path, f->id.size, f->id.flags & IMGCR_FILE_WRITE ? ", written" : "",
			f->id.flags & IMGCR_FILE_SEALS ? f->id.seals : F_SEAL_SEAL, fd);
		fput(file);
		return -EINVAL;
	}
	f->file = file;
	f->given = true;
	return 0;
}

static int img_open_file(struct img *img, struct img_file *f)
{
	int flags = O_LARGEFILE | (f->id.flags & IMGCR_FILE_WRITE ? O_RDWR : O_RDONLY);
	struct inode *inode;
	struct timespec64 mt;
	int ret;

	if (f->id.flags & IMGCR_FILE_SHMEM) {
		ret = img_shm_fd(img, f - img->files);
		if (ret >= 0)
			return img_open_given(img, f, ret);
		if (ret != -1)
			return ret;
		if (f->id.flags & IMGCR_FILE_HUGETLB) {
			img_err(img, "huge page memfd %s (MFD_HUGETLB) is not given (--imgcr-shmfd): the loader cannot make one",
				f->path);
			return -EOPNOTSUPP;
		}
		/* Recreated empty; PT_LOAD segments refill it after the exec. */
		if (f->id.size > MAX_LFS_FILESIZE)
			return -EINVAL;
		if (f->id.mode & 07000) {
			img_err(img, "shared memory %s: mode %#o: set-id and sticky bits are not supported",
				f->path, f->id.mode);
			return -EOPNOTSUPP;
		}
		f->file = imgcr_shmem_file_setup(f->path, f->id.size);
		if (IS_ERR(f->file)) {
			ret = PTR_ERR(f->file);
			f->file = NULL;
			img_err(img, "cannot create shared memory %s (%d)", f->path, ret);
			return ret;
		}
		/*
		 * Its permission bits as they were (a new object has 0777; a
		 * memfd made with MFD_NOEXEC_SEAL or chmod'ed has others):
		 * seen through /proc/PID/map_files, and what F_SEAL_EXEC
		 * freezes.  The object is new and reachable by no one else.
		 */
		inode = file_inode(f->file);
		inode_lock(inode);
		inode->i_mode = (inode->i_mode & S_IFMT) | (f->id.mode & 0777);
		inode_unlock(inode);
		return 0;
	}
	/*
	 * Only a regular file can be the one that was mapped: look before
	 * opening, so that an image naming a FIFO or a device can neither
	 * block the exec nor open the device.  O_NONBLOCK covers a swap of
	 * the path in between; the identity check below catches it.
	 */
	ret = img_lookup_reg(img, f->path);
	if (ret && f->id.flags & IMGCR_FILE_DELETED) {
		img_err(img, "mapped file %s was deleted: imgcr restore recreates it from the dump directory (%d)",
			f->path, ret);
		return ret;
	}
	if (ret) {
		img_err(img, "mapped file %s is missing or not a regular file (%d)",
			f->path, ret);
		return ret;
	}
	flags |= O_NONBLOCK | O_NOCTTY;
	if (img->has_root)
		f->file = file_open_root(&img->root, f->path, flags, 0);
	else
		f->file = filp_open(f->path, flags, 0);
	if (IS_ERR(f->file)) {
		ret = PTR_ERR(f->file);
		f->file = NULL;
		img_err(img, "cannot open mapped file %s (%d)", f->path, ret);
		return ret;
	}
	inode = file_inode(f->file);
	mt = imgcr_inode_mtime(inode);
	/*
	 * The same file: same size and modification time.  Its device and
	 * inode number may differ: the same files on another host, or after
	 * a reboot that renumbered devices, are what a user moves an image
	 * to (CRIU does not compare them either); then its first page must
	 * also be the same (below).  A deleted file is recreated by imgcr
	 * restore on its filesystem: a new inode there.
	 */
	if ((f->id.flags & IMGCR_FILE_DELETED &&
	     f->id.dev != new_encode_dev(inode->i_sb->s_dev)) ||
	    f->id.size != i_size_read(inode) ||
	    f->id.mtime_sec != mt.tv_sec || f->id.mtime_nsec != mt.tv_nsec ||
	    !S_ISREG(inode->i_mode)) {
		if (f->id.flags & IMGCR_FILE_DELETED)
			img_err(img, "mapped file %s was deleted and is not its copy: imgcr restore recreates it from the dump directory",
				f->path);
		else
			img_err(img, "mapped file %s changed since the dump",
				f->path);
		return -ESTALE;
	}
	if (!(f->id.flags & IMGCR_FILE_DELETED) && f->id.head_crc &&
	    (f->id.dev != new_encode_dev(inode->i_sb->s_dev) ||
	     f->id.ino != inode->i_ino)) {
		ret = img_file_head_same(f);
		if (ret) {
			img_err(img, "mapped file %s is not the one of the dump: another inode of the same size and mtime, and its first page differs",
				f->path);
			return ret;
		}
	}
	would_dump(img->bprm, f->file);
	return 0;
}

/* Parse the file table, then open every file. */
static int img_open_files(struct img *img, const struct note_slot *s)
{
	const char *p = s->desc, *end = p + s->len;
	unsigned int i;
	int ret;

	if (!s->desc)
		return img->task.nr_files ? -EINVAL : 0;
	img->files = kvcalloc(img->task.nr_files, sizeof(*img->files),
			      GFP_KERNEL_ACCOUNT);
	if (!img->files && img->task.nr_files)
		return -ENOMEM;
	for (i = 0; i < img->task.nr_files; i++) {
		struct img_file *f = &img->files[i];

		if (end - p < sizeof(f->id))
			goto bad;
		memcpy(&f->id, p, sizeof(f->id));
		if (f->id.reclen % 8 || f->id.reclen > end - p ||
		    f->id.path_len < 2 || f->id.path_len > IMGCR_MAX_PATH ||
		    f->id.reclen < sizeof(f->id) + f->id.path_len ||
		    f->id.flags & ~(IMGCR_FILE_WRITE | IMGCR_FILE_SHMEM |
				    IMGCR_FILE_DELETED | IMGCR_FILE_SEALS |
				    IMGCR_FILE_HUGETLB) ||
		    (f->id.flags & IMGCR_FILE_HUGETLB &&
		     !(f->id.flags & IMGCR_FILE_SHMEM)) ||
		    (f->id.flags & IMGCR_FILE_SHMEM &&
		     f->id.flags & IMGCR_FILE_DELETED) ||
		    (f->id.flags & IMGCR_FILE_SEALS &&
		     (!(f->id.flags & IMGCR_FILE_SHMEM) ||
		      f->id.seals & ~IMGCR_SEALS_KNOWN)))
			goto bad;
		f->path = p + sizeof(f->id);
		if (strnlen(f->path, f->id.path_len) != f->id.path_len - 1)
			goto bad;
		if (f->id.flags & IMGCR_FILE_SHMEM ?
		    f->id.path_len > NAME_MAX + 1 : f->path[0] != '/')
			goto bad;
		if (f->id.flags & IMGCR_FILE_SEALS &&
		    f->id.seals & ~IMGCR_SEALS_HERE) {
			img_err(img, "shared memory %s: seals %#x, which this kernel does not have (F_SEAL_EXEC: 6.3)",
				f->path, f->id.seals);
			return -EOPNOTSUPP;
		}
		p += f->id.reclen;
	}
	if (p != end)
		goto bad;
	for (i = 0; i < img->task.nr_files; i++) {
		img->nr_files = i + 1;
		ret = img_open_file(img, &img->files[i]);
		if (ret)
			return ret;
	}
	return 0;
bad:
	img_err(img, "invalid file table");
	return -EINVAL;
}

/* With --imgcr-ids, as the task would open them (img_task_fs_cred()). */
static int img_open_files_as_task(struct img *img, const struct note_slot *s)
{
	struct cred *fs = img_task_fs_cred(img);
	const struct cred *old;
	int ret;

	if (IS_ERR(fs))
		return PTR_ERR(fs);
	if (!fs)
		return img_open_files(img, s);
	old = override_creds(fs);
	ret = img_open_files(img, s);
	revert_creds(old);
	put_cred(fs);
	return ret;
}

/*
 * /proc/PID/exe.  The kernel lets a task change it (prctl PR_SET_MM_MAP)
 * only with CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN in its user namespace,
 * and only to a file it may execute: /proc/PID/exe is what tools trust to
 * tell which program a process is.  A caller without the capability keeps
 * what exec set, the image file.  exec's own rule applies too: nobody may
 * be writing to the file.  Under --imgcr-user the right is the task's,
 * not the caller's (root's): its user's task holds no capability there
 * (img_check_user()), so it keeps the image file too.
 */
static int img_take_exe(struct img *img)
{
	struct user_namespace *ns = current_user_ns();
	struct img_file *f;

	if (img->task.exe_file == IMGCR_NO_FILE)
		return 0;
	/* checked whether used or not: one image, one verdict */
	if (img->task.exe_file >= img->nr_files)
		return -EINVAL;
	f = &img->files[img->task.exe_file];
	if (f->id.flags & IMGCR_FILE_SHMEM)
		return -EINVAL;
	if (img->only_user)
		return 0;
	if (!ns_capable_noaudit(ns, CAP_CHECKPOINT_RESTORE) &&
	    !ns_capable_noaudit(ns, CAP_SYS_ADMIN))
		return 0;
	if (file_is_noexec(f->file) || file_permission(f->file, MAY_EXEC)) {
		img_err(img, "%s: the caller may not execute it (/proc/PID/exe)",
			f->path);
		return -EACCES;
	}
	if (imgcr_exe_deny_write(f->file)) {
		img_err(img, "%s is open for writing", f->path);
		return -ETXTBSY;
	}
	img->exe = f->file;
	return 0;
}

static const struct user_regset *xstate_regset(void)
{
	const struct user_regset_view *view = task_user_regset_view(current);
	unsigned int i;

	for (i = 0; i < view->n; i++)
		if (view->regsets[i].core_note_type == IMGCR_NT_X86_XSTATE)
			return &view->regsets[i];
	return NULL;
}

/*
 * Check a thread's xstate by loading it into a scratch copy of our own
 * fpstate with the very function the restore will use: if this succeeds,
 * so will the real one after the point of no return.  On success *xstate
 * is a copy of it and *pkru its PKRU.
 */
static int img_check_xstate(struct img *img, const void *desc, size_t len,
			    const char *who, void **xstate, u32 *pkru)
{
	struct fpstate *cur = imgcr_task_fpu(current)->fpstate, *scratch;
	const struct user_regset *rs = xstate_regset();
	struct fpu_guest g = {};
	size_t fsize;
	u64 xfeatures;
	int ret;

	if (!rs || !desc || len != rs->n * rs->size ||
	    len != img->task.xstate_size ||
	    len < sizeof(struct fxregs_state) + sizeof(struct xstate_header)) {
		img_err(img, "%sxstate note missing or of a size this CPU does not use",
			who);
		return -EINVAL;
	}
	/* XSTATE_BV: the first word of the header after the legacy area */
	memcpy(&xfeatures, (const u8 *)desc + sizeof(struct fxregs_state),
	       sizeof(xfeatures));
	if (xfeatures & ~cur->user_xfeatures) {
		img_err(img, "%simage uses CPU state components %#llx this CPU lacks",
			who, xfeatures & ~cur->user_xfeatures);
		return -EOPNOTSUPP;
	}
	/*
	 * Dynamically enabled state would WARN in the copy below if the
	 * caller has not enabled it, and is gone after exec if it has.
	 */
	if (xfeatures & (cur->xfd | XFEATURE_MASK_XTILE_DATA)) {
		img_err(img, "%simage uses dynamically enabled state (AMX); not supported",
			who);
		return -EOPNOTSUPP;
	}
	*xstate = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!*xstate)
		return -ENOMEM;
	memcpy(*xstate, desc, len);

	fsize = offsetof(struct fpstate, regs) + cur->size;
	scratch = kvmalloc(fsize, GFP_KERNEL_ACCOUNT);
	if (!scratch)
		return -ENOMEM;
	memcpy(scratch, cur, fsize);
	g.fpstate = scratch;
	ret = imgcr_fpu_copy_uabi_to_guest_fpstate(&g, *xstate, cur->user_xfeatures,
					     pkru);
	kvfree(scratch);
	if (ret) {
		img_err(img, "%sinvalid xstate (%d)", who, ret);
		return -EINVAL;
	}
	return 0;
}

/*
 * The notes of thread @n (1 = the first after the main one), exactly
 * thread_kinds[] in that order, into @g; *p moves past them.
 */
static int img_thread_notes(struct img *img, const char **p, const char *end,
			    unsigned int n, struct note *g)
{
	int k;

	for (k = 0; k < T_MAX; k++) {
		if (*p >= end || !next_note(p, end, &g[k])) {
			if (k)
				img_err(img, "invalid image: thread %u: no %s note",
					n, thread_note_names[k]);
			else
				img_err(img, "invalid image: NT_IMGCR_PROC counts %u threads besides the main one, the notes have %u",
					img->proc.nr_threads, n - 1);
			return -EINVAL;
		}
		if (!note_is(&g[k], &thread_kinds[k])) {
			img_err(img, "invalid image: thread %u: note type %#x where its %s should be (each thread has NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE, NT_IMGCR_THREAD, in order)",
				n, g[k].type, thread_note_names[k]);
			return -EINVAL;
		}
	}
	/* its credentials, in images that have them */
	g[T_CREDS].desc = NULL;
	if (img->has_creds) {
		const char *q = *p;

		if (q < end && next_note(&q, end, &g[T_CREDS]) &&
		    note_is(&g[T_CREDS], &note_kinds[N_CREDS])) {
			*p = q;
		} else {
			img_err(img, "invalid image: thread %u: no NT_IMGCR_CREDS note (the main thread has one)",
				n);
			return -EINVAL;
		}
	}
	return 0;
}

/* Thread @n from its notes: registers, fields, xstate, all checked. */
static int img_read_thread(struct img *img, unsigned int n,
			   const struct note *g, struct img_thread *t)
{
	char who[48];
	int ret;

	if (g[T_PRSTATUS].len != sizeof(t->prstatus) ||
	    g[T_FPREG].len != sizeof(struct fxregs_state) ||
	    g[T_THREAD].len != sizeof(t->th) ||
	    (g[T_CREDS].desc && g[T_CREDS].len != sizeof(t->creds))) {
		img_err(img, "invalid image: thread %u: a note of wrong size", n);
		return -EINVAL;
	}
	memcpy(&t->prstatus, g[T_PRSTATUS].desc, sizeof(t->prstatus));
	memcpy(&t->th, g[T_THREAD].desc, sizeof(t->th));
	if (g[T_CREDS].desc)
		memcpy(&t->creds, g[T_CREDS].desc, sizeof(t->creds));
	snprintf(who, sizeof(who), "thread %u (TID %u): ", n, t->th.tid);
	ret = img_check_thread(img, &t->th, who);
	if (!ret && img->has_creds)
		ret = img_check_creds(img, &t->creds, who);
	if (!ret)
		ret = img_check_regs(img, t->prstatus.regs, t->th.flags, who);
	if (!ret)
		ret = img_check_xstate(img, g[T_XSTATE].desc, g[T_XSTATE].len,
				       who, &t->xstate, &t->pkru);
	return ret;
}

/*
 * The further threads' notes, from the second NT_PRSTATUS on: exactly
 * proc.nr_threads groups; after the last one, only notes of kinds the
 * loader does not read.
 */
static int img_read_threads(struct img *img, const struct img_notes *nt)
{
	const char *end = (const char *)img->notes + img->notes_len;
	const char *p = nt->threads ?: end;
	unsigned int i, nr = img->proc.nr_threads;
	struct note g[T_ALL], n;
	int ret;

	if (nr) {
		img->threads = kvcalloc(nr, sizeof(*img->threads),
					GFP_KERNEL_ACCOUNT);
		if (!img->threads)
			return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		ret = img_thread_notes(img, &p, end, i + 1, g);
		if (!ret)
			ret = img_read_thread(img, i + 1, g, &img->threads[i]);
		if (ret)
			return ret;
	}
	while (p < end && next_note(&p, end, &n)) {
		if (note_known(&n)) {
			img_err(img, "invalid image: note type %#x after the notes of the last thread (NT_IMGCR_PROC counts %u besides the main one)",
				n.type, nr);
			return -EINVAL;
		}
	}
	return 0;
}

/* Copy a counted note (img_check_proc() checked its size) into *dst. */
static int img_copy_array(const struct note_slot *s, u32 count, size_t elem,
			  void **dst)
{
	if (!count)
		return 0;
	*dst = kvmalloc_array(count, elem, GFP_KERNEL_ACCOUNT);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, s->desc, (size_t)count * elem);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_s32(const void *a, const void *b)
{
	s32 x = *(const s32 *)a, y = *(const s32 *)b;

	return x < y ? -1 : x > y;
}

/* Thread IDs of the group, main one included, sorted for group_has_tid(). */
struct img_tids {
	u32 *tid;
	unsigned int n;
};

static bool group_has_tid(const struct img_tids *t, u32 tid)
{
	return bsearch(&tid, t->tid, t->n, sizeof(*t->tid), cmp_u32);
}

/* What clone3() takes as set_tid: 1 .. pid_max - 1 (at most this bound). */
static bool tid_ok(u32 tid)
{
	return tid > 0 && tid < PID_MAX_LIMIT;
}

/* Each thread's TID valid and distinct from the others' and the main one. */
static int img_check_tids(struct img *img, struct img_tids *t)
{
	unsigned int i;

	t->n = img->proc.nr_threads + 1;
	t->tid = kvmalloc_array(t->n, sizeof(*t->tid), GFP_KERNEL_ACCOUNT);
	if (!t->tid)
		return -ENOMEM;
	t->tid[0] = img->main_th.tid;
	for (i = 0; i < img->proc.nr_threads; i++) {
		u32 tid = img->threads[i].th.tid;

		if (!tid_ok(tid)) {
			img_err(img, "invalid image: thread %u: TID %u out of range",
				i + 1, tid);
			return -EINVAL;
		}
		t->tid[i + 1] = tid;
	}
	sort(t->tid, t->n, sizeof(*t->tid), cmp_u32, NULL);
	for (i = 1; i < t->n; i++) {
		if (t->tid[i] == t->tid[i - 1]) {
			img_err(img, "invalid image: TID %u belongs to two threads (the main one included)",
				t->tid[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* What may be queued again: SIGKILL and SIGSTOP never reach a handler. */
static bool signal_queueable(s32 sig)
{
	return sig >= 1 && sig <= IMGCR_NSIG && sig != SIGKILL && sig != SIGSTOP;
}

/*
 * What is wrong with a pending signal, or NULL.  Bytes past the kernel's
 * siginfo are zero: the dumper never writes any, and rt_sigqueueinfo()
 * refuses them (E2BIG) for a layout it does not know.
 */
static const char *sigq_bad(const struct imgcr_sigqueue *q,
			    const struct img_tids *t)
{
	s32 sig;

	BUILD_BUG_ON(sizeof(kernel_siginfo_t) > sizeof(q->info));
	memcpy(&sig, q->info, sizeof(sig));
	if (q->tid && !group_has_tid(t, q->tid))
		return "not for the process nor one of its threads";
	if (!signal_queueable(sig))
		return "si_signo not 1-64, or SIGKILL/SIGSTOP";
	if (q->pad0 || memchr_inv(q->info + sizeof(kernel_siginfo_t), 0,
				  sizeof(q->info) - sizeof(kernel_siginfo_t)))
		return "non-zero padding";
	return NULL;
}

static int img_check_sigq(struct img *img, const struct img_tids *t)
{
	unsigned int i;
	const char *bad;

	for (i = 0; i < img->proc.nr_sigqueue; i++) {
		bad = sigq_bad(&img->sigq[i], t);
		if (bad) {
			img_err(img, "invalid image: pending signal %u (TID %u): %s",
				i, img->sigq[i].tid, bad);
			return -EINVAL;
		}
	}
	return 0;
}

/* What timer_create() or timer_settime() would refuse, or NULL. */
static const char *timer_bad(const struct imgcr_posix_timer *pt,
			     const struct img_tids *t)
{
	if (pt->id < 0)
		return "negative id";
	if (!timer_clock_ok(pt->clock))
		return "clock not CLOCK_REALTIME, _MONOTONIC, _BOOTTIME or _TAI";
	if (pt->value_ns >= IMG_MAX_NS || pt->interval_ns >= IMG_MAX_NS ||
	    pt->overrun < 0)
		return "times or overrun out of range";
	switch (pt->notify) {
	case IMGCR_SIGEV_NONE:
		return pt->tid ? "target thread without SIGEV_THREAD_ID" : NULL;
	case IMGCR_SIGEV_SIGNAL:
		if (pt->tid)
			return "target thread without SIGEV_THREAD_ID";
		break;
	case IMGCR_SIGEV_THREAD_ID:
		if (!group_has_tid(t, pt->tid))
			return "target thread not in the process";
		break;
	default:
		return "unknown notification";
	}
	/* good_sigevent() takes any signal, SIGKILL and SIGSTOP included */
	if (pt->signo < 1 || pt->signo > IMGCR_NSIG)
		return "signal not 1-64";
	return NULL;
}

/* Every timer valid, and no two with one id. */
static int img_check_timers(struct img *img, const struct img_tids *t)
{
	unsigned int i, n = img->proc.nr_timers;
	const char *bad;
	s32 *ids;
	int ret = 0;

	for (i = 0; i < n; i++) {
		bad = timer_bad(&img->timers[i], t);
		if (bad) {
			img_err(img, "invalid image: POSIX timer %d: %s",
				img->timers[i].id, bad);
			return -EINVAL;
		}
	}
	if (!n)
		return 0;
	ids = kvmalloc_array(n, sizeof(*ids), GFP_KERNEL_ACCOUNT);
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ids[i] = img->timers[i].id;
	sort(ids, n, sizeof(*ids), cmp_s32, NULL);
	for (i = 1; i < n && !ret; i++) {
		if (ids[i] == ids[i - 1]) {
			img_err(img, "invalid image: two POSIX timers with id %d",
				ids[i]);
			ret = -EINVAL;
		}
	}
	kvfree(ids);
	return ret;
}

/*
 * The group's own notes besides the threads': pending signals and timers
 * copied, then every thread ID any of it names checked against the threads.
 */
static int img_check_group(struct img *img, const struct img_notes *nt)
{
	struct img_tids t = {};
	int ret;

	ret = img_copy_array(&nt->slot[N_SIGQUEUE], img->proc.nr_sigqueue,
			     sizeof(*img->sigq), (void **)&img->sigq);
	if (!ret)
		ret = img_copy_array(&nt->slot[N_TIMERS], img->proc.nr_timers,
				     sizeof(*img->timers), (void **)&img->timers);
	if (!ret)
		ret = img_check_tids(img, &t);
	if (!ret)
		ret = img_check_sigq(img, &t);
	if (!ret)
		ret = img_check_timers(img, &t);
	kvfree(t.tid);
	return ret;
}

static bool tid_in_use(u32 tid)
{
	bool used;

	rcu_read_lock();
	used = find_vpid(tid);
	rcu_read_unlock();
	return used;
}

/*
 * Whether the caller can create the threads after the exec: with clone3()
 * and set_tid, in its own PID namespace, as copy_process() and alloc_pid()
 * allow it.  Checked here so that the exec fails cleanly instead; a TID
 * taken between now and the clone3() still kills the restored process.
 */
/*
 * Whether the restore will call system call bodies after the exec
 * (img_group.c): for threads, timers, process-wide pending signals and the
 * process switches.
 */
static bool img_needs_syscalls(const struct img *img)
{
	const struct imgcr_proc *p = &img->proc;
	unsigned int i;

	if (p->nr_threads || p->nr_timers || p->flags ||
	    p->itimer[0].value_ns || p->itimer[1].value_ns ||
	    p->itimer[2].value_ns || img_caller_has_itimers())
		return true;
	for (i = 0; i < p->nr_sigqueue; i++)
		if (!img->sigq[i].tid)
			return true;
	return false;
}

/*
 * Whether @cap over @ns will be effective after the exec, when clone3(set_tid)
 * and setresuid() (img_creds.c) run: for an image (never set-ID, and its
 * file capabilities aside) root keeps its bounding and inheritable sets
 * unless SECURE_NOROOT, anyone else only the ambient set.  Judged with
 * those, so that a caller who would lose the right is refused now rather
 * than killed later.
 */
bool img_capable_after_exec(struct user_namespace *ns, int cap)
{
	const struct cred *cur = current_cred(), *saved;
	struct cred *model;
	bool ok;

	model = prepare_creds();
	if (!model)
		return false;
	if (!issecure(SECURE_NOROOT) &&
	    uid_eq(cur->euid, make_kuid(cur->user_ns, 0)))
		model->cap_effective = cap_combine(cap_combine(cur->cap_bset,
							       cur->cap_inheritable),
						   cur->cap_ambient);
	else
		model->cap_effective = cur->cap_ambient;
	saved = override_creds(model);
	ok = ns_capable_noaudit(ns, cap);
	revert_creds(saved);
	put_cred(model);
	return ok;
}

static bool may_set_tid_after_exec(struct pid_namespace *ns)
{
	return img_capable_after_exec(ns->user_ns, CAP_CHECKPOINT_RESTORE) ||
	       img_capable_after_exec(ns->user_ns, CAP_SYS_ADMIN);
}

/*
 * alloc_pid() refuses a set_tid at or above pid_max, which is not exported:
 * read it where the caller's /proc shows it.  Without a readable /proc the
 * limit is unknown here, and such a TID makes the restore fail after the
 * exec instead (with a message).
 */
static int caller_pid_max(struct img *img)
{
	const char *name = "/proc/sys/kernel/pid_max";
	struct file *f;
	char buf[16];
	loff_t pos = 0;
	ssize_t n;
	int v;

	f = img->has_root ? file_open_root(&img->root, name, O_RDONLY, 0) :
			    filp_open(name, O_RDONLY, 0);
	if (IS_ERR(f))
		return PID_MAX_LIMIT;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	fput(f);
	if (n <= 0)
		return PID_MAX_LIMIT;
	buf[n] = 0;
	if (kstrtoint(strim(buf), 10, &v) || v <= 0 || v > PID_MAX_LIMIT)
		return PID_MAX_LIMIT;
	return v;
}

/*
 * Whether the image's TIDs may be its own PID namespace's: it says so, or
 * it is an own-namespace image that does not say which (written before
 * IMGCR_PROC_OWN_PIDNS existed).
 */
static bool img_own_pidns(const struct img *img)
{
	u32 f = img->proc.flags;

	return (f & IMGCR_PROC_OWN_PIDNS) ||
	       ((f & IMGCR_PROC_OWN_NS) && !(f & IMGCR_PROC_OWN_WHICH));
}

static int img_check_clone(struct img *img)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	unsigned int i;
	int pid_max;

#ifdef CONFIG_SECCOMP
	if (img_needs_syscalls(img) &&
	    READ_ONCE(current->seccomp.mode) != SECCOMP_MODE_DISABLED) {
		img_err(img, "the caller runs under a seccomp filter; binfmt_img recreates threads, timers and pending signals by calling system calls without running the filter, so images with any of them are refused");
		return -EPERM;
	}
#endif
	if (!img->proc.nr_threads)
		return 0;
	if (current->ptrace & PT_TRACE_CLONE) {
		img_err(img, "the caller is traced with PTRACE_O_TRACECLONE (a debugger following threads): its threads would stop for the tracer before the process is whole; attach after the restore");
		return -EPERM;
	}
	/*
	 * The TIDs of an image that had a PID namespace of its own are that
	 * namespace's: in the initial one (where no restorer recreated it)
	 * they name other tasks, unless the caller has the image's own pid
	 * (a restorer that chose it: then it chose the TIDs too, and
	 * clone3() with set_tid fails on any that is taken).  An image that
	 * had only a user namespace of its own has the dumper's TIDs: not
	 * checked (review s14 kernel L2).  One written before the two were
	 * told apart may have had either: the same rule (review s12 L4).
	 */
	if (ns == &init_pid_ns && img_own_pidns(img) &&
	    img->task.pid != (u32)task_tgid_vnr(current)) {
		img_err(img, "pid %u had a PID namespace of its own%s: the TIDs of its %u thread(s) are that namespace's, and this caller (pid %d) is in the initial one, where they name other tasks; restore it in a new PID namespace",
			img->task.pid,
			img->proc.flags & IMGCR_PROC_OWN_PIDNS ? "" :
			" (or only a user namespace: its image does not say which)",
			img->proc.nr_threads, task_tgid_vnr(current));
		return -EINVAL;
	}
	if (current->nsproxy->pid_ns_for_children != ns) {
		img_err(img, "the caller unshared its PID namespace: threads cannot be created (clone with CLONE_THREAD would fail); fork first");
		return -EINVAL;
	}
	if (!may_set_tid_after_exec(ns)) {
		img_err(img, "TID %u: setting thread IDs needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN over the PID namespace after the exec; restore as root, or with `imgcr restore --pidns`",
			img->threads[0].th.tid);
		return -EPERM;
	}
	pid_max = caller_pid_max(img);
	for (i = 0; i < img->proc.nr_threads; i++) {
		u32 tid = img->threads[i].th.tid;

		if (tid >= pid_max) {
			img_err(img, "TID %u is not below this system's pid_max (%d)",
				tid, pid_max);
			return -EINVAL;
		}
		if (tid_in_use(tid)) {
			img_err(img, "TID %u is in use by another task", tid);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Readers of mm->saved_auxv (/proc/PID/auxv, core dumps) scan it up to the
 * AT_NULL entry, as prctl(PR_SET_MM_AUXV) guarantees by force: an image
 * without one would make them run past the array.  Keep the vector up to
 * and including its first AT_NULL.  The note is the dumping kernel's whole
 * saved_auxv, which is longer on newer kernels (AT_VECTOR_SIZE grows with
 * new AT_ entries): only the part up to AT_NULL must fit in this kernel's.
 */
static int img_check_auxv(struct img *img, const struct note_slot *s)
{
	size_t i, bytes, len = s->len;
	u64 key;

	if (!s->desc || len % 16) {
		img_err(img, "invalid auxv note");
		return -EINVAL;
	}
	for (i = 0; i < len / 16; i++) {
		memcpy(&key, (const u8 *)s->desc + i * 16, sizeof(key));
		if (key != AT_NULL)
			continue;
		bytes = (i + 1) * 16;
		if (bytes > sizeof(current->mm->saved_auxv) ||
		    bytes > sizeof(img->auxv)) {
			img_err(img, "auxv of %zu entries does not fit this kernel's (%zu)",
				i + 1, sizeof(current->mm->saved_auxv) / 16);
			return -EINVAL;
		}
		memcpy(img->auxv, s->desc, bytes);
		img->auxv_bytes = bytes;
		return 0;
	}
	img_err(img, "auxv note without an AT_NULL entry");
	return -EINVAL;
}

/*
 * Whether exec leaves the caller's security label as it is: the label the
 * LSM's subjective hook gives under the credentials exec prepared (an
 * AppArmor profile transition, change_onexec, an SELinux or Smack domain
 * transition are computed into bprm->cred before load_binary) must be the
 * caller's.
 */
bool img_exec_keeps_label(struct linux_binprm *bprm)
{
	u32 now, then;

	security_cred_getsecid(current_cred(), &now);
	security_cred_getsecid(bprm->cred, &then);
	return now == then && imgcr_exec_keeps_label(bprm->cred);
}

/*
 * An image never runs with more rights than its caller.  Set-ID images are
 * refused; so is an image whose exec would raise capabilities (file
 * capabilities, which cap_bprm_creds_from_file() applies in
 * begin_new_exec(), after this point: the caller chooses the code an
 * image runs, through the files it maps), change the security label, or
 * run in secure-exec mode (AT_SECURE, which an LSM sets for a transition).
 * Not seen: an LSM whose exec transition leaves no secid or lsm_prop
 * (TOMOYO's domain change in bprm_check, BPF-LSM programs' own state).
 */
static int img_check_rights(struct img *img)
{
	struct linux_binprm *bprm = img->bprm;
	struct inode *inode = file_inode(bprm->file);
	ssize_t n;

	/*
	 * binfmt_misc's "C" flag: exec would take the credentials of another
	 * file (bprm->executable), which the checks below do not see.
	 */
	if (bprm->execfd_creds) {
		img_err(img, "an image run as a binfmt_misc interpreter with credentials from the binary (flag C) is refused");
		return -EPERM;
	}
	if (inode->i_mode & S_ISUID ||
	    (inode->i_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) {
		img_err(img, "set-user/group-ID images are refused");
		return -EPERM;
	}
	n = __vfs_getxattr(file_dentry(bprm->file), inode, XATTR_NAME_CAPS,
			   NULL, 0);
	if (n != -ENODATA && n != -EOPNOTSUPP) {
		if (n < 0)
			img_err(img, "cannot tell whether the image has file capabilities (error %zd reading security.capability)",
				n);
		else
			img_err(img, "images with file capabilities (security.capability) are refused: their exec would grant them");
		return -EPERM;
	}
	if (bprm->secureexec) {
		img_err(img, "the exec of this image would run in secure-exec mode (an LSM transition): refused");
		return -EPERM;
	}
	if (!img_exec_keeps_label(bprm)) {
		img_err(img, "the exec of this image would change the caller's security label (an LSM transition): refused");
		return -EPERM;
	}
	return 0;
}

/*
 * NT_IMGCR_SECCOMP: present exactly in version 3 images (in version 4 ones
 * iff a thread is under seccomp), one entry per
 * thread in the order of the threads' notes.  Strict mode is restored
 * here; filters come from the seccomp file (img_seccomp.c), without which
 * a thread that was under filters is refused.
 */
/*
 * An entry as hrtimer_nanosleep() could have left it: a clock it sleeps
 * on, rmtp a user address (or none); or sys_poll(): on CLOCK_MONOTONIC,
 * nfds an int (poll() itself checks it against RLIMIT_NOFILE again) and
 * the array in user space (with no fd any pointer: never read); or
 * futex_wait(): an aligned word in user space, on CLOCK_MONOTONIC (the
 * time left) or CLOCK_REALTIME (the expiry), a bitset not 0 with
 * IMGCR_SLEEP_BITSET; the time within ktime_t.  A nanosleep may also be
 * on an alarm clock or the process's CPU clock (posix_cpu_nsleep()).
 */
static bool sleep_entry_ok(const struct imgcr_sleep *d)
{
	ktime_t now;

	if (d->remaining_ns > KTIME_MAX || d->pad ||
	    !(d->flags & IMGCR_SLEEP_BITSET) != !d->bitset)
		return false;
	if (d->flags & IMGCR_SLEEP_FUTEX)
		return (d->clock == CLOCK_MONOTONIC || d->clock == CLOCK_REALTIME) &&
		       !(d->flags & ~(IMGCR_SLEEP_FUTEX | IMGCR_SLEEP_SHARED |
				      IMGCR_SLEEP_BITSET)) &&
		       IS_ALIGNED(d->rmtp, sizeof(u32)) &&
		       user_range_ok(d->rmtp, sizeof(u32));
	if (d->flags & IMGCR_SLEEP_POLL)
		return d->clock == CLOCK_MONOTONIC &&
		       !(d->flags & ~(IMGCR_SLEEP_POLL | IMGCR_SLEEP_TIMEOUT)) &&
		       d->nfds <= INT_MAX &&
		       (!d->nfds ||
			user_range_ok(d->rmtp, (u64)d->nfds * sizeof(struct pollfd))) &&
		       (d->flags & IMGCR_SLEEP_TIMEOUT || !d->remaining_ns);
	return !d->nfds &&
	       !(d->flags & ~IMGCR_SLEEP_RMTP) &&
	       (sleep_clock_now(d->clock, &now) ||
		alarm_clock_now(d->clock, &now) ||
		d->clock == CLOCK_PROCESS_CPUTIME_ID) &&
	       (d->flags & IMGCR_SLEEP_RMTP ? d->rmtp &&
		user_range_ok(d->rmtp, sizeof(struct __kernel_timespec)) : !d->rmtp);
}

/*
 * NT_IMGCR_SLEEPS: an entry for each thread with IMGCR_TASK_RESTART_BLOCK,
 * in thread order, and for no other.  The restart function is the
 * loader's choice (img_restart_pending()), never the image's.
 */
static int img_check_sleeps(struct img *img, const struct note_slot *s)
{
	unsigned int i, n = 0, nr = 1 + img->proc.nr_threads;
	const u8 *e = s->desc;
	size_t size = sizeof(struct imgcr_sleep);

	for (i = 0; i < nr; i++) {
		const struct imgcr_thread *t = i ? &img->threads[i - 1].th :
						   &img->main_th;

		if (t->flags & IMGCR_TASK_RESTART_BLOCK)
			n++;
	}
	if (!n && !s->desc)
		return 0;
	if (s->desc && s->len == n * IMGCR_SLEEP_SIZE_V1)
		size = IMGCR_SLEEP_SIZE_V1;	/* no entry with a bitset */
	if (!s->desc || s->len != n * size) {
		img_err(img, "invalid image: NT_IMGCR_SLEEPS %s (%u threads in a nanosleep or poll)",
			s->desc ? "of wrong size" : "missing", n);
		return -EINVAL;
	}
	for (i = 0; i < nr; i++) {
		const struct imgcr_thread *t = i ? &img->threads[i - 1].th :
						   &img->main_th;
		struct imgcr_sleep *d = i ? &img->threads[i - 1].call.sleep :
					    &img->main_call.sleep;
		const char *call = "nanosleep", *fn = "hrtimer_nanosleep_restart";
		unsigned long addr = imgcr_hrtimer_nanosleep_restart;
		ktime_t now;

		if (!(t->flags & IMGCR_TASK_RESTART_BLOCK))
			continue;
		memset(d, 0, sizeof(*d));
		memcpy(d, e, size);
		e += size;	/* a short one has no bitset: refused below */
		if (d->flags & IMGCR_SLEEP_POLL) {
			call = "poll";
			fn = "do_restart_poll";
			addr = imgcr_do_restart_poll;
		} else if (d->flags & IMGCR_SLEEP_FUTEX) {
			call = "futex wait";
			fn = "futex_wait_restart";
			addr = imgcr_futex_wait_restart;
		} else if (d->clock == CLOCK_PROCESS_CPUTIME_ID) {
			call = "sleep on the process's CPU clock";
			fn = "posix_cpu_nsleep_restart";
			addr = imgcr_posix_cpu_nsleep_restart;
		} else if (alarm_clock_now(d->clock, &now)) {
			call = "sleep on an alarm clock";
			fn = "alarm_timer_nsleep_restart";
			addr = imgcr_alarm_timer_nsleep_restart;
			/* CAP_WAKE_ALARM: img_check_alarm_caps(), once the options are known */
		}
		if (!addr) {
			img_err(img, "thread %u was stopped in a %s, and this kernel's restart function for it (%s) was not found when the module was loaded",
				t->tid, call, fn);
			return -EOPNOTSUPP;
		}
		if (d->tid != t->tid || !sleep_entry_ok(d)) {
			img_err(img, "invalid image: thread %u: its NT_IMGCR_SLEEPS entry (TID %u, clock %d, flags %#x, nfds %u, rmtp %#llx, %llu ns left)",
				t->tid, d->tid, d->clock, d->flags, d->nfds,
				(unsigned long long)d->rmtp,
				(unsigned long long)d->remaining_ns);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * NT_IMGCR_SIGWAITS: an entry for each thread with IMGCR_TASK_TEMP_SIGMASK,
 * in thread order, and for no other: the temporary mask of the call it
 * was stopped in, which set_current_blocked() never lets hold SIGKILL or
 * SIGSTOP.
 */
static int img_check_sigwaits(struct img *img, const struct note_slot *s)
{
	unsigned int i, n = 0, nr = 1 + img->proc.nr_threads;
	const struct imgcr_sigwait *e = s->desc;

	for (i = 0; i < nr; i++) {
		const struct imgcr_thread *t = i ? &img->threads[i - 1].th :
						   &img->main_th;

		if (t->flags & IMGCR_TASK_TEMP_SIGMASK)
			n++;
	}
	if (!n && !s->desc)
		return 0;
	if (!s->desc || s->len != n * sizeof(*e)) {
		img_err(img, "invalid image: NT_IMGCR_SIGWAITS %s (%u threads with a temporary signal mask)",
			s->desc ? "of wrong size" : "missing", n);
		return -EINVAL;
	}
	for (i = 0; i < nr; i++) {
		const struct imgcr_thread *t = i ? &img->threads[i - 1].th :
						   &img->main_th;
		u64 *d = i ? &img->threads[i - 1].call.temp_mask :
			     &img->main_call.temp_mask;

		if (!(t->flags & IMGCR_TASK_TEMP_SIGMASK))
			continue;
		if (e->tid != t->tid || e->pad0 ||
		    (e->mask & (sigmask(SIGKILL) | sigmask(SIGSTOP)))) {
			img_err(img, "invalid image: thread %u: its NT_IMGCR_SIGWAITS entry (TID %u, pad %#x, mask %#llx)",
				t->tid, e->tid, e->pad0,
				(unsigned long long)e->mask);
			return -EINVAL;
		}
		*d = e++->mask;
	}
	return 0;
}

static int img_check_seccomp(struct img *img, const struct note_slot *s)
{
	unsigned int i, n = img->proc.nr_threads + 1;
	const struct imgcr_seccomp *sc;

	if (img->task.version == IMGCR_FORMAT_VERSION_NOSECCOMP) {
		if (!require(img, !s->desc, "NT_IMGCR_SECCOMP in a version 2 image"))
			return -EINVAL;
		return 0;
	}
	/* version 4: present iff a thread is under seccomp */
	if (img->task.version == IMGCR_FORMAT_VERSION && !s->desc)
		return 0;
	if (!require(img, s->desc && s->len == n * sizeof(*sc),
		     "NT_IMGCR_SECCOMP missing or of wrong size"))
		return -EINVAL;
	img->seccomp = kvmalloc_array(n, sizeof(*sc), GFP_KERNEL_ACCOUNT);
	if (!img->seccomp)
		return -ENOMEM;
	memcpy(img->seccomp, s->desc, n * sizeof(*sc));
	for (i = 0; i < n; i++) {
		u32 tid = i ? img->threads[i - 1].th.tid : img->main_th.tid;

		sc = &img->seccomp[i];
		if (!require(img, sc->tid == tid && !sc->pad0 &&
			     ((sc->mode == IMGCR_SECCOMP_DISABLED && !sc->nr_filters) ||
			      (sc->mode == IMGCR_SECCOMP_STRICT && !sc->nr_filters) ||
			      (sc->mode == IMGCR_SECCOMP_FILTER && sc->nr_filters)),
			     "NT_IMGCR_SECCOMP entry (TID, mode or filter count)"))
			return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		sc = &img->seccomp[i];
		/*
		 * Strict mode is restored: each such thread enters it as the
		 * last thing before its first user instruction.  The kernel
		 * refuses strict mode to a thread under a filter, and the
		 * caller's filters are inherited: refused here, not after
		 * the point of no return.
		 */
		if (sc->mode == IMGCR_SECCOMP_STRICT) {
#ifdef CONFIG_SECCOMP
			if (READ_ONCE(current->seccomp.mode) != SECCOMP_MODE_DISABLED) {
				img_err(img, "thread TID %u ran in seccomp strict mode, which the kernel does not allow under the caller's seccomp filter (inherited by the restored process): refused",
					sc->tid);
				return -EPERM;
			}
			if (i)
				img->threads[i - 1].seccomp_strict = true;
			else
				img->main_strict = true;
#else
			img_err(img, "thread TID %u ran in seccomp strict mode; this kernel has no seccomp: refused",
				sc->tid);
			return -EOPNOTSUPP;
#endif
		}
		/* filters: img_seccomp_check(), once the arguments are read */
	}
	return 0;
}

/* The credentials of every thread may be given to this caller (img_creds.c). */
static int img_check_all_creds(struct img *img)
{
	char who[48];
	unsigned int i;
	int ret;

	if (!img->has_creds) {
		if (img->set_creds || img->set_ids) {
			img_err(img, "--imgcr-creds: the image has no credentials (made by an older imgcr): restore it without");
			return -EINVAL;
		}
		return 0;
	}
	if (img->set_ids && !img->set_creds) {
		img_err(img, "--imgcr-ids is only taken with --imgcr-creds");
		return -EINVAL;
	}
	ret = img_creds_allowed(img, &img->creds, "");
	if (!ret && img->set_ids)
		ret = img_ids_allowed(img, &img->creds, "");
	for (i = 0; i < img->proc.nr_threads && !ret; i++) {
		snprintf(who, sizeof(who), "thread %u (TID %u): ", i + 1,
			 img->threads[i].th.tid);
		ret = img_creds_allowed(img, &img->threads[i].creds, who);
		if (!ret && img->set_ids)
			ret = img_ids_allowed(img, &img->threads[i].creds, who);
	}
	return ret;
}

int img_parse(struct img *img)
{
	struct img_notes nt;
	const struct note_slot *slots = nt.slot;
	size_t vmas_len;
	int ret;

	ret = img_check_elf(img);
	if (ret)
		return ret;
	ret = img_read_notes(img, &nt);
	if (ret)
		return ret;

	/* From here on it claims to be ours: errors are EINVAL and logged. */
	/* the new mm: MMF_HAS_MDWE is inherited unless PR_MDWE_NO_INHERIT */
	if (imgcr_mm_has_mdwe(img->bprm->mm)) {
		img_err(img, "the caller has memory-deny-write-execute (prctl PR_SET_MDWE, systemd MemoryDenyWriteExecute=), under which no image can be restored");
		return -EPERM;
	}
	ret = img_check_rights(img);
	if (ret)
		return ret;
	ret = img_copy_note(img, &slots[N_PRSTATUS], &img->prstatus,
			    sizeof(img->prstatus), "NT_PRSTATUS");
	if (!ret)
		ret = img_copy_note(img, &slots[N_TASK], &img->task,
				    sizeof(img->task), "task");
	if (!ret)
		ret = img_copy_note(img, &slots[N_SIGACT], img->sigact,
				    sizeof(img->sigact), "signal");
	if (!ret)
		ret = img_copy_note(img, &slots[N_PROC], &img->proc,
				    sizeof(img->proc), "process");
	if (ret)
		return ret;
	ret = img_check_auxv(img, &slots[N_AUXV]);
	if (ret)
		return ret;

	ret = img_check_task(img);
	if (!ret)
		ret = img_check_proc(img, &nt);
	if (!ret)
		ret = img_check_main_thread(img);
	if (!ret && slots[N_CREDS].desc) {
		img->has_creds = true;
		ret = img_copy_note(img, &slots[N_CREDS], &img->creds,
				    sizeof(img->creds), "credentials");
		if (!ret)
			ret = img_check_creds(img, &img->creds, "");
	}
	if (!ret)
		ret = img_check_regs(img, img->prstatus.regs, img->task.flags, "");
	if (!ret)
		ret = img_read_threads(img, &nt);
	if (!ret)
		ret = img_check_group(img, &nt);
	if (!ret)
		ret = img_check_seccomp(img, &slots[N_SECCOMP]);
	if (!ret)
		ret = img_check_sleeps(img, &slots[N_SLEEPS]);
	if (!ret)
		ret = img_check_sigwaits(img, &slots[N_SIGWAITS]);
	if (ret)
		return ret;

	vmas_len = img->task.nr_vmas * sizeof(*img->vmas);
	if (!slots[N_VMAS].desc || slots[N_VMAS].len != vmas_len) {
		img_err(img, "memory map note missing or of wrong size");
		return -EINVAL;
	}
	img->vmas = kvmalloc(vmas_len, GFP_KERNEL_ACCOUNT);
	if (!img->vmas)
		return -ENOMEM;
	memcpy(img->vmas, slots[N_VMAS].desc, vmas_len);
	img->nr_files = 0;

	/* they say where the mapped files are, and which mappings are kept */
	ret = img_parse_args(img);
	if (!ret)
		ret = img_seccomp_check(img);
	if (!ret)
		ret = img_open_files_as_task(img, &slots[N_FILES]);
	if (!ret && img->nr_files != img->task.nr_files)
		ret = -EINVAL;
	if (!ret)
		ret = img_check_vmas(img);
	if (!ret)
		ret = img_check_sysvshm(img);
	if (!ret)
		ret = img_check_mlock(img);
	if (!ret)
		ret = img_check_alarm_caps(img);
	if (!ret)
		ret = img_take_exe(img);
	if (!ret)
		ret = img_check_loads(img);
	if (!ret)
		ret = img_check_huge_pool(img);
	if (!ret)
		ret = img_check_vdso(img, &slots[N_VDSO]);
	if (!ret)
		ret = img_check_xstate(img, slots[N_XSTATE].desc,
				       slots[N_XSTATE].len, "", &img->xstate,
				       &img->pkru);
	if (!ret)
		ret = img_check_all_creds(img);
	if (ret)
		return ret;
	img->xstate_size = slots[N_XSTATE].len;
	return img_check_clone(img);
}

void img_free(struct img *img)
{
	unsigned int i;

	if (img->exe)		/* the exec failed before taking it over */
		imgcr_exe_allow_write(img->exe);

	for (i = 0; i < img->nr_files; i++) {
		if (img->files[i].file)
			fput(img->files[i].file);
		if (img->files[i].rofile)
			fput(img->files[i].rofile);
	}
	kvfree(img->files);
	kfree(img->cloexec);
	kfree(img->shmfd);
	if (img->has_root)
		path_put(&img->root);
	kvfree(img->keep);
	bitmap_free(img->kept);
	bitmap_free(img->loaded);
	kvfree(img->vmas);
	kvfree(img->xstate);
	if (img->threads)	/* allocated with proc.nr_threads entries */
		for (i = 0; i < img->proc.nr_threads; i++)
			kvfree(img->threads[i].xstate);
	kvfree(img->threads);
	kvfree(img->sigq);
	kvfree(img->timers);
	kvfree(img->seccomp);
	img_seccomp_free(img->sc);
	kvfree(img->vdso.old);
	kvfree(img->notes);
	kvfree(img->phdrs);
	if (img->status)
		fput(img->status);
}
