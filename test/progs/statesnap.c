/*
 * statesnap: a normalized, line-oriented snapshot of what the kernel shows
 * about a process tree, and the before/after comparison of imgcr's state
 * check (see docs/state-inventory.md and docs/testing.md, "The state check").
 *
 *   statesnap PID...              print the snapshot of these tasks
 *   statesnap before DIR PID...   write it to DIR/.state-before
 *   statesnap after DIR PID...    snapshot again and compare with
 *                                 DIR/.state-before: exit 1 on a difference
 *                                 not listed as expected
 *   statesnap skipped DIR PID...  the restored tree could not be frozen
 *                                 (it ended): only logged
 *
 * imgcr runs it as $IMGCR_STATE_HOOK ("before" in a dump, "after" in a
 * restore, with the tree frozen).  The PIDs are the tree's tasks in the
 * tree's order; in "after" the n-th pid is the restored n-th task of
 * "before" (0: it is gone), so every key names a task by its pid at the
 * dump ("tree pid").  A line is "KEY\tVALUE" with KEY one of
 *   task P NAME         per task (process)
 *   thread P/T NAME     per thread (T: its innermost NSpid)
 *   fd P/N NAME         per fd
 *   map P/START-END NAME  per mapping
 * Identifiers that are not state (inode numbers of pipes, sockets, files;
 * pids) are normalized: pids to "tree:P" or "outside", inode numbers and
 * kcmp identities to "#k", the k-th distinct one in the snapshot's order.
 *
 * A difference is a key with different values on both sides; a key on
 * one side only is not one (a kernel may have a field another lacks).  It
 * is expected if "KEY OLD -> NEW" matches (fnmatch) a pattern of the
 * expected file ($IMGCR_STATE_EXPECTED, default /imgcr/state-expected.txt:
 * one pattern a line, " # reason" after it, "#" lines are comments).
 * Every difference (expected or not) and every skipped task is also
 * appended to $IMGCR_STATE_LOG if set, for the test runner.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/kcmp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <sched.h>
#include <netinet/in.h>

#ifndef SOL_TCP
#define SOL_TCP 6
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef SOL_PACKET
#define SOL_PACKET 263
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif
#ifndef SOL_RAW
#define SOL_RAW 255
#endif
#ifndef SOL_ICMPV6
#define SOL_ICMPV6 58
#endif
#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif
#ifndef SIOCINQ
#define SIOCINQ FIONREAD
#endif
#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ---- the snapshot: KEY\tVALUE lines ---- */

struct line {
	char *key, *val;
};
struct snap {
	struct line *l;
	int n, cap;
};

static struct snap cur;
static pid_t *given;	/* the pids as given (this side) */
static pid_t cur_pid;	/* the task being snapshot */
static pid_t *treepid;	/* the tree pid of each (the "before" side's) */
static int npids;

static void add(const char *scope, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add(const char *scope, const char *name, const char *fmt, ...)
{
	char *v, *p;
	va_list ap;

	if (cur.n == cur.cap) {
		cur.cap = cur.cap * 2 + 256;
		cur.l = realloc(cur.l, cur.cap * sizeof(*cur.l));
		if (!cur.l)
			exit(2);
	}
	va_start(ap, fmt);
	if (vasprintf(&v, fmt, ap) < 0)
		exit(2);
	va_end(ap);
	for (p = v; *p; p++)
		if (*p == '\n' || *p == '\t' || (unsigned char)*p < ' ')
			*p = ' ';
	while (p > v && p[-1] == ' ')
		*--p = 0;
	if (asprintf(&cur.l[cur.n].key, "%s %s", scope, name) < 0)
		exit(2);
	cur.l[cur.n++].val = v;
}

/* ---- normalizations ---- */

/* a pid as state: "tree:P" for a task of the tree, else "outside" (0: "0") */
static const char *pidname(long p)
{
	static char buf[8][32];
	static int k;
	char *b = buf[k++ & 7];

	if (p == 0)
		return "0";
	for (int i = 0; i < npids; i++)
		if (given[i] == p) {
			snprintf(b, 32, "tree:%d", treepid[i]);
			return b;
		}
	return "outside";
}

/* identities (inode numbers, kcmp classes): #k, the k-th distinct one seen */
struct ident {
	char *id;
	char label[32];
};
static struct ident *ids;
static int nids;

/*
 * An identity is named by the fd where the snapshot first saw it
 * ("#P/N"), so that an fd the program opens after the restore does not
 * rename all that come after it.
 */
static char cur_fd[32] = "?";

static const char *ident(const char *kind, const char *id)
{
	char *s;

	if (asprintf(&s, "%s:%s", kind, id) < 0)
		exit(2);
	for (int i = 0; i < nids; i++)
		if (!strcmp(ids[i].id, s)) {
			free(s);
			return ids[i].label;
		}
	ids = realloc(ids, (nids + 1) * sizeof(*ids));
	if (!ids)
		exit(2);
	ids[nids].id = s;
	snprintf(ids[nids].label, sizeof(ids[nids].label), "%s", cur_fd);
	return ids[nids++].label;
}

/* "pipe:[1234]" -> "pipe:[#k]", "anon_inode:[eventfd]" stays */
static void norm_link(char *out, size_t size, const char *link)
{
	const char *b = strchr(link, '[');
	size_t pre;

	if (b && isdigit((unsigned char)b[1]) && !strchr(link, '/')) {
		pre = b - link;
		snprintf(out, size, "%.*s[#%s]", (int)pre, link, ident("ino", b + 1));
	} else {
		snprintf(out, size, "%s", link);
	}
}

/* ---- reading ---- */

static char *readfile(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				exit(2);
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static unsigned long long fnv(const char *p, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EBADF: return "EBADF";
	default:
		snprintf(buf, sizeof(buf), "errno%d", e);
		return buf;
	}
}

/* ---- /proc/PID/status and task/TID/status ---- */

/* fields that legitimately change (or are pids/accounting), not compared */
static const char *const status_skip[] = {
	"State", "Tgid", "Pid", "TracerPid", "FDSize", "NStgid", "NSpid",
	"NSpgid", "NSsid", "Vm*", "Rss*", "HugetlbPages", "voluntary_ctxt_switches",
	"nonvoluntary_ctxt_switches", "Ngid", "Kthread",
	"SigQ",	/* the signals queued for the whole user, not the task's */
	"Children",	/* pids; each child's PPid is compared instead */
	NULL,
};

static int skipped(const char *const *tab, const char *name)
{
	for (int i = 0; tab[i]; i++)
		if (!fnmatch(tab[i], name, 0))
			return 1;
	return 0;
}

static void do_status(const char *scope, const char *path)
{
	char *text = readfile(path, NULL), *line, *save = NULL, *v;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];

		v = strchr(line, ':');
		if (!v || v - line >= (long)sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(v - line), line);
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		if (skipped(status_skip, name))
			continue;
		if (!strcmp(name, "PPid")) {
			add(scope, "status.PPid", "%s", pidname(atol(v)));
			continue;
		}
		char key[80];

		snprintf(key, sizeof(key), "status.%s", name);
		add(scope, key, "%s", v);
	}
	free(text);
}

/* /proc/PID/stat: the fields that are attributes, by number (1-based) */
static const struct {
	int field;
	const char *name;
	int pid;	/* a pid: normalized */
} stat_fields[] = {
	{ 5, "pgrp", 1 }, { 6, "session", 1 }, { 7, "tty_nr", 0 }, { 8, "tpgid", 1 },
	{ 18, "priority", 0 }, { 19, "nice", 0 }, { 20, "num_threads", 0 },
	{ 26, "startcode", 0 }, { 27, "endcode", 0 }, { 28, "startstack", 0 },
	{ 38, "exit_signal", 0 }, { 40, "rt_priority", 0 }, { 41, "policy", 0 },
	{ 45, "start_data", 0 }, { 46, "end_data", 0 }, { 47, "start_brk", 0 },
	{ 48, "arg_start", 0 }, { 49, "arg_end", 0 }, { 50, "env_start", 0 },
	{ 51, "env_end", 0 }, { 52, "exit_code", 0 },
};

