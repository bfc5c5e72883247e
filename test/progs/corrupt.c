/*
 * corrupt IN OUT MODE: copy an ELF64 image and damage it in a way that no
 * correct loader may accept (every mode makes the file structurally
 * invalid, not merely different).  Modes:
 *   class      EI_CLASS = ELFCLASS32
 *   machine    e_machine = EM_AARCH64
 *   type       e_type = ET_REL
 *   phoff      e_phoff points past the end of the file
 *   phentsize  e_phentsize = 1
 *   phnum      e_phnum = 0xffff (program headers run past the end)
 *   nophdr     e_phnum = 0
 *   poffset    every segment's p_offset points past the end of the file
 *   pfilesz    every segment's p_filesz is huge
 *   phalf:ADDR the PT_LOAD at p_vaddr ADDR (strtoull, base 0) gets half its
 *              size (a page multiple): no longer whole huge pages
 *   namesz     first note of every PT_NOTE: n_namesz = 0xffffffff
 *   descsz     first note of every PT_NOTE: n_descsz = 0xfffffff0
 * and two that keep the file well-formed but ask for what no loader here
 * can give:
 *   xfeatures  "LINUX" NT_X86_XSTATE note: set bit 62 (a state component
 *              no x86 CPU has) in XSTATE_BV, the u64 at offset 512
 *   version    "IMGCR" NT_IMGCR_TASK note: first u32 (format version) = 99
 *   version3   the same = 3 (seccomp state) in an image without
 *              NT_IMGCR_SECCOMP: a loader must not take it as "no seccomp"
 *   auxv       "CORE" NT_AUXV note: no AT_NULL entry (every key AT_PAGESZ);
 *              readers of /proc/PID/auxv would scan past the vector
 * and, for images of multi-threaded processes:
 *   nthreads   "IMGCR" NT_IMGCR_PROC: nr_threads one more than the image has
 *   pflags+HEX, pflags-HEX  NT_IMGCR_PROC: set (clear) these bits of its
 *              flags (own-namespace bits that contradict each other, ...)
 *   duptid     the first NT_IMGCR_THREAD gets the second one's TID
 *   threadrip  the second NT_PRSTATUS (the first thread after the main
 *              one): rip in the kernel's half of the address space
 * and, on the image's copy of its vdso (NT_IMGCR_VDSO), to make it look
 * dumped on a kernel with another vdso (its task note's crc updated):
 *   othervdso  a change in the padding after the vdso's ELF contents: a
 *              loader must keep this copy and jump from it to its own vdso
 *   vdsotight  othervdso, and __vdso_time's size 8: no room for a jump
 *   vdsoname   othervdso, and __vdso_getcpu renamed __vdso_getcpX, a
 *              function the running kernel's vdso does not have
 *   vdsorip    othervdso, and the main thread's rip inside __vdso_time
 *   vdsocrc    a change in the copy, crc not updated
 * and one that only a later kernel than 6.1 takes:
 *   rseq64     NT_IMGCR_TASK: an rseq registration of 64 bytes
 * and, for targeted cases of one field:
 *   nset:TYPE:OFF:WIDTH:VAL  the first "IMGCR" note of type TYPE (hex):
 *              WIDTH bytes (1, 2, 4 or 8) at OFF of its descriptor = VAL
 *              (strtoull, base 0: -1 sets all bits)
 *   nretype:FROM:TO  the first "IMGCR" note of type FROM (hex) gets type
 *              TO (hex): an unknown TO drops it, a present one doubles it
 *   tflags+HEX, tflags-HEX  NT_IMGCR_TASK: set (clear) these bits of its
 *              flags (the main thread's IMGCR_TASK_*)
 * Prints nothing on success; exit 1 if IN is not an ELF64 file (or has no
 * such note).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common.h"

/*
 * The descriptor of note number @nth (0: the first) OWNER/TYPE in the
 * PT_NOTE segments, or NULL; *len gets its n_descsz.
 */
