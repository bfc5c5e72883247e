#!/bin/sh
# fds whose object is gone or no longer named by its number
# (test/progs/deadfds.c; the program checks each itself, before the dump
# and after the restore: "ok"/"BAD" lines, "done ok").
# fds_dead_pidfd: two pidfds to a child that has exited and been reaped
# (one O_NONBLOCK): from outside, fdinfo Pid -1 and the same flags after
# the restore; inside, poll readable, waitid(P_PIDFD) ECHILD,
# pidfd_send_signal ESRCH; both pidfds still of one process (one inode).
# fds_dead_epoll: an epoll whose item fd a was closed (its pipe still open
# at fd b, an eventfd now at a) and whose item fd c was closed in the task
# holding the epoll (its pipe still open at c in a child without the
# epoll): from outside, the tfd lines name the same files (the inode of b,
# the inode of the child's c) after the restore; inside, MOD/DEL on the
# numbers fail as before and both pipes are reported with the items' data.
# fds_dead_epoll_out: an epoll item whose file only a process outside the
# tree holds: the dump is refused naming the pid, the epoll fd and the
# number, and the tree runs on.
# fds_dead_inotify: an inotify watch (wd 2) on a file deleted while the
# task holds it open, between watches on a directory (wd 1) and another
# file (wd 3): from outside, watch 2 is on the inode of the held fd with
# the same mask after the restore; inside, nothing queued, and events on
# the deleted file, the directory and the other file come with their wds.
# fds_dead_inotify_out: the deleted file held only outside the tree: the
# dump is refused naming the pid, the fd and the watch.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# start MODE: deadfds MODE, its "fds" line's values as variables
start() {
	rm -rf d restored
	deadfds $1 > out 2> deadfds.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "deadfds $1 did not start: $(cat out deadfds.err | tr '\n' '|')"
	grep -q "^BAD" out && fail "before the dump: $(grep "^BAD" out | tr '\n' '|')"
	eval "$(sed -n 's/^fds //p' out)"
}

# restore_wait PID...: imgcr restore -D d in the background, until every PID is back
restore_wait() {
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored "$@"
}

finish() {
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep "^BAD" out | tr '\n' '|')$(rerr)"
	grep -q "^BAD" out && fail "$(grep "^BAD" out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
}

pidfd() {
	start pidfd
	before="$(fdi $pid $pfd flags) $(fdi $pid $pnb flags)"
	# one process: the same inode (pidfs, 6.9+; before, every pidfd's anonymous inode)
	[ "$(stat -L -c %i /proc/$pid/fd/$pfd)" = "$(stat -L -c %i /proc/$pid/fd/$pnb)" ] || fail "setup: two inodes"
	[ "$(fdi $pid $pfd Pid) $(fdi $pid $pnb Pid)" = "-1 -1" ] || fail "setup: Pid $(fdi $pid $pfd Pid) $(fdi $pid $pnb Pid)"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	grep -q "^file .* kind=pidfd .*exited=[1-9]" d/tree || fail "no exited pidfd record: $(grep pidfd d/tree | tr '\n' '|')"
	restore_wait $pid
	[ "$(fdi $pid $pfd Pid) $(fdi $pid $pnb Pid)" = "-1 -1" ] ||
		fail "after the restore: Pid $(fdi $pid $pfd Pid) $(fdi $pid $pnb Pid)"
	after="$(fdi $pid $pfd flags) $(fdi $pid $pnb flags)"
	[ "$before" = "$after" ] || fail "flags before '$before', after '$after'"
	[ "$(stat -L -c %i /proc/$pid/fd/$pfd)" = "$(stat -L -c %i /proc/$pid/fd/$pnb)" ] ||
		fail "after the restore: the two pidfds are of two processes (inodes $(stat -L -c %i /proc/$pid/fd/$pfd), $(stat -L -c %i /proc/$pid/fd/$pnb))"
	[ "$(readlink /proc/$pid/fd/$pfd)" = "anon_inode:[pidfd]" ] || fail "fd $pfd: $(readlink /proc/$pid/fd/$pfd)"
	finish
	pass "$(grep -c '^ok' out) checks ok; flags $after, Pid -1"
}

# tfd_ino PID EFD N: the inode (decimal) the epoll's item of fd N watches
tfd_ino() { printf '%d' 0x$(sed -n "s/^tfd: *$3 .* ino:\([0-9a-f]*\).*/\1/p" /proc/$1/fdinfo/$2); }

