#!/bin/sh
# A container (util-linux unshare --fork --pid --mount, pivot_root into a
# tmpfs root with busybox, proc, a bind of the host's /hostdir at /host)
# whose pid 1, a busybox sh, holds a file of a mount outside its mount
# namespace: a restore would open its path inside the container, another
# file.  Dumped from the host.
#   ct_outside      fd 7 on the host's /outside-file, opened before
#                   unshare: the dump is refused, naming the pid, the fd,
#                   the path and the mount ID (the one fdinfo shows); no
#                   tree file; the container goes on.  Then the shell
#                   closes fd 7 (SIGUSR1) and a second dump succeeds; the
#                   restore (fd 8 on /data/f of the container's tmpfs root,
#                   stdout on the bind /host/out: the control case) goes on
#                   ticking; inside, the shell reads fd 8 (the
#                   container's file from its start) and finds fd 7
#                   closed; outside, fd 8 is /data/f on a mount of the
#                   restored container's mountinfo.
#   ct_outside-cwd  the shell's cwd on the old root, detached after
#                   pivot_root: refused, naming "cwd"; after cd / (SIGUSR1)
#                   a dump succeeds and restores.
#   ct_outside-inotify  a child of the shell (inowatch) watches /tw, a bind
#                   of the host's /tmp/ctw (a tmpfs imgcr sees at another
#                   path): the watch is recorded by the container's path
#                   (before: the host's /tmp/ctw, and the restore failed
#                   after the dump had killed the container); restored, the
#                   inotify fd watches /tmp/ctw's inode again (fdinfo) and
#                   a file made in /tmp/ctw from the host is reported under
#                   the same watch descriptor.  A second inowatch, chrooted
#                   to /jail, watches its /w: recorded as /jail/w (the
#                   namespace root's path) and restored the same way.
# The shell reads with -u 9, not <&9: a redirection moves its stdin to a
# spare fd for the read, and a restored shell that finished its read
# before the state check had its stdin back (seen once on 7.2: fd 0
# /tick.fifo -> /dev/null, fd 11 gone).
# The shell ticks with a builtin (read -t from a FIFO nobody writes), not
# a forked usleep: a dump that catches such a child between fork and its
# exec (busybox runs usleep in the forked child, resetting the traps and
# renaming it) restores it there, and it changes itself before the state
# check's snapshot (seen once in CI: comm sh -> usleep).
# timeout: 500
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

if [ "${1:-}" != inner ]; then
	ct_pivotable sh "$0" inner
	exit $?
fi
ct_pivot_check || { T=ct_outside; fail "$(ct_pivot_check 2>&1)"; }

step() { echo "INFO $T: $*" > /dev/console 2>/dev/null || true; }

# start MODE: the container (CT: the host pid of its pid 1, a busybox sh
# ticking into /hostdir/out); MODE fd: fd 7 on the host's /outside-file;
# MODE cwd: its cwd on the detached old root
start() {
	rm -rf /ctsrc /hostdir && mkdir -p /ctsrc /hostdir && echo "host file" > /outside-file ||
		fail "cannot make the host files"
	cp /bin/busybox /ctsrc/
	if [ "$1" = ino ]; then
		rm -rf /tmp/ctw && mkdir /tmp/ctw && cp /imgcr/bin/inowatch /ctsrc/ ||
			fail "cannot make /tmp/ctw"
	fi
	cat > /ctsrc/work.sh <<'W'
[ -x /bin/inowatch ] && /bin/inowatch /tw > /host/ino.out 2>&1 &
[ -x /jail/inowatch ] && chroot /jail /inowatch /w > /host/ino2.out 2>&1 &
trap 'exec 7<&-; cd /; echo closed' USR1
trap 'read -r l <&8; echo "fd8 $l"; [ -e /proc/$$/fd/7 ] && echo "FAIL fd 7 open after the restore"; [ "$l" = "container data" ] || echo "FAIL fd 8 read: $l"; echo "work PASS"; exit 0' USR2
exec 9<> /tick.fifo
n=0
while :; do
	n=$((n + 1))
	echo "tick $n"
	read -t 0.1 -u 9 _
done
W
	cat > ct.sh <<CT
set -e
export PATH=/usr/sbin:\$PATH
mount --make-rprivate /
mkdir -p /ctr && mount -t tmpfs -o size=16m,mode=755 ctroot /ctr
mkdir -p /ctr/bin /ctr/proc /ctr/dev /ctr/host /ctr/data /ctr/old
cp /ctsrc/busybox /ctr/bin/
$([ "$1" = ino ] && echo "cp /ctsrc/inowatch /ctr/bin/ && mkdir /ctr/tw && mount --bind /tmp/ctw /ctr/tw && mkdir -p /ctr/jail/w && cp /ctsrc/inowatch /ctr/jail/")
cp /ctsrc/work.sh /ctr/work.sh
for a in sh usleep cat echo chroot; do ln -s busybox /ctr/bin/\$a; done
mknod -m 666 /ctr/dev/null c 1 3
mkfifo /ctr/tick.fifo
echo "container data" > /ctr/data/f
mount -t proc proc /ctr/proc
mount --bind /hostdir /ctr/host
cd /ctr
pivot_root . old
$([ "$1" = cwd ] && echo "cd /old")
umount -l /old
rmdir /old 2>/dev/null || true
exec /bin/sh /work.sh 8< /data/f < /dev/null > /host/out 2>&1
CT
	if [ "$1" = fd ]; then
		/usr/sbin/unshare --fork --pid --mount sh ct.sh 7< /outside-file > unshare.err 2>&1 &
	else
		/usr/sbin/unshare --fork --pid --mount sh ct.sh > unshare.err 2>&1 &
	fi
	u=$!
	track $u
	for i in $(seq 1 200); do
		CT=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
		[ -n "$CT" ] && grep -q '^tick 10$' /hostdir/out 2>/dev/null && break
		usleep 100000
	done
	[ -n "$CT" ] && grep -q '^tick 10$' /hostdir/out 2>/dev/null ||
		fail "the container did not start: $(cat unshare.err)"
	track $CT
}

