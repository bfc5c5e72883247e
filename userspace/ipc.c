// SPDX-License-Identifier: GPL-2.0
/*
 * The ipc namespace kind (ns.h): SysV shared memory segments, semaphore
 * sets and message queues, the namespace's ipc sysctls, and its POSIX
 * message queues (empty ones).
 *
 * dump: one child in the tree's ipc namespace (ns_run_in) lists the
 * objects in /proc/sysvipc/{shm,sem,msg}, reads each with IPC_STAT, a
 * segment's contents through a read-only attach (DIR/ipc-shm-ID.img,
 * sparse: only the pages that hold data), a set's values with GETALL, a
 * queue's messages with msgrcv(MSG_COPY | IPC_NOWAIT) (they stay queued;
 * DIR/ipc-msg-ID.img), the sysctls kernel/{shm,msg,sem}* and
 * the fs/mqueue ones, and the POSIX queues on a detached mqueue mount (fsmount)
 * of the namespace.  The child hands its records to imgcr as tree-file
 * lines (a memfd), read back by the same readers as DIR/tree.
 *
 * Refused: a segment removed (IPC_RMID) but still attached, a POSIX queue
 * that holds messages (no way to read them without taking them) or has a
 * notification registered.
 *
 * restore (inside(), in the new ipc namespace): every record and image is
 * checked first; then each object is created with its id (the kernel's
 * kernel/{shm,sem,msg}_next_id sysctl, then IPC_CREAT | IPC_EXCL; the id
 * is checked), by a creator with the dumped cuid/cgid (seteuid), given its
 * owner and mode (IPC_SET), and filled (contents, SETALL, msgsnd in queue
 * order); the sysctls are written last (a lowered msgmax or msgmnb must not
 * refuse the dumped messages).  With a user namespace whose maps move ids
 * (docs/containers.md), the ids are translated to the namespace's view,
 * each object is made by a child with its creator's ids and each POSIX
 * queue by one with its owner's, the sysctls are written by one that took
 * uid 0 inside (as_child()); an id the maps lack is refused at dump.
 * Not restored (the kernel sets them): the
 * times (atime, dtime, ctime, otime, stime, rtime), cpid/lpid and the
 * semaphores' sempid.
 *
 * Tree records (imgcr-image(5)):
 *   ipcvar name=kernel/shmmax value=...
 *   shm id= key= size= mode= uid= gid= cuid= cgid= img=ipc-shm-ID.img
 *   sem id= key= nsems= mode= uid= gid= cuid= cgid= vals=V,V,...
 *   msq id= key= mode= uid= gid= cuid= cgid= qbytes= nmsgs= bytes= img=ipc-msg-ID.img
 *   mq name= mode= uid= gid= maxmsg= msgsize=
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"
#include "ns.h"
#include "proc.h"
#include "record.h"
#include "tree.h"
#include "userns.h"

#ifndef MSG_COPY
#define MSG_COPY	040000
#endif

#define IPC_PAGE	4096
#define IPC_DUMP_LIMIT	(256ULL << 20)	/* bytes of shm and message data saved, at most */

/* the sysctls of an ipc namespace ("kernel/..." and "fs/mqueue/...") */
static const char *const ipc_sysctls[] = {
	"kernel/shmmax", "kernel/shmall", "kernel/shmmni", "kernel/shm_rmid_forced",
	"kernel/msgmax", "kernel/msgmnb", "kernel/msgmni", "kernel/sem", "kernel/auto_msgmni",
	"fs/mqueue/queues_max", "fs/mqueue/msg_max", "fs/mqueue/msgsize_max",
	"fs/mqueue/msg_default", "fs/mqueue/msgsize_default",
	/* last: one-shot, "-1" unless set and not used yet */
	"kernel/shm_next_id", "kernel/sem_next_id", "kernel/msg_next_id",
	NULL
};

struct ipc_var {
	char *name, *value;
};

struct ipc_obj {		/* a segment, set or queue */
	int id, key;
	unsigned int mode, uid, gid, cuid, cgid;
	unsigned long long size;	/* shm: bytes */
	int nsems;			/* sem */
	unsigned short *vals;		/* sem: nsems values */
	unsigned long long qbytes, nmsgs, bytes;	/* msq */
};

struct ipc_mq {
	char *name;
	unsigned int mode, uid, gid;
	long maxmsg, msgsize;
};

struct ipc_data {
	int nvars, nshm, nsem, nmsq, nmq;
	struct ipc_var *vars;
	struct ipc_obj *shm, *sem, *msq;
	struct ipc_mq *mq;
};

static struct ipc_data *ipc_get(struct tree *t)
{
	struct ns_tree *n = ns_tree_get(t);

	if (!n->data[NS_IPC]) {
		n->data[NS_IPC] = calloc(1, sizeof(struct ipc_data));
		if (!n->data[NS_IPC]) {
			pr_err("out of memory");
			exit(1);
		}
	}
	return n->data[NS_IPC];
}

static const struct ipc_data *ipc_of(const struct tree *t)
{
	return t->ns ? t->ns->data[NS_IPC] : NULL;
}

static void ipc_free(struct tree *t)
{
	struct ipc_data *d = t->ns ? t->ns->data[NS_IPC] : NULL;
	int i;

	if (!d)
		return;
	for (i = 0; i < d->nvars; i++) {
		free(d->vars[i].name);
		free(d->vars[i].value);
	}
	for (i = 0; i < d->nsem; i++)
		free(d->sem[i].vals);
	for (i = 0; i < d->nmq; i++)
		free(d->mq[i].name);
	free(d->vars);
	free(d->shm);
	free(d->sem);
	free(d->msq);
	free(d->mq);
	free(d);
	t->ns->data[NS_IPC] = NULL;
}

/* ---- records ---- */

static void shm_img(char *out, size_t size, int id)
{
	snprintf(out, size, "ipc-shm-%d.img", id);
}

static void msg_img(char *out, size_t size, int id)
{
	snprintf(out, size, "ipc-msg-%d.img", id);
}

static void ipcvar_write(FILE *f, const struct tree *t)
{
	const struct ipc_data *d = ipc_of(t);
	char e[1024];
	int i;

	for (i = 0; d && i < d->nvars; i++) {
		tree_escape(e, sizeof(e), d->vars[i].value);
		fprintf(f, "ipcvar name=%s value=%s\n", d->vars[i].name, e);
	}
}

static const char *ipcvar_read(struct tree *t, struct rec *r)
{
	struct ipc_data *d = ipc_get(t);
	char *name, *value, *p;
	int i;

	if (rec_str(r, "name", &name))
		return "an ipcvar record without a name";
	for (i = 0; ipc_sysctls[i] && strcmp(ipc_sysctls[i], name); i++)
		;
	if (!ipc_sysctls[i]) {
		free(name);
		return "an ipcvar record names an unknown sysctl";
	}
	if (rec_str(r, "value", &value)) {
		free(name);
		return "an ipcvar record without a value";
	}
	/* every one of these is numbers separated by blanks */
	for (p = value; *p && (strchr("0123456789- \t", *p)); p++)
		;
	for (i = 0; i < d->nvars && strcmp(d->vars[i].name, name); i++)
		;
	if (*p || !*value || strlen(value) > 200 || i < d->nvars) {
		free(name);
		free(value);
		return "an ipcvar record with a malformed value, or given twice";
	}
	d->vars = tree_grow(d->vars, d->nvars, sizeof(*d->vars));
	d->vars[d->nvars].name = name;
	d->vars[d->nvars++].value = value;
	return NULL;
}

