// SPDX-License-Identifier: GPL-2.0
/*
 * imgcr-criu: CRIU's service protocol for container runtimes.
 *
 *   imgcr-criu swrk FD    answer criu_req messages on the SOCK_SEQPACKET
 *                         socket FD (runc, containerd, go-criu, libcriu)
 *   imgcr-criu check      imgcr check ("Looks good." when ready)
 *   imgcr-criu --version  "Version: 3.17.1", the CRIU it stands in for
 *
 * One criu_req per message, one criu_resp per answer (CRIU's images/rpc.proto,
 * our own rpc.proto).  As CRIU's swrk: one request per process, except that
 * VERSION, CHECK and FEATURE_CHECK with keep_open wait for another.
 * DUMP and RESTORE run imgcr's dump and restore in this process (libimgcr.a):
 * the restore's root task must be our parent's child (rst_sibling,
 * CLONE_PARENT) and our parent must be able to wait for it.  NOTIFY round
 * trips (notify_scripts) at CRIU's points (../notify.h): we send
 * criu_resp{NOTIFY, notify{script, pid}}, the client answers
 * criu_req{NOTIFY, notify_success}; false fails the dump or restore.
 * A failure answers success=false, cr_errno and cr_errmsg: imgcr's first
 * error message; imgcr code that exit()s is answered from an atexit handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "commands.h"
#include "criu.h"
#include "log.h"
#include "notify.h"
#include "ns.h"
#include "sockets.h"
#include "tty.h"
#include "version.h"

#define REQ_SIZE_MAX	(1 << 20)

static struct {
	int sk;
	pid_t self, peer;
	int type;		/* the DUMP or RESTORE being served, or -1 */
	int answered;
	int notify;		/* notify_scripts */
	int err;		/* cr_errno of the failure */
	pid_t restored;		/* post-restore's pid */
} S = { .sk = -1, .type = -1 };

/* @r, with the fd @fd (SCM_RIGHTS) if >= 0: CRIU's orphan-pts-master */
static int send_resp_fd(CriuResp *r, int fd)
{
	size_t len = criu_resp__get_packed_size(r);
	uint8_t *buf = malloc(len ? len : 1);
	int ret;

	if (!buf) {
		pr_err("out of memory");
		return -1;
	}
	criu_resp__pack(r, buf);
	ret = fd_send(S.sk, buf, len, fd);
	free(buf);
	if (ret)
		pr_perror("cannot send the answer to the client");
	return ret;
}

static int send_resp(CriuResp *r)
{
	return send_resp_fd(r, -1);
}

/* One message: 0 and *@req, 1 at EOF, -1 (printed, *@err set) if malformed. */
static int recv_req(CriuReq **req, int *err)
{
	ssize_t len, n;
	uint8_t *buf;

	*req = NULL;
	do
		len = recv(S.sk, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (len < 0 && errno == EINTR);
	if (len < 0) {
		pr_perror("cannot read a request");
		*err = errno;
		return -1;
	}
	if (len == 0) {
		/* EOF (or an empty message, as CRIU: the client is gone) */
		recv(S.sk, NULL, 0, 0);
		return 1;
	}
	if (len > REQ_SIZE_MAX) {
		recv(S.sk, NULL, 0, MSG_TRUNC);
		pr_err("a request of %zd bytes: more than %d", len, REQ_SIZE_MAX);
		*err = E2BIG;
		return -1;
	}
	buf = malloc(len);
	if (!buf) {
		recv(S.sk, NULL, 0, MSG_TRUNC);
		pr_err("out of memory");
		*err = ENOMEM;
		return -1;
	}
	n = recv(S.sk, buf, len, MSG_TRUNC);
	if (n != len) {
		pr_perror("cannot read a request of %zd bytes", len);
		free(buf);
		*err = EIO;
		return -1;
	}
	*req = criu_req__unpack(NULL, len, buf);
	free(buf);
	if (!*req) {
		pr_err("a request of %zd bytes that is not a criu_req message", len);
		*err = EBADMSG;
		return -1;
	}
	return 0;
}

static void set_err(CriuResp *r, int err)
{
	const char *m = log_first_error();

	r->has_success = 1;
	r->success = 0;
	r->has_cr_errno = 1;
	r->cr_errno = err ? err : ECANCELED;
	r->cr_errmsg = (char *)(*m ? m : "failed (no message)");
}

static int answer_error(int type, int err)
{
	CriuResp r = CRIU_RESP__INIT;

	r.has_type = 1;
	r.type = type >= 0 && type < REQ_NR ? type : REQ_EMPTY;
	set_err(&r, err);
	return send_resp(&r);
}

/* DUMP/RESTORE's last answer; restored: the restore's root pid */
static int answer_op(int ok)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuDumpResp d = CRIU_DUMP_RESP__INIT;
	CriuRestoreResp rs = CRIU_RESTORE_RESP__INIT;

	S.answered = 1;
	r.has_type = 1;
	r.type = S.type;
	if (!ok) {
		set_err(&r, S.err);
	} else {
		r.has_success = 1;
		r.success = 1;
	}
	if (S.type == REQ_DUMP) {
		d.has_restored = 1;
		d.restored = 0;
		r.dump = &d;
	} else {
		rs.has_pid = 1;
		rs.pid = ok ? S.restored : -1;
		r.restore = &rs;
	}
	return send_resp(&r);
}

