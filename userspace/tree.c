// SPDX-License-Identifier: GPL-2.0
/*
 * DIR/tree: the description of a dumped process tree.
 *
 * A dump directory holds
 *   tree                 this file
 *   core-<pid>.img       one image per task (/proc/<pid>/dump), mode 0700
 *   pipe-<ino>.data      the bytes buffered in pipe/FIFO <ino> at dump time
 *   tty-<index>.data     the bytes queued in pty pair <index> at dump time
 *   memfd-<ino>.data     the contents of memfd <ino> (as sparse as it was)
 *   sk-<ino>.data        the data queued in socket <ino> (frames: a 32-bit
 *                        length, host order, then the bytes; one per datagram)
 *   ghost-<dev>-<ino>.data  the content of deleted file <dev>:<ino> (a
 *                        sparse file: holes where the file had holes)
 *
 * The file is UTF-8/ASCII text, one record per line: its name, then its
 * fields as key=value separated by a single space (version 3; version 2,
 * the same records with positional fields, is still read: tree-v2.c).
 * Lines starting with '#' and empty lines are ignored.  Text fields
 * (paths, comm) are escaped: every byte <= 0x20, >= 0x7f, and '%' is
 * written as %XX (two upper-case hex digits), so a field never contains a
 * space; an empty string is written as "%". Numbers are decimal except
 * flags and umask (octal with a leading 0) and the hex ones (0x).
 * The records, their keys and their order: imgcr-image(5), "THE TREE
 * FILE", and the record table below (tree_records...), which names the
 * owner (the file) of each record.  Upper-case names below are the values
 * of the keys of the same name in lower case (as the man page writes
 * them).
 *
 * file records (id kind flags pos, then the kind's fields): ID counts from
 * 0 in order.  FLAGS are the file status flags from /proc/PID/fdinfo (access mode, O_APPEND, O_NONBLOCK, O_LARGEFILE...;
 * never O_CLOEXEC, which is per descriptor).  POS is the file offset.
 * Several fds (in one task or in several) refer to the same ID when they
 * share one open file description (kcmp(KCMP_FILE)); such fds share the
 * offset and flags after a restore too.  KIND and its fields belong to one
 * kind of fd, in its own file (the table of kinds is in files.h), which
 * describes them at dump, writes and reads them (rec_write, rec_read),
 * shows them (imgcr show) and opens them at restore:
 *   reg PATH         regular file or directory, absolute path (files-reg.c);
 *                    "file" in version 2 and in older version 3 files,
 *                    still read (imgcr show --json still says "file")
 *   pipe INO         an end of the anonymous pipe INO (FLAGS' access mode
 *                    says which end: O_RDONLY read, O_WRONLY write) (pipes.c)
 *   fifo INO PATH    a named pipe (INO names its data record) (fifo.c)
 *   chr MAJ:MIN PATH /dev/null, zero, full, random or urandom
 *                    (devices.c)
 *   eventfd COUNT SEM
 *                    an eventfd: its counter, and 1 if EFD_SEMAPHORE
 *                    (else 0) (eventfd.c)
 *   signalfd MASK    a signalfd: the signals it reads, MASK in hex with a
 *                    leading 0x, bit N-1 for signal N (signalfd.c)
 *   timerfd CLOCK SETFLAGS TICKS VALUE INTERVAL
 *                    a timerfd: its clock id, the flags of its last
 *                    timerfd_settime (octal: TFD_TIMER_ABSTIME 01,
 *                    TFD_TIMER_CANCEL_ON_SET 02), the expirations not yet
 *                    read, the time left until the next one in ns (0:
 *                    disarmed) and its period in ns (0: one-shot)
 *                    (timerfd.c)
 *   tty ROLE INDEX MAJ:MIN PATH
 *                    a terminal (tty.c).  ROLE: "master" (/dev/ptmx) or
 *                    "slave" (/dev/pts/N) of the pty pair INDEX of the tree
 *                    (the pts index at dump), "devtty" (/dev/tty: INDEX is
 *                    the pair of its terminal, -1 the job's terminal), or
 *                    "job": a terminal outside the tree (INDEX -1), dumped
 *                    and restored with --shell-job.  MAJ:MIN is the device
 *                    of the terminal (a pair's slave, 5:2 for a master),
 *                    PATH its path at dump (shown, not reopened).
 *   epoll            an epoll instance; its items are epitem records
 *                    (epoll.c)
 *   inotify          an inotify instance; its watches are watch records
 *                    (inotify.c)
 *   memfd INO SEALS SIZE PATH MODE UID GID
 *                    a memfd: its inode (its data is in memfd-INO.data;
 *                    every description of one INO is of one memfd), its
 *                    seals (F_GET_SEALS, hex with 0x), its size,
 *                    PATH "/memfd:NAME", NAME the name it was created
 *                    with, and its inode's mode (octal, leading 0) and
 *                    owner (absent in older images) (memfd.c)
 *   pidfd PID START  a pidfd to the process PID; START 0: a task of the
 *                    tree, else the start time of a process outside it
 *                    (clock ticks after boot, /proc/PID/stat field 22),
 *                    which must still run at restore (pidfd.c)
 *   ghost DEV INO    an open file description of the deleted file that
 *                    the ghost record DEV INO describes (files-ghost.c)
 *   sk INO           a socket; its "sk" record INO (sockets.c)
 * POS is 0 for eventfd, signalfd, timerfd, epoll, inotify and pidfd, which
 * have no path and no inode of their own: they are created anew.  The
 * kinds after timerfd, and the tty, epitem and watch records, were added to
 * version 2 without a version bump: a reader that does not know them
 * refuses the tree
 * ("unknown file kind"), which is all it could do.
 * pipe records and pipe-INO.data: pipes.c, for pipes and FIFOs.
 *
 * The attribute records (rlimit .. cwd-deleted, attrs.c) follow a task's
 * thread records.  Each is optional: a missing one leaves the attribute
 * as the restored task inherits it.  Scheduling, affinity and I/O
 * priority, the NUMA memory policy and speculation control are the main
 * thread's (the dump refuses threads whose values differ).  Other process state the kernel keeps across the exec of the
 * image (personality, parent-death signal, child subreaper, THP disable,
 * dumpable, membarrier registrations) is in the image, NT_IMGCR_PROC.
 * They were added to version 2 without a version bump, like the anon
 * inode kinds above.
 *
 * tty records, one per pty pair whose master is in the tree (INDEX: the
 * pts index at dump) and one with INDEX -1 for the terminal of a shell job
 * (--shell-job): MAJ:MIN the terminal's device; SID the session it is the
 * controlling terminal of and FG its foreground process group (0: none);
 * LOCKED (TIOCGPTLCK) and PKT (TIOCPKT) 0 or 1; the termios flags in
 * octal, CC the 19 bytes of c_cc in hex; the window size (TIOCGWINSZ);
 * INLEN bytes of input (written to the master, not yet read from the
 * slave) then OUTLEN bytes of output (written to the slave, not yet read
 * from the master) in tty-INDEX.data (both 0 for the job's terminal).
 *
 * ghost records: DEV and INO are the deleted file's st_dev and st_ino at
 * dump (decimal), SIZE its size, MODE its permission bits (octal), UID
 * and GID its owner, MTIME its st_mtime in ns, PATH where it was (without
 * " (deleted)").  Its bytes
 * are in ghost-DEV-INO.data at their offsets, holes left as holes (only
 * the data ranges SEEK_DATA/SEEK_HOLE find are written).  Every "ghost"
 * file record names one ghost record; several descriptions of one deleted
 * inode name the same one, and come back as one inode.  At restore it is
 * created at PATH if that name is free (else at a temporary name in the
 * same directory), opened by every description, and unlinked again.
 * A ghost-mapped one is a file an image maps (or its task's exe): its
 * image names it by PATH (IMGCR_FILE_DELETED) and checks its dev, size and
 * mtime, so restore creates it at PATH or fails if the name is taken, and
 * unlinks it only once every task has executed its image.
 *
 * fstat records: what a restore compares before opening a "reg" file
 * record again: st_dev (decimal), st_ino, st_size, st_mtime in ns, and the mount
 * point MNT it was under (from mountinfo).  Directories: DEV and INO only.
 * Files on proc, sysfs, cgroup and the like have none.
 * A difference refuses the restore (imgcr restore --allow-changed-files
 * allows it).  A "reg" file record without one (older trees) is not checked.
 *
 * lock records: TYPE is r (F_RDLCK / LOCK_SH) or w (F_WRLCK / LOCK_EX).
 * flock and ofd locks belong to the open file description ID; posix locks
 * to task PID, taken again by it on its fd FD (of file record ID).  A
 * flock lock is taken again by task PID on its fd FD too (the task that
 * took it if it is in the tree, else one that has it open), so that
 * /proc/locks names that task; an ofd lock by the restorer.  START
 * and END are the byte range, END -1 for "to the end of the file".
 * Leases are refused at dump.
 *
 * Every PID and TID of the tree is distinct: a restore recreates them all
 * (the threads' TIDs when core-PID.img is executed; the image lists them
 * too, and must agree).  At most IMGCR_MAX_THREADS thread records per task.
 * Version 2 added the thread records (version 1 trees come with version 1
 * images, which no longer load).  The exit and stopped records were added
 * to version 2 without a version bump, like the eventfd kinds: a reader
 * that does not know them refuses the tree ("unknown or malformed record").
 *
 * A reader must refuse a file whose version it does not know, and unknown
 * record keywords.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/imgcr.h>

#include "attrs.h"
#include "cgroup.h"
#include "files.h"
#include "locks.h"
#include "pipes.h"
#include "sockets.h"
#include "tty.h"
#include "log.h"
#include "record.h"
#include "ns.h"
#include "proc.h"
#include "tree.h"

const char *const tree_kind_names[TK_NR] = {
	"reg", "pipe", "fifo", "chr", "eventfd", "signalfd", "timerfd", "tty",
	"epoll", "inotify", "memfd", "pidfd", "ghost", "sk", "fanotify", "bpfmap",
};

/*
 * TK_REG was "file" (a name that also means any description: the record's
 * name) in version 2 and in version 3 until it became "reg": read forever,
 * and kept in imgcr show --json, whose "kind" values scripts compare.
 */
