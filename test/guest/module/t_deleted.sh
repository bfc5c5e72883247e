#!/bin/sh
# Mappings of a file that has since been unlinked (IMGCR_FILE_DELETED).
# Raw dump (cat /proc/PID/dump), on ramfs and tmpfs, private and shared:
# the dump works and leaves the task stopped and untouched (after SIGCONT
# it goes on with its mapping intact); the image names the file by its old
# path, and executing it fails cleanly while the file is absent (ENOENT,
# with the loader's message that imgcr restore recreates it), or when a
# different file took the path (ESTALE).
# deleted-imgcr: imgcr dump + restore of mapghost (test/progs/mapghost.c),
# a private mapping of a deleted ramfs file and a shared mapping of a
# deleted tmpfs file also open as an fd: both saved as "mapped" ghosts; a
# restore while a new file has the shared one's path is refused (message)
# and leaves nothing behind (the new file untouched); then restored: maps
# and the fd show the paths " (deleted)", nothing is left in either
# directory, and the program finds its data (private writes kept, the
# shared mapping coherent with the fd).  deleted-exe: the same with the
# program itself deleted (its exe).  Control: with the file in place
# the dump works.
. /imgcr/guest/lib.sh
require_modules
# start DIR KIND: mapdel on DIR/f.dat (MAP_<KIND>), file unlinked, ticking.
start() {
	head -c 8192 /imgcr/bin/counter > "$1/f.dat"
	rm -f out	# the subtests share the directory: no old "ready"
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

# dumped DIR KIND [ESTALE]: the raw dump works, the task goes on; the image
# fails to execute while DIR/f.dat is absent (or, with ESTALE, another file)
dumped() {
	start "$1" "$2"
	r=$(readall /proc/$pid/dump x.img)
	case "$r" in "ok bytes="*) ;; *) fail "dump: '$r'" ;; esac
	[ "$(state $pid)" = T ] || fail "state '$(state $pid)' after the dump, want T"
	n=$(tail -n1 out | cut -d' ' -f2)
	kill -CONT $pid
	wait_line out "^tick $((n + 3)) " 10 || fail "did not go on after SIGCONT: $(tail -n1 out)"
	same_sum
	want=ENOENT msg="mapped file $1/f.dat was deleted: imgcr restore recreates it from the dump directory"
	if [ "${3:-}" = ESTALE ]; then
		head -c 8192 /imgcr/bin/counter > "$1/f.dat"
		want=ESTALE msg="mapped file $1/f.dat was deleted and is not its copy: imgcr restore recreates it from the dump directory"
	fi
	dmesg_mark
	r=$(tryexec_expect x.img)
	[ -z "$r" ] && [ "$(cat te.errno)" = $want ] || fail "exec of the image: '$r' $(cat te.errno 2>/dev/null), want $want"
	dmesg_since | grep -qF "$msg" || fail "no message '$msg': $(dmesg_since | tail -n 3 | tr '\n' '|')"
	n=$(tail -n1 out | cut -d' ' -f2)
	wait_line out "^tick $((n + 2)) " 10 || fail "the task stopped after the failed exec"
	same_sum
	kill9 $pid
	rm -f "$1/f.dat"
	pass "$want"
}

ramfs_dir() {
	mkdir -p r
	mount -t ramfs ramfs r || fail "cannot mount ramfs"
	trap 'cleanup; wait; umount "$PWD/r" 2>/dev/null' EXIT
	DIR=$PWD/r
}

sub_ramfs_private() { ramfs_dir; dumped "$DIR" private; }
sub_ramfs_shared() { ramfs_dir; dumped "$DIR" shared ESTALE; }
sub_tmpfs_private() { dumped "$PWD" private ESTALE; }
sub_tmpfs_shared() { dumped "$PWD" shared; }

