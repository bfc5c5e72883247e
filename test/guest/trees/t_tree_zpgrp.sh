#!/bin/sh
# Tasks of the tree in a process group whose leader is not in the tree,
# and which is not the root's group (issue 22, "a zombie whose process
# group leader is not in the tree"; test/progs/zpgrp.c).  imgcr restore
# recreates such a group with its number by a keeper task (restore.c
# task_keepers(): pid G by clone3 set_tid, leads the group while the
# members join it, killed and reaped before the tree runs), as CRIU does
# with its helpers; before, imgcr dump refused the tree (and before that
# the dump killed it and the restore refused it).
#   tree_zpgrp-gone  a zombie in a group whose leader exited and was
#                    reaped (the group lives on in its zombie member):
#                    dumped, restored, the zombie back in group G, no task
#                    of pid G left, reaped by the restored parent with its
#                    status
#   tree_zpgrp-live  the same with a live member instead of a zombie, and
#                    a pipe of the root that sends SIGIO to group G
#                    (F_SETOWN -G): its owner restored, the member ends
#                    by the SIGIO of a byte written after the restore
#   tree_zpgrp-ext   a zombie and a live child that joined with setpgid()
#                    the group of L, a process outside the tree in the
#                    same session: the restore is refused while L runs
#                    (pid G in use: message naming the group, nothing
#                    created), a --leave-running dump of it is restored
#                    with --pidns meanwhile (the zombie in group G
#                    there), and the host restore works once L is gone
#   tree_zpgrp-out   a zombie left in the shell's group after the root
#                    made a group of its own, here a group numbered 0
#                    (led outside imgcr's PID namespace): refused at dump
#                    with and without --leave-running, the tree runs on
#   tree_zpgrp-ns    live as the init of a PID namespace of its own: the
#                    tree records G's number in there (vpgid), the keeper
#                    takes it in the new namespace, the SIGIO owner is
#                    that group again
#   tree_zpgrp-thread  dump -t TID of a thread that is not its process's
#                    leader: refused naming the process (the tree runs on)
# timeout: 180
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
. /imgcr/guest/ctlib.sh
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

# zr MODE ZSTATE [L]: zpgrp MODE [L] dumped and restored: its child Z
# back in state ZSTATE in its group G (W too, for ext), no task of pid G
# left (the keeper), and the restored root reaps Z with its status
zr() {
	zpgrp $1 ${3:-} > out 2> zp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "zpgrp $1 did not start: $(cat out zp.err | tr '\n' '|')"
	set -- $1 $2 "${3:-}" $(sed -n 's/^pids //p' out)
	z=$4 g=$5 w=${6:-}
	track $z
	[ -n "$w" ] && track $w
	for when in "before the dump" "after the restore"; do
		if [ "$when" != "before the dump" ]; then
			if [ -n "$3" ]; then
				# a --leave-running dump restored in a new PID
				# namespace, where pid G is free, while L and the
				# tree run (its root's "reaped ok" goes to out before
				# the dump below)
				imgcr dump --leave-running -t $pid -D dp > dp.out 2> dp.err || fail "dump -R: $(tr '\n' '|' < dp.err)"
				imgcr restore --pidns -D dp > rp.out 2> rp.err &
				rp=$!
				track $rp
				t0=$(now_ms)
				while :; do
					op=$(outer $pid)
					[ -n "$op" ] && [ "$(state $op)" = S ] && [ "$(readlink /proc/$op/exe)" = /imgcr/bin/zpgrp ] && break
					[ $(($(now_ms) - t0)) -lt 30000 ] ||
						fail "--pidns: task $pid not restored (our pid '$op', '$(state $op)', exe '$(readlink /proc/$op/exe 2>&1)'): $(tr '\n' '|' < rp.err)"
					usleep 50000
				done
				info "--pidns: restored as our pid $op in $(($(now_ms) - t0)) ms"
				track $op
				oz=$(outer $z)
				[ -n "$oz" ] && [ "$(state $oz)" = Z ] && [ "$(ns_id NSpgid $oz)" = $g ] ||
					fail "--pidns: zombie $z (our pid '$oz') is '$(state $oz)' in group '$(ns_id NSpgid $oz)' there, want Z in $g"
				kill -USR1 $op
				wait_exit $rp 20
				[ "$RC" = 0 ] || fail "--pidns: imgcr restore exit $RC: $(tr '\n' '|' < rp.err)"
				grep -q '^reaped ok$' out || fail "--pidns: $(tail -n 1 out)"
			fi
			imgcr dump -t $pid -D dz > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
			wait_dumped_gone $pid $z $w
			if [ -n "$3" ]; then
				imgcr restore -D dz > r0.out 2> r0.err &&
					fail "restore while group $g's leader $3 runs succeeded"
				grep -q "^imgcr: pid [0-9]* (zpgrp): its process group $g, led by no task of the tree, is kept by a task of pid $g during the restore, and pid $g is in use" r0.err ||
					fail "message: $(tr '\n' '|' < r0.err)"
				[ -e /proc/$pid ] || [ -e /proc/$z ] && fail "the refused restore created a task"
				kill9 $3
			fi
			imgcr restore -D dz > restore.out 2> restore.err &
			rpid=$!
			track $rpid
			wait_tasks_restored $pid
			[ -n "$w" ] && wait_tasks_restored $w
		fi
		[ "$(state $z)" = $2 ] || fail "$when: child $z is '$(state $z)', want $2$(rerr)"
		[ "$(stat_field $z 3)" = $g ] || fail "$when: child $z is in group '$(stat_field $z 3)', want $g$(rerr)"
		[ "$(stat_field $z 2)" = $pid ] || fail "$when: child $z has parent '$(stat_field $z 2)', want $pid"
		[ -z "$w" ] || [ "$(stat_field $w 3)" = $g ] || fail "$when: child $w is in group '$(stat_field $w 3)', want $g"
		[ "$(stat_field $pid 3)" != $g ] || fail "$when: the root $pid is in the child's group $g"
		[ -n "$3" ] && [ "$when" = "before the dump" ] || [ ! -e /proc/$g ] ||
			fail "$when: a task of pid $g is there: $(cat /proc/$g/comm) $(state $g)"
	done
	kill -USR1 $pid
	wait_exit $rpid 20
	[ "$RC" = 0 ] && grep -q '^reaped ok$' out || fail "after the restore: imgcr restore exit $RC, $(tail -n 1 out)$(rerr)"
	pass "group $g restored with $([ $2 = Z ] && echo 'a zombie' || echo 'a live task')${w:+ and a live task} in it"
}

