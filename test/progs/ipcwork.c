// SPDX-License-Identifier: GPL-2.0
/*
 * ipcwork: SysV IPC objects, ipc sysctls and a POSIX message queue in the
 * caller's ipc namespace, and the check that they are all still there
 * (t_ct_ipc).
 *
 *   ipcwork make IDS     make them (ids not all 0: some made and removed
 *                        first), their ids into the file IDS, exit
 *   ipcwork check IDS    check every object, value and sysctl; prints
 *                        "ipcwork: check ok" or what differs (exit 1)
 *   ipcwork run IDS [attach]  make, print "ipcwork: ready", wait for
 *                        SIGUSR1 (the dump and restore happen meanwhile),
 *                        check; "attach": segment A stays attached
 *                        meanwhile (read-write), and after the restore the
 *                        mapping is checked too: the same contents, and a
 *                        write through it seen by a new attach
 *   ipcwork mqfull       make a POSIX queue holding a message, pause
 *   ipcwork shmdest      attach a segment, remove it (IPC_RMID), pause
 *   ipcwork -0 ...       first become uid and gid 0 of the user namespace
 *                        (a container's init once root wrote LXC's maps,
 *                        t_ct_userns), the ambient capabilities cleared
 *
 * Made: shm "A" key 0x1001, 3 pages + 100 bytes, mode 0640, a pattern in
 * pages 0 and 2 and in the tail (page 1 zero), owner 1000:1000; shm "B"
 * private, 1 MiB, one byte at its end (sparse); a set key 0x2001 of 4
 * semaphores 1, 0, 7, 32767, mode 0600, created as uid 1001 (cuid), owner
 * 1000:100; a queue key 0x3001, mode 0620, qbytes 20000 (kernel/msgmnb
 * 32768 first), messages (type,
 * bytes): (1, "first"), (5, "five-a"), (2, 0 bytes), (5, 3000 bytes of a
 * pattern); sysctls kernel/msgmax 12345, kernel/shmmni 1000, kernel/sem
 * "300 32000 40 200", fs/mqueue/msg_max 20; the empty POSIX queue /ipcq
 * (15 messages of 128 bytes, mode 0604: above the default msg_max 10).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define PG 4096
#define A_SIZE (3 * PG + 100)
#define B_SIZE (1 << 20)
#define LONG_MSG 3000

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

struct ids {
	int a, b, s, q;
};

static int bad;

#define CHECK(cond, ...) do { if (!(cond)) { say("ipcwork: " __VA_ARGS__); say("\n"); bad = 1; } } while (0)

static void die(const char *what)
{
	say("ipcwork: %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned char pat(int i)
{
	return (unsigned char)(i * 7 + 3);
}

static void set_sysctl(const char *name, const char *v)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		die(path);
	close(fd);
}

static void check_sysctl(const char *name, const char *want)
{
	char path[128], buf[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		CHECK(0, "cannot read %s", path);
		return;
	}
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	for (char *p = buf; *p; p++)
		if (*p == '\t')
			*p = ' ';
	CHECK(!strcmp(buf, want), "%s is '%s', not '%s'", name, buf, want);
}

static void make(struct ids *x)
{
	struct shmid_ds sd;
	struct semid_ds ss;
	struct msqid_ds qd;
	unsigned short vals[4] = { 1, 0, 7, 32767 };
	struct { long mtype; char mtext[LONG_MSG]; } m;
	struct mq_attr attr = { .mq_maxmsg = 15, .mq_msgsize = 128 };
	unsigned char *p;
	int i, tmp;

	/* ids with a sequence number: one of each made and removed first */
	tmp = shmget(IPC_PRIVATE, PG, 0600);
	if (tmp < 0 || shmctl(tmp, IPC_RMID, NULL))
		die("shmget tmp");
	tmp = msgget(IPC_PRIVATE, 0600);
	if (tmp < 0 || msgctl(tmp, IPC_RMID, NULL))
		die("msgget tmp");

	x->a = shmget(0x1001, A_SIZE, IPC_CREAT | IPC_EXCL | 0640);
	x->b = shmget(IPC_PRIVATE, B_SIZE, 0600);
	if (x->a < 0 || x->b < 0)
		die("shmget");
	p = shmat(x->a, NULL, 0);
	if (p == (void *)-1)
		die("shmat A");
	for (i = 0; i < A_SIZE; i++)
		if (i < PG || i >= 2 * PG)
			p[i] = pat(i);
	shmdt(p);
	p = shmat(x->b, NULL, 0);
	if (p == (void *)-1)
		die("shmat B");
	p[B_SIZE - 1] = 0x5a;
	shmdt(p);
	if (shmctl(x->a, IPC_STAT, &sd))
		die("IPC_STAT A");
	sd.shm_perm.uid = 1000;
	sd.shm_perm.gid = 1000;
	if (shmctl(x->a, IPC_SET, &sd))
		die("IPC_SET A");

	/* the set made by uid 1001 (its cuid), then given to 1000:100 */
	if (setegid(1001) || seteuid(1001))
		die("seteuid 1001");
	x->s = semget(0x2001, 4, IPC_CREAT | IPC_EXCL | 0600);
	if (x->s < 0)
		die("semget");
	if (semctl(x->s, 0, SETALL, (union semun){ .array = vals }))
		die("SETALL");
	if (semctl(x->s, 0, IPC_STAT, (union semun){ .buf = &ss }))
		die("IPC_STAT sem");
	ss.sem_perm.uid = 1000;
	ss.sem_perm.gid = 100;
	if (semctl(x->s, 0, IPC_SET, (union semun){ .buf = &ss }))
		die("IPC_SET sem");
	if (seteuid(0) || setegid(0))
		die("seteuid 0");

	/* above the default 16384: a user namespace's root cannot set it alone */
	set_sysctl("kernel/msgmnb", "32768");
	x->q = msgget(0x3001, IPC_CREAT | IPC_EXCL | 0620);
	if (x->q < 0)
		die("msgget");
	if (msgctl(x->q, IPC_STAT, &qd))
		die("IPC_STAT msq");
	qd.msg_qbytes = 20000;
	if (msgctl(x->q, IPC_SET, &qd))
		die("IPC_SET msq");
	m.mtype = 1;
	memcpy(m.mtext, "first", 5);
	if (msgsnd(x->q, &m, 5, 0))
		die("msgsnd 1");
	m.mtype = 5;
	memcpy(m.mtext, "five-a", 6);
	if (msgsnd(x->q, &m, 6, 0))
		die("msgsnd 2");
	m.mtype = 2;
	if (msgsnd(x->q, &m, 0, 0))
		die("msgsnd 3");
	m.mtype = 5;
	for (i = 0; i < LONG_MSG; i++)
		m.mtext[i] = pat(i + 11);
	if (msgsnd(x->q, &m, LONG_MSG, 0))
		die("msgsnd 4");

	set_sysctl("kernel/msgmax", "12345");
	set_sysctl("kernel/shmmni", "1000");
	set_sysctl("kernel/sem", "300 32000 40 200");
	set_sysctl("fs/mqueue/msg_max", "20");
	umask(0);
	i = mq_open("/ipcq", O_RDWR | O_CREAT | O_EXCL, 0604, &attr);
	if (i < 0)
		die("mq_open");
	close(i);
}

