#!/bin/sh
# Cgroup membership of a tree without a cgroup namespace of its own
# (userspace/cgmember.c, issue 20): test/progs/cgmember's root task in
# cgroup imgcr-S-keep, its child in imgcr-S-gone/inner (pids.max 40,
# memory.max 64M; imgcr-S-gone memory.max 128M, with the memory and pids
# controllers for its children).
#   cgmember-soft: imgcr-S-gone is removed between the dump and the
#     restore; the restore puts the root back in imgcr-S-keep as it is and
#     makes imgcr-S-gone/inner again with its limits: seen from outside
#     (/proc/PID/cgroup, the limits; the state check) and from inside
#     (each task's /proc/self/cgroup after it is woken).  Before, with
#     imgcr-soft-keep's pids.max changed, the restore is refused naming
#     the file and both values.
#   cgmember-user: an ordinary user restoring the tree (--pidns) may not
#     write the cgroups: the restore fails naming the pid and the cgroup,
#     nothing of the tree is left; with --cgroups ignore it restores, in
#     the restorer's cgroup (the root one: the state check's expected
#     difference), as the tasks see.  Root restoring the user's directory
#     is refused too (trust.c: root moves no task for the user).
#   cgmember-threaded: a task in a "domain threaded" cgroup (one with a
#     threaded child) is refused at dump, naming the pid and the cgroup;
#     the tree runs on; dump -R --cgroups ignore goes through, recording
#     no hcgroup or hcg.  Then in imgcr-unkept (cgroup.max.depth 5, a file
#     imgcr does not keep) dumped, the cgroup removed: the restore refuses
#     to make it again, naming the file and its value.
#   cgmember-charge: cgmember 16 (16 MiB the root wrote, shared
#     copy-on-write with its child: cow.c puts them in place before the
#     fork) in imgcr-chg, removed after the dump; restored by an imgcr in
#     a cgroup of its own: the tree's memory is charged to imgcr-chg
#     (memory.current >= 16 MiB), not to imgcr's (< 8 MiB): each task
#     enters its cgroup before anything of it is allocated (issue 20).
#   cgmember-limit: cgmember 16 solo in imgcr-lim, memory.max 8 MiB and
#     memory.swap.max 0 set once the tasks are in (their memory charged
#     where they wrote it): the restore that makes imgcr-lim again refuses
#     before the go byte, naming the cgroup and the sizes; nothing of the
#     tree ran or is left, imgcr-lim is removed; the image is intact: with
#     --cgroups ignore it restores, the data as written.
#   cgmember-limit-kept: the same with the 16 MiB shared by the root and
#     its child (cow.c fills them before the fork, in imgcr-lim): refused
#     before any task is forked.
#   cgmember-joined: the tree in imgcr-join, removed after the dump; the
#     restore makes it again, and its action script (post-restore) puts
#     another process in it and fails the restore: that process is not
#     killed and imgcr-join is left (warned, naming it); the tree's tasks
#     are gone.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules
chmod 777 .
CG=/sys/fs/cgroup
grep -q "^[^ ]* $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG || fail "cannot mount cgroup2"
echo "+memory +pids" > $CG/cgroup.subtree_control || fail "cannot enable memory, pids: $(cat $CG/cgroup.controllers)"
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 > /proc/sys/kernel/unprivileged_userns_clone

