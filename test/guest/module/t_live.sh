#!/bin/sh
# imgcr dump --live: the memory of a process that keeps writing
# (livewriter: 48 MiB of pages, the first 1 % rewritten over and over, each
# page's content derived from its generation) is copied while it runs;
# frozen, the module writes only what changed (IMGCR_IOC_DUMP_TO_SKIP) and
# imgcr fills in the copies.
#   check  --live-check: the stitched image is byte for byte a plain read of
#          /proc/PID/dump of the same frozen task (imgcr compares them);
#          most pages came from the copy made while it ran; the restored
#          process writes on and every page matches its generation.
#   remap  two regions walking through slots with mremap(), one into the
#          slot the other just left (page tables moved, soft-dirty bits not
#          set): --live-check dumps identical to a plain read.
#   leave  --live --leave-running: the original writes on; killed, its
#          image restores with every page right (the fill happened after
#          the tree was released).
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

MIB=48
PAGES=$((MIB * 256))

start_writer() {
	: > lw.out
	# appending: the restored fd writes at the end of what the original
	# wrote after a dump with --leave-running
	livewriter $MIB 1 >> lw.out 2>&1 &
	PID=$!
	track $PID
	wait_line lw.out '^ready' 60 || fail "livewriter did not start"
	sleep 1
}

# writes_now PID: the process's write count (SIGUSR2 -> "writes=N")
writes_now() {
	_n=$(grep -c '^writes=' lw.out)
	kill -USR2 "$1"
	wait_line lw.out "^writes=" 10 >/dev/null
	_i=0
	while [ "$(grep -c '^writes=' lw.out)" = "$_n" ] && [ $_i -lt 500 ]; do
		usleep 20000
		_i=$((_i + 1))
	done
	sed -n 's/^writes=//p' lw.out | tail -n 1
}

# start_restore DIR WHAT [OPTION]: imgcr restore DIR in the background
# (rpid), until $PID is the restored program
start_restore() {
	imgcr restore -D "$1" ${3:-} > r.out 2> restore.err &
	rpid=$!
	track $rpid
	_i=0
	until [ -d /proc/$PID ] || [ $_i -ge 3000 ]; do
		usleep 20000
		_i=$((_i + 1))
	done
	wait_restored $PID 60 imgcr || fail "$2: not restored$(rerr)"
	track $PID
}

# restore_check DIR WHAT [OPTION]: restore DIR, see it write on, check
# every page
restore_check() {
	start_restore "$@"
	w1=$(writes_now $PID)
	w2=$(writes_now $PID)
	[ -n "$w1" ] && [ -n "$w2" ] && [ "$w2" -gt "$w1" ] ||
		fail "$2: the restored process does not write on ($w1, $w2)$(rerr)"
	kill -USR1 $PID
	wait_exit $rpid 60
	grep -q '^OK writes=' lw.out || fail "$2: restored process: $(tail -n 1 lw.out)"
	[ "$RC" = 0 ] || fail "$2: imgcr restore exit $RC$(rerr)"
}

# dstat NAME: a figure from imgcr dump --stats (dump.err)
dstat() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" dump.err; }

sub_check() {
	start_writer
	imgcr dump -t $PID -D dc --live-check --stats 2> dump.err ||
		fail "dump --live-check: $(tr '\n' '|' < dump.err)"
	wait_gone $PID 10 || fail "the dumped process survived"
	wait $PID 2>/dev/null
	skipped=$(dstat live_skipped_pages)
	copied=$(dstat live_copied_pages)
	[ "${skipped:-0}" -ge $((PAGES * 8 / 10)) ] ||
		fail "only ${skipped:-0} of $PAGES pages came from the copy made while running: $(cat dump.err)"
	[ "${copied:-0}" -ge "${skipped:-0}" ] || fail "copied $copied < skipped $skipped"
	restore_check dc "--live-check"
	pass "$skipped of $PAGES pages copied while running; $(grep '^imgcr: stats' dump.err | cut -d' ' -f3-5)"
}

sub_leave() {
	start_writer
	imgcr dump -t $PID -D dl --live --leave-running --stats 2> dump.err ||
		fail "dump --live --leave-running: $(tr '\n' '|' < dump.err)"
	w1=$(writes_now $PID)
	w2=$(writes_now $PID)
	[ -n "$w1" ] && [ -n "$w2" ] && [ "$w2" -gt "$w1" ] ||
		fail "the original does not write on after the dump ($w1, $w2)"
	kill9 $PID
	# the original wrote to lw.out after the dump
	restore_check dl "--leave-running" --allow-changed-files
	pass "$(dstat live_skipped_pages) of $PAGES pages copied while running, frozen $(dstat frozen_ms) ms"
}

# remapper moves two 4 MiB regions with mremap(), Y into the slot X just
# left, whole page tables moved without soft-dirty bits: three --live-check
# dumps, each compared with a plain read, then the last one restored.
sub_remap() {
	remapper > rm.out 2>&1 &
	PID=$!
	track $PID
	wait_line rm.out '^ready' 60 || fail "remapper did not start"
	for i in 1 2 3; do
		imgcr dump -t $PID -D dr$i --live-check --leave-running --stats 2> dump.err ||
			fail "dump $i of the remapper: $(tr '\n' '|' < dump.err)"
	done
	kill9 $PID
	# remapper moves and reprotects its regions all the time: the restored
	# process has changed its mappings before the state check can look
	hook=${IMGCR_STATE_HOOK:-}
	IMGCR_STATE_HOOK=
	start_restore dr3 remapper
	IMGCR_STATE_HOOK=$hook
	sleep 1
	kill -USR1 $PID
	wait_exit $rpid 60
	grep -q '^OK moves=' rm.out || fail "restored remapper: $(tail -n 1 rm.out)"
	pass "3 dumps identical to a plain read; $(grep '^OK' rm.out)"
}

subtest live-check sub_check
subtest live-remap sub_remap
subtest live-leave sub_leave