#define TK_REG_OLD_NAME	"file"

const char *tree_kind_json(enum tree_kind kind)
{
	return kind == TK_REG ? TK_REG_OLD_NAME : tree_kind_names[kind];
}

const char *const tree_tty_role_names[TTY_NROLES] = { "master", "slave", "devtty", "job" };

void *tree_grow(void *p, int n, size_t elem)
{
	/* grow to hold n + 1 elements (doubling) */
	if (n && (n & (n - 1)))
		return p;
	p = realloc(p, (size_t)(n ? 2 * n : 4) * elem);
	if (!p) {
		pr_err("out of memory");
		exit(1);
	}
	return p;
}

struct tree_task *tree_task_add(struct tree *t, pid_t pid)
{
	struct tree_task *task;

	t->tasks = tree_grow(t->tasks, t->ntasks, sizeof(*t->tasks));
	task = &t->tasks[t->ntasks++];
	memset(task, 0, sizeof(*task));
	task->pid = pid;
	return task;
}

struct tree_task *tree_find(const struct tree *t, pid_t pid)
{
	int i;

	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].pid == pid)
			return &t->tasks[i];
	return NULL;
}

int tree_group_kept(const struct tree *t, pid_t pgid)
{
	const struct tree_task *root = tree_find(t, t->root);
	int i;

	if (!root || pgid <= 0 || pgid == root->pgid || tree_find(t, pgid))
		return 0;
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].pgid == pgid)
			return 1;
	return 0;
}

