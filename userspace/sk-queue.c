// SPDX-License-Identifier: GPL-2.0
/*
 * File descriptors in flight: SCM_RIGHTS messages queued in unix sockets,
 * sent and not yet received ("skq" records).
 *
 * dump: sockets.c's peek of a queue (MSG_PEEK with SO_PEEK_OFF, nothing
 * consumed) receives, with each message that carries fds, a new fd in
 * imgcr for each of them (the same open file description the sender
 * passed).  They are kept here with the socket and the frame of
 * DIR/sk-INO.data they came with; once every task is described, each is
 * described by the dump driver as if a task held it (fd_dump.describe,
 * imgcr's own pid and fd): kcmp(KCMP_FILE) merges it with the file of the
 * tree that is the same description, or it is added as a file no task
 * holds (a pipe end, a regular file, an eventfd, a socket whose only
 * reference is in flight...), whose own queue may hold more fds in
 * flight.  Refused: a kind of file imgcr restores only inside a task
 * (terminals, epoll, inotify, pidfds) when no task holds it, one with an
 * F_SETOWN owner, a socket in flight in its own queue, more than
 * SKQ_MAX_TOTAL fds in flight.
 *
 * restore: sk-unix.c's fill sends each frame again, one sendmsg per frame,
 * a frame that carried fds with SCM_RIGHTS of the restored files in the
 * same order; a file not yet opened by the driver is opened early here
 * (fd_restore.early) and the driver takes it in its turn, so the tasks
 * and the message share it as before.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sockets.h"

/* The fds of one queued message, held by imgcr until they are described. */
struct pend {
	unsigned long ino;	/* the socket whose queue holds it */
	pid_t pid;		/* where the socket was described (messages) */
	int fd;
	int seq;		/* its frame in DIR/sk-INO.data */
	int n;
	int *fds;		/* imgcr's: open until skq_dump_free */
};

static struct pend *pend;
static int npend, ntotal;

int skq_dump_add(struct fd_parms *p, const struct tree_sk *s, int seq, int *fds, int n)
{
	struct pend *q;
	int k;

	if (ntotal + n > SKQ_MAX_TOTAL) {
		for (k = 0; k < n; k++)
			close(fds[k]);
		return fd_refuse(p, "%s: more than %d file descriptors in flight (SCM_RIGHTS) in the tree's socket queues: not supported",
				 p->link, SKQ_MAX_TOTAL);
	}
	pend = tree_grow(pend, npend, sizeof(*pend));
	q = &pend[npend++];
	q->ino = s->ino;
	q->pid = p->pid;
	q->fd = p->fd;
	q->seq = seq;
	q->n = n;
	q->fds = malloc(n * sizeof(int) + 1);
	if (!q->fds) {
		pr_err("out of memory");
		exit(1);
	}
	memcpy(q->fds, fds, n * sizeof(int));
	ntotal += n;
	return FD_DESCRIBED;
}

/* The kinds a file no task holds may be: restored by the restorer alone. */
static int kind_alone_ok(enum tree_kind k)
{
	switch (k) {
	case TK_REG: case TK_PIPE: case TK_FIFO: case TK_CHR: case TK_EVENTFD:
	case TK_SIGNALFD: case TK_TIMERFD: case TK_MEMFD: case TK_GHOST: case TK_SK:
		return 1;
	default:
		return 0;
	}
}

