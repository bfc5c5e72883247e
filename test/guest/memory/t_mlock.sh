#!/bin/sh
# Locked memory and read-ahead/KSM advice survive a dump and restore (see
# progs/mlk.c): mlock() of part of a mapping, mlock2(MLOCK_ONFAULT),
# MAP_LOCKED, MADV_SEQUENTIAL, MADV_RANDOM, MADV_MERGEABLE; in other
# processes mlockall(MCL_CURRENT|MCL_FUTURE) and with MCL_ONFAULT.  From
# outside: the lo/sr/rr/mg VmFlags of every mapping in /proc/PID/smaps and
# VmLck in /proc/PID/status are the same before and after.  From inside:
# each region's data, VmFlags and present pages (mincore: a region locked
# on fault gets no page the image has not), VmLck, and under MCL_FUTURE a
# new mapping is locked.  Then locked memory above the caller's
# RLIMIT_MEMLOCK: refused at restore (the exec fails with EPERM before its
# point of no return) for uid 1000, restored for root (CAP_IPC_LOCK) and for
# uid 1000 under a limit that fits; and by imgcr restore, which gives the
# task its own (lowered) limit first.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
chmod 777 .

# flags PID: "range: flags" for every mapping, only the flags of interest,
# then the VmLck line
flags() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { r = $1; next }
	     /^VmFlags:/ { f = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^(lo|sr|rr|mg)$/) f = f " " $i
		print r ":" f }' /proc/$1/smaps &&
	grep '^VmLck:' /proc/$1/status
}

# one MODE WANT...: run "mlk MODE", dump, restore, compare; each WANT is a
# VmFlags that some mapping must have before the dump
one() {
	_m=$1
	shift
	rm -f out	# the shell truncates it only once mlk is forked
	mlk $_m > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "mlk $_m did not start: $(tr '\n' '|' < out)"
	grep -q '^precheck ok' out || fail "before the dump: $(grep BAD out | head -n2 | tr '\n' '|')"
	stop_task $pid
	flags $pid > before.fl || fail "cannot read /proc/$pid/smaps"
	for f in "$@"; do
		grep -q " $f" before.fl || fail "no mapping with VmFlags $f before the dump"
	done
	info "$_m: $(grep VmLck before.fl)"
	dump $pid m.img
	kill9 $pid
	chmod +x m.img
	./m.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 || fail "restored task not sleeping (state '$(state $rpid)')$(rerr)"
	flags $rpid > after.fl || fail "cannot read /proc/$rpid/smaps"
	fl_bad=""
	if ! cmp -s before.fl after.fl; then
		diff before.fl after.fl | sed 's/^/INFO mlock: diff: /'
		fl_bad="smaps VmFlags or VmLck differ: $(diff before.fl after.fl | grep '^[-+][0-9a-fV]' | tr '\n' '|')"
	fi
	kill -USR2 $rpid
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "exit $RC: $(grep -E 'BAD' out | head -n3 | tr '\n' '|')$(rerr)"
	grep -q "^check ok pid=$rpid\$" out || fail "no 'check ok pid=$rpid': $(tail -n2 out | tr '\n' '|')"
	[ -z "$fl_bad" ] || fail "$fl_bad (the program's own checks passed)"
}

sub_parts() {
	one parts lo sr rr mg
	imgcr show m.img > show.txt 2>&1 || fail "imgcr show: $(tail -n 2 show.txt | tr '\n' '|')"
	for w in locked lockonfault sequential random mergeable; do
		grep -qE "^  .* $w( |\$)" show.txt || fail "imgcr show names no mapping $w"
	done
	pass "mlock of part of a mapping, MLOCK_ONFAULT, MAP_LOCKED, MADV_SEQUENTIAL/RANDOM/MERGEABLE"
}
sub_all() {
	one all lo
	imgcr show m.img 2>&1 | grep -q '^process: .* mlockall-future' ||
		fail "imgcr show: no mlockall-future"
	pass "mlockall(MCL_CURRENT|MCL_FUTURE): all locked, a new mapping locked and populated"
}
sub_allof() {
	one allof lo
	imgcr show m.img 2>&1 | grep -q '^process: .* mlockall-future mlockall-onfault' ||
		fail "imgcr show: no mlockall-future mlockall-onfault"
	pass "mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): pages as in the image, a new mapping locked on fault"
}
# KSM for the whole process (prctl PR_SET_MEMORY_MERGE, 6.4+): refused at
# dump, naming the pid, and the task goes on as before.
sub_mergeany() {
	rm -f out
	mlk mergeany > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "mlk mergeany did not start: $(tr '\n' '|' < out)"
	if grep -q '^mergeany unsupported' out; then
		pass "no PR_SET_MEMORY_MERGE on this kernel"
		return
	fi
	grep -q '^precheck ok' out || fail "before the dump: $(grep BAD out | head -n2 | tr '\n' '|')"
	stop_task $pid
	dmesg_mark
	cat /proc/$pid/dump > m.img 2> dump.err && fail "dumped a process with PR_SET_MEMORY_MERGE"
	dmesg_since | grep -q "img_dump: pid $pid: .*PR_SET_MEMORY_MERGE" ||
		fail "no kernel log line naming pid $pid and PR_SET_MEMORY_MERGE: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	kill -CONT $pid
	kill -USR2 $pid
	wait_exit $pid 30
	[ "$RC" = 0 ] || fail "after the refused dump: exit $RC: $(grep BAD out | head -n2 | tr '\n' '|')"
	pass "refused at dump ($(head -c 80 dump.err | tr '\n' ' ')), the task went on"
}
subtest mlock-parts sub_parts
subtest mlock-all sub_all
subtest mlock-allof sub_allof
subtest mlock-mergeany sub_mergeany