/* imgcr code called exit() during a DUMP or RESTORE: the client gets its answer */
static void at_exit(void)
{
	if (getpid() != S.self || S.type < 0 || S.answered)
		return;
	if (!*log_first_error())
		pr_err("%s: imgcr exited before it ended", req_names[S.type]);
	answer_op(0);
}

/* a NOTIFY round trip, with the fd @fd if >= 0 */
static int rpc_notify_fd(const char *script, pid_t pid, int fd)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuNotify n = CRIU_NOTIFY__INIT;
	CriuReq *req;
	int ret, err;

	pr_debug("notify %s (pid %d)", script, (int)pid);
	r.has_type = 1;
	r.type = REQ_NOTIFY;
	r.has_success = 1;
	r.success = 1;
	n.script = (char *)script;
	/* as CRIU: a pid with these two only */
	if (!strcmp(script, "setup-namespaces") || !strcmp(script, "post-restore")) {
		n.has_pid = 1;
		n.pid = pid;
	}
	r.notify = &n;
	if (send_resp_fd(&r, fd)) {
		S.err = EPIPE;
		return -1;
	}
	ret = recv_req(&req, &err);
	if (ret) {
		pr_err("notify %s: no answer from the client%s", script, ret > 0 ? " (it closed the socket)" : "");
		S.err = ret > 0 ? EPIPE : err;
		return -1;
	}
	if (!req->has_type || req->type != REQ_NOTIFY || !req->has_notify_success ||
	    !req->notify_success) {
		if (req->has_type && req->type != REQ_NOTIFY)
			pr_err("notify %s: the client answered with a request of type %d, not NOTIFY", script, req->type);
		else
			pr_err("notify %s: the client reported a failure", script);
		criu_req__free_unpacked(req, NULL);
		S.err = ECANCELED;
		return -1;
	}
	criu_req__free_unpacked(req, NULL);
	return 0;
}

/* notify_hook (../notify.h) */
static int rpc_notify(const char *script, pid_t pid)
{
	if (!strcmp(script, "post-restore"))
		S.restored = pid;
	if (!S.notify)
		return 0;
	return rpc_notify_fd(script, pid, -1);
}

/*
 * orphan_master_hook (../notify.h): the new pty master of the tree's
 * console, as CRIU sends it: NOTIFY "orphan-pts-master" with the fd
 * (runc passes it on to its --console-socket).  Sent even without
 * notify_scripts, as CRIU does (its RPC socket is the only way out).
 */
static int rpc_orphan_master(int fd)
{
	return rpc_notify_fd("orphan-pts-master", 0, fd);
}

/* The client's credentials: 0 and S.peer, or -1 (printed, *@err) */
static int peer_ok(int *err)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(S.sk, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		pr_perror("SO_PEERCRED");
		*err = errno;
		return -1;
	}
	if (cr.uid != 0 && cr.uid != geteuid()) {
		pr_err("the client runs as uid %u, imgcr-criu as uid %u: refused", cr.uid, geteuid());
		*err = EACCES;
		return -1;
	}
	S.peer = cr.pid;
	return 0;
}

