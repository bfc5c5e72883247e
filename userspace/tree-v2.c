// SPDX-License-Identifier: GPL-2.0
/*
 * Version 2 tree files (imgcr before version 3): still read.  A version 2
 * record is the version 3 record of the same name with its fields by
 * position instead of by key; this file names them (the layouts below,
 * from the version 2 format document) and hands the record to the same
 * readers as version 3 (tree.c's record table), so both versions are
 * checked alike.  Nothing else knows version 2: removing its support is
 * removing this file and the call in tree_read().
 *
 * Version 2 in short: "NAME FIELD FIELD ..." separated by single spaces,
 * the same values as version 3 (escaping, numbers).  Records whose field
 * count depends on a field: cred (NGROUPS, then that many GIDs), file (its
 * KIND's fields), lock (its kind's), and an optional tail (tty and memfd:
 * MODE UID GID, absent in older files).
 */
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "tree.h"

/*
 * name [selector: the value of field 1 or 2 that picks the layout], the
 * keys of the fields after the name; "|" starts an optional tail, given
 * whole or not at all.
 */
static const struct {
	const char *name, *sel, *keys;
} layouts[] = {
	{ "root", NULL, "pid" },
	{ "task", NULL, "pid ppid pgid sid comm" },
	{ "fs", NULL, "pid umask cwd root" },
	{ "thread", NULL, "pid tid" },
	{ "rlimit", NULL, "pid name soft hard" },
	{ "oom", NULL, "pid adj" },
	{ "sched", NULL, "pid policy reset prio nice" },
	{ "affinity", NULL, "pid cpus" },
	{ "ioprio", NULL, "pid value" },
	{ "nnp", NULL, "pid value" },
	{ "loginuid", NULL, "pid uid" },
	{ "cwd-deleted", NULL, "pid" },
	{ "exit", NULL, "pid status" },
	{ "stopped", NULL, "pid" },
	{ "ghost", NULL, "dev ino size mode uid gid mtime path" },
	{ "ghost-mapped", NULL, "dev ino" },
	{ "fstat", NULL, "id dev ino size mtime mnt" },
	{ "fd", NULL, "pid fd file cloexec" },
	{ "sk", NULL, "ino family type proto state peer backlog sndbuf rcvbuf opts rcvtimeo sndtimeo peekoff shutdown mode uid gid qlen name peername" },
	{ "skopt", NULL, "ino name value" },
	{ "pipe", NULL, "ino size len" },
	{ "tty", NULL, "index dev sid fg locked pkt iflag oflag cflag lflag cc rows cols xpixel ypixel inlen outlen | mode uid gid" },
	{ "epitem", NULL, "file pid tfd events data" },
	{ "watch", NULL, "file wd mask path" },
	/* lock: by its kind (field 1) */
	{ "lock", "flock", "kind pid fd file type" },
	{ "lock", "posix", "kind pid fd file type start end" },
	{ "lock", "ofd", "kind file type start end" },
	/* file ID KIND FLAGS POS: by its KIND (field 2), then the kind's fields */
	{ "file", "file", "id kind flags pos path" },
	{ "file", "pipe", "id kind flags pos ino" },
	{ "file", "fifo", "id kind flags pos ino path" },
	{ "file", "chr", "id kind flags pos dev path" },
	{ "file", "eventfd", "id kind flags pos count semaphore" },
	{ "file", "signalfd", "id kind flags pos sigmask" },
	{ "file", "timerfd", "id kind flags pos clock setflags ticks value interval" },
	{ "file", "tty", "id kind flags pos role index dev path" },
	{ "file", "epoll", "id kind flags pos" },
	{ "file", "inotify", "id kind flags pos" },
	{ "file", "memfd", "id kind flags pos ino seals size path | mode uid gid" },
	{ "file", "pidfd", "id kind flags pos pid start" },
	{ "file", "ghost", "id kind flags pos dev ino" },
	{ "file", "sk", "id kind flags pos ino" },
	/* an unknown KIND: tree.c refuses it ("unknown file kind") */
	{ "file", "", "id kind flags pos" },
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* the keys of @layout into @key (its own copy in @buf): the count, *@opt where the tail starts (-1: none) */
static int layout_keys(const char *layout, char *buf, size_t size, char **key, int *opt)
{
	char *s, *save = NULL;
	int n = 0;

	snprintf(buf, size, "%s", layout);
	*opt = -1;
	for (s = strtok_r(buf, " ", &save); s; s = strtok_r(NULL, " ", &save)) {
		if (!strcmp(s, "|"))
			*opt = n;
		else
			key[n++] = s;
	}
	return n;
}

/* cred PID RUID EUID SUID FSUID RGID EGID SGID FSGID NGROUPS [GID...]: groups=GID,GID or - */
static const char *cred_split(char **v, int nv, struct rec *r)
{
	static const char *const keys[] = { "pid", "ruid", "euid", "suid", "fsuid",
					    "rgid", "egid", "sgid", "fsgid" };
	static char groups[65536 * 11 + 2];
	long long ng;
	size_t o = 0;
	int i;

	if (nv < 11 || tree_num(v[10], &ng) || ng < 0 || ng > 65536 || nv != 11 + ng)
		return "bad cred record";
	for (i = 0; i < 9; i++) {
		r->key[i] = (char *)keys[i];
		r->val[i] = v[i + 1];
	}
	groups[0] = 0;
	for (i = 11; i < nv; i++) {
		int n = snprintf(groups + o, sizeof(groups) - o, "%s%s", i > 11 ? "," : "", v[i]);

		if (n < 0 || (size_t)n >= sizeof(groups) - o)
			return "bad cred record";	/* a group longer than a number */
		o += n;
	}
	r->key[9] = "groups";
	r->val[9] = ng ? groups : "-";
	r->n = 10;
	memset(r->used, 0, sizeof(r->used));
	return NULL;
}

/* an attribute record (attrs.c): malformed ones were "bad attribute record" */
static int is_attr(const char *name)
{
	const struct tree_record *rt;

	for (rt = attrs_records; rt->name; rt++)
		if (!strcmp(rt->name, name))
			return 1;
	return 0;
}

const char *tree_v2_split(char *line, struct rec *r)
{
	static char kbuf[1024];
	char *v[REC_MAXF + 1], *s, *save = NULL, *key[64];
	int nv = 0, i, nk, opt;
	size_t l;

	for (s = strtok_r(line, " \n", &save); s && nv <= REC_MAXF; s = strtok_r(NULL, " \n", &save))
		v[nv++] = s;
	r->name = nv ? v[0] : NULL;
	r->n = 0;
	if (!nv)
		return NULL;
	if (!strcmp(v[0], "cred"))
		return cred_split(v, nv, r);
	for (l = 0; l < NLAYOUTS; l++) {
		if (strcmp(layouts[l].name, v[0]))
			continue;
		if (!layouts[l].sel)
			break;
		if (!strcmp(v[0], "lock") && nv >= 4 && !strcmp(v[1], layouts[l].sel))
			break;
		if (!strcmp(v[0], "file") && nv >= 5 &&
		    (!strcmp(v[2], layouts[l].sel) || !*layouts[l].sel))
			break;
	}
	if (l == NLAYOUTS) {
		if (!strcmp(v[0], "lock") && nv >= 4)
			return "bad lock record";
		return "unknown or malformed record";
	}
	nk = layout_keys(layouts[l].keys, kbuf, sizeof(kbuf), key, &opt);
	if (!strcmp(v[0], "file") && !*layouts[l].sel) {
		nv = 5;		/* an unknown kind: refused by its name */
	} else if (nv - 1 != nk && (opt < 0 || nv - 1 != opt)) {
		if (!strcmp(v[0], "file"))
			return "bad file record";
		if (!strcmp(v[0], "lock"))
			return "bad lock record";
		if (is_attr(v[0]))
			return "bad attribute record";
		return "unknown or malformed record";
	}
	for (i = 1; i < nv; i++) {
		r->key[i - 1] = key[i - 1];
		r->val[i - 1] = v[i];
		r->used[i - 1] = 0;
	}
	r->n = nv - 1;
	return NULL;
}
