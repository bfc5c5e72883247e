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
 *   namesz     first note of every PT_NOTE: n_namesz = 0xffffffff
 *   descsz     first note of every PT_NOTE: n_descsz = 0xfffffff0
 * and two that keep the file well-formed but ask for what no loader here
 * can give:
 *   xfeatures  "LINUX" NT_X86_XSTATE note: set bit 62 (a state component
 *              no x86 CPU has) in XSTATE_BV, the u64 at offset 512
 *   version    "IMGCR" NT_IMGCR_TASK note: first u32 (format version) = 99
 *   auxv       "CORE" NT_AUXV note: no AT_NULL entry (every key AT_PAGESZ);
 *              readers of /proc/PID/auxv would scan past the vector
 * and, for images of multi-threaded processes:
 *   nthreads   "IMGCR" NT_IMGCR_PROC: nr_threads one more than the image has
 *   duptid     the first NT_IMGCR_THREAD gets the second one's TID
 *   threadrip  the second NT_PRSTATUS (the first thread after the main
 *              one): rip in the kernel's half of the address space
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
	} else if (!strcmp(m, "version")) {
		size_t len = 0;
		unsigned char *d = find_note(b, size, ph, nph, "IMGCR", 0x494d4301, &len);
		uint32_t v = 99;
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
