/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets ("sk" file and tree records): the fd kind is in sockets.c, which
 * hands each family to its own file (sk-unix.c, sk-inet.c, sk-netlink.c,
 * sk-packet.c: their struct sk_family_ops) and holds what they share:
 * socket options, sock_diag requests, the queued data (peeked, never
 * consumed) and the restore driver.
 */
#ifndef IMGCR_SOCKETS_H
#define IMGCR_SOCKETS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "files.h"
#include "record.h"

struct nlattr;
/*
 * The netlink attributes of @len bytes at @p into @tb (indexed by type, up
 * to @max; NULL where absent): rtnetlink answers (net.c) and sock_diag's
 * (sk-netlink.c, sk-packet.c).  NLA_DATA/NLA_LEN need <linux/netlink.h>.
 */
void nla_parse(const void *p, size_t len, struct nlattr **tb, int max);
#define NLA_DATA(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define NLA_LEN(a)	((size_t)(a)->nla_len - NLA_HDRLEN)

/* sk-opts.c's restore phases: before bind(); once every socket is made; after the buffer sizes */
enum { P_BIND, P_AFTER, P_FINAL, P_NONE };	/* P_NONE: kept, never set (SO_PEERCRED) */
/*
 * sk-opts.c, dump: the options of its table that differ from a new socket's
 * into s->xopts; the refusals (eBPF filter, TCP_ULP, multicast
 * membership, unsent corked UDP data).  FD_DESCRIBED, FD_REFUSED, FD_FAILED.
 */
int sk_xopts_dump(struct fd_parms *p, int sfd, struct tree_sk *s);
/* sk-opts.c, restore: the options of @phase set on @fd; 0 or -1 (printed, naming @what) */
int sk_xopts_restore(int fd, const struct tree_sk *s, int phase, const char *what);
/*
 * sk-opts.c: the name of a kept option that makes a receive add data of
 * the datagram's arrival (SO_TIMESTAMP, IP_PKTINFO, IP_RECVTTL...), which a
 * datagram queued again by the restorer would not have; NULL if none
 */
const char *sk_xopts_rx_cmsg(const struct tree_sk *s);
/* sk-opts.c: " NAME=VALUE" per kept option, appended to @out */
void sk_xopts_show(const struct tree_sk *s, char *out, size_t size);
/* unix: the uid and gid SO_PEERCRED gave at the dump; 1, or 0 if not kept */
int sk_peercred(const struct tree_sk *s, unsigned int *uid, unsigned int *gid);
/* The pid of socket @s's kept SO_PEERCRED (as the dump saw it), 0 if none. */
int sk_peercred_pid(const struct tree_sk *s);
int sk_opt_index(const char *name);
/* getsockopt of an int into @v (0 first): 0, or -1 with errno set */
int sk_getint(int fd, int level, int opt, int *v);
/* @len bytes of @data on @sk with fd @fd (SCM_RIGHTS; none if < 0): 0, or -1 (errno) */
int fd_send(int sk, const void *data, size_t len, int fd);
/* a message of at most @len bytes and the one fd it carries (*@fd, -1 if none): its size, or -1 */
ssize_t fd_recv(int sk, void *data, size_t len, int *fd);

/* dump: the options that programs set (SKO_*, buffers, timeouts, peek offset); 0 or -1 (printed) */
int sk_opts_dump(const struct fd_parms *p, int sfd, struct tree_sk *s);
/*
 * dump: the data queued in @sfd's receive queue into DIR/sk-INO.data, by
 * MSG_PEEK with SO_PEEK_OFF (nothing is consumed; the peek offset is put
 * back), one frame per datagram or peeked chunk (a stream peek ends after
 * a message with fds: those, SCM_RIGHTS, go to skq_dump_add with the
 * frame's number; credentials and pidfds are refused).  @inq: bytes queued for a
 * stream or seqpacket socket (SIOCINQ), -1 for datagram sockets (peeked
 * until EAGAIN).  FD_DESCRIBED, FD_REFUSED (p->why) or FD_FAILED.
 */
int sk_queue_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s, long inq);
/* the same, with a zero-length frame from @head first (a UDP head a peek with an offset skips) */
int sk_queue_dump_head(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s, long inq,
		       const struct sockaddr_storage *head, socklen_t headlen);

