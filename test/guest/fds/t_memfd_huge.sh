#!/bin/sh
# A memfd of 2 MiB huge pages (MFD_HUGETLB) held as an fd and mapped shared
# (test/progs/hugememfd.c; 4 huge pages reserved here: vm.nr_hugepages).
# memfd_huge: memfd "huge buf", 4 MiB, mode 0640, seals F_SEAL_SHRINK |
# F_SEAL_GROW, mapped read-write whole and its second page read-only, marked
# in three places.  Outside, before the dump and after the restore: its
# mappings' lines (range, perms, offset, smaps KernelPageSize 2048 kB) are
# the same, and of the inode the fd names (one object).  Inside: marks
# and zeros, name, mode, seals, size, hugetlbfs of 2048 kB pages; a write
# through the mapping shows in the other mapping, through the fd (pread)
# and in a new mapping of the fd.  Before: refused at dump.
# memfd_huge-fork: the same, with a child sharing the fd and the mappings
# (one memfd for both after the restore; the child sees the parent's write).
# memfd_huge-rdonly: the same, its fd opened again read-only in its place
# once mapped (the mappings may still be written: VM_MAYWRITE): restored,
# the loader given imgcr restore's read-write memfd, the fd read-only; the
# read-only mapping can be made writable (mprotect) and writes through it
# show in the other.
# memfd_huge-nopages: dumped, then no huge page free: the restore fails,
# naming pid, fd, memfd and the pages it needs (checked before any task
# runs), and leaves no task; with the pages back the same image restores.
# Then the image exec'd by another caller (tryexec) giving the loader a
# memfd of that name, size and seals it did not fill, no page free: refused
# before the point of no return (the caller goes on), its reason in the
# kernel log.  With pages free, the same refused by a later check
# (--imgcr-ids alone) leaves no page reserved on the caller's memfd; and
# from a vfork child (the loader's reservation mapping would be in the
# parent's memory) refused, its reason in the kernel log.
# memfd_huge-private: the same, the memfd also mapped MAP_PRIVATE whole (a
# third mapping, outside: made read-only, the same after): the huge page
# written through it (a copy-on-write copy with 4 KiB of zeros over the
# memfd's data, and a write through the memfd after the copy) comes back
# as it was, the other still the memfd's (a write through the memfd shows
# in it); made writable again its writes stay private.  Its image with that
# page's PT_LOAD cut to half a huge page (corrupt phalf): refused by the
# loader (invalid memory segment), the caller going on; the image with
# one huge page free (the private mapping reserves 2): refused by the
# loader before the point of no return, naming the pages.
# memfd_huge-hugefile: a file of a hugetlbfs mount mapped shared the same
# way: refused at dump, naming pid, address, kind and reason.
# memfd_huge-privzero, -privread: a private mapping of another memfd over
# its huge page present but all zeros (fallocate()d; read through a shared
# mapping, no copy in the private one): refused at dump, naming pid,
# address and offset (a restored memfd would have a hole there).
# memfd_huge-big, -odd: also a huge page memfd of 1 TiB (no page: more
# than the pool could hold; its dump would read it all) or of 2 MiB + 4 KiB
# (not whole pages): refused at dump, naming pid, fd and size; the task goes on.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

OLDHP=$(cat /proc/sys/vm/nr_hugepages)

# "START-END PERMS OFFSET INODE KernelPageSize" of PID's "huge buf" mappings
hugelines() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { m = ($0 ~ /\/memfd:huge buf/) ? $1 " " $2 " " $3 " " $5 : "" }
	     /^KernelPageSize:/ && m != "" { print m " " $2 }' /proc/$1/smaps
}

# start [ARG]: hugememfd in the background; sets pid, fd, kid (or empty)
start() {
	echo 4 > /proc/sys/vm/nr_hugepages
	hugememfd ${1:-} > out 2> hm.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 ||
		fail "hugememfd did not start (nr_hugepages $(cat /proc/sys/vm/nr_hugepages)): $(cat out hm.err | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) .*/\1/p' out)
	kid=$(sed -n 's/^fd .* child \([0-9]*\)$/\1/p' out)
	[ -n "$kid" ] && track $kid
}

