// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace kinds' table and what they share (ns.h).  The pid, UTS,
 * time and user kinds live here too; ipc.c, mount.c, net.c and cgroup.c
 * hold the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "tree.h"
#include "userns.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

/* ---- the pid kind: the tree holds its namespace's init, tasks get vpids ---- */

/* The last number of @field (NSpid, NSpgid) in the status of @pid (thread @tid), or -1. */
static pid_t ns_inner_id(pid_t pid, pid_t tid, const char *field)
{
	char path[96], *text, *end;
	const char *v;
	long id = -1, x;

	if (tid && tid != pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_text(path, NULL);
	v = text ? status_field(text, field) : NULL;
	while (v && *v && *v != '\n') {
		x = strtol(v, &end, 10);
		if (end == v)
			break;
		id = x;
		v = end;
	}
	free(text);
	return id;
}

pid_t ns_inner_pid(pid_t pid, pid_t tid)
{
	return ns_inner_id(pid, tid, "NSpid");
}

/* The pid namespace's init, an ancestor of @pid (host pid), or -1. */
static pid_t find_init(pid_t pid, unsigned long long ino)
{
	char state;
	pid_t ppid, pgid, sid;
	int n;

	for (n = 0; pid > 1 && n < 4096; n++) {
		if (ns_ino(pid, "pid") == ino && ns_inner_pid(pid, 0) == 1)
			return pid;
		if (proc_stat(pid, &state, &ppid, &pgid, &sid))
			return -1;
		pid = ppid;
	}
	return -1;
}

/*
 * A process that joined the tree's PID namespace with setns() (runc exec,
 * nsenter) is not a descendant of its init, so not in the tree, and dies
 * with the namespace when the dump kills the init: refused (naming it)
 * rather than lost.  Zombies are nothing to lose.
 */
static int pid_outsider(pid_t pid, void *arg)
{
	const struct tree *t = arg;
	pid_t ppid, pgid, sid;
	char state;

	if (tree_index(t, pid) >= 0 || ns_ino(pid, "pid") != t->ns->ino[NS_PID])
		return 0;
	if (proc_stat(pid, &state, &ppid, &pgid, &sid) || state == 'Z' || state == 'X')
		return 0;	/* gone meanwhile, or nothing left to lose */
	pr_err("pid %d: pid %d is in its PID namespace (pid %d there) but not in the tree (it joined with setns(), as runc exec or nsenter do): it would die with the namespace and not come back; not supported (end it first)",
	       t->root, pid, ns_inner_pid(pid, 0));
	return -1;
}

static int pid_outsiders(const struct tree *t)
{
	return proc_each_process(pid_outsider, (void *)t);
}

static int pid_dump(struct ns_ctx *c)
{
	struct tree *t = c->t;
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		struct tree_task *k = &t->tasks[i];
		pid_t v = ns_inner_pid(k->pid, 0);

		if (v <= 0) {
			pr_err("pid %d: cannot read its pid in its PID namespace (NSpid)", k->pid);
			return -1;
		}
		k->vpid = v != k->pid ? v : 0;
		for (j = 0; j < k->nthreads; j++) {
			v = ns_inner_pid(k->pid, k->threads[j]);
			if (v <= 0) {
				pr_err("pid %d thread %d: cannot read its TID in its PID namespace (NSpid)",
				       k->pid, k->threads[j]);
				return -1;
			}
			if (v != k->threads[j] && !k->vthreads) {
				k->vthreads = calloc(k->nthreads, sizeof(*k->vthreads));
				if (!k->vthreads) {
					pr_err("out of memory");
					return -1;
				}
				memcpy(k->vthreads, k->threads, k->nthreads * sizeof(*k->threads));
			}
			if (k->vthreads)
				k->vthreads[j] = v;
		}
	}
	i = tree_index(t, t->root);
	if (i < 0 || (t->tasks[i].vpid ? t->tasks[i].vpid : t->root) != 1) {
		pr_err("pid %d: its PID namespace's init (pid %d) is not in the tree: dump the tree of that init (a PID namespace dies with its init)",
		       t->root, find_init(t->root, t->ns->ino[NS_PID]));
		return -1;
	}
	return pid_outsiders(t);
}

