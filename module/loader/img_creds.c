// SPDX-License-Identifier: GPL-2.0
/*
 * Capabilities, securebits and no_new_privs of each thread (NT_IMGCR_CREDS).
 *
 * The exec computes the caller's new credentials from scratch (a root
 * caller gets every capability of its bounding set, another none but its
 * ambient ones) and the threads, cloned from the main thread afterwards,
 * inherit them.  Then each thread sets its own from the image: the main
 * thread at the end of img_group_run(), after it has made the threads
 * (clone3(set_tid) may need CAP_CHECKPOINT_RESTORE, which the task may
 * not have, and a thread must not inherit the main thread's
 * no_new_privs), each other thread in img_thread_resume().  Nothing later
 * in the exec recomputes credentials: they were committed in
 * begin_new_exec() and these run on the way back to user space.
 *
 * Two modes:
 *
 * "--imgcr-creds" (imgcr restore): the sets are the image's exactly.
 * Never more than the caller had before the exec (C: its credentials
 * then; T: a thread's in the image), as capset() and prctl() would allow
 * the caller to make itself (security/commoncap.c cap_capset(),
 * cap_task_prctl()); "holds X" means X is in C's permitted set (it could
 * make it effective) or C is root for exec (euid 0, no SECBIT_NOROOT) with
 * X in its bounding set:
 *   - T.permitted is a subset of C.permitted;
 *   - T.inheritable of C.inheritable | C.permitted, and of
 *     C.inheritable | C.bset (capset's two rules);
 *   - T.bset of C.bset; a smaller one needs CAP_SETPCAP (PR_CAPBSET_DROP);
 *   - T.ambient of T.permitted & T.inheritable (checked as consistency),
 *     and of C.ambient if C has SECBIT_NO_CAP_AMBIENT_RAISE;
 *   - T.effective of T.permitted;
 *   - securebits: any change but SECBIT_KEEP_CAPS needs CAP_SETPCAP; a bit
 *     C has locked keeps C's value, and a lock C has stays;
 *   - no_new_privs: C's stays (it cannot be cleared);
 *   - capabilities (permitted, inheritable, ambient) are given only in the
 *     user namespace the task held them in (checked by inode number): a
 *     capability of another namespace means something else.  With
 *     "--imgcr-userns=INODE" (imgcr restore of a tree with a user namespace
 *     of its own, recreated with the same maps), those held in namespace
 *     INODE count as held in the caller's, unless that is the initial one
 *     (a container's capabilities never become the host's): the caller
 *     must still hold each one there, as above.
 *
 * Without it (a plain execve of the image): the caller's credentials as
 * the exec made them, but never more than the thread had: each
 * capability set is intersected with the thread's, its restricting
 * securebits (SECBIT_NOROOT, _NO_SETUID_FIXUP, _NO_CAP_AMBIENT_RAISE and
 * the locks) are added, and its no_new_privs.  A smaller bounding set or
 * added securebits need CAP_SETPCAP, as for the task itself: a caller
 * without it is refused (a set-ID program run later could otherwise be
 * tricked by a restriction it does not expect, the reason the kernel asks
 * for CAP_SETPCAP).
 *
 * "--imgcr-ids" (imgcr restore as root, with "--imgcr-creds"): each
 * thread's real, effective, saved and fs uids and gids are the image's
 * too, set at the same moment, after the threads exist: the restorer
 * stays root through the exec so that the threads are made with its right
 * to choose their TIDs, however unprivileged the user it restores (CRIU
 * too makes every task as root and drops credentials last).  An ID is
 * given only if the caller could give it to itself through the exec
 * (img_ids_allowed()).  Supplementary groups are the process's, set by the
 * restorer before the exec (setgroups() takes no capability).
 *
 * Setting them can no longer fail but for memory or an LSM refusing an ID
 * change (the group is killed).
 * commit_creds() resets the dumpable flag and the parent-death signal when
 * capabilities are gained: both are set back to what the image gave them.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/prctl.h>
#include <linux/sched/coredump.h>
#include <linux/securebits.h>
#include <linux/user_namespace.h>

#include "compat.h"
#include "loader.h"

#define IMG_CAP_MASK	GENMASK_ULL(CAP_LAST_CAP, 0)
/* The securebits that only restrict, added in the plain mode. */
#define IMG_SECURE_RESTRICT (issecure_mask(SECURE_NOROOT) |		\
			     issecure_mask(SECURE_NO_SETUID_FIXUP) |	\
			     issecure_mask(SECURE_NO_CAP_AMBIENT_RAISE) | \
			     SECURE_ALL_LOCKS)

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

