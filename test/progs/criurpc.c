/*
 * criurpc: a CRIU RPC client (as runc and go-criu speak it) for
 * imgcr-criu, linked with protobuf-c and the code generated from
 * userspace/criu/rpc.proto.  Each mode starts "imgcr-criu swrk 3" on a
 * SOCK_SEQPACKET socketpair (a new one per DUMP or RESTORE, as runc) and
 * prints "ok ..." lines, or "FAIL ..." and exits 1:
 *
 *   criurpc BIN basic             VERSION, CHECK (keep_open), FEATURE_CHECK
 *   criurpc BIN probe             the same, CHECK may answer "not ready"
 *   criurpc BIN dump PID DIR [leave] [no=SCRIPT]
 *                                 DUMP with notify_scripts: prints each
 *                                 script as "notify NAME PID"; no=SCRIPT
 *                                 answers false to SCRIPT (expects failure)
 *   criurpc BIN restore DIR       RESTORE, rst_sibling, notify_scripts: the
 *                                 root must be our child; then waits for it
 *                                 and prints its exit status
 *   criurpc BIN bad PID DIR       unsupported and malformed requests, each
 *                                 answered with success=false and a message
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpc.pb-c.h"

enum { DUMP = 1, RESTORE = 2, CHECK = 3, PRE_DUMP = 4, PAGE_SERVER = 5, NOTIFY = 6,
       FEATURE_CHECK = 9, VERSION = 10 };

static const char *bin;
static int sk = -1;
static pid_t srv;

#define FAIL(...) do { printf("FAIL " __VA_ARGS__); printf("\n"); exit(1); } while (0)

static void start(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		FAIL("socketpair: %s", strerror(errno));
	fflush(stdout);
	srv = fork();
	if (srv < 0)
		FAIL("fork: %s", strerror(errno));
	if (srv == 0) {
		dup2(sv[1], 3);		/* dup2 clears close-on-exec */
		execl(bin, bin, "swrk", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	sk = sv[0];
}

/* the server's exit status after we closed our end */
static int finish(void)
{
	int st;

	close(sk);
	sk = -1;
	if (waitpid(srv, &st, 0) != srv)
		FAIL("waitpid imgcr-criu: %s", strerror(errno));
	if (WIFSIGNALED(st))
		FAIL("imgcr-criu killed by signal %d", WTERMSIG(st));
	return WEXITSTATUS(st);
}