/*
 * dump: a sock_diag dump request @req (@len bytes) on a NETLINK_SOCK_DIAG
 * socket, @cb called with each answer's payload; 0, or -1 with errno set.
 */
int sk_diag_dump(void *req, size_t len, void (*cb)(void *msg, size_t len, void *arg), void *arg);

struct sk_restore;
/*
 * A socket family's own file (as CRIU's criu/sk-*.c), looked up by family
 * in sockets.c: its dump (FD_*, p->why on FD_REFUSED), phase 1 of its
 * restore (make: create, bind, listen; unix pairs by socketpair; 0 or -1,
 * printed) and imgcr show's text (appended to @out, which holds sk_what()).
 */
struct sk_family_ops {
	int family;	/* AF_* */
	int (*dump)(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s);
	int (*make)(struct sk_restore *r, int i);
	void (*show)(const struct tree_sk *s, char *out, size_t size);
};
extern const struct sk_family_ops unix_sk_ops;			/* sk-unix.c */
extern const struct sk_family_ops inet_sk_ops, inet6_sk_ops;	/* sk-inet.c (TCP: sk-tcp.c) */
extern const struct sk_family_ops nl_sk_ops;			/* sk-netlink.c */
extern const struct sk_family_ops pkt_sk_ops;			/* sk-packet.c */
/* sockets.c, show of unix and IP sockets: " [listening on |established ]NAME[ -> PEER][ (data queued)]" */
void sk_addr_show(const struct tree_sk *s, char *out, size_t size);

/* sk-inet.c: a TCP socket (stream), a UDP or UDP-Lite one (datagram): not a raw one of that protocol */
int sk_is_tcp(const struct tree_sk *s);
int sk_is_udp(const struct tree_sk *s);
/* sk-inet.c: "TCP", "UDP", "UDP-Lite", "ICMP (ping)", "raw (protocol N)" */
const char *inet_sk_kind(const struct tree_sk *s, char *buf, size_t size);
/*
 * sk-tcp.c: established TCP connections.  dump: the network lock, repair
 * mode, DIR/sk-INO.tcp, .rcvq, .sndq; FD_*.  finish: repair mode off and
 * the lock removed unless the tree is @killed.
 */
int tcp_sk_dump(struct fd_dump *c, struct fd_parms *p, int sfd, struct tree_sk *s);
/*
 * a TCP socket that will be restored with TCP repair (sk-tcp.c): its state
 * is ESTABLISHED, FIN-WAIT-1/2, CLOSE-WAIT, LAST-ACK or CLOSING
 */
int sk_tcp_will_repair(const struct tree_sk *s);
void tcp_sk_finish(int killed);
/*
 * dump (sk-netns.c): the network namespace of the socket @sfd: imgcr's
 * (*@inside 0), the tree's own (1: read it after sk_netns_switch(1)), or
 * refused (FD_REFUSED, printed).  FD_DESCRIBED, FD_REFUSED or FD_FAILED.
 */
int sk_netns_of(struct fd_dump *c, struct fd_parms *p, int sfd, int *inside);
/* imgcr into the tree's network namespace (@in) or back: 1 done, 0 none seen yet, -1 (printed) */
int sk_netns_switch(int in);
/* end of the dump: the namespaces' fds closed */
void sk_netns_free(void);
/* sk-tcp.c: --tcp-close given (dump: the connections are not saved; restore: made closed) */
extern int sk_tcp_close;
/* sk-tcp.c: the socket's owner into s->uid, s->gid (dump); socket() as that owner (restore) */
void inet_sk_owner(int sfd, struct tree_sk *s);
int inet_sk_socket(const struct tree_sk *s, int type);
/* dump, once every task is described: unix peers inside or outside the tree; 0 or -1 */
int unix_sk_check(const struct tree *t);
/* dump: --ext-unix-sk given */
extern int sk_ext_unix;

/* The file record (pid and fd where it was first seen) of socket @ino, or NULL. */
const struct tree_file *sk_file_of(const struct tree *t, unsigned long ino);

