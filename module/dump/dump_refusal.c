// SPDX-License-Identifier: GPL-2.0
/*
 * Why an open() of /proc/<pid>/dump was refused, for the thread that
 * opened it.  A refusal fails the open with an errno (EOPNOTSUPP, EFBIG)
 * and no file, so the reason is kept here, keyed by the opening thread's
 * struct pid, and /proc/imgcr_refusal gives it to that thread alone: a
 * read by any other thread finds nothing.  The text names only what the
 * opener could see itself once it passed the access check (dump.h,
 * dump_refuse()).  A reading takes the reason away; one left unread is
 * forgotten after REFUSAL_TTL, or when IMGCR_REFUSALS newer ones need its
 * slot; a failed open without a reason leaves an empty one, so that an
 * old reason is never taken for a new failure's.  The kernel log keeps
 * its line as before.
 */
#include <linux/jiffies.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "img_dump.h"

#define IMGCR_REFUSALS	16
#define REFUSAL_TTL	(60 * HZ)

struct refusal {
	struct pid *pid;		/* the opener thread's; referenced */
	unsigned long when;		/* jiffies */
	char text[IMGCR_REFUSAL_MAX];
};

static struct refusal refusals[IMGCR_REFUSALS];
static unsigned int refusal_next;
static DEFINE_SPINLOCK(refusal_lock);
static struct proc_dir_entry *refusal_entry;

/* Under refusal_lock: the slot of @pid, or NULL. */
static struct refusal *refusal_find(struct pid *pid)
{
	unsigned int i;

	for (i = 0; i < IMGCR_REFUSALS; i++)
		if (refusals[i].pid == pid)
			return &refusals[i];
	return NULL;
}

/* The calling thread's open() was refused for @reason. */
void imgcr_refusal_set(const char *reason)
{
	struct pid *pid = get_task_pid(current, PIDTYPE_PID);
	struct pid *old = NULL;
	struct refusal *r;

	if (!pid)
		return;
	spin_lock(&refusal_lock);
	r = refusal_find(pid);
	if (!r) {
		r = &refusals[refusal_next];
		refusal_next = (refusal_next + 1) % IMGCR_REFUSALS;
		old = r->pid;
		r->pid = pid;
		pid = NULL;
	}
	r->when = jiffies;
	strscpy(r->text, reason, sizeof(r->text));
	spin_unlock(&refusal_lock);
	put_pid(old);
	put_pid(pid);	/* it had a slot already */
}

static int refusal_show(struct seq_file *m, void *v)
{
	struct pid *pid = get_task_pid(current, PIDTYPE_PID);
	char text[IMGCR_REFUSAL_MAX];
	struct pid *slot = NULL;
	struct refusal *r;

	text[0] = 0;
	spin_lock(&refusal_lock);
	r = pid ? refusal_find(pid) : NULL;
	if (r) {
		if (time_before(jiffies, r->when + REFUSAL_TTL))
			strscpy(text, r->text, sizeof(text));
		slot = r->pid;
		r->pid = NULL;
		r->text[0] = 0;
	}
	spin_unlock(&refusal_lock);
	put_pid(slot);
	put_pid(pid);
	if (text[0])
		seq_printf(m, "%s\n", text);
	return 0;
}

int imgcr_refusal_init(void)
{
	refusal_entry = proc_create_single("imgcr_refusal", 0444, NULL,
					   refusal_show);
	return refusal_entry ? 0 : -ENOMEM;
}

void imgcr_refusal_exit(void)
{
	unsigned int i;

	proc_remove(refusal_entry);
	for (i = 0; i < IMGCR_REFUSALS; i++) {
		put_pid(refusals[i].pid);
		refusals[i].pid = NULL;
	}
}
