#!/bin/sh
# A task of the tree in a process group whose leader is not in the tree,
# and which is not the root's group (issue 22, "a zombie whose process
# group leader is not in the tree"; test/progs/zpgrp.c).  imgcr restore
# cannot put a task back in such a group (restore.c check_tree(): "has no
# leader in the tree"), so imgcr dump refuses it before killing anything,
# naming the task, the group and where its leader is; the tree runs on and
# its parent then reaps the child with the status it had ("reaped ok").
#   tree_zpgrp-out   a zombie left in the shell's group (led outside the
#                    tree) after the root made a group of its own
#   tree_zpgrp-gone  a zombie in a group whose leader exited and was
#                    reaped (the group lives on in its zombie member)
#   tree_zpgrp-live  the same with a live member instead of a zombie
#   tree_zpgrp-thread  dump -t TID of a thread that is not its process's
#                    leader: refused naming the process (the tree runs on)
# Each is refused with and without --leave-running.  Before the check the
# dump succeeded (and killed the tree) and only the restore refused it.
# timeout: 180
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

# zp MODE ZSTATE WHERE: zpgrp MODE, its child's state ZSTATE, its
# leader's description WHERE in the refusal
zp() {
	zpgrp $1 > out 2> zp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "zpgrp $1 did not start: $(cat out zp.err | tr '\n' '|')"
	set -- $1 $2 "$3" $(sed -n 's/^pids //p' out)
	z=$4 g=$5
	track $z
	[ "$(state $z)" = $2 ] || fail "child $z is '$(state $z)', want $2"
	[ "$(stat_field $z 3)" = $g ] || fail "child $z is in group '$(stat_field $z 3)', want $g"
	[ "$(stat_field $pid 3)" != $g ] || fail "the root $pid is in the child's group $g"
	for leave in "" --leave-running; do
		rm -rf d
		imgcr dump $leave -t $pid -D d > dump.out 2> dump.err &&
			fail "dump $leave of a tree with task $z in group $g (leader $3) succeeded"
		grep -q "^imgcr: pid $z (zpgrp$([ $2 = Z ] && echo ', a zombie')): its process group $g is led by no task of the tree (its leader is $3) and is not the root's" dump.err ||
			fail "message: $(tr '\n' '|' < dump.err)"
		grep -q 'the tree was left running' dump.err || fail "no 'left running': $(tr '\n' '|' < dump.err)"
		[ -e d/tree ] && fail "a tree file was written"
		left_running $pid || fail "root $pid is '$(state $pid)' after the refused dump"
		[ "$(state $z)" = $2 ] || fail "child $z is '$(state $z)' after the refused dump, want $2"
	done
	kill -USR1 $pid
	wait_exit $pid 20
	[ "$RC" = 0 ] && grep -q '^reaped ok$' out || fail "after the refusals: exit $RC, $(tail -n 1 out)"
	pass "$(grep -o 'pid [0-9]* (zpgrp.*not the root.s' dump.err | head -n 1)"
}

# the shell's group: led from outside the tree, or by no task any more
sub_out() {
	_g=$(stat_field $$ 3)
	if [ "$_g" = 0 ]; then
		zp out Z "outside this PID namespace"
	elif [ -e /proc/$_g ]; then
		zp out Z "pid $_g, outside the tree"
	else
		zp out Z exited
	fi
}
sub_gone() { zp gone Z exited; }
sub_live() { zp live S exited; }

# -t naming a thread that is not its process's leader (/proc/TID works as
# a process directory too): refused, naming the process to dump instead
sub_thread() {
	mtwork -w 2 4096 > mout 2>&1 &
	pid=$!
	track $pid
	wait_count mout '^done ' 2 60 || fail "mtwork did not start: $(tail -n 2 mout | tr '\n' '|')"
	tid=$(tids $pid | grep -vx $pid | head -n 1)
	[ -n "$tid" ] || fail "no thread"
	imgcr dump -t $tid -D d > dump.out 2> dump.err && fail "dump -t $tid (a thread of $pid) succeeded"
	grep -q "^imgcr: pid $tid: a thread of process $pid, not a process: dump -t $pid" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	left_running $pid && [ "$(nthreads $pid)" = 3 ] || fail "mtwork $pid is '$(state $pid)' with $(nthreads $pid) threads after the refused dump"
	kill -USR1 $pid
	wait_exit $pid 30
	[ "$RC" = 0 ] || fail "mtwork exit $RC after the refusal: $(tail -n 1 mout)"
	pass "$(grep -o 'pid [0-9]*: a thread of process.*' dump.err)"
}

subtest tree_zpgrp-out sub_out
subtest tree_zpgrp-gone sub_gone
subtest tree_zpgrp-live sub_live
subtest tree_zpgrp-thread sub_thread
