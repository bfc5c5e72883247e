/*
 * vdsoclock N: call the vdso through function pointers taken once at start,
 * N times (~100 ms apart), and compare every result with the system call.
 *
 * At start it finds __vdso_clock_gettime, __vdso_gettimeofday, __vdso_time
 * and __vdso_getcpu in the vdso's dynamic symbol table (the ELF image at
 * getauxval(AT_SYSINFO_EHDR)) and keeps a pointer to glibc's clock_gettime
 * (which itself calls the vdso through a pointer glibc cached at startup).
 * The pointers are never looked up again: after a restore on another kernel
 * build they still point into the vdso of the dumping kernel, at the same
 * address, which is what a restore across kernel builds must keep working.
 *
 * Each iteration checks, for CLOCK_MONOTONIC and CLOCK_REALTIME, that the
 * vdso's (and glibc's) value lies between two system call readings taken
 * just before and after it (with TOL_NS slack), and that CLOCK_MONOTONIC
 * never goes backwards from one iteration to the next unless the kernel's
 * own clock did (the image restored on another boot: reported as "rebased");
 * gettimeofday likewise in microseconds, time() within 1 s of the system
 * call, and getcpu's cpu equal to the system call's.  It prints
 * "v I ok ..." per iteration and "vdsoclock ok" at the end, or "vdsoclock
 * BAD ..." with the first mismatch (exit status 1).
 *
 * Static like the other test programs: the image maps only this program,
 * and glibc's static startup still caches vdso pointers (GLRO) that the
 * glibc pointer exercises.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "common.h"

#define TOL_NS (50LL * 1000 * 1000)

typedef int (*cgt_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef long (*getcpu_fn)(unsigned int *, unsigned int *, void *);

static uintptr_t vdso_base;

/* vdso_sym NAME: the address of NAME in the vdso's .dynsym, or 0. */
static void *vdso_sym(const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)vdso_base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(vdso_base + eh->e_phoff);
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;
	const Elf32_Word *hash = NULL, *gnu = NULL;
	uintptr_t load = 0;
	int have_load = 0;
	size_t nsym = 0;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			load = vdso_base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(vdso_base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: sym = (const Elf64_Sym *)(load + dyn->d_un.d_ptr); break;
		case DT_STRTAB: str = (const char *)(load + dyn->d_un.d_ptr); break;
		case DT_HASH: hash = (const Elf32_Word *)(load + dyn->d_un.d_ptr); break;
		case DT_GNU_HASH: gnu = (const Elf32_Word *)(load + dyn->d_un.d_ptr); break;
		}
	}
	if (!sym || !str)
		return NULL;
	if (hash) {
		nsym = hash[1];         /* nchain = number of symbols */
	} else if (gnu) {
		/* The highest symbol index in a bucket, then its chain's end. */
		uint32_t nbucket = gnu[0], symoff = gnu[1], bloom = gnu[2];
		const uint32_t *bucket = gnu + 4 + bloom * 2;  /* 64-bit bloom words */
		const uint32_t *chain = bucket + nbucket;
		uint32_t max = 0;

		for (uint32_t b = 0; b < nbucket; b++)
			if (bucket[b] > max)
				max = bucket[b];
		if (max >= symoff)
			while (!(chain[max - symoff] & 1))
				max++;
		nsym = max + 1;
	}
	for (size_t i = 0; i < nsym; i++) {
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF)
			continue;
		if (!strcmp(str + sym[i].st_name, name))
			return (void *)(load + sym[i].st_value);
	}
	return NULL;
}

static long long ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int sys_cgt(clockid_t c, struct timespec *t)
{
	return (int)syscall(SYS_clock_gettime, c, t);
}

static int iter;

__attribute__((format(printf, 1, 2), noreturn))
static void bad(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("vdsoclock BAD at %d: %s\n", iter, buf);
	exit(1);
}

