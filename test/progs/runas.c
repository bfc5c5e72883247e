/*
 * runas UID GID CMD [ARGS...]: drop all supplementary groups, switch real,
 * effective and saved ids to UID/GID, then execvp CMD.  Used to test that an
 * unprivileged user cannot dump someone else's task.
 * runas -k UID GID CMD [ARGS...]: the same keeping the supplementary groups
 * (in a user namespace whose setgroups is "deny": t_ct_userns).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	int keep = argc > 1 && !strcmp(argv[1], "-k");

	argc -= keep;
	argv += keep;
	if (argc < 4) {
		outf(2, "usage: runas UID GID CMD [ARGS...]\n");
		return 2;
	}
	uid_t uid = (uid_t)strtoul(argv[1], NULL, 10);
	gid_t gid = (gid_t)strtoul(argv[2], NULL, 10);

	if ((!keep && setgroups(0, NULL)) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		outf(2, "runas: cannot switch ids: %s\n", errname(errno));
		return 2;
	}
	execvp(argv[3], argv + 3);
	outf(2, "runas: execvp %s: %s\n", argv[3], errname(errno));
	return 127;
}
