/*
 * mappings DIR NUSR1: the subject of t_mappings.  Dynamically linked (the
 * harness builds it without -static), so ld.so, libc.so.6 and glibc's rseq
 * registration are part of what gets dumped.
 *
 * Sets up, with a known pattern in each:
 *   shm     MAP_SHARED mapping of DIR/shared.dat (4 pages, written with pat0)
 *   priv    MAP_PRIVATE mapping of the same file, page 1 CoW-modified (0x5a)
 *   sanon   MAP_SHARED|MAP_ANONYMOUS, 3 pages           ("/dev/zero (deleted)")
 *   mfd     memfd "imgcr-test" mapping, 2 pages, fd closed ("/memfd:imgcr-test (deleted)")
 *   guard   4 anon pages, page 0 PROT_NONE
 *   split   4 anon pages, pages 2-3 mprotect'ed PROT_READ
 *   hole    8 anon pages written, pages 2-4 MADV_DONTNEED (read zero)
 *   moved   3 anon pages moved with mremap(MREMAP_FIXED) onto a reservation
 *   signals SIGUSR1 counts; SIGUSR2 (SA_ONSTACK, on a sigaltstack) asks for
 *           the final check; SIGHUP has a handler with flags and a mask;
 *           SIGPIPE ignored; SIGWINCH blocked
 *   task    personality ADDR_NO_RANDOMIZE|WHOLE_SECONDS; robust list, the
 *           set_tid_address pointer and rseq as glibc set them up
 * checks all of it once ("precheck ok", so the checks are known to pass on
 * an untouched process), prints "ready PID", then prints "usr1 N" for every
 * SIGUSR1 counted, sleeping in 20 ms nanosleeps.  On SIGUSR2 it checks
 * everything again, plus: the SIGUSR1 count is NUSR1, the SIGUSR2 handler
 * ran on the alternate stack, a 2000 x 1 KiB recursion works (the stack
 * grows down past its dump-time size); then writes 0xee at offset 2*4096+5
 * of shm and msyncs it.  Prints "check ok" and exits 0, or
 * "check BAD: <what>" and exits 1.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>

#include "common.h"

#define PG 4096UL
#define ALTSZ (64 * 1024UL)
#define DEPTH 2000
#define PERS (ADDR_NO_RANDOMIZE | WHOLE_SECONDS)

static unsigned char *shm, *priv, *sanon, *mfd, *guard, *split, *hole, *moved, *moved_from;
static unsigned char *alt;

static volatile sig_atomic_t usr1, check_req, usr2_on_alt = -1;

/* Task state recorded before the dump, compared after. */
static struct sigaction sa_before[3];
static const int sa_sigs[3] = { SIGUSR1, SIGUSR2, SIGHUP };
static void *robust_head;
static size_t robust_len;
static int *tid_addr;
static int have_tid_addr;
static int pers_before;

static char bad[400];
static int nbad;

static void fail_item(const char *fmt, ...)
{
	size_t l = strlen(bad);
	va_list ap;

	nbad++;
	if (l + 2 >= sizeof(bad))
		return;
	if (l)
		bad[l++] = ' ';
	va_start(ap, fmt);
	vsnprintf(bad + l, sizeof(bad) - l, fmt, ap);
	va_end(ap);
}

static unsigned char pat(unsigned long i, int salt)
{
	return (unsigned char)(i * 7 + 3 + (unsigned long)salt * 31 + (i >> 12));
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_usr2(int sig)
{
	char here;
	stack_t ss;

	(void)sig;
	usr2_on_alt = (unsigned char *)&here >= alt && (unsigned char *)&here < alt + ALTSZ &&
		      !sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK);
	check_req = 1;
}

