/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IMGCR_IMG_DUMP_H
#define IMGCR_IMG_DUMP_H

#include <linux/fs.h>

#define IMGCR_DUMP_NAME "img_dump"

/* proc_hook.c: /proc/<pid>/dump */
int imgcr_proc_hook_init(const struct file_operations *fops);
void imgcr_proc_hook_exit(void);

/* proc_hook.c: the address of the kernel's hrtimer_nanosleep_restart */
extern unsigned long imgcr_hrtimer_nanosleep_restart;
extern unsigned long imgcr_do_restart_poll;
extern unsigned long imgcr_futex_wait_restart;
extern unsigned long imgcr_posix_cpu_nsleep_restart;
extern unsigned long imgcr_alarm_timer_nsleep_restart;

/* dump.c: the file behind /proc/<pid>/dump */
extern const struct file_operations imgcr_dump_fops;
/* dump.c: the exit probe that lets an open dump's pages go with its process */
int imgcr_dump_init(void);
void imgcr_dump_exit(void);

/*
 * dump_refusal.c: /proc/imgcr_refusal, why the reader's last open() of a
 * /proc/<pid>/dump was refused
 */
#define IMGCR_REFUSAL_MAX	256
int imgcr_refusal_init(void);
void imgcr_refusal_exit(void);
void imgcr_refusal_set(const char *reason);

#endif /* IMGCR_IMG_DUMP_H */