static void do_stat(const char *scope, const char *path, int thread)
{
	char *text = readfile(path, NULL), *p, *f[64];
	int n = 2;

	if (!text)
		return;
	p = strrchr(text, ')');
	if (!p) {
		free(text);
		return;
	}
	/* fields 3... after "pid (comm) " */
	for (p = strtok(p + 1, " \n"); p && n < 63; p = strtok(NULL, " \n"))
		f[++n] = p;
	for (size_t i = 0; i < sizeof(stat_fields) / sizeof(stat_fields[0]); i++) {
		int k = stat_fields[i].field;
		char key[64];

		if (k > n)
			continue;
		if (thread && k != 18 && k != 19 && k != 40 && k != 41)
			continue;
		/* exit_code is a zombie's status; a live task's holds ptrace stops */
		if (k == 52 && strcmp(f[3], "Z"))
			continue;
		snprintf(key, sizeof(key), "stat.%s", stat_fields[i].name);
		if (stat_fields[i].pid)
			add(scope, key, "%s", pidname(atol(f[k])));
		else
			add(scope, key, "%s", f[k]);
	}
	free(text);
}

/* small one-value /proc files of a task */
static const struct {
	const char *file;
	int hash;	/* long or binary: length and hash */
} task_files[] = {
	{ "loginuid", 0 }, { "sessionid", 0 }, { "oom_score_adj", 0 },
	{ "personality", 0 }, { "timerslack_ns", 0 }, { "comm", 0 },
	{ "coredump_filter", 0 }, { "attr/current", 0 }, { "attr/exec", 0 },
	{ "attr/fscreate", 0 }, { "attr/keycreate", 0 }, { "attr/sockcreate", 0 },
	{ "cgroup", 0 }, { "uid_map", 0 }, { "gid_map", 0 }, { "setgroups", 0 },
	{ "cmdline", 1 }, { "environ", 1 }, { "auxv", 1 },
};

static void do_task_files(const char *scope, pid_t pid)
{
	char path[128], *t;
	size_t len;

	for (size_t i = 0; i < sizeof(task_files) / sizeof(task_files[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, task_files[i].file);
		t = readfile(path, &len);
		if (!t)
			continue;
		if (task_files[i].hash) {
			char show[80];
			size_t k;

			/* cmdline: readable start too */
			for (k = 0; k < len && k < sizeof(show) - 1; k++)
				show[k] = t[k] ? t[k] : ' ';
			show[k] = 0;
			if (!strcmp(task_files[i].file, "auxv"))
				show[0] = 0;
			add(scope, task_files[i].file, "len=%zu hash=%016llx %s", len, fnv(t, len), show);
		} else {
			add(scope, task_files[i].file, "%s", t);
		}
		free(t);
	}
	static const char *const links[] = { "cwd", "root", "exe" };
	for (size_t i = 0; i < 3; i++) {
		char target[PATH_MAX];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/%s", pid, links[i]);
		n = readlink(path, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = 0;
			add(scope, links[i], "%s", target);
		}
	}
	static const char *const nss[] = { "pid", "pid_for_children", "mnt", "net", "uts",
					   "ipc", "user", "cgroup", "time", "time_for_children" };
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		char a[128], b[128], key[64];
		ssize_t n1, n2;

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, nss[i]);
		n1 = readlink(path, a, sizeof(a) - 1);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", nss[i]);
		n2 = readlink(path, b, sizeof(b) - 1);
		if (n1 < 0 || n2 < 0)
			continue;
		a[n1] = b[n2] = 0;
		snprintf(key, sizeof(key), "ns.%s", nss[i]);
		add(scope, key, "%s", strcmp(a, b) ? "other" : "own");
	}
	/* the owner of /proc/PID: the task's euid/egid, root if not dumpable */
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (!stat(path, &st))
		add(scope, "proc.owner", "%u:%u", st.st_uid, st.st_gid);
}

static void do_limits(const char *scope, pid_t pid)
{
	char path[64], *text, *line, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	text = readfile(path, NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], *p;
		int k = 0;

		if (!strncmp(line, "Limit ", 6) || strlen(line) < 26)
			continue;
		/* the name is the first 25 columns */
		strcpy(key, "limits.");
		for (p = line; p < line + 25 && *p; p++)
			if (*p != ' ' || (p[1] != ' ' && p + 1 < line + 25))
				key[7 + k++] = *p == ' ' ? '_' : *p;
		key[7 + k] = 0;
		/* "soft hard units", single-spaced */
		char val[128], s1[32] = "", s2[32] = "", s3[32] = "";

		sscanf(line + 25, "%31s %31s %31s", s1, s2, s3);
		snprintf(val, sizeof(val), "%s %s %s", s1, s2, s3);
		add(scope, key, "%s", val);
	}
	free(text);
}

/* /proc/PID/timers: per POSIX timer */
static void do_timers(const char *scope, pid_t pid)
{
	char path[64], *text, *line, *save = NULL, id[32] = "", val[256] = "";

	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	text = readfile(path, NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		if (!line || !strncmp(line, "ID: ", 4)) {
			if (*id) {
				char key[64];

				snprintf(key, sizeof(key), "timer.%s", id);
				add(scope, key, "%s", val);
			}
			if (!line)
				break;
			snprintf(id, sizeof(id), "%s", line + 4);
			val[0] = 0;
			continue;
		}
		/* "notify: signal/pid.123": the pid normalized */
		char *d = strstr(line, "pid."), tmp[128];

		if (d) {
			snprintf(tmp, sizeof(tmp), "%.*s%s", (int)(d - line), line, pidname(atol(d + 4)));
			line = tmp;
		}
		strncat(val, line, sizeof(val) - strlen(val) - 2);
		strcat(val, ";");
	}
	free(text);
}

/* /proc/PID/smaps: per mapping its range, perms, offset, path, VmFlags... */
static const char *const smaps_keep[] = { "VmFlags", "THPeligible", "ProtectionKey", "KernelPageSize",
					  NULL };

/* the mappings' ranges of the task do_smaps read last, for do_numa */
static char (*ranges)[64];
static int nranges;

static void do_smaps(pid_t pid, pid_t tp)
{
	char path[64], *text, *line, *save = NULL, scope[96] = "";
	int count = 0;

	nranges = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	text = readfile(path, NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char range[64], perms[8], dev[16], *name;
		unsigned long long off, ino;
		int n = 0;

		if (sscanf(line, "%63s %7s %llx %15s %llu %n", range, perms, &off, dev, &ino, &n) >= 5 &&
		    strchr(range, '-') && n > 0) {
			name = line + n;
			if (!(nranges & 63) && !(ranges = realloc(ranges, (nranges + 64) * sizeof(*ranges))))
				exit(2);
			snprintf(ranges[nranges++], sizeof(*ranges), "%s", range);
			snprintf(scope, sizeof(scope), "map %d/%s", tp, range);
			add(scope, "perms", "%s", perms);
			add(scope, "offset", "%llx", off);
			add(scope, "path", "%s", name);
			count++;
			continue;
		}
		char *c = strchr(line, ':'), key[64];

		if (!c || !*scope)
			continue;
		*c = 0;
		if (!skipped(smaps_keep, line))
			continue;
		snprintf(key, sizeof(key), "%s", line);
		for (c++; *c == ' '; c++)
			;
		/*
		 * "sd" (VM_SOFTDIRTY) is the soft-dirty tracker's bookkeeping:
		 * set on every new mapping, cleared through clear_refs; not
		 * the program's state.
		 */
		char *sd = strstr(c, " sd");

		if (!strcmp(key, "VmFlags") && sd && (sd[3] == ' ' || !sd[3]))
			memmove(sd, sd + 3, strlen(sd + 3) + 1);
		add(scope, key, "%s", c);
	}
	free(text);
	snprintf(scope, sizeof(scope), "task %d", tp);
	add(scope, "maps.count", "%d", count);
}

/*
 * NUMA memory policies (numa_maps): per mapping of the task, the policy
 * of its own (mbind) or else the main thread's (set_mempolicy); per
 * thread, the distinct policies its numa_maps shows, in order (its own
 * for the mappings without one).  Absent without CONFIG_NUMA.
 */
static size_t mpol_len(const char *s)
{
	/* "prefer (many):0" and "weighted interleave:0" have a space */
	static const char *const spaced[] = { "prefer (many)", "weighted interleave" };
	const char *sp;
	size_t n = 0;

	for (size_t i = 0; i < 2; i++)
		if (!strncmp(s, spaced[i], strlen(spaced[i])))
			n = strlen(spaced[i]);
	sp = strchr(s + n, ' ');
	return sp ? (size_t)(sp - s) : strlen(s);
}

