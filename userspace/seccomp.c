// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp state of a dumped tree.
 *
 * A restore must never run a sandboxed process without its sandbox.  The
 * module records each thread's seccomp mode and filter count in the image
 * (NT_IMGCR_SECCOMP, image format version 3) and binfmt_img restores
 * strict mode itself.  The filter programs are not in the image: while the
 * tree is frozen (every thread in a ptrace stop of ours), imgcr dump reads
 * each thread's chain with ptrace(PTRACE_SECCOMP_GET_FILTER) (the classic
 * BPF the kernel kept, index 0 the oldest) and its flags with
 * PTRACE_SECCOMP_GET_METADATA, and writes them to DIR/seccomp-PID.img
 * (format: struct imgcr_seccomp_file in imgcr.h).  imgcr restore hands
 * that file to the exec of the image ("--imgcr-seccomp=FD"); without it
 * binfmt_img refuses the image, so `./img` alone still never runs a
 * process without its filters.
 *
 * Refused at dump, naming pid and thread: filters installed with
 * SECCOMP_FILTER_FLAG_SPEC_ALLOW where that is visible (spec_allowed()),
 * a filter the kernel cannot hand
 * out (no CAP_SYS_ADMIN in the dumper, an eBPF filter, a kernel without
 * CONFIG_CHECKPOINT_RESTORE), and a filter that can return
 * SECCOMP_RET_USER_NOTIF (its listener, another task's fd, is not
 * restored): one that returns it, or whose action is computed (RET A).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <linux/imgcr.h>

#include "files.h"
#include "log.h"
#include "proc.h"
#include "seccomp.h"

/*
 * SECCOMP_FILTER_FLAG_SPEC_ALLOW.  The kernel keeps no trace of it per
 * filter (PTRACE_SECCOMP_GET_METADATA does not report it), and the loader
 * installs without it.  A filter installed without it has the kernel force
 * the speculation mitigations on the thread (arch_seccomp_spec_mitigate())
 * only where they are in their "seccomp" mode (spec_store_bypass_disable=
 * seccomp, spectre_v2_user=seccomp; the default is prctl since 5.16):
 * elsewhere the flag changes nothing a program can see, and restoring
 * without it is exact.  In that mode a thread under filters whose
 * /proc status does not show the forced mitigation got every filter with
 * SPEC_ALLOW; a restore would force it: refused.
 */
static int spec_seccomp_mode(const char *path, const char *word)
{
	char *text = read_text(path, NULL);
	int r = text && strstr(text, word);

	free(text);
	return r;
}

static const char *spec_allowed(const char *status)
{
	static int ssb = -1, ib = -1;
	const char *v;

	if (ssb < 0) {
		/* "...disabled via prctl and seccomp" */
		ssb = spec_seccomp_mode("/sys/devices/system/cpu/vulnerabilities/spec_store_bypass",
					"seccomp");
		/* sysfs does not tell the user-space IB mode; only the boot option sets it */
		ib = spec_seccomp_mode("/proc/cmdline", "spectre_v2_user=seccomp");
	}
	v = status_field(status, "Speculation_Store_Bypass");
	if (ssb && v && strncmp(v, "thread force mitigated", 22))
		return "Speculation_Store_Bypass";
	v = status_field(status, "SpeculationIndirectBranch");
	if (ib && v && !strncmp(v, "conditional", 11) &&
	    strncmp(v, "conditional force disabled", 26))
		return "SpeculationIndirectBranch";
	return NULL;
}