# outside PID WHEN: its huge buf mappings ($nmaps, 2048 kB pages, of its fd's inode)
outside() {
	ino=$(stat -L -c %i /proc/$1/fd/$fd)
	hugelines $1 > $2.$1
	[ "$(grep -c ' 2048$' $2.$1)" = $nmaps ] || fail "$2: $1's huge page mappings: $(tr '\n' '|' < $2.$1)"
	awk -v i=$ino '$4 != i { exit 1 }' $2.$1 ||
		fail "$2: $1 maps another inode than its fd's ($ino): $(tr '\n' '|' < $2.$1)"
}

# give_refused OUT WHAT RE TRYEXEC-ARG...: tryexec, given hugememfd's memfd
# as fd 9 (the image's memfds 0-9 all mapped onto it: $SHMFD), fails its
# execve, the reason RE (grep) in the kernel log; OUT keeps its output
SHMFD=--imgcr-shmfd=0:9,1:9,2:9,3:9,4:9,5:9,6:9,7:9,8:9,9:9
give_refused() {
	_go=$1 _gw=$2 _gre=$3
	shift 3
	dmesg_mark
	hugememfd give tryexec "$@" > $_go 2>&1
	grep -q '^tryexec: execve failed' $_go || fail "exec $_gw: $(tr '\n' '|' < $_go)"
	dmesg_since | grep -q -e "$_gre" ||
		fail "exec $_gw: no reason in the kernel log: $(dmesg_since | tail -n 3 | tr '\n' '|')"
}

run() {
	mkdir $1 && cd $1 || fail "mkdir $1"
	nmaps=2
	[ "$1" = private ] && nmaps=3
	start ${2:-}
	for p in $pid $kid; do outside $p before; done
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
	if [ "$1" = nopages ]; then
		echo 0 > /proc/sys/vm/nr_hugepages
		imgcr restore -D d > restore.out 2> restore.err && fail "the restore without huge pages succeeded"
		grep -q "the tree needs 2 huge page(s) of 2048 kB (0 for MAP_HUGETLB and private MFD_HUGETLB mappings, 2 for MFD_HUGETLB memfds: pid $pid fd $fd: /memfd:huge buf (MFD_HUGETLB) needs 2 of them) and 0 are free" restore.err ||
			fail "message: $(tr '\n' '|' < restore.err)"
		[ -d /proc/$pid ] && fail "a task $pid is left after the failed restore"
		info "$(grep -m1 'huge page' restore.err | cut -c1-200)"
		# another caller gives the loader the memfd unfilled, no page
		# free: refused before the point of no return, the caller goes on
		chmod +x d/core-$pid.img
		give_refused give.out "with an unreserved memfd" 'huge page memfd memfd:huge buf (MFD_HUGETLB): cannot reserve the [12] huge page(s) of its mapping' \
			d/core-$pid.img $SHMFD
		[ -d /proc/$pid ] && fail "a task $pid is left after the refused exec"
		echo 4 > /proc/sys/vm/nr_hugepages
		# pages free, refused by a later check (--imgcr-ids without
		# --imgcr-creds): no page left reserved on the caller's memfd
		give_refused give2.out "with --imgcr-ids alone" '--imgcr-ids is only taken with --imgcr-creds' \
			--resv d/core-$pid.img $SHMFD --imgcr-ids
		r=$(sed -n 's/^tryexec: resv_hugepages //p' give2.out)
		[ -n "$r" ] && [ "${r% *}" = "${r#* }" ] ||
			fail "a refused exec left huge pages reserved on the caller's memfd (resv_hugepages before and after: $r)"
		# a vfork child: the reservation mapping would be in its
		# parent's memory too: refused before the point of no return
		give_refused give3.out "from a vfork child" "huge page memfd memfd:huge buf (MFD_HUGETLB) given: its huge pages are reserved through a mapping in the caller's memory, which another process shares (vfork or CLONE_VM)" \
			--vfork d/core-$pid.img $SHMFD
		[ -d /proc/$pid ] && fail "a task $pid is left after the refused exec"
	fi
	if [ "$1" = private ]; then
		# the copy's PT_LOAD cut to half a huge page: the loader refuses
		# it before the point of no return, the caller goes on
		priv=$(sed -n 's/^fd .* private \(0x[0-9a-f]*\)$/\1/p' out)
		corrupt d/core-$pid.img c.img phalf:$priv 2> c.err || fail "corrupt phalf:$priv: $(cat c.err)"
		chmod +x c.img
		give_refused give.out "with half a huge page" "invalid memory segment (program header [0-9]*, $priv+0x100000 " \
			c.img $SHMFD
		# one huge page free, the private mapping reserves 2 at mmap()
		# after the point of no return: refused before it
		echo 1 > /proc/sys/vm/nr_hugepages
		chmod +x d/core-$pid.img
		give_refused give2.out "with 1 huge page free" "private MFD_HUGETLB memfd and MAP_HUGETLB mappings need 2 huge page(s) of 2048 kB, and 1 are free and not reserved" \
			d/core-$pid.img $SHMFD
		echo 4 > /proc/sys/vm/nr_hugepages
	fi
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $kid
	for p in $pid $kid; do
		outside $p after
		# the same but the inode (a new memfd; outside checked it is the fd's)
		[ "$(cut -d' ' -f1-3,5 before.$p)" = "$(cut -d' ' -f1-3,5 after.$p)" ] ||
			fail "$p's mappings after: $(tr '\n' '|' < after.$p) before: $(tr '\n' '|' < before.$p)"
	done
	[ -z "$kid" ] || [ "$(stat -L -c %i /proc/$kid/fd/$fd)" = "$(stat -L -c %i /proc/$pid/fd/$fd)" ] ||
		fail "after: the fds of $pid and $kid are two memfds"
	info "$(tr '\n' '|' < after.$pid)"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "one huge page memfd; $(grep -c '^ok' out) checks ok"
}

