// SPDX-License-Identifier: GPL-2.0
/*
 * Add "dump" to the stock /proc/<pid>/ directory without patching the kernel.
 *
 * The per-process directory is built from the static tgid_base_stuff[] table
 * in fs/proc/base.c, which a module cannot extend.  We put ftrace hooks on
 * the directory's two operations instead:
 *
 *  - lookup: when the name looked up is "dump", execution is redirected to
 *    dump_lookup(), which builds the inode with the kernel's own
 *    proc_pident_instantiate() from a module-owned pid_entry.  The inode
 *    thus gets exactly the semantics of its siblings: owner from
 *    task_dump_owner(), LSM labelling, pid_revalidate().
 *  - readdir: after the original has listed every entry, one more entry,
 *    "dump", is emitted so that ls shows it.
 *
 * A third hook, on proc_pid_status(), appends the seed design's
 * "Children:" line to /proc/<pid>/status.
 *
 * Unloading: the dentry is d_drop()ed right after it is made, so none is
 * cached, and every dump dentry holds a module reference until it dies
 * (see dump_set_dops()): an O_PATH descriptor of /proc/<pid>/dump, or an
 * open() between lookup and fops_get(), keeps the module loaded while an
 * inode pointing at our file_operations exists.  Threads still running a
 * replacement function are counted, and exit waits for them and for a
 * tasks-RCU grace period, after which no task can be executing our code.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/dcache.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "img_dump.h"
#include "ksyms.h"
#include "proc_private.h"

static unsigned long addr_proc_pident_instantiate;
static unsigned long addr_proc_tgid_base_readdir;
static unsigned long addr_proc_pid_status;

/*
 * only compared with a stopped thread's restart block (dump.c); without
 * it a sleep's restart block is dumped as EINTR, as before
 */
unsigned long imgcr_hrtimer_nanosleep_restart;
unsigned long imgcr_do_restart_poll;	/* the same for poll() */
unsigned long imgcr_futex_wait_restart;	/* and for futex waits */
unsigned long imgcr_posix_cpu_nsleep_restart;	/* CPU-clock sleeps */
unsigned long imgcr_alarm_timer_nsleep_restart;	/* alarm-clock sleeps */

static struct imgcr_ksym dump_ksyms[] = {
	{ "proc_pident_instantiate", &addr_proc_pident_instantiate },
	{ "proc_tgid_base_readdir", &addr_proc_tgid_base_readdir },
	{ "proc_pid_status", &addr_proc_pid_status },
	{ "hrtimer_nanosleep_restart", &imgcr_hrtimer_nanosleep_restart,
	  .optional = true },
	{ "do_restart_poll", &imgcr_do_restart_poll, .optional = true },
	{ "futex_wait_restart", &imgcr_futex_wait_restart, .optional = true },
	{ "posix_cpu_nsleep_restart", &imgcr_posix_cpu_nsleep_restart,
	  .optional = true },
	{ "alarm_timer_nsleep_restart", &imgcr_alarm_timer_nsleep_restart,
	  .optional = true },
};

static struct imgcr_pid_entry dump_entry = {
	.name = "dump",
	.len = 4,
	.mode = S_IFREG | 0400,
};

/* Entries in /proc/<pid>/ besides "." and "..", counted once at load. */
static loff_t tgid_nents;
static atomic_t hook_inflight = ATOMIC_INIT(0);

static bool is_dump_name(const struct dentry *dentry)
{
	return dentry->d_name.len == 4 && !memcmp(dentry->d_name.name, "dump", 4);
}

/*
 * The dentry operations of a dump dentry: the kernel's pid_dentry_operations,
 * copied from the first dentry proc_pident_instantiate() made, plus a
 * d_release that drops the module reference the dentry holds.
 */
static struct dentry_operations dump_dops;
static const struct dentry_operations *pid_dops;
static DEFINE_SPINLOCK(dump_dops_lock);

static void dump_d_release(struct dentry *dentry)
{
	module_put(THIS_MODULE);
}