static void do_numa(pid_t pid, pid_t tid, pid_t tp, const char *tscope)
{
	char path[80], *text, *line, *save = NULL, list[512] = "", scope[96];
	size_t k = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", pid, tid);
	text = readfile(path, NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *pol = strchr(line, ' '), one[128], start[32];
		size_t pl;

		if (!pol)
			continue;
		pol++;
		pl = mpol_len(pol);
		snprintf(one, sizeof(one), "%.*s", (int)pl, pol);
		if (!tscope) {
			snprintf(start, sizeof(start), "%.*s-", (int)(pol - 1 - line), line);
			for (int i = 0; i < nranges; i++)
				if (!strncmp(ranges[i], start, strlen(start))) {
					snprintf(scope, sizeof(scope), "map %d/%s", tp, ranges[i]);
					add(scope, "mempolicy", "%s", one);
					break;
				}
			continue;
		}
		/* distinct, in order */
		char *hit = strstr(list, one);

		if (hit && (hit == list || hit[-1] == ',') && (!hit[strlen(one)] || hit[strlen(one)] == ','))
			continue;
		if (k + strlen(one) + 2 < sizeof(list))
			k += snprintf(list + k, sizeof(list) - k, "%s%s", k ? "," : "", one);
	}
	free(text);
	if (tscope)
		add(tscope, "mempolicy", "%s", list);
}

/* ---- sockets ---- */

enum { T_INT, T_LINGER, T_TIMEVAL, T_STR, T_BYTES, T_UCRED, T_FILTER };

struct opt {
	int level;
	const char *lname;
	int opt;
	const char *name;
	int type;
};

#define O(l, o, n, t) { l, #l, o, n, t }
/* reading SO_ERROR clears the error, SO_PEERPIDFD makes an fd: not read */
static const struct opt opts[] = {
	O(SOL_SOCKET, 1, "SO_DEBUG", T_INT), O(SOL_SOCKET, 2, "SO_REUSEADDR", T_INT),
	O(SOL_SOCKET, 3, "SO_TYPE", T_INT), O(SOL_SOCKET, 5, "SO_DONTROUTE", T_INT),
	O(SOL_SOCKET, 6, "SO_BROADCAST", T_INT), O(SOL_SOCKET, 7, "SO_SNDBUF", T_INT),
	O(SOL_SOCKET, 8, "SO_RCVBUF", T_INT), O(SOL_SOCKET, 9, "SO_KEEPALIVE", T_INT),
	O(SOL_SOCKET, 10, "SO_OOBINLINE", T_INT), O(SOL_SOCKET, 11, "SO_NO_CHECK", T_INT),
	O(SOL_SOCKET, 12, "SO_PRIORITY", T_INT), O(SOL_SOCKET, 13, "SO_LINGER", T_LINGER),
	O(SOL_SOCKET, 15, "SO_REUSEPORT", T_INT), O(SOL_SOCKET, 16, "SO_PASSCRED", T_INT),
	O(SOL_SOCKET, 17, "SO_PEERCRED", T_UCRED), O(SOL_SOCKET, 18, "SO_RCVLOWAT", T_INT),
	O(SOL_SOCKET, 19, "SO_SNDLOWAT", T_INT), O(SOL_SOCKET, 20, "SO_RCVTIMEO", T_TIMEVAL),
	O(SOL_SOCKET, 21, "SO_SNDTIMEO", T_TIMEVAL), O(SOL_SOCKET, 25, "SO_BINDTODEVICE", T_STR),
	O(SOL_SOCKET, 26, "SO_GET_FILTER", T_FILTER), O(SOL_SOCKET, 29, "SO_TIMESTAMP", T_INT),
	O(SOL_SOCKET, 30, "SO_ACCEPTCONN", T_INT), O(SOL_SOCKET, 34, "SO_PASSSEC", T_INT),
	O(SOL_SOCKET, 35, "SO_TIMESTAMPNS", T_INT), O(SOL_SOCKET, 36, "SO_MARK", T_INT),
	O(SOL_SOCKET, 37, "SO_TIMESTAMPING", T_INT), O(SOL_SOCKET, 38, "SO_PROTOCOL", T_INT),
	O(SOL_SOCKET, 39, "SO_DOMAIN", T_INT), O(SOL_SOCKET, 40, "SO_RXQ_OVFL", T_INT),
	O(SOL_SOCKET, 41, "SO_WIFI_STATUS", T_INT), O(SOL_SOCKET, 42, "SO_PEEK_OFF", T_INT),
	O(SOL_SOCKET, 43, "SO_NOFCS", T_INT), O(SOL_SOCKET, 44, "SO_LOCK_FILTER", T_INT),
	O(SOL_SOCKET, 45, "SO_SELECT_ERR_QUEUE", T_INT), O(SOL_SOCKET, 46, "SO_BUSY_POLL", T_INT),
	O(SOL_SOCKET, 47, "SO_MAX_PACING_RATE", T_INT), O(SOL_SOCKET, 60, "SO_ZEROCOPY", T_INT),
	O(SOL_SOCKET, 61, "SO_TXTIME", T_BYTES), O(SOL_SOCKET, 62, "SO_BINDTOIFINDEX", T_INT),
	O(SOL_SOCKET, 69, "SO_PREFER_BUSY_POLL", T_INT), O(SOL_SOCKET, 70, "SO_BUSY_POLL_BUDGET", T_INT),
	O(SOL_SOCKET, 71, "SO_NETNS_COOKIE", T_BYTES), O(SOL_SOCKET, 72, "SO_BUF_LOCK", T_INT),
	O(SOL_SOCKET, 73, "SO_RESERVE_MEM", T_INT), O(SOL_SOCKET, 74, "SO_TXREHASH", T_INT),
	O(SOL_SOCKET, 75, "SO_RCVMARK", T_INT), O(SOL_SOCKET, 76, "SO_PASSPIDFD", T_INT),
	O(SOL_SOCKET, 82, "SO_RCVPRIORITY", T_INT),

	O(SOL_TCP, 1, "TCP_NODELAY", T_INT), O(SOL_TCP, 2, "TCP_MAXSEG", T_INT),
	O(SOL_TCP, 3, "TCP_CORK", T_INT), O(SOL_TCP, 4, "TCP_KEEPIDLE", T_INT),
	O(SOL_TCP, 5, "TCP_KEEPINTVL", T_INT), O(SOL_TCP, 6, "TCP_KEEPCNT", T_INT),
	O(SOL_TCP, 7, "TCP_SYNCNT", T_INT), O(SOL_TCP, 8, "TCP_LINGER2", T_INT),
	O(SOL_TCP, 9, "TCP_DEFER_ACCEPT", T_INT), O(SOL_TCP, 10, "TCP_WINDOW_CLAMP", T_INT),
	O(SOL_TCP, 13, "TCP_CONGESTION", T_STR), O(SOL_TCP, 16, "TCP_THIN_LINEAR_TIMEOUTS", T_INT),
	O(SOL_TCP, 17, "TCP_THIN_DUPACK", T_INT), O(SOL_TCP, 18, "TCP_USER_TIMEOUT", T_INT),
	O(SOL_TCP, 19, "TCP_REPAIR", T_INT), O(SOL_TCP, 23, "TCP_FASTOPEN", T_INT),
	O(SOL_TCP, 25, "TCP_NOTSENT_LOWAT", T_INT), O(SOL_TCP, 27, "TCP_SAVE_SYN", T_INT),
	O(SOL_TCP, 30, "TCP_FASTOPEN_CONNECT", T_INT), O(SOL_TCP, 31, "TCP_ULP", T_STR),
	O(SOL_TCP, 34, "TCP_FASTOPEN_NO_COOKIE", T_INT), O(SOL_TCP, 36, "TCP_INQ", T_INT),
	O(SOL_TCP, 37, "TCP_TX_DELAY", T_INT),

	O(SOL_IP, 1, "IP_TOS", T_INT), O(SOL_IP, 2, "IP_TTL", T_INT),
	O(SOL_IP, 3, "IP_HDRINCL", T_INT), O(SOL_IP, 4, "IP_OPTIONS", T_BYTES),
	O(SOL_IP, 5, "IP_ROUTER_ALERT", T_INT),
	O(SOL_IP, 6, "IP_RECVOPTS", T_INT), O(SOL_IP, 7, "IP_RETOPTS", T_INT),
	O(SOL_IP, 8, "IP_PKTINFO", T_INT), O(SOL_IP, 10, "IP_MTU_DISCOVER", T_INT),
	O(SOL_IP, 11, "IP_RECVERR", T_INT), O(SOL_IP, 12, "IP_RECVTTL", T_INT),
	O(SOL_IP, 13, "IP_RECVTOS", T_INT), O(SOL_IP, 14, "IP_MTU", T_INT),
	O(SOL_IP, 15, "IP_FREEBIND", T_INT), O(SOL_IP, 18, "IP_PASSSEC", T_INT),
	O(SOL_IP, 19, "IP_TRANSPARENT", T_INT), O(SOL_IP, 21, "IP_MINTTL", T_INT),
	O(SOL_IP, 22, "IP_NODEFRAG", T_INT), O(SOL_IP, 23, "IP_CHECKSUM", T_INT),
	O(SOL_IP, 24, "IP_BIND_ADDRESS_NO_PORT", T_INT), O(SOL_IP, 25, "IP_RECVFRAGSIZE", T_INT),
	O(SOL_IP, 26, "IP_RECVERR_RFC4884", T_INT), O(SOL_IP, 32, "IP_MULTICAST_IF", T_BYTES),
	O(SOL_IP, 33, "IP_MULTICAST_TTL", T_INT), O(SOL_IP, 34, "IP_MULTICAST_LOOP", T_INT),
	O(SOL_IP, 49, "IP_MULTICAST_ALL", T_INT), O(SOL_IP, 51, "IP_LOCAL_PORT_RANGE", T_INT),

	O(SOL_IPV6, 7, "IPV6_CHECKSUM", T_INT), O(SOL_IPV6, 22, "IPV6_ROUTER_ALERT", T_INT),
	O(SOL_IPV6, 36, "IPV6_HDRINCL", T_INT),
	O(SOL_IPV6, 16, "IPV6_UNICAST_HOPS", T_INT), O(SOL_IPV6, 17, "IPV6_MULTICAST_IF", T_INT),
	O(SOL_IPV6, 18, "IPV6_MULTICAST_HOPS", T_INT), O(SOL_IPV6, 19, "IPV6_MULTICAST_LOOP", T_INT),
	O(SOL_IPV6, 23, "IPV6_MTU_DISCOVER", T_INT), O(SOL_IPV6, 24, "IPV6_MTU", T_INT),
	O(SOL_IPV6, 25, "IPV6_RECVERR", T_INT), O(SOL_IPV6, 26, "IPV6_V6ONLY", T_INT),
	O(SOL_IPV6, 29, "IPV6_MULTICAST_ALL", T_INT), O(SOL_IPV6, 33, "IPV6_FLOWINFO_SEND", T_INT),
	O(SOL_IPV6, 49, "IPV6_RECVPKTINFO", T_INT), O(SOL_IPV6, 51, "IPV6_RECVHOPLIMIT", T_INT),
	O(SOL_IPV6, 53, "IPV6_RECVHOPOPTS", T_INT), O(SOL_IPV6, 56, "IPV6_RECVRTHDR", T_INT),
	O(SOL_IPV6, 58, "IPV6_RECVDSTOPTS", T_INT), O(SOL_IPV6, 60, "IPV6_RECVPATHMTU", T_INT),
	O(SOL_IPV6, 62, "IPV6_DONTFRAG", T_INT), O(SOL_IPV6, 66, "IPV6_RECVTCLASS", T_INT),
	O(SOL_IPV6, 67, "IPV6_TCLASS", T_INT), O(SOL_IPV6, 70, "IPV6_AUTOFLOWLABEL", T_INT),
	O(SOL_IPV6, 72, "IPV6_ADDR_PREFERENCES", T_INT), O(SOL_IPV6, 73, "IPV6_MINHOPCOUNT", T_INT),
	O(SOL_IPV6, 74, "IPV6_RECVORIGDSTADDR", T_INT), O(SOL_IPV6, 75, "IPV6_TRANSPARENT", T_INT),
	O(SOL_IPV6, 76, "IPV6_UNICAST_IF", T_INT), O(SOL_IPV6, 77, "IPV6_RECVFRAGSIZE", T_INT),
	O(SOL_IPV6, 78, "IPV6_FREEBIND", T_INT),

	O(SOL_NETLINK, 3, "NETLINK_PKTINFO", T_INT), O(SOL_NETLINK, 4, "NETLINK_BROADCAST_ERROR", T_INT),
	O(SOL_NETLINK, 5, "NETLINK_NO_ENOBUFS", T_INT), O(SOL_NETLINK, 8, "NETLINK_LISTEN_ALL_NSID", T_INT),
	O(SOL_NETLINK, 9, "NETLINK_LIST_MEMBERSHIPS", T_BYTES), O(SOL_NETLINK, 10, "NETLINK_CAP_ACK", T_INT),
	O(SOL_NETLINK, 11, "NETLINK_EXT_ACK", T_INT), O(SOL_NETLINK, 12, "NETLINK_GET_STRICT_CHK", T_INT),
	/* not PACKET_STATISTICS: reading the counters resets them */
	O(SOL_PACKET, 8, "PACKET_AUXDATA", T_INT), O(SOL_PACKET, 9, "PACKET_ORIGDEV", T_INT),
	O(SOL_PACKET, 10, "PACKET_VERSION", T_INT), O(SOL_PACKET, 12, "PACKET_RESERVE", T_INT),
	O(SOL_PACKET, 14, "PACKET_LOSS", T_INT), O(SOL_PACKET, 15, "PACKET_VNET_HDR", T_INT),
	O(SOL_PACKET, 17, "PACKET_TIMESTAMP", T_INT), O(SOL_PACKET, 18, "PACKET_FANOUT", T_INT),
	O(SOL_PACKET, 19, "PACKET_TX_HAS_OFF", T_INT), O(SOL_PACKET, 20, "PACKET_QDISC_BYPASS", T_INT),
	O(SOL_PACKET, 23, "PACKET_IGNORE_OUTGOING", T_INT), O(SOL_PACKET, 24, "PACKET_VNET_HDR_SZ", T_INT),
	O(SOL_UDP, 1, "UDP_CORK", T_INT), O(SOL_UDP, 100, "UDP_ENCAP", T_INT),
	O(SOL_UDP, 101, "UDP_NO_CHECK6_TX", T_INT), O(SOL_UDP, 102, "UDP_NO_CHECK6_RX", T_INT),
	O(SOL_UDP, 103, "UDP_SEGMENT", T_INT), O(SOL_UDP, 104, "UDP_GRO", T_INT),

	/* UDP-Lite's coverages; raw ICMP and ICMPv6 sockets' type filters */
	O(SOL_UDPLITE, 10, "UDPLITE_SEND_CSCOV", T_INT), O(SOL_UDPLITE, 11, "UDPLITE_RECV_CSCOV", T_INT),
	O(SOL_RAW, 1, "ICMP_FILTER", T_BYTES), O(SOL_ICMPV6, 1, "ICMPV6_FILTER", T_BYTES),
};

