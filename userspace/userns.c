// SPDX-License-Identifier: GPL-2.0
/*
 * The user namespace of a tree (ns.h kind "user"): a container made by
 * root with `unshare --user`, LXC's unprivileged containers started by
 * root.
 *
 * Dump: the root's user namespace, a child of imgcr's (nested ones are
 * refused) owned by root (another owner, as rootless podman's, is refused:
 * not supported yet), with its uid_map, gid_map, setgroups and owner
 * (`userns` record); every other namespace of the tree's own must be owned by it
 * (NS_GET_USERNS), as the restore makes them (cloned with CLONE_NEWUSER
 * at once: the new user namespace owns the others).
 *
 * Restore (root only): imgcr clones the ns-root into a new user namespace
 * (ns_clone_flags()), owned by root as the dumped one was, and writes the
 * maps exactly as
 * dumped (outside()); the ns-root keeps its ids with the capabilities of
 * the new namespace made ambient, and the tree's ids, seen from imgcr's
 * namespace in the tree file, are made the namespace's view of them for
 * everything the ns-root and the tasks do inside (inside()).
 * Each task's image is then executed with "--imgcr-userns=INODE": the
 * capabilities it held in the dumped namespace are given in the new one,
 * within what the caller holds there (binfmt_img, img_creds.c).
 *
 * Maps that move ids (LXC's 0 100000 65536): docs/containers.md "Maps that
 * move ids" (moves_check(); restore.c open_files and run_nsroot).
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sys/syscall.h>

#include "files.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "sockets.h"
#include "tree.h"
#include "userns.h"

#define USERNS_MAX_LINES	340	/* the kernel's limit (UID_GID_MAP_MAX_EXTENTS) */

struct id_ext {
	unsigned int in, out, count;
};

struct ns_userns {
	int n[2];				/* uid, gid */
	struct id_ext map[2][USERNS_MAX_LINES];
	int deny;				/* setgroups "deny" */
	unsigned int owner;			/* its owner's uid, in imgcr's namespace */
};

static const char *const map_names[2] = { "uid_map", "gid_map" };

static struct ns_userns *userns_data(struct tree *t)
{
	struct ns_tree *n = ns_tree_get(t);

