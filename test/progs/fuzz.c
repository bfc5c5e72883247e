/*
 * fuzz [options] SEEDIMG: execute many malformed variants of an imgcr image
 * and count what happens.  Every variant is written to a fresh file in DIR
 * (a tmpfs), chmod 0755, and execve'd by a forked child (optionally as
 * another uid).  Outcomes:
 *   execfail ENAME  execve failed before the point of no return; the child
 *                   reports the errno through a close-on-exec pipe
 *   ran exit=N      execve succeeded (the pipe closed) and the child exited;
 *                   42 is the seed program's "alive" exit (see fuzzseed.c)
 *   ran sig=SIGX    ... and died of a signal
 *   ran timeout     ... still alive after -k MS: SIGKILLed (process group)
 *   HANG            execve neither failed nor succeeded within 10 s
 *   UNKILLABLE      the child survived SIGKILL for 10 s
 *   UNEXPECTED      execve failed with an errno outside the documented set
 * Variants (each iteration I is reproducible on its own with -s SEED -i I,
 * -o FILE writes its image):
 *   trunc  truncation at (and one byte around) every structure boundary:
 *          ELF header fields, each program header, each note header, name,
 *          descriptor start and end, each PT_LOAD's start; run first
 *   mut    1-8 random byte/bit/word mutations, 90% of them inside the
 *          header + program headers + notes region
 *   field  one header/phdr/note/task/register/sigaction/vma/file-record/
 *          auxv/xstate/process field set to an "interesting" value; in an
 *          image with threads also a thread's (TID, flags, blocked mask,
 *          sigaltstack, robust list, rseq, timer slack, registers, FXSAVE
 *          and xstate header), a pending signal's (TID, signo, siginfo,
 *          padding) or a POSIX timer's (id, clock, notify, signo, target
 *          TID, overrun, times) or a sleep's (TID, clock, flags, rmtp,
 *          time left), half of the field variants among these
 *   sem    structure-aware lies: counts vs sizes, overlapping, kernel-space
 *          or huge VMAs, bad file records, descriptor sizes, phnum, an
 *          auxiliary vector without AT_NULL, ...; in an image with threads
 *          half of them lies about threads: nr_threads off by one either
 *          way, a duplicate TID, a TID equal to the main pid, a TID of 0,
 *          negative, at/above PID_MAX_LIMIT or in use, a thread note
 *          missing or out of order (or the thread groups swapped, which is
 *          valid), an xstate component the CPU lacks, a pending signal for
 *          an unknown TID or of signal 0/SIGKILL/SIGSTOP/65, a timer with
 *          an unknown clock, notification or a THREAD_ID target that is
 *          not a thread, duplicate timer ids, counts vs note sizes, bad
 *          per-thread fields or registers
 * Every 500 iterations (and first) the intact seed is executed as a control
 * and must exit 42 (or, with -x, fail with that errno).  A seed with threads
 * (see fuzzseed -t) restores them with their TIDs: a child whose own PID
 * happens to be one of them (PIDs wrap) is replaced by a fresh fork, and
 * after a variant that ran, the seed's TIDs must be free again (else
 * TIDBUSY, a problem: the next control could not restore).  Options:
 *   -n N      number of variants (default 1000)
 *   -t SECS   stop after SECS seconds even if N is not reached (default 0:
 *             no limit)
 *   -s SEED   random seed (default 1)
 *   -i I      run only iteration I (reproduction); -o FILE: write its image
 *   -u UID    children switch to UID/GID (default: stay)
 *   -d DIR    where images are written (default .)
 *   -k MS     kill a restored child still alive after MS ms (default 50;
 *             the control gets at least 5 s to exit 42 by itself)
 *   -x ENAME  the control is expected to fail execve with ENAME instead:
 *             EPERM for a seed with threads executed as a uid that may not
 *             choose TIDs (the permission check is the loader's last one,
 *             so the whole validation still runs)
 *   -S        no trunc variants (a round of the same seed as another uid
 *             runs them: their outcomes do not depend on the uid); give -S
 *             with -i too, to reproduce an iteration of such a round
 *   -v        print every outcome
 * A restored child dying of a real-time signal counts as "ran sig=N".
 * Documented errnos: ENOEXEC EINVAL EOPNOTSUPP ESTALE EACCES EPERM ENOENT
 * ENOTDIR ENAMETOOLONG ELOOP ETXTBSY ENOMEM EISDIR EFBIG EOVERFLOW, and for
 * a seed with threads EEXIST (a TID in use).
 * Output: "fuzz: ..." summary lines; exit 0 if nothing was HANG,
 * UNKILLABLE, UNEXPECTED, TIDBUSY or a failed control, 1 otherwise.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <cpuid.h>

#include "common.h"
#include "../../include/uapi/linux/imgcr.h"

#define MAXF 8192

struct field {
	uint32_t off;
	uint8_t width;
	uint8_t kind;	/* F_* : what a sensible "interesting" value is */
};
/*
 * F_TID: a thread ID (the group's, 0, negative, PID_MAX_LIMIT...); F_SIG: a
 * signal number; F_NS: a time in ns; F_SMALL: a small enumeration (clock,
 * sigev_notify).
 */
enum { F_PLAIN, F_ADDR, F_SIZE, F_COUNT, F_TID, F_SIG, F_NS, F_SMALL };

#define PID_MAX_LIMIT_ (4 * 1024 * 1024)	/* the kernel's PID_MAX_LIMIT on x86_64 */

static unsigned char *seed;
static size_t seed_size, hdr_end;
static struct field fields[MAXF];
static int nfields;
/* fields of the version 2 notes (process, threads, signals, timers) */
static int tfields[MAXF];
static int ntfields, in_v2;
static uint64_t bounds[1024];
static int nbounds;

/* structure locations in the seed */
static Elf64_Ehdr *eh;
static size_t ph_off;
static int nph;
static size_t task_off, vmas_off, files_off, files_len, note_off, note_len;
static size_t sleeps_off, sleeps_len;	/* NT_IMGCR_SLEEPS's desc */
static size_t task_nhdr, vmas_nhdr, files_nhdr;
static size_t auxv_off, auxv_len;
static uint32_t nr_vmas;

/* version 2: process note, further threads, pending signals, timers */
static int note_ph = -1;	/* index of the PT_NOTE program header */
static size_t proc_off, proc_nhdr, proc_end, sigq_off, sigq_nhdr, timers_off, timers_nhdr;
static uint32_t nr_sigq, nr_timers;
#define MAXTHR 64
enum { T_PRSTATUS, T_FPREG, T_XSTATE, T_THREAD, T_MAX };
static struct thr {
	size_t nhdr[T_MAX], desc[T_MAX], end[T_MAX];	/* 0: not found */
	uint32_t tid;
} thr[MAXTHR];
static int nthr;		/* threads besides the main one */
static uint32_t main_pid;	/* imgcr_task.pid */
static uint64_t cpu_xcr0;	/* components this CPU has enabled */

static uint64_t rng;
static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void addf(size_t off, int width, int kind)
{
	if (nfields < MAXF && off + (size_t)width <= seed_size) {
		if (in_v2)
			tfields[ntfields++] = nfields;
		fields[nfields++] = (struct field){ (uint32_t)off, (uint8_t)width, (uint8_t)kind };
	}
}
static void addb(uint64_t b)
{
	if (nbounds < (int)(sizeof(bounds) / sizeof(bounds[0])) && b > 0 && b < seed_size)
		bounds[nbounds++] = b;
}

static uint64_t getv(const unsigned char *b, size_t off, int w)
{
	uint64_t v = 0;
	memcpy(&v, b + off, (size_t)w);
	return v;
}
static void setv(unsigned char *b, size_t size, size_t off, int w, uint64_t v)
{
	if (off + (size_t)w <= size)
		memcpy(b + off, &v, (size_t)w);
}

