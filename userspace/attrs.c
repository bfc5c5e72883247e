// SPDX-License-Identifier: GPL-2.0
/*
 * Process attributes that survive exec, dumped from outside and set again
 * by each restored task on itself before it execs its image (attrs.h).
 *
 * Dump: prlimit(pid) for every RLIMIT_*, /proc/PID/oom_score_adj,
 * sched_getscheduler/getparam, getpriority (nice), sched_getaffinity,
 * ioprio_get, /proc/PID/status NoNewPrivs and /proc/PID/loginuid.  Nice, policy, affinity and
 * I/O priority belong to each thread: the image's threads are created from
 * the main thread and inherit its values, so a thread whose values differ
 * is refused, and so is SCHED_DEADLINE.  A soft RLIMIT_AS, _DATA or _STACK below what the task maps
 * now is refused too: the exec of the image could not map it again.
 *
 * Restore (run_task, after the fds are in place, before the credentials
 * change, which would drop the capabilities some of these need): the
 * limits first (so that a restored RLIMIT_NICE or RLIMIT_RTPRIO allows the
 * scheduling below), each only where it differs from what the task
 * inherited; raising a hard limit needs CAP_SYS_RESOURCE, lowering
 * oom_score_adj too, and an ordinary user's restore that cannot set one
 * fails there, before any image runs.  A limit below what the restore
 * itself still needs does not break it: the fds are already in place
 * (RLIMIT_NOFILE is not checked against open fds), children are already
 * created (RLIMIT_NPROC), and the image is mapped by the kernel within the
 * soft RLIMIT_AS/DATA/STACK checked at dump.
 *
 * A deleted cwd: a directory is made at its path, entered, given its mode
 * and owner (the "cwd-deleted" record's; 0700 and the restorer's if the
 * record has none) and removed again, so the task's cwd is "PATH (deleted)"
 * as it was, an empty directory like the one removed.  Each task's is its
 * own directory (a deleted cwd shared by two tasks, or also held as an fd,
 * comes back as different inodes: nothing can be created in any of them).  The
 * parent must exist; a path where something exists now is retried briefly
 * (another task of the tree may be doing the same) and then refused.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attrs.h"
#include "log.h"
#include "proc.h"
#include "record.h"

#define IOPRIO_WHO_PROCESS	1
/* linux/mempolicy.h, without its dependence on the kernel headers' version */
#define IMGCR_MPOL_DEFAULT	0
#define IMGCR_MPOL_LOCAL	4
#define IMGCR_MPOL_F_NUMA_BALANCING	(1 << 13)
#define IMGCR_MAX_NODES		1024	/* Debian's CONFIG_NODES_SHIFT=10 */
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE		6
#endif

static const char *const rlimit_names[TREE_NLIMITS] = {
	"cpu", "fsize", "data", "stack", "core", "rss", "nproc", "nofile",
	"memlock", "as", "locks", "sigpending", "msgqueue", "nice", "rtprio", "rttime",
};

static const char *const rlimit_macros[TREE_NLIMITS] = {
	"RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_CORE",
	"RLIMIT_RSS", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_MEMLOCK", "RLIMIT_AS",
	"RLIMIT_LOCKS", "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NICE",
	"RLIMIT_RTPRIO", "RLIMIT_RTTIME",
};

/* the scheduling attributes of one thread */
struct sched_attrs {
	int policy, reset, prio, nice, ioprio;
	cpu_set_t cpus;
};

static int read_sched(pid_t tid, struct sched_attrs *a)
{
	struct sched_param sp;
	int pol;

	memset(a, 0, sizeof(*a));
	pol = sched_getscheduler(tid);
	if (pol < 0 || sched_getparam(tid, &sp))
		return -1;
	a->reset = !!(pol & SCHED_RESET_ON_FORK);
	a->policy = pol & ~SCHED_RESET_ON_FORK;
	a->prio = sp.sched_priority;
	errno = 0;
	a->nice = getpriority(PRIO_PROCESS, tid);
	if (a->nice == -1 && errno)
		return -1;
	a->ioprio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid);
	if (a->ioprio < 0)
		return -1;
	CPU_ZERO(&a->cpus);
	return sched_getaffinity(tid, sizeof(a->cpus), &a->cpus);
}

static char *cpu_list(const cpu_set_t *s)
{
	char buf[CPU_SETSIZE * 6 + 1];
	size_t off = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, s))
			continue;
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, s); j++)
			;
		if (j == i)
			off += snprintf(buf + off, sizeof(buf) - off, "%s%d", off ? "," : "", i);
		else
			off += snprintf(buf + off, sizeof(buf) - off, "%s%d-%d", off ? "," : "", i, j);
		i = j;
	}
	return strdup(buf);
}

/* "0-3,6" into the bitmap @m of @nbits (a multiple of the bits of a long); 0 or -1 */
static int parse_id_list(const char *l, unsigned long *m, long nbits)
{
	const int bits = 8 * sizeof(long);
	char *end;
	long a, b;

	memset(m, 0, nbits / 8);
	while (*l) {
		a = strtol(l, &end, 10);
		if (end == l || a < 0 || a >= nbits)
			return -1;
		b = a;
		l = end;
		if (*l == '-') {
			b = strtol(l + 1, &end, 10);
			if (end == l + 1 || b < a || b >= nbits)
				return -1;
			l = end;
		}
		for (; a <= b; a++)
			m[a / bits] |= 1UL << (a % bits);
		if (*l == ',')
			l++;
		else if (*l)
			return -1;
	}
	return 0;
}

/* "0-3,6" into @s, at least one CPU; 0 or -1 */
static int parse_cpu_list(const char *l, cpu_set_t *s)
{
	unsigned long m[CPU_SETSIZE / (8 * sizeof(long))];
	long i;

	if (parse_id_list(l, m, CPU_SETSIZE))
		return -1;
	CPU_ZERO(s);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (m[i / (8 * sizeof(long))] & 1UL << (i % (8 * sizeof(long))))
			CPU_SET(i, s);
	return CPU_COUNT(s) ? 0 : -1;
}

static const char *sched_what(const struct sched_attrs *a, const struct sched_attrs *b)
{
	if (a->policy != b->policy || a->reset != b->reset || a->prio != b->prio)
		return "scheduling policy or priority";
	if (a->nice != b->nice)
		return "nice value";
	if (a->ioprio != b->ioprio)
		return "I/O priority";
	if (!CPU_EQUAL(&a->cpus, &b->cpus))
		return "CPU affinity";
	return NULL;
}

