// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp filters of a restored process.
 *
 * The image records each thread's seccomp mode and filter count
 * (NT_IMGCR_SECCOMP); the filter programs come from the seccomp file imgcr
 * dump wrote (classic BPF read with PTRACE_SECCOMP_GET_FILTER), handed in
 * as "--imgcr-seccomp=FD".  Everything in it is checked before the point
 * of no return as seccomp(SECCOMP_SET_MODE_FILTER) will check it (each
 * program with bpf_check_classic(), through bpf_prog_create(), and the
 * seccomp subset of instructions; the length of each chain; the right to
 * install a filter at all), so that an install that fails afterwards is
 * a lack of memory, which kills the process rather than running it
 * without its sandbox.
 *
 * The filters are installed with the body of seccomp(2), one by one, the
 * oldest first.  The main thread makes the other threads; each thread's
 * chain begins with some of the main thread's filters (its depth: as many
 * as the two chains have alike from the start, 0 if none).  The main
 * thread installs its own chain step by step and makes each thread when
 * it has installed exactly that thread's depth, so the thread inherits
 * those filters shared with the main thread and with every other thread
 * of at least that depth (as TSYNC or a clone had made them shared: a
 * later TSYNC by the program succeeds or fails as it did before).  The
 * threads are made in the order of their depth (the image's order among
 * equal depths).  Each thread installs the rest of its chain itself, as
 * the last thing before its first user instruction.  Up to then the
 * restore calls only syscall bodies, which no filter sees.
 *
 * The right to add a filter is the caller's: no_new_privs, or
 * CAP_SYS_ADMIN in its user namespace (as seccomp(2) asks of the caller
 * itself).  The install runs with the caller's credentials (the restored
 * thread's may have fewer capabilities), so it never lets a caller add
 * what it could not add itself; a filter is only ever a restriction.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/filter.h>
#include <linux/mman.h>
#include <linux/ptrace.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/unistd.h>

#include "compat.h"
#include "loader.h"

struct img_sc_filter {
	u32 flags;			/* IMGCR_SECCOMP_FILTER_* */
	u32 len;
	const struct sock_filter *insns;	/* in set->buf */
};

struct img_sc_chain {
	u32 tid;
	u32 nr;
	struct img_sc_filter *f;	/* oldest first */
};

struct img_seccomp_set {
	void *buf;			/* the seccomp file */
	struct img_sc_filter *filters;
	struct img_sc_chain *chains;	/* 1 + proc.nr_threads, file order */
	unsigned int *order;		/* NT_IMGCR_SECCOMP entry -> chain */
	unsigned int nr_chains;
	u32 *depth;			/* NT_IMGCR_SECCOMP entry -> filters
					 * shared with the main thread's chain */
	unsigned int *make;		/* the threads (0: the first after main)
					 * in the order the main thread makes them */
	u32 main_done;			/* main's filters installed so far */
	u32 max_len;			/* longest program */
	const struct cred *cred;	/* the caller's */
};

void img_seccomp_free(struct img_seccomp_set *s)
{
	if (!s)
		return;
	if (s->cred)
		put_cred(s->cred);
	kvfree(s->chains);
	kvfree(s->order);
	kvfree(s->depth);
	kvfree(s->make);
	kvfree(s->filters);
	kvfree(s->buf);
	kfree(s);
}

/*
 * The checks of the kernel's seccomp_check_filter(): only these
 * instructions, loads from struct seccomp_data only, 32-bit aligned.
 */
static bool sc_insn_ok(const struct sock_filter *f)
{
	switch (f->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		return !(f->k & 3) && f->k < sizeof(struct seccomp_data);
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	}
	return false;
}

