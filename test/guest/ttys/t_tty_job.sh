#!/bin/sh
# A shell job on a terminal (test/progs/ttyjob.c, ptyrun.c): on pty A (window
# 33x101, VERASE ^H, VEOL ^A, IUTF8) a "shell" starts a job in its own
# process group, in the foreground; the job ticks on the terminal and echoes
# the lines it reads.
# Sub-test tty_job-refused: imgcr dump without --shell-job refuses, naming
# pid, fd, the kind and --shell-job; no tree is written, and the job keeps
# running (not stopped, still ticking).  With --shell-job, a task with fds
# on two terminals (pty A and the console) is refused, and keeps running.
# Sub-test tty_job: dump --shell-job, then imgcr restore --shell-job run
# on ANOTHER pty B (24x80, default termios; restore without --shell-job, or
# with it but not on a terminal, is refused first, leaving nothing): the job writes to B, its
# tty_nr (/proc/PID/stat) is B, its group is B's foreground group (tpgid),
# B has A's termios and window size (from outside, and as the job sees
# them: "moved ... termios=same winsize=33x101 fg=yes ctty=yes"), it reads
# a line typed on B, and job control works: ^Z typed on B stops it (state
# T), SIGCONT resumes it.
# Sub-test tty_job-bg: a job started in the background comes back in the
# background of pty B (tpgid: imgcr restore's group; "fg=no"), ticking.
# Sub-test tty_job-console: a job whose stdin is the guest's console
# (/dev/console, the serial port ttyS0 behind it; its output goes to a
# file): refused without --shell-job (naming the console), dumped with it;
# imgcr restore --shell-job runs on /dev/console, ttyS0 made its
# controlling terminal (setsid -c: the guest has no shell on its console):
# the job's fd 0 is /dev/console, its tty_nr is ttyS0 and its session imgcr's, and it
# counts on with the next number (no gap, no repeat).
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
grep -q ' /dev/pts devpts ' /proc/mounts || { mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; } ||
	fail "cannot mount devpts"

