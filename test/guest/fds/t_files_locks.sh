#!/bin/sh
# File locks across dump + restore (test/progs/locker.c, lockprobe.c):
# files_locks: a parent holds a flock LOCK_EX (f.dat), a LOCK_SH on a
# description it shares with its child (s.dat), POSIX write 0-99 and read
# 200-EOF locks (p.dat, which it also has open a second time,
# close-on-exec), an OFD write lock on 10-19 (o.dat); the child a POSIX
# write lock on p.dat 100-149.  The dump records them; a restore while
# another process holds a conflicting flock, then a conflicting POSIX lock,
# then a conflicting OFD lock (lockprobe hold-ofd), fails naming the task
# and fd, the file and the holder (for OFD checked at the end), and leaves
# nothing running; then
# the restore works.  Before the dump and after the restore, from outside:
# /proc/locks lists the same locks (kind, type, pid, inode, range), F_GETLK
# reports the same owners, flock LOCK_NB fails; the restored program checks
# the same from inside.
# (leases: t_files_leases.sh)
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# the lock lines of /proc/locks on our files, without their ordinal
locks_of() {
	_re=$(stat -c %i f.dat s.dat p.dat o.dat | tr '\n' '|')
	grep -E ":(${_re%|}) " /proc/locks | cut -d' ' -f2- | tr -s ' ' | sort
}

# what other processes see
probes() {
	echo "p0 $(lockprobe p.dat posix 0 100) p100 $(lockprobe p.dat posix 100 50)" \
		"p200 $(lockprobe p.dat posix 200 10) p150 $(lockprobe p.dat posix 150 50)" \
		"o $(lockprobe o.dat ofd 10 10) f $(lockprobe f.dat flock) s $(lockprobe s.dat flock)"
}

# restore_refused HOLDER-MODE...: with lockprobe (pid h) holding a lock,
# the restore fails (its stderr in e)
restore_refused() {
	lockprobe "$@" > hold.out &
	h=$!
	track $h
	wait_line hold.out '^held' 10 || fail "lockprobe $* did not take its lock: $(cat hold.out)"
	imgcr restore -D d > rr.out 2> rr.err && fail "restore succeeded while pid $h holds a conflicting lock ($*)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p left running after the refused restore"; done
	kill $h
	wait $h 2>/dev/null
	e=$(cat rr.err)
}

main() {
	locker > out 2> locker.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "locker did not start: $(cat out locker.err | tr '\n' '|')"
	set -- $(sed -n 's/^fds F=\([0-9]*\) SH=\([0-9]*\) P=\([0-9]*\) P2=\([0-9]*\) O=\([0-9]*\) CP=\([0-9]*\) child=\([0-9]*\)$/\1 \2 \3 \4 \5 \6 \7/p' out)
	F=$1 SH=$2 P=$3 P2=$4 O=$5 CP=$6 kid=$7
	track $kid
	want="p0 W $pid p100 W $kid p200 R $pid p150 U o W -1 f busy s busy"
	[ "$(probes)" = "$want" ] || fail "before the dump: '$(probes)', want '$want'"
	before=$(locks_of)
	[ "$(echo "$before" | wc -l)" = 6 ] || fail "want 6 locks in /proc/locks: $before"

	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
	[ "$(grep -c '^lock ' d/tree)" = 6 ] || fail "want 6 lock records: $(grep '^lock' d/tree | tr '\n' '|')"
	tree_fields d/tree | grep -q "^lock posix $kid $CP [0-9]* w 100 149\$" && tree_fields d/tree | grep -q "^lock posix $pid $P [0-9]* r 200 -1\$" &&
		tree_fields d/tree | grep -q '^lock ofd [0-9]* w 10 19$' && tree_fields d/tree | grep -q "^lock flock $pid $SH [0-9]* r\$" ||
		fail "lock records: $(grep '^lock' d/tree | tr '\n' '|')"
	[ -z "$(locks_of)" ] || fail "locks left after the dump: $(locks_of)"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "^lock posix write pid $kid fd $CP bytes 100-149" show.txt && grep -q '^lock ofd write bytes 10-19' show.txt ||
		fail "imgcr show: $(grep lock show.txt | tr '\n' '|')"

	restore_refused f.dat hold-flock
	echo "$e" | grep -q "restore failed: pid $pid: fd $F: cannot take an exclusive flock LOCK_EX lock on $PWD/f.dat again: .* held by pid $h (FLOCK WRITE)" ||
		fail "flock conflict message: $(echo "$e" | tr '\n' '|')"
	info "flock conflict: $(echo "$e" | grep 'restore failed')"
	restore_refused p.dat hold-posix 0 10
	echo "$e" | grep -q "restore failed: pid $pid: fd $P: cannot take a write POSIX lock on bytes 0-99 of $PWD/p.dat again: .* held by pid $h (a write lock on bytes 0-9)" ||
		fail "POSIX conflict message: $(echo "$e" | tr '\n' '|')"
	info "POSIX conflict: $(echo "$e" | grep 'restore failed')"
	restore_refused o.dat hold-ofd 10 5
	info "OFD conflict: $(echo "$e" | grep 'restore failed')"
	echo "$e" | grep -q "restore failed: .*cannot take a write OFD lock on bytes 10-19 of $PWD/o.dat again: .*a conflicting lock is held" ||
		fail "OFD conflict message does not name the lock and the file: $(echo "$e" | tr '\n' '|')"
	ofd_e=$e ofd_h=$h

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $kid
	after=$(locks_of)
	[ "$before" = "$after" ] || fail "/proc/locks before: $(echo "$before" | tr '\n' '|') after: $(echo "$after" | tr '\n' '|')"
	[ "$(probes)" = "$want" ] || fail "after the restore: '$(probes)', want '$want'"
	fl=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$pid/fdinfo/$P2)
	[ $(($fl & 02000000)) != 0 ] || fail "P2 lost close-on-exec: flags $fl"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	# checked last, so that the restore above is tested all the same
	echo "$ofd_e" | grep -qE "restore failed: pid ($pid|$kid): fd [0-9]+: cannot take a write OFD lock on bytes 10-19 of $PWD/o.dat again: .* held by pid $ofd_h[ )]" ||
		fail "the OFD conflict message names no task (pid $pid or $kid, and its fd) or not the holder (pid $ofd_h), as the flock and POSIX ones do: $(echo "$ofd_e" | grep 'restore failed')"
	pass "6 locks held again; $(grep -c '^ok' out) checks ok"
}

subtest files_locks main
