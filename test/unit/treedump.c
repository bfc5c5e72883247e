// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test driver for the tree file (test/unit/tree_roundtrip.sh),
 * linked with every object of userspace/ (imgcr.c's main renamed):
 *
 *   treedump DIR          read DIR/tree and print the parsed model, every
 *                         field of every record, one "key=value" per field
 *                         (exit 1 if the reader refuses the file)
 *   treedump DIR OUTDIR   read DIR/tree and write it again to OUTDIR/tree
 *                         (the current format), for the round trip
 *
 * The model print is independent of the file format: it is what proves
 * that a change of the format (or of the structs) reads the same trees the
 * same way.  It prints a kind's fields by name; keep the names when a
 * field moves (a golden file changes only when the model really does).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "cgroup.h"
#include "files.h"
#include "locks.h"
#include "bpfmap.h"
#include "ns.h"
#include "pipes.h"
#include "sockets.h"
#include "tree.h"
#include "tty.h"

static void str(const char *key, const char *s)
{
	char e[3 * 4096 + 4];

	if (!s) {
		printf(" %s=(null)", key);
		return;
	}
	tree_escape(e, sizeof(e), s);
	printf(" %s=%s", key, e);
}

static void task(const struct tree_task *k)
{
	int j;

	printf("task pid=%d ppid=%d pgid=%d sid=%d", k->pid, k->ppid, k->pgid, k->sid);
	str("comm", k->comm);
	printf(" uid=%u,%u,%u,%u gid=%u,%u,%u,%u groups=", k->uid[0], k->uid[1], k->uid[2],
	       k->uid[3], k->gid[0], k->gid[1], k->gid[2], k->gid[3]);
	for (j = 0; j < k->ngroups; j++)
		printf("%s%u", j ? "," : "", k->groups[j]);
	printf(" umask=0%o", k->umask);
	str("cwd", k->cwd);
	str("root", k->root);
	printf(" has_cred=%d has_fs=%d threads=", k->has_cred, k->has_fs);
	for (j = 0; j < k->nthreads; j++)
		printf("%s%d", j ? "," : "", k->threads[j]);
	printf(" attr_set=0x%x", k->attr_set);
	for (j = 0; j < TREE_NLIMITS; j++)
		if (k->attr_set & ATTR_RLIMIT(j))
			printf(" rlim%d=%llu,%llu", j, k->rlim[j][0], k->rlim[j][1]);
	printf(" oom=%d sched=%d,%d,%d,%d ioprio=%d", k->oom_score_adj, k->sched_policy,
	       k->sched_reset, k->sched_prio, k->nice, k->ioprio);
	str("affinity", k->affinity);
	printf(" nnp=%d loginuid=%u cwd_deleted=%d zombie=%d exit_status=%d stopped=%d",
	       k->no_new_privs, k->loginuid, k->cwd_deleted, k->zombie, k->exit_status,
	       !!k->stopped);
	/* only where present, as the tree file */
	if (k->attr_set & ATTR_COREDUMP)
		printf(" coredump_filter=0x%lx", k->coredump_filter);
	if (k->attr_set & ATTR_MEMPOLICY) {
		printf(" mpol=%d,0x%x", k->mpol_mode, k->mpol_flags);
		str("mpol_nodes", k->mpol_nodes);
	}
	if (k->attr_set & ATTR_SPEC_SSB)
		printf(" spec_ssb=%d", k->spec_ssb);
	if (k->attr_set & ATTR_SPEC_IB)
		printf(" spec_ib=%d", k->spec_ib);
	if (k->cg)
		printf(" cgroup=%d", k->cg - 1);
	/* only where they are not the defaults (SIGSTOP; none), as the tree file */
	if (k->stopped && k->stopped != SIGSTOP)
		printf(" stop_sig=%d", k->stopped);
	if (k->has_zsig)
		printf(" sig_ign=0x%llx sig_cgt=0x%llx", k->sig_ign, k->sig_cgt);
	/* only in a tree with its own PID namespace, as the tree file */
	if (k->vpid)
		printf(" vpid=%d", k->vpid);
	if (k->vpgid)
		printf(" vpgid=%d", k->vpgid);
	if (k->vsid)
		printf(" vsid=%d", k->vsid);
	if (k->vthreads) {
		printf(" vthreads=");
		for (j = 0; j < k->nthreads; j++)
			printf("%s%d", j ? "," : "", k->vthreads[j]);
	}
	putchar('\n');
	for (j = 0; j < k->nfds; j++)
		printf("  fd fd=%d file=%d cloexec=%d\n", k->fds[j].fd, k->fds[j].file,
		       k->fds[j].cloexec);
}

static void file(const struct tree_file *x)
{
	printf("file id=%d kind=%s flags=0%o pos=%lld", x->id, tree_kind_names[x->kind], x->flags,
	       x->pos);
	str("path", x->path);
	if (x->host)	/* only when set: the older cases' models stay as they are */
		printf(" host=%d", x->host);
	switch (x->kind) {
	case TK_REG:
		printf(" has_stat=%d", x->has_stat);
		if (x->has_stat) {
			printf(" dev=%llu ino=%llu size=%lld mtime_ns=%lld", x->dev, x->sino,
			       x->size, x->mtime_ns);
			str("mnt", x->mnt);
			if (x->has_crc)	/* only when set: the older cases' models stay */
				printf(" head_crc=%u", x->head_crc);
			if (x->dir)	/* likewise */
				printf(" dir=1");
		}
		break;
	case TK_PIPE:
	case TK_FIFO:
	case TK_SK:
		printf(" ino=%lu", x->ino);
		break;
	case TK_CHR:
		printf(" major=%u minor=%u", x->major, x->minor);
		break;
	case TK_EVENTFD:
		printf(" count=%llu semaphore=%d", x->count, x->semaphore);
		break;
	case TK_SIGNALFD:
		printf(" sigmask=0x%llx", x->sigmask);
		break;
	case TK_TIMERFD:
		printf(" clockid=%d settime_flags=0%o ticks=%llu value_ns=%lld interval_ns=%lld",
		       x->clockid, x->settime_flags, x->count, x->value_ns, x->interval_ns);
		break;
	case TK_TTY:
		printf(" role=%s index=%d major=%u minor=%u", tree_tty_role_names[x->tty_role],
		       x->tty_index, x->major, x->minor);
		break;
	case TK_MEMFD:
		printf(" ino=%lu seals=0x%x size=%lld has_mode=%d mode=0%o uid=%u gid=%u", x->ino,
		       x->seals, x->size, x->has_mode, x->mode, x->uid, x->gid);
		if (x->huge)	/* only then: the models before it stay */
			printf(" huge=%d", x->huge);
		break;
	case TK_PIDFD:
		printf(" target=%d start=%llu", x->target, x->start);
		break;
	case TK_BPFMAP:
		printf(" map=%lu", x->ino);
		break;
	case TK_GHOST:
		printf(" dev=%llu ino=%llu", x->dev, x->sino);
		break;
	case TK_FANOTIFY:
		printf(" fan_flags=0x%x fan_event_flags=0x%x", x->fan_flags, x->fan_event_flags);
		break;
	default:
		break;
	}
	if (x->own_pid || x->own_sig)
		printf(" own_type=%d own_pid=%d own_sig=%d", x->own_type, x->own_pid, x->own_sig);
	putchar('\n');
}

static void hex(const char *key, const unsigned char *a, int len)
{
	int i;

	printf(" %s=", key);
	for (i = 0; i < len; i++)
		printf("%02x", a[i]);
}

static void sk(const struct tree_sk *s)
{
	char v[2 * 8 * 4096 + 2];
	int j;

	printf("sk ino=%lu family=%d type=%d proto=%d state=%d peer=%lu backlog=%d sndbuf=%d rcvbuf=%d opts=0x%x rcvtimeo_us=%lld sndtimeo_us=%lld peek_off=%d shutdown=%d mode=0%o uid=%u gid=%u qlen=%zu",
	       s->ino, s->family, s->type, s->proto, s->state, s->peer, s->backlog, s->sndbuf,
	       s->rcvbuf, s->opts, s->rcvtimeo_us, s->sndtimeo_us, s->peek_off, s->shutdown,
	       s->mode, s->uid, s->gid, s->qlen);
	hex("name", s->name, s->namelen);
	hex("peername", s->peername, s->peerlen);
	putchar('\n');
	for (j = 0; j < s->nxopts; j++) {
		if (sk_xopt_format(&s->xopts[j], v, sizeof(v)))
			snprintf(v, sizeof(v), "?");
		printf("  skopt name=%s len=%d value=%s\n", sk_opt_name(s->xopts[j].idx),
		       s->xopts[j].len, v);
	}
	for (j = 0; j < s->nskq; j++) {
		printf("  skq seq=%d files=", s->skq[j].seq);
		for (int k = 0; k < s->skq[j].nfds; k++)
			printf("%s%d", k ? "," : "", s->skq[j].files[k]);
		if (s->skq[j].fromlen)
			printf(" from=");
		for (int k = 0; k < s->skq[j].fromlen; k++)
			printf("%02x", s->skq[j].from[k]);
		putchar('\n');
	}
}

static void tty(const struct tree_tty *y)
{
	int j;

	printf("tty index=%d major=%u minor=%u sid=%d fg=%d locked=%d pkt=%d iflag=0%o oflag=0%o cflag=0%o lflag=0%o cc=",
	       y->index, y->major, y->minor, y->sid, y->fg, y->locked, y->pkt, y->iflag, y->oflag,
	       y->cflag, y->lflag);
	for (j = 0; j < TREE_NCC; j++)
		printf("%02x", y->cc[j]);
	printf(" rows=%u cols=%u xpixel=%u ypixel=%u inlen=%zu outlen=%zu has_mode=%d mode=0%o uid=%u gid=%u%s\n",
	       y->rows, y->cols, y->xpixel, y->ypixel, y->inlen, y->outlen, y->has_mode, y->mode,
	       y->uid, y->gid, y->orphan ? " orphan=1" : "");
}

static void model(const struct tree *t)
{
	int i;

	printf("root=%d ntasks=%d nfiles=%d npipes=%d nttys=%d nitems=%d nghosts=%d nlocks=%d nsks=%d\n",
	       t->root, t->ntasks, t->nfiles, t->npipes, t->nttys, t->nitems, t->nghosts,
	       t->nlocks, t->nsks);
	ns_model(t);
	for (i = 0; i < t->ntasks; i++)
		task(&t->tasks[i]);
	for (i = 0; i < t->nfiles; i++)
		file(&t->files[i]);
	for (i = 0; i < t->nghosts; i++) {
		const struct tree_ghost *g = &t->ghosts[i];

		printf("ghost dev=%llu ino=%llu size=%lld mtime_ns=%lld mode=0%o uid=%u gid=%u",
		       g->dev, g->ino, g->size, g->mtime_ns, g->mode, g->uid, g->gid);
		str("path", g->path);
		printf(" mapped=%d\n", g->mapped);
	}
	for (i = 0; i < t->nsks; i++)
		sk(&t->sks[i]);
	for (i = 0; i < t->npipes; i++)
		printf("pipe ino=%lu size=%u len=%zu%s\n", t->pipes[i].ino, t->pipes[i].size,
		       t->pipes[i].len, t->pipes[i].ext ? " ext=1" : "");
	for (i = 0; i < t->nttys; i++)
		tty(&t->ttys[i]);
	/* epoll items, then inotify watches: only the order within one file matters */
	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind == IT_EPOLL)
			printf("epitem file=%d pid=%d tfd=%d events=0x%x data=0x%llx%s%.0d\n", it->file,
			       it->pid, it->num, it->mask, it->data, it->other ? " other=" : "",
			       it->other);
	}
	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind == IT_WATCH) {
			printf("watch file=%d wd=%d mask=0x%x", it->file, it->num, it->mask);
			str("path", it->path);
			if (it->other)
				printf(" other=%d", it->other);
			putchar('\n');
		}
	}
	for (i = 0; i < t->nitems; i++) {
		const struct tree_item *it = &t->items[i];

		if (it->kind == IT_FANMARK) {
			printf("fanmark file=%d type=%d mask=0x%x ignore=0x%llx flags=0x%x", it->file, it->num,
			       it->mask, it->data, it->flags);
			str("path", it->path);
			putchar('\n');
		}
	}
	for (i = 0; i < t->nbpfmaps; i++) {
		const struct tree_bpfmap *m = &t->bpfmaps[i];

		printf("bpfmap id=%u type=%u key=%u value=%u max=%u flags=0x%x extra=0x%llx frozen=%d ncpus=%d count=%lld",
		       m->id, m->type, m->key_size, m->value_size, m->max_entries, m->flags, m->extra,
		       m->frozen, m->ncpus, m->count);
		str("name", m->name);
		putchar('\n');
	}
	for (i = 0; i < t->nlocks; i++) {
		const struct tree_lock *l = &t->locks[i];

		printf("lock kind=%s file=%d pid=%d fd=%d write=%d start=%lld end=%lld\n",
		       tree_lock_names[l->kind], l->file, l->pid, l->fd, l->write, l->start, l->end);
	}
	for (i = 0; t->hostcg && i < t->hostcg->ncgs; i++) {
		const struct cg *g = &t->hostcg->cgs[i];
		size_t j;

		printf("hcgroup");
		str("path", g->path);
		str("subtree", g->subtree);
		for (j = 0; j < CG_NFILES; j++)
			if (g->val[j])
				str(cg_files[j], g->val[j]);
		putchar('\n');
	}
}

int main(int argc, char **argv)
{
	struct tree t;
	int rc = 0, vpids = argc == 3 && !strcmp(argv[1], "--vpids");

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: treedump [--vpids] DIR | treedump DIR OUTDIR\n");
		return 2;
	}
	if (tree_read(&t, argv[1 + vpids]))
		return 1;
	if (vpids) {	/* the pids restore uses for a tree with a PID namespace of its own */
		tree_use_vpids(&t);
		model(&t);
	} else if (argc == 3)
		rc = tree_write(&t, argv[2]) ? 1 : 0;
	else
		model(&t);
	tree_free(&t);
	return rc;
}