int sk_inflight_resolve(struct fd_dump *c)
{
	int k, j;

	/* npend grows while sockets in flight are described (their own queues) */
	for (k = 0; k < npend; k++) {
		unsigned long ino = pend[k].ino;
		pid_t pid = pend[k].pid;
		int sfd = pend[k].fd, seq = pend[k].seq, n = pend[k].n;
		int *files = malloc(n * sizeof(int) + 1);
		struct tree_sk *s;
		struct tree_skq *q;

		if (!files) {
			pr_err("out of memory");
			exit(1);
		}
		for (j = 0; j < n; j++) {
			int fd = pend[k].fds[j], before = c->t->nfiles, i;
			const struct tree_file *f;
			struct stat st;

			if (!fstat(fd, &st) && S_ISSOCK(st.st_mode) && st.st_ino == ino) {
				pr_err("pid %d fd %d: socket:[%lu]: the socket itself is in flight in its own queue (message %d, fd %d of it): not supported",
				       pid, sfd, ino, seq, j);
				free(files);
				return -1;
			}
			i = c->describe(c, fd);
			if (i < 0) {
				pr_err("pid %d fd %d: socket:[%lu]: file descriptor %d of queued message %d, in flight (SCM_RIGHTS), cannot be dumped (above; \"pid %d\" is imgcr, which received it by a peek)",
				       pid, sfd, ino, j, seq, getpid());
				free(files);
				return -1;
			}
			f = &c->t->files[i];
			if (i >= before && !kind_alone_ok(f->kind)) {
				pr_err("pid %d fd %d: socket:[%lu]: file descriptor %d of queued message %d, in flight (SCM_RIGHTS), is a %s file no task of the tree holds: not supported",
				       pid, sfd, ino, j, seq, tree_kind_names[f->kind]);
				free(files);
				return -1;
			}
			if (i >= before && (f->own_pid || f->own_sig)) {
				pr_err("pid %d fd %d: socket:[%lu]: file descriptor %d of queued message %d, in flight (SCM_RIGHTS), has an F_SETOWN owner or F_SETSIG signal and no task of the tree holds it: not supported",
				       pid, sfd, ino, j, seq);
				free(files);
				return -1;
			}
			files[j] = i;
		}
		s = tree_sk_find(c->t, ino);
		if (!s) {
			pr_err("pid %d fd %d: socket:[%lu]: no sk record for the socket whose queue holds fds in flight",
			       pid, sfd, ino);
			free(files);
			return -1;
		}
		q = skq_get(s, seq);
		q->nfds = n;
		q->files = files;
		pr_debug("pid %d fd %d: socket:[%lu]: message %d carries %d fd(s) in flight", pid, sfd,
			 ino, seq, n);
	}
	return 0;
}

void skq_dump_free(void)
{
	int k, j;

	for (k = 0; k < npend; k++) {
		for (j = 0; j < pend[k].n; j++)
			close(pend[k].fds[j]);
		free(pend[k].fds);
	}
	free(pend);
	pend = NULL;
	npend = ntotal = 0;
}

struct tree_skq *skq_get(struct tree_sk *s, int seq)
{
	struct tree_skq *q = (struct tree_skq *)skq_find(s, seq);

	if (q)
		return q;
	s->skq = tree_grow(s->skq, s->nskq, sizeof(*s->skq));
	q = &s->skq[s->nskq++];
	memset(q, 0, sizeof(*q));
	q->seq = seq;
	return q;
}

/*
 * The sender's name of a queued datagram (recvfrom's address), kept so
 * that the restore sends it again from a socket of that name (unix
 * datagram sockets: sk-unix.c; UDP: its source address and port, sk-inet.c).
 */
void skq_from_add(struct tree_sk *s, int seq, const void *a, int len)
{
	struct tree_skq *q;

	if (len <= (int)sizeof(sa_family_t) || len > TREE_SK_ADDR)
		return;
	q = skq_get(s, seq);
	q->fromlen = len;
	memcpy(q->from, a, len);
}

const struct tree_skq *skq_find(const struct tree_sk *s, int seq)
{
	int k;

	for (k = 0; k < s->nskq; k++)
		if (s->skq[k].seq == seq)
			return &s->skq[k];
	return NULL;
}

int skq_file_fd(struct fd_restore *r, int file)
{
	const struct tree_file *f = &r->t->files[file];
	const struct fd_kind *kind = fd_kind_of(f->kind);
	char what[PATH_MAX + 64];
	int i;

	if (r->desc && r->desc[file] >= 0)
		return r->desc[file];
	if (!r->early) {
		r->early = malloc((r->t->nfiles + 1) * sizeof(int));
		if (!r->early) {
			pr_err("out of memory");
			return -1;
		}
		for (i = 0; i < r->t->nfiles; i++)
			r->early[i] = -1;
	}
	if (r->early[file] >= 0)
		return r->early[file];
	if (!kind || !kind->open) {
		pr_err("file %d: no kind of file restores it", file);
		return -1;
	}
	/*
	 * a pipe or FIFO is made by the first of its files (pipes.c, fifo.c:
	 * in the driver's order), which keeps its ends for the others
	 */
	for (i = 0; i < file && (f->kind == TK_PIPE || f->kind == TK_FIFO); i++)
		if (r->t->files[i].kind == f->kind && r->t->files[i].ino == f->ino &&
		    skq_file_fd(r, i) < 0)
			return -1;
	if (f->path)
		snprintf(what, sizeof(what), "%s (in flight)", f->path);
	else
		snprintf(what, sizeof(what), "%s:[%lu] (file %d, in flight)", kind->name, f->ino, file);
	r->early[file] = kind->open(r, file, what);
	return r->early[file];
}