/*
 * PRE_DUMP (runc checkpoint --pre-dump): imgcr has no incremental images.
 * The request is checked as a DUMP's would be (its options, the pid's
 * root, mounts, namespace), and the images directory gets only the mark
 * PREDUMP_MARK ("imgcr-criu pre-dump pid N"): the tree is not touched and
 * nothing of it is kept.  The final DUMP naming this directory as its
 * parent_img is an imgcr dump --live, whose passes copy the memory while
 * the tree runs (opts.c): that, not the pre-dump, shortens the freeze.
 */
static int serve_predump(CriuReq *req)
{
	CriuResp r = CRIU_RESP__INIT;
	struct criu_args a;
	char mark[128];
	int err = 0, fd, ok = 0, type = req->type;

	if (!peer_ok(&err) && !opts_to_args(req->opts, REQ_DUMP, S.peer, &a, &err)) {
		if (kill(req->opts->pid, 0)) {
			pr_perror("%s: pid %d", req_names[type], req->opts->pid);
			err = ESRCH;
		} else {
			snprintf(mark, sizeof(mark), "imgcr-criu pre-dump pid %d\n", req->opts->pid);
			fd = openat(a.images_fd, PREDUMP_MARK,
				    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 || write(fd, mark, strlen(mark)) != (ssize_t)strlen(mark)) {
				pr_perror("%s: cannot write %s into the images directory", req_names[type], PREDUMP_MARK);
				err = EIO;
			} else {
				ok = 1;
				pr_info("%s of pid %d: nothing dumped (imgcr has no incremental images); %s marks the directory for the final dump's parent_img, which copies the memory while the tree runs (imgcr dump --live)",
					req_names[type], req->opts->pid, PREDUMP_MARK);
			}
			if (fd >= 0)
				close(fd);
		}
		args_free(&a);
	}
	if (!ok)
		return answer_error(type, err);
	r.has_type = 1;
	r.type = type;
	r.has_success = 1;
	r.success = 1;
	return send_resp(&r);
}

/*
 * INVENTORY_MARK into the images directory, before the dump touches the
 * tree (a directory we cannot write refuses it); a failed dump removes it.
 */
static int inventory_mark(int dirfd)
{
	size_t n = strlen(INVENTORY_TEXT);
	int fd, ok;

	fd = openat(dirfd, INVENTORY_MARK, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, INVENTORY_TEXT, n) == (ssize_t)n;
	if (!ok)
		pr_perror("DUMP: cannot write %s into the images directory", INVENTORY_MARK);
	if (fd >= 0 && close(fd) && ok) {
		pr_perror("DUMP: cannot write %s into the images directory", INVENTORY_MARK);
		ok = 0;
	}
	return ok ? 0 : 1;
}

/* DUMP or RESTORE, in this process; the answer is sent.  0 if it succeeded. */
static int serve_op(CriuReq *req)
{
	struct criu_args a;
	int ret, err;

	S.type = req->type;
	S.answered = 0;
	if (peer_ok(&err)) {
		S.err = err;
		return answer_op(0), -1;
	}
	if (opts_to_args(req->opts, req->type, S.peer, &a, &err)) {
		args_free(&a);
		S.err = err;
		return answer_op(0), -1;
	}
	S.notify = a.notify;
	restore_sibling = a.sibling;
	tty_orphan_master = req->type == REQ_DUMP && a.orphan_pts;
	orphan_master_hook = req->type == REQ_RESTORE && a.orphan_pts ? rpc_orphan_master : NULL;
	cg_caller_base = a.caller_cgroups;
	notify_hook = rpc_notify;
	for (int i = 0; i < a.argc; i++)
		pr_debug("argv[%d] %s", i, a.argv[i]);
	optind = 0;
	if (req->type == REQ_DUMP) {
		ret = inventory_mark(a.images_fd);
		if (!ret)
			ret = cmd_dump(a.argc, a.argv);
		if (ret)
			unlinkat(a.images_fd, INVENTORY_MARK, 0);
	} else {
		ret = cmd_restore(a.argc, a.argv);
	}
	if (ret && !*log_first_error())
		pr_err("%s failed (imgcr %s exited with %d)", req_names[req->type], a.argv[0], ret);
	if (!ret && req->type == REQ_RESTORE && S.restored <= 0) {
		pr_err("RESTORE: the restored root's pid is not known");
		ret = 1;
	}
	args_free(&a);
	notify_hook = NULL;
	answer_op(!ret);
	return ret ? -1 : 0;
}