static void hex(char *out, size_t size, const unsigned char *b, size_t n)
{
	size_t k = 0;

	out[0] = 0;
	for (size_t i = 0; i < n && k + 3 < size; i++)
		k += snprintf(out + k, size - k, "%02x", b[i]);
}

static void sockaddr_str(char *out, size_t size, const struct sockaddr_storage *ss, socklen_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (len == 0) {
		snprintf(out, size, "none");
	} else if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		snprintf(out, size, "%s:%u", inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a)), ntohs(s->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;

		snprintf(out, size, "[%s]:%u", inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a)), ntohs(s->sin6_port));
	} else if (ss->ss_family == AF_UNIX) {
		const struct sockaddr_un *s = (const void *)ss;
		size_t n = len - offsetof(struct sockaddr_un, sun_path);

		if (n == 0)
			snprintf(out, size, "unix:unnamed");
		else if (s->sun_path[0] == 0)
			snprintf(out, size, "unix:@%.*s", (int)n - 1, s->sun_path + 1);
		else
			snprintf(out, size, "unix:%s", s->sun_path);
	} else {
		hex(out, size, (const unsigned char *)ss, len);
	}
}

static int level_applies(int level, int domain, int proto)
{
	switch (level) {
	case SOL_SOCKET: return 1;
	case SOL_IP: return domain == AF_INET || domain == AF_INET6;
	case SOL_IPV6: return domain == AF_INET6;
	case SOL_TCP: return (domain == AF_INET || domain == AF_INET6) && proto == IPPROTO_TCP;
	case SOL_UDP: return (domain == AF_INET || domain == AF_INET6) &&
			     (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE);
	case SOL_UDPLITE: return (domain == AF_INET || domain == AF_INET6) && proto == IPPROTO_UDPLITE;
	case SOL_RAW: return domain == AF_INET;	/* a raw socket's, else EOPNOTSUPP, ENOPROTOOPT */
	case SOL_ICMPV6: return domain == AF_INET6;
	case SOL_NETLINK: return domain == AF_NETLINK;
	case SOL_PACKET: return domain == AF_PACKET;
	}
	return 0;
}


