// SPDX-License-Identifier: GPL-2.0
/*
 * binfmt_img: an image dumped on a kernel whose vdso differs from the
 * running one's (another kernel build, an upgrade).
 *
 * The task holds addresses inside its old vdso: glibc and Go keep pointers
 * to the vdso functions, AT_SYSINFO_EHDR points at its ELF header, and a
 * thread may sit right after a fallback syscall in vdso code.  So the old
 * vdso's code stays where it was, as a private copy (the image carries one
 * in NT_IMGCR_VDSO), and each of its function entry points is overwritten
 * with a jump to the same-named function of the running kernel's vdso,
 * which is mapped wherever there is room (mm->context.vdso is that one).
 * This is CRIU's "vdso proxy".
 *
 * The old vdso's data pages stay reserved at their address as zero pages:
 * the old code reads them only if a thread was inside a vdso function (or
 * runs a function left unpatched, below), and the data of another kernel's
 * vdso would be the wrong layout.  A zero
 * data page reads as "no usable clocksource" to the clock functions, which
 * then make the system call (VDSO_CLOCKMODE_NONE is 0), and as "not ready"
 * to getrandom.  A thread stopped inside the vdso anywhere but at a system
 * call is refused instead: the coarse clocks and time() read the data page
 * without that check.
 *
 * Everything is decided here before the point of no return: both symbol
 * tables are parsed (the old one from the image, untrusted; the running
 * one from the kernel), every entry point is matched and checked to have
 * room for its jump.
 */
#include <linux/compat.h>
#include <linux/elf.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <asm/prctl.h>
#include <asm/vdso.h>
#include "compat.h"
#include "loader.h"

/* movabs $target, %r11; jmp *%r11 -- r11 is scratch at a call. */
#define JUMP_LEN 13

/* Real vdsos are 8-16 KiB with some 20 symbols: refuse anything far beyond. */
#define VDSO_MAX_SIZE	(64 << 10)
#define VDSO_MAX_SYMS	256

/*
 * Functions that may stay unpatched, running their old code: getrandom
 * reads a zero data page as "not ready" and makes the system call; the
 * robust futex unlock helpers of 7.x (a cmpxchg and a store) read no data
 * at all, only the new kernel's exit-time fixup for a thread killed inside
 * them does not know the old copy.
 */
static const char *const may_stay[] = {
	"__vdso_getrandom", "getrandom",
	"__vdso_futex_robust_list64_try_unlock",
	"__vdso_futex_robust_list32_try_unlock",
};

struct vdso_syms {
	const void *data;
	size_t len;
	const Elf64_Sym *sym;
	unsigned int nr;
	const char *str;
	size_t strsz;
};

/*
 * The dynamic symbol table of a vdso image of @len bytes, found through
 * its section headers; every offset is checked against @len (the image's
 * copy is untrusted).
 */
static int vdso_syms_init(struct vdso_syms *s, const void *data, size_t len)
{
	const Elf64_Ehdr *eh = data;
	const Elf64_Shdr *sh, *sym = NULL, *str;
	unsigned int i;

	s->data = data;
	s->len = len;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(*sh) || !eh->e_shnum ||
	    eh->e_shoff > len ||
	    (len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum ||
	    eh->e_shoff % __alignof__(*sh))
		return -EINVAL;
	sh = data + eh->e_shoff;
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM) {
			sym = &sh[i];
			break;
		}
	}
	if (!sym || sym->sh_entsize != sizeof(Elf64_Sym) ||
	    sym->sh_link >= eh->e_shnum || sym->sh_offset > len ||
	    sym->sh_size > len - sym->sh_offset ||
	    sym->sh_offset % __alignof__(Elf64_Sym))
		return -EINVAL;
	str = &sh[sym->sh_link];
	if (str->sh_type != SHT_STRTAB || str->sh_offset > len ||
	    str->sh_size > len - str->sh_offset || !str->sh_size ||
	    sym->sh_size / sizeof(Elf64_Sym) > VDSO_MAX_SYMS)
		return -EINVAL;
	s->sym = data + sym->sh_offset;
	s->nr = sym->sh_size / sizeof(Elf64_Sym);
	s->str = data + str->sh_offset;
	s->strsz = str->sh_size;
	/* every name then ends within the table */
	if (s->str[s->strsz - 1])
		return -EINVAL;
	return 0;
}

/* Symbol @i's name if it is a defined function, else NULL. */
static const char *vdso_func(const struct vdso_syms *s, unsigned int i)
{
	const Elf64_Sym *y = &s->sym[i];
	size_t off = y->st_name;

	if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF ||
	    off >= s->strsz)
		return NULL;
	return s->str + off;
}

/* The offset of function @name in @s; -ENOENT if it has none. */
static long vdso_find(const struct vdso_syms *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		const char *n = vdso_func(s, i);

		if (n && !strcmp(n, name) && s->sym[i].st_value < s->len)
			return s->sym[i].st_value;
	}
	return -ENOENT;
}

