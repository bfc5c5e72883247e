/*
 * fpu ITERATIONS: iterate chaotic logistic maps in SSE2 doubles (scalar and
 * vector_size(16)), x87 long double and, when the CPU has it, AVX2 256-bit
 * vectors, with a non-default rounding mode (so MXCSR and the x87 control
 * word matter too).  Chaos turns any lost bit of register state into a
 * completely different result.  Prints "start" then "result <hex words>".
 */
#define _GNU_SOURCE
#include <fenv.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

typedef double v2d __attribute__((vector_size(16)));

struct state {
	double d;
	v2d v;
	long double l;
	double avx[4];
};

__attribute__((target("avx2,fma"), noinline))
static void run_avx(long iters, double out[4])
{
	__m256d x = _mm256_set_pd(0.11, 0.22, 0.33, 0.44);
	const __m256d k = _mm256_set_pd(3.91, 3.93, 3.97, 3.99);
	const __m256d one = _mm256_set1_pd(1.0);

	for (long i = 0; i < iters; i++)
		x = _mm256_mul_pd(_mm256_mul_pd(k, x), _mm256_sub_pd(one, x));
	_mm256_storeu_pd(out, x);
}

__attribute__((noinline))
static void run_sse_x87(long iters, struct state *st)
{
	double d = 0.123456789;
	v2d v = { 0.3, 0.7 };
	const v2d kv = { 3.8, 3.95 };
	const v2d ones = { 1.0, 1.0 };
	long double l = 0.5L + 1e-7L;

	for (long i = 0; i < iters; i++) {
		d = 3.9 * d * (1.0 - d);
		v = kv * v * (ones - v);
		l = 3.7L * l * (1.0L - l);
	}
	st->d = d;
	st->v = v;
	st->l = l;
}

static void hex(const void *p, size_t n, char *out)
{
	const unsigned char *b = p;
	for (size_t i = n; i-- > 0;)   /* little endian: print as a number */
		out += sprintf(out, "%02x", b[i]);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 2000000;
	struct state st = { 0 };
	char a[40], b[40], c[40], e[40], f[4][40];
	int have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");

	fesetround(FE_TOWARDZERO);      /* both MXCSR and the x87 control word */
	say("start avx2=%d\n", have_avx2);
	run_sse_x87(iters, &st);
	if (have_avx2)
		run_avx(iters, st.avx);

	hex(&st.d, 8, a);
	hex(&st.v[0], 8, b);
	hex(&st.v[1], 8, c);
	hex(&st.l, 10, e);
	for (int i = 0; i < 4; i++)
		hex(&st.avx[i], 8, f[i]);
	say("result d=%s v=%s,%s l=%s avx=%s,%s,%s,%s\n", a, b, c, e, f[0], f[1], f[2], f[3]);
	return 0;
}