/* A program seccomp(2) takes: the seccomp subset, then the classic checks. */
static int sc_check_prog(struct img *img, const struct img_sc_filter *f,
			 u32 tid)
{
	struct sock_fprog_kern fp = {
		.len = f->len,
		.filter = (struct sock_filter *)f->insns,
	};
	struct bpf_prog *prog;
	unsigned int i;
	int ret;

	for (i = 0; i < f->len; i++) {
		if (!sc_insn_ok(&f->insns[i])) {
			img_err(img, "thread TID %u: seccomp filter instruction %u (code %#x) is not one seccomp allows: refused",
				tid, i, f->insns[i].code);
			return -EINVAL;
		}
		/*
		 * A filter that hands syscalls to a listener (user
		 * notification) cannot be restored: the listener is gone.
		 * imgcr dump refuses it; an image claiming otherwise lies.
		 */
		if (f->insns[i].code == (BPF_RET | BPF_K) &&
		    (f->insns[i].k & SECCOMP_RET_ACTION_FULL) ==
			    SECCOMP_RET_USER_NOTIF) {
			img_err(img, "thread TID %u: seccomp filter returns SECCOMP_RET_USER_NOTIF (a listener cannot be restored): refused",
				tid);
			return -EINVAL;
		}
	}
	/* bpf_check_classic() and everything seccomp's own prepare does */
	ret = bpf_prog_create(&prog, &fp);
	if (ret) {
		img_err(img, "thread TID %u: invalid seccomp filter program (%d): refused",
			tid, ret);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	bpf_prog_destroy(prog);
	return 0;
}

static bool sc_same(const struct img_sc_filter *a, const struct img_sc_filter *b)
{
	return a->flags == b->flags && a->len == b->len &&
	       !memcmp(a->insns, b->insns, a->len * sizeof(*a->insns));
}

/*
 * Each NT_IMGCR_SECCOMP entry's chain: the file has one per thread, in
 * any order, with the same TID and filter count.
 */
static int sc_match(struct img *img, struct img_seccomp_set *s)
{
	unsigned int n = s->nr_chains, i, k;
	unsigned long *used;

	used = bitmap_zalloc(n, GFP_KERNEL);
	if (!used)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct imgcr_seccomp *e = &img->seccomp[i];

		for (k = 0; k < n; k++)
			if (s->chains[k].tid == e->tid)
				break;
		if (k == n || test_and_set_bit(k, used) ||
		    s->chains[k].nr != e->nr_filters) {
			bitmap_free(used);
			img_err(img, "the seccomp file (--imgcr-seccomp) does not match the image's threads (TID %u): refused",
				e->tid);
			return -EINVAL;
		}
		s->order[i] = k;
	}
	bitmap_free(used);
	return 0;
}

/* Cut the file into chains and filters; check each program. */
static int sc_parse(struct img *img, struct img_seccomp_set *s, size_t size)
{
	const struct imgcr_seccomp_file *h = s->buf;
	unsigned int n = img->proc.nr_threads + 1, i, j, total, used = 0;
	size_t pos = sizeof(*h);
	u64 sum = 0;

	if (size < sizeof(*h) || h->magic != IMGCR_SECCOMP_MAGIC ||
	    h->version != IMGCR_SECCOMP_VERSION || h->nr_threads != n ||
	    h->pad0)
		goto bad;
	/* each filter takes 16 bytes of the file at least */
	for (i = 0; i < n; i++)
		sum += img->seccomp[i].nr_filters;
	if (sum > size / 16)
		goto bad;
	total = sum;
	s->chains = kvcalloc(n, sizeof(*s->chains), GFP_KERNEL_ACCOUNT);
	s->order = kvcalloc(n, sizeof(*s->order), GFP_KERNEL_ACCOUNT);
	s->filters = kvcalloc(max(total, 1u), sizeof(*s->filters),
			      GFP_KERNEL_ACCOUNT);
	if (!s->chains || !s->order || !s->filters)
		return -ENOMEM;
	s->nr_chains = n;
	for (i = 0; i < n; i++) {
		struct img_sc_chain *c = &s->chains[i];
		struct imgcr_seccomp_chain ch;
		u32 path = 0;

		if (size - pos < sizeof(ch))
			goto bad;
		memcpy(&ch, s->buf + pos, sizeof(ch));
		pos += sizeof(ch);
		/* no more filters than the image has: sc_match() checks each */
		if (ch.nr_filters > total - used)
			goto bad;
		c->tid = ch.tid;
		c->nr = ch.nr_filters;
		c->f = &s->filters[used];
		used += c->nr;
		for (j = 0; j < c->nr; j++) {
			struct imgcr_seccomp_filter fh;
			struct img_sc_filter *f = &c->f[j];
			int ret;

			if (size - pos < sizeof(fh))
				goto bad;
			memcpy(&fh, s->buf + pos, sizeof(fh));
			pos += sizeof(fh);
			if (fh.flags & ~IMGCR_SECCOMP_FILTER_LOG || !fh.len ||
			    fh.len > IMGCR_SECCOMP_MAX_INSNS ||
			    size - pos < fh.len * sizeof(struct sock_filter))
				goto bad;
			f->flags = fh.flags;
			f->len = fh.len;
			f->insns = s->buf + pos;	/* 8-byte aligned */
			pos += fh.len * sizeof(struct sock_filter);
			/* the kernel's MAX_INSNS_PER_PATH, as it counts */
			if (path + f->len > IMGCR_SECCOMP_MAX_PATH) {
				img_err(img, "thread TID %u: its seccomp filters are longer than the kernel allows: refused",
					c->tid);
				return -EINVAL;
			}
			path += f->len + 4;
			/* the same as the previous thread's: checked there */
			if (!i || j >= s->chains[i - 1].nr ||
			    !sc_same(f, &s->chains[i - 1].f[j])) {
				ret = sc_check_prog(img, f, c->tid);
				if (ret)
					return ret;
			}
			s->max_len = max(s->max_len, f->len);
		}
	}
	if (pos != size)
		goto bad;
	return sc_match(img, s);
bad:
	img_err(img, "the seccomp file (--imgcr-seccomp) is corrupt or does not belong to this image: refused");
	return -EINVAL;
}