/* soft RLIMIT_AS/DATA/STACK against what the task maps now (kB in status) */
static int check_mapped(const struct tree_task *k)
{
	static const struct {
		int res;
		const char *key;
	} lim[] = { { RLIMIT_AS, "VmSize" }, { RLIMIT_DATA, "VmData" }, { RLIMIT_STACK, "VmStk" } };
	char path[64], *text;
	const char *v;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/status", k->pid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", k->pid, path);
		return -1;
	}
	for (i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		unsigned long long kb, soft = k->rlim[lim[i].res][0];

		v = status_field(text, lim[i].key);
		if (!v || sscanf(v, "%llu", &kb) != 1 || soft == (unsigned long long)RLIM_INFINITY)
			continue;
		if (soft < kb * 1024) {
			pr_err("pid %d: its %s soft limit (%llu bytes) is below what it maps now (%s %llu kB): the restore could not map it again: not supported",
			       k->pid, rlimit_macros[lim[i].res], soft, lim[i].key, kb);
			free(text);
			return -1;
		}
	}
	free(text);
	return 0;
}

/* A uid in decimal (0 to 4294967295), then nothing or a newline; 0 or -1. */
static int uid_val(const char *s, unsigned int *out)
{
	char *end;
	unsigned long u;

	errno = 0;
	u = strtoul(s, &end, 10);
	if (errno || end == s || (*end && strcmp(end, "\n")) || u > 0xffffffffUL)
		return -1;
	*out = u;
	return 0;
}

/*
 * coredump_filter: per mm, kept by exec (the new mm takes the old one's
 * MMF_DUMP_FILTER bits), so the restorer writes it for the image.
 */
static int dump_coredump_filter(struct tree_task *k)
{
	char path[64], *text, *end;

	snprintf(path, sizeof(path), "/proc/%d/coredump_filter", k->pid);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", k->pid, path);
		return -1;
	}
	errno = 0;
	k->coredump_filter = strtoul(text, &end, 16);
	if (errno || end == text) {
		pr_err("pid %d: cannot parse %s", k->pid, path);
		free(text);
		return -1;
	}
	free(text);
	k->attr_set |= ATTR_COREDUMP;
	return 0;
}

/* the NUMA policy modes as numa_maps names them (mm/mempolicy.c policy_modes), by MPOL_* */
static const char *const mpol_modes[] = {
	"default", "prefer", "bind", "interleave", "local", "prefer (many)", "weighted interleave",
};
/* and as the tree file does (no spaces) */
static const char *const mpol_names[] = {
	"default", "prefer", "bind", "interleave", "local", "prefer-many", "weighted-interleave",
};
#define NR_MPOL_MODES	(int)(sizeof(mpol_modes) / sizeof(mpol_modes[0]))

/* "0-3,6" into the bitmap @m (IMGCR_MAX_NODES bits); 0 or -1 */
static int parse_node_list(const char *l, unsigned long *m)
{
	return parse_id_list(l, m, IMGCR_MAX_NODES);
}

/*
 * A policy as numa_maps shows it ("bind=balancing:0-1", "local") into
 * mode, flags and node list (strdup'ed, NULL for none); 0, or -1 with
 * the reason in @why.
 */
static int parse_mpol(const char *s, int *mode, int *flags, char **nodes, const char **why)
{
	unsigned long m[IMGCR_MAX_NODES / (8 * sizeof(long))];
	size_t n;
	int i;

	*why = "cannot parse it";
	for (i = NR_MPOL_MODES - 1; i >= 0; i--) {
		n = strlen(mpol_modes[i]);
		if (!strncmp(s, mpol_modes[i], n) && (!s[n] || s[n] == '=' || s[n] == ':'))
			break;
	}
	if (i < 0)
		return -1;
	*mode = i;
	*flags = 0;
	*nodes = NULL;
	s += n;
	if (*s == '=') {
		if (strncmp(s, "=balancing", 10)) {
			*why = "its nodes are static or relative (MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES): the node mask it asked for is not shown in /proc";
			return -1;
		}
		*flags = IMGCR_MPOL_F_NUMA_BALANCING;
		s += 10;
	}
	if (*s == ':') {
		if (parse_node_list(s + 1, m))
			return -1;
		*nodes = strdup(s + 1);
		if (!*nodes)
			return -1;
	} else if (*s) {
		return -1;
	}
	return 0;
}

/* the length of the policy at the start of @s, a numa_maps line after its address */
static size_t mpol_len(const char *s)
{
	const char *sp;
	size_t n;
	int i;

	/* "prefer (many):0" and "weighted interleave" have a space */
	for (i = NR_MPOL_MODES - 1; i >= 0; i--) {
		n = strlen(mpol_modes[i]);
		if (!strncmp(s, mpol_modes[i], n))
			break;
	}
	sp = strchr(s + (i < 0 ? 0 : n), ' ');
	return sp ? (size_t)(sp - s) : strlen(s);
}

/*
 * The policy field of the numa_maps lines of thread @tid: the one of its
 * first mapping in @first (@size), and whether every mapping read shows
 * the same (@same_at: the start of the first that does not, else 0).  A
 * mapping with a policy of its own (mbind) shows that one, the others the
 * thread's (set_mempolicy).  @all: read them all, else the first read()'s
 * worth.  0, or -1 (errno; ENOENT: no NUMA).
 */
