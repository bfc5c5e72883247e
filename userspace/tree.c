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
 * The file is UTF-8/ASCII text, one record per line, fields separated by a
 * single space.  Lines starting with '#' and empty lines are ignored.  Text
 * fields (paths, comm) are escaped: every byte <= 0x20, >= 0x7f, and '%' is
 * written as %XX (two upper-case hex digits), so a field never contains a
 * space; an empty string is written as "%". Numbers are decimal except
 * FLAGS and UMASK (octal with a leading 0).  Records, in this order:
 *
 *   imgcr-tree 2                     first line: magic and format version
 *   root PID                         the task the dump started from
 *   task PID PPID PGID SID COMM      one per task, parents before children
 *   cred PID RUID EUID SUID FSUID RGID EGID SGID FSGID NGROUPS [GID...]
 *   fs PID UMASK CWD ROOT            cwd and root as seen by the dumper
 *   thread PID TID                   one per thread of task PID besides its
 *                                    main thread (whose tid is PID), after
 *                                    the task record, ascending TIDs
 *   rlimit PID NAME SOFT HARD        one per resource limit of task PID:
 *                                    NAME is cpu fsize data stack core rss
 *                                    nproc nofile memlock as locks
 *                                    sigpending msgqueue nice rtprio rttime
 *                                    (RLIMIT_*), SOFT and HARD decimal or
 *                                    "inf" (RLIM_INFINITY)
 *   oom PID ADJ                      /proc/PID/oom_score_adj
 *   sched PID POLICY RESET PRIO NICE scheduling policy (SCHED_* number),
 *                                    1 if SCHED_RESET_ON_FORK, static
 *                                    priority, nice value
 *   affinity PID CPUS                CPU affinity as a list ("0-3,6")
 *   ioprio PID VALUE                 I/O priority (ioprio_get(2) value:
 *                                    class << 13 | level)
 *   nnp PID 0|1                      PR_SET_NO_NEW_PRIVS (the main
 *                                    thread's; an image with credentials
 *                                    has each thread's, NT_IMGCR_CREDS)
 *   loginuid PID UID                 /proc/PID/loginuid (audit login uid;
 *                                    4294967295: unset)
 *   cwd-deleted PID                  the cwd of the fs record had been
 *                                    deleted: restored as a deleted
 *                                    directory at that path
 *   exit PID STATUS                  task PID is a zombie (dead, not yet
 *                                    reaped by its parent): it has no image
 *                                    and no thread or fd records; STATUS is
 *                                    its wait status as waitpid() gives it
 *                                    (code << 8, or the signal number, with
 *                                    0x80 if it dumped core)
 *   zombie-sig PID IGN CGT           after the exit record of zombie PID:
 *                                    its ignored and caught signals (hex
 *                                    masks, bit N-1 for signal N, as
 *                                    SigIgn and SigCgt in /proc/PID/status)
 *   stopped PID [SIG]                task PID was stopped by SIG (SIGSTOP,
 *                                    the default, SIGTSTP, SIGTTIN or
 *                                    SIGTTOU; not by the dump) at dump
 *                                    time: it is restored stopped by SIG
 *   ghost DEV INO SIZE MODE UID GID MTIME PATH
 *                                    a deleted regular file the tree holds
 *                                    open or maps (files-ghost.c)
 *   ghost-mapped DEV INO             after the ghost record DEV INO: an
 *                                    image maps it (or runs it)
 *   file ID KIND FLAGS POS ARGS...   one per open file description
 *   fown ID TYPE PID SIG             the F_SETOWN_EX owner (TYPE: 0 a
 *                                    thread, 1 a process, 2 a process
 *                                    group; PID 0: none) and F_SETSIG
 *                                    signal of "file" record ID (files.c)
 *   fstat ID DEV INO SIZE MTIME MNT  identity at dump of "file" record ID
 *                                    (files-reg.c)
 *   fd PID FD ID CLOEXEC             one per descriptor: FD of task PID
 *                                    refers to file ID; CLOEXEC is 0 or 1
 *   sk INO FAMILY TYPE PROTO STATE PEER BACKLOG SNDBUF RCVBUF OPTS RCVTIMEO
 *      SNDTIMEO PEEKOFF SHUT MODE UID GID QLEN NAME PEERNAME
 *                                    a socket (sockets.c; struct tree_sk):
 *                                    OPTS hex SKO_* bits, MODE octal, NAME
 *                                    and PEERNAME the sockaddr in hex or "-";
 *                                    SHUT: sk_shutdown (unix and UDP)
 *   skopt INO NAME VALUE             after the sk record INO, one per option
 *                                    of sk-opts.c's table that differs from
 *                                    a new socket's (SO_BROADCAST,
 *                                    TCP_KEEPIDLE...): VALUE decimal for an
 *                                    int, else the getsockopt bytes in hex
 *                                    ("-": none; SO_ATTACH_FILTER: the
 *                                    classic BPF instructions).  Older tree
 *                                    files have none.
 *   pipe INO SIZE LEN                buffered data of a pipe or FIFO: LEN
 *                                    bytes in pipe-INO.data, capacity SIZE
 *   tty INDEX MAJ:MIN SID FG LOCKED PKT IFLAG OFLAG CFLAG LFLAG CC ROWS COLS
 *       XPIXEL YPIXEL INLEN OUTLEN [MODE UID GID]
 *                                    a terminal the tree uses (tty.c); a
 *                                    pair's slave node's mode (octal) and
 *                                    owner (absent in older images)
 *   epitem ID PID TFD EVENTS DATA    an item of the epoll file ID: task PID
 *                                    registers it for its fd TFD (hex
 *                                    EVENTS and DATA with a leading 0x)
 *                                    (epoll.c)
 *   watch ID WD MASK PATH            a watch of the inotify file ID, with
 *                                    watch descriptor WD and MASK (hex,
 *                                    0x) on PATH (inotify.c)
 *   lock flock PID FD ID TYPE        file locks held by the tree (locks.c)
 *   lock ofd ID TYPE START END
 *   lock posix PID FD ID TYPE START END
 *
 * file records: ID counts from 0 in order.  FLAGS are the file status flags
 * from /proc/PID/fdinfo (access mode, O_APPEND, O_NONBLOCK, O_LARGEFILE...;
 * never O_CLOEXEC, which is per descriptor).  POS is the file offset.
 * Several fds (in one task or in several) refer to the same ID when they
 * share one open file description (kcmp(KCMP_FILE)); such fds share the
 * offset and flags after a restore too.  KIND and ARGS belong to one kind
 * of fd, in its own file (the table of kinds is in files.h), which
 * describes them at dump, writes and reads them here (rec_write,
 * rec_read), shows them (imgcr show) and opens them at restore:
 *   file PATH        regular file or directory, absolute path (files-reg.c)
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
 * priority are the main thread's (the dump refuses threads whose values
 * differ).  Other process state the kernel keeps across the exec of the
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
 * fstat records: what a restore compares before opening a "file" record
 * again: st_dev (decimal), st_ino, st_size, st_mtime in ns, and the mount
 * point MNT it was under (from mountinfo).  Directories: DEV and INO only.
 * Files on proc, sysfs, cgroup and the like have none.
 * A difference refuses the restore (imgcr restore --allow-changed-files
 * allows it).  A "file" record without one (older trees) is not checked.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/imgcr.h>