# huge_refused WHAT PATTERN: the dump of $pid (WHAT) fails with PATTERN
# (grep) in its message, and leaves the task running; it is then let end
huge_refused() {
	dump_refused $pid "$1" "$2"
	touch restored
	wait_gone $pid 10
}

hugefile() {
	mkdir hugefile && cd hugefile || fail "mkdir hugefile"
	mkdir mnt && mount -t hugetlbfs -o pagesize=2M none mnt || fail "cannot mount hugetlbfs"
	start "file $PWD/mnt/f"
	# the lowest mapping, the first refused: the read-only one, made last
	addr=$(sed -n 's/^fd [0-9]* map 0x[0-9a-f]* ro 0x\([0-9a-f]*\) .*/\1/p' out)
	huge_refused "of a mapped file of a hugetlbfs mount" \
		"pid $pid.*hugetlb mapping at 0x$addr (shared, a hugetlbfs file, 2048 kB pages): only MAP_HUGETLB memory and MFD_HUGETLB memfds are supported"
	umount mnt
	pass "$(head -n 1 dump.err | cut -c1-200)"
}

# refused KIND WHAT: hugememfd KIND's extra memfd refused at dump (the
# message WHAT after "of huge pages (MFD_HUGETLB), "), the task running on
refused() {
	mkdir $1 && cd $1 || fail "mkdir $1"
	start $1
	huge_refused "with the memfd '$1'" \
		"pid $pid fd [0-9]*: memfd /memfd:$1 (deleted): of huge pages (MFD_HUGETLB), $2"
	pass "$(head -n 1 dump.err | cut -c1-200)"
}
# privzero/privread: a private mapping showing a present all-zero huge page
# of the memfd (fallocate()d, or read through a shared mapping), which a
# restored memfd (zeros left out) would not have: the mapping would stop
# following the memfd there.  Refused at dump, naming pid, address, offset.
privzero() {
	mkdir $1 && cd $1 || fail "mkdir $1"
	start $1
	addr=$(sed -n "s/^$1 0x\([0-9a-f]*\)$/\1/p" out)
	[ -n "$addr" ] || fail "no address: $(tr '\n' '|' < out)"
	huge_refused "with the memfd '$1' mapped privately" \
		"pid $pid.*private mapping at 0x$addr of memfd:$1 (MFD_HUGETLB) shows at 0x[0-9a-f]* a huge page of the memfd (offset 0x200000) that is present but all zeros"
	pass "$(head -n 1 dump.err | cut -c1-200)"
}
big() { refused big "its size 1099511627776 needs 524288 pages of 2048 kB, more than this system's pool can hold"; }
odd() { refused odd "its size 2101248 is not whole pages of 2048 kB"; }

subtest memfd_huge "run main"
subtest memfd_huge-fork "run fork fork"
subtest memfd_huge-rdonly "run rdonly rdonly"
subtest memfd_huge-nopages "run nopages"
subtest memfd_huge-private "run private private"
subtest memfd_huge-hugefile hugefile
subtest memfd_huge-privzero "privzero privzero"
subtest memfd_huge-privread "privzero privread"
subtest memfd_huge-big big
subtest memfd_huge-odd odd
echo $OLDHP > /proc/sys/vm/nr_hugepages
