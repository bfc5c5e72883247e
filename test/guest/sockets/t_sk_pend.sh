#!/bin/sh
# Unix sockets in edge states (sknet pend): a listener bound to a relative
# name with a connection from a child of the tree not yet accepted (the
# child connects again at restore, to the name made absolute at the dump),
# and a stream socketpair whose other end was closed with data queued
# (restored: the data, then end of file).  After restore + SIGUSR1 the
# server reads the data and EOF, accepts the child and both exchange.
# timeout: 200
. /imgcr/guest/lib.sh
require_modules

mkdir p || fail "mkdir"
setsid sknet pend "$PWD/p" "$PWD/out.txt" </dev/null >/dev/null 2>sknet.err &
pid=$!
track $pid
wait_line out.txt "client connected" 20 || fail "the client did not connect: $(cat sknet.err)"
kid=$(echo $(cat /proc/$pid/task/$pid/children))
track $kid
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
imgcr show d > show.txt || fail "imgcr show d failed"
grep -q "listening on $PWD/p/rel.sock" show.txt && grep -q -- "unnamed -> $PWD/p/rel.sock" show.txt ||
	fail "the relative name was not made absolute: $(grep socket show.txt | tr '\n' '|')"
# the pid file is written once the whole restore is done; then each
# task is back in its sleeping call once asleep
imgcr restore -D d --pidfile pf > restore.out 2> restore.err &
rpid=$!
track $rpid
n=0
until [ -s pf ]; do
	n=$((n + 1))
	[ $n -lt 1500 ] || fail "the tree did not come back$(rerr)"
	[ -d /proc/$rpid ] || fail "imgcr restore ended$(rerr)"
	usleep 20000
done
case "$(readlink /proc/$pid/exe 2>/dev/null),$(readlink /proc/$kid/exe 2>/dev/null)" in
*/sknet,*/sknet) ;;
*) fail "the restore is done but the tree is not sknet$(rerr)" ;;
esac
for p in $pid $kid; do
	wait_restored $p 30 imgcr || fail "task $p is not back asleep (state $(state $p))"
done
kill -USR1 $pid $kid
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "restore exit status $RC: $(tr '\n' '|' < out.txt)$(rerr)"
grep -q "^deadpeer ok" out.txt || fail "the pair whose peer closed: $(tr '\n' '|' < out.txt)"
grep -q "^pend server ok" out.txt && grep -q "^pend client ok" out.txt ||
	fail "the connection not yet accepted: $(tr '\n' '|' < out.txt)"
pass "pending connection reconnected, closed peer's data and EOF kept"
