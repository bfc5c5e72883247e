/* SPDX-License-Identifier: GPL-2.0 */
/* The description of a dumped process tree (DIR/tree); format in tree.c. */
#ifndef IMGCR_TREE_H
#define IMGCR_TREE_H

#include <stddef.h>
#include <sys/types.h>

#define TREE_FILE	"tree"
#define TREE_VERSION	2

/* tree_file.kind; each is dumped and restored by one fd kind (files.h) */
enum tree_kind {
	TK_FILE,	/* regular file or directory, reopened by path (files-reg.c) */
	TK_PIPE,	/* an end of an anonymous pipe (identity: the pipe inode) (pipes.c) */
	TK_FIFO,	/* a named pipe, reopened by path (fifo.c) */
	TK_CHR,		/* one of the standard character devices (devices.c) */
	TK_EVENTFD,	/* an eventfd, recreated (eventfd.c) */
	TK_SIGNALFD,	/* a signalfd, recreated (signalfd.c) */
	TK_TIMERFD,	/* a timerfd, recreated (timerfd.c) */
	TK_GHOST,	/* an open regular file that was deleted (files-ghost.c) */
	TK_NR
};

extern const char *const tree_kind_names[TK_NR];

/* One open file description (shared by every fd that refers to it). */
struct tree_file {
	int id;			/* index in tree.files */
	enum tree_kind kind;
	unsigned int flags;	/* f_flags as in fdinfo, without O_CLOEXEC */
	long long pos;
	unsigned long ino;	/* pipe/FIFO inode (the pipe's identity) */
	unsigned int major, minor;	/* TK_CHR */
	char *path;		/* TK_FILE, TK_FIFO, TK_CHR; NULL for TK_PIPE */
	/* the anon inodes' state */
	unsigned long long count;	/* TK_EVENTFD: the counter; TK_TIMERFD: ticks not read */
	int semaphore;			/* TK_EVENTFD: EFD_SEMAPHORE */
	unsigned long long sigmask;	/* TK_SIGNALFD: bit N-1 for signal N */
	int clockid;			/* TK_TIMERFD: its clock, */
	unsigned int settime_flags;	/* TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET, */
	long long value_ns, interval_ns;	/* time left (0: disarmed), period (0: one-shot) */
	/* where it was first seen (dump only), and its stat identity (TK_GHOST: its ghost) */
	int pid, fd;
	unsigned long long dev, sino;
	/* TK_FILE: fstat at dump, checked at restore ("fstat" record; has_stat) */
	int has_stat;
	long long size, mtime_ns;
	char *mnt;		/* the mount point it was on */
};

/* A deleted regular file, its content in DIR/ghost-DEV-INO.data (files-ghost.c). */
struct tree_ghost {
	unsigned long long dev, ino;	/* at dump: its identity, which TK_GHOST files name */
	long long size, mtime_ns;
	unsigned int mode, uid, gid;
	char *path;		/* where it was, without " (deleted)" */
	char *made;		/* restore: where the restorer recreated it (until unlinked), */
	int made_fd;		/* and its fd there */
};

/* A file lock held by the tree (locks.c). */
enum tree_lock_kind { TL_FLOCK, TL_POSIX, TL_OFD, TL_NR };
struct tree_lock {
	enum tree_lock_kind kind;
	int file;		/* the open file description (flock, OFD) or the one the task used (POSIX) */
	pid_t pid;		/* POSIX, flock: the task that takes it again, */
	int fd;			/* on this fd */
	int write;		/* F_WRLCK / LOCK_EX, else F_RDLCK / LOCK_SH */
	long long start, end;	/* byte range (POSIX, OFD), end -1: to EOF */
};

extern const char *const tree_lock_names[TL_NR];

struct tree_fd {
	int fd;
	int file;		/* index in tree.files */
	int cloexec;
};

struct tree_task {
	pid_t pid, ppid, pgid, sid;
	char comm[64];
	unsigned int uid[4], gid[4];	/* real, effective, saved, fs */
	int ngroups;
	unsigned int *groups;
	unsigned int umask;
	char *cwd, *root;
	int nfds;
	struct tree_fd *fds;
	int nthreads;		/* threads besides the main one (tid == pid) */
	pid_t *threads;		/* their tids, ascending */
	int has_cred, has_fs;
};

/* Buffered data of a pipe or FIFO, saved in DIR/pipe-<ino>.data. */
struct tree_pipe {
	unsigned long ino;
	unsigned int size;	/* F_GETPIPE_SZ */
	size_t len;		/* bytes of data */
};

struct tree {
	pid_t root;
	int ntasks, nfiles, npipes, nghosts, nlocks;
	struct tree_task *tasks;
	struct tree_file *files;
	struct tree_pipe *pipes;
	struct tree_ghost *ghosts;
	struct tree_lock *locks;
};

struct tree_task *tree_task_add(struct tree *t, pid_t pid);
struct tree_task *tree_find(const struct tree *t, pid_t pid);
/* The task that has @tid as its pid or as one of its threads' tids. */
struct tree_task *tree_find_tid(const struct tree *t, pid_t tid);
int tree_thread_add(struct tree_task *task, pid_t tid);
struct tree_file *tree_file_add(struct tree *t);
struct tree_pipe *tree_pipe_find(const struct tree *t, unsigned long ino);
struct tree_pipe *tree_pipe_add(struct tree *t, unsigned long ino);
struct tree_ghost *tree_ghost_find(const struct tree *t, unsigned long long dev,
				   unsigned long long ino);
struct tree_ghost *tree_ghost_add(struct tree *t);
struct tree_lock *tree_lock_add(struct tree *t);
int tree_fd_add(struct tree_task *task, int fd, int file, int cloexec);
void tree_free(struct tree *t);

/* DIR/tree: 0 or -1 (error printed). */
int tree_write(const struct tree *t, const char *dir);
int tree_read(struct tree *t, const char *dir);

/* Escaping of paths and names in the file: see tree.c. */
void tree_escape(char *out, size_t size, const char *in);

#endif