sub_imgcr() {
	ramfs_dir
	rm -f out	# the subtests share the directory: no old "ready"
	mapghost "$DIR" "$PWD" > out 2> mg.err &
	pid=$!
	track $pid
	wait_line out '^ready' 10 || fail "mapghost did not start: $(cat out mg.err | tr '\n' '|')"
	S=$(sed -n 's/^fd //p' out)
	grep -q " $DIR/p.dat (deleted)\$" /proc/$pid/maps && grep -q " $PWD/s.dat (deleted)\$" /proc/$pid/maps ||
		fail "maps before: $(grep dat /proc/$pid/maps | tr '\n' '|')"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task survived the dump"
	[ "$(grep -c '^ghost-mapped ' d/tree)" = 2 ] && [ "$(grep -c '^ghost ' d/tree)" = 2 ] ||
		fail "want 2 mapped ghosts: $(grep '^ghost' d/tree | tr '\n' '|')"
	[ "$(ls d/ghost-*.data | wc -l)" = 2 ] || fail "want 2 ghost data files: $(ls d)"

	# the shared file's path taken: refused, nothing made, nothing left running
	echo other > s.dat
	imgcr restore -D d > rf.out 2> rf.err && fail "restore with $PWD/s.dat taken succeeded"
	grep -q "deleted file $PWD/s.dat: the tree maps it, so it must be recreated at its path, but that name is taken" rf.err ||
		fail "failed restore: $(cat rf.err | tr '\n' '|')"
	[ "$(cat s.dat)" = other ] || fail "the new s.dat was changed"
	[ -z "$(ls -A "$DIR")" ] || fail "left after the failed restore: $(ls -A "$DIR")"
	[ -z "$(state $pid)" ] || fail "task running after the failed restore"
	rm s.dat

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	n=0
	while [ -e s.dat ] || [ -e "$DIR/p.dat" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "the ghosts are still linked 10 s after the restore: $(ls -A "$DIR" .)$(rerr)"
		usleep 20000
	done
	grep -q " $DIR/p.dat (deleted)\$" /proc/$pid/maps && grep -q " $PWD/s.dat (deleted)\$" /proc/$pid/maps ||
		fail "maps after: $(grep dat /proc/$pid/maps | tr '\n' '|')"
	[ "$(readlink /proc/$pid/fd/$S)" = "$PWD/s.dat (deleted)" ] || fail "fd $S: $(readlink /proc/$pid/fd/$S)"
	[ -z "$(ls -A "$DIR")" ] && [ "$(ls -A | grep -c -e ghost- -e '^[ps]\.dat$')" = 0 ] ||
		fail "left in the directories: $(ls -A "$DIR" . | tr '\n' ' ')"
	grep -q "deleted file $PWD/s.dat recreated at its path, unlinked again once the images have opened it" restore.err ||
		fail "notes: $(cat restore.err | tr '\n' '|')"
	touch restored
	wait_line out '^done' 10 || fail "no 'done': $(tail -n 3 out | tr '\n' '|')"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "$(tail -n 3 out | tr '\n' '|')"
	kill9 $pid
	pass "$(grep -c '^ok' out) checks ok"
}

# deleted-exe: a copy of mapghost runs and is deleted: its exe and its
# mappings of the program are one mapped ghost (refused, the task going
# on, with a --ghost-limit below its size); after imgcr restore
# /proc/PID/exe and maps read "PATH (deleted)" and nothing is left.
sub_exe() {
	rm -f restored
	cp /imgcr/bin/mapghost mg
	rm -f out	# the subtests share the directory: no old "ready"
	./mg "$PWD" "$PWD" > out 2> mg.err &
	pid=$!
	track $pid
	wait_line out '^ready' 10 || fail "mg did not start: $(cat out mg.err | tr '\n' '|')"
	rm mg
	[ "$(readlink /proc/$pid/exe)" = "$PWD/mg (deleted)" ] || fail "exe before: $(readlink /proc/$pid/exe)"
	imgcr dump -t $pid -D e0 --ghost-limit 100K 2> dump0.err && fail "dump with --ghost-limit 100K succeeded"
	grep -q "pid $pid: mapped deleted file $PWD/mg: a deleted file with [0-9]* bytes of data (size [0-9]*) is not supported: more than the limit of 102400 bytes" dump0.err ||
		fail "message: $(cat dump0.err | tr '\n' '|')"
	n=$(grep -c '^tick' out)
	usleep 500000
	case "$(state $pid)" in S | R) ;; *) fail "task is '$(state $pid)' after the refused dump" ;; esac
	[ "$(grep -c '^tick' out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	imgcr dump -t $pid -D e --ghost-limit 4M 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task survived the dump"
	[ "$(grep -c '^ghost-mapped ' e/tree)" = 3 ] || fail "want 3 mapped ghosts: $(grep '^ghost' e/tree | tr '\n' '|')"
	imgcr restore -D e > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	n=0
	while [ -e mg ] || [ -e p.dat ] || [ -e s.dat ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "the ghosts are still linked 10 s after the restore$(rerr)"
		usleep 20000
	done
	[ "$(readlink /proc/$pid/exe)" = "$PWD/mg (deleted)" ] || fail "exe after: $(readlink /proc/$pid/exe)"
	grep -q " $PWD/mg (deleted)\$" /proc/$pid/maps || fail "maps after: $(grep mg /proc/$pid/maps | tr '\n' '|')"
	touch restored
	wait_line out '^done' 10 || fail "no 'done': $(tail -n 3 out | tr '\n' '|')"
	grep -q '^done ok' out || fail "$(grep BAD out | tr '\n' '|')"
	kill9 $pid
	pass
}

control() {
	head -c 8192 /imgcr/bin/counter > f.dat
	rm -f out	# the subtests share the directory: no old "ready"
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
subtest deleted-imgcr sub_imgcr
subtest deleted-exe sub_exe
subtest deleted-control control
