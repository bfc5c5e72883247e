#!/bin/sh
# A task stopped with SIGSTOP before the dump (test/progs/stopcount.c, 3
# threads counting, the main one appending "SEQ C0 C1 C2" every 50 ms):
#  - imgcr dump --leave-running leaves it stopped (every thread T, no new
#    line in 1 s), and SIGCONT continues it;
#  - stopped again, dumped ("stopped" record) and restored: every thread
#    is T from outside and no line is written for 1 s; after SIGCONT the
#    lines go on with the next SEQ (no gap, no repeat) and the program's
#    own check (every thread counts again) says "done ok".  No thread ran
#    an instruction before SIGCONT: while stopped, /proc/PID/task/TID/syscall
#    says each is outside any system call (-1) with the program counter it
#    had at the dump (or 2 bytes back, before the syscall instruction it
#    restarts), or exactly what it said at the dump (a thread stopped in a
#    relative nanosleep is restored with its restart block, in the call).
# (The classic "kill -STOP; cat /proc/PID/dump; exec the image" keeps
# resuming the task: t_counter.)
# Sub-test tree_stopped-tstp: a job-control stop.  stopcount in its own
# process group (not orphaned: its parent, the test's shell, is in another
# group of the same session) is stopped by SIGTSTP (default action), dumped
# and restored (record "stopped PID 20": stopped by SIGTSTP again): every
# thread T from outside, no line for 1 s, its process
# group kept; SIGCONT continues it with the next SEQ (no gap, no repeat);
# a SIGTSTP after the restore stops it again (job control still works) and
# SIGCONT resumes it; its own check says "done ok".
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# all_state STATE: every thread of $pid is in STATE (3 threads)
all_state() {
	_k=0
	for _t in $(ls /proc/$pid/task 2>/dev/null); do
		[ "$(state $pid/task/$_t)" = "$1" ] || return 1
		_k=$((_k + 1))
	done
	[ $_k = 3 ]
}

# pcs: "TID:PC" for every thread of $pid, from /proc/PID/task/TID/syscall
pcs() {
	for _t in $(ls /proc/$pid/task); do
		set -- $(cat /proc/$pid/task/$_t/syscall)
		[ "$1" = -1 ] && _pc=$3 || _pc=$9
		echo "$_t:$1:$_pc"
	done
}

# still N: no line is added to st.out in 1 s (N lines now)
still() {
	sleep 1
	[ "$(wc -l < st.out)" = "$1" ] || fail "$2: $(($(wc -l < st.out) - $1)) lines written while stopped"
}

# wait_all_state STATE WHY [TIMEOUT_S]: every thread of $pid gets to
# STATE (default: within 10 s)
wait_all_state() {
	_n=$(( ${3:-10} * 50 ))
	until all_state $1; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || fail "$2: not every thread is $1: '$(state $pid)' $(for t in $(ls /proc/$pid/task 2>/dev/null); do state $pid/task/$t; done | tr '\n' ' ')$(rerr)"
		usleep 20000
	done
}

# dump_stopped: imgcr dump -t $pid -D d of the stopped task (lines, last:
# its output so far), which records it stopped
dump_stopped() {
	lines=$(wc -l < st.out)
	last=$(tail -n 1 st.out | cut -d' ' -f1)
	[ "$last" = "$lines" ] || fail "last SEQ $last is not the line count $lines"
	imgcr dump -t $pid -D d 2> d.err || fail "dump: $(cat d.err)"
	wait_gone $pid 10 || fail "task survived the dump"
	wait $pid 2>/dev/null
	tree_fields d/tree | grep -q "^stopped $pid${1:+ $1}\$" || fail "no 'stopped $pid${1:+ $1}' record: $(grep -v '^file\|^fd' d/tree | tr '\n' '|')"
}

# restore_stopped: imgcr restore -D d; every thread comes back stopped
# (in 60 s), as the image's program, not imgcr
restore_stopped() {
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_all_state T "restored task not stopped with 3 threads" 60
	track $pid
	case "$(readlink /proc/$pid/exe)" in */imgcr) fail "task $pid is still imgcr" ;; esac
}

# goes_on: still stopped 1 s later; SIGCONT continues with SEQ lines+1
goes_on() {
	still $lines "after the restore"
	all_state T || fail "after 1 s the restored threads are not all T"
	kill -CONT $pid
	wait_line st.out "^$((lines + 3)) " 10 || fail "no new line after SIGCONT (restored)$(rerr)"
	[ "$(sed -n "$((lines + 1))p" st.out | cut -d' ' -f1)" = $((lines + 1)) ] ||
		fail "line after the restore: '$(sed -n "$((lines + 1))p" st.out)', want SEQ $((lines + 1))"
}