/* Mode and filter count of thread @tid of @pid from its status; 0 or -1. */
static int thread_seccomp(pid_t pid, pid_t tid, int *mode, long *filters)
{
	char path[64], *text;
	const char *v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d thread %d: cannot read %s", pid, tid, path);
		return -1;
	}
	v = status_field(text, "Seccomp");
	*mode = v ? atoi(v) : 0;
	v = status_field(text, "Seccomp_filters");
	*filters = v ? atol(v) : 0;
	v = *mode == 2 && *filters > 0 ? spec_allowed(text) : NULL;
	if (v) {
		const char *e = status_field(text, v);

		pr_err("pid %d thread %d: its seccomp filters were installed with SECCOMP_FILTER_FLAG_SPEC_ALLOW (the kernel forces the speculation mitigation for seccomp here, and its %s is %.*s), which the kernel does not report per filter: refused (a restore would force the mitigation)",
		       pid, tid, v, (int)strcspn(e, "\n"), e);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

struct sc_buf {
	unsigned char *p;
	size_t len, cap;
};

static int put(struct sc_buf *b, const void *data, size_t len)
{
	if (b->len + len > IMGCR_SECCOMP_MAX_SIZE) {
		errno = EFBIG;
		return -1;
	}
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

/* Can the filter hand a syscall to a user-notification listener? */
static const char *notify_reason(const struct sock_filter *f, long n)
{
	for (long i = 0; i < n; i++) {
		if (f[i].code == (BPF_RET | BPF_A))
			return "its action is computed (BPF_RET|BPF_A), so it may notify a user-space listener, which cannot be restored";
		if (f[i].code == (BPF_RET | BPF_K) &&
		    (f[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
			return "it returns SECCOMP_RET_USER_NOTIF (a user-space listener, which cannot be restored)";
	}
	return NULL;
}

/*
 * Thread @tid's @n filters, oldest first, appended to @b; @vtid the TID
 * the image holds (in the task's own PID namespace), which the loader
 * matches the chain with.
 */
static int dump_chain(pid_t pid, pid_t tid, pid_t vtid, long n, struct sc_buf *b)
{
	struct imgcr_seccomp_chain ch = { .tid = vtid, .nr_filters = n };
	struct sock_filter *f = NULL;
	long i;
	int ret = -1;

	f = malloc(IMGCR_SECCOMP_MAX_INSNS * sizeof(*f));
	if (!f || put(b, &ch, sizeof(ch)))
		goto oom;
	/* index 0 is the oldest (the kernel's get_nth_filter()) */
	for (i = 0; i < n; i++) {
		struct __ptrace_seccomp_metadata md = { .filter_off = i };
		struct imgcr_seccomp_filter fh = { 0 };
		const char *why;
		long len;

		len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);
		if (len > 0 && len <= IMGCR_SECCOMP_MAX_INSNS)
			len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, f);
		if (len <= 0 || len > IMGCR_SECCOMP_MAX_INSNS) {
			int e = errno;

			pr_err("pid %d thread %d: cannot read its seccomp filter %ld of %ld (%s)%s: refused (a restore must not drop the sandbox)",
			       pid, tid, i + 1, n, len > 0 ? "too long" : strerror(e),
			       len > 0 ? "" :
			       e == EACCES ? "; reading seccomp filters needs CAP_SYS_ADMIN (run imgcr dump as root)" :
			       e == EMEDIUMTYPE ? "; an eBPF filter, which the kernel cannot hand out" :
			       e == EINVAL || e == EIO ? "; the kernel cannot hand out seccomp filters (CONFIG_CHECKPOINT_RESTORE)" : "");
			goto out;
		}
		why = notify_reason(f, len);
		if (why) {
			pr_err("pid %d thread %d: seccomp filter %ld of %ld: %s: refused",
			       pid, tid, i + 1, n, why);
			goto out;
		}
		if (ptrace(PTRACE_SECCOMP_GET_METADATA, tid, (void *)sizeof(md), &md) < 0) {
			pr_err("pid %d thread %d: cannot read the flags of its seccomp filter %ld (%s): refused",
			       pid, tid, i + 1, strerror(errno));
			goto out;
		}
		if (md.flags & ~(uint64_t)SECCOMP_FILTER_FLAG_LOG) {
			pr_err("pid %d thread %d: seccomp filter %ld has flags %#llx that cannot be restored: refused",
			       pid, tid, i + 1, (unsigned long long)md.flags);
			goto out;
		}
		fh.flags = md.flags & SECCOMP_FILTER_FLAG_LOG ? IMGCR_SECCOMP_FILTER_LOG : 0;
		fh.len = len;
		if (put(b, &fh, sizeof(fh)) || put(b, f, len * sizeof(*f)))
			goto oom;
	}
	/* one more than the count: the chain is longer than its status said */
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)n, NULL) >= 0) {
		pr_err("pid %d thread %d: its seccomp filters changed while frozen: refused", pid, tid);
		goto out;
	}
	ret = 0;
	goto out;
oom:
	pr_perror("pid %d thread %d: seccomp filters", pid, tid);
out:
	free(f);
	return ret;
}

static int write_file(const char *path, const struct sc_buf *b)
{
	int fd = img_create(path, 0600);
	size_t off = 0;

	if (fd < 0) {
		pr_perror("cannot create %s", path);
		return -1;
	}
	while (off < b->len) {
		ssize_t w = write(fd, b->p + off, b->len - off);

		if (w <= 0) {
			pr_perror("cannot write %s", path);
			close(fd);
			return -1;
		}
		off += w;
	}
	if (close(fd)) {
		pr_perror("cannot write %s", path);
		return -1;
	}
	return 0;
}

