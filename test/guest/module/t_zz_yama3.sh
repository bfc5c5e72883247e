#!/bin/sh
# Yama ptrace_scope 3 ("no attach at all"): nobody, not even root, may open
# /proc/PID/mem, so nobody may open /proc/PID/dump either; the errno must be
# mem's.  Scope 3 cannot be lowered again until reboot, which is why this
# test is named to sort (and run) after every other guest test; it checks
# nothing else.  Skipped (PASS with a note) if the kernel has no Yama.
. /imgcr/guest/lib.sh
require_modules

Y=/proc/sys/kernel/yama/ptrace_scope
[ -f $Y ] || { pass "skipped: no Yama"; exit 0; }
chmod 777 .
pauser > a.out &
A=$!
track $A
wait_line a.out ready 10 || fail "pauser did not start"
stop_task $A
# Sanity: before scope 3, root can dump.
set -- $(openerr /proc/$A/dump /proc/$A/mem)
[ "$1 $2" = "ok ok" ] || fail "before scope 3 root gets dump=$1 mem=$2"
echo 3 > $Y || fail "cannot set ptrace_scope 3"
set -- $(openerr /proc/$A/dump /proc/$A/mem)
info "Yama 3: root dumps root's stopped task (= mem) | $2 (mem $2) | $1 (mem $2)"
[ "$1" = "$2" ] && [ "$1" != ok ] || fail "scope 3, root: dump=$1 mem=$2"
r1="$1"
# The opener is the target's parent (permhelp child forks it).
runas 1000 1000 permhelp child /imgcr/bin/fuzzseed > y.res 2>&1
set -- $(tail -n 1 y.res)
info "Yama 3: uid 1000 dumps its own stopped child (= mem) | $2 (mem $2) | $1 (mem $2)"
[ "$1" = "$2" ] && [ "$1" != ok ] || fail "scope 3, uid 1000 own child: dump=$1 mem=$2 ($(cat y.res))"
echo 0 > $Y 2>/dev/null && [ "$(cat $Y)" = 0 ] && fail "ptrace_scope 3 could be lowered"
pass "root $r1, uid 1000 own child $1 (= mem)"
