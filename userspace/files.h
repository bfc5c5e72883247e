/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kinds of file descriptors: one file per kind holds both its dump and
 * its restore, and plugs into one table (fd_kinds, files.c) that the dump
 * driver (dump.c: describe_fd) and the restore driver (restore.c:
 * open_files) loop over, and so do the tree file (tree.c) and imgcr show
 * (show.c) for the fields of its file records.  Adding a kind means adding
 * a file, a table entry and, if it is restored, a kind of file record
 * (tree.h; its fields: rec_write, rec_read, rec_show, rec_json, documented
 * in imgcr-image(5)).
 *
 *   files-reg.c  regular files and directories    reg files, fstat records
 *   files-ghost.c  deleted regular files (content)  ghost records, ghost-DEV-INO.data
 *   pipes.c      anonymous pipes, their data       pipe records, pipe-INO.data
 *   fifo.c       named pipes (data as pipes)       fifo records
 *   devices.c    the standard character devices    chr records
 *   eventfd.c    eventfd (counter, semaphore)       eventfd records
 *   signalfd.c   signalfd (mask)                    signalfd records
 *   timerfd.c    timerfd (clock, time left, ticks)  timerfd records
 *   tty.c        terminals: pty pairs, shell jobs   tty records, tty-INDEX.data
 *   epoll.c      epoll (its items by fd number)     epoll + epitem records
 *   inotify.c    inotify (watches, same wds)        inotify + watch records
 *   memfd.c      memfd fds (data, seals, name)      memfd records, memfd-INO.data
 *   pidfd.c      pidfds (in or outside the tree)    pidfd records
 *   bpfmap.c     bpf maps (array, hash, LRU, per-CPU) bpfmap records, bpfmap-ID.data
 *   sockets.c    sockets: unix (sk-unix.c), TCP/UDP  sk records, sk-INO.data
 *                (sk-inet.c); other families refused
 *   files.c      the table; the other anon inodes, refused
 *
 * File locks (flock, POSIX, OFD) are not a kind: locks.c, called by both
 * drivers for every fd.
 */
#ifndef IMGCR_FILES_H
#define IMGCR_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "record.h"
#include "tree.h"

/* One fd of a frozen task, as the dump driver reads it. */
struct fd_parms {
	pid_t pid;
	int fd;
	char *link;		/* readlink of /proc/PID/fd/FD */
	struct stat st;		/* stat() of /proc/PID/fd/FD (zero while only the link is known) */
	unsigned int flags;	/* f_flags from /proc/PID/fdinfo/FD, without O_CLOEXEC */
	long long pos;
	int file_fd;		/* the file itself if a kind opened it (-1: not); the driver closes it */
	long fs_type;		/* fstatfs() of file_fd, set by whoever opened it */
	char why[4096 + 256];	/* FD_REFUSED: what is not supported (fd_refuse) */
};

/* The dump in progress, as a kind sees it. */
struct fd_dump {
	struct tree *t;
	const char *dir;	/* the dump directory, for a kind's data files */
	long long ghost_limit;	/* files-ghost.c: most bytes of data a deleted file may hold */
	int ext_unix_sk;	/* sk-unix.c: --ext-unix-sk */
	/*
	 * sk-queue.c: describe imgcr's own fd @fd (a file in flight, received
	 * by a peek) as the driver describes a task's fd, merged with a file
	 * of the tree or added; its index in t->files, or -1 (printed)
	 */
	int (*describe)(struct fd_dump *c, int fd);
	void *priv;		/* the driver's */
	int *watches;		/* files-reg.c: a task watches files: 0 not asked yet, 1 no,
				 * 2 yes; the driver's, kept for the whole dump */
};

/* The restorer opening every file description of the tree, in itself. */
struct fd_restore {
	const struct tree *t;
	const char *dir;	/* the dump directory, for messages */
	int dirfd;		/* and its fd: its files are opened by dir_open() (proc.h) */
	int base;		/* its fds go at or above base (fd_high), close-on-exec */
	int (*keep)[2];		/* per file: fds a kind keeps until every file is open
				 * (a pipe's ends; -1: none); the driver closes them */
	int allow_changed;	/* files-reg.c: restore files changed since the dump */
	int *desc;		/* per file: opened by the driver (-1: not yet) */
	int *early;		/* per file: opened before its turn by another kind (files in
				 * flight, sk-queue.c), taken by the driver; NULL: none */
	int moves;		/* a user namespace whose maps move ids: the sockets are made
				 * by root, a unix socket bound by path as its holder (sk-unix.c) */
};

