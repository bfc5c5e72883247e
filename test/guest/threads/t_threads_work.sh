#!/bin/sh
# A process of 8 computing worker threads (progs/mtwork.c: per-thread chain
# in SIMD registers with untouched sentinel registers, TLS, blocked mask,
# sigaltstack, name, rounding mode, timer slack, pdeath signal) is stopped
# while every worker is inside its SIMD loop, dumped into one image, killed
# and restored with ./img.  Inside: every worker checks its TID (the one
# it had before the dump), TLS, mask, altstack (a signal runs on it),
# name, MXCSR/x87 rounding, slack, pdeath signal, no sentinel mismatch,
# and that the result equals its plain-C model computed before the dump.
# Outside: the restored process has exactly the old TIDs (main: the exec
# caller's PID), each with its old comm and SigBlk, and every result line
# equals that of an uninterrupted reference run.  The image goes to the
# host, whose gdb must list all 9 threads (gdb-threads-K).
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

NT=8
# Calibrate: the SIMD part of one run of all workers must take 1 to 2 s
# (doubling the steps until it does); the runs then take three times
# that, so the stop (a sixth of the calibration after every worker said
# "asm") lands inside it even when another guest slows this one down (CI
# runs two at a time).  A run that ends before the stop fails the test
# ("calibration too short"), never passes it.
steps=65536
while :; do
	t0=$(now_ms)
	mtwork $NT $steps > cal || fail "calibration run failed: $(tail -n 2 cal | tr '\n' '|')"
	el=$(( $(now_ms) - t0 ))
	[ "$el" -ge 1000 ] && break
	[ "$steps" -ge 1073741824 ] && fail "cannot calibrate"
	steps=$((steps * 2))
done
steps=$((steps * 3))
# The reference: uninterrupted, without the plain-C model (the restored
# run checks against it; the model costs up to three times the SIMD part)
t0=$(now_ms)
mtwork $NT $steps > ref || fail "reference run failed: $(grep -E 'BAD' ref | head -n 2 | tr '\n' '|')"
ref_ms=$(( $(now_ms) - t0 ))
grep -q '^mtwork ok' ref || fail "reference: no 'mtwork ok'"
[ "$(count_lines ref ' result ')" = $NT ] || fail "reference: $(count_lines ref ' result ') results"
sed -n 's/^done \([0-9]*\) tid [0-9]* /\1 /p' ref | sort > ref.res
info "steps=$steps simd_ms=$el reference_ms=$ref_ms $(grep '^ready' ref | cut -d' ' -f3)"

mtwork -c -w $NT $steps > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready ' 30 || fail "mtwork did not start: $(tail -n1 out)"
otids=$(sed -n 's/^thread [0-9]* tid //p' out | tr '\n' ' ')
[ "$(echo $otids | wc -w)" = $NT ] || fail "tids: '$otids'"
[ "$(tids $pid | tr '\n' ' ')" = "$(echo $pid $otids | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
	fail "/proc/$pid/task is '$(tids $pid | tr '\n' ' ')', program says $pid $otids"
wait_count out '^asm ' $NT 120 || fail "not every worker reached its SIMD loop: $(count_lines out '^asm ')"
usleep $((el * 1000 / 6))
stop_all $pid
[ "$(count_lines out '^done ')" = 0 ] || fail "a worker finished before the stop (calibration too short)"
snap_threads $pid before.snap
[ "$(wc -l < before.snap)" = $((NT + 1)) ] || fail "before: $(wc -l < before.snap) threads"
grep -q '^MAIN comm=mtwork ' before.snap || fail "main comm: $(grep MAIN before.snap)"
t0=$(now_ms)
dump $pid w.img
dump_ms=$(( $(now_ms) - t0 ))
# The host's gdb checks every thread of this image (gdb-threads-K).
echo "pid $pid tids $otids" > threads.txt
export_file threads.img w.img
export_file threads.txt threads.txt
kill9 $pid
# The restore needs the TIDs free: the killed threads must be gone.
left=$(tids_in_use "$otids")
[ -z "$left" ] || fail "TIDs still in use after kill: $left"

chmod +x w.img
t0=$(now_ms)
./w.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_tids $rpid "$otids" 60 || fail "($WAIT_WHY) restored process has threads '$(tids $rpid | tr '\n' ' ')', want $rpid $otids$(rerr)"
restore_ms=$(( $(now_ms) - t0 ))
snap_threads $rpid after.snap
# main waits for SIGUSR1 in sigwaitinfo(), which unblocks it while it
# waits: stopped, main was out of the call (it returns EINTR on the stop),
# restored it is back in it.  So main's SigBlk is SIGWINCH alone now.
grep -q '^MAIN comm=mtwork blk=0000000008000200$' before.snap || fail "main's mask before: $(grep MAIN before.snap)"
grep -q '^MAIN comm=mtwork blk=0000000008000000$' after.snap || fail "main's mask after restore: $(grep MAIN after.snap)"
sed -i 's/^MAIN comm=mtwork blk=.*/MAIN comm=mtwork/' before.snap after.snap
d=$(diff_snaps before.snap after.snap) || true
[ -z "$d" ] || fail "threads differ after restore (comm/SigBlk): $d"
for t in $otids; do
	tg=$(sed -n 's/^Tgid:[[:space:]]*//p' /proc/$rpid/task/$t/status)
	[ "$tg" = "$rpid" ] || fail "thread $t has Tgid $tg, want $rpid"
done

wait_count out '^done ' $NT 120 || fail "only $(count_lines out '^done ') workers finished after restore: $(tail -n 2 out | tr '\n' '|')$(rerr)"
grep '^done .* BAD' out > bad.txt && fail "worker check failed: $(head -c 300 bad.txt | tr '\n' '|')"
# Still all there (waiting for the release), still the same.
snap_threads $rpid end.snap
sed -i 's/^MAIN comm=mtwork blk=.*/MAIN comm=mtwork/' end.snap
d=$(diff_snaps before.snap end.snap) || true
[ -z "$d" ] || fail "threads differ at the end (comm/SigBlk): $d"
kill -USR1 $rpid
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "restored mtwork exit $RC: $(grep -E 'BAD|main:' out | head -n 3 | tr '\n' '|')$(rerr)"
grep -q "^mtwork ok pid=$rpid\$" out || fail "no 'mtwork ok pid=$rpid': $(tail -n 1 out)"

# Each worker printed its own old TID and the reference result.
for t in $otids; do
	grep -q "^done [0-9]* tid $t mode " out || fail "no result line from TID $t"
done
sed -n 's/^done \([0-9]*\) tid [0-9]* /\1 /p' out | sort > out.res
cmp -s ref.res out.res || fail "results differ from the reference: $(diff ref.res out.res | grep '^[-+][0-9]' | head -n 4 | tr '\n' '|')"
info "image $(size_of w.img) bytes, dump ${dump_ms} ms, restore (all threads back) ${restore_ms} ms"
pass "$NT workers resumed with their TIDs, results identical"
