#!/bin/sh
# Unix sockets whose names no longer lead to them (skpaths MODE, see
# test/progs/skpaths.c; docs/sockets.md), one subtest per MODE: each tree
# dumped with "imgcr dump -t PID -D d" and restored with "imgcr restore -D d
# --detach"; the program checks its sockets' names (getsockname,
# getpeername), that they send and receive, its queued datagrams in order
# with their senders' names (recvfrom); from outside: the names of the
# task's sockets in /proc/net/unix as before, and the files at their paths
# (a FIFO, a regular file, another socket's file) as they were, nothing
# left behind in the directory.
#  sk_unix_paths-fifo      bound to a path where a FIFO / a regular file now is
#  sk_unix_paths-rel       bound to a relative name, the cwd changed since
#  sk_unix_paths-deleted   bound to a path removed; and another socket bound
#                          there again
#  sk_unix_paths-dgramdel  datagram sockets connected to a removed path,
#                          the peer open / closed
#  sk_unix_paths-queue     datagrams queued from senders gone (path,
#                          abstract, unnamed, a dead socketpair end)
#  sk_unix_paths-refuse    a datagram from a sender bound by a relative
#                          name, gone: the dump refuses, naming pid and fd
#  sk_unix_paths-deldir    bound to a path removed with its directory: the
#                          dump refuses, naming pid, fd and path
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

# /proc/net/unix: the names of the task's unix sockets (a name per socket inode)
unames() {
	inos=$(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
	awk -v inos=" $inos" 'FNR > 1 && index(inos, " " $7 " ") { print (NF >= 8 ? $8 : "-") }' /proc/net/unix | sort | tr '\n' ' '
}

# start MODE: skpaths MODE in $PWD/d, its pid in $pid, names checked
start() {
	mkdir -p d/sub || fail "mkdir"
	setsid skpaths $1 "$PWD/d" "$PWD/out.txt" </dev/null >/dev/null 2>skpaths.err &
	pid=$!
	track $pid
	wait_line out.txt '^ready' 20 || fail "skpaths did not start: $(cat out.txt skpaths.err | tail -n5 | tr '\n' '|')"
	grep -q "^names ok [1-9][0-9]* fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|names' out.txt | tr '\n' '|')"
	B4=$(unames $pid)
}

# dump_restore: dump, restore --detach, the program back asleep
dump_restore() {
	imgcr dump -t $pid -D img 2> dump.err || fail "dump: $(cat dump.err | tr '\n' '|')"
	wait_dumped_gone $pid
	imgcr restore -D img --detach > r.out 2> restore.err || fail "restore --detach: $(cat restore.err | tr '\n' '|')"
	wait_tasks_restored $pid
	AF=$(unames $pid)
	[ "$AF" = "$B4" ] || fail "/proc/net/unix names differ: before '$B4', after '$AF'"
}

# finish: SIGUSR1, the program's own checks all passed
finish() {
	kill -USR1 $pid
	wait_line out.txt '^done' 20 || fail "no result: $(tail -n3 out.txt | tr '\n' '|')"
	grep -q "^done ok [1-9][0-9]* fail 0" out.txt ||
		fail "inside: $(sed -n '/^ready/,$p' out.txt | grep -E '^FAIL|^done' | tr '\n' '|')"
	left=$(ls -a d d/sub | grep '^\.imgcr')
	[ -z "$left" ] || fail "temporary files left: $left"
}

t_fifo() {
	start fifo
	[ -p d/f.sock ] || fail "d/f.sock is not a FIFO before the dump"
	fino=$(stat -c %i d/f.sock) gino=$(stat -c %i d/g.sock)
	dump_restore
	[ -p d/f.sock ] && [ "$(stat -c %i d/f.sock)" = "$fino" ] ||
		fail "d/f.sock is not the FIFO it was: $(ls -li d | tr '\n' '|')"
	[ -f d/g.sock ] && [ "$(stat -c %i d/g.sock)" = "$gino" ] && [ "$(cat d/g.sock)" = regular ] ||
		fail "d/g.sock is not the file it was: $(ls -li d | tr '\n' '|')"
	finish
	pass "sockets bound where a FIFO and a regular file now are: names as before, the files left as they were ($AF)"
}

t_rel() {
	start rel
	dump_restore
	[ -S d/sub/r.sock ] || fail "d/sub/r.sock is not a socket: $(ls -l d/sub | tr '\n' '|')"
	[ "$(readlink /proc/$pid/cwd)" = "$PWD/d" ] || fail "cwd $(readlink /proc/$pid/cwd)"
	finish
	pass "bound to r.sock from d/sub, the cwd d: bound again from d/sub ($AF)"
}

t_deleted() {
	start deleted
	dump_restore
	[ -e d/del.sock ] && fail "d/del.sock is back: $(ls -l d | tr '\n' '|')"
	[ -S d/two.sock ] || fail "d/two.sock is not a socket: $(ls -l d | tr '\n' '|')"
	finish
	pass "bound to removed paths, one bound again by a live socket: names as before, the path the live one's ($AF)"
}

t_dgramdel() {
	start dgramdel
	dump_restore
	[ -e d/peer.sock ] || [ -e d/gone.sock ] && fail "a removed path is back: $(ls -l d | tr '\n' '|')"
	finish
	pass "connected to removed paths: peer names as before, to the open peer a send arrives, to the closed one ECONNREFUSED"
}

t_queue() {
	start queue
	s1=$(stat -c %i d/s1.sock)
	dump_restore
	[ -S d/s1.sock ] && [ "$(stat -c %i d/s1.sock)" = "$s1" ] ||
		fail "d/s1.sock (a closed sender's file) is not as it was: $(ls -li d | tr '\n' '|')"
	finish
	pass "datagrams from senders gone back in order with their senders' names (path, abstract, unnamed, live, a dead pair end)"
}

t_refuse() {
	start refuse
	imgcr dump -t $pid -D img 2> dump.err && fail "the dump succeeded"
	grep -q "pid $pid fd [0-9]*: .*relative name" dump.err || fail "dump message: $(cat dump.err | tr '\n' '|')"
	[ "$(state $pid)" = S ] || fail "the tree is not running after the refusal: state '$(state $pid)'"
	kill -USR1 $pid
	wait_line out.txt '^done' 20 || fail "no result after the refusal"
	pass "refused: $(grep -m1 'relative name' dump.err)"
}

t_deldir() {
	start deldir
	[ -e d/sub ] && fail "d/sub is still there"
	imgcr dump -t $pid -D img 2> dump.err && fail "the dump succeeded"
	grep -q "pid $pid fd [0-9]*: socket:\[[0-9]*\]: bound to $PWD/d/sub/x.sock, whose socket file was removed and whose directory is gone too" dump.err ||
		fail "dump message: $(cat dump.err | tr '\n' '|')"
	[ -e img/tree ] && fail "the refused dump left an image"
	left_running $pid || fail "the tree is not running after the refusal: state '$(state $pid)'"
	[ "$(unames $pid)" = "$B4" ] || fail "/proc/net/unix names changed: '$B4', now '$(unames $pid)'"
	finish
	pass "refused: $(grep -m1 'directory is gone' dump.err)"
}

for m in fifo rel deleted dgramdel queue refuse deldir; do
	mkdir "$m" && (cd "$m" && subtest sk_unix_paths-$m t_$m)
done
exit 0