/* What a kind's dump callback made of an fd. */
enum fd_verdict {
	FD_OTHER,	/* not of this kind: the driver asks the next one */
	FD_DESCRIBED,	/* of this kind, described in the file record */
	FD_REFUSED,	/* of this kind, not supported: parms.why says why */
	FD_FAILED,	/* an error, already printed */
};

struct fd_kind {
	/*
	 * its name in messages, as /proc/PID/fd names its objects ("pipe:[INO]",
	 * "socket:[INO]"); the tree file and imgcr show name the kind by
	 * tree_kind_names[type] ("sk" for a socket), which stays as it is
	 * (imgcr show --json's "kind")
	 */
	const char *name;
	enum tree_kind type;	/* its file records; TK_NR: none (a refused kind) */
	/*
	 * Recognised by its /proc/PID/fd link alone: asked first, before the
	 * driver stats the fd or reads its fdinfo (p->st is still zero).
	 */
	int by_link;
	/*
	 * dump: recognise @p and describe it in @f, whose kind, flags and
	 * position the driver sets: the kind sets what else its records hold
	 * (ino, major, minor, path: borrowed, e.g. p->link, the driver copies
	 * it; an anon inode's state).  An FD_* verdict.
	 * The driver then merges @f with an earlier record of the same open
	 * file description (kcmp) or adds it to the tree.
	 */
	int (*dump)(struct fd_dump *c, struct fd_parms *p, struct tree_file *f);
	/* dump, after every task is described: checks over the whole tree (0 or -1) */
	int (*check)(const struct tree *t);
	/*
	 * dump, at the end, the tasks still frozen: @killed, the tree is about
	 * to be killed; else it is left running (--leave-running, or the dump
	 * failed) and a kind puts back what its dump took from live objects.
	 */
	void (*finish)(int killed);
	/*
	 * restore: open file @i of the tree (@what names it in messages) with
	 * its flags, position and content.  The fd (any number: the driver
	 * moves it to r->base or above), or -1 after printing why.
	 */
	int (*open)(struct fd_restore *r, int i, const char *what);
	/*
	 * restore, in each task @k after its fds are in place (before its
	 * credentials change and its exec): what needs the task's own fd
	 * numbers or the other tasks (epoll items, pidfds to tasks of the
	 * tree).  0, or -1 with the reason in @err.
	 */
	int (*late)(const struct tree *t, const struct tree_task *k, char *err, size_t size);
	/*
	 * restore, optional: after every file is open (@ok), or after a
	 * failure (!@ok; then undo what open left outside the restorer).
	 * 0, or -1 after printing why.
	 */
	int (*after)(struct fd_restore *r, int ok);
	/*
	 * The tree file (record.h; the format: imgcr-image(5)): the fields of
	 * this kind's "file" records after id, kind, flags and pos.
	 * rec_write writes them to @f, each as " key=value" (NULL: none);
	 * rec_read reads them from @r (rec_val, REC_NUM...: every field it
	 * does not read is refused as unknown) into @x, with @t holding the
	 * records read so far: NULL, or what is wrong.  A path it keeps must
	 * be absolute (tree.c checks).
	 */
	void (*rec_write)(FILE *f, const struct tree_file *x);
	const char *(*rec_read)(struct tree *t, struct tree_file *x, struct rec *r);
	/*
	 * imgcr show (show.c): file @i of @t in a line of text (@mode "r",
	 * "w" or "rw"), and the JSON members of its object after kind, flags
	 * and pos (",\"name\":value...", its path included: fd_json_path;
	 * NULL: none).
	 */
	void (*rec_show)(const struct tree *t, int i, const char *mode, char *out, size_t size);
	void (*rec_json)(const struct tree *t, int i);
};

extern const struct fd_kind reg_fd_kind, pipe_fd_kind, fifo_fd_kind, dev_fd_kind;
extern const struct fd_kind eventfd_fd_kind, signalfd_fd_kind, timerfd_fd_kind;
extern const struct fd_kind tty_fd_kind;
extern const struct fd_kind epoll_fd_kind, inotify_fd_kind, memfd_fd_kind, pidfd_fd_kind;