static int numa_policies(pid_t pid, pid_t tid, int all, char *first, size_t size,
			 unsigned long *same_at, char *other, size_t osize)
{
	char path[64], *text, *line, *save = NULL, *pol;
	size_t len;
	int fd;

	*same_at = 0;
	first[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", pid, tid);
	if (all) {
		text = read_text(path, &len);
		if (!text)
			return -1;
	} else {
		ssize_t n;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		text = malloc(4097);
		n = text ? read(fd, text, 4096) : -1;
		close(fd);
		if (n < 0) {
			free(text);
			return -1;
		}
		text[n] = 0;
		/* the last line may be cut */
		line = strrchr(text, '\n');
		if (line)
			line[1] = 0;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		size_t pl;

		if (!sp)
			continue;
		pol = sp + 1;
		pl = mpol_len(pol);
		if (!first[0]) {
			snprintf(first, size, "%.*s", (int)pl, pol);
		} else if (!*same_at && (strlen(first) != pl || strncmp(first, pol, pl))) {
			*same_at = strtoul(line, NULL, 16);
			snprintf(other, osize, "%.*s", (int)pl, pol);
		}
	}
	free(text);
	return 0;
}

/*
 * The task's NUMA memory policy (set_mempolicy), per thread: numa_maps
 * shows it for every mapping without one of its own.  Exec keeps it and
 * the image's threads inherit the main thread's: a thread whose policy
 * differs is refused, and so is a mapping with a policy of its own
 * (mbind), which nothing restores.  The main thread's numa_maps is read
 * whole, the other threads' first page (their mappings are the same).
 */
static int dump_mempolicy(struct tree_task *k)
{
	char main_pol[128], pol[128], other[128];
	unsigned long at;
	const char *why;
	int j;

	if (numa_policies(k->pid, k->pid, 1, main_pol, sizeof(main_pol), &at, other,
			  sizeof(other))) {
		if (errno == ENOENT)
			return 0;	/* a kernel without NUMA: nothing to keep */
		pr_perror("pid %d: cannot read /proc/%d/numa_maps", k->pid, k->pid);
		return -1;
	}
	if (!main_pol[0])
		return 0;
	/* numa_maps prints a policy into 64 bytes: a longer one is cut */
	if (strlen(main_pol) >= 63) {
		pr_err("pid %d: its NUMA memory policy %s may be cut short in /proc/%d/numa_maps (63 characters shown at most): not supported",
		       k->pid, main_pol, k->pid);
		return -1;
	}
	if (at) {
		pr_err("pid %d: its mapping at %#lx has the NUMA memory policy %s, its first %s: a mapping's own memory policy (mbind) is not supported",
		       k->pid, at, other, main_pol);
		return -1;
	}
	for (j = 0; j < k->nthreads; j++) {
		if (numa_policies(k->pid, k->threads[j], 0, pol, sizeof(pol), &at, other,
				  sizeof(other))) {
			pr_perror("pid %d tid %d: cannot read its numa_maps", k->pid, k->threads[j]);
			return -1;
		}
		/* an exited thread has no mm: nothing shown */
		if (pol[0] && (at || strcmp(pol, main_pol))) {
			pr_err("pid %d tid %d: its NUMA memory policy %s differs from the main thread's %s: per-thread values are not supported",
			       k->pid, k->threads[j], at ? other : pol, main_pol);
			return -1;
		}
	}
	if (parse_mpol(main_pol, &k->mpol_mode, &k->mpol_flags, &k->mpol_nodes, &why)) {
		pr_err("pid %d: NUMA memory policy %s: %s: not supported", k->pid, main_pol, why);
		return -1;
	}
	k->attr_set |= ATTR_MEMPOLICY;
	return 0;
}

/*
 * Speculation control (PR_SET_SPECULATION_CTRL), per thread, as
 * /proc/PID/task/TID/status shows it: only a value the thread chose
 * itself is kept ("thread ..."/"conditional ..."); the others are the
 * machine's (not vulnerable, globally mitigated...).  Exec keeps it,
 * except PR_SPEC_DISABLE_NOEXEC, which status shows as "vulnerable" when
 * the thread could choose (imgcr's own shows "thread ..."): refused, as
 * the exec of the image would end it.  The image's threads inherit the
 * main thread's: a thread whose value differs is refused.
 */
static const struct {
	const char *field, *chosen;	/* the status field; the start of its per-thread values */
	const char *force, *disable, *enable;	/* its values */
	unsigned int bit;
} spec_kinds[] = {
	{ "Speculation_Store_Bypass", "thread ", "thread force mitigated", "thread mitigated",
	  "thread vulnerable", ATTR_SPEC_SSB },
	{ "SpeculationIndirectBranch", "conditional ", "conditional force disabled",
	  "conditional disabled", "conditional enabled", ATTR_SPEC_IB },
};

/* the status field @f of thread @tid as a string (malloc'ed), NULL: absent */
static char *thread_status(pid_t pid, pid_t tid, const char *f)
{
	char path[64], *text, *v = NULL, *nl;
	const char *x;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	text = read_text(path, NULL);
	x = text ? status_field(text, f) : NULL;
	if (x) {
		v = strdup(x);
		nl = v ? strchr(v, '\n') : NULL;
		if (nl)
			*nl = 0;
	}
	free(text);
	return v;
}

static int dump_spec(struct tree_task *k)
{
	size_t i;
	int j, ret = 0;

	for (i = 0; i < sizeof(spec_kinds) / sizeof(spec_kinds[0]) && !ret; i++) {
		char *m = thread_status(k->pid, k->pid, spec_kinds[i].field), *own, *v;
		int *val = spec_kinds[i].bit == ATTR_SPEC_SSB ? &k->spec_ssb : &k->spec_ib;

		if (!m)
			continue;	/* not x86 */
		for (j = 0; j < k->nthreads && !ret; j++) {
			v = thread_status(k->pid, k->threads[j], spec_kinds[i].field);
			if (v && strcmp(v, m)) {
				pr_err("pid %d tid %d: its %s (%s) differs from the main thread's (%s): per-thread values are not supported",
				       k->pid, k->threads[j], spec_kinds[i].field, v, m);
				ret = -1;
			}
			free(v);
		}
		if (!strcmp(m, spec_kinds[i].force))
			*val = PR_SPEC_FORCE_DISABLE;
		else if (!strcmp(m, spec_kinds[i].disable))
			*val = PR_SPEC_DISABLE;
		else if (!strcmp(m, spec_kinds[i].enable))
			*val = PR_SPEC_ENABLE;
		if (*val) {
			k->attr_set |= spec_kinds[i].bit;
		} else if (!ret && !strcmp(m, "vulnerable")) {
			own = thread_status(0, 0, spec_kinds[i].field);
			if (own && !strncmp(own, spec_kinds[i].chosen, strlen(spec_kinds[i].chosen))) {
				pr_err("pid %d: its %s is disabled until its next exec (PR_SPEC_DISABLE_NOEXEC, shown as \"vulnerable\"): the exec of the restore would end it: not supported",
				       k->pid, spec_kinds[i].field);
				ret = -1;
			}
			free(own);
		}
		free(m);
	}
	return ret;
}

int attrs_dump_limits(struct tree_task *k)
{
	struct rlimit rl;
	int r;

	for (r = 0; r < TREE_NLIMITS; r++) {
		if (prlimit(k->pid, r, NULL, &rl)) {
			pr_perror("pid %d: cannot read its %s (prlimit)", k->pid, rlimit_macros[r]);
			return -1;
		}
		k->rlim[r][0] = rl.rlim_cur;
		k->rlim[r][1] = rl.rlim_max;
		k->attr_set |= ATTR_RLIMIT(r);
	}
	return 0;
}

int attrs_dump(struct tree_task *k)
{
	struct sched_attrs main_a, a;
	char path[64], *text;
	const char *v, *what;
	int j;

	if (attrs_dump_limits(k) || check_mapped(k))
		return -1;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", k->pid);
	text = read_text(path, NULL);
	if (!text || sscanf(text, "%d", &k->oom_score_adj) != 1) {
		pr_perror("pid %d: cannot read %s", k->pid, path);
		free(text);
		return -1;
	}
	free(text);
	k->attr_set |= ATTR_OOM;

	if (read_sched(k->pid, &main_a)) {
		pr_perror("pid %d: cannot read its scheduling attributes", k->pid);
		return -1;
	}
	if (main_a.policy == SCHED_DEADLINE) {
		/* its runtime/deadline/period would need sched_getattr() */
		pr_err("pid %d: scheduling policy SCHED_DEADLINE: not supported", k->pid);
		return -1;
	}
	for (j = 0; j < k->nthreads; j++) {
		if (read_sched(k->threads[j], &a)) {
			pr_perror("pid %d tid %d: cannot read its scheduling attributes",
				  k->pid, k->threads[j]);
			return -1;
		}
		what = sched_what(&a, &main_a);
		if (what) {
			pr_err("pid %d tid %d: its %s differs from the main thread's: per-thread values are not supported",
			       k->pid, k->threads[j], what);
			return -1;
		}
	}
	k->sched_policy = main_a.policy;
	k->sched_reset = main_a.reset;
	k->sched_prio = main_a.prio;
	k->nice = main_a.nice;
	k->ioprio = main_a.ioprio;
	k->affinity = cpu_list(&main_a.cpus);
	k->attr_set |= ATTR_SCHED | ATTR_IOPRIO | ATTR_AFFINITY;

	snprintf(path, sizeof(path), "/proc/%d/status", k->pid);
	text = read_text(path, NULL);
	v = text ? status_field(text, "NoNewPrivs") : NULL;
	if (!v) {
		pr_err("pid %d: cannot read NoNewPrivs in %s", k->pid, path);
		free(text);
		return -1;
	}
	k->no_new_privs = atoi(v) != 0;
	k->attr_set |= ATTR_NNP;
	free(text);

	/* the audit login uid (absent without CONFIG_AUDIT: nothing to keep) */
	snprintf(path, sizeof(path), "/proc/%d/loginuid", k->pid);
	text = read_text(path, NULL);
	if (text) {
		if (uid_val(text, &k->loginuid)) {
			pr_err("pid %d: cannot parse %s", k->pid, path);
			free(text);
			return -1;
		}
		k->attr_set |= ATTR_LOGINUID;
		free(text);
	}
	return dump_coredump_filter(k) || dump_mempolicy(k) || dump_spec(k) ? -1 : 0;
}

/* Write @n bytes of @buf to /proc/self/@file: 0, or the errno */
static int write_self(const char *file, const char *buf, int n)
{
	char path[64];
	int fd, e = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	errno = 0;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, n) != n)
		e = errno ? errno : EIO;	/* a short write sets none */
	if (fd >= 0)
		close(fd);
	return e;
}