/* Find every structure of the seed; exits if the seed is not an image. */
static void parse_seed(void)
{
	if (seed_size < sizeof(Elf64_Ehdr) || memcmp(seed, ELFMAG, SELFMAG)) {
		outf(2, "fuzz: seed is not an ELF file\n");
		exit(2);
	}
	eh = (Elf64_Ehdr *)seed;
	ph_off = eh->e_phoff;
	nph = eh->e_phnum;
	if (ph_off + (size_t)nph * sizeof(Elf64_Phdr) > seed_size) {
		outf(2, "fuzz: seed program headers out of file\n");
		exit(2);
	}
	for (int i = 4; i < EI_NIDENT; i++)
		addf((size_t)i, 1, F_PLAIN);
#define EF(m, k) addf(offsetof(Elf64_Ehdr, m), sizeof(eh->m), k)
	EF(e_type, F_PLAIN); EF(e_machine, F_PLAIN); EF(e_version, F_PLAIN);
	EF(e_entry, F_ADDR); EF(e_phoff, F_SIZE); EF(e_shoff, F_SIZE);
	EF(e_flags, F_PLAIN); EF(e_ehsize, F_SIZE); EF(e_phentsize, F_SIZE);
	EF(e_phnum, F_COUNT); EF(e_shentsize, F_SIZE); EF(e_shnum, F_COUNT);
	EF(e_shstrndx, F_COUNT);
	addb(16); addb(offsetof(Elf64_Ehdr, e_phoff)); addb(offsetof(Elf64_Ehdr, e_phnum));
	addb(sizeof(Elf64_Ehdr));
	hdr_end = sizeof(Elf64_Ehdr);

	for (int i = 0; i < nph; i++) {
		size_t o = ph_off + (size_t)i * sizeof(Elf64_Phdr);
		Elf64_Phdr *p = (Elf64_Phdr *)(seed + o);
#define PF(m, k) addf(o + offsetof(Elf64_Phdr, m), sizeof(p->m), k)
		PF(p_type, F_PLAIN); PF(p_flags, F_PLAIN); PF(p_offset, F_SIZE);
		PF(p_vaddr, F_ADDR); PF(p_paddr, F_ADDR); PF(p_filesz, F_SIZE);
		PF(p_memsz, F_SIZE); PF(p_align, F_SIZE);
		addb(o);
		addb(o + offsetof(Elf64_Phdr, p_offset));
		if (o + sizeof(*p) > hdr_end)
			hdr_end = o + sizeof(*p);
		if (p->p_type == PT_LOAD) {
			addb(p->p_offset);
			addb(p->p_offset + 1);
			addb(p->p_offset + p->p_filesz);
		}
		if (p->p_type != PT_NOTE)
			continue;
		note_ph = i;
		note_off = p->p_offset;
		note_len = p->p_filesz;
		if (note_off + note_len > seed_size) {
			outf(2, "fuzz: seed note segment out of file\n");
			exit(2);
		}
		if (note_off + note_len > hdr_end)
			hdr_end = note_off + note_len;
		int cur = -1, main_prs = 0;	/* the thread whose notes these are */
		for (size_t q = note_off; q + sizeof(Elf64_Nhdr) <= note_off + note_len;) {
			Elf64_Nhdr *n = (Elf64_Nhdr *)(seed + q);
			size_t name = q + sizeof(*n);
			size_t desc = name + ((n->n_namesz + 3) & ~3u);
			size_t dend = desc + ((n->n_descsz + 3) & ~3u);
			const char *nm = (const char *)seed + name;
			int imgcr = n->n_namesz == 6 && !memcmp(nm, "IMGCR", 6);
			int core = n->n_namesz == 5 && !memcmp(nm, "CORE", 5);
			int linux_ = n->n_namesz == 6 && !memcmp(nm, "LINUX", 6);
			int k = -1;	/* T_* of a further thread's note */
			if (core && n->n_type == NT_PRSTATUS) {
				if (main_prs && nthr < MAXTHR)
					cur = nthr++;
				main_prs = 1;
			}
			if (cur >= 0)
				k = core && n->n_type == NT_PRSTATUS ? T_PRSTATUS :
				    core && n->n_type == NT_PRFPREG ? T_FPREG :
				    linux_ && n->n_type == NT_X86_XSTATE ? T_XSTATE :
				    imgcr && n->n_type == NT_IMGCR_THREAD ? T_THREAD : -1;
			if (k >= 0) {
				thr[cur].nhdr[k] = q;
				thr[cur].desc[k] = desc;
				thr[cur].end[k] = dend;
			}
			in_v2 = cur >= 0 || (imgcr && (n->n_type == NT_IMGCR_PROC ||
							n->n_type == NT_IMGCR_SIGQUEUE ||
							n->n_type == NT_IMGCR_TIMERS));
			addf(q, 4, F_SIZE); addf(q + 4, 4, F_SIZE); addf(q + 8, 4, F_PLAIN);
			addf(name, 1, F_PLAIN);
			addb(q); addb(q + 4); addb(name); addb(desc); addb(desc + 1);
			addb(dend - 1); addb(dend);
			if (imgcr && n->n_type == NT_IMGCR_TASK) {
				struct imgcr_task *t = (struct imgcr_task *)(seed + desc);
				task_off = desc;
				task_nhdr = q;
				nr_vmas = t->nr_vmas;
				main_pid = t->pid;
				for (size_t f = 0; f < offsetof(struct imgcr_task, start_code); f += 4)
					addf(desc + f, 4, f == offsetof(struct imgcr_task, nr_vmas) ||
						  f == offsetof(struct imgcr_task, nr_files) ? F_COUNT : F_PLAIN);
				for (size_t f = offsetof(struct imgcr_task, start_code);
				     f < offsetof(struct imgcr_task, sas_ss_flags); f += 8)
					addf(desc + f, 8, F_ADDR);
				addf(desc + offsetof(struct imgcr_task, sas_ss_flags), 4, F_PLAIN);
				addf(desc + offsetof(struct imgcr_task, exe_file), 4, F_COUNT);
				for (size_t f = offsetof(struct imgcr_task, robust_list);
				     f < offsetof(struct imgcr_task, rseq_len); f += 8)
					addf(desc + f, 8, F_ADDR);
				addf(desc + offsetof(struct imgcr_task, rseq_len), 4, F_SIZE);
				addf(desc + offsetof(struct imgcr_task, rseq_sig), 4, F_PLAIN);
				addf(desc + offsetof(struct imgcr_task, comm), 1, F_PLAIN);
				addf(desc + offsetof(struct imgcr_task, comm) + 15, 1, F_PLAIN);
			} else if (imgcr && n->n_type == NT_IMGCR_VMAS) {
				vmas_off = desc;
				vmas_nhdr = q;
				for (size_t v = 0; v + sizeof(struct imgcr_vma) <= n->n_descsz;
				     v += sizeof(struct imgcr_vma)) {
					addf(desc + v, 8, F_ADDR); addf(desc + v + 8, 8, F_ADDR);
					addf(desc + v + 16, 8, F_SIZE);
					for (size_t f = 24; f < 40; f += 4)
						addf(desc + v + f, 4, f == 36 ? F_COUNT : F_PLAIN);
					addb(desc + v);
				}
			} else if (imgcr && n->n_type == NT_IMGCR_FILES) {
				files_off = desc;
				files_len = n->n_descsz;
				files_nhdr = q;
				for (size_t r = 0; r + sizeof(struct imgcr_file) <= files_len;) {
					struct imgcr_file *fr = (struct imgcr_file *)(seed + desc + r);
					addf(desc + r, 4, F_SIZE); addf(desc + r + 4, 4, F_SIZE);
					for (size_t f = 8; f < 40; f += 8)
						addf(desc + r + f, 8, F_SIZE);
					for (size_t f = 40; f < 56; f += 4)
						addf(desc + r + f, 4, F_PLAIN);
					addf(desc + r + 56, 1, F_PLAIN);
					if (fr->path_len)
						addf(desc + r + 56 + fr->path_len - 1, 1, F_PLAIN);
					addb(desc + r); addb(desc + r + 56);
					if (fr->reclen < 8)
						break;
					r += fr->reclen;
				}
			} else if (imgcr && n->n_type == NT_IMGCR_SIGACT) {
				for (size_t f = 0; f + 8 <= n->n_descsz; f += 8)
					addf(desc + f, 8, (f % 32) == 8 ? F_PLAIN : F_ADDR);
			} else if (core && n->n_type == NT_PRSTATUS) {
				for (size_t f = offsetof(struct imgcr_prstatus, regs);
				     f < offsetof(struct imgcr_prstatus, fpvalid); f += 8)
					addf(desc + f, 8, F_ADDR);
				if (cur >= 0)
					addf(desc + offsetof(struct imgcr_prstatus, pid), 4, F_TID);
			} else if (core && n->n_type == NT_PRFPREG && cur >= 0) {
				addf(desc + 0, 2, F_PLAIN);	/* fcw */
				addf(desc + 24, 4, F_PLAIN);	/* mxcsr */
			} else if (imgcr && n->n_type == NT_IMGCR_PROC &&
				   n->n_descsz >= sizeof(struct imgcr_proc)) {
				proc_off = desc;
				proc_nhdr = q;
				proc_end = dend;
#define PRF(m, k) addf(desc + offsetof(struct imgcr_proc, m), sizeof(((struct imgcr_proc *)0)->m), k)
				PRF(nr_threads, F_COUNT); PRF(flags, F_PLAIN);
				PRF(nr_sigqueue, F_COUNT); PRF(nr_timers, F_COUNT);
				PRF(pdeath_signal, F_SIG); PRF(pad0, F_PLAIN);
				PRF(timer_slack_ns, F_NS); PRF(default_timer_slack_ns, F_NS);
				for (size_t f = offsetof(struct imgcr_proc, itimer);
				     f < sizeof(struct imgcr_proc); f += 8)
					addf(desc + f, 8, F_NS);
			} else if (imgcr && n->n_type == NT_IMGCR_THREAD &&
				   n->n_descsz >= sizeof(struct imgcr_thread)) {
				if (cur >= 0)
					thr[cur].tid = ((struct imgcr_thread *)(seed + desc))->tid;
#define THF(m, k) addf(desc + offsetof(struct imgcr_thread, m), sizeof(((struct imgcr_thread *)0)->m), k)
				THF(tid, F_TID); THF(flags, F_PLAIN); THF(blocked, F_PLAIN);
				THF(sas_ss_sp, F_ADDR); THF(sas_ss_size, F_SIZE);
				THF(sas_ss_flags, F_PLAIN); THF(pdeath_signal, F_SIG);
				THF(robust_list, F_ADDR); THF(robust_list_len, F_SIZE);
				THF(clear_child_tid, F_ADDR); THF(rseq, F_ADDR);
				THF(rseq_len, F_SIZE); THF(rseq_sig, F_PLAIN);
				THF(timer_slack_ns, F_NS); THF(default_timer_slack_ns, F_NS);
				THF(xfeatures, F_PLAIN);
				addf(desc + offsetof(struct imgcr_thread, comm), 1, F_PLAIN);
				addf(desc + offsetof(struct imgcr_thread, comm) + 15, 1, F_PLAIN);
			} else if (imgcr && n->n_type == NT_IMGCR_SIGQUEUE) {
				sigq_off = desc;
				sigq_nhdr = q;
				nr_sigq = n->n_descsz / sizeof(struct imgcr_sigqueue);
				for (size_t e = 0; e + sizeof(struct imgcr_sigqueue) <= n->n_descsz;
				     e += sizeof(struct imgcr_sigqueue)) {
					size_t inf = desc + e + offsetof(struct imgcr_sigqueue, info);
					addf(desc + e, 4, F_TID);	/* tid */
					addf(desc + e + 4, 4, F_PLAIN);	/* pad0 */
					addf(inf + 0, 4, F_SIG);	/* si_signo */
					addf(inf + 4, 4, F_PLAIN);	/* si_errno */
					addf(inf + 8, 4, F_PLAIN);	/* si_code */
					addf(inf + 16, 4, F_TID);	/* si_pid */
					addf(inf + 20, 4, F_PLAIN);	/* si_uid */
					addf(inf + 24, 8, F_PLAIN);	/* si_value */
					addf(inf + 48, 1, F_PLAIN);	/* past kernel_siginfo */
					addf(inf + IMGCR_SIGINFO_SIZE - 1, 1, F_PLAIN);
					addb(desc + e);
				}
			} else if (imgcr && n->n_type == NT_IMGCR_TIMERS) {
				timers_off = desc;
				timers_nhdr = q;
				nr_timers = n->n_descsz / sizeof(struct imgcr_posix_timer);
				for (size_t e = 0; e + sizeof(struct imgcr_posix_timer) <= n->n_descsz;
				     e += sizeof(struct imgcr_posix_timer)) {
#define TMF(m, k) addf(desc + e + offsetof(struct imgcr_posix_timer, m), sizeof(((struct imgcr_posix_timer *)0)->m), k)
					TMF(id, F_PLAIN); TMF(clock, F_SMALL); TMF(notify, F_SMALL);
					TMF(signo, F_SIG); TMF(value, F_PLAIN); TMF(tid, F_TID);
					TMF(overrun, F_PLAIN); TMF(value_ns, F_NS);
					TMF(interval_ns, F_NS);
					addb(desc + e);
				}
			} else if (imgcr && n->n_type == NT_IMGCR_SLEEPS) {
				/* its fields once the threads' flags are known, below */
				sleeps_off = desc;
				sleeps_len = n->n_descsz;
			} else if (imgcr && n->n_type == NT_IMGCR_SIGWAITS) {
				for (size_t e = 0; e + sizeof(struct imgcr_sigwait) <= n->n_descsz;
				     e += sizeof(struct imgcr_sigwait)) {
					addf(desc + e, 4, F_TID);	/* tid */
					addf(desc + e + 4, 4, F_PLAIN);	/* pad0 */
					addf(desc + e + 8, 8, F_PLAIN);	/* mask */
					addb(desc + e);
				}
			} else if (core && n->n_type == NT_AUXV) {
				auxv_off = desc;
				auxv_len = n->n_descsz;
				for (size_t f = 0; f + 8 <= n->n_descsz; f += 8)
					addf(desc + f, 8, F_ADDR);
			} else if (linux_ && n->n_type == NT_X86_XSTATE) {
				addf(desc + 24, 4, F_PLAIN);	/* mxcsr */
				addf(desc + 28, 4, F_PLAIN);	/* mxcsr_mask */
				addf(desc + 512, 8, F_PLAIN);	/* xstate_bv */
				addf(desc + 520, 8, F_PLAIN);	/* xcomp_bv */
				addf(desc + 528, 8, F_PLAIN);	/* reserved */
				addf(desc + 0, 2, F_PLAIN);	/* fcw */
			}
			if (dend <= q)
				break;
			q = dend;
		}
	}
	in_v2 = 0;
	if (sleeps_off) {
		/*
		 * An entry for each thread with IMGCR_TASK_RESTART_BLOCK: 40
		 * bytes, or 32 when none has a bitset (img_check_sleeps())
		 */
		size_t nrb = 0, sz = sizeof(struct imgcr_sleep);
		if (task_off && ((struct imgcr_task *)(seed + task_off))->flags &
				IMGCR_TASK_RESTART_BLOCK)
			nrb++;
		for (int i = 0; i < nthr; i++)
			if (thr[i].desc[T_THREAD] &&
			    ((struct imgcr_thread *)(seed + thr[i].desc[T_THREAD]))->flags &
			    IMGCR_TASK_RESTART_BLOCK)
				nrb++;
		if (nrb && sleeps_len == nrb * IMGCR_SLEEP_SIZE_V1)
			sz = IMGCR_SLEEP_SIZE_V1;
		for (size_t e = 0, desc = sleeps_off; e + sz <= sleeps_len; e += sz) {
#define SLF(m, k) addf(desc + e + offsetof(struct imgcr_sleep, m), sizeof(((struct imgcr_sleep *)0)->m), k)
			SLF(tid, F_TID); SLF(clock, F_SMALL); SLF(flags, F_PLAIN);
			SLF(nfds, F_PLAIN); SLF(rmtp, F_ADDR);
			SLF(remaining_ns, F_NS);
			if (sz > IMGCR_SLEEP_SIZE_V1) {
				SLF(bitset, F_PLAIN);
				SLF(pad, F_PLAIN);
			}
			addb(desc + e);
		}
	}
	addb(seed_size - 1);
	if (!task_off || !vmas_off) {
		outf(2, "fuzz: seed has no imgcr task/vma notes\n");
		exit(2);
	}
	for (int i = 0; i < nthr; i++)
		for (int k = 0; k < T_MAX; k++)
			if (!thr[i].nhdr[k]) {
				outf(2, "fuzz: seed thread %d lacks a note\n", i + 1);
				exit(2);
			}
	/* XCR0: the state components this CPU (and kernel) enabled */
	unsigned int a, bx, c, d;
	if (__get_cpuid(1, &a, &bx, &c, &d) && (c & (1u << 27))) {
		uint32_t lo, hi;
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		cpu_xcr0 = ((uint64_t)hi << 32) | lo;
	} else {
		cpu_xcr0 = 3;
	}
}