static unsigned char *find_nth_note(unsigned char *b, size_t size, Elf64_Phdr *ph, int nph,
				    const char *owner, uint32_t type, int nth, size_t *len)
{
	size_t olen = strlen(owner) + 1;

	for (int i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset > size ||
		    ph[i].p_filesz > size - ph[i].p_offset)
			continue;
		size_t off = ph[i].p_offset, end = off + ph[i].p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(b + off);
			size_t nsz = ((size_t)nh->n_namesz + 3) & ~(size_t)3;
			size_t dsz = ((size_t)nh->n_descsz + 3) & ~(size_t)3;
			size_t name = off + sizeof(*nh);
			if (nsz > end - name || dsz > end - name - nsz)
				break;
			if (nh->n_type == type && nh->n_namesz == olen &&
			    !memcmp(b + name, owner, olen) && nth-- == 0) {
				*len = nh->n_descsz;
				return b + name + nsz;
			}
			off = name + nsz + dsz;
		}
	}
	return NULL;
}

static unsigned char *find_note(unsigned char *b, size_t size, Elf64_Phdr *ph, int nph,
				const char *owner, uint32_t type, size_t *len)
{
	return find_nth_note(b, size, ph, nph, owner, type, 0, len);
}

/* crc32_le(~0, p, n) as the kernel computes imgcr_task.vdso_crc. */
static uint32_t crc32_kernel(const unsigned char *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return c;
}

/*
 * Symbol @name of the vdso copy @v (@len bytes), through its section
 * headers, or NULL; *end gets the end of the ELF contents (the last
 * section or the section header table).
 */
static Elf64_Sym *vdso_sym(unsigned char *v, size_t len, const char *name, size_t *end)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)v;
	Elf64_Sym *found = NULL;

	if (len < sizeof(*eh) || memcmp(v, ELFMAG, SELFMAG) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return NULL;
	Elf64_Shdr *sh = (Elf64_Shdr *)(v + eh->e_shoff);
	*end = eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset + sh[i].sh_size > *end)
			*end = sh[i].sh_offset + sh[i].sh_size;
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		Elf64_Shdr *str = &sh[sh[i].sh_link];
		Elf64_Sym *y = (Elf64_Sym *)(v + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*y); k++)
			if (y[k].st_name < str->sh_size &&
			    !strcmp((char *)v + str->sh_offset + y[k].st_name, name))
				found = &y[k];
	}
	return *end <= len ? found : NULL;
}