/*
 * The audit login uid, before the credentials change: writing it needs
 * CAP_AUDIT_CONTROL unless it is the caller's already (the kernel then
 * gives the task a new session id: that one cannot be chosen).
 */
static int set_loginuid(const struct tree_task *k, char *err, size_t size)
{
	char *now, buf[16];
	int n, e;

	if (!(k->attr_set & ATTR_LOGINUID))
		return 0;
	now = read_text("/proc/self/loginuid", NULL);
	if (now && strtoul(now, NULL, 10) == k->loginuid) {
		free(now);
		return 0;
	}
	free(now);
	n = snprintf(buf, sizeof(buf), "%u", k->loginuid);
	e = write_self("loginuid", buf, n);
	if (!e)
		return 0;
	snprintf(err, size, "cannot set its audit loginuid %u: %s%s", k->loginuid, strerror(e),
		 e == EPERM ? " (needs CAP_AUDIT_CONTROL: restore as root)" : "");
	return -1;
}

/*
 * The cwd, as the task had it.  A deleted one is made again at its path,
 * entered and removed.
 */
int attrs_chdir(const struct tree_task *k, char *err, size_t size)
{
	int n;

	if (!k->cwd_deleted) {
		if (chdir(k->cwd)) {
			snprintf(err, size, "chdir %s: %s", k->cwd, strerror(errno));
			return -1;
		}
		return 0;
	}
	for (n = 0;; n++) {
		if (!mkdir(k->cwd, 0700))
			break;
		if (errno != EEXIST || n >= 200) {
			snprintf(err, size, "cannot recreate its deleted cwd %s: mkdir: %s%s",
				 k->cwd, strerror(errno),
				 errno == EEXIST ? " (something exists at that path now)" : "");
			return -1;
		}
		usleep(5000);	/* another task's, about to be removed */
	}
	if (chdir(k->cwd)) {
		snprintf(err, size, "cannot enter its recreated cwd %s: %s", k->cwd, strerror(errno));
		rmdir(k->cwd);
		return -1;
	}
	/* its owner (root only: the tasks are still root here), then its mode */
	if (k->cwd_has_mode && ((!geteuid() && chown(".", k->cwd_uid, k->cwd_gid)) ||
				chmod(".", k->cwd_mode))) {
		snprintf(err, size, "cannot give its recreated cwd %s its owner %u:%u and mode 0%o: %s",
			 k->cwd, k->cwd_uid, k->cwd_gid, k->cwd_mode, strerror(errno));
		rmdir(k->cwd);
		return -1;
	}
	if (rmdir(k->cwd)) {
		snprintf(err, size, "cannot remove its recreated cwd %s again: %s", k->cwd,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static const char *cap_hint(int e, const char *cap)
{
	static char buf[96];

	if (e != EPERM && e != EACCES)
		return "";
	snprintf(buf, sizeof(buf), " (needs %s: restore as root)", cap);
	return buf;
}

static int set_rlimits(const struct tree_task *k, char *err, size_t size)
{
	struct rlimit now, want;
	int r;

	for (r = 0; r < TREE_NLIMITS; r++) {
		if (!(k->attr_set & ATTR_RLIMIT(r)))
			continue;
		want.rlim_cur = k->rlim[r][0];
		want.rlim_max = k->rlim[r][1];
		if (!getrlimit(r, &now) && now.rlim_cur == want.rlim_cur &&
		    now.rlim_max == want.rlim_max)
			continue;
		if (setrlimit(r, &want)) {
			int e = errno;

			snprintf(err, size, "cannot set its %s to soft %llu hard %llu (the restorer's hard limit is %llu): %s%s",
				 rlimit_macros[r], (unsigned long long)want.rlim_cur,
				 (unsigned long long)want.rlim_max,
				 (unsigned long long)now.rlim_max, strerror(e),
				 e == EPERM && want.rlim_max > now.rlim_max ?
				 " (raising a hard limit needs CAP_SYS_RESOURCE: restore as root)" : "");
			return -1;
		}
	}
	return 0;
}

static int set_oom(const struct tree_task *k, char *err, size_t size)
{
	char *text = read_text("/proc/self/oom_score_adj", NULL), buf[16];
	int known = !!text, now = text ? atoi(text) : 0, n, e;

	free(text);
	if (!(k->attr_set & ATTR_OOM) || (known && now == k->oom_score_adj))
		return 0;
	n = snprintf(buf, sizeof(buf), "%d", k->oom_score_adj);
	e = write_self("oom_score_adj", buf, n);
	if (e) {
		snprintf(err, size, "cannot set its oom_score_adj to %d (now %d): %s%s",
			 k->oom_score_adj, now, strerror(e),
			 k->oom_score_adj < now ? cap_hint(e, "CAP_SYS_RESOURCE to lower it") : "");
		return -1;
	}
	return 0;
}

static int set_sched(const struct tree_task *k, char *err, size_t size)
{
	struct sched_attrs now;
	struct sched_param sp = { .sched_priority = k->sched_prio };
	cpu_set_t cpus;
	int e;

	if (read_sched(0, &now)) {
		snprintf(err, size, "cannot read its scheduling attributes: %s", strerror(errno));
		return -1;
	}
	if ((k->attr_set & ATTR_SCHED) &&
	    (now.policy != k->sched_policy || now.reset != k->sched_reset ||
	     now.prio != k->sched_prio) &&
	    sched_setscheduler(0, k->sched_policy | (k->sched_reset ? SCHED_RESET_ON_FORK : 0), &sp)) {
		e = errno;
		snprintf(err, size, "cannot set its scheduling policy %d priority %d: %s%s",
			 k->sched_policy, k->sched_prio, strerror(e), cap_hint(e, "CAP_SYS_NICE"));
		return -1;
	}
	if ((k->attr_set & ATTR_SCHED) && now.nice != k->nice &&
	    setpriority(PRIO_PROCESS, 0, k->nice)) {
		e = errno;
		snprintf(err, size, "cannot set its nice value %d (now %d): %s%s", k->nice, now.nice,
			 strerror(e), cap_hint(e, "CAP_SYS_NICE to lower it"));
		return -1;
	}
	if ((k->attr_set & ATTR_AFFINITY) && k->affinity) {
		if (parse_cpu_list(k->affinity, &cpus)) {
			snprintf(err, size, "bad CPU list %s", k->affinity);
			return -1;
		}
		if (!CPU_EQUAL(&cpus, &now.cpus) && sched_setaffinity(0, sizeof(cpus), &cpus)) {
			snprintf(err, size, "cannot set its CPU affinity %s: %s", k->affinity,
				 strerror(errno));
			return -1;
		}
	}
	/* read again: the nice value may have changed a derived I/O priority */
	if ((k->attr_set & ATTR_IOPRIO) &&
	    syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) != k->ioprio &&
	    syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, k->ioprio)) {
		e = errno;
		snprintf(err, size, "cannot set its I/O priority class %d level %d: %s%s",
			 k->ioprio >> 13, k->ioprio & 0x1fff, strerror(e),
			 cap_hint(e, "CAP_SYS_ADMIN for the realtime class"));
		return -1;
	}
	return 0;
}

/* coredump_filter, for the image's mm: exec copies it into the new mm */
static int set_coredump_filter(const struct tree_task *k, char *err, size_t size)
{
	char buf[32];
	int n, e;

	if (!(k->attr_set & ATTR_COREDUMP))
		return 0;
	n = snprintf(buf, sizeof(buf), "0x%lx", k->coredump_filter);
	e = write_self("coredump_filter", buf, n);
	if (!e)
		return 0;
	snprintf(err, size, "cannot set its coredump_filter %s: %s", buf, strerror(e));
	return -1;
}

/*
 * The NUMA memory policy, kept by exec and inherited by the image's
 * threads; read back, as the kernel may set less than asked without a
 * word (nodes outside the caller's cpuset are dropped) or change it later
 * (a cpuset's mems changing rebinds it): set before the exec, and again
 * once the tree is in its cgroups (attrs_mempolicy_again()).
 */
static int set_mempolicy_attr(const struct tree_task *k, char *err, size_t size)
{
	unsigned long m[IMGCR_MAX_NODES / (8 * sizeof(long))];
	unsigned long got[IMGCR_MAX_NODES / (8 * sizeof(long))];
	int e, mode;

	if (!(k->attr_set & ATTR_MEMPOLICY))
		return 0;
	if (parse_node_list(k->mpol_nodes ? k->mpol_nodes : "", m)) {
		snprintf(err, size, "bad node list %s", k->mpol_nodes);
		return -1;
	}
	if (!syscall(SYS_set_mempolicy, k->mpol_mode | k->mpol_flags,
		     k->mpol_nodes ? m : NULL, k->mpol_nodes ? IMGCR_MAX_NODES + 1 : 0)) {
		memset(got, 0, sizeof(got));
		if (syscall(SYS_get_mempolicy, &mode, got, IMGCR_MAX_NODES + 1, NULL, 0UL)) {
			snprintf(err, size, "cannot read back its NUMA memory policy: %s",
				 strerror(errno));
			return -1;
		}
		if (mode == (k->mpol_mode | k->mpol_flags) &&
		    (!k->mpol_nodes || !memcmp(got, m, sizeof(m))))
			return 0;
		snprintf(err, size, "its NUMA memory policy %s%s%s%s came back as mode %#x with other nodes or flags (nodes outside the restorer's cpuset?)",
			 mpol_names[k->mpol_mode], k->mpol_flags ? "=balancing" : "",
			 k->mpol_nodes ? ":" : "", k->mpol_nodes ? k->mpol_nodes : "", mode);
		return -1;
	}
	e = errno;
	snprintf(err, size, "cannot set its NUMA memory policy %s%s%s%s: %s%s",
		 mpol_names[k->mpol_mode], k->mpol_flags ? "=balancing" : "",
		 k->mpol_nodes ? ":" : "", k->mpol_nodes ? k->mpol_nodes : "", strerror(e),
		 e == EINVAL ? " (nodes outside the restorer's cpuset, or a mode this kernel lacks)" : "");
	return -1;
}

static const char *spec_name(int v)
{
	return v == PR_SPEC_FORCE_DISABLE ? "force-disable" : v == PR_SPEC_DISABLE ? "disable" :
	       v == PR_SPEC_ENABLE ? "enable" : "?";
}

/* speculation control, kept by exec and inherited by the image's threads */
static int set_spec(const struct tree_task *k, char *err, size_t size)
{
	static const struct {
		unsigned int bit;
		int which;
		const char *name;
	} w[] = {
		{ ATTR_SPEC_SSB, PR_SPEC_STORE_BYPASS, "Speculation_Store_Bypass" },
		{ ATTR_SPEC_IB, PR_SPEC_INDIRECT_BRANCH, "SpeculationIndirectBranch" },
	};
	size_t i;
	int now, want, e;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (!(k->attr_set & w[i].bit))
			continue;
		want = w[i].bit == ATTR_SPEC_SSB ? k->spec_ssb : k->spec_ib;
		now = prctl(PR_GET_SPECULATION_CTRL, w[i].which, 0, 0, 0);
		if (now >= 0 && (now & PR_SPEC_PRCTL) && (now & ~(int)PR_SPEC_PRCTL) == want)
			continue;
		/*
		 * Enabled is the default the task did not choose: a machine
		 * where no task can choose, speculation enabled or not
		 * affected, gives the same.
		 */
		if (want == PR_SPEC_ENABLE && (now == PR_SPEC_ENABLE || now == PR_SPEC_NOT_AFFECTED))
			continue;
		if (!prctl(PR_SET_SPECULATION_CTRL, w[i].which, want, 0, 0))
			continue;
		e = errno;
		snprintf(err, size, "cannot set its %s control to %s (PR_SET_SPECULATION_CTRL, now %#x): %s%s",
			 w[i].name, spec_name(want), now, strerror(e),
			 e == ENXIO ? " (this machine does not let a task choose it)" :
			 e == EPERM ? " (the restorer's is force-disabled)" : "");
		return -1;
	}
	return 0;
}

