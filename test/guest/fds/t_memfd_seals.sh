#!/bin/sh
# Sealed memfds a task has only mapped shared, all their fds closed
# (test/progs/memseal.c): the module's dump records their seals, the loader
# sets them again on the new object after filling it, before mapping it.
# memfd_seals: "sealed" (F_SEAL_SHRINK|GROW|SEAL, mapped read-write),
# "fwsealed" (F_SEAL_FUTURE_WRITE, mapped read-only after it), "unsealed"
# (MFD_ALLOW_SEALING, no seal: F_SEAL_SEAL must not appear).  The restored
# program reopens each through /proc/self/map_files/ and checks F_GET_SEALS,
# that ftruncate, F_ADD_SEALS, mprotect(PROT_WRITE), a writable shared mmap
# and pwrite fail under the seals that forbid them, and the contents; from
# outside, /proc/PID/maps (same names, addresses, protections before and
# after) and the fdinfo of each reopened fd (the inode of its mapping).
# memfd_seals-wseal: F_SEAL_WRITE|SEAL, mapped read-only after it through a
# read-only file (no VM_SHARED, no VM_MAYWRITE, as 6.1 requires): mapped
# again through a read-only file of the new object (IMGCR_VMA_RDONLY_FILE).
# memfd_seals-fwfd: F_SEAL_FUTURE_WRITE|SHRINK, mapped read-only after it,
# the fd kept open (imgcr restore's memfd, --imgcr-shmfd): the same checks,
# and the fd and the mapping one memfd with those seals.
# memfd_seals-fwafter: F_SEAL_FUTURE_WRITE added after a read-write shared
# mapping: refused at dump naming pid, address, memfd and seals; the task
# left running.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# "ADDR PERMS INODE NAME" per memfd mapping of PID
maps() {
	awk '/\/memfd:/ { sub(/-.*/, "", $1); print $1 " " $2 " " $5 " " $6 }' /proc/$1/maps | sort
}

# restore_check MODE: memseal MODE across dump + restore, checked
restore_check() {
	memseal $1 > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memseal did not start: $(cat out ms.err | tr '\n' '|')"
	before=$(maps $pid | awk '{ print $1, $2, $4 }')
	[ -n "$before" ] || fail "no memfd mapping in $pid"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	after=$(maps $pid | awk '{ print $1, $2, $4 }')
	[ "$before" = "$after" ] || fail "maps before: $(echo "$before" | tr '\n' '|') after: $(echo "$after" | tr '\n' '|')"
	touch restored
	wait_line out '^checked' 60 || fail "memseal did not check: $(tail -n 3 out | tr '\n' '|')"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	n=0
	for r in $(sed -n 's/^reopened \([a-z]*\) \([0-9]*\)$/\1:\2/p' out); do
		name=${r%:*} fd=${r#*:}
		ino=$(maps $pid | awk -v n="/memfd:$name" '$4 == n { print $3; exit }')
		fino=$(sed -n 's/^ino:[[:space:]]*//p' /proc/$pid/fdinfo/$fd)
		[ -n "$ino" ] && [ "$fino" = "$ino" ] ||
			fail "$name: fdinfo of fd $fd: ino '$fino', its mapping's '$ino'"
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || fail "no reopened fd: $(tr '\n' '|' < out)"
	touch seen
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "$n memfds, maps and fdinfo as before; $(grep -c '^ok' out) checks ok"
}

# refused MODE PATTERN: the dump of memseal MODE refused with PATTERN
refused() {
	memseal $1 > out 2> ms.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "memseal did not start: $(cat out ms.err | tr '\n' '|')"
	dump_refused $pid "of memseal $1" "pid $pid.*$2"
	pass "$(grep -m 1 "$2" dump.err | cut -c1-200)"
}

main() { restore_check ""; }

wseal() {
	mkdir wseal && cd wseal || fail "mkdir wseal"
	restore_check wseal
}

fwfd() {
	mkdir fwfd && cd fwfd || fail "mkdir fwfd"
	restore_check fwfd
}

fwafter() {
	mkdir fwafter && cd fwafter || fail "mkdir fwafter"
	refused fwafter "shared mapping at 0x[0-9a-f]* of memfd:fwafter (seals 0x10): mapped writable before the write seal"
}

subtest memfd_seals main
subtest memfd_seals-wseal wseal
subtest memfd_seals-fwfd fwfd
subtest memfd_seals-fwafter fwafter