static int is_seed_tid(uint32_t tid)
{
	for (int i = 0; i < nthr; i++)
		if (thr[i].tid == tid)
			return 1;
	return 0;
}

static uint64_t interesting(int w, int kind, uint64_t orig, size_t size)
{
	static const uint64_t v8[] = {
		0, 1, ~0ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
		0xffff800000000000ull, 0xffffffffff600000ull, 0x00007ffffffff000ull,
		0x0000800000000000ull, 0x00007fffffffffffull, 0x1000, 0xfff, 0x10000,
		0x100000000ull, 0xffffffffull, 0x80000000ull,
	};
	static const uint64_t v4[] = { 0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x1000,
				       0xfff, 0xffff, 0x10000, 65530, 65531, 4096, 4097 };
	static const uint64_t v2[] = { 0, 1, 0xffff, 0x7fff, 0x8000, 0xff, 56, 57, 55, 64 };
	static const uint64_t v1[] = { 0, 1, 0x7f, 0x80, 0xff, 0x10, 'A', '/' };
	if (kind >= F_TID && rndn(2)) {
		/* half of the time a value of the field's own kind */
		static const uint64_t sig[] = { 0, 1, 9, 19, 31, 32, 33, 34, 64, 65, 0xffffffff,
						128, 0x80000000 };
		static const uint64_t ns[] = { 0, 1, 999999999, 1000000000, 1ull << 62,
					       (1ull << 62) - 1, ~0ull, 1ull << 63, 3600000000000ull,
					       0xffffffff };
		static const uint64_t small[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
						  0xffffffff, 0xfffffffe, 0xfffffffa, 64, 0x80000000 };
		switch (kind) {
		case F_TID: {
			uint64_t t[] = { 0, 1, 0xffffffff, 0x80000000, 0x7fffffff, PID_MAX_LIMIT_,
					 PID_MAX_LIMIT_ - 1, PID_MAX_LIMIT_ + 1, 32768, 32767,
					 main_pid, nthr ? thr[rndn((uint64_t)nthr)].tid : main_pid,
					 (uint64_t)getpid(), orig + 1, orig - 1 };
			return t[rndn(sizeof(t) / sizeof(t[0]))];
		}
		case F_SIG: return sig[rndn(sizeof(sig) / sizeof(sig[0]))];
		case F_NS: return ns[rndn(sizeof(ns) / sizeof(ns[0]))];
		default: return small[rndn(sizeof(small) / sizeof(small[0]))];
		}
	}
	switch (rndn(4)) {
	case 0: {	/* relative to the original value */
		static const int64_t d[] = { 1, -1, 4, -4, 8, -8, 16, 0x1000, -0x1000,
					     0x10000, (int64_t)1 << 32, 56, -56 };
		return orig + (uint64_t)d[rndn(sizeof(d) / sizeof(d[0]))];
	}
	case 1:
		if (kind == F_SIZE || kind == F_COUNT) {
			uint64_t s[] = { size, size - 1, size + 1, size + 0x1000, orig * 2,
					 orig / 2, orig * 0x1000, 0x1000000, 16u << 20,
					 (16u << 20) + 1 };
			return s[rndn(sizeof(s) / sizeof(s[0]))];
		}
		if (kind == F_ADDR) {
			uint64_t a[] = { orig & ~0xfffull, (orig | 0xfff) + 1, orig ^ 0x8000000000000000ull,
					 orig | 0xffff000000000000ull, orig + 0x7ffffffff000ull,
					 0x10000, 0xfff0, 0 };
			return a[rndn(sizeof(a) / sizeof(a[0]))];
		}
		/* fall through */
	case 2:
		switch (w) {
		case 8: return v8[rndn(sizeof(v8) / sizeof(v8[0]))];
		case 4: return v4[rndn(sizeof(v4) / sizeof(v4[0]))];
		case 2: return v2[rndn(sizeof(v2) / sizeof(v2[0]))];
		default: return v1[rndn(sizeof(v1) / sizeof(v1[0]))];
		}
	default:
		return orig ^ (1ull << rndn((uint64_t)w * 8));
	}
}

