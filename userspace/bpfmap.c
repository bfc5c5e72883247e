// SPDX-License-Identifier: GPL-2.0
/*
 * bpf maps held by fds ("anon_inode:bpf-map"): "file kind=bpfmap map=ID"
 * for each open file description, one "bpfmap" record per map (its map id
 * at the dump: the descriptions of one map, in one task or several, name
 * the same record) and its elements in DIR/bpfmap-ID.data (key, value,
 * key, value...; a per-CPU value is the value of every possible CPU, each
 * rounded up to 8 bytes, as the bpf() syscall reads it; a queue's or
 * stack's: its values, oldest push first; a bloom filter's: its members).
 *
 * Dump: /proc/PID/fdinfo (map_type, key_size, value_size, max_entries,
 * map_flags, map_extra, map_id, frozen), BPF_OBJ_GET_INFO_BY_FD on a copy
 * of the fd (pidfd_getfd: name, ifindex, btf_id), the elements by
 * BPF_MAP_GET_NEXT_KEY + BPF_MAP_LOOKUP_ELEM (an LRU map's syscall lookup
 * does not touch its LRU state; an LPM trie's keys are prefix length and
 * address, looked up exactly), a queue's or stack's by popping them all
 * and pushing them back at once (save_queue: the kernel has no other way).
 * Restore, in the restorer: BPF_MAP_CREATE with the same type, sizes,
 * flags and name, every element back (BPF_MAP_UPDATE_ELEM, a queue's or
 * stack's pushed in their order; then the elements counted again: an LRU
 * map that evicted some while being filled fails the restore),
 * BPF_MAP_FREEZE if it was frozen; each description of the map is then a
 * fd of that one new map: the first read-write one a dup of the creating
 * fd, the others BPF_MAP_GET_FD_BY_ID with its access mode (BPF_F_RDONLY,
 * BPF_F_WRONLY).
 * The map gets a new id (ids are never chosen).
 *
 * Supported: BPF_MAP_TYPE_ARRAY, HASH, LRU_HASH, PERCPU_ARRAY,
 * PERCPU_HASH, LRU_PERCPU_HASH (the per-CPU ones if the restoring machine
 * has as many possible CPUs), LPM_TRIE, QUEUE, STACK (a frozen one only
 * if empty: a frozen map cannot be popped, and a peek shows the head
 * alone), BLOOM_FILTER of values of at most 2 bytes (its members: every
 * value tested; with members only BPF_F_ZERO_SEED: save_bloom).  An LRU
 * map's elements are inserted in the order the dump read them (hash
 * order): its LRU order (which element is evicted first) is not readable
 * from userspace and not restored.
 * Refused, naming pid, fd, map id and type: every other type (maps of
 * maps, program arrays, perf event arrays, ring buffers, sockmaps,
 * devmaps... hold kernel objects; storages), other bloom filters, maps
 * with BTF (btf_id), offloaded maps (ifindex), BPF_F_NUMA_NODE, maps
 * created BPF_F_RDONLY or BPF_F_WRONLY (not readable or not fillable
 * through the syscall), an mmapable array
 * while a task of the tree maps a bpf map (the mapping is not restored),
 * a map that a bpf program uses (programs are not restored: a copy of the
 * map would not be theirs) or that a process outside the tree holds.
 * Both need root (CAP_SYS_ADMIN: listing programs, BPF_MAP_GET_FD_BY_ID;
 * CAP_BPF: BPF_MAP_CREATE); an ordinary user's dump is refused by the
 * program check.  A map pinned in a bpf filesystem cannot be seen: its
 * pin keeps the old map.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfmap.h"
#include "files.h"
#include "log.h"
#include "proc.h"
#include "record.h"

/* the map flags restored as they were (BPF_F_NO_PREALLOC, NO_COMMON_LRU, ZERO_SEED,
 * RDONLY_PROG, WRONLY_PROG, MMAPABLE, INNER_MAP) */
#define BPFMAP_FLAGS	(0x1u | 0x2u | 0x40u | 0x80u | 0x100u | 0x400u | 0x1000u)
#define BPFMAP_F_MMAPABLE	0x400u

static const char *const type_names[] = {
	"unspec", "hash", "array", "prog_array", "perf_event_array", "percpu_hash",
	"percpu_array", "stack_trace", "cgroup_array", "lru_hash", "lru_percpu_hash",
	"lpm_trie", "array_of_maps", "hash_of_maps", "devmap", "sockmap", "cpumap",
	"xskmap", "sockhash", "cgroup_storage", "reuseport_sockarray",
	"percpu_cgroup_storage", "queue", "stack", "sk_storage", "devmap_hash",
	"struct_ops", "ringbuf", "inode_storage", "task_storage", "bloom_filter",
	"user_ringbuf", "cgrp_storage", "arena",
};
#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static const char *type_name(unsigned int type)
{
	return type < NTYPES ? type_names[type] : "unknown";
}

/* why type @type is refused, or NULL if it is restored */
static const char *type_why(unsigned int type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_LPM_TRIE:
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
	case BPF_MAP_TYPE_BLOOM_FILTER:	/* but see save_bloom */
		return NULL;
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		return "a map of maps: its values are other maps (held by the map, not by the tree's fds; they read back as map ids) and its inner map template is not readable";
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_STACK_TRACE:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
	case BPF_MAP_TYPE_CPUMAP:
	case BPF_MAP_TYPE_XSKMAP:
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
	case BPF_MAP_TYPE_STRUCT_OPS:
		return "its values are kernel objects (programs, perf events, sockets, devices, CPUs, a ring buffer's records) that are not restored";
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
		return "a local storage of kernel objects";
	default:
		return "this type of map is not supported yet";
	}
}

