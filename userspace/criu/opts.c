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
 *   ghost_limit                 dump --ghost-limit
 *   display_stats               --stats
 *   log_file, log_level         -o WORKDIR/LOG_FILE, -v (CRIU's level - 1)
 *   log_to_stderr               no -o
 *   notify_scripts              NOTIFY round trips (swrk.c)
 *   rst_sibling                 restore: the root a child of the client
 *   tcp_established, file_locks, link_remap, evasive_devices,
 *   orphan_pts_master (no terminal of a container yet), network_lock,
 *   cpu_cap, skip_file_rwx_check, unprivileged, weak_sysctls,
 *   mntns_compat_mode           accepted: imgcr always does (or needs) no more
 *   everything else, when set (root, parent_img, track_mem, lazy_pages, ps,
 *   manage_cgroups, cg_root, external, ext_mnt, veths, join_ns,
 *   inherit_fd, empty_ns, freeze_cgroup, lsm_profile, exec_cmd, ...):
 *                               refused, and any field this file does not know
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "criu.h"
#include "log.h"

const char *const req_names[REQ_NR] = {
	"EMPTY", "DUMP", "RESTORE", "CHECK", "PRE_DUMP", "PAGE_SERVER", "NOTIFY",
	"CPUINFO_DUMP", "CPUINFO_CHECK", "FEATURE_CHECK", "VERSION", "WAIT_PID",
	"PAGE_SERVER_CHLD", "SINGLE_PRE_DUMP",
};

static void add(struct criu_args *a, char *arg)
{
	if (a->argc < ARGS_MAX)
		a->argv[a->argc++] = arg;
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
	REFUSE(o->root && *o->root, "root %s: a container's root file system is not supported yet (plain process trees only)", o->root);
	REFUSE(o->parent_img && *o->parent_img, "parent_img %s: incremental dumps (pre-dump images) are not supported", o->parent_img);
	REFUSE(o->has_track_mem && o->track_mem, "track_mem: memory tracking between dumps is not supported (imgcr dump --live copies memory while the tree runs, in one dump)");
	REFUSE(o->has_lazy_pages && o->lazy_pages, "lazy_pages: lazy restore (userfaultfd) is not supported");
	REFUSE(o->ps, "ps: the page server is not supported");
	REFUSE(o->has_auto_dedup && o->auto_dedup, "auto_dedup: not supported (no parent images)");
	REFUSE(o->has_leave_stopped && o->leave_stopped, "leave_stopped: not supported (leave_running or kill)");
	REFUSE(o->has_manage_cgroups && o->manage_cgroups, "manage_cgroups: cgroups are not dumped yet (plain process trees only)");
	REFUSE(o->has_manage_cgroups_mode && o->manage_cgroups_mode, "manage_cgroups_mode %d: cgroups are not dumped yet", o->manage_cgroups_mode);
	REFUSE(o->n_cg_root, "cg_root: cgroups are not restored yet");
	REFUSE(o->cgroup_props || o->cgroup_props_file || o->n_cgroup_dump_controller || o->cgroup_yard,
	       "cgroup_props, cgroup_props_file, cgroup_dump_controller, cgroup_yard: cgroups are not dumped yet");
	REFUSE(o->freeze_cgroup && *o->freeze_cgroup, "freeze_cgroup %s: not supported (imgcr freezes with ptrace)", o->freeze_cgroup);
	REFUSE(o->n_external, "external %s: external resources are not supported yet", o->external[0]);
	REFUSE(o->n_ext_mnt, "ext_mnt %s: external mounts are not supported yet", o->ext_mnt[0]->key ? o->ext_mnt[0]->key : "");
	REFUSE(o->n_veths, "veths: network namespaces are not supported yet");
	REFUSE(o->n_join_ns, "join_ns %s: joining namespaces is not supported yet", o->join_ns[0]->ns ? o->join_ns[0]->ns : "");
	REFUSE(o->n_inherit_fd, "inherit_fd %s: not supported yet", o->inherit_fd[0]->key ? o->inherit_fd[0]->key : "");
	REFUSE(o->has_empty_ns && o->empty_ns, "empty_ns 0x%x: namespaces are not supported yet", o->empty_ns);
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
	REFUSE(o->has_tcp_close && o->tcp_close, "tcp_close: not supported (connections are restored)");
	REFUSE(o->has_status_fd, "status_fd: not supported (no lazy pages)");
	REFUSE(o->has_pidfd_store_sk, "pidfd_store_sk: not supported (no pre-dumps)");
	REFUSE(o->has_pre_dump_mode, "pre_dump_mode: not supported (no pre-dumps)");
	REFUSE(o->config_file && *o->config_file, "config_file %s: CRIU configuration files are not read", o->config_file);
	REFUSE(o->has_tls && o->tls, "tls: not supported (no page server)");
	for (i = 0; i < o->base.n_unknown_fields; i++)
		REFUSE(1, "option field %u of criu_opts is not known to imgcr-criu", o->base.unknown_fields[i].tag);
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
	if (refused(o, err))
		return -1;
	*err = EINVAL;
	add(a, type == REQ_DUMP ? "dump" : "restore");
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
		snprintf(a->log, sizeof(a->log), "-o/proc/self/fd/%d/%s",
			 a->work_fd >= 0 ? a->work_fd : a->images_fd, o->log_file);
		add(a, a->log);
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
	if (type == REQ_DUMP) {
		if (o->has_leave_running && o->leave_running)
			add(a, "-R");
		if (o->has_ext_unix_sk && o->ext_unix_sk)
			add(a, "--ext-unix-sk");
		if (o->has_ghost_limit) {
			snprintf(a->ghost, sizeof(a->ghost), "--ghost-limit=%u", o->ghost_limit);
			add(a, a->ghost);
		}
	} else {
		add(a, "--detach");	/* as CRIU's swrk: the tree runs on when we exit */
		a->sibling = o->has_rst_sibling && o->rst_sibling;
	}
	a->notify = o->has_notify_scripts && o->notify_scripts;
	a->argv[a->argc] = NULL;
	*err = 0;
	return 0;
}

void args_free(struct criu_args *a)
{
	if (a->images_fd >= 0)
		close(a->images_fd);
	if (a->work_fd >= 0)
		close(a->work_fd);
	a->images_fd = a->work_fd = -1;
}