static const uint8_t i1[] = { 0, 0xff, 0x7f, 0x80, 0x01, 0x10, 0x20, 0x40 };
static const uint32_t i4[] = { 0, 0xffffffff, 0x7fffffff, 0x80000000, 0x1000, 0xfff,
			       0x10000, 1, 2, 0x100, 0x7fff, 0xffff };
static const uint64_t i8[] = { 0, ~0ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
			       0xffff800000000000ull, 0x1000, 0x00007ffffffff000ull,
			       0x0000800000000000ull, 1, 0x100000000ull };

/* One random mutation, 90% inside the header region. */
static void mutate(unsigned char *b, size_t size, char *log, size_t logsz)
{
	size_t lim = rndn(10) < 9 ? hdr_end : size;
	size_t off = rndn(lim);
	int op = (int)rndn(4);
	size_t l = strlen(log);
	switch (op) {
	case 0:
		b[off] ^= (unsigned char)(1u << rndn(8));
		break;
	case 1:
		b[off] = i1[rndn(sizeof(i1))];
		break;
	case 2:
		off &= ~(size_t)3;
		setv(b, size, off, 4, i4[rndn(sizeof(i4) / sizeof(i4[0]))]);
		break;
	default:
		off &= ~(size_t)7;
		setv(b, size, off, 8, i8[rndn(sizeof(i8) / sizeof(i8[0]))]);
		break;
	}
	snprintf(log + l, logsz - l, " m%d@%#zx", op, off);
}

static size_t vma_at(uint32_t i) { return vmas_off + (size_t)i * sizeof(struct imgcr_vma); }


/* [lo, mid) and [mid, hi) change places. */
static void rotate(unsigned char *b, size_t lo, size_t mid, size_t hi)
{
	size_t l = mid - lo;
	unsigned char *tmp = malloc(l + 1);

	if (!tmp || lo > mid || mid > hi)
		goto out;
	memcpy(tmp, b + lo, l);
	memmove(b + lo, b + mid, hi - mid);
	memcpy(b + lo + (hi - mid), tmp, l);
out:
	free(tmp);
}

/*
 * Remove [lo, hi) from the note segment: what follows moves up, the end is
 * zero-filled (empty notes) and, if @shrink, the segment shrinks instead.
 */
static void note_cut(unsigned char *b, size_t lo, size_t hi, int shrink)
{
	size_t end = note_off + note_len;

	memmove(b + lo, b + hi, end - hi);
	memset(b + end - (hi - lo), 0, hi - lo);
	if (shrink && note_ph >= 0) {
		Elf64_Phdr *p = (Elf64_Phdr *)(b + ph_off + (size_t)note_ph * sizeof(Elf64_Phdr));

		if (p->p_memsz == p->p_filesz)
			p->p_memsz -= hi - lo;
		p->p_filesz -= hi - lo;
	}
}

static struct imgcr_thread *th_at(unsigned char *b, int i)
{
	return (struct imgcr_thread *)(b + thr[i].desc[T_THREAD]);
}

static struct imgcr_prstatus *prs_at(unsigned char *b, int i)
{
	return (struct imgcr_prstatus *)(b + thr[i].desc[T_PRSTATUS]);
}

/* A TID that is none of the group's (nor, most likely, anybody's). */
static uint32_t unknown_tid(void)
{
	uint32_t t = main_pid;

	for (int i = 0; i < nthr; i++)
		if (thr[i].tid > t)
			t = thr[i].tid;
	return t + 1000;
}

/* A TID of the group: the main one or a thread's. */
static uint32_t group_tid(void)
{
	int i = (int)rndn((uint64_t)nthr + 1);

	return i == nthr ? main_pid : thr[i].tid;
}