/* restore: every socket of the tree, each in fds[i] (t->sks[i]), made by the restorer. */
struct sk_restore {
	const struct tree *t;
	const char *dir;	/* for messages */
	int dirfd;		/* its files: dir_open() (proc.h) */
	int *fds;		/* per t->sks[i]; -1 until made */
	int *dead;		/* per t->sks[i]: the other end of a pair whose peer had closed */
	char **bound;		/* names bound (removed again after a failure), */
	int *bound_dir;		/* each in this directory (trust_dir_open()) */
	int nbound;
	struct fd_restore *fr;	/* the driver's (files in flight: skq_file_fd) */
};

/* Phase 1: the families' make (struct sk_family_ops). */
/* sk-tcp.c, phase 1 for an established connection: left in repair mode until tcp_sk_after */
int tcp_sk_make(struct sk_restore *r, int i);
/* sk-tcp.c, every file open (@ok) or not: the lock removed, repair mode off, unsent data sent; 0 or -1 */
int tcp_sk_after(struct sk_restore *r, int ok);
/* Phase 2: the queued data (unix), before connects (a connected datagram socket takes none from others).  0 or -1 (printed). */
int unix_sk_fill(struct sk_restore *r, int i);
/* Phase 3: connect what is connected to a name; the shutdown state.  0 or -1 (printed). */
int unix_sk_connect(struct sk_restore *r, int i);
/* sk-unix.c: the socket files kept at a temporary name until every socket is connected, removed */
void unix_sk_hidden_free(void);
/* sk-unix.c: the restorer's children are in the tree's new PID namespace (1) or not (0) */
void unix_sk_peer_pidns(int on);
/* restore: set the options of sk_opts_dump on @fd.  0 or -1 (printed, naming @what). */
int sk_opts_restore(int fd, const struct tree_sk *s, const char *what);
/* A name for messages: "unix stream socket:[INO]" etc. */
const char *sk_what(const struct tree_sk *s, char *buf, size_t size);
/* A socket address for messages (a path, @abstract, 1.2.3.4:80, [::1]:80). */
const char *sk_addr_str(const unsigned char *a, int len, char *buf, size_t size);

/* tree_sk.opts */
#define SKO_PASSCRED	0x01	/* SO_PASSCRED */
#define SKO_REUSEADDR	0x02	/* SO_REUSEADDR */
#define SKO_REUSEPORT	0x04	/* SO_REUSEPORT */
#define SKO_V6ONLY	0x08	/* IPV6_V6ONLY */
#define SKO_UNLINKED	0x10	/* unix: bound to a path whose socket file was gone */
#define SKO_EXTERNAL	0x20	/* unix: connected to a socket outside the tree */
#define SKO_KEEPALIVE	0x40	/* SO_KEEPALIVE */
#define SKO_NODELAY	0x80	/* TCP_NODELAY */
#define SKO_PENDING	0x100	/* unix: connected, not yet accepted by a listener of the tree */
#define SKO_RELNAME	0x200	/* unix: bound by a relative name (its file's own name, in its directory) */
#define SKO_PEERDEAD	0x400	/* unix datagram: connected to a socket since closed (peername: its name) */
#define SKO_ALL		0x7ff

#define TREE_SK_ADDR	128	/* most bytes of a socket address kept */

/* A socket option of sk-opts.c's table (a "skopt" record): the bytes getsockopt gave. */
struct tree_skopt {
	int idx;		/* in sk-opts.c's table */
	int len;
	unsigned char *val;	/* @len bytes (and a 0 after them) */
};

/* A socket of the tree (sk-unix.c, sk-inet.c); its queued data in DIR/sk-INO.data. */
struct tree_sk {
	unsigned long ino;	/* its inode (socket:[INO]) */
	int family, type, proto;	/* AF_*, SOCK_*, IPPROTO_* (0 for unix) */
	int state;		/* TCP_* numbers, as sock_diag gives them (unix too) */
	unsigned long peer;	/* unix: the peer's inode (0: none) */
	int backlog;		/* listening: the listen() backlog */
	int sndbuf, rcvbuf;	/* SO_SNDBUF, SO_RCVBUF as getsockopt gives them */
	unsigned int opts;	/* SKO_* */
	long long rcvtimeo_us, sndtimeo_us;	/* SO_RCVTIMEO, SO_SNDTIMEO */
	int peek_off;		/* SO_PEEK_OFF (-1: off) */
	int shutdown;		/* unix, UDP: sk_shutdown (1: no more receives, 2: no more sends) */
	unsigned int mode, uid, gid;	/* unix: a bound path's socket file */
	size_t qlen;		/* bytes of sk-INO.data */
	unsigned char name[TREE_SK_ADDR], peername[TREE_SK_ADDR];	/* getsockname, getpeername */
	int namelen, peerlen;	/* 0: none */
	struct tree_skopt *xopts;	/* the options of sk-opts.c's table that differ from a new socket's */
	int nxopts;
	struct tree_skq *skq;	/* its queued messages that carry fds ("skq" records, sk-queue.c) */
	int nskq;
	void *fam;		/* netlink, packet: their own state (sk-netlink.c, sk-packet.c: their records) */
};

