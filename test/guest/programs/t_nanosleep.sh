#!/bin/sh
# A task stopped inside a 3 s nanosleep and restored finishes its sleep
# (retrying the remainder after EINTR) and prints "done".
. /imgcr/guest/lib.sh
require_modules

nsleep 3000 > out &
pid=$!
track $pid
wait_line out '^start' 10 || fail "nsleep did not start"
usleep 500000
stop_task $pid
dump $pid n.img
kill9 $pid

chmod +x n.img
./n.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 30; rc=$RC
grep -q '^done ' out || fail "no 'done' (exit $rc): $(tr '\n' '|' < out)$(rerr)"
[ "$rc" = 0 ] || fail "exit status $rc: $(tr '\n' '|' < out)$(rerr)"
info "$(tr '\n' ' ' < out)"
pass "$(grep '^done' out)"