/* the fields every object has; 0 or -1 */
static int obj_read(struct rec *r, struct ipc_obj *o)
{
	return REC_NUM(r, "id", 0, INT32_MAX, o->id) || REC_NUM(r, "key", 0, UINT32_MAX, o->key) ||
	       REC_NUM(r, "uid", 0, 4294967294LL, o->uid) || REC_NUM(r, "gid", 0, 4294967294LL, o->gid) ||
	       REC_NUM(r, "cuid", 0, 4294967294LL, o->cuid) ||
	       REC_NUM(r, "cgid", 0, 4294967294LL, o->cgid) ? -1 : 0;
}

/* an object with @id or a nonzero @key already in @a */
static int obj_dup(const struct ipc_obj *a, int n, const struct ipc_obj *o)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i].id == o->id || (o->key && a[i].key == o->key))
			return 1;
	return 0;
}

static int img_check(struct rec *r, int id, void (*name)(char *, size_t, int))
{
	const char *v = rec_val(r, "img");
	char want[64];

	name(want, sizeof(want), id);
	return v && !strcmp(v, want) ? 0 : -1;
}

static void shm_write(FILE *f, const struct tree *t)
{
	const struct ipc_data *d = ipc_of(t);
	char img[64];
	int i;

	for (i = 0; d && i < d->nshm; i++) {
		const struct ipc_obj *o = &d->shm[i];

		shm_img(img, sizeof(img), o->id);
		fprintf(f, "shm id=%d key=0x%08x size=%llu mode=0%o uid=%u gid=%u cuid=%u cgid=%u img=%s\n",
			o->id, o->key, o->size, o->mode, o->uid, o->gid, o->cuid, o->cgid, img);
	}
}

static const char *shm_read(struct tree *t, struct rec *r)
{
	struct ipc_data *d = ipc_get(t);
	struct ipc_obj o = { 0 };

	if (obj_read(r, &o) || REC_NUM(r, "size", 1, 1LL << 46, o.size) ||
	    REC_NUM(r, "mode", 0, 0777 | SHM_LOCKED, o.mode))
		return "a shm record with a missing or malformed field";
	if (img_check(r, o.id, shm_img))
		return "a shm record whose img is not ipc-shm-ID.img";
	if (obj_dup(d->shm, d->nshm, &o))
		return "a shm record with the id or key of another";
	d->shm = tree_grow(d->shm, d->nshm, sizeof(*d->shm));
	d->shm[d->nshm++] = o;
	return NULL;
}

static void sem_write(FILE *f, const struct tree *t)
{
	const struct ipc_data *d = ipc_of(t);
	int i, j;

	for (i = 0; d && i < d->nsem; i++) {
		const struct ipc_obj *o = &d->sem[i];

		fprintf(f, "sem id=%d key=0x%08x nsems=%d mode=0%o uid=%u gid=%u cuid=%u cgid=%u vals=",
			o->id, o->key, o->nsems, o->mode, o->uid, o->gid, o->cuid, o->cgid);
		for (j = 0; j < o->nsems; j++)
			fprintf(f, "%s%u", j ? "," : "", o->vals[j]);
		fputc('\n', f);
	}
}

static const char *sem_read(struct tree *t, struct rec *r)
{
	struct ipc_data *d = ipc_get(t);
	struct ipc_obj o = { 0 };
	const char *v;
	char *end;
	long n;
	int j;

	if (obj_read(r, &o) || REC_NUM(r, "nsems", 1, 32000, o.nsems) ||
	    REC_NUM(r, "mode", 0, 0777, o.mode) || !(v = rec_val(r, "vals")))
		return "a sem record with a missing or malformed field";
	if (obj_dup(d->sem, d->nsem, &o))
		return "a sem record with the id or key of another";
	o.vals = calloc(o.nsems, sizeof(*o.vals));
	if (!o.vals) {
		pr_err("out of memory");
		exit(1);
	}
	for (j = 0; j < o.nsems; j++) {
		if (*v < '0' || *v > '9')
			break;
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || n > 32767 || (*end != ',' && *end) || (*end == ',') != (j < o.nsems - 1))
			break;
		o.vals[j] = n;
		v = end + (*end == ',');
	}
	if (j < o.nsems) {
		free(o.vals);
		return "a sem record whose vals are not nsems values 0-32767";
	}
	d->sem = tree_grow(d->sem, d->nsem, sizeof(*d->sem));
	d->sem[d->nsem++] = o;
	return NULL;
}

static void msq_write(FILE *f, const struct tree *t)
{
	const struct ipc_data *d = ipc_of(t);
	char img[64];
	int i;

	for (i = 0; d && i < d->nmsq; i++) {
		const struct ipc_obj *o = &d->msq[i];

		msg_img(img, sizeof(img), o->id);
		fprintf(f, "msq id=%d key=0x%08x mode=0%o uid=%u gid=%u cuid=%u cgid=%u qbytes=%llu nmsgs=%llu bytes=%llu img=%s\n",
			o->id, o->key, o->mode, o->uid, o->gid, o->cuid, o->cgid, o->qbytes,
			o->nmsgs, o->bytes, img);
	}
}

static const char *msq_read(struct tree *t, struct rec *r)
{
	struct ipc_data *d = ipc_get(t);
	struct ipc_obj o = { 0 };

	if (obj_read(r, &o) || REC_NUM(r, "mode", 0, 0777, o.mode) ||
	    REC_NUM(r, "qbytes", 0, INT32_MAX, o.qbytes) ||
	    REC_NUM(r, "nmsgs", 0, INT32_MAX, o.nmsgs) || REC_NUM(r, "bytes", 0, INT32_MAX, o.bytes))
		return "a msq record with a missing or malformed field";
	if (img_check(r, o.id, msg_img))
		return "a msq record whose img is not ipc-msg-ID.img";
	if (obj_dup(d->msq, d->nmsq, &o))
		return "a msq record with the id or key of another";
	d->msq = tree_grow(d->msq, d->nmsq, sizeof(*d->msq));
	d->msq[d->nmsq++] = o;
	return NULL;
}

static void mq_write(FILE *f, const struct tree *t)
{
	const struct ipc_data *d = ipc_of(t);
	char e[1024];
	int i;

	for (i = 0; d && i < d->nmq; i++) {
		const struct ipc_mq *q = &d->mq[i];

		tree_escape(e, sizeof(e), q->name);
		fprintf(f, "mq name=%s mode=0%o uid=%u gid=%u maxmsg=%ld msgsize=%ld\n", e, q->mode,
			q->uid, q->gid, q->maxmsg, q->msgsize);
	}
}

static const char *mq_read(struct tree *t, struct rec *r)
{
	struct ipc_data *d = ipc_get(t);
	struct ipc_mq q = { 0 };
	int i;

	if (REC_NUM(r, "mode", 0, 0777, q.mode) || REC_NUM(r, "uid", 0, 4294967294LL, q.uid) ||
	    REC_NUM(r, "gid", 0, 4294967294LL, q.gid) ||
	    REC_NUM(r, "maxmsg", 1, 65536, q.maxmsg) ||
	    REC_NUM(r, "msgsize", 1, 16 << 20, q.msgsize) || rec_str(r, "name", &q.name))
		return "a mq record with a missing or malformed field";
	for (i = 0; i < d->nmq && strcmp(d->mq[i].name, q.name); i++)
		;
	if (!*q.name || strchr(q.name, '/') || !strcmp(q.name, ".") || !strcmp(q.name, "..") ||
	    strlen(q.name) > 255 || i < d->nmq) {
		free(q.name);
		return "a mq record with a malformed name, or given twice";
	}
	d->mq = tree_grow(d->mq, d->nmq, sizeof(*d->mq));
	d->mq[d->nmq++] = q;
	return NULL;
}

