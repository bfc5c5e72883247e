#!/bin/bash
# Host check, no guest: the image files of the ipc namespace kind
# (userspace/ipc.c, through the hidden "imgcr _ipc dump|restore -D DIR" in
# new ipc namespaces): never written or read through a link planted in DIR
# (review M4, L9), and a namespace holding more SysV data than the limit
# is refused (L2).  Runs as root.  One "RESULT ipc-NAME PASS|FAIL" line each.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "RESULT ipc FAIL needs root (ipc namespaces)"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
res() {	# NAME STATUS [WHY]
	echo "RESULT ipc-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
# built outside the source tree (a binary left in userspace/ would go into
# the source package: lintian's source-contains-prebuilt-binary)
imgcr=$tmp/imgcr
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$REPO/include/uapi" \
	-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
	-o "$imgcr" "$REPO"/userspace/*.c > "$tmp/make.out" 2>&1 || { res build FAIL "$(cat "$tmp/make.out")"; exit 1; }
# shmput BYTES: a segment (id 0 in a new namespace) of BYTES, every page written
cat > "$tmp/shmput.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
int main(int argc, char **argv)
{
	size_t n = strtoull(argv[1], NULL, 0);
	int id = shmget(IPC_PRIVATE, n, IPC_CREAT | 0600);
	char *p = id < 0 ? (char *)-1 : shmat(id, NULL, 0);

	(void)argc;
	if (p == (char *)-1)
		return 1;
	memset(p, 'x', n);
	return shmdt(p);
}
C
gcc -O2 -o "$tmp/shmput" "$tmp/shmput.c" || { res build FAIL "shmput"; exit 1; }

# dump: DIR/ipc-shm-0.img a link to a file of root's: that file is left alone
echo keep > "$tmp/victim"
mkdir -m 0700 "$tmp/d"
ln -s "$tmp/victim" "$tmp/d/ipc-shm-0.img"
if ! out=$(unshare -i sh -c "'$tmp/shmput' 8192 && '$imgcr' _ipc dump -D '$tmp/d'" 2>&1); then
	res dump-nofollow FAIL "dump: $out"
elif [ "$(cat "$tmp/victim")" != keep ] || [ -L "$tmp/d/ipc-shm-0.img" ] ||
     [ "$(stat -c %s "$tmp/d/ipc-shm-0.img")" != 8192 ]; then
	res dump-nofollow FAIL "victim: $(head -c 20 "$tmp/victim"), $(ls -l "$tmp/d")"
else
	res dump-nofollow PASS
fi

# restore: the image replaced by a link to a root-only file of the same size
head -c 8192 /dev/urandom > "$tmp/secret"
chmod 600 "$tmp/secret"
cp "$tmp/d/ipc-shm-0.img" "$tmp/shm.img"
if out=$(unshare -i sh -c "'$imgcr' _ipc restore -D '$tmp/d'" 2>&1); then
	res restore-plain PASS
else
	res restore-plain FAIL "$out"
fi
rm "$tmp/d/ipc-shm-0.img" && ln -s "$tmp/secret" "$tmp/d/ipc-shm-0.img"
if out=$(unshare -i sh -c "'$imgcr' _ipc restore -D '$tmp/d'" 2>&1); then
	res restore-nofollow FAIL "restored through the link"
else
	case "$out" in *ipc-shm-0.img*) res restore-nofollow PASS "$out" ;; *) res restore-nofollow FAIL "$out" ;; esac
fi

# more data than the limit (256 MiB): refused, naming the segment
mkdir -m 0700 "$tmp/big"
if out=$(unshare -i sh -c "'$tmp/shmput' $((257 << 20)) && '$imgcr' _ipc dump -D '$tmp/big'" 2>&1); then
	res limit FAIL "dumped: $(du -sh "$tmp/big")"
else
	case "$out" in *"shm segment 0: "*"(the limit)"*) res limit PASS "$out" ;; *) res limit FAIL "$out" ;; esac
fi
exit $((fails > 0))
