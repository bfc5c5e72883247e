// SPDX-License-Identifier: GPL-2.0
/* imgcr show IMAGE [--json]: what an image holds, for people or scripts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "attrs.h"
#include "commands.h"
#include "files.h"
#include "image.h"
#include "log.h"
#include "ns.h"
#include "seccomp.h"
#include "tree.h"

static const char *const reg_names[IMGCR_NR_REGS] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

static const char *kind_name(unsigned int kind)
{
	switch (kind) {
	case IMGCR_VMA_ANON: return "anon";
	case IMGCR_VMA_FILE: return "file";
	case IMGCR_VMA_VDSO: return "vdso";
	case IMGCR_VMA_VVAR: return "vvar";
	case IMGCR_VMA_SYSVSHM: return "sysvshm";
	}
	return "?";
}

static void prot_str(unsigned int prot, char out[4])
{
	out[0] = prot & IMGCR_PROT_READ ? 'r' : '-';
	out[1] = prot & IMGCR_PROT_WRITE ? 'w' : '-';
	out[2] = prot & IMGCR_PROT_EXEC ? 'x' : '-';
	out[3] = 0;
}

/* imgcr_vma.flags, by name (the advice ones as madvise() calls them). */
static const struct {
	uint32_t bit;
	const char *name;
} vma_flag_names[] = {
	{ IMGCR_VMA_GROWSDOWN, "growsdown" },
	{ IMGCR_VMA_SHARED, "shared" },
	{ IMGCR_VMA_ACCOUNT, "account" },
	{ IMGCR_VMA_NORESERVE, "noreserve" },
	{ IMGCR_VMA_DONTFORK, "dontfork" },
	{ IMGCR_VMA_WIPEONFORK, "wipeonfork" },
	{ IMGCR_VMA_HUGEPAGE, "hugepage" },
	{ IMGCR_VMA_NOHUGEPAGE, "nohugepage" },
	{ IMGCR_VMA_DONTDUMP, "dontdump" },
	{ IMGCR_VMA_DROPPABLE, "droppable" },
	{ IMGCR_VMA_LOCKED, "locked" },
	{ IMGCR_VMA_LOCKONFAULT, "lockonfault" },
	{ IMGCR_VMA_SEQ_READ, "sequential" },
	{ IMGCR_VMA_RAND_READ, "random" },
	{ IMGCR_VMA_MERGEABLE, "mergeable" },
	{ IMGCR_VMA_SHM_MAYWRITE, "maywrite" },
	{ IMGCR_VMA_RDONLY_FILE, "rdonlyfile" },
	{ IMGCR_VMA_HUGETLB, "hugetlb" },
};

/* Print each flag of @flags as " name" (@json: "name" items), unknown ones in hex. */
static void print_vma_flags(uint32_t flags, int json)
{
	const char *sep = json ? "" : " ";
	size_t i;

	for (i = 0; i < sizeof(vma_flag_names) / sizeof(vma_flag_names[0]); i++) {
		if (!(flags & vma_flag_names[i].bit))
			continue;
		flags &= ~vma_flag_names[i].bit;
		printf(json ? "%s\"%s\"" : "%s%s", sep, vma_flag_names[i].name);
		if (json)
			sep = ",";
	}
	if (flags)
		printf(json ? "%s\"%#x\"" : "%s%#x", sep, flags);
}

/* Bytes of memory the PT_LOAD segments carry inside [start, end). */
static uint64_t dumped_in(const struct image *img, uint64_t start, uint64_t end)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < img->eh->e_phnum; i++) {
		const Elf64_Phdr *ph = &img->ph[i];

		if (ph->p_type == PT_LOAD && ph->p_vaddr >= start &&
		    ph->p_vaddr < end)
			sum += ph->p_filesz;
	}
	return sum;
}