const struct tree_record ipc_records[] = {
	{ "ipcvar", ipcvar_read, ipcvar_write, NULL },
	{ "shm", shm_read, shm_write, NULL },
	{ "sem", sem_read, sem_write, NULL },
	{ "msq", msq_read, msq_write, NULL },
	{ "mq", mq_read, mq_write, NULL },
	{ NULL, NULL, NULL, NULL }
};

/* Every ipc record of @t into @f (the dump child's answer, the _ipc command). */
static void ipc_write_all(FILE *f, const struct tree *t)
{
	const struct tree_record *rt;

	for (rt = ipc_records; rt->name; rt++)
		rt->write(f, t);
}

/* Split one "NAME key=value ..." line (modified) into @r: 0 or -1. */
static int ipc_split(char *line, struct rec *r)
{
	char *s, *eq, *save = NULL;

	r->name = strtok_r(line, " \n", &save);
	r->n = 0;
	for (s = strtok_r(NULL, " \n", &save); s; s = strtok_r(NULL, " \n", &save)) {
		eq = strchr(s, '=');
		if (!eq || eq == s || r->n >= REC_MAXF)
			return -1;
		*eq = 0;
		r->key[r->n] = s;
		r->val[r->n] = eq + 1;
		r->used[r->n++] = 0;
	}
	return r->name ? 0 : -1;
}

/* The ipc records in @f (what ipc_write_all wrote) into @t: 0 or -1 (printed). */
static int ipc_read_all(FILE *f, struct tree *t, const char *what)
{
	static struct rec r;
	const struct tree_record *rt;
	char *line = NULL;
	const char *why;
	size_t cap = 0;
	int n = 0, i, ret = 0;

	while (!ret && getline(&line, &cap, f) > 0) {
		n++;
		if (ipc_split(line, &r)) {
			pr_err("%s:%d: malformed record", what, n);
			ret = -1;
			break;
		}
		for (rt = ipc_records; rt->name && strcmp(rt->name, r.name); rt++)
			;
		why = rt->name ? rt->read(t, &r) : "not an ipc record";
		if (why) {
			pr_err("%s:%d: %s", what, n, why);
			ret = -1;
		}
		for (i = 0; !ret && i < r.n; i++)
			if (!r.used[i]) {
				pr_err("%s:%d: unknown field %s in a %s record", what, n, r.key[i], r.name);
				ret = -1;
			}
	}
	free(line);
	return ret;
}

/* ---- dump (in the tree's ipc namespace) ---- */

struct ipc_dump {
	struct ns_ctx *c;
	int outfd;		/* the records, as lines */
	struct tree t;		/* the child's records */
	unsigned long long bytes;	/* data saved so far (IPC_DUMP_LIMIT) */
};

/* @n more bytes of data to save: 0, or -1 (printed) past IPC_DUMP_LIMIT */
static int ipc_account(struct ipc_dump *x, unsigned long long n, const char *what, int id)
{
	x->bytes += n;
	if (x->bytes <= IPC_DUMP_LIMIT)
		return 0;
	pr_err("pid %d: ipc namespace: %s %d: the namespace holds more than %llu bytes of SysV shared memory and message data (the limit): not supported",
	       x->c->root, what, id, IPC_DUMP_LIMIT);
	return -1;
}

/* a /proc/sys file into @buf (without the newline): 0, 1 if absent, -1 */
static int sysctl_get(const char *name, char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	return 0;
}

static int sysctl_set(const char *name, const char *value)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = write_all(fd, value, strlen(value));
	if (close(fd))
		ret = -1;
	return ret;
}

static int dump_sysctls(struct ipc_dump *x)
{
	struct ipc_data *d = ipc_get(&x->t);
	char buf[256];
	int i, r;

	for (i = 0; ipc_sysctls[i]; i++) {
		r = sysctl_get(ipc_sysctls[i], buf, sizeof(buf));
		if (r > 0)
			continue;
		if (r < 0) {
			pr_perror("pid %d: ipc namespace: cannot read /proc/sys/%s", x->c->root,
				  ipc_sysctls[i]);
			return -1;
		}
		if (strstr(ipc_sysctls[i], "_next_id") && !strcmp(buf, "-1"))
			continue;	/* not set: the default */
		d->vars = tree_grow(d->vars, d->nvars, sizeof(*d->vars));
		d->vars[d->nvars].name = xstrdup(ipc_sysctls[i]);
		d->vars[d->nvars++].value = xstrdup(buf);
	}
	return 0;
}