# Locked memory (256 KiB) above the task's own RLIMIT_MEMLOCK (64 KiB,
# lowered after the mlock()) by uid 1000.
sub_over() {
	: > out
	chmod 666 out
	runas 1000 1000 mlk over > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "mlk over did not start: $(tr '\n' '|' < out)"
	grep -q '^precheck ok' out || fail "before the dump: $(grep BAD out | head -n2 | tr '\n' '|')"
	stop_task $pid
	grep '^VmLck:' /proc/$pid/status > before.lck
	dump $pid over.img
	kill9 $pid
	chmod 755 over.img
	# uid 1000 under a 64 KiB limit: refused before the point of no return
	dmesg_mark
	r=$( (ulimit -l 64 && exec runas 1000 1000 timeout -s KILL 10 tryexec ./over.img) 2>&1 )
	case "$r" in
	*'tryexec: execve failed: EPERM'*) ;;
	*) fail "uid 1000 under RLIMIT_MEMLOCK 64 KiB: not refused with EPERM: '$(echo "$r" | head -c 200 | tr '\n' '|')'" ;;
	esac
	dmesg_since | grep -q 'binfmt_img: .*over.img: .*RLIMIT_MEMLOCK' ||
		fail "no kernel log line naming RLIMIT_MEMLOCK: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	# uid 1000 under 1 MiB, and root (CAP_IPC_LOCK) under 64 KiB: restored
	for who in user root; do
		if [ $who = user ]; then
			(ulimit -l 1024 && exec runas 1000 1000 ./over.img) >> out 2> restore.err &
		else
			(ulimit -l 64 && exec ./over.img) >> out 2> restore.err &
		fi
		rpid=$!
		track $rpid
		wait_restored $rpid 30 || fail "$who: restored task not sleeping (state '$(state $rpid)')$(rerr)"
		grep '^VmLck:' /proc/$rpid/status > after.lck
		cmp -s before.lck after.lck || fail "$who: VmLck $(cat after.lck), was $(cat before.lck)"
		kill -USR2 $rpid
		wait_exit $rpid 30
		[ "$RC" = 0 ] || fail "$who: exit $RC: $(grep -E 'BAD' out | head -n3 | tr '\n' '|')$(rerr)"
		grep -q "^check ok pid=$rpid\$" out || fail "$who: no 'check ok pid=$rpid'"
	done
	pass "refused for uid 1000 above its RLIMIT_MEMLOCK (at restore: EPERM), restored within it and for root"
}
subtest mlock-over sub_over

# The same through imgcr dump/restore, which gives the task its limits
# and credentials before the exec: a uid 1000 task with 256 KiB locked
# within its limit is restored (by root, the task back as uid 1000); one
# that lowered its limit below what it locked is refused, by root (the
# task is uid 1000 again, without CAP_IPC_LOCK) and by uid 1000 (--pidns).
sub_tree() {
	[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
		echo 1 > /proc/sys/kernel/unprivileged_userns_clone
	: > out
	chmod 666 out
	runas 1000 1000 mlk lock > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "mlk lock did not start: $(tr '\n' '|' < out)"
	wait_state $pid S 10 || fail "mlk lock not sleeping"
	grep '^VmLck:' /proc/$pid/status > before.lck
	imgcr dump -t $pid -D d1 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	imgcr restore -D d1 --detach > restore.out 2> restore.err ||
		fail "restore of a task within its RLIMIT_MEMLOCK: $(tr '\n' '|' < restore.err)"
	wait_tasks_restored $pid
	grep '^VmLck:' /proc/$pid/status > after.lck
	cmp -s before.lck after.lck || fail "VmLck $(cat after.lck), was $(cat before.lck)"
	kill -USR2 $pid
	wait_gone $pid 20 || fail "restored task did not exit"
	grep -q "^check ok pid=$pid\$" out || fail "no 'check ok pid=$pid': $(grep BAD out | tr '\n' '|')"

	: > out
	runas 1000 1000 mlk over > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "mlk over did not start: $(tr '\n' '|' < out)"
	wait_state $pid S 10 || fail "mlk over not sleeping"
	imgcr dump -t $pid -D d2 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	for who in root user; do
		dmesg_mark
		if [ $who = root ]; then
			timeout -s KILL 60 imgcr restore -D d2 --detach > restore.out 2> restore.err
		else
			timeout -s KILL 60 runas 1000 1000 imgcr restore -D d2 --pidns --detach > restore.out 2> restore.err
		fi
		rc=$?
		[ $rc != 0 ] || fail "$who: restored a task above its RLIMIT_MEMLOCK"
		grep -q 'Operation not permitted' restore.err ||
			fail "$who: not refused with EPERM: $(tr '\n' '|' < restore.err)"
		dmesg_since | grep -q 'binfmt_img: .*RLIMIT_MEMLOCK' ||
			fail "$who: no kernel log line naming RLIMIT_MEMLOCK: $(dmesg_since | tail -n 2 | tr '\n' '|')"
		info "$who: $(grep -m1 'failed' restore.err)"
	done
	pass "imgcr restore: within RLIMIT_MEMLOCK restored (uid 1000 task), above it refused for root and uid 1000"
}
subtest mlock-tree sub_tree
