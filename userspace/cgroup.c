// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup namespace kind (ns.h): the tree's cgroups (version 2) and its
 * cgroup namespace.
 *
 * dump: every task's /proc/PID/cgroup ("0::PATH", as imgcr's cgroup
 * namespace sees it).  The root of the tree's cgroup namespace is its
 * base (the root task's cgroup less what the root task sees of it from
 * inside), and every task must be in it or below it.  Each cgroup from the base down to the tasks' is one
 * "cgroup" record (its path below the base, the controllers enabled for
 * its children, its limits), each task one "cg" record (its pid in its own
 * PID namespace and its cgroup).  Refused, naming the task: a version 1
 * hierarchy a task is not at the root of, a threaded cgroup, a task
 * outside the base, a cgroup namespace rooted elsewhere.
 *
 * restore: outside() makes the base again (the dumped path, in imgcr's
 * cgroup2 mount) and its sub-cgroups, parents first, refusing a base that
 * exists with tasks in it, and puts the ns-root in the base; inside() (the
 * ns-root) unshares its cgroup namespace there, so that it is rooted at
 * the base again; late() (imgcr, every task made, all in the base) puts
 * each task in its cgroup, then enables the controllers parents first (a
 * cgroup with controllers for its children holds no task, so this comes
 * after) and writes the limits, refusing a memory limit below what the
 * tree already uses (memory.current before the go byte: the image's
 * pages, charged at the exec, are not in it yet, so a tree bigger than
 * its limit can still be OOM-killed after the go byte).  cleanup()
 * removes what outside() made.  With cg_caller_base (imgcr-criu for a
 * runtime that made the container's cgroup and put imgcr in it, as runc
 * does for CRIU) the base is imgcr's own cgroup, whatever its path, used
 * as it is: its limits and device rules are the caller's (dump
 * --caller-cgroups); only a base that had controllers enabled for
 * children is refused (imgcr itself is in it).
 *
 * Not restored: the statistics (memory.stat, cpu.stat...), memory.peak and
 * the events counters, which only the kernel writes.
 *
 * A tree without a cgroup namespace of its own: cgmember.c, which shares
 * the helpers declared in cgroup.h (a task's cgroup, a cgroup's limits
 * read and written, its controllers, its removal, the record fields).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "tree.h"

#define CG_MAX		1024	/* cgroups of one tree */

const char *const cg_files[CG_NFILES] = {
	"cpu.max", "cpu.weight", "cpuset.cpus", "cpuset.mems", "io.weight", "pids.max",
	"memory.min", "memory.low", "memory.high", "memory.swap.max", "memory.oom.group",
	"memory.max",
};

struct cg_member {
	pid_t vpid;			/* in the tree's PID namespace */
	int cg;				/* index in cgs */
};

struct cg_ns {
	char *base;			/* absolute, in imgcr's cgroup namespace */
	int ncgs, nmembers;
	struct cg *cgs;
	struct cg_member *members;
	char *mnt;			/* restore: imgcr's cgroup2 mount */
};

int cg_caller_base;

void cg_free_one(struct cg *g)
{
	size_t j;

	free(g->path);
	free(g->subtree);
	for (j = 0; j < CG_NFILES; j++)
		free(g->val[j]);
	memset(g, 0, sizeof(*g));
}

static void cg_ns_free(struct cg_ns *ns)
{
	int i;

	if (!ns)
		return;
	for (i = 0; i < ns->ncgs; i++)
		cg_free_one(&ns->cgs[i]);
	free(ns->cgs);
	free(ns->members);
	free(ns->base);
	free(ns->mnt);
	free(ns);
}

int cg_mount_other;

char *cg_mount(void)
{
	char *line = NULL, *mp = NULL, *sep, mpbuf[PATH_MAX], root[PATH_MAX], fs[64];
	size_t len = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	cg_mount_other = 0;
	if (!f)
		return NULL;
	while (!mp && getline(&line, &len, f) > 0) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%63s", fs) != 1 || strcmp(fs, "cgroup2"))
			continue;
		if (sscanf(line, "%*d %*d %*s %4095s %4095s", root, mpbuf) != 2)
			continue;
		/* a mount of a subtree, or of another cgroup namespace's: paths would be wrong */
		if (strcmp(root, "/")) {
			if (!cg_mount_other)
				pr_warn("cgroup2 at %s is mounted with root %s (a subtree, or another cgroup namespace's): not used (imgcr needs the whole hierarchy mounted)",
					mpbuf, root);
			cg_mount_other = 1;
			continue;
		}
		mp = xstrdup(mpbuf);
	}
	free(line);
	fclose(f);
	if (mp)
		cg_mount_other = 0;
	return mp;
}

char *cg_read_line(const char *path)
{
	char buf[CG_VAL_MAX * 4];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return xstrdup(buf);
}

