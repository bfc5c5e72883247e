#!/bin/sh
# A pipeline driven by a shell that keeps starting short-lived commands:
#   sh -c 'i=0; while [ ! -e stop ]; do i=$((i+1)); echo $i | cat; usleep 5000; done | cat > out.txt'
# (each line goes through a subshell and a cat that live a few ms, reaped
# by the shell: zombies and new children all the time).  Dumped 12 times
# in a row, 11 with --leave-running and the last one killing the tree:
# every dump succeeds.  Restored from the last dump, it goes on; stopped
# with the stop file, out.txt is exactly 1, 2, ... N, one per line (no gap,
# no repeat), as an uninterrupted run writes.  Nothing out.txt's holder
# has open changes between the last dump and the restore.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

setsid sh -c 'i=0; while [ ! -e stop ]; do i=$((i+1)); echo $i | cat; usleep 5000; done | cat > out.txt' \
	</dev/null >/dev/null 2>sh.err &
pid=$!
track $pid
wait_size out.txt 100 30 || fail "the pipeline wrote nothing in 30 s: $(cat sh.err)"
zombies=0 tasks=0 i=1
while [ $i -le 12 ]; do
	lr=--leave-running
	[ $i = 12 ] && lr=
	imgcr dump $lr -t $pid -D d$i 2> d$i.err || fail "dump $i of 12 failed: $(cat d$i.err)"
	zombies=$((zombies + $(tree_fields d$i/tree | grep -c '^exit ')))
	tasks=$((tasks + $(tree_fields d$i/tree | grep -c '^task ')))
	[ $i = 12 ] || rm -rf d$i
	i=$((i + 1))
	usleep 30000
done
info "12 dumps: $tasks tasks, $zombies zombies"
wait_gone $pid 10 || fail "the shell survived the last dump"
wait $pid 2>/dev/null
wait_dumped_gone $(tree_fields d12/tree | sed -n 's/^task \([0-9]*\) .*/\1/p')
at=$(wc -l < out.txt)
# The shell loop forks and redirects all the time: by the state check's
# freeze its fds and children have moved on, so it is off here.
IMGCR_STATE_HOOK= imgcr restore -D d12 > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_line out.txt "^$((at + 100))\$" 60 || fail "the restored pipeline does not go on (at line $(wc -l < out.txt), dumped at $at)$(rerr)"
touch stop
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
last=$(tail -n 1 out.txt)
seq 1 "$last" > want.txt
cmp -s out.txt want.txt || fail "out.txt is not 1..$last: $(diff want.txt out.txt | head -n 6 | tr '\n' '|')"
pass "12 dumps ($tasks tasks, $zombies zombies), dumped at line $at, went on to $last"
