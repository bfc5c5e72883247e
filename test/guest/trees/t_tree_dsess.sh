#!/bin/sh
# Tasks of the tree in a session whose leader exited (issue 22): a daemon
# that forks twice (test/progs/dsess.c: C calls setsid(), forks D1, left
# in C's group, and D2, a group of its own, and exits; D1 and D2 go to
# the root R).  imgcr restore recreates the session with a session keeper
# (restore.c session_keeper(): pid C by clone3 set_tid, setsid(), makes
# D1 and D2 and exits, so they go back to R), as CRIU does with its
# helpers; before, imgcr dump refused the tree.
#   tree_dsess-sub    R a child subreaper: dumped, restored, D1 and D2 back
#                     in session C, D1 in group C, D2 in its own, both R's
#                     children after R's first child A (in that order),
#                     D1's worker W in group C, no task of pid C
#                     left (checked from here, and by D1, D2 and W with
#                     getsid, getpgrp, getppid)
#   tree_dsess-pidns  the same restored with --pidns (the numbers in the
#                     new PID namespace)
#   tree_dsess-init   R the init of a PID namespace of its own: the tree
#                     records C's number in there (vsid), the keeper
#                     takes it in the new namespace
#   tree_dsess-unsub  R no longer a subreaper: restored as sub, and R's
#                     flag is off again after the restore (dsess checks it)
#   tree_dsess-ztop   a zombie D3 at the top of the session (C's child too):
#                     refused at dump, with and without --leave-running,
#                     the tree runs on (a keeper cannot make a zombie that
#                     R then holds)
#   tree_dsess-grp    D2's child E in group C, D2 in its own: refused the
#                     same way (E could not join group C, which has no
#                     leader once the keeper is gone)
#   tree_dsess-zlead  C exited but R has not reaped it: refused the same
#                     way (D1 and D2 are in a session that is not their
#                     parent's, and C's pid is a zombie in the tree)
# timeout: 120
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

# start MODE: dsess MODE, sets pid d1 d2 c
start() {
	rm -f out	# the subtests share the directory: no earlier "ready"
	dsess $1 > out 2> ds.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "dsess $1 did not start: $(cat out ds.err | tr '\n' '|')"
	set -- $(sed -n 's/^pids //p' out)
	d1=$1 d2=$2 c=$3 d3=$4 w=$5 e=$6
	track $d1
	track $d2
	track $w
}

# check WHEN R D1 D2: D1 and D2 in session C, groups C and D2, parent R
# (our pids; the numbers in their PID namespace: NS* fields)
check() {
	[ "$(ns_id NSsid $3)" = $c ] && [ "$(ns_id NSsid $4)" = $c ] ||
		fail "$1: D1 $3, D2 $4 in sessions '$(ns_id NSsid $3)' '$(ns_id NSsid $4)', want $c$(rerr)"
	[ "$(ns_id NSpgid $3)" = $c ] && [ "$(ns_id NSpgid $4)" = $d2 ] ||
		fail "$1: D1 $3, D2 $4 in groups '$(ns_id NSpgid $3)' '$(ns_id NSpgid $4)', want $c $d2$(rerr)"
	[ "$(stat_field $3 2)" = $2 ] && [ "$(stat_field $4 2)" = $2 ] ||
		fail "$1: D1 $3, D2 $4 have parents '$(stat_field $3 2)' '$(stat_field $4 2)', want $2$(rerr)"
	[ -z "${5:-}" ] || { [ "$(ns_id NSsid $5)" = $c ] && [ "$(ns_id NSpgid $5)" = $c ] &&
		[ "$(stat_field $5 2)" = $3 ]; } ||
		fail "$1: W $5 in session '$(ns_id NSsid $5)' group '$(ns_id NSpgid $5)' parent '$(stat_field $5 2)', want $c $c $3$(rerr)"
}

# finish R RP: SIGUSR1 to the restored R; the restorer RP ends with 0, and
# the daemons and R said their checks passed
finish() {
	kill -USR1 $1
	wait_exit $2 20
	[ "$RC" = 0 ] || fail "imgcr restore exit $RC: $(grep -E '^(D|W|reaped)' out | tr '\n' '|')$(rerr)"
	grep -q "^D1 ok" out && grep -q "^D2 ok" out && grep -q "^W ok" out && grep -q '^reaped ok$' out ||
		fail "after the restore: $(grep -E '^(D|W|reaped)' out | tr '\n' '|')"
}

# restored MODE: dsess MODE dumped and restored, R the parent of D1 and D2 again
restored() {
	start $1
	check "before the dump" $pid $d1 $d2 $w
	[ ! -e /proc/$c ] || fail "C $c is still there"
	kids=$(cat /proc/$pid/task/$pid/children)
	imgcr dump -t $pid -D d > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_dumped_gone $pid $d1 $d2 $w
	imgcr restore -D d > restore.out 2> restore.err &
	rp=$!
	track $rp
	wait_tasks_restored $pid $d1 $d2 $w
	check "after the restore" $pid $d1 $d2 $w
	[ ! -e /proc/$c ] || fail "a task of pid $c is there after the restore: $(cat /proc/$c/comm) $(state $c)"
	# R's children in the same order (A first: the keeper is made at D1's place)
	[ "$(cat /proc/$pid/task/$pid/children)" = "$kids" ] ||
		fail "R's children '$(cat /proc/$pid/task/$pid/children)', at the dump '$kids'"
	finish $pid $rp
}

sub_sub() {
	restored sub
	pass "session $c without its leader restored, D1 and its worker in group $c, D2 in group $d2, D1 and D2 children of the subreaper $pid"
}