static int task_cgroup_v2(pid_t pid, char **out, int none_is_root)
{
	char path[64], *line = NULL;
	size_t len = 0;
	FILE *f;
	int ret = -1;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f) {
		pr_perror("pid %d: cannot read its cgroups", pid);
		return -1;
	}
	while (getline(&line, &len, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		line[strcspn(line, "\n")] = 0;
		if (!c2)
			continue;
		if (!strncmp(line, "0::", 3)) {
			free(*out);
			*out = xstrdup(line + 3);
		} else if (strcmp(c2 + 1, "/")) {
			pr_err("pid %d: in cgroup %s of a version 1 hierarchy: not supported", pid,
			       line);
			goto out;
		}
	}
	/* no "0::" line: cgroup2 never mounted since boot, every task in its root */
	if (!*out && none_is_root)
		*out = xstrdup("/");
	if (!*out)
		pr_err("pid %d: not in a version 2 cgroup", pid);
	ret = *out ? 0 : -1;
out:
	free(line);
	fclose(f);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

int cg_task_cgroup(pid_t pid, char **out)
{
	return task_cgroup_v2(pid, out, 0);
}

int cg_task_cgroup_host(pid_t pid, char **out)
{
	return task_cgroup_v2(pid, out, 1);
}

/* @pid's pid in its own PID namespace (NSpid's last), or -1 */
static pid_t task_vpid(pid_t pid)
{
	char path[64], *line = NULL, *last;
	size_t len = 0;
	pid_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		if (!strncmp(line, "NSpid:", 6)) {
			line[strcspn(line, "\n")] = 0;
			last = strrchr(line, '\t');
			v = atoi(last ? last + 1 : line + 6);
		}
	free(line);
	fclose(f);
	return v;
}

int cg_list_find(const struct cg *cgs, int n, const char *path)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(cgs[i].path, path))
			return i;
	return -1;
}

int cg_list_add(struct cg **cgs, int *n, int max, const char *path)
{
	struct cg *g;

	if (*n == max)
		return -1;
	*cgs = tree_grow(*cgs, *n, sizeof(**cgs));
	g = &(*cgs)[*n];
	memset(g, 0, sizeof(*g));
	g->path = xstrdup(path);
	return (*n)++;
}

static int cg_find(struct cg_ns *ns, const char *rel)
{
	return cg_list_find(ns->cgs, ns->ncgs, rel);
}

static int cg_add(struct cg_ns *ns, const char *rel)
{
	return cg_list_add(&ns->cgs, &ns->ncgs, CG_MAX, rel);
}

/* @rel and every cgroup between the base and it, parents first */
static int cg_add_path(struct cg_ns *ns, const char *rel)
{
	char buf[PATH_MAX], *p;

	if (cg_find(ns, "/") < 0 && cg_add(ns, "/") < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%s", rel);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (cg_find(ns, buf) < 0 && cg_add(ns, buf) < 0)
			return -1;
		*p = '/';
	}
	if (cg_find(ns, buf) < 0 && cg_add(ns, buf) < 0)
		return -1;
	return cg_find(ns, buf);
}

/* In the tree's cgroup namespace: the root task's cgroup as seen there, into a pipe */
struct cgns_arg {
	pid_t pid;
	int wfd;
};

static int cgns_rel(void *arg)
{
	struct cgns_arg *a = arg;
	char *cg;
	int r;

	if (cg_task_cgroup(a->pid, &cg))
		return -1;
	r = write(a->wfd, cg, strlen(cg)) == (ssize_t)strlen(cg) ? 0 : -1;
	free(cg);
	return r;
}

/* The root of @pid's cgroup namespace (malloc'ed), given its cgroup @abs in imgcr's. */
static char *cgns_root(pid_t pid, const char *abs)
{
	struct cgns_arg a = { .pid = pid };
	char rel[PATH_MAX], *root;
	int p[2], r;
	ssize_t n;
	size_t la, lr;

	if (pipe2(p, O_CLOEXEC)) {
		pr_perror("cannot make a pipe");
		return NULL;
	}
	a.wfd = p[1];
	r = ns_run_in(pid, NS_BIT(NS_CGROUP), cgns_rel, &a);
	close(p[1]);
	n = r ? -1 : read(p[0], rel, sizeof(rel) - 1);
	close(p[0]);
	if (n <= 0) {
		pr_err("pid %d: cannot read its cgroup from inside its cgroup namespace", pid);
		return NULL;
	}
	rel[n] = 0;
	la = strlen(abs);
	lr = strlen(rel);
	/* "/ct/init" seen as "/init" inside: the namespace's root is "/ct" */
	if (!strcmp(rel, "/"))
		return xstrdup(abs);
	if (!abs_path_ok(rel) || lr > la || strcmp(abs + la - lr, rel)) {
		pr_err("pid %d: in cgroup %s, which its cgroup namespace shows as %s: its namespace is not rooted above it: not supported",
		       pid, abs, rel);
		return NULL;
	}
	root = xstrdup(abs);
	root[la - lr] = 0;
	if (!*root)
		strcpy(root, "/");
	return root;
}

/*
 * The cgroup BPF programs a task's cgroup holds (device access control:
 * runc's and docker's on cgroup v2; socket and sysctl filters): a
 * restored task is in a new cgroup (or imgcr's), which has none of its
 * own, so they would be lost.  The programs in effect for a cgroup
 * (BPF_F_QUERY_EFFECTIVE: its own and those inherited) are compared with
 * those of the cgroup the restore puts the task in (@ref: the parent of
 * the tree's base, or imgcr's own cgroup): equal, the task keeps them.
 */
