#!/bin/sh
# PR_SET_THP_DISABLE with PR_THP_DISABLE_EXCEPT_ADVISED (Linux 6.18+: huge
# pages only where MADV_HUGEPAGE asks) survives dump + restore: the image
# says so (imgcr show), and the restored program reads the same mode from
# PR_GET_THP_DISABLE, with its data.  Kernels without the flag: a pass that
# says it was not run.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules

thpadv > out 2> err &
pid=$!
track $pid
wait_line out '^\(ready\|unsupported\)' 20 || fail "thpadv did not start: $(cat out err)"
if grep -q '^unsupported' out; then
	kill9 $pid
	pass "not run: this kernel has no PR_THP_DISABLE_EXCEPT_ADVISED ($(cat out))"
	exit 0
fi
grep -q '^ready 3 ' out || fail "before: $(cat out)"
stop_task $pid
dump $pid t.img
imgcr show t.img | grep -q 'thp-disable thp-except-advised' ||
	fail "imgcr show: $(imgcr show t.img | grep '^process')"
kill9 $pid
chmod +x t.img
./t.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 || fail "restore did not run: $(rerr)"
kill -USR1 $rpid
wait_line out '^after' 20 || fail "no check after restore: $(tail -n2 out | tr '\n' '|')$(rerr)"
grep -q '^after OK 3' out || fail "$(grep '^after' out)"
pass "PR_GET_THP_DISABLE 3 (except advised) before and after"