int ns_pid_kept_groups(struct tree *t)
{
	int i;

	if (!t->ns || !(t->ns->own & NS_BIT(NS_PID)))
		return 0;
	for (i = 0; i < t->ntasks; i++) {
		struct tree_task *k = &t->tasks[i];
		pid_t v;

		if (tree_session_kept(t, k->sid)) {
			v = ns_inner_id(k->pid, 0, "NSsid");
			if (v <= 0) {
				pr_err("pid %d: cannot read its session in its PID namespace (NSsid)",
				       k->pid);
				return -1;
			}
			k->vsid = v != k->sid ? v : 0;
		}
		if (!tree_group_kept(t, k->pgid))
			continue;
		v = ns_inner_id(k->pid, 0, "NSpgid");
		if (v <= 0) {
			pr_err("pid %d: cannot read its process group in its PID namespace (NSpgid)",
			       k->pid);
			return -1;
		}
		k->vpgid = v != k->pgid ? v : 0;
	}
	return 0;
}

const struct ns_ops ns_pid_ops = { .name = "pid", .clone_flag = CLONE_NEWPID, .dump = pid_dump };

/* ---- UTS: host and domain names ---- */

struct ns_uts {
	char host[65], domain[65];
};

static int uts_read_names(void *arg)
{
	struct ns_uts *u = arg;
	struct utsname n;

	if (uname(&n)) {
		pr_perror("uname");
		return -1;
	}
	snprintf(u->host, sizeof(u->host), "%s", n.nodename);
	snprintf(u->domain, sizeof(u->domain), "%s", n.domainname);
	return 0;
}

static struct ns_uts *uts_data(struct tree *t)
{
	struct ns_tree *n = ns_tree_get(t);

	if (!n->data[NS_UTS]) {
		n->data[NS_UTS] = calloc(1, sizeof(struct ns_uts));
		if (!n->data[NS_UTS]) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return n->data[NS_UTS];
}

static int uts_dump(struct ns_ctx *c)
{
	/* read in a child that joined the namespace: shared memory brings it back */
	struct ns_uts *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int r;

	if (sh == MAP_FAILED) {
		pr_perror("mmap");
		return -1;
	}
	memset(sh, 0, sizeof(*sh));
	r = ns_run_in(c->root, NS_BIT(NS_UTS), uts_read_names, sh);
	if (!r)
		*uts_data(c->t) = *sh;
	else
		pr_err("pid %d: cannot read the host and domain names of its UTS namespace", c->root);
	munmap(sh, sizeof(*sh));
	return r;
}

static int uts_inside(struct ns_ctx *c)
{
	struct ns_uts *u = c->t->ns->data[NS_UTS];

	if (sethostname(u->host, strlen(u->host)) ||
	    setdomainname(u->domain, strlen(u->domain))) {
		pr_perror("cannot set the host name %s and domain name %s", u->host, u->domain);
		return -1;
	}
	return 0;
}

static void uts_free(struct tree *t)
{
	free(t->ns->data[NS_UTS]);
	t->ns->data[NS_UTS] = NULL;
}

const struct ns_ops ns_uts_ops = { .name = "uts", .clone_flag = CLONE_NEWUTS, .dump = uts_dump,
				   .inside = uts_inside, .free = uts_free };

/* ---- time: the offsets of CLOCK_MONOTONIC and CLOCK_BOOTTIME ---- */

/*
 * The clocks go on from where they were at the dump, as CRIU does: the
 * offsets written at restore are the dumped clock values (the tree's
 * view: imgcr's clock + offset) minus imgcr's clocks then.
 */
struct ns_time {
	long long off[2];	/* monotonic, boottime: the offsets at dump (ns) */
	long long at[2];	/* the tree's clocks at dump (ns) */
};

static const int time_clocks[2] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
static const char *const time_names[2] = { "monotonic", "boottime" };

static long long clock_ns(int id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct ns_time *time_data(struct tree *t)
{
	struct ns_tree *n = ns_tree_get(t);

	if (!n->data[NS_TIME]) {
		n->data[NS_TIME] = calloc(1, sizeof(struct ns_time));
		if (!n->data[NS_TIME]) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return n->data[NS_TIME];
}

static int time_dump(struct ns_ctx *c)
{
	struct ns_time *tm = time_data(c->t);
	char path[64], *text, *line;
	int i, seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", c->root);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", c->root, path);
		return -1;
	}
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char name[32];
		long long sec, nsec;

		if (sscanf(line, "%31s %lld %lld", name, &sec, &nsec) != 3)
			continue;
		for (i = 0; i < 2; i++)
			if (!strcmp(name, time_names[i]) || atoi(name) == time_clocks[i]) {
				tm->off[i] = sec * 1000000000LL + nsec;
				seen |= 1 << i;
			}
	}
	free(text);
	if (seen != 3) {
		pr_err("pid %d: %s lacks the monotonic or boottime offset", c->root, path);
		return -1;
	}
	for (i = 0; i < 2; i++)
		tm->at[i] = clock_ns(time_clocks[i]) + tm->off[i];
	return 0;
}