int tree_session_kept(const struct tree *t, pid_t sid)
{
	const struct tree_task *root = tree_find(t, t->root);
	int i;

	if (!root || sid <= 0 || sid == root->sid || tree_find(t, sid))
		return 0;
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].sid == sid)
			return 1;
	return 0;
}

pid_t tree_session_parent(const struct tree *t, pid_t sid)
{
	pid_t p = 0;
	int i;

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i], *q;

		if (k->sid != sid || (p && k->ppid == p))
			continue;
		q = tree_find(t, k->ppid);
		if (!q || q->sid == sid)
			continue;
		if (p && p != q->pid)
			return -1;
		p = q->pid;
	}
	return p;
}

int tree_index(const struct tree *t, pid_t pid)
{
	int i;

	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].pid == pid)
			return i;
	return -1;
}

/* The vpid of the task or thread @pid, or 0 if it is not in the tree. */
static pid_t vpid_of(const struct tree *t, pid_t pid)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		if (k->pid == pid)
			return k->vpid ? k->vpid : k->pid;
		for (j = 0; j < k->nthreads; j++)
			if (k->threads[j] == pid)
				return k->vthreads ? k->vthreads[j] : pid;
	}
	return 0;
}

/*
 * The number in the tree's PID namespace of process group @pgid (host):
 * its leader's vpid, or the number recorded for a group that no task of
 * the tree leads (a keeper recreates it), or 0.
 */
static pid_t vpgid_of(const struct tree *t, pid_t pgid)
{
	pid_t v = vpid_of(t, pgid);
	int i;

	for (i = 0; !v && pgid > 0 && i < t->ntasks; i++)
		if (t->tasks[i].pgid == pgid && t->tasks[i].vpgid)
			v = t->tasks[i].vpgid;
	/* kept, with the same number inside and outside (no vpgid recorded) */
	if (!v && tree_group_kept(t, pgid))
		v = pgid;
	return v;
}

/* The same for session @sid: its leader's vpid, or the number recorded for a kept session, or 0. */
static pid_t vsid_of(const struct tree *t, pid_t sid)
{
	pid_t v = vpid_of(t, sid);
	int i;

	for (i = 0; !v && sid > 0 && i < t->ntasks; i++)
		if (t->tasks[i].sid == sid && t->tasks[i].vsid)
			v = t->tasks[i].vsid;
	/* kept, with the same number inside and outside (no vsid recorded) */
	if (!v && tree_session_kept(t, sid))
		v = sid;
	return v;
}

void tree_use_vpids(struct tree *t)
{
	struct tree v = *t;	/* the host pids, while t's are replaced */
	struct tree_task *host = calloc(t->ntasks + 1, sizeof(*host));
	int i, j;

	if (!host) {
		pr_err("out of memory");
		exit(1);
	}
	for (i = 0; i < t->ntasks; i++) {
		host[i] = t->tasks[i];
		host[i].threads = malloc((t->tasks[i].nthreads + 1) * sizeof(pid_t));
		if (!host[i].threads) {
			pr_err("out of memory");
			exit(1);
		}
		memcpy(host[i].threads, t->tasks[i].threads, t->tasks[i].nthreads * sizeof(pid_t));
	}
	v.tasks = host;
	t->root = vpid_of(&v, t->root);
	for (i = 0; i < t->ntasks; i++) {
		struct tree_task *k = &t->tasks[i];

		k->dump_pid = host[i].pid;
		k->pid = vpid_of(&v, host[i].pid);
		k->ppid = vpid_of(&v, host[i].ppid);
		k->pgid = vpgid_of(&v, host[i].pgid);
		k->vpgid = 0;
		k->sid = vsid_of(&v, host[i].sid);
		k->vsid = 0;
		for (j = 0; j < k->nthreads; j++)
			k->threads[j] = vpid_of(&v, host[i].threads[j]);
		k->vpid = 0;
		free(k->vthreads);
		k->vthreads = NULL;
	}
	for (i = 0; i < t->nfiles; i++) {
		struct tree_file *f = &t->files[i];

		if (f->kind == TK_PIDFD && !f->start)
			f->target = vpid_of(&v, f->target);
		if (f->own_pid)
			f->own_pid = f->own_type == F_OWNER_PGRP ? vpgid_of(&v, f->own_pid) :
				     vpid_of(&v, f->own_pid);
	}
	for (i = 0; i < t->nitems; i++)
		if (t->items[i].kind == IT_EPOLL)
			t->items[i].pid = vpid_of(&v, t->items[i].pid);
	for (i = 0; i < t->nlocks; i++)
		if (t->locks[i].pid)
			t->locks[i].pid = vpid_of(&v, t->locks[i].pid);
	for (i = 0; i < t->nttys; i++) {
		t->ttys[i].sid = t->ttys[i].sid ? vpid_of(&v, t->ttys[i].sid) : 0;
		t->ttys[i].fg = t->ttys[i].fg ? vpgid_of(&v, t->ttys[i].fg) : 0;
	}
	for (i = 0; i < t->ntasks; i++)
		free(host[i].threads);
	free(host);
}

