#!/bin/sh
# bpf maps across dump + restore (test/progs/bpfmap.c, raw bpf()):
# bpfmap: an array (16 entries), a hash with 100 elements and a second,
# read-only fd of it, a frozen array, a hash shared by the parent and its
# child (fork), a per-CPU array, an LRU hash, a queue (5 elements, its
# head not at the start of its ring), a stack (3) and a second, read-only
# fd of it, an LPM trie (4 prefixes), a frozen empty queue, a bloom filter
# of 2-byte values with a zero seed (3 pushed), an empty one of 1-byte
# values.  The dump writes one "bpfmap" record per map (12) and one
# "file kind=bpfmap" per description (14); from
# outside, every fd's fdinfo (map_type, key_size, value_size, max_entries,
# map_flags, memlock, frozen, flags) is the same before the dump and after
# the restore but map_id (a new map), the two fds of hash name one map and
# so do the parent's and the child's fd of "shared" (bpftool too if the
# guest has it); the restored program checks every element, fdinfo, that
# the frozen map and the read-only fd cannot be written (EPERM), the
# queue's and the stack's order, pushes and pops after it, the LPM trie's
# longest prefix matches, the bloom filter's members (every value tested)
# against those before the dump, and that parent and child see each other's
# updates (one map).
# bpfmap_ringbuf, bpfmap_mmap: a ring buffer map, and an mmapable array
# the task maps, are refused at dump naming pid, fd, map id and type; the
# task continues.  bpfmap_prog, bpfmap_outside: a child holding a map that a
# bpf program of its parent uses, or that its parent holds too (outside
# the dumped tree), likewise.  bpfmap_bloom: a bloom filter is refused (its
# bits cannot be read, its 4-byte values not all tested) after the dump read a queue of the same task (by
# popping and pushing back): the task then pops the queue, which still
# holds 1, 2, 3 in order.  bpfmap_qfrozen: a frozen queue with an element
# (it cannot be popped, only peeked).  bpfmap_bseed: a bloom filter with
# a random seed and members.  bpfmap_qprog: a queue a bpf
# program uses, refused before it is popped.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# the fdinfo of fd $2 of $1, but its map_id (and pos)
info() { grep -v '^map_id\|^pos' /proc/$1/fdinfo/$2 | tr '\n' ' '; }
mapid() { sed -n 's/^map_id:[[:space:]]*//p' /proc/$1/fdinfo/$2; }

main() {
	bpfmap > out 2> bm.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "bpfmap did not start: $(cat out bm.err | tr '\n' '|')"
	child=$(sed -n 's/^child //p' out)
	track $child
	names="arr hash ro frozen shared pcpu lru queue stack sro lpm fq bloom bz"
	before=""
	for n in $names; do
		eval fd_$n=$(sed -n "s/^fd $n //p" out)
		eval before=\"\$before $n: \$\(info $pid \$fd_$n\)\"
	done
	before="$before child: $(info $child $fd_shared)"
	old_hash=$(mapid $pid $fd_hash)
	old_queue=$(mapid $pid $fd_queue)

	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	[ -s dump.err ] && fail "the dump said something: $(tr '\n' '|' < dump.err)"
	[ "$(grep -c '^bpfmap ' d/tree)" = 12 ] || fail "want 12 bpfmap records: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	[ "$(grep -c '^file .*kind=bpfmap ' d/tree)" = 14 ] || fail "want 14 bpfmap files: $(grep 'kind=bpfmap' d/tree | tr '\n' '|')"
	grep -q "^bpfmap id=$old_queue type=22 key=0 value=4 max=8 flags=0x0 name=queue frozen=0 count=5\$" d/tree ||
		fail "queue's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	[ "$(od -An -tu4 d/bpfmap-$old_queue.data | tr -s ' \n' ' ')" = " 1 2 3 4 5 " ] ||
		fail "queue's data: $(od -An -tu4 d/bpfmap-$old_queue.data)"
	grep -q '^bpfmap .*type=23 key=0 value=8 max=4 flags=0x0 name=stack frozen=0 count=3$' d/tree ||
		fail "stack's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q '^bpfmap .*type=11 key=8 value=4 max=16 flags=0x1 name=lpm frozen=0 count=4$' d/tree ||
		fail "lpm's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q '^bpfmap .*type=22 .* name=fq frozen=1 count=0$' d/tree || fail "fq's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	bm=$(sed -n 's/^bloom members //p' out)
	grep -q "^bpfmap .*type=30 key=0 value=2 max=16 flags=0x40 name=bloom frozen=0 count=$bm\$" d/tree ||
		fail "bloom's record ($bm members): $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q '^bpfmap .*type=30 key=0 value=1 max=8 flags=0x0 name=bz frozen=0 count=0$' d/tree ||
		fail "bz's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q "^bpfmap id=$old_hash type=1 key=8 value=16 max=128 flags=0x0 name=hash frozen=0 count=100\$" d/tree ||
		fail "hash's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q '^bpfmap .* name=frozen frozen=1 count=4$' d/tree || fail "frozen's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	grep -q '^bpfmap .*type=6 .* name=pcpu .* ncpus=[0-9]*$' d/tree || fail "pcpu's record: $(grep '^bpfmap' d/tree | tr '\n' '|')"
	[ "$(grep -c "kind=bpfmap .*map=$old_hash\$" d/tree)" = 2 ] || fail "hash's two files: $(grep kind=bpfmap d/tree | tr '\n' '|')"
	[ -s d/bpfmap-$old_hash.data ] && [ "$(wc -c < d/bpfmap-$old_hash.data)" = 2400 ] ||
		fail "bpfmap-$old_hash.data: $(ls -l d/bpfmap-*)"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "bpf map $old_hash hash 'hash' (rw) key 8 value 16 max 128 flags 0x0: 100 elements" show.txt ||
		fail "imgcr show: $(grep 'bpf map' show.txt | tr '\n' '|')"

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $child
	after=""
	for n in $names; do
		eval after=\"\$after $n: \$\(info $pid \$fd_$n\)\"
	done
	after="$after child: $(info $child $fd_shared)"
	[ "$before" = "$after" ] || fail "fdinfo before: $before after: $after"
	[ "$(mapid $pid $fd_hash)" = "$(mapid $pid $fd_ro)" ] || fail "hash and ro are two maps after the restore"
	[ "$(mapid $pid $fd_shared)" = "$(mapid $child $fd_shared)" ] || fail "the parent's and the child's shared are two maps"
	ids=""
	for n in $names; do ids="$ids $(mapid $pid $(eval echo \$fd_$n))"; done
	[ "$(mapid $pid $fd_stack)" = "$(mapid $pid $fd_sro)" ] || fail "stack and sro are two maps after the restore"
	[ "$(echo $ids | tr ' ' '\n' | sort -u | wc -l)" = 12 ] || fail "want 12 maps: ids$ids"
	bt=""
	if command -v bpftool > /dev/null; then
		bpftool map show id $(mapid $pid $fd_hash) | grep -q 'hash  name hash  flags 0x0' ||
			fail "bpftool: $(bpftool map show id $(mapid $pid $fd_hash) | tr '\n' '|')"
		bt="; bpftool agrees"
	fi
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^child ok' out || fail "no 'child ok': $(tail -n 3 out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "12 maps, 14 descriptions restored ($bm bloom members); $(grep -c '^ok' out) checks ok$bt"
}