/* a queue or a stack: no keys, elements in push order (read by popping them all) */
static int is_queue(unsigned int type)
{
	return type == BPF_MAP_TYPE_QUEUE || type == BPF_MAP_TYPE_STACK;
}

/* no keys: a queue, a stack, a bloom filter (elements: values, pushed back) */
static int is_keyless(unsigned int type)
{
	return is_queue(type) || type == BPF_MAP_TYPE_BLOOM_FILTER;
}

static int is_percpu(unsigned int type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* BPF_OBJ_GET_INFO_BY_FD of map fd @fd into @mi; -1 with errno */
static int map_info(int fd, struct bpf_map_info *mi)
{
	union bpf_attr a;

	memset(mi, 0, sizeof(*mi));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(*mi);
	a.info.info = (unsigned long)mi;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? -1 : 0;
}

/* the possible CPUs (/sys/devices/system/cpu/possible: "0-3,5"), as the kernel counts
 * a per-CPU value; -1 if unreadable */
static int possible_cpus(void)
{
	char *text = read_text("/sys/devices/system/cpu/possible", NULL), *s;
	int n = 0, a, b, k;

	if (!text)
		return -1;
	for (s = text; *s && *s != '\n';) {
		if (sscanf(s, "%d%n", &a, &k) != 1)
			break;
		s += k;
		b = a;
		if (*s == '-' && sscanf(s + 1, "%d%n", &b, &k) == 1)
			s += 1 + k;
		n += b - a + 1;
		if (*s == ',')
			s++;
	}
	free(text);
	return n > 0 ? n : -1;
}

static size_t value_bytes(const struct tree_bpfmap *m)
{
	return is_percpu(m->type) ? (size_t)((m->value_size + 7) & ~7u) * m->ncpus : m->value_size;
}

struct tree_bpfmap *tree_bpfmap_find(const struct tree *t, unsigned int id)
{
	int i;

	for (i = 0; i < t->nbpfmaps; i++)
		if (t->bpfmaps[i].id == id)
			return &t->bpfmaps[i];
	return NULL;
}

static struct tree_bpfmap *bpfmap_add(struct tree *t)
{
	struct tree_bpfmap *m;

	t->bpfmaps = tree_grow(t->bpfmaps, t->nbpfmaps, sizeof(*t->bpfmaps));
	m = &t->bpfmaps[t->nbpfmaps++];
	memset(m, 0, sizeof(*m));
	return m;
}

static int info_u(const char *info, const char *key, unsigned long long *v)
{
	const char *s = status_field(info, key);
	char *end;

	if (!s)
		return -1;
	*v = strtoull(s, &end, 0);
	return end == s ? -1 : 0;
}

struct outside {
	const struct tree *t;
	unsigned int only;	/* the map looked for (0: any map of the tree) */
	unsigned int id;	/* found: the map, held by pid fd */
	pid_t pid;
	int fd;
};

static int outside_holder(const struct tree *t, unsigned int only, struct outside *o);
static int prog_user(const struct tree *t, unsigned int only, unsigned int *map, unsigned int *prog,
		     struct bpf_prog_info *pi, const char **op);

/* BPF_MAP_UPDATE_ELEM with no key: a push onto queue, stack or bloom filter @fd */
static int push(int fd, const void *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.value = (unsigned long)val;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) ? -1 : 0;
}

/*
 * The elements of queue or stack @fd (read-write) into DIR/bpfmap-ID.data,
 * oldest push first; their number, -1 after printing why, -2 with the
 * refusal in @why.  The kernel has no way to read them but the head
 * (BPF_MAP_LOOKUP_ELEM is a peek, BPF_MAP_GET_NEXT_KEY is not supported):
 * every one is popped (BPF_MAP_LOOKUP_AND_DELETE_ELEM) and pushed back at
 * once in the same order, the map as it was before anything else runs:
 * its tasks are frozen, and first no bpf program may use it and no
 * process outside the tree hold it (else the dump is refused before it
 * is touched).  A frozen one cannot be popped: only an empty one is
 * restored.
 */
/* DIR/bpfmap-ID.data created for writing (its name in @path), or NULL after saying why */
static FILE *data_file(struct fd_dump *c, struct fd_parms *p, const struct tree_bpfmap *m,
		       char *path, size_t size)
{
	int out;
	FILE *f = NULL;

	snprintf(path, size, "%s/bpfmap-%u.data", c->dir, m->id);
	out = img_create(path, 0600);
	if (out >= 0)
		f = fdopen(out, "w");
	if (!f) {
		pr_perror("pid %d fd %d: cannot create %s", p->pid, p->fd, path);
		if (out >= 0)
			close(out);
	}
	return f;
}

