#!/bin/sh
# 64 MiB of pseudo-random brk heap survive dump+restore bit for bit; the
# program verifies its live memory against the regenerated sequence.
# Prints dump/restore timings as INFO.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

heap64 0x1234567 > out &
pid=$!
track $pid
wait_line out '^ready ' 120 || fail "heap64 never got ready: $(cat out)"
sum=$(sed -n 's/^ready //p' out)
stop_task $pid

t0=$(now_ms)
dump $pid h.img
t1=$(now_ms)
sz=$(size_of h.img)
[ "$sz" -ge $((64 * 1024 * 1024)) ] || fail "image is $sz bytes, smaller than the 64 MiB heap"
kill9 $pid

chmod +x h.img
t2=$(now_ms)
./h.img >> out 2> restore.err &
rpid=$!
track $rpid
# Restored = back in sigsuspend (state S); a failed exec would end it instead.
wait_restored $rpid 120 || fail "restored process not sleeping (state '$(state $rpid)'); out: $(tail -n1 out)$(rerr)"
t3=$(now_ms)
info "dump_ms=$((t1 - t0)) restore_ms=$((t3 - t2)) image_bytes=$sz"

kill -USR1 $rpid
wait_exit $rpid 120; rc=$RC
[ "$rc" = 0 ] || fail "exit status $rc: $(tail -n1 out)$(rerr)"
grep -q "^OK $sum\$" out || fail "no 'OK $sum' line: $(tail -n1 out)$(rerr)"
pass "dump_ms=$((t1 - t0)) restore_ms=$((t3 - t2))"
