/*
 * What the socket test programs (sknl, skpkt, sk_kinds, skopts) share: the
 * result lines, the setup's failures, the rounds' signal, hex for the
 * messages.  Each program is one file built static (test/lib-host.sh
 * build_progs): everything here is static, one copy per program.
 */
#ifndef IMGCR_TEST_SKCHECK_H
#define IMGCR_TEST_SKCHECK_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common.h"

/* where the results go (the OUT file); the OK and FAIL lines of the round */
static int out = 1, nok, nfail;
/* SIGUSR1: the next round (after the restore) */
static volatile sig_atomic_t go;

static inline void on_usr1(int s)
{
	(void)s;
	go++;
}

/* a setup step failed: "FAIL setup: WHAT: errno", exit 1 */
static inline __attribute__((noreturn)) void die(const char *what)
{
	outf(out, "FAIL setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "OK NAME", or "FAIL NAME: why" (@fmt; no format attribute: sk_kinds gives "") */
static inline void result(int ok, const char *name, const char *fmt, ...)
{
	char buf[300];
	va_list ap;

	if (ok) {
		nok++;
		outf(out, "OK %s\n", name);
		return;
	}
	nfail++;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	outf(out, "FAIL %s: %s\n", name, buf);
}

/* setsockopt of an int, or die(@what) */
static inline void seti(int fd, int lvl, int opt, int v, const char *what)
{
	if (setsockopt(fd, lvl, opt, &v, sizeof(v)))
		die(what);
}

/* the first @n bytes of @b, at most @max of them, as hex into @o (0-terminated) */
static inline void hexn(char *o, const unsigned char *b, int n, int max)
{
	int i;

	for (i = 0; i < n && i < max; i++)
		sprintf(o + 2 * i, "%02x", b[i]);
	o[2 * i] = 0;
}

#endif
