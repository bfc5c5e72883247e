#!/bin/sh
# Restore under memory pressure: the 64 MiB heap64 image executed inside a
# cgroup v2 group with memory.max=16M (no swap) must fail or die (OOM kill,
# SIGKILL/SIGSEGV) and leave no restored process behind; the same image in
# a 256M group restores fine (control).  No kernel memory may leak
# (SUnreclaim, MemAvailable + per-CPU free pages after drop_caches, before
# vs after, with the groups removed; one 16M run before the baseline, three
# measured).  The memcg OOM report is printed as INFO.
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/memcheck.sh
require_modules

CGR=/sys/fs/cgroup
grep -q "^[^ ]* $CGR cgroup2 " /proc/mounts || mount -t cgroup2 none $CGR ||
	fail "cannot mount cgroup2"
grep -qw memory $CGR/cgroup.controllers || fail "no memory controller: $(cat $CGR/cgroup.controllers)"
echo +memory > $CGR/cgroup.subtree_control || fail "cannot enable the memory controller"

heap64 0x5eed > out &
pid=$!
track $pid
wait_line out '^ready ' 120 || fail "heap64 never got ready"
sum=$(sed -n 's/^ready //p' out)
stop_task $pid
dump $pid h.img
kill9 $pid
chmod +x h.img
info "image $(size_of h.img) bytes"

# run_in GROUP MAX: execute h.img in a new cgroup GROUP with memory.max MAX
# (background; pid in RPID).
run_in() {
	mkdir $CGR/$1 || fail "mkdir cgroup $1"
	echo "$2" > $CGR/$1/memory.max || fail "memory.max $2"
	[ -f $CGR/$1/memory.swap.max ] && echo 0 > $CGR/$1/memory.swap.max
	sh -c "echo \$\$ > $CGR/$1/cgroup.procs && exec ./h.img" >> out 2> restore.err &
	RPID=$!
	track $RPID
}

# Warm up the code paths once (first restore, first cgroup), then measure.
run_in imgcr-warm 256M
wait_restored $RPID 120 || fail "control restore in a 256M group did not restore$(rerr)"
kill -USR1 $RPID
wait_exit $RPID 120
[ "$RC" = 0 ] && grep -q "^OK $sum\$" out || fail "control restore in a 256M group: exit $RC, $(tail -n 1 out)$(rerr)"
rmdir $CGR/imgcr-warm || fail "cannot remove the control group"
# small_run I: one restore in a fresh 16M group; must fail or die, leaving
# nothing running; the group is removed again.  Sets SMALL to a summary.
small_run() {
	run_in imgcr-small$1 16M
	wait_exit $RPID 120
	rc=$RC
	[ "$rc" = timeout ] && fail "run $1: restore in a 16M group still alive after 120 s (state '$(state $RPID)')"
	[ "$rc" = 0 ] && fail "run $1: restore of a 64 MiB image succeeded in a 16M group (exit 0): $(tail -n 1 out)"
	left=$(cat $CGR/imgcr-small$1/cgroup.procs)
	[ -z "$left" ] || fail "run $1: processes left in the group: $left"
	[ "$(grep -c '^OK ' out)" -gt 1 ] && fail "run $1: the restored heap64 ran to completion in 16M"
	ev=$(tr '\n' ' ' < $CGR/imgcr-small$1/memory.events)
	rmdir $CGR/imgcr-small$1 || fail "run $1: cannot remove the 16M group"
	SMALL="exit status $rc$(rerr); memory.events: $ev"
	info "16M group, run $1: $SMALL"
}

# One run before the baseline, so per-cpu page lists and caches are in the
# state such a run leaves them in; then three measured runs.
dmesg_mark
small_run 0
dmesg_since > oom.txt
info "dmesg of the first 16M run ($(wc -l < oom.txt) lines): $(grep -iE 'oom|killed process|imgcr' oom.txt | head -n 4 | tr '\n' '|')"
bad=$(grep -E 'BUG|WARNING|Oops|general protection' oom.txt | head -n 2 | tr '\n' '|')
[ -z "$bad" ] || fail "kernel log of the memcg OOM matches the host's dmesg check: $bad"
mem_snap before.mem
for i in 1 2 3; do
	small_run $i
done

mem_snap after.mem
memres=$(mem_compare before.mem after.mem)
memrc=$?
echo "$memres" | grep '^INFO'
[ "$memrc" = 0 ] || fail "$(echo "$memres" | grep '^LEAK')"
pass "4 restores in 16M ended with status $rc, nothing left running"
