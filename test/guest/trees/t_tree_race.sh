#!/bin/sh
# The freeze never fails because tasks come and go (test/progs/spawner.c:
# a child every ~2 ms, some with a grandchild, reaped in batches so
# zombies are around, plus a child ignoring SIGCHLD whose children the
# kernel reaps at once).  7 dumps with --leave-running, then one that
# kills the tree: every dump succeeds; the restored spawner goes on, reaps
# every child (restored zombies included) and finds each exit code right
# ("done ok").  Sub-test tree_race-vfork: a task waiting in vfork() for a
# child that does not exec is refused with a message, and left running
# (after the child dies it goes on).
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

vfork_case() {
	vforker > v.out 2> v.err &
	vp=$!
	track $vp
	wait_line v.out '^parent' 10 || fail "vforker did not start"
	n=0
	while [ -z "$(cat /proc/$vp/task/$vp/children 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "no vfork child"
		usleep 20000
	done
	vc=$(cat /proc/$vp/task/$vp/children)
	vc=${vc% }
	track $vc
	imgcr dump -t $vp -D v 2> dump.err && fail "dump of a vfork parent succeeded"
	grep -q "pid $vp: waits in vfork() for its child $vc (which shares its memory) to exec or exit: vfork children are not supported" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e v/tree ] && fail "a tree was written"
	case "$(state $vc)" in S) ;; *) fail "the vfork child is '$(state $vc)' after the refused dump" ;; esac
	kill -9 $vc
	wait_line v.out '^resumed 0x9$' 10 || fail "the vfork parent did not go on: $(cat v.out | tr '\n' '|') ($(state $vp))"
	pass "$(head -n1 dump.err | cut -c1-120)"
}
subtest tree_race-vfork vfork_case

spawner > out 2> spawner.err &
pid=$!
track $pid
wait_line out '^n 200$' 30 || fail "spawner did not start: $(cat spawner.err)"
zombies=0 tasks=0
for i in 1 2 3 4 5 6 7; do
	imgcr dump --leave-running -t $pid -D d$i 2> d$i.err || fail "dump $i of 8 failed: $(cat d$i.err)"
	zombies=$((zombies + $(tree_fields d$i/tree | grep -c '^exit ')))
	tasks=$((tasks + $(tree_fields d$i/tree | grep -c '^task ')))
	rm -rf d$i
	usleep 50000
done
grep -q BAD out && fail "spawner: $(grep BAD out | head -n 3 | tr '\n' '|')"
n=$(tail -n 1 out)
imgcr dump -t $pid -D d 2> d.err || fail "dump 8 of 8 failed: $(cat d.err)"
zombies=$((zombies + $(tree_fields d/tree | grep -c '^exit ')))
tasks=$((tasks + $(tree_fields d/tree | grep -c '^task ')))
[ "$zombies" -gt 0 ] || fail "no dump caught a zombie ($tasks tasks in 8 dumps)"
wait_gone $pid 10 || fail "spawner survived the dump"
wait $pid 2>/dev/null
wait_dumped_gone $(tree_fields d/tree | sed -n 's/^task \([0-9]*\) .*/\1/p')
imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_line out "^n $(( $(sed -n 's/^n //p' out | tail -n 1) + 200 ))\$" 60 ||
	fail "the restored spawner does not go on: $(tail -n 2 out | tr '\n' '|')$(rerr)"
kill -USR1 $pid
wait_line out '^done' 30 || fail "no done line: $(tail -n 2 out | tr '\n' '|')"
wait_exit $rpid 30
grep -q BAD out && fail "spawner: $(grep BAD out | head -n 3 | tr '\n' '|')"
grep -q '^done ok' out || fail "$(grep '^done' out)"
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
pass "8 dumps: $tasks tasks, $zombies zombies; $(grep '^done' out)"
