/* SPDX-License-Identifier: GPL-2.0 */
/* The description of a dumped process tree (DIR/tree); format in tree.c. */
#ifndef IMGCR_TREE_H
#define IMGCR_TREE_H

#include <stddef.h>
#include <sys/types.h>

#define TREE_FILE	"tree"
#define TREE_VERSION	3	/* written; version 2 is still read (tree-v2.c) */

/* tree_file.kind; each is dumped and restored by one fd kind (files.h) */
enum tree_kind {
	TK_REG,		/* regular file or directory, reopened by path (files-reg.c);
			 * "file kind=reg" in the tree file, and "kind=file" read too
			 * (version 2, and version 3 before it was renamed); imgcr show
			 * --json's "kind" says "file" (tree_kind_json) */
	TK_PIPE,	/* an end of an anonymous pipe (identity: the pipe inode) (pipes.c) */
	TK_FIFO,	/* a named pipe, reopened by path (fifo.c) */
	TK_CHR,		/* one of the standard character devices (devices.c) */
	TK_EVENTFD,	/* an eventfd, recreated (eventfd.c) */
	TK_SIGNALFD,	/* a signalfd, recreated (signalfd.c) */
	TK_TIMERFD,	/* a timerfd, recreated (timerfd.c) */
	TK_TTY,		/* a terminal: pty master/slave, /dev/tty, a shell job's (tty.c) */
	TK_EPOLL,	/* an epoll instance; its items: tree_item (epoll.c) */
	TK_INOTIFY,	/* an inotify instance; its watches: tree_item (inotify.c) */
	TK_MEMFD,	/* a memfd, recreated with its data (memfd.c) */
	TK_PIDFD,	/* a pidfd, to a task of the tree or one outside it (pidfd.c) */
	TK_GHOST,	/* an open regular file that was deleted (files-ghost.c) */
	TK_SK,		/* a socket; its state: tree_sk (sk-unix.c, sk-inet.c) */
	TK_FANOTIFY,	/* a fanotify group; its marks: tree_item (fanotify.c) */
	TK_BPFMAP,	/* a bpf map fd (ino: the map's id at the dump; the map: tree_bpfmap, bpfmap.c) */
	TK_NR
};

/* the kind's name in the tree file's "file" records (kind=NAME) and in messages */
extern const char *const tree_kind_names[TK_NR];
/* ... and in imgcr show --json ("kind"): the same but TK_REG's, "file" (JSON format 1) */
const char *tree_kind_json(enum tree_kind kind);

#define TREE_NLIMITS	16	/* RLIMIT_CPU .. RLIMIT_RTTIME */
#define ATTR_RLIMIT(r)	(1u << (r))	/* the rlimit record of resource r */
#define ATTR_OOM	(1u << 16)
#define ATTR_SCHED	(1u << 17)
#define ATTR_AFFINITY	(1u << 18)
#define ATTR_IOPRIO	(1u << 19)
#define ATTR_NNP	(1u << 20)
#define ATTR_LOGINUID	(1u << 21)
#define ATTR_COREDUMP	(1u << 22)
#define ATTR_MEMPOLICY	(1u << 23)
#define ATTR_SPEC_SSB	(1u << 24)
#define ATTR_SPEC_IB	(1u << 25)
/* TK_TTY: what the file is on its terminal (tty.c) */
enum tree_tty_role {
	TTY_MASTER,	/* /dev/ptmx: the master of a pty pair in the tree */
	TTY_SLAVE,	/* /dev/pts/N: the slave of a pty pair in the tree */
	TTY_DEVTTY,	/* /dev/tty: the controlling terminal, a pair's or the job's */
	TTY_JOB,	/* a terminal outside the tree (--shell-job) */
	TTY_NROLES
};

extern const char *const tree_tty_role_names[TTY_NROLES];

