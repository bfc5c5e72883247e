#!/bin/sh
# imgcr dump/restore of a shell pipeline "producer | transform | consumer"
# under a busybox sh session leader, with data in flight in both pipes:
# the restored pipeline keeps the pids, and its output file is byte for
# byte the output of an uninterrupted run started at the same time.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

N=300
PIPE="producer $N 5 | transform 32 20 | consumer"
setsid sh -c "$PIPE $PWD/ref.txt $N 24 30" </dev/null >/dev/null 2>&1 &
ref=$!
track $ref
setsid sh -c "$PIPE $PWD/out.txt $N 24 30" </dev/null >/dev/null 2>&1 &
pid=$!
track $pid
wait_size out.txt 300 20 || fail "the pipeline wrote nothing in 20 s"
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done
[ "$(echo $kids | wc -w)" = 3 ] || fail "expected 3 children of sh $pid, got '$kids'"
sid=$(cut -d' ' -f6 /proc/$pid/stat)
[ "$sid" = "$pid" ] || fail "sh $pid is not a session leader (sid $sid)"

t0=$(now_ms)
imgcr dump -t $pid -D d > dump.out 2> dump.err || fail "dump: $(cat dump.err)"
info "dump of 4 tasks took $(( $(now_ms) - t0 )) ms"
for p in $pid $kids; do
	wait_gone $p 10 || fail "task $p survived the dump"
	[ -s d/core-$p.img ] || fail "no image for $p"
done
# Both pipes had data in flight.
npipes=$(tree_fields d/tree | grep -c '^pipe ')
[ "$npipes" = 2 ] || fail "tree has $npipes pipes, want 2: $(grep '^pipe ' d/tree | tr '\n' '|')"
tree_fields d/tree | grep '^pipe ' | while read -r _ ino size len; do
	[ "$len" -gt 0 ] || { echo "empty pipe $ino"; exit 1; }
	[ "$(size_of d/pipe-$ino.data)" = "$len" ] || { echo "pipe-$ino.data size"; exit 1; }
done > pipes.chk || fail "pipe data: $(cat pipes.chk)"
info "in flight: $(grep '^pipe ' d/tree | awk '{printf "%s bytes; ", $4}')"
imgcr show d > show.txt || fail "imgcr show d failed"
grep -q "^task $pid " show.txt || fail "show: no task $pid"
imgcr show --json d > show.json || fail "imgcr show --json d failed"
grep -q "\"root\":$pid," show.json || fail "show --json: no root"

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
# The restored sh has its pid back, as a child of imgcr.
n=0
while :; do
	pp=$(cut -d' ' -f4 /proc/$pid/stat 2>/dev/null)
	[ "$pp" = "$rpid" ] && break
	n=$((n + 1))
	[ $n -lt 500 ] || fail "no task $pid with parent imgcr $rpid after restore$(rerr)"
	usleep 20000
done
# (the root creates its children after it is itself created)
for k in $kids; do
	n=0
	until [ "$(cut -d' ' -f4 /proc/$k/stat 2>/dev/null)" = "$pid" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "restored $k is not a child of $pid"
		usleep 20000
	done
done
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC (the pipeline's)$(rerr)"
wait_line ref.txt '^consumer ' 120 || fail "reference pipeline did not finish"
grep -q '^consumer ok ' out.txt || fail "restored consumer: $(tail -n1 out.txt)"
cmp -s out.txt ref.txt || fail "output differs from the uninterrupted run: $(tail -n1 out.txt) vs $(tail -n1 ref.txt)"
pass "$(size_of out.txt) bytes identical"
