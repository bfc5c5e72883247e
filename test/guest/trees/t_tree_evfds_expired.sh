#!/bin/sh
# Expired one-shot timerfds across dump + restore (test/progs/evfds.c,
# "evfds expired"): armed with TFD_TIMER_ABSTIME 100 ms ahead, fired, their
# tick not read; one on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET, one on
# CLOCK_MONOTONIC.  docs/trees-and-fds.md: a timerfd keeps its clock, flags and unread
# ticks.  From outside, before the dump and after the restore: clockid,
# settime flags (03, 01) and the one tick.  Then the restored program checks
# the same from inside, reads the monotonic one's tick, and sets
# CLOCK_REALTIME (to the time it has): the cancel-on-set timer's read must
# fail with ECANCELED, as before the dump.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules

fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# outside WHEN: prints what differs (nothing if all is as it should be)
outside() {
	[ "$(fdi $pid $tcx clockid) $(fdi $pid $tcx 'settime flags') $(fdi $pid $tcx ticks)" = "0 03 1" ] ||
		echo "$1: expired cancel-on-set timerfd: clockid/settime flags/ticks '$(fdi $pid $tcx clockid) $(fdi $pid $tcx 'settime flags') $(fdi $pid $tcx ticks)', want '0 03 1';"
	[ "$(fdi $pid $tax clockid) $(fdi $pid $tax 'settime flags') $(fdi $pid $tax ticks)" = "1 01 1" ] ||
		echo "$1: expired monotonic timerfd: '$(fdi $pid $tax clockid) $(fdi $pid $tax 'settime flags') $(fdi $pid $tax ticks)', want '1 01 1';"
}

evfds expired > out 2> evfds.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "evfds expired did not start: $(cat out evfds.err | tr '\n' '|')"
set -- $(sed -n 's/^fds tcx=\([0-9]*\) tax=\([0-9]*\)$/\1 \2/p' out)
tcx=$1 tax=$2
bad=$(outside "before the dump" | tr '\n' ' ')
[ -z "$bad" ] || fail "$bad"
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $pid 10 || fail "task $pid survived the dump"
imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $pid
# both views are reported, from outside and from the program
bad=$(outside "after the restore" | tr '\n' ' ')
touch restored
wait_exit $rpid 60
[ -z "$bad" ] || fail "$bad the program: $(grep -E 'BAD|done' out | tr '\n' '|')"
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
grep -q '^done ok' out || fail "no 'done ok': $(grep -E 'BAD|done' out | tr '\n' '|')"
pass "$(grep -c '^ok' out) checks ok"
