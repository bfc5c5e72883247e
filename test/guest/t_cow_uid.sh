#!/bin/sh
# Memory is shared copy-on-write again only between tasks with the same
# credentials: a child running as another user must never hold its
# parent's pages, not even while its exec rewrites them.  progs/cowshare.c
# with a grandchild that switched to uid 1000: after dump + restore the
# parent and child still share the region (Pss about 66 MiB, 120 if copied), the
# grandchild has its own copy (48 MiB private, checked from inside and in
# its smaps), every task's data is intact, and imgcr printed no warning
# (the copy is planned, not an in-place refusal).
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/cowlib.sh
require_modules

cow_start 1000
[ "$(awk '/^Uid:/ { print $2 }' /proc/$G/status)" = 1000 ] || fail "grandchild uid: $(grep Uid: /proc/$G/status)"
for p in $P $C $G; do wait_state $p S 10 || fail "task $p not sleeping"; done

imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $P $C $G; do wait_gone $p 10 || fail "task $p survived the dump"; done
imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
wait_tasks_restored $P $C $G
grep -q warning restore.err && fail "restore warned: $(tr '\n' '|' < restore.err)"
[ "$(awk '/^Uid:/ { print $2 }' /proc/$G/status)" = 1000 ] || fail "restored grandchild uid: $(grep Uid: /proc/$G/status)"
pc=$(awk '/^Pss:/ { s += $2 } END { print s + 0 }' /proc/$P/smaps_rollup /proc/$C/smaps_rollup)
g=$(awk '/^Pss:/ { s += $2 } END { print s + 0 }' /proc/$G/smaps_rollup)
info "Pss after: parent + child $pc KiB, grandchild $g KiB"
# parent + child: the 48 MiB region shared but [0,4M) and the three 4 MiB
# advised regions: about 66 MiB with the programs (copied: 120 MiB)
[ "$pc" -lt $((80 * 1024)) ] || fail "parent and child no longer share: Pss $pc KiB"
[ "$g" -ge $((48 * 1024)) ] || fail "grandchild Pss $g KiB: still sharing with its parent"

cow_finish
pass "p: $(grep '^shared' w/p) c: $(grep '^shared' w/c) g: $(grep '^shared' w/g)"
