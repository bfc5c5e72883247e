#!/bin/sh
# An unprivileged user (uid 1000) restores its own pipeline, dumped by
# root: without --pidns it cannot choose pids (an error suggesting
# --pidns), with --pidns (a new user and PID namespace) it can.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules
chmod 777 .
# Debian kernels gate unprivileged user namespaces behind this sysctl.
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 > /proc/sys/kernel/unprivileged_userns_clone

N=200
runas 1000 1000 setsid sh -c "producer $N 5 | transform 32 20 | consumer $PWD/out.txt $N 24 30" \
	</dev/null >/dev/null 2>&1 &
pid=$!
track $pid
wait_line out.txt LINE 20 || fail "the pipeline wrote nothing"
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done
[ "$(stat -c %u /proc/$pid)" = 1000 ] || fail "the pipeline does not run as uid 1000"
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kids; do wait_gone $p 10 || fail "task $p survived the dump"; done
[ "$(stat -c %u d/core-$pid.img)" = 1000 ] || fail "image not owned by uid 1000"

runas 1000 1000 imgcr restore -D d > r1.out 2> r1.err && fail "uid 1000 restored pids without --pidns"
grep -q -- '--pidns' r1.err || fail "error does not mention --pidns: $(cat r1.err)"
info "without --pidns: $(head -n1 r1.err)"
for p in $pid $kids; do [ -d /proc/$p ] && fail "pid $p exists after the failed restore"; done

runas 1000 1000 imgcr restore -D d --pidns > r2.out 2> r2.err &
rpid=$!
track $rpid
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "uid 1000 restore --pidns: exit status $RC$(printf ' [stderr: %s]' "$(head -c 300 r2.err | tr '\n' '|')")"
grep -q '^consumer ok ' out.txt || fail "consumer: $(tail -n1 out.txt)"
pass "uid 1000 restored with --pidns"