/* The ids in /proc/sysvipc/@what (second column), malloc'ed; -1 on error. */
static int sysvipc_ids(pid_t root, const char *what, int **ids)
{
	char path[64], line[512];
	int n = 0, id, first = 1;
	FILE *f;

	*ids = NULL;
	snprintf(path, sizeof(path), "/proc/sysvipc/%s", what);
	f = fopen(path, "re");
	if (!f) {
		pr_perror("pid %d: ipc namespace: cannot open %s", root, path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (first) {		/* the header */
			first = 0;
			continue;
		}
		if (sscanf(line, "%*d %d", &id) != 1) {
			pr_err("pid %d: ipc namespace: cannot parse %s: %s", root, path, line);
			fclose(f);
			free(*ids);
			return -1;
		}
		*ids = tree_grow(*ids, n, sizeof(**ids));
		(*ids)[n++] = id;
	}
	fclose(f);
	return n;
}

static int is_zero(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* The mapping at @addr is of huge pages (its KernelPageSize in smaps). */
static int huge_pages(const void *addr)
{
	char line[256], start[32];
	unsigned long kb;
	int in = 0, ret = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return 0;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') && line[0] != ' ')
			in = !strncmp(line, start, strlen(start));
		else if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
			ret = kb != IPC_PAGE / 1024;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* The contents of segment @o (attached read-only) into DIR/ipc-shm-ID.img, sparse. */
static int dump_shm_contents(struct ipc_dump *x, const struct ipc_obj *o)
{
	char img[64], path[96];
	const char *mem;
	unsigned long long off, n;
	int fd, src = -1, ret = -1;
	off_t data, hole;

	mem = shmat(o->id, NULL, SHM_RDONLY);
	if (mem == (void *)-1) {
		pr_perror("pid %d: ipc namespace: shm segment %d: cannot attach it to read it",
			  x->c->root, o->id);
		return -1;
	}
	shm_img(img, sizeof(img), o->id);
	fd = -1;
	if (huge_pages(mem)) {
		pr_err("pid %d: ipc namespace: shm segment %d (key 0x%x) is of huge pages (SHM_HUGETLB): not supported",
		       x->c->root, o->id, o->key);
		goto out;
	}
	fd = img_create_at(x->c->dirfd, img, 0600);
	if (fd < 0) {
		pr_perror("cannot create %s", img);
		goto out;
	}
	/*
	 * Through the segment's file (map_files), holes are seen without
	 * reading them (reading the mapping would allocate them).
	 */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)mem,
		 (unsigned long)(mem + ((o->size + IPC_PAGE - 1) & ~(unsigned long long)(IPC_PAGE - 1))));
	src = open(path, O_RDONLY | O_CLOEXEC);
	for (off = 0; off < o->size;) {
		if (src >= 0) {
			data = lseek(src, off, SEEK_DATA);
			if (data < 0 || (unsigned long long)data >= o->size)
				break;
			hole = lseek(src, data, SEEK_HOLE);
			if (hole < 0 || (unsigned long long)hole > o->size)
				hole = o->size;
		} else {
			data = off;
			hole = o->size;
		}
		for (off = data; off < (unsigned long long)hole; off += n) {
			n = (unsigned long long)hole - off < IPC_PAGE ? (unsigned long long)hole - off : IPC_PAGE;
			if (is_zero(mem + off, n))
				continue;
			if (ipc_account(x, n, "shm segment", o->id))
				goto out;
			if (pwrite(fd, mem + off, n, off) != (ssize_t)n) {
				pr_perror("cannot write %s", img);
				goto out;
			}
		}
	}
	if (ftruncate(fd, o->size)) {
		pr_perror("cannot write %s", img);
		goto out;
	}
	ret = 0;
out:
	if (src >= 0)
		close(src);
	if (fd >= 0 && close(fd) && !ret) {
		pr_perror("cannot write %s", img);
		ret = -1;
	}
	shmdt(mem);
	return ret;
}

static int dump_shm(struct ipc_dump *x)
{
	struct ipc_data *d = ipc_get(&x->t);
	struct shmid_ds ds;
	int *ids, n, i;

	n = sysvipc_ids(x->c->root, "shm", &ids);
	for (i = 0; i < n; i++) {
		struct ipc_obj o = { .id = ids[i] };

		if (shmctl(o.id, IPC_STAT, &ds) < 0) {
			pr_perror("pid %d: ipc namespace: shm segment %d: IPC_STAT", x->c->root, o.id);
			break;
		}
		if (ds.shm_perm.mode & SHM_DEST) {
			pr_err("pid %d: ipc namespace: shm segment %d (key 0x%x) is removed but still attached (%lu attaches): not supported",
			       x->c->root, o.id, ds.shm_perm.__key, (unsigned long)ds.shm_nattch);
			break;
		}
		if (ds.shm_perm.mode & ~(0777 | SHM_LOCKED)) {
			pr_err("pid %d: ipc namespace: shm segment %d (key 0x%x): mode 0%o not supported",
			       x->c->root, o.id, ds.shm_perm.__key, ds.shm_perm.mode);
			break;
		}
		o.key = ds.shm_perm.__key;
		o.mode = ds.shm_perm.mode;
		o.uid = ds.shm_perm.uid;
		o.gid = ds.shm_perm.gid;
		o.cuid = ds.shm_perm.cuid;
		o.cgid = ds.shm_perm.cgid;
		o.size = ds.shm_segsz;
		if (dump_shm_contents(x, &o))
			break;
		d->shm = tree_grow(d->shm, d->nshm, sizeof(*d->shm));
		d->shm[d->nshm++] = o;
	}
	free(ids);
	return n >= 0 && i == n ? 0 : -1;
}

static int dump_sem(struct ipc_dump *x)
{
	struct ipc_data *d = ipc_get(&x->t);
	struct semid_ds ds;
	int *ids, n, i;

	n = sysvipc_ids(x->c->root, "sem", &ids);
	for (i = 0; i < n; i++) {
		struct ipc_obj o = { .id = ids[i] };

		if (semctl(o.id, 0, IPC_STAT, &ds) < 0) {
			pr_perror("pid %d: ipc namespace: semaphore set %d: IPC_STAT", x->c->root, o.id);
			break;
		}
		o.key = ds.sem_perm.__key;
		o.mode = ds.sem_perm.mode & 0777;
		o.uid = ds.sem_perm.uid;
		o.gid = ds.sem_perm.gid;
		o.cuid = ds.sem_perm.cuid;
		o.cgid = ds.sem_perm.cgid;
		o.nsems = ds.sem_nsems;
		o.vals = calloc(o.nsems ? o.nsems : 1, sizeof(*o.vals));
		if (!o.vals) {
			pr_err("out of memory");
			exit(1);
		}
		if (semctl(o.id, 0, GETALL, o.vals) < 0) {
			pr_perror("pid %d: ipc namespace: semaphore set %d: GETALL", x->c->root, o.id);
			free(o.vals);
			break;
		}
		d->sem = tree_grow(d->sem, d->nsem, sizeof(*d->sem));
		d->sem[d->nsem++] = o;
	}
	free(ids);
	return n >= 0 && i == n ? 0 : -1;
}

/* a message in DIR/ipc-msg-ID.img: this header, then size bytes */
struct ipc_msg_hdr {
	int64_t mtype;
	uint64_t size;
};

static int dump_msgs(struct ipc_dump *x, struct ipc_obj *o, const struct msqid_ds *ds)
{
	size_t cap = ds->__msg_cbytes + 1;
	struct msgbuf *buf = malloc(sizeof(long) + cap);
	char img[64];
	unsigned long long i;
	struct ipc_msg_hdr h;
	ssize_t n;
	int fd, ret = -1;

	msg_img(img, sizeof(img), o->id);
	fd = img_create_at(x->c->dirfd, img, 0600);
	if (fd < 0 || !buf) {
		pr_perror("cannot create %s", img);
		goto out;
	}
	for (i = 0; i < ds->msg_qnum; i++) {
		n = msgrcv(o->id, buf, cap, i, MSG_COPY | IPC_NOWAIT | MSG_NOERROR);
		if (n < 0) {
			if (errno == EINVAL)
				pr_err("pid %d: ipc namespace: message queue %d: message %llu cannot be copied: larger than kernel/msgmax (lowered after it was queued?): not supported",
				       x->c->root, o->id, i);
			else if (errno == ENOSYS)
				pr_err("pid %d: ipc namespace: message queue %d holds %lu messages: reading them needs a kernel with CONFIG_CHECKPOINT_RESTORE",
				       x->c->root, o->id, (unsigned long)ds->msg_qnum);
			else
				pr_perror("pid %d: ipc namespace: message queue %d: cannot copy message %llu",
					  x->c->root, o->id, i);
			goto out;
		}
		h.mtype = buf->mtype;
		h.size = n;
		if (ipc_account(x, sizeof(h) + n, "message queue", o->id))
			goto out;
		if (write_all(fd, &h, sizeof(h)) || write_all(fd, buf->mtext, n)) {
			pr_perror("cannot write %s", img);
			goto out;
		}
		o->nmsgs++;
		o->bytes += n;
	}
	if (o->bytes != ds->__msg_cbytes) {
		pr_err("pid %d: ipc namespace: message queue %d changed while it was dumped",
		       x->c->root, o->id);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0 && close(fd) && !ret) {
		pr_perror("cannot write %s", img);
		ret = -1;
	}
	free(buf);
	return ret;
}

static int dump_msq(struct ipc_dump *x)
{
	struct ipc_data *d = ipc_get(&x->t);
	struct msqid_ds ds;
	int *ids, n, i;

	n = sysvipc_ids(x->c->root, "msg", &ids);
	for (i = 0; i < n; i++) {
		struct ipc_obj o = { .id = ids[i] };

		if (msgctl(o.id, IPC_STAT, &ds) < 0) {
			pr_perror("pid %d: ipc namespace: message queue %d: IPC_STAT", x->c->root, o.id);
			break;
		}
		o.key = ds.msg_perm.__key;
		o.mode = ds.msg_perm.mode & 0777;
		o.uid = ds.msg_perm.uid;
		o.gid = ds.msg_perm.gid;
		o.cuid = ds.msg_perm.cuid;
		o.cgid = ds.msg_perm.cgid;
		o.qbytes = ds.msg_qbytes;
		if (dump_msgs(x, &o, &ds))
			break;
		d->msq = tree_grow(d->msq, d->nmsq, sizeof(*d->msq));
		d->msq[d->nmsq++] = o;
	}
	free(ids);
	return n >= 0 && i == n ? 0 : -1;
}

/* The POSIX message queues, on a detached mount of this namespace's mqueue fs. */
static int dump_mq(struct ipc_dump *x)
{
	struct ipc_data *d = ipc_get(&x->t);
	int fsfd, mnt = -1, ret = -1, fd;
	struct dirent *e;
	struct mq_attr attr;
	struct stat st;
	char info[256];
	unsigned long qsize;
	int notify_pid;
	ssize_t n;
	DIR *dir = NULL;

	fsfd = fsopen("mqueue", FSOPEN_CLOEXEC);
	if (fsfd < 0 || fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ||
	    (mnt = fsmount(fsfd, FSMOUNT_CLOEXEC, 0)) < 0) {
		pr_perror("pid %d: ipc namespace: cannot mount its mqueue filesystem to list the POSIX message queues",
			  x->c->root);
		goto out;
	}
	fd = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* mnt is O_PATH */
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		pr_perror("pid %d: ipc namespace: cannot list its POSIX message queues", x->c->root);
		goto out;
	}
	for (errno = 0; (e = readdir(dir)); errno = 0) {
		struct ipc_mq q = { 0 };

		if (e->d_name[0] == '.')
			continue;
		fd = openat(mnt, e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || mq_getattr(fd, &attr)) {
			pr_perror("pid %d: ipc namespace: POSIX message queue /%s: cannot read it",
				  x->c->root, e->d_name);
			if (fd >= 0)
				close(fd);
			goto out;
		}
		n = pread(fd, info, sizeof(info) - 1, 0);
		close(fd);
		if (n < 0 || (info[n] = 0, sscanf(info, "QSIZE:%lu NOTIFY:%*d SIGNO:%*d NOTIFY_PID:%d",
						  &qsize, &notify_pid) != 2)) {
			pr_err("pid %d: ipc namespace: POSIX message queue /%s: cannot read its state",
			       x->c->root, e->d_name);
			goto out;
		}
		if (attr.mq_curmsgs || qsize) {
			pr_err("pid %d: ipc namespace: POSIX message queue /%s holds %ld messages: not supported (they cannot be read without being taken)",
			       x->c->root, e->d_name, attr.mq_curmsgs);
			goto out;
		}
		if (notify_pid) {
			pr_err("pid %d: ipc namespace: POSIX message queue /%s has a notification registered (mq_notify, pid %d): not supported",
			       x->c->root, e->d_name, notify_pid);
			goto out;
		}
		q.name = xstrdup(e->d_name);
		q.mode = st.st_mode & 0777;
		q.uid = st.st_uid;
		q.gid = st.st_gid;
		q.maxmsg = attr.mq_maxmsg;
		q.msgsize = attr.mq_msgsize;
		d->mq = tree_grow(d->mq, d->nmq, sizeof(*d->mq));
		d->mq[d->nmq++] = q;
	}
	if (errno) {
		pr_perror("pid %d: ipc namespace: cannot list its POSIX message queues", x->c->root);
		goto out;
	}
	ret = 0;
out:
	if (dir)
		closedir(dir);
	if (mnt >= 0)
		close(mnt);
	if (fsfd >= 0)
		close(fsfd);
	return ret;
}

