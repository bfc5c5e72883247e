/*
 * imgpath IN OUT NEWPATH: copy image IN to OUT (mode 0755) with the path of
 * its first NT_IMGCR_FILES record replaced by NEWPATH (which must not be
 * longer than the old one, so the record layout stays valid).  Used to make
 * an image that names a FIFO or a device instead of a regular file.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common.h"
#include "../../include/uapi/linux/imgcr.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		outf(2, "usage: imgpath IN OUT NEWPATH\n");
		return 64;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		outf(2, "imgpath: %s: %s\n", argv[1], errname(errno));
		return 1;
	}
	size_t size = (size_t)st.st_size;
	unsigned char *b = malloc(size + 1);
	if (!b || read(fd, b, size) != (ssize_t)size || size < sizeof(Elf64_Ehdr))
		return 1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	if (eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > size)
		return 1;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
	size_t newlen = strlen(argv[3]) + 1;
	int done = 0;
	for (int i = 0; i < eh->e_phnum && !done; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset + ph[i].p_filesz > size)
			continue;
		for (size_t q = ph[i].p_offset, end = q + ph[i].p_filesz; q + 12 <= end;) {
			Elf64_Nhdr *n = (Elf64_Nhdr *)(b + q);
			size_t desc = q + 12 + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_IMGCR_FILES && desc + sizeof(struct imgcr_file) <= end) {
				struct imgcr_file *f = (struct imgcr_file *)(b + desc);
				if (newlen > f->path_len || desc + sizeof(*f) + f->path_len > end) {
					outf(2, "imgpath: new path longer than %s\n", f->path);
					return 1;
				}
				memset(f->path, 0, f->path_len);
				memcpy(f->path, argv[3], newlen);
				f->path_len = (uint32_t)newlen;
				done = 1;
				break;
			}
			q = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	if (!done) {
		outf(2, "imgpath: no file record\n");
		return 1;
	}
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0 || write(out, b, size) != (ssize_t)size || close(out))
		return 1;
	return 0;
}