/* One open file description (shared by every fd that refers to it). */
struct tree_file {
	int id;			/* index in tree.files */
	enum tree_kind kind;
	unsigned int flags;	/* f_flags as in fdinfo, without O_CLOEXEC */
	long long pos;
	unsigned long ino;	/* the inode that names its shared state: a pipe's or FIFO's
				 * (pipe record), a memfd's (data file), a socket's (sk record) */
	unsigned int major, minor;	/* TK_CHR */
	char *path;		/* TK_REG, TK_FIFO, TK_CHR; TK_MEMFD: "/memfd:NAME"; NULL for TK_PIPE */
	/* the anon inodes' state */
	unsigned long long count;	/* TK_EVENTFD: the counter; TK_TIMERFD: ticks not read */
	int semaphore;			/* TK_EVENTFD: EFD_SEMAPHORE */
	unsigned long long sigmask;	/* TK_SIGNALFD: bit N-1 for signal N */
	int clockid;			/* TK_TIMERFD: its clock, */
	unsigned int settime_flags;	/* TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET, */
	long long value_ns, interval_ns;	/* time left (0: disarmed), period (0: one-shot) */
	int tty_role;			/* TK_TTY: enum tree_tty_role */
	int tty_index;			/* TK_TTY: its pty pair's index, -1: the job's terminal */
	unsigned int seals;		/* TK_MEMFD: F_GET_SEALS; ino: its inode (data file) */
	int huge;			/* TK_MEMFD: of 2 MiB huge pages (MFD_HUGETLB) */
	int has_mode;			/* TK_MEMFD: its inode's mode and owner are known: */
	unsigned int mode, uid, gid;	/* st_mode & 07777, st_uid, st_gid */
	unsigned int fan_flags, fan_event_flags;	/* TK_FANOTIFY: fanotify_init's flags */
	pid_t target;			/* TK_PIDFD: the pid it refers to, */
	unsigned long long start;	/* its start time (clock ticks); 0: a task of the tree */
	/* where it was first seen (dump only), and its stat identity (TK_GHOST: its ghost) */
	int pid, fd;
	unsigned long long dev, sino;	/* st_dev, st_ino (TK_REG: fstat record; TK_GHOST: its ghost) */
	int ghost;		/* TK_FIFO: deleted, its ghost record is dev, ino (files-ghost.c) */
	/* TK_REG: fstat at dump, checked at restore ("fstat" record; has_stat) */
	int has_stat;
	long long size;		/* TK_REG: st_size (has_stat); TK_MEMFD: its size */
	long long mtime_ns;
	char *mnt;		/* the mount point it was on */
	int has_crc;		/* TK_REG, a regular file: the checksum of its first page, */
	unsigned int head_crc;	/* compared where its device or inode differ (files-reg.c) */
	int dir;		/* TK_REG (has_stat): a directory at the dump ("dir=1") */
	int host;		/* TK_REG, TK_CHR: on a mount outside the tree's mount namespace,
				 * reopened from the restorer's root (dump --external file[..]) */
	/* F_GETOWN_EX and F_GETSIG ("fown" record, files.c): restored if set */
	int own_type, own_pid, own_sig;
	/* TK_PIPE, TK_SK: the inode's owner ("fowner" record), which a
	 * restore by root gives the pipe or socket it creates */
	int has_owner;
	unsigned int owner_uid, owner_gid;
};



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
	/* attributes (attrs.c); attr_set: ATTR_* bits of the records present */
	unsigned int attr_set;
	unsigned long long rlim[TREE_NLIMITS][2];	/* soft, hard; ~0: infinity */
	int oom_score_adj;
	int sched_policy, sched_reset, sched_prio, nice;
	int ioprio;
	char *affinity;		/* CPU list ("0-3,6") */
	int no_new_privs;
	unsigned int loginuid;	/* /proc/PID/loginuid; 4294967295: unset */
	unsigned long coredump_filter;	/* /proc/PID/coredump_filter (per mm) */
	int mpol_mode, mpol_flags;	/* NUMA memory policy: MPOL_*, MPOL_F_NUMA_BALANCING */
	char *mpol_nodes;	/* its node list ("0-1"), NULL: none */
	int spec_ssb, spec_ib;	/* PR_SPEC_ENABLE/DISABLE/FORCE_DISABLE (ATTR_SPEC_*) */
	int cwd_deleted;	/* cwd was deleted: recreated, entered, removed */
	int cwd_has_mode;	/* its mode and owner known (else 0700, the restorer's) */
	unsigned int cwd_mode, cwd_uid, cwd_gid;
	int zombie;		/* dead, not reaped: restored as a zombie (no image) */
	int exit_status;	/* a zombie's wait status (/proc/PID/stat field 52) */
	int has_zsig;		/* a zombie's signal dispositions below are known */
	unsigned long long sig_ign, sig_cgt;	/* bit N-1: signal N ignored, caught */
	int stopped;		/* group-stopped before the dump: the stop signal (SIGSTOP...) */
	/*
	 * In a tree with its own PID namespace (ns.h): the pid and the
	 * threads' TIDs in it ("vpid" field; 0 / NULL: the same as pid,
	 * threads[])
	 */
	pid_t vpid;
	pid_t *vthreads;
	/*
	 * A tree with a PID namespace of its own: the number in it of the
	 * task's process group when no task of the tree leads that group
	 * (tree_group_kept(): its keeper takes that pid; "vpgid" field;
	 * 0: none or the same)
	 */
	pid_t vpgid;
	/*
	 * The same for its session when no task of the tree leads it
	 * (tree_session_kept(); "vsid" field; 0: none or the same)
	 */
	pid_t vsid;
	pid_t dump_pid;		/* restore, after tree_use_vpids(): the pid at the dump
				 * (its files: core-PID.img...); 0: pid */
	int cg;			/* a tree without a cgroup namespace of its own: its
				 * cgroup's index + 1 (cgmember.c); 0: not recorded */
};

/* The pid that names task @k's files in DIR (core-PID.img, seccomp-PID.img). */
#define TASK_IMG_PID(k)	((k)->dump_pid ? (k)->dump_pid : (k)->pid)

/* An item of an epoll instance (IT_EPOLL), a watch of an inotify one (IT_WATCH),
 * a mark of a fanotify group (IT_FANMARK). */
enum tree_item_kind { IT_EPOLL, IT_WATCH, IT_FANMARK };