/* check_clock: syscall, FN, syscall; FN's value must lie in between. */
static long long check_clock(const char *what, cgt_fn fn, clockid_t c)
{
	struct timespec a, v, b;

	if (sys_cgt(c, &a) || fn(c, &v) || sys_cgt(c, &b))
		bad("%s(%d) failed: %s", what, (int)c, strerror(errno));
	if (ns(&v) < ns(&a) - TOL_NS || ns(&v) > ns(&b) + TOL_NS)
		bad("%s(%d) = %lld ns, system call %lld..%lld ns", what, (int)c,
		    ns(&v), ns(&a), ns(&b));
	return ns(&v);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	cgt_fn v_cgt, g_cgt = clock_gettime;
	gtod_fn v_gtod;
	time_fn v_time;
	getcpu_fn v_getcpu;
	long long prev_mono = 0, prev_sys = 0;

	vdso_base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!vdso_base || n < 1) {
		say("vdsoclock BAD at 0: no vdso (AT_SYSINFO_EHDR) or bad N\n");
		return 2;
	}
	v_cgt = (cgt_fn)vdso_sym("__vdso_clock_gettime");
	v_gtod = (gtod_fn)vdso_sym("__vdso_gettimeofday");
	v_time = (time_fn)vdso_sym("__vdso_time");
	v_getcpu = (getcpu_fn)vdso_sym("__vdso_getcpu");
	if (!v_cgt || !v_gtod || !v_time || !v_getcpu) {
		say("vdsoclock BAD at 0: vdso symbol missing (cgt %p gtod %p time %p getcpu %p)\n",
		    (void *)v_cgt, (void *)v_gtod, (void *)v_time, (void *)v_getcpu);
		return 2;
	}
	say("vdso 0x%" PRIxPTR " clock_gettime +0x%" PRIxPTR " gettimeofday +0x%" PRIxPTR
	    " time +0x%" PRIxPTR " getcpu +0x%" PRIxPTR "\n", vdso_base,
	    (uintptr_t)v_cgt - vdso_base, (uintptr_t)v_gtod - vdso_base,
	    (uintptr_t)v_time - vdso_base, (uintptr_t)v_getcpu - vdso_base);

	for (iter = 1; iter <= n; iter++) {
		struct timespec sa;
		struct timeval ta, tv, tb;
		unsigned int vcpu = ~0u, vnode = ~0u, scpu = ~0u, snode = ~0u;
		time_t st, vt;
		long long mono, sys_now;
		const char *note = "";

		if (sys_cgt(CLOCK_MONOTONIC, &sa))
			bad("clock_gettime system call: %s", strerror(errno));
		sys_now = ns(&sa);
		mono = check_clock("vdso clock_gettime", v_cgt, CLOCK_MONOTONIC);
		if (mono < prev_mono) {
			/* Only if the kernel's own clock went back too. */
			if (sys_now >= prev_sys)
				bad("CLOCK_MONOTONIC went back from %lld to %lld ns", prev_mono, mono);
			note = " rebased";
		}
		prev_mono = mono;
		prev_sys = sys_now;
		if (check_clock("glibc clock_gettime", g_cgt, CLOCK_MONOTONIC) < mono)
			bad("glibc CLOCK_MONOTONIC earlier than the vdso's just before");
		check_clock("vdso clock_gettime", v_cgt, CLOCK_REALTIME);
		check_clock("glibc clock_gettime", g_cgt, CLOCK_REALTIME);

		if (syscall(SYS_gettimeofday, &ta, NULL) || v_gtod(&tv, NULL) ||
		    syscall(SYS_gettimeofday, &tb, NULL))
			bad("gettimeofday failed: %s", strerror(errno));
		long long a_us = ta.tv_sec * 1000000LL + ta.tv_usec;
		long long v_us = tv.tv_sec * 1000000LL + tv.tv_usec;
		long long b_us = tb.tv_sec * 1000000LL + tb.tv_usec;
		if (v_us < a_us - TOL_NS / 1000 || v_us > b_us + TOL_NS / 1000)
			bad("vdso gettimeofday = %lld us, system call %lld..%lld us",
			    v_us, a_us, b_us);

		st = (time_t)syscall(SYS_time, NULL);
		vt = v_time(NULL);
		if (vt < st - 1 || vt > st + 1)
			bad("vdso time = %lld, system call %lld", (long long)vt, (long long)st);

		/* A migration in between can differ once: three tries. */
		for (int try = 0; try < 3; try++) {
			if (syscall(SYS_getcpu, &scpu, &snode, NULL) ||
			    v_getcpu(&vcpu, &vnode, NULL))
				bad("getcpu failed: %s", strerror(errno));
			if (vcpu == scpu && vnode == snode)
				break;
		}
		if (vcpu != scpu || vnode != snode)
			bad("vdso getcpu = cpu %u node %u, system call cpu %u node %u",
			    vcpu, vnode, scpu, snode);

		say("v %d ok mono %lld.%03lld real %lld cpu %u%s\n", iter,
		    mono / 1000000000LL, mono / 1000000 % 1000, (long long)vt, vcpu, note);
		/* A restored sleep may return EINTR early: just go on. */
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	say("vdsoclock ok\n");
	return 0;
}
