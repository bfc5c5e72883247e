#!/bin/sh
# A FIFO (named pipe) between two processes of a tree, with data buffered
# in it and in an anonymous pipe: "producer > FIFO &  transform < FIFO |
# consumer".  After dump + restore the output is byte for byte that of an
# uninterrupted run; imgcr show still reads single images.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

N=300
mkfifo ref.fifo out.fifo || fail "mkfifo"
for x in ref out; do
	setsid sh -c "producer $N 5 > $PWD/$x.fifo & transform 32 20 < $PWD/$x.fifo | consumer $PWD/$x.txt $N 24 30; wait" \
		</dev/null >/dev/null 2>&1 &
	track $!
	pid=$!
done
wait_size out.txt 300 20 || fail "the pipeline wrote nothing in 20 s"
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kids; do wait_gone $p 10 || fail "task $p survived the dump"; done
tree_fields d/tree | grep -q "^file [0-9]* fifo [0-9]* [0-9]* [0-9]* $PWD/out.fifo\$" ||
	fail "no fifo record in the tree: $(grep '^file' d/tree | tr '\n' '|')"
info "in flight: $(grep '^pipe ' d/tree | awk '{printf "%s bytes; ", $4}')"
imgcr show d/core-$pid.img > img.txt || fail "imgcr show IMAGE failed"
grep -q "pid $pid" img.txt || fail "imgcr show IMAGE: no pid $pid"

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
wait_line ref.txt '^consumer ' 120 || fail "reference pipeline did not finish"
cmp -s out.txt ref.txt || fail "output differs from the uninterrupted run: $(tail -n1 out.txt) vs $(tail -n1 ref.txt)"
pass "$(size_of out.txt) bytes identical"