/*
 * In the ns-root, before it has a child: a new time namespace for its
 * children, its offsets, and the ns-root joins it itself (single-threaded,
 * no child yet: allowed), so the whole tree is in it.
 */
static int time_inside(struct ns_ctx *c)
{
	struct ns_time *tm = c->t->ns->data[NS_TIME];
	char buf[160];
	int i, n = 0, fd;

	if (unshare(CLONE_NEWTIME)) {
		pr_perror("cannot create a time namespace");
		return -1;
	}
	for (i = 0; i < 2; i++) {
		long long off = tm->at[i] - clock_ns(time_clocks[i]);
		long long sec = off / 1000000000LL, nsec = off % 1000000000LL;

		if (nsec < 0) {
			nsec += 1000000000LL;
			sec--;
		}
		n += snprintf(buf + n, sizeof(buf) - n, "%s %lld %lld\n", time_names[i], sec, nsec);
	}
	/* one line per write: the kernel reads one offset per line, all at once */
	if (write_text("/proc/self/timens_offsets", buf)) {
		pr_perror("cannot write the time namespace's offsets (%s)", buf);
		return -1;
	}
	fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWTIME)) {
		pr_perror("cannot enter the new time namespace");
		return -1;
	}
	close(fd);
	return 0;
}

static void time_free(struct tree *t)
{
	free(t->ns->data[NS_TIME]);
	t->ns->data[NS_TIME] = NULL;
}

const struct ns_ops ns_time_ops = { .name = "time", .clone_flag = 0, .dump = time_dump,
				    .inside = time_inside, .free = time_free };

const struct ns_ops *const ns_kinds[NS_N] = {
	[NS_USER] = &ns_user_ops,
	[NS_PID] = &ns_pid_ops,
	[NS_UTS] = &ns_uts_ops,
	[NS_IPC] = &ns_ipc_ops,
	[NS_NET] = &ns_net_ops,
	[NS_CGROUP] = &ns_cgroup_ops,
	[NS_TIME] = &ns_time_ops,
	[NS_MNT] = &ns_mnt_ops,
};

/* ---- the records ---- */

static int kind_of(const char *name)
{
	int k;

	for (k = 0; k < NS_N; k++)
		if (!strcmp(ns_kinds[k]->name, name))
			return k;
	return -1;
}

static void ns_write(FILE *f, const struct tree *t)
{
	int k;

	for (k = 0; t->ns && k < NS_N; k++)
		if (t->ns->own & NS_BIT(k))
			fprintf(f, "ns kind=%s ino=%llu\n", ns_kinds[k]->name, t->ns->ino[k]);
}

