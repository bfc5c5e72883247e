// SPDX-License-Identifier: GPL-2.0
/*
 * Why an open() of /proc/<pid>/dump was refused, for the thread that
 * opened it.  A refusal fails the open with an errno (EOPNOTSUPP, EFBIG)
 * and no file, so the reason is kept here, keyed by the opening thread's
 * struct pid, and /proc/imgcr_refusal gives it to that thread alone, and
 * only while it has the same effective uid and has not executed another
 * program (its self_exec_id): a thread that dropped its privileges or
 * runs other code since finds nothing (the text may hold the target's
 * addresses).  The text names only what the opener could see itself once
 * it passed the access check (dump.h, dump_refuse()).  A reading takes the
 * reason away; one left unread is forgotten after REFUSAL_TTL, or when a
 * newer one needs its slot: an expired or empty slot first, else the
 * oldest of the same user's if it holds REFUSALS_PER_USER already, else
 * the oldest of all: one user's failing opens take at most
 * REFUSALS_PER_USER of the others' slots, however many it makes.  A failed open without a reason leaves an
 * empty one, so that an old reason is never taken for a new failure's.
 * The kernel log keeps its line (rate-limited, dump.h).
 */
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "img_dump.h"

#define IMGCR_REFUSALS		64
#define REFUSALS_PER_USER	4
#define REFUSAL_TTL		(60 * HZ)

struct refusal {
	struct pid *pid;		/* the opener thread's; referenced */
	kuid_t euid;			/* its effective uid then, */
	u64 exec_id;			/* and its self_exec_id */
	unsigned long when;		/* jiffies */
	char text[IMGCR_REFUSAL_MAX];
};

static struct refusal refusals[IMGCR_REFUSALS];
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

/* Under refusal_lock: the slot a new reason of @euid takes. */
static struct refusal *refusal_victim(kuid_t euid)
{
	struct refusal *oldest = NULL, *mine = NULL;
	unsigned int i, n = 0;

	for (i = 0; i < IMGCR_REFUSALS; i++) {
		struct refusal *r = &refusals[i];

		if (!r->pid || !time_before(jiffies, r->when + REFUSAL_TTL))
			return r;
		if (!oldest || time_before(r->when, oldest->when))
			oldest = r;
		if (uid_eq(r->euid, euid)) {
			n++;
			if (!mine || time_before(r->when, mine->when))
				mine = r;
		}
	}
	return n >= REFUSALS_PER_USER ? mine : oldest;
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
		r = refusal_victim(current_euid());
		old = r->pid;
		r->pid = pid;
		pid = NULL;
	}
	r->euid = current_euid();
	r->exec_id = current->self_exec_id;
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
		if (time_before(jiffies, r->when + REFUSAL_TTL) &&
		    uid_eq(r->euid, current_euid()) &&
		    r->exec_id == current->self_exec_id)
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
