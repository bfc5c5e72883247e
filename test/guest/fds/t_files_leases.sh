#!/bin/sh
# File leases across dump + restore (test/progs/leaser.c):
# files_leases: a task holds a read lease on r.dat (fd R, O_RDONLY) and a
# write lease on w.dat (fd W, O_RDWR, F_SETSIG SIGRTMIN+1).  The dump
# records two "lock kind=lease" records (pid, fd, type); a restore while
# another process has w.dat open fails naming the task, the fd and the
# file, and leaves nothing running; then the restore works.  Before the
# dump and after the restore, from outside: /proc/locks lists the same two
# leases (type, pid, inode), the fdinfo of R and W the same lease lines;
# the restored program checks F_GETLEASE, F_GETOWN, F_GETSIG, and that an
# open by another process breaks each lease (EWOULDBLOCK, SIGIO, and
# SIGRTMIN+1 with si_fd W).
# files_leases_breaking: a lease being broken (a writer waits in open(2))
# is refused at dump, naming pid, fd and BREAKING; the task continues.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# the lease lines of /proc/locks on our files, without their ordinal
leases_of() {
	_re=$(stat -c %i r.dat w.dat | tr '\n' '|')
	grep -E ":(${_re%|}) " /proc/locks | cut -d' ' -f2- | tr -s ' ' | sort
}

main() {
	leaser > out 2> leaser.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "leaser did not start: $(cat out leaser.err | tr '\n' '|')"
	set -- $(sed -n 's/^fds R=\([0-9]*\) W=\([0-9]*\)$/\1 \2/p' out)
	R=$1 W=$2
	before=$(leases_of)
	want="LEASE ACTIVE READ $pid
LEASE ACTIVE WRITE $pid"
	[ "$(echo "$before" | cut -d' ' -f1-4 | sort)" = "$want" ] || fail "before the dump, /proc/locks: $(echo "$before" | tr '\n' '|')"
	grep -q "^lock:.*LEASE  *ACTIVE  *READ $pid " /proc/$pid/fdinfo/$R &&
		grep -q "^lock:.*LEASE  *ACTIVE  *WRITE $pid " /proc/$pid/fdinfo/$W || fail "fdinfo before the dump"

	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	[ "$(grep -c '^lock ' d/tree)" = 2 ] || fail "want 2 lock records: $(grep '^lock' d/tree | tr '\n' '|')"
	tree_fields d/tree | grep -q "^lock lease $pid $R [0-9]* r\$" && tree_fields d/tree | grep -q "^lock lease $pid $W [0-9]* w\$" ||
		fail "lock records: $(grep '^lock' d/tree | tr '\n' '|')"
	[ -z "$(leases_of)" ] || fail "leases left after the dump: $(leases_of)"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "^lock lease write pid $pid fd $W (file" show.txt || fail "imgcr show: $(grep lock show.txt | tr '\n' '|')"

	# another description of w.dat open: the write lease cannot be taken
	sleep 1000 < w.dat &
	h=$!
	track $h
	imgcr restore -D d > rr.out 2> rr.err && fail "restore succeeded while pid $h has w.dat open"
	wait_gone $pid 10 || fail "task $pid left running after the refused restore"
	kill $h
	wait $h 2>/dev/null
	grep -q "restore failed: pid $pid: fd $W: cannot take a write lease (F_SETLEASE F_WRLCK) on $PWD/w.dat again: .*(another process has the file open)" rr.err ||
		fail "conflict message: $(tr '\n' '|' < rr.err)"
	info "conflict: $(grep 'restore failed' rr.err)"

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	after=$(leases_of)
	[ "$before" = "$after" ] || fail "/proc/locks before: $(echo "$before" | tr '\n' '|') after: $(echo "$after" | tr '\n' '|')"
	grep -q "^lock:.*LEASE  *ACTIVE  *READ $pid " /proc/$pid/fdinfo/$R &&
		grep -q "^lock:.*LEASE  *ACTIVE  *WRITE $pid " /proc/$pid/fdinfo/$W ||
		fail "fdinfo after the restore: $(grep lock: /proc/$pid/fdinfo/$R /proc/$pid/fdinfo/$W | tr '\n' '|')"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "2 leases held again; $(grep -c '^ok' out) checks ok"
}

breaking() {
	leaser hold > l.out 2>&1 &
	pid=$!
	track $pid
	wait_line l.out '^ready' 20 || fail "leaser hold did not start: $(cat l.out)"
	fd=$(sed -n 's/^fd //p' l.out)
	# a writer waits for the lease (lease-break-time, 45 s by default)
	sh -c 'echo x >> h.dat' &
	w=$!
	track $w
	for i in 1 2 3 4 5 6 7 8 9 10; do
		grep -q BREAKING /proc/$pid/fdinfo/$fd && break
		usleep 200000
	done
	grep -q BREAKING /proc/$pid/fdinfo/$fd || fail "the lease is not being broken: $(grep lock: /proc/$pid/fdinfo/$fd)"
	imgcr dump -t $pid -D e 2> e.err && fail "dump of a task holding a lease being broken succeeded"
	grep -q "pid $pid fd $fd: file lock .*LEASE .*BREAKING .*: a lease being broken (BREAKING: .*) cannot be restored" e.err ||
		fail "message: $(cat e.err | tr '\n' '|')"
	n=$(grep -c '^tick' l.out)
	usleep 500000
	case "$(state $pid)" in S | R) ;; *) fail "task is '$(state $pid)' after the refused dump" ;; esac
	[ "$(grep -c '^tick' l.out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	grep -q "LEASE" /proc/$pid/fdinfo/$fd || fail "the lease is gone after the refused dump"
	kill $w
	pass "refused: $(head -n1 e.err | cut -c1-140)"
}

subtest files_leases main
subtest files_leases_breaking breaking