/*
 * The shutdown state (SHUT_RD/SHUT_WR) of unix, TCP, UDP and UDP-Lite
 * sockets: only sock_diag shows it, from a netlink socket in the socket's
 * own network namespace (SIOCGSKNS), asked once per namespace, family and
 * protocol and kept by inode for the snapshot.
 */
struct diag_ent {
	unsigned long long netns;	/* the namespace's inode */
	int family, proto;		/* proto -1: unix */
	int marker;			/* 1: this dump was made (no socket) */
	unsigned int ino, shutdown;
};
static struct diag_ent *dents;
static int ndents, capdents;

static void diag_keep(unsigned long long netns, int family, int proto, int marker,
		      unsigned int ino, unsigned int shutdown)
{
	if (ndents == capdents) {
		capdents = capdents * 2 + 64;
		dents = realloc(dents, capdents * sizeof(*dents));
		if (!dents)
			exit(2);
	}
	dents[ndents++] = (struct diag_ent){ netns, family, proto, marker, ino, shutdown };
}

/* the entry of the socket @ino (or of the dump itself: @marker), -1 if none */
static int diag_find(unsigned long long netns, int family, int proto, int marker, unsigned int ino)
{
	for (int i = 0; i < ndents; i++)
		if (dents[i].netns == netns && dents[i].family == family && dents[i].proto == proto &&
		    dents[i].marker == marker && (marker || dents[i].ino == ino))
			return i;
	return -1;
}

/* dump @family/@proto sockets of the namespace @nsfd into dents; 0 or -1 */
static int diag_dump(int nsfd, unsigned long long netns, int family, int proto)
{
	static char buf[32768];
	struct {
		struct nlmsghdr nlh;
		union {
			struct inet_diag_req_v2 in;
			struct unix_diag_req un;
		};
	} req;
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), nl = -1, done = 0;

	if (self < 0)
		return -1;
	if (!setns(nsfd, CLONE_NEWNET)) {
		nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		if (setns(self, CLONE_NEWNET))
			exit(2);	/* the rest would be read from the wrong namespace */
	}
	close(self);
	if (nl < 0)
		return -1;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (family == AF_UNIX) {
		req.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(req.un));
		req.un.sdiag_family = AF_UNIX;
		req.un.udiag_states = ~0u;
	} else {
		req.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(req.in));
		req.in.sdiag_family = family;
		req.in.sdiag_protocol = proto;
		req.in.idiag_states = ~0u;
	}
	if (send(nl, &req, req.nlh.nlmsg_len, 0) != (ssize_t)req.nlh.nlmsg_len) {
		close(nl);
		return -1;
	}
	while (!done) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n <= 0)
			break;
		for (h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct rtattr *a;
			unsigned int ino, shut = 0, len;

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (family == AF_UNIX) {
				struct unix_diag_msg *m = NLMSG_DATA(h);

				ino = m->udiag_ino;
				a = (void *)(m + 1);
				len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			} else {
				struct inet_diag_msg *m = NLMSG_DATA(h);

				ino = m->idiag_inode;
				a = (void *)(m + 1);
				len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			}
			for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
				if (a->rta_type == (family == AF_UNIX ? UNIX_DIAG_SHUTDOWN : INET_DIAG_SHUTDOWN))
					shut = *(unsigned char *)RTA_DATA(a);
			diag_keep(netns, family, proto, 0, ino, shut);
		}
	}
	close(nl);
	diag_keep(netns, family, proto, 1, 0, 0);
	return 0;
}

static void do_shutdown(const char *scope, int sk, int domain, int type, int proto)
{
	struct stat st, ns;
	int nsfd, i, want;

	if (domain == AF_UNIX)
		want = -1;	/* one dump for every type */
	else if ((domain == AF_INET || domain == AF_INET6) &&
		 ((type == SOCK_STREAM && proto == IPPROTO_TCP) ||
		  (type == SOCK_DGRAM && (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE))))
		want = proto;
	else
		return;
	if (fstat(sk, &st))
		return;
	nsfd = ioctl(sk, SIOCGSKNS);
	if (nsfd < 0)
		return;
	if (fstat(nsfd, &ns)) {
		close(nsfd);
		return;
	}
	if (diag_find(ns.st_ino, domain, want, 1, 0) < 0)
		diag_dump(nsfd, ns.st_ino, domain, want);
	close(nsfd);
	i = diag_find(ns.st_ino, domain, want, 0, st.st_ino);
	if (i >= 0)
		add(scope, "diag.shutdown", "%s%s", dents[i].shutdown & 1 ? "rd" : "-",
		    dents[i].shutdown & 2 ? "wr" : "-");
}

static void do_socket(const char *scope, int sk)
{
	int domain = 0, proto = 0, type = 0;
	socklen_t l = sizeof(int);
	struct sockaddr_storage ss;
	char buf[1024], out[2100], key[96];

	getsockopt(sk, SOL_SOCKET, SO_DOMAIN, &domain, &l);
	l = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
	l = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_TYPE, &type, &l);
	do_shutdown(scope, sk, domain, type, proto);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct opt *o = &opts[i];

		if (!level_applies(o->level, domain, proto))
			continue;
		memset(buf, 0, sizeof(buf));
		l = o->type == T_INT ? sizeof(int) : sizeof(buf);
		if (o->type == T_FILTER)
			l = 0;	/* the number of instructions */
		if (getsockopt(sk, o->level, o->opt, o->type == T_FILTER ? NULL : buf, &l))
			continue;	/* ENOPROTOOPT, EINVAL...: not this socket's */
		snprintf(key, sizeof(key), "sockopt.%s.%s", o->lname, o->name);
		switch (o->type) {
		case T_INT:
			add(scope, key, "%d", *(int *)buf);
			break;
		case T_LINGER: {
			struct linger *lg = (void *)buf;

			add(scope, key, "%d,%d", lg->l_onoff, lg->l_linger);
			break;
		}
		case T_TIMEVAL: {
			struct timeval *tv = (void *)buf;

			add(scope, key, "%ld.%06ld", (long)tv->tv_sec, (long)tv->tv_usec);
			break;
		}
		case T_STR:
			add(scope, key, "%.*s", (int)l, buf);
			break;
		case T_BYTES:
			hex(out, sizeof(out), (unsigned char *)buf, l);
			add(scope, key, "%s", out);
			break;
		case T_UCRED: {
			struct ucred *u = (void *)buf;

			add(scope, key, "pid=%s uid=%u gid=%u", pidname(u->pid), u->uid, u->gid);
			break;
		}
		case T_FILTER: {
			socklen_t n = l;

			if (n && n < sizeof(buf) / 8) {
				l = n;
				if (!getsockopt(sk, o->level, o->opt, buf, &l)) {
					hex(out, sizeof(out), (unsigned char *)buf, n * 8);
					add(scope, key, "%u %s", n, out);
					break;
				}
			}
			add(scope, key, "%u", n);
			break;
		}
		}
	}
	l = sizeof(ss);
	if (!getsockname(sk, (struct sockaddr *)&ss, &l)) {
		sockaddr_str(out, sizeof(out), &ss, l);
		add(scope, "sockname", "%s", out);
	}
	l = sizeof(ss);
	if (!getpeername(sk, (struct sockaddr *)&ss, &l)) {
		sockaddr_str(out, sizeof(out), &ss, l);
		add(scope, "peername", "%s", out);
	} else {
		add(scope, "peername", "%s", errno == ENOTCONN ? "ENOTCONN" : errname(errno));
	}
	int q;

	if (!ioctl(sk, SIOCOUTQ, &q))
		add(scope, "ioctl.SIOCOUTQ", "%d", q);
	if (!ioctl(sk, SIOCINQ, &q))
		add(scope, "ioctl.SIOCINQ", "%d", q);
}

/* ---- fds ---- */

