#!/bin/sh
# Private mappings of shared memory files (test/progs/memprivate.c):
# shm_private: memfd "priv buf" (its fd kept, also mapped shared),
# /dev/shm/imgcr-priv and /dev/shm/imgcr-gone (unlinked, its fd kept),
# each mapped MAP_PRIVATE with its first page written
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
# shm_private-huge: MAP_HUGETLB private and shared (made read-only)
# anonymous mappings, 2 MiB each, marked in three 4 KiB pieces (4 huge
# pages reserved here), through imgcr dump and restore --detach.  Outside:
# range, perms, offset, name and KernelPageSize (2048 kB) the same
# (smaps).  Inside: the marks and zeros elsewhere, KernelPageSize 2048 kB,
# a child's write reaches the shared mapping, not the private one.
# Before: refused at dump ("device or hugetlb mapping").
# shm_private-hugefd: an MFD_HUGETLB memfd mapped shared, its fd closed:
# refused at dump, naming pid, address and memfd (only imgcr restore makes
# one again, from an fd: t_memfd_huge); the task goes on.
# shm_private-hugefdpriv: the same mapped private (its contents would be
# lost): refused at dump the same way.
# shm_private-hugefork: a shared MAP_HUGETLB mapping shared with a child
# (fork()): refused at dump (restored, the two would map two objects).
# shm_private-hugebig: 256 GiB of private MAP_HUGETLB|MAP_NORESERVE memory,
# one huge page written: dumped within 6 s (holes skipped a huge page at a
# time; in 4 KiB steps 64 GiB took 12 s under TCG, and 6.1 can soft-lock)
# and restored with its contents.
# shm_private-sparse: a 64 MiB memfd with one page written, mapped
# privately with that page copied on write: the dump does not fill its
# holes (the memfd's blocks after dump --leave-running, the image's data
# file, the restored memfd's blocks), contents restored.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules
# the guest's init mounts no /dev/shm
grep -q ' /dev/shm ' /proc/mounts || { mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm; } ||
	fail "cannot mount /dev/shm"

# the maps lines of PID's memfd and /dev/shm mappings, without dev and inode
lines() {
	awk '/memfd:priv buf|imgcr-priv|imgcr-gone/ { $4 = ""; $5 = ""; print }' /proc/$1/maps
}

main() {
	memprivate > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate did not start: $(cat out mp.err | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) .*/\1/p' out)
	lines $pid > before.maps
	[ "$(wc -l < before.maps)" = 4 ] || fail "before: $(tr '\n' '|' < before.maps)"
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
	dump_refused $pid "of a memfd mapped only privately" \
		"pid $pid.*private mapping at 0x$addr of memfd:priv buf, of which it holds no fd"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

# "START-END PERMS OFFSET NAME KernelPageSize" of PID's huge page mappings
hugelines() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { m = ($6 ~ /anon_hugepage|memfd:huge/) ? $1 " " $2 " " $3 " " $6 : "" }
	     /^KernelPageSize:/ && m != "" { print m " " $2 }' /proc/$1/smaps
}

huge() {
	mkdir huge && cd huge || fail "mkdir huge"
	old=$(cat /proc/sys/vm/nr_hugepages)
	# two for the task, two for its restore before the dump's are freed
	echo 4 > /proc/sys/vm/nr_hugepages
	memprivate huge > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate huge did not start (nr_hugepages $(cat /proc/sys/vm/nr_hugepages)): $(cat out mp.err | tr '\n' '|')"
	hugelines $pid > before.maps
	[ "$(grep -c ' 2048$' before.maps)" = 2 ] || fail "before: $(tr '\n' '|' < before.maps)"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	imgcr restore -D d --detach > restore.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	wait_tasks_restored $pid
	hugelines $pid > after.maps
	cmp -s before.maps after.maps ||
		fail "huge page mappings after: $(tr '\n' '|' < after.maps) before: $(tr '\n' '|' < before.maps)"
	touch restored
	wait_gone $pid 20 || fail "restored task did not exit"
	echo $old > /proc/sys/vm/nr_hugepages
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "$(grep -c '^ok' out) checks ok; $(tr '\n' '|' < after.maps)"
}

