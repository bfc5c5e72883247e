#!/bin/sh
# Mappings of a file that has since been unlinked.  On ramfs (a plain
# deleted file, private or shared) and for a private mapping of a deleted
# tmpfs file, open of /proc/PID/dump fails with EOPNOTSUPP, the task stays
# stopped and untouched, and after SIGCONT it goes on with its mapping
# intact.  A shared mapping of a deleted tmpfs file is either refused the
# same way or dumped as a shmem object (like a memfd) and then restored
# faithfully: same maps line but the inode, same contents.  Control: with
# the file in place the dump works.
. /imgcr/guest/lib.sh
require_modules

# start DIR KIND: mapdel on DIR/f.dat (MAP_<KIND>), file unlinked, ticking.
start() {
	head -c 8192 /imgcr/bin/counter > "$1/f.dat"
	mapdel "$1/f.dat" "$2" > out &
	pid=$!
	track $pid
	wait_line out '^ready' 10 || fail "mapdel did not start: $(cat out)"
	sum=$(sed -n 's/^ready //p' out)
	rm "$1/f.dat"
	grep -q " $1/f.dat (deleted)\$" /proc/$pid/maps || fail "maps does not show the deleted file"
	wait_line out '^tick 2 ' 10 || fail "mapdel does not tick"
	stop_task $pid
}

# same_sum: every tick saw the mapping contents of "ready".
same_sum() {
	grep '^tick' out | grep -vq " $sum\$" &&
		fail "mapping contents changed: $(grep '^tick' out | grep -v " $sum\$" | head -n1) [out: $(head -n 4 out | tr '\n' '|')] [maps: $(grep f.dat /proc/$pid/maps | tr '\n' '|')]"
	return 0
}

# refused DIR KIND
refused() {
	start "$1" "$2"
	r=$(readall /proc/$pid/dump x.img)
	[ "$r" = "open failed: EOPNOTSUPP" ] || fail "dump: '$r', want 'open failed: EOPNOTSUPP'"
	cat /proc/$pid/dump > y.img 2>/dev/null && fail "cat of the dump succeeded"
	[ "$(state $pid)" = T ] || fail "state '$(state $pid)' after the failed dump, want T"
	n=$(tail -n1 out | cut -d' ' -f2)
	kill -CONT $pid
	wait_line out "^tick $((n + 3)) " 10 || fail "did not go on after SIGCONT: $(tail -n1 out)"
	same_sum
	kill9 $pid
	pass
}

ramfs_dir() {
	mkdir r
	mount -t ramfs ramfs r || fail "cannot mount ramfs"
	trap 'cleanup; wait; umount "$PWD/r" 2>/dev/null' EXIT
	DIR=$PWD/r
}

sub_ramfs_private() { ramfs_dir; refused "$DIR" private; }
sub_ramfs_shared() { ramfs_dir; refused "$DIR" shared; }
sub_tmpfs_private() { refused "$PWD" private; }

# Either outcome is right, but nothing in between: refused like any
# deleted file (EOPNOTSUPP, task untouched), or dumped as a shmem object and
# restored faithfully (same maps line but the inode, same contents).
sub_tmpfs_shared() {
	start "$PWD" shared
	grep " $PWD/f.dat (deleted)\$" /proc/$pid/maps | awk '{ $5 = "INODE"; print }' > line.before
	r=$(readall /proc/$pid/dump d.img)
	n=$(tail -n1 out | cut -d' ' -f2)
	case "$r" in
	"open failed: EOPNOTSUPP")
		[ "$(state $pid)" = T ] || fail "state '$(state $pid)' after the failed dump, want T"
		kill -CONT $pid
		wait_line out "^tick $((n + 3)) " 10 || fail "did not go on after SIGCONT: $(tail -n1 out)"
		same_sum
		kill9 $pid
		pass "refused (EOPNOTSUPP)"
		return ;;
	"ok bytes="*) ;;
	*) fail "dump: '$r', want EOPNOTSUPP or a faithful restore" ;;
	esac
	kill9 $pid
	chmod +x d.img
	./d.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_line out "^tick $((n + 1)) " 10 || fail "restored task does not tick$(rerr)"
	grep ' rw-s ' /proc/$rpid/maps | awk '{ $5 = "INODE"; print }' > line.after
	cmp -s line.before line.after ||
		fail "dumped (not refused) but restored differently: maps line before '$(cat line.before)' after '$(cat line.after)'"
	same_sum
	kill9 $rpid
	pass "dumped as a shmem object"
}

control() {
	head -c 8192 /imgcr/bin/counter > f.dat
	mapdel f.dat shared > out &
	pid=$!
	track $pid
	wait_line out '^ready' 10 || fail "mapdel did not start: $(cat out)"
	stop_task $pid
	r=$(readall /proc/$pid/dump x.img)
	case "$r" in "ok bytes="*) ;; *) fail "dump with the file in place: '$r'" ;; esac
	kill9 $pid
	pass
}

subtest deleted-ramfs-private sub_ramfs_private
subtest deleted-ramfs-shared sub_ramfs_shared
subtest deleted-tmpfs-private sub_tmpfs_private
subtest deleted-tmpfs-shared sub_tmpfs_shared
subtest deleted-control control