int attrs_mempolicy_again(const struct tree_task *k, char *err, size_t size)
{
	return set_mempolicy_attr(k, err, size);
}

/*
 * Moving a task into another cpuset, or writing a cpuset's cpus, resets
 * its affinity to the cpuset's CPUs on 6.1 (cpuset_attach_task and
 * update_tasks_cpumask call set_cpus_allowed_ptr() without the task's
 * own mask): set again once the tree is in its cgroups, and read back.
 */
int attrs_affinity_again(const struct tree_task *k, char *err, size_t size)
{
	cpu_set_t want, got;
	char *l;

	if (!(k->attr_set & ATTR_AFFINITY) || !k->affinity)
		return 0;
	if (parse_cpu_list(k->affinity, &want)) {
		snprintf(err, size, "bad CPU list %s", k->affinity);
		return -1;
	}
	CPU_ZERO(&got);
	if (sched_getaffinity(0, sizeof(got), &got)) {
		snprintf(err, size, "cannot read its CPU affinity: %s", strerror(errno));
		return -1;
	}
	if (CPU_EQUAL(&want, &got))
		return 0;
	if (sched_setaffinity(0, sizeof(want), &want)) {
		int e = errno;

		snprintf(err, size, "cannot set its CPU affinity %s again in its cgroup: %s%s",
			 k->affinity, strerror(e), e == EINVAL ? " (no CPU of it in its cpuset)" : "");
		return -1;
	}
	CPU_ZERO(&got);
	if (sched_getaffinity(0, sizeof(got), &got)) {
		snprintf(err, size, "cannot read back its CPU affinity: %s", strerror(errno));
		return -1;
	}
	if (CPU_EQUAL(&want, &got))
		return 0;
	l = cpu_list(&got);
	snprintf(err, size, "its CPU affinity %s came back as %s in its cgroup (CPUs outside its cpuset)",
		 k->affinity, l ? l : "?");
	free(l);
	return -1;
}