/*
 * A queued message of a unix socket that carries file descriptors in
 * flight (SCM_RIGHTS): frame @seq of DIR/sk-INO.data (0: the first), sent
 * again at restore with the files @files (indices in tree.files) in order.
 */
struct tree_skq {
	int seq;
	int nfds;
	int *files;
	int fromlen;		/* datagram: its sender's name as recvfrom gives it (0: unnamed) */
	unsigned char from[TREE_SK_ADDR];
};

#define SKQ_MAX_FDS	253	/* per message: the kernel's SCM_MAX_FD */
#define SKQ_MAX_TOTAL	4096	/* in flight in the whole tree */

/*
 * sk-queue.c, dump: the fds @fds (@n, received by the peek into imgcr)
 * of frame @seq of socket @s's queue, kept until sk_inflight_resolve;
 * FD_DESCRIBED, or FD_REFUSED (p->why; @fds closed).
 */
int skq_dump_add(struct fd_parms *p, const struct tree_sk *s, int seq, int *fds, int n);
/* sk-queue.c, dump: frame @seq of unix datagram socket @s was sent from the name @a (@len bytes) */
void skq_from_add(struct tree_sk *s, int seq, const void *a, int len);
/* sk-queue.c: frame @seq's record, made if none */
struct tree_skq *skq_get(struct tree_sk *s, int seq);
/*
 * sk-queue.c, dump, once every task is described: each fd in flight
 * matched (kcmp) with a file of the tree or described as a new one by
 * c->describe (which may find more in flight); 0, or -1 (printed).
 */
int sk_inflight_resolve(struct fd_dump *c);
/* sk-queue.c, dump, at the end: the fds in flight imgcr held closed */
void skq_dump_free(void);
/* sk-queue.c, restore: frame @seq of socket @s carries fds: its record, or NULL */
const struct tree_skq *skq_find(const struct tree_sk *s, int seq);
/*
 * sk-queue.c, restore: file @file open in the restorer (the same
 * description the tasks get: opened early, kept for open_files); the fd
 * (owned by the driver), or -1 (printed).
 */
int skq_file_fd(struct fd_restore *r, int file);
/* sk-queue.c: restore, when every file is open: what skq_file_fd opened and was not used */
void skq_restore_free(struct fd_restore *r);
/* sk-queue.c: the tree file's skq records of socket @s; and their reader */
void skq_records_write(FILE *f, const struct tree_sk *s);
const char *skq_record_read(struct tree *t, struct rec *r);

/* sk-opts.c: a "skopt" record's NAME and VALUE */
const char *sk_opt_name(int idx);
int sk_xopt_format(const struct tree_skopt *x, char *buf, size_t size);	/* 0, -1: too long */
int sk_xopt_parse(struct tree_sk *s, const char *name, const char *val);	/* 0, -1: bad */
struct tree_sk *tree_sk_find(const struct tree *t, unsigned long ino);
struct tree_sk *tree_sk_add(struct tree *t, unsigned long ino);

/*
 * The Internet checksum (RFC 1071) of the raw packets sk-inet.c (UDP) and
 * sk-tcp.c send: csum_add sums @len bytes at @p as big-endian 16-bit words
 * into @sum; csum_fold folds the sum and returns its complement (host order).
 */
uint32_t csum_add(uint32_t sum, const void *p, size_t len);
uint16_t csum_fold(uint32_t sum);

/* The nft command (PATH, then /usr/sbin, /sbin...) into @path: 0, or -1 if none. */
int nft_path(char *path, size_t size);

#endif