sub_gone() { zr gone Z; }
sub_live() { zr live S; }
sub_ext() {
	zpgrp lead > lead.out 2>&1 &
	l=$!
	track $l
	wait_line lead.out "^lead $l" 20 || fail "zpgrp lead did not start: $(cat lead.out)"
	zr ext Z $l
}

sub_ns() {
	ct_start ct.pid --pid -- zpgrp live > out 2> zp.err || fail "ct_start: $(cat zp.err)"
	ct=$(cat ct.pid)
	track $ct
	wait_line out '^ready' 20 || fail "zpgrp live did not start as an init: $(cat out zp.err | tr '\n' '|')"
	set -- $(sed -n 's/^pids //p' out)
	gi=$2
	z=$(child_of $ct)
	[ -n "$z" ] || fail "no child of $ct"
	track $z
	[ "$(ns_id NSpgid $z)" = "$gi" ] || fail "Z ($z) is in group '$(ns_id NSpgid $z)' in its namespace, want $gi"
	imgcr dump -t $ct -D dn > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_dumped_gone $ct $z
	grep -q "^task pid=$z .* vpgid=$gi\$" dn/tree ||
		fail "Z's task record has no vpgid=$gi: $(grep "^task pid=$z " dn/tree)"
	# unshare, the init's parent, writes to zp.err when the dump ends it
	imgcr restore -D dn --allow-changed-files --detach --pidfile "$PWD/rp" > r.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	new=$(cat rp)
	track $new
	nz=$(child_of $new)
	[ -n "$nz" ] || fail "the restored init $new has no child"
	track $nz
	[ "$(ns_id NSpgid $nz)" = "$gi" ] || fail "restored Z ($nz) is in group '$(ns_id NSpgid $nz)' in its namespace, want $gi"
	kill -USR1 $new
	wait_gone $new 20 || fail "the restored init did not end on SIGUSR1: $(tail -n 1 out)"
	grep -q '^reaped ok$' out || fail "after the restore: $(tail -n 1 out)"
	pass "group $gi inside the PID namespace kept, Z back in it, the SIGIO owner that group"
}

# the shell's group: here numbered 0, led outside this PID namespace,
# which no keeper can recreate
sub_out() {
	_g=$(stat_field $$ 3)
	[ "$_g" = 0 ] || fail "the guest shell's group is $_g, not 0: this subtest needs it led outside the PID namespace"
	zp out Z "outside this PID namespace"
}

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
subtest tree_zpgrp-ext sub_ext
subtest tree_zpgrp-ns sub_ns
subtest tree_zpgrp-thread sub_thread
