/*
 * fuzzseed: the seed program of the fuzzer (and of a few permission
 * tests).  It prints "ready PID", stops itself with SIGSTOP and, once
 * continued -- or resumed from an image of it -- reads the /proc/self files
 * that the kernel builds from the restored mm and task (auxv, cmdline,
 * environ, stat, maps, smaps...: a fuzzed image puts whatever values passed
 * validation there, and those readers must cope), prints "alive uid=U" and
 * _exit(42)s.  Exit status 42 is how the fuzzer recognises a restore that
 * ran the program correctly.  No libc state is touched after the stop
 * (raw system calls only, on the stack), so a restore that only gets the
 * essentials right still exits 42.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>

#include "common.h"

static const char *const self_files[] = {
	"/proc/self/auxv", "/proc/self/cmdline", "/proc/self/environ",
	"/proc/self/stat", "/proc/self/statm", "/proc/self/status",
	"/proc/self/maps", "/proc/self/smaps", "/proc/self/smaps_rollup",
	"/proc/self/numa_maps", "/proc/self/syscall", "/proc/self/personality",
	"/proc/self/wchan", "/proc/self/sched",
};

/* Read every file of self_files to its end; errors do not matter. */
static void read_self(void)
{
	char buf[4096];

	for (unsigned int i = 0; i < sizeof(self_files) / sizeof(self_files[0]); i++) {
		long fd = syscall(SYS_open, self_files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		while (syscall(SYS_read, fd, buf, sizeof(buf)) > 0)
			;
		syscall(SYS_close, fd);
	}
	syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf));
}

int main(void)
{
	say("ready %d\n", (int)getpid());
	kill(getpid(), SIGSTOP);
	read_self();
	say("alive uid=%d\n", (int)getuid());
	syscall(SYS_exit_group, 42);
	return 1;
}
