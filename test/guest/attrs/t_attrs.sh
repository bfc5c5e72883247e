#!/bin/sh
# Process attributes across dump + restore (test/progs/attrs.c, mode full):
# every resource limit (soft and hard; an fd above RLIMIT_NOFILE's soft
# limit stays), oom_score_adj -123, parent-death
# signal, child subreaper, THP disable, not dumpable, membarrier
# registrations (PRIVATE_EXPEDITED, its SYNC_CORE and RSEQ variants, whose
# commands fail with EPERM unless registered; GLOBAL_EXPEDITED, seen in
# the image), nice 7, SCHED_BATCH, I/O priority, personality,
# no_new_privs, a deleted cwd, a thread with its own parent-death signal;
# a child (SCHED_RR priority 3, SCHED_RESET_ON_FORK) chrooted into jail/
# with its cwd jail/sub; a second child in the same deleted cwd.  Checked
# from outside before the dump and after
# the restore (/proc/PID/limits, oom_score_adj, status, stat, personality,
# cwd and root links: the same), in the tree and `imgcr show`, and by the
# program itself before and after.  A restore whose deleted cwd cannot be
# made again (its parent is gone) fails before any image runs and leaves
# nothing running; the same tree then restores once the parent is back.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# snap PID FILE: what the outside sees of PID's attributes
snap() {
	_s=$(cat /proc/$1/stat) || fail "no /proc/$1/stat"
	_s=${_s##*) }
	# shellcheck disable=SC2086
	set -- "$1" "$2" $_s
	# fields after the comm: field N of stat is ${N}; nice 19, rt_priority 40, policy 41
	{
		cat /proc/$1/limits
		echo "oom_score_adj $(cat /proc/$1/oom_score_adj)"
		grep -E '^(THP_enabled|NoNewPrivs|Cpus_allowed_list):' /proc/$1/status
		echo "personality $(cat /proc/$1/personality)"
		echo "nice ${19} rt_priority ${40} policy ${41}"
		echo "cwd $(readlink /proc/$1/cwd)"
		echo "root $(readlink /proc/$1/root)"
		echo "fds $(ls /proc/$1/fd | sort -n | tr '\n' ' ')"
	} > "$2"
}

# expect FILE LINE-REGEX WHAT
expect() { grep -qE "$2" "$1" || fail "$3: no '$2' in $(tr '\n' '|' < "$1")"; }

outside() {
	snap $pid "$1.main"
	snap $kid "$1.kid"
	snap $kid2 "$1.kid2"
	expect "$1.main" '^Max open files +300 +600 ' "$1: main limits"
	expect "$1.main" '^Max cpu time +5000 +6000 ' "$1: main limits"
	expect "$1.main" '^Max file size +1099511627776 +unlimited ' "$1: main limits"
	expect "$1.main" '^Max realtime timeout +1000000 +2000000 ' "$1: main limits"
	expect "$1.kid" '^Max open files +300 +600 ' "$1: kid limits"
	expect "$1.main" '^oom_score_adj -123$' "$1: main"
	expect "$1.main" '^THP_enabled:.0$' "$1: main"
	expect "$1.main" '^NoNewPrivs:.1$' "$1: main"
	expect "$1.main" '^personality 00040000$' "$1: main"
	expect "$1.main" '^nice 7 rt_priority 0 policy 3$' "$1: main"
	expect "$1.main" "^cwd $PWD/cwdparent/gone \\(deleted\\)\$" "$1: main"
	expect "$1.main" '^root /$' "$1: main"
	expect "$1.main" '^fds .* 400 $' "$1: main fd 400 above RLIMIT_NOFILE"
	expect "$1.kid" "^cwd $PWD/jail/sub\$" "$1: kid"
	expect "$1.kid" "^root $PWD/jail\$" "$1: kid"
	expect "$1.kid" '^nice 7 rt_priority 3 policy 2$' "$1: kid"
	expect "$1.kid2" "^cwd $PWD/cwdparent/gone \\(deleted\\)\$" "$1: kid2"
}

# the program runs from here, and has the same file at the same path in
# the jail (a hard link: same inode), where the restored child maps it
cp "$(command -v attrs)" ./attrs || fail "cannot copy attrs"
mkdir -p cwdparent jail/sub "jail$PWD" || fail "mkdir"
: > jail/marker
ln ./attrs "jail$PWD/attrs" || fail "cannot link attrs into the jail"

./attrs full "$PWD" > out 2> attrs.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "attrs did not start: $(cat out attrs.err | tr '\n' '|')"
kid=$(sed -n 's/^ready pid=[0-9]* kid=\([0-9]*\) kid2=[0-9]*$/\1/p' out)
kid2=$(sed -n 's/^ready pid=[0-9]* kid=[0-9]* kid2=\([0-9]*\)$/\1/p' out)
[ -n "$kid" ] && [ -n "$kid2" ] || fail "no kids in $(grep ready out)"
track $kid
track $kid2
grep -q BAD out && fail "before the dump: $(grep BAD out | tr '\n' '|')"
outside before

imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kid $kid2; do wait_gone $p 10 || fail "task $p survived the dump"; done
for r in "rlimit $pid nofile 300 600" "rlimit $pid fsize 1099511627776 inf" "oom $pid -123" \
	"sched $pid 3 0 0 7" "ioprio $pid 16390" "nnp $pid 1" "cwd-deleted $pid" "rlimit $kid nofile 300 600" \
	"sched $kid 2 1 3 7" "cwd-deleted $kid2"; do
	tree_fields d/tree | grep -q -e "^$r\$" -e "^$r " || fail "no '$r' in the tree: $(grep -E '^(rlimit|oom|sched|ioprio|nnp|cwd)' d/tree | tr '\n' '|')"
done
imgcr show d > show.txt || fail "imgcr show DIR failed"
grep -q "rlimits.* nofile 300/600" show.txt && grep -q "oom_score_adj -123, sched batch prio 0 nice 7" show.txt &&
	grep -q "cwd was deleted: restored as $PWD/cwdparent/gone (deleted)" show.txt ||
	fail "imgcr show DIR: $(head -n 12 show.txt | tr '\n' '|')"
imgcr show d/core-$pid.img > show-img.txt || fail "imgcr show IMAGE failed"
grep -q "^process: .*child-subreaper thp-disable not-dumpable membarrier-private membarrier-sync-core membarrier-rseq membarrier-global, pdeath signal 12" show-img.txt ||
	fail "imgcr show IMAGE: $(grep '^process' show-img.txt)"

# the deleted cwd's parent is gone: refused before any image runs
mv cwdparent cwdparent.away
imgcr restore -D d > r1.out 2> r1.err && fail "restored without the cwd's parent"
grep -qE "pid ($pid|$kid2): cannot recreate its deleted cwd $PWD/cwdparent/gone: mkdir: No such file" r1.err ||
	fail "refusal message: $(cat r1.err | tr '\n' '|')"
for p in $pid $kid $kid2; do [ -d /proc/$p ] && fail "pid $p exists after the failed restore"; done
info "cwd parent gone: $(grep "restore failed" r1.err | head -n1)"
mv cwdparent.away cwdparent

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $pid $kid $kid2
outside after
for w in main kid kid2; do
	cmp -s before.$w after.$w || fail "$w differs from outside: $(diff before.$w after.$w | grep '^[-+][^-+]' | tr '\n' '|')"
done
[ -d cwdparent/gone ] && fail "the recreated cwd was left behind"
touch restored
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
grep -q '^kid2 ok' out || fail "no 'kid2 ok': $(tail -n 3 out | tr '\n' '|')"
grep -q '^kid ok' out || fail "no 'kid ok': $(tail -n 3 out | tr '\n' '|')"
grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
pass "$(grep -c '^ok after' out) checks ok after the restore"
