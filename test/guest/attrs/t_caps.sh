#!/bin/sh
# Capabilities, securebits, no_new_privs and the audit loginuid across
# dump + restore (test/progs/caps.c): a root task that dropped
# capabilities (permitted, effective, bounding set) and set securebits
# (NOROOT, NOROOT_LOCKED, KEEP_CAPS); a task that setresuid'd to 1000
# keeping CAP_NET_BIND_SERVICE (KEEP_CAPS + capset), another keeping it as
# an ambient capability; a task whose threads differ (capset in one,
# no_new_privs in another); a task with loginuid 1234.  Checked inside
# (each thread compares capget, securebits, bounding and ambient sets,
# no_new_privs with its own values before the dump) and outside
# (/proc/PID/task/TID/status Cap* and NoNewPrivs lines, uids, and
# /proc/PID/loginuid: the same).  Then:
#   plain: root executing the image of the root task itself (no
#     --imgcr-creds) gets no capability the task did not have;
#   refuse-creds: uid 1000 executing the image of a task with
#     CAP_NET_BIND_SERVICE with --imgcr-creds is refused (EPERM), the
#     kernel log names the capability;
#   refuse-userns: uid 1000 restoring it with --pidns (a new user
#     namespace) is refused, naming the task; nothing runs.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
chmod 777 .

# snap PID FILE: the credentials of every thread of PID as /proc shows them
snap() {
	: > "$2"
	for _t in $(ls /proc/$1/task | sort -n); do
		grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' \
			/proc/$1/task/$_t/status | sed "s/^/$_t /" >> "$2"
	done
	echo "loginuid $(cat /proc/$1/loginuid)" >> "$2"
}