/* The chain of thread @i of the image (0: main). */
static const struct img_sc_chain *
img_seccomp_chain(const struct img_seccomp_set *s, unsigned int i)
{
	return s && i < s->nr_chains ? &s->chains[s->order[i]] : NULL;
}

/*
 * Each thread's depth (the filters its chain begins with that the main
 * thread's chain begins with too) and the order the main thread makes the
 * threads in: by depth, the image's order among equal depths (a counting
 * sort: depths are at most the main thread's filter count).
 */
static int sc_plan(struct img_seccomp_set *s)
{
	const struct img_sc_chain *m = img_seccomp_chain(s, 0);
	unsigned int n = s->nr_chains, i, *count;
	u32 d, j;

	s->depth = kvcalloc(n, sizeof(*s->depth), GFP_KERNEL_ACCOUNT);
	s->make = kvcalloc(max(n - 1, 1u), sizeof(*s->make), GFP_KERNEL_ACCOUNT);
	count = kvcalloc(m->nr + 2, sizeof(*count), GFP_KERNEL);
	if (!s->depth || !s->make || !count) {
		kvfree(count);
		return -ENOMEM;
	}
	s->depth[0] = m->nr;
	for (i = 1; i < n; i++) {
		const struct img_sc_chain *c = img_seccomp_chain(s, i);

		for (j = 0; j < m->nr && j < c->nr; j++)
			if (!sc_same(&c->f[j], &m->f[j]))
				break;
		s->depth[i] = j;
		count[j + 1]++;
	}
	for (d = 1; d <= m->nr + 1; d++)
		count[d] += count[d - 1];
	for (i = 1; i < n; i++)
		s->make[count[s->depth[i]]++] = i - 1;
	kvfree(count);
	return 0;
}

/*
 * "--imgcr-seccomp=FD": read the seccomp file the caller has open.  Called
 * from img_parse_args(), before the point of no return.
 */
int img_seccomp_read(struct img *img, unsigned int fd)
{
	struct img_seccomp_set *s;
	struct file *f;
	loff_t size, pos = 0;
	ssize_t n;

	if (img->sc) {
		img_err(img, "--imgcr-seccomp given twice");
		return -EINVAL;
	}
	f = fget(fd);
	if (!f) {
		img_err(img, "--imgcr-seccomp=%u is not an open file of the caller", fd);
		return -EBADF;
	}
	size = i_size_read(file_inode(f));
	if (!S_ISREG(file_inode(f)->i_mode) || size <= 0 ||
	    size > IMGCR_SECCOMP_MAX_SIZE) {
		fput(f);
		img_err(img, "--imgcr-seccomp=%u is not a seccomp file of at most %u bytes",
			fd, IMGCR_SECCOMP_MAX_SIZE);
		return -EINVAL;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (s)
		s->buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!s || !s->buf) {
		fput(f);
		img_seccomp_free(s);
		return -ENOMEM;
	}
	img->sc = s;
	img->sc_size = size;
	n = kernel_read(f, s->buf, size, &pos);
	fput(f);
	if (n != size) {
		img_err(img, "cannot read the seccomp file (--imgcr-seccomp): %zd", n);
		return n < 0 ? n : -EIO;
	}
	return 0;
}

/*
 * After NT_IMGCR_SECCOMP and the arguments: every thread that was under
 * filters gets exactly its chain again, or the exec fails here.
 */