#include "attrs.h"
#include "files.h"
#include "log.h"
#include "tree.h"

const char *const tree_kind_names[TK_NR] = {
	"file", "pipe", "fifo", "chr", "eventfd", "signalfd", "timerfd", "tty",
	"epoll", "inotify", "memfd", "pidfd", "ghost", "sk",
};

const char *const tree_tty_role_names[TTY_NROLES] = { "master", "slave", "devtty", "job" };
const char *const tree_lock_names[TL_NR] = { "flock", "posix", "ofd" };

static void *grow(void *p, int n, size_t elem)
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

	t->tasks = grow(t->tasks, t->ntasks, sizeof(*t->tasks));
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
	task->threads = grow(task->threads, task->nthreads, sizeof(*task->threads));
	task->threads[task->nthreads++] = tid;
	return 0;
}

struct tree_file *tree_file_add(struct tree *t)
{
	struct tree_file *f;

	t->files = grow(t->files, t->nfiles, sizeof(*t->files));
	f = &t->files[t->nfiles];
	memset(f, 0, sizeof(*f));
	f->id = t->nfiles++;
	return f;
}

struct tree_pipe *tree_pipe_find(const struct tree *t, unsigned long ino)
{
	int i;

	for (i = 0; i < t->npipes; i++)
		if (t->pipes[i].ino == ino)
			return &t->pipes[i];
	return NULL;
}

struct tree_pipe *tree_pipe_add(struct tree *t, unsigned long ino)
{
	struct tree_pipe *p;

