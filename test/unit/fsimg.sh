#!/bin/bash
# Host check, no guest: userspace/fsimg.c (the contents of a container's
# tmpfs mounts) saves a tmpfs holding every file type and writes it back
# into a fresh tmpfs; a listing of both (type, mode, owner, size, blocks of
# sparse files, times, targets, device numbers, hard links, xattrs, data)
# must be equal.  Malformed and hostile images are refused without
# writing outside the target.  Runs as root in a mount namespace of its
# own (unshare -m).  Prints one "RESULT fsimg-NAME PASS|FAIL" line each.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" != inner ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "RESULT fsimg FAIL needs root (a mount namespace and tmpfs mounts)"
		exit 1
	fi
	exec unshare -m --propagation private "$0" inner
fi
tmp=$(mktemp -d)
trap 'umount -R "$tmp"/* 2>/dev/null; rm -rf "$tmp"' EXIT
drv=$tmp/fsimg-drv
fails=0
res() {	# NAME STATUS [WHY]
	echo "RESULT fsimg-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I"$REPO/userspace" -I"$REPO/include/uapi" \
	-DIMGCR_VERSION='"test"' -o "$drv" "$REPO/test/unit/fsimg-drv.c" \
	"$REPO/userspace/fsimg.c" "$REPO/userspace/log.c" || { res build FAIL; exit 1; }

# listing DIR: one line per entry, everything fsimg keeps
listing() {
	python3 - "$1" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
ino = {}
# a walk that never follows a symbolic link (following one sets its atime)
def walk(d):
    names = sorted(e.name for e in os.scandir(d))
    yield d, names
    for n in names:
        p = os.path.join(d, n)
        if stat.S_ISDIR(os.lstat(p).st_mode):
            yield from walk(p)
for d, names in walk(root):
    if d == root:
        names = ["."] + names
    for n in names:
        p = os.path.normpath(os.path.join(d, n))
        rel = os.path.relpath(p, root)
        s = os.lstat(p)
        t = stat.S_IFMT(s.st_mode)
        x = sorted((a, os.getxattr(p, a, follow_symlinks=False).hex())
                   for a in os.listxattr(p, follow_symlinks=False))
        extra = ""
        if stat.S_ISREG(t):
            fd = os.open(p, os.O_RDONLY | os.O_NOATIME)
            with os.fdopen(fd, "rb") as f:
                h = hashlib.sha1(f.read()).hexdigest()
            extra = "size=%d blocks=%d sha1=%s" % (s.st_size, s.st_blocks, h)
        elif stat.S_ISLNK(t):
            extra = "target=" + os.readlink(p)
        elif stat.S_ISCHR(t) or stat.S_ISBLK(t):
            extra = "rdev=%d:%d" % (os.major(s.st_rdev), os.minor(s.st_rdev))
        link = ""
        if not stat.S_ISDIR(t) and s.st_nlink > 1:
            link = "link=" + ino.setdefault(s.st_ino, rel)
        print(repr(rel), oct(s.st_mode), s.st_uid, s.st_gid, s.st_nlink, link,
              s.st_atime_ns if not stat.S_ISDIR(t) else "-", s.st_mtime_ns, extra, x)
PY
}

# the source: every file type, odd names, owners, modes, times, xattrs
src=$tmp/src dst=$tmp/dst
mkdir -p "$src" "$dst"
mount -t tmpfs -o mode=1777 src "$src"
mount -t tmpfs dst "$dst"
(
	cd "$src" || exit 1
	mkdir -p a/b/c "d i r" private
	chmod 0700 private; chown 1000:1000 private
	echo hello > a/b/c/file
	printf 'x%.0s' $(seq 1 5000) > a/big
	truncate -s 64M sparse; printf 'middle' | dd of=sparse bs=1 seek=33554432 conv=notrunc 2>/dev/null
	printf 'end' >> sparse
	: > empty
	echo linked > a/l1; ln a/l1 a/b/l2; ln a/l1 "d i r/l3"
	ln -s a/b/c/file rel-link; ln -s /etc/passwd abs-link; ln -s nowhere dangling
	mkfifo a/fifo; mknod null c 1 3; mknod blk b 7 0
	python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind("sock")'
	printf 'name\nwith%%newline' > "$(printf 'odd\nname %%')"
	chmod 4755 a/big; chown 1000:100 a/big; chmod 2711 a/b
	setfattr -n user.color -v blue a/b/c/file 2>/dev/null ||
		python3 -c 'import os; os.setxattr("a/b/c/file", "user.color", b"blue")'
	python3 -c 'import os; os.setxattr("a", "trusted.t", bytes(range(256))); os.setxattr("empty", "user.e", b"")'
	touch -h -d '2001-02-03 04:05:06.123456789' rel-link
	touch -d '1999-12-31 23:59:59.5' a/b/c/file
	touch -d '2010-01-01' a/b/c a/b a . "d i r"
)
# twice: reading a symbolic link sets its access time once (relatime)
listing "$src" > /dev/null
listing "$src" > "$tmp/before"
if out=$("$drv" dump "$src" "$tmp/img" 2>&1); then
	res dump PASS "$out"
else
	res dump FAIL "$out"
fi
if out=$("$drv" restore "$dst" "$tmp/img" 2>&1); then
	res restore PASS
else
	res restore FAIL "$out"
fi
listing "$dst" > "$tmp/after"
if diff "$tmp/before" "$tmp/after" > "$tmp/diff"; then
	res same PASS "$(wc -l < "$tmp/before") entries"
else
	res same FAIL "$(head -c 1500 "$tmp/diff")"
fi
# the sparse file stays sparse: far fewer blocks than its 64 MiB
b=$(stat -c %b "$dst/sparse")
[ "$b" -lt 1024 ] && res sparse PASS "$b blocks" || res sparse FAIL "$b blocks"
# restoring again into the filled directory fails (nothing is replaced)
if "$drv" restore "$dst" "$tmp/img" > /dev/null 2>&1; then
	res not-twice FAIL "restored over existing files"
else
	res not-twice PASS
fi

# each file is reopened through /proc (as mount.c does) from its O_PATH fd:
# a second dump gives the same image
if out=$("$drv" dump "$src" "$tmp/img-proc" 2>&1) && cmp -s "$tmp/img" "$tmp/img-proc"; then
	res procfd PASS
else
	res procfd FAIL "$out $(cmp "$tmp/img" "$tmp/img-proc" 2>&1)"
fi

# the limit: more data than allowed is refused, naming a file
if out=$("$drv" dump "$src" "$tmp/img2" 4096 2>&1); then
	res limit FAIL "dumped past the limit: $out"
else
	case "$out" in *"more than 4096 bytes"*) res limit PASS ;; *) res limit FAIL "$out" ;; esac