# start S [USER]: cgmember (as uid USER if given) in its two cgroups; pids in ROOT, CHILD
start() {
	K=$CG/imgcr-$1-keep
	G=$CG/imgcr-$1-gone
	mkdir $K $G $G/inner || fail "mkdir cgroups"
	echo "+memory +pids" > $G/cgroup.subtree_control || fail "$G: controllers"
	echo 134217728 > $G/memory.max && echo 40 > $G/inner/pids.max &&
		echo 67108864 > $G/inner/memory.max || fail "limits"
	: > out
	chmod 666 out
	if [ -n "${2:-}" ]; then
		runas "$2" "$2" cgmember > out 2>&1 &
	else
		cgmember > out 2>&1 &
	fi
	ROOT=$!
	track $ROOT
	wait_line out '^ready child ' 20 || fail "cgmember did not start: $(tr '\n' '|' < out)"
	CHILD=$(sed -n 's/^ready child //p' out)
	track $CHILD
	echo $ROOT > $K/cgroup.procs && echo $CHILD > $G/inner/cgroup.procs || fail "cannot move the tasks"
	D=d-$1
	imgcr dump -t $ROOT -D $D 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $ROOT $CHILD
	grep -q "^hcgroup path=/imgcr-$1-gone/inner .*pids.max=40" $D/tree ||
		fail "no hcgroup record with pids.max=40: $(grep '^hcg' $D/tree | tr '\n' '|')"
}

# woken: both tasks woken; their lines in $1
woken() {
	kill -USR1 $CHILD
	wait_line out '^child cgroup ' 10 || fail "the child did not say its cgroup: $(tr '\n' '|' < out)"
	kill -USR1 $ROOT
	wait_line out '^root cgroup ' 10 || fail "the root did not say its cgroup: $(tr '\n' '|' < out)"
	IN="$(grep ' cgroup ' out | tr '\n' ' ')"
}

soft() {
	start soft
	rmdir $CG/imgcr-soft-gone/inner $CG/imgcr-soft-gone || fail "cannot remove imgcr-soft-gone"
	# an existing cgroup whose limit changed since the dump: refused, naming both values
	echo 50 > $CG/imgcr-soft-keep/pids.max || fail "cannot set pids.max"
	timeout -s KILL 30 imgcr restore -D $D --detach > restore.out 2> restore.err
	[ $? = 0 ] && fail "restored into a cgroup whose pids.max changed"
	grep -q "pid $ROOT: its cgroup /imgcr-soft-keep exists with pids.max '50' (the dump's: 'max')" restore.err ||
		fail "changed limit, message: $(tr '\n' '|' < restore.err)"
	[ -d $CG/imgcr-soft-gone ] && fail "imgcr-soft-gone made by the refused restore"
	echo max > $CG/imgcr-soft-keep/pids.max || fail "cannot set pids.max back"
	imgcr restore -D $D > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $ROOT $CHILD
	r=$(grep '^0::' /proc/$ROOT/cgroup)
	c=$(grep '^0::' /proc/$CHILD/cgroup)
	[ "$r" = 0::/imgcr-soft-keep ] && [ "$c" = 0::/imgcr-soft-gone/inner ] ||
		fail "from outside: root $r, child $c$(rerr)"
	G=$CG/imgcr-soft-gone
	lim="$(cat $G/memory.max $G/inner/pids.max $G/inner/memory.max | tr '\n' ' ')"
	[ "$lim" = "134217728 40 67108864 " ] || fail "limits made again: $lim"
	grep -qw pids $G/cgroup.subtree_control || fail "controllers: $(cat $G/cgroup.subtree_control)"
	woken
	[ "$IN" = "child cgroup /imgcr-soft-gone/inner root cgroup /imgcr-soft-keep " ] ||
		fail "from inside: $IN"
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
	rmdir $G/inner $G $CG/imgcr-soft-keep || fail "cannot remove the cgroups"
	pass "$IN; limits $lim"
}