void skq_restore_free(struct fd_restore *r)
{
	int i;

	if (!r->early)
		return;
	for (i = 0; i < r->t->nfiles; i++)
		if (r->early[i] >= 0)
			close(r->early[i]);
	free(r->early);
	r->early = NULL;
}

/* ---- the tree file: skq records, after their sk record ---- */

void skq_records_write(FILE *f, const struct tree_sk *s)
{
	int k, j;

	for (k = 0; k < s->nskq; k++) {
		fprintf(f, "skq ino=%lu seq=%d", s->ino, s->skq[k].seq);
		for (j = 0; j < s->skq[k].nfds; j++)
			fprintf(f, "%s%d", j ? "," : " files=", s->skq[k].files[j]);
		if (s->skq[k].fromlen) {
			fprintf(f, " from=");
			for (j = 0; j < s->skq[k].fromlen; j++)
				fprintf(f, "%02x", s->skq[k].from[j]);
		}
		fprintf(f, "\n");
	}
}

const char *skq_record_read(struct tree *t, struct rec *r)
{
	struct tree_sk *s = NULL;
	struct tree_skq *q;
	const char *v, *f;
	long long ino;
	int seq, n = 0;
	char *end;

	if (!REC_NUM(r, "ino", 1, LLONG_MAX, ino))
		s = tree_sk_find(t, ino);
	if (!s)
		return "skq record before its sk record";
	if (s->family != AF_UNIX && !sk_is_udp(s))
		return "skq record of a socket that is neither a unix nor a UDP socket";
	if (REC_NUM(r, "seq", 0, INT_MAX, seq) || skq_find(s, seq))
		return "bad skq record";
	v = rec_val(r, "files");
	f = rec_val(r, "from");
	if (!v && !f)
		return "bad skq record (neither files nor from)";
	if (v && s->family != AF_UNIX)
		return "bad skq record (files in flight on a UDP socket)";
	s->skq = tree_grow(s->skq, s->nskq, sizeof(*s->skq));
	q = &s->skq[s->nskq];
	memset(q, 0, sizeof(*q));
	q->seq = seq;
	if (f) {
		size_t len = strlen(f), k;
		unsigned int b;

		if (len % 2 || len / 2 > TREE_SK_ADDR || len / 2 <= sizeof(sa_family_t))
			return "bad skq record (from: a socket address in hex)";
		for (k = 0; k < len / 2; k++) {
			if (!isxdigit((unsigned char)f[2 * k]) || !isxdigit((unsigned char)f[2 * k + 1]) ||
			    sscanf(f + 2 * k, "%2x", &b) != 1)
				return "bad skq record (from: a socket address in hex)";
			q->from[k] = b;
		}
		q->fromlen = len / 2;
	}
	if (!v) {
		s->nskq++;
		return NULL;
	}
	q->files = malloc((SKQ_MAX_FDS + 1) * sizeof(int));
	if (!q->files) {
		pr_err("out of memory");
		exit(1);
	}
	for (;;) {
		long x;

		errno = 0;
		x = strtol(v, &end, 10);
		if (end == v || errno || x < 0 || x >= t->nfiles || n >= SKQ_MAX_FDS) {
			free(q->files);
			return "bad skq record (files: indices of file records, comma-separated)";
		}
		q->files[n++] = x;
		if (!*end)
			break;
		if (*end != ',') {
			free(q->files);
			return "bad skq record (files: indices of file records, comma-separated)";
		}
		v = end + 1;
	}
	q->nfds = n;
	s->nskq++;
	return NULL;
}