static bool may_stay_unpatched(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(may_stay); i++)
		if (!strcmp(name, may_stay[i]))
			return true;
	return false;
}

/*
 * Add (or find, for an alias) the jump at @old_off: 0, -EINVAL if an alias
 * jumps elsewhere, -E2BIG if the table is full.
 */
static int add_patch(struct img *img, u32 old_off, u32 new_off)
{
	struct img_vdso *p = &img->vdso;
	unsigned int i;

	for (i = 0; i < p->nr; i++) {
		if (p->patch[i].old_off == old_off)
			return p->patch[i].new_off == new_off ? 0 : -EINVAL;
	}
	if (p->nr == ARRAY_SIZE(p->patch))
		return -E2BIG;
	p->patch[p->nr].old_off = old_off;
	p->patch[p->nr].new_off = new_off;
	p->nr++;
	return 0;
}

static int cmp_patch(const void *a, const void *b)
{
	const struct img_vdso_patch *x = a, *y = b;

	return x->old_off < y->old_off ? -1 : x->old_off > y->old_off;
}

/*
 * A thread inside the old vdso continues in its copy: at a patched entry
 * it takes the jump; elsewhere only at a system call (on it, or right
 * after it), where the code has read all it needs from the data page, or
 * needs nothing from it -- and never inside a jump's 13 bytes.  A thread
 * put back in an interrupted call (@flags with an -ERESTART* code) returns
 * after its syscall instruction or onto it: its rip must be on one, whole
 * and outside every jump.
 */
static int check_rip(struct img *img, const u64 *regs, u32 flags, u32 tid)
{
	bool in_call = flags & IMGCR_TASK_RESTART_CODES;
	u64 rip = regs[IMGCR_REG_RIP], off;
	const u8 *code = img->vdso.old;
	bool on_syscall;
	unsigned int i;

	if (rip < img->task.vdso || rip >= img->task.vdso + img->task.vdso_size)
		return 0;
	off = rip - img->task.vdso;
	on_syscall = off + 2 <= img->task.vdso_size && code[off] == 0x0f &&
		     code[off + 1] == 0x05;
	for (i = 0; i < img->vdso.nr; i++) {
		u32 p = img->vdso.patch[i].old_off;

		if (off == p && !in_call)
			return 0;
		if (off + (in_call ? 2 : 1) > p && off < p + JUMP_LEN)
			goto refuse;
	}
	if (on_syscall ||
	    (!in_call && off >= 2 && code[off - 2] == 0x0f && code[off - 1] == 0x05))
		return 0;
refuse:
	img_err(img, "thread %u was stopped inside the vdso (offset %#llx), not at a system call: this kernel's vdso differs from the dumping kernel's, so it can only continue there on that kernel (or dump it again)",
		tid, off);
	return -EOPNOTSUPP;
}

/*
 * Plan the proxy for an image whose vdso (@old, the NT_IMGCR_VDSO copy,
 * task.vdso_size bytes, crc-checked by the caller) is not the running
 * kernel's @vi.
 */