static long long save_queue(struct fd_dump *c, struct fd_parms *p, int fd, const struct tree_bpfmap *m,
			    char *why, size_t size)
{
	unsigned char *vals = malloc((size_t)m->value_size * ((size_t)m->max_entries + 1));
	size_t vs = m->value_size;
	long long n = 0, i, back;
	struct bpf_prog_info pi;
	unsigned int map, prog;
	const char *op = "";
	struct outside o;
	char path[4096];
	union bpf_attr a;
	int r, stack = m->type == BPF_MAP_TYPE_STACK;
	FILE *f = NULL;

	if (!vals) {
		pr_perror("pid %d fd %d: bpf map id %u", p->pid, p->fd, m->id);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.value = (unsigned long)vals;
	if (!sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) && m->frozen) {
		snprintf(why, size, "frozen with elements in it: only its head can be read (BPF_MAP_LOOKUP_ELEM is a peek), and a frozen map cannot be popped: not supported");
		n = -2;
		goto out;
	}
	if (errno != ENOENT && m->frozen) {
		snprintf(why, size, "cannot read its head (BPF_MAP_LOOKUP_ELEM: %s)", strerror(errno));
		n = -2;
		goto out;
	}
	if (!m->frozen) {
		r = prog_user(c->t, m->id, &map, &prog, &pi, &op);
		if (r) {
			if (r > 0)
				snprintf(why, size, "used by bpf program id %u (type %u, name '%s'): programs are not restored, and a restored map would not be theirs: not supported",
					 prog, pi.type, pi.name);
			else
				snprintf(why, size, "cannot check whether a bpf program uses it (%s: %s)%s", op,
					 strerror(errno), errno == EPERM ?
					 ": listing the programs needs CAP_SYS_ADMIN: dump as root" : "");
			n = -2;
			goto out;
		}
		r = outside_holder(c->t, m->id, &o);
		if (r > 0)
			snprintf(why, size, "also held by pid %d fd %d, outside the tree: a restored map would be a copy, not theirs: not supported",
				 o.pid, o.fd);
		if (r) {
			n = r < 0 ? -1 : -2;
			goto out;
		}
	}
	/* pop them all, then push them back (a stack: the last popped first) */
	while (!m->frozen && n <= m->max_entries) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.value = (unsigned long)(vals + n * vs);
		if (sys_bpf(BPF_MAP_LOOKUP_AND_DELETE_ELEM, &a))
			break;
		n++;
	}
	r = errno;
	for (back = 0; back < n; back++)
		if (push(fd, vals + (stack ? n - 1 - back : back) * vs))
			break;
	if (back < n) {
		pr_perror("pid %d fd %d: bpf map id %u (type %s, name '%s'): %lld of its %lld elements could not be pushed back after reading them (BPF_MAP_UPDATE_ELEM): the map has lost them",
			  p->pid, p->fd, m->id, type_name(m->type), m->name, n - back, n);
		n = -1;
		goto out;
	}
	if (!m->frozen && r != ENOENT) {
		snprintf(why, size, "cannot read its elements (BPF_MAP_LOOKUP_AND_DELETE_ELEM: %s; the %lld read are back)",
			 strerror(r), n);
		n = -2;
		goto out;
	}
	f = data_file(c, p, m, path, sizeof(path));
	if (!f) {
		n = -1;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (fwrite(vals + (stack ? n - 1 - i : i) * vs, vs, 1, f) != 1)
			break;
	if (fclose(f) || i < n) {
		pr_perror("pid %d fd %d: cannot write %s", p->pid, p->fd, path);
		n = -1;
	}
out:
	free(vals);
	return n;
}

/* the largest bloom filter values whose members can be listed: 2 bytes, 65536 lookups */
#define BLOOM_MAX_VALUE	2

/*
 * The values of bloom filter @fd (value size at most BLOOM_MAX_VALUE) that
 * test positive, into @out if not NULL (room for all); their number, -1
 * with errno.
 */
static long long bloom_members(int fd, unsigned int vs, unsigned char *out)
{
	unsigned long v, end = 1ul << (8 * vs);
	unsigned char val[BLOOM_MAX_VALUE];
	union bpf_attr a;
	long long n = 0;

	for (v = 0; v < end; v++) {
		memcpy(val, &v, vs);	/* little-endian: every value once, whatever the order */
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.value = (unsigned long)val;
		if (!sys_bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
			if (out)
				memcpy(out + n * vs, val, vs);
			n++;
		} else if (errno != ENOENT) {
			return -1;
		}
	}
	return n;
}

/*
 * The members of bloom filter @fd into DIR/bpfmap-ID.data; their number,
 * -1 after printing why, -2 with the refusal in @why.  Its bit array is
 * not readable (a lookup tests one value; the values pushed are not kept),
 * but with values of at most 2 bytes every value can be tested: pushing
 * the members (the values that test positive) into a new filter of the
 * same size, number of hashes and hash seed sets exactly the bits set (a
 * member's bits are all set, and the values pushed are members), so every
 * value tests as before.  The seed is random and not readable unless
 * BPF_F_ZERO_SEED: then only an empty filter (no members) is restored.
 */