/* Pending signals and timers aimed at TID old now aim at new. */
static void retarget(unsigned char *b, uint32_t old, uint32_t new)
{
	for (uint32_t k = 0; k < nr_sigq; k++) {
		struct imgcr_sigqueue *q = (struct imgcr_sigqueue *)(b + sigq_off) + k;

		if (q->tid == old)
			q->tid = new;
	}
	for (uint32_t k = 0; k < nr_timers; k++) {
		struct imgcr_posix_timer *pt = (struct imgcr_posix_timer *)(b + timers_off) + k;

		if (pt->tid == old)
			pt->tid = new;
	}
}

#define NTHREADSEM 14

/* Lie number C (21 ..) about the threads, pending signals or timers. */
static size_t thread_lie(unsigned char *b, size_t size, int c, char *log, size_t logsz)
{
	struct imgcr_proc *pr = (struct imgcr_proc *)(b + proc_off);
	int i = (int)rndn((uint64_t)nthr), j = (int)rndn((uint64_t)nthr);
	struct imgcr_thread *th = th_at(b, i);
	struct imgcr_sigqueue *q = nr_sigq ? (struct imgcr_sigqueue *)(b + sigq_off) +
					     rndn(nr_sigq) : NULL;
	uint32_t ti = (uint32_t)rndn(nr_timers ? nr_timers : 1);
	struct imgcr_posix_timer *pt = nr_timers ? (struct imgcr_posix_timer *)(b + timers_off) +
						   ti : NULL;
	int r = (int)rndn(8);
	size_t l;

	snprintf(log, logsz, "sem%d thr%d r%d", c, i + 1, r);
	l = strlen(log);
	if (!proc_off)
		return size;
	switch (c) {
	case 21:	/* nr_threads off by one either way */
		pr->nr_threads += r & 1 ? 1 : (uint32_t)-1;
		break;
	case 22:	/* two threads with one TID */
		if (nthr > 1) {
			if (j == i)
				j = (i + 1) % nthr;
			th->tid = thr[j].tid;
		} else {
			th->tid = main_pid;
		}
		break;
	case 23:	/* a thread with the main thread's TID */
		th->tid = main_pid;
		break;
	case 24: {	/* a TID out of range, in use, or free but unusual */
		static const uint32_t bad[] = { 0, 0xffffffff, 0x80000000, 0xfffffffe,
						PID_MAX_LIMIT_, PID_MAX_LIMIT_ + 1,
						PID_MAX_LIMIT_ - 1, 0x7fffffff, 1, 0, 32768, 32767 };
		uint32_t v = bad[rndn(sizeof(bad) / sizeof(bad[0]))];

		if (v == 0 && rndn(2))
			v = (uint32_t)getpid();	/* the fuzzer's: in use */
		/* mostly with the signals and timers that name it following */
		if (r < 6)
			retarget(b, th->tid, v);
		th->tid = v;
		snprintf(log + l, logsz - l, " tid=%u", v);
		break;
	}
	case 25: {	/* a note of a thread missing, or its whole group */
		int k = (int)rndn(T_MAX + 2);
		int shrink = (int)rndn(2);

		if (k < T_MAX) {
			note_cut(b, thr[i].nhdr[k], thr[i].end[k], shrink);
		} else {
			note_cut(b, thr[i].nhdr[0], thr[i].end[T_MAX - 1], shrink);
			if (k == T_MAX + 1) {	/* consistently: a valid image */
				pr->nr_threads--;
				if ((!sigq_off || sigq_off < thr[i].nhdr[0]) &&
				    (!timers_off || timers_off < thr[i].nhdr[0]))	/* in place */
					retarget(b, thr[i].tid, main_pid);
			}
		}
		snprintf(log + l, logsz - l, " cut%d shrink%d", k, shrink);
		break;
	}
	case 26: {	/* notes out of order */
		int k = (int)rndn(T_MAX - 1);

		switch (r % 5) {
		case 0:	/* two notes of a thread swapped */
			rotate(b, thr[i].nhdr[k], thr[i].nhdr[k + 1], thr[i].end[k + 1]);
			snprintf(log + l, logsz - l, " swap%d", k);
			break;
		case 1:	/* two threads' groups swapped: valid */
			if (i + 1 < nthr && thr[i].end[T_MAX - 1] == thr[i + 1].nhdr[0])
				rotate(b, thr[i].nhdr[0], thr[i + 1].nhdr[0],
				       thr[i + 1].end[T_MAX - 1]);
			break;
		case 2:	/* a thread's NT_IMGCR_THREAD among the main thread's notes */
			rotate(b, thr[0].nhdr[0], thr[i].nhdr[T_THREAD], thr[i].end[T_THREAD]);
			break;
		case 3:	/* NT_IMGCR_PROC after the last thread */
			if (proc_end <= thr[0].nhdr[0])
				rotate(b, proc_nhdr, proc_end, thr[nthr - 1].end[T_MAX - 1]);
			break;
		default:	/* a thread's NT_PRSTATUS last in its group */
			rotate(b, thr[i].nhdr[0], thr[i].end[0], thr[i].end[T_MAX - 1]);
			break;
		}
		break;
	}
	case 27: {	/* a thread's xstate has a component the CPU lacks */
		uint64_t bv, bit = 0;

		for (int n = 0; n < 64 && !bit; n++) {
			uint64_t m = 1ull << (n < 48 ? 2 + rndn(18) : rndn(64));

			if (!(cpu_xcr0 & m))
				bit = m;
		}
		if (!bit)
			break;
		memcpy(&bv, b + thr[i].desc[T_XSTATE] + 512, 8);
		bv |= bit;
		memcpy(b + thr[i].desc[T_XSTATE] + 512, &bv, 8);
		if (r & 1)
			th->xfeatures |= bit;
		snprintf(log + l, logsz - l, " bit%#llx", (unsigned long long)bit);
		break;
	}
	case 28: {	/* a pending signal for an unknown TID, or of a bad signal */
		static const int32_t sigs[] = { 0, 9, 19, 65, -1, 64, 32, 128 };
		static const uint32_t tids[] = { 1, 0xffffffff, PID_MAX_LIMIT_, 0, 12345 };

		if (!q)
			break;
		if (r < 3) {
			uint32_t v = tids[rndn(sizeof(tids) / sizeof(tids[0]))];

			q->tid = v == 0 ? unknown_tid() : v == 12345 ? (uint32_t)getpid() : v;
		} else if (r < 6) {
			int32_t sg = sigs[rndn(sizeof(sigs) / sizeof(sigs[0]))];

			memcpy(q->info, &sg, sizeof(sg));
		} else {
			q->tid = r == 6 ? group_tid() : 0;	/* valid: another target */
		}
		break;
	}
	case 29: {	/* a timer with an unknown (or another valid) clock */
		static const int32_t clocks[] = { 2, 3, 4, 5, 6, 8, 9, 10, 12, -1, -2, -6,
						  0x7fffffff, 7, 11, 1, 0 };

		if (pt)
			pt->clock = clocks[rndn(sizeof(clocks) / sizeof(clocks[0]))];
		break;
	}
	case 30:	/* a timer's notification or THREAD_ID target */
		if (!pt)
			break;
		switch (r % 4) {
		case 0: {	/* to a TID that is not one of the group */
			static const uint32_t tids[] = { 0, 1, 0xffffffff, PID_MAX_LIMIT_, 7, 8 };
			uint32_t v = tids[rndn(sizeof(tids) / sizeof(tids[0]))];

			pt->notify = IMGCR_SIGEV_THREAD_ID;
			pt->tid = v == 7 ? (uint32_t)getpid() : v == 8 ? unknown_tid() : v;
			break;
		}
		case 1:	/* a target without SIGEV_THREAD_ID */
			pt->notify = rndn(2) ? IMGCR_SIGEV_SIGNAL : IMGCR_SIGEV_NONE;
			pt->tid = group_tid();
			break;
		case 2: {	/* an unknown notification */
			static const int32_t nt[] = { 2, 3, 5, 6, -1, 0x40, 0x7fffffff };

			pt->notify = nt[rndn(sizeof(nt) / sizeof(nt[0]))];
			break;
		}
		default:	/* valid: to a thread of the group */
			pt->notify = IMGCR_SIGEV_THREAD_ID;
			pt->tid = group_tid();
			if (!pt->signo)
				pt->signo = 34;
			break;
		}
		break;
	case 31: {	/* two timers with one id, or a negative id */
		struct imgcr_posix_timer *t0 = (struct imgcr_posix_timer *)(b + timers_off);

		if (!pt)
			break;
		if (nr_timers > 1)
			pt->id = t0[(ti + 1 + rndn(nr_timers - 1)) % nr_timers].id;
		else
			pt->id = r & 1 ? -1 : (int32_t)0x80000000;
		break;
	}
	case 32:	/* counts vs note sizes */
		switch (r % 4) {
		case 0: pr->nr_sigqueue += r & 4 ? 1 : (uint32_t)-1; break;
		case 1: pr->nr_timers += r & 4 ? 1 : (uint32_t)-1; break;
		case 2:	/* count 0, note still there */
			if (r & 4)
				pr->nr_sigqueue = 0;
			else
				pr->nr_timers = 0;
			break;
		default:	/* note one entry shorter */
			if (sigq_nhdr && r & 4)
				((Elf64_Nhdr *)(b + sigq_nhdr))->n_descsz -= sizeof(struct imgcr_sigqueue);
			else if (timers_nhdr)
				((Elf64_Nhdr *)(b + timers_nhdr))->n_descsz -=
					sizeof(struct imgcr_posix_timer);
			break;
		}
		break;
	case 33:	/* per-thread fields the kernel would not have stored */
		switch (r) {
		case 0: th->robust_list += 4; th->robust_list_len = rndn(2) ? 0 : 16; break;
		case 1: th->rseq += 4; break;
		case 2: th->rseq_len = (uint32_t)rndn(2) * 16; break;
		case 3: th->sas_ss_flags = rndn(2) ? 3 : 0x80000000u | 1; break;
		case 4: th->sas_ss_sp = 0x00007ffffffff000ull; th->sas_ss_size = 0x2000; break;
		case 5: th->flags = 4 << rndn(4); break;
		case 6: th->pdeath_signal = rndn(2) ? 65 : 0xffffffff; break;
		default: th->clear_child_tid = 0xffff800000000000ull; break;
		}
		break;
	default: {	/* 34: a thread's registers */
		struct imgcr_prstatus *ps = prs_at(b, i);

		switch (r % 6) {
		case 0: ps->regs[IMGCR_REG_CS] = 0x23; break;	/* 32-bit code */
		case 1: ps->regs[IMGCR_REG_SS] = 0; break;
		case 2: ps->regs[IMGCR_REG_RIP] = 0xffffffff81000000ull; break;
		case 3: ps->regs[IMGCR_REG_FS_BASE] = 0x0000800000000000ull; break;
		case 4: ps->regs[IMGCR_REG_DS] = 0x2b; break;
		default: ps->regs[IMGCR_REG_RSP] = 0; break;	/* valid: it faults */
		}
		break;
	}
	}
	return size;
}

