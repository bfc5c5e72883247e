#!/bin/sh
# An open /proc/PID/dump keeps nothing of a process that is gone (issue
# 25): once the dumped process has exited and been reaped, the pages its
# image pinned are let go (MemFree comes back) and a read of the held dump
# fails with ESRCH, while a dump of a process that still lives reads on.
# Before, the holder kept the whole memory, charged to no process.
# Subtests dump_pins-live, dump_pins-private, dump_pins-shared.
# timeout: 180
. /imgcr/guest/lib.sh
require_modules

memfree_kb() { sed -n 's/^MemFree: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
# what is given back, in kB: free memory for private pages; for a shared
# memory object, its pages leaving the page cache (Shmem falls at once when
# the object goes, while 7.2 frees such pages over several seconds)
given_kb() {
	case $1 in
	shared) echo $(( - $(sed -n 's/^Shmem: *\([0-9]*\) kB/\1/p' /proc/meminfo) )) ;;
	*) memfree_kb ;;
	esac
}

# (a) the control: a live, stopped process's dump reads whole
T=dump_pins-live
heapbench 16 > c.out 2>&1 &
cpid=$!
track $cpid
wait_line c.out '^ready' 60 || fail "heapbench 16 did not start: $(cat c.out)"
stop_task $cpid
mkfifo cgo
holddump $cpid < cgo > ch.out 2>&1 &
ch=$!
track $ch
exec 7> cgo
wait_line ch.out "^opened" 10 || fail "holddump of the control: $(cat ch.out)"
echo go >&7
exec 7>&-
wait_line ch.out '^read ' 30 || fail "holddump of the control did not read"
grep -q '^read ok [1-9]' ch.out || fail "control (process alive): $(cat ch.out)"
kill9 $cpid
pass "a live process's held dump reads whole"

# held PROG NAME: PROG (128 MiB, prints ready) stopped, its dump held open
# by holddump, killed and reaped: the memory comes back at the kill.
held() {
	T=dump_pins-$2
	$1 128 > h$2.out 2>&1 &
	pid=$!
	track $pid
	wait_line h$2.out '^ready' 120 || fail "$1 128 did not start: $(cat h$2.out)"
	stop_task $pid
	rm -f go
	mkfifo go
	holddump $pid < go > hold.out 2>&1 &
	holder=$!
	track $holder
	exec 8> go
	wait_line hold.out "^opened" 30 || fail "holddump: $(cat hold.out)"
	sync
	before=$(given_kb $2)
	kill9 $pid
	# The unpinning runs from a workqueue once the last thread has
	# exited.  What the kernel counts free after a process dies varies
	# (6.1 keeps tens of MiB on its per-CPU lists): the test wants most
	# of the 128 MiB back at the kill, and nothing more of note when the
	# holder closes the dump.  (Before the fix: nothing at the kill, all
	# of it at the close.)
	n=0
	seen=""
	while [ $n -lt 50 ]; do
		after=$(given_kb $2)
		[ $((n % 10)) = 0 ] && seen="$seen +$(( (after - before) / 1024 ))"
		[ $((after - before)) -gt 65536 ] && break
		usleep 100000
		n=$((n + 1))
	done
	# The unpinning may still be under way (a loaded host frees 128 MiB
	# slowly under TCG): wait until what comes back stops growing.
	n=0
	prev=$(given_kb $2)
	while [ $n -lt 50 ]; do
		usleep 300000
		after=$(given_kb $2)
		[ $((after - prev)) -lt 2048 ] && break
		prev=$after
		n=$((n + 1))
	done
	echo go >&8
	exec 8>&-
	wait_line hold.out '^read ' 10 || fail "holddump did not read"
	wait_exit $holder 10
	usleep 500000
	closed=$(given_kb $2)
	info "$([ $2 = shared ] && echo "Shmem (negated)" || echo MemFree) with the dump held: $before kB; after the kill +$(( (after - before) / 1024 )) MiB (each second:$seen); after the close +$(( (closed - after) / 1024 )) MiB more"
	[ $((after - before)) -gt 65536 ] ||
		fail "only $(( (after - before) / 1024 )) MiB came back of the dead process's 128 MiB while its dump is held open"
	[ $((closed - after)) -lt 16384 ] ||
		fail "closing the dump of the dead process gave back $(( (closed - after) / 1024 )) MiB more: it held them"
	grep -q '^read ESRCH$' hold.out || fail "read of the held dump of a dead process: $(tail -n 1 hold.out), want ESRCH"
	pass "+$(( (after - before) / 1024 )) MiB back at the kill, +$(( (closed - after) / 1024 )) at the close; the held dump reads ESRCH"
}

# (b) private memory (the pinned pages); (c) shared anonymous memory (the
# pinned pages and the shmem object's file the dump holds)
( held heapbench private )
( held shmfill shared )