static long long save_bloom(struct fd_dump *c, struct fd_parms *p, int fd, const struct tree_bpfmap *m,
			    char *why, size_t size)
{
	unsigned char *vals;
	char path[4096];
	long long n;
	int out;
	FILE *f = NULL;

	if (m->value_size > BLOOM_MAX_VALUE) {
		snprintf(why, size, "a bloom filter of %u-byte values: its bit array cannot be read (BPF_MAP_LOOKUP_ELEM only tests one value, the values pushed are not kept), and its members can be listed by testing every value only up to %d-byte values: not supported",
			 m->value_size, BLOOM_MAX_VALUE);
		return -2;
	}
	vals = malloc((size_t)m->value_size << (8 * m->value_size));
	if (!vals) {
		pr_perror("pid %d fd %d: bpf map id %u", p->pid, p->fd, m->id);
		return -1;
	}
	n = bloom_members(fd, m->value_size, vals);
	if (n < 0) {
		snprintf(why, size, "cannot test its values (BPF_MAP_LOOKUP_ELEM: %s)", strerror(errno));
		n = -2;
	} else if (n && !(m->flags & BPF_F_ZERO_SEED)) {
		snprintf(why, size, "a bloom filter with a random hash seed (no BPF_F_ZERO_SEED) and members (%lld values test positive): the seed is not readable, and another one would set other bits: not supported",
			 n);
		n = -2;
	}
	if (n < 0)
		goto out;
	f = data_file(c, p, m, path, sizeof(path));
	if (!f) {
		n = -1;
		goto out;
	}
	out = n && fwrite(vals, (size_t)m->value_size * n, 1, f) != 1;
	if (fclose(f) || out) {
		pr_perror("pid %d fd %d: cannot write %s", p->pid, p->fd, path);
		n = -1;
	}
out:
	free(vals);
	return n;
}

/*
 * The elements of map @fd into DIR/bpfmap-ID.data; their number, or -1
 * after printing why (@p: the fd, for messages).
 */
static long long save_elements(struct fd_dump *c, struct fd_parms *p, int fd,
			       const struct tree_bpfmap *m, char *why, size_t size)
{
	size_t vb = value_bytes(m);
	char path[4096];
	unsigned char *key = malloc(m->key_size), *next = malloc(m->key_size), *val = malloc(vb);
	union bpf_attr a;
	long long n = 0;
	int first = 1;
	FILE *f = NULL;

	if (!key || !next || !val) {
		pr_err("out of memory");
		n = -1;
		goto out;
	}
	f = data_file(c, p, m, path, sizeof(path));
	if (!f) {
		n = -1;
		goto out;
	}
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = first ? 0 : (unsigned long)key;
		a.next_key = (unsigned long)next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a)) {
			if (errno == ENOENT)
				break;
			snprintf(why, size, "BPF_MAP_GET_NEXT_KEY: %s", strerror(errno));
			n = -2;
			goto out;
		}
		first = 0;
		memcpy(key, next, m->key_size);
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (unsigned long)key;
		a.value = (unsigned long)val;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
			if (errno == ENOENT)	/* deleted meanwhile (by a program: refused later) */
				continue;
			snprintf(why, size, "cannot read its elements (BPF_MAP_LOOKUP_ELEM: %s)%s",
				 strerror(errno), errno == EPERM || errno == EACCES ?
				 ": dump as root" : "");
			n = -2;
			goto out;
		}
		if (fwrite(key, m->key_size, 1, f) != 1 || fwrite(val, vb, 1, f) != 1) {
			pr_perror("pid %d fd %d: cannot write %s", p->pid, p->fd, path);
			n = -1;
			goto out;
		}
		n++;
	}
out:
	if (f && fclose(f) && n >= 0) {
		pr_perror("pid %d fd %d: cannot write %s", p->pid, p->fd, path);
		n = -1;
	}
	free(key);
	free(next);
	free(val);
	return n;
}

