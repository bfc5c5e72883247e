// SPDX-License-Identifier: GPL-2.0
/*
 * img_dump: /proc/<pid>/dump, the image of a stopped task.
 */
#include <linux/module.h>

#include "img_dump.h"

static int __init img_dump_init(void)
{
	int ret;

	ret = imgcr_dump_init();
	if (ret)
		return ret;
	ret = imgcr_refusal_init();
	if (ret) {
		imgcr_dump_exit();
		return ret;
	}
	ret = imgcr_proc_hook_init(&imgcr_dump_fops);
	if (ret) {
		imgcr_refusal_exit();
		imgcr_dump_exit();
	}
	return ret;
}

static void __exit img_dump_exit(void)
{
	imgcr_proc_hook_exit();
	imgcr_refusal_exit();
	imgcr_dump_exit();
}

module_init(img_dump_init);
module_exit(img_dump_exit);
MODULE_DESCRIPTION("imgcr: /proc/<pid>/dump checkpoint images of stopped tasks");
MODULE_AUTHOR("imgcr developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(IMGCR_VERSION);
