// SPDX-License-Identifier: GPL-2.0
/*
 * The options of a DUMP or RESTORE request (CRIU's criu_opts) as imgcr's
 * command line.  Every option is mapped, accepted because imgcr does it
 * anyway, or refused by name: never dropped.
 *
 *   images_dir_fd, work_dir_fd  the CLIENT's fds: /proc/PEER/fd/N (as CRIU)
 *   images_dir                  a path, if images_dir_fd is -1
 *   pid                         dump -t PID (needed: no dump of the client)
 *   leave_running               dump -R
 *   shell_job                   -j
 *   ext_unix_sk                 dump --ext-unix-sk (restore: accepted)
 *   tcp_close                   dump and restore --tcp-close
 *   ghost_limit                 dump --ghost-limit
 *   display_stats               --stats
 *   log_file, log_level         the log file WORKDIR/LOG_FILE (opened first,
 *                               so that a refusal is in it), -v (CRIU's - 1)
 *   log_to_stderr               no log file
 *   notify_scripts              NOTIFY round trips (swrk.c)
 *   rst_sibling                 restore: the root a child of the client
 *   orphan_pts_master           dump: one pty whose master is outside the
 *                               tree (runc's console) is dumped (tty.c);
 *                               restore: a new pair, its slave the tree's,
 *                               its master sent to the client in NOTIFY
 *                               orphan-pts-master (SCM_RIGHTS), as CRIU
 *   root, ext_mnt               checked (check_mounts): the pid's root at
 *                               dump; at restore the sources the image's
 *                               external mounts are bound from: another
 *                               root is restore --root, another source
 *                               --external mnt[MP]:PATH
 *   inherit_fd                  restore --inherit-fd, pipes only; at dump
 *                               the pid's stdio pipes are --external, and
 *                               its stdio files --external file[MNT:INO]
 *                               (the host's, reopened at restore)
 *   empty_ns                    CLONE_NEWNET alone, for a network
 *                               namespace with lo alone (check_empty_ns)
 *   manage_cgroups, freeze_cgroup, config_file (a missing one),
 *   tcp_established, file_locks, link_remap, evasive_devices, network_lock,
 *   cpu_cap, skip_file_rwx_check, unprivileged, weak_sysctls,
 *   mntns_compat_mode           accepted: imgcr always does (or needs) no more
 *   parent_img                  DUMP: a directory imgcr-criu's PRE_DUMP
 *                               marked for the same pid: imgcr dump --live
 *   track_mem                   accepted (a pre-dump's request for it)
 *   manage_cgroups_mode         DUMP and RESTORE: ignore (0) is --cgroups=ignore;
 *                               soft (3), default (6): imgcr's default; others
 *                               refused
 *   everything else, when set (lazy_pages, ps,
 *   cg_root, external, veths, join_ns, lsm_profile,
 *   exec_cmd, ...):             refused, and any field this file does not know
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "criu.h"
#include "log.h"
#include "proc.h"

#define IFNAMSIZ_MAX	64

const char *const req_names[REQ_NR] = {
	"EMPTY", "DUMP", "RESTORE", "CHECK", "PRE_DUMP", "PAGE_SERVER", "NOTIFY",
	"CPUINFO_DUMP", "CPUINFO_CHECK", "FEATURE_CHECK", "VERSION", "WAIT_PID",
	"PAGE_SERVER_CHLD", "SINGLE_PRE_DUMP",
};

/* past ARGS_MAX the request fails (opts_to_args() checks overflow), never a dropped option */
static void add(struct criu_args *a, char *arg)
{
	if (a->argc < ARGS_MAX)
		a->argv[a->argc++] = arg;
	else
		a->overflow = 1;
}

/* The client's fd @n, a directory, as our own fd: -1 (printed) if not. */
static int client_dir(pid_t peer, int n, const char *what)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)peer, n);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("%s %d: cannot open the client's fd (%s)", what, n, path);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
		pr_err("%s %d: the client's fd is not a directory", what, n);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A path to our directory fd @fd for imgcr (and the programs it runs, such
 * as $IMGCR_STATE_HOOK): /proc/OURPID/fd/N (not "self": a child would read
 * its own), always the client's directory.  (Its real path, were it the
 * same directory now, could be swapped before imgcr opens it when a less
 * privileged user can write one of its parents.)
 */
