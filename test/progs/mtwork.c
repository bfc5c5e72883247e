/*
 * mtwork [-c] [-s] [-w] NTHREADS STEPS: NTHREADS worker threads (1..64), each
 * with its own deterministic computation kept in SIMD registers, for the
 * thread restore test (t_threads_work).
 *
 * Worker i:
 *   - records gettid(), its TLS block address and thread pointer, names
 *     itself "mtw-i" (pthread_setname_np), sets its own blocked mask
 *     (pthread_sigmask, want_mask(i)), its own sigaltstack (size and
 *     address differ per thread), rounding mode (MXCSR and x87 control
 *     word), timer slack and parent-death signal, and fills a TLS pattern;
 *   - with -c, first computes the chain below in plain C (the model of
 *     the asm); prints "asm i";
 *   - runs STEPS steps of a xorshift-like chain on 64-bit lanes held in
 *     xmm0 (SSE2, 2 lanes) or ymm0 (AVX2, 4 lanes, when the CPU has it),
 *     in asm blocks of BLOCK steps.  During each block, xmm8..xmm15
 *     (ymm8..ymm15 with AVX2) hold a per-thread pattern ("sentinels") the
 *     loop never touches; the block ends by comparing them with the
 *     pattern in memory.  A stop in the middle of a block therefore has
 *     the chain state and the sentinels only in registers: a restore that
 *     loses or mixes up a thread's xstate changes the result or counts a
 *     sentinel mismatch;
 *   - then checks (after a restore, too): gettid() is the recorded TID,
 *     TLS address, thread pointer and pattern are intact, the blocked
 *     mask, sigaltstack (and that a SIGURG to itself runs its handler on
 *     that stack, in this thread), name, rounding mode, timer slack and
 *     pdeath signal are its own, no sentinel mismatch; prints
 *     "done i tid T mode M result HEX" or "done i tid T BAD: reasons".
 *   - with -w, waits for main's release before returning.
 *
 * main blocks SIGUSR1 and SIGWINCH (all workers block SIGUSR1 too, on top
 * of their own masks), prints "thread i tid T" per worker and "ready PID
 * MODE" once all are set up, joins them (with -w: after a SIGUSR1,
 * taken with sigwaitinfo, releases them; the test first looks at the
 * threads from outside) and prints "mtwork ok pid=P" (exit 0) or
 * "mtwork BAD" (exit 1).  main's own check: gettid() == getpid(), comm
 * "mtwork", its mask.
 *
 * -s: SSE2 even when the CPU has AVX2.
 * -c: each worker also computes the chain in plain C (before the asm, so a
 * stop after its "asm i" line finds it in the asm) and reports "model BAD"
 * if the asm result differs: after a restore, the computation must still
 * end with what the model computed before the dump.
 */
#define _GNU_SOURCE
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "common.h"

#define MAXT 64
#define BLOCK 4096UL
#define ALT_BASE (32 * 1024UL)

struct tls_block {
	uint64_t idx;
	uint64_t pat[64];
	uint64_t state[4] __attribute__((aligned(32)));
	uint64_t add[4] __attribute__((aligned(32)));
	uint64_t sent[8][4] __attribute__((aligned(32)));
	uint64_t simd_bad;
	uint64_t blocks;
};

static __thread struct tls_block tls __attribute__((aligned(64)));
static __thread volatile int urg_seen, urg_on_alt, urg_tid;

static int nthreads, use_avx2, model, wait_release;
static unsigned long steps;
static int tids[MAXT];
static void *tls_addr[MAXT], *tp_addr[MAXT];
static unsigned char *alt[MAXT];
static volatile int started, release;
static const int rmodes[4] = { FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO };

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t alt_size(int i) { return ALT_BASE + (size_t)i * 4096; }
static int slack(int i) { return 50000 + i * 1000; }
static int pdeath(int i) { return i & 1 ? SIGURG : SIGCHLD; }

