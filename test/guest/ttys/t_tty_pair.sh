#!/bin/sh
# A pty pair inside the tree across dump + restore (test/progs/ptypair.c):
# the parent holds the master (packet mode, window 37x111), the child runs
# on the slave as its controlling terminal (echo off, VINTR ^G), with data
# queued both ways at dump ("out-before-dump\r\n" for the master to read,
# "in-line-1\nlit^V^Hz\neof-line^D^Dpartial" for the slave: a line, a line
# with a literal ^H (its VERASE), a line ended by an end-of-file typed but
# not read, an end-of-file alone, and an unfinished one; saved as typed).
# From outside, before the dump and after the restore: the child's tty_nr
# (/proc/PID/stat) is the slave of the parent's master (its fdinfo
# tty-index), the child's fd 0 is that /dev/pts/N, the child's group is the
# terminal's foreground group (tpgid), the slave's termios and window size
# are the same.  The child also has /dev/tty open (fd 4): still its
# terminal after the restore, and still /dev/tty (link, 5:0) from outside
# and inside.  The tree holds the queued bytes (tty-N.data) and imgcr
# show prints the pair.  The parent also holds a second master left locked
# (TIOCSPTLCK 1, as /dev/ptmx gives it, no slave open): its tree record
# says locked, and from outside its slave cannot be opened (EIO) before
# the dump and after the restore.  The restored program checks each side
# reads exactly the queued bytes, packet mode, lock state (the locked
# master still locked, its slave unopenable until it unlocks it), its
# ctty (TIOCGSID, ttyname): all "ok".
# Sub-test tty_pair-moved: the same while another pty holds the pts index
# of the dump: the pair comes back on another index (a note says which).
# Sub-test tty_pair-refused: a master whose slave is the controlling
# terminal of a session outside the tree is refused (message names pid, fd,
# the pty and the session), no tree written, the task keeps running.
# Sub-test tty_pair-pktstatus: a master in packet mode with a status
# (TIOCPKT_FLUSHWRITE) not yet read is refused, naming pid and fd; it keeps
# running.
# Sub-test tty_pair-leave: the same with --leave-running: the data is put
# back and the original tree passes the same checks.
# Sub-test tty_pair-locked-slave: one task holds a master and its slave and
# locked the master again after opening the slave (ptypair lockedslave):
# the tree records it locked; restored, the slave fd is the new pair's
# slave, the open slave still talks to the master both ways, the master is
# still locked and its slave cannot be opened again (EIO).
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
grep -q ' /dev/pts devpts ' /proc/mounts || { mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; } ||
	fail "cannot mount devpts"

fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# outside WHEN: sets IDX; checks from outside the tree
outside() {
	IDX=$(fdi $pid $mfd tty-index)
	[ -n "$IDX" ] || fail "$1: no tty-index in the master's fdinfo: $(cat /proc/$pid/fdinfo/$mfd | tr '\n' '|')"
	nr=$(stat_field $kid 5)
	[ "$nr" = $((34816 + IDX)) ] || fail "$1: child tty_nr $nr, want $((34816 + IDX)) (/dev/pts/$IDX)"
	[ "$(readlink /proc/$kid/fd/0)" = /dev/pts/$IDX ] ||
		fail "$1: child fd 0 is $(readlink /proc/$kid/fd/0), want /dev/pts/$IDX"
	[ "$(readlink /proc/$kid/fd/4)" = /dev/tty ] && [ "$(stat -L -c %t:%T /proc/$kid/fd/4)" = 5:0 ] ||
		fail "$1: child fd 4 is $(readlink /proc/$kid/fd/4) ($(stat -L -c %t:%T /proc/$kid/fd/4)), want /dev/tty (5:0)"
	[ "$(stat_field $kid 6)" = $kid ] || fail "$1: tpgid $(stat_field $kid 6), want the child's group $kid"
	[ "$(stat_field $kid 4)" = $kid ] || fail "$1: child session $(stat_field $kid 4), want its own $kid"
	info=$(ptypair info /dev/pts/$IDX)
	[ "$info" = "rows=37 cols=111 echo=0 intr=7 erase=8" ] || fail "$1: slave termios/window: $info"
	# the locked pair: its slave cannot be opened
	LIDX=$(fdi $pid $lfd tty-index)
	[ -n "$LIDX" ] && [ "$LIDX" != "$IDX" ] || fail "$1: locked master's tty-index '$LIDX'"
	info=$(ptypair info /dev/pts/$LIDX)
	[ "$info" = "BAD info /dev/pts/$LIDX: Input/output error" ] ||
		fail "$1: the locked pty's slave /dev/pts/$LIDX: '$info', want it unopenable (EIO)"
}