	t->pipes = grow(t->pipes, t->npipes, sizeof(*t->pipes));
	p = &t->pipes[t->npipes++];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	return p;
}

struct tree_tty *tree_tty_find(const struct tree *t, int index)
{
	int i;

	for (i = 0; i < t->nttys; i++)
		if (t->ttys[i].index == index)
			return &t->ttys[i];
	return NULL;
}

struct tree_tty *tree_tty_add(struct tree *t, int index)
{
	struct tree_tty *y;

	t->ttys = grow(t->ttys, t->nttys, sizeof(*t->ttys));
	y = &t->ttys[t->nttys++];
	memset(y, 0, sizeof(*y));
	y->index = index;
	return y;
}

struct tree_item *tree_item_add(struct tree *t, enum tree_item_kind kind, int file)
{
	struct tree_item *it;

	t->items = grow(t->items, t->nitems, sizeof(*t->items));
	it = &t->items[t->nitems++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->file = file;
	return it;
}

struct tree_ghost *tree_ghost_find(const struct tree *t, unsigned long long dev,
				   unsigned long long ino)
{
	int i;

	for (i = 0; i < t->nghosts; i++)
		if (t->ghosts[i].dev == dev && t->ghosts[i].ino == ino)
			return &t->ghosts[i];
	return NULL;
}

struct tree_ghost *tree_ghost_add(struct tree *t)
{
	struct tree_ghost *g;

	t->ghosts = grow(t->ghosts, t->nghosts, sizeof(*t->ghosts));
	g = &t->ghosts[t->nghosts++];
	memset(g, 0, sizeof(*g));
	return g;
}

struct tree_lock *tree_lock_add(struct tree *t)
{
	struct tree_lock *l;

	t->locks = grow(t->locks, t->nlocks, sizeof(*t->locks));
	l = &t->locks[t->nlocks++];
	memset(l, 0, sizeof(*l));
	return l;
}

struct tree_sk *tree_sk_find(const struct tree *t, unsigned long ino)
{
	int i;

	for (i = 0; i < t->nsks; i++)
		if (t->sks[i].ino == ino)
			return &t->sks[i];
	return NULL;
}

struct tree_sk *tree_sk_add(struct tree *t, unsigned long ino)
{
	struct tree_sk *s;