static const char *cap_name(u64 set)
{
	unsigned int c = __ffs64(set);

	return c < ARRAY_SIZE(cap_names) ? cap_names[c] : "a capability";
}

/* The image's own consistency, whatever the mode. */
int img_check_creds(struct img *img, const struct imgcr_creds *t,
		    const char *who)
{
	const char *bad = NULL;

	if ((t->cap_inheritable | t->cap_permitted | t->cap_effective |
	     t->cap_bset | t->cap_ambient) & ~IMG_CAP_MASK)
		bad = "a capability this kernel does not know";
	else if (t->cap_effective & ~t->cap_permitted)
		bad = "effective capabilities that are not permitted";
	else if (t->cap_ambient & ~(t->cap_permitted & t->cap_inheritable))
		bad = "ambient capabilities that are not permitted and inheritable";
	else if (t->securebits & ~(SECURE_ALL_BITS | SECURE_ALL_LOCKS))
		bad = "unknown securebits";
	else if (t->flags & ~IMGCR_CREDS_NO_NEW_PRIVS)
		bad = "unknown flags";
	if (bad) {
		img_err(img, "invalid image: %scredentials with %s", who, bad);
		return -EINVAL;
	}
	return 0;
}

/* Whether @c could make @cap effective, before or by the exec. */
static bool caller_holds(const struct cred *c, int cap)
{
	if (cap_raised(c->cap_permitted, cap))
		return true;
	return uid_eq(c->euid, make_kuid(c->user_ns, 0)) &&
	       !(c->securebits & issecure_mask(SECURE_NOROOT)) &&
	       cap_raised(c->cap_bset, cap);
}

/*
 * Before the point of no return, with the caller's credentials: may the
 * thread's credentials @t be given (see the rules above)?
 */
int img_creds_allowed(struct img *img, const struct imgcr_creds *t,
		      const char *who)
{
	const struct cred *c = current_cred();
	u64 perm = imgcr_cap_u64(c->cap_permitted);
	u64 inh = imgcr_cap_u64(c->cap_inheritable);
	u64 bset = imgcr_cap_u64(c->cap_bset);
	u64 amb = imgcr_cap_u64(c->cap_ambient);
	u32 locks = (c->securebits & SECURE_ALL_LOCKS) >> 1;
	bool setpcap = caller_holds(c, CAP_SETPCAP);
	u64 more;

	if (!img->set_creds) {
		/* plain mode: only what needs CAP_SETPCAP can be refused */
		if (!setpcap && (bset & ~t->cap_bset)) {
			img_err(img, "%sthe task had no %s in its bounding set, and dropping it needs CAP_SETPCAP (restore with imgcr restore, or as root)",
				who, cap_name(bset & ~t->cap_bset));
			return -EPERM;
		}
		if (!setpcap && (t->securebits & IMG_SECURE_RESTRICT &
				 ~c->securebits)) {
			img_err(img, "%sthe task had securebits %#x, and setting them needs CAP_SETPCAP (restore with imgcr restore, or as root)",
				who, t->securebits);
			return -EPERM;
		}
		return 0;
	}
	if ((t->cap_permitted | t->cap_inheritable | t->cap_ambient) &&
	    t->user_ns != c->user_ns->ns.inum &&
	    !(img->old_userns && t->user_ns == img->old_userns &&
	      c->user_ns != &init_user_ns)) {
		img_err(img, "%sthe task held capabilities in another user namespace (inode %llu, the caller is in %u): they cannot be given here",
			who, t->user_ns, c->user_ns->ns.inum);
		return -EPERM;
	}
	more = t->cap_permitted & ~perm;
	if (more) {
		img_err(img, "%sthe task had %s permitted, the caller has not",
			who, cap_name(more));
		return -EPERM;
	}
	more = t->cap_inheritable & ~(inh | perm);
	more |= t->cap_inheritable & ~(inh | bset);
	if (more) {
		img_err(img, "%sthe task had %s inheritable, the caller could not give it",
			who, cap_name(more));
		return -EPERM;
	}
	more = t->cap_bset & ~bset;
	if (more) {
		img_err(img, "%sthe task had %s in its bounding set, the caller has not",
			who, cap_name(more));
		return -EPERM;
	}
	if (t->cap_bset != bset && !setpcap) {
		img_err(img, "%sthe task had a smaller bounding set, and dropping %s needs CAP_SETPCAP",
			who, cap_name(bset & ~t->cap_bset));
		return -EPERM;
	}
	if ((c->securebits & issecure_mask(SECURE_NO_CAP_AMBIENT_RAISE)) &&
	    (t->cap_ambient & ~amb)) {
		img_err(img, "%sthe task had %s ambient, and the caller may not raise ambient capabilities (SECBIT_NO_CAP_AMBIENT_RAISE)",
			who, cap_name(t->cap_ambient & ~amb));
		return -EPERM;
	}
	if (((t->securebits ^ c->securebits) & ~issecure_mask(SECURE_KEEP_CAPS) &&
	     !setpcap) ||
	    (locks & (t->securebits ^ c->securebits)) ||
	    (c->securebits & SECURE_ALL_LOCKS & ~t->securebits)) {
		img_err(img, "%sthe task had securebits %#x, the caller (%#x) may not set them (CAP_SETPCAP, locked bits)",
			who, t->securebits, c->securebits);
		return -EPERM;
	}
	if (task_no_new_privs(current) && !(t->flags & IMGCR_CREDS_NO_NEW_PRIVS)) {
		img_err(img, "%sthe task had no no_new_privs, the caller has it (it cannot be cleared)",
			who);
		return -EPERM;
	}
	return 0;
}