/*
 * Hand the module reference the caller holds to @d, by giving it our
 * dentry operations (the same callbacks, so the DCACHE_OP_* flags that
 * d_set_d_op() derived stay right).  False if @d's operations are not the
 * ones we copied; the caller then keeps the reference forever.
 */
static bool dump_set_dops(struct dentry *d)
{
	const struct dentry_operations *ops = d->d_op;
	bool ok;

	spin_lock(&dump_dops_lock);
	if (!pid_dops && ops && !ops->d_release) {
		dump_dops = *ops;
		dump_dops.d_release = dump_d_release;
		pid_dops = ops;
	}
	ok = ops && ops == pid_dops;
	if (ok) {
		/* RCU path walkers read d->d_op locklessly: dump_dops first */
		smp_store_release(&d->d_op, &dump_dops);
	}
	spin_unlock(&dump_dops_lock);
	return ok;
}

static struct dentry *dump_lookup(struct inode *dir, struct dentry *dentry,
				  unsigned int flags)
{
	imgcr_instantiate_t instantiate =
		(imgcr_instantiate_t)addr_proc_pident_instantiate;
	struct task_struct *task;
	struct dentry *res = ERR_PTR(-ENOENT);

	task = get_pid_task(imgcr_proc_pid(dir), PIDTYPE_PID);
	/* no new dump inode once rmmod has begun */
	if (task && try_module_get(THIS_MODULE)) {
		res = instantiate(dentry, task, &dump_entry);
		if (IS_ERR(res)) {
			module_put(THIS_MODULE);
		} else {
			struct dentry *d = res ? res : dentry;

			if (!dump_set_dops(d))
				pr_info_once(IMGCR_DUMP_NAME ": unexpected proc dentry operations; module pinned\n");
			/* Never leave a cached dentry whose inode uses our fops. */
			d_drop(d);
		}
	}
	if (task)
		put_task_struct(task);
	atomic_dec(&hook_inflight);
	return res;
}

static int dump_readdir(struct file *file, struct dir_context *ctx)
{
	int (*orig)(struct file *file, struct dir_context *ctx) =
		(void *)addr_proc_tgid_base_readdir;
	int ret;

	ret = orig(file, ctx);
	if (!ret && ctx->pos == tgid_nents + 2) {
		if (dir_emit(ctx, "dump", 4, 1, DT_REG))
			ctx->pos++;
	}
	atomic_dec(&hook_inflight);
	return ret;
}

/*
 * "Children:" lists the children of all the task's threads, as
 * /proc/<pid>/task/<tid>/children do.  The children lists need
 * tasklist_lock, which is not exported; the process list is RCU-safe, so
 * we look for the processes whose parent is one of the task's threads.
 */
static void show_children(struct seq_file *m, struct pid_namespace *ns,
			  struct task_struct *task)
{
	struct task_struct *p;
	bool first = true;

	seq_puts(m, "Children:\t");
	rcu_read_lock();
	for_each_process(p) {
		struct task_struct *parent = rcu_dereference(p->real_parent);
		pid_t nr;

		if (p == task || !same_thread_group(parent, task))
			continue;
		nr = task_pid_nr_ns(p, ns);
		if (!nr)
			continue;
		seq_printf(m, first ? "%d" : " %d", nr);
		first = false;
	}
	rcu_read_unlock();
	seq_putc(m, '\n');
}

static int status_show(struct seq_file *m, struct pid_namespace *ns,
		       struct pid *pid, struct task_struct *task)
{
	int (*orig)(struct seq_file *m, struct pid_namespace *ns,
		    struct pid *pid, struct task_struct *task) =
		(void *)addr_proc_pid_status;
	int ret;

	ret = orig(m, ns, pid, task);
	if (!ret)
		show_children(m, ns, task);
	atomic_dec(&hook_inflight);
	return ret;
}

static void notrace lookup_hook(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	/* proc_tgid_base_lookup(dir, dentry, flags): dentry is in rsi */
	if (regs && is_dump_name((const struct dentry *)regs->si)) {
		atomic_inc(&hook_inflight);
		regs->ip = (unsigned long)dump_lookup;
	}
}