/* fcntl/ioctl getters on a copy of the fd (pidfd_getfd) */
static void do_fd_getters(const char *scope, int fd, mode_t mode)
{
	struct f_owner_ex own;
	struct termios tio;
	struct winsize ws;
	int v;

	if (!fcntl(fd, F_GETOWN_EX, &own))
		add(scope, "fcntl.F_GETOWN_EX", "%d:%s", own.type, pidname(own.pid));
	if ((v = fcntl(fd, F_GETSIG)) >= 0)
		add(scope, "fcntl.F_GETSIG", "%d", v);
	if ((v = fcntl(fd, F_GETLEASE)) >= 0 && S_ISREG(mode))
		add(scope, "fcntl.F_GETLEASE", "%d", v);
	if ((v = fcntl(fd, F_GET_SEALS)) >= 0)
		add(scope, "fcntl.F_GET_SEALS", "%d", v);
	if ((v = fcntl(fd, F_GETPIPE_SZ)) >= 0)
		add(scope, "fcntl.F_GETPIPE_SZ", "%d", v);
	if (S_ISFIFO(mode) && !ioctl(fd, FIONREAD, &v))
		add(scope, "ioctl.FIONREAD", "%d", v);
	if (S_ISCHR(mode) && !ioctl(fd, TCGETS, &tio)) {
		add(scope, "tty.termios", "i=%x o=%x c=%x l=%x line=%d cc=%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x",
		    tio.c_iflag, tio.c_oflag, tio.c_cflag, tio.c_lflag, tio.c_line,
		    tio.c_cc[0], tio.c_cc[1], tio.c_cc[2], tio.c_cc[3], tio.c_cc[4], tio.c_cc[5],
		    tio.c_cc[6], tio.c_cc[7], tio.c_cc[8], tio.c_cc[9], tio.c_cc[10], tio.c_cc[11],
		    tio.c_cc[12], tio.c_cc[13], tio.c_cc[14], tio.c_cc[15], tio.c_cc[16]);
		if (!ioctl(fd, TIOCGWINSZ, &ws))
			add(scope, "tty.winsize", "%ux%u", ws.ws_row, ws.ws_col);
		if (!ioctl(fd, TIOCGPGRP, &v))
			add(scope, "tty.pgrp", "%s", pidname(v));
		if (!ioctl(fd, TIOCGSID, &v))
			add(scope, "tty.sid", "%s", pidname(v));
		if (!ioctl(fd, TIOCGEXCL, &v))
			add(scope, "tty.excl", "%d", v);
		if (!ioctl(fd, TIOCGPKT, &v))
			add(scope, "tty.pkt", "%d", v);
		if (!ioctl(fd, TIOCGPTLCK, &v))
			add(scope, "tty.ptlck", "%d", v);
		if (!ioctl(fd, TIOCINQ, &v))
			add(scope, "tty.inq", "%d", v);
		if (!ioctl(fd, TIOCOUTQ, &v))
			add(scope, "tty.outq", "%d", v);
	}
}

/* one fdinfo line: "name:\tvalue"; ids normalized */
static void do_fdinfo_line(const char *scope, char *line, const char *link)
{
	char *c = strchr(line, ':'), key[96], name[48], v[512];

	if (!c || c - line >= (long)sizeof(name))
		return;
	snprintf(name, sizeof(name), "%.*s", (int)(c - line), line);
	for (c++; *c == ' ' || *c == '\t'; c++)
		;
	snprintf(v, sizeof(v), "%s", c);
	/* an inode number of a pipe/socket/anon file is an identity, not state */
	if (!strcmp(name, "ino")) {
		size_t n = strlen(link);

		/*
		 * Only a file reopened by path keeps its inode: a deleted file
		 * or a memfd is recreated (its identity: "inode #k").
		 */
		if (link[0] != '/' || !strncmp(link, "/memfd:", 7) ||
		    !strncmp(link, "/dev/pts/", 9) ||	/* devpts: index + 3 */
		    (n > 10 && !strcmp(link + n - 10, " (deleted)")))
			return;
	} else if (!strcmp(name, "eventfd-id") || !strcmp(name, "Pid") || !strcmp(name, "NSpid")) {
		if (strcmp(name, "eventfd-id"))
			snprintf(v, sizeof(v), "%s", pidname(atol(c)));
		else
			snprintf(v, sizeof(v), "#%s", ident("eventfd", c));
	} else if (!strcmp(name, "map_id") || !strcmp(name, "prog_id")) {
		/* a bpf map is made again with a new id: an identity (the same map: the same #k) */
		snprintf(v, sizeof(v), "#%s", ident("bpf", c));
	} else if (!strcmp(name, "it_value")) {
		/* the remaining time: armed or not */
		snprintf(v, sizeof(v), "%s", strcmp(c, "(0, 0)") ? "armed" : "(0, 0)");
	} else if (!strcmp(name, "tfd")) {
		/* epoll: "tfd: 5 events: 19 data: 5  pos:0 ino:1234 sdev:f" */
		char *ino = strstr(v, " ino:"), *sdev;

		snprintf(name, sizeof(name), "tfd.%d", atoi(c));
		if (ino) {
			/*
			 * The target is normally the task's own fd of that number
			 * ("ino:fd"); else an identity.  Not numbered in line order:
			 * the lines are in the order of kernel addresses.
			 */
			unsigned long long i = strtoull(ino + 5, NULL, 16);
			char p[64];
			struct stat st;

			sdev = strstr(ino, " sdev:");
			snprintf(p, sizeof(p), "/proc/%d/fd/%d", cur_pid, atoi(c));
			if (!stat(p, &st) && st.st_ino == i)
				snprintf(ino, v + sizeof(v) - ino, " ino:fd");
			else
				snprintf(ino, v + sizeof(v) - ino, " ino:other");
			(void)sdev;
		}
	} else if (!strcmp(name, "inotify")) {
		snprintf(name, sizeof(name), "inotify.wd%d", atoi(c + 3));
	} else if (!strcmp(name, "inotify wd")) {
		/* "inotify wd:1 ino:3 sdev:10 mask:2 ignored_mask:0 fhandle-bytes:..." (v from "1 ino:") */
		char *ino = strstr(v, " ino:"), *mask = strstr(v, " mask:"), *fh;

		if (ino && mask && mask > ino) {
			/*
			 * A watch on a deleted file the task holds: the restore
			 * recreates the file (a new inode, "ino:deleted-fd")
			 */
			unsigned long long i = strtoull(ino + 5, NULL, 16);
			char p[64], l[4096], rest[256];
			struct dirent *e;
			struct stat st;
			DIR *d;

			snprintf(p, sizeof(p), "/proc/%d/fd", cur_pid);
			d = opendir(p);
			while (d && (e = readdir(d))) {
				ssize_t n;

				snprintf(p, sizeof(p), "/proc/%d/fd/%d", cur_pid, atoi(e->d_name));
				n = readlink(p, l, sizeof(l) - 1);
				if (e->d_name[0] == '.' || n < 11 || stat(p, &st) || st.st_ino != i)
					continue;
				l[n] = 0;
				if (strcmp(l + n - 10, " (deleted)"))
					continue;
				fh = strstr(mask, " fhandle-bytes:");
				if (fh)
					*fh = 0;
				snprintf(rest, sizeof(rest), "%s", mask);
				snprintf(ino, v + sizeof(v) - ino, " ino:deleted-fd%s", rest);
				break;
			}
			if (d)
				closedir(d);
		}
	} else if (!strcmp(name, "lock")) {
		static int nl;

		/* "1: POSIX  ADVISORY  WRITE 123 fd:01:2345 0 EOF": the pid normalized */
		char a[16], b[16], d[16], f[64], rest[128] = "";
		long p = 0;

		/* ... and the locked file's dev:inode an identity */
		if (sscanf(c, "%*s %15s %15s %15s %ld %63s %127[^\n]", a, b, d, &p, f, rest) >= 5)
			snprintf(v, sizeof(v), "%s %s %s %s ino:#%s %s", a, b, d, pidname(p),
				 ident("ino", f), rest);
		snprintf(name, sizeof(name), "lock%d", nl++);
	} else if (!strcmp(name, "mnt_id")) {
		return;	/* mount ids are identities too (the same mount: same path) */
	}
	snprintf(key, sizeof(key), "fdinfo.%s", name);
	add(scope, key, "%s", v);
}

