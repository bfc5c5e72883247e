/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checksum of a mapped file's first page (imgcr_file.head_crc): the
 * same computation where img_dump records it and where binfmt_img checks
 * it.
 */
#ifndef IMGCR_FILE_HEAD_H
#define IMGCR_FILE_HEAD_H

#include <linux/crc32.h>
#include <linux/fs.h>
#include <linux/slab.h>

/*
 * crc32_le(~0) of the first min(@size, PAGE_SIZE) bytes of @f into *@crc:
 * 0, -EIO if they cannot all be read, -ENOMEM.
 */
static inline int imgcr_file_head_crc(struct file *f, u64 size, u32 *crc)
{
	size_t n = min_t(u64, size, PAGE_SIZE);
	loff_t pos = 0;
	int ret = -EIO;
	char *buf;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (kernel_read(f, buf, n, &pos) == n) {
		*crc = crc32_le(~0, buf, n);
		ret = 0;
	}
	kfree(buf);
	return ret;
}

#endif /* IMGCR_FILE_HEAD_H */