/* Redirect to @to, except our own call of the original. */
static void notrace wrap(unsigned long parent_ip, struct ftrace_regs *fregs,
			 void *to)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	if (regs && !within_module(parent_ip, THIS_MODULE)) {
		atomic_inc(&hook_inflight);
		regs->ip = (unsigned long)to;
	}
}

static void notrace readdir_hook(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	wrap(parent_ip, fregs, dump_readdir);
}

static void notrace status_hook(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	wrap(parent_ip, fregs, status_show);
}

#define HOOK_FLAGS (FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY | \
		    FTRACE_OPS_FL_RECURSION)

static struct ftrace_ops lookup_ops = { .func = lookup_hook, .flags = HOOK_FLAGS };
static struct ftrace_ops readdir_ops = { .func = readdir_hook, .flags = HOOK_FLAGS };
static struct ftrace_ops status_ops = { .func = status_hook, .flags = HOOK_FLAGS };

struct count_ctx {
	struct dir_context ctx;
	loff_t n;
};

static bool count_actor(struct dir_context *ctx, const char *name, int len,
			loff_t pos, u64 ino, unsigned int type)
{
	container_of(ctx, struct count_ctx, ctx)->n++;
	return true;
}

/* How many entries the stock /proc/<pid>/ has, so readdir knows its end. */
static int count_tgid_entries(void)
{
	struct count_ctx cc = { .ctx.actor = count_actor };
	struct file *f;
	int ret;

	f = filp_open("/proc/self", O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	ret = iterate_dir(f, &cc.ctx);
	filp_close(f, NULL);
	if (ret)
		return ret;
	if (cc.n < 3)
		return -EINVAL;
	tgid_nents = cc.n - 2;	/* "." and ".." */
	return 0;
}

static int hook(struct ftrace_ops *ops, const char *func)
{
	int ret;

	ret = ftrace_set_filter(ops, (unsigned char *)func, strlen(func), 0);
	if (ret) {
		pr_err(IMGCR_DUMP_NAME ": cannot attach to kernel function %s (%d)\n",
		       func, ret);
		return ret;
	}
	ret = register_ftrace_function(ops);
	if (ret) {
		pr_err(IMGCR_DUMP_NAME ": cannot attach to kernel function %s (%d): is it live-patched?\n",
		       func, ret);
		ftrace_free_filter(ops);
	}
	return ret;
}

static void unhook(struct ftrace_ops *ops)
{
	unregister_ftrace_function(ops);
	ftrace_free_filter(ops);
}

int imgcr_proc_hook_init(const struct file_operations *fops)
{
	int ret;

	ret = imgcr_ksyms_resolve(IMGCR_DUMP_NAME, dump_ksyms,
				  ARRAY_SIZE(dump_ksyms));
	if (ret)
		return ret;
	ret = count_tgid_entries();
	if (ret) {
		pr_err(IMGCR_DUMP_NAME ": cannot list /proc/self (%d)\n", ret);
		return ret;
	}
	dump_entry.fop = fops;

	ret = hook(&lookup_ops, "proc_tgid_base_lookup");
	if (ret)
		return ret;
	ret = hook(&readdir_ops, "proc_tgid_base_readdir");
	if (ret)
		goto out_lookup;
	ret = hook(&status_ops, "proc_pid_status");
	if (ret)
		goto out_readdir;
	return 0;
out_readdir:
	unhook(&readdir_ops);
out_lookup:
	unhook(&lookup_ops);
	return ret;
}

void imgcr_proc_hook_exit(void)
{
	unhook(&status_ops);
	unhook(&readdir_ops);
	unhook(&lookup_ops);
	/* No hook handler is still running after a grace period ... */
	synchronize_rcu();
	/* ... then wait for lookups and readdirs already redirected to us ... */
	while (atomic_read(&hook_inflight))
		msleep(20);
	/* ... and until none of them can still be on its way out. */
	synchronize_rcu_tasks();
}