user() {
	start user 1000
	# --detach: a restore that wrongly succeeds returns (and is said so) rather than waits
	timeout -s KILL 30 runas 1000 1000 imgcr restore -D $D --pidns --detach > restore.out 2> restore.err
	[ $? = 0 ] && fail "an ordinary user's restore into root's cgroups succeeded"
	grep -q "pid $ROOT: cannot put it back in its cgroup /imgcr-user-keep: Permission denied" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	[ -z "$(cat $CG/imgcr-user-keep/cgroup.procs $CG/imgcr-user-gone/inner/cgroup.procs)" ] ||
		fail "tasks left in the cgroups"
	grep -q ' cgroup ' out && fail "a task of the failed restore ran: $(tr '\n' '|' < out)"
	msg=$(grep -m1 'cannot put it back' restore.err | cut -c1-160)
	# root restoring the user's directory does no more than the user could (trust.c)
	timeout -s KILL 30 imgcr restore -D $D --detach > restore.out 2> restore.err
	[ $? = 0 ] && fail "root restored the user's tree into cgroups the user may not write"
	grep -q "pid $ROOT goes to cgroup /imgcr-user-keep, not the restorer's /" restore.err ||
		fail "root's message: $(tr '\n' '|' < restore.err)"
	[ -z "$(cat $CG/imgcr-user-keep/cgroup.procs $CG/imgcr-user-gone/inner/cgroup.procs)" ] ||
		fail "tasks left in the cgroups after root's restore"
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'task * cgroup 0::/imgcr-user-* -> 0::/  # restore --cgroups ignore: the restorer'"'"'s cgroup' >> expected
	IMGCR_STATE_EXPECTED=$PWD/expected runas 1000 1000 imgcr restore -D $D --pidns --cgroups ignore \
		> restore.out 2> restore.err &
	rpid=$!
	track $rpid
	n=0
	until [ -n "$(outer_of root)" ] && [ -n "$(outer_of child)" ]; do
		n=$((n + 1))
		[ $n -lt 1500 ] || fail "no restored tree after 30 s$(rerr)"
		usleep 20000
	done
	ROOT=$(outer_of root)
	CHILD=$(outer_of child)
	track $ROOT
	track $CHILD
	woken
	[ "$IN" = "child cgroup / root cgroup / " ] || fail "--cgroups ignore, from inside: $IN"
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "imgcr restore --cgroups ignore exit status $RC$(rerr)"
	rmdir $CG/imgcr-user-gone/inner $CG/imgcr-user-gone $CG/imgcr-user-keep || fail "cannot remove the cgroups"
	pass "$msg; --cgroups ignore: $IN"
}