/* A structure-aware lie; returns the (possibly shorter) size. */
static size_t semantic(unsigned char *b, size_t size, char *log, size_t logsz)
{
	struct imgcr_task *t = (struct imgcr_task *)(b + task_off);
	/* with threads, half of the lies are about them */
	int c = nthr && rndn(2) ? 21 + (int)rndn(NTHREADSEM) : (int)rndn(21);
	uint32_t vi = (uint32_t)rndn(nr_vmas);
	struct imgcr_vma *v = (struct imgcr_vma *)(b + vma_at(vi));
	Elf64_Nhdr *vn = (Elf64_Nhdr *)(b + vmas_nhdr);

	if (c >= 21)
		return thread_lie(b, size, c, log, logsz);
	snprintf(log, logsz, "sem%d vma%u", c, vi);
	switch (c) {
	case 0:	/* nr_vmas disagrees with the VMA note size */
		t->nr_vmas += rndn(2) ? 1 : (uint32_t)-1;
		break;
	case 1:	/* both lie consistently: one VMA more, beyond the note */
		t->nr_vmas++;
		vn->n_descsz += sizeof(struct imgcr_vma);
		break;
	case 2:	/* one VMA fewer, consistently */
		t->nr_vmas--;
		vn->n_descsz -= sizeof(struct imgcr_vma);
		break;
	case 3:	/* overlap with the previous one */
		if (vi)
			v->start = ((struct imgcr_vma *)(b + vma_at(vi - 1)))->start;
		else
			v->end = ((struct imgcr_vma *)(b + vma_at(1)))->end;
		break;
	case 4:	/* kernel space */
		v->start = 0xffff800000000000ull;
		v->end = v->start + 0x1000;
		break;
	case 5:	/* huge length */
		v->end = 0x00007ffffffff000ull;
		break;
	case 6:	/* end beyond user space */
		v->end = 0x0000800000001000ull;
		break;
	case 7:	/* start == end, or reversed */
		v->end = rndn(2) ? v->start : v->start - 0x1000;
		break;
	case 8:	/* swap two VMAs: unsorted */
		if (vi + 1 < nr_vmas) {
			struct imgcr_vma tmp = *v;
			*v = *(v + 1);
			*(v + 1) = tmp;
		}
		break;
	case 9:	/* nr_files lies */
		t->nr_files += rndn(2) ? 1 : (uint32_t)-1;
		break;
	case 10: case 11: {	/* a file record's reclen / path_len */
		if (!files_off)
			break;
		struct imgcr_file *f = (struct imgcr_file *)(b + files_off);
		static const uint32_t bad[] = { 0, 4, 8, 56, 57, 63, 4096, 4097, 0xfffffff8,
						0xffffffff, 1, 2 };
		if (c == 10)
			f->reclen = bad[rndn(sizeof(bad) / sizeof(bad[0]))];
		else
			f->path_len = bad[rndn(sizeof(bad) / sizeof(bad[0]))];
		break;
	}
	case 12: {	/* path not NUL-terminated / relative / another file */
		if (!files_off)
			break;
		struct imgcr_file *f = (struct imgcr_file *)(b + files_off);
		if (!f->path_len || f->path_len > 4096)
			break;
		static const char *paths[] = { "/etc/passwd", "/proc/self/mem", "/dev/zero",
					       "/", "/imgcr/bin", "/nonexistent", "relative",
					       "/proc/1/exe", "/dev/mem" };
		switch (rndn(3)) {
		case 0: f->path[f->path_len - 1] = 'A'; break;
		case 1: f->path[0] = 'x'; break;
		default: {
			const char *p = paths[rndn(sizeof(paths) / sizeof(paths[0]))];
			if (strlen(p) + 1 <= f->path_len) {
				memset(f->path, 0, f->path_len);
				strcpy(f->path, p);
				f->path_len = (uint32_t)strlen(p) + 1;
			}
		}
		}
		break;
	}
	case 13: {	/* a note's descriptor size lies */
		size_t q = rndn(3) == 0 ? task_nhdr : rndn(2) ? vmas_nhdr :
			   files_nhdr ? files_nhdr : task_nhdr;
		Elf64_Nhdr *n = (Elf64_Nhdr *)(b + q);
		static const int32_t d[] = { 4, -4, 8, -8, 1, -1, 0x1000 };
		n->n_descsz += (uint32_t)d[rndn(sizeof(d) / sizeof(d[0]))];
		break;
	}
	case 14: {	/* e_phnum off by some */
		Elf64_Ehdr *e = (Elf64_Ehdr *)b;
		e->e_phnum += rndn(2) ? 1 : (uint16_t)-1;
		break;
	}
	case 15: case 16: {	/* a PT_LOAD lies */
		int i = 1 + (int)rndn(nph > 1 ? nph - 1 : 1);
		Elf64_Phdr *p = (Elf64_Phdr *)(b + ph_off + (size_t)(i % nph) * sizeof(Elf64_Phdr));
		switch (rndn(6)) {
		case 0: p->p_offset = size; break;
		case 1: p->p_filesz += 0x1000; p->p_memsz += 0x1000; break;
		case 2: p->p_memsz += 0x1000; break;
		case 3: p->p_vaddr = 0xffff800000000000ull; break;
		case 4: p->p_vaddr -= 0x1000; break;
		default: p->p_vaddr = v->start; break;
		}
		snprintf(log + strlen(log), logsz - strlen(log), " ph%d", i % nph);
		break;
	}
	case 17:	/* version */
		t->version = (uint32_t)(rndn(3) == 0 ? 0 : rndn(2) ? 2 : 0xffffffff);
		break;
	case 18:	/* vma kind/file combinations */
		v->kind = (uint32_t)rndn(5);
		v->file = rndn(2) ? IMGCR_NO_FILE : (uint32_t)rndn(3);
		v->flags = (uint32_t)rndn(16);
		break;
	case 19:	/* auxv: no AT_NULL at all, or only in the last entry */
		for (size_t k = 0; auxv_len && k + 16 <= auxv_len; k += 16) {
			uint64_t key = 1 + rndn(50);

			if (rndn(2) && k + 16 + 16 > auxv_len)
				key = 0;
			memcpy(b + auxv_off + k, &key, sizeof(key));
		}
		break;
	default:	/* 20: truncated in the middle of the note segment */
		return note_off + rndn(note_len);
	}
	return size;
}