	if (!n->data[NS_USER]) {
		n->data[NS_USER] = calloc(1, sizeof(struct ns_userns));
		if (!n->data[NS_USER]) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return n->data[NS_USER];
}

/* The lines of /proc/PID/uid_map (gid_map) into @u->map[@w]; 0 or -1. */
static int parse_map(const char *text, struct ns_userns *u, int w)
{
	const char *p = text;
	unsigned int a, b, c;
	int len;

	u->n[w] = 0;
	while (p && *p) {
		if (sscanf(p, " %u %u %u%n", &a, &b, &c, &len) != 3)
			break;
		if (u->n[w] >= USERNS_MAX_LINES)
			return -1;
		u->map[w][u->n[w]++] = (struct id_ext){ a, b, c };
		p = strchr(p + len, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* Whether the maps keep every id as it is (--map-root-user by root: "0 0 1"). */
static int maps_identity(const struct ns_userns *u)
{
	int w, i;

	for (w = 0; w < 2; w++)
		for (i = 0; i < u->n[w]; i++)
			if (u->map[w][i].in != u->map[w][i].out)
				return 0;
	return 1;
}

/*
 * Maps that move ids (an LXC-like "0 100000 65536"): the container's root
 * is not host root.  docs/containers.md "Maps that move ids": imgcr opens
 * and connects the tree's files as the tasks that hold them, which it can
 * only do outside the new namespace (host root is unmapped inside, it
 * could not come back).  Refused with them, for now: mnt (the tree's
 * files would be opened inside it) and cgroup (its owners as imgcr sees
 * them).  The ipc kind makes each object in a child with the creator's ids
 * (ipc.c, as_child()), its owners translated (userns_inner()); a network
 * namespace is made by the clone (owned by the new user namespace) and
 * filled by the ns-root, the files still opened outside; the sockets are
 * made by imgcr inside that network namespace once it is set up (setns,
 * restore.c sk_late_open) and passed to the ns-root; netlink and packet
 * sockets are refused (userns_files_check()).
 */
#define MOVES_REFUSED	(NS_BIT(NS_CGROUP) | NS_BIT(NS_MNT))

static const char *moves_why(int k)
{
	switch (k) {
	case NS_CGROUP:
		return "the cgroups' owners are not translated through the maps yet";
	default:
		return "its files and sockets would be opened inside the new namespace as host root, not as the tasks that hold them";
	}
}

/* 0, or -1 after naming @pid and the first kind refused with moving maps */
static int moves_check(const struct ns_userns *u, unsigned int own, pid_t pid)
{
	int k;

	if (maps_identity(u))
		return 0;
	for (k = 0; k < NS_N; k++)
		if (own & MOVES_REFUSED & NS_BIT(k)) {
			pr_err("pid %d: its user namespace maps ids to other host ids and its own %s namespace: not supported yet with such maps (%s)",
			       pid, ns_kinds[k]->name, moves_why(k));
			return -1;
		}
	return 0;
}

int userns_moves(const struct tree *t)
{
	const struct ns_userns *u = t->ns && (t->ns->own & NS_BIT(NS_USER)) ? t->ns->data[NS_USER] : NULL;

	return u && !maps_identity(u);
}

/* /proc/.../net...: a view of the opener's network namespace */
static int proc_net_path(const char *p)
{
	const char *n;

	if (strncmp(p, "/proc/", 6))
		return 0;
	for (n = p + 5; (n = strstr(n, "/net")); n += 4)
		if (n[4] == '/' || !n[4])
			return 1;
	return 0;
}

int userns_files_check(const struct tree *t)
{
	int i, net, init = t->root;

	if (!userns_moves(t) || (t->ns->own & NS_BIT(NS_MNT)))
		return 0;
	net = !!(t->ns->own & NS_BIT(NS_NET));
	/* the root's pid at the dump (the restore's tree has the pids inside: tree_use_vpids) */
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].pid == t->root && t->tasks[i].dump_pid)
			init = t->tasks[i].dump_pid;
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		const struct tree_sk *s = f->kind == TK_SK ? tree_sk_find(t, f->ino) : NULL;

		if (net && f->kind != TK_SK && f->path && proc_net_path(f->path)) {
			pr_err("pid %d: fd %d: %s: in its own network namespace, with a user namespace whose maps move ids: not supported yet (imgcr opens the tree's files outside the new namespaces, as the tasks that hold them: it would be opened in imgcr's network namespace)",
			       f->pid, f->fd, f->path);
			return -1;
		}
		/*
		 * The sockets are made by host root (restore.c open_files): a
		 * netlink socket keeps its opener's credentials, which the
		 * kernel checks for what is sent through it (netlink_ns_capable),
		 * a packet socket needs CAP_NET_RAW at its creation only but is
		 * not made as its task either
		 */
		/*
		 * imgcr makes the sockets outside the tree's PID namespace,
		 * whose pid 1 is the ns-root then: a connection the init made
		 * (its peer credentials' pid) would name imgcr (0 inside)
		 */
		if (s && net && (t->ns->own & NS_BIT(NS_PID)) && s->family == AF_UNIX &&
		    sk_peercred_pid(s) > 0 && sk_peercred_pid(s) == init) {
			pr_err("pid %d: fd %d: a unix socket whose peer credentials name the container's init (pid %d, 1 inside), in its own network namespace with a user namespace whose maps move ids: not supported yet (imgcr makes the sockets outside the container's PID namespace, whose pid 1 is its restorer then)",
			       f->pid, f->fd, init);
			return -1;
		}
		if (s && (s->family == AF_NETLINK || s->family == AF_PACKET)) {
			pr_err("pid %d: fd %d: a %s socket, with a user namespace whose maps move ids: not supported yet (imgcr makes the tree's sockets as host root: the kernel keeps the credentials of a socket's opener, host root's, not its task's)",
			       f->pid, f->fd, s->family == AF_NETLINK ? "netlink" : "packet");
			return -1;
		}
	}
	return 0;
}

/* The inode of the user namespace an ioctl @req (NS_GET_*) on @fd gives; 0 if none. */
static unsigned long long ns_ioctl_ino(int fd, unsigned long req)
{
	struct stat st;
	int r = ioctl(fd, req);

	if (r < 0)
		return 0;
	if (fstat(r, &st)) {
		close(r);
		return 0;
	}
	close(r);
	return st.st_ino;
}

static int userns_dump(struct ns_ctx *c)
{
	struct ns_userns *u = userns_data(c->t);
	unsigned long long ino = c->t->ns->ino[NS_USER], mine = ns_ino(0, "user"), x;
	char path[96], *text;
	uid_t owner;
	int fd, w, k;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", c->root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: cannot open %s", c->root, path);
		return -1;
	}
	x = ns_ioctl_ino(fd, NS_GET_PARENT);
	if (x != mine) {
		close(fd);
		pr_err("pid %d: its user namespace user:[%llu] is not a child of imgcr's (user:[%llu]) but nested deeper: nested user namespaces are not supported (run imgcr in the parent one)",
		       c->root, ino, mine);
		return -1;
	}
	if (ioctl(fd, NS_GET_OWNER_UID, &owner)) {
		pr_perror("pid %d: cannot read the owner of its user namespace user:[%llu]", c->root, ino);
		close(fd);
		return -1;
	}
	close(fd);
	u->owner = owner;
	if (owner != 0) {
		pr_err("pid %d: its user namespace user:[%llu] is owned by uid %u: not supported yet (the restore makes it owned by root; dump trees whose user namespace root made)",
		       c->root, ino, (unsigned int)owner);
		return -1;
	}
	for (w = 0; w < 2; w++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", c->root, map_names[w]);
		text = read_text(path, NULL);
		if (!text || parse_map(text, u, w)) {
			pr_err("pid %d: cannot read %s of its user namespace user:[%llu]", c->root, path, ino);
			free(text);
			return -1;
		}
		free(text);
	}
	if (!u->n[0] || !u->n[1]) {
		pr_err("pid %d: its user namespace user:[%llu] has no %s written: its ids are unmapped there, not supported",
		       c->root, ino, map_names[u->n[0] ? 1 : 0]);
		return -1;
	}
	if (moves_check(u, c->own, c->root))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/setgroups", c->root);
	text = read_text(path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", c->root, path);
		return -1;
	}
	u->deny = !strncmp(text, "deny", 4);
	free(text);
	/* the tree's other namespaces: the restore makes them owned by the new user namespace */
	for (k = 0; k < NS_N; k++) {
		if (k == NS_USER || !(c->own & NS_BIT(k)))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", c->root, ns_kinds[k]->name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		x = fd >= 0 ? ns_ioctl_ino(fd, NS_GET_USERNS) : 0;
		if (fd >= 0)
			close(fd);
		if (x != ino) {
			pr_err("pid %d: its %s namespace %s:[%llu] is owned by another user namespace (user:[%llu]) than its own (user:[%llu]): not supported (the restore makes it owned by the tree's)",
			       c->root, ns_kinds[k]->name, ns_kinds[k]->name, c->t->ns->ino[k], x, ino);
			return -1;
		}
	}
	return 0;
}