static void do_fds(pid_t pid, pid_t tp, int pidfd)
{
	char path[96], link[PATH_MAX], nl[PATH_MAX + 32], scope[64], list[4096] = "";
	struct dirent **ents;
	int n, k = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	n = scandir(path, &ents, NULL, versionsort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		int fd = atoi(ents[i]->d_name), dup;
		struct stat st;
		ssize_t r;
		char *info, *line, *save = NULL;

		if (ents[i]->d_name[0] == '.') {
			free(ents[i]);
			continue;
		}
		free(ents[i]);
		k += snprintf(list + k, sizeof(list) - k, "%s%d", k ? "," : "", fd);
		if (k >= (int)sizeof(list))
			k = sizeof(list) - 1;
		snprintf(scope, sizeof(scope), "fd %d/%d", tp, fd);
		snprintf(cur_fd, sizeof(cur_fd), "%d/%d", tp, fd);
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		r = readlink(path, link, sizeof(link) - 1);
		if (r < 0)
			continue;
		link[r] = 0;
		norm_link(nl, sizeof(nl), link);
		add(scope, "link", "%s", nl);
		if (!stat(path, &st)) {
			char id[64];

			snprintf(id, sizeof(id), "%llx:%llx", (unsigned long long)st.st_dev,
				 (unsigned long long)st.st_ino);
			add(scope, "stat.mode", "%o", st.st_mode);
			add(scope, "stat.owner", "%u:%u", st.st_uid, st.st_gid);
			if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
				add(scope, "stat.rdev", "%u:%u", major(st.st_rdev), minor(st.st_rdev));
			/* a device node's identity is its rdev (and link) */
			if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
				add(scope, "inode", "#%s", ident("ino", id));
		}
		/* which open file description: the first fd of the tree with the same one */
		for (int t = 0; t < npids; t++) {
			if (given[t] <= 0)
				continue;
			/* only earlier tasks (and this one) can have been seen */
			if (given[t] == pid) {
				for (int f = 0; f < fd; f++)
					if (syscall(SYS_kcmp, pid, pid, KCMP_FILE, f, fd) == 0) {
						add(scope, "file.same_as", "fd %d/%d", tp, f);
						goto found;
					}
				break;
			}
			char p2[64];
			struct dirent *d;
			DIR *dd;

			snprintf(p2, sizeof(p2), "/proc/%d/fd", given[t]);
			dd = opendir(p2);
			if (!dd)
				continue;
			int hit = -1;

			while ((d = readdir(dd)))
				if (d->d_name[0] != '.' &&
				    syscall(SYS_kcmp, given[t], pid, KCMP_FILE, atoi(d->d_name), fd) == 0 &&
				    (hit < 0 || atoi(d->d_name) < hit))
					hit = atoi(d->d_name);
			closedir(dd);
			if (hit >= 0) {
				add(scope, "file.same_as", "fd %d/%d", treepid[t], hit);
				goto found;
			}
		}
found:
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
		info = readfile(path, NULL);
		for (line = info ? strtok_r(info, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save))
			do_fdinfo_line(scope, line, link);
		free(info);
		if (pidfd < 0)
			continue;
		dup = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (dup < 0) {
			add(scope, "getfd", "%s", errname(errno));
			continue;
		}
		do_fd_getters(scope, dup, st.st_mode);
		if (S_ISSOCK(st.st_mode))
			do_socket(scope, dup);
		close(dup);
	}
	free(ents);
	snprintf(scope, sizeof(scope), "task %d", tp);
	add(scope, "fds", "%s", list);
}

/* ---- tasks and threads ---- */

static pid_t innermost(const char *status_path)
{
	char *t = readfile(status_path, NULL), *v, *end;
	long id = -1, x;

	v = t ? strstr(t, "\nNSpid:") : NULL;
	if (v)
		v += 7;
	while (v && *v && *v != '\n') {
		x = strtol(v, &end, 10);
		if (end == v)
			break;
		id = x;
		v = end;
	}
	free(t);
	return id;
}

/* the kcmp classes of a task: which tasks share its mm, fd table, fs... */
/* task @ti is a zombie (or dead): it has no mm, files, fs... to share */
static int dead(int ti)
{
	static signed char *known;	/* per task: 0 unknown, 1 alive, 2 dead */
	char path[64], *st, *p;
	int z = 0;

	if (!known && !(known = calloc(npids, 1)))
		exit(2);
	if (known[ti])
		return known[ti] == 2;
	snprintf(path, sizeof(path), "/proc/%d/stat", given[ti]);
	st = readfile(path, NULL);
	p = st ? strrchr(st, ')') : NULL;
	if (p && p[1] && p[2])
		z = p[2] == 'Z' || p[2] == 'X';
	free(st);
	known[ti] = z ? 2 : 1;
	return z;
}

/*
 * Which earlier task of the tree shares each kcmp class with task @ti.  A
 * zombie is neither asked nor named: kcmp finds all zombies "sharing"
 * their missing mm, fd table and fs, and the first of them may be reaped
 * by the restored tree before the check (it renamed every later one).
 */
static void do_shared(const char *scope, int ti)
{
	static const struct {
		int type;
		const char *name;
	} k[] = {
		{ KCMP_VM, "vm" }, { KCMP_FILES, "files" }, { KCMP_FS, "fs" },
		{ KCMP_SIGHAND, "sighand" }, { KCMP_IO, "io" }, { KCMP_SYSVSEM, "sysvsem" },
	};

	if (dead(ti))
		return;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char key[64];
		int same = -1;

		for (int j = 0; j < ti && same < 0; j++)
			if (given[j] > 0 && !dead(j) &&
			    syscall(SYS_kcmp, given[j], given[ti], k[i].type, 0, 0) == 0)
				same = j;
		snprintf(key, sizeof(key), "shared.%s", k[i].name);
		if (same < 0)
			add(scope, key, "own");
		else
			add(scope, key, "with tree:%d", treepid[same]);
	}
}

static void snapshot_task(int ti)
{
	pid_t pid = given[ti], tp = treepid[ti];
	char scope[64], path[96], list[4096] = "", *st;
	struct dirent **ents;
	int n, k = 0, pidfd;

	cur_pid = pid;
	snprintf(scope, sizeof(scope), "task %d", tp);
	/* a zombie (or dying task): most of it is gone; see compare() */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = readfile(path, NULL);
	if (st && strrchr(st, ')'))
		add(scope, "zombie", "%d", strrchr(st, ')')[2] == 'Z' || strrchr(st, ')')[2] == 'X');
	free(st);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	do_status(scope, path);
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	do_stat(scope, path, 0);
	do_task_files(scope, pid);
	do_limits(scope, pid);
	do_timers(scope, pid);
	do_shared(scope, ti);
	do_smaps(pid, tp);
	do_numa(pid, pid, tp, NULL);

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	n = scandir(path, &ents, NULL, versionsort);
	for (int i = 0; i < n; i++) {
		char tscope[64], *t;
		pid_t tid = atoi(ents[i]->d_name), in;

		free(ents[i]);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
		in = innermost(path);
		if (tid == pid)
			in = tp;
		k += snprintf(list + k, sizeof(list) - k, "%s%d", k ? "," : "", in);
		if (k >= (int)sizeof(list))
			k = sizeof(list) - 1;
		snprintf(tscope, sizeof(tscope), "thread %d/%d", tp, in);
		do_status(tscope, path);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		do_stat(tscope, path, 1);
		do_numa(pid, tid, tp, tscope);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		t = readfile(path, NULL);
		if (t)
			add(tscope, "comm", "%s", t);
		free(t);
		/* per thread (its own io_context); restored by attrs.c */
		errno = 0;
		long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, tid);
		if (io < 0)
			add(tscope, "ioprio", "%s", errname(errno));
		else
			add(tscope, "ioprio", "class %ld level %ld", io >> 13, io & 0x1fff);
	}
	if (n >= 0)
		free(ents);
	add(scope, "threads", "%s", list);

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		add(scope, "pidfd_open", "%s", errname(errno));
	do_fds(pid, tp, pidfd);
	if (pidfd >= 0)
		close(pidfd);
}

static void snapshot(void)
{
	char path[64];

	for (int i = 0; i < npids; i++) {
		snprintf(path, sizeof(path), "/proc/%d", given[i]);
		if (given[i] > 0 && !access(path, F_OK))
			snapshot_task(i);
	}
}

/* ---- files and comparison ---- */

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->key, ((const struct line *)b)->key);
}

static int write_snap(FILE *f)
{
	fprintf(f, "#pids");
	for (int i = 0; i < npids; i++)
		fprintf(f, " %d", treepid[i]);
	fprintf(f, "\n");
	for (int i = 0; i < cur.n; i++)
		fprintf(f, "%s\t%s\n", cur.l[i].key, cur.l[i].val);
	return ferror(f) ? -1 : 0;
}