struct tree_task *tree_find_tid(const struct tree *t, pid_t tid)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		if (t->tasks[i].pid == tid)
			return &t->tasks[i];
		for (j = 0; j < t->tasks[i].nthreads; j++)
			if (t->tasks[i].threads[j] == tid)
				return &t->tasks[i];
	}
	return NULL;
}

int tree_thread_add(struct tree_task *task, pid_t tid)
{
	task->threads = tree_grow(task->threads, task->nthreads, sizeof(*task->threads));
	if (task->vthreads) {
		task->vthreads = tree_grow(task->vthreads, task->nthreads, sizeof(*task->vthreads));
		task->vthreads[task->nthreads] = tid;
	}
	task->threads[task->nthreads++] = tid;
	return 0;
}

struct tree_file *tree_file_add(struct tree *t)
{
	struct tree_file *f;

	t->files = tree_grow(t->files, t->nfiles, sizeof(*t->files));
	f = &t->files[t->nfiles];
	memset(f, 0, sizeof(*f));
	f->id = t->nfiles++;
	return f;
}

struct tree_item *tree_item_add(struct tree *t, enum tree_item_kind kind, int file)
{
	struct tree_item *it;

	t->items = tree_grow(t->items, t->nitems, sizeof(*t->items));
	it = &t->items[t->nitems++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->file = file;
	return it;
}

int tree_fd_add(struct tree_task *task, int fd, int file, int cloexec)
{
	task->fds = tree_grow(task->fds, task->nfds, sizeof(*task->fds));
	task->fds[task->nfds].fd = fd;
	task->fds[task->nfds].file = file;
	task->fds[task->nfds].cloexec = cloexec;
	task->nfds++;
	return 0;
}

void tree_free(struct tree *t)
{
	int i, j;

	ns_tree_free(t);
	cgm_free(t);
	for (i = 0; i < t->ntasks; i++) {
		free(t->tasks[i].groups);
		free(t->tasks[i].cwd);
		free(t->tasks[i].root);
		free(t->tasks[i].fds);
		free(t->tasks[i].threads);
		free(t->tasks[i].vthreads);
		free(t->tasks[i].affinity);
		free(t->tasks[i].mpol_nodes);
	}
	for (i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		free(t->files[i].mnt);
	}
	for (i = 0; i < t->nitems; i++)
		free(t->items[i].path);
	for (i = 0; i < t->nghosts; i++) {
		free(t->ghosts[i].path);
		free(t->ghosts[i].made);
	}
	free(t->items);
	free(t->tasks);
	free(t->files);
	free(t->pipes);
	free(t->ttys);
	free(t->ghosts);
	free(t->locks);
	free(t->bpfmaps);
	for (i = 0; i < t->nsks; i++) {
		for (j = 0; j < t->sks[i].nxopts; j++)
			free(t->sks[i].xopts[j].val);
		free(t->sks[i].xopts);
	}
	free(t->sks);
	memset(t, 0, sizeof(*t));
}

int tree_wait_status_ok(long long st)
{
	int sig = st & 0x7f;

	if (st < 0 || st > 0xffff)
		return 0;
	if (!sig)
		return !(st & 0x80);		/* exited: code << 8 */
	return sig != 0x7f && sig <= 64 && !(st & 0xff00);	/* killed, maybe core */
}

void tree_escape(char *out, size_t size, const char *in)
{
	size_t o = 0;

	if (!*in && size > 1) {
		out[o++] = '%';
	}
	for (; *in && o + 4 < size; in++) {
		unsigned char c = *in;

		if (c <= 0x20 || c >= 0x7f || c == '%')
			o += snprintf(out + o, size - o, "%%%02X", c);
		else
			out[o++] = c;
	}
	out[o] = 0;
}

char *tree_unescape(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;

	if (!out) {
		pr_err("out of memory");
		exit(1);
	}
	if (!strcmp(in, "%")) {
		*out = 0;
		return out;
	}
	for (; *in; in++) {
		unsigned int c;

		if (*in == '%' && sscanf(in + 1, "%2X", &c) == 1 && in[1] && in[2]) {
			*o++ = (char)c;
			in += 2;
		} else {
			*o++ = *in;
		}
	}
	*o = 0;
	return out;
}

/* ---- the records of tasks, file descriptions and fds (the rest: their owners) ---- */

static void task_write(FILE *f, const struct tree *t)
{
	char e1[3 * 4096 + 4], e2[3 * 4096 + 4];
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		tree_escape(e1, sizeof(e1), k->comm);
		fprintf(f, "task pid=%d ppid=%d pgid=%d sid=%d comm=%s", k->pid, k->ppid, k->pgid,
			k->sid, e1);
		if (k->vpid && k->vpid != k->pid)
			fprintf(f, " vpid=%d", k->vpid);
		if (k->vpgid && k->vpgid != k->pgid)
			fprintf(f, " vpgid=%d", k->vpgid);
		if (k->vsid && k->vsid != k->sid)
			fprintf(f, " vsid=%d", k->vsid);
		fputc('\n', f);
		fprintf(f, "cred pid=%d ruid=%u euid=%u suid=%u fsuid=%u rgid=%u egid=%u sgid=%u fsgid=%u groups=",
			k->pid, k->uid[0], k->uid[1], k->uid[2], k->uid[3], k->gid[0], k->gid[1],
			k->gid[2], k->gid[3]);
		for (j = 0; j < k->ngroups; j++)
			fprintf(f, "%s%u", j ? "," : "", k->groups[j]);
		tree_escape(e1, sizeof(e1), k->cwd ? k->cwd : "/");
		tree_escape(e2, sizeof(e2), k->root ? k->root : "/");
		fprintf(f, "%s\nfs pid=%d umask=0%03o cwd=%s root=%s\n", k->ngroups ? "" : "-",
			k->pid, k->umask, e1, e2);
		for (j = 0; j < k->nthreads; j++) {
			fprintf(f, "thread pid=%d tid=%d", k->pid, k->threads[j]);
			if (k->vthreads && k->vthreads[j] != k->threads[j])
				fprintf(f, " vpid=%d", k->vthreads[j]);
			fputc('\n', f);
		}
		attrs_write(f, k);
		if (k->zombie)
			fprintf(f, "exit pid=%d status=%d\n", k->pid, k->exit_status);
		if (k->zombie && k->has_zsig)
			fprintf(f, "zombie-sig pid=%d ign=0x%llx cgt=0x%llx\n", k->pid, k->sig_ign,
				k->sig_cgt);
		if (k->stopped == SIGSTOP)
			fprintf(f, "stopped pid=%d\n", k->pid);	/* sig absent: SIGSTOP */
		else if (k->stopped)
			fprintf(f, "stopped pid=%d sig=%d\n", k->pid, k->stopped);
	}
}