static void check(const struct ids *x)
{
	struct shmid_ds sd;
	struct semid_ds ss;
	struct msqid_ds qd;
	unsigned short vals[4];
	struct { long mtype; char mtext[LONG_MSG + 10]; } m;
	struct mq_attr attr;
	struct stat st;
	unsigned char *p;
	ssize_t n;
	int i, fd;

	/* shm A */
	CHECK(shmget(0x1001, 0, 0) == x->a, "shm key 0x1001 is not id %d", x->a);
	if (!shmctl(x->a, IPC_STAT, &sd)) {
		CHECK(sd.shm_segsz == A_SIZE && (sd.shm_perm.mode & 0777) == 0640 &&
		      sd.shm_perm.uid == 1000 && sd.shm_perm.gid == 1000 &&
		      sd.shm_perm.cuid == 0 && sd.shm_perm.cgid == 0,
		      "shm A: size %zu mode 0%o uid %u gid %u cuid %u cgid %u", sd.shm_segsz,
		      sd.shm_perm.mode, sd.shm_perm.uid, sd.shm_perm.gid, sd.shm_perm.cuid,
		      sd.shm_perm.cgid);
		p = shmat(x->a, NULL, SHM_RDONLY);
		if (p != (void *)-1) {
			for (i = 0; i < A_SIZE; i++)
				if (p[i] != ((i < PG || i >= 2 * PG) ? pat(i) : 0))
					break;
			CHECK(i == A_SIZE, "shm A: byte %d is %u", i, p[i]);
			shmdt(p);
		} else {
			CHECK(0, "shm A: shmat: %s", strerror(errno));
		}
	} else {
		CHECK(0, "shm A (%d): IPC_STAT: %s", x->a, strerror(errno));
	}
	/* shm B */
	if (!shmctl(x->b, IPC_STAT, &sd)) {
		CHECK(sd.shm_segsz == B_SIZE && sd.shm_perm.__key == IPC_PRIVATE &&
		      (sd.shm_perm.mode & 0777) == 0600, "shm B: size %zu key %d mode 0%o",
		      sd.shm_segsz, sd.shm_perm.__key, sd.shm_perm.mode);
		p = shmat(x->b, NULL, SHM_RDONLY);
		if (p != (void *)-1) {
			for (i = 0; i < B_SIZE - 1 && !p[i]; i++)
				;
			CHECK(i == B_SIZE - 1 && p[i] == 0x5a, "shm B: byte %d is %u", i, p[i]);
			shmdt(p);
		}
	} else {
		CHECK(0, "shm B (%d): IPC_STAT: %s", x->b, strerror(errno));
	}
	/* sem */
	CHECK(semget(0x2001, 0, 0) == x->s, "sem key 0x2001 is not id %d", x->s);
	if (!semctl(x->s, 0, IPC_STAT, (union semun){ .buf = &ss })) {
		CHECK(ss.sem_nsems == 4 && (ss.sem_perm.mode & 0777) == 0600 &&
		      ss.sem_perm.uid == 1000 && ss.sem_perm.gid == 100 &&
		      ss.sem_perm.cuid == 1001 && ss.sem_perm.cgid == 1001,
		      "sem: nsems %lu mode 0%o uid %u gid %u cuid %u cgid %u",
		      (unsigned long)ss.sem_nsems, ss.sem_perm.mode, ss.sem_perm.uid,
		      ss.sem_perm.gid, ss.sem_perm.cuid, ss.sem_perm.cgid);
		if (!semctl(x->s, 0, GETALL, (union semun){ .array = vals }))
			CHECK(vals[0] == 1 && vals[1] == 0 && vals[2] == 7 && vals[3] == 32767,
			      "sem values %u %u %u %u", vals[0], vals[1], vals[2], vals[3]);
	} else {
		CHECK(0, "sem (%d): IPC_STAT: %s", x->s, strerror(errno));
	}
	/* msq */
	CHECK(msgget(0x3001, 0) == x->q, "msq key 0x3001 is not id %d", x->q);
	if (!msgctl(x->q, IPC_STAT, &qd)) {
		CHECK(qd.msg_qbytes == 20000 && qd.msg_qnum == 4 &&
		      qd.__msg_cbytes == 5 + 6 + LONG_MSG && (qd.msg_perm.mode & 0777) == 0620,
		      "msq: qbytes %lu qnum %lu cbytes %lu mode 0%o", (unsigned long)qd.msg_qbytes,
		      (unsigned long)qd.msg_qnum, (unsigned long)qd.__msg_cbytes, qd.msg_perm.mode);
		/* in order: type 5 first (5, "five-a"), then the rest in order */
		n = msgrcv(x->q, &m, sizeof(m.mtext), 5, IPC_NOWAIT);
		CHECK(n == 6 && m.mtype == 5 && !memcmp(m.mtext, "five-a", 6), "msq: first type 5: %zd", n);
		n = msgrcv(x->q, &m, sizeof(m.mtext), 0, IPC_NOWAIT);
		CHECK(n == 5 && m.mtype == 1 && !memcmp(m.mtext, "first", 5), "msq: message 1: %zd", n);
		n = msgrcv(x->q, &m, sizeof(m.mtext), 0, IPC_NOWAIT);
		CHECK(n == 0 && m.mtype == 2, "msq: message 2: %zd type %ld", n, m.mtype);
		n = msgrcv(x->q, &m, sizeof(m.mtext), 0, IPC_NOWAIT);
		for (i = 0; n == LONG_MSG && i < LONG_MSG && (unsigned char)m.mtext[i] == pat(i + 11); i++)
			;
		CHECK(n == LONG_MSG && m.mtype == 5 && i == LONG_MSG, "msq: message 4: %zd at %d", n, i);
		n = msgrcv(x->q, &m, sizeof(m.mtext), 0, IPC_NOWAIT);
		CHECK(n < 0 && errno == ENOMSG, "msq: a fifth message");
	} else {
		CHECK(0, "msq (%d): IPC_STAT: %s", x->q, strerror(errno));
	}
	check_sysctl("kernel/msgmax", "12345");
	check_sysctl("kernel/shmmni", "1000");
	check_sysctl("kernel/sem", "300 32000 40 200");
	check_sysctl("fs/mqueue/msg_max", "20");
	check_sysctl("kernel/msgmnb", "32768");
	fd = mq_open("/ipcq", O_RDONLY);
	if (fd >= 0) {
		CHECK(!mq_getattr(fd, &attr) && attr.mq_maxmsg == 15 && attr.mq_msgsize == 128 &&
		      attr.mq_curmsgs == 0, "mq /ipcq: maxmsg %ld msgsize %ld", attr.mq_maxmsg,
		      attr.mq_msgsize);
		CHECK(!fstat(fd, &st) && (st.st_mode & 0777) == 0604, "mq /ipcq: mode 0%o",
		      st.st_mode);
		close(fd);
	} else {
		CHECK(0, "mq /ipcq: %s", strerror(errno));
	}
	if (!bad)
		say("ipcwork: check ok\n");
}

