#!/bin/sh
# 16 back-to-back checkpoint/restore cycles of one program (cycler: 4 MiB
# of data it mutates and re-checksums every step, aborting on a mismatch).
# Each cycle: let it run a few steps, stop, dump, kill, restore from the
# image (a new process each time).  At the end the program must report 16
# restores and as many checksum verifications as steps.  Prints the
# per-cycle time.
# timeout: 600
. /imgcr/guest/lib.sh
require_modules

CYCLES=16
cycler 4 > out &
pid=$!
track $pid
wait_line out '^ready ' 60 || fail "cycler did not start"
t0=$(now_ms)
i=0
while [ $i -lt $CYCLES ]; do
	s=$(tail -n 1 out | sed -n 's/^step \([0-9]*\) .*/\1/p')
	wait_line out "^step $(( ${s:-0} + 3 )) " 30 ||
		fail "cycle $i: no progress after step ${s:-0} (pid $pid state '$(state $pid)'): $(tail -n 1 out)$(rerr)"
	grep -q MISMATCH out && fail "cycle $i: $(grep MISMATCH out | head -n 1)"
	stop_task $pid
	cat /proc/$pid/dump > c.img 2> dump.err || fail "cycle $i: dump failed: $(cat dump.err)"
	kill9 $pid
	chmod +x c.img
	./c.img >> out 2> restore.err &
	pid=$!
	track $pid
	i=$((i + 1))
done
t1=$(now_ms)
s=$(tail -n 1 out | sed -n 's/^step \([0-9]*\) .*/\1/p')
wait_line out "^step $(( ${s:-0} + 3 )) " 30 || fail "no progress after the last restore$(rerr)"
kill -USR1 $pid
wait_exit $pid 30
grep -q MISMATCH out && fail "$(grep MISMATCH out | head -n 1)"
[ "$RC" = 0 ] || fail "cycler exit status $RC: $(tail -n 1 out)$(rerr)"
done=$(grep '^done ' out)
steps=$(echo "$done" | sed -n 's/.*steps=\([0-9]*\).*/\1/p')
ver=$(echo "$done" | sed -n 's/.*verified=\([0-9]*\).*/\1/p')
res=$(echo "$done" | sed -n 's/.*restores=\([0-9]*\).*/\1/p')
info "$CYCLES cycles in $((t1 - t0)) ms, $(( (t1 - t0) / CYCLES )) ms per cycle; image $(size_of c.img) bytes; $done"
[ "$res" = "$CYCLES" ] || fail "program counted ${res:-?} restores, want $CYCLES ($done)"
[ -n "$steps" ] && [ "$ver" = "$steps" ] || fail "verified ${ver:-?} of ${steps:-?} steps"
pass "$CYCLES cycles, $steps steps all verified, $(( (t1 - t0) / CYCLES )) ms/cycle"