/* @id (imgcr's view, w 0: uid, 1: gid) as the namespace sees it; 65534 if unmapped. */
static unsigned int to_inner(const struct ns_userns *u, int w, unsigned int id)
{
	int i;

	for (i = 0; i < u->n[w]; i++) {
		const struct id_ext *e = &u->map[w][i];

		if (id >= e->out && id - e->out < e->count)
			return e->in + (id - e->out);
	}
	return 65534;
}

/* @id (imgcr's view) is mapped in the namespace */
static int maps_outer(const struct ns_userns *u, int w, unsigned int id)
{
	int i;

	for (i = 0; i < u->n[w]; i++)
		if (id >= u->map[w][i].out && id - u->map[w][i].out < u->map[w][i].count)
			return 1;
	return 0;
}

/*
 * The ids of each task (uids, gids, a set audit loginuid) and the owners of
 * its pipes and sockets must be mapped in the tree's user namespace: an
 * unmapped one (a task that entered with `nsenter --preserve-credentials`
 * keeps host root) could only come back as 65534, another user.  0, or -1
 * after naming the pid (review s12 L1, L2).
 */
static int ids_check(const struct tree *t, const struct ns_userns *u)
{
	int i, j;

	for (i = 0; i < t->ntasks; i++) {
		const struct tree_task *k = &t->tasks[i];

		for (j = 0; j < 4; j++)
			if (!maps_outer(u, 0, k->uid[j]) || !maps_outer(u, 1, k->gid[j])) {
				pr_err("pid %d (%s): its uid %u or gid %u is not mapped in its user namespace: it cannot be given there (it would come back as 65534)",
				       k->pid, k->comm, k->uid[j], k->gid[j]);
				return -1;
			}
		if ((k->attr_set & ATTR_LOGINUID) && k->loginuid != 0xffffffffu &&
		    !maps_outer(u, 0, k->loginuid)) {
			pr_err("pid %d (%s): its audit loginuid %u is not mapped in its user namespace: it cannot be written there",
			       k->pid, k->comm, k->loginuid);
			return -1;
		}
	}
	for (i = 0; i < t->nfiles; i++) {
		const struct tree_file *f = &t->files[i];
		pid_t pid = t->root;
		int fd = -1, m;

		if (!f->has_owner || (maps_outer(u, 0, f->owner_uid) && maps_outer(u, 1, f->owner_gid)))
			continue;
		for (j = 0; j < t->ntasks && fd < 0; j++)
			for (m = 0; m < t->tasks[j].nfds; m++)
				if (t->tasks[j].fds[m].file == i) {
					pid = t->tasks[j].pid;
					fd = t->tasks[j].fds[m].fd;
					break;
				}
		pr_err("pid %d: its fd %d (%s) is owned by uid %u gid %u, not mapped in its user namespace: it would come back owned by 65534",
		       pid, fd, tree_kind_names[f->kind], f->owner_uid, f->owner_gid);
		return -1;
	}
	return 0;
}