#define CG_BPF(t, what)	{ t, what " (" #t ")" }
static const struct {
	unsigned int type;
	const char *name;
} cg_bpf_types[] = {
	/* every cgroup attach type up to 7.2; one a kernel lacks gives EINVAL: skipped */
	CG_BPF(BPF_CGROUP_DEVICE, "device access"),
	CG_BPF(BPF_CGROUP_INET_INGRESS, "packet"),
	CG_BPF(BPF_CGROUP_INET_EGRESS, "packet"),
	CG_BPF(BPF_CGROUP_INET_SOCK_CREATE, "socket"),
	CG_BPF(BPF_CGROUP_INET_SOCK_RELEASE, "socket"),
	CG_BPF(BPF_CGROUP_SOCK_OPS, "TCP socket"),
	CG_BPF(BPF_CGROUP_INET4_BIND, "bind"),
	CG_BPF(BPF_CGROUP_INET6_BIND, "bind"),
	CG_BPF(BPF_CGROUP_INET4_POST_BIND, "bind"),
	CG_BPF(BPF_CGROUP_INET6_POST_BIND, "bind"),
	CG_BPF(BPF_CGROUP_INET4_CONNECT, "connect"),
	CG_BPF(BPF_CGROUP_INET6_CONNECT, "connect"),
	CG_BPF(BPF_CGROUP_UDP4_SENDMSG, "sendmsg"),
	CG_BPF(BPF_CGROUP_UDP6_SENDMSG, "sendmsg"),
	CG_BPF(BPF_CGROUP_UDP4_RECVMSG, "recvmsg"),
	CG_BPF(BPF_CGROUP_UDP6_RECVMSG, "recvmsg"),
	CG_BPF(BPF_CGROUP_INET4_GETPEERNAME, "getpeername"),
	CG_BPF(BPF_CGROUP_INET6_GETPEERNAME, "getpeername"),
	CG_BPF(BPF_CGROUP_INET4_GETSOCKNAME, "getsockname"),
	CG_BPF(BPF_CGROUP_INET6_GETSOCKNAME, "getsockname"),
	CG_BPF(BPF_CGROUP_GETSOCKOPT, "getsockopt"),
	CG_BPF(BPF_CGROUP_SETSOCKOPT, "setsockopt"),
	CG_BPF(BPF_CGROUP_SYSCTL, "sysctl"),
	CG_BPF(BPF_LSM_CGROUP, "LSM"),
	/* 6.7: not in Debian 12's headers */
	{ 49, "unix connect (BPF_CGROUP_UNIX_CONNECT)" },
	{ 50, "unix sendmsg (BPF_CGROUP_UNIX_SENDMSG)" },
	{ 51, "unix recvmsg (BPF_CGROUP_UNIX_RECVMSG)" },
	{ 52, "unix getpeername (BPF_CGROUP_UNIX_GETPEERNAME)" },
	{ 53, "unix getsockname (BPF_CGROUP_UNIX_GETSOCKNAME)" },
};
#define CG_BPF_MAX	512	/* programs of one type in effect (LSM: 10 per hook) */

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The ids of the programs of @type in effect for cgroup @dir, sorted, into
 * @ids (CG_BPF_MAX); their number, 0 if the kernel has no cgroup BPF, -1
 * (errno) if they cannot be listed.
 */
static int cg_progs_q(const char *dir, unsigned int type, __u32 *ids, __u32 flags)
{
	union bpf_attr a;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r, e;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.query.target_fd = fd;
	a.query.attach_type = type;
	a.query.query_flags = flags;
	a.query.prog_ids = (__u64)(unsigned long)ids;
	a.query.prog_cnt = CG_BPF_MAX;
	r = syscall(SYS_bpf, BPF_PROG_QUERY, &a, sizeof(a));
	e = errno;
	close(fd);
	if (r && (e == ENOSYS || e == EINVAL))
		return 0;	/* no cgroup BPF, or not this attach type */
	if (r) {
		errno = e;
		return -1;
	}
	if (a.query.prog_cnt > CG_BPF_MAX) {
		errno = ENOSPC;
		return -1;
	}
	qsort(ids, a.query.prog_cnt, sizeof(*ids), cmp_u32);
	return a.query.prog_cnt;
}

static int cg_progs(const char *dir, unsigned int type, __u32 *ids)
{
	return cg_progs_q(dir, type, ids, BPF_F_QUERY_EFFECTIVE);
}

int cg_bpf_attached(const char *dir, pid_t pid, const char *name)
{
	__u32 *ids = malloc(CG_BPF_MAX * sizeof(*ids));
	size_t k;
	int n, sum = 0;

	if (!ids) {
		pr_err("out of memory");
		exit(1);
	}
	for (k = 0; k < sizeof(cg_bpf_types) / sizeof(cg_bpf_types[0]); k++) {
		n = cg_progs_q(dir, cg_bpf_types[k].type, ids, 0);
		if (n < 0 && errno == EPERM) {
			sum = 0;	/* not root: none can be listed (see docs/containers.md) */
			break;
		}
		if (n < 0) {
			pr_perror("pid %d: cannot list the BPF programs of its cgroup %s", pid, name);
			sum = -1;
			break;
		}
		sum += n;
	}
	free(ids);
	return sum;
}

