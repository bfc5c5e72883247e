/*
 * mkcore OUT: write a minimal but well-formed ELF64 x86-64 ET_CORE file
 * with one PT_NOTE holding a single "CORE"/NT_PRSTATUS note (all zero
 * registers) -- an ordinary core file without any imgcr notes, which
 * binfmt_img must refuse with ENOEXEC.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

#define PRSTATUS_SIZE 336   /* sizeof(struct elf_prstatus) on x86-64 */

int main(int argc, char **argv)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		Elf64_Nhdr nh;
		char name[8];                    /* "CORE\0" padded to 4 */
		unsigned char desc[PRSTATUS_SIZE];
	} __attribute__((packed)) f;

	if (argc != 2) {
		outf(2, "usage: mkcore OUT\n");
		return 64;
	}
	memset(&f, 0, sizeof(f));
	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_ident[EI_VERSION] = EV_CURRENT;
	f.eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	f.eh.e_type = ET_CORE;
	f.eh.e_machine = EM_X86_64;
	f.eh.e_version = EV_CURRENT;
	f.eh.e_phoff = sizeof(Elf64_Ehdr);
	f.eh.e_ehsize = sizeof(Elf64_Ehdr);
	f.eh.e_phentsize = sizeof(Elf64_Phdr);
	f.eh.e_phnum = 1;
	f.ph.p_type = PT_NOTE;
	f.ph.p_offset = offsetof(__typeof__(f), nh);
	f.ph.p_filesz = sizeof(f) - f.ph.p_offset;
	f.ph.p_align = 4;
	f.nh.n_namesz = 5;
	f.nh.n_descsz = PRSTATUS_SIZE;
	f.nh.n_type = NT_PRSTATUS;
	memcpy(f.name, "CORE", 5);

	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, &f, sizeof(f)) != (ssize_t)sizeof(f) || close(fd)) {
		outf(2, "mkcore: %s: %s\n", argv[1], errname(errno));
		return 1;
	}
	return 0;
}