/*
 * memfd.c: the argument "--imgcr-shmfd=I:FD,..." for task @k's image
 * @name in @dirfd (into @out, "" if none): the memfds it maps that it
 * also holds as fds.  One it maps writable (VM_MAYWRITE) but holds only
 * read-only is given as the memfd itself, on a spare fd below @base (the
 * restorer's fds; at most MEMFD_SPARE_FDS), close-on-exec.  0, or -1
 * (printed).
 */
#define MEMFD_SPARE_FDS	16
/*
 * 1 if memfd_shm_arg() gives task @k's loader the memfd of inode @ino
 * (mapped writable: @write): it holds it as an fd, filled before the fork
 */
int memfd_given(const struct tree *t, const struct tree_task *k, unsigned long ino, int write);
int memfd_shm_arg(const struct tree *t, const struct tree_task *k, int dirfd, const char *name,
		  int base, char *out, size_t size);
extern const struct fd_kind ghost_fd_kind, socket_fd_kind, fanotify_fd_kind, bpfmap_fd_kind;

/*
 * A deleted file (files-ghost.c): a regular file with no name left, its
 * content in DIR/ghost-DEV-INO.data; or (type) an empty directory, a FIFO
 * (its data is the fifo file's, pipes.c), a character device node, or a
 * deleted name of a file that has other names (found again by its file
 * handle and linked back).
 */
enum ghost_type { GHOST_REG, GHOST_DIR, GHOST_FIFO, GHOST_CHR, GHOST_LINK };
#define GHOST_HANDLE_MAX	128
struct tree_ghost {
	unsigned long long dev, ino;	/* at dump: its identity, which TK_GHOST files name */
	long long size, mtime_ns;
	unsigned int mode, uid, gid;
	char *path;		/* where it was, without " (deleted)" */
	int type;		/* enum ghost_type */
	unsigned int major, minor;	/* GHOST_CHR: its device */
	int htype;		/* GHOST_LINK: its file handle (name_to_handle_at) */
	unsigned int hlen;
	unsigned char handle[GHOST_HANDLE_MAX];
	int mapped;		/* an image maps it (or runs it): restored at path */
	char *made;		/* restore: where the restorer recreated it (until unlinked), */
	int made_fd;		/* and its fd there, */
	int made_dir;		/* its directory (trust_dir_open(); -1: none), */
	unsigned long long made_dev, made_ino;	/* and its identity: unlinked only if still it */
};

struct tree_ghost *tree_ghost_find(const struct tree *t, unsigned long long dev,
				   unsigned long long ino);
struct tree_ghost *tree_ghost_add(struct tree *t);

/* files-ghost.c: the default of imgcr dump --ghost-limit */
#define GHOST_LIMIT_DEFAULT	(1LL << 20)

/*
 * files-ghost.c.  dump, after task @pid's image is saved in @image: the
 * deleted files it maps (or runs) saved as "mapped" ghosts; 0 or -1
 * (printed).
 */
struct image;
int ghost_dump_mapped(struct fd_dump *c, pid_t pid, const struct image *img);
/*
 * files-ghost.c: ghost @g (GHOST_FIFO, GHOST_DIR) made again if it is not
 * yet (restore): 0, or -1 (printed).  fifo.c opens the FIFO through
 * g->made_fd; attrs.c enters a deleted cwd through it.
 */
int ghost_make_now(const struct tree *t, int dirfd, struct tree_ghost *g);
/* files-ghost.c, dump: deleted FIFO @p as a ghost record of type fifo (fd_kind.dump's returns) */
int ghost_dump_fifo(struct fd_dump *c, struct fd_parms *p);
/*
 * restore, before the files are opened: every mapped ghost recreated at
 * its own path (the images open it there); 0, or -1 (printed, none left).
 */
int ghost_make_mapped(struct tree *t, int dirfd);
/* restore, once every image has opened them, or on a failure: unlinked. */
void ghost_unlink_mapped(struct tree *t);

/*
 * locks.c.  dump: the locks fdinfo shows on fd @fd of @pid (file record
 * @file) into the tree (duplicates merged); 0, or -1 after printing why
 * (a lease: not supported).
 */
int locks_dump(struct tree *t, pid_t pid, int fd, int file);
/* restore, in the restorer: the OFD locks on its descriptions @desc; 0 or -1 (printed). */
int locks_restore_files(const struct tree *t, const int *desc);
/*
 * restore, in task @pid after its fds are in place and every other
 * descriptor of the same files is closed: its POSIX and flock locks.  0, or -1 with
 * the reason in @err.
 */