fi
# a mount below the saved one is refused (only one file system is saved)
mkdir "$src/mnt"; mount -t tmpfs sub "$src/mnt"
if out=$("$drv" dump "$src" "$tmp/img3" 2>&1); then
	res submount FAIL "dumped across a mount"
else
	case "$out" in *"mnt: another file system"*) res submount PASS ;; *) res submount FAIL "$out" ;; esac
fi
umount "$src/mnt" 2>/dev/null

# hostile images: each refused, and nothing outside the target written
hostile() {	# NAME BODY
	local d=$tmp/h-$1
	mkdir -p "$d" "$tmp/outside"
	mount -t tmpfs h "$d"
	printf 'imgcr-fsimg 1\nd . 40755 0 0 0.000000000 0.000000000\n%bend\n' "$2" > "$tmp/h.img"
	if "$drv" restore "$d" "$tmp/h.img" > "$tmp/h.out" 2>&1; then
		res "hostile-$1" FAIL "accepted"
	elif [ -n "$(ls -A "$tmp/outside")" ] || [ -e /tmp/fsimg-escaped ]; then
		res "hostile-$1" FAIL "wrote outside: $(ls -A "$tmp/outside")"
	else
		res "hostile-$1" PASS "$(head -n 1 "$tmp/h.out")"
	fi
	umount "$d"
}
hostile dotdot 'f ../outside/x 100644 0 0 0.000000000 0.000000000 0 0\n'
hostile absolute 'f /tmp/fsimg-escaped 100644 0 0 0.000000000 0.000000000 0 0\n'
# directories nested too deep: refused with a message (not a crash of the dumping child)
umount "$src/mnt" 2>/dev/null
(cd "$src" && for i in $(seq 1 300); do mkdir d && cd d || exit 1; done)
if out=$("$drv" dump "$src" "$tmp/img4" 2>&1); then
	res deep FAIL "dumped"
else
	case "$out" in *"nested more than 256 deep"*) res deep PASS ;; *) res deep FAIL "$out" ;; esac
fi
hostile via-symlink "l s 120777 0 0 0.000000000 0.000000000 $tmp/outside\nf s/x 100644 0 0 0.000000000 0.000000000 0 0\n"
hostile link-out "h x ../outside/y\n"
hostile cut-data 'f x 100644 0 0 0.000000000 0.000000000 10 1\n0 10\nabc'
hostile extent-past-size 'f x 100644 0 0 0.000000000 0.000000000 4 1\n2 4\nabcd\n'
hostile bad-type 'q x 100644 0 0 0.000000000 0.000000000\n'
hostile type-mismatch 'd x 100644 0 0 0.000000000 0.000000000\n'
hostile root-twice 'd . 40755 0 0 0.000000000 0.000000000\n'
hostile nul-name 'f a%00b 100644 0 0 0.000000000 0.000000000 0 0\n'
hostile short-time 'f x 100644 0 0 0.5 0.000000000 0 0\n'
printf 'imgcr-fsimg 1\nd . 40755 0 0 0.000000000 0.000000000\n' > "$tmp/noend.img"
mkdir -p "$tmp/ne"; mount -t tmpfs ne "$tmp/ne"
"$drv" restore "$tmp/ne" "$tmp/noend.img" > /dev/null 2>&1 && res no-end FAIL accepted || res no-end PASS
exit $((fails > 0))