static int ipc_dump_child(void *arg)
{
	struct ipc_dump *x = arg;
	FILE *f;

	if (dump_sysctls(x) || dump_shm(x) || dump_sem(x) || dump_msq(x) || dump_mq(x))
		return -1;
	f = fdopen(x->outfd, "w");
	if (!f)
		return -1;
	ipc_write_all(f, &x->t);
	return fclose(f) ? -1 : 0;
}

/*
 * With a user namespace of the tree's own, every owner and creator must be
 * an id it maps: the restore makes and sets them inside, where an unmapped
 * one cannot be given (it would come back as 65534, another user).
 */
static int obj_mapped(const struct ns_ctx *c, const char *what, const struct ipc_obj *o)
{
	unsigned int v[4] = { o->uid, o->gid, o->cuid, o->cgid }, x;
	static const char *const n[4] = { "owner uid", "owner gid", "creator uid", "creator gid" };
	int i;

	for (i = 0; i < 4; i++)
		if (userns_inner(c->t, i & 1, v[i], &x)) {
			pr_err("pid %d: its ipc namespace: %s %d: its %s %u is not mapped in its user namespace: it cannot be given back there",
			       c->root, what, o->id, n[i], v[i]);
			return -1;
		}
	return 0;
}

static int ipc_ids_mapped(const struct ns_ctx *c)
{
	const struct ipc_data *d = ipc_of(c->t);
	unsigned int x;
	int i;

	if (!d || !(c->t->ns->own & NS_BIT(NS_USER)))
		return 0;
	for (i = 0; i < d->nshm; i++)
		if (obj_mapped(c, "shm segment", &d->shm[i]))
			return -1;
	for (i = 0; i < d->nsem; i++)
		if (obj_mapped(c, "semaphore set", &d->sem[i]))
			return -1;
	for (i = 0; i < d->nmsq; i++)
		if (obj_mapped(c, "message queue", &d->msq[i]))
			return -1;
	for (i = 0; i < d->nmq; i++)
		if (userns_inner(c->t, 0, d->mq[i].uid, &x) || userns_inner(c->t, 1, d->mq[i].gid, &x)) {
			pr_err("pid %d: its ipc namespace: POSIX message queue /%s: its owner %u:%u is not mapped in its user namespace: it cannot be given back there",
			       c->root, d->mq[i].name, d->mq[i].uid, d->mq[i].gid);
			return -1;
		}
	return 0;
}

static int ipc_dump(struct ns_ctx *c)
{
	struct ipc_dump x = { .c = c };
	FILE *f;
	int ret;

	x.outfd = memfd_create("imgcr-ipc", MFD_CLOEXEC);
	if (x.outfd < 0) {
		pr_perror("cannot create a memfd");
		return -1;
	}
	if (ns_run_in(c->root, NS_BIT(NS_IPC), ipc_dump_child, &x)) {
		close(x.outfd);
		return -1;
	}
	f = fdopen(x.outfd, "r");
	if (!f || fseek(f, 0, SEEK_SET)) {
		pr_perror("cannot read the memfd");
		return -1;
	}
	ret = ipc_read_all(f, c->t, "the ipc namespace's records");
	fclose(f);
	if (!ret)
		ipc_get(c->t);	/* an empty namespace has its data too */
	return ret ? ret : ipc_ids_mapped(c);
}

/* ---- restore (inside the new ipc namespace) ---- */

struct ipc_msgs {		/* one queue's image, read and checked */
	char *buf;
	size_t len;
	unsigned long long maxsize;
};