struct tree_item {
	enum tree_item_kind kind;
	int file;		/* index in tree.files: the epoll or inotify file */
	pid_t pid;		/* IT_EPOLL: the task that registers it (holds the target at num) */
	int num;		/* IT_EPOLL: the target fd number; IT_WATCH: the wd */
	unsigned int mask;	/* IT_EPOLL: events (with EPOLLET...); IT_WATCH: inotify mask */
	unsigned long long data;	/* IT_EPOLL: epoll_data */
	char *path;		/* IT_WATCH: the watched path; IT_FANMARK: the marked path */
	unsigned int flags;	/* IT_FANMARK: its mark flags (fdinfo mflags); num: inode or
				 * mount mark, mask its mask, data its ignore mask */
	/*
	 * 1 + the index in tree.files of the watched file when the item
	 * cannot name it by its fd number (IT_EPOLL: not open at num in pid
	 * any more, epoll.c; IT_WATCH: a deleted file, inotify.c); 0: none
	 */
	int other;
};




/* the records of the kinds (their headers) */
struct tree_pipe;
struct tree_tty;
struct tree_ghost;
struct tree_lock;
struct tree_sk;
struct tree_bpfmap;

struct tree {
	pid_t root;
	int ntasks, nfiles, npipes, nttys, nitems, nghosts, nlocks, nsks;
	struct tree_task *tasks;
	struct tree_file *files;
	struct tree_pipe *pipes;
	struct tree_tty *ttys;
	struct tree_item *items;
	struct tree_ghost *ghosts;
	struct tree_lock *locks;
	struct tree_sk *sks;
	int nbpfmaps;
	struct tree_bpfmap *bpfmaps;	/* bpfmap.h */
	struct ns_tree *ns;	/* namespaces of its own (ns.h), NULL if none */
	struct cg_host *hostcg;	/* the tasks' cgroups, without a cgroup namespace (cgmember.c) */
};

#define TREE_PID_MAX	(1 << 22)	/* the kernel's PID_MAX_LIMIT on 64-bit */

struct tree_task *tree_task_add(struct tree *t, pid_t pid);
struct tree_task *tree_find(const struct tree *t, pid_t pid);
/* The index of the task @pid, or -1. */
int tree_index(const struct tree *t, pid_t pid);
/*
 * restore of a tree with its own PID namespace: every pid of the tree
 * (tasks, threads, groups, sessions, file owners, pidfds to the tree,
 * epoll items, locks, terminals) replaced by the one in that namespace
 * (its vpid); a pid outside the tree (a group or session the root
 * inherited) becomes 0 (none in the new namespace).
 */
void tree_use_vpids(struct tree *t);
/*
 * Process group @pgid has tasks of the tree but is led by none of them and
 * is not the root's: imgcr restore recreates it with a keeper task
 * (restore.c task_keepers()).
 */
int tree_group_kept(const struct tree *t, pid_t pgid);
/*
 * Session @sid has tasks of the tree but is led by none of them and is not
 * the root's (its leader exited): imgcr restore recreates it with a
 * session keeper (restore.c session_keepers()).
 */
int tree_session_kept(const struct tree *t, pid_t sid);
/*
 * The parent of the top tasks of kept session @sid (its tasks whose parent
 * is in another session): the one parent they all have, or -1 if they have
 * several.
 */
pid_t tree_session_parent(const struct tree *t, pid_t sid);
/* The task that has @tid as its pid or as one of its threads' tids. */
struct tree_task *tree_find_tid(const struct tree *t, pid_t tid);
int tree_thread_add(struct tree_task *task, pid_t tid);
struct tree_file *tree_file_add(struct tree *t);
struct tree_item *tree_item_add(struct tree *t, enum tree_item_kind kind, int file);
/*
 * The records of one kind (pipes, ttys, ghosts, locks, sockets) are its
 * own: their structs and their find/add functions are in the kind's header
 * (pipes.h, tty.h, files.h, locks.h, sockets.h); here they are arrays.
 * @p (n elements) grown to hold one more (exits if out of memory).
 */
void *tree_grow(void *p, int n, size_t elem);
int tree_fd_add(struct tree_task *task, int fd, int file, int cloexec);
void tree_free(struct tree *t);

/* A wait status a zombie can have (exited with a code, or killed by a signal). */
int tree_wait_status_ok(long long st);

/* DIR/tree: 0 or -1 (error printed). */
int tree_write(const struct tree *t, const char *dir);
int tree_read(struct tree *t, const char *dir);
/* The same through @dirfd, an fd of DIR (@dir for messages; proc.h dir_open()). */
int tree_read_at(struct tree *t, int dirfd, const char *dir);

/* Escaping of paths and names in the file: see tree.c. */
void tree_escape(char *out, size_t size, const char *in);
/* The string @in escapes (malloc'ed; exits if out of memory). */
char *tree_unescape(const char *in);
/* A signed field (decimal, or hex with 0x); 0 or -1. */
int tree_num(const char *s, long long *out);
/* An unsigned 64-bit field (decimal, or hex with 0x); 0 or -1. */
int tree_unum(const char *s, unsigned long long *out);

#endif