/* The length of the valid UTF-8 sequence at @s, or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n, i;
	unsigned int c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * A JSON string for any bytes (file names are bytes, not text): valid
 * UTF-8 is kept, control characters, quotes and backslashes are escaped,
 * and each byte that is not part of valid UTF-8 becomes the lone
 * surrogate U+DC80 + (byte - 0x80) ("\udcXX"), Python's "surrogateescape":
 * os.fsencode() of the decoded string gives the name's bytes back.
 */
void json_str(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	putchar('"');
	while (*s) {
		n = utf8_len(s);
		if (!n) {
			printf("\\u%04x", 0xdc00 | *s);
			s++;
		} else if (*s == '"' || *s == '\\') {
			printf("\\%c", *s);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			printf("\\u%04x", *s);
			s++;
		} else {
			fwrite(s, 1, n, stdout);
			s += n;
		}
	}
	putchar('"');
}

void fd_json_path(const char *path)
{
	if (!path)
		return;
	printf(",\"path\":");
	json_str(path);
}

static void sig_name(int sig, char *out, size_t size)
{
	const char *n = sig > 0 && sig < 32 ? sigabbrev_np(sig) : NULL;

	if (n)
		snprintf(out, size, "SIG%s", n);
	else
		snprintf(out, size, "signal %d", sig);
}

/* signo, errno, code and sender of a saved siginfo_t */
struct sq_info {
	int32_t signo, err, code, pid;
	uint32_t uid;
};

static void sq_decode(const struct imgcr_sigqueue *q, struct sq_info *si)
{
	memcpy(&si->signo, q->info, 4);
	memcpy(&si->err, q->info + 4, 4);
	memcpy(&si->code, q->info + 8, 4);
	memcpy(&si->pid, q->info + 16, 4);
	memcpy(&si->uid, q->info + 20, 4);
}

/* The comm, blocked mask and flags of thread @i (0: the main thread). */
static void thread_fields(const struct image *img, unsigned int i, char comm[17],
			  uint64_t *blocked, uint32_t *flags, uint32_t *tid)
{
	const struct imgcr_task *t = img->task;

	memset(comm, 0, 17);
	if (!i) {
		memcpy(comm, t->comm, 16);
		*blocked = t->blocked;
		*flags = t->flags;
		*tid = img->threads[0].prstatus.pid;
	} else {
		memcpy(comm, img->threads[i].thread.comm, 16);
		*blocked = img->threads[i].thread.blocked;
		*flags = img->threads[i].thread.flags;
		*tid = img->threads[i].thread.tid;
	}
}

/* What a signal sent before it runs again does to a restarted call. */
static const char *restart_how(uint32_t flags)
{
	if (flags & IMGCR_TASK_RESTART_SYS)
		return ", or EINTR after a handler without SA_RESTART (ERESTARTSYS)";
	if (flags & IMGCR_TASK_RESTART_NOHAND)
		return ", or EINTR after a handler (ERESTARTNOHAND)";
	if (flags & IMGCR_TASK_RESTART_NOINTR)
		return " even after a handler (ERESTARTNOINTR)";
	if (flags & IMGCR_TASK_RESTART_BLOCK)
		return " as a sleep, poll or futex wait for the time it had left, or EINTR after a handler (ERESTART_RESTARTBLOCK)";
	return "";
}

static const char *clock_name(int clock)
{
	switch (clock) {
	case 0: return "realtime";
	case 1: return "monotonic";
	case 7: return "boottime";
	case 11: return "tai";
	}
	return "?";
}

/* pending signals queued for @tid (0: the process), one line */
static void show_pending(const struct image *img, uint32_t tid, const char *indent)
{
	char name[32];
	struct sq_info si;
	unsigned int i, n = 0;

	for (i = 0; img->sigqueue && i < img->proc->nr_sigqueue; i++) {
		if (img->sigqueue[i].tid != tid)
			continue;
		sq_decode(&img->sigqueue[i], &si);
		sig_name(si.signo, name, sizeof(name));
		printf("%s%s (code %d", n++ ? ", " : indent, name, si.code);
		if (si.code <= 0)	/* SI_USER, SI_QUEUE, SI_TKILL...: a sender */
			printf(" from pid %d uid %u", si.pid, si.uid);
		putchar(')');
	}
	if (n)
		putchar('\n');
}

