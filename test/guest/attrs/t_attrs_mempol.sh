#!/bin/sh
# Per-task state kept by exec (test/progs/mempol.c, userspace/attrs.c):
#   attrs_mempol-keep    coredump_filter 0x3f, the NUMA memory policy
#                        bind=balancing:0 of the task and of its thread, and
#                        (where the machine lets a task choose it: not the
#                        TCG guests, whose store bypass is "not vulnerable")
#                        store bypass speculation disabled: in the tree, in
#                        `imgcr show`, the same from outside
#                        (/proc/PID/coredump_filter, numa_maps of the task and
#                        the thread) and inside (get_mempolicy in both
#                        threads, PR_GET_SPECULATION_CTRL) after the restore
# refused at dump with a message naming the task, which goes on:
#   attrs_mempol-vma     a mapping with a policy of its own (mbind)
#   attrs_mempol-vmasame  the same, equal to the task's policy (numa_maps
#                        shows none: refused by the module)
#   attrs_mempol-shmpol  a memfd with a policy of its own on a range no
#                        mapping shows (mbind on a shared mapping, since
#                        unmapped; the object keeps it): the module
#   attrs_mempol-thread  a thread whose policy is not the main thread's
#   attrs_mempol-static  a policy with static nodes (its mask is not shown)
#   attrs_mempol-noexec  store bypass disabled until exec (only where the
#                        machine allows it; else an info line)
# timeout: 120
. /imgcr/guest/lib.sh
require_modules

# start MODE: run mempol MODE in $PWD/MODE, sets pid, tid, spec
start() {
	mkdir -p "$1"
	mempol "$1" "$PWD/$1" > "$1/out" 2>&1 &
	pid=$!
	track $pid
	wait_line "$1/out" '^ready' 20 || fail "mempol $1 did not start: $(tr '\n' '|' < "$1/out")"
	tid=$(sed -n 's/^ready pid=[0-9]* tid=\([0-9]*\) .*/\1/p' "$1/out")
	spec=$(sed -n 's/^ready .* spec=\([01]\)$/\1/p' "$1/out")
	[ -n "$tid" ] && [ -n "$spec" ] || fail "no tid or spec in $(grep ready "$1/out")"
}

# outside FILE: what /proc shows of $pid and $tid
outside() {
	{
		echo "coredump_filter $(cat /proc/$pid/coredump_filter)"
		# the distinct policies of the mappings, as each thread sees them
		echo "main $(cut -d' ' -f2 /proc/$pid/task/$pid/numa_maps | sort -u | tr '\n' ' ')"
		echo "thread $(cut -d' ' -f2 /proc/$pid/task/$tid/numa_maps | sort -u | tr '\n' ' ')"
		grep Speculation /proc/$pid/task/$tid/status
	} > "$1"
}

t_keep() {
	start keep
	outside before
	grep -q '^coredump_filter 0000003f$' before && grep -q '^main bind=balancing:0 $' before &&
		grep -q '^thread bind=balancing:0 $' before || fail "before the dump: $(tr '\n' '|' < before)"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	for r in "coredump $pid 0x3f" "mempolicy $pid bind 1 0"; do
		tree_fields d/tree | grep -q "^$r\$" || fail "no '$r' in the tree: $(grep -E '^(coredump|mempolicy|spec) ' d/tree | tr '\n' '|')"
	done
	if [ "$spec" = 1 ]; then
		tree_fields d/tree | grep -q "^spec $pid ssb disable\$" || fail "no spec record: $(grep '^spec ' d/tree)"
	else
		info "store bypass control not available here: $(grep Speculation_Store before)"
	fi
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "coredump_filter 0x3f" show.txt && grep -q "NUMA memory policy bind=balancing:0" show.txt ||
		fail "imgcr show DIR: $(tr '\n' '|' < show.txt)"
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	outside after
	cmp -s before after || fail "differs from outside: $(diff before after | grep '^[-+][^-+]' | tr '\n' '|')"
	touch keep/restored
	wait_exit $rpid 60
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD keep/out | tr '\n' '|')$(rerr)"
	grep -q BAD keep/out && fail "$(grep BAD keep/out | tr '\n' '|')"
	grep -q '^ok keep' keep/out || fail "no 'ok keep': $(tr '\n' '|' < keep/out)"
	pass "$(grep '^ok keep' keep/out)"
}

# refused MODE REGEX: the dump fails saying REGEX; the task goes on
refused() {
	imgcr dump -t $pid -D "$1/d" 2> "$1/dump.err" && fail "the dump succeeded"
	grep -qE "$2" "$1/dump.err" || fail "dump message: $(tr '\n' '|' < "$1/dump.err")"
	grep -q "the tree was left running untouched" "$1/dump.err" || fail "no 'left running' in $(tr '\n' '|' < "$1/dump.err")"
	touch "$1/restored"
	wait_line "$1/out" '^continued ok' 20 || fail "the task did not go on: $(tr '\n' '|' < "$1/out")"
	info "$(grep -v 'left running' "$1/dump.err" | head -n1)"
	pass
}

t_vma() { start vma; refused vma "pid $pid: its mapping at 0x[0-9a-f]+ has the NUMA memory policy bind:0, its first default: a mapping's own memory policy \\(mbind\\) is not supported"; }
t_vmasame() { start vmasame; refused vmasame "pid $pid: cannot open /proc/$pid/dump: Operation not supported: mapping at 0x[0-9a-f]+ has a NUMA memory policy of its own \\(mbind\\); not supported"; }
t_shmpol() { start shmpol; refused shmpol "pid $pid: cannot open /proc/$pid/dump: Operation not supported: maps a memfd, shared memory or tmpfs file that has a NUMA memory policy of its own"; }
t_thread() { start thread; refused thread "pid $pid tid $tid: its NUMA memory policy prefer:0 differs from the main thread's default: per-thread values are not supported"; }
t_static() { start static; refused static "pid $pid: NUMA memory policy bind=static:0: its nodes are static or relative .*: not supported"; }
t_noexec() {
	start noexec
	if [ "$spec" = 0 ]; then
		touch noexec/restored
		info "PR_SPEC_DISABLE_NOEXEC not available here: $(grep Speculation_Store /proc/$pid/status)"
		pass "not applicable"
		return
	fi
	refused noexec "pid $pid: its Speculation_Store_Bypass is disabled until its next exec \\(PR_SPEC_DISABLE_NOEXEC"
}

subtest attrs_mempol-keep t_keep
subtest attrs_mempol-vma t_vma
subtest attrs_mempol-vmasame t_vmasame
subtest attrs_mempol-shmpol t_shmpol
subtest attrs_mempol-thread t_thread
subtest attrs_mempol-static t_static
subtest attrs_mempol-noexec t_noexec
