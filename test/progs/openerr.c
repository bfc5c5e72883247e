/*
 * openerr PATH...: open(PATH, O_RDONLY) each path, close it again, and
 * print one word per path on one line: "ok" or the errno name (EACCES ...).
 * Used to compare /proc/PID/dump's open() with /proc/PID/mem's.
 */
#define _GNU_SOURCE
#include <fcntl.h>

#include "common.h"

int main(int argc, char **argv)
{
	char line[400] = "";
	size_t l = 0;

	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		const char *w = fd >= 0 ? "ok" : errname(errno);
		if (fd >= 0)
			close(fd);
		l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", i > 1 ? " " : "", w);
		if (l >= sizeof(line))
			break;
	}
	say("%s\n", line);
	return 0;
}