# outer_of ROLE: the restored cgmember task (root: the one whose parent is
# not cgmember) seen from outside its PID namespace, asleep
outer_of() {
	for c in /proc/[0-9]*/comm; do
		p=${c#/proc/}
		p=${p%/comm}
		[ "$(cat "$c" 2>/dev/null)" = cgmember ] && [ "$(state $p)" = S ] &&
			[ "$(readlink /proc/$p/exe)" != "$(command -v imgcr)" ] || continue
		pp=$(stat_field $p 2)
		if [ "$(cat /proc/$pp/comm 2>/dev/null)" = cgmember ]; then
			[ "$1" = child ] && echo $p
		else
			[ "$1" = root ] && echo $p
		fi
	done
}

threaded() {
	P=$CG/imgcr-thr
	mkdir $P $P/t || fail "mkdir cgroups"
	echo threaded > $P/t/cgroup.type || fail "cannot make a threaded cgroup"
	: > out
	cgmember > out 2>&1 &
	ROOT=$!
	track $ROOT
	wait_line out '^ready child ' 20 || fail "cgmember did not start: $(tr '\n' '|' < out)"
	CHILD=$(sed -n 's/^ready child //p' out)
	track $CHILD
	echo $ROOT > $P/cgroup.procs || fail "cannot move the root into $P ($(cat $P/cgroup.type))"
	imgcr dump -t $ROOT -D d-thr 2> dump.err && fail "dump of a task in a $(cat $P/cgroup.type) cgroup succeeded"
	grep -q "pid $ROOT: cgroup /imgcr-thr is domain threaded: not supported" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	left_running $ROOT || fail "the root is not left running ($(state $ROOT))"
	msg=$(head -n 1 dump.err | cut -c1-150)
	# --cgroups ignore: no membership recorded, so the dump goes through
	imgcr dump -t $ROOT -D d-thr2 -R --cgroups ignore 2> dump.err || fail "dump --cgroups ignore: $(cat dump.err)"
	grep -q '^hcg' d-thr2/tree && fail "dump --cgroups ignore recorded cgroups"
	left_running $ROOT || fail "the root is not left running after -R ($(state $ROOT))"
	# a file imgcr does not keep, set: recorded, and the cgroup not made again
	U=$CG/imgcr-unkept
	mkdir $U && echo 5 > $U/cgroup.max.depth && echo $ROOT > $U/cgroup.procs || fail "imgcr-unkept"
	imgcr dump -t $ROOT -D d-unk 2> dump.err || fail "dump in imgcr-unkept: $(cat dump.err)"
	wait_dumped_gone $ROOT $CHILD
	grep -q "^hcgroup path=/imgcr-unkept unkept=cgroup.max.depth=5 " d-unk/tree ||
		fail "no unkept: $(grep '^hcgroup' d-unk/tree | tr '\n' '|')"
	rmdir $U $P/t $P || fail "cannot remove the cgroups"
	timeout -s KILL 30 imgcr restore -D d-unk --detach > restore.out 2> restore.err &&
		fail "imgcr-unkept made again without its cgroup.max.depth"
	grep -q "pid $ROOT: its cgroup /imgcr-unkept is gone, and had cgroup.max.depth=5, which imgcr does not set" restore.err ||
		fail "unkept message: $(tr '\n' '|' < restore.err)"
	[ -d $U ] && fail "imgcr-unkept made by the refused restore"
	pass "$msg; $(grep -m1 'is gone' restore.err | cut -c1-120)"
}

# cgtree ARGS...: cgmember ARGS in the test's cgroup; ROOT, CHILD
cgtree() {
	: > out
	cgmember "$@" > out 2>&1 &
	ROOT=$!
	track $ROOT
	wait_line out '^ready child ' 20 || fail "cgmember did not start: $(tr '\n' '|' < out)"
	CHILD=$(sed -n 's/^ready child //p' out)
	track $CHILD
}

charge() {
	C=$CG/imgcr-chg
	R=$CG/imgcr-chg-rst
	mkdir $C $R || fail "mkdir cgroups"
	echo 268435456 > $C/memory.max || fail "memory.max"
	cgtree 16
	echo $ROOT > $C/cgroup.procs && echo $CHILD > $C/cgroup.procs || fail "cannot move the tasks"
	imgcr dump -t $ROOT -D d-chg 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $ROOT $CHILD
	rmdir $C || fail "cannot remove imgcr-chg"
	sh -c "echo \$\$ > $R/cgroup.procs && exec imgcr restore -D d-chg" > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $ROOT $CHILD
	tree=$(cat $C/memory.current)
	rst=$(cat $R/memory.current)
	[ "$tree" -ge 16777216 ] ||
		fail "the tree's cgroup holds $tree bytes, less than its 16 MiB of data; the restorer's $rst$(rerr)"
	[ "$rst" -lt 8388608 ] || fail "the restorer's cgroup holds $rst bytes (the tree's $tree)"
	woken
	[ "$IN" = "child cgroup /imgcr-chg root cgroup /imgcr-chg " ] || fail "from inside: $IN"
	[ "$(grep -c '^[a-z]* data ok$' out)" = 2 ] || fail "data: $(tr '\n' '|' < out)"
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
	rmdir $C $R || fail "cannot remove the cgroups"
	pass "memory.current: the tree's cgroup $tree, the restorer's $rst"
}

# limit solo|kept
limit() {
	L=$CG/imgcr-lim
	mkdir $L || fail "mkdir imgcr-lim"
	if [ $1 = solo ]; then cgtree 16 solo; else cgtree 16; fi
	echo $ROOT > $L/cgroup.procs && echo $CHILD > $L/cgroup.procs || fail "cannot move the tasks"
	echo 0 > $L/memory.swap.max
	echo 8388608 > $L/memory.max || fail "memory.max"
	imgcr dump -t $ROOT -D d-lim-$1 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $ROOT $CHILD
	rmdir $L || fail "cannot remove imgcr-lim"
	timeout -s KILL 60 imgcr restore -D d-lim-$1 --detach > restore.out 2> restore.err
	[ $? = 0 ] && fail "a tree with 16 MiB of data restored under a memory.max of 8 MiB"
	grep -q "cgroup /imgcr-lim (pid $ROOT's): memory.max is 8388608 bytes, .* the tree cannot fit" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	[ -d $L ] && fail "imgcr-lim left by the refused restore"
	[ -e /proc/$ROOT ] || [ -e /proc/$CHILD ] && fail "a task of the refused restore is left"
	grep -q ' cgroup ' out && fail "a task of the refused restore ran: $(tr '\n' '|' < out)"
	msg=$(grep -m1 'cannot fit' restore.err | cut -c1-170)
	# the image as it was: restored in the restorer's cgroup
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'task * cgroup 0::/imgcr-lim -> 0::/  # restore --cgroups ignore: the restorer'"'"'s cgroup' >> expected
	IMGCR_STATE_EXPECTED=$PWD/expected imgcr restore -D d-lim-$1 --cgroups ignore > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $ROOT $CHILD
	woken
	[ "$(grep -c '^[a-z]* data ok$' out)" = $([ $1 = solo ] && echo 1 || echo 2) ] ||
		fail "data after the retry: $(tr '\n' '|' < out)"
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "imgcr restore --cgroups ignore exit status $RC$(rerr)"
	pass "$msg"
}

joined() {
	J=$CG/imgcr-join
	mkdir $J || fail "mkdir imgcr-join"
	cgtree 1 solo
	echo $ROOT > $J/cgroup.procs && echo $CHILD > $J/cgroup.procs || fail "cannot move the tasks"
	imgcr dump -t $ROOT -D d-join 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $ROOT $CHILD
	rmdir $J || fail "cannot remove imgcr-join"
	cat > join.sh <<EOS
[ "\$CRTOOLS_SCRIPT_ACTION" = post-restore ] || exit 0
sleep 600 < /dev/null > /dev/null 2>&1 &
echo \$! > $PWD/joiner
echo \$! > $J/cgroup.procs
exit 1
EOS
	IMGCR_ACTION_SCRIPT="sh $PWD/join.sh" timeout -s KILL 60 imgcr restore -D d-join --detach > restore.out 2> restore.err
	[ $? = 0 ] && fail "restored though the action script failed"
	j=$(cat joiner 2>/dev/null)
	[ -n "$j" ] || fail "the action script did not run: $(tr '\n' '|' < restore.err)"
	track $j
	kill -0 $j 2>/dev/null || fail "pid $j, which joined imgcr-join, was killed by the failed restore$(rerr)"
	[ "$(cat $J/cgroup.procs)" = "$j" ] || fail "imgcr-join: $(cat $J/cgroup.procs 2>&1 | tr '\n' ' ')"
	grep -q "cgroup /imgcr-join, made by this failed restore, left in place .*: pid $j, not of the tree, is in it" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	[ -e /proc/$ROOT ] || [ -e /proc/$CHILD ] && fail "a task of the failed restore is left"
	kill $j
	wait_gone $j
	rmdir $J || fail "cannot remove imgcr-join"
	pass "$(grep -m1 'left in place' restore.err | cut -c1-170)"
}

subtest cgmember-soft soft
subtest cgmember-user user
subtest cgmember-threaded threaded
subtest cgmember-charge charge
subtest cgmember-limit "limit solo"
subtest cgmember-limit-kept "limit kept"
subtest cgmember-joined joined