static void save_ids(const char *file, const struct ids *x)
{
	FILE *f = fopen(file, "w");

	if (!f)
		die(file);
	fprintf(f, "%d %d %d %d\n", x->a, x->b, x->s, x->q);
	fclose(f);
}

static void load_ids(const char *file, struct ids *x)
{
	FILE *f = fopen(file, "r");

	if (!f || fscanf(f, "%d %d %d %d", &x->a, &x->b, &x->s, &x->q) != 4)
		die(file);
	fclose(f);
}

static volatile sig_atomic_t woken;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

int main(int argc, char **argv)
{
	struct ids x;

	if (argc > 1 && !strcmp(argv[1], "-0")) {
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			die("cannot become root in the namespace");
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
		argv++;
		argc--;
	}
	if (argc == 3 && !strcmp(argv[1], "make")) {
		make(&x);
		save_ids(argv[2], &x);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "check")) {
		load_ids(argv[2], &x);
		check(&x);
		return bad;
	}
	if ((argc == 3 || (argc == 4 && !strcmp(argv[3], "attach"))) && !strcmp(argv[1], "run")) {
		unsigned char *map = NULL, *p;
		int i;

		signal(SIGUSR1, on_usr1);
		make(&x);
		save_ids(argv[2], &x);
		if (argc == 4) {
			map = shmat(x.a, NULL, 0);
			if (map == (void *)-1)
				die("shmat A (kept)");
		}
		say("ipcwork: ready pid=%d\n", getpid());
		while (!woken)
			pause();
		if (map) {
			for (i = 0; i < A_SIZE; i++)
				if (map[i] != ((i < PG || i >= 2 * PG) ? pat(i) : 0))
					break;
			CHECK(i == A_SIZE, "attached shm A: byte %d is %u", i, map[i]);
			map[PG + 5] = 0xa5;
			p = shmat(x.a, NULL, SHM_RDONLY);
			CHECK(p != (void *)-1 && p[PG + 5] == 0xa5, "attached shm A: not shared with a new attach");
			if (p != (void *)-1)
				shmdt(p);
			map[PG + 5] = 0;
			if (!bad)
				say("ipcwork: attached ok\n");
		}
		check(&x);
		return bad;
	}
	if (argc == 2 && !strcmp(argv[1], "mqfull")) {
		struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 16 };
		int q = mq_open("/full", O_RDWR | O_CREAT, 0600, &attr);

		if (q < 0 || mq_send(q, "hello", 5, 1))
			die("mq_send");
		close(q);
		say("ipcwork: ready pid=%d\n", getpid());
		for (;;)
			pause();
	}
	if (argc == 2 && !strcmp(argv[1], "shmdest")) {
		int id = shmget(IPC_PRIVATE, PG, 0600);

		if (id < 0 || shmat(id, NULL, 0) == (void *)-1 || shmctl(id, IPC_RMID, NULL))
			die("shm");
		say("ipcwork: ready pid=%d\n", getpid());
		for (;;)
			pause();
	}
	say("usage: ipcwork make|check|run IDS | mqfull | shmdest\n");
	return 2;
}
