#!/bin/sh
# Device access control of cgroup v2 (runc's and docker's): a
# BPF_CGROUP_DEVICE program attached to a task's cgroup (test/progs/
# devcg.c, one that allows every device).  A restored task is in a new
# cgroup (or imgcr's) without it, so a dump refuses such a task unless the
# restore puts it where the same programs apply (review H4).
#   ct_devcg-ns     a container with its own PID and cgroup namespaces in
#                   cgroup /devcg-ns: refused, naming its pid and cgroup; it
#                   keeps running.
#   ct_devcg-plain  a task without namespaces in /devcg-plain, imgcr in the
#                   root cgroup: dump --cgroups ignore (restored in imgcr's
#                   cgroup) refused the same way, it keeps running; dumped
#                   (soft: put back in its cgroup, bpf=1 recorded), the
#                   cgroup removed: the restore refuses to make it again.
#   ct_devcg-cleanup  (no program) a container with its own PID and cgroup
#                   namespaces in /devcg-cleanup, dumped, its tree file's
#                   memory.max lowered below what the restored tree uses:
#                   the restore fails after putting the tree in the
#                   cgroup, and the cgroup it made is removed (the tree
#                   killed first, review M1).
#   ct_devcg-same   imgcr itself in /devcg (as runc runs criu in the
#                   container's cgroup): dumped, and restored there, the
#                   restored task in /devcg, running.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

setup() {	# CG: the subtest's own cgroup (programs add up in one)
	CG=/devcg-${T#ct_devcg-}
	G=/sys/fs/cgroup$CG
	ct_cgroup2 || fail "cgroup2: $(ct_cgroup2 2>&1)"
	mkdir -p $G || fail "cannot make $G"
	devcg $G > devcg.out 2>&1 || fail "cannot attach the device program: $(cat devcg.out)"
}

# still_runs PID: PID alive and asleep a second after the failed dump
still_runs() {
	sleep 1
	[ "$(state $1)" = S ] || fail "pid $1 state '$(state $1)' after the failed dump"
}

sub_ns() {
	setup
	sh -c "echo \$\$ > $G/cgroup.procs && exec /usr/sbin/unshare --fork --pid --cgroup sleep 600" &
	u=$!
	track $u
	ct=$(child_of $u)
	[ -n "$ct" ] || fail "no container init under $u"
	track $ct
	timeout -s KILL 60 imgcr dump -t $ct -D d > dump.out 2> dump.err &&
		fail "dumped: $(tr '\n' '|' < dump.err)"
	grep -q "^imgcr: pid $ct: its cgroup $CG has 1 device access (BPF_CGROUP_DEVICE) BPF program" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	still_runs $ct
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

sub_plain() {
	setup
	sh -c "echo \$\$ > $G/cgroup.procs && exec sleep 600" &
	p=$!
	track $p
	sleep 0.3
	grep -qx "0::$CG" /proc/$p/cgroup || fail "not in $CG: $(cat /proc/$p/cgroup)"
	# --cgroups ignore: restored in imgcr's cgroup, without the program
	timeout -s KILL 60 imgcr dump -t $p -D d --cgroups ignore > dump.out 2> dump.err &&
		fail "dumped: $(tr '\n' '|' < dump.err)"
	grep -q "^imgcr: pid $p: its cgroup $CG has 1 device access (BPF_CGROUP_DEVICE) BPF program.*(in cgroup /)" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	still_runs $p
	msg=$(head -n 1 dump.err | cut -c1-150)
	# soft: put back in $CG, which keeps its program; the count recorded
	timeout -s KILL 60 imgcr dump -t $p -D d2 > dump.out 2> dump.err ||
		fail "dump: $(tail -n 5 dump.err | tr '\n' '|')"
	wait_gone $p 20 || fail "the task outlived its dump"
	grep -q "^hcgroup path=$CG bpf=1 " d2/tree || fail "no bpf=1: $(grep '^hcgroup' d2/tree | tr '\n' '|')"
	rmdir $G || fail "cannot remove $G"
	timeout -s KILL 60 imgcr restore -D d2 --detach > restore.out 2> restore.err &&
		fail "restored into $CG made again without its program"
	grep -q "pid $p: its cgroup $CG is gone, and had 1 cgroup BPF program attached" restore.err ||
		fail "restore message: $(tr '\n' '|' < restore.err)"
	[ -d $G ] && fail "$G made by the refused restore"
	pass "$msg; $(grep -m1 'is gone' restore.err | cut -c1-120)"
}

sub_same() {
	setup
	sh -c "echo \$\$ > $G/cgroup.procs && exec sleep 600" &
	p=$!
	track $p
	sleep 0.3
	sh -c "echo \$\$ > $G/cgroup.procs && exec timeout -s KILL 60 imgcr dump -t $p -D d" > dump.out 2> dump.err ||
		fail "dump: $(tail -n 5 dump.err | tr '\n' '|')"
	wait_gone $p 20 || fail "the task outlived its dump"
	sh -c "echo \$\$ > $G/cgroup.procs && exec timeout -s KILL 60 imgcr restore -D d --detach --pidfile $PWD/rp" > restore.out 2> restore.err ||
		fail "restore: $(tail -n 5 restore.err | tr '\n' '|')"
	n=$(cat rp)
	track $n
	sleep 0.5
	grep -qx "0::$CG" /proc/$n/cgroup || fail "restored in $(cat /proc/$n/cgroup)"
	[ "$(state $n)" = S ] || fail "restored pid $n state '$(state $n)'"
	pass
}

sub_cleanup() {
	CG=/devcg-cleanup
	G=/sys/fs/cgroup$CG
	ct_cgroup2 || fail "cgroup2: $(ct_cgroup2 2>&1)"
	mkdir -p $G || fail "cannot make $G"
	sh -c "echo \$\$ > $G/cgroup.procs && exec /usr/sbin/unshare --fork --pid --cgroup sleep 600" &
	u=$!
	track $u
	ct=$(child_of $u)
	[ -n "$ct" ] || fail "no container init under $u"
	track $ct
	timeout -s KILL 60 imgcr dump -t $ct -D d > dump.out 2> dump.err ||
		fail "dump: $(tail -n 5 dump.err | tr '\n' '|')"
	wait_gone $ct 20 || fail "the container outlived its dump"
	kill -9 $u 2> /dev/null
	wait_gone $u 20
	rmdir $G || fail "cannot remove $G after the dump: $(cat $G/cgroup.procs | tr '\n' ' ')"
	grep -q '^cgroup .*memory.max=max' d/tree || fail "no memory.max in the tree file: $(grep ^cgroup d/tree)"
	sed -i 's/memory.max=max/memory.max=4096/' d/tree
	# (its stdout, this subtest's output file, has grown since the dump)
	timeout -s KILL 60 imgcr restore -D d --allow-changed-files --detach --pidfile "$PWD/rp" > restore.out 2> restore.err &&
		{ track "$(cat rp)"; fail "restored with memory.max 4096"; }
	grep -q "more than its memory.max 4096" restore.err || fail "message: $(tr '\n' '|' < restore.err)"
	[ -d $G ] && fail "$G left behind after the failed restore (tasks: $(cat $G/cgroup.procs | tr '\n' ' '))"
	pass "$(grep 'memory.max 4096' restore.err | head -n 1 | cut -c1-160)"
}

subtest ct_devcg-ns sub_ns
subtest ct_devcg-plain sub_plain
subtest ct_devcg-same sub_same
subtest ct_devcg-cleanup sub_cleanup