static const char *ns_read(struct tree *t, struct rec *r)
{
	struct ns_tree *n;
	char *name;
	int k;

	if (rec_str(r, "kind", &name))
		return "bad ns record";
	k = kind_of(name);
	free(name);
	if (k < 0)
		return "ns record of an unknown kind of namespace";
	n = ns_tree_get(t);
	if (n->own & NS_BIT(k))
		return "ns record of a kind listed twice";
	if (rec_unum(r, "ino", &n->ino[k]))
		return "bad ns record";
	n->own |= NS_BIT(k);
	return NULL;
}

static void uts_write(FILE *f, const struct tree *t)
{
	char h[3 * 65 + 4], d[3 * 65 + 4];
	const struct ns_uts *u = t->ns ? t->ns->data[NS_UTS] : NULL;

	if (!u)
		return;
	tree_escape(h, sizeof(h), u->host);
	tree_escape(d, sizeof(d), u->domain);
	fprintf(f, "uts hostname=%s domain=%s\n", h, d);
}

static const char *uts_rec_read(struct tree *t, struct rec *r)
{
	struct ns_uts *u;
	char *h, *d;
	const char *err = NULL;

	if (t->ns && t->ns->data[NS_UTS])
		return "uts record listed twice";
	if (rec_str(r, "hostname", &h))
		return "bad uts record";
	if (rec_str(r, "domain", &d)) {
		free(h);
		return "bad uts record";
	}
	if (strlen(h) > 64 || strlen(d) > 64)
		err = "uts record: a name longer than 64 bytes";
	else {
		u = uts_data(t);
		snprintf(u->host, sizeof(u->host), "%s", h);
		snprintf(u->domain, sizeof(u->domain), "%s", d);
	}
	free(h);
	free(d);
	return err;
}

static void timens_write(FILE *f, const struct tree *t)
{
	const struct ns_time *tm = t->ns ? t->ns->data[NS_TIME] : NULL;

	if (tm)
		fprintf(f, "timens mono=%lld boot=%lld mono_at=%lld boot_at=%lld\n", tm->off[0],
			tm->off[1], tm->at[0], tm->at[1]);
}

static const char *timens_read(struct tree *t, struct rec *r)
{
	struct ns_time *tm;

	if (t->ns && t->ns->data[NS_TIME])
		return "timens record listed twice";
	tm = time_data(t);
	if (REC_NUM(r, "mono", LLONG_MIN, LLONG_MAX, tm->off[0]) ||
	    REC_NUM(r, "boot", LLONG_MIN, LLONG_MAX, tm->off[1]) ||
	    REC_NUM(r, "mono_at", 0, LLONG_MAX, tm->at[0]) ||
	    REC_NUM(r, "boot_at", 0, LLONG_MAX, tm->at[1]))
		return "bad timens record";
	return NULL;
}

/* The records of the pid, UTS and time kinds, and the list of own kinds. */
const struct tree_record ns_records[] = {
	{ "ns", ns_read, ns_write, NULL },
	{ "uts", uts_rec_read, uts_write, NULL },
	{ "timens", timens_read, timens_write, NULL },
	{ NULL, NULL, NULL, NULL }
};

/* ---- imgcr show, and the unit tests' model ---- */

void ns_show_text(const struct tree *t)
{
	const struct ns_uts *u;
	const struct ns_time *tm;
	int k;

	if (!t->ns || !t->ns->own)
		return;
	printf("namespaces of its own:");
	for (k = 0; k < NS_N; k++)
		if (t->ns->own & NS_BIT(k))
			printf(" %s:[%llu]", ns_kinds[k]->name, t->ns->ino[k]);
	putchar('\n');
	u = t->ns->data[NS_UTS];
	if (u)
		printf("  uts: host name \"%s\", domain name \"%s\"\n", u->host, u->domain);
	tm = t->ns->data[NS_TIME];
	for (k = 0; tm && k < 2; k++)
		printf("  time: %s offset %s%lld.%09lld s, clock at dump %lld.%09lld s\n",
		       time_names[k], tm->off[k] < 0 ? "-" : "", llabs(tm->off[k]) / 1000000000LL,
		       llabs(tm->off[k]) % 1000000000LL, tm->at[k] / 1000000000LL,
		       tm->at[k] % 1000000000LL);
	userns_show_text(t);
}

