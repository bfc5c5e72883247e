#!/bin/sh
# A container restored into another root directory (imgcr restore --root,
# CRIU's --root; podman's restore --import, docs/containers.md): util-linux
# unshare --fork --pid --mount, pivot_root into directory A (a bind of
# itself) with a fresh /proc and the host's directory ctout bound at
# /host; its pid 1 the test's counter (/counter, A's copy), stdin A's
# /data, fd 3 A's /work/big (two pages), fd 4 /work/link (a hard link of
# it), fd 5 /sub/f (A's sub bound there: a mount moved with the root),
# cwd /work, numbers into /host/out, fd 6 a host file on a tmpfs mounted
# outside (opened before unshare: --external file[MNT:INO], host=1, not on
# a moved mount: reopened from the host's root, crossing its mount).  Dumped, A copied to B-G (cp
# -a: new inodes, same sizes and mtimes, hard links kept), A removed.
#   ct_root          imgcr restore --root B: the count goes on from where
#                    it stopped, by pid 1; the restored tree's root, cwd,
#                    exe, fds 0 and 3 are B's files (their device and
#                    inode), fd 6 the host's file; without --root the
#                    restore fails (A is gone).
#   ct_root-changed  C's /work/big with another first page, the same size
#                    and mtime: restore --root C refused, naming pid, fd 3,
#                    the path and the first page; nothing restored.
#   ct_root-link     D's /work/link a copy of /work/big (the hard link
#                    broken, the same size, mtime, content): refused,
#                    naming pid, fds 3 and 4 and both paths.
#   ct_root-symlink  E's /data a symbolic link to /host/data.copy (the host's
#                    directory, of the same size, mtime and content): the
#                    file would be off the copy: refused, naming pid, fd 0,
#                    /data and the link.
#   ct_root-mpsymlink F's mount point /sub a symbolic link to subsrc (the
#                    mount would land on /subsrc): refused, naming /sub.
#   ct_root-fifo     G's /data a FIFO: refused before it is opened (only a
#                    regular file or directory is), naming pid, fd 0, /data.
# (Mounts stacked at one mount point: refused at dump but over the root
# at /, which restore --root refuses: not made here.)
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

if [ "${1:-}" != inner ]; then
	T=ct_root
	ct_pivotable sh "$0" inner "$(pwd)"
	exit $?
fi
cd "$2" || { T=ct_root; fail "no test directory $2"; }
T=ct_root
ct_pivot_check || fail "$(ct_pivot_check 2>&1)"
W=$(pwd)
A=$W/ctA B=$W/ctB C=$W/ctC D=$W/ctD E=$W/ctE F=$W/ctF G=$W/ctG O=$W/ctout

# A: busybox (the setup's applets after the pivot), the counter, data
H=$W/cthost
umount "$H" 2>/dev/null
rm -rf "$A" "$B" "$C" "$D" "$E" "$F" "$G" "$O" "$H" && mkdir "$H" && mount -t tmpfs tmpfs "$H" &&
	echo "a host log" > "$H/log" &&
	mkdir -p "$A/bin" "$A/proc" "$A/host" "$A/work" "$A/old" "$A/sub" "$A/subsrc" "$O" ||
	fail "cannot make $A"
cp /bin/busybox /imgcr/bin/counter "$A/bin/" && ln -s busybox "$A/bin/sh" &&
	mv "$A/bin/counter" "$A/counter" && echo "the container's stdin" > "$A/data" &&
	awk 'BEGIN { for (i = 0; i < 300; i++) printf "line %04d of the big file.\n", i }' > "$A/work/big" &&
	ln "$A/work/big" "$A/work/link" && echo "subsrc, A's" > "$A/subsrc/f" ||
	fail "cannot fill $A"
# whole seconds: cp -a keeps microseconds, the restore compares nanoseconds
find "$A" -exec touch -h -t 202401021504.05 {} + || fail "touch"

cat > ct.sh << CT
set -e
mount --make-rprivate /
mount --bind $A $A
mount -t proc proc $A/proc
mount --bind $O $A/host
mount --bind $A/subsrc $A/sub
cd $A
pivot_root . old
exec /bin/sh -c 'umount -l /old && rmdir /old && cd /work && exec /counter 100000 < /data 3< /work/big 4< /work/link 5< /sub/f > /host/out 2>&1'
CT
/usr/sbin/unshare --fork --pid --mount sh ct.sh > unshare.err 2>&1 6>> "$H/log" &
u=$!
track $u
for i in $(seq 1 200); do
	CT=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
	[ -n "$CT" ] && grep -q '^5 ' $O/out 2>/dev/null && break
	usleep 100000