static void root_write(FILE *f, const struct tree *t)
{
	fprintf(f, "root pid=%d\n", t->root);
}

static const char *root_read(struct tree *t, struct rec *r)
{
	return REC_NUM(r, "pid", INT32_MIN, INT32_MAX, t->root) ? "bad root record" : NULL;
}

static const char *task_read(struct tree *t, struct rec *r)
{
	struct tree_task *k;
	pid_t pid;
	char *c;

	if (REC_NUM(r, "pid", 1, TREE_PID_MAX, pid))
		return "bad task record";
	if (tree_find_tid(t, pid))
		return "task listed twice, or its pid is also a thread's tid";
	k = tree_task_add(t, pid);
	if (REC_NUM(r, "ppid", LLONG_MIN, LLONG_MAX, k->ppid) ||
	    REC_NUM(r, "pgid", LLONG_MIN, LLONG_MAX, k->pgid) ||
	    REC_NUM(r, "sid", LLONG_MIN, LLONG_MAX, k->sid) || rec_str(r, "comm", &c))
		return "bad task record";
	if ((rec_has(r, "vpid") && REC_NUM(r, "vpid", 1, TREE_PID_MAX, k->vpid)) ||
	    (rec_has(r, "vpgid") && REC_NUM(r, "vpgid", 1, TREE_PID_MAX, k->vpgid)) ||
	    (rec_has(r, "vsid") && REC_NUM(r, "vsid", 1, TREE_PID_MAX, k->vsid))) {
		free(c);
		return "bad task record";
	}
	snprintf(k->comm, sizeof(k->comm), "%s", c);
	free(c);
	return NULL;
}

/* the task of a record's "pid" field, or NULL */
static struct tree_task *rec_task(struct tree *t, struct rec *r)
{
	long long pid;

	return REC_NUM(r, "pid", LLONG_MIN, LLONG_MAX, pid) ? NULL : tree_find(t, pid);
}

static const char *cred_read(struct tree *t, struct rec *r)
{
	static const char *const ids[8] = { "ruid", "euid", "suid", "fsuid",
					    "rgid", "egid", "sgid", "fsgid" };
	struct tree_task *k = rec_task(t, r);
	const char *g = rec_val(r, "groups");
	int i;

	if (!k || !g || k->has_cred)
		return "bad cred record";
	for (i = 0; i < 4; i++)
		if (REC_NUM(r, ids[i], LLONG_MIN, LLONG_MAX, k->uid[i]) ||
		    REC_NUM(r, ids[4 + i], LLONG_MIN, LLONG_MAX, k->gid[i]))
			return "bad cred record";
	k->groups = calloc(strlen(g) / 2 + 2, sizeof(*k->groups));
	if (!k->groups) {
		pr_err("out of memory");
		exit(1);
	}
	if (strcmp(g, "-")) {
		char *dup = strdup(g), *s, *save = NULL;
		long long n;

		for (s = strtok_r(dup, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			if (tree_num(s, &n) || k->ngroups >= 65536) {
				free(dup);
				return "bad cred record";
			}
			k->groups[k->ngroups++] = n;
		}
		free(dup);
		if (!k->ngroups)
			return "bad cred record";
	}
	k->has_cred = 1;
	return NULL;
}

static const char *fs_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);

	if (!k || k->has_fs || REC_NUM(r, "umask", 0, UINT32_MAX, k->umask) ||
	    rec_str(r, "cwd", &k->cwd) || rec_str(r, "root", &k->root))
		return "bad fs record";
	k->has_fs = 1;
	return NULL;
}