int locks_restore_task(const struct tree *t, pid_t pid, char *err, size_t size);

/* Every kind, NULL-terminated; the order in which dump asks them. */
extern const struct fd_kind *const fd_kinds[];

/* The kind that restores file records of @type, or NULL. */
const struct fd_kind *fd_kind_of(enum tree_kind type);

/* For rec_read: a kind whose file records have no fields of their own. */
const char *fd_rec_none(struct tree *t, struct tree_file *x, struct rec *r);

/*
 * dump --external file[MNT_ID:INODE] (files.c): a host file on a mount
 * outside the tree's mount namespace, recorded with host=1 (reopened from
 * the restorer's root).  0, or -1 (printed); 1 if (@mnt_id, @ino) was given.
 */
int fd_external_file_add(const char *key);
int fd_external_file(unsigned int mnt_id, unsigned long long ino);

/* For rec_write: " path=PATH", escaped (tree.c). */
void fd_rec_path(FILE *f, const char *path);

/* show.c, for rec_json: @s as a JSON string. */
/*
 * The version of imgcr show --json's output ("format"): raised when a key
 * changes meaning or goes away (new keys may come without it).
 */
#define IMGCR_JSON_FORMAT 1
/* a JSON string of any bytes (show.c: invalid UTF-8 as \udcXX) */
void json_str(const char *s);
/* For rec_json: ",\"path\":PATH" (nothing if @path is NULL; show.c). */
void fd_json_path(const char *path);

/* For a dump callback: a refusal, "pid P fd N: " and this; returns FD_REFUSED. */
int fd_refuse(struct fd_parms *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * For a dump callback: /proc/PID/fdinfo/FD of @p, read again (malloc'ed),
 * or NULL after printing why.  Its "key:" values: status_field (proc.h).
 */
char *fd_info(const struct fd_parms *p);

/*
 * For a dump callback: a duplicate of @p's fd in imgcr (pidfd_getfd: the
 * same open file description, which the tracer may use while the task is
 * frozen), close-on-exec; -1 with errno set.
 */
int fd_steal(const struct fd_parms *p);

/* A description's F_SETOWN_EX owner and F_SETSIG signal (files.c): dump, check, restore. */
int fown_dump(const struct fd_parms *p, struct tree_file *f);
int fown_check(const struct tree *t);
int fown_restore(const struct tree *t, const struct tree_task *k, char *err, size_t size);
/* O_ASYNC set again through the task's own fd number (the signals' si_fd). */
int fasync_restore(const struct tree *t, const struct tree_task *k, char *err, size_t size);

/*
 * restore: give @fd, just created by a kind, the file status flags @flags
 * (those F_SETFL changes: O_NONBLOCK, O_APPEND, O_ASYNC, O_DIRECT,
 * O_NOATIME).  0, or -1 after printing why, naming @what.
 */
int fd_set_flags(int fd, unsigned int flags, const char *what);

/* @fd moved to @base or above, close-on-exec (itself if already there); -1 on error. */
int fd_high(int fd, int base);

/*
 * Flags to open a file description's path again: never create, truncate or
 * take a tty; not O_ASYNC, which open() records without registering the
 * file for SIGIO: fd_set_flags() (F_SETFL) sets it.
 */
static inline int fd_open_flags(unsigned int flags)
{
	return (flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_ASYNC)) | O_CLOEXEC;
}

/*
 * open(@path, @flags) for a path of the tree file, without following a
 * magic link (/proc/PID/fd/N, /proc/PID/root...: openat2
 * RESOLVE_NO_MAGICLINKS): in the restored mount namespace the ns-root is
 * pid 1 of a fresh /proc and holds imgcr's fds (DIR), and a link planted
 * by the container must not lead root back to the host's files.  -1 (errno).
 */
int fd_path_open(const char *path, int flags);
/*
 * File @f of @t's path opened: on a mount bound from a copy (--root,
 * --external mnt[]; not a host file), from its mount point without links
 * or other mounts (mnt_path_open: a link or mount on the way printed,
 * errno ELOOP or EXDEV), else fd_path_open.
 */
int fd_tree_path_open(const struct tree *t, const struct tree_file *f, int flags);

#endif