int img_vdso_plan(struct img *img, const struct vdso_image *vi,
		  const void *old)
{
	struct img_vdso *p = &img->vdso;
	struct vdso_syms os, ns;
	unsigned int i;
	int ret;

	if (in_compat_syscall() || test_thread_flag(TIF_ADDR32) ||
	    vi->size > VDSO_MAX_SIZE) {
		img_err(img, "the image's vdso is another kernel's: restoring it needs a 64-bit caller");
		return -EOPNOTSUPP;
	}
	if (img->task.vdso_size > VDSO_MAX_SIZE) {
		img_err(img, "invalid image: a vdso of %llu bytes",
			img->task.vdso_size);
		return -EINVAL;
	}
	if (vdso_syms_init(&ns, vi->data, vi->size)) {
		img_err(img, "cannot read this kernel's vdso symbols");
		return -EOPNOTSUPP;
	}
	/* a copy: the note is only 4-byte aligned, ELF wants 8 */
	p->old = kvmalloc(img->task.vdso_size, GFP_KERNEL_ACCOUNT);
	if (!p->old)
		return -ENOMEM;
	memcpy(p->old, old, img->task.vdso_size);
	if (vdso_syms_init(&os, p->old, img->task.vdso_size)) {
		img_err(img, "invalid image: its copy of the vdso is not an ELF with a symbol table");
		return -EINVAL;
	}
	/* first the names this vdso has: their jumps */
	for (i = 0; i < os.nr; i++) {
		const char *name = vdso_func(&os, i);
		const Elf64_Sym *y = &os.sym[i];
		long to;

		cond_resched();
		if (!name)
			continue;
		if (y->st_value >= os.len || y->st_size > os.len - y->st_value) {
			img_err(img, "invalid image: its vdso's %s is out of bounds", name);
			return -EINVAL;
		}
		to = vdso_find(&ns, name);
		if (to < 0 || (y->st_size < JUMP_LEN && may_stay_unpatched(name)))
			continue;
		if (y->st_size < JUMP_LEN) {
			img_err(img, "the image's vdso function %s (at %#llx, %llu bytes) has no room for a jump to this kernel's",
				name, y->st_value, y->st_size);
			return -EOPNOTSUPP;
		}
		if (to + JUMP_LEN > vi->size) {
			img_err(img, "this kernel's vdso function %s is out of its bounds", name);
			return -EOPNOTSUPP;
		}
		ret = add_patch(img, y->st_value, to);
		if (ret) {
			img_err(img, "the image's vdso has %s",
				ret == -E2BIG ? "too many functions" :
				"aliases of one function that this kernel's vdso has apart");
			return -EOPNOTSUPP;
		}
	}
	/* then the others: an alias of a patched one, or one that may stay */
	for (i = 0; i < os.nr; i++) {
		const char *name = vdso_func(&os, i);
		unsigned int k;

		cond_resched();
		if (!name || vdso_find(&ns, name) >= 0 || may_stay_unpatched(name))
			continue;
		for (k = 0; k < p->nr; k++)
			if (p->patch[k].old_off == os.sym[i].st_value)
				break;
		if (k == p->nr) {
			img_err(img, "the image's vdso has %s, this kernel's vdso has not", name);
			return -EOPNOTSUPP;
		}
	}
	if (!p->nr) {
		img_err(img, "the image's vdso has no function this kernel's vdso has");
		return -EOPNOTSUPP;
	}
	sort(p->patch, p->nr, sizeof(p->patch[0]), cmp_patch, NULL);
	for (i = 1; i < p->nr; i++) {
		if (p->patch[i].old_off < p->patch[i - 1].old_off + JUMP_LEN) {
			img_err(img, "the image's vdso functions at %#x and %#x are too close for jumps",
				p->patch[i - 1].old_off, p->patch[i].old_off);
			return -EOPNOTSUPP;
		}
	}
	p->vi = vi;

	ret = check_rip(img, img->prstatus.regs, img->main_th.flags,
			img->main_th.tid);
	for (i = 0; !ret && i < img->proc.nr_threads; i++)
		ret = check_rip(img, img->threads[i].prstatus.regs,
				img->threads[i].th.flags, img->threads[i].th.tid);
	return ret;
}

/* One anonymous private mapping at exactly @addr, writable for now. */
static int map_fixed_anon(struct img *img, unsigned long addr,
			  unsigned long len)
{
	unsigned long got;

	got = vm_mmap(NULL, addr, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, 0);
	if (got != addr) {
		img_err(img, "cannot map the old vdso's place %#lx-%#lx (%ld)",
			addr, addr + len,
			IS_ERR_VALUE(got) ? (long)got : -EEXIST);
		return IS_ERR_VALUE(got) ? (int)got : -EEXIST;
	}
	return 0;
}

/*
 * After the point of no return: the old vdso's place taken first (so the
 * new vdso cannot land there), then this kernel's vdso mapped where there
 * is room, then the copy written with its jumps and made read-only.
 */
int img_vdso_map_proxy(struct img *img)
{
	const struct imgcr_task *t = &img->task;
	unsigned long vdso = t->vdso, vvar = t->vdso - t->vvar_size;
	unsigned long new;
	unsigned int i;
	long ret;

	ret = map_fixed_anon(img, vvar, t->vvar_size);
	if (!ret)
		ret = map_fixed_anon(img, vdso, t->vdso_size);
	if (ret)
		return ret;
	ret = img_call_sys(imgcr_sys_arch_prctl, ARCH_MAP_VDSO_64, 0, 0, 0);
	if (ret < 0) {
		img_err(img, "cannot map this kernel's vdso (%ld)", ret);
		return ret;
	}
	if (current->mm->context.vdso_image != img->vdso.vi) {
		img_err(img, "this kernel mapped another vdso than the one checked");
		return -EINVAL;
	}
	new = (unsigned long)current->mm->context.vdso;
	if (copy_to_user((void __user *)vdso, img->vdso.old, t->vdso_size))
		return -EFAULT;
	for (i = 0; i < img->vdso.nr; i++) {
		const struct img_vdso_patch *p = &img->vdso.patch[i];
		u64 to = new + p->new_off;
		u8 jump[JUMP_LEN] = { 0x49, 0xbb };	/* movabs $to, %r11 */

		memcpy(&jump[2], &to, sizeof(to));
		jump[10] = 0x41;			/* jmp *%r11 */
		jump[11] = 0xff;
		jump[12] = 0xe3;
		if (copy_to_user((void __user *)(vdso + p->old_off), jump,
				 sizeof(jump)))
			return -EFAULT;
	}
	ret = img_call_sys(imgcr_sys_mprotect, vvar, t->vvar_size, PROT_READ, 0);
	if (!ret)
		ret = img_call_sys(imgcr_sys_mprotect, vdso, t->vdso_size,
				   PROT_READ | PROT_EXEC, 0);
	if (ret)
		img_err(img, "cannot protect the old vdso's place (%ld)", ret);
	return ret;
}