# pts_nr /dev/pts/N: its tty_nr
pts_nr() { echo $((34816 + ${1#/dev/pts/})); }
ticks() { grep -c '^tick' "$1" 2>/dev/null; }
# ticking FILE: the job still writes ticks into FILE
ticking() {
	c=$(ticks "$1")
	wait_line "$1" "^tick $((c + 3))" 20
}

# start: the job on pty A; sets J, PTSA, INFOA
start() {
	mkfifo inA || fail "mkfifo"
	ptyrun -w 33x101 outA inA ttyjob shell $BG > ptyA.txt 2>&1 &
	track $!
	wait_line outA '^job pid=' 20 || fail "the job did not start: $(cat ptyA.txt outA | head -c 300 | tr '\n' '|')"
	J=$(sed -n 's/^job pid=\([0-9]*\) .*/\1/p' outA)
	track $J
	PTSA=$(sed -n 's/^pts=\([^ ]*\) .*/\1/p' ptyA.txt)
	[ "$(stat_field $J 5)" = "$(pts_nr $PTSA)" ] || fail "job tty_nr $(stat_field $J 5), want $PTSA's"
	if [ -z "$BG" ]; then
		[ "$(stat_field $J 6)" = $J ] || fail "job not in the foreground of $PTSA: tpgid $(stat_field $J 6)"
	else
		[ "$(stat_field $J 6)" = "$(stat_field $J 4)" ] || fail "the shell is not in the foreground of $PTSA: tpgid $(stat_field $J 6)"
	fi
	[ "$(stat_field $J 3)" = $J ] || fail "job pgid $(stat_field $J 3), want $J"
	# pty A stays open after the job is gone, so that pty B is another one
	sleep 600 < $PTSA > /dev/null 2>&1 &
	track $!
	INFOA=$(ttyjob info $PTSA)
	case "$INFOA" in "rows=33 cols=101 "*" erase=8 eol=1") ;; *) fail "pty A: $INFOA" ;; esac
	ticking outA || fail "the job does not tick"
}

refused() {
	mkdir ref && cd ref || fail "mkdir"
	start
	imgcr dump -t $J -D d > dump.out 2> dump.err && fail "dump of a job on a terminal succeeded without --shell-job"
	grep -qE "^imgcr: pid $J fd 0: pty slave $PTSA \(136:[0-9]+\), its master not in the tree: a terminal outside the tree is not supported without --shell-job" dump.err ||
		fail "message: $(head -n1 dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	case "$(state $J)" in "" | Z | t | T) fail "job not running after the refused dump: '$(state $J)'" ;; esac
	ticking outA || fail "the job stopped ticking after the refused dump"
	# with --shell-job, but on two terminals: pty A and the console
	sleep 600 < $PTSA > /dev/console 2>&1 &
	two=$!
	track $two
	# dump once the shell's child has its redirections and runs sleep (a
	# dump before that saw the test shell's fds, no terminal, and succeeded)
	n=0
	until [ "$(readlink /proc/$two/fd/0)" = "$PTSA" ] && [ "$(readlink /proc/$two/fd/1)" = /dev/console ] &&
		[ "$(tr '\0' ' ' < /proc/$two/cmdline 2>/dev/null)" = "sleep 600 " ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "task on two terminals: fds $(readlink /proc/$two/fd/0) $(readlink /proc/$two/fd/1)"
		usleep 20000
	done
	imgcr dump -t $two -D d2 --shell-job 2> dump2.err && fail "dump of a task on two terminals succeeded"
	grep -qE "^imgcr: pid $two fd 1: console /dev/console \(5:1\): a second terminal outside the tree \(besides $PTSA 136:[0-9]+\): not supported" dump2.err ||
		fail "two terminals: message: $(head -n1 dump2.err)"
	[ -e d2/tree ] && fail "a tree file was written"
	case "$(state $two)" in "" | Z | t | T) fail "task on two terminals not running after the refused dump: '$(state $two)'" ;; esac
	ticking outA || fail "the job stopped ticking"
	pass "$(head -n1 dump.err | cut -c1-160)"
}

job() {
	mkdir job && cd job || fail "mkdir"
	start
	imgcr dump -t $J -D d --shell-job 2> dump.err || fail "dump --shell-job: $(cat dump.err)"
	wait_gone $J 10 || fail "the job survived the dump"
	tree_fields d/tree | grep -q "^file [0-9]* tty .* job -1 136:${PTSA#/dev/pts/} $PTSA" ||
		fail "no tty job record: $(grep '^file' d/tree | tr '\n' '|')"
	set -- $(tree_fields d/tree | grep "^tty -1 ")
	[ "$5 ${13} ${14}" = "$J 33 101" ] || fail "tty record: fg/rows/cols '$5 ${13} ${14}': $*"
	imgcr show d > show.txt || fail "imgcr show"
	grep -q "job terminal 136:${PTSA#/dev/pts/}: session [0-9]* foreground group $J" show.txt &&
		grep -q "window 33x101" show.txt ||
		fail "imgcr show DIR: $(grep -E 'job|window' show.txt | tr '\n' '|')"
	imgcr restore -D d > restore.err 2>&1 < /dev/null && fail "restore without --shell-job succeeded"
	grep -q "restore it with --shell-job" restore.err || fail "restore without --shell-job: $(cat restore.err)"
	[ -z "$(state $J)" ] || fail "the refused restore left task $J"
	imgcr restore -D d --shell-job > restore2.err 2>&1 < /dev/null && fail "restore --shell-job without a terminal succeeded"
	grep -q "imgcr restore's stdin must be a terminal, its controlling terminal" restore2.err ||
		fail "restore --shell-job without a terminal: $(cat restore2.err)"
	[ -z "$(state $J)" ] || fail "the refused restore left task $J"

	mkfifo inB || fail "mkfifo"
	ptyrun outB inB imgcr restore -D d --shell-job > ptyB.txt 2>&1 &
	track $!
	n=0
	while [ -z "$(state $J)" ]; do
		n=$((n + 1))
		[ $n -lt 3000 ] || fail "job not recreated in 60 s: $(cat ptyB.txt outB | head -c 300 | tr '\n' '|')"
		usleep 20000
	done
	wait_line outB '^moved tty=' 60 || fail "the restored job says nothing on pty B ($(cat ptyB.txt), its fd 0 $(readlink /proc/$J/fd/0)): $(head -c 300 outB | tr '\r\n' '||')"
	PTSB=$(sed -n 's/^pts=\([^ ]*\) .*/\1/p' ptyB.txt)
	[ "$PTSB" != "$PTSA" ] || fail "pty B is pty A"
	line=$(grep '^moved tty=' outB | tr -d '\r')
	[ "$line" = "moved tty=$PTSB termios=same winsize=33x101 fg=yes ctty=yes" ] || fail "the job says: $line"
	[ "$(stat_field $J 5)" = "$(pts_nr $PTSB)" ] || fail "job tty_nr $(stat_field $J 5), want $PTSB's"
	[ "$(stat_field $J 6)" = $J ] || fail "job not in the foreground of $PTSB: tpgid $(stat_field $J 6)"
	[ "$(readlink /proc/$J/fd/1)" = "$PTSB" ] || fail "job fd 1 is $(readlink /proc/$J/fd/1)"
	INFOB=$(ttyjob info $PTSB)
	[ "$INFOB" = "$INFOA" ] || fail "pty B termios/window '$INFOB', pty A had '$INFOA'"
	ticking outB || fail "the restored job does not tick on pty B"
	echo hello-b > inB
	wait_line outB '^got hello-b' 20 || fail "the job did not read the line typed on pty B"
	printf '\032' > inB
	wait_state $J T 20 || fail "^Z on pty B did not stop the job (state '$(state $J)')"
	c=$(ticks outB)
	sleep 1
	[ "$(ticks outB)" -le $((c + 1)) ] || fail "the stopped job kept ticking"
	kill -CONT $J
	ticking outB || fail "the job did not resume after SIGCONT"
	pass "restored from $PTSA onto $PTSB: foreground, termios and 33x101 kept, read a line, ^Z/CONT"
}

# a background job: restored in the background of pty B
bgjob() {
	mkdir bg && cd bg || fail "mkdir"
	start
	imgcr dump -t $J -D d --shell-job 2> dump.err || fail "dump --shell-job: $(cat dump.err)"
	wait_gone $J 10 || fail "the job survived the dump"
	mkfifo inB || fail "mkfifo"
	ptyrun outB inB imgcr restore -D d --shell-job > ptyB.txt 2>&1 &
	track $!
	wait_line outB '^moved tty=' 60 || fail "the restored job says nothing on pty B: $(head -c 300 outB | tr '\r\n' '||')"
	PTSB=$(sed -n 's/^pts=\([^ ]*\) child=\([0-9]*\)/\1/p' ptyB.txt)
	R=$(sed -n 's/^pts=\([^ ]*\) child=\([0-9]*\)/\2/p' ptyB.txt)
	line=$(grep '^moved tty=' outB | tr -d '\r')
	[ "$line" = "moved tty=$PTSB termios=same winsize=33x101 fg=no ctty=yes" ] || fail "the job says: $line"
	[ "$(stat_field $J 5)" = "$(pts_nr $PTSB)" ] || fail "job tty_nr $(stat_field $J 5), want $PTSB's"
	[ "$(stat_field $J 6)" = $R ] || fail "tpgid $(stat_field $J 6), want imgcr restore's group $R"
	[ "$(stat_field $J 3)" = $J ] || fail "job pgid $(stat_field $J 3), want $J"
	ticking outB || fail "the restored background job does not tick on pty B"
	pass "restored from $PTSA onto $PTSB in the background (foreground: imgcr restore, $R)"
}

BG=
subtest tty_job-refused refused
subtest tty_job job
BG=bg
subtest tty_job-bg bgjob

# a job on the console: restored onto the console's serial port
console() {
	mkdir con && cd con || fail "mkdir"
	[ -c /dev/ttyS0 ] || fail "no /dev/ttyS0"
	counter 2000 < /dev/console > c.out 2> c.err &
	J=$!
	track $J
	wait_line c.out '^5 ' 20 || fail "counter did not start: $(cat c.err)"
	imgcr dump -t $J -D d0 2> dump0.err && fail "dump of a job on the console succeeded without --shell-job"
	grep -q "^imgcr: pid $J fd 0: console /dev/console (5:1): a terminal outside the tree is not supported without --shell-job" dump0.err ||
		fail "message: $(head -n1 dump0.err)"
	[ -e d0/tree ] && fail "a tree file was written"
	imgcr dump -t $J -D d --shell-job 2> dump.err || fail "dump --shell-job: $(cat dump.err)"
	wait_gone $J 10 || fail "the job survived the dump"
	wait $J 2>/dev/null
	last=$(tail -n 1 c.out | cut -d' ' -f1)
	tree_fields d/tree | grep -q "^file [0-9]* tty .* job -1 5:1 /dev/console" ||
		fail "no tty job record for the console: $(grep '^file' d/tree | tr '\n' '|')"
	# from /dev/console too: the terminal behind it (TIOCGDEV) is compared
	setsid -c imgcr restore -D d --shell-job < /dev/console > restore.out 2> restore.err &
	R=$!
	track $R
	wait_tasks_restored $J
	[ "$(readlink /proc/$J/fd/0)" = /dev/console ] || fail "job fd 0 is $(readlink /proc/$J/fd/0), want /dev/console"
	[ "$(stat_field $J 5)" = $((4 * 256 + 64)) ] || fail "job tty_nr $(stat_field $J 5), want ttyS0's 1088"
	[ "$(stat_field $J 4)" = $R ] || fail "job session $(stat_field $J 4), want imgcr restore's $R"
	wait_line c.out "^$((last + 5)) " 20 || fail "the restored job does not count on after $last$(rerr)"
	[ "$(sed -n "$((last + 1))p" c.out | cut -d' ' -f1)" = $((last + 1)) ] ||
		fail "line after the restore: '$(sed -n "$((last + 1))p" c.out)', want $((last + 1))"
	kill9 $J
	wait_exit $R 20
	pass "a job on /dev/console restored onto /dev/console (ttyS0, imgcr's controlling terminal), counting on from $last"
}
subtest tty_job-console console