static int opt_verbose, opt_notrunc;
static long sem_fail[21 + NTHREADSEM], sem_ran[21 + NTHREADSEM], sem_ok[21 + NTHREADSEM];

/* Build variant I into buf; returns its size and describes it in log. */
static size_t make_variant(long i, unsigned char *buf, char *log, size_t logsz, int *cls)
{
	memcpy(buf, seed, seed_size);
	size_t size = seed_size;
	long ntrunc = 3L * nbounds;

	if (i < ntrunc && !opt_notrunc) {
		size = bounds[i / 3] + (size_t)(i % 3) - 1;
		snprintf(log, logsz, "trunc %zu", size);
		*cls = 0;
		return size;
	}
	int r = (int)rndn(100);
	if (r < 40) {
		int k = 1 + (int)rndn(8);
		snprintf(log, logsz, "mut%d", k);
		for (int j = 0; j < k; j++)
			mutate(buf, size, log, logsz);
		*cls = 1;
	} else if (r < 80) {
		/* with threads, half of them on the version 2 notes' fields */
		const struct field *f = nthr && ntfields && rndn(2) ?
			&fields[tfields[rndn((uint64_t)ntfields)]] :
			&fields[rndn((uint64_t)nfields)];
		uint64_t v = interesting(f->width, f->kind, getv(buf, f->off, f->width), size);
		setv(buf, size, f->off, f->width, v);
		snprintf(log, logsz, "field@%#x/%d=%#llx", f->off, f->width, (unsigned long long)v);
		if (rndn(4) == 0)
			mutate(buf, size, log, logsz);
		*cls = 2;
	} else {
		size = semantic(buf, size, log, logsz);
		*cls = 3;
	}
	return size;
}

#define MAXOUT 64
static struct { char name[40]; long n; } outc[MAXOUT];
static int noutc, in_control;
static void count(const char *name)
{
	/* a control's outcome is not a variant's; its problems are */
	if (in_control && strcmp(name, "HANG") && strcmp(name, "UNKILLABLE") &&
	    strcmp(name, "UNEXPECTED") && strcmp(name, "TIDBUSY"))
		return;
	for (int i = 0; i < noutc; i++)
		if (!strcmp(outc[i].name, name)) {
			outc[i].n++;
			return;
		}
	if (noutc < MAXOUT) {
		snprintf(outc[noutc].name, sizeof(outc[0].name), "%s", name);
		outc[noutc++].n = 1;
	}
}

static int errno_ok(int e)
{
	switch (e) {
	case ENOEXEC: case EINVAL: case EOPNOTSUPP: case ESTALE: case EACCES: case EPERM:
	case ENOENT: case ENOTDIR: case ENAMETOOLONG: case ELOOP: case ETXTBSY:
	case ENOMEM: case EISDIR: case EFBIG: case EOVERFLOW:
		return 1;
	case EEXIST:	/* a thread's TID is in use */
		return nthr > 0;
	}
	return 0;
}

static const char *dir = ".";
static int opt_uid = -1, kill_ms = 50;
static long bad_total;
static int last_errno;	/* of run_image()'s execve, 0 if it succeeded */

/* A kernel thread (a child of kthreadd) has this TID. */
static int is_kthread(uint32_t tid)
{
	char p[64], buf[1024];
	int fd, n;

	snprintf(p, sizeof(p), "/proc/%u/status", tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *pp = strstr(buf, "\nPPid:");
	return tid == 2 || (pp && atoi(pp + 6) == 2);
}

/*
 * With threads: after a variant ran, the seed's TIDs must be free again
 * once its child was reaped (its whole thread group is gone; a kernel
 * thread that took one since does not count); give the kernel 2 s.
 * Returns the TID still in use, 0 if none.
 */
static uint32_t seed_tid_busy(void)
{
	for (int n = 0; n < 200; n++) {
		uint32_t busy = 0;

		for (int i = 0; i < nthr && !busy; i++)
			if ((kill((pid_t)thr[i].tid, 0) == 0 || errno != ESRCH) &&
			    !is_kthread(thr[i].tid))
				busy = thr[i].tid;
		if (!busy)
			return 0;
		usleep(10000);
		if (n == 199)
			return busy;
	}
	return 0;
}

static int wait_pidfd(int pfd, int ms)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int r;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/*
 * Execute one image; returns 0 for "ran and exited 42", 1 for anything else
 * that is fine, -1 for a problem (HANG, UNKILLABLE, UNEXPECTED).
 */
static int run_image(const unsigned char *buf, size_t size, const char *what, long iter,
		     int kms)
{
	char path[4096], name[64];
	int p[2], ret = 1, forks = 0;

	snprintf(path, sizeof(path), "%s/fz.img", dir);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size || fchmod(fd, 0755) || close(fd)) {
		outf(2, "fuzz: cannot write %s: %s\n", path, errname(errno));
		exit(2);
	}
again:
	if (pipe2(p, O_CLOEXEC)) {
		outf(2, "fuzz: pipe: %s\n", errname(errno));
		exit(2);
	}
	pid_t pid = fork();
	if (pid < 0) {
		outf(2, "fuzz: fork: %s\n", errname(errno));
		exit(2);
	}
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		int e;
		if (is_seed_tid((uint32_t)getpid())) {
			/* PIDs wrapped onto a TID the image restores: refork */
			e = -10000;
			(void)!write(p[1], &e, sizeof(e));
			_exit(125);
		}
		setpgid(0, 0);
		setrlimit(RLIMIT_CORE, &rl);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		if (opt_uid >= 0 && (setgroups(0, NULL) || setresgid((gid_t)opt_uid, (gid_t)opt_uid, (gid_t)opt_uid) ||
				     setresuid((uid_t)opt_uid, (uid_t)opt_uid, (uid_t)opt_uid))) {
			e = -errno;
			(void)!write(p[1], &e, sizeof(e));
			_exit(126);
		}
		char *argv[] = { path, NULL }, *envp[] = { NULL };
		execve(path, argv, envp);
		e = errno;
		(void)!write(p[1], &e, sizeof(e));
		_exit(127);
	}
	close(p[1]);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pp = { .fd = p[0], .events = POLLIN };
	int e = 0, got = 0, killed = 0;
	int r = poll(&pp, 1, 10000);
	if (r > 0)
		got = (int)read(p[0], &e, sizeof(e));
	close(p[0]);
	if (got == (int)sizeof(e) && e == -10000 && forks++ < 100) {
		int st;

		if (pfd >= 0)
			close(pfd);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		goto again;
	}
	last_errno = got == (int)sizeof(e) && e > 0 ? e : 0;
	if (r == 0) {
		count("HANG");
		outf(1, "fuzz: HANG (execve did not finish in 10 s) iter=%ld %s\n", iter, what);
		ret = -1;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	} else if (got == (int)sizeof(e)) {
		if (e < 0) {
			outf(2, "fuzz: child cannot switch to uid %d: %s\n", opt_uid, errname(-e));
			exit(2);
		}
		snprintf(name, sizeof(name), "execfail %s", errname(e));
		count(name);
		if (!errno_ok(e)) {
			count("UNEXPECTED");
			outf(1, "fuzz: UNEXPECTED errno %s iter=%ld %s\n", errname(e), iter, what);
			ret = -1;
		}
	} else {
		/* Past the point of no return: let it run for kill_ms. */
		if (pfd < 0 || !wait_pidfd(pfd, kms)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = 1;
			count("ran timeout(killed)");
		}
	}
	if (pfd >= 0 && !wait_pidfd(pfd, 10000)) {
		count("UNKILLABLE");
		outf(1, "fuzz: UNKILLABLE child %d iter=%ld %s\n", (int)pid, iter, what);
		ret = -1;
	}
	int st;
	if (ret >= 0 || pfd < 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (got != (int)sizeof(e) && r > 0 && !killed) {
			if (WIFEXITED(st)) {
				snprintf(name, sizeof(name), "ran exit=%d", WEXITSTATUS(st));
				if (WEXITSTATUS(st) == 42)
					ret = 0;
			} else if (sigabbrev_np(WTERMSIG(st))) {
				snprintf(name, sizeof(name), "ran sig=%s", sigabbrev_np(WTERMSIG(st)));
			} else {	/* a real-time signal: by number */
				snprintf(name, sizeof(name), "ran sig=%d", WTERMSIG(st));
			}
			count(name);
		}
	}
	if (pfd >= 0)
		close(pfd);
	/* Orphans of a restored child (we are their subreaper). */
	kill(-pid, SIGKILL);
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	uint32_t busy;
	if (nthr && got != (int)sizeof(e) && ret >= 0 && (busy = seed_tid_busy())) {
		count("TIDBUSY");
		outf(1, "fuzz: TIDBUSY: TID %u still in use 2 s after the restored child %d was reaped iter=%ld %s\n",
		     busy, (int)pid, iter, what);
		ret = -1;
	}
	if (opt_verbose)
		outf(1, "fuzz: iter=%ld %s -> %s\n", iter, what,
		     got == (int)sizeof(e) ? errname(e) : ret == 0 ? "alive" : "ran");
	if (ret < 0) {
		char keep[4200];
		snprintf(keep, sizeof(keep), "%s/bad-%ld.img", dir, iter);
		rename(path, keep);
		bad_total++;
	}
	return ret;
}