# ticking: the container's ticks go on (3 more)
ticking() {
	n=$(grep -c '^tick ' /hostdir/out)
	i=0
	while [ "$(grep -c '^tick ' /hostdir/out)" -lt $((n + 3)) ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "$1: the container does not tick: $(tail -n 2 /hostdir/out | tr '\n' '|')"
		usleep 50000
	done
}

# refused MODE: the dump refused with the message WANT, nothing written,
# the container still running; then SIGUSR1 (close fd 7, cd /) and a dump
# that succeeds; the restore goes on and passes its own check
refused() {
	mode=$1
	want=$2
	step "dump $CT (refused)"
	timeout -s KILL 120 imgcr dump -t $CT -D d > dump.out 2> dump.err &&
		fail "the dump of a container with a file outside its mounts succeeded"
	grep -q "^imgcr: $want" dump.err || fail "message: $(tr '\n' '|' < dump.err)"
	grep -q "^imgcr: dump failed; the tree was left running untouched" dump.err ||
		fail "no 'left running': $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	st=$(state $CT)
	case "$st" in
	[SRD]) ;;
	*) fail "pid $CT state '$st' after the refused dump" ;;
	esac
	ticking "after the refused dump"
	kill -USR1 $CT
	wait_line /hostdir/out '^closed$' 20 || fail "the shell did not close fd 7 / cd /"
	ticking "after SIGUSR1"
	[ -e /proc/$CT/fd/7 ] && fail "fd 7 still open after SIGUSR1"
	step "dump $CT again"
	rm -rf d
	timeout -s KILL 120 imgcr dump -v4 -t $CT -D d > dump2.out 2> dump2.err ||
		fail "the second dump: $(tail -n 8 dump2.err | tr '\n' '|')"
	wait_gone $CT 20 || fail "the container outlived its dump"
	# the container's /dev/null (fd 0), /data/f (fd 8) and /work.sh are on
	# its tmpfs root, made again: new inode numbers (docs/containers.md)
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'fd */* fdinfo.ino * -> *  # files of the container'"'"'s restored tmpfs root' >> expected
	step "restore"
	IMGCR_STATE_EXPECTED=$PWD/expected \
	timeout -s KILL 120 imgcr restore -v4 -D d --allow-changed-files --detach --pidfile "$PWD/rp" > restore.out 2> restore.err ||
		fail "restore: $(tail -n 8 restore.err | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	ticking "after the restore"
	# outside: fd 8 is /data/f on one of the restored container's mounts, no fd 7
	[ "$(readlink /proc/$NEW/fd/8)" = /data/f ] || fail "fd 8 of $NEW is '$(readlink /proc/$NEW/fd/8)'"
	m=$(awk '$1 == "mnt_id:" { print $2 }' /proc/$NEW/fdinfo/8)
	awk -v m="$m" '$1 == m { f = 1 } END { exit !f }' /proc/$NEW/mountinfo ||
		fail "fd 8's mount $m is not in the restored container's mountinfo"
	[ -e /proc/$NEW/fd/7 ] && fail "fd 7 open after the restore"
	[ "$(readlink /proc/$NEW/cwd)" = / ] || fail "cwd of $NEW is '$(readlink /proc/$NEW/cwd)'"
	# inside: the shell's check
	kill -USR2 $NEW
	wait_gone $NEW 20 || fail "the restored shell did not end on SIGUSR2"
	grep '^FAIL' /hostdir/out > fails.txt
	[ -s fails.txt ] && fail "inside: $(tr '\n' '|' < fails.txt)"
	grep -q '^work PASS' /hostdir/out || fail "no verdict: $(tail -n 3 /hostdir/out | tr '\n' '|')"
	grep -q '^fd8 container data$' /hostdir/out || fail "fd 8: $(grep '^fd8' /hostdir/out)"
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