void seccomp_path(char *buf, size_t size, const char *dir, pid_t pid)
{
	snprintf(buf, size, "%s%sseccomp-%d.img", dir ? dir : "", dir ? "/" : "", pid);
}

int seccomp_dump(const struct tree_task *k, const char *dir)
{
	struct imgcr_seccomp_file h = { .magic = IMGCR_SECCOMP_MAGIC,
					.version = IMGCR_SECCOMP_VERSION };
	struct sc_buf b = { 0 };
	char path[4200];
	int i, mode, ret = -1, any = 0;
	long filters;

	seccomp_path(path, sizeof(path), dir, k->pid);
	if (k->zombie)
		return 0;
	h.nr_threads = 1 + k->nthreads;
	if (put(&b, &h, sizeof(h)))
		goto oom;
	for (i = -1; i < k->nthreads; i++) {
		pid_t tid = i < 0 ? k->pid : k->threads[i];
		/* the TID the image holds: in the task's own PID namespace (ns.c) */
		pid_t vtid = i < 0 ? (k->vpid ? k->vpid : tid) :
				     (k->vthreads ? k->vthreads[i] : tid);

		if (thread_seccomp(k->pid, tid, &mode, &filters))
			goto out;
		if (mode <= 1 || filters <= 0) {
			/* none, or strict mode (restored by binfmt_img) */
			struct imgcr_seccomp_chain ch = { .tid = vtid };

			if (put(&b, &ch, sizeof(ch)))
				goto oom;
			continue;
		}
		any = 1;
		if (dump_chain(k->pid, tid, vtid, filters, &b))
			goto out;
	}
	if (!any) {
		/* no stale file of an earlier dump in the same directory */
		if (unlink(path) && errno != ENOENT) {
			pr_perror("cannot remove %s", path);
			goto out;
		}
		ret = 0;
		goto out;
	}
	ret = write_file(path, &b);
	goto out;
oom:
	pr_err("pid %d: its seccomp filters are too large (%s): refused", k->pid,
	       strerror(errno));
out:
	free(b.p);
	return ret;
}

/*
 * imgcr show: the seccomp file @path (text or JSON), checked as the loader
 * checks its layout.  Each thread's filters, oldest first, with their
 * length and flags, and how many its chain shares with the main thread's
 * (the first chain): those the restore installs once, shared.
 */
struct sc_view {
	const unsigned char *p;
	size_t len;
};

/* The filters of chain @c at @off: their total size, or 0 if damaged. */
static size_t chain_size(const struct sc_view *v, size_t off, uint32_t n)
{
	size_t pos = off;

	for (uint32_t j = 0; j < n; j++) {
		struct imgcr_seccomp_filter fh;

		if (v->len - pos < sizeof(fh))
			return 0;
		memcpy(&fh, v->p + pos, sizeof(fh));
		pos += sizeof(fh);
		if (!fh.len || fh.len > IMGCR_SECCOMP_MAX_INSNS ||
		    (v->len - pos) / sizeof(struct sock_filter) < fh.len)
			return 0;
		pos += fh.len * sizeof(struct sock_filter);
	}
	return pos - off;
}

/* Filter @j of the chain whose filters begin at @off (layout checked). */
static const unsigned char *filter_at(const struct sc_view *v, size_t off, uint32_t j,
				      struct imgcr_seccomp_filter *fh)
{
	for (;;) {
		memcpy(fh, v->p + off, sizeof(*fh));
		if (!j--)
			return v->p + off + sizeof(*fh);
		off += sizeof(*fh) + fh->len * sizeof(struct sock_filter);
	}
}

/* Filters @a (at @ao, @an of them) and @b alike from the start. */
static uint32_t common_start(const struct sc_view *v, size_t ao, uint32_t an, size_t bo,
			     uint32_t bn)
{
	uint32_t j;

	for (j = 0; j < an && j < bn; j++) {
		struct imgcr_seccomp_filter fa, fb;
		const unsigned char *ia = filter_at(v, ao, j, &fa);
		const unsigned char *ib = filter_at(v, bo, j, &fb);

		if (fa.flags != fb.flags || fa.len != fb.len ||
		    memcmp(ia, ib, fa.len * sizeof(struct sock_filter)))
			break;
	}
	return j;
}