static int read_snap(const char *path, struct snap *s, pid_t **pids, int *np)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *tab;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return -1;
	*np = 0;
	*pids = NULL;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (!strncmp(line, "#pids", 5)) {
			char *p = line + 5, *end;

			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				*pids = realloc(*pids, (*np + 1) * sizeof(pid_t));
				(*pids)[(*np)++] = v;
				p = end;
			}
			continue;
		}
		tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		if (s->n == s->cap) {
			s->cap = s->cap * 2 + 256;
			s->l = realloc(s->l, s->cap * sizeof(*s->l));
		}
		s->l[s->n].key = strdup(line);
		s->l[s->n++].val = strdup(tab + 1);
	}
	free(line);
	fclose(f);
	return 0;
}

static char **pats;
static int npats;

static void read_expected(void)
{
	const char *path = getenv("IMGCR_STATE_EXPECTED");
	char *line = NULL, *c;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (!path || !*path)
		path = "/imgcr/state-expected.txt";
	f = fopen(path, "re");
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#')
			continue;
		c = strstr(line, " # ");
		if (c)
			*c = 0;
		for (n = strlen(line); n > 0 && isspace((unsigned char)line[n - 1]); n--)
			line[n - 1] = 0;
		if (!*line)
			continue;
		pats = realloc(pats, (npats + 1) * sizeof(*pats));
		pats[npats++] = strdup(line);
	}
	free(line);
	fclose(f);
}

static FILE *logf;

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...)
{
	va_list ap;

	if (!logf)
		return;
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fflush(logf);
}

/* "task 12 NAME" -> "pid 12: NAME", "fd 12/5 NAME" -> "pid 12 fd 5: NAME" */
static void display(char *out, size_t size, const char *key)
{
	char kind[16], id[96], name[256] = "";
	char *slash;

	if (sscanf(key, "%15s %95s %255[^\n]", kind, id, name) < 2) {
		snprintf(out, size, "%s", key);
		return;
	}
	slash = strchr(id, '/');
	if (slash)
		*slash++ = 0;
	if (!strcmp(kind, "task") || !slash)
		snprintf(out, size, "pid %s: %s", id, name);
	else
		snprintf(out, size, "pid %s %s %s: %s", id, kind, slash, name);
}

/* the pid of a key's task ("task 12 ..." / "fd 12/5 ...") */
static long key_pid(const char *key)
{
	const char *s = strchr(key, ' ');

	return s ? atol(s + 1) : -1;
}

static const char *lookup(const struct snap *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->l[i].key, key))
			return s->l[i].val;
	return NULL;
}

/* a task alive at the dump that has exited since the restore */
static int became_zombie(const struct snap *before, pid_t tp)
{
	char key[64];
	const char *b, *a;

	snprintf(key, sizeof(key), "task %d zombie", tp);
	b = lookup(before, key);
	a = lookup(&cur, key);
	return b && a && !strcmp(b, "0") && !strcmp(a, "1");
}

/*
 * "task P fds" and "task P threads" are lists: one the program added to
 * since the restore (it accepted a connection, started a thread) is not
 * a difference; one that lost an item is (each fd's and thread's own keys
 * are only on the before side then, and not compared).
 */
static int added_only(const char *key, const char *b, const char *a)
{
	size_t n = strlen(key);
	char item[32];

	if (!(n > 4 && !strcmp(key + n - 4, " fds")) &&
	    !(n > 8 && !strcmp(key + n - 8, " threads")))
		return 0;
	while (*b) {
		size_t l = strcspn(b, ","), al;
		const char *p = a;
		int found = 0;

		snprintf(item, sizeof(item), "%.*s", (int)l, b);
		while (*p && !found) {
			al = strcspn(p, ",");
			found = al == strlen(item) && !strncmp(p, item, al);
			p += al + (p[al] == ',');
		}
		if (!found)
			return 0;
		b += l + (b[l] == ',');
	}
	return 1;
}

static int compare(const struct snap *before, const char *dir)
{
	int i = 0, j = 0, bad = 0, expected = 0, same = 0;
	char *gone = calloc(npids + 1, 1);

	for (int t = 0; t < npids; t++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", given[t]);
		if (given[t] <= 0 || access(path, F_OK) || became_zombie(before, treepid[t])) {
			gone[t] = 1;
			fprintf(stderr, "statesnap: info: task %d has exited since the restore: not compared\n", treepid[t]);
			logline("state info: %s: task %d has exited since the restore: not compared\n", dir, treepid[t]);
		}
	}
	while (i < before->n && j < cur.n) {
		int c = strcmp(before->l[i].key, cur.l[j].key);
		const struct line *b = &before->l[i], *a = &cur.l[j];

		if (c < 0) {
			i++;
			continue;
		}
		if (c > 0) {
			j++;
			continue;
		}
		i++, j++;
		if (!strcmp(b->val, a->val)) {
			same++;
			continue;
		}
		long p = key_pid(b->key);
		int skip = 0, grew = added_only(b->key, b->val, a->val);

		for (int t = 0; t < npids; t++)
			if (gone[t] && treepid[t] == p)
				skip = 1;
		if (skip)
			continue;
		char full[4096], disp[512];
		int exp = 0;

		snprintf(full, sizeof(full), "%s %s -> %s", b->key, b->val, a->val);
		for (int k = 0; k < npats && !exp; k++)
			exp = !fnmatch(pats[k], full, 0);
		exp |= grew;
		display(disp, sizeof(disp), b->key);
		if (exp) {
			expected++;
			logline("state expected: %s %s -> %s\n", disp, b->val, a->val);
		} else {
			bad++;
			fprintf(stderr, "state differs: %s %s -> %s\n", disp, b->val, a->val);
			logline("state differs: %s %s -> %s\n", disp, b->val, a->val);
		}
	}
	logline("state checked: %s: %d tasks, %d keys equal, %d expected differences, %d differences\n",
		dir, npids, same, expected, bad);
	free(gone);
	return bad ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: statesnap PID... | statesnap before DIR PID... | statesnap after DIR PID...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *dir = NULL, *lp = getenv("IMGCR_STATE_LOG");
	char path[PATH_MAX];
	int first = 1;

	if (argc < 2)
		return usage();
	if (argc >= 3 && !strcmp(argv[1], "skipped")) {
		/* imgcr restore could not freeze the restored tree (it ended) */
		if (lp && *lp && (logf = fopen(lp, "ae")))
			logline("state info: %s: the restored tree could not be frozen: not compared\n", argv[2]);
		return 0;
	}
	if (!strcmp(argv[1], "before") || !strcmp(argv[1], "after")) {
		if (argc < 4)
			return usage();
		mode = argv[1];
		dir = argv[2];
		first = 3;
	}
	npids = argc - first;
	given = calloc(npids, sizeof(*given));
	treepid = calloc(npids, sizeof(*treepid));
	for (int i = 0; i < npids; i++)
		given[i] = treepid[i] = atoi(argv[first + i]);
	if (lp && *lp)
		logf = fopen(lp, "ae");
	snprintf(path, sizeof(path), "%s/.state-before", dir ? dir : ".");

	if (!mode) {
		snapshot();
		qsort(cur.l, cur.n, sizeof(*cur.l), cmp_line);
		for (int i = 0; i < cur.n; i++)
			printf("%s %s\n", cur.l[i].key, cur.l[i].val);
		return 0;
	}
	if (!strcmp(mode, "before")) {
		FILE *f;

		snapshot();
		qsort(cur.l, cur.n, sizeof(*cur.l), cmp_line);
		f = fopen(path, "we");
		if (!f || write_snap(f) || fclose(f)) {
			fprintf(stderr, "statesnap: cannot write %s: %s\n", path, strerror(errno));
			return 1;
		}
		return 0;
	}

	struct snap before = { 0 };
	pid_t *bp;
	int nb;

	if (read_snap(path, &before, &bp, &nb)) {
		/* a dump without the hook, or by another version: nothing to compare */
		fprintf(stderr, "statesnap: info: no %s: not compared\n", path);
		logline("state info: no %s: not compared\n", path);
		return 0;
	}
	if (nb != npids) {
		fprintf(stderr, "state differs: the tree had %d tasks, %d were restored\n", nb, npids);
		logline("state differs: %s: the tree had %d tasks, %d were restored\n", dir, nb, npids);
		return 1;
	}
	for (int i = 0; i < npids; i++)
		treepid[i] = bp[i];
	read_expected();
	snapshot();
	qsort(cur.l, cur.n, sizeof(*cur.l), cmp_line);
	qsort(before.l, before.n, sizeof(*before.l), cmp_line);
	return compare(&before, dir);
}