/* @pid's cgroup in the version 2 hierarchy (malloc'ed; v1 ones aside), or NULL */
static char *v2_cgroup(pid_t pid)
{
	char path[64], *text, *p, *out = NULL;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	text = read_text(path, NULL);
	p = text ? (strncmp(text, "0::", 3) ? strstr(text, "\n0::") : text - 1) : NULL;
	if (p) {
		p += 4;
		p[strcspn(p, "\n")] = 0;
		out = xstrdup(p);
	}
	free(text);
	return out;
}

/* @pid in cgroup @cg (absolute, in imgcr's cgroup namespace), restored in @ref: 0, or -1 (printed) */
static int cg_bpf_same(const char *mnt, pid_t pid, const char *cg, const char *ref)
{
	char dir[PATH_MAX], rdir[PATH_MAX];
	__u32 ids[CG_BPF_MAX], rids[CG_BPF_MAX];
	size_t k;
	int n, rn;

	if (!strcmp(cg, ref))
		return 0;
	snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(cg, "/") ? cg : "");
	snprintf(rdir, sizeof(rdir), "%s%s", mnt, strcmp(ref, "/") ? ref : "");
	for (k = 0; k < sizeof(cg_bpf_types) / sizeof(cg_bpf_types[0]); k++) {
		n = cg_progs(dir, cg_bpf_types[k].type, ids);
		if (n < 0 && errno == EPERM)
			return 0;	/* not root: no program can be listed (see docs/containers.md) */
		if (n < 0) {
			pr_perror("pid %d: cannot list the BPF programs of its cgroup %s", pid, cg);
			return -1;
		}
		if (!n)
			continue;
		rn = cg_progs(rdir, cg_bpf_types[k].type, rids);
		if (rn != n || memcmp(ids, rids, n * sizeof(*ids))) {
			pr_err("pid %d: its cgroup %s has %d %s BPF program%s (id %u%s) that the restored task would not have (in cgroup %s): not supported",
			       pid, cg, n, cg_bpf_types[k].name, n > 1 ? "s" : "", ids[0],
			       n > 1 ? ", ..." : "", ref);
			return -1;
		}
	}
	return 0;
}

int cg_check_bpf(const struct tree *t)
{
	const struct cg_ns *ns = t->ns ? t->ns->data[NS_CGROUP] : NULL;
	char *mnt = cg_mount(), *ref = NULL, *cg, *s;
	int i, ret = -1;

	if (!mnt && cg_mount_other) {
		pr_err("cannot check the tasks' cgroup BPF programs: no cgroup2 mount of the whole hierarchy");
		return -1;
	}
	if (!mnt)
		return 0;	/* no cgroup v2: no cgroup BPF program either */
	if (ns) {
		/* the base is made again below its parent: it inherits the parent's */
		ref = xstrdup(ns->base);
		s = strrchr(ref, '/');
		if (s == ref)
			s[1] = 0;
		else if (s)
			*s = 0;
	} else if (!(ref = v2_cgroup(getpid()))) {
		ret = 0;	/* imgcr in no v2 cgroup: the tasks' are not restored */
		goto out;
	}
	for (i = 0; i < t->ntasks; i++) {
		if (t->tasks[i].zombie)
			continue;
		cg = v2_cgroup(t->tasks[i].pid);
		if (!cg) {
			pr_err("pid %d: cannot read its cgroup", t->tasks[i].pid);
			goto out;
		}
		if (cg_bpf_same(mnt, t->tasks[i].pid, cg, ref)) {
			free(cg);
			goto out;
		}
		free(cg);
	}
	ret = 0;
out:
	free(ref);
	free(mnt);
	return ret;
}

int cg_read_dir(struct cg *g, const char *dir, pid_t pid, const char *name)
{
	char path[PATH_MAX + 32], *type;
	size_t j;

	snprintf(path, sizeof(path), "%s/cgroup.type", dir);
	type = cg_read_line(path);
	if (type && strcmp(type, "domain")) {
		pr_err("pid %d: cgroup %s is %s: not supported", pid, name, type);
		free(type);
		return -1;
	}
	free(type);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	g->subtree = cg_read_line(path);
	if (!g->subtree) {
		pr_perror("pid %d: cannot read %s", pid, path);
		return -1;
	}
	for (j = 0; j < CG_NFILES; j++) {
		snprintf(path, sizeof(path), "%s/%s", dir, cg_files[j]);
		g->val[j] = cg_read_line(path);
	}
	return 0;
}