/* dump: the tree's ids are all mapped in its user namespace (ids_check) */
int userns_dump_check(const struct tree *t)
{
	const struct ns_userns *u = t->ns && (t->ns->own & NS_BIT(NS_USER)) ? t->ns->data[NS_USER] : NULL;

	return u ? ids_check(t, u) : 0;
}

int userns_inner(const struct tree *t, int w, unsigned int id, unsigned int *inner)
{
	const struct ns_userns *u = t->ns && (t->ns->own & NS_BIT(NS_USER)) ? t->ns->data[NS_USER] : NULL;

	if (!u) {
		*inner = id;
		return 0;
	}
	*inner = to_inner(u, w, id);
	return maps_outer(u, w, id) ? 0 : -1;
}

int userns_restore_check(const struct tree *t)
{
	const struct ns_userns *u = t->ns ? t->ns->data[NS_USER] : NULL;
	int i;

	if (!(t->ns && (t->ns->own & NS_BIT(NS_USER))))
		return 0;
	if (!u) {
		pr_err("the tree has its own user namespace, but no userns record");
		return -1;
	}
	if (geteuid() != 0) {
		pr_err("the tree has its own user namespace: only root restores it");
		return -1;
	}
	if (!u->n[0] || !u->n[1]) {
		pr_err("the tree's user namespace has no uid_map or no gid_map");
		return -1;
	}
	if (u->owner != 0) {
		pr_err("the tree's user namespace was owned by uid %u: not supported yet", u->owner);
		return -1;
	}
	if (moves_check(u, t->ns->own, t->root))
		return -1;
	/* an id the namespace does not map would come back as 65534, another user */
	if (ids_check(t, u))
		return -1;
	/*
	 * A task whose loginuid was unset keeps the ns-root's, imgcr's: one
	 * the namespace does not map reads as unset inside, and would stay.
	 */
	{
		char *text = read_text("/proc/self/loginuid", NULL);
		unsigned int mine = text ? (unsigned int)strtoul(text, NULL, 10) : 0xffffffffu;

		free(text);
		for (i = 0; i < t->ntasks && mine != 0xffffffffu && !maps_outer(u, 0, mine); i++)
			if ((t->tasks[i].attr_set & ATTR_LOGINUID) && t->tasks[i].loginuid == 0xffffffffu) {
				pr_err("pid %d: its audit loginuid is unset, and imgcr's (%u) is not mapped in its user namespace: it would keep imgcr's (restore from a process whose loginuid is unset)",
				       t->tasks[i].pid, mine);
				return -1;
			}
	}
	/*
	 * A group the namespace does not map cannot be given inside (setgroups
	 * takes the namespace's view): only imgcr's own groups, which the
	 * ns-root has, are kept as they are.
	 */
	{
		gid_t mine[1024];
		int n = getgroups(1024, mine), i, j, m;

		for (i = 0; i < t->ntasks; i++) {
			const struct tree_task *k = &t->tasks[i];
			int unmapped = 0, same = n == k->ngroups;

			for (j = 0; j < k->ngroups; j++) {
				unmapped |= !maps_outer(u, 1, k->groups[j]);
				for (m = 0; m < n && mine[m] != k->groups[j]; m++)
					;
				same &= m < n;
			}
			if (unmapped && !same) {
				pr_err("pid %d: a supplementary group of it is not mapped in its user namespace and it is not imgcr's: it cannot be given there",
				       k->pid);
				return -1;
			}
		}
	}
	return 0;
}

