#!/bin/sh
# Where two kinds of state meet (each checked from outside and by the
# program, test/progs/edges.c):
#  tree_edges-memlock  a POSIX lock on a memfd is still held after restore
#                      (/proc/locks names the restored pid; another process
#                      cannot take it), and the memfd keeps its data: the
#                      restorer's own descriptor of the memfd is closed
#                      before the task takes its lock, or the exec would
#                      have dropped it.
#  tree_edges-opath    an O_PATH fd of a unix socket's file (not a socket)
#                      is restored as an O_PATH fd of that file.
#  tree_edges-detach   a tree with a stopped task is refused by
#                      "restore --detach" (imgcr's exit would orphan its
#                      group: SIGHUP + SIGCONT); nothing is left running.
#  tree_edges-ghostdir a deleted file whose directory was deleted too is
#                      refused at dump, the task left running.
#  tree_edges-maplinked, tree_edges-mapdirgone  the same two refusals for a
#                      file only mapped (test/progs/mapdel.c): a deleted
#                      name of a file that still has another name, and a
#                      deleted file whose directory is gone; the task goes
#                      on ticking with its mapping intact.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# start MODE: edges MODE in ./MODE, $pid and $fd set
start() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	edges "$1" > out 2> err &
	pid=$!
	track $pid
	wait_line out '^ready' 10 || fail "edges $1 did not start: $(cat err)"
	fd=$(sed -n 's/^fd //p' out)
}

# restore_it: dump (killing) and restore ./d; $pid is the restored task
restore_it() {
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task survived the dump"
	imgcr restore -D d > r.out 2> r.err &
	track $!
	n=0
	until [ "$(state $pid)" = S ] && [ "$(readlink /proc/$pid/exe)" != "$(readlink /proc/$!/exe)" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "not restored: $(cat r.err)"
		usleep 20000
	done
}

# checked: SIGUSR1, and the program says "check ok"
checked() {
	kill -USR1 $pid
	wait_line out '^check ' 10 || fail "no check line"
	grep -q '^check ok' out || fail "the program's own check: $(grep '^check' out)"
}

memlock() {
	start memlock
	grep -q "POSIX  ADVISORY  WRITE $pid " /proc/locks || fail "no POSIX lock of $pid before the dump: $(cat /proc/locks)"
	[ "$(lockprobe /proc/$pid/fd/$fd posix 0 10)" = "W $pid" ] || fail "lockprobe before: $(lockprobe /proc/$pid/fd/$fd posix 0 10)"
	restore_it
	grep -q "POSIX  ADVISORY  WRITE $pid " /proc/locks || fail "POSIX lock of the memfd lost at restore: $(tr '\n' '|' < /proc/locks)"
	[ "$(lockprobe /proc/$pid/fd/$fd posix 0 10)" = "W $pid" ] || fail "lockprobe after: $(lockprobe /proc/$pid/fd/$fd posix 0 10)"
	case "$(readlink /proc/$pid/fd/$fd)" in "/memfd:locked (deleted)") ;; *) fail "fd $fd is $(readlink /proc/$pid/fd/$fd)" ;; esac
	checked
	pass
}

opath() {
	start opath
	link=$(readlink /proc/$pid/fd/$fd)
	restore_it
	[ "$(readlink /proc/$pid/fd/$fd)" = "$link" ] || fail "fd $fd is $(readlink /proc/$pid/fd/$fd), was $link"
	fl=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$pid/fdinfo/$fd)
	[ $(( 0$fl & 010000000 )) != 0 ] || fail "fd $fd flags $fl: no O_PATH"
	checked
	pass
}

detach() {
	start detach
	stop_task $pid
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task survived the dump"
	imgcr restore -D d --detach > r.out 2> r.err && fail "restore --detach of a stopped task succeeded"
	grep -q "task $pid was stopped: with --detach" r.err || fail "message: $(cat r.err)"
	sleep 1
	[ -z "$(state $pid)" ] || fail "task $pid exists after the refused restore (state $(state $pid))"
	pass "$(head -c 120 r.err)"
}

ghostdir() {
	mkdir -p w && echo data > w/f || fail "w/f"
	( exec 3< w/f; exec sleep 1000 ) &
	pid=$!
	track $pid
	usleep 200000
	rm -rf w
	imgcr dump -t $pid -D d 2> dump.err && fail "dump of a deleted file in a deleted directory succeeded"
	grep -q "pid $pid fd 3: .*/w/f (deleted): a deleted file whose directory was deleted too is not supported" dump.err ||
		fail "message: $(cat dump.err)"
	left_running $pid || fail "task $pid left in state '$(state $pid)'"
	pass "$(head -c 140 dump.err)"
}

# mapref HOW: mapdel on DIR/f, then HOW (linked: f has a second name g and
# f is removed; dirgone: the directory is removed), dump refused
mapref() {
	mkdir "$1" && head -c 8192 /imgcr/bin/counter > "$1/f" || fail "setup"
	[ "$1" = linked ] && ln "$1/f" "$1/g"
	mapdel "$1/f" private > out.$1 2> err.$1 &
	pid=$!
	track $pid
	wait_line out.$1 '^ready' 10 || fail "mapdel did not start: $(cat err.$1)"
	sum=$(sed -n 's/^ready //p' out.$1)
	if [ "$1" = linked ]; then rm "$1/f"; else rm -rf "$1"; fi
	imgcr dump -t $pid -D d.$1 2> dump.err && fail "dump succeeded"
	grep -q "pid $pid: maps .*/$1/f (deleted): $2 is not supported" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	c=$(grep -c '^tick' out.$1)
	wait_line out.$1 "^tick $((c + 2)) " 10 || fail "task $pid stopped ticking after the refused dump"
	[ "$(tail -n 1 out.$1 | cut -d' ' -f3)" = "$sum" ] || fail "mapping changed: $(tail -n 1 out.$1)"
	pass "$(head -c 140 dump.err)"
}
maplinked() { mapref linked 'a deleted name of a file that still has 1 other name(s)'; }
mapdirgone() { mapref dirgone 'a deleted file whose directory was deleted too'; }

subtest tree_edges-memlock memlock
subtest tree_edges-opath opath
subtest tree_edges-detach detach
subtest tree_edges-ghostdir ghostdir
subtest tree_edges-maplinked maplinked
subtest tree_edges-mapdirgone mapdirgone