static void show_threads_text(const struct image *img)
{
	const struct imgcr_proc *pr = img->proc;
	static const char *const itimer_names[3] = { "real", "virtual", "prof" };
	char comm[17], name[32];
	uint64_t blocked;
	uint32_t flags, tid;
	unsigned int i;

	printf("threads:  %u\n", img->nr_threads);
	for (i = 0; i < img->nr_threads; i++) {
		const uint64_t *r = (const uint64_t *)img->threads[i].prstatus.regs;

		thread_fields(img, i, comm, &blocked, &flags, &tid);
		printf("  tid %u%s \"%s\": rip %#" PRIx64 " rsp %#" PRIx64 " blocked %#" PRIx64,
		       tid, i ? "" : " (main)", comm, r[IMGCR_REG_RIP], r[IMGCR_REG_RSP], blocked);
		if (flags & IMGCR_TASK_RESTARTED_SYSCALL)
			printf(", syscall restarted%s", restart_how(flags));
		if (flags & IMGCR_TASK_INTERRUPTED_SYSCALL)
			printf(", sleep interrupted (EINTR)");
		if (flags & IMGCR_TASK_TEMP_SIGMASK)
			printf(", in a call with a temporary signal mask");
		putchar('\n');
		if (img->threads[i].has_creds) {
			const struct imgcr_creds *c = &img->threads[i].creds;

			printf("    creds: uid %u/%u/%u/%u gid %u/%u/%u/%u, cap eff %#" PRIx64
			       " prm %#" PRIx64 " inh %#" PRIx64 " bnd %#" PRIx64 " amb %#" PRIx64
			       ", securebits %#x%s\n", c->uid, c->euid, c->suid, c->fsuid, c->gid,
			       c->egid, c->sgid, c->fsgid, (uint64_t)c->cap_effective,
			       (uint64_t)c->cap_permitted, (uint64_t)c->cap_inheritable,
			       (uint64_t)c->cap_bset, (uint64_t)c->cap_ambient, c->securebits,
			       c->flags & IMGCR_CREDS_NO_NEW_PRIVS ? ", no_new_privs" : "");
		}
		show_pending(img, tid, "    pending: ");
	}
	show_pending(img, 0, "pending:  process-wide: ");
	printf("process:  flags %#x%s%s%s%s%s%s%s%s%s%s%s%s%s, pdeath signal %u, timer slack %" PRIu64
	       " ns (default %" PRIu64 ")\n", pr->flags,
	       pr->flags & IMGCR_PROC_CHILD_SUBREAPER ? " child-subreaper" : "",
	       pr->flags & IMGCR_PROC_THP_DISABLE ? " thp-disable" : "",
	       pr->flags & IMGCR_PROC_THP_EXCEPT_ADVISED ? " thp-except-advised" : "",
	       pr->flags & IMGCR_PROC_NOT_DUMPABLE ? " not-dumpable" : "",
	       pr->flags & IMGCR_PROC_MEMBARRIER_PRIVATE ? " membarrier-private" : "",
	       pr->flags & IMGCR_PROC_MEMBARRIER_SYNC_CORE ? " membarrier-sync-core" : "",
	       pr->flags & IMGCR_PROC_MEMBARRIER_RSEQ ? " membarrier-rseq" : "",
	       pr->flags & IMGCR_PROC_MEMBARRIER_GLOBAL ? " membarrier-global" : "",
	       pr->flags & IMGCR_PROC_MCL_FUTURE ? " mlockall-future" : "",
	       pr->flags & IMGCR_PROC_MCL_ONFAULT ? " mlockall-onfault" : "",
	       pr->flags & IMGCR_PROC_OWN_NS ? " own-ns" : "",
	       pr->flags & IMGCR_PROC_OWN_PIDNS ? " own-pidns" : "",
	       pr->flags & IMGCR_PROC_OWN_USERNS ? " own-userns" : "",
	       pr->pdeath_signal, (uint64_t)pr->timer_slack_ns,
	       (uint64_t)pr->default_timer_slack_ns);
	printf("itimers: ");
	for (i = 0; i < 3; i++) {
		const struct imgcr_itimer *it = &pr->itimer[i];

		if (!it->value_ns)
			printf(" %s off", itimer_names[i]);
		else
			printf(" %s in %" PRIu64 " ns every %" PRIu64 " ns", itimer_names[i],
			       (uint64_t)it->value_ns, (uint64_t)it->interval_ns);
		putchar(i < 2 ? ',' : '\n');
	}
	printf("timers:   %u\n", pr->nr_timers);
	for (i = 0; img->timers && i < pr->nr_timers; i++) {
		const struct imgcr_posix_timer *tm = &img->timers[i];

		sig_name(tm->signo, name, sizeof(name));
		printf("  id %d clock %s: ", tm->id, clock_name(tm->clock));
		if (tm->notify == IMGCR_SIGEV_NONE)
			printf("no signal");
		else if (tm->notify == (IMGCR_SIGEV_THREAD_ID | IMGCR_SIGEV_SIGNAL))
			printf("%s to tid %u", name, tm->tid);
		else
			printf("%s (notify %d)", name, tm->notify);
		printf(", value %#" PRIx64 ", ", (uint64_t)tm->value);
		if (tm->value_ns)
			printf("next in %" PRIu64 " ns every %" PRIu64 " ns",
			       (uint64_t)tm->value_ns, (uint64_t)tm->interval_ns);
		else
			printf("disarmed");
		printf(", overrun %d\n", tm->overrun);
	}
}