static int bpfmap_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	unsigned long long type, ks, vs, max, flags, extra = 0, id, frozen = 0;
	struct bpf_map_info mi;
	struct tree_bpfmap *m, n;
	union bpf_attr a;
	char *info, why[512] = "";
	int fd, rfd = -1, ret = FD_FAILED;
	long long count;

	if (strcmp(p->link, "anon_inode:bpf-map"))
		return FD_OTHER;
	info = fd_info(p);
	if (!info)
		return FD_FAILED;
	if (info_u(info, "map_type", &type) || info_u(info, "key_size", &ks) ||
	    info_u(info, "value_size", &vs) || info_u(info, "max_entries", &max) ||
	    info_u(info, "map_flags", &flags) || info_u(info, "map_id", &id)) {
		free(info);
		return fd_refuse(p, "bpf map: cannot read its type, sizes and id from fdinfo");
	}
	info_u(info, "map_extra", &extra);	/* 5.16 */
	info_u(info, "frozen", &frozen);	/* 5.2 */
	free(info);
	f->ino = id;
	m = tree_bpfmap_find(c->t, id);
	if (m)		/* another description of a map already saved */
		return FD_DESCRIBED;
	if (type_why(type))
		return fd_refuse(p, "bpf map id %llu (type %s): %s: not supported", id, type_name(type),
				 type_why(type));
	fd = fd_steal(p);
	if (fd < 0) {
		pr_perror("pid %d fd %d: bpf map id %llu: cannot take a copy of the fd (pidfd_getfd)",
			  p->pid, p->fd, id);
		return FD_FAILED;
	}
	if (map_info(fd, &mi)) {
		ret = fd_refuse(p, "bpf map id %llu (type %s): cannot read its info (BPF_OBJ_GET_INFO_BY_FD: %s)",
				id, type_name(type), strerror(errno));
		goto out;
	}
	ret = FD_REFUSED;
	if (mi.btf_id)
		snprintf(why, sizeof(why), "it has BTF (btf_id %u, key type %u, value type %u): its BTF object is not restored, and BTF-typed values may hold spin locks, timers or kernel pointers, which are not either: not supported",
			 mi.btf_id, mi.btf_key_type_id, mi.btf_value_type_id);
	else if (mi.ifindex)
		snprintf(why, sizeof(why), "it is offloaded to a device (ifindex %u): not supported",
			 mi.ifindex);
	else if (flags & (BPF_F_RDONLY | BPF_F_WRONLY))
		snprintf(why, sizeof(why), "it was created %s (map flags 0x%llx): its elements cannot be %s through the bpf() syscall: not supported",
			 flags & BPF_F_RDONLY ? "BPF_F_RDONLY" : "BPF_F_WRONLY", flags,
			 flags & BPF_F_RDONLY ? "written back" : "read");
	else if (flags & ~(unsigned long long)BPFMAP_FLAGS)
		snprintf(why, sizeof(why), "map flags 0x%llx%s: not supported", flags & ~(unsigned long long)BPFMAP_FLAGS,
			 flags & BPF_F_NUMA_NODE ? " (BPF_F_NUMA_NODE: its node is not known)" : "");
	if (why[0]) {
		ret = fd_refuse(p, "bpf map id %llu (type %s, name '%s'): %s", id, type_name(type), mi.name, why);
		goto out;
	}
	memset(&n, 0, sizeof(n));
	n.id = id;
	n.type = type;
	n.key_size = ks;
	n.value_size = vs;
	n.max_entries = max;
	n.flags = flags;
	n.extra = extra;
	memcpy(n.name, mi.name, sizeof(mi.name));
	n.frozen = !!frozen;
	n.ncpus = is_percpu(type) ? possible_cpus() : 0;
	if (is_percpu(type) && n.ncpus < 0) {
		pr_perror("pid %d fd %d: bpf map id %llu: cannot read /sys/devices/system/cpu/possible",
			  p->pid, p->fd, id);
		ret = FD_FAILED;
		goto out;
	}
	/*
	 * a write-only fd cannot read the elements, a queue's are popped and
	 * pushed back: another fd of the map (root)
	 */
	if ((p->flags & O_ACCMODE) == O_WRONLY || (is_queue(type) && (p->flags & O_ACCMODE) != O_RDWR)) {
		memset(&a, 0, sizeof(a));
		a.map_id = id;
		a.open_flags = is_queue(type) ? 0 : BPF_F_RDONLY;
		rfd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (rfd < 0) {
			ret = fd_refuse(p, "bpf map id %llu (type %s, name '%s'): a %s fd, and another fd to read its elements cannot be had (BPF_MAP_GET_FD_BY_ID: %s)%s",
					id, type_name(type), mi.name,
					(p->flags & O_ACCMODE) == O_WRONLY ? "write-only" : "read-only",
					strerror(errno), errno == EPERM ? ": dump as root" : "");
			goto out;
		}
	}
	if (is_queue(type))
		count = save_queue(c, p, rfd >= 0 ? rfd : fd, &n, why, sizeof(why));
	else if (type == BPF_MAP_TYPE_BLOOM_FILTER)
		count = save_bloom(c, p, rfd >= 0 ? rfd : fd, &n, why, sizeof(why));
	else
		count = save_elements(c, p, rfd >= 0 ? rfd : fd, &n, why, sizeof(why));
	if (count == -2) {
		ret = fd_refuse(p, "bpf map id %llu (type %s, name '%s'): %s", id, type_name(type), mi.name, why);
		goto out;
	}
	if (count < 0) {
		ret = FD_FAILED;
		goto out;
	}
	n.count = count;
	*bpfmap_add(c->t) = n;
	ret = FD_DESCRIBED;
out:
	if (rfd >= 0)
		close(rfd);
	close(fd);
	return ret;
}

/* ---- the whole tree: who else uses its maps ---- */

/* pid and fd of a file of map @m, for messages */
static const struct tree_file *map_file(const struct tree *t, const struct tree_bpfmap *m)
{
	int i;

	for (i = 0; i < t->nfiles; i++)
		if (t->files[i].kind == TK_BPFMAP && t->files[i].ino == m->id)
			return &t->files[i];
	return &t->files[0];
}