int img_seccomp_check(struct img *img)
{
	struct img_seccomp_set *s = img->sc;
	unsigned int i, n = img->proc.nr_threads + 1;
	bool any = false;
	int ret;

	if (img->seccomp)
		for (i = 0; i < n; i++)
			any |= img->seccomp[i].mode == IMGCR_SECCOMP_FILTER;
	if (!any) {
		if (s) {
			img_err(img, "--imgcr-seccomp given for an image without seccomp filters: refused");
			return -EINVAL;
		}
		return 0;
	}
	if (!s) {
		for (i = 0; i < n && img->seccomp[i].mode != IMGCR_SECCOMP_FILTER; i++)
			;
		img_err(img, "thread TID %u ran under %u seccomp filter(s), which are not in the image (imgcr restore hands them in with --imgcr-seccomp=FD); a process is never run without its sandbox: refused",
			img->seccomp[i].tid, img->seccomp[i].nr_filters);
		return -EPERM;
	}
#ifdef CONFIG_SECCOMP_FILTER
	if (READ_ONCE(current->seccomp.mode) != SECCOMP_MODE_DISABLED) {
		img_err(img, "the caller runs under seccomp, which the restored process would inherit on top of its own filters: refused");
		return -EPERM;
	}
	if (!task_no_new_privs(current) &&
	    !ns_capable_noaudit(current_user_ns(), CAP_SYS_ADMIN)) {
		img_err(img, "installing the image's seccomp filters needs no_new_privs or CAP_SYS_ADMIN, which the caller has not: refused");
		return -EPERM;
	}
	ret = sc_parse(img, s, img->sc_size);
	if (ret)
		return ret;
	ret = sc_plan(s);
	if (ret)
		return ret;
	s->cred = get_current_cred();
	return 0;
#else
	img_err(img, "the image has seccomp filters; this kernel has no seccomp filters: refused");
	return -EOPNOTSUPP;
#endif
}

/*
 * Install filters [@from, @to) of @c in the calling thread, with the
 * caller's credentials.  Returns 0 or the error seccomp(2) gave.
 */
static int sc_install(const struct img_seccomp_set *s,
		      const struct img_sc_chain *c, u32 from, u32 to)
{
	size_t size = sizeof(struct sock_fprog) +
		      s->max_len * sizeof(struct sock_filter);
	struct pt_regs *regs = current_pt_regs();
	const struct cred *old;
	unsigned long addr, orig_ax;
	struct sock_fprog __user *fp;
	struct sock_filter __user *insns;
	long ret = 0;
	u32 i;

	if (from >= to)
		return 0;
	size = PAGE_ALIGN(size);
	addr = vm_mmap(NULL, 0, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, 0);
	if (IS_ERR_VALUE(addr))
		return (long)addr;
	fp = (struct sock_fprog __user *)addr;
	insns = (struct sock_filter __user *)(addr + sizeof(*fp));
	/*
	 * seccomp(2) reads a compat struct sock_fprog if in_compat_syscall(),
	 * which looks at orig_ax: the restored registers may have the x32
	 * bit there (-1: no syscall).  This is a 64-bit seccomp() call.
	 */
	orig_ax = regs->orig_ax;
	regs->orig_ax = __NR_seccomp;
	old = override_creds(s->cred);
	for (i = from; i < to && !ret; i++) {
		const struct img_sc_filter *f = &c->f[i];
		struct sock_fprog prog = { .len = f->len, .filter = insns };

		if (copy_to_user(insns, f->insns, f->len * sizeof(*insns)) ||
		    copy_to_user(fp, &prog, sizeof(prog)))
			ret = -EFAULT;
		else
			ret = img_call_sys(imgcr_sys_seccomp,
					   SECCOMP_SET_MODE_FILTER,
					   f->flags & IMGCR_SECCOMP_FILTER_LOG ?
						SECCOMP_FILTER_FLAG_LOG : 0,
					   (unsigned long)fp, 0);
	}
	revert_creds(old);
	regs->orig_ax = orig_ax;
	vm_munmap(addr, size);
	return ret;
}

/*
 * The @k-th thread the main thread makes (an index into the image's
 * threads after the main one): by depth.
 */
unsigned int img_seccomp_make_order(const struct img_seccomp_set *s,
				    unsigned int k)
{
	return s ? s->make[k] : k;
}

/*
 * The main thread, before it makes thread @t (an index into the image's
 * threads after the main one): its own filters up to that thread's depth,
 * which the thread then inherits, shared.
 */
int img_seccomp_before_thread(struct img_seccomp_set *s, unsigned int t)
{
	u32 d;
	int ret;

	if (!s)
		return 0;
	d = s->depth[t + 1];
	if (d < s->main_done)	/* made by depth: cannot happen */
		return -EINVAL;
	ret = sc_install(s, img_seccomp_chain(s, 0), s->main_done, d);
	if (!ret)
		s->main_done = d;
	return ret;
}

/*
 * Each thread, last: the rest of its own chain (@i: its entry of
 * NT_IMGCR_SECCOMP, 0 the main thread, which makes no thread any more).
 */
int img_seccomp_install_own(const struct img_seccomp_set *s, unsigned int i)
{
	const struct img_sc_chain *c = img_seccomp_chain(s, i);

	if (!c)
		return 0;
	return sc_install(s, c, i ? s->depth[i] : s->main_done, c->nr);
}
