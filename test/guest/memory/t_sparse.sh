#!/bin/sh
# A 1 GiB mapping with only 1 MiB touched gives a small image (< 8 MiB);
# after restore the touched pages hold their pattern, untouched ones read
# zero, and the whole 1 GiB mapping exists again.
. /imgcr/guest/lib.sh
require_modules

sparse > out &
pid=$!
track $pid
wait_line out '^ready' 60 || fail "sparse did not start: $(cat out)"
addr=$(sed -n 's/^ready 0x//p' out)
stop_task $pid
dump $pid s.img
sz=$(size_of s.img)
info "image_bytes=$sz THP=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
[ "$sz" -gt $((1024 * 1024)) ] || fail "image is $sz bytes, cannot hold the 1 MiB touched"
kill9 $pid

chmod +x s.img
./s.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 60 || fail "restored task not sleeping (state '$(state $rpid)')$(rerr)"
# From outside: the 1 GiB mapping is back at the same address.
grep -q "^0*$addr-" /proc/$rpid/maps || fail "mapping at 0x$addr missing after restore"
vm=$(sed -n "s/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$rpid/status)
[ "${vm:-0}" -ge 1048576 ] || fail "VmSize ${vm:-?} kB < 1 GiB"
kill -USR1 $rpid
wait_exit $rpid 60; rc=$RC
[ "$rc" = 0 ] || fail "exit status $rc: $(tail -n1 out)$(rerr)"
grep -q '^OK$' out || fail "no OK: $(tail -n1 out)$(rerr)"
# Checked last so that a too-big image does not hide restore problems.
[ "$sz" -lt $((8 * 1024 * 1024)) ] || fail "image is $sz bytes (>= 8 MiB): untouched pages were dumped"
pass "image_bytes=$sz"