/* The worker's own blocked mask (never SIGURG, always SIGUSR1). */
static void want_mask(int i, sigset_t *m)
{
	sigemptyset(m);
	sigaddset(m, SIGUSR1);
	sigaddset(m, SIGRTMIN + 2 + i % 28);
	if (i & 1)
		sigaddset(m, SIGUSR2);
	if (i & 2)
		sigaddset(m, SIGHUP);
	if (i & 4)
		sigaddset(m, SIGPIPE);
	if (i & 8)
		sigaddset(m, SIGALRM);
}

static void main_mask(sigset_t *m)
{
	sigemptyset(m);
	sigaddset(m, SIGUSR1);
	sigaddset(m, SIGWINCH);
}

/* SSE2: 2 lanes in xmm0, constants in xmm1, sentinels xmm8..15. */
static uint64_t run_sse2(struct tls_block *t, unsigned long n)
{
	uint64_t bad;

	__asm__ volatile(
		"movdqa (%[st]), %%xmm0\n\t"
		"movdqa (%[ad]), %%xmm1\n\t"
		"movdqa 0(%[se]), %%xmm8\n\t"
		"movdqa 32(%[se]), %%xmm9\n\t"
		"movdqa 64(%[se]), %%xmm10\n\t"
		"movdqa 96(%[se]), %%xmm11\n\t"
		"movdqa 128(%[se]), %%xmm12\n\t"
		"movdqa 160(%[se]), %%xmm13\n\t"
		"movdqa 192(%[se]), %%xmm14\n\t"
		"movdqa 224(%[se]), %%xmm15\n\t"
		"1:\n\t"
		"movdqa %%xmm0, %%xmm2\n\t"
		"psllq $13, %%xmm2\n\t"
		"pxor %%xmm2, %%xmm0\n\t"
		"movdqa %%xmm0, %%xmm2\n\t"
		"psrlq $7, %%xmm2\n\t"
		"pxor %%xmm2, %%xmm0\n\t"
		"movdqa %%xmm0, %%xmm2\n\t"
		"psllq $17, %%xmm2\n\t"
		"pxor %%xmm2, %%xmm0\n\t"
		"pshufd $0x4e, %%xmm0, %%xmm2\n\t"	/* y[l] = x[(l+1)%2] */
		"psrlq $3, %%xmm2\n\t"
		"pxor %%xmm2, %%xmm0\n\t"
		"paddq %%xmm1, %%xmm0\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"movdqa %%xmm0, (%[st])\n\t"
		"xor %[bad], %[bad]\n\t"
#define CHK_SSE(reg, off) \
		"movdqa " #off "(%[se]), %%xmm2\n\t" \
		"pcmpeqb %%" #reg ", %%xmm2\n\t" \
		"pmovmskb %%xmm2, %%eax\n\t" \
		"cmp $0xffff, %%eax\n\t" \
		"setne %%al\n\t" \
		"movzbl %%al, %%eax\n\t" \
		"add %%rax, %[bad]\n\t"
		CHK_SSE(xmm8, 0) CHK_SSE(xmm9, 32) CHK_SSE(xmm10, 64) CHK_SSE(xmm11, 96)
		CHK_SSE(xmm12, 128) CHK_SSE(xmm13, 160) CHK_SSE(xmm14, 192) CHK_SSE(xmm15, 224)
		: [n] "+r"(n), [bad] "=&r"(bad)
		: [st] "r"(t->state), [ad] "r"(t->add), [se] "r"(t->sent)
		: "rax", "xmm0", "xmm1", "xmm2", "xmm8", "xmm9", "xmm10", "xmm11",
		  "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
	return bad;
}

/* AVX2: 4 lanes in ymm0, constants in ymm1, sentinels ymm8..15. */
static uint64_t run_avx2(struct tls_block *t, unsigned long n)
{
	uint64_t bad;

	__asm__ volatile(
		"vmovdqa (%[st]), %%ymm0\n\t"
		"vmovdqa (%[ad]), %%ymm1\n\t"
		"vmovdqa 0(%[se]), %%ymm8\n\t"
		"vmovdqa 32(%[se]), %%ymm9\n\t"
		"vmovdqa 64(%[se]), %%ymm10\n\t"
		"vmovdqa 96(%[se]), %%ymm11\n\t"
		"vmovdqa 128(%[se]), %%ymm12\n\t"
		"vmovdqa 160(%[se]), %%ymm13\n\t"
		"vmovdqa 192(%[se]), %%ymm14\n\t"
		"vmovdqa 224(%[se]), %%ymm15\n\t"
		"1:\n\t"
		"vpsllq $13, %%ymm0, %%ymm2\n\t"
		"vpxor %%ymm2, %%ymm0, %%ymm0\n\t"
		"vpsrlq $7, %%ymm0, %%ymm2\n\t"
		"vpxor %%ymm2, %%ymm0, %%ymm0\n\t"
		"vpsllq $17, %%ymm0, %%ymm2\n\t"
		"vpxor %%ymm2, %%ymm0, %%ymm0\n\t"
		"vpermq $0x39, %%ymm0, %%ymm2\n\t"	/* y[l] = x[(l+1)%4] */
		"vpsrlq $3, %%ymm2, %%ymm2\n\t"
		"vpxor %%ymm2, %%ymm0, %%ymm0\n\t"
		"vpaddq %%ymm1, %%ymm0, %%ymm0\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"vmovdqa %%ymm0, (%[st])\n\t"
		"xor %[bad], %[bad]\n\t"
#define CHK_AVX(reg, off) \
		"vpcmpeqb " #off "(%[se]), %%" #reg ", %%ymm2\n\t" \
		"vpmovmskb %%ymm2, %%eax\n\t" \
		"cmp $0xffffffff, %%eax\n\t" \
		"setne %%al\n\t" \
		"movzbl %%al, %%eax\n\t" \
		"add %%rax, %[bad]\n\t"
		CHK_AVX(ymm8, 0) CHK_AVX(ymm9, 32) CHK_AVX(ymm10, 64) CHK_AVX(ymm11, 96)
		CHK_AVX(ymm12, 128) CHK_AVX(ymm13, 160) CHK_AVX(ymm14, 192) CHK_AVX(ymm15, 224)
		"vzeroupper\n\t"
		: [n] "+r"(n), [bad] "=&r"(bad)
		: [st] "r"(t->state), [ad] "r"(t->add), [se] "r"(t->sent)
		: "rax", "xmm0", "xmm1", "xmm2", "xmm8", "xmm9", "xmm10", "xmm11",
		  "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
	return bad;
}

/* The plain C model of both asm loops (L = 2 or 4 lanes). */
static void run_model(uint64_t x[4], const uint64_t add[4], int lanes, unsigned long n)
{
	for (unsigned long s = 0; s < n; s++) {
		uint64_t y[4];

		for (int l = 0; l < lanes; l++) {
			x[l] ^= x[l] << 13;
			x[l] ^= x[l] >> 7;
			x[l] ^= x[l] << 17;
		}
		for (int l = 0; l < lanes; l++)
			y[l] = x[(l + 1) % lanes] >> 3;
		for (int l = 0; l < lanes; l++)
			x[l] = (x[l] ^ y[l]) + add[l];
	}
}

static void on_urg(int sig)
{
	char here;
	stack_t ss;
	int i = (int)tls.idx;

	(void)sig;
	urg_on_alt = i >= 0 && i < nthreads && (unsigned char *)&here >= alt[i] &&
		     (unsigned char *)&here < alt[i] + alt_size(i) &&
		     !sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK);
	urg_tid = (int)syscall(SYS_gettid);
	urg_seen++;
}

static uint64_t fold(const uint64_t *x, int lanes)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int l = 0; l < lanes; l++)
		h = (h ^ x[l]) * 0x100000001b3ull;
	return h;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg, lanes = use_avx2 ? 4 : 2;
	uint64_t seed = 0x1234567ull * (uint64_t)(i + 1), x0[4];
	char name[16], bad[400], *b = bad, *be = bad + sizeof(bad);
	sigset_t m, cur;
	stack_t ss;

	tls.idx = (uint64_t)i;
	tids[i] = (int)syscall(SYS_gettid);
	tls_addr[i] = &tls;
	tp_addr[i] = __builtin_thread_pointer();
	for (int k = 0; k < 64; k++)
		tls.pat[k] = splitmix(&seed);
	for (int l = 0; l < 4; l++) {
		tls.state[l] = x0[l] = splitmix(&seed) | 1;
		tls.add[l] = splitmix(&seed);
	}
	for (int r = 0; r < 8; r++)
		for (int l = 0; l < 4; l++)
			tls.sent[r][l] = splitmix(&seed);

	snprintf(name, sizeof(name), "mtw-%d", i);
	pthread_setname_np(pthread_self(), name);
	want_mask(i, &m);
	pthread_sigmask(SIG_SETMASK, &m, NULL);
	alt[i] = mmap(NULL, alt_size(i), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss = (stack_t){ .ss_sp = alt[i], .ss_size = alt_size(i) };
	if (alt[i] == MAP_FAILED || sigaltstack(&ss, NULL)) {
		say("worker %d: sigaltstack setup failed\n", i);
		exit(2);
	}
	fesetround(rmodes[i % 4]);
	prctl(PR_SET_TIMERSLACK, (unsigned long)slack(i), 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, (unsigned long)pdeath(i), 0, 0, 0);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);

	/* The model first, so that a stop after "asm i" lands in the asm. */
	if (model)
		run_model(x0, tls.add, lanes, steps);
	say("asm %d\n", i);
	for (unsigned long done = 0; done < steps; done += BLOCK) {
		unsigned long n = steps - done < BLOCK ? steps - done : BLOCK;

		tls.simd_bad += use_avx2 ? run_avx2(&tls, n) : run_sse2(&tls, n);
		tls.blocks++;
	}

	/* Everything below also holds in an uninterrupted run. */
	int tid = (int)syscall(SYS_gettid);
	if (tid != tids[i])
		b = addfmt(b, be, " gettid=%d/want %d", tid, tids[i]);
	if ((void *)&tls != tls_addr[i] || __builtin_thread_pointer() != tp_addr[i])
		b = addfmt(b, be, " tls at %p tp %p/want %p %p", (void *)&tls,
			 __builtin_thread_pointer(), tls_addr[i], tp_addr[i]);
	seed = 0x1234567ull * (uint64_t)(i + 1);
	for (int k = 0; k < 64; k++)
		if (tls.pat[k] != splitmix(&seed)) {
			b = addfmt(b, be, " tls.pat[%d]", k);
			break;
		}
	if (tls.idx != (uint64_t)i)
		b = addfmt(b, be, " tls.idx=%lu", (unsigned long)tls.idx);
	if (tls.simd_bad)
		b = addfmt(b, be, " simd sentinel mismatches=%lu", (unsigned long)tls.simd_bad);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&cur, s) != sigismember(&m, s))
			b = addfmt(b, be, " mask sig %d=%d", s, sigismember(&cur, s));
	if (sigaltstack(NULL, &ss) || ss.ss_sp != alt[i] || ss.ss_size != alt_size(i) || ss.ss_flags)
		b = addfmt(b, be, " sigaltstack %p/%zu/%d want %p/%zu", ss.ss_sp, ss.ss_size,
			 ss.ss_flags, (void *)alt[i], alt_size(i));
	pthread_kill(pthread_self(), SIGURG);
	if (urg_seen != 1 || !urg_on_alt || urg_tid != tids[i])
		b = addfmt(b, be, " SIGURG seen=%d on_alt=%d tid=%d", urg_seen, urg_on_alt, urg_tid);
	char got[16] = "";
	pthread_getname_np(pthread_self(), got, sizeof(got));
	if (strcmp(got, name))
		b = addfmt(b, be, " name '%s'", got);
	if (fegetround() != rmodes[i % 4])
		b = addfmt(b, be, " x87 rounding %#x", fegetround());
	unsigned int csr;
	__asm__ volatile("stmxcsr %0" : "=m"(csr));
	if ((int)(csr & 0x6000) != rmodes[i % 4] << 3)
		b = addfmt(b, be, " mxcsr %#x", csr);
	int sl = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), pd = -1;
	if (sl != slack(i))
		b = addfmt(b, be, " timerslack %d", sl);
	if (prctl(PR_GET_PDEATHSIG, (unsigned long)&pd, 0, 0, 0) || pd != pdeath(i))
		b = addfmt(b, be, " pdeathsig %d", pd);
	if (tls.blocks != (steps + BLOCK - 1) / BLOCK)
		b = addfmt(b, be, " blocks %lu", (unsigned long)tls.blocks);
	if (model) {
		if (memcmp(x0, tls.state, (size_t)lanes * 8))
			b = addfmt(b, be, " model BAD %016lx/asm %016lx", (unsigned long)fold(x0, lanes),
				 (unsigned long)fold(tls.state, lanes));
	}
	if (b != bad)
		say("done %d tid %d BAD:%s\n", i, tid, bad);
	else
		say("done %d tid %d mode %s result %016lx\n", i, tid, use_avx2 ? "avx2" : "sse2",
		    (unsigned long)fold(tls.state, lanes));
	while (wait_release && !release) {
		/* futex wait on the flag: main wakes all of us. */
		syscall(SYS_futex, &release, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	return (void *)(long)(b != bad);
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	sigset_t m, cur;
	int opt, nbad = 0, sse = 0;
	char comm[16] = "";

	while ((opt = getopt(argc, argv, "csw")) != -1) {
		if (opt == 'c')
			model = 1;
		else if (opt == 's')
			sse = 1;
		else if (opt == 'w')
			wait_release = 1;
		else
			return 64;
	}
	if (argc - optind != 2) {
		outf(2, "usage: mtwork [-c] [-s] [-w] NTHREADS STEPS\n");
		return 64;
	}
	nthreads = atoi(argv[optind]);
	steps = strtoul(argv[optind + 1], NULL, 0);
	if (nthreads < 1 || nthreads > MAXT || !steps)
		return 64;
	use_avx2 = !sse && __builtin_cpu_supports("avx2");

	struct sigaction sa = { .sa_handler = on_urg, .sa_flags = SA_ONSTACK };
	sigaction(SIGURG, &sa, NULL);
	main_mask(&m);
	pthread_sigmask(SIG_SETMASK, &m, NULL);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i)) {
			say("pthread_create failed\n");
			return 2;
		}
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < nthreads)
		usleep(1000);
	for (int i = 0; i < nthreads; i++)
		say("thread %d tid %d\n", i, tids[i]);
	say("ready %d %s\n", (int)getpid(), use_avx2 ? "avx2" : "sse2");

	if (wait_release) {
		sigset_t u;
		sigemptyset(&u);
		sigaddset(&u, SIGUSR1);
		while (sigwaitinfo(&u, NULL) != SIGUSR1)
			;
		release = 1;
		syscall(SYS_futex, &release, FUTEX_WAKE_PRIVATE, MAXT, NULL, NULL, 0);
	}
	for (int i = 0; i < nthreads; i++) {
		void *r;
		pthread_join(th[i], &r);
		nbad += r != NULL;
	}
	if (syscall(SYS_gettid) != getpid()) {
		say("main: gettid %ld != getpid %d\n", syscall(SYS_gettid), (int)getpid());
		nbad++;
	}
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	if (strcmp(comm, "mtwork")) {
		say("main: comm '%s'\n", comm);
		nbad++;
	}
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&cur, s) != sigismember(&m, s)) {
			say("main: mask sig %d\n", s);
			nbad++;
		}
	if (nbad)
		say("mtwork BAD %d\n", nbad);
	else
		say("mtwork ok pid=%d\n", (int)getpid());
	return nbad != 0;
}