static int serve_version(void)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuVersion v = CRIU_VERSION__INIT;

	r.has_type = 1;
	r.type = REQ_VERSION;
	r.has_success = 1;
	r.success = 1;
	/* no gitid: go-criu would count it as the next minor release */
	v.has_major_number = v.has_minor_number = v.has_sublevel = 1;
	v.major_number = CRIU_COMPAT_MAJOR;
	v.minor_number = CRIU_COMPAT_MINOR;
	v.sublevel = CRIU_COMPAT_SUBLEVEL;
	v.name = "imgcr";
	r.version = &v;
	return send_resp(&r);
}

static int serve_features(void)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;

	r.has_type = 1;
	r.type = REQ_FEATURE_CHECK;
	r.has_success = 1;
	r.success = 1;
	f.has_mem_track = f.has_lazy_pages = f.has_pidfd_store = 1;
	/* PRE_DUMP + parent_img: imgcr dump --live (serve_predump); the others false */
	f.mem_track = 1;
	r.features = &f;
	return send_resp(&r);
}

/* imgcr check in a child, its report read back: 0 if ready */
static int run_check(char *out, size_t size)
{
	int p[2], st;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	out[0] = 0;
	if (pipe2(p, O_CLOEXEC)) {
		pr_perror("pipe");
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pr_perror("fork");
		return -1;
	}
	if (pid == 0) {
		char *argv[] = { "check", NULL };

		dup2(p[1], 1);
		int r = cmd_check(1, argv);

		fflush(stdout);
		_exit(r ? 1 : 0);
	}
	close(p[1]);
	while (len + 1 < size && (n = read(p[0], out + len, size - len - 1)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += n;
	}
	out[len] = 0;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int serve_check(void)
{
	CriuResp r = CRIU_RESP__INIT;
	char out[4096], *l;

	r.has_type = 1;
	r.type = REQ_CHECK;
	if (!run_check(out, sizeof(out))) {
		r.has_success = 1;
		r.success = 1;
		return send_resp(&r);
	}
	/* the report's lines, on one line */
	for (l = out + strlen(out); l > out && (l[-1] == '\n' || l[-1] == ' '); l--)
		l[-1] = 0;
	for (l = out; *l; l++)
		if (*l == '\n')
			*l = ';';
	pr_err("check: not ready: %s", out);
	return answer_error(REQ_CHECK, ENOTSUP);
}

static int swrk(int sk)
{
	CriuReq *req;
	int ret, err, keep, type;
	struct stat st;
	int v;
	socklen_t vl = sizeof(v);

	if (fstat(sk, &st) || !S_ISSOCK(st.st_mode) ||
	    getsockopt(sk, SOL_SOCKET, SO_TYPE, &v, &vl) || v != SOCK_SEQPACKET) {
		pr_err("swrk: fd %d is not a SOCK_SEQPACKET socket", sk);
		return 1;
	}
	S.sk = sk;
	S.self = getpid();
	fcntl(sk, F_SETFD, FD_CLOEXEC);
	atexit(at_exit);
	for (;;) {
		ret = recv_req(&req, &err);
		if (ret > 0)
			return 0;	/* the client is done */
		if (ret < 0) {
			answer_error(REQ_EMPTY, err);
			return 1;
		}
		type = req->has_type ? req->type : -1;
		keep = req->has_keep_open && req->keep_open;
		ret = 0;
		if (req->base.n_unknown_fields) {
			pr_err("field %u of criu_req is not known to imgcr-criu", req->base.unknown_fields[0].tag);
			ret = answer_error(type, EOPNOTSUPP) ? -1 : 1;
		} else if (keep && type != REQ_VERSION && type != REQ_CHECK && type != REQ_FEATURE_CHECK) {
			pr_err("keep_open: only with VERSION, CHECK and FEATURE_CHECK, not with %s",
			       type >= 0 && type < REQ_NR ? req_names[type] : "an unknown request");
			ret = answer_error(type, EINVAL) ? -1 : 1;
		} else {
			switch (type) {
			case REQ_VERSION:
				ret = serve_version();
				break;
			case REQ_FEATURE_CHECK:
				ret = serve_features();
				break;
			case REQ_CHECK:
				ret = serve_check();
				break;
			case REQ_DUMP:
			case REQ_RESTORE:
				ret = serve_op(req);
				criu_req__free_unpacked(req, NULL);
				return ret ? 1 : 0;
			case REQ_PRE_DUMP:
				/* as CRIU: then another PRE_DUMP or the DUMP, or the client leaves */
				keep = 1;
				/* fall through */
			case REQ_SINGLE_PRE_DUMP:
				if (req->opts && req->opts->has_pid)
					ret = serve_predump(req);
				else
					ret = (pr_err("%s: no pid", req_names[type]), answer_error(type, EINVAL));
				break;
			case REQ_PAGE_SERVER:
			case REQ_PAGE_SERVER_CHLD:
				pr_err("%s is not supported: imgcr has no page server", req_names[type]);
				ret = answer_error(type, EOPNOTSUPP);
				break;
			case REQ_CPUINFO_DUMP:
			case REQ_CPUINFO_CHECK:
				pr_err("%s is not supported: imgcr checks the CPU features an image needs when it runs", req_names[type]);
				ret = answer_error(type, EOPNOTSUPP);
				break;
			case REQ_WAIT_PID:
				pr_err("WAIT_PID is not supported");
				ret = answer_error(type, EOPNOTSUPP);
				break;
			case REQ_NOTIFY:
				pr_err("NOTIFY: an answer to no notification");
				ret = answer_error(type, EINVAL);
				break;
			case -1:
				pr_err("a request without a type");
				ret = answer_error(REQ_EMPTY, EINVAL);
				break;
			default:
				pr_err("request type %d is not known to imgcr-criu", type);
				ret = answer_error(REQ_EMPTY, EOPNOTSUPP);
				break;
			}
		}
		criu_req__free_unpacked(req, NULL);
		if (ret < 0)
			return 1;
		if (!keep)
			return 0;
	}
}

/* libimgcr's commands report bad options through these (imgcr.c in imgcr) */
int usage_error(const char *why)
{
	pr_err("%s", why);
	return 2;
}

int command_help(const char *name)
{
	printf("imgcr-criu runs imgcr %s for CRIU's RPC; see imgcr %s --help\n", name, name);
	return 0;
}

int option_error(const char *name, int ret, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pr_err("%s: bad option (%c) in imgcr-criu's command line", name, ret);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: imgcr-criu swrk FD      answer CRIU's RPC (criu_req/criu_resp) on the\n"
		"                               SOCK_SEQPACKET socket FD, as criu swrk does\n"
		"       imgcr-criu check        imgcr check; \"Looks good.\" when ready\n"
		"       imgcr-criu -V, --version    the CRIU version it answers as, and imgcr's\n"
		"       imgcr-criu -h, --help       this text\n"
		"Container runtimes start it as CRIU: runc --criu /usr/bin/imgcr-criu, or a\n"
		"\"criu\" link to it first in PATH.  See imgcr-criu(8).\n");
}

int main(int argc, char **argv)
{
	char *end;
	long fd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("Version: %d.%d.%d\n", CRIU_COMPAT_MAJOR, CRIU_COMPAT_MINOR, CRIU_COMPAT_SUBLEVEL);
		printf("imgcr-criu: imgcr %s, answering CRIU's RPC\n", IMGCR_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "check")) {
		int r;

		optind = 0;
		r = cmd_check(argc - 1, argv + 1);
		if (!r)
			printf("Looks good.\n");
		return r;
	}
	if (!strcmp(argv[1], "swrk")) {
		if (argc != 3) {
			pr_err("usage: imgcr-criu swrk FD");
			return 2;
		}
		fd = strtol(argv[2], &end, 10);
		if (*end || end == argv[2] || fd < 0 || fd > INT_MAX) {
			pr_err("swrk: %s is not an fd number", argv[2]);
			return 2;
		}
		return swrk((int)fd);
	}
	pr_err("imgcr-criu %s: not supported: imgcr-criu only answers CRIU's RPC (swrk); use imgcr dump or imgcr restore", argv[1]);
	usage(stderr);
	return 2;
}