sub_pidns() {
	start sub
	imgcr dump -t $pid -D d > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_dumped_gone $pid $d1 $d2
	imgcr restore --pidns -D d > restore.out 2> restore.err &
	rp=$!
	track $rp
	t0=$(now_ms)
	while :; do
		op=$(outer $pid) o1=$(outer $d1) o2=$(outer $d2)
		[ -n "$op" ] && [ -n "$o1" ] && [ -n "$o2" ] &&
			[ "$(readlink /proc/$o1/exe)" = /imgcr/bin/dsess ] &&
			[ "$(readlink /proc/$o2/exe)" = /imgcr/bin/dsess ] &&
			[ "$(readlink /proc/$op/exe)" = /imgcr/bin/dsess ] && break
		[ $(($(now_ms) - t0)) -lt 30000 ] || fail "--pidns: not restored$(rerr)"
		usleep 50000
	done
	track $op
	check "after the --pidns restore" $op $o1 $o2
	[ -z "$(outer $c)" ] || fail "a task of pid $c is in the new namespace after the restore"
	finish $op $rp
	pass "session $c without its leader restored in a new PID namespace"
}

sub_init() {
	rm -f out
	ct_start ct.pid --pid -- dsess init > out 2> ds.err || fail "ct_start: $(cat ds.err)"
	ct=$(cat ct.pid)
	track $ct
	wait_line out '^ready' 20 || fail "dsess init did not start as an init: $(cat out ds.err | tr '\n' '|')"
	set -- $(sed -n 's/^pids //p' out)
	d1=$1 d2=$2 c=$3
	o1=$(outer $d1) o2=$(outer $d2)
	[ -n "$o1" ] && [ -n "$o2" ] || fail "D1 $d1, D2 $d2 not found"
	track $o1
	track $o2
	check "before the dump" $ct $o1 $o2
	imgcr dump -t $ct -D dn > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_dumped_gone $ct $o1 $o2
	grep -q "^task pid=$o1 .* vsid=$c\$" dn/tree ||
		fail "D1's task record has no vsid=$c: $(grep "^task pid=$o1 " dn/tree)"
	imgcr restore -D dn --allow-changed-files --detach --pidfile "$PWD/rp" > r.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	new=$(cat rp)
	track $new
	o1=$(outer $d1)
	o2=$(outer $d2)
	[ -n "$o1" ] && [ -n "$o2" ] && [ "$(ns_id NSpid $o1)" = $d1 ] ||
		fail "the restored init $new has no D1 $d1 / D2 $d2 ($o1 $o2)$(rerr)"
	track $o1
	track $o2
	check "after the restore" $new $o1 $o2
	kill -USR1 $new
	wait_gone $new 20 || fail "the restored init did not end on SIGUSR1: $(tail -n 1 out)"
	grep -q "^D1 ok" out && grep -q "^D2 ok" out && grep -q '^reaped ok$' out ||
		fail "after the restore: $(grep -E '^(D|reaped)' out | tr '\n' '|')"
	pass "session $c without its leader kept inside the PID namespace (vsid), D1 and D2 back in it"
}

# refused MODE WHAT MESSAGE: dsess MODE refused at dump (WHAT), with and
# without --leave-running, with MESSAGE (a grep pattern, in which $pid and
# $c are expanded once dsess runs); the tree runs on
refused() {
	start $1
	eval "set -- \"\$1\" \"\$2\" \"$3\""
	for leave in "" --leave-running; do
		rm -rf d
		imgcr dump $leave -t $pid -D d > dump.out 2> dump.err &&
			fail "dump $leave of a tree $2 succeeded"
		grep -q "^imgcr: $3" dump.err || fail "message: $(tr '\n' '|' < dump.err)"
		grep -q 'the tree was left running' dump.err || fail "no 'left running': $(tr '\n' '|' < dump.err)"
		[ -e d/tree ] && fail "a tree file was written"
		left_running $pid && left_running $d1 && left_running $d2 ||
			fail "the tree is not running after the refused dump"
	done
	kill -USR1 $pid
	wait_exit $pid 20
	[ "$RC" = 0 ] && grep -q '^reaped ok$' out || fail "after the refusals: exit $RC, $(grep -E '^(D|reaped)' out | tr '\n' '|')"
	pass "$(grep -o 'pid [0-9]* (dsess.*' dump.err | cut -c1-120)"
}

sub_unsub() {
	restored unsub
	pass "session $c without its leader restored under $pid, which is no longer a subreaper, and its flag is off again"
}

sub_ztop() {
	refused ztop "with a zombie at the top of a session whose leader exited" 'pid $d3 (dsess, a zombie): its session $c, whose leader exited, is recreated by a keeper task that makes the session'"'"'s top tasks, and a zombie cannot be one of them: not supported'
}

sub_grp() {
	refused grp "with a task in the session's own group born in another group" 'pid $e (dsess): it is in process group $c, the own group of its session, whose leader exited, and its parent pid $d2 (dsess) is in group $d2: .*not supported'
}

sub_zlead() {
	refused zlead "whose session leader is a zombie" 'pid [0-9]* (dsess): its session $c differs from its parent'"'"'s, pid $pid (dsess, session [0-9]*), and it does not lead it: .*not supported'
}

subtest tree_dsess-sub sub_sub
subtest tree_dsess-pidns sub_pidns
subtest tree_dsess-init sub_init
subtest tree_dsess-unsub sub_unsub
subtest tree_dsess-ztop sub_ztop
subtest tree_dsess-grp sub_grp
subtest tree_dsess-zlead sub_zlead