outside_fd() {
	start fd
	mnt=$(awk '$1 == "mnt_id:" { print $2 }' /proc/$CT/fdinfo/7)
	[ -n "$mnt" ] || fail "no mnt_id for fd 7"
	awk -v m="$mnt" '$1 == m { f = 1 } END { exit f }' /proc/$CT/mountinfo ||
		fail "the host file's mount $mnt is in the container's mountinfo (the test is wrong)"
	refused fd "pid $CT fd 7: /outside-file is on a mount outside the container's mount namespace (mnt_id $mnt): not supported"
}

outside_cwd() {
	start cwd
	refused cwd "pid $CT cwd: .* is on a mount outside the container's mount namespace (mnt_id [0-9]*): not supported"
}

# watcher PID DIR: the child of PID that runs inowatch DIR
watcher() {
	for c in $(cat /proc/$1/task/*/children 2>/dev/null); do
		[ "$(tr '\0' ' ' < /proc/$c/cmdline 2>/dev/null)" = "${3:-/bin/inowatch} $2 " ] && echo $c && return
	done
}

outside_ino() {
	start ino
	wait_line /hostdir/ino.out '^ready wd=1$' 20 || fail "inowatch did not start: $(tr '\n' '|' < /hostdir/ino.out)"
	W=$(watcher $CT /tw)
	[ -n "$W" ] || fail "no inowatch child of $CT"
	wait_line /hostdir/ino2.out '^ready wd=1$' 20 || fail "the chrooted inowatch did not start: $(tr '\n' '|' < /hostdir/ino2.out)"
	ino=$(printf %x "$(stat -c %i /tmp/ctw)")
	grep -q "^inotify wd:1 ino:$ino " /proc/$W/fdinfo/3 || fail "the test is wrong: fdinfo 3 of $W: $(grep inotify /proc/$W/fdinfo/3)"
	step "dump $CT"
	timeout -s KILL 120 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err ||
		fail "dump: $(tail -n 8 dump.err | tr '\n' '|')"
	wait_gone $CT 20 || fail "the container outlived its dump"
	grep -q '^watch .* path=/tw$' d/tree || fail "the watch record: $(grep '^watch' d/tree)"
	grep -q '^watch .* path=/jail/w$' d/tree || fail "the chrooted task's watch record: $(grep '^watch' d/tree)"
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'fd */* fdinfo.ino * -> *  # files of the container'"'"'s restored tmpfs root' >> expected
	echo 'fd */* fdinfo.inotify * -> *  # the chrooted watcher'"'"'s /jail/w is on the restored tmpfs root (the /tw watch is checked below)' >> expected
	step "restore"
	IMGCR_STATE_EXPECTED=$PWD/expected \
	timeout -s KILL 120 imgcr restore -v4 -D d --allow-changed-files --detach --pidfile "$PWD/rp" > restore.out 2> restore.err ||
		fail "restore: $(tail -n 8 restore.err | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	ticking "after the restore"
	W=$(watcher $NEW /tw)
	[ -n "$W" ] || fail "no inowatch child of $NEW after the restore"
	grep -q "^inotify wd:1 ino:$ino " /proc/$W/fdinfo/3 ||
		fail "restored: fdinfo 3 of $W: $(grep inotify /proc/$W/fdinfo/3), expected ino:$ino"
	touch /tmp/ctw/after
	wait_line /hostdir/ino.out '^event wd=1 mask=0x100 name=after$' 20 ||
		fail "no IN_CREATE of 'after' under wd 1: $(tr '\n' '|' < /hostdir/ino.out)"
	touch /proc/$NEW/root/jail/w/after2
	wait_line /hostdir/ino2.out '^event wd=1 mask=0x100 name=after2$' 20 ||
		fail "chrooted watcher: no IN_CREATE of 'after2' under wd 1: $(tr '\n' '|' < /hostdir/ino2.out)"
	pass "watch paths /tw and (chrooted) /jail/w restored; events seen"
}

sub() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	$2
}
subtest ct_outside "sub outside outside_fd"
subtest ct_outside-cwd "sub cwd outside_cwd"
subtest ct_outside-inotify "sub ino outside_ino"
