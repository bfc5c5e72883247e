#!/bin/sh
# A task stopped in pause() is restored still sleeping in pause(); SIGUSR1
# wakes it exactly once and it exits 0 after checking its memory.
. /imgcr/guest/lib.sh
require_modules

pauser > out &
pid=$!
track $pid
wait_line out '^ready' 10 || fail "pauser did not start"
wait_state $pid S 10 || fail "pauser not sleeping"
stop_task $pid
dump $pid p.img
kill9 $pid

chmod +x p.img
./p.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 || fail "restored task not sleeping (state '$(state $rpid)')$(rerr)"
# Still asleep a moment later: not spinning, not exited, no spurious wakeup.
usleep 300000
[ "$(state $rpid)" = S ] || fail "restored task left pause (state '$(state $rpid)')$(rerr)"
grep -q '^woken' out && fail "woke up without a signal"
if [ -r /proc/$rpid/syscall ]; then
	nr=$(cut -d' ' -f1 /proc/$rpid/syscall)
	info "restored task in syscall $nr (34 = pause)"
	[ "$nr" = 34 ] || fail "restored task in syscall $nr, not pause (34)$(rerr)"
fi

kill -USR1 $rpid
wait_exit $rpid 10; rc=$RC
[ "$rc" = 0 ] || fail "exit status $rc: $(tr '\n' '|' < out)$(rerr)"
grep -q "^woken ok pid=$rpid\$" out || fail "no 'woken ok pid=$rpid': $(tr '\n' '|' < out)$(rerr)"
[ "$(grep -c '^woken' out)" = 1 ] || fail "woken more than once"
pass
