/*
 * holder KIND FILE: a root process and a child, both appending "PID tick N"
 * to FILE every 50 ms forever, where the child (or, for "zombie", an extra
 * child that is never reaped) holds something imgcr dump refuses:
 *   socket   a packet socket (RX ring) io_uring an io_uring instance
 *   uffd     a userfaultfd          perf     a perf_event fd (task clock)
 *   memmap   a memfd mapped privately, its fd closed
 *   fanotify a fanotify group with a filesystem mark (FAN_MARK_FILESYSTEM)
 *   bpf      a bpf program array map (arrays and hashes are dumped: t_bpfmap)
 *   pidfdout a pidfd to the process $HOLDER_PID, outside the tree (dumpable)
 *   inoproc  an inotify watch on /proc (a filesystem without file handles)
 *   inotifyw an inotify watch on the cwd; both tasks let any process of
 *            their user ptrace them (Yama), for a dump by that user
 *   dev      /dev/mem (or /dev/kmsg) console /dev/console (a terminal)
 *   ns       its own UTS namespace  zombie   an unreaped dead child
 *   threads  a second thread        none     nothing (dumpable)
 *   deadmain its main thread exited (pthread_exit), a second thread ticks
 *   pidfdthread a pidfd (PIDFD_THREAD, 6.9+) of its second thread
 *   pidns    the child unshares a PID namespace and forks its init, which
 *            forks a task that forks another: the tree to dump is that
 *            task (pid 2 in the namespace) and its child (pid 3), in
 *            another PID namespace than the dumper; every one ticks
 *   pidfdns  the same, where pid 2 and 3 hold a pidfd (fd 4, inherited)
 *            to the root process, outside their namespace
 *   pipeout  the read end of a pipe whose write end the child holds is
 *            held by a process outside the tree (forked and orphaned: it
 *            writes "PID outsider" to FILE, then pauses)
 *   memfdpath an O_PATH fd of a memfd (the memfd itself closed)
 *   memfdhuge a hugetlbfs memfd (MFD_HUGETLB), 2 MiB, not mapped
 *   bpfprog  a bpf socket-filter program (BPF_PROG_LOAD)
 *   aio      an AIO context (io_setup of 8 events; its ring mapped, no
 *            request in flight)
 *   aiounmap an AIO context whose ring the program unmapped (the context
 *            lives on: io_destroy still finds it)
 *   uringreg an io_uring registered with IORING_REGISTER_RING_FDS, its
 *            fd closed and its rings never mapped (the instance lives on)
 *   bpflink  a bpf link: a raw tracepoint program attached to
 *            sched_process_exec (BPF_RAW_TRACEPOINT_OPEN), the program fd
 *            closed
 * Ticks name the task by its pid in /proc (the dumper's PID namespace),
 * the same as getpid() but in the tasks of "pidns" and "pidfdns".
 * (zombie and threads are dumpable now.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/memfd.h>
#include <linux/perf_event.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <sys/syscall.h>
#include <time.h>

#include "common.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static int out;
static volatile pid_t thread_tid;

static void tick_forever(void);

static void *tick_fn(void *arg)
{
	(void)arg;
	tick_forever();
	return NULL;
}

static void *thread_fn(void *arg)
{
	(void)arg;
	thread_tid = syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

/* the pid in /proc (the tests' PID namespace), not in our own */
static int proc_pid(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return getpid();
	buf[n] = 0;
	return atoi(buf);
}

static void tick_forever(void)
{
	int me = proc_pid();

	for (int n = 1;; n++) {
		outf(out, "%d tick %d\n", me, n);
		struct timespec ts = { 0, 50 * 1000 * 1000 }, rem;

		while (nanosleep(&ts, &rem) && errno == EINTR)
			ts = rem;
	}
}

static int bpf_load(int type, const char *what)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	char log[4096] = "";
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (unsigned long)insns;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		outf(2, "holder: BPF_PROG_LOAD (%s): %s: %s\n", what, errname(errno), log);
	return fd;
}