start() {
	ptypair > out 2> err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "ptypair did not start: $(cat out err | tr '\n' '|')"
	set -- $(sed -n 's/^fds master=\([0-9]*\) child=\([0-9]*\) pts=.*/\1 \2/p' out)
	mfd=$1 kid=$2
	track $kid
	lfd=$(sed -n 's/^locked=\([0-9]*\) pts=.*/\1/p' out)
	[ -n "$lfd" ] || fail "no 'locked=' line: $(cat out | tr '\n' '|')"
	outside "before the dump"
	IDX0=$IDX LIDX0=$LIDX
}

finish() {
	wait_exit $1 60
	[ "$RC" = 0 ] || fail "$2 exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
}

restore_case() {
	mkdir r$MOVE && cd r$MOVE || fail "mkdir"
	start
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
	tree_fields d/tree | grep -q "^file [0-9]* tty .* master $IDX0 5:2 /dev/ptmx" &&
		tree_fields d/tree | grep -q "^file [0-9]* tty .* slave $IDX0 136:$IDX0 /dev/pts/$IDX0" &&
		tree_fields d/tree | grep -q "^file [0-9]* tty .* devtty $IDX0 136:$IDX0 /dev/tty" ||
		fail "no tty master/slave/devtty records: $(grep '^file' d/tree | tr '\n' '|')"
	set -- $(tree_fields d/tree | grep "^tty $LIDX0 ")
	[ "$6" = 1 ] || fail "locked pty $LIDX0: tty record $*: not locked (field 6)"
	set -- $(tree_fields d/tree | grep "^tty $IDX0 ")
	[ "$4 $5 $7 ${17} ${18}" = "$kid $kid 1 34 17" ] ||
		fail "tty record: sid/fg/pkt/inlen/outlen '$4 $5 $7 ${17} ${18}', want '$kid $kid 1 34 17': $*"
	printf 'in-line-1\nlit\026\010z\neof-line\004\004partialout-before-dump\r\n' > want.data
	cmp -s want.data d/tty-$IDX0.data || fail "tty-$IDX0.data: $(od -c d/tty-$IDX0.data | head -3 | tr '\n' '|')"
	imgcr show d > show.txt || fail "imgcr show DIR failed"
	grep -q "pty $IDX0 (/dev/pts/$IDX0): session $kid foreground group $kid packet mode" show.txt &&
		grep -q "window 37x111 .*34 bytes of input and 17 of output queued" show.txt &&
		grep -q "fd 0: tty slave of pty $IDX0 /dev/pts/$IDX0" show.txt ||
		fail "imgcr show DIR: $(grep -E 'pty|tty|window' show.txt | tr '\n' '|')"

	if [ $MOVE = 1 ]; then
		# another pty takes the freed index: the pair comes back on another one
		mkfifo inX || fail "mkfifo"
		ptyrun outX inX sleep 600 > ptyX.txt 2>&1 &
		track $!
		wait_line ptyX.txt "^pts=/dev/pts/$IDX0 " 10 || fail "the other pty is not /dev/pts/$IDX0: $(cat ptyX.txt)"
	fi
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_tasks_restored $pid $kid
	outside "after the restore"
	touch restored
	finish $rpid "imgcr restore"
	grep -q "^child tty /dev/pts/$IDX\$" out || fail "the child's ttyname is not /dev/pts/$IDX: $(grep 'child tty' out)"
	if [ $MOVE = 1 ]; then
		[ $IDX != $IDX0 ] || fail "restored on /dev/pts/$IDX0, which another pty holds"
		grep -q "^imgcr: note: pty /dev/pts/$IDX0 is restored as /dev/pts/$IDX (the index is in use)" restore.err ||
			fail "no note about the new index: $(cat restore.err)"
	fi
	pass "$(grep -c '^ok' out) checks ok; /dev/pts/$IDX0 restored as /dev/pts/$IDX"
}

leave_case() {
	mkdir l && cd l || fail "mkdir"
	start
	imgcr dump -t $pid -D d --leave-running 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $pid $kid; do
		case "$(state $p)" in "" | Z | t | T) fail "task $p not running after the dump: '$(state $p)'" ;; esac
	done
	outside "after the dump"
	touch restored
	finish $pid ptypair
	pass "$(grep -c '^ok' out) checks ok with the data put back"
}