done
[ -n "$CT" ] && grep -q '^5 ' $O/out 2>/dev/null || fail "the container did not start: $(cat unshare.err)"
track $CT
[ "$(readlink /proc/$CT/cwd)" = /work ] || fail "cwd of the container: $(readlink /proc/$CT/cwd)"

hmnt=$(sed -n 's/^mnt_id:[[:space:]]*//p' /proc/$CT/fdinfo/6)
[ -n "$hmnt" ] && [ "$(stat -L -c %i /proc/$CT/fd/6)" = "$(stat -c %i "$H/log")" ] || fail "fd 6 is not $H/log: $(readlink /proc/$CT/fd/6)"
timeout -s KILL 60 imgcr dump -v4 -t $CT -D d --external "file[$(printf %x "$hmnt"):$(printf %x "$(stat -c %i "$H/log")")]" > dump.out 2> dump.err ||
	fail "dump: $(tail -n 8 dump.err | tr '\n' '|')"
wait_gone $CT 20 || fail "the container outlived its dump"
grep -q "^mnt .* mp=/ .*how=ext ext=$A\( \|\$\)" d/tree || fail "no ext root mount from $A: $(grep '^mnt' d/tree | tr '\n' '|')"
grep -q '^file .*host=1' d/tree || fail "fd 6 not recorded as a host file: $(grep '^file' d/tree | tr '\n' '|')"
grep -q '^fstat .* crc=' d/tree || fail "no crc in the fstat records: $(grep '^fstat' d/tree | tr '\n' '|')"
last=$(tail -n 1 $O/out | cut -d' ' -f1)
for x in "$B" "$C" "$D" "$E" "$F" "$G"; do cp -a "$A" "$x" || fail "cannot copy $A"; done
rm -rf "$A" || fail "cannot remove $A"
[ "$(stat -c %i "$B/work/big")" = "$(stat -c %i "$B/work/link")" ] || fail "cp -a broke the hard link in $B"

# the files it holds: B's copies, new inodes (checked below: they are B's)
cp "$IMGCR_STATE_EXPECTED" expected
cat >> expected << 'EOF'
fd */0 fdinfo.ino * -> *  # restored with --root into a copy of the container's root: its stdin is the copy's /data (t_ct_root checks the device and inode are B's)
fd */3 fdinfo.ino * -> *  # likewise its /work/big
fd */4 fdinfo.ino * -> *  # likewise its /work/link (a hard link of /work/big, one inode in B too)
fd */5 fdinfo.ino * -> *  # likewise /sub/f (the mount there bound from B's subsrc)
EOF
export IMGCR_STATE_EXPECTED=$PWD/expected

(
	T=ct_root-changed
	# the same size and mtime, another first page
	sed -i 's/^line 0000 of/LINE 0000 OF/' "$C/work/big" && touch -t 202401021504.05 "$C/work/big" ||
		fail "cannot change $C/work/big"
	[ "$(stat -c %s.%y "$C/work/big")" = "$(stat -c %s.%y "$B/work/big")" ] ||
		fail "the changed copy's size or mtime differs: $(stat -c %s.%y "$C/work/big" "$B/work/big" | tr '\n' ' ')"
	timeout -s KILL 60 imgcr restore -v4 -D d --detach --pidfile "$PWD/rpc" --root "$C" > rc.out 2> rc.err &&
		fail "restore --root into a copy with a changed file succeeded"
	grep -q "pid $CT fd 3 (pid 1 in its PID namespace): /work/big changed since the dump: .*first page differs" rc.err ||
		fail "not refused for /work/big, fd 3: $(grep -i 'error\|changed\|imgcr:' rc.err | tail -n 4 | tr '\n' '|')"
	sleep 0.5
	[ "$(tail -n 1 $O/out | cut -d' ' -f1)" = "$last" ] || fail "the count went on: $(tail -n 1 $O/out)"
	pass "$(grep -o 'first page differs[^;]*' rc.err | head -n 1)"
)