static void on_hup(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

/* Access probes: a SIGSEGV inside a probe jumps back and reports "no". */
static sigjmp_buf probe_jb;
static volatile sig_atomic_t probing;

static void on_segv(int sig)
{
	if (probing)
		siglongjmp(probe_jb, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int probe(volatile unsigned char *p, int write)
{
	probing = 1;
	if (sigsetjmp(probe_jb, 1)) {
		probing = 0;
		return 0;
	}
	unsigned char v = *p;
	if (write)
		*p = v;
	probing = 0;
	return 1;
}

static void check_bytes(const char *name, const unsigned char *p, unsigned long off,
			unsigned long len, int salt, int fixed)
{
	for (unsigned long i = 0; i < len; i++) {
		unsigned char want = fixed >= 0 ? (unsigned char)fixed : pat(off + i, salt);
		if (p[off + i] != want) {
			fail_item("%s[%#lx]=%#x/want %#x", name, off + i, p[off + i], want);
			return;
		}
	}
}

static unsigned char *map(size_t len, int prot, int flags, int fd)
{
	unsigned char *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		say("mmap: %s\n", errname(errno));
		exit(2);
	}
	return p;
}

static void fill(unsigned char *p, unsigned long len, int salt)
{
	for (unsigned long i = 0; i < len; i++)
		p[i] = pat(i, salt);
}

static struct rseq *rseq_area(void)
{
	if (!__rseq_size)
		return NULL;
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* Field by field: glibc leaves most of the 1024-bit sa_mask undefined. */
static int same_action(const struct sigaction *a, const struct sigaction *b)
{
	if (a->sa_handler != b->sa_handler || a->sa_flags != b->sa_flags ||
	    a->sa_restorer != b->sa_restorer)
		return 0;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s))
			return 0;
	return 1;
}

static void check_task(void)
{
	/* Signal dispositions, blocked mask, alternate stack. */
	for (int i = 0; i < 3; i++) {
		struct sigaction now;

		sigaction(sa_sigs[i], NULL, &now);
		if (!same_action(&now, &sa_before[i]))
			fail_item("sigaction(%d) differs", sa_sigs[i]);
	}
	sigset_t m;
	sigemptyset(&m);
	sigprocmask(SIG_BLOCK, NULL, &m);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&m, s) != (s == SIGWINCH))
			fail_item("blocked mask: signal %d", s);
	stack_t ss;
	if (sigaltstack(NULL, &ss) || ss.ss_sp != alt || ss.ss_size != ALTSZ || ss.ss_flags)
		fail_item("sigaltstack sp=%p size=%zu flags=%d", ss.ss_sp, ss.ss_size, ss.ss_flags);

	/* rseq: still registered exactly as glibc did it (re-registering the
	 * same area with the same length and signature gives EBUSY; any other
	 * registration EINVAL/EPERM, none at all 0).  glibc 2.36 registers
	 * 32 bytes although __rseq_size says 20. */
	struct rseq *rs = rseq_area();
	if (rs) {
		unsigned int len = __rseq_size < 32 ? 32 : __rseq_size;
		long r = syscall(SYS_rseq, rs, len, 0, RSEQ_SIG);
		if (r != -1 || errno != EBUSY)
			fail_item("rseq re-register: %ld %s (want EBUSY)", r, r ? errname(errno) : "");
		int cpu = sched_getcpu();
		if (cpu < 0 || (int)rs->cpu_id != cpu)
			fail_item("sched_getcpu=%d rseq.cpu_id=%d", cpu, (int)rs->cpu_id);
	} else {
		fail_item("rseq not registered by glibc");
	}

	void *head = NULL;
	size_t len = 0;
	if (syscall(SYS_get_robust_list, 0, &head, &len) || head != robust_head || len != robust_len)
		fail_item("robust list %p/%zu, want %p/%zu", head, len, robust_head, robust_len);
	if (have_tid_addr) {
		int *ta = NULL;
		if (prctl(PR_GET_TID_ADDRESS, &ta, 0, 0, 0) || ta != tid_addr)
			fail_item("tid address %p, want %p", (void *)ta, (void *)tid_addr);
	}
	int pers = personality(0xffffffff);
	if (pers != pers_before || (pers & PERS) != PERS)
		fail_item("personality %#x, want %#x", pers, pers_before);
}

static void check_memory(void)
{
	check_bytes("shm", shm, 0, 4 * PG, 0, -1);
	check_bytes("priv0", priv, 0, PG, 0, -1);
	check_bytes("priv1", priv, PG, PG, 0, 0x5a);
	check_bytes("priv2", priv, 2 * PG, 2 * PG, 0, -1);
	check_bytes("sanon", sanon, 0, 3 * PG, 2, -1);
	check_bytes("memfd", mfd, 0, 2 * PG, 3, -1);
	check_bytes("guard", guard, PG, 3 * PG, 4, -1);
	check_bytes("split", split, 0, 4 * PG, 5, -1);
	check_bytes("hole0", hole, 0, 2 * PG, 6, -1);
	check_bytes("hole", hole, 2 * PG, 3 * PG, 0, 0);
	check_bytes("hole5", hole, 5 * PG, 3 * PG, 6, -1);
	check_bytes("moved", moved, 0, 3 * PG, 7, -1);

	/* Protections, probed from inside. */
	if (probe(guard, 0))
		fail_item("guard page readable");
	if (!probe(guard + PG, 1))
		fail_item("page after guard not writable");
	if (!probe(split + PG, 1))
		fail_item("split rw part not writable");
	if (!probe(split + 2 * PG, 0) || probe(split + 3 * PG, 1))
		fail_item("split ro part not read-only");
	if (!probe(shm + 3 * PG, 1) || !probe(sanon, 1) || !probe(mfd + PG, 1))
		fail_item("shared mapping not writable");
	if (probe(moved_from, 0) || probe(moved_from + 2 * PG, 0))
		fail_item("mremap source still mapped");
}