static void show_threads_json(const struct image *img)
{
	const struct imgcr_proc *pr = img->proc;
	char comm[17];
	struct sq_info si;
	uint64_t blocked;
	uint32_t flags, tid;
	unsigned int i;

	printf(",\"threads\":[");
	for (i = 0; i < img->nr_threads; i++) {
		const uint64_t *r = (const uint64_t *)img->threads[i].prstatus.regs;

		thread_fields(img, i, comm, &blocked, &flags, &tid);
		printf("%s{\"tid\":%u,\"main\":%s,\"comm\":", i ? "," : "", tid,
		       i ? "false" : "true");
		json_str(comm);
		printf(",\"rip\":%" PRIu64 ",\"rsp\":%" PRIu64 ",\"blocked\":%" PRIu64
		       ",\"flags\":%u,\"xstate\":%zu", r[IMGCR_REG_RIP], r[IMGCR_REG_RSP],
		       blocked, flags, img->threads[i].xstate_len);
		if (img->threads[i].has_creds) {
			const struct imgcr_creds *c = &img->threads[i].creds;

			printf(",\"creds\":{\"uid\":[%u,%u,%u,%u],\"gid\":[%u,%u,%u,%u],"
			       "\"cap_effective\":%" PRIu64 ",\"cap_permitted\":%" PRIu64
			       ",\"cap_inheritable\":%" PRIu64 ",\"cap_bset\":%" PRIu64
			       ",\"cap_ambient\":%" PRIu64 ",\"securebits\":%u,\"no_new_privs\":%s}",
			       c->uid, c->euid, c->suid, c->fsuid, c->gid, c->egid, c->sgid, c->fsgid,
			       (uint64_t)c->cap_effective, (uint64_t)c->cap_permitted,
			       (uint64_t)c->cap_inheritable, (uint64_t)c->cap_bset,
			       (uint64_t)c->cap_ambient, c->securebits,
			       c->flags & IMGCR_CREDS_NO_NEW_PRIVS ? "true" : "false");
		}
		putchar('}');
	}
	printf("],\"proc\":{\"flags\":%u,\"pdeath_signal\":%u,\"timer_slack_ns\":%" PRIu64
	       ",\"default_timer_slack_ns\":%" PRIu64 ",\"itimers\":[", pr->flags,
	       pr->pdeath_signal, (uint64_t)pr->timer_slack_ns,
	       (uint64_t)pr->default_timer_slack_ns);
	for (i = 0; i < 3; i++)
		printf("%s{\"value_ns\":%" PRIu64 ",\"interval_ns\":%" PRIu64 "}", i ? "," : "",
		       (uint64_t)pr->itimer[i].value_ns, (uint64_t)pr->itimer[i].interval_ns);
	printf("]},\"sigqueue\":[");
	for (i = 0; img->sigqueue && i < pr->nr_sigqueue; i++) {
		sq_decode(&img->sigqueue[i], &si);
		printf("%s{\"tid\":%u,\"signo\":%d,\"errno\":%d,\"code\":%d,\"pid\":%d,\"uid\":%u}",
		       i ? "," : "", img->sigqueue[i].tid, si.signo, si.err, si.code, si.pid,
		       si.uid);
	}
	printf("],\"timers\":[");
	for (i = 0; img->timers && i < pr->nr_timers; i++) {
		const struct imgcr_posix_timer *tm = &img->timers[i];

		printf("%s{\"id\":%d,\"clock\":%d,\"notify\":%d,\"signo\":%d,\"value\":%" PRIu64
		       ",\"tid\":%u,\"overrun\":%d,\"value_ns\":%" PRIu64 ",\"interval_ns\":%" PRIu64 "}",
		       i ? "," : "", tm->id, tm->clock, tm->notify, tm->signo, (uint64_t)tm->value,
		       tm->tid, tm->overrun, (uint64_t)tm->value_ns, (uint64_t)tm->interval_ns);
	}
	putchar(']');
}

