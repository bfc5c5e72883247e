/*
 * uswork [-0] DIR: the workload of t_ct_userns, run as pid 1 of a container
 * with its own user namespace (util-linux unshare --user --fork --pid
 * --mount ..., maps written by root).
 *
 * At start it records what it sees of its credentials: its uids and gids
 * (as the namespace sees them), its groups, /proc/self/uid_map and
 * gid_map, setgroups, its capability sets (CapInh, CapPrm, CapEff, CapBnd,
 * CapAmb of /proc/self/status), and creates DIR/before (its owner must be
 * its uid and gid).  It prints "start uid=U gid=G caps=CAPEFF" and then
 * "tick N" every 100 ms.  SIGUSR1: every one of them is read again and
 * compared, DIR/before must still be its own as it sees it, and a new file
 * DIR/after must be created with its uid and gid; then "ok ..." / "FAIL
 * ..." lines and "uswork PASS" or "uswork FAIL N"; exit 0 or 1.
 * SIGUSR2 (once its network namespace is set up): it records its network
 * as it sees it (netview: each link's flags and MTU, each address, the
 * IPv4 routes and IPv6 addresses with their flags from /proc/self/net) and
 * prints "net N lines"; SIGUSR1 then compares it too ("ok net").
 * -0: first become uid and gid 0 of the namespace (as a container's init
 * started by LXC does once root wrote the maps), and clear the ambient
 * capabilities unshare --keep-caps gave it for that.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000	/* linux/if.h; not in net/if.h */
#endif
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "common.h"

struct view {
	uid_t r, e, s;
	gid_t rg, eg, sg;
	int ng;
	gid_t groups[64];
	char uid_map[512], gid_map[512], setgroups[16], caps[5][40];
};

static const char *const cap_keys[5] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
static volatile sig_atomic_t stop, netnow;
static int nfail;
static char net_a[8192], net_b[8192];

static void on_usr1(int s)
{
	(void)s;
	stop = 1;
}

static void on_usr2(int s)
{
	(void)s;
	netnow = 1;
}

static void cat(char *out, size_t size, const char *fmt, ...)
{
	size_t l = strlen(out);
	va_list ap;

	if (l >= size - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(out + l, size - l, fmt, ap);
	va_end(ap);
}

/*
 * The network namespace as this task sees it: links (name, flags up,
 * running, lower up, loopback; MTU), addresses (getifaddrs), IPv4 routes
 * (/proc/self/net/route less its use counters), IPv6 addresses with their
 * flags (/proc/self/net/if_inet6: "tentative" is 40).  Sockets made here
 * are closed again (a socket in the tree is refused at dump).
 */
static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int netview(char *out, size_t size)
{
	static char v6[64][160];
	int nl = 0;
	struct ifaddrs *ifa, *i;
	char line[512], h[NI_MAXHOST], m[NI_MAXHOST];
	FILE *f;
	int sk, n = 0;

	out[0] = 0;
	if (getifaddrs(&ifa)) {
		snprintf(out, size, "getifaddrs: %s\n", strerror(errno));
		return 1;
	}
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (i = ifa; i; i = i->ifa_next) {
		int fam = i->ifa_addr ? i->ifa_addr->sa_family : -1;

		if (fam == AF_PACKET) {
			struct ifreq r = { 0 };

			snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", i->ifa_name);
			if (sk < 0 || ioctl(sk, SIOCGIFMTU, &r))
				r.ifr_mtu = -1;
			cat(out, size, "link %s flags %x mtu %d\n", i->ifa_name,
			    i->ifa_flags & (IFF_UP | IFF_RUNNING | IFF_LOWER_UP | IFF_LOOPBACK), r.ifr_mtu);
		} else if (fam == AF_INET || fam == AF_INET6) {
			socklen_t l = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);

			if (getnameinfo(i->ifa_addr, l, h, sizeof(h), NULL, 0, NI_NUMERICHOST))
				snprintf(h, sizeof(h), "?");
			if (!i->ifa_netmask || getnameinfo(i->ifa_netmask, l, m, sizeof(m), NULL, 0, NI_NUMERICHOST))
				snprintf(m, sizeof(m), "-");
			cat(out, size, "addr %s %s/%s\n", i->ifa_name, h, m);
		} else {
			continue;
		}
		n++;
	}
	freeifaddrs(ifa);
	if (sk >= 0)
		close(sk);
	f = fopen("/proc/self/net/route", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char ifn[32], dst[16], gw[16], fl[8], mask[16];
		unsigned int metric;

		/* Iface Destination Gateway Flags RefCnt Use Metric Mask ... */
		if (sscanf(line, "%31s %15s %15s %7s %*s %*s %u %15s", ifn, dst, gw, fl, &metric, mask) == 6) {
			cat(out, size, "route %s %s %s %s %u %s\n", ifn, dst, gw, fl, metric, mask);
			n++;
		}
	}
	if (f)
		fclose(f);
	/* in the kernel's hash order, which mixes in the namespace: sorted */
	f = fopen("/proc/self/net/if_inet6", "re");
	while (f && nl < 64 && fgets(v6[nl], sizeof(v6[nl]), f))
		nl++;
	if (f)
		fclose(f);
	qsort(v6, nl, sizeof(v6[0]), cmp_line);
	for (int k = 0; k < nl; k++) {
		cat(out, size, "inet6 %s", v6[k]);
		n++;
	}
	return n;
}