static int outside_fd(pid_t pid, int fd, void *arg)
{
	struct outside *o = arg;
	char path[96], link[64], *info;
	unsigned long long id;
	int found;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0)
		return 0;
	link[len] = 0;
	if (strcmp(link, "anon_inode:bpf-map"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	info = read_text(path, NULL);
	found = info && !info_u(info, "map_id", &id) &&
		(o->only ? id == o->only : tree_bpfmap_find(o->t, id) != NULL);
	free(info);
	if (!found)
		return 0;
	o->id = id;
	o->pid = pid;
	o->fd = fd;
	return 1;
}

static int outside_proc(pid_t pid, void *arg)
{
	struct outside *o = arg;

	if (tree_find(o->t, pid))
		return 0;
	return proc_each_fd(pid, outside_fd, arg);
}

/*
 * The first process outside tree @t that holds map @only (0: any map of
 * the tree) in *@o: 1 if one does, 0 if none, -1 if /proc cannot be read.
 */
static int outside_holder(const struct tree *t, unsigned int only, struct outside *o)
{
	memset(o, 0, sizeof(*o));
	o->t = t;
	o->only = only;
	if (proc_each_process(outside_proc, o) < 0)
		return -1;
	return o->pid != 0;
}

/*
 * A bpf program that uses map @only (0: any map of @t): 1 with the map's
 * id in *@map, the program's id in *@prog and its info in *@pi; 0 if
 * none; -1 with errno, *@op the failed command, if they cannot be listed.
 */
static int prog_user(const struct tree *t, unsigned int only, unsigned int *map, unsigned int *prog,
		     struct bpf_prog_info *pi, const char **op)
{
	union bpf_attr a;
	unsigned int id = 0, ids[256];
	unsigned int j;
	int fd;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a)) {
			if (errno == ENOENT)
				return 0;
			*op = "BPF_PROG_GET_NEXT_ID";
			return -1;
		}
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(pi, 0, sizeof(*pi));
		memset(&a, 0, sizeof(a));
		pi->nr_map_ids = sizeof(ids) / sizeof(ids[0]);
		pi->map_ids = (unsigned long)ids;
		a.info.bpf_fd = fd;
		a.info.info_len = sizeof(*pi);
		a.info.info = (unsigned long)pi;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) {
			*op = "BPF_OBJ_GET_INFO_BY_FD of a bpf program";
			close(fd);
			return -1;
		}
		close(fd);
		for (j = 0; j < pi->nr_map_ids && j < sizeof(ids) / sizeof(ids[0]); j++)
			if (only ? ids[j] == only : tree_bpfmap_find(t, ids[j]) != NULL) {
				*map = ids[j];
				*prog = id;
				return 1;
			}
	}
}

/* a bpf program that uses a map of the tree: -1 (printed), 0 if none */
static int programs_check(const struct tree *t)
{
	const struct tree_bpfmap *m;
	const struct tree_file *f;
	struct bpf_prog_info pi;
	unsigned int map, prog;
	const char *op = "";
	int r = prog_user(t, 0, &map, &prog, &pi, &op);

	if (!r)
		return 0;
	if (r < 0) {
		f = map_file(t, &t->bpfmaps[0]);
		pr_err("pid %d fd %d: bpf map id %u: cannot check whether a bpf program uses it (%s: %s)%s",
		       f->pid, f->fd, t->bpfmaps[0].id, op, strerror(errno),
		       errno == EPERM ? ": listing the programs needs CAP_SYS_ADMIN: dump as root" : "");
		return -1;
	}
	m = tree_bpfmap_find(t, map);
	f = map_file(t, m);
	pr_err("pid %d fd %d: bpf map id %u (type %s, name '%s') is used by bpf program id %u (type %u, name '%s'): programs are not restored, and a restored map would not be theirs: not supported",
	       f->pid, f->fd, m->id, type_name(m->type), m->name, prog, pi.type, pi.name);
	return -1;
}

/* a task of the tree that maps a bpf map while the tree has an mmapable one */
static int mmap_check(const struct tree *t)
{
	const struct tree_bpfmap *mm = NULL;
	int i;

	for (i = 0; i < t->nbpfmaps && !mm; i++)
		if (t->bpfmaps[i].flags & BPFMAP_F_MMAPABLE)
			mm = &t->bpfmaps[i];
	for (i = 0; mm && i < t->ntasks; i++) {
		const struct tree_file *f = map_file(t, mm);
		char path[64], *text, *l;

		if (t->tasks[i].zombie)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", t->tasks[i].pid);
		text = read_text(path, NULL);
		l = text ? strstr(text, "anon_inode:bpf-map") : NULL;
		if (l) {
			while (l > text && l[-1] != '\n')
				l--;
			pr_err("pid %d fd %d: bpf map id %u (type %s, name '%s', BPF_F_MMAPABLE): pid %d maps a bpf map (%.*s): the mapping is not restored: not supported",
			       f->pid, f->fd, mm->id, type_name(mm->type), mm->name, t->tasks[i].pid,
			       (int)strcspn(l, " "), l);
			free(text);
			return -1;
		}
		free(text);
	}
	return 0;
}

static int bpfmap_check(const struct tree *t)
{
	const struct tree_bpfmap *m;
	struct outside o;
	int r;

	if (!t->nbpfmaps)
		return 0;
	if (mmap_check(t) || programs_check(t))
		return -1;
	r = outside_holder(t, 0, &o);
	if (r > 0) {
		m = tree_bpfmap_find(t, o.id);
		pr_err("pid %d fd %d: bpf map id %u (type %s, name '%s') is also held by pid %d fd %d, outside the tree: a restored map would be a copy, not theirs: not supported",
		       map_file(t, m)->pid, map_file(t, m)->fd, m->id, type_name(m->type), m->name,
		       o.pid, o.fd);
	}
	return r ? -1 : 0;
}

/* ---- restore ---- */

/* per map of the tree: its new map (the creating fd, -1: not made yet) */
static struct made {
	int fd;
	unsigned int new_id;
	int dup_given;		/* the creating description given to a read-write file */
} *made;

static long long count_elements(int fd, unsigned int key_size)
{
	unsigned char *key = malloc(key_size), *next = malloc(key_size);
	union bpf_attr a;
	long long n = 0;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = n ? (unsigned long)key : 0;
		a.next_key = (unsigned long)next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a))
			break;
		memcpy(key, next, key_size);
		n++;
	}
	if (errno != ENOENT)
		n = -1;
	free(key);
	free(next);
	return n;
}

