#!/bin/sh
# Pending signals, timers and prctl switches of a multi-threaded process
# survive a dump and a plain ./img restore (progs/mtsig.c: main + 3 worker
# threads, everything blocked).  Pending: RT signals queued several times
# with different values (order kept), standard ones, process-wide and
# thread-directed (to workers and to main, whose TID the restore changes),
# from the process, from a worker and from a forked child; POSIX timers
# A (process), B (thread), C (SIGEV_NONE), D (disarmed), E (main thread)
# with ids that have gaps, and ITIMER_REAL; per-thread timer slack,
# pdeath signal and name; child-subreaper, THP-disable and PR_SET_DUMPABLE
# 0 (the dump of a not-dumpable process works as root).
# Outside, before the dump: each thread's SigBlk/SigPnd/ShdPnd are what the
# program expects, /proc/PID/timers lists every timer with the program's
# id, signal, value, notify target and clock.  After the restore: the same
# TIDs, the same per-thread SigBlk/SigPnd/ShdPnd, the same
# /proc/PID/timers (PID and main TID read as MAIN), THP_enabled 0 in
# status.  Then, inside (see mtsig.c): every thread gets exactly its
# signals with their siginfo, in order, in the right thread, then the
# process-wide ones; the timers fire with their period in the right
# threads with their ids and values; timer_gettime/getitimer give the
# intervals; the prctl values are back.  A control run without a dump
# first shows the program's checks pass on their own.
# timeout: 240
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

CHECKS="thread_state subreaper thp_disable not_dumpable signals_T1 signals_T2
signals_T3 signals_main signals_shared no_leftover timer_A timer_B_thread
timer_E_main itimer_real timer_gettime timer_C_none timer_D_disarmed getitimer"

# check_oks FILE WHAT: every check said "ok NAME" in FILE.
check_oks() {
	for c in $CHECKS; do
		grep -q "^ok $c\$" "$1" ||
			fail "$2: no 'ok $c': $(grep -E "^(BAD $c|BAD|mtsig)" "$1" | head -n 3 | tr '\n' '|')"
	done
}

# timers PID: /proc/PID/timers, one line per timer, sorted by id, with
# PID's own number (process or main thread) written MAIN:
# "ID sig=SIGNO/VALUE notify=KIND/pid.N|tid.N clock=C".
timers() {
	awk '/^ID:/ { if (l != "") print l; l = $2 }
		/^signal:/ { l = l " sig=" $2 }
		/^notify:/ { l = l " notify=" $2 }
		/^ClockID:/ { l = l " clock=" $2 }
		END { if (l != "") print l }' "/proc/$1/timers" |
		sed "s/\.$1 /.MAIN /" | sort -n
}

# thp PID: the THP_enabled value of its status ("" if the kernel has none).
thp() { sed -n 's/^THP_enabled:[[:space:]]*//p' "/proc/$1/status"; }

# Control: the program's own checks, without a dump.
mtsig "$PWD/go0" > ref 2>&1 &
p=$!
track $p
wait_line ref '^ready ' 60 || fail "control mtsig did not get ready: $(tail -n 2 ref | tr '\n' '|')"
touch go0
wait_exit $p 90
[ "$RC" = 0 ] || fail "control run exit $RC: $(grep -E '^(BAD|mtsig)' ref | head -n 3 | tr '\n' '|')"
check_oks ref "control run"
grep -q "^mtsig ok pid=$p\$" ref || fail "control run: no 'mtsig ok pid=$p'"

mtsig "$PWD/go" > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready ' 60 || fail "mtsig did not get ready: $(tail -n 2 out | tr '\n' '|')"
otids=$(sed -n 's/^thread [0-9]* tid //p' out | tr '\n' ' ')
[ "$(echo $otids | wc -w)" = 3 ] || fail "tids: '$otids'"
tB=$(sed -n 's/^thread 2 tid //p' out)
[ "$(tids $pid | tr '\n' ' ')" = "$(echo $pid $otids | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
	fail "/proc/$pid/task is '$(tids $pid | tr '\n' ' ')', program says $pid $otids"
[ "$(thp $pid)" = "" ] || [ "$(thp $pid)" = 0 ] || fail "THP_enabled '$(thp $pid)' before the dump"
stop_all $pid

# The pending sets and timers, as the program expects them.
sed -n 's/^expect //p' out | sort > expect.snap
snap_threads $pid before.snap "comm blk pnd shd"
d=$(diff_snaps expect.snap before.snap) || true
[ -z "$d" ] || fail "before the dump, threads are not as mtsig expects (-want +got): $d"
sed -n 's/^proctimer //p' out | sort -n > expect.timers
timers $pid > before.timers
d=$(diff_snaps expect.timers before.timers) || true
[ -z "$d" ] || fail "before the dump, /proc/$pid/timers is not as mtsig expects (-want +got): $d"
grep -q "notify=signal/tid\.$tB " before.timers || fail "timer B not directed to $tB: $(tr '\n' '|' < before.timers)"
info "timers: $(cut -d' ' -f1,3 before.timers | tr '\n' ' ')"

# Not dumpable: only root can read its /proc files, and dump it.
[ "$(stat -c %u /proc/$pid/dump)" = 0 ] || fail "/proc/$pid/dump of a not-dumpable process is not root's"
dump $pid s.img
kill9 $pid
left=$(tids_in_use "$otids")
[ -z "$left" ] || fail "TIDs still in use after kill: $left"

chmod +x s.img
./s.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_tids $rpid "$otids" 60 ||
	fail "($WAIT_WHY) restored process has threads '$(tids $rpid | tr '\n' ' ')', want $rpid $otids$(rerr)"
# Signals and timers are back once the threads are; allow for the restore
# finishing in the background.
n=0
while :; do
	snap_threads $rpid after.snap "comm blk pnd shd"
	d=$(diff_snaps before.snap after.snap) || true
	[ -z "$d" ] && break
	n=$((n + 1))
	[ "$n" -lt 500 ] || fail "threads differ after restore (comm/SigBlk/SigPnd/ShdPnd, -before +after): $d$(rerr)"
	usleep 20000
done
timers $rpid > after.timers
d=$(diff_snaps before.timers after.timers) || true
[ -z "$d" ] || fail "/proc/PID/timers differs after restore (-before +after): $d$(rerr)"
[ "$(thp $rpid)" = "" ] || [ "$(thp $rpid)" = 0 ] || fail "THP_enabled '$(thp $rpid)' after restore"
[ "$(stat -c %u /proc/$rpid/status)" = 0 ] || fail "restored process's /proc files are not root's"

touch go
wait_exit $rpid 90
[ "$RC" = 0 ] || fail "restored mtsig exit $RC: $(sed -n '/^go /,$p' out | grep -E '^(BAD|mtsig)' | head -n 4 | tr '\n' '|')$(rerr)"
sed -n '/^go /,$p' out > after.out
grep -q "^go pid=$rpid\$" after.out || fail "the restored program did not go on as $rpid: $(tail -n 2 out | tr '\n' '|')"
check_oks after.out "after restore"
grep -q "^mtsig ok pid=$rpid\$" after.out || fail "no 'mtsig ok pid=$rpid': $(tail -n 1 out)"
info "$(grep '^info ' after.out | sed 's/^info //; s/ signals, .*period / sig, /; s/ (interval.*//' | tr '\n' ';')"
pass "3 threads: pending signals delivered in order in their threads, 5 timers + itimer, prctl state"
