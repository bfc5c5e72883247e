#!/bin/sh
# Refusals and failure paths of multi-threaded dumps and restores (subtests
# threads_errors-*), around `threads 3` (main + 3 threads in pause(); on
# SIGUSR1 each thread must answer from the TID it started with):
#   notstopped  only the main thread is in a (ptrace) stop: the dump fails
#               with EBUSY and the process runs on
#   tidinuse    the original still exists: executing its image fails with
#               EEXIST naming a TID, the caller survives, the original is intact
#   unpriv      uid 1000 may not choose TIDs: EPERM naming a TID and --pidns
#   corrupt     thread notes that lie (thread count, duplicate TID, a thread's
#               rip in the kernel): EINVAL each; the intact image restores and
#               every thread answers from its own TID
#   seccomp     a caller under a seccomp filter is refused a threaded image
#               (EPERM; a single-threaded one with nothing to recreate runs)
#   kill9       restores of a 24-thread image killed with SIGKILL at once or
#               mid-restore, 20 times: no thread survives, no memory is lost
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
. /imgcr/guest/memcheck.sh
require_modules

# start_threads N OUT: start `threads N`, wait for "ready"; sets PID, OTIDS.
start_threads() {
	threads "$1" > "$2" &
	PID=$!
	track $PID
	wait_line "$2" '^ready$' 30 || fail "threads did not start: $(tail -n1 "$2")"
	OTIDS=$(sed -n 's/^thread [0-9]* tid //p' "$2" | tr '\n' ' ')
}

# expect_dmesg REGEX WHAT: the kernel log since the mark has REGEX.
expect_dmesg() {
	dmesg_since | grep -qE "$1" ||
		fail "$2: no kernel message matching '$1': $(dmesg_since | tail -n 3 | tr '\n' '|')"
}

sub_notstopped() {
	start_threads 3 out
	ptstop $PID > pt.out 2>&1 &
	track $!
	wait_line pt.out '^stopped' 10 || fail "ptstop: $(cat pt.out)"
	r=$(readall /proc/$PID/dump x.img)
	[ "$r" = "open failed: EBUSY" ] || fail "dump with running threads: '$r', want EBUSY"
	[ "$(nthreads $PID)" = 4 ] || fail "target has $(nthreads $PID) threads after the refused dump"
	for t in $OTIDS; do
		case "$(cat /proc/$PID/task/$t/stat | sed 's/.*) //' | cut -d' ' -f1)" in
		S | R) ;;
		*) fail "thread $t is not running on after the refused dump" ;;
		esac
	done
	pass
}