void ns_show_json(const struct tree *t)
{
	const struct ns_uts *u;
	const struct ns_time *tm;
	int k, n = 0;

	if (!t->ns || !t->ns->own)
		return;
	printf(",\"namespaces\":{");
	for (k = 0; k < NS_N; k++)
		if (t->ns->own & NS_BIT(k))
			printf("%s\"%s\":{\"ino\":%llu}", n++ ? "," : "", ns_kinds[k]->name,
			       t->ns->ino[k]);
	printf("}");
	u = t->ns->data[NS_UTS];
	if (u) {
		printf(",\"uts\":{\"hostname\":");
		json_str(u->host);
		printf(",\"domain\":");
		json_str(u->domain);
		printf("}");
	}
	tm = t->ns->data[NS_TIME];
	if (tm)
		printf(",\"timens\":{\"monotonic_offset_ns\":%lld,\"boottime_offset_ns\":%lld,\"monotonic_at_ns\":%lld,\"boottime_at_ns\":%lld}",
		       tm->off[0], tm->off[1], tm->at[0], tm->at[1]);
	userns_show_json(t);
}

void ns_model(const struct tree *t)
{
	const struct ns_uts *u;
	const struct ns_time *tm;
	char h[3 * 65 + 4], d[3 * 65 + 4];
	int k;

	if (!t->ns)
		return;
	printf("ns own=0x%x ext=0x%x\n", t->ns->own, t->ns->ext);
	for (k = 0; k < NS_N; k++)
		if (t->ns->own & NS_BIT(k))
			printf("ns kind=%s ino=%llu\n", ns_kinds[k]->name, t->ns->ino[k]);
	u = t->ns->data[NS_UTS];
	if (u) {
		tree_escape(h, sizeof(h), u->host);
		tree_escape(d, sizeof(d), u->domain);
		printf("uts host=%s domain=%s\n", h, d);
	}
	tm = t->ns->data[NS_TIME];
	if (tm)
		printf("time off=%lld,%lld at=%lld,%lld\n", tm->off[0], tm->off[1], tm->at[0],
		       tm->at[1]);
	userns_model(t);
}

/* ---- dump and restore ---- */

