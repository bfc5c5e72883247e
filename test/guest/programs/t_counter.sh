#!/bin/sh
# Checkpoint a counter at >= 5, kill it, restore it from the image and check
# that the output continues with exactly the next number, printed by the
# process that executed the image (same PID as the exec caller), and that the
# program's own end-of-run memory self-check passes.
. /imgcr/guest/lib.sh
require_modules

counter 20 > out &
pid=$!
track $pid
wait_line out '^5 ' 20 || fail "counter never reached 5: $(tail -n1 out)"
stop_task $pid
last=$(tail -n 1 out | cut -d' ' -f1)

dump $pid c.img
is_elf c.img || fail "image does not start with ELF magic"
info "stopped at $last, image $(size_of c.img) bytes"
# The host runs readelf/gdb on this image (tests readelf-K, gdb-*-K).
export_file counter.img c.img
kill9 $pid
[ "$(wc -l < out)" -eq "$last" ] || fail "output changed after kill"

chmod +x c.img
./c.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 30; rc=$RC
[ "$rc" = 0 ] || fail "restored counter exit status $rc; tail: $(tail -n 2 out | tr '\n' '|')$(rerr)"

# Outside view: numbers 1..20 exactly once and in order, old PID up to the
# checkpoint, the exec caller's PID after it, then the self-check line.
n=0
while read -r num p rest; do
	[ "$num" = counter ] && { [ "$p $rest" = "selfcheck ok" ] || fail "self-check: $p $rest"; continue; }
	n=$((n + 1))
	[ "$num" = "$n" ] || fail "line $n is '$num $p' (gap or repeat)"
	if [ "$n" -le "$last" ]; then want=$pid; else want=$rpid; fi
	[ "$p" = "$want" ] || fail "line $n printed by pid $p, expected $want"
done < out
[ "$n" = 20 ] || fail "got $n numbers, expected 20"
grep -q '^counter selfcheck ok$' out || fail "no self-check line"
pass "resumed at $((last + 1)) as pid $rpid"