/* The images of @d, checked against their records, before anything is made. */
static int ipc_check_images(struct ns_ctx *c, const struct ipc_data *d, struct ipc_msgs *m)
{
	char img[64];
	struct stat st;
	struct ipc_msg_hdr h;
	unsigned long long nm, bytes;
	size_t off;
	int i, fd;

	for (i = 0; i < d->nshm; i++) {
		shm_img(img, sizeof(img), d->shm[i].id);
		if (fstatat(c->dirfd, img, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    (unsigned long long)st.st_size != d->shm[i].size) {
			pr_err("ipc namespace: shm segment %d: %s is missing or not %llu bytes",
			       d->shm[i].id, img, d->shm[i].size);
			return -1;
		}
	}
	for (i = 0; i < d->nmsq; i++) {
		const struct ipc_obj *o = &d->msq[i];

		msg_img(img, sizeof(img), o->id);
		fd = dir_open(c->dirfd, img, O_RDONLY);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		    (unsigned long long)st.st_size != o->nmsgs * sizeof(h) + o->bytes) {
			pr_err("ipc namespace: message queue %d: %s is missing or not %llu bytes", o->id,
			       img, o->nmsgs * sizeof(h) + o->bytes);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		m[i].len = st.st_size;
		m[i].buf = malloc(m[i].len + 1);
		if (!m[i].buf || read_full(fd, m[i].buf, m[i].len)) {
			pr_perror("cannot read %s", img);
			close(fd);
			return -1;
		}
		close(fd);
		for (off = 0, nm = 0, bytes = 0; off + sizeof(h) <= m[i].len; nm++) {
			memcpy(&h, m[i].buf + off, sizeof(h));
			if (h.mtype < 1 || h.size > m[i].len - off - sizeof(h))
				break;
			off += sizeof(h) + h.size;
			bytes += h.size;
			if (h.size > m[i].maxsize)
				m[i].maxsize = h.size;
		}
		if (off != m[i].len || nm != o->nmsgs || bytes != o->bytes) {
			pr_err("ipc namespace: message queue %d: %s does not hold %llu messages of %llu bytes",
			       o->id, img, o->nmsgs, o->bytes);
			return -1;
		}
	}
	return 0;
}

/* The namespace holds no objects yet. */
static int ipc_empty(void)
{
	static const char *const what[] = { "shm", "sem", "msg" };
	int *ids, i, n;

	for (i = 0; i < 3; i++) {
		n = sysvipc_ids(0, what[i], &ids);
		free(ids);
		if (n) {
			if (n > 0)
				pr_err("ipc namespace: the namespace to restore into already holds SysV %s objects",
				       what[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * Maps that move ids (docs/containers.md): the ns-root keeps host root's
 * uid, which the new namespace does not map: once it took another one it
 * could not come back.  What must be done as another user runs in a child
 * (as_child()): the creation of an object with its creator's ids, of a
 * POSIX queue with its owner's, the write of a sysctl as the namespace's
 * root (the kernel lets only its uid 0 write them, besides the next ids).
 * The child keeps the ns-root's capabilities in the new namespace (its
 * euid was not the namespace's root: no fixup clears them).
 */
static int ipc_moves;

/*
 * @fn(@arg) in a child with effective uid @uid and gid @gid (the new
 * namespace's view; -1: unchanged; a @uid the namespace does not map,
 * with @soft: unchanged too); 0, or -1 with errno as the child's.
 */
static int as_child(uid_t uid, gid_t gid, int soft, int (*fn)(const void *), const void *arg)
{
	int st, e;
	pid_t p;

	fflush(stdout);
	fflush(stderr);
	p = fork();
	if (p < 0) {
		pr_perror("ipc namespace: fork");
		return -1;
	}
	if (!p) {
		if ((gid != (gid_t)-1 && setegid(gid)) ||
		    (uid != (uid_t)-1 && seteuid(uid) && !(soft && errno == EINVAL))) {
			e = errno;
			pr_perror("ipc namespace: cannot take the ids %d:%d", (int)uid, (int)gid);
			_exit(e & 0xff ? e & 0xff : EPERM);
		}
		errno = 0;
		if (!fn(arg))
			_exit(0);
		e = errno;
		_exit(e > 0 && e < 256 ? e : EIO);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR) {
			pr_perror("ipc namespace: waitpid");
			return -1;
		}
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	errno = WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
	return -1;
}

struct sysctl_arg {
	const char *name, *value;
};

static int sysctl_set_fn(const void *arg)
{
	const struct sysctl_arg *a = arg;

	return sysctl_set(a->name, a->value);
}

/* sysctl_set(), as the namespace's root with moving maps */
static int ipc_sysctl_set(const char *name, const char *value)
{
	struct sysctl_arg a = { name, value };

	if (!ipc_moves)
		return sysctl_set(name, value);
	return as_child(0, -1, 1, sysctl_set_fn, &a);
}

static int set_next_id(const char *what, int id)
{
	char name[64], v[32];

	snprintf(name, sizeof(name), "kernel/%s_next_id", what);
	snprintf(v, sizeof(v), "%d", id);
	if (ipc_sysctl_set(name, v)) {
		pr_perror("ipc namespace: cannot write /proc/sys/%s (the id %d)", name, id);
		return -1;
	}
	return 0;
}

/*
 * The creation of an object runs with its creator's uid and gid as
 * effective ids (its cuid and cgid), then takes back the restorer's.  A
 * change of the effective ids also makes the process not dumpable and
 * clears its parent-death signal: both are put back.
 */
struct creator_saved {
	uid_t euid;
	gid_t egid;
	int dumpable, pdeathsig;
};

static int as_creator(const struct ipc_obj *o, struct creator_saved *s)
{
	s->euid = geteuid();
	s->egid = getegid();
	s->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	s->pdeathsig = 0;
	if (prctl(PR_GET_PDEATHSIG, &s->pdeathsig, 0, 0, 0))
		s->pdeathsig = 0;
	if ((o->cgid != s->egid && setegid(o->cgid)) || (o->cuid != s->euid && seteuid(o->cuid))) {
		pr_perror("ipc namespace: object %d: cannot become its creator %u:%u", o->id, o->cuid,
			  o->cgid);
		if (getegid() != s->egid)
			(void)setegid(s->egid);
		return -1;
	}
	return 0;
}

static int back_from_creator(const struct creator_saved *s)
{
	if ((geteuid() != s->euid && seteuid(s->euid)) || (getegid() != s->egid && setegid(s->egid))) {
		pr_perror("ipc namespace: cannot take back uid %u gid %u", s->euid, s->egid);
		return -1;
	}
	if ((s->dumpable > 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != s->dumpable &&
	     prctl(PR_SET_DUMPABLE, s->dumpable, 0, 0, 0)) ||
	    (s->pdeathsig && prctl(PR_SET_PDEATHSIG, s->pdeathsig, 0, 0, 0))) {
		pr_perror("ipc namespace: cannot set the dumpable flag and parent-death signal again");
		return -1;
	}
	return 0;
}

static int check_id(const char *what, const struct ipc_obj *o, int got)
{
	if (got < 0) {
		pr_perror("ipc namespace: cannot create %s %d (key 0x%x)", what, o->id, o->key);
		return -1;
	}
	if (got != o->id) {
		pr_err("ipc namespace: %s %d was created as %d", what, o->id, got);
		return -1;
	}
	return 0;
}

enum { MK_SHM, MK_SEM, MK_MSG };

struct mk_arg {
	int kind;
	const struct ipc_obj *o;
};

static int mk_obj(const struct mk_arg *a)
{
	const struct ipc_obj *o = a->o;

	switch (a->kind) {
	case MK_SHM:
		return shmget(o->key, o->size, IPC_CREAT | IPC_EXCL | (o->mode & 0777));
	case MK_SEM:
		return semget(o->key, o->nsems, IPC_CREAT | IPC_EXCL | o->mode);
	default:
		return msgget(o->key, IPC_CREAT | IPC_EXCL | o->mode);
	}
}

static const char *const mk_what[] = { "shm segment", "semaphore set", "message queue" };

static int mk_child(const void *arg)
{
	const struct mk_arg *a = arg;

	return check_id(mk_what[a->kind], a->o, mk_obj(a));
}

/*
 * Object @o made with its id (set_next_id() before) by its creator (its
 * cuid and cgid): its id, or -1 (printed).
 */
static int create_obj(int kind, const struct ipc_obj *o)
{
	struct mk_arg a = { kind, o };
	struct creator_saved cs;
	int id;

	if (ipc_moves) {
		if (as_child(o->cuid, o->cgid, 0, mk_child, &a))
			return -1;
		return o->id;
	}
	if (as_creator(o, &cs))
		return -1;
	id = mk_obj(&a);
	if (back_from_creator(&cs) || check_id(mk_what[kind], o, id))
		return -1;
	return id;
}

static int restore_shm(struct ns_ctx *c, const struct ipc_obj *o)
{
	struct shmid_ds ds;
	char img[64], *mem, page[IPC_PAGE];
	unsigned long long off;
	struct stat st;
	ssize_t n;
	int id, fd;

	if (set_next_id("shm", o->id))
		return -1;
	id = create_obj(MK_SHM, o);
	if (id < 0)
		return -1;
	if (shmctl(id, IPC_STAT, &ds) < 0) {
		pr_perror("ipc namespace: shm segment %d: IPC_STAT", id);
		return -1;
	}
	ds.shm_perm.uid = o->uid;
	ds.shm_perm.gid = o->gid;
	ds.shm_perm.mode = o->mode & 0777;
	if (shmctl(id, IPC_SET, &ds) < 0 || ((o->mode & SHM_LOCKED) && shmctl(id, SHM_LOCK, NULL) < 0)) {
		pr_perror("ipc namespace: shm segment %d: cannot set its owner %u:%u and mode 0%o", id,
			  o->uid, o->gid, o->mode);
		return -1;
	}
	shm_img(img, sizeof(img), o->id);
	/* never through a link, and the same regular file ipc_check_images() saw */
	fd = dir_open(c->dirfd, img, O_RDONLY);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
			(unsigned long long)st.st_size != o->size)) {
		pr_err("ipc namespace: shm segment %d: %s is not a file of %llu bytes", id, img, o->size);
		close(fd);
		return -1;
	}
	mem = shmat(id, NULL, 0);
	if (fd < 0 || mem == (void *)-1) {
		pr_perror("ipc namespace: shm segment %d: cannot read %s into it", id, img);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (off = 0; off < o->size; off += n) {
		n = pread(fd, page, sizeof(page), off);
		if (n <= 0) {
			pr_perror("cannot read %s", img);
			break;
		}
		if (!is_zero(page, n))
			memcpy(mem + off, page, n);
	}
	close(fd);
	shmdt(mem);
	return off < o->size ? -1 : 0;
}

static int restore_sem(const struct ipc_obj *o)
{
	struct semid_ds ds;
	int id;

	if (set_next_id("sem", o->id))
		return -1;
	id = create_obj(MK_SEM, o);
	if (id < 0)
		return -1;
	if (semctl(id, 0, SETALL, o->vals) < 0) {
		pr_perror("ipc namespace: semaphore set %d: SETALL", id);
		return -1;
	}
	if (semctl(id, 0, IPC_STAT, &ds) < 0) {
		pr_perror("ipc namespace: semaphore set %d: IPC_STAT", id);
		return -1;
	}
	ds.sem_perm.uid = o->uid;
	ds.sem_perm.gid = o->gid;
	ds.sem_perm.mode = o->mode;
	if (semctl(id, 0, IPC_SET, &ds) < 0) {
		pr_perror("ipc namespace: semaphore set %d: cannot set its owner %u:%u and mode 0%o",
			  id, o->uid, o->gid, o->mode);
		return -1;
	}
	return 0;
}

static int restore_msq(const struct ipc_obj *o, const struct ipc_msgs *m)
{
	struct msqid_ds ds;
	struct ipc_msg_hdr h;
	struct msgbuf *buf;
	size_t off;
	int id;

	if (set_next_id("msg", o->id))
		return -1;
	id = create_obj(MK_MSG, o);
	if (id < 0)
		return -1;
	if (msgctl(id, IPC_STAT, &ds) < 0) {
		pr_perror("ipc namespace: message queue %d: IPC_STAT", id);
		return -1;
	}
	/* room for every message first (a queue can hold more than a lowered qbytes) */
	ds.msg_qbytes = o->bytes > o->qbytes ? o->bytes : o->qbytes;
	if (msgctl(id, IPC_SET, &ds) < 0) {
		pr_perror("ipc namespace: message queue %d: cannot set its size %llu", id, o->qbytes);
		return -1;
	}
	buf = malloc(sizeof(long) + m->maxsize + 1);
	if (!buf) {
		pr_err("out of memory");
		exit(1);
	}
	for (off = 0; off < m->len; off += sizeof(h) + h.size) {
		memcpy(&h, m->buf + off, sizeof(h));
		buf->mtype = h.mtype;
		memcpy(buf->mtext, m->buf + off + sizeof(h), h.size);
		if (msgsnd(id, buf, h.size, IPC_NOWAIT) < 0) {
			pr_perror("ipc namespace: message queue %d: cannot queue a message of %llu bytes",
				  id, (unsigned long long)h.size);
			free(buf);
			return -1;
		}
	}
	free(buf);
	ds.msg_qbytes = o->qbytes;
	ds.msg_perm.uid = o->uid;
	ds.msg_perm.gid = o->gid;
	ds.msg_perm.mode = o->mode;
	if (msgctl(id, IPC_SET, &ds) < 0) {
		pr_perror("ipc namespace: message queue %d: cannot set its owner %u:%u, mode 0%o, size %llu",
			  id, o->uid, o->gid, o->mode, o->qbytes);
		return -1;
	}
	return 0;
}

static int restore_mq_fn(const void *arg)
{
	const struct ipc_mq *q = arg;
	struct mq_attr attr = { .mq_maxmsg = q->maxmsg, .mq_msgsize = q->msgsize };
	char name[300];
	mode_t um;
	int fd;

	snprintf(name, sizeof(name), "/%s", q->name);
	um = umask(0);
	fd = mq_open(name, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, q->mode, &attr);
	umask(um);
	if (fd < 0 || fchown(fd, q->uid, q->gid)) {
		pr_perror("ipc namespace: cannot create the POSIX message queue %s (%ld messages of %ld bytes, owner %u:%u)",
			  name, q->maxmsg, q->msgsize, q->uid, q->gid);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* with moving maps, made by its owner (the ns-root's own fsuid is not mapped there) */
static int restore_mq(const struct ipc_mq *q)
{
	if (ipc_moves)
		return as_child(q->uid, q->gid, 0, restore_mq_fn, q);
	return restore_mq_fn(q);
}

/*
 * Field @field (0: the first) of the sysctl @name at least @need, for the
 * objects to be made (the dumped values are written at the end): 0 or -1.
 */
static int raise_limit(const char *name, int field, unsigned long long need)
{
	char now[256], v[300], *p, *end;
	unsigned long long f[8];
	int n, i;

	if (sysctl_get(name, now, sizeof(now))) {
		pr_perror("ipc namespace: cannot read /proc/sys/%s", name);
		return -1;
	}
	for (n = 0, p = now; n < 8; n++, p = end) {
		errno = 0;
		f[n] = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
	}
	if (field >= n) {
		pr_err("ipc namespace: /proc/sys/%s: '%s' has no field %d", name, now, field + 1);
		return -1;
	}
	if (f[field] >= need)
		return 0;
	f[field] = need;
	for (i = 0, p = v; i < n; i++)
		p += sprintf(p, "%s%llu", i ? "\t" : "", f[i]);
	if (ipc_sysctl_set(name, v)) {
		pr_perror("ipc namespace: cannot write /proc/sys/%s (%s)", name, v);
		return -1;
	}
	return 0;
}

/*
 * The limits the objects need while they are made (the dumped ones may
 * have been lowered after; an ordinary root of a user namespace cannot go
 * past msgmnb and the mqueue limits).
 */
static int raise_limits(const struct ipc_data *d, const struct ipc_msgs *m)
{
	unsigned long long maxsize = 0, qb = 0, nsems = 0, maxnsems = 0, mqmsg = 0, mqsize = 0;
	int i;

	for (i = 0; i < d->nmsq; i++) {
		if (m[i].maxsize > maxsize)
			maxsize = m[i].maxsize;
		if (d->msq[i].qbytes > qb)
			qb = d->msq[i].qbytes;
		if (d->msq[i].bytes > qb)
			qb = d->msq[i].bytes;
	}
	for (i = 0; i < d->nsem; i++) {
		nsems += d->sem[i].nsems;
		if ((unsigned long long)d->sem[i].nsems > maxnsems)
			maxnsems = d->sem[i].nsems;
	}
	for (i = 0; i < d->nmq; i++) {
		if ((unsigned long long)d->mq[i].maxmsg > mqmsg)
			mqmsg = d->mq[i].maxmsg;
		if ((unsigned long long)d->mq[i].msgsize > mqsize)
			mqsize = d->mq[i].msgsize;
	}
	return raise_limit("kernel/msgmax", 0, maxsize) || raise_limit("kernel/msgmnb", 0, qb) ||
	       raise_limit("kernel/msgmni", 0, d->nmsq) || raise_limit("kernel/shmmni", 0, d->nshm) ||
	       raise_limit("kernel/sem", 0, maxnsems) || raise_limit("kernel/sem", 1, nsems) ||
	       raise_limit("kernel/sem", 3, d->nsem) ||
	       raise_limit("fs/mqueue/queues_max", 0, d->nmq) ||
	       raise_limit("fs/mqueue/msg_max", 0, mqmsg) ||
	       raise_limit("fs/mqueue/msgsize_max", 0, mqsize) ? -1 : 0;
}

static int obj_to_inner(const struct tree *t, const char *what, struct ipc_obj *o)
{
	if (userns_inner(t, 0, o->uid, &o->uid) || userns_inner(t, 1, o->gid, &o->gid) ||
	    userns_inner(t, 0, o->cuid, &o->cuid) || userns_inner(t, 1, o->cgid, &o->cgid)) {
		pr_err("ipc namespace: %s %d: an owner or creator id is not mapped in the user namespace",
		       what, o->id);
		return -1;
	}
	return 0;
}

/*
 * The ns-root's copy of the records, their ids (imgcr's view) made the new
 * user namespace's view of them, which the calls made inside take.
 */
static int ipc_to_inner(struct tree *t)
{
	struct ipc_data *d = ipc_get(t);
	int i;

	for (i = 0; i < d->nshm; i++)
		if (obj_to_inner(t, "shm segment", &d->shm[i]))
			return -1;
	for (i = 0; i < d->nsem; i++)
		if (obj_to_inner(t, "semaphore set", &d->sem[i]))
			return -1;
	for (i = 0; i < d->nmsq; i++)
		if (obj_to_inner(t, "message queue", &d->msq[i]))
			return -1;
	for (i = 0; i < d->nmq; i++)
		if (userns_inner(t, 0, d->mq[i].uid, &d->mq[i].uid) ||
		    userns_inner(t, 1, d->mq[i].gid, &d->mq[i].gid)) {
			pr_err("ipc namespace: POSIX message queue /%s: its owner is not mapped in the user namespace",
			       d->mq[i].name);
			return -1;
		}
	return 0;
}

static int ipc_inside(struct ns_ctx *c)
{
	const struct ipc_data *d = ipc_of(c->t);
	struct ipc_msgs *m;
	int i, ret = -1;

	if (!d)
		return 0;
	m = calloc(d->nmsq + 1, sizeof(*m));
	if (!m) {
		pr_err("out of memory");
		exit(1);
	}
	ipc_moves = userns_moves(c->t);
	if (ipc_moves && ipc_to_inner(c->t))
		goto out;
	if (ipc_empty() || ipc_check_images(c, d, m))
		goto out;
	if (raise_limits(d, m))
		goto out;
	for (i = 0; i < d->nshm; i++)
		if (restore_shm(c, &d->shm[i]))
			goto out;
	for (i = 0; i < d->nsem; i++)
		if (restore_sem(&d->sem[i]))
			goto out;
	for (i = 0; i < d->nmsq; i++)
		if (restore_msq(&d->msq[i], &m[i]))
			goto out;
	for (i = 0; i < d->nmq; i++)
		if (restore_mq(&d->mq[i]))
			goto out;
	/* the sysctls last, those that differ (next ids after the objects) */
	for (i = 0; i < d->nvars; i++) {
		char now[256];
		int r = sysctl_get(d->vars[i].name, now, sizeof(now));

		if (!r && !strcmp(now, d->vars[i].value))
			continue;
		if (r || ipc_sysctl_set(d->vars[i].name, d->vars[i].value)) {
			pr_perror("ipc namespace: cannot write /proc/sys/%s (%s)", d->vars[i].name,
				  d->vars[i].value);
			goto out;
		}
	}
	ret = 0;
out:
	for (i = 0; i < d->nmsq; i++)
		free(m[i].buf);
	free(m);
	return ret;
}

const struct ns_ops ns_ipc_ops = {
	.name = "ipc",
	.clone_flag = CLONE_NEWIPC,
	.dump = ipc_dump,
	.inside = ipc_inside,
	.free = ipc_free,
};

/*
 * imgcr _ipc dump|restore -D DIR (hidden, for the tests): the dump of the
 * caller's ipc namespace into DIR (the records in DIR/ipc-records), or its
 * restore into the caller's (empty) ipc namespace.
 */
int cmd_ipc(int argc, char **argv)
{
	struct tree t = { 0 };
	struct ns_ctx c = { .t = &t, .root = getpid(), .own = NS_BIT(NS_IPC) };
	const char *dir;
	FILE *f;
	int ret;

	if (argc != 4 || strcmp(argv[2], "-D") || (strcmp(argv[1], "dump") && strcmp(argv[1], "restore")))
		return usage_error("usage: imgcr _ipc dump|restore -D DIR");
	dir = argv[3];
	if (!strcmp(argv[1], "dump"))
		mkdir(dir, 0700);
	c.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.dirfd < 0) {
		pr_perror("cannot open %s", dir);
		return 1;
	}
	if (!strcmp(argv[1], "dump")) {
		ret = ipc_dump(&c);
		if (!ret) {
			int fd = img_create_at(c.dirfd, "ipc-records", 0600);

			f = fd >= 0 ? fdopen(fd, "w") : NULL;
			if (!f) {
				pr_perror("cannot create %s/ipc-records", dir);
				return 1;
			}
			ipc_write_all(f, &t);
			ret = fclose(f) ? -1 : 0;
		}
	} else {
		int fd = dir_open(c.dirfd, "ipc-records", O_RDONLY);

		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f) {
			pr_perror("cannot open %s/ipc-records", dir);
			return 1;
		}
		ret = ipc_read_all(f, &t, "ipc-records");
		fclose(f);
		if (!ret)
			ret = ipc_inside(&c);
	}
	ns_tree_free(&t);
	close(c.dirfd);
	return ret ? 1 : 0;
}
