#!/bin/sh
# Deleted files still open (test/progs/ghost.c), on /tmp (tmpfs):
# files_deleted: a parent and its child share one description of the
# deleted a.dat, the parent has a second description of it, a 64 MiB
# sparse deleted s.dat (O_APPEND) and a 900 KiB deleted b.dat (mode 0640,
# under the default 1 MiB ghost limit).  The dump saves three ghosts (the
# sparse one stays sparse in the dump directory); before the restore a new
# a.dat takes the old name, so that ghost is made at a temporary name in
# the same directory and unlinked under its own name (swapped with the new
# a.dat; the note says so): its link is "a.dat (deleted)" again and the
# new a.dat is untouched.
# A restore that fails after making some ghosts (one ghost's content
# removed) leaves none behind.  From outside: readlink still ends in
# " (deleted)", fdinfo pos and flags are those of the dump, nothing is
# left in the directory; the restored program checks data, offsets,
# sharing, one inode, sparseness, mode.
# files_deleted_limit: a deleted file with 2 MiB of data is refused
# (message names pid, fd, size and --ghost-limit), the task keeps running
# untouched; with --ghost-limit 4M the dump works.
# (A deleted name of a file with other names, and a removed directory,
# once refused here, are restored now: t_files_ghosts.sh.)
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

main() {
	ghost > out 2> ghost.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "ghost did not start: $(cat out ghost.err | tr '\n' '|')"
	set -- $(sed -n 's/^fds A=\([0-9]*\) A2=\([0-9]*\) S=\([0-9]*\) B=\([0-9]*\) child=\([0-9]*\)$/\1 \2 \3 \4 \5/p' out)
	A=$1 A2=$2 S=$3 B=$4 kid=$5
	track $kid
	before=""
	for f in $A $A2 $S $B; do
		l=$(readlink /proc/$pid/fd/$f)
		case "$l" in *" (deleted)") ;; *) fail "fd $f is not a deleted file before the dump: '$l'" ;; esac
		before="$before|$f $(fdi $pid $f pos) $(fdi $pid $f flags)"
	done
	[ "$(fdi $kid $A pos)" = 1234 ] || fail "child's fd $A pos '$(fdi $kid $A pos)'"
	linkS=$(readlink /proc/$pid/fd/$S)
	linkB=$(readlink /proc/$pid/fd/$B)

	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
	[ "$(grep -c '^ghost ' d/tree)" = 3 ] || fail "want 3 ghost records: $(grep '^ghost' d/tree | tr '\n' '|')"
	[ "$(tree_fields d/tree | grep -c '^file [0-9]* ghost ')" = 4 ] || fail "want 4 ghost file records: $(grep '^file' d/tree | tr '\n' '|')"
	[ "$(ls d/ghost-*.data | wc -l)" = 3 ] || fail "want 3 ghost data files: $(ls d)"
	sg=$(tree_fields d/tree | grep '^ghost .*/s.dat$' | cut -d' ' -f2,3 | tr ' ' -)
	[ "$(size_of d/ghost-$sg.data)" = 67108864 ] || fail "s.dat ghost size $(size_of d/ghost-$sg.data)"
	[ "$(du -k d/ghost-$sg.data | cut -f1)" -lt 1024 ] || fail "the sparse ghost takes $(du -k d/ghost-$sg.data | cut -f1) KiB in the dump"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "fd $S: deleted file $PWD/s.dat rw" show.txt && grep -q "^ghost .*: deleted file $PWD/b.dat, size 921600, mode 0640" show.txt ||
		fail "imgcr show: $(grep -E 'deleted|ghost' show.txt | tr '\n' '|')"

	echo other > a.dat
	# a restore that fails after some ghosts were made (s.dat's content
	# is missing) leaves no ghost behind and nothing running
	mv d/ghost-$sg.data sdata
	imgcr restore -D d > rf.out 2> rf.err && fail "restore without s.dat's content succeeded"
	grep -q "deleted file $PWD/s.dat: cannot open its content" rf.err || fail "failed restore: $(cat rf.err | tr '\n' '|')"
	grep -q "deleted file $PWD/b.dat recreated at its path" rf.err || fail "b.dat's ghost was not made first: $(cat rf.err | tr '\n' '|')"
	[ "$(ls -A | grep -c -e ghost- -e '^s.dat$' -e '^b.dat$')" = 0 ] || fail "left after a failed restore: $(ls -A | tr '\n' ' ')"
	for p in $pid $kid; do [ -z "$(state $p)" ] || fail "task $p running after the failed restore"; done
	mv sdata d/ghost-$sg.data
	ino_other=$(stat -c %i a.dat)
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $kid
	after=""
	for f in $A $A2 $S $B; do
		after="$after|$f $(fdi $pid $f pos) $(fdi $pid $f flags)"
	done
	[ "$before" = "$after" ] || fail "fdinfo pos/flags before '$before', after '$after'"
	[ "$(fdi $kid $A pos)" = 1234 ] || fail "child's fd $A pos after '$(fdi $kid $A pos)'"
	[ "$(readlink /proc/$pid/fd/$S)" = "$linkS" ] && [ "$(readlink /proc/$pid/fd/$B)" = "$linkB" ] ||
		fail "links after: $(readlink /proc/$pid/fd/$S), $(readlink /proc/$pid/fd/$B)"
	[ "$(readlink /proc/$pid/fd/$A)" = "$PWD/a.dat (deleted)" ] ||
		fail "a.dat's ghost: '$(readlink /proc/$pid/fd/$A)'"
	[ "$(readlink /proc/$pid/fd/$A2)" = "$PWD/a.dat (deleted)" ] ||
		fail "a.dat's second description: '$(readlink /proc/$pid/fd/$A2)'"
	[ "$(readlink /proc/$kid/fd/$A)" = "$(readlink /proc/$pid/fd/$A)" ] || fail "child's a.dat: $(readlink /proc/$kid/fd/$A)"
	[ "$(cat a.dat)" = other ] && [ "$(stat -c %i a.dat)" = "$ino_other" ] ||
		fail "the new a.dat was changed: $(cat a.dat), inode $(stat -c %i a.dat), was $ino_other"
	[ "$(ls -A | grep -c -e ghost- -e '^s.dat$' -e '^b.dat$')" = 0 ] || fail "left in the directory: $(ls -A | tr '\n' ' ')"
	grep -q "deleted file $PWD/s.dat recreated at its path" restore.err &&
		grep -q "deleted file $PWD/a.dat recreated at the free name $PWD/.imgcr-ghost-.*, unlinked again under its own name" restore.err ||
		fail "notes: $(cat restore.err | tr '\n' '|')"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "$(grep -c '^ok' out) checks ok; a.dat's name taken: $(sed -n 's/.*\(at the free name [^,]*\).*/\1/p' restore.err)"
}