static void show_text(const struct image *img)
{
	const struct imgcr_task *t = img->task;
	char prot[4], path[IMGCR_MAX_PATH];
	struct imgcr_file f;
	unsigned int i;

	printf("image:    %s (%zu bytes, format %u)\n", img->path, img->size, t->version);
	printf("task:     pid %u, comm \"%.16s\", personality %#x\n", t->pid, t->comm,
	       t->personality);
	if (t->flags & IMGCR_TASK_RESTARTED_SYSCALL)
		printf("syscall:  stopped in system call %" PRIu64 ", restarted on resume%s\n",
		       (uint64_t)img->prstatus->regs[IMGCR_REG_RAX], restart_how(t->flags));
	if (t->flags & IMGCR_TASK_INTERRUPTED_SYSCALL)
		printf("syscall:  stopped in a restartable sleep, returns EINTR on resume\n");
	for (i = 0; i < IMGCR_NR_REGS; i++)
		printf("%s%-8s %#018" PRIx64, i % 3 ? "  " : "\n  ", reg_names[i],
		       (uint64_t)img->prstatus->regs[i]);
	printf("\nxstate:   %zu bytes, features %#" PRIx64 "\n", img->xstate_len,
	       (uint64_t)t->xfeatures);
	printf("memory:   code %#" PRIx64 "-%#" PRIx64 " data %#" PRIx64 "-%#" PRIx64
	       " brk %#" PRIx64 "-%#" PRIx64 " vdso %#" PRIx64 "\n",
	       (uint64_t)t->start_code, (uint64_t)t->end_code, (uint64_t)t->start_data,
	       (uint64_t)t->end_data, (uint64_t)t->start_brk, (uint64_t)t->brk,
	       (uint64_t)t->vdso);
	printf("signals:  blocked %#" PRIx64 ", handlers:", (uint64_t)t->blocked);
	for (i = 0; img->sigact && i < IMGCR_NSIG; i++)
		if (img->sigact[i].handler > 1)
			printf(" %u", i + 1);
	printf("\nrseq:     %#" PRIx64 " (len %u)\n", (uint64_t)t->rseq, t->rseq_len);
	show_threads_text(img);
	printf("mappings: %u\n", t->nr_vmas);
	for (i = 0; img->vmas && i < t->nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		prot_str(v->prot, prot);
		printf("  %012" PRIx64 "-%012" PRIx64 " %s %-4s %8" PRIu64 "K dumped",
		       (uint64_t)v->start, (uint64_t)v->end, prot, kind_name(v->kind),
		       dumped_in(img, v->start, v->end) >> 10);
		if (v->kind == IMGCR_VMA_FILE && !image_file(img, v->file, &f, path, sizeof(path)))
			printf("  %s @%#" PRIx64, path, (uint64_t)v->pgoff << 12);
		if (v->kind == IMGCR_VMA_SYSVSHM)
			printf("  shmid %u @%#" PRIx64, v->file, (uint64_t)v->pgoff << 12);
		print_vma_flags(v->flags, 0);
		putchar('\n');
	}
}

