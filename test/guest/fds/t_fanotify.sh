#!/bin/sh
# fanotify groups across dump + restore (test/progs/fanwatch.c):
# fanotify: a group (FAN_CLOEXEC | FAN_NONBLOCK, events O_RDONLY |
# O_LARGEFILE) with an inode mark on m.dat (FAN_OPEN | FAN_MODIFY), a mount
# mark on a tmpfs mounted on mnt/ (FAN_CLOSE_WRITE) and an inode mark on
# mnt/quiet with only an ignore mask (FAN_CLOSE_WRITE, SURV_MODIFY).  The
# dump records a "file kind=fanotify" and three "fanmark" records; from
# outside, the fdinfo's fanotify lines (flags, event flags, each mark with
# its inode or mount, mask, ignore mask and flags) are the same before
# the dump and after the restore; the restored program checks that
# writing m.dat gives FAN_OPEN and FAN_MODIFY, writing mnt/x
# FAN_CLOSE_WRITE, writing mnt/quiet nothing.
# fanotify_queued: a group with an event queued and not read is refused at
# dump, naming pid and fd; the task continues.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

fan_lines() { grep '^fanotify' /proc/$1/fdinfo/$2 | sort; }

main() {
	mkdir -p mnt
	mount -t tmpfs fanmnt mnt || fail "cannot mount a tmpfs"
	fanwatch > out 2> fw.err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "fanwatch did not start: $(cat out fw.err | tr '\n' '|')"
	fd=$(sed -n 's/^fd //p' out)
	before=$(fan_lines $pid $fd)
	[ "$(echo "$before" | wc -l)" = 4 ] || fail "fdinfo before the dump: $(echo "$before" | tr '\n' '|')"

	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	[ -s dump.err ] && fail "the dump said something: $(tr '\n' '|' < dump.err)"
	grep -q "^file .*kind=fanotify .*init=0x3 event=0x8000\$" d/tree || fail "no fanotify file record: $(grep kind=fanotify d/tree)"
	[ "$(grep -c '^fanmark ' d/tree)" = 3 ] || fail "want 3 fanmark records: $(grep '^fanmark' d/tree | tr '\n' '|')"
	grep -q "^fanmark .*type=inode mask=0x22 ignore=0x0 flags=0x0 path=$PWD/m.dat\$" d/tree &&
		grep -q "^fanmark .*type=mount mask=0x8 ignore=0x0 flags=0x0 path=$PWD/mnt\$" d/tree &&
		grep -q "^fanmark .*type=inode mask=0x0 ignore=0x8 flags=0x40 path=$PWD/mnt/quiet\$" d/tree ||
		fail "fanmark records: $(grep '^fanmark' d/tree | tr '\n' '|')"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "fanotify init 0x3 event 0x8000: .*mount mask 0x8 ignore 0x0 flags 0x0 $PWD/mnt" show.txt ||
		fail "imgcr show: $(grep fanotify show.txt | tr '\n' '|')"

	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid
	after=$(fan_lines $pid $fd)
	[ "$before" = "$after" ] || fail "fdinfo before: $(echo "$before" | tr '\n' '|') after: $(echo "$after" | tr '\n' '|')"
	touch restored
	wait_exit $rpid 120
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	umount mnt
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	pass "3 marks restored; $(grep -c '^ok' out) checks ok"
}

queued() {
	mkdir -p mnt
	mount -t tmpfs fanmnt mnt || fail "cannot mount a tmpfs"
	fanwatch queued > q.out 2>&1 &
	pid=$!
	track $pid
	wait_line q.out '^ready' 20 || fail "fanwatch queued did not start: $(cat q.out)"
	fd=$(sed -n 's/^fd //p' q.out)
	imgcr dump -t $pid -D e 2> e.err && fail "dump of a group with a queued event succeeded"
	grep -q "pid $pid fd $fd: fanotify: [0-9]* bytes of events queued and not read: they cannot be restored" e.err ||
		fail "message: $(cat e.err | tr '\n' '|')"
	n=$(grep -c '^tick' q.out)
	usleep 500000
	case "$(state $pid)" in S | R) ;; *) fail "task is '$(state $pid)' after the refused dump" ;; esac
	[ "$(grep -c '^tick' q.out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	kill $pid
	wait $pid 2>/dev/null
	umount mnt
	pass "refused: $(head -n1 e.err | cut -c1-140)"
}

subtest fanotify main
subtest fanotify_queued queued
