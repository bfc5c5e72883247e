#!/bin/sh
# A memfd both open as an fd and mapped shared (test/progs/memshare.c):
# memfd_mapped: a parent holds memfd "shared buf" (3 pages, mode 0640,
# seals F_SEAL_SHRINK | F_SEAL_GROW) as an fd and maps it read-write; its
# child has the fd and the mapping and maps it again read-only.  The dump
# goes through; from outside, before the dump and after the restore, the
# mappings of both tasks are of the inode the fd names (one object), with
# the same name.  The restored programs check the contents, the name, mode,
# seals and size, that writes through the fd show in the mappings and
# writes through a mapping through the fd and in the other task's mapping.
# memfd_mapped-rdonly: the same, the parent's mapping made read-only
# (mprotect) and its fd opened again read-only in its place before the
# fork: the mapping may still become writable (VM_MAYWRITE), and the
# restore gives the loader the memfd itself (imgcr restore's read-write
# one), the fds staying read-only; the program checks that too.
# memfd_mapped-rdonly-lock: rdonly, the parent also holding a POSIX read
# lock on the memfd through its read-only fd: refused at dump (the exec
# would close the loader's read-write fd and drop the lock), naming pid,
# fd, memfd and lock; both tasks left running, the lock still held.
# memfd_mapped-fwseal: the same with F_SEAL_FUTURE_WRITE added after the
# mapping: refused at dump (the seals are back before the exec, and the
# kernel refuses a new shared mapping under that seal), naming pid, fd,
# memfd and seal; both tasks left running.
# memfd_mapped-outside: the memfd also held by a process outside the tree
# (sleep, fd 7): refused at dump naming pid, fd, memfd, the other process
# and why; both tasks left running.
# memfd_mapped-mapout: a memfd mapped shared by a parent and its child, no
# fd of it left anywhere; the child dumped alone: refused at dump (the
# module counts the parent's mapping, outside the tree), naming the child,
# the memfd and where it maps it; both left running.  -anonout: the same
# with shared anonymous memory ("dev/zero").  -heldout: the child holds the
# memfd as fd 3 and does not map it, the parent maps it and holds no fd:
# refused naming the child's fd (the module counts the mappings of the
# memfd the fd names).  -clonevm: a child made with clone(CLONE_VM), not a
# thread, shares its parent's memory: the dump of the parent (and child)
# refused by the module naming the other pid; both left running.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# one NAME INODE line per memfd mapping of PID, and "fd INODE" of its fd FD
objs() {
	echo "fd $(stat -L -c %i /proc/$1/fd/$2)"
	awk '/\/memfd:shared buf/ { print $3 " " $5 }' /proc/$1/maps | sort
}

# main [rdonly]: memshare [rdonly], in its own directory if rdonly
main() {
	if [ -n "${1:-}" ]; then
		mkdir $1 && cd $1 || fail "mkdir $1"
	fi
	memshare ${1:-} > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	set -- $(sed -n 's/^fd \([0-9]*\) map \(0x[0-9a-f]*\) child \([0-9]*\)$/\1 \2 \3/p' out)
	fd=$1 kid=$3
	track $kid
	for p in $pid $kid; do
		o=$(objs $p $fd)
		ino=$(echo "$o" | sed -n 's/^fd //p')
		[ "$(echo "$o" | grep -vc '^fd')" -ge 1 ] || fail "before: no memfd mapping in $p: $(echo "$o" | tr '\n' '|')"
		echo "$o" | grep -v '^fd' | grep -qv " $ino\$" && fail "before: $p maps another inode than its fd's: $(echo "$o" | tr '\n' '|')"
	done
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $kid
	ino=$(stat -L -c %i /proc/$pid/fd/$fd)
	for p in $pid $kid; do
		o=$(objs $p $fd)
		[ "$(echo "$o" | sed -n 's/^fd //p')" = "$ino" ] || fail "after: the fds of $pid and $p are two memfds: $(echo "$o" | tr '\n' '|')"
		[ "$(echo "$o" | grep -vc '^fd')" -ge 1 ] || fail "after: no memfd mapping in $p: $(echo "$o" | tr '\n' '|')"
		echo "$o" | grep -v '^fd' | grep -qv " $ino\$" &&
			fail "after: $p maps another memfd than its fd's (inode $ino): $(echo "$o" | tr '\n' '|')"
	done
	info "one memfd, inode $ino: $(objs $kid $fd | tr '\n' '|')"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "fd and mappings one memfd; $(grep -c '^ok' out) checks ok"
}