static int cg_dump(struct ns_ctx *c)
{
	struct cg_ns *ns = calloc(1, sizeof(*ns));
	char path[PATH_MAX], name[PATH_MAX], *cg, *mnt = cg_mount();
	size_t blen;
	int i, g;

	if (!ns) {
		pr_err("out of memory");
		exit(1);
	}
	if (!mnt) {
		pr_err("pid %d: has a cgroup namespace of its own, and imgcr sees no cgroup2 mount", c->root);
		goto fail;
	}
	if (cg_task_cgroup(c->root, &cg))
		goto fail;
	ns->base = cgns_root(c->root, cg);
	free(cg);
	if (!ns->base)
		goto fail;
	blen = strlen(ns->base);
	for (i = 0; i < c->t->ntasks; i++) {
		const struct tree_task *k = &c->t->tasks[i];
		const char *rel;

		if (k->zombie)
			continue;	/* a zombie keeps no cgroup that matters */
		if (cg_task_cgroup(k->pid, &cg))
			goto fail;
		rel = !strcmp(ns->base, "/") ? cg : cg + blen;
		if ((strcmp(ns->base, "/") && strncmp(cg, ns->base, blen)) ||
		    (*rel && *rel != '/')) {
			pr_err("pid %d: in cgroup %s, outside the tree's (%s): not supported", k->pid,
			       cg, ns->base);
			free(cg);
			goto fail;
		}
		g = cg_add_path(ns, *rel ? rel : "/");
		free(cg);
		if (g < 0) {
			pr_err("pid %d: more than %d cgroups", c->root, CG_MAX);
			goto fail;
		}
		ns->members = tree_grow(ns->members, ns->nmembers, sizeof(*ns->members));
		ns->members[ns->nmembers].vpid = task_vpid(k->pid);
		ns->members[ns->nmembers++].cg = g;
		if (ns->members[ns->nmembers - 1].vpid <= 0) {
			pr_err("pid %d: cannot read its pid in its PID namespace", k->pid);
			goto fail;
		}
	}
	for (i = 0; i < ns->ncgs; i++) {
		struct cg *x = &ns->cgs[i];
		const char *rel = strcmp(x->path, "/") ? x->path : "";

		snprintf(path, sizeof(path), "%s%s%s", mnt, strcmp(ns->base, "/") ? ns->base : "",
			 rel);
		snprintf(name, sizeof(name), "%s%s", ns->base, rel);
		if (cg_read_dir(x, path, c->root, name))
			goto fail;
	}
	free(mnt);
	ns_tree_get(c->t)->data[NS_CGROUP] = ns;
	return 0;
fail:
	free(mnt);
	cg_ns_free(ns);
	return -1;
}

/* ---- restore ---- */

static struct cg_ns *cg_of(const struct tree *t)
{
	return t->ns ? t->ns->data[NS_CGROUP] : NULL;
}

static void cg_dir(const struct cg_ns *ns, const struct cg *g, char *out, size_t size)
{
	snprintf(out, size, "%s%s%s", ns->mnt, strcmp(ns->base, "/") ? ns->base : "",
		 strcmp(g->path, "/") ? g->path : "");
}

/* "+memory +pids" from a subtree_control line "memory pids" */
static void subtree_plus(const char *in, char *out, size_t size)
{
	char buf[CG_VAL_MAX], *save = NULL, *w;
	size_t len = 0;

	snprintf(buf, sizeof(buf), "%s", in);
	out[0] = 0;
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		len += snprintf(out + len, len < size ? size - len : 0, "%s+%s", len ? " " : "", w);
}

/* Whether cgroup @dir (or one below it) still holds a task: cgroup.events "populated 1". */
int cg_populated(const char *dir)
{
	char path[PATH_MAX + 32], *text, *p;
	int r;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	text = read_text(path, NULL);
	if (!text)
		return 0;
	p = strstr(text, "populated ");
	r = p && p[10] == '1';
	free(text);
	return r;
}

/*
 * The restore failed: the cgroups outside() made are removed, children
 * first.  The tree was killed before (restore.c); a task of it not yet
 * gone (one whose parent was killed last) is killed here, only in a
 * cgroup this restore made (cgroup.kill, 5.14), and waited for (2 s).
 */
int cg_remove(const char *dir)
{
	char path[PATH_MAX + 32];
	struct timespec ms10 = { 0, 10000000 };
	int n;

	for (n = 0; n < 200 && cg_populated(dir); n++) {
		if (!n) {
			snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
			write_text(path, "1");
		}
		nanosleep(&ms10, NULL);
	}
	if (rmdir(dir) && errno != ENOENT) {
		pr_pwarn("cannot remove cgroup %s, made by this restore", dir);
		return -1;
	}
	return 0;
}

static void cg_cleanup(struct ns_ctx *c)
{
	struct cg_ns *ns = cg_of(c->t);
	char dir[PATH_MAX];
	int i;

	for (i = ns ? ns->ncgs - 1 : -1; i >= 0; i--) {
		if (!ns->cgs[i].made)
			continue;
		cg_dir(ns, &ns->cgs[i], dir, sizeof(dir));
		if (!cg_remove(dir))
			ns->cgs[i].made = 0;
	}
}

/*
 * A cgroup this restore did not make is never changed (its limits and
 * controllers are the host's): used only if it already has the dumped
 * limits and no controllers enabled for children (else the tasks could
 * not be put in it).  0, or -1 (printed).
 */