static const char *thread_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);
	pid_t tid;

	if (!k || REC_NUM(r, "tid", 1, TREE_PID_MAX, tid) || tid == k->pid)
		return "bad thread record";
	if (tree_find_tid(t, tid))
		return "thread listed twice, or its tid is also a task's pid";
	if (k->nthreads && k->threads[k->nthreads - 1] > tid)
		return "thread records of a task are not in ascending order";
	if (k->nthreads >= IMGCR_MAX_THREADS)
		return "more threads in one task than an image can hold";
	if (rec_has(r, "vpid")) {
		pid_t v;

		if (REC_NUM(r, "vpid", 1, TREE_PID_MAX, v))
			return "bad thread record";
		if (!k->vthreads) {
			k->vthreads = calloc(k->nthreads + 1, sizeof(*k->vthreads));
			if (!k->vthreads)
				return "out of memory";
			memcpy(k->vthreads, k->threads, k->nthreads * sizeof(*k->threads));
		}
		tree_thread_add(k, tid);
		k->vthreads[k->nthreads - 1] = v;
		return NULL;
	}
	tree_thread_add(k, tid);
	return NULL;
}

static const char *exit_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);
	long long st;

	if (!k || k->zombie || k->stopped || REC_NUM(r, "status", LLONG_MIN, LLONG_MAX, st) ||
	    !tree_wait_status_ok(st))
		return "bad exit record";
	k->zombie = 1;
	k->exit_status = st;
	return NULL;
}

/* after the exit record of a zombie: its ignored and caught signals */
static const char *zombie_sig_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);
	const unsigned long long never = (1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1));

	if (!k || !k->zombie || k->has_zsig || rec_unum(r, "ign", &k->sig_ign) ||
	    rec_unum(r, "cgt", &k->sig_cgt) || (k->sig_ign & k->sig_cgt) ||
	    ((k->sig_ign | k->sig_cgt) & never))
		return "bad zombie-sig record";
	k->has_zsig = 1;
	return NULL;
}

/* sig: the stop signal, absent for SIGSTOP (older files have none) */
static const char *stopped_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);
	int sig = SIGSTOP;

	if (!k || k->zombie || k->stopped ||
	    (rec_has(r, "sig") && REC_NUM(r, "sig", 1, 64, sig)) ||
	    (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
		return "bad stopped record";
	k->stopped = sig;
	return NULL;
}

static void file_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];
		const struct fd_kind *fk;

		fprintf(f, "file id=%d kind=%s flags=0%o pos=%lld", x->id, tree_kind_names[x->kind],
			x->flags, x->pos);
		fk = fd_kind_of(x->kind);
		if (fk && fk->rec_write)
			fk->rec_write(f, x);
		fputc('\n', f);
	}
}

static const char *file_read(struct tree *t, struct rec *r)
{
	const struct fd_kind *fk;
	const char *kn = rec_val(r, "kind"), *why;
	struct tree_file *x;
	int kind;

	for (kind = 0; kn && kind < TK_NR; kind++)
		if (!strcmp(kn, tree_kind_names[kind]))
			break;
	if (kn && !strcmp(kn, TK_REG_OLD_NAME))
		kind = TK_REG;
	if (!kn || kind == TK_NR)
		return "unknown file kind";
	x = tree_file_add(t);
	x->kind = kind;
	if (REC_NUM(r, "id", x->id, x->id, x->id) ||
	    REC_NUM(r, "flags", 0, UINT32_MAX, x->flags) || REC_NUM(r, "pos", 0, LLONG_MAX, x->pos))
		return "bad file record";
	fk = fd_kind_of(kind);
	if (!fk || !fk->rec_read)
		return "file kind with no records";
	why = fk->rec_read(t, x, r);
	if (why)
		return why;
	if (x->path && x->path[0] != '/')
		return "file path is not absolute";
	return NULL;
}

/* the owner of a pipe's or socket's inode (its creator's fs ids): a root
 * restore gives it back */
static void fowner_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->nfiles; i++)
		if (t->files[i].has_owner)
			fprintf(f, "fowner id=%d uid=%u gid=%u\n", t->files[i].id,
				t->files[i].owner_uid, t->files[i].owner_gid);
}

static const char *fowner_read(struct tree *t, struct rec *r)
{
	struct tree_file *x;
	int id;

	if (REC_NUM(r, "id", 0, t->nfiles - 1, id))
		return "bad fowner record";
	x = &t->files[id];
	if ((x->kind != TK_PIPE && x->kind != TK_SK) || x->has_owner ||
	    REC_NUM(r, "uid", 0, 0xfffffffeLL, x->owner_uid) ||
	    REC_NUM(r, "gid", 0, 0xfffffffeLL, x->owner_gid))
		return "bad fowner record";
	x->has_owner = 1;
	return NULL;
}

/* the F_SETOWN_EX owner (type: F_OWNER_TID, _PID, _PGRP; pid 0: none) and
 * the F_SETSIG signal of a file description (files.c: fown_dump) */
static void fown_write(FILE *f, const struct tree *t)
{
	int i;

	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];

		if (x->own_pid || x->own_sig)
			fprintf(f, "fown id=%d type=%d pid=%d sig=%d\n", x->id, x->own_type,
				x->own_pid, x->own_sig);
	}
}

static const char *fown_read(struct tree *t, struct rec *r)
{
	struct tree_file *x;
	int id;

	if (REC_NUM(r, "id", 0, t->nfiles - 1, id))
		return "bad fown record";
	x = &t->files[id];
	if (x->own_pid || x->own_sig ||
	    REC_NUM(r, "type", F_OWNER_TID, F_OWNER_PGRP, x->own_type) ||
	    REC_NUM(r, "pid", 0, TREE_PID_MAX - 1, x->own_pid) ||
	    REC_NUM(r, "sig", 0, 64, x->own_sig) || (!x->own_pid && !x->own_sig))
		return "bad fown record";
	return NULL;
}