fwseal() {
	# its own directory: main's "restored" file would let memshare run on
	mkdir fwseal && cd fwseal || fail "mkdir fwseal"
	memshare fwseal > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	kid=$(sed -n 's/^fd [0-9]* map 0x[0-9a-f]* child \([0-9]*\)$/\1/p' out)
	track $kid
	dump_refused $pid "of a write-sealed memfd mapped shared" \
		"pid $pid fd [0-9]*: memfd /memfd:shared buf: sealed against writes (seals 0x1[0-9a-f]) and also mapped shared" $kid
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

rdlock() {
	mkdir rdlock && cd rdlock || fail "mkdir rdlock"
	memshare rdlock > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	set -- $(sed -n 's/^fd \([0-9]*\) map \(0x[0-9a-f]*\) child \([0-9]*\)$/\1 \2 \3/p' out)
	fd=$1 kid=$3
	track $kid
	ino=$(stat -L -c %i /proc/$pid/fd/$fd)
	grep -q "POSIX  *ADVISORY  *READ  *$pid [0-9a-f:]*:$ino 0 4095\$" /proc/locks ||
		fail "no POSIX lock of $pid on inode $ino: $(grep POSIX /proc/locks | tr '\n' '|')"
	dump_refused $pid "of a POSIX lock on a memfd mapped writable but held read-only" \
		"pid $pid fd $fd: memfd /memfd:shared buf: POSIX read lock (bytes 0-4095) held by pid $pid, which maps the memfd shared at $2 so that the mapping may become writable" $kid
	grep -q "POSIX  *ADVISORY  *READ  *$pid [0-9a-f:]*:$ino 0 4095\$" /proc/locks ||
		fail "the lock is gone after the refused dump"
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

outside() {
	mkdir outside && cd outside || fail "mkdir outside"
	memshare > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	set -- $(sed -n 's/^fd \([0-9]*\) map \(0x[0-9a-f]*\) child \([0-9]*\)$/\1 \2 \3/p' out)
	fd=$1 kid=$3
	track $kid
	# a process outside the tree holding the memfd (opened again through /proc)
	sleep 600 7< /proc/$pid/fd/$fd &
	sl=$!
	track $sl
	dump_refused $pid "of a memfd held outside the tree" \
		"pid $pid fd $fd: /memfd:shared buf: also held (fd 7) by pid $sl (sleep), which is outside the tree" $kid
	kill $sl
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

# mapout memfd|anon: the child of memshare mapout/anonout dumped alone
mapout() {
	case $1 in
	memfd) mode=mapout obj="/memfd:shared buf" ;;
	anon) mode=anonout obj=/dev/zero ;;
	held) mode=heldout ;;
	esac
	mkdir $mode && cd $mode || fail "mkdir $mode"
	memshare $mode > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	set -- $1 $(sed -n 's/^map 0x\([0-9a-f]*\) child \([0-9]*\)$/\1 \2/p' out)
	at=$2 kid=$3
	track $kid
	if [ $mode = heldout ]; then
		re="pid $kid fd 3: /memfd:shared buf: mapped 1 time by processes outside the tree (no task of the tree maps it)"
	else
		re="pid $kid: $obj (mapped at 0x$at): the kernel counts 2 mappings of it, the tree has 1: a process outside the tree"
	fi
	dump_refused $kid "of an object mapped outside the tree" "$re" $pid
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

# clonevm: memshare clonevm's parent (and child, sharing its memory) dumped
clonevm() {
	mkdir clonevm && cd clonevm || fail "mkdir clonevm"
	memshare clonevm > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memshare did not start: $(cat out ms.err | tr '\n' '|')"
	kid=$(sed -n 's/^child \([0-9]*\)$/\1/p' out)
	track $kid
	imgcr dump -t $pid -D d 2> dump.err && fail "the dump of processes sharing one mm succeeded"
	grep -Eq "pid ($pid|$kid): .*shares its memory with another process \(pid ($pid|$kid): clone with CLONE_VM, not a thread\)" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	running_on $pid $kid
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

subtest memfd_mapped main
subtest memfd_mapped-rdonly "main rdonly"
subtest memfd_mapped-rdonly-lock rdlock
subtest memfd_mapped-fwseal fwseal
subtest memfd_mapped-outside outside
subtest memfd_mapped-mapout "mapout memfd"
subtest memfd_mapped-anonout "mapout anon"
subtest memfd_mapped-heldout "mapout held"
subtest memfd_mapped-clonevm clonevm