int cg_limits_same(const struct cg *g, const char *dir, pid_t pid, const char *name)
{
	char path[PATH_MAX + 32], *cur;
	size_t j;
	int same;

	for (j = 0; j < CG_NFILES; j++) {
		if (!g->val[j])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, cg_files[j]);
		cur = cg_read_line(path);
		same = cur && !strcmp(cur, g->val[j]);
		if (!same)
			pr_err("restore failed: pid %d: its cgroup %s exists with %s '%s' (the dump's: '%s'): imgcr does not change a cgroup it did not make (set it back, or remove the cgroup; restore --cgroups ignore leaves the tree in the restorer's cgroup)",
			       pid, name, cg_files[j], cur ? cur : "(none: controller off)", g->val[j]);
		free(cur);
		if (!same)
			return -1;
	}
	return 0;
}

static int cg_same(const struct cg *g, const char *dir)
{
	char path[PATH_MAX + 32], *cur;
	size_t j;
	int same;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	cur = cg_read_line(path);
	if (!cur || *cur || *g->subtree) {
		pr_err("cgroup %s exists, with the controllers '%s' for its children (the dump's: '%s'): imgcr does not change a cgroup it did not make (remove it first)",
		       dir, cur ? cur : "?", g->subtree);
		free(cur);
		return -1;
	}
	free(cur);
	for (j = 0; j < CG_NFILES; j++) {
		if (!g->val[j])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, cg_files[j]);
		cur = cg_read_line(path);
		same = cur && !strcmp(cur, g->val[j]);
		if (!same) {
			pr_err("cgroup %s exists, with %s '%s' (the dump's: '%s'): imgcr does not change a cgroup it did not make (remove it first)",
			       dir, cg_files[j], cur ? cur : "(none)", g->val[j]);
			free(cur);
			return -1;
		}
		free(cur);
	}
	return 0;
}

/*
 * restore with cg_caller_base (imgcr-criu: runc made the container's
 * cgroup): a cgroup2 mount of the tree (runc's /sys/fs/cgroup in a cgroup
 * namespace), recorded as an external mount bound from imgcr's cgroup2
 * mount at @ext, showing @root, the dumped namespace root or below it, is
 * bound from the caller's cgroup instead (the namespace root is restored
 * there, cg_outside), e.g. a container imported under a new id.  The new
 * path (malloc'ed), or NULL: not such a mount, or the same cgroup.
 */
char *cg_caller_mount(const struct tree *t, const char *ext, const char *root)
{
	struct cg_ns *ns = cg_of(t);
	size_t nb, ne, nr;
	char *own, *out;
	const char *rest;

	if (!ns || !cg_caller_base || !ns->base)
		return NULL;
	nb = strlen(ns->base);
	nr = strlen(root);
	ne = strlen(ext);
	if (!strcmp(ns->base, "/") || strncmp(root, ns->base, nb) || (root[nb] && root[nb] != '/') ||
	    ne < nr || strcmp(ext + ne - nr, root))
		return NULL;
	rest = root + nb;
	if (cg_task_cgroup(getpid(), &own))
		return NULL;
	if (!strcmp(own, ns->base)) {
		free(own);
		return NULL;
	}
	out = malloc(ne - nr + strlen(own) + strlen(rest) + 1);
	if (!out) {
		pr_err("out of memory");
		exit(1);
	}
	sprintf(out, "%.*s%s%s", (int)(ne - nr), ext, own, rest);
	free(own);
	return out;
}

