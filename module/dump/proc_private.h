/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private fs/proc layouts img_dump needs, copied from fs/proc/internal.h and
 * fs/proc/base.c.  They are identical in Debian's 6.1.192, 6.12.118 and
 * 7.2.13 (7.2: sysctl_entry became a const pointer, the same layout)
 * (CONFIG_RANDSTRUCT_NONE, so __randomize_layout does not reorder them);
 * re-check them for every new kernel series.
 */
#ifndef IMGCR_PROC_PRIVATE_H
#define IMGCR_PROC_PRIVATE_H

#include <linux/fs.h>
#include <linux/pid.h>

/*
 * struct proc_inode is __randomize_layout: with CONFIG_RANDSTRUCT_FULL or
 * _PERFORMANCE its members are in an order only the kernel's build knows,
 * and img_dump would read the wrong ones.  No such kernel is supported.
 */
#ifdef CONFIG_RANDSTRUCT
#error "img_dump needs fs/proc's private layouts: a kernel built with CONFIG_RANDSTRUCT is not supported"
#endif

union imgcr_proc_op {
	void *ptr;	/* proc_get_link / proc_show / lsm(id): pointer-sized */
};

struct imgcr_proc_inode {
	struct pid *pid;
	unsigned int fd;
	union imgcr_proc_op op;
	struct proc_dir_entry *pde;
	struct ctl_table_header *sysctl;
	struct ctl_table *sysctl_entry;
	struct hlist_node sibling_inodes;
	const struct proc_ns_operations *ns_ops;
	struct inode vfs_inode;
};

static inline struct pid *imgcr_proc_pid(const struct inode *inode)
{
	return container_of(inode, struct imgcr_proc_inode, vfs_inode)->pid;
}

struct imgcr_pid_entry {
	const char *name;
	unsigned int len;
	umode_t mode;
	const struct inode_operations *iop;
	const struct file_operations *fop;
	union imgcr_proc_op op;
};

typedef struct dentry *(*imgcr_instantiate_t)(struct dentry *dentry,
					       struct task_struct *task,
					       const void *ptr);

#endif /* IMGCR_PROC_PRIVATE_H */