limit() {
	ghost big 2048 > big.out 2>&1 &
	pid=$!
	track $pid
	wait_line big.out '^ready' 20 || fail "ghost big did not start: $(cat big.out)"
	fd=$(sed -n 's/^fd //p' big.out)
	imgcr dump -t $pid -D e 2> e.err && fail "dump of a 2 MiB deleted file succeeded"
	grep -q "pid $pid fd $fd: .*big.dat (deleted): a deleted file with 2097152 bytes of data (size 2097152) is not supported: more than the limit of 1048576 bytes (imgcr dump --ghost-limit BYTES raises it)" e.err ||
		fail "message: $(cat e.err | tr '\n' '|')"
	n=$(grep -c '^tick' big.out)
	usleep 500000
	case "$(state $pid)" in S | R) ;; *) fail "task is '$(state $pid)' after the refused dump" ;; esac
	[ "$(grep -c '^tick' big.out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	imgcr dump -t $pid -D e2 --ghost-limit 4M --leave-running 2> e2.err || fail "dump --ghost-limit 4M: $(cat e2.err)"
	[ "$(size_of e2/ghost-*.data)" = 2097152 ] || fail "ghost data: $(ls -l e2)"
	n=$(grep -c '^tick' big.out)
	usleep 500000
	[ "$(grep -c '^tick' big.out)" -gt "$n" ] || fail "the task does not continue after dump --leave-running"
	pass "refused: $(head -n1 e.err | cut -c1-100)...; accepted with --ghost-limit 4M"
}

subtest files_deleted main
subtest files_deleted_limit limit