static int cg_outside(struct ns_ctx *c)
{
	struct cg_ns *ns = cg_of(c->t);
	char dir[PATH_MAX], path[PATH_MAX + 32], pid[16], *procs;
	int i;

	if (!ns)
		return 0;
	free(ns->mnt);
	ns->mnt = cg_mount();
	if (!ns->mnt) {
		pr_err("the tree has cgroups, and imgcr sees no cgroup2 mount");
		return -1;
	}
	if (cg_caller_base) {
		char *own;

		if (cg_task_cgroup(getpid(), &own))
			return -1;
		if (*ns->cgs[0].subtree) {
			pr_err("the tree's cgroup namespace root %s had the controllers '%s' enabled for its children: not supported in the caller's cgroup %s, which holds imgcr",
			       ns->base, ns->cgs[0].subtree, own);
			free(own);
			return -1;
		}
		pr_debug("cgroup namespace root %s restored as the caller's cgroup %s", ns->base, own);
		free(ns->base);
		ns->base = own;
	}
	for (i = cg_caller_base ? 1 : 0; i < ns->ncgs; i++) {
		struct cg *g = &ns->cgs[i];

		cg_dir(ns, g, dir, sizeof(dir));
		if (!mkdir(dir, 0755)) {
			g->made = 1;
		} else if (errno == EEXIST) {
			char *stat;

			/* an existing one only if unused: no task, no cgroup below */
			snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
			procs = cg_read_line(path);
			snprintf(path, sizeof(path), "%s/cgroup.stat", dir);
			stat = cg_read_line(path);
			if (!procs || *procs || !stat || strcmp(stat, "nr_descendants 0") ||
			    cg_populated(dir)) {
				pr_err("cgroup %s exists with tasks or cgroups in it (the dumped tree still runs?): not restoring into it",
				       dir);
				free(procs);
				free(stat);
				goto fail;
			}
			free(procs);
			free(stat);
			if (cg_same(g, dir))
				goto fail;
		} else {
			pr_perror("cannot make cgroup %s", dir);
			goto fail;
		}
	}
	/* the ns-root into the base: its cgroup namespace will be rooted there */
	cg_dir(ns, &ns->cgs[0], dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", c->root);
	if (write_text(path, pid)) {
		pr_perror("cannot put the restored tree in cgroup %s", dir);
		goto fail;
	}
	return 0;
fail:
	cg_cleanup(c);
	return -1;
}

static int cg_inside(struct ns_ctx *c)
{
	if (!cg_of(c->t))
		return 0;
	if (unshare(CLONE_NEWCGROUP)) {
		pr_perror("cannot make the tree's cgroup namespace");
		return -1;
	}
	return 0;
}

/*
 * The host pid of the task with pid @vpid in the ns-root's PID namespace,
 * or -1: the children of every thread (a task forked by a thread other
 * than the main one is listed in that thread's children only).
 */
static pid_t host_pid(pid_t root, pid_t vpid, int depth)
{
	char path[320], *text, *save = NULL, *w;
	struct dirent *e;
	pid_t found = -1;
	DIR *d;

	if (task_vpid(root) == vpid)
		return root;
	if (depth > 64)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task", root);
	d = opendir(path);
	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", root, e->d_name);
		text = read_text(path, NULL);
		save = NULL;
		for (w = text ? strtok_r(text, " \n", &save) : NULL; w && found < 0;
		     w = strtok_r(NULL, " \n", &save))
			found = host_pid(atoi(w), vpid, depth + 1);
		free(text);
	}
	closedir(d);
	return found;
}