static int write_map(pid_t pid, const char *name, const char *text)
{
	char path[96];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open %s", path);
		return -1;
	}
	r = write_all(fd, text, strlen(text));
	if (r)
		pr_perror("cannot write %s (%s)", path, text);
	close(fd);
	return r;
}

/* imgcr, the ns-root made: the maps exactly as dumped (and setgroups before gid_map). */
static int userns_outside(struct ns_ctx *c)
{
	const struct ns_userns *u = c->t->ns->data[NS_USER];
	char buf[USERNS_MAX_LINES * 36 + 1];
	int w, i, n;

	for (w = 0; w < 2; w++) {
		if (w == 1 && u->deny && write_map(c->root, "setgroups", "deny"))
			return -1;
		for (i = 0, n = 0; i < u->n[w]; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%u %u %u\n", u->map[w][i].in,
				      u->map[w][i].out, u->map[w][i].count);
		if (write_map(c->root, map_names[w], buf))
			return -1;
	}
	return 0;
}

/*
 * The ns-root, first of the kinds.  It keeps imgcr's ids (root outside,
 * which may be unmapped inside: the images in DIR, root's, stay its own
 * files to open and execute), and makes every capability it holds in the
 * new namespace ambient, so that the exec of each image keeps them (a
 * caller that is not the namespace's root gets only its ambient ones):
 * the image's exact credentials are then given within them.  The tree's
 * ids (imgcr's view) become the namespace's view of them in its copy of
 * the tree, which it and the tasks use from here on.
 */
static int userns_inside(struct ns_ctx *c)
{
	const struct ns_userns *u = c->t->ns->data[NS_USER];
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct tree *t = c->t;
	int i, j, last = 40;
	char *text = read_text("/proc/sys/kernel/cap_last_cap", NULL);

	if (text)
		last = atoi(text);
	free(text);
	if (syscall(SYS_capget, &h, d)) {
		pr_perror("capget");
		return -1;
	}
	d[0].inheritable = d[0].permitted;
	d[1].inheritable = d[1].permitted;
	if (syscall(SYS_capset, &h, d)) {
		pr_perror("cannot make the capabilities of the new user namespace inheritable");
		return -1;
	}
	for (i = 0; i <= last && i < 64; i++)
		if ((d[i / 32].permitted >> (i % 32) & 1) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0)) {
			pr_perror("cannot make capability %d of the new user namespace ambient", i);
			return -1;
		}
	for (i = 0; i < t->ntasks; i++) {
		struct tree_task *k = &t->tasks[i];

		for (j = 0; j < 4; j++) {
			k->uid[j] = to_inner(u, 0, k->uid[j]);
			k->gid[j] = to_inner(u, 1, k->gid[j]);
		}
		for (j = 0; j < k->ngroups; j++)
			k->groups[j] = to_inner(u, 1, k->groups[j]);
		/* set_loginuid compares and writes it in the namespace's view */
		if (k->loginuid != 0xffffffffu)
			k->loginuid = to_inner(u, 0, k->loginuid);
	}
	for (i = 0; i < t->nfiles; i++) {
		struct tree_file *f = &t->files[i];

		if (f->has_owner) {
			f->owner_uid = to_inner(u, 0, f->owner_uid);
			f->owner_gid = to_inner(u, 1, f->owner_gid);
		}
	}
	return 0;
}

static void userns_free(struct tree *t)
{
	free(t->ns->data[NS_USER]);
	t->ns->data[NS_USER] = NULL;
}

const struct ns_ops ns_user_ops = { .name = "user", .clone_flag = CLONE_NEWUSER,
				    .dump = userns_dump, .outside = userns_outside,
				    .inside = userns_inside, .free = userns_free };

/* ---- the record: userns owner=U setgroups=allow|deny uid_map=IN:OUT:N,... gid_map=... ---- */