# finish_run: stopcount's own check ("done ok") and imgcr restore's exit
finish_run() {
	kill -USR1 $pid
	wait_line st.out '^done' 10 || fail "no done line: $(tail -n 2 st.out | tr '\n' '|')"
	wait_exit $rpid 20
	grep -q '^done ok' st.out || fail "$(grep '^done' st.out)"
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
}

sigstop_case() {
	stopcount st.out 3 > so.txt 2> sc.err &
	pid=$!
	track $pid
	wait_line so.txt '^ready' 20 || fail "stopcount did not start: $(cat sc.err)"
	wait_line st.out '^5 ' 20 || fail "stopcount writes nothing"
	stop_task $pid
	wait_all_state T "after SIGSTOP"

	# --leave-running: stays stopped
	lines=$(wc -l < st.out)
	imgcr dump --leave-running -t $pid -D d1 2> d1.err || fail "dump --leave-running: $(cat d1.err)"
	tree_fields d1/tree | grep -q "^stopped $pid\$" || fail "no 'stopped $pid' record: $(grep -v '^file\|^fd' d1/tree | tr '\n' '|')"
	all_state T || fail "after dump --leave-running: not every thread is T: $(for t in $(ls /proc/$pid/task); do state $pid/task/$t; done | tr '\n' ' ')"
	still $lines "after dump --leave-running"
	kill -CONT $pid
	wait_line st.out "^$((lines + 3)) " 10 || fail "no new line after SIGCONT (left running)"

	# dumped stopped, restored stopped
	stop_task $pid
	wait_all_state T "after the second SIGSTOP"
	before=$(pcs)
	dump_stopped
	imgcr show d | grep -q "^  stopped" || fail "imgcr show does not say stopped"
	imgcr show --json d | grep -q '"stopped":true' || fail "imgcr show --json does not say stopped"
	restore_stopped
	after=$(pcs)
	for b in $before; do
		tid=${b%%:*} pc=${b##*:}
		a=$(echo "$after" | grep "^$tid:")
		case "$a" in
		"$tid:-1:"*) ;;
		"$b") continue ;;	# a sleep with its restart block: as at the dump
		*) fail "restored thread $tid: '$a' (syscall nr:pc), want -1 (not in a system call) or as before the dump: '$b'" ;;
		esac
		apc=${a##*:}
		[ $((apc)) = $((pc)) ] || [ $((apc)) = $((pc - 2)) ] ||
			fail "restored thread $tid stopped at pc $apc, the dump's was $pc ('$b' -> '$a')"
	done
	info "before the dump: $(echo $before); restored: $(echo $after)"
	goes_on
	finish_run
	pass "stopped at SEQ $last, went on with $((lines + 1)); $(grep '^done' st.out)"
}

tstp_case() {
	mkdir tstp && cd tstp || fail "mkdir"
	stopcount st.out 3 pgrp > so.txt 2> sc.err &
	pid=$!
	track $pid
	wait_line so.txt '^ready' 20 || fail "stopcount did not start: $(cat sc.err)"
	wait_line st.out '^5 ' 20 || fail "stopcount writes nothing"
	[ "$(stat_field $pid 3)" = $pid ] || fail "stopcount is not its own process group: pgid $(stat_field $pid 3)"
	kill -TSTP $pid || fail "kill -TSTP"
	wait_all_state T "after SIGTSTP (its group orphaned?)"
	dump_stopped 20	# SIGTSTP: restored stopped by it
	restore_stopped
	[ "$(stat_field $pid 3)" = $pid ] || fail "restored: pgid $(stat_field $pid 3), want its own $pid"
	goes_on
	# job control still stops it
	kill -TSTP $pid
	wait_all_state T "after a SIGTSTP to the restored task"
	l2=$(wc -l < st.out)
	still $l2 "stopped by SIGTSTP after the restore"
	kill -CONT $pid
	wait_line st.out "^$((l2 + 3)) " 10 || fail "no new line after the second SIGCONT"
	finish_run
	pass "SIGTSTP-stopped at SEQ $last, restored stopped, went on with $((lines + 1)); stopped again by SIGTSTP; $(grep '^done' st.out)"
}

subtest tree_stopped sigstop_case
subtest tree_stopped-tstp tstp_case