__attribute__((noinline)) static unsigned long deep(int n)
{
	volatile unsigned char buf[1024];

	for (int i = 0; i < 1024; i += 64)
		buf[i] = (unsigned char)(n + i);
	if (n == 0)
		return buf[0];
	unsigned long r = deep(n - 1);
	/* Keep the frame alive across the call: no tail recursion. */
	__asm__ volatile("" : : "r"(buf) : "memory");
	return r + buf[64];
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		outf(2, "usage: mappings DIR NUSR1\n");
		return 64;
	}
	int want_usr1 = atoi(argv[2]);
	char path[512];
	snprintf(path, sizeof(path), "%s/shared.dat", argv[1]);

	/* File-backed mappings. */
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	unsigned char fbuf[4 * PG];
	fill(fbuf, sizeof(fbuf), 0);
	if (fd < 0 || write(fd, fbuf, sizeof(fbuf)) != (ssize_t)sizeof(fbuf)) {
		say("cannot write %s: %s\n", path, errname(errno));
		return 2;
	}
	shm = map(4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	priv = map(4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	close(fd);
	memset(priv + PG, 0x5a, PG);

	/* Shared memory objects. */
	sanon = map(3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	fill(sanon, 3 * PG, 2);
	fd = memfd_create("imgcr-test", 0);
	if (fd < 0 || ftruncate(fd, 2 * PG)) {
		say("memfd: %s\n", errname(errno));
		return 2;
	}
	mfd = map(2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	close(fd);
	fill(mfd, 2 * PG, 3);

	/* Anonymous layouts. */
	guard = map(4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill(guard, 4 * PG, 4);
	mprotect(guard, PG, PROT_NONE);
	split = map(4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill(split, 4 * PG, 5);
	mprotect(split + 2 * PG, 2 * PG, PROT_READ);
	hole = map(8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill(hole, 8 * PG, 6);
	madvise(hole + 2 * PG, 3 * PG, MADV_DONTNEED);
	alt = map(ALTSZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	/* mremap last, so that nothing gets mapped where the source was. */
	unsigned char *dst = map(3 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	moved_from = map(3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill(moved_from, 3 * PG, 7);
	moved = mremap(moved_from, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (moved != dst) {
		say("mremap: %s\n", errname(errno));
		return 2;
	}

	/* Signals. */
	/* SS_ONSTACK as the mode: an old spelling of 0 that Linux stores as
	 * given, so the image carries it and the loader must accept it */
	stack_t ss = { .ss_sp = alt, .ss_size = ALTSZ, .ss_flags = SS_ONSTACK };
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	struct sigaction sh = { .sa_sigaction = on_hup, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigaddset(&sh.sa_mask, SIGINT);
	sigaddset(&sh.sa_mask, SIGTERM);
	sigaction(SIGHUP, &sh, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGSEGV, on_segv);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGWINCH);
	sigprocmask(SIG_BLOCK, &m, NULL);
	if (sigaltstack(&ss, NULL)) {
		say("sigaltstack: %s\n", errname(errno));
		return 2;
	}
	for (int i = 0; i < 3; i++)
		sigaction(sa_sigs[i], NULL, &sa_before[i]);

	/* Task state. */
	if (personality(PER_LINUX | PERS) < 0) {
		say("personality: %s\n", errname(errno));
		return 2;
	}
	pers_before = personality(0xffffffff);
	syscall(SYS_get_robust_list, 0, &robust_head, &robust_len);
	have_tid_addr = !prctl(PR_GET_TID_ADDRESS, &tid_addr, 0, 0, 0);
	if (!have_tid_addr)
		say("note: PR_GET_TID_ADDRESS: %s\n", errname(errno));

	check_memory();
	check_task();
	if (nbad) {
		say("precheck BAD: %s\n", bad);
		return 1;
	}
	say("precheck ok rseq_size=%u robust=%p tid_addr=%p\n", __rseq_size, robust_head,
	    (void *)tid_addr);
	say("ready %d\n", (int)getpid());

	int seen = 0;
	while (!check_req) {
		if (usr1 != seen) {
			seen = usr1;
			say("usr1 %d\n", seen);
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (usr1 != seen)
		say("usr1 %d\n", (int)usr1);

	check_memory();
	check_task();
	if (usr1 != want_usr1)
		fail_item("usr1 count %d, want %d", (int)usr1, want_usr1);
	if (usr2_on_alt != 1)
		fail_item("SIGUSR2 handler not on the alternate stack (%d)", (int)usr2_on_alt);
	unsigned long want = 0;
	for (int n = 1; n <= DEPTH; n++)
		want += (unsigned char)(n + 64);
	unsigned long got = deep(DEPTH);
	if (got != want)
		fail_item("recursion %lu, want %lu", got, want);
	shm[2 * PG + 5] = 0xee;
	if (msync(shm, 4 * PG, MS_SYNC))
		fail_item("msync: %s", errname(errno));

	if (nbad) {
		say("check BAD: %s\n", bad);
		return 1;
	}
	say("check ok pid=%d\n", (int)getpid());
	return 0;
}