unsigned long long ns_ino(pid_t pid, const char *name)
{
	char path[96];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

int ns_dump(struct tree *t, pid_t root, int dirfd)
{
	struct ns_ctx c = { .t = t, .dirfd = dirfd, .hostproc = -1, .root = root };
	unsigned long long mine, its;
	unsigned int own = 0;
	int k;

	for (k = 0; k < NS_N; k++) {
		int emine, eits;

		errno = 0;
		mine = ns_ino(0, ns_kinds[k]->name);
		emine = errno;
		errno = 0;
		its = ns_ino(root, ns_kinds[k]->name);
		eits = errno;
		/*
		 * a kind the kernel lacks is missing on both sides; any other
		 * failure would take the tree's namespace for imgcr's
		 */
		if (!mine && !its && emine == ENOENT && eits == ENOENT)
			continue;
		if (!mine || !its) {
			errno = mine ? eits : emine;
			pr_perror("pid %d: cannot read %s %s namespace (/proc/%s/ns/%s)", root,
				  mine ? "its" : "imgcr's", ns_kinds[k]->name,
				  mine ? "PID" : "self", ns_kinds[k]->name);
			return -1;
		}
		if (mine == its)
			continue;
		if (k != NS_PID && !ns_kinds[k]->dump) {
			pr_err("pid %d: in another %s namespace than imgcr (%s:[%llu], imgcr's %s:[%llu]): a tree with its own %s namespace is not supported yet (it would be restored into imgcr's); run imgcr in it",
			       root, ns_kinds[k]->name, ns_kinds[k]->name, its, ns_kinds[k]->name,
			       mine, ns_kinds[k]->name);
			return -1;
		}
		own |= NS_BIT(k);
		ns_tree_get(t)->ino[k] = its;
	}
	if (!own)
		return 0;
	t->ns->own = c.own = own;
	for (k = 0; k < NS_N; k++) {
		if (!(own & NS_BIT(k)) || !ns_kinds[k]->dump)
			continue;
		pr_debug("pid %d: its own %s namespace: dumping it", root, ns_kinds[k]->name);
		if (ns_kinds[k]->dump(&c))
			return -1;
	}
	pr_debug("pid %d: namespaces of its own dumped (0x%x)", root, own);
	return 0;
}

int ns_restore_check(const struct tree *t)
{
	int k;

	if (!t->ns)
		return 0;
	if (userns_restore_check(t))
		return -1;
	for (k = 0; k < NS_N; k++) {
		if (!(t->ns->own & NS_BIT(k)))
			continue;
		if (k != NS_PID && !ns_kinds[k]->inside && !ns_kinds[k]->outside) {
			pr_err("the tree has its own %s namespace, which this imgcr cannot restore",
			       ns_kinds[k]->name);
			return -1;
		}
		if ((k == NS_UTS || k == NS_TIME) && !t->ns->data[k]) {
			pr_err("the tree has its own %s namespace, but no %s record", ns_kinds[k]->name,
			       k == NS_UTS ? "uts" : "timens");
			return -1;
		}
	}
	return 0;
}

unsigned long ns_clone_flags(unsigned int own)
{
	unsigned long f = 0;
	int k;

	for (k = 0; k < NS_N; k++)
		if (own & NS_BIT(k))
			f |= ns_kinds[k]->clone_flag;
	return f;
}

int ns_inside(struct ns_ctx *c)
{
	int k;

	for (k = 0; k < NS_N; k++)
		if ((c->own & NS_BIT(k)) && ns_kinds[k]->inside && ns_kinds[k]->inside(c))
			return -1;
	return 0;
}

int ns_outside(struct ns_ctx *c)
{
	int k;

	for (k = 0; k < NS_N; k++)
		if ((c->own & NS_BIT(k)) && ns_kinds[k]->outside && ns_kinds[k]->outside(c))
			return -1;
	return 0;
}

int ns_late(struct ns_ctx *c)
{
	int k;

	for (k = 0; k < NS_N; k++)
		if ((c->own & NS_BIT(k)) && ns_kinds[k]->late && ns_kinds[k]->late(c))
			return -1;
	return 0;
}

void ns_cleanup(struct ns_ctx *c)
{
	int k;

	for (k = NS_N - 1; k >= 0; k--)
		if ((c->own & NS_BIT(k)) && ns_kinds[k]->cleanup)
			ns_kinds[k]->cleanup(c);
}

struct ns_tree *ns_tree_get(struct tree *t)
{
	if (!t->ns) {
		t->ns = calloc(1, sizeof(*t->ns));
		if (!t->ns) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return t->ns;
}

void ns_tree_free(struct tree *t)
{
	int k;

	if (!t->ns)
		return;
	for (k = 0; k < NS_N; k++)
		if (ns_kinds[k]->free)
			ns_kinds[k]->free(t);
	free(t->ns);
	t->ns = NULL;
}

int ns_run_in(pid_t pid, unsigned int kinds, int (*fn)(void *arg), void *arg)
{
	char path[64];
	int k, fd, st;
	pid_t child;

	child = fork();
	if (child < 0) {
		pr_perror("cannot fork to enter pid %d's namespaces", pid);
		return -1;
	}
	if (!child) {
		/* enum order: user first (the rights for the others), mnt last */
		for (k = 0; k < NS_N; k++) {
			if (!(kinds & NS_BIT(k)))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns_kinds[k]->name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, 0)) {
				pr_perror("pid %d: cannot enter its %s namespace", pid,
					  ns_kinds[k]->name);
				_exit(1);
			}
			close(fd);
		}
		_exit(fn(arg) ? 1 : 0);
	}
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			pr_perror("cannot wait for the child in pid %d's namespaces", pid);
			return -1;
		}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