int seccomp_show_file(const char *path, int json, int tree)
{
	struct imgcr_seccomp_file h;
	struct sc_view v;
	size_t len, pos, main_off = 0;
	uint32_t main_n = 0, i, j;
	char *buf = read_text(path, &len);
	int ret = -1;

	if (!buf) {
		if (tree && errno == ENOENT)
			return 0;	/* no thread under filters */
		pr_perror("cannot read %s", path);
		return -1;
	}
	v.p = (const unsigned char *)buf;
	v.len = len;
	memcpy(&h, buf, len < sizeof(h) ? len : sizeof(h));
	if (len < sizeof(h) || len > IMGCR_SECCOMP_MAX_SIZE || h.magic != IMGCR_SECCOMP_MAGIC ||
	    h.version != IMGCR_SECCOMP_VERSION || h.pad0 || !h.nr_threads) {
		pr_err("%s: not a seccomp file of this imgcr (magic, version or size)", path);
		goto out;
	}
	/* the whole layout first: nothing printed for a damaged file */
	for (pos = sizeof(h), i = 0; i < h.nr_threads; i++) {
		struct imgcr_seccomp_chain ch;
		size_t n;

		if (len - pos < sizeof(ch))
			goto bad;
		memcpy(&ch, buf + pos, sizeof(ch));
		pos += sizeof(ch);
		n = chain_size(&v, pos, ch.nr_filters);
		if (!n && ch.nr_filters)
			goto bad;
		pos += n;
	}
	if (pos != len)
		goto bad;
	if (json)
		printf(tree ? ",\"seccomp\":[" : "{\"format\":%d,\"seccomp\":[", IMGCR_JSON_FORMAT);
	else
		printf(tree ? "  seccomp filters (%s):\n" : "seccomp file %s: %u threads\n",
		       tree ? strrchr(path, '/') + 1 : path, h.nr_threads);
	for (pos = sizeof(h), i = 0; i < h.nr_threads; i++) {
		struct imgcr_seccomp_chain ch;
		uint32_t shared;
		size_t off;

		memcpy(&ch, buf + pos, sizeof(ch));
		off = pos + sizeof(ch);
		if (!i) {
			main_off = off;
			main_n = ch.nr_filters;
		}
		shared = common_start(&v, main_off, main_n, off, ch.nr_filters);
		if (json)
			printf("%s{\"tid\":%u,\"shared_with_main\":%u,\"filters\":[", i ? "," : "",
			       ch.tid, i ? shared : ch.nr_filters);
		else
			printf("    thread %u%s: %u filter%s", ch.tid, i ? "" : " (main)",
			       ch.nr_filters, ch.nr_filters == 1 ? "" : "s");
		if (!json && i && ch.nr_filters)
			printf(" (the first %u as the main thread's, shared)", shared);
		if (!json)
			printf("%s", ch.nr_filters ? ":" : "");
		for (j = 0; j < ch.nr_filters; j++) {
			struct imgcr_seccomp_filter fh;
			const unsigned char *ins = filter_at(&v, off, j, &fh);

			if (!json) {
				printf("%s #%u %u insn%s%s", j ? "," : "", j + 1, fh.len,
				       fh.len == 1 ? "" : "s",
				       fh.flags & IMGCR_SECCOMP_FILTER_LOG ? " log" : "");
				continue;
			}
			printf("%s{\"len\":%u,\"flags\":%u,\"log\":%s,\"insns\":[", j ? "," : "",
			       fh.len, fh.flags,
			       fh.flags & IMGCR_SECCOMP_FILTER_LOG ? "true" : "false");
			for (uint32_t k = 0; k < fh.len; k++) {
				struct sock_filter f;

				memcpy(&f, ins + k * sizeof(f), sizeof(f));
				printf("%s[%u,%u,%u,%u]", k ? "," : "", f.code, f.jt, f.jf, f.k);
			}
			printf("]}");
		}
		printf(json ? "]}" : "\n");
		pos = off + chain_size(&v, off, ch.nr_filters);
	}
	if (json)
		printf(tree ? "]" : "]}\n");
	ret = 0;
	goto out;
bad:
	pr_err("%s: damaged seccomp file (truncated or with trailing bytes)", path);
out:
	free(buf);
	return ret;
}

int seccomp_is_file(const char *path)
{
	uint32_t magic = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, &magic, sizeof(magic));
	close(fd);
	return n == sizeof(magic) && magic == IMGCR_SECCOMP_MAGIC;
}