# a refused restore: restore.out/err, the message matched by $2 (naming pid $CT and fds $3),
# nothing restored
refused() {	# ROOT PATTERN WHAT
	timeout -s KILL 60 imgcr restore -v4 -D d --detach --pidfile "$PWD/rpx" --root "$1" > rx.out 2> rx.err &&
		fail "restore --root $1 ($3) succeeded"
	grep -q "$2" rx.err || fail "not refused for $3: $(grep -i 'mount at\|error\|changed\|refused\|imgcr:' rx.err | grep -v 'debug: [a-ln-z]' | tail -n 12 | tr '\n' '|')"
	sleep 0.5
	[ "$(tail -n 1 $O/out | cut -d' ' -f1)" = "$last" ] || fail "the count went on: $(tail -n 1 $O/out)"
	pass "$(grep -o "$2" rx.err | head -n 1 | cut -c1-300)"
}
(
	T=ct_root-link
	rm "$D/work/link" && cp -p "$D/work/big" "$D/work/link" &&
		[ "$(stat -c %s.%y "$D/work/link")" = "$(stat -c %s.%y "$B/work/link")" ] || fail "cannot break the link in $D"
	refused "$D" "pid $CT fd [34] (pid 1 in its PID namespace): /work/[a-z]* changed since the dump: it and pid $CT fd [34] (pid 1 in its PID namespace): /work/[a-z]* were one file at the dump.*hard link" "a hard link broken"
)
(
	T=ct_root-symlink
	cp -p "$E/data" "$O/data.copy" && rm "$E/data" && ln -s /host/data.copy "$E/data" || fail "cannot link $E/data"
	refused "$E" "pid $CT fd 0 (pid 1 in its PID namespace): /data: in the copy its path has a symbolic link" "a symbolic link out of the copy"
)
(
	T=ct_root-mpsymlink
	rm -rf "$F/sub" && ln -s subsrc "$F/sub" || fail "cannot link $F/sub"
	refused "$F" "mount at /sub: .*its mount point's path has a symbolic link" "a mount point that is a symbolic link"
)
(
	T=ct_root-fifo
	rm -f "$G/data" && mkfifo "$G/data" || fail "cannot make $G/data a FIFO"
	refused "$G" "pid $CT fd 0 (pid 1 in its PID namespace): /data: not a regular file or directory at restore" "a FIFO where a regular file was"
)

timeout -s KILL 60 imgcr restore -v4 -D d --detach --pidfile "$PWD/rp0" > r0.out 2> r0.err &&
	fail "restore without --root succeeded though $A is gone"
timeout -s KILL 60 imgcr restore -v4 -D d --detach --pidfile "$PWD/rp" --root "$B" > r.out 2> r.err ||
	fail "restore --root $B: $(tail -n 8 r.err | tr '\n' '|')"
NEW=$(cat rp)
track $NEW
wait_line $O/out "^$((last + 5)) " 30 || fail "no count after the restore: $(tail -n 2 $O/out | tr '\n' '|')"
# 1..N once each, by pid 1
n=0
while read -r num p; do
	n=$((n + 1))
	[ "$num" = "$n" ] || fail "line $n of the output is '$num $p' (gap or repeat)"
	[ "$p" = 1 ] || fail "line $n printed by pid $p, not 1"
done < $O/out
# its root, cwd, exe and files are B's
same() { [ "$(stat -L -c %d:%i "$1")" = "$(stat -L -c %d:%i "$2")" ] || fail "$1 is not $2: $(stat -L -c %d:%i "$1" "$2" | tr '\n' ' ')"; }
same /proc/$NEW/root "$B"
same /proc/$NEW/cwd "$B/work"
same /proc/$NEW/exe "$B/counter"
same /proc/$NEW/fd/0 "$B/data"
same /proc/$NEW/fd/3 "$B/work/big"
same /proc/$NEW/fd/4 "$B/work/big"
same /proc/$NEW/fd/5 "$B/subsrc/f"
same /proc/$NEW/fd/6 "$H/log"
grep -q " $B/counter\$" /proc/$NEW/maps 2>/dev/null || grep -q ' /counter$' /proc/$NEW/maps ||
	fail "the counter's mapping: $(grep counter /proc/$NEW/maps | head -n 2 | tr '\n' '|')"
[ "$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$NEW/status | awk '{print $NF}')" = 1 ] || fail "not pid 1 in its namespace"
pass "stopped at $last, restored from $B as pid $NEW (1 inside), counting on to $(tail -n 1 $O/out | cut -d' ' -f1)"
exit 0