int main(int argc, char **argv)
{
	long n = 1000, only = -1;
	double tmax = 0;
	uint64_t seedval = 1;
	const char *outfile = NULL;
	int c, ctl_errno = 0;

	while ((c = getopt(argc, argv, "n:t:s:i:o:u:d:k:x:Sv")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 't': tmax = atof(optarg); break;
		case 's': seedval = strtoull(optarg, NULL, 0); break;
		case 'i': only = atol(optarg); break;
		case 'o': outfile = optarg; break;
		case 'u': opt_uid = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'k': kill_ms = atoi(optarg); break;
		case 'v': opt_verbose = 1; break;
		case 'S': opt_notrunc = 1; break;
		case 'x':
			for (int e = 1; e < 4096 && !ctl_errno; e++)
				if (strerrorname_np(e) && !strcmp(strerrorname_np(e), optarg))
					ctl_errno = e;
			if (!ctl_errno) {
				outf(2, "fuzz: -x: unknown errno name %s\n", optarg);
				return 64;
			}
			break;
		default:
			outf(2, "usage: fuzz [-n N] [-t SECS] [-s SEED] [-i I [-o FILE]] [-u UID] [-d DIR] [-k MS] [-x ENAME] [-S] [-v] SEEDIMG\n");
			return 64;
		}
	}
	if (optind + 1 != argc) {
		outf(2, "fuzz: need exactly one seed image\n");
		return 64;
	}
	int fd = open(argv[optind], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		outf(2, "fuzz: %s: %s\n", argv[optind], errname(errno));
		return 2;
	}
	seed_size = (size_t)st.st_size;
	seed = malloc(seed_size + 1);
	unsigned char *buf = malloc(seed_size + 1);
	if (!seed || !buf || read(fd, seed, seed_size) != (ssize_t)seed_size) {
		outf(2, "fuzz: cannot read the seed\n");
		return 2;
	}
	close(fd);
	parse_seed();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);

	char log[512];
	int cls;
	if (only >= 0) {
		rng = seedval ^ ((uint64_t)only * 0xd1342543de82ef95ull);
		size_t size = make_variant(only, buf, log, sizeof(log), &cls);
		outf(1, "fuzz: iter=%ld %s size=%zu\n", only, log, size);
		if (outfile) {
			int o = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0755);
			if (o < 0 || write(o, buf, size) != (ssize_t)size || close(o))
				return 2;
			return 0;
		}
		opt_verbose = 1;
		return run_image(buf, size, log, only, kill_ms) < 0;
	}

	outf(1, "fuzz: seed_bytes=%zu header_region=%zu fields=%d boundaries=%d target=%ld time_limit=%.0fs\n",
	     seed_size, hdr_end, nfields, nbounds, n, tmax);
	char tl[MAXTHR * 12 + 16];
	int tn = snprintf(tl, sizeof(tl), "main %u", main_pid);
	for (int k = 0; k < nthr; k++)
		tn += snprintf(tl + tn, sizeof(tl) - (size_t)tn, " %u", thr[k].tid);
	outf(1, "fuzz: seed threads=%d (tids %s) sigqueue=%u timers=%u v2_fields=%d control=%s\n",
	     nthr + 1, tl, nr_sigq, nr_timers, ntfields,
	     ctl_errno ? errname(ctl_errno) : "exit 42");
	long controls = 0, control_bad = 0, per_cls[4] = { 0 };
	double t0 = now_s();
	long i;
	for (i = 0; i < n; i++) {
		if (tmax > 0 && now_s() - t0 > tmax)
			break;
		if (i % 500 == 0) {
			controls++;
			in_control = 1;
			int cr = run_image(seed, seed_size, "control", -1,
					   kill_ms > 5000 ? kill_ms : 5000);
			in_control = 0;
			if (ctl_errno ? last_errno != ctl_errno || cr < 0 : cr != 0) {
				control_bad++;
				outf(1, "fuzz: CONTROL FAILED before iteration %ld: the intact seed did not %s%s%s\n",
				     i, ctl_errno ? "fail with " : "exit 42",
				     ctl_errno ? errname(ctl_errno) : "",
				     last_errno ? " (execve failed)" : "");
				if (last_errno)
					outf(1, "fuzz: control execve: %s\n", errname(last_errno));
			}
		}
		rng = seedval ^ ((uint64_t)i * 0xd1342543de82ef95ull);
		size_t size = make_variant(i, buf, log, sizeof(log), &cls);
		per_cls[cls]++;
		int rr = run_image(buf, size, log, i, kill_ms);
		int sc;
		if (cls == 3 && sscanf(log, "sem%d", &sc) == 1 && sc >= 0 && sc < 21 + NTHREADSEM) {
			if (last_errno)
				sem_fail[sc]++;
			else if (rr == 0)
				sem_ok[sc]++;
			else
				sem_ran[sc]++;
		}
	}
	double el = now_s() - t0;
	outf(1, "fuzz: target=%ld executed=%ld elapsed_ms=%.0f rate=%.1f/s%s\n", n, i, el * 1000,
	     el > 0 ? i / el : 0.0, i < n ? " (stopped by the time limit)" : "");
	outf(1, "fuzz: variants trunc=%ld mut=%ld field=%ld sem=%ld controls=%ld control_failures=%ld\n",
	     per_cls[0], per_cls[1], per_cls[2], per_cls[3], controls, control_bad);
	for (int k = 0; k < noutc; k++)
		if (outc[k].n)
			outf(1, "fuzz: outcome %s: %ld\n", outc[k].name, outc[k].n);
	for (int k = 21; nthr && k < 21 + NTHREADSEM; k++)
		outf(1, "fuzz: thread lie sem%d: execfail=%ld ran=%ld exit42=%ld\n", k,
		     sem_fail[k], sem_ran[k], sem_ok[k]);
	int ok = !bad_total && !control_bad;
	outf(1, "fuzz: verdict %s (problems=%ld)\n", ok ? "ok" : "BAD", bad_total);
	return ok ? 0 : 1;
}
