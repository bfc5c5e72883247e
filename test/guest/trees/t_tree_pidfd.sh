#!/bin/sh
# A pidfd to a process outside the tree (test/progs/holder.c pidfdout: the
# holder's child keeps a pidfd, fd 4, to a "sleep" the test started).  While
# that process runs, dump + restore give the child its pidfd back (fdinfo
# Pid, from outside) and both tasks tick on.  Dumped again, the sleep
# killed: the restore fails naming the process and leaves nothing of the
# tree running.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules

# ticking P...: each task appends 3 more ticks to out
ticking() {
	for p in "$@"; do
		c=$(grep -c "^$p tick" out)
		wait_line out "^$p tick $((c + 3))\$" 10 || fail "task $p does not tick: $(tail -n 2 out | tr '\n' '|')"
	done
}

sleep 600 &
spid=$!
track $spid
HOLDER_PID=$spid holder pidfdout out </dev/null >/dev/null 2>holder.err &
root=$!
track $root
n=0
while [ "$(cut -d' ' -f1 out 2>/dev/null | sort -u | wc -l)" -lt 2 ]; do
	n=$((n + 1))
	[ $n -lt 500 ] || fail "holder did not start: $(cat holder.err)"
	usleep 20000
done
set -- $(cat /proc/$root/task/$root/children)
kid=$1
track $kid
[ "$(sed -n 's/^Pid:[[:space:]]*//p' /proc/$kid/fdinfo/4)" = $spid ] || fail "setup: fd 4 of $kid: $(cat /proc/$kid/fdinfo/4 | tr '\n' '|')"
imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
tree_fields d/tree | grep -q "^file [0-9]* pidfd 02 0 $spid [1-9][0-9]*$" || fail "no pidfd record with a start time: $(grep '^file' d/tree | tr '\n' '|')"

imgcr restore -D d > r1.out 2> r1.err &
rpid=$!
track $rpid
for p in $root $kid; do
	n=0
	while [ -z "$(state $p)" ]; do
		n=$((n + 1))
		[ $n -lt 3000 ] || fail "task $p not recreated in 60 s$(printf ' [%s]' "$(head -c 200 r1.err)")"
		usleep 20000
	done
	wait_restored $p 60 imgcr || fail "task $p not restored (state '$(state $p)')"
done
[ "$(sed -n 's/^Pid:[[:space:]]*//p' /proc/$kid/fdinfo/4)" = $spid ] ||
	fail "after the restore: fd 4 of $kid: $(cat /proc/$kid/fdinfo/4 | tr '\n' '|')"
ticking $root $kid

imgcr dump -t $root -D d2 2> dump2.err || fail "second dump: $(cat dump2.err)"
wait_exit $rpid 30
kill -9 $spid
wait $spid 2>/dev/null
wait_gone $spid 10 || fail "sleep $spid survived SIGKILL"
imgcr restore -D d2 > r2.out 2> r2.err && fail "restored a pidfd to a process that is gone"
grep -q "pidfd (file [0-9]*): process $spid, outside the tree, is gone" r2.err ||
	fail "message: $(tr '\n' '|' < r2.err)"
for p in $root $kid; do [ -d /proc/$p ] && fail "pid $p exists after the failed restore"; done
pass "$(grep -m1 "outside the tree, is gone" r2.err)"