cp "$(command -v caps)" ./caps || fail "cannot copy caps"
./caps tree "$PWD" > out 2> caps.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "caps did not start: $(cat out caps.err | tr '\n' '|')"
grep -q '^FAIL' out && fail "setup: $(grep '^FAIL' out | tr '\n' '|')"
set -- $(sed -n 's/^ready pid=[0-9]* keep=\([0-9]*\) ambient=\([0-9]*\) threads=\([0-9]*\) loginuid=\([0-9]*\)$/\1 \2 \3 \4/p' out)
[ $# = 4 ] || fail "no pids in $(grep ready out)"
keep=$1 amb=$2 thr=$3 lu=$4
all="$pid $keep $amb $thr $lu"
for p in $all; do track $p; done
usleep 200000
for p in $all; do snap $p before.$p; done
grep -q ' CapBnd:' before.$pid || fail "no CapBnd in $(cat before.$pid | tr '\n' '|')"
[ "$(grep -c NoNewPrivs before.$thr)" = 3 ] || fail "threads task: not 3 threads: $(cat before.$thr | tr '\n' '|')"
[ "$(cat /proc/$lu/loginuid)" = 1234 ] || fail "loginuid not set: $(cat /proc/$lu/loginuid)"
[ "$(grep -c 'NoNewPrivs:.1' before.$thr)" = 1 ] || fail "one thread with no_new_privs expected"

imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $all; do wait_gone $p 10 || fail "task $p survived the dump"; done
tree_fields d/tree | grep -qx "loginuid $lu 1234" || fail "no 'loginuid $lu 1234' in the tree: $(grep loginuid d/tree | tr '\n' '|')"

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $all
for p in $all; do
	snap $p after.$p
	cmp -s before.$p after.$p ||
		fail "pid $p differs from outside: $(diff before.$p after.$p | grep '^[-+][^-+]' | tr '\n' '|')"
done
info "sessionid of the loginuid task: $(cat /proc/$lu/sessionid) (a new one: expected)"
touch restored
wait_exit $rpid 120
grep '^FAIL' out > fails.txt
[ -s fails.txt ] && fail "inside: $(tr '\n' '|' < fails.txt)"
for m in root keep ambient threads loginuid tree; do
	grep -q "^$m PASS" out || fail "no '$m PASS' (imgcr restore exit $RC): $(tail -n 5 out | tr '\n' '|')$(rerr)"
done
[ "$RC" = 0 ] || fail "imgcr restore exit $RC$(rerr)"
pass "$(grep -c '^ok ' out) checks ok inside, $(echo $all | wc -w) tasks the same outside"

# plain: the root task's image executed by root, without --imgcr-creds:
# no capability it did not have (bounding set included)
plain() {
	chmod +x d/core-$pid.img
	rm -f restored
	tryexec ./d/core-$pid.img > plain.out 2>&1 &
	pp=$!
	track $pp
	wait_restored $pp 30 tryexec || fail "the image did not run: $(cat plain.out | tr '\n' '|')"
	# root's exec gives every capability of the bounding set, and an
	# empty inheritable set: the image drops what the task had not
	grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/$pp/status > plain.now
	grep -E "^$pid (CapPrm|CapEff|CapBnd|CapAmb):" before.$pid | sed "s/^$pid //" > plain.want
	printf 'CapInh:\t0000000000000000\n' | cat - plain.want > plain.want2
	cmp -s plain.want2 plain.now || fail "capabilities differ: $(diff plain.want2 plain.now | grep '^[-+][^-+]' | tr '\n' '|')"
	kill -9 $pp
	pass "$(grep CapPrm plain.now)"
}
subtest caps-plain plain

# the refusals, for a uid-1000 task with CAP_NET_BIND_SERVICE; then root
# restores it as it was
refusals() {
	mkdir f && chmod 777 f
	: > out2; : > caps2.err; chmod 666 out2 caps2.err	# uid 1000's restorer opens them
	./caps single-keep "$PWD/f" >> out2 2>> caps2.err &
	kp=$!
	track $kp
	wait_line out2 '^ready' 20 || fail "caps single-keep did not start: $(cat out2 caps2.err | tr '\n' '|')"
	snap $kp before2
	imgcr dump -t $kp -D d2 2> dump2.err || fail "dump 2: $(cat dump2.err)"
	wait_gone $kp 10 || fail "task $kp survived the dump"

	# with --imgcr-creds, the exec refuses what its caller has not
	chmod +x d2/core-$kp.img
	dmesg_mark
	runas 1000 1000 tryexec ./d2/core-$kp.img --imgcr-creds > te.out 2>&1
	grep -q 'execve failed: EPERM' te.out || fail "exec --imgcr-creds as uid 1000: not refused with EPERM: $(cat te.out | tr '\n' '|')"
	dmesg_since | grep -q 'CAP_NET_BIND_SERVICE permitted, the caller has not' ||
		fail "kernel log: $(dmesg_since | tail -n 3 | tr '\n' '|')"
	info "uid 1000 exec: $(dmesg_since | grep CAP_NET_BIND | head -n 1)"

	# an ordinary user's restore (in a user namespace of its own)
	[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
		echo 1 > /proc/sys/kernel/unprivileged_userns_clone
	runas 1000 1000 imgcr restore -D d2 --pidns > r3.out 2> r3.err && fail "uid 1000 restored it"
	grep -q "pid $kp.*capabilities in another user namespace" r3.err ||
		fail "uid 1000 restore: message: $(cat r3.err | tr '\n' '|')"
	[ -d /proc/$kp ] && fail "pid $kp exists after the refused restore"
	info "uid 1000 restore --pidns: $(grep -o 'capabilities in another user namespace.*' r3.err | head -n 1)"

	# root's dump gave d2 to uid 1000 (so that it may restore its own
	# tree); a tree with a capability is root's to restore only if root
	# trusts the directory (trust.c): without the option it is refused
	imgcr restore -D d2 > r4.out 2> r4.err && fail "root restored uid 1000's directory holding a capability"
	grep -q "thread $kp has capabilities" r4.err || fail "root restore of d2: message: $(tr '\n' '|' < r4.err)"
	imgcr restore -D d2 --trust-images-dir > r4.out 2> r4.err &
	r4=$!
	track $r4
	wait_tasks_restored $kp
	snap $kp after2
	cmp -s before2 after2 || fail "root restore: differs from outside: $(diff before2 after2 | grep '^[-+][^-+]' | tr '\n' '|')"
	touch f/restored
	wait_exit $r4 60
	grep -q '^single-keep PASS' out2 || fail "single-keep after the root restore: $(tail -n 3 out2 | tr '\n' '|') $(head -c 300 r4.err)"
	[ "$RC" = 0 ] || fail "root restore of single-keep: exit $RC"
	pass "refused to uid 1000 (exec and restore), restored by root"
}
subtest caps-refusals refusals
