#!/bin/sh
# imgcr dump --leave-running: the pipeline keeps running and produces the
# same output as an uninterrupted one.  Then, while it still runs (its pids
# are taken), a restore of the dump fails with an error suggesting --pidns,
# and a restore with --pidns succeeds: the restored pipeline's consumer
# checks the whole stream itself and the exit status says it was complete.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

N=300
PIPE="producer $N 5 | transform 32 20 | consumer"
setsid sh -c "$PIPE $PWD/ref.txt $N 24 30" </dev/null >/dev/null 2>&1 &
track $!
setsid sh -c "$PIPE $PWD/out.txt $N 24 30" </dev/null >/dev/null 2>&1 &
pid=$!
track $pid
# The same pipeline writing nowhere: only its exit status tells.
setsid sh -c "$PIPE - $N 24 30" </dev/null >/dev/null 2>&1 &
quiet=$!
track $quiet
wait_size out.txt 300 20 || fail "the pipeline wrote nothing in 20 s"
kids=$(cat /proc/$pid/task/$pid/children /proc/$quiet/task/$quiet/children)
for k in $kids; do track $k; done

imgcr dump -t $pid -D d --leave-running 2> dump.err || fail "dump --leave-running: $(cat dump.err)"
imgcr dump -t $quiet -D q --leave-running 2> dumpq.err || fail "dump --leave-running: $(cat dumpq.err)"
for p in $pid $quiet $kids; do
	case "$(state $p)" in
	"" | t | T | Z) fail "task $p is '$(state $p)' after dump --leave-running" ;;
	esac
done

# The pids are taken: a clear error that suggests --pidns, nothing created.
imgcr restore -D q > r1.out 2> r1.err && fail "restore with the pids in use succeeded"
grep -q -- '--pidns' r1.err || fail "error does not mention --pidns: $(cat r1.err)"
info "pid taken: $(head -n1 r1.err)"

[ -d /proc/$quiet ] || fail "the original quiet pipeline already finished: cannot test pids in use"
imgcr restore -D q --pidns > r2.out 2> r2.err &
rpid=$!
track $rpid
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "restore --pidns exit status $RC$(printf ' [stderr: %s]' "$(head -c 200 r2.err | tr '\n' '|')")"

wait_line out.txt '^consumer ' 120 || fail "the dumped pipeline did not finish"
wait_line ref.txt '^consumer ' 120 || fail "reference pipeline did not finish"
cmp -s out.txt ref.txt || fail "output differs from the uninterrupted run: $(tail -n1 out.txt) vs $(tail -n1 ref.txt)"
wait_exit $quiet 60
[ "$RC" = 0 ] || fail "the original quiet pipeline exited $RC"
pass "$(size_of out.txt) bytes identical; --pidns restore complete"