/* each line of @text on its own (say() writes at most 512 bytes at once) */
static void say_lines(const char *text)
{
	const char *p = text, *nl;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			say("%s\n", p);
			break;
		}
		say("%.*s\n", (int)(nl - p), p);
	}
}

static void read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

static void look(struct view *v)
{
	char st[4096], *p;
	int i;

	memset(v, 0, sizeof(*v));
	getresuid(&v->r, &v->e, &v->s);
	getresgid(&v->rg, &v->eg, &v->sg);
	v->ng = getgroups(64, v->groups);
	read_file("/proc/self/uid_map", v->uid_map, sizeof(v->uid_map));
	read_file("/proc/self/gid_map", v->gid_map, sizeof(v->gid_map));
	read_file("/proc/self/setgroups", v->setgroups, sizeof(v->setgroups));
	read_file("/proc/self/status", st, sizeof(st));
	for (i = 0; i < 5; i++) {
		p = strstr(st, cap_keys[i]);
		if (p)
			sscanf(p + strlen(cap_keys[i]), " %39s", v->caps[i]);
	}
}

static void bad(const char *what, const char *a, const char *b)
{
	nfail++;
	say("FAIL %s: was %s, now %s\n", what, a, b);
}

static void same_num(const char *what, unsigned long a, unsigned long b)
{
	char x[32], y[32];

	if (a == b) {
		say("ok %s %lu\n", what, a);
		return;
	}
	snprintf(x, sizeof(x), "%lu", a);
	snprintf(y, sizeof(y), "%lu", b);
	bad(what, x, y);
}

static void same_str(const char *what, const char *a, const char *b)
{
	if (strcmp(a, b))
		bad(what, a, b);
	else
		say("ok %s\n", what);
}

/* @path's owner must be our euid and egid (as the namespace sees them) */
static void owner_check(const char *path, int create)
{
	struct stat st;
	int fd;

	if (create) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			nfail++;
			say("FAIL create %s: %s\n", path, strerror(errno));
			return;
		}
		close(fd);
	}
	if (stat(path, &st)) {
		nfail++;
		say("FAIL stat %s: %s\n", path, strerror(errno));
		return;
	}
	if (st.st_uid != geteuid() || st.st_gid != getegid()) {
		nfail++;
		say("FAIL %s owned by %u:%u, we are %u:%u\n", path, (unsigned)st.st_uid,
		    (unsigned)st.st_gid, (unsigned)geteuid(), (unsigned)getegid());
	} else {
		say("ok %s owned by %u:%u\n", path, (unsigned)st.st_uid, (unsigned)st.st_gid);
	}
}

int main(int argc, char **argv)
{
	struct view a, b;
	char before[512], after[512];
	long n = 0;
	int i;

	if (argc > 2 && !strcmp(argv[1], "-0")) {
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0)) {
			say("FAIL uswork: cannot become root in the namespace: %s\n", strerror(errno));
			return 2;
		}
		/* unshare --keep-caps made them ambient: a container's init has none */
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
		argv++;
		argc--;
	}
	if (argc < 2) {
		say("usage: uswork [-0] DIR\n");
		return 2;
	}
	snprintf(before, sizeof(before), "%s/before", argv[1]);
	snprintf(after, sizeof(after), "%s/after", argv[1]);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	look(&a);
	owner_check(before, 1);
	say("start pid=%d uid=%u gid=%u caps=%s\n", (int)getpid(), (unsigned)a.e, (unsigned)a.eg,
	    a.caps[2]);
	while (!stop) {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
		if (netnow) {
			netnow = 0;
			say("net %d lines\n", netview(net_a, sizeof(net_a)));
		}
		if (!stop && ++n % 10 == 0)
			say("tick %ld\n", n / 10);
	}
	look(&b);
	same_num("pid", 1, (unsigned long)getpid());
	same_num("ruid", a.r, b.r);
	same_num("euid", a.e, b.e);
	same_num("suid", a.s, b.s);
	same_num("rgid", a.rg, b.rg);
	same_num("egid", a.eg, b.eg);
	same_num("sgid", a.sg, b.sg);
	same_num("ngroups", (unsigned long)a.ng, (unsigned long)b.ng);
	for (i = 0; i < a.ng && i < b.ng && i < 64; i++)
		same_num("group", a.groups[i], b.groups[i]);
	same_str("uid_map", a.uid_map, b.uid_map);
	same_str("gid_map", a.gid_map, b.gid_map);
	same_str("setgroups", a.setgroups, b.setgroups);
	for (i = 0; i < 5; i++)
		same_str(cap_keys[i], a.caps[i], b.caps[i]);
	if (net_a[0]) {
		netview(net_b, sizeof(net_b));
		if (strcmp(net_a, net_b)) {
			nfail++;
			say("FAIL net: was\n");
			say_lines(net_a);
			say("now\n");
			say_lines(net_b);
		} else {
			say("ok net\n");
		}
	}
	owner_check(before, 0);
	owner_check(after, 1);
	if (nfail) {
		say("uswork FAIL %d\n", nfail);
		return 1;
	}
	say("uswork PASS\n");
	return 0;
}
