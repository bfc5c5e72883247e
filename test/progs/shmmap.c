/*
 * shmmap: a SysV shm attachment kept across a dump and restore (t_shm_map).
 *
 * shmmap           makes a 3-page segment (IPC_PRIVATE, 0600, not removed),
 *                  attaches it, writes 'A' at offset 0, prints "ready PID
 *                  SHMID ADDR", then serves: whenever the word at offset
 *                  4096 changes to V, it writes V + 1 at offset 8192 and
 *                  prints "echo V".  On SIGUSR1 it checks that it still has
 *                  the segment at ADDR (/proc/self/maps: the mapping at ADDR
 *                  has SHMID as its inode; IPC_STAT: attached), and prints
 *                  "shmmap PASS" (exit 0) or "FAIL why" lines (exit 1).
 * shmmap -w ID V   attaches segment ID, checks the 'A', writes V at 4096 and
 *                  waits (10 s) for V + 1 at 8192: "reply ok" (exit 0) or
 *                  "reply BAD ..." (exit 1).
 * shmmap -r ID     removes segment ID (IPC_RMID).
 * shmmap -u        makes a semaphore set, raises it with SEM_UNDO (an
 *                  adjustment the process holds), prints "ready PID SEMID"
 *                  and sleeps: a dump must refuse it.
 * shmmap -p        makes a 3-page segment (0600: no x bits), attaches it
 *                  read-write, then makes all of it read-only and its
 *                  middle page executable (mprotect(), which asks for no
 *                  x bit), prints "ready PID SHMID ADDR" and waits for
 *                  SIGUSR1: then makes it writable again (the attachment
 *                  was for writing: VM_MAYWRITE), writes to it, and prints
 *                  "shmmap PASS" (exit 0) or "FAIL why" (exit 1).
 * shmmap -s        makes an undo list (semop() with SEM_UNDO on a set it
 *                  then removes: the list stays, empty), shares it with a
 *                  child process (clone(CLONE_SYSVSEM), no CLONE_THREAD),
 *                  prints "ready PID CHILD" and sleeps: a dump must refuse
 *                  it (the child may add adjustments at any time).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sched.h>

#include "common.h"

static volatile sig_atomic_t check;

static void on_usr1(int sig)
{
	(void)sig;
	check = 1;
}

static int verify(int id, char *p)
{
	char line[512], want[64];
	struct shmid_ds ds;
	int bad = 0, found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long ino = 0;

		if (strncmp(line, want, strlen(want)))
			continue;
		found = 1;
		if (sscanf(line, "%*s %*s %*s %*s %lu", &ino) != 1 || ino != (unsigned long)id) {
			say("FAIL mapping at %p has inode %lu, want shmid %d\n", p, ino, id);
			bad = 1;
		}
	}
	if (f)
		fclose(f);
	if (!found) {
		say("FAIL no mapping at %p\n", p);
		bad = 1;
	}
	if (shmctl(id, IPC_STAT, &ds) || ds.shm_nattch < 1) {
		say("FAIL IPC_STAT of %d: %s, nattch %lu\n", id, strerror(errno),
		    (unsigned long)ds.shm_nattch);
		bad = 1;
	}
	if (p[0] != 'A') {
		say("FAIL segment byte 0 is %d\n", p[0]);
		bad = 1;
	}
	return bad;
}

static int serve(void)
{
	int id = shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600);
	volatile uint32_t *in, *out;
	uint32_t last;
	char *p;

	if (id < 0) {
		say("FAIL shmget: %s\n", strerror(errno));
		return 2;
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		say("FAIL shmat: %s\n", strerror(errno));
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	p[0] = 'A';
	in = (uint32_t *)(p + 4096);
	out = (uint32_t *)(p + 8192);
	last = *in;
	say("ready %d %d %lx\n", (int)getpid(), id, (unsigned long)p);
	while (!check) {
		uint32_t v = *in;

		if (v != last) {
			last = v;
			*out = v + 1;
			say("echo %u\n", v);
		}
		msleep(10);
	}
	if (verify(id, p))
		return 1;
	say("shmmap PASS\n");
	return 0;
}

static int attach(int id, uint32_t v)
{
	volatile uint32_t *in, *out;
	char *p = shmat(id, NULL, 0);
	int i;

	if (p == (void *)-1) {
		say("reply BAD shmat %d: %s\n", id, strerror(errno));
		return 1;
	}
	if (p[0] != 'A') {
		say("reply BAD byte 0 is %d\n", p[0]);
		return 1;
	}
	in = (uint32_t *)(p + 4096);
	out = (uint32_t *)(p + 8192);
	*in = v;
	for (i = 0; i < 1000; i++) {
		if (*out == v + 1) {
			say("reply ok\n");
			return 0;
		}
		msleep(10);
	}
	say("reply BAD got %u, want %u\n", *out, v + 1);
	return 1;
}

static int semundo(void)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = SEM_UNDO };
	int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);

	if (id < 0 || semop(id, &op, 1)) {
		say("FAIL semget/semop: %s\n", strerror(errno));
		return 2;
	}
	say("ready %d %d\n", (int)getpid(), id);
	for (;;)
		pause();
}

static int protects(void)
{
	int id = shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600);
	char *p;

	if (id < 0) {
		say("FAIL shmget: %s\n", strerror(errno));
		return 2;
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		say("FAIL shmat: %s\n", strerror(errno));
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	p[0] = 'A';
	if (mprotect(p, 3 * 4096, PROT_READ) ||
	    mprotect(p + 4096, 4096, PROT_READ | PROT_EXEC)) {
		say("FAIL mprotect before the dump: %s\n", strerror(errno));
		return 2;
	}
	say("ready %d %d %lx\n", (int)getpid(), id, (unsigned long)p);
	while (!check)
		pause();
	if (mprotect(p, 3 * 4096, PROT_READ | PROT_WRITE)) {
		say("FAIL mprotect(PROT_READ|PROT_WRITE) after the restore: %s (attached read-only)\n",
		    strerror(errno));
		return 1;
	}
	p[8192] = 'C';
	if (p[0] != 'A' || p[8192] != 'C') {
		say("FAIL segment bytes %d %d\n", p[0], p[8192]);
		return 1;
	}
	say("shmmap PASS\n");
	return 0;
}

static int semshare(void)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = SEM_UNDO };
	int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	long child;

	if (id < 0 || semop(id, &op, 1) || semctl(id, 0, IPC_RMID)) {
		say("FAIL semget/semop/IPC_RMID: %s\n", strerror(errno));
		return 2;
	}
	child = syscall(SYS_clone, CLONE_SYSVSEM | SIGCHLD, 0, 0, 0, 0);
	if (child < 0) {
		say("FAIL clone: %s\n", strerror(errno));
		return 2;
	}
	if (!child) {
		for (;;)
			pause();
	}
	say("ready %d %ld\n", (int)getpid(), child);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-w"))
		return attach(atoi(argv[2]), strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "-r"))
		return shmctl(atoi(argv[2]), IPC_RMID, NULL) ? 1 : 0;
	if (argc == 2 && !strcmp(argv[1], "-u"))
		return semundo();
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return semshare();
	if (argc == 2 && !strcmp(argv[1], "-p"))
		return protects();
	if (argc == 1)
		return serve();
	say("usage: shmmap | shmmap -w ID V | shmmap -r ID | shmmap -u | shmmap -s | shmmap -p\n");
	return 2;
}