# refused KIND REGEX
refused() {
	rm -f restored
	bpfmap $KIND > q.out 2>&1 &
	pid=$!
	track $pid
	wait_line q.out '^ready' 20 || fail "bpfmap $KIND did not start: $(cat q.out)"
	fd=$(sed -n 's/^fd //p' q.out)
	parent=$pid
	pid=$(sed -n 's/^pid //p' q.out)
	[ -n "$pid" ] && track $pid || pid=$parent
	id=$(mapid $pid $fd)
	imgcr dump -t $pid -D e 2> e.err && fail "dump of a $KIND map succeeded"
	grep -qE "pid $pid fd $fd: bpf map id $id $RE" e.err || fail "message (pid $pid fd $fd map id $id): $(cat e.err | tr '\n' '|')"
	[ -e e/tree ] && fail "a tree file was written"
	n=$(grep -c '^tick' q.out)
	usleep 500000
	case "$(state $pid)" in S | R) ;; *) fail "task is '$(state $pid)' after the refused dump" ;; esac
	[ "$(grep -c '^tick' q.out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	if [ "$KIND" = bloom ]; then
		touch restored
		wait_line q.out '^queue ok' 10 || fail "the queue after the refused dump: $(grep BAD q.out)"
	fi
	kill $pid $parent
	wait $parent 2>/dev/null
	pass "refused: $(head -n1 e.err | cut -c1-160)"
}

subtest bpfmap main
KIND=ringbuf RE='\(type ringbuf\): its values are kernel objects .*: not supported'
subtest bpfmap_ringbuf refused
KIND=mmap RE="\\(type array, name 'mm', BPF_F_MMAPABLE\\): pid [0-9]+ maps a bpf map \\([0-9a-f]+-[0-9a-f]+\\): the mapping is not restored"
subtest bpfmap_mmap refused
KIND=prog RE="\\(type hash, name 'used'\\) is used by bpf program id [0-9]+ \\(type 1, name ''\\): programs are not restored"
subtest bpfmap_prog refused
KIND=outside RE="\\(type hash, name 'used'\\) is also held by pid [0-9]+ fd [0-9]+, outside the tree: a restored map would be a copy"
subtest bpfmap_outside refused
KIND=bloom RE="\\(type bloom_filter, name 'bf'\\): a bloom filter of 4-byte values: its bit array cannot be read"
subtest bpfmap_bloom refused
KIND=qfrozen RE="\\(type queue, name 'qf'\\): frozen with elements in it: only its head can be read"
subtest bpfmap_qfrozen refused
KIND=bseed RE="\\(type bloom_filter, name 'bs'\\): a bloom filter with a random hash seed \\(no BPF_F_ZERO_SEED\\) and members \\([0-9]+ values test positive\\)"
subtest bpfmap_bseed refused
KIND=qprog RE="\\(type queue, name 'usedq'\\): used by bpf program id [0-9]+ \\(type 1, name ''\\): programs are not restored"
subtest bpfmap_qprog refused