static int make_map(struct fd_restore *r, const struct tree_bpfmap *m, struct made *d, const char *what)
{
	size_t vb, len = 0, rec;
	union bpf_attr a;
	struct bpf_map_info mi;
	char name[64], *data = NULL;
	long long i, n;
	int fd;

	if (is_percpu(m->type) && possible_cpus() != m->ncpus) {
		pr_err("%s: bpf map id %u (type %s): its values are those of %d possible CPUs, this machine has %d: not restored",
		       what, m->id, type_name(m->type), m->ncpus, possible_cpus());
		return -1;
	}
	vb = value_bytes(m);
	rec = m->key_size + vb;
	snprintf(name, sizeof(name), "bpfmap-%u.data", m->id);
	data = read_text_dir(r->dirfd, name, &len);
	if (!data || len != rec * m->count) {
		pr_err("%s: bpf map id %u: %s/%s: %s (%zu bytes, want %lld elements of %zu)", what, m->id,
		       r->dir, name, data ? "wrong size" : strerror(errno), len, m->count, rec);
		free(data);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = m->type;
	a.key_size = m->key_size;
	a.value_size = m->value_size;
	a.max_entries = m->max_entries;
	a.map_flags = m->flags;
	a.map_extra = m->extra;
	memcpy(a.map_name, m->name, sizeof(a.map_name) - 1);
	fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		pr_perror("%s: bpf map id %u (type %s, name '%s'): BPF_MAP_CREATE%s", what, m->id,
			  type_name(m->type), m->name,
			  errno == EPERM ? " (making a bpf map needs CAP_BPF: restore as root)" : "");
		free(data);
		return -1;
	}
	for (i = 0; is_keyless(m->type) && i < m->count; i++)
		if (push(fd, data + i * rec)) {
			pr_perror("%s: bpf map id %u (type %s): element %lld of %lld: BPF_MAP_UPDATE_ELEM (push)",
				  what, m->id, type_name(m->type), i + 1, m->count);
			goto fail;
		}
	for (i = 0; !is_keyless(m->type) && i < m->count; i++) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (unsigned long)(data + i * rec);
		a.value = (unsigned long)(data + i * rec + m->key_size);
		a.flags = BPF_ANY;
		if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) {
			pr_perror("%s: bpf map id %u (type %s): element %lld of %lld: BPF_MAP_UPDATE_ELEM",
				  what, m->id, type_name(m->type), i + 1, m->count);
			goto fail;
		}
	}
	free(data);
	data = NULL;
	/* a queue's pushes failed if it was full (E2BIG); a bloom filter: its members again */
	if (m->type == BPF_MAP_TYPE_BLOOM_FILTER)
		n = m->value_size <= BLOOM_MAX_VALUE ? bloom_members(fd, m->value_size, NULL) : -1;
	else
		n = is_queue(m->type) ? m->count : count_elements(fd, m->key_size);
	if (n != m->count) {
		pr_err("%s: bpf map id %u (type %s, %u entries at most): %lld elements after filling it, %lld at the dump%s",
		       what, m->id, type_name(m->type), m->max_entries, n, m->count,
		       n >= 0 && n < m->count ? " (an LRU map evicted some while it was filled)" : "");
		goto fail;
	}
	if (m->frozen) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		if (sys_bpf(BPF_MAP_FREEZE, &a)) {
			pr_perror("%s: bpf map id %u: BPF_MAP_FREEZE", what, m->id);
			goto fail;
		}
	}
	if (map_info(fd, &mi)) {
		pr_perror("%s: bpf map id %u: BPF_OBJ_GET_INFO_BY_FD", what, m->id);
		goto fail;
	}
	d->fd = fd;
	d->new_id = mi.id;
	return 0;
fail:
	free(data);
	close(fd);
	return -1;
}

static int bpfmap_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree *t = r->t;
	const struct tree_file *f = &t->files[i];
	const struct tree_bpfmap *m = tree_bpfmap_find(t, f->ino);
	unsigned int acc = f->flags & O_ACCMODE;
	struct made *d;
	union bpf_attr a;
	int fd, k;

	if (!m) {
		pr_err("%s: no bpfmap record for map id %lu", what, f->ino);
		return -1;
	}
	if (!made) {
		made = calloc(t->nbpfmaps, sizeof(*made));
		if (!made)
			return -1;
		for (k = 0; k < t->nbpfmaps; k++)
			made[k].fd = -1;
	}
	d = &made[m - t->bpfmaps];
	if (d->fd < 0 && make_map(r, m, d, what))
		return -1;
	if (acc == O_RDWR && !d->dup_given) {
		fd = fcntl(d->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			pr_perror("%s: F_DUPFD", what);
			return -1;
		}
		d->dup_given = 1;
	} else {
		memset(&a, 0, sizeof(a));
		a.map_id = d->new_id;
		a.open_flags = acc == O_RDONLY ? BPF_F_RDONLY : acc == O_WRONLY ? BPF_F_WRONLY : 0;
		fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (fd < 0) {
			pr_perror("%s: bpf map id %u (now %u): another description of it (BPF_MAP_GET_FD_BY_ID, access mode %u)",
				  what, m->id, d->new_id, acc);
			return -1;
		}
	}
	if (fd_set_flags(fd, f->flags, what)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int bpfmap_after(struct fd_restore *r, int ok)
{
	int k;

	(void)ok;
	for (k = 0; made && k < r->t->nbpfmaps; k++)
		if (made[k].fd >= 0)
			close(made[k].fd);
	free(made);
	made = NULL;
	return 0;
}

/* ---- the tree file ---- */

static void bpfmap_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " map=%lu", x->ino);
}

