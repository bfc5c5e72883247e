/*
 * permhelp MODE ...: small programs for the permission tests (t_perm.sh).
 *   permhelp nodump        prctl(PR_SET_DUMPABLE, 0), print "ready PID",
 *                          then pause() forever
 *   permhelp mapshared F   map file F (must be writable) MAP_SHARED
 *                          read/write, write a marker into it, print
 *                          "ready PID", stop itself (SIGSTOP); once resumed
 *                          print "alive uid=U marker=ok|BAD" and _exit(42)
 *   permhelp nnp PROG ...  prctl(PR_SET_NO_NEW_PRIVS, 1), then execv PROG;
 *                          on failure print "nnp: execve failed: ENAME"
 *   permhelp child PROG .. run PROG (e.g. fuzzseed, which stops itself) as
 *                          a child, wait until it is stopped, then open its
 *                          /proc/PID/dump and /proc/PID/mem and print
 *                          "DUMP MEM" ("ok" or the errno name each), kill
 *                          it.  The opener is the target's parent, as Yama
 *                          ptrace_scope 1 wants.
 *   permhelp filecaps F    give file F the file capability
 *                          CAP_DAC_READ_SEARCH, permitted and effective
 *                          (a VFS_CAP_REVISION_2 security.capability)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "common.h"

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "filecaps")) {
		/* magic_etc (revision 2 | effective), then permitted and
		 * inheritable of the low and the high 32 capabilities */
		unsigned int cap[5] = { 0x02000001, 1u << 2, 0, 0, 0 };

		if (setxattr(argv[2], "security.capability", cap, sizeof(cap), 0)) {
			perror("setxattr security.capability");
			return 1;
		}
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "nodump")) {
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
			say("prctl failed: %s\n", errname(errno));
			return 1;
		}
		say("ready %d\n", (int)getpid());
		for (;;)
			pause();
	}
	if (argc == 3 && !strcmp(argv[1], "mapshared")) {
		int fd = open(argv[2], O_RDWR);
		if (fd < 0) {
			say("open %s: %s\n", argv[2], errname(errno));
			return 1;
		}
		char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			say("mmap: %s\n", errname(errno));
			return 1;
		}
		close(fd);
		memcpy(p, "imgcr-marker", 12);
		say("ready %d\n", (int)getpid());
		kill(getpid(), SIGSTOP);
		say("alive uid=%d marker=%s\n", (int)getuid(),
		    memcmp(p, "imgcr-marker", 12) ? "BAD" : "ok");
		syscall(SYS_exit_group, 42);
	}
	if (argc >= 3 && !strcmp(argv[1], "nnp")) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
			say("nnp: prctl failed: %s\n", errname(errno));
			return 1;
		}
		execv(argv[2], argv + 2);
		say("nnp: execve failed: %s\n", errname(errno));
		return 2;
	}
	if (argc >= 3 && !strcmp(argv[1], "child")) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			int nul = open("/dev/null", O_WRONLY);
			if (nul >= 0)
				dup2(nul, 1);
			execv(argv[2], argv + 2);
			_exit(127);
		}
		char p[64], res[2][32];
		int stopped = 0;
		for (int i = 0; i < 1000 && !stopped; i++) {
			stopped = task_state((int)pid) == 'T';
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			if (!stopped)
				nanosleep(&ts, NULL);
		}
		if (!stopped) {
			say("child did not stop\n");
			kill(pid, SIGKILL);
			return 2;
		}
		for (int i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, i ? "mem" : "dump");
			int fd = open(p, O_RDONLY);
			snprintf(res[i], sizeof(res[i]), "%s", fd >= 0 ? "ok" : errname(errno));
			if (fd >= 0)
				close(fd);
		}
		say("%s %s\n", res[0], res[1]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 0;
	}
	outf(2, "usage: permhelp nodump | mapshared FILE | nnp PROG [ARGS...] | child PROG [ARGS...]\n");
	return 64;
}