static void dir_path(int fd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/fd/%d", (int)getpid(), fd);
}

#define REFUSE(cond, ...) do {						\
		if (cond) {						\
			pr_err(__VA_ARGS__);				\
			*err = EOPNOTSUPP;				\
			return -1;					\
		}							\
	} while (0)

static int refused(CriuOpts *o, int *err)
{
	size_t i;

	/* what a later imgcr may do, with the reason it does not yet */
	REFUSE(o->has_lazy_pages && o->lazy_pages, "lazy_pages: lazy restore (userfaultfd) is not supported");
	REFUSE(o->ps, "ps: the page server is not supported");
	REFUSE(o->has_auto_dedup && o->auto_dedup, "auto_dedup: not supported (a pre-dump keeps no images)");
	REFUSE(o->has_leave_stopped && o->leave_stopped, "leave_stopped: not supported (leave_running or kill)");
	/* CRIU's criu_cg_mode: IGNORE 0, SOFT 3 and DEFAULT 6 (SOFT) are imgcr's --cgroups ignore|soft */
	REFUSE(o->has_manage_cgroups_mode && o->manage_cgroups_mode != 0 && o->manage_cgroups_mode != 3 &&
	       o->manage_cgroups_mode != 6,
	       "manage_cgroups_mode %d: only soft (3, the default) and ignore (0) are supported (imgcr dump, restore --cgroups soft|ignore)",
	       o->manage_cgroups_mode);
	REFUSE(o->n_cg_root, "cg_root: another root for the tree's cgroups is not supported");
	REFUSE(o->cgroup_props || o->cgroup_props_file || o->n_cgroup_dump_controller || o->cgroup_yard,
	       "cgroup_props, cgroup_props_file, cgroup_dump_controller, cgroup_yard: cgroups are not dumped yet");
	REFUSE(o->n_external, "external %s: external resources are not supported yet", o->external[0]);
	REFUSE(o->n_veths, "veths: network namespaces are not supported yet");
	REFUSE(o->n_join_ns, "join_ns %s: joining namespaces is not supported yet", o->join_ns[0]->ns ? o->join_ns[0]->ns : "");
	/* runc always sends CLONE_NEWNET: check_empty_ns() */
	REFUSE(o->has_empty_ns && (o->empty_ns & ~(uint32_t)CLONE_NEWNET), "empty_ns 0x%x: empty namespaces other than the network's are not supported", o->empty_ns);
	REFUSE(o->n_unix_sk_ino, "unix_sk_ino: a list of external unix sockets is not supported (ext_unix_sk allows every one)");
	REFUSE(o->n_skip_mnt || o->n_enable_fs || (o->has_auto_ext_mnt && o->auto_ext_mnt) ||
	       (o->has_ext_sharing && o->ext_sharing) || (o->has_ext_masters && o->ext_masters),
	       "skip_mnt, enable_fs, auto_ext_mnt, ext_sharing, ext_masters: mount namespaces are not supported yet");
	REFUSE(o->lsm_profile && *o->lsm_profile, "lsm_profile %s: not supported", o->lsm_profile);
	REFUSE(o->lsm_mount_context && *o->lsm_mount_context, "lsm_mount_context: not supported");
	REFUSE(o->n_exec_cmd, "exec_cmd: not supported");
	REFUSE(o->n_irmap_scan_paths || (o->has_force_irmap && o->force_irmap), "irmap_scan_paths, force_irmap: not supported (imgcr needs no inotify path map)");
	REFUSE(o->has_timeout && o->timeout, "timeout %u: not supported", o->timeout);
	REFUSE(o->has_tcp_skip_in_flight && o->tcp_skip_in_flight, "tcp_skip_in_flight: not supported (in-flight connections are dumped)");
	REFUSE(o->has_status_fd, "status_fd: not supported (no lazy pages)");
	REFUSE(o->has_pidfd_store_sk, "pidfd_store_sk: not supported (a pre-dump keeps no pids)");
	REFUSE(o->has_pre_dump_mode, "pre_dump_mode: not supported (a pre-dump copies no memory)");
	/* runc always names /etc/criu/runc.conf; CRIU ignores a missing one */
	REFUSE(o->config_file && *o->config_file && access(o->config_file, F_OK) == 0,
	       "config_file %s: CRIU configuration files are not read (the file exists)", o->config_file);
	REFUSE(o->has_tls && o->tls, "tls: not supported (no page server)");
	for (i = 0; i < o->base.n_unknown_fields; i++)
		REFUSE(1, "option field %u of criu_opts is not known to imgcr-criu", o->base.unknown_fields[i].tag);
	return 0;
}