	t->sks = grow(t->sks, t->nsks, sizeof(*t->sks));
	s = &t->sks[t->nsks++];
	memset(s, 0, sizeof(*s));
	s->ino = ino;
	s->peek_off = -1;
	return s;
}

int tree_fd_add(struct tree_task *task, int fd, int file, int cloexec)
{
	task->fds = grow(task->fds, task->nfds, sizeof(*task->fds));
	task->fds[task->nfds].fd = fd;
	task->fds[task->nfds].file = file;
	task->fds[task->nfds].cloexec = cloexec;
	task->nfds++;
	return 0;
}

void tree_free(struct tree *t)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		free(t->tasks[i].groups);
		free(t->tasks[i].cwd);
		free(t->tasks[i].root);
		free(t->tasks[i].fds);
		free(t->tasks[i].threads);
		free(t->tasks[i].affinity);
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

/* A socket address as hex ("-": none), and back (its length, -1: malformed). */
static void hex_addr(char *out, const unsigned char *a, int len)
{
	int i;

	if (len <= 0) {
		strcpy(out, "-");
		return;
	}
	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", a[i]);
}

static int unhex_addr(unsigned char *a, const char *in)
{
	size_t len = strlen(in), i;
	unsigned int b;

	if (!strcmp(in, "-"))
		return 0;
	if (len % 2 || len / 2 > TREE_SK_ADDR || len < 4)
		return -1;
	for (i = 0; i < len / 2; i++) {
		if (sscanf(in + 2 * i, "%2x", &b) != 1)
			return -1;
		a[i] = b;
	}
	return len / 2;
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

int tree_write(const struct tree *t, const char *dir)
{
	char path[4096], e1[3 * 4096 + 4], e2[3 * 4096 + 4];
	FILE *f;
	int i, j;

	snprintf(path, sizeof(path), "%s/%s", dir, TREE_FILE);
	f = fopen(path, "we");
	if (!f) {
		pr_perror("cannot create %s", path);
		return -1;
	}
	fprintf(f, "imgcr-tree %d\n# see imgcr's userspace/tree.c for the format\n",
		TREE_VERSION);
	fprintf(f, "root %d\n", t->root);
	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		tree_escape(e1, sizeof(e1), k->comm);
		fprintf(f, "task %d %d %d %d %s\n", k->pid, k->ppid, k->pgid, k->sid, e1);
		fprintf(f, "cred %d %u %u %u %u %u %u %u %u %d", k->pid, k->uid[0],
			k->uid[1], k->uid[2], k->uid[3], k->gid[0], k->gid[1],
			k->gid[2], k->gid[3], k->ngroups);
		for (j = 0; j < k->ngroups; j++)
			fprintf(f, " %u", k->groups[j]);
		tree_escape(e1, sizeof(e1), k->cwd ? k->cwd : "/");
		tree_escape(e2, sizeof(e2), k->root ? k->root : "/");
		fprintf(f, "\nfs %d 0%03o %s %s\n", k->pid, k->umask, e1, e2);
		for (j = 0; j < k->nthreads; j++)
			fprintf(f, "thread %d %d\n", k->pid, k->threads[j]);
		attrs_write(f, k);
		if (k->zombie)
			fprintf(f, "exit %d %d\n", k->pid, k->exit_status);
		if (k->zombie && k->has_zsig)
			fprintf(f, "zombie-sig %d %llx %llx\n", k->pid, k->sig_ign, k->sig_cgt);
		if (k->stopped == SIGSTOP)
			fprintf(f, "stopped %d\n", k->pid);
		else if (k->stopped)
			fprintf(f, "stopped %d %d\n", k->pid, k->stopped);
	}
	for (i = 0; i < t->nghosts; i++) {
		const struct tree_ghost *g = &t->ghosts[i];

		tree_escape(e1, sizeof(e1), g->path);
		fprintf(f, "ghost %llu %llu %lld 0%o %u %u %lld %s\n", g->dev, g->ino, g->size,
			g->mode, g->uid, g->gid, g->mtime_ns, e1);
		if (g->mapped)
			fprintf(f, "ghost-mapped %llu %llu\n", g->dev, g->ino);
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];
		const struct fd_kind *fk;

		fprintf(f, "file %d %s 0%o %lld", x->id, tree_kind_names[x->kind],
			x->flags, x->pos);
		fk = fd_kind_of(x->kind);
		if (fk && fk->rec_write)
			fk->rec_write(f, x);
		fputc('\n', f);
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];

		if (!x->has_stat)
			continue;
		tree_escape(e1, sizeof(e1), x->mnt ? x->mnt : "/");
		fprintf(f, "fstat %d %llu %llu %lld %lld %s\n", x->id, x->dev, x->sino,
			x->size, x->mtime_ns, e1);
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *x = &t->files[i];