static void map_write(FILE *f, const struct ns_userns *u, int w)
{
	int i;

	fprintf(f, " %s=", map_names[w]);
	for (i = 0; i < u->n[w]; i++)
		fprintf(f, "%s%u:%u:%u", i ? "," : "", u->map[w][i].in, u->map[w][i].out,
			u->map[w][i].count);
	if (!u->n[w])
		fputc('-', f);
}

static void userns_write(FILE *f, const struct tree *t)
{
	const struct ns_userns *u = t->ns ? t->ns->data[NS_USER] : NULL;

	if (!u)
		return;
	fprintf(f, "userns owner=%u setgroups=%s", u->owner, u->deny ? "deny" : "allow");
	map_write(f, u, 0);
	map_write(f, u, 1);
	fputc('\n', f);
}

static int map_read(struct rec *r, struct ns_userns *u, int w)
{
	const char *v = rec_val(r, map_names[w]);
	unsigned int a, b, c;
	int len;

	if (!v)
		return -1;
	u->n[w] = 0;
	if (!strcmp(v, "-"))
		return 0;
	for (;;) {
		if (sscanf(v, "%u:%u:%u%n", &a, &b, &c, &len) != 3 || !c ||
		    u->n[w] >= USERNS_MAX_LINES)
			return -1;
		u->map[w][u->n[w]++] = (struct id_ext){ a, b, c };
		v += len;
		if (!*v)
			return 0;
		if (*v++ != ',')
			return -1;
	}
}

static const char *userns_read(struct tree *t, struct rec *r)
{
	struct ns_userns *u;
	const char *sg;

	if (t->ns && t->ns->data[NS_USER])
		return "userns record listed twice";
	u = userns_data(t);
	sg = rec_val(r, "setgroups");
	if (!sg || (strcmp(sg, "allow") && strcmp(sg, "deny")))
		return "bad userns record";
	u->deny = !strcmp(sg, "deny");
	if (REC_NUM(r, "owner", 0, 4294967295LL, u->owner) || map_read(r, u, 0) ||
	    map_read(r, u, 1))
		return "bad userns record";
	return NULL;
}

const struct tree_record userns_records[] = {
	{ "userns", userns_read, userns_write, NULL },
	{ NULL, NULL, NULL, NULL }
};

/* ---- imgcr show and the unit tests' model ---- */

static void map_text(const struct ns_userns *u, int w)
{
	int i;

	for (i = 0; i < u->n[w]; i++)
		printf("%s%u %u %u", i ? ", " : "", u->map[w][i].in, u->map[w][i].out,
		       u->map[w][i].count);
}

void userns_show_text(const struct tree *t)
{
	const struct ns_userns *u = t->ns ? t->ns->data[NS_USER] : NULL;
	int w;

	if (!u)
		return;
	printf("  user: owner uid %u, setgroups %s\n", u->owner, u->deny ? "deny" : "allow");
	for (w = 0; w < 2; w++) {
		printf("  user: %s ", map_names[w]);
		map_text(u, w);
		putchar('\n');
	}
}

void userns_show_json(const struct tree *t)
{
	const struct ns_userns *u = t->ns ? t->ns->data[NS_USER] : NULL;
	int w, i;

	if (!u)
		return;
	printf(",\"userns\":{\"owner\":%u,\"setgroups\":\"%s\"", u->owner, u->deny ? "deny" : "allow");
	for (w = 0; w < 2; w++) {
		printf(",\"%s\":[", map_names[w]);
		for (i = 0; i < u->n[w]; i++)
			printf("%s{\"inside\":%u,\"outside\":%u,\"count\":%u}", i ? "," : "",
			       u->map[w][i].in, u->map[w][i].out, u->map[w][i].count);
		printf("]");
	}
	printf("}");
}

void userns_model(const struct tree *t)
{
	const struct ns_userns *u = t->ns ? t->ns->data[NS_USER] : NULL;
	int w, i;

	if (!u)
		return;
	printf("userns owner=%u deny=%d", u->owner, u->deny);
	for (w = 0; w < 2; w++) {
		printf(" %s=", map_names[w]);
		for (i = 0; i < u->n[w]; i++)
			printf("%s%u:%u:%u", i ? "," : "", u->map[w][i].in, u->map[w][i].out,
			       u->map[w][i].count);
	}
	putchar('\n');
}