/* The vdso modes; 0 if done. */
static int damage_vdso(unsigned char *b, size_t size, Elf64_Phdr *ph, int nph, const char *m)
{
	size_t vlen = 0, tlen = 0, plen = 0, end = 0;
	unsigned char *v = find_note(b, size, ph, nph, "IMGCR", 0x494d4309, &vlen);
	unsigned char *t = find_note(b, size, ph, nph, "IMGCR", 0x494d4301, &tlen);
	unsigned char *pr = find_note(b, size, ph, nph, "CORE", NT_PRSTATUS, &plen);
	Elf64_Sym *tm = v ? vdso_sym(v, vlen, "__vdso_time", &end) : NULL;
	Elf64_Sym *cpu = v ? vdso_sym(v, vlen, "__vdso_getcpu", &end) : NULL;
	uint64_t vdso;

	/* the crc at 28 and the vdso address at 128 of struct imgcr_task */
	if (!tm || !cpu || !t || tlen < 136 || !pr || plen < 112 + 17 * 8 || end >= vlen)
		return 1;
	v[vlen - 1] ^= 1;
	if (!strcmp(m, "vdsotight")) {
		tm->st_size = 8;
	} else if (!strcmp(m, "vdsoname")) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)v;
		Elf64_Shdr *sh = (Elf64_Shdr *)(v + eh->e_shoff);
		for (int i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == SHT_DYNSYM)
				v[sh[sh[i].sh_link].sh_offset + cpu->st_name + 12] = 'X';
	} else if (!strcmp(m, "vdsorip")) {
		memcpy(&vdso, t + 128, sizeof(vdso));
		vdso += tm->st_value + 1;
		memcpy(pr + 112 + 16 * 8, &vdso, sizeof(vdso));
	}
	if (strcmp(m, "vdsocrc")) {
		uint32_t crc = crc32_kernel(v, vlen);
		memcpy(t + 28, &crc, sizeof(crc));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		outf(2, "usage: corrupt IN OUT MODE\n");
		return 64;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		outf(2, "corrupt: %s: %s\n", argv[1], errname(errno));
		return 1;
	}
	size_t size = (size_t)st.st_size;
	unsigned char *b = malloc(size ? size : 1);
	if (!b || read(fd, b, size) != (ssize_t)size || size < sizeof(Elf64_Ehdr) ||
	    memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64) {
		outf(2, "corrupt: %s: not a readable ELF64 file\n", argv[1]);
		return 1;
	}
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
	int nph = eh->e_phnum;
	if (eh->e_phoff + (size_t)nph * sizeof(*ph) > size) {
		outf(2, "corrupt: program headers out of file\n");
		return 1;
	}
	const char *m = argv[3];
	int done = 1;

	if (!strcmp(m, "class"))
		b[EI_CLASS] = ELFCLASS32;
	else if (!strcmp(m, "machine"))
		eh->e_machine = EM_AARCH64;
	else if (!strcmp(m, "type"))
		eh->e_type = ET_REL;
	else if (!strcmp(m, "phoff"))
		eh->e_phoff = size + 0x100000;
	else if (!strcmp(m, "phentsize"))
		eh->e_phentsize = 1;
	else if (!strcmp(m, "phnum"))
		eh->e_phnum = 0xffff;
	else if (!strcmp(m, "nophdr"))
		eh->e_phnum = 0;
	else if (!strcmp(m, "poffset") || !strcmp(m, "pfilesz")) {
		done = 0;
		for (int i = 0; i < nph; i++) {
			if (ph[i].p_filesz == 0)
				continue;
			if (m[1] == 'o')
				ph[i].p_offset = size + ((uint64_t)1 << 40);
			else
				ph[i].p_filesz = (uint64_t)1 << 60;
			done = 1;
		}
	} else if (!strncmp(m, "phalf:", 6)) {
		uint64_t at = strtoull(m + 6, NULL, 0);

		done = 0;
		for (int i = 0; i < nph; i++) {
			if (ph[i].p_type != PT_LOAD || ph[i].p_vaddr != at || ph[i].p_filesz < 8192)
				continue;
			ph[i].p_filesz = ph[i].p_memsz = (ph[i].p_filesz / 2) & ~(uint64_t)4095;
			done = 1;
		}
	} else if (!strcmp(m, "namesz") || !strcmp(m, "descsz")) {
		done = 0;
		for (int i = 0; i < nph; i++) {
			if (ph[i].p_type != PT_NOTE || ph[i].p_filesz < sizeof(Elf64_Nhdr) ||
			    ph[i].p_offset + sizeof(Elf64_Nhdr) > size)
				continue;
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(b + ph[i].p_offset);
			if (m[0] == 'n')
				nh->n_namesz = 0xffffffffu;
			else
				nh->n_descsz = 0xfffffff0u;
			done = 1;
		}
	} else if (!strcmp(m, "xfeatures")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "LINUX", NT_X86_XSTATE, &len);
		uint64_t bv;
		done = d && len >= 520;
		if (done) {
			memcpy(&bv, d + 512, sizeof(bv));
			bv |= (uint64_t)1 << 62;
			memcpy(d + 512, &bv, sizeof(bv));
		}
	} else if (!strcmp(m, "version") || !strcmp(m, "version3")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", 0x494d4301, &len);
		uint32_t v = strcmp(m, "version") ? 3 : 99;
		done = d && len >= 4;
		if (done)
			memcpy(d, &v, sizeof(v));
	} else if (!strcmp(m, "auxv")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "CORE", NT_AUXV, &len);
		uint64_t key = AT_PAGESZ;
		done = d && len >= 16;
		for (size_t off = 0; done && off + 16 <= len; off += 16)
			memcpy(d + off, &key, sizeof(key));
	} else if (!strcmp(m, "nthreads")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", 0x494d4305, &len);
		uint32_t n;
		done = d && len >= 4;
		if (done) {
			memcpy(&n, d, sizeof(n));
			n++;
			memcpy(d, &n, sizeof(n));
		}
	} else if ((!strncmp(m, "pflags", 6) || !strncmp(m, "tflags", 6)) &&
		   (m[6] == '+' || m[6] == '-')) {
		size_t len = 0;
		/* struct imgcr_proc (p) or imgcr_task (t): flags at 4 */
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR",
					     m[0] == 'p' ? 0x494d4305 : 0x494d4301, &len);
		uint32_t f, bits = (uint32_t)strtoul(m + 7, NULL, 16);

		done = d && len >= 8 && bits;
		if (done) {
			memcpy(&f, d + 4, sizeof(f));
			f = m[6] == '+' ? f | bits : f & ~bits;
			memcpy(d + 4, &f, sizeof(f));
		}
	} else if (!strcmp(m, "duptid")) {
		size_t l0 = 0, l1 = 0;
		unsigned char *t0 = find_nth_note(b, size, ph, nph, "IMGCR", 0x494d4306, 0, &l0);
		unsigned char *t1 = find_nth_note(b, size, ph, nph, "IMGCR", 0x494d4306, 1, &l1);
		done = t0 && t1 && l0 >= 4 && l1 >= 4;
		if (done)
			memcpy(t0, t1, 4);
	} else if (!strcmp(m, "threadrip")) {
		size_t len = 0;
		unsigned char *d = find_nth_note(b, size, ph, nph, "CORE", NT_PRSTATUS, 1, &len);
		uint64_t rip = 0xffffffff81000000ull;
		/* regs start at 112 in elf_prstatus; rip is regs[16] */
		done = d && len >= 112 + 17 * 8;
		if (done)
			memcpy(d + 112 + 16 * 8, &rip, sizeof(rip));
	} else if (!strcmp(m, "rseq64")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", 0x494d4301, &len);
		uint64_t rseq = 0;
		uint32_t l = 64;
		/* struct imgcr_task: rseq at 208, rseq_len at 216 */
		if (d && len >= 224)
			memcpy(&rseq, d + 208, sizeof(rseq));
		done = rseq != 0;
		if (done)
			memcpy(d + 216, &l, sizeof(l));
	} else if (!strncmp(m, "nset:", 5)) {
		char *p;
		uint32_t type = (uint32_t)strtoul(m + 5, &p, 16);
		size_t off = *p == ':' ? strtoul(p + 1, &p, 10) : 0;
		size_t w = *p == ':' ? strtoul(p + 1, &p, 10) : 0;
		uint64_t v = *p == ':' ? strtoull(p + 1, NULL, 0) : 0;
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", type, &len);

		done = d && (w == 1 || w == 2 || w == 4 || w == 8) && off + w <= len;
		if (done)
			memcpy(d + off, &v, w);	/* little-endian */
	} else if (!strncmp(m, "nretype:", 8)) {
		char *p;
		uint32_t from = (uint32_t)strtoul(m + 8, &p, 16);
		uint32_t to = *p == ':' ? (uint32_t)strtoul(p + 1, NULL, 16) : 0;
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", from, &len);

		/* the name "IMGCR\0" takes 8 bytes before the descriptor */
		done = d && to;
		if (done)
			((Elf64_Nhdr *)(d - 8 - sizeof(Elf64_Nhdr)))->n_type = to;
	} else if (!strcmp(m, "othervdso") || !strncmp(m, "vdso", 4)) {
		done = !damage_vdso(b, size, ph, nph, m);
	} else {
		outf(2, "corrupt: unknown mode %s\n", m);
		return 64;
	}
	if (!done) {
		outf(2, "corrupt: mode %s found nothing to damage\n", m);
		return 1;
	}
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0 || write(out, b, size) != (ssize_t)size || close(out)) {
		outf(2, "corrupt: %s: %s\n", argv[2], errname(errno));
		return 1;
	}
	return 0;
}
