#!/bin/sh
# Private mappings of shared memory files (test/progs/memprivate.c):
# shm_private: memfd "priv buf" (its fd kept, also mapped shared) and
# /dev/shm/imgcr-priv, each mapped MAP_PRIVATE with its first page written
# (copied on write), through imgcr dump and imgcr restore --detach.  Outside:
# the mappings' lines of /proc/PID/maps (range, perms, offset, name) are
# the same, and the memfd's private mapping is of the inode of the fd (one
# memfd, not a copy).  Inside: the written page and the file's pages are
# back, the private mapping has one anonymous page (smaps), the file
# does not hold the private write; a write to the file shows in the
# private mapping's unwritten page, a private write reaches neither the
# file nor the shared mapping.  Before: refused at dump.
# shm_private-nofd: the memfd's fd closed, mapped only privately: its
# contents are nowhere but in the object; refused at dump, naming the pid,
# the address and the memfd, and the task goes on.
# shm_private-huge: MAP_HUGETLB private and shared anonymous mappings (2
# huge pages reserved here): refused at dump, naming pid, address, kind
# and page size; the task goes on.
# timeout: 200
. /imgcr/guest/lib.sh
require_modules

# the maps lines of PID's memfd and /dev/shm mappings, without dev and inode
lines() {
	awk '/memfd:priv buf|imgcr-priv/ { $4 = ""; $5 = ""; print }' /proc/$1/maps
}

main() {
	memprivate > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate did not start: $(cat out mp.err | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) .*/\1/p' out)
	lines $pid > before.maps
	[ "$(wc -l < before.maps)" = 3 ] || fail "before: $(tr '\n' '|' < before.maps)"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	imgcr restore -D d --detach > restore.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	wait_tasks_restored $pid
	lines $pid > after.maps
	cmp -s before.maps after.maps ||
		fail "maps after: $(tr '\n' '|' < after.maps) before: $(tr '\n' '|' < before.maps)"
	ino=$(stat -L -c %i /proc/$pid/fd/$fd)
	m=$(awk '/memfd:priv buf/ { print $2 " " $5 }' /proc/$pid/maps | sort | tr '\n' ' ')
	[ "$m" = "rw-p $ino rw-s $ino " ] || fail "memfd mappings '$m', fd inode $ino"
	touch restored
	wait_gone $pid 20 || fail "restored task did not exit"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "$(grep -c '^ok' out) checks ok; $(wc -l < after.maps) mappings the same"
}

nofd() {
	mkdir nofd && cd nofd || fail "mkdir nofd"
	memprivate nofd > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate did not start: $(cat out mp.err | tr '\n' '|')"
	addr=$(sed -n 's/^fd [0-9]* memfd 0x\([0-9a-f]*\) .*/\1/p' out)
	imgcr dump -t $pid -D d 2> dump.err && fail "the dump of a memfd mapped only privately succeeded"
	grep -q "pid $pid.*private mapping at 0x$addr of memfd:priv buf, of which it holds no fd" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	case "$(state $pid)" in
	t | T) fail "task $pid left stopped" ;;
	"") fail "task $pid died" ;;
	esac
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

huge() {
	mkdir huge && cd huge || fail "mkdir huge"
	old=$(cat /proc/sys/vm/nr_hugepages)
	echo 2 > /proc/sys/vm/nr_hugepages
	memprivate huge > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate huge did not start (nr_hugepages $(cat /proc/sys/vm/nr_hugepages)): $(cat out mp.err | tr '\n' '|')"
	set -- $(sed -n 's/^private 0x\([0-9a-f]*\) shared 0x\([0-9a-f]*\)$/\1 \2/p' out)
	imgcr dump -t $pid -D d 2> dump.err && fail "the dump of huge page mappings succeeded"
	grep -Eq "pid $pid.*hugetlb mapping at 0x($1 \(private|$2 \(shared), anon_hugepage, 2048 kB pages\)" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	case "$(state $pid)" in
	t | T) fail "task $pid left stopped" ;;
	"") fail "task $pid died" ;;
	esac
	kill $pid
	wait_gone $pid 10
	echo $old > /proc/sys/vm/nr_hugepages
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

subtest shm_private main
subtest shm_private-nofd nofd
subtest shm_private-huge huge