static int cg_late(struct ns_ctx *c)
{
	struct cg_ns *ns = cg_of(c->t);
	char dir[PATH_MAX], path[PATH_MAX + 32], pid[16];
	int i;

	if (!ns)
		return 0;
	for (i = 0; i < ns->nmembers; i++) {
		pid_t h = host_pid(c->root, ns->members[i].vpid, 0);

		if (!strcmp(ns->cgs[ns->members[i].cg].path, "/"))
			continue;	/* born there */
		cg_dir(ns, &ns->cgs[ns->members[i].cg], dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		snprintf(pid, sizeof(pid), "%d", h);
		if (h <= 0 || write_text(path, pid)) {
			pr_perror("pid %d of the tree: cannot put it in cgroup %s",
				  ns->members[i].vpid, dir);
			return -1;
		}
	}
	/* the controllers, parents first (a child's need its parent's) */
	for (i = 0; i < ns->ncgs; i++) {
		if (!ns->cgs[i].made)
			continue;	/* checked equal by outside() */
		cg_dir(ns, &ns->cgs[i], dir, sizeof(dir));
		if (cg_enable(&ns->cgs[i], dir))
			return -1;
	}
	for (i = 0; i < ns->ncgs; i++) {
		if (!ns->cgs[i].made)
			continue;
		cg_dir(ns, &ns->cgs[i], dir, sizeof(dir));
		if (cg_set_limits(&ns->cgs[i], dir))
			return -1;
	}
	return 0;
}

int cg_enable(const struct cg *g, const char *dir)
{
	char path[PATH_MAX + 32], plus[CG_VAL_MAX * 2];

	subtree_plus(g->subtree, plus, sizeof(plus));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (*plus && write_text(path, plus)) {
		pr_perror("cgroup %s: cannot enable the controllers %s", dir, plus);
		return -1;
	}
	return 0;
}

int cg_set_limits(const struct cg *g, const char *dir)
{
	return cg_set_limits_some(g, dir, CG_LIM_ALL);
}

int cg_set_limits_some(const struct cg *g, const char *dir, int which)
{
	char path[PATH_MAX + 32], *cur;
	size_t j;
	int pids;

	for (j = 0; j < CG_NFILES; j++) {
		if (!g->val[j])
			continue;
		pids = !strcmp(cg_files[j], "pids.max");
		if ((which == CG_LIM_NOT_PIDS && pids) || (which == CG_LIM_PIDS && !pids))
			continue;
		if (!strcmp(cg_files[j], "memory.max") && strcmp(g->val[j], "max")) {
			snprintf(path, sizeof(path), "%s/memory.current", dir);
			cur = cg_read_line(path);
			if (cur && strtoull(cur, NULL, 10) > strtoull(g->val[j], NULL, 10)) {
				pr_err("cgroup %s: the restored tree uses %s bytes, more than its memory.max %s",
				       dir, cur, g->val[j]);
				free(cur);
				return -1;
			}
			free(cur);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, cg_files[j]);
		cur = cg_read_line(path);
		if (cur && !strcmp(cur, g->val[j])) {
			free(cur);
			continue;
		}
		free(cur);
		if (write_text(path, g->val[j])) {
			pr_perror("cgroup %s: cannot set %s to %s", dir, cg_files[j], g->val[j]);
			return -1;
		}
	}
	return 0;
}

/* ---- records ---- */

void cg_rec_write(FILE *f, const struct cg *g)
{
	char e[4 * CG_VAL_MAX + 1];
	size_t j;

	tree_escape(e, sizeof(e), g->subtree);
	fprintf(f, " subtree=%s", e);
	for (j = 0; j < CG_NFILES; j++) {
		if (!g->val[j])
			continue;
		tree_escape(e, sizeof(e), g->val[j]);
		fprintf(f, " %s=%s", cg_files[j], e);
	}
	fputc('\n', f);
}

static void cg_write(FILE *f, const struct tree *t)
{
	struct cg_ns *ns = cg_of(t);
	char e[4 * PATH_MAX + 1];
	int i;

	if (!ns)
		return;
	tree_escape(e, sizeof(e), ns->base);
	fprintf(f, "cgbase path=%s\n", e);
	for (i = 0; i < ns->ncgs; i++) {
		tree_escape(e, sizeof(e), ns->cgs[i].path);
		fprintf(f, "cgroup path=%s", e);
		cg_rec_write(f, &ns->cgs[i]);
	}
	for (i = 0; i < ns->nmembers; i++)
		fprintf(f, "cg vpid=%d cgroup=%d\n", ns->members[i].vpid, ns->members[i].cg);
}

static int value_ok(const char *v)
{
	return strlen(v) < CG_VAL_MAX && !strchr(v, '\n');
}

static const char *cgbase_read(struct tree *t, struct rec *r)
{
	struct ns_tree *nt = ns_tree_get(t);
	struct cg_ns *ns;

	if (nt->data[NS_CGROUP])
		return "cgbase listed twice";
	ns = calloc(1, sizeof(*ns));
	if (!ns) {
		pr_err("out of memory");
		exit(1);
	}
	nt->data[NS_CGROUP] = ns;
	if (rec_str(r, "path", &ns->base) || !abs_path_ok(ns->base))
		return "bad cgbase record";
	return NULL;
}

static const char *cgroup_read(struct tree *t, struct rec *r)
{
	struct cg_ns *ns = cg_of(t);
	const char *err;
	struct cg *g;
	int i;

	if (!ns)
		return "cgroup record before the cgbase record";
	i = cg_add(ns, "?");
	if (i < 0)
		return "too many cgroup records";
	g = &ns->cgs[i];
	free(g->path);
	g->path = NULL;
	if (rec_str(r, "path", &g->path) || !abs_path_ok(g->path))
		return "bad cgroup record";
	err = cg_rec_read(r, g);
	if (err)
		return err;
	if ((i == 0) != !strcmp(g->path, "/"))
		return "the first cgroup record is not the base (\"/\")";
	if (cg_find(ns, g->path) != i)
		return "cgroup listed twice";
	if (i) {
		/* parents first */
		char parent[PATH_MAX], *s;

		snprintf(parent, sizeof(parent), "%s", g->path);
		s = strrchr(parent, '/');
		if (s == parent)
			s[1] = 0;
		else
			*s = 0;
		if (cg_find(ns, parent) < 0 || cg_find(ns, parent) >= i)
			return "cgroup record before its parent's";
	}
	return NULL;
}

const char *cg_rec_read(struct rec *r, struct cg *g)
{
	size_t j;

	if (rec_str(r, "subtree", &g->subtree) || !value_ok(g->subtree) ||
	    strspn(g->subtree, "abcdefghijklmnopqrstuvwxyz_ ") != strlen(g->subtree))
		return "bad cgroup record";
	for (j = 0; j < CG_NFILES; j++)
		if (rec_has(r, cg_files[j]) &&
		    (rec_str(r, cg_files[j], &g->val[j]) || !value_ok(g->val[j])))
			return "bad cgroup record value";
	return NULL;
}

static const char *cg_member_read(struct tree *t, struct rec *r)
{
	struct cg_ns *ns = cg_of(t);
	struct cg_member m;

	if (!ns)
		return "cg record before the cgbase record";
	if (REC_NUM(r, "vpid", 1, INT_MAX, m.vpid) || REC_NUM(r, "cgroup", 0, ns->ncgs - 1, m.cg))
		return "bad cg record";
	ns->members = tree_grow(ns->members, ns->nmembers, sizeof(*ns->members));
	ns->members[ns->nmembers++] = m;
	return NULL;
}

static void cg_tree_free(struct tree *t)
{
	cg_ns_free(t->ns->data[NS_CGROUP]);
	t->ns->data[NS_CGROUP] = NULL;
}

const struct ns_ops ns_cgroup_ops = {
	.name = "cgroup",
	.clone_flag = 0,	/* unshared by the ns-root once in the base (inside) */
	.dump = cg_dump,
	.outside = cg_outside,
	.inside = cg_inside,
	.late = cg_late,
	.cleanup = cg_cleanup,
	.free = cg_tree_free,
};

const struct tree_record cgroup_records[] = {
	{ "cgbase", cgbase_read, cg_write, NULL },
	{ "cgroup", cgroup_read, NULL, NULL },
	{ "cg", cg_member_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};