		if (x->own_pid || x->own_sig)
			fprintf(f, "fown %d %d %d %d\n", x->id, x->own_type, x->own_pid, x->own_sig);
	}
	for (i = 0; i < t->ntasks; i++)
		for (j = 0; j < t->tasks[i].nfds; j++)
			fprintf(f, "fd %d %d %d %d\n", t->tasks[i].pid, t->tasks[i].fds[j].fd,
				t->tasks[i].fds[j].file, t->tasks[i].fds[j].cloexec);
	for (i = 0; i < t->nsks; i++) {
		const struct tree_sk *s = &t->sks[i];
		char nm[2 * TREE_SK_ADDR + 2], pn[2 * TREE_SK_ADDR + 2];

		hex_addr(nm, s->name, s->namelen);
		hex_addr(pn, s->peername, s->peerlen);
		fprintf(f, "sk %lu %d %d %d %d %lu %d %d %d 0x%x %lld %lld %d %d 0%o %u %u %zu %s %s\n",
			s->ino, s->family, s->type, s->proto, s->state, s->peer, s->backlog,
			s->sndbuf, s->rcvbuf, s->opts, s->rcvtimeo_us, s->sndtimeo_us, s->peek_off,
			s->shutdown, s->mode, s->uid, s->gid, s->qlen, nm, pn);
		for (j = 0; j < s->nxopts; j++) {
			static char v[2 * 8 * 4096 + 2];

			if (sk_xopt_format(&s->xopts[j], v, sizeof(v)))
				snprintf(v, sizeof(v), "?");	/* never: the reader refuses it */
			fprintf(f, "skopt %lu %s %s\n", s->ino, sk_opt_name(s->xopts[j].idx), v);
		}
	}
	for (i = 0; i < t->npipes; i++)
		fprintf(f, "pipe %lu %u %zu\n", t->pipes[i].ino, t->pipes[i].size,
			t->pipes[i].len);
	for (i = 0; i < t->nttys; i++) {
		const struct tree_tty *y = &t->ttys[i];

		fprintf(f, "tty %d %u:%u %d %d %d %d 0%o 0%o 0%o 0%o ", y->index, y->major,
			y->minor, y->sid, y->fg, y->locked, y->pkt, y->iflag, y->oflag, y->cflag,
			y->lflag);
		for (j = 0; j < TREE_NCC; j++)
			fprintf(f, "%02x", y->cc[j]);
		fprintf(f, " %u %u %u %u %zu %zu", y->rows, y->cols, y->xpixel, y->ypixel,
			y->inlen, y->outlen);
		if (y->has_mode)
			fprintf(f, " 0%o %u %u", y->mode, y->uid, y->gid);
		fputc('\n', f);
	}
	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind == IT_EPOLL) {
			fprintf(f, "epitem %d %d %d 0x%x 0x%llx\n", it->file, it->pid, it->num,
				it->mask, it->data);
		} else {
			tree_escape(e1, sizeof(e1), it->path);
			fprintf(f, "watch %d %d 0x%x %s\n", it->file, it->num, it->mask, e1);
		}
	}
	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		fprintf(f, "lock %s ", tree_lock_names[l->kind]);
		if (l->kind != TL_OFD)
			fprintf(f, "%d %d ", l->pid, l->fd);
		fprintf(f, "%d %c", l->file, l->write ? 'w' : 'r');
		if (l->kind != TL_FLOCK)
			fprintf(f, " %lld %lld", l->start, l->end);
		fputc('\n', f);
	}
	if (fflush(f) || ferror(f)) {
		pr_perror("cannot write %s", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

#define MAXF 512
#define PID_MAX TREE_PID_MAX

static int split(char *line, char **v)
{
	int n = 0;
	char *s, *save = NULL;

	for (s = strtok_r(line, " \n", &save); s && n < MAXF; s = strtok_r(NULL, " \n", &save))
		v[n++] = s;
	return n;
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

int tree_read(struct tree *t, const char *dir)
{
	char path[4096], *line = NULL, *v[MAXF];
	size_t cap = 0;
	long long n[MAXF];
	int lineno = 0, nv, i, seen_magic = 0, bad;
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, TREE_FILE);
	f = fopen(path, "re");
	if (!f) {
		pr_perror("cannot open %s", path);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		struct tree_task *k;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		nv = split(line, v);
		if (!nv)
			continue;
		for (i = 1; i < nv; i++)
			if (tree_num(v[i], &n[i]))
				n[i] = -1;
#define BAD(why) do { pr_err("%s:%d: %s", path, lineno, why); goto fail; } while (0)
		if (!seen_magic) {
			if (strcmp(v[0], "imgcr-tree") || nv != 2)
				BAD("not an imgcr tree file");
			if (n[1] != TREE_VERSION)
				BAD("unknown tree format version");
			seen_magic = 1;
		} else if (!strcmp(v[0], "root") && nv == 2) {
			t->root = n[1];
		} else if (!strcmp(v[0], "task") && nv == 6) {
			if (n[1] <= 0 || n[1] > PID_MAX)
				BAD("bad task record");
			if (tree_find_tid(t, n[1]))
				BAD("task listed twice, or its pid is also a thread's tid");
			k = tree_task_add(t, n[1]);
			k->ppid = n[2];
			k->pgid = n[3];
			k->sid = n[4];
			char *c = tree_unescape(v[5]);

			snprintf(k->comm, sizeof(k->comm), "%s", c);
			free(c);
		} else if (!strcmp(v[0], "cred") && nv >= 11) {
			k = tree_find(t, n[1]);
			if (!k || n[10] < 0 || n[10] > 65536 || nv != 11 + n[10])
				BAD("bad cred record");
			for (i = 0; i < 4; i++) {
				k->uid[i] = n[2 + i];
				k->gid[i] = n[6 + i];
			}
			k->ngroups = n[10];
			k->groups = calloc(k->ngroups + 1, sizeof(*k->groups));
			for (i = 0; i < k->ngroups; i++)
				k->groups[i] = n[11 + i];
			k->has_cred = 1;
		} else if (!strcmp(v[0], "fs") && nv == 5) {
			k = tree_find(t, n[1]);
			if (!k || n[2] < 0)
				BAD("bad fs record");
			k->umask = n[2];
			k->cwd = tree_unescape(v[3]);
			k->root = tree_unescape(v[4]);
			k->has_fs = 1;
		} else if (!strcmp(v[0], "thread") && nv == 3) {
			k = tree_find(t, n[1]);
			if (!k || n[2] <= 0 || n[2] > PID_MAX || n[2] == n[1])
				BAD("bad thread record");
			if (tree_find_tid(t, n[2]))
				BAD("thread listed twice, or its tid is also a task's pid");
			if (k->nthreads && k->threads[k->nthreads - 1] > n[2])
				BAD("thread records of a task are not in ascending order");
			if (k->nthreads >= IMGCR_MAX_THREADS)
				BAD("more threads in one task than an image can hold");
			tree_thread_add(k, n[2]);
		} else if (attrs_read(nv > 1 ? tree_find(t, n[1]) : NULL, v, nv, &bad)) {
			if (bad)
				BAD("bad attribute record");
		} else if (!strcmp(v[0], "exit") && nv == 3) {
			k = tree_find(t, n[1]);
			if (!k || k->zombie || k->stopped || !tree_wait_status_ok(n[2]))
				BAD("bad exit record");
			k->zombie = 1;
			k->exit_status = n[2];
		} else if (!strcmp(v[0], "zombie-sig") && nv == 4) {
			char *e1, *e2;

			k = tree_find(t, n[1]);
			if (!k || !k->zombie || k->has_zsig)
				BAD("bad zombie-sig record");
			errno = 0;
			k->sig_ign = strtoull(v[2], &e1, 16);
			k->sig_cgt = strtoull(v[3], &e2, 16);
			if (errno || *e1 || *e2 || e1 == v[2] || e2 == v[3] ||
			    (k->sig_ign & k->sig_cgt) ||
			    ((k->sig_ign | k->sig_cgt) & ((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))))
				BAD("bad zombie-sig record");
			k->has_zsig = 1;
		} else if (!strcmp(v[0], "stopped") && (nv == 2 || nv == 3)) {
			k = tree_find(t, n[1]);
			if (!k || k->zombie || k->stopped ||
			    (nv == 3 && n[2] != SIGSTOP && n[2] != SIGTSTP && n[2] != SIGTTIN &&
			     n[2] != SIGTTOU))
				BAD("bad stopped record");
			k->stopped = nv == 3 ? n[2] : SIGSTOP;
		} else if (!strcmp(v[0], "file") && nv >= 5) {
			const struct fd_kind *fk;
			struct tree_file *x;
			const char *why;
			int kind;

			for (kind = 0; kind < TK_NR; kind++)
				if (!strcmp(v[2], tree_kind_names[kind]))
					break;
			if (kind == TK_NR)
				BAD("unknown file kind");
			if (n[1] != t->nfiles || n[3] < 0 || n[4] < 0)
				BAD("bad file record");
			x = tree_file_add(t);
			x->kind = kind;
			x->flags = n[3];
			x->pos = n[4];
			fk = fd_kind_of(kind);
			if (!fk || !fk->rec_read)
				BAD("file kind with no records");
			why = fk->rec_read(t, x, v + 5, n + 5, nv - 5);
			if (why)
				BAD(why);
			if (x->path && x->path[0] != '/')
				BAD("file path is not absolute");
		} else if (!strcmp(v[0], "fd") && nv == 5) {
			k = tree_find(t, n[1]);
			if (!k || n[2] < 0 || n[2] > 1 << 20 || n[3] < 0 || n[3] >= t->nfiles ||
			    (n[4] != 0 && n[4] != 1))
				BAD("bad fd record");
			for (i = 0; i < k->nfds; i++)
				if (k->fds[i].fd == n[2])
					BAD("fd listed twice");
			tree_fd_add(k, n[2], n[3], n[4]);
		} else if (!strcmp(v[0], "epitem") && nv == 6) {
			struct tree_item *it;
			unsigned long long ev, data;

			if (n[1] < 0 || n[1] >= t->nfiles || t->files[n[1]].kind != TK_EPOLL ||
			    !tree_find(t, n[2]) || n[3] < 0 || n[3] > 1 << 20 ||
			    tree_unum(v[4], &ev) || ev > 0xffffffffULL || tree_unum(v[5], &data))
				BAD("bad epitem record");
			it = tree_item_add(t, IT_EPOLL, n[1]);
			it->pid = n[2];
			it->num = n[3];
			it->mask = ev;
			it->data = data;
		} else if (!strcmp(v[0], "watch") && nv == 5) {
			struct tree_item *it;
			unsigned long long mask;

			if (n[1] < 0 || n[1] >= t->nfiles || t->files[n[1]].kind != TK_INOTIFY ||
			    n[2] <= 0 || tree_unum(v[3], &mask) || mask > 0xffffffffULL)
				BAD("bad watch record");
			it = tree_item_add(t, IT_WATCH, n[1]);
			it->num = n[2];
			it->mask = mask;
			it->path = tree_unescape(v[4]);
			if (it->path[0] != '/')
				BAD("watch path is not absolute");
		} else if (!strcmp(v[0], "ghost") && nv == 9) {
			struct tree_ghost *g;
			unsigned long long dev, ino;

			if (tree_unum(v[1], &dev) || tree_unum(v[2], &ino) || n[3] < 0 || n[4] < 0 ||
			    n[4] > 07777 || n[5] < 0 || n[6] < 0 || tree_ghost_find(t, dev, ino))
				BAD("bad ghost record");
			g = tree_ghost_add(t);
			g->dev = dev;
			g->ino = ino;
			g->size = n[3];
			g->mode = n[4];
			g->uid = n[5];
			g->gid = n[6];
			g->mtime_ns = n[7];
			g->path = tree_unescape(v[8]);
			if (g->path[0] != '/')
				BAD("ghost path is not absolute");
		} else if (!strcmp(v[0], "ghost-mapped") && nv == 3) {
			unsigned long long dev, ino;
			struct tree_ghost *g;

			if (tree_unum(v[1], &dev) || tree_unum(v[2], &ino) ||
			    !(g = tree_ghost_find(t, dev, ino)) || g->mapped)
				BAD("bad ghost-mapped record");
			g->mapped = 1;
		} else if (!strcmp(v[0], "fstat") && nv == 7) {
			struct tree_file *x = n[1] >= 0 && n[1] < t->nfiles ? &t->files[n[1]] : NULL;

			if (!x || x->kind != TK_FILE || x->has_stat || tree_unum(v[2], &x->dev) ||
			    tree_unum(v[3], &x->sino) || n[4] < 0)
				BAD("bad fstat record");
			x->has_stat = 1;
			x->size = n[4];
			x->mtime_ns = n[5];
			x->mnt = tree_unescape(v[6]);
		} else if (!strcmp(v[0], "fown") && nv == 5) {
			struct tree_file *x = n[1] >= 0 && n[1] < t->nfiles ? &t->files[n[1]] : NULL;

			if (!x || x->own_pid || x->own_sig || n[2] < F_OWNER_TID || n[2] > F_OWNER_PGRP ||
			    n[3] < 0 || n[3] >= TREE_PID_MAX || n[4] < 0 || n[4] > 64 ||
			    (!n[3] && !n[4]))
				BAD("bad fown record");
			x->own_type = n[2];
			x->own_pid = n[3];
			x->own_sig = n[4];
		} else if (!strcmp(v[0], "lock") && nv >= 4) {
			struct tree_lock *l = tree_lock_add(t);
			int a = 2;

			for (l->kind = 0; l->kind < TL_NR; l->kind++)
				if (!strcmp(v[1], tree_lock_names[l->kind]))
					break;
			if (l->kind == TL_NR || nv != (l->kind == TL_FLOCK ? 6 : l->kind == TL_OFD ? 6 : 8))
				BAD("bad lock record");
			if (l->kind != TL_OFD) {
				l->pid = n[2];
				l->fd = n[3];
				a = 4;
				k = tree_find(t, l->pid);
				for (i = 0; k && i < k->nfds && k->fds[i].fd != l->fd; i++)
					;
				if (!k || i == k->nfds || k->fds[i].file != n[a])
					BAD("lock record of an fd that has no fd record");
			}
			l->file = n[a];
			if (l->file < 0 || l->file >= t->nfiles || (strcmp(v[a + 1], "r") && strcmp(v[a + 1], "w")))
				BAD("bad lock record");
			l->write = !strcmp(v[a + 1], "w");
			if (l->kind != TL_FLOCK) {
				l->start = n[a + 2];
				l->end = n[a + 3];
				if (l->start < 0 || l->end < -1 || (l->end >= 0 && l->end < l->start))
					BAD("bad lock range");
			}
		} else if (!strcmp(v[0], "sk") && nv == 21) {
			struct tree_sk *s;

			if (n[1] <= 0 || tree_sk_find(t, n[1]) || n[2] <= 0 || n[2] > 255 ||
			    n[3] <= 0 || n[3] > 15 || n[4] < 0 || n[4] > 255 || n[5] < 0 ||
			    n[5] > 15 || n[6] < 0 || n[7] < 0 || n[8] < 0 || n[9] < 0 ||
			    n[10] < 0 || n[10] > SKO_ALL || n[11] < 0 || n[12] < 0 ||
			    n[13] < -1 || n[14] < 0 || n[14] > 3 || n[15] < 0 || n[15] > 07777 ||
			    n[16] < 0 || n[17] < 0 || n[18] < 0)
				BAD("bad sk record");
			s = tree_sk_add(t, n[1]);
			s->family = n[2];
			s->type = n[3];
			s->proto = n[4];
			s->state = n[5];
			s->peer = n[6];
			s->backlog = n[7];
			s->sndbuf = n[8];
			s->rcvbuf = n[9];
			s->opts = n[10];
			s->rcvtimeo_us = n[11];
			s->sndtimeo_us = n[12];
			s->peek_off = n[13];
			s->shutdown = n[14];
			s->mode = n[15];
			s->uid = n[16];
			s->gid = n[17];
			s->qlen = n[18];
			s->namelen = unhex_addr(s->name, v[19]);
			s->peerlen = unhex_addr(s->peername, v[20]);
			if (s->namelen < 0 || s->peerlen < 0)
				BAD("bad sk record address");
		} else if (!strcmp(v[0], "skopt") && nv == 4) {
			struct tree_sk *s = n[1] > 0 ? tree_sk_find(t, n[1]) : NULL;

			if (!s)
				BAD("skopt record before its sk record");
			if (sk_xopt_parse(s, v[2], v[3]))
				BAD("bad skopt record (an unknown or repeated option, or a bad value)");
		} else if (!strcmp(v[0], "pipe") && nv == 4) {
			struct tree_pipe *p;

			if (n[1] < 0 || n[2] < 0 || n[3] < 0 || n[3] > n[2] ||
			    tree_pipe_find(t, n[1]))
				BAD("bad pipe record");
			p = tree_pipe_add(t, n[1]);
			p->size = n[2];
			p->len = n[3];
		} else if (!strcmp(v[0], "tty") && (nv == 18 || nv == 21)) {
			struct tree_tty *y;
			unsigned int ma, mi;

			if (n[1] < -1 || n[1] >= 1 << 20 || tree_tty_find(t, n[1]) ||
			    sscanf(v[2], "%u:%u", &ma, &mi) != 2 || n[3] < 0 || n[4] < 0 ||
			    (n[5] != 0 && n[5] != 1) || (n[6] != 0 && n[6] != 1) ||
			    n[7] < 0 || n[8] < 0 || n[9] < 0 || n[10] < 0 ||
			    strlen(v[11]) != 2 * TREE_NCC || n[12] < 0 || n[12] > 65535 ||
			    n[13] < 0 || n[13] > 65535 || n[14] < 0 || n[14] > 65535 ||
			    n[15] < 0 || n[15] > 65535 || n[16] < 0 || n[17] < 0 ||
			    n[16] > 1 << 24 || n[17] > 1 << 24 || (n[1] < 0 && (n[16] || n[17])))
				BAD("bad tty record");
			y = tree_tty_add(t, n[1]);
			y->major = ma;
			y->minor = mi;
			y->sid = n[3];
			y->fg = n[4];
			y->locked = n[5];
			y->pkt = n[6];
			y->iflag = n[7];
			y->oflag = n[8];
			y->cflag = n[9];
			y->lflag = n[10];
			for (i = 0; i < TREE_NCC; i++) {
				unsigned int b;

				if (sscanf(v[11] + 2 * i, "%2x", &b) != 1)
					BAD("bad tty record");
				y->cc[i] = b;
			}
			y->rows = n[12];
			y->cols = n[13];
			y->xpixel = n[14];
			y->ypixel = n[15];
			y->inlen = n[16];
			y->outlen = n[17];
			if (nv == 21) {
				if (n[1] < 0 || n[18] < 0 || n[18] > 07777 || n[19] < 0 ||
				    n[19] > 0xfffffffeLL || n[20] < 0 || n[20] > 0xfffffffeLL)
					BAD("bad tty record");
				y->has_mode = 1;
				y->mode = n[18];
				y->uid = n[19];
				y->gid = n[20];
			}
		} else {
			BAD("unknown or malformed record");
		}
#undef BAD
	}
	if (!seen_magic) {
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
