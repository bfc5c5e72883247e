#!/bin/sh
# A chaotic FP/SIMD computation (SSE2, x87, AVX2 when present, non-default
# rounding mode) stopped mid-loop and restored must end with exactly the same
# bits as an uninterrupted run.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# Calibrate: the loop must run long enough (>= ~1.5 s) to be stopped inside it.
iters=1000000
while :; do
	t0=$(now_ms)
	fpu $iters > ref || fail "reference run failed"
	el=$(( $(now_ms) - t0 ))
	[ "$el" -ge 1500 ] && break
	[ "$iters" -ge 1000000000 ] && fail "cannot calibrate the loop"
	iters=$((iters * 4))
done
want=$(grep '^result ' ref) || fail "no reference result"
info "iters=$iters reference_ms=$el $(head -n1 ref)"

fpu $iters > out &
pid=$!
track $pid
wait_line out '^start' 10 || fail "fpu did not start"
# early in the loop: the host load varies, and a run can go several times
# faster than the reference did
usleep $((el * 1000 / 10))
stop_task $pid
grep -q '^result' out && fail "finished before it could be stopped"
dump $pid f.img
kill9 $pid

chmod +x f.img
./f.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 120; rc=$RC
[ "$rc" = 0 ] || fail "restored fpu exit status $rc$(rerr)"
got=$(grep '^result ' out) || fail "restored run printed no result$(rerr)"
[ "$got" = "$want" ] || fail "result differs: got '$got' want '$want'$(rerr)"
pass
