#!/bin/sh
# --imgcr-ids and user namespaces (review s11 M2): an image's uids and gids
# are numbers of the user namespace its credentials record (the thread's
# own, IMGCR_PROC_OWN_NS).  binfmt_img gives them only there.
#   ids_userns-refused: uid 1000 runs pauser in a user namespace of its own
#     where it is uid 5; root dumps it (cat /proc/PID/dump) and execs the
#     image with --imgcr-creds --imgcr-ids in the initial namespace:
#     refused, naming the namespace (before: restored as the host's uid 5,
#     another user -- with a namespace's uid 0, root).
#   ids_userns-same: uid 1000's pauser without a namespace: root's exec with
#     --imgcr-creds --imgcr-ids restores it as uid 1000 (in the image's own
#     namespace the IDs are given as before).
. /imgcr/guest/lib.sh
require_modules
chmod 755 .

t_refused() {
	: > p.out && chown 1000:1000 p.out
	runas 1000 1000 /usr/sbin/unshare -U --map-user=5 --map-group=5 pauser > p.out 2>&1 < /dev/null &
	pid=$!
	track $pid
	wait_line p.out '^ready' 20 || fail "pauser in a user namespace did not start: $(cat p.out)"
	[ "$(readlink /proc/$pid/ns/user)" != "$(readlink /proc/self/ns/user)" ] ||
		fail "setup: pauser is in our user namespace"
	grep -q '^Uid:.1000.1000.1000.1000' /proc/$pid/status ||
		fail "setup: $(grep Uid /proc/$pid/status)"
	stop_task $pid
	dump $pid u.img
	kill9 $pid
	chmod +x u.img
	dmesg_mark
	timeout -s KILL 10 tryexec ./u.img --imgcr-creds --imgcr-ids > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "not refused (exit $rc: $(head -c 100 te.out | tr '\n' ' ')): uid 5 of the namespace given as the host's"
	dmesg_since | grep -q "uid 5 and gid 5 are of another user namespace" ||
		fail "no reason in the kernel log: $(dmesg_since | grep binfmt_img | tail -n 1)"
	pass "refused: $(dmesg_since | grep -o 'uid 5 and gid 5 are of another.*' | head -c 100)"
}

t_same() {
	: > q.out && chown 1000:1000 q.out
	runas 1000 1000 pauser > q.out 2>&1 < /dev/null &
	pid=$!
	track $pid
	wait_line q.out '^ready' 20 || fail "pauser did not start: $(cat q.out)"
	stop_task $pid
	dump $pid s.img
	kill9 $pid
	chmod +x s.img
	tryexec ./s.img --imgcr-creds --imgcr-ids >> q.out 2> restore.err &
	rp=$!
	track $rp
	wait_restored $rp 30 tryexec || fail "not restored: $(tail -n 1 q.out)$(rerr)"
	grep -q '^Uid:.1000.1000.1000.1000' /proc/$rp/status ||
		fail "outside: $(grep Uid /proc/$rp/status)"
	kill -USR1 $rp
	wait_exit $rp 10
	[ "$RC" = 0 ] || fail "restored pauser exit $RC$(rerr)"
	grep -q "^woken ok pid=$rp" q.out || fail "inside: no 'woken ok': $(tail -n 1 q.out)"
	pass "restored as uid 1000"
}

subtest ids_userns-refused t_refused
subtest ids_userns-same t_same