int attrs_set(const struct tree_task *k, int nnp_in_image, char *err, size_t size)
{
	/*
	 * oom_score_adj, the loginuid and coredump_filter first: they open files, which a low
	 * RLIMIT_NOFILE (sshd's sandboxed child has 1) would forbid; the
	 * limits before the scheduling, which RLIMIT_NICE and RLIMIT_RTPRIO
	 * allow.
	 */
	if (set_oom(k, err, size) || set_loginuid(k, err, size) ||
	    set_coredump_filter(k, err, size) || set_rlimits(k, err, size) ||
	    set_sched(k, err, size) || set_spec(k, err, size) ||
	    set_mempolicy_attr(k, err, size))
		return -1;
	/* an image with credentials has each thread's: the module sets them */
	if (!nnp_in_image && (k->attr_set & ATTR_NNP) && k->no_new_privs &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, size, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void limit_str(char *out, size_t size, unsigned long long v)
{
	if (v == (unsigned long long)RLIM_INFINITY)
		snprintf(out, size, "inf");
	else
		snprintf(out, size, "%llu", v);
}

void attrs_write(FILE *f, const struct tree_task *k)
{
	char a[32], b[32];
	int r;

	for (r = 0; r < TREE_NLIMITS; r++) {
		if (!(k->attr_set & ATTR_RLIMIT(r)))
			continue;
		limit_str(a, sizeof(a), k->rlim[r][0]);
		limit_str(b, sizeof(b), k->rlim[r][1]);
		fprintf(f, "rlimit pid=%d name=%s soft=%s hard=%s\n", k->pid, rlimit_names[r], a, b);
	}
	if (k->attr_set & ATTR_OOM)
		fprintf(f, "oom pid=%d adj=%d\n", k->pid, k->oom_score_adj);
	if (k->attr_set & ATTR_SCHED)
		fprintf(f, "sched pid=%d policy=%d reset=%d prio=%d nice=%d\n", k->pid,
			k->sched_policy, k->sched_reset, k->sched_prio, k->nice);
	if ((k->attr_set & ATTR_AFFINITY) && k->affinity)
		fprintf(f, "affinity pid=%d cpus=%s\n", k->pid, k->affinity);
	if (k->attr_set & ATTR_IOPRIO)
		fprintf(f, "ioprio pid=%d value=%d\n", k->pid, k->ioprio);
	if (k->attr_set & ATTR_NNP)
		fprintf(f, "nnp pid=%d value=%d\n", k->pid, k->no_new_privs);
	if (k->attr_set & ATTR_LOGINUID)
		fprintf(f, "loginuid pid=%d uid=%u\n", k->pid, k->loginuid);
	if (k->attr_set & ATTR_COREDUMP)
		fprintf(f, "coredump pid=%d filter=0x%lx\n", k->pid, k->coredump_filter);
	if (k->attr_set & ATTR_MEMPOLICY) {
		fprintf(f, "mempolicy pid=%d mode=%s", k->pid, mpol_names[k->mpol_mode]);
		if (k->mpol_flags)
			fprintf(f, " balancing=1");
		if (k->mpol_nodes)
			fprintf(f, " nodes=%s", k->mpol_nodes);
		fputc('\n', f);
	}
	if (k->attr_set & ATTR_SPEC_SSB)
		fprintf(f, "spec pid=%d which=ssb ctrl=%s\n", k->pid, spec_name(k->spec_ssb));
	if (k->attr_set & ATTR_SPEC_IB)
		fprintf(f, "spec pid=%d which=ib ctrl=%s\n", k->pid, spec_name(k->spec_ib));
	if (k->cwd_deleted) {
		fprintf(f, "cwd-deleted pid=%d", k->pid);
		/* written when not the default: 0700, root's */
		if (k->cwd_has_mode && k->cwd_mode != 0700)
			fprintf(f, " mode=0%o", k->cwd_mode);
		if (k->cwd_has_mode && (k->cwd_uid || k->cwd_gid))
			fprintf(f, " uid=%u gid=%u", k->cwd_uid, k->cwd_gid);
		fputc('\n', f);
	}
}

static int limit_val(const char *s, unsigned long long *out)
{
	char *end;

	if (!strcmp(s, "inf")) {
		*out = RLIM_INFINITY;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out == (unsigned long long)RLIM_INFINITY ? -1 : 0;
}

static int int_val(const char *s, long lo, long hi, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || !*s || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* field @key of @r as an int in [@lo, @hi] (int_val); 0 or -1 */
static int rec_int(struct rec *r, const char *key, long lo, long hi, int *out)
{
	const char *v = rec_val(r, key);

	return v ? int_val(v, lo, hi, out) : -1;
}

/* The attribute records, each of the task of its pid field (records after it). */
static const char *attr_record_read(struct tree *t, struct rec *r)
{
	static const char *const bad = "bad attribute record";
	unsigned long long soft, hard;
	const char *v, *w;
	struct tree_task *k;
	cpu_set_t cpus;
	int pid, i;

	if (!(v = rec_val(r, "pid")) || int_val(v, INT_MIN, INT_MAX, &pid) ||
	    !(k = tree_find(t, pid)))
		return bad;
	if (!strcmp(r->name, "rlimit")) {
		v = rec_val(r, "name");
		for (i = 0; v && i < TREE_NLIMITS && strcmp(v, rlimit_names[i]); i++)
			;
		if (!v || i == TREE_NLIMITS || (k->attr_set & ATTR_RLIMIT(i)) ||
		    !(v = rec_val(r, "soft")) || !(w = rec_val(r, "hard")) ||
		    limit_val(v, &soft) || limit_val(w, &hard) || soft > hard)
			return bad;
		k->rlim[i][0] = soft;
		k->rlim[i][1] = hard;
		k->attr_set |= ATTR_RLIMIT(i);
	} else if (!strcmp(r->name, "oom")) {
		if (rec_int(r, "adj", -1000, 1000, &k->oom_score_adj))
			return bad;
		k->attr_set |= ATTR_OOM;
	} else if (!strcmp(r->name, "sched")) {
		if (rec_int(r, "policy", 0, 7, &k->sched_policy) ||
		    rec_int(r, "reset", 0, 1, &k->sched_reset) ||
		    rec_int(r, "prio", 0, 99, &k->sched_prio) || rec_int(r, "nice", -20, 19, &k->nice))
			return bad;
		k->attr_set |= ATTR_SCHED;
	} else if (!strcmp(r->name, "affinity")) {
		if (!(v = rec_val(r, "cpus")) || parse_cpu_list(v, &cpus) || k->affinity)
			return bad;
		k->affinity = strdup(v);
		k->attr_set |= ATTR_AFFINITY;
	} else if (!strcmp(r->name, "ioprio")) {
		if (rec_int(r, "value", 0, 0xffff, &k->ioprio))
			return bad;
		k->attr_set |= ATTR_IOPRIO;
	} else if (!strcmp(r->name, "nnp")) {
		if (rec_int(r, "value", 0, 1, &k->no_new_privs))
			return bad;
		k->attr_set |= ATTR_NNP;
	} else if (!strcmp(r->name, "loginuid")) {
		if (!(v = rec_val(r, "uid")) || uid_val(v, &k->loginuid))
			return bad;
		k->attr_set |= ATTR_LOGINUID;
	} else if (!strcmp(r->name, "coredump")) {
		char *end;

		if (!(v = rec_val(r, "filter")) || strncmp(v, "0x", 2) || !v[2] ||
		    (k->attr_set & ATTR_COREDUMP))
			return bad;
		errno = 0;
		k->coredump_filter = strtoul(v + 2, &end, 16);
		/* the kernels keep 9 bits (MMF_DUMP_FILTER_BITS) */
		if (errno || *end || k->coredump_filter > 0x1ffUL)
			return bad;
		k->attr_set |= ATTR_COREDUMP;
	} else if (!strcmp(r->name, "mempolicy")) {
		unsigned long m[IMGCR_MAX_NODES / (8 * sizeof(long))];
		int bal = 0;

		v = rec_val(r, "mode");
		for (i = 0; v && i < NR_MPOL_MODES && strcmp(v, mpol_names[i]); i++)
			;
		if (!v || i == NR_MPOL_MODES || (k->attr_set & ATTR_MEMPOLICY) ||
		    (rec_has(r, "balancing") && rec_int(r, "balancing", 0, 1, &bal)))
			return bad;
		w = rec_val(r, "nodes");
		/* default and local have no nodes, the others some */
		if ((!w) != (i == IMGCR_MPOL_DEFAULT || i == IMGCR_MPOL_LOCAL) ||
		    (w && (parse_node_list(w, m) || !*w || !(k->mpol_nodes = strdup(w)))))
			return bad;
		k->mpol_mode = i;
		k->mpol_flags = bal ? IMGCR_MPOL_F_NUMA_BALANCING : 0;
		k->attr_set |= ATTR_MEMPOLICY;
	} else if (!strcmp(r->name, "spec")) {
		static const int ctl[] = { PR_SPEC_ENABLE, PR_SPEC_DISABLE, PR_SPEC_FORCE_DISABLE };
		unsigned int bit;
		int *val;

		v = rec_val(r, "which");
		w = rec_val(r, "ctrl");
		if (!v || !w || (strcmp(v, "ssb") && strcmp(v, "ib")))
			return bad;
		bit = !strcmp(v, "ssb") ? ATTR_SPEC_SSB : ATTR_SPEC_IB;
		val = bit == ATTR_SPEC_SSB ? &k->spec_ssb : &k->spec_ib;
		for (i = 0; i < 3 && strcmp(w, spec_name(ctl[i])); i++)
			;
		if (i == 3 || (k->attr_set & bit))
			return bad;
		*val = ctl[i];
		k->attr_set |= bit;
	} else if (!strcmp(r->name, "cwd-deleted")) {
		k->cwd_deleted = 1;
		k->cwd_has_mode = 1;
		k->cwd_mode = 0700;
		if ((rec_has(r, "mode") && REC_NUM(r, "mode", 0, 07777, k->cwd_mode)) ||
		    (rec_has(r, "uid") && (REC_NUM(r, "uid", 0, UINT32_MAX, k->cwd_uid) ||
					   REC_NUM(r, "gid", 0, UINT32_MAX, k->cwd_gid))))
			return bad;
	}
	return NULL;
}

/* the tree file's attribute records (record.h; the format: imgcr-image(5)), written by attrs_write */
const struct tree_record attrs_records[] = {
	{ "rlimit", attr_record_read, NULL, NULL },
	{ "oom", attr_record_read, NULL, NULL },
	{ "sched", attr_record_read, NULL, NULL },
	{ "affinity", attr_record_read, NULL, NULL },
	{ "ioprio", attr_record_read, NULL, NULL },
	{ "nnp", attr_record_read, NULL, NULL },
	{ "loginuid", attr_record_read, NULL, NULL },
	{ "coredump", attr_record_read, NULL, NULL },
	{ "mempolicy", attr_record_read, NULL, NULL },
	{ "spec", attr_record_read, NULL, NULL },
	{ "cwd-deleted", attr_record_read, NULL, NULL },
	{ NULL, NULL, NULL, NULL }
};

static const char *policy_name(int p)
{
	static const char *const names[] = {
		"other", "fifo", "rr", "batch", "iso", "idle", "deadline", "ext",
	};

	return p >= 0 && p < 8 ? names[p] : "?";
}

void attrs_show_text(const struct tree_task *k)
{
	char a[32], b[32];
	int r, n = 0;

	if (k->cwd_deleted)
		printf("  cwd was deleted: restored as %s (deleted), mode %04o, owner %u:%u\n", k->cwd,
		       k->cwd_has_mode ? k->cwd_mode : 0700, k->cwd_uid, k->cwd_gid);
	for (r = 0; r < TREE_NLIMITS; r++) {
		if (!(k->attr_set & ATTR_RLIMIT(r)))
			continue;
		limit_str(a, sizeof(a), k->rlim[r][0]);
		limit_str(b, sizeof(b), k->rlim[r][1]);
		printf("%s %s %s/%s", n++ ? "," : "  rlimits", rlimit_names[r], a, b);
	}
	if (n)
		putchar('\n');
	if (k->attr_set & (ATTR_OOM | ATTR_SCHED | ATTR_AFFINITY | ATTR_IOPRIO | ATTR_NNP)) {
		printf("  oom_score_adj %d, sched %s%s prio %d nice %d, cpus %s, ioprio class %d level %d%s\n",
		       k->oom_score_adj, policy_name(k->sched_policy),
		       k->sched_reset ? " reset-on-fork" : "", k->sched_prio, k->nice,
		       k->affinity ? k->affinity : "-", k->ioprio >> 13, k->ioprio & 0x1fff,
		       k->no_new_privs ? ", no_new_privs" : "");
	}
	if ((k->attr_set & ATTR_LOGINUID) && k->loginuid != 0xffffffffu)
		printf("  audit loginuid %u\n", k->loginuid);
	if (k->attr_set & ATTR_COREDUMP)
		printf("  coredump_filter 0x%lx\n", k->coredump_filter);
	if ((k->attr_set & ATTR_MEMPOLICY) && k->mpol_mode != IMGCR_MPOL_DEFAULT)
		printf("  NUMA memory policy %s%s%s%s\n", mpol_names[k->mpol_mode],
		       k->mpol_flags ? "=balancing" : "", k->mpol_nodes ? ":" : "",
		       k->mpol_nodes ? k->mpol_nodes : "");
	if (k->attr_set & (ATTR_SPEC_SSB | ATTR_SPEC_IB))
		printf("  speculation control: store bypass %s, indirect branch %s\n",
		       k->attr_set & ATTR_SPEC_SSB ? spec_name(k->spec_ssb) : "-",
		       k->attr_set & ATTR_SPEC_IB ? spec_name(k->spec_ib) : "-");
}

void attrs_show_json(const struct tree_task *k)
{
	char a[32], b[32];
	int r, n = 0;

	printf(",\"cwd_deleted\":%s,\"rlimits\":{", k->cwd_deleted ? "true" : "false");
	for (r = 0; r < TREE_NLIMITS; r++) {
		if (!(k->attr_set & ATTR_RLIMIT(r)))
			continue;
		limit_str(a, sizeof(a), k->rlim[r][0]);
		limit_str(b, sizeof(b), k->rlim[r][1]);
		printf("%s\"%s\":[\"%s\",\"%s\"]", n++ ? "," : "", rlimit_names[r], a, b);
	}
	printf("},\"oom_score_adj\":%d,\"sched_policy\":%d,\"sched_reset_on_fork\":%s,\"sched_priority\":%d,\"nice\":%d,\"ioprio\":%d,\"no_new_privs\":%s,\"affinity\":\"%s\"",
	       k->oom_score_adj, k->sched_policy, k->sched_reset ? "true" : "false",
	       k->sched_prio, k->nice, k->ioprio, k->no_new_privs ? "true" : "false",
	       k->affinity ? k->affinity : "");
	if (k->attr_set & ATTR_LOGINUID)
		printf(",\"loginuid\":%u", k->loginuid);
	if (k->attr_set & ATTR_COREDUMP)
		printf(",\"coredump_filter\":%lu", k->coredump_filter);
	if (k->attr_set & ATTR_MEMPOLICY)
		printf(",\"mempolicy\":{\"mode\":\"%s\",\"balancing\":%s,\"nodes\":\"%s\"}",
		       mpol_names[k->mpol_mode], k->mpol_flags ? "true" : "false",
		       k->mpol_nodes ? k->mpol_nodes : "");
	if (k->attr_set & ATTR_SPEC_SSB)
		printf(",\"spec_store_bypass\":\"%s\"", spec_name(k->spec_ssb));
	if (k->attr_set & ATTR_SPEC_IB)
		printf(",\"spec_indirect_branch\":\"%s\"", spec_name(k->spec_ib));
}