static void fd_write(FILE *f, const struct tree *t)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++)
		for (j = 0; j < t->tasks[i].nfds; j++)
			fprintf(f, "fd pid=%d fd=%d file=%d cloexec=%d\n", t->tasks[i].pid,
				t->tasks[i].fds[j].fd, t->tasks[i].fds[j].file,
				t->tasks[i].fds[j].cloexec);
}

static const char *fd_read(struct tree *t, struct rec *r)
{
	struct tree_task *k = rec_task(t, r);
	int fd, file, cloexec, i;

	if (!k || REC_NUM(r, "fd", 0, 1 << 20, fd) || REC_NUM(r, "file", 0, t->nfiles - 1, file) ||
	    REC_NUM(r, "cloexec", 0, 1, cloexec))
		return "bad fd record";
	for (i = 0; i < k->nfds; i++)
		if (k->fds[i].fd == fd)
			return "fd listed twice";
	tree_fd_add(k, fd, file, cloexec);
	return NULL;
}

static const struct tree_record tree_records[] = {
	{ "root", root_read, root_write, NULL },
	{ "task", task_read, task_write, NULL },	/* and the records of each task: */
	{ "cred", cred_read, NULL, NULL },
	{ "fs", fs_read, NULL, NULL },
	{ "thread", thread_read, NULL, NULL },
	{ "exit", exit_read, NULL, NULL },
	{ "zombie-sig", zombie_sig_read, NULL, NULL },
	{ "stopped", stopped_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};
static const struct tree_record file_records[] = {
	{ "file", file_read, file_write, NULL },
	{ "fowner", fowner_read, fowner_write, NULL },
	{ "fown", fown_read, fown_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
static const struct tree_record fd_records[] = {
	{ "fd", fd_read, fd_write, NULL },
	{ NULL, NULL, NULL, NULL }
};

/*
 * The record table: every record name of the tree file and its owner,
 * each table a NULL-terminated array of struct tree_record (record.h).
 * The writer writes them in this order (a reader relies on it: a record
 * names only records before it), the reader dispatches each line by its
 * name.  The format (version 3) is documented in imgcr-image(5), section
 * "TREE FILE"; in short: one record per line, "NAME key=value ...":
 *
 *   root pid                       (here, tree.c)
 *   task pid ppid pgid sid comm, then its cred, fs, thread, attribute
 *     (attrs.c: rlimit oom sched affinity ioprio nnp loginuid
 *     coredump mempolicy spec cwd-deleted), exit, zombie-sig and stopped records
 *   ghost, ghost-mapped            deleted files (files-ghost.c)
 *   bpfmap                         bpf maps, before their files (bpfmap.c)
 *   file id kind flags pos + the kind's fields (files.h: rec_write, rec_read)
 *   fowner, fown                   a file's inode owner, its F_SETOWN owner (tree.c)
 *   fstat                          a regular file's identity (files-reg.c)
 *   fd pid fd file cloexec         (tree.c)
 *   sk, skopt, skq                 sockets (sockets.c), fds in flight (sk-queue.c)
 *   sknl; skpkt, skpktmc           netlink (sk-netlink.c), packet sockets (sk-packet.c)
 *   pipe                           pipe/FIFO data (pipes.c)
 *   tty                            terminals (tty.c)
 *   epitem                         epoll items (epoll.c)
 *   watch                          inotify watches (inotify.c)
 *   lock                           file locks (locks.c)
 *
 * Adding a field to one record: its writer (a " key=%d" in the owner's
 * fprintf), its reader (one REC_NUM / rec_str / rec_unum), its show (the
 * owner's show hook or rec_show / rec_json), all in the owner's file, and
 * imgcr-image(5).
 * A field an older reader does not know makes it refuse the file ("unknown
 * field"), as an unknown record does: a new field whose absence means the
 * old behaviour must not be written when it has its default value, and
 * the reader takes its absence as that default (rec_has).  A field whose
 * meaning changes needs a version bump.
 * Adding a record: its owner's table and an entry here.
 */
static const struct tree_record *const record_tables[] = {
	tree_records, ns_records, userns_records, ipc_records, mnt_records, net_records, cgroup_records,
	attrs_records, ghost_records, bpfmap_records, file_records, reg_records, fd_records,
	sk_records, nl_records, pkt_records, pipe_records, tty_records, epoll_records, inotify_records, locks_records,
	fanotify_records, cgm_records,
};
#define NTABLES (sizeof(record_tables) / sizeof(record_tables[0]))

const struct tree_record *tree_record_find(const char *name)
{
	const struct tree_record *rt;
	size_t i;

	for (i = 0; i < NTABLES; i++)
		for (rt = record_tables[i]; rt->name; rt++)
			if (!strcmp(rt->name, name))
				return rt;
	return NULL;
}

int tree_write(const struct tree *t, const char *dir)
{
	const struct tree_record *rt;
	char path[4096];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", dir, TREE_FILE);
	f = img_fcreate(path);
	if (!f) {
		pr_perror("cannot create %s", path);
		return -1;
	}
	fprintf(f, "imgcr-tree %d\n# see imgcr-image(5) for the format\n", TREE_VERSION);
	for (i = 0; i < NTABLES; i++)
		for (rt = record_tables[i]; rt->name; rt++)
			if (rt->write)
				rt->write(f, t);
	if (fflush(f) || ferror(f)) {
		pr_perror("cannot write %s", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

int tree_num(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	return errno || !*s || *end ? -1 : 0;
}

int tree_unum(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *s < '0' || *s > '9' || *end ? -1 : 0;
}

const char *rec_val(struct rec *r, const char *key)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key)) {
			r->used[i] = 1;
			return r->val[i];
		}
	return NULL;
}

int rec_has(const struct rec *r, const char *key)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return 1;
	return 0;
}

int rec_num_to(struct rec *r, const char *key, long long min, long long max, void *dst,
	       size_t size)
{
	const char *v = rec_val(r, key);
	long long n;

	if (!v || tree_num(v, &n) || n < min || n > max)
		return -1;
	/* and what the field holds, signed or not: never a silent wrap */
	if (size < 8 && (n < -(1LL << (8 * size - 1)) || n > (1LL << (8 * size)) - 1))
		return -1;
	switch (size) {
	case 1: *(int8_t *)dst = n; break;
	case 2: *(int16_t *)dst = n; break;
	case 4: *(int32_t *)dst = n; break;
	default: *(int64_t *)dst = n; break;
	}
	return 0;
}

int rec_unum(struct rec *r, const char *key, unsigned long long *out)
{
	const char *v = rec_val(r, key);

	return v ? tree_unum(v, out) : -1;
}

int rec_dev(struct rec *r, const char *key, unsigned int *maj, unsigned int *min)
{
	const char *v = rec_val(r, key);
	char end;

	return v && sscanf(v, "%u:%u%c", maj, min, &end) == 2 ? 0 : -1;
}

int rec_str(struct rec *r, const char *key, char **out)
{
	const char *v = rec_val(r, key);

	if (!v)
		return -1;
	*out = tree_unescape(v);
	return 0;
}

/* A version 3 line (modified) into @r: NULL, or what is wrong. */
static const char *split_v3(char *line, struct rec *r)
{
	char *s, *eq, *save = NULL;
	int i;

	r->name = strtok_r(line, " \n", &save);
	r->n = 0;
	for (s = strtok_r(NULL, " \n", &save); s; s = strtok_r(NULL, " \n", &save)) {
		eq = strchr(s, '=');
		if (!eq || eq == s || r->n >= REC_MAXF)
			return "malformed field (not key=value)";
		*eq = 0;
		for (i = 0; i < r->n; i++)
			if (!strcmp(r->key[i], s))
				return "a field given twice";
		r->key[r->n] = s;
		r->val[r->n] = eq + 1;
		r->used[r->n++] = 0;
	}
	return NULL;
}

static int tree_read_file(struct tree *t, FILE *f, const char *path);

int tree_read(struct tree *t, const char *dir)
{
	char path[4096];
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, TREE_FILE);
	f = fopen(path, "re");
	if (!f) {
		pr_perror("cannot open %s", path);
		return -1;
	}
	return tree_read_file(t, f, path);
}

int tree_read_at(struct tree *t, int dirfd, const char *dir)
{
	char path[4096];
	int fd = dir_open(dirfd, TREE_FILE, O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, TREE_FILE);
	if (!f) {
		pr_perror("cannot open %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return tree_read_file(t, f, path);
}

static int tree_read_file(struct tree *t, FILE *f, const char *path)
{
	static struct rec r;
	char *line = NULL, *s, *save = NULL;
	size_t cap = 0;
	int lineno = 0, i, version = 0;

	while (getline(&line, &cap, f) > 0) {
		const struct tree_record *rt;
		const char *why;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
#define BAD(why) do { pr_err("%s:%d: %s", path, lineno, why); goto fail; } while (0)
		if (!version) {
			long long n;

			s = strtok_r(line, " \n", &save);
			if (!s)
				continue;
			if (strcmp(s, "imgcr-tree") || !(s = strtok_r(NULL, " \n", &save)) ||
			    strtok_r(NULL, " \n", &save))
				BAD("not an imgcr tree file");
			if (tree_num(s, &n) || (n != TREE_VERSION && n != 2))
				BAD("unknown tree format version");
			version = n;
			continue;
		}
		why = version == 2 ? tree_v2_split(line, &r) : split_v3(line, &r);
		if (why)
			BAD(why);
		if (!r.name)
			continue;
		rt = tree_record_find(r.name);
		if (!rt)
			BAD("unknown or malformed record");
		why = rt->read(t, &r);
		if (why)
			BAD(why);
		for (i = 0; i < r.n; i++)
			if (!r.used[i]) {
				pr_err("%s:%d: unknown field %s in a %s record", path, lineno, r.key[i],
				       r.name);
				goto fail;
			}
#undef BAD
	}
	if (!version) {
		pr_err("%s: empty tree file", path);
		goto fail;
	}
	if (!tree_find(t, t->root)) {
		pr_err("%s: the root task %d is not listed", path, t->root);
		goto fail;
	}
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		if (!k->has_cred || !k->has_fs) {
			pr_err("%s: task %d has no cred or fs record", path, k->pid);
			goto fail;
		}
		if (k->zombie && (k->nthreads || k->nfds || k->pid == t->root)) {
			pr_err("%s: zombie %d has threads or fds, or is the root", path, k->pid);
			goto fail;
		}
	}
	free(line);
	fclose(f);
	return 0;
fail:
	free(line);
	fclose(f);
	tree_free(t);
	return -1;
}
