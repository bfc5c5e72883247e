#!/bin/sh
# The imgcr demo, run inside the guest by test/demo.sh: checkpoint a running
# counter to a file, kill it, and bring it back by executing the file.
. /imgcr/guest/lib.sh
T=demo
say() { echo "DEMO: $*"; }

require_modules
say "1. start ./counter 10 (prints 'N PID' every 100 ms) with output to counter.out"
counter 10 > counter.out &
pid=$!
track $pid
wait_line counter.out '^5 ' 20 || fail "counter did not reach 5"
say "2. kill -STOP $pid, then: cat /proc/$pid/dump > counter.img"
stop_task $pid
dump $pid counter.img
say "   counter.img: $(size_of counter.img) bytes, an ELF core file ($(head -c 4 counter.img | tail -c 3))"
say "3. kill -9 $pid -- the original process is gone"
kill9 $pid
say "   output so far:"
sed 's/^/DEMO:     /' counter.out
n=$(wc -l < counter.out)
say "4. chmod +x counter.img; ./counter.img >> counter.out"
chmod +x counter.img
./counter.img >> counter.out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 30
say "   restored process (pid $rpid) exited with status $RC; full output:"
[ -s restore.err ] && say "   its stderr: $(cat restore.err)"
sed 's/^/DEMO:     /' counter.out
say "What happened: the counter printed 1..$n as pid $pid and was frozen and dumped."
say "Executing the image resumed it in the middle of its loop with its memory intact:"
say "it went on with $((n + 1))..10 (no gap, no repeat) as pid $rpid -- the process that"
say "ran ./counter.img -- and its final self-check of heap, stack and TLS sums said"
say "'$(grep selfcheck counter.out)'."
if [ "$RC" = 0 ] && grep -q 'selfcheck ok' counter.out; then pass; else fail "restore did not complete (exit $RC)"; fi