static void show_json(const struct image *img)
{
	const struct imgcr_task *t = img->task;
	char prot[4], path[IMGCR_MAX_PATH];
	struct imgcr_file f;
	unsigned int i;

	printf("{\"format\":%d,\"image\":", IMGCR_JSON_FORMAT);
	json_str(img->path);
	printf(",\"size\":%zu,\"version\":%u,\"pid\":%u,\"comm\":", img->size,
	       t->version, t->pid);
	char comm[17] = { 0 };

	memcpy(comm, t->comm, 16);
	json_str(comm);
	printf(",\"flags\":%u,\"regs\":{", t->flags);
	for (i = 0; i < IMGCR_NR_REGS; i++)
		printf("%s\"%s\":%" PRIu64, i ? "," : "", reg_names[i],
		       (uint64_t)img->prstatus->regs[i]);
	printf("},\"xfeatures\":%" PRIu64 ",\"brk\":%" PRIu64 ",\"vdso\":%" PRIu64
	       ",\"rseq\":%" PRIu64 ",\"blocked\":%" PRIu64 ",\"mappings\":[",
	       (uint64_t)t->xfeatures, (uint64_t)t->brk, (uint64_t)t->vdso,
	       (uint64_t)t->rseq, (uint64_t)t->blocked);
	for (i = 0; img->vmas && i < t->nr_vmas; i++) {
		const struct imgcr_vma *v = &img->vmas[i];

		prot_str(v->prot, prot);
		printf("%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64
		       ",\"prot\":\"%s\",\"kind\":\"%s\",\"dumped\":%" PRIu64,
		       i ? "," : "", (uint64_t)v->start, (uint64_t)v->end, prot,
		       kind_name(v->kind), dumped_in(img, v->start, v->end));
		if (v->kind == IMGCR_VMA_FILE && !image_file(img, v->file, &f, path, sizeof(path))) {
			printf(",\"path\":");
			json_str(path);
			printf(",\"offset\":%" PRIu64, (uint64_t)v->pgoff << 12);
		}
		if (v->kind == IMGCR_VMA_SYSVSHM)
			printf(",\"shmid\":%u,\"offset\":%" PRIu64, v->file,
			       (uint64_t)v->pgoff << 12);
		printf(",\"flags\":[");
		print_vma_flags(v->flags, 1);
		printf("]}");
	}
	putchar(']');
	show_threads_json(img);
	printf("}\n");
}

static void fd_desc(const struct tree *t, const struct tree_fd *d, char *out, size_t size)
{
	const struct tree_file *f = &t->files[d->file];
	const struct fd_kind *k = fd_kind_of(f->kind);
	const char *mode = (f->flags & O_ACCMODE) == O_RDONLY ? "r" :
			   (f->flags & O_ACCMODE) == O_WRONLY ? "w" : "rw";

	if (k && k->rec_show)
		k->rec_show(t, d->file, mode, out, size);
	else
		snprintf(out, size, "%s %s", tree_kind_names[f->kind], mode);
}