sub_tidinuse() {
	start_threads 3 out
	stop_all $PID
	dump $PID t.img
	dmesg_mark
	r=$(tryexec_expect t.img)
	[ -z "$r" ] || fail "image with its TIDs in use: $r"
	[ "$(cat te.errno)" = EEXIST ] || fail "TIDs in use: $(cat te.errno), want EEXIST"
	expect_dmesg "TID [0-9]+ is in use" "TIDs in use"
	all_state $PID tT || fail "original no longer stopped: $(thread_states $PID)"
	[ "$(tids $PID | tr '\n' ' ')" = "$(echo $PID $OTIDS | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
		fail "original lost threads: $(tids $PID | tr '\n' ' ')"
	pass
}

sub_unpriv() {
	start_threads 3 out
	stop_all $PID
	dump $PID u.img
	kill9 $PID
	cp u.img /tmp/unpriv-$$.img
	chmod 755 /tmp/unpriv-$$.img
	dmesg_mark
	runas 1000 1000 tryexec /tmp/unpriv-$$.img > te.out 2>&1
	rc=$?
	rm -f /tmp/unpriv-$$.img
	[ "$rc" = 2 ] && grep -q 'execve failed: EPERM' te.out ||
		fail "unprivileged restore of a threaded image: rc=$rc $(cat te.out)"
	expect_dmesg "TID [0-9]+.*--pidns" "unprivileged"
	pass
}

sub_corrupt() {
	start_threads 3 out
	stop_all $PID
	dump $PID c.img
	kill9 $PID
	for m in nthreads duptid threadrip; do
		corrupt c.img bad.img $m || fail "corrupt $m failed"
		r=$(tryexec_expect bad.img)
		[ -z "$r" ] || fail "$m: $r"
		[ "$(cat te.errno)" = EINVAL ] || fail "$m: $(cat te.errno), want EINVAL"
	done
	# Control: the intact image restores, every thread with its TID.
	chmod +x c.img
	./c.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tids $rpid "$OTIDS" 30 || fail "control ($WAIT_WHY): threads '$(tids $rpid | tr '\n' ' ')', want $rpid $OTIDS$(rerr)"
	kill -USR1 $rpid
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "control: restored threads exit $RC: $(tail -n1 out)$(rerr)"
	grep -q '^threads ok 3$' out || fail "control: $(tail -n1 out)"
	pass
}

sub_seccomp() {
	start_threads 3 out
	stop_all $PID
	dump $PID s.img
	kill9 $PID
	chmod +x s.img
	dmesg_mark
	seccompexec ./s.img > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q 'execve failed: EPERM' te.out ||
		fail "threaded image under a seccomp filter: rc=$rc $(cat te.out)"
	expect_dmesg "seccomp filter" "seccomp"
	# A single-threaded image with nothing to recreate still restores there.
	counter 1000 > c.out &
	cpid=$!
	track $cpid
	wait_line c.out '^3 ' 10 || fail "counter did not start"
	stop_task $cpid
	dump $cpid c.img
	kill9 $cpid
	chmod +x c.img
	seccompexec ./c.img >> c.out 2>&1 &
	rpid=$!
	track $rpid
	wait_line c.out "^[0-9]* $rpid\$" 20 || fail "single-threaded image under seccomp did not resume: $(tail -n1 c.out)"
	pass
}

sub_kill9() {
	start_threads 24 out
	stop_all $PID
	dump $PID k.img
	kill9 $PID
	chmod +x k.img
	mem_snap m0
	i=0
	while [ $i -lt 20 ]; do
		./k.img >> out 2> restore.err &
		rpid=$!
		# 0..19 ms: at once, during the exec or while threads are made
		[ $i = 0 ] || usleep $((i * 1000))
		kill -9 $rpid 2>/dev/null
		wait $rpid 2>/dev/null
		wait_gone $rpid 10 || fail "round $i: restored process survived SIGKILL"
		left=$(tids_in_use "$OTIDS")
		[ -z "$left" ] || fail "round $i: threads $left survived SIGKILL"
		i=$((i + 1))
	done
	# and one that is left to finish: still works after all that
	./k.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	# 90 s: after twenty killed restores, with another guest on the CPU,
	# 30 s were once not enough for the 24 threads of the last one
	wait_tids $rpid "$OTIDS" 90 || fail "final restore ($WAIT_WHY): $(tid_diff $rpid "$OTIDS")$(rerr) [dmesg: $(dmesg | grep -a binfmt_img | tail -n 2 | tr '\n' '|')]"
	kill -USR1 $rpid
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "final restore exit $RC: $(tail -n1 out)$(rerr)"
	grep -q '^threads ok 24$' out || fail "final restore: $(tail -n1 out)"
	mem_snap m1
	mem_compare m0 m1 > mem.txt || fail "$(grep LEAK mem.txt)"
	cat mem.txt
	pass
}

subtest threads_errors-notstopped sub_notstopped
subtest threads_errors-tidinuse sub_tidinuse
subtest threads_errors-unpriv sub_unpriv
subtest threads_errors-corrupt sub_corrupt
subtest threads_errors-seccomp sub_seccomp
subtest threads_errors-kill9 sub_kill9
