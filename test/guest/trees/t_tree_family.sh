#!/bin/sh
# A session leader with five children in one process group (led by the
# first child) and a grandchild, each with its own files at different
# offsets, a close-on-exec dup, and shared descriptions (an O_APPEND log
# and a read offset).  After dump + restore --detach: the same pids, ppids
# (but the root's: its parent is now imgcr, then init), pgids, sids, fds
# (targets, fdinfo pos and flags, close-on-exec included) seen from
# outside; then all of them carry on to the end.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules

mkdir w
family $PWD/w 3 </dev/null >/dev/null 2>&1 &
root=$!
track $root
for i in 0 1 2 3 4 5 6; do
	wait_line w/f-$i '^paused$' 30 || fail "task $i never paused: $(tail -n1 w/f-$i 2>/dev/null)"
done
for i in 0 1 2 3 4 5 6; do
	p=$(sed -n 's/^task [0-9]* pid \([0-9]*\)$/\1/p' w/f-$i)
	track $p
	ALL="${ALL:-} $p"
done

# snap: what the outside sees of every task
snap() {
	for p in $ALL; do
		s=$(cat /proc/$p/stat) || { echo "$p gone"; continue; }
		s=${s##*) }
		set -- $s
		if [ "$p" = "$root" ]; then echo "$p state=$1 pgid=$3 sid=$4"; else echo "$p state=$1 ppid=$2 pgid=$3 sid=$4"; fi
		for f in /proc/$p/fd/*; do
			n=${f##*/}
			echo "$p fd $n -> $(readlink $f) $(grep -E '^(pos|flags):' /proc/$p/fdinfo/$n | tr -s '\t ' ' ' | tr '\n' ' ')"
		done
	done
}
for p in $ALL; do wait_state $p S 10 || fail "task $p not sleeping"; done
snap > before.txt

imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $ALL; do wait_gone $p 10 || fail "task $p survived the dump"; done
[ "$(grep -c '^task ' d/tree)" = 7 ] || fail "tree has $(grep -c '^task ' d/tree) tasks, want 7"

imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
for p in $ALL; do
	wait_restored $p 30 imgcr || fail "task $p not restored (state '$(state $p)')$(rerr)"
done
snap > after.txt
if ! cmp -s before.txt after.txt; then
	diff before.txt after.txt > d.diff
	fail "outside view changed: $(grep '^[-+][0-9]' d.diff | head -n 6 | tr '\n' '|')"
fi

for p in $ALL; do kill -USR1 $p; done
wait_gone $root 30 || fail "the restored leader did not finish"
for i in 0 1 2 3 4 5 6; do
	got=$(grep '^tick ' w/f-$i | tr '\n' ' ')
	[ "$got" = "tick 1 tick 2 tick 3 tick 4 tick 5 tick 6 " ] || fail "f-$i ticks: $got"
	grep -q '^done$' w/f-$i || fail "task $i did not finish"
	[ "$(cat w/a-$i | tr '\n' ' ')" = "task $i $i done " ] || fail "a-$i: $(cat w/a-$i)"
done
[ "$(sort w/shared.log | tr '\n' ' ')" = "0 done 1 done 2 done 3 done 4 done 5 done 6 done " ] ||
	fail "shared.log: $(tr '\n' ' ' < w/shared.log)"
pass "7 tasks, $(wc -l < before.txt) lines of /proc identical"