/*
 * "--imgcr-ids", before the point of no return: may the thread's IDs in
 * @t be given?  They are set after the exec, when the threads exist (so
 * that root keeps the right to choose their TIDs however unprivileged the
 * user it restores): with setresgid() and setresuid() as the thread, then
 * the fs IDs directly.  Each ID must be one the caller could give itself
 * through the exec: any mapped one with CAP_SETUID (CAP_SETGID) over its
 * user namespace after the exec, else its real or effective one (exec
 * makes the saved and fs IDs the effective one).
 */
int img_ids_allowed(struct img *img, const struct imgcr_creds *t,
		    const char *who)
{
	const struct cred *c = current_cred();
	struct user_namespace *ns = c->user_ns;
	const u32 uids[4] = { t->uid, t->euid, t->suid, t->fsuid };
	const u32 gids[4] = { t->gid, t->egid, t->sgid, t->fsgid };
	bool setuid, setgid;
	int i;

	/*
	 * The IDs are numbers of the thread's user namespace, the one its
	 * credentials record (IMGCR_PROC_OWN_NS; without it the dumper's,
	 * which was the same): read in another one they are other users (a
	 * container's uid 0 read in the initial namespace is root).  Given
	 * only in that namespace, or in the one restored for it
	 * (--imgcr-userns, never the initial one), as the capabilities.
	 */
	if (t->user_ns != ns->ns.inum &&
	    !(img->old_userns && t->user_ns == img->old_userns &&
	      ns != &init_user_ns)) {
		img_err(img, "%sthe task's uid %u and gid %u are of another user namespace (inode %llu, the caller is in %u): they cannot be given here",
			who, t->uid, t->gid, t->user_ns, ns->ns.inum);
		return -EPERM;
	}
	setuid = img_capable_after_exec(ns, CAP_SETUID);
	setgid = img_capable_after_exec(ns, CAP_SETGID);
	for (i = 0; i < 4; i++) {
		kuid_t u = make_kuid(ns, uids[i]);
		kgid_t g = make_kgid(ns, gids[i]);

		if (!uid_valid(u) || !gid_valid(g)) {
			img_err(img, "%sthe task's uid %u or gid %u has no mapping in the caller's user namespace",
				who, uids[i], gids[i]);
			return -EINVAL;
		}
		if (!setuid && !uid_eq(u, c->uid) && !uid_eq(u, c->euid)) {
			img_err(img, "%sthe task had uid %u, and giving it needs CAP_SETUID (the caller's are %u and %u)",
				who, uids[i], from_kuid_munged(ns, c->uid),
				from_kuid_munged(ns, c->euid));
			return -EPERM;
		}
		if (!setgid && !gid_eq(g, c->gid) && !gid_eq(g, c->egid)) {
			img_err(img, "%sthe task had gid %u, and giving it needs CAP_SETGID (the caller's are %u and %u)",
				who, gids[i], from_kgid_munged(ns, c->gid),
				from_kgid_munged(ns, c->egid));
			return -EPERM;
		}
	}
	return 0;
}