/*
 * pidns, pidfdns: in the child, with @pfd (or -1) open: a new PID (and
 * mount) namespace, its init (ticking), and under it the two tasks to dump.
 */
static int pidns_tree(void)
{
	pid_t p;

	/*
	 * A mount namespace too: imgcr dumps from inside both, with a /proc
	 * of the PID namespace mounted there (after the ticks are named).
	 */
	if (unshare(CLONE_NEWPID | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		/* init (1) forks the root (2), which forks its child (3) */
		for (int i = 0; i < 2; i++) {
			p = fork();
			if (p < 0)
				_exit(6);
			if (p)
				break;
		}
		tick_forever();
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 2 ? argv[1] : "";
	pid_t p;

	if (argc < 3)
		return 2;
	out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out < 0)
		return 3;
	if (!strcmp(kind, "zombie")) {
		p = fork();
		if (p == 0)
			_exit(0);
	}
	if (!strcmp(kind, "inotifyw"))
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	p = fork();
	if (p < 0)
		return 4;
	if (p == 0) {
		int r = 0;
		pthread_t th;

		if (!strcmp(kind, "inotifyw"))
			prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);

		if (!strcmp(kind, "socket")) {
			/* a packet socket with an RX ring (netlink sockets are restored) */
			struct tpacket_req req = { .tp_block_size = 4096, .tp_block_nr = 1,
						   .tp_frame_size = 2048, .tp_frame_nr = 2 };

			r = socket(AF_PACKET, SOCK_DGRAM, 0);
			if (r >= 0 && setsockopt(r, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
				r = -1;
		}
		else if (!strcmp(kind, "io_uring")) {
			/* struct io_uring_params: 120 bytes, zeroed */
			long params[15] = { 0 };

			r = syscall(SYS_io_uring_setup, 4, params);
		} else if (!strcmp(kind, "uffd"))
			r = syscall(SYS_userfaultfd, O_CLOEXEC);
		else if (!strcmp(kind, "perf")) {
			struct perf_event_attr a = {
				.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				.config = PERF_COUNT_SW_TASK_CLOCK,
			};

			r = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		} else if (!strcmp(kind, "memmap")) {
			/* its fd closed: its contents are nowhere but in the object */
			r = memfd_create("holder", 0);
			if (r >= 0 && (ftruncate(r, 4096) ||
				       mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, r, 0) == MAP_FAILED))
				r = -1;
			if (r >= 0)
				r = close(r);
		} else if (!strcmp(kind, "fanotify")) {
			r = fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
			if (r >= 0 && fanotify_mark(r, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_CLOSE_WRITE,
						    AT_FDCWD, "."))
				r = -1;
		} else if (!strcmp(kind, "bpf")) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
			a.key_size = 4;
			a.value_size = 4;
			a.max_entries = 1;
			r = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
		} else if (!strcmp(kind, "pidfdout")) {
			r = syscall(SYS_pidfd_open, atoi(getenv("HOLDER_PID") ? getenv("HOLDER_PID") : "0"), 0);
		} else if (!strcmp(kind, "inotifyw")) {
			r = inotify_init1(0);
			if (r >= 0 && inotify_add_watch(r, ".", IN_CREATE) < 0)
				r = -1;
		} else if (!strcmp(kind, "inoproc")) {
			r = inotify_init1(0);
			if (r >= 0 && inotify_add_watch(r, "/proc", IN_CREATE) < 0)
				r = -1;
		}
		else if (!strcmp(kind, "dev"))
			r = (r = open("/dev/mem", O_RDONLY)) >= 0 ? r : open("/dev/kmsg", O_RDONLY);
		else if (!strcmp(kind, "console"))
			r = open("/dev/console", O_RDONLY | O_NOCTTY);
		else if (!strcmp(kind, "ns"))
			r = unshare(CLONE_NEWUTS);
		else if (!strcmp(kind, "threads"))
			r = -pthread_create(&th, NULL, thread_fn, NULL);
		else if (!strcmp(kind, "deadmain") && !pthread_create(&th, NULL, tick_fn, NULL))
			pthread_exit(NULL);
		else if (!strcmp(kind, "pidfdthread")) {
			r = -pthread_create(&th, NULL, thread_fn, NULL);
			while (!r && !thread_tid)
				usleep(1000);
			if (!r)
				r = syscall(SYS_pidfd_open, thread_tid, PIDFD_THREAD);
		} else if (!strcmp(kind, "pidns")) {
			r = pidns_tree();
		} else if (!strcmp(kind, "pidfdns")) {
			/* at fd 4 (0-2, then FILE at 3) */
			r = syscall(SYS_pidfd_open, getppid(), 0);
			if (r >= 0)
				r = pidns_tree();
		} else if (!strcmp(kind, "pipeout")) {
			int pp[2];

			r = pipe(pp);
			p = r ? -1 : fork();
			if (p == 0) {
				/* the outsider: orphaned at once, so not in the tree */
				close(pp[1]);
				if (fork() == 0) {
					outf(out, "%d outsider\n", (int)getpid());
					for (;;)
						pause();
				}
				_exit(0);
			}
			if (p < 0 || waitpid(p, NULL, 0) != p)
				r = -1;
			else
				close(pp[0]);
		} else if (!strcmp(kind, "memfdpath")) {
			int m = memfd_create("holder", 0);
			char path[64];

			snprintf(path, sizeof(path), "/proc/self/fd/%d", m);
			r = m < 0 ? -1 : open(path, O_PATH);
			if (m >= 0)
				close(m);
		} else if (!strcmp(kind, "memfdhuge")) {
			r = memfd_create("holder", MFD_HUGETLB);
			if (r >= 0 && ftruncate(r, 2 << 20))
				r = -1;
		} else if (!strcmp(kind, "aio")) {
			unsigned long ctx = 0;

			r = syscall(SYS_io_setup, 8, &ctx);
		} else if (!strcmp(kind, "aiounmap")) {
			unsigned long ctx = 0;

			/* the context's id is its ring's address */
			r = syscall(SYS_io_setup, 8, &ctx);
			if (!r) {
				/* the whole ring: its line in maps gives the end */
				FILE *m = fopen("/proc/self/maps", "r");
				unsigned long a, e, end = 0;
				char line[256];

				while (!end && m && fgets(line, sizeof(line), m))
					if (sscanf(line, "%lx-%lx", &a, &e) == 2 && a == ctx)
						end = e;
				if (m)
					fclose(m);
				r = end ? munmap((void *)ctx, end - ctx) : -1;
			}
		} else if (!strcmp(kind, "uringreg")) {
			struct io_uring_params pa;
			struct io_uring_rsrc_update up;
			int u;

			memset(&pa, 0, sizeof(pa));
			u = syscall(SYS_io_uring_setup, 4, &pa);
			memset(&up, 0, sizeof(up));
			up.offset = -1U;
			up.data = u;
			r = u < 0 ? -1 : syscall(SYS_io_uring_register, u, IORING_REGISTER_RING_FDS, &up, 1);
			if (r == 1)
				r = close(u);
			else if (r >= 0)
				r = -1;
		} else if (!strcmp(kind, "bpfprog")) {
			r = bpf_load(BPF_PROG_TYPE_SOCKET_FILTER, "socket filter");
		} else if (!strcmp(kind, "bpflink")) {
			int prog = bpf_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "raw tracepoint");
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.raw_tracepoint.name = (unsigned long)"sched_process_exec";
			a.raw_tracepoint.prog_fd = prog;
			r = prog < 0 ? -1 : syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
			if (prog >= 0)
				close(prog);
		}
		if (r < 0) {
			outf(2, "holder: %s failed: %s\n", kind, errname(errno));
			_exit(5);
		}
		tick_forever();
	}
	tick_forever();
}
