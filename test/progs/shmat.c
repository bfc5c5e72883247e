/*
 * shmat: attach a SysV shared memory segment (marked for removal, so it
 * goes with the process), write to it, print "ready PID" and sleep until
 * killed.  A dump must refuse it, naming the reason (img_dump cannot
 * restore a SysV shm mapping).
 */
#define _GNU_SOURCE
#include <sys/ipc.h>
#include <sys/shm.h>

#include "common.h"

int main(void)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	char *p;

	if (id < 0) {
		say("shmget failed\n");
		return 2;
	}
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		say("shmat failed\n");
		return 2;
	}
	p[0] = 42;
	say("ready %d\n", (int)getpid());
	for (;;)
		pause();
}
