/* SPDX-License-Identifier: GPL-2.0 */
/* Whose image directory a restore by root runs (trust.c). */
#ifndef IMGCR_TRUST_H
#define IMGCR_TRUST_H

#include <sys/types.h>

struct tree_task;

struct tree;

/*
 * As root, before anything of @dir is used: 0 if the directory @dirfd
 * (@dir, for messages) and every file in it can be written only by root,
 * or by one user U whose tree runs entirely as U (all its tasks' and
 * threads' IDs U's, no capabilities, no chroot, no owner or peer
 * credentials of another user); else -1 after a message naming the file,
 * its owner and what of the tree is not U's.  @trusted (the option
 * --trust-images-dir): 0 always.  Not root: 0 (a user's restore runs with
 * the user's own rights).  *@user gets U (or -1: root's directory, or
 * trusted), which the restore passes on to binfmt_img (trust_user_arg()).
 */
int trust_check(const struct tree *t, int dirfd, const char *dir, int trusted, uid_t *user);
/* What trust_check() found: the user whose directory root restores, or -1. */
extern uid_t trust_dir_user;

/*
 * "--imgcr-user=U:G" for binfmt_img, the task being @uid/@gid (the tree's
 * real ones): the exec then refuses an image whose threads are not
 * entirely U's (the image may have changed since trust_check() read it:
 * U can write it).  "" if @user is -1.
 */
void trust_user_arg(char *buf, size_t size, uid_t user, gid_t gid);

/* The task of @t that holds the socket of inode @ino (NULL: none). */
const struct tree_task *trust_sk_holder(const struct tree *t, unsigned long ino);

/*
 * As root, what the restorer does for task @k that leaves the tree (a
 * unix connect to a path): under @k's effective uid and gid and its
 * groups, so that the kernel's access checks are the task's and the other
 * side records the task's credentials (SO_PEERCRED), not root's.  Nothing
 * for a task whose effective uid is 0, or when the restorer is not root,
 * or for an ID this user namespace does not map.  0, or -1 (printed).
 */
struct trust_as {
	int on;
	int ngroups;
	gid_t *groups;		/* the restorer's, to go back to */
	int dumpable, pdeath;	/* a change of euid clears both: put back */
};
int trust_enter(const struct tree_task *k, struct trust_as *sv, const char *what);
int trust_leave(struct trust_as *sv);

/*
 * The directory @path (absolute), opened O_PATH by a walk from / that
 * follows no symbolic link but root's own (/var/run -> /run): a name
 * another user controls cannot send root's operations elsewhere.  The
 * restorer works relative to it (bind, unlinkat, fchownat).  The fd, or
 * -1 with errno (ELOOP: another user's symbolic link on the way).
 */
int trust_dir_open(const char *path);

/*
 * The socket file @base in @dirfd (trust_dir_open()) gets @uid, @gid and
 * @mode through an O_PATH, O_NOFOLLOW open of it that is a socket: never
 * a file a symbolic or hard link put there.  0, or -1 with errno.
 */
int trust_sock_own(int dirfd, const char *base, unsigned int uid, unsigned int gid,
		   unsigned int mode);

/* Unlink the socket file @base in @dirfd if it still is a socket; 0 or -1. */
int trust_sock_unlink(int dirfd, const char *base);

#endif