/*
 * "--imgcr-ids": the thread's real, effective and saved IDs through the
 * system calls, which move its user (user_struct, ucounts: RLIMIT_NPROC)
 * with the real uid and run the LSM setid hooks; they may clear
 * capabilities, set exactly afterwards.  Allowed by img_ids_allowed(): an
 * error here is an LSM's refusal or no memory.
 */
static int set_ids(const struct imgcr_creds *t)
{
	long ret;

	ret = img_call_sys(imgcr_sys_setresgid, t->gid, t->egid, t->sgid, 0);
	if (!ret)
		ret = img_call_sys(imgcr_sys_setresuid, t->uid, t->euid,
				   t->suid, 0);
	return ret;
}

/*
 * In the thread itself, on its way to user space: set its credentials
 * from @t (@exact: "--imgcr-creds"; @ids: "--imgcr-ids", its IDs too),
 * then the dumpable flag back to @dumpable (of the mm, as the exec and
 * img_restore_mm() made it; IMGCR_DUMPABLE_HOLD: not dumpable, the main
 * thread gives it back last) and the parent-death signal to @pdeath, which
 * commit_creds() may have reset.
 */
int img_set_creds(const struct imgcr_creds *t, bool exact, bool ids,
		  int dumpable, int pdeath)
{
	struct cred *new;
	int ret;

	if (ids) {
		ret = set_ids(t);
		if (ret)
			return ret;
	}
	new = prepare_creds();
	if (!new)
		return -ENOMEM;
	if (ids) {
		/* setresuid() made them the effective IDs */
		new->fsuid = make_kuid(new->user_ns, t->fsuid);
		new->fsgid = make_kgid(new->user_ns, t->fsgid);
	}
	if (exact) {
		new->cap_inheritable = imgcr_u64_cap(t->cap_inheritable);
		new->cap_permitted = imgcr_u64_cap(t->cap_permitted);
		new->cap_effective = imgcr_u64_cap(t->cap_effective);
		new->cap_bset = imgcr_u64_cap(t->cap_bset);
		new->cap_ambient = imgcr_u64_cap(t->cap_ambient);
		new->securebits = t->securebits;
	} else {
		new->cap_inheritable = imgcr_u64_cap(imgcr_cap_u64(new->cap_inheritable) &
						     t->cap_inheritable);
		new->cap_permitted = imgcr_u64_cap(imgcr_cap_u64(new->cap_permitted) &
						   t->cap_permitted);
		new->cap_effective = imgcr_u64_cap(imgcr_cap_u64(new->cap_effective) &
						   t->cap_effective);
		new->cap_bset = imgcr_u64_cap(imgcr_cap_u64(new->cap_bset) &
					      t->cap_bset);
		new->cap_ambient = imgcr_u64_cap(imgcr_cap_u64(new->cap_ambient) &
						 t->cap_ambient);
		new->securebits |= t->securebits & IMG_SECURE_RESTRICT;
	}
	commit_creds(new);
	if (t->flags & IMGCR_CREDS_NO_NEW_PRIVS)
		task_set_no_new_privs(current);
	current->pdeath_signal = pdeath;
	if (dumpable == IMGCR_DUMPABLE_HOLD) {
		/* a thread before the main thread's: open to no one yet */
		if (imgcr_get_dumpable() == 1)	/* SUID_DUMP_USER */
			img_call_sys(imgcr_sys_prctl, PR_SET_DUMPABLE, 0, 0, 0);
	} else if (dumpable != IMGCR_DUMPABLE_ROOT && imgcr_get_dumpable() != dumpable) {
		img_call_sys(imgcr_sys_prctl, PR_SET_DUMPABLE, dumpable, 0, 0);
	}
	return 0;
}
