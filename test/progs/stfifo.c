/*
 * stfifo FIFO IMAGE: exec IMAGE with --imgcr-status=FD, FD a non-blocking
 * write end of the named FIFO FIFO (made here) whose only reader has been
 * closed (t_status_block, review s12 kernel L5).  binfmt_img cannot open
 * such a FIFO again (-ENXIO): it must restore without a status pipe, not
 * refuse.  Prints "exec failed: ERROR" and exits 1 if the exec fails.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "common.h"

int main(int argc, char **argv)
{
	char arg[64];
	int r, w;

	if (argc != 3) {
		say("usage: stfifo FIFO IMAGE\n");
		return 2;
	}
	if (mkfifo(argv[1], 0600) && errno != EEXIST) {
		say("mkfifo %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	r = open(argv[1], O_RDONLY | O_NONBLOCK);
	w = r < 0 ? -1 : open(argv[1], O_WRONLY | O_NONBLOCK);
	if (w < 0) {
		say("open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	close(r);
	/* no reader now: a new O_WRONLY|O_NONBLOCK open would fail with ENXIO */
	r = open(argv[1], O_WRONLY | O_NONBLOCK);
	if (r >= 0 || errno != ENXIO) {
		say("a reader is left on %s\n", argv[1]);
		return 2;
	}
	snprintf(arg, sizeof(arg), "--imgcr-status=%d", w);
	say("exec %s %s\n", argv[2], arg);
	execl(argv[2], argv[2], arg, (char *)NULL);
	say("exec failed: %s\n", strerror(errno));
	return 1;
}