static void send_raw(const void *buf, size_t len)
{
	if (send(sk, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		FAIL("send: %s", strerror(errno));
}

static void send_req(CriuReq *r)
{
	size_t len = criu_req__get_packed_size(r);
	uint8_t *buf = malloc(len + 1);

	criu_req__pack(r, buf);
	send_raw(buf, len);
	free(buf);
}

static CriuResp *recv_resp(void)
{
	static uint8_t buf[40960];	/* runc reads 10 pages */
	ssize_t n = recv(sk, buf, sizeof(buf), 0);
	CriuResp *r;

	if (n <= 0)
		FAIL("no answer from imgcr-criu (%s)", n ? strerror(errno) : "EOF");
	r = criu_resp__unpack(NULL, n, buf);
	if (!r)
		FAIL("an answer of %zd bytes that is not a criu_resp", n);
	if (!r->has_type || !r->has_success)
		FAIL("an answer without type or success (required in CRIU's rpc.proto)");
	return r;
}

static void answer_notify(int ok)
{
	CriuReq r = CRIU_REQ__INIT;

	r.has_type = 1;
	r.type = NOTIFY;
	r.has_notify_success = 1;
	r.notify_success = ok;
	send_req(&r);
}

static void basic(int check)
{
	CriuReq r = CRIU_REQ__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;
	CriuResp *a;

	start();
	r.has_type = r.has_keep_open = 1;
	r.type = VERSION;
	r.keep_open = 1;
	send_req(&r);
	a = recv_resp();
	if (a->type != VERSION || !a->success || !a->version)
		FAIL("VERSION: type %d success %d", a->type, a->success);
	if (a->version->major_number * 10000 + a->version->minor_number * 100 +
	    a->version->sublevel != 31701 || a->version->gitid || !a->version->name ||
	    strcmp(a->version->name, "imgcr"))
		FAIL("VERSION: %d.%d.%d gitid %s name %s", a->version->major_number,
		     a->version->minor_number, a->version->sublevel,
		     a->version->gitid ? a->version->gitid : "-", a->version->name ? a->version->name : "-");
	printf("ok version %d.%d.%d %s\n", a->version->major_number, a->version->minor_number,
	       a->version->sublevel, a->version->name);
	criu_resp__free_unpacked(a, NULL);

	r.type = CHECK;
	send_req(&r);
	a = recv_resp();
	if (check && (a->type != CHECK || !a->success))
		FAIL("CHECK: type %d success %d: %s", a->type, a->success, a->cr_errmsg ? a->cr_errmsg : "");
	if (a->type != CHECK || (!a->success && (!a->cr_errmsg || !strstr(a->cr_errmsg, "not ready"))))
		FAIL("CHECK: type %d success %d: %s", a->type, a->success, a->cr_errmsg ? a->cr_errmsg : "");
	printf("ok check%s\n", a->success ? "" : " (not ready)");
	criu_resp__free_unpacked(a, NULL);

	r.type = FEATURE_CHECK;
	r.has_keep_open = 0;
	f.has_mem_track = f.has_lazy_pages = f.has_pidfd_store = 1;
	f.mem_track = f.lazy_pages = f.pidfd_store = 1;
	r.features = &f;
	send_req(&r);
	a = recv_resp();
	if (a->type != FEATURE_CHECK || !a->success || !a->features ||
	    !a->features->has_mem_track || !a->features->mem_track ||
	    !a->features->has_lazy_pages || a->features->lazy_pages ||
	    !a->features->has_pidfd_store || a->features->pidfd_store)
		FAIL("FEATURE_CHECK: not mem_track true (pre-dump: a mark, then dump --live), the others false");
	printf("ok features mem_track=1 lazy_pages=0 pidfd_store=0\n");
	criu_resp__free_unpacked(a, NULL);
	/* no keep_open: the server ends, with status 0 */
	if (finish())
		FAIL("imgcr-criu exited with an error after FEATURE_CHECK");
	printf("ok server ended\n");
}

/*
 * One DUMP or RESTORE with notify_scripts: the notifications in order
 * (answered true, false for @no), then the final answer, returned.
 */
static CriuResp *operation(CriuReq *r, const char *no, char *seq, size_t size)
{
	CriuResp *a;

	seq[0] = 0;
	start();
	send_req(r);
	for (;;) {
		a = recv_resp();
		if (a->type != NOTIFY)
			return a;
		if (!a->success || !a->notify || !a->notify->script)
			FAIL("a NOTIFY without a script");
		printf("notify %s %d\n", a->notify->script, a->notify->has_pid ? a->notify->pid : 0);
		if (seq[0])
			strncat(seq, " ", size - strlen(seq) - 1);
		strncat(seq, a->notify->script, size - strlen(seq) - 1);
		answer_notify(!no || strcmp(no, a->notify->script));
		criu_resp__free_unpacked(a, NULL);
	}
}

static int open_dir(const char *d)
{
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", d, strerror(errno));
	return fd;
}

static void dump(pid_t pid, const char *dir, int leave, const char *no)
{
	CriuReq r = CRIU_REQ__INIT;
	CriuOpts o = CRIU_OPTS__INIT;
	CriuResp *a;
	char seq[512];
	const char *want = "pre-dump post-dump";
	int st;

	mkdir(dir, 0700);
	r.has_type = 1;
	r.type = DUMP;
	r.opts = &o;
	o.has_images_dir_fd = o.has_pid = o.has_log_level = o.has_notify_scripts = 1;
	o.images_dir_fd = open_dir(dir);
	o.pid = pid;
	o.log_level = 4;
	o.log_file = "dump.log";
	o.notify_scripts = 1;
	o.has_tcp_established = o.has_file_locks = 1;
	o.tcp_established = o.file_locks = 1;
	o.has_leave_running = leave;
	o.leave_running = leave;
	a = operation(&r, no, seq, sizeof(seq));
	st = finish();
	if (a->type != DUMP)
		FAIL("DUMP answered with type %d", a->type);
	if (no) {
		if (a->success || st == 0)
			FAIL("DUMP succeeded though the client refused %s", no);
		if (!a->cr_errmsg || !strstr(a->cr_errmsg, no))
			FAIL("DUMP refused at %s: message '%s' does not name it", no, a->cr_errmsg ? a->cr_errmsg : "");
		printf("ok dump refused at %s: %s (errno %d)\n", no, a->cr_errmsg, a->cr_errno);
		return;
	}
	if (!a->success || st)
		FAIL("DUMP: %s (errno %d, imgcr-criu exit %d)", a->cr_errmsg ? a->cr_errmsg : "no message", a->cr_errno, st);
	if (strcmp(seq, want))
		FAIL("DUMP notifications '%s', expected '%s'", seq, want);
	if (!a->dump || !a->dump->has_restored || a->dump->restored)
		FAIL("DUMP: no dump{restored=false} in the answer");
	printf("ok dump %d: %s\n", pid, seq);
}

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %d", &ppid);
	fclose(f);
	return ppid;
}

static void restore(const char *dir)
{
	CriuReq r = CRIU_REQ__INIT;
	CriuOpts o = CRIU_OPTS__INIT;
	CriuResp *a;
	char seq[512];
	const char *want = "pre-restore post-restore pre-resume post-resume";
	int st;
	pid_t pid, w;

	r.has_type = 1;
	r.type = RESTORE;
	r.opts = &o;
	o.has_images_dir_fd = o.has_log_level = o.has_notify_scripts = o.has_rst_sibling = 1;
	o.images_dir_fd = open_dir(dir);
	o.log_level = 4;
	o.log_file = "restore.log";
	o.notify_scripts = o.rst_sibling = 1;
	a = operation(&r, NULL, seq, sizeof(seq));
	st = finish();
	if (a->type != RESTORE || !a->success || st)
		FAIL("RESTORE: %s (errno %d, imgcr-criu exit %d)", a->cr_errmsg ? a->cr_errmsg : "no message", a->cr_errno, st);
	if (strcmp(seq, want))
		FAIL("RESTORE notifications '%s', expected '%s'", seq, want);
	if (!a->restore || !a->restore->has_pid || a->restore->pid <= 0)
		FAIL("RESTORE: no pid in the answer");
	pid = a->restore->pid;
	if (ppid_of(pid) != getpid())
		FAIL("restored %d: its parent is %d, not the client %d", pid, ppid_of(pid), getpid());
	printf("ok restored %d parent %d: %s\n", pid, getpid(), seq);
	fflush(stdout);
	/* ours to wait for: its end, as any child's */
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w != pid)
		FAIL("waitpid %d: %s", pid, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("restored %d ended with status 0x%x", pid, st);
	printf("ok reaped %d exit 0\n", pid);
}

/* one request expected to fail with a message containing @want */
static void refused(const char *name, CriuReq *r, const void *raw, size_t rawlen, const char *want)
{
	CriuResp *a;
	int st;

	start();
	if (raw)
		send_raw(raw, rawlen);
	else
		send_req(r);
	a = recv_resp();
	st = finish();
	if (a->success)
		FAIL("%s: success", name);
	if (!a->cr_errmsg || !strstr(a->cr_errmsg, want))
		FAIL("%s: message '%s', expected it to contain '%s'", name, a->cr_errmsg ? a->cr_errmsg : "", want);
	printf("ok refused %s: %s (errno %d, exit %d)\n", name, a->cr_errmsg, a->cr_errno, st);
	criu_resp__free_unpacked(a, NULL);
}

static void bad(pid_t pid, const char *dir)
{
	CriuReq r = CRIU_REQ__INIT;
	CriuOpts o = CRIU_OPTS__INIT;
	CriuPageServerInfo ps = CRIU_PAGE_SERVER_INFO__INIT;
	ProtobufCMessageUnknownField unk;
	uint8_t one = 1;
	int fd = open_dir(dir), file;
	char path[4200];

	r.has_type = 1;
	r.opts = &o;
	o.has_images_dir_fd = o.has_pid = 1;
	o.images_dir_fd = fd;
	o.pid = pid;

	/* (a PRE_DUMP of a pid only marks the directory: t_runc runc-predump) */
	r.type = PRE_DUMP;
	o.has_pid = 0;
	refused("pre-dump-nopid", &r, NULL, 0, "PRE_DUMP: no pid");
	o.has_pid = 1;
	/* a pre-dump after a parent that is none of imgcr-criu's pre-dumps */
	o.parent_img = "../parent";
	refused("pre-dump-parent", &r, NULL, 0, "parent_img ../parent");
	o.parent_img = NULL;
	r.type = PAGE_SERVER;
	refused("page-server", &r, NULL, 0, "PAGE_SERVER is not supported");
	r.type = 99;
	refused("unknown-type", &r, NULL, 0, "request type 99");
	r.type = NOTIFY;
	refused("stray-notify", &r, NULL, 0, "NOTIFY");

	r.type = DUMP;
	o.has_lazy_pages = o.lazy_pages = 1;
	refused("lazy-pages", &r, NULL, 0, "lazy_pages");
	o.has_lazy_pages = o.lazy_pages = 0;
	o.parent_img = "../parent";
	refused("parent-img", &r, NULL, 0, "parent_img ../parent");
	o.parent_img = NULL;
	o.ps = &ps;
	refused("ps", &r, NULL, 0, "page server");
	o.ps = NULL;
	o.lsm_profile = "apparmor:x";
	refused("lsm-profile", &r, NULL, 0, "lsm_profile");
	o.lsm_profile = NULL;
	o.root = "/some/rootfs";
	refused("root", &r, NULL, 0, "root");
	o.root = NULL;
	/* net and pid: only the network namespace may be empty */
	o.has_empty_ns = 1;
	o.empty_ns = 0x60000000;
	refused("empty-ns", &r, NULL, 0, "empty_ns 0x60000000");
	o.has_empty_ns = 0;
	o.empty_ns = 0;
	/* inherit_fd: only at RESTORE, and only pipes */
	{
		InheritFd ifd = INHERIT_FD__INIT, *ifds[1] = { &ifd };

		ifd.key = "pipe:[1234]";
		ifd.has_fd = 1;
		ifd.fd = 1;
		o.n_inherit_fd = 1;
		o.inherit_fd = ifds;
		refused("inherit-fd-dump", &r, NULL, 0, "only at RESTORE");
		r.type = RESTORE;
		ifd.key = "extRootNetNS";
		refused("inherit-fd-netns", &r, NULL, 0, "inherit_fd extRootNetNS");
		ifd.key = "pipe:[1234]";
		ifd.fd = 999;
		refused("inherit-fd-closed", &r, NULL, 0, "fd 999 is not open");
		r.type = DUMP;
		o.n_inherit_fd = 0;
		o.inherit_fd = NULL;
	}
	/* a field imgcr-criu's rpc.proto does not name (number 200, varint 1) */
	unk.tag = 200;
	unk.wire_type = PROTOBUF_C_WIRE_TYPE_VARINT;
	unk.len = 1;
	unk.data = &one;
	o.base.n_unknown_fields = 1;
	o.base.unknown_fields = &unk;
	refused("unknown-option", &r, NULL, 0, "field 200");
	o.base.n_unknown_fields = 0;
	o.base.unknown_fields = NULL;
	/* the same in criu_req itself */
	r.base.n_unknown_fields = 1;
	r.base.unknown_fields = &unk;
	refused("unknown-req-field", &r, NULL, 0, "field 200");
	r.base.n_unknown_fields = 0;
	r.base.unknown_fields = NULL;
	o.has_pid = 0;
	refused("no-pid", &r, NULL, 0, "no pid");
	o.has_pid = 1;
	/* images_dir_fd: a regular file, then an fd we do not have */
	snprintf(path, sizeof(path), "%s/notadir", dir);
	file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	o.images_dir_fd = file;
	refused("images-not-dir", &r, NULL, 0, "not a directory");
	o.images_dir_fd = 1000;
	refused("images-bad-fd", &r, NULL, 0, "images_dir_fd 1000");
	o.images_dir_fd = fd;
	o.log_file = "../x.log";
	refused("log-subdir", &r, NULL, 0, "log_file");
	o.log_file = NULL;
	/* a CRIU configuration file that exists (runc's default one is missing: accepted) */
	o.config_file = path;
	refused("config-file", &r, NULL, 0, "config_file");
	o.config_file = NULL;
	r.has_keep_open = r.keep_open = 1;
	refused("keep-open-dump", &r, NULL, 0, "keep_open");
	r.has_keep_open = r.keep_open = 0;
	/* not protobuf at all: a truncated length-delimited field */
	refused("garbage", NULL, "\x12\x7f\x01", 3, "not a criu_req");
	/* a DUMP of a pid that does not exist */
	o.pid = 4000000;
	refused("no-such-pid", &r, NULL, 0, "4000000");
	close(file);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		FAIL("usage: criurpc IMGCR_CRIU basic|dump|restore|bad ...");
	bin = argv[1];
	if (!strcmp(argv[2], "basic"))
		basic(1);
	else if (!strcmp(argv[2], "probe"))	/* CHECK may say not ready (no modules) */
		basic(0);
	else if (!strcmp(argv[2], "dump") && argc >= 5) {
		const char *no = NULL;
		int leave = 0;

		for (int i = 5; i < argc; i++)
			if (!strcmp(argv[i], "leave"))
				leave = 1;
			else if (!strncmp(argv[i], "no=", 3))
				no = argv[i] + 3;
		dump(atoi(argv[3]), argv[4], leave, no);
	} else if (!strcmp(argv[2], "restore") && argc == 4)
		restore(argv[3]);
	else if (!strcmp(argv[2], "bad") && argc == 5)
		bad(atoi(argv[3]), argv[4]);
	else
		FAIL("bad arguments");
	return 0;
}