refused_case() {
	mkdir o && cd o || fail "mkdir"
	ptypair orphan > out 2> err &
	pid=$!
	track $pid
	wait_line out '^tick 3' 20 || fail "ptypair orphan did not start: $(cat out err | tr '\n' '|')"
	set -- $(sed -n 's/^fds master=\([0-9]*\) session=\([0-9]*\)$/\1 \2/p' out)
	mfd=$1 sess=$2
	track $sess
	imgcr dump -t $pid -D d 2> dump.err && fail "dump succeeded"
	grep -qE "^imgcr: pid $pid fd $mfd: pty master of /dev/pts/[0-9]+: its slave is the controlling terminal of session $sess, outside the tree: not supported" dump.err ||
		fail "message: $(head -n1 dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	case "$(state $pid)" in "" | Z | t | T) fail "ptypair not running after the refused dump: '$(state $pid)'" ;; esac
	c=$(grep -c '^tick' out)
	wait_line out "^tick $((c + 3))\$" 10 || fail "ptypair stopped ticking after the refused dump"
	pass "$(head -n1 dump.err | cut -c1-160)"
}

# a master in packet mode with a status not yet read: refused, left running
pktstatus_case() {
	mkdir pk && cd pk || fail "mkdir"
	ptypair pktstatus > out 2> err &
	pid=$!
	track $pid
	wait_line out '^tick 3' 20 || fail "ptypair pktstatus did not start: $(cat out err | tr '\n' '|')"
	mfd=$(sed -n 's/^fds master=\([0-9]*\)$/\1/p' out)
	imgcr dump -t $pid -D d 2> dump.err && fail "dump succeeded"
	grep -qE "^imgcr: pid $pid fd $mfd: pty master of /dev/pts/[0-9]+: a packet-mode status \(TIOCPKT\) is pending, not yet read by the program" dump.err ||
		fail "message: $(head -n1 dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	left_running $pid || fail "ptypair not running after the refused dump: '$(state $pid)'"
	c=$(grep -c '^tick' out)
	wait_line out "^tick $((c + 3))\$" 10 || fail "ptypair stopped ticking after the refused dump"
	pass "$(head -n1 dump.err | cut -c1-160)"
}

# one task holds a master and its slave and locked the master again
lockedslave_case() {
	mkdir ls && cd ls || fail "mkdir"
	ptypair lockedslave > out 2> err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "ptypair lockedslave did not start: $(cat out err | tr '\n' '|')"
	set -- $(sed -n 's/^fds master=\([0-9]*\) slave=\([0-9]*\) pts=.*/\1 \2/p' out)
	mfd=$1 sfd=$2
	LIDX=$(fdi $pid $mfd tty-index)
	[ "$(readlink /proc/$pid/fd/$sfd)" = /dev/pts/$LIDX ] || fail "slave fd $sfd is $(readlink /proc/$pid/fd/$sfd), want /dev/pts/$LIDX"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	set -- $(tree_fields d/tree | grep "^tty $LIDX ")
	[ "${6:-}" = 1 ] || fail "tty record of /dev/pts/$LIDX not locked: $*"
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	n=0
	until wait_restored $pid 1 imgcr; do
		[ -n "$(state $rpid)" ] && [ "$(state $rpid)" != Z ] ||
			fail "imgcr restore failed: $(tr '\n' '|' < restore.err)"
		n=$((n + 1))
		[ $n -lt 300 ] || fail "task $pid not restored in 60 s$(rerr)"
		usleep 200000
	done
	IDX=$(fdi $pid $mfd tty-index)
	[ "$(readlink /proc/$pid/fd/$sfd)" = /dev/pts/$IDX ] || fail "restored slave fd $sfd is $(readlink /proc/$pid/fd/$sfd), want /dev/pts/$IDX"
	touch restored
	wait_exit $rpid 60
	[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
	grep -q '^done ok' out || fail "no 'done ok': $(grep -E 'BAD|done' out | tr '\n' '|')"
	pass "$(grep -c '^ok' out) checks ok; /dev/pts/$LIDX locked with its slave open, restored as /dev/pts/$IDX"
}

subtest tty_pair-refused refused_case
subtest tty_pair-pktstatus pktstatus_case
MOVE=0
subtest tty_pair restore_case
MOVE=1
subtest tty_pair-moved restore_case
subtest tty_pair-leave leave_case
subtest tty_pair-locked-slave lockedslave_case
