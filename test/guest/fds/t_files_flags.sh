#!/bin/sh
# Regular files: status flags, another mount point, files changed since
# the dump (test/progs/flagfds.c).
# files_flags: fds with O_APPEND, O_NONBLOCK (at open and by F_SETFL),
# O_NOATIME, O_SYNC, O_DSYNC, O_DIRECT (where /tmp's tmpfs takes it: 6.6
# and later; else noted), a directory, and a file on a tmpfs mounted at
# /mnt/imgcr-flags: from outside, fdinfo flags and pos are those of the
# dump and the mount's file is on the same mount (mnt_id's mount point);
# the program checks F_GETFL and offsets itself.
# files_changed: after the dump nb.dat is replaced (new inode): the restore
# is refused naming the file and the inode change; then ap.dat grows too:
# refused naming it, its size and mtime; nothing is left running;
# --allow-changed-files restores anyway, with a note per file.
# files_mount_gone: the tmpfs is unmounted after the dump: the restore is
# refused saying the filesystem is no longer mounted at /mnt/imgcr-flags.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

MNT=/mnt/imgcr-flags
fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# mnt_of PID FD: the mount point of the fd's mount
mnt_of() { awk -v id="$(fdi $1 $2 mnt_id)" '$1 == id { print $5 }' /proc/$1/mountinfo; }

# start: flagfds on $MNT, fds in FD_* variables
start() {
	rm -rf d restored
	mkdir -p $MNT
	grep -q " $MNT " /proc/mounts || mount -t tmpfs tmpfs $MNT || fail "cannot mount a tmpfs on $MNT"
	flagfds $MNT > out 2> flagfds.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "flagfds did not start: $(cat out flagfds.err | tr '\n' '|')"
	fds=$(sed -n 's/^fd [^ ]* //p' out)
	mfd=$(sed -n 's/^fd m.dat //p' out)
}

snap() {
	for f in $fds; do
		printf '%s ' "$f:$(fdi $pid $f flags):$(fdi $pid $f pos)"
	done
}

# restore_wait: imgcr restore -D d "$@" in the background, until pid is back
restore_wait() {
	imgcr restore -D d "$@" > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
}

finish() {
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
}

flags() {
	start
	before=$(snap)
	[ "$(mnt_of $pid $mfd)" = $MNT ] || fail "m.dat's mount before: '$(mnt_of $pid $mfd)'"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	tree_fields d/tree | grep -q "^fstat [0-9]* .* $MNT\$" || fail "no fstat record naming $MNT: $(grep '^fstat' d/tree | tr '\n' '|')"
	imgcr show d > show.txt || fail "imgcr show failed"
	grep -q "^file [0-9]*: $MNT/m.dat dev [0-9]* ino [0-9]* size 5 mtime [0-9.]* mount $MNT\$" show.txt ||
		fail "imgcr show: $(grep '^file' show.txt | tr '\n' '|')"
	restore_wait
	after=$(snap)
	[ "$before" = "$after" ] || fail "fdinfo flags:pos before '$before', after '$after'"
	[ "$(mnt_of $pid $mfd)" = $MNT ] || fail "m.dat's mount after: '$(mnt_of $pid $mfd)'"
	[ "$(readlink /proc/$pid/fd/$mfd)" = $MNT/m.dat ] || fail "m.dat: $(readlink /proc/$pid/fd/$mfd)"
	finish
	grep -q nodirect out && info "O_DIRECT: not taken by tmpfs on $(uname -r): not tested"
	grep -q '^ok di.dat' out && info "O_DIRECT kept"
	pass "$(grep -c '^ok' out) checks ok; flags:pos $after"
}

changed() {
	start
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	ino=$(stat -c %i nb.dat)
	cp nb.dat x && mv x nb.dat
	imgcr restore -D d > r1.out 2> r1.err && fail "restore of a replaced nb.dat succeeded"
	grep -q "$PWD/nb.dat changed since the dump: inode $ino -> $(stat -c %i nb.dat)[,;]" r1.err ||
		fail "message: $(cat r1.err | tr '\n' '|')"
	[ -z "$(state $pid)" ] || fail "task $pid running after the refused restore"
	echo more >> ap.dat
	imgcr restore -D d > r2.out 2> r2.err && fail "restore of a grown ap.dat succeeded"
	grep -q "$PWD/ap.dat changed since the dump: size 5 -> 10, mtime [0-9.]* -> [0-9.]*; restore with --allow-changed-files" r2.err ||
		fail "message: $(cat r2.err | tr '\n' '|')"
	[ -z "$(state $pid)" ] || fail "task $pid running after the refused restore"
	# nb.dat was replaced and ap.dat grew on purpose: the state check would
	# (rightly) see the new inode and size, so it is off for this restore
	hook=${IMGCR_STATE_HOOK:-}
	IMGCR_STATE_HOOK=
	restore_wait --allow-changed-files
	IMGCR_STATE_HOOK=$hook
	# each note names the task and fd holding the file
	grep -q "note: pid $pid fd [0-9]*: $PWD/ap.dat changed since the dump (size 5 -> 10" restore.err &&
		grep -q "note: pid $pid fd [0-9]*: $PWD/nb.dat changed since the dump (inode" restore.err || fail "notes: $(cat restore.err | tr '\n' '|')"
	finish
	pass "refused: $(grep changed r2.err | cut -c1-110)...; restored with --allow-changed-files"
}

mount_gone() {
	start
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	umount $MNT || fail "cannot unmount $MNT"
	imgcr restore -D d > r.out 2> r.err && fail "restore with $MNT unmounted succeeded"
	grep -q "cannot open $MNT/m.dat: No such file or directory: the filesystem it was on at dump (dev [0-9]*:[0-9]*, mounted at $MNT) is not mounted there any more" r.err ||
		fail "message: $(cat r.err | tr '\n' '|')"
	[ -z "$(state $pid)" ] || fail "task $pid running after the refused restore"
	pass "refused: $(grep 'cannot open' r.err | cut -c1-160)"
}

subtest files_flags flags
subtest files_changed changed
subtest files_mount_gone mount_gone