# epoll_outside WHEN: items a and c watch the files at b and at the child's c
epoll_outside() {
	[ "$(tfd_ino $pid $efd $a)" = "$(stat -L -c %i /proc/$pid/fd/$b)" ] ||
		fail "$1: item $a watches inode $(tfd_ino $pid $efd $a), fd $b is $(stat -L -c %i /proc/$pid/fd/$b)"
	[ "$(tfd_ino $pid $efd $c)" = "$(stat -L -c %i /proc/$child/fd/$c)" ] ||
		fail "$1: item $c watches inode $(tfd_ino $pid $efd $c), the child's fd $c is $(stat -L -c %i /proc/$child/fd/$c)"
	[ -e /proc/$pid/fd/$c ] && fail "$1: fd $c open in $pid"
	[ "$(readlink /proc/$pid/fd/$a)" = "anon_inode:[eventfd]" ] || fail "$1: fd $a is $(readlink /proc/$pid/fd/$a)"
}

epoll() {
	start epoll
	track $child
	epoll_outside "before the dump"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	n=$(grep -c "^epitem .* via=" d/tree)
	[ "$n" = 2 ] || fail "$n epitem records with via=: $(grep epitem d/tree | tr '\n' '|')"
	restore_wait $pid $child
	epoll_outside "after the restore"
	finish
	pass "$(grep -c '^ok' out) checks ok; items $a and $c watch their files again"
}

epoll_out() {
	start epollout
	track $out
	imgcr dump -t $pid -D d 2> dump.err && fail "dump of an epoll watching a file held only outside the tree succeeded"
	grep -q "pid $pid fd $efd: epoll: the file it watches as fd $a is no longer open at fd $a in any task holding this epoll, nor at any other fd of the tree" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ "$(state $pid)" = S ] || fail "task $pid not running after the refused dump (state '$(state $pid)')"
	kill $pid $out
	pass "refused: $(grep -m1 'epoll:' dump.err | cut -c1-160)"
}

# wmask WHEN: "MASK INO-OK" of watch 2 of $ifd
wmask() {
	l=$(grep "^inotify wd:2 " /proc/$pid/fdinfo/$ifd)
	[ -n "$l" ] || fail "$1: no watch 2: $(grep inotify /proc/$pid/fdinfo/$ifd | cut -c1-60 | tr '\n' '|')"
	ino=$(printf '%d' 0x$(echo "$l" | sed 's/.* ino:\([0-9a-f]*\) .*/\1/'))
	[ "$ino" = "$(stat -L -c %i /proc/$pid/fd/$g)" ] || fail "$1: watch 2 on inode $ino, fd $g is $(stat -L -c %i /proc/$pid/fd/$g)"
	echo "$l" | sed 's/.* mask:\([0-9a-f]*\) .*/\1/'
}

inotify() {
	start inotify
	m1=$(wmask "before the dump")
	case "$(readlink /proc/$pid/fd/$g)" in *" (deleted)") ;; *) fail "fd $g: $(readlink /proc/$pid/fd/$g)" ;; esac
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	grep -q "^watch .* wd=2 .*ghost=[0-9]" d/tree || fail "no watch record on the ghost: $(grep '^watch' d/tree | tr '\n' '|')"
	restore_wait $pid
	m2=$(wmask "after the restore")
	[ "$m1" = "$m2" ] || fail "watch 2: mask $m1 before, $m2 after"
	[ "$(grep -c '^inotify wd:' /proc/$pid/fdinfo/$ifd)" = 3 ] || fail "watches: $(grep inotify /proc/$pid/fdinfo/$ifd | cut -c1-40 | tr '\n' '|')"
	finish
	pass "$(grep -c '^ok' out) checks ok; watch 2 (mask $m2) on the deleted file's restored inode"
}

inotify_out() {
	start inotifyout
	track $out
	imgcr dump -t $pid -D d 2> dump.err && fail "dump of a watch on a deleted file held only outside the tree succeeded"
	grep -q "pid $pid fd $ifd: inotify: watch 2 (inode [0-9]*): the watched file was deleted and no fd of the tree holds it" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ "$(state $pid)" = S ] || fail "task $pid not running after the refused dump (state '$(state $pid)')"
	kill $pid $out
	pass "refused: $(grep -m1 'inotify:' dump.err | cut -c1-160)"
}

subtest fds_dead_pidfd pidfd
subtest fds_dead_epoll epoll
subtest fds_dead_epoll_out epoll_out
subtest fds_dead_inotify inotify
subtest fds_dead_inotify_out inotify_out
