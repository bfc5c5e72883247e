/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imgcr-criu: CRIU's swrk RPC (criu swrk FD) answered by imgcr's dump and
 * restore (swrk.c: the protocol; opts.c: a request's options as an imgcr
 * command line).
 */
#ifndef IMGCR_CRIU_H
#define IMGCR_CRIU_H

#include <stddef.h>
#include <sys/types.h>

#include "rpc.pb-c.h"

/* CRIU's enum criu_req_type (rpc.proto keeps it an int32) */
enum {
	REQ_EMPTY, REQ_DUMP, REQ_RESTORE, REQ_CHECK, REQ_PRE_DUMP, REQ_PAGE_SERVER,
	REQ_NOTIFY, REQ_CPUINFO_DUMP, REQ_CPUINFO_CHECK, REQ_FEATURE_CHECK, REQ_VERSION,
	REQ_WAIT_PID, REQ_PAGE_SERVER_CHLD, REQ_SINGLE_PRE_DUMP, REQ_NR
};

/* CRIU's version we answer VERSION with (runc 1.1 needs >= 3.0) */
#define CRIU_COMPAT_MAJOR	3
#define CRIU_COMPAT_MINOR	17
#define CRIU_COMPAT_SUBLEVEL	1

/* PRE_DUMP writes only this file into the images directory (swrk.c) */
#define PREDUMP_MARK	"imgcr-predump"
/*
 * DUMP also writes this one: podman (4.3) restores only a checkpoint whose
 * directory holds CRIU's inventory.img (it stat()s it).  Ours is a line of
 * text saying what the directory holds, not CRIU's image: crit and
 * checkpointctl refuse it (no CRIU magic), as they would our images.
 */
#define INVENTORY_MARK	"inventory.img"
#define INVENTORY_TEXT	"imgcr images, not CRIU's: imgcr show DIR reads them (written by imgcr-criu for podman)\n"

#define INHERIT_MAX	8	/* inherit_fd entries (runc: stdio pipes, 3) */
#define MNTEXT_MAX	32	/* restore: ext_mnt sources that differ from the dump's */
#define ARGS_MAX	(34 + 2 * INHERIT_MAX + 2 * MNTEXT_MAX)

/* An imgcr command line made from a DUMP or RESTORE request. */
struct criu_args {
	char *argv[ARGS_MAX + 1];
	int argc;
	int notify;		/* notify_scripts: NOTIFY round trips */
	int sibling;		/* rst_sibling */
	int caller_cgroups;	/* restore: manage_cgroups (cg_caller_base) */
	int orphan_pts;		/* orphan_pts_master: a pty whose master is the client's (tty.h) */
	int images_fd, work_fd;	/* our copies of the client's directories, or -1 */
	char images[4200], log[4200], pid[16], verbosity[16], ghost[24];
	char ext[3][96];		/* dump: --external pipe:[INO] or file[MNT:INO], the pid's stdio */
	char inherit[INHERIT_MAX][96];	/* restore: --inherit-fd fd[N]:pipe:[INO] */
	char *mntext[MNTEXT_MAX];	/* restore: --external mnt[MP]:PATH (malloc'ed) */
	int nmntext;
	int overflow;		/* more than ARGS_MAX arguments: refused */
};

/*
 * @o of a request of @type (REQ_DUMP or REQ_RESTORE) from the client @peer
 * into @a: 0, or -1 with the reason printed (pr_err: the answer's
 * cr_errmsg) and *@err the answer's cr_errno.
 */
int opts_to_args(CriuOpts *o, int type, pid_t peer, struct criu_args *a, int *err);
void args_free(struct criu_args *a);

extern const char *const req_names[REQ_NR];

#endif