/*
 * The records shown after the tasks, in this order (kept from before each
 * kind showed its own): each by its owner's show hook (record.h).
 */
static const char *const show_records[] = { "pipe", "tty", "ghost", "fstat", "lock" };

static void show_kinds(const struct tree *t, int json)
{
	const struct tree_record *rt;
	size_t i;

	for (i = 0; i < sizeof(show_records) / sizeof(show_records[0]); i++) {
		rt = tree_record_find(show_records[i]);
		if (rt && rt->show)
			rt->show(t, json);
	}
}

static int show_tree_text(const struct tree *t, const char *dir)
{
	char desc[4200];
	int i, j, ret = 0;

	printf("tree:     %s, root pid %d, %d tasks, %d open files, %d pipes/FIFOs\n",
	       dir, t->root, t->ntasks, t->nfiles, t->npipes);
	ns_show_text(t);
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		printf("task %d \"%s\": ppid %d pgid %d sid %d\n", k->pid, k->comm, k->ppid,
		       k->pgid, k->sid);
		printf("  uid %u/%u/%u/%u gid %u/%u/%u/%u groups", k->uid[0], k->uid[1],
		       k->uid[2], k->uid[3], k->gid[0], k->gid[1], k->gid[2], k->gid[3]);
		for (j = 0; j < k->ngroups; j++)
			printf(" %u", k->groups[j]);
		printf("%s\n  cwd %s root %s umask %03o\n", k->ngroups ? "" : " -", k->cwd,
		       k->root, k->umask);
		attrs_show_text(k);
		if (k->zombie && (k->exit_status & 0x7f))
			printf("  zombie: killed by signal %d%s\n", k->exit_status & 0x7f,
			       k->exit_status & 0x80 ? " (core dumped)" : "");
		else if (k->zombie)
			printf("  zombie: exited with code %d\n", (k->exit_status >> 8) & 0xff);
		if (k->stopped == SIGSTOP)
			printf("  stopped (restored stopped; SIGCONT continues it)\n");
		else if (k->stopped)
			printf("  stopped by SIG%s (restored stopped; SIGCONT continues it)\n",
			       sigabbrev_np(k->stopped) ? sigabbrev_np(k->stopped) : "?");
		printf("  threads %d: %d (main)", k->nthreads + 1, k->pid);
		for (j = 0; j < k->nthreads; j++)
			printf(" %d", k->threads[j]);
		putchar('\n');
		seccomp_path(desc, sizeof(desc), dir, k->pid);
		if (!k->zombie && seccomp_show_file(desc, 0, 1))
			ret = 1;
		if (k->vpid || k->vthreads) {
			printf("  in its PID namespace: %d (main)", k->vpid ? k->vpid : k->pid);
			for (j = 0; j < k->nthreads; j++)
				printf(" %d", k->vthreads ? k->vthreads[j] : k->threads[j]);
			putchar('\n');
		}
		/* a group or session no task of the tree leads, numbered in the tree's PID namespace */
		if (k->vpgid)
			printf("  its process group in its PID namespace: %d (kept)\n", k->vpgid);
		if (k->vsid)
			printf("  its session in its PID namespace: %d (kept)\n", k->vsid);
		for (j = 0; j < k->nfds; j++) {
			const struct tree_fd *d = &k->fds[j];

			fd_desc(t, d, desc, sizeof(desc));
			printf("  fd %d: %s flags 0%o pos %lld%s (file %d)\n", d->fd, desc,
			       t->files[d->file].flags, t->files[d->file].pos,
			       d->cloexec ? " cloexec" : "", d->file);
		}
	}
	show_kinds(t, 0);
	return ret;
}