/*
 * parent_img (runc's --parent-path, relative to the images directory): a
 * directory a PRE_DUMP of imgcr-criu marked (PREDUMP_MARK) for the same
 * pid.  0, or -1 (printed).
 */
static int check_parent(CriuOpts *o, int dirfd, int *err)
{
	char buf[256];
	int fd, pid = -1;
	ssize_t n;

	*err = EOPNOTSUPP;
	if (strlen(o->parent_img) > PATH_MAX) {
		pr_err("parent_img: a path longer than %d", PATH_MAX);
		return -1;
	}
	fd = openat(dirfd, o->parent_img, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("parent_img %s: not a directory beside the images directory", o->parent_img);
		return -1;
	}
	n = -1;
	{
		int m = openat(fd, PREDUMP_MARK, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

		if (m >= 0) {
			n = read(m, buf, sizeof(buf) - 1);
			close(m);
		}
	}
	close(fd);
	if (n <= 0) {
		pr_err("parent_img %s: not a pre-dump of imgcr-criu (no %s in it): imgcr has no incremental images; only imgcr-criu's own pre-dump can be a parent",
		       o->parent_img, PREDUMP_MARK);
		return -1;
	}
	buf[n] = 0;
	if (sscanf(buf, "imgcr-criu pre-dump pid %d", &pid) != 1 || !o->has_pid || pid != o->pid) {
		pr_err("parent_img %s: a pre-dump of pid %d, not of pid %d", o->parent_img, pid,
		       o->has_pid ? o->pid : 0);
		return -1;
	}
	return 0;
}

/* The same file: 1 (both stat()ed), else 0. */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The tree file's escaped text (tree_escape: %XX) in place. */
static void unescape(char *s)
{
	char *d = s;
	unsigned int c;

	if (!strcmp(s, "%"))
		*s = 0;
	for (; *s; s++, d++) {
		if (s[0] == '%' && sscanf(s + 1, "%2x", &c) == 1 && s[1] && s[2]) {
			*d = (char)c;
			s += 2;
		} else {
			*d = *s;
		}
	}
	*d = 0;
}

/* The value of " KEY=" in the record @line into @out (unescaped): 0, or -1 if absent. */
static int rec_field(const char *line, const char *key, char *out, size_t size)
{
	char pat[32];
	const char *v;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	v = strstr(line, pat);
	if (!v)
		return -1;
	v += strlen(pat);
	n = strcspn(v, " \n");
	if (n >= size)
		return -1;
	memcpy(out, v, n);
	out[n] = 0;
	unescape(out);
	return 0;
}

/*
 * RESTORE: the image's mount at @mp (its "mnt" record in DIR/tree; of
 * several stacked there, the top one, as restore --external takes): 1 and
 * @how, @ext (the host path of an ext mount, else ""), 0 if the image has
 * none, -1 (printed) if the tree file cannot be read.
 */
static int image_mount(int dirfd, const char *mp, char *how, size_t hsize, char *ext, size_t esize)
{
	char *line = NULL, val[PATH_MAX], top[24] = "";
	size_t cap = 0;
	int fd, found = 0;
	FILE *f;

	fd = openat(dirfd, "tree", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		pr_perror("cannot read the images' tree file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* of mounts stacked at @mp, the top one: each mounted on the one before */
	while (getline(&line, &cap, f) > 0) {
		char id[24], parent[24];

		if (strncmp(line, "mnt ", 4) || rec_field(line, "mp", val, sizeof(val)) || strcmp(val, mp))
			continue;
		if (rec_field(line, "parent", parent, sizeof(parent)))
			parent[0] = 0;
		if (found && strcmp(parent, top))
			continue;
		if (rec_field(line, "id", id, sizeof(id)))
			id[0] = 0;
		snprintf(top, sizeof(top), "%s", id);
		found = 1;
		if (rec_field(line, "how", how, hsize))
			*how = 0;
		if (rec_field(line, "ext", ext, esize))
			*ext = 0;
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * root and ext_mnt.  imgcr dumps a container's mounts itself: a mount of a
 * file system imgcr's namespace also has (the root file system, a host
 * directory bound in) is recorded with its host path and bound again from
 * there (docs/containers.md).  So at DUMP root must be the pid's root and
 * ext_mnt (runc: every bind mount, masked paths, devices) needs nothing.
 * At RESTORE a root that is the directory the image's root mount was bound
 * from needs nothing either; another one (podman's restore --import: the
 * container made again in a new storage layer) is imgcr restore --root
 * ROOT, which binds it instead and finds the tree's files there by content
 * (a copy); an ext_mnt whose source is another file than the image's
 * mount was bound from (the new container's /etc/hosts...) is --external
 * mnt[KEY]:VAL.  Only an image's external mount can be given a source: one
 * imgcr makes itself (a tmpfs, a bind of the tree's own) is refused, never
 * ignored.  A key that is no mount of the image is unused, as by CRIU.
 */
static int check_mounts(CriuOpts *o, int type, int dirfd, struct criu_args *a, int *err)
{
	char how[16], ext[PATH_MAX], path[64];
	size_t i;
	int r;

	*err = EOPNOTSUPP;
	if (type == REQ_DUMP) {
		snprintf(path, sizeof(path), "/proc/%d/root", o->has_pid ? o->pid : 0);
		if (o->root && *o->root && !same_file(o->root, path)) {
			pr_err("root %s: not the root directory of pid %d: only a tree's own root can be dumped",
			       o->root, o->has_pid ? o->pid : 0);
			return -1;
		}
		return 0;
	}
	if (o->root && *o->root) {
		r = image_mount(dirfd, "/", how, sizeof(how), ext, sizeof(ext));
		if (r < 0)
			return -1;
		if (!r || strcmp(how, "ext")) {
			pr_err("root %s: the image has no root file system bound from outside (its / is %s): restoring into a given root is not supported",
			       o->root, r ? how : "not a mount of its own");
			return -1;
		}
		if (!same_file(o->root, ext)) {
			pr_info("root %s: not the directory the container's root was (%s): restored with --root",
				o->root, ext);
			add(a, "--root");
			add(a, o->root);
		}
	}
	for (i = 0; i < o->n_ext_mnt; i++) {
		const char *key = o->ext_mnt[i]->key, *val = o->ext_mnt[i]->val;
		size_t len;

		if (!key || !val || !*key || !*val) {
			pr_err("ext_mnt %zu: no key or value", i);
			*err = EINVAL;
			return -1;
		}
		r = image_mount(dirfd, key, how, sizeof(how), ext, sizeof(ext));
		if (r < 0)
			return -1;
		if (!r) {
			pr_debug("ext_mnt %s: no mount of the image there: unused", key);
			continue;
		}
		if (same_file(val, ext))
			continue;
		if (strcmp(how, "ext")) {
			pr_err("ext_mnt %s:%s: the image's mount at %s is not external (it is restored as %s): a different source is not supported",
			       key, val, key, how);
			return -1;
		}
		if (a->nmntext == MNTEXT_MAX) {
			pr_err("ext_mnt %s:%s: more than %d mounts with another source than at the dump",
			       key, val, MNTEXT_MAX);
			return -1;
		}
		len = strlen(key) + strlen(val) + 8;
		a->mntext[a->nmntext] = malloc(len);
		if (!a->mntext[a->nmntext]) {
			pr_err("out of memory");
			*err = ENOMEM;
			return -1;
		}
		snprintf(a->mntext[a->nmntext], len, "mnt[%s]:%s", key, val);
		pr_info("ext_mnt %s: bound from %s, not %s as at the dump", key, val, ext);
		add(a, "--external");
		add(a, a->mntext[a->nmntext++]);
	}
	return 0;
}

/*
 * empty_ns CLONE_NEWNET (runc always: "runc doesn't manage network devices"):
 * CRIU then makes the network namespace without its devices and settings.
 * imgcr restores the tree's network namespace as dumped; for a namespace
 * with no device but lo that is what the client expects (runc's loopback),
 * one with other devices (set up by the client's hooks, which would make
 * them again) is refused: at DUMP from /proc/PID/net/dev, at RESTORE from
 * the image's netdev records.
 */
static int check_empty_ns(CriuOpts *o, int type, int dirfd, int *err)
{
	char path[64], *line = NULL, name[IFNAMSIZ_MAX], *c;
	size_t cap = 0;
	int fd, bad = 0;
	FILE *f;

	if (!o->has_empty_ns || !(o->empty_ns & CLONE_NEWNET))
		return 0;
	*err = EOPNOTSUPP;
	if (type == REQ_DUMP) {
		snprintf(path, sizeof(path), "/proc/%d/net/dev", o->has_pid ? o->pid : 0);
		f = fopen(path, "re");
	} else {
		fd = openat(dirfd, "tree", O_RDONLY | O_CLOEXEC);
		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f && fd >= 0)
			close(fd);
	}
	if (!f) {
		pr_perror("empty_ns 0x%x: cannot read %s", o->empty_ns, type == REQ_DUMP ? path : "the images' tree file");
		return -1;
	}
	while (!bad && getline(&line, &cap, f) > 0) {
		if (type == REQ_DUMP) {
			c = strchr(line, ':');
			if (!c)
				continue;	/* the two header lines */
			*c = 0;
			snprintf(name, sizeof(name), "%s", line + strspn(line, " "));
		} else if (strncmp(line, "netdev ", 7) || rec_field(line, "name", name, sizeof(name))) {
			continue;
		}
		if (strcmp(name, "lo")) {
			pr_err("empty_ns 0x%x: the container's network namespace has device %s: only one with lo alone is supported (imgcr restores it as dumped, it does not leave it to the client)",
			       o->empty_ns, name);
			bad = 1;
		}
	}
	free(line);
	fclose(f);
	return bad ? -1 : 0;
}

struct stdio_scan {
	pid_t root;
	const char *link;	/* "pipe:[INODE]" */
};

/* @pid is @root or one of its descendants (the tree imgcr dumps) */
static int in_tree(pid_t root, pid_t pid)
{
	pid_t ppid, pgid, sid;
	char state;
	int depth;

	for (depth = 0; depth < 4096 && pid > 0; depth++) {
		if (pid == root)
			return 1;
		if (proc_stat(pid, &state, &ppid, &pgid, &sid))
			return 0;
		pid = ppid;
	}
	return 0;
}

static int stdio_outside_fd(pid_t pid, int fd, void *arg)
{
	const struct stdio_scan *s = arg;
	char path[64], link[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0)
		return 0;
	link[len] = 0;
	return !strcmp(link, s->link);
}

static int stdio_outsider(pid_t pid, void *arg)
{
	const struct stdio_scan *s = arg;

	if (in_tree(s->root, pid))
		return 0;
	return proc_each_fd(pid, stdio_outside_fd, arg);
}

/*
 * DUMP: the pid's stdio pipes held outside its tree (runc's, handed back at
 * restore as inherit_fd) are external.  One whose ends are all in the tree
 * (`sh -c 'x | y'` as the root, its stdin a pipe from its child) is the
 * tree's own: dumped with its data as any other (review s12 L5).  A
 * process whose fds cannot be read counts as outside (external, as
 * before).
 */
static void stdio_pipes(pid_t pid, struct criu_args *a)
{
	char path[64], link[64];
	int i, j, n = 0;
	ssize_t len;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, i);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (link[0] == '/') {
			struct statx sx;

			/*
			 * a file (/dev/null, a log): the dump takes it as the
			 * host's if it is on a mount outside the container
			 */
			if (statx(AT_FDCWD, path, 0, STATX_MNT_ID | STATX_INO | STATX_TYPE, &sx) ||
			    !(sx.stx_mask & STATX_MNT_ID) ||
			    (!S_ISREG(sx.stx_mode) && !S_ISCHR(sx.stx_mode)))
				continue;
			snprintf(a->ext[n], sizeof(a->ext[n]), "--external=file[%llx:%llx]",
				 (unsigned long long)sx.stx_mnt_id, (unsigned long long)sx.stx_ino);
			add(a, a->ext[n++]);
			continue;
		}
		if (strncmp(link, "pipe:[", 6))
			continue;
		for (j = 0; j < n && strcmp(a->ext[j] + 11, link); j++)
			;
		if (j < n || !proc_each_process(stdio_outsider, &(struct stdio_scan){ pid, link }))
			continue;
		snprintf(a->ext[n], sizeof(a->ext[n]), "--external=%s", link);
		add(a, a->ext[n++]);
	}
}

/* RESTORE: inherit_fd (runc: the new stdio pipes, our fds 0-2, for the dumped ones) */
static int inherit_fds(CriuOpts *o, struct criu_args *a, int *err)
{
	size_t i;

	*err = EOPNOTSUPP;
	if (o->n_inherit_fd > INHERIT_MAX) {
		pr_err("inherit_fd: %zu entries, more than %d", o->n_inherit_fd, INHERIT_MAX);
		return -1;
	}
	for (i = 0; i < o->n_inherit_fd; i++) {
		const char *key = o->inherit_fd[i]->key;
		int fd = o->inherit_fd[i]->has_fd ? o->inherit_fd[i]->fd : -1;

		if (!key || strncmp(key, "pipe:[", 6)) {
			pr_err("inherit_fd %s: only pipes (pipe:[INODE]) can be inherited", key ? key : "(no key)");
			return -1;
		}
		if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
			pr_err("inherit_fd %s: fd %d is not open in imgcr-criu", key, fd);
			*err = EBADF;
			return -1;
		}
		snprintf(a->inherit[i], sizeof(a->inherit[i]), "--inherit-fd=fd[%d]:%.60s", fd, key);
		add(a, a->inherit[i]);
	}
	return 0;
}

int opts_to_args(CriuOpts *o, int type, pid_t peer, struct criu_args *a, int *err)
{
	int level;

	memset(a, 0, sizeof(*a));
	a->images_fd = a->work_fd = -1;
	*err = EINVAL;
	if (!o) {
		pr_err("%s: the request has no options (opts)", req_names[type]);
		return -1;
	}
	add(a, type == REQ_DUMP ? "dump" : "restore");
	if (!o->has_images_dir_fd || o->images_dir_fd == -1) {
		if (!o->images_dir || !*o->images_dir) {
			pr_err("%s: neither images_dir_fd nor images_dir was given", req_names[type]);
			return -1;
		}
		a->images_fd = open(o->images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (a->images_fd < 0) {
			pr_perror("images_dir %s", o->images_dir);
			return -1;
		}
	} else {
		a->images_fd = client_dir(peer, o->images_dir_fd, "images_dir_fd");
		if (a->images_fd < 0)
			return -1;
	}
	dir_path(a->images_fd, a->images, sizeof(a->images));
	add(a, "-D");
	add(a, a->images);
	if (o->has_work_dir_fd) {
		a->work_fd = client_dir(peer, o->work_dir_fd, "work_dir_fd");
		if (a->work_fd < 0)
			return -1;
	}
	if (o->log_file && *o->log_file && !(o->has_log_to_stderr && o->log_to_stderr)) {
		if (strchr(o->log_file, '/') || !strcmp(o->log_file, "..") || !strcmp(o->log_file, ".")) {
			pr_err("log_file %s: a name in the work directory, without '/'", o->log_file);
			return -1;
		}
		/* opened now: a refusal below is in the log file runc names */
		snprintf(a->log, sizeof(a->log), "/proc/self/fd/%d/%s",
			 a->work_fd >= 0 ? a->work_fd : a->images_fd, o->log_file);
		if (log_open(a->log))
			return -1;
	}
	if (refused(o, err))
		return -1;
	*err = EINVAL;
	if (type == REQ_DUMP) {
		if (!o->has_pid || o->pid <= 0) {
			pr_err("DUMP: no pid: dumping the client itself is not supported");
			*err = EOPNOTSUPP;
			return -1;
		}
		snprintf(a->pid, sizeof(a->pid), "%d", o->pid);
		add(a, "-t");
		add(a, a->pid);
	}
	/* CRIU: 0 messages, 1 errors, 2 warnings (default), 3 info, 4 debug */
	level = o->has_log_level ? o->log_level : 2;
	level = level < 1 ? 0 : level > 100 ? 99 : level - 1;
	snprintf(a->verbosity, sizeof(a->verbosity), "-v%d", level);
	add(a, a->verbosity);
	if (o->has_shell_job && o->shell_job)
		add(a, "-j");
	if (o->has_display_stats && o->display_stats)
		add(a, "--stats");
	/* CRIU's: at dump, the connections not saved; at restore, made closed */
	if (o->has_tcp_close && o->tcp_close)
		add(a, "--tcp-close");
	if (check_mounts(o, type, a->images_fd, a, err) || check_empty_ns(o, type, a->images_fd, err))
		return -1;
	*err = EINVAL;
	if (type == REQ_DUMP) {
		if (o->n_inherit_fd) {
			pr_err("inherit_fd %s: only at RESTORE", o->inherit_fd[0]->key ? o->inherit_fd[0]->key : "");
			*err = EOPNOTSUPP;
			return -1;
		}
		stdio_pipes(o->pid, a);
		/* runc puts the restored container in the cgroup it made again, with its device rules */
		if (o->has_manage_cgroups && o->manage_cgroups)
			add(a, "--caller-cgroups");
		/* --manage-cgroups-mode ignore: no membership recorded (a v1 host), none restored */
		if (o->has_manage_cgroups_mode && o->manage_cgroups_mode == 0)
			add(a, "--cgroups=ignore");
		if (o->has_leave_running && o->leave_running)
			add(a, "-R");
		/*
		 * after a pre-dump (runc --parent-path): the memory copied while
		 * the tree runs, within this dump (the pre-dump kept nothing)
		 */
		if (o->parent_img && *o->parent_img) {
			if (check_parent(o, a->images_fd, err))
				return -1;
			add(a, "--live");
			/* the live passes in the log (stats: live_passes=...) */
			if (!(o->has_display_stats && o->display_stats))
				add(a, "--stats");
		}
		if (o->has_ext_unix_sk && o->ext_unix_sk)
			add(a, "--ext-unix-sk");
		if (o->has_ghost_limit) {
			snprintf(a->ghost, sizeof(a->ghost), "--ghost-limit=%u", o->ghost_limit);
			add(a, a->ghost);
		}
	} else {
		add(a, "--detach");	/* as CRIU's swrk: the tree runs on when we exit */
		if (inherit_fds(o, a, err))
			return -1;
		*err = EINVAL;
		a->sibling = o->has_rst_sibling && o->rst_sibling;
		/* runc made the container's cgroup, set it and put us in it: a cgroup namespace's root */
		a->caller_cgroups = o->has_manage_cgroups && o->manage_cgroups;
		/* --manage-cgroups-mode ignore: the tasks stay in the client's cgroup (cgmember.c) */
		if (o->has_manage_cgroups_mode && o->manage_cgroups_mode == 0)
			add(a, "--cgroups=ignore");
	}
	a->notify = o->has_notify_scripts && o->notify_scripts;
	a->orphan_pts = o->has_orphan_pts_master && o->orphan_pts_master;
	a->argv[a->argc] = NULL;
	if (a->overflow) {
		pr_err("%s: more than %d arguments for imgcr", req_names[type], ARGS_MAX);
		return -1;
	}
	*err = 0;
	return 0;
}

void args_free(struct criu_args *a)
{
	while (a->nmntext > 0)
		free(a->mntext[--a->nmntext]);
	if (a->images_fd >= 0)
		close(a->images_fd);
	if (a->work_fd >= 0)
		close(a->work_fd);
	a->images_fd = a->work_fd = -1;
}