# hugefd [hugefdpriv]: the memfd mapped shared (private), its fd closed
hugefd() {
	kind=${1:-hugefd}
	mkdir $kind && cd $kind || fail "mkdir $kind"
	old=$(cat /proc/sys/vm/nr_hugepages)
	echo 2 > /proc/sys/vm/nr_hugepages
	memprivate $kind > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate $kind did not start: $(cat out mp.err | tr '\n' '|')"
	addr=$(sed -n 's/^shared 0x\([0-9a-f]*\)$/\1/p' out)
	how=shared
	[ $kind = hugefdpriv ] && how=private
	dump_refused $pid "of a MFD_HUGETLB memfd mapping" \
		"pid $pid.*$how hugetlb mapping at 0x$addr of memfd:huge (MFD_HUGETLB), of which it holds no fd open for reading"
	touch restored
	wait_gone $pid 10
	echo $old > /proc/sys/vm/nr_hugepages
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

hugefork() {
	mkdir hugefork && cd hugefork || fail "mkdir hugefork"
	old=$(cat /proc/sys/vm/nr_hugepages)
	echo 2 > /proc/sys/vm/nr_hugepages
	memprivate hugefork > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate hugefork did not start: $(cat out mp.err | tr '\n' '|')"
	set -- $(sed -n 's/^shared 0x\([0-9a-f]*\) child \([0-9]*\)$/\1 \2/p' out)
	track $2
	dump_refused $pid "of huge pages shared with a child" \
		"pid $pid.*hugetlb mapping at 0x$1 (shared, anon_hugepage, 2048 kB pages): shared with another process or open elsewhere: not supported" $2
	touch restored
	wait_gone $pid 10
	echo $old > /proc/sys/vm/nr_hugepages
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

hugebig() {
	mkdir hugebig && cd hugebig || fail "mkdir hugebig"
	old=$(cat /proc/sys/vm/nr_hugepages)
	echo 2 > /proc/sys/vm/nr_hugepages
	memprivate hugebig > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate hugebig did not start: $(cat out mp.err | tr '\n' '|')"
	t0=$(date +%s)
	timeout 60 imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	t=$(($(date +%s) - t0))
	[ $t -le 6 ] || fail "the dump of 256 GiB of mostly absent huge pages took $t s"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	imgcr restore -D d --detach > restore.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	wait_tasks_restored $pid
	touch restored
	wait_gone $pid 20 || fail "restored task did not exit"
	echo $old > /proc/sys/vm/nr_hugepages
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "dumped in $t s; $(grep -c '^ok' out) checks ok"
}

sparse() {
	mkdir sparse && cd sparse || fail "mkdir sparse"
	memprivate sparse > out 2> mp.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memprivate sparse did not start: $(cat out mp.err | tr '\n' '|')"
	set -- $(sed -n 's/^fd \([0-9]*\) blocks \([0-9]*\)$/\1 \2/p' out)
	# the dump leaves the task's memfd as it was
	imgcr dump --leave-running -t $pid -D d 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	b=$(stat -L -c %b /proc/$pid/fd/$1)
	[ "$b" = "$2" ] || fail "the dump filled the memfd's holes: $b blocks, $2 before"
	kill -9 $pid
	wait_gone $pid 10 || fail "task $pid survived SIGKILL"
	data=$(find d -name 'memfd-*.data')
	[ -n "$data" ] || fail "no memfd data in the image: $(find d | tr '\n' ' ')"
	kb=$(du -k $data | awk '{ s += $1 } END { print s + 0 }')
	[ "$kb" -le 64 ] || fail "the image's memfd data takes $kb kB (the dump filled the holes)"
	imgcr restore -D d --detach > restore.out 2> restore.err ||
		fail "restore: $(tr '\n' '|' < restore.err)"
	wait_tasks_restored $pid
	b=$(stat -L -c %b /proc/$pid/fd/$1)
	[ "$b" = "$2" ] || fail "the restored memfd has $b blocks, $2 before the dump"
	touch restored
	wait_gone $pid 20 || fail "restored task did not exit"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "memfd blocks $b as before, image data $kb kB; $(grep -c '^ok' out) checks ok"
}

subtest shm_private main
subtest shm_private-nofd nofd
subtest shm_private-huge huge
subtest shm_private-hugefd hugefd
subtest shm_private-hugefdpriv "hugefd hugefdpriv"
subtest shm_private-hugefork hugefork
subtest shm_private-hugebig hugebig
subtest shm_private-sparse sparse