static int show_tree_json(const struct tree *t, const char *dir)
{
	char path[4200];
	int i, j, ret = 0;

	printf("{\"format\":%d,\"root\":%d", IMGCR_JSON_FORMAT, t->root);
	ns_show_json(t);
	printf(",\"tasks\":[");
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		printf("%s{\"pid\":%d,\"ppid\":%d,\"pgid\":%d,\"sid\":%d,\"comm\":", i ? "," : "",
		       k->pid, k->ppid, k->pgid, k->sid);
		json_str(k->comm);
		printf(",\"uid\":[%u,%u,%u,%u],\"gid\":[%u,%u,%u,%u],\"groups\":[", k->uid[0],
		       k->uid[1], k->uid[2], k->uid[3], k->gid[0], k->gid[1], k->gid[2], k->gid[3]);
		for (j = 0; j < k->ngroups; j++)
			printf("%s%u", j ? "," : "", k->groups[j]);
		printf("],\"threads\":[");
		for (j = 0; j < k->nthreads; j++)
			printf("%s%d", j ? "," : "", k->threads[j]);
		printf("]");
		if (k->vpid || k->vthreads) {
			printf(",\"vpid\":%d,\"vthreads\":[", k->vpid ? k->vpid : k->pid);
			for (j = 0; j < k->nthreads; j++)
				printf("%s%d", j ? "," : "", k->vthreads ? k->vthreads[j] : k->threads[j]);
			printf("]");
		}
		if (k->vpgid)
			printf(",\"vpgid\":%d", k->vpgid);
		if (k->vsid)
			printf(",\"vsid\":%d", k->vsid);
		printf(",\"stopped\":%s", k->stopped ? "true" : "false");
		if (k->zombie)
			printf(",\"exit_status\":%d", k->exit_status);
		printf(",\"umask\":%u,\"cwd\":", k->umask);
		json_str(k->cwd);
		printf(",\"root\":");
		json_str(k->root);
		attrs_show_json(k);
		seccomp_path(path, sizeof(path), dir, k->pid);
		if (!k->zombie && seccomp_show_file(path, 1, 1))
			ret = 1;
		printf(",\"fds\":[");
		for (j = 0; j < k->nfds; j++)
			printf("%s{\"fd\":%d,\"file\":%d,\"cloexec\":%s}", j ? "," : "",
			       k->fds[j].fd, k->fds[j].file, k->fds[j].cloexec ? "true" : "false");
		printf("]}");
	}
	printf("],\"files\":[");
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		const struct fd_kind *fk;

		printf("%s{\"id\":%d,\"kind\":\"%s\",\"flags\":%u,\"pos\":%lld", i ? "," : "",
		       f->id, tree_kind_json(f->kind), f->flags, f->pos);
		fk = fd_kind_of(f->kind);
		if (fk && fk->rec_json)
			fk->rec_json(t, i);
		putchar('}');
	}
	putchar(']');
	show_kinds(t, 1);
	printf("}\n");
	return ret;
}

static int show_tree(const char *dir, int json)
{
	struct tree t;
	int ret;

	if (tree_read(&t, dir))
		return 1;
	if (json)
		ret = show_tree_json(&t, dir);
	else
		ret = show_tree_text(&t, dir);
	tree_free(&t);
	return ret;
}

int cmd_show(int argc, char **argv)
{
	struct stat st;
	struct image img;
	int json = 0, i;
	const char *path = NULL;

	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		LOG_LONG_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	while ((i = getopt_long(argc, argv, ":h" LOG_OPTS, opts, NULL)) != -1) {
		if (i == 'J')
			json = 1;
		else if (i == 'o' || i == 'v') {
			if (log_option(i, optarg) < 0)
				return 2;
		}
		else if (i == 'h')
			return command_help("show");
		else
			return option_error("show", i, argc, argv);
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage_error("show takes one image");
	if (!path)
		return usage_error("show needs an image or a dump directory");
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return show_tree(path, json);
	if (seccomp_is_file(path))
		return seccomp_show_file(path, json, 0) ? 1 : 0;
	if (image_open(&img, path)) {
		image_close(&img);
		return 1;
	}
	if (json)
		show_json(&img);
	else
		show_text(&img);
	image_close(&img);
	return 0;
}