static const char *bpfmap_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	unsigned long long id;

	if (rec_unum(r, "map", &id) || !tree_bpfmap_find(t, id))
		return "bad bpfmap file record (map=ID of a bpfmap record)";
	x->ino = id;
	return NULL;
}

/* "bpf map 12 hash 'name' key 4 value 8 max 100 flags 0x0 frozen: 100 elements" */
static void bpfmap_rec_show(const struct tree *t, int i, const char *mode, char *out, size_t size)
{
	const struct tree_bpfmap *m = tree_bpfmap_find(t, t->files[i].ino);

	if (!m) {
		snprintf(out, size, "bpf map ?");
		return;
	}
	snprintf(out, size, "bpf map %u %s '%s' (%s) key %u value %u max %u flags 0x%x%s: %lld elements",
		 m->id, type_name(m->type), m->name, mode, m->key_size, m->value_size, m->max_entries,
		 m->flags, m->frozen ? " frozen" : "", m->count);
}

static void bpfmap_rec_json(const struct tree *t, int i)
{
	const struct tree_bpfmap *m = tree_bpfmap_find(t, t->files[i].ino);

	if (!m)
		return;
	printf(",\"map\":%u,\"type\":\"%s\",\"name\":", m->id, type_name(m->type));
	json_str(m->name);
	printf(",\"key_size\":%u,\"value_size\":%u,\"max_entries\":%u,\"flags\":%u,\"frozen\":%s,\"elements\":%lld",
	       m->key_size, m->value_size, m->max_entries, m->flags, m->frozen ? "true" : "false",
	       m->count);
}

const struct fd_kind bpfmap_fd_kind = {
	.name = "bpf-map",
	.type = TK_BPFMAP,
	.dump = bpfmap_dump,
	.check = bpfmap_check,
	.open = bpfmap_open,
	.after = bpfmap_after,
	.rec_write = bpfmap_rec_write,
	.rec_read = bpfmap_rec_read,
	.rec_show = bpfmap_rec_show,
	.rec_json = bpfmap_rec_json,
};

static void bpfmap_records_write(FILE *f, const struct tree *t)
{
	char e[3 * 17 + 4];
	int i;

	for (i = 0; i < t->nbpfmaps; i++) {
		const struct tree_bpfmap *m = &t->bpfmaps[i];

		tree_escape(e, sizeof(e), m->name);
		fprintf(f, "bpfmap id=%u type=%u key=%u value=%u max=%u flags=0x%x name=%s frozen=%d count=%lld",
			m->id, m->type, m->key_size, m->value_size, m->max_entries, m->flags, e,
			m->frozen, m->count);
		if (m->extra)
			fprintf(f, " extra=0x%llx", m->extra);
		if (m->ncpus)
			fprintf(f, " ncpus=%d", m->ncpus);
		fputc('\n', f);
	}
}

static const char *bpfmap_record_read(struct tree *t, struct rec *r)
{
	struct tree_bpfmap m;
	char *name = NULL;

	memset(&m, 0, sizeof(m));
	if (REC_NUM(r, "id", 1, 0xffffffffLL, m.id) || REC_NUM(r, "type", 0, 0xffffffffLL, m.type) ||
	    REC_NUM(r, "key", 0, 0xffffffffLL, m.key_size) ||
	    REC_NUM(r, "value", 1, 0xffffffffLL, m.value_size) ||
	    REC_NUM(r, "max", 1, 0xffffffffLL, m.max_entries) ||
	    REC_NUM(r, "flags", 0, 0xffffffffLL, m.flags) || REC_NUM(r, "frozen", 0, 1, m.frozen) ||
	    REC_NUM(r, "count", 0, m.type == BPF_MAP_TYPE_BLOOM_FILTER ? 1 << (8 * BLOOM_MAX_VALUE) :
		    m.max_entries, m.count) || rec_str(r, "name", &name))
		return "bad bpfmap record";
	if ((rec_has(r, "extra") && rec_unum(r, "extra", &m.extra)) ||
	    (rec_has(r, "ncpus") && REC_NUM(r, "ncpus", 1, 1 << 16, m.ncpus))) {
		free(name);
		return "bad bpfmap record";
	}
	if (strlen(name) > 16 || type_why(m.type) || (is_percpu(m.type) != (m.ncpus != 0)) ||
	    (is_keyless(m.type) != (m.key_size == 0)) ||
	    (m.type == BPF_MAP_TYPE_BLOOM_FILTER && m.value_size > BLOOM_MAX_VALUE) ||
	    (m.flags & ~BPFMAP_FLAGS) || tree_bpfmap_find(t, m.id)) {
		free(name);
		return "bad bpfmap record (name, type, key size, flags, ncpus, or a second record of one map)";
	}
	strcpy(m.name, name);
	free(name);
	*bpfmap_add(t) = m;
	return NULL;
}

const struct tree_record bpfmap_records[] = {
	{ "bpfmap", bpfmap_record_read, bpfmap_records_write, NULL },
	{ NULL, NULL, NULL, NULL }
};
