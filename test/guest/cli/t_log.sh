#!/bin/sh
# Messages and what a restore leaves behind (issues 22, 27), subtests
# log-NAME:
#   levels    -o FILE gets the messages (with times), not stderr; -v4 adds
#             debug lines, -v0 leaves out the notes the default prints
#             (a tree outside its session: "note: session ... outside")
#   pidfile   restore --pidfile FILE holds the restored root's pid
#   stats     restore --stats prints its phases, bytes and pages
#   execwhy   an image binfmt_img refuses (CPU state this CPU lacks, which
#             imgcr itself does not check): imgcr's message has the
#             module's reason, not only "see the kernel log"
#   progress  on a terminal (ptyrun), dump and restore draw a progress line
#             (IMGCR_PROGRESS_AFTER_MS=0: at once), not on a file
#   shm       a dump of a process with a SysV shm attachment names it in
#             imgcr's message (the open of /proc/PID/dump only says
#             EOPNOTSUPP), and the process runs on
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# not setsid: its session is outside the tree (a note at restore)
counter 100000 < /dev/null > out 2>&1 &
pid=$!
track $pid
wait_line out '^2 ' 10 || { T=log-levels; fail "counter did not start"; }

T=log-levels
(
	imgcr dump -t $pid -D ck -o dump.log -v4 > d.out 2> d.err || fail "dump -o -v4: $(cat d.err dump.log)"
	[ -s d.err ] && fail "dump -o: stderr not empty: $(head -c 200 d.err)"
	grep -q '^( *[0-9]*\.[0-9]*) imgcr: debug: ' dump.log || fail "dump -v4: no timed debug line in dump.log: $(head -c 300 dump.log)"
	wait_gone $pid 5 || fail "the dumped counter still runs"
	n=$(tail -n1 out | cut -d' ' -f1)
	imgcr restore -D ck -d -o r0.log -v0 > r0.out 2> r0.err || fail "restore -v0: $(cat r0.err r0.log)"
	wait_line out "^$((n + 2)) $pid\$" 10 || fail "the restored counter does not count on"
	[ -s r0.err ] && fail "restore -o -v0: stderr not empty: $(head -c 200 r0.err)"
	grep -q 'note:\|debug:' r0.log && fail "restore -v0 logged notes or debug lines: $(head -c 300 r0.log)"
	imgcr dump -t $pid -D ck2 > d2.out 2>&1 || fail "second dump: $(cat d2.out)"
	wait_gone $pid 5 || fail "the dumped counter still runs (2)"
	imgcr restore -D ck2 -d -o r2.log > r2.out 2> r2.err || fail "restore -o: $(cat r2.err r2.log)"
	grep -q 'imgcr: note: session [0-9]* is outside the tree' r2.log ||
		fail "restore -o (default level): no note in r2.log: $(head -c 300 r2.log)"
	grep -q 'debug:' r2.log && fail "restore at the default level logged debug lines"
	grep -q 'note:' r2.err && fail "restore -o: the note went to stderr too"
	pass "dump -v4: $(grep -c debug: dump.log) debug lines; restore -v0 quiet; default: $(grep -c note: r2.log) note(s)"
)

T=log-pidfile
(
	kill -0 $pid 2>/dev/null || fail "no counter"
	n=$(tail -n1 out | cut -d' ' -f1)
	imgcr dump -t $pid -D ck3 > d3.out 2>&1 || fail "dump: $(cat d3.out)"
	wait_gone $pid 5 || fail "the dumped counter still runs"
	echo stale > pf
	imgcr restore -D ck3 -d --pidfile pf --stats > r3.out 2> r3.err || fail "restore --pidfile --stats: $(cat r3.err)"
	[ "$(cat pf)" = "$pid" ] || fail "pidfile holds '$(cat pf)', want $pid"
	wait_line out "^$((n + 2)) $pid\$" 10 || fail "the restored counter does not count on"
	[ "$(cat /proc/$pid/comm)" = counter ] || fail "pid $(cat pf) is not the counter: $(cat /proc/$pid/comm)"
	ls pf.imgcr-* > /dev/null 2>&1 && fail "a temporary pidfile is left"
	pass "pidfile $(cat pf)"
)

T=log-stats
grep -q '^imgcr: stats: tasks=1 prepare_ms=[0-9]* open_ms=[0-9]* fork_ms=[0-9]* exec_ms=[0-9]* total_ms=[0-9]* image_bytes=[1-9][0-9]* image_pages=[1-9][0-9]*$' r3.err &&
	pass "$(grep stats: r3.err)" || echo "RESULT $T FAIL no stats line: $(head -c 300 r3.err)"

T=log-execwhy
(
	kill -0 $pid 2>/dev/null || fail "no counter"
	imgcr dump -t $pid -D ck4 > d4.out 2>&1 || fail "dump: $(cat d4.out)"
	wait_gone $pid 5 || fail "the dumped counter still runs"
	corrupt ck4/core-$pid.img v.img xfeatures 2> c.err || fail "corrupt: $(cat c.err)"
	mv v.img ck4/core-$pid.img
	imgcr restore -D ck4 > r4.out 2>&1 && fail "an image with CPU state this CPU lacks restored"
	grep -q "exec of .*core-$pid.img failed: Operation not supported: image uses CPU state components 0x[0-9a-f]* this CPU lacks" r4.out ||
		fail "no reason in imgcr's message: $(grep -v note: r4.out | head -c 300 | tr '\n' '|')"
	kill -0 $pid 2>/dev/null && fail "pid $pid runs after the refused restore"
	pass "$(grep -o 'exec of.*' r4.out | cut -c1-160)"
)

T=log-shm
(
	shmat > s.out 2>&1 &
	spid=$!
	track $spid
	wait_line s.out '^ready' 10 || fail "shmat did not start: $(cat s.out)"
	imgcr dump -t $spid -D ck5 > d5.out 2>&1 && fail "a process with a SysV shm mapping was dumped"
	grep -q "pid $spid: cannot open /proc/$spid/dump: Operation not supported: maps a SysV shm segment" d5.out ||
		fail "no reason in imgcr's message: $(head -c 300 d5.out)"
	sleep 0.2
	kill -0 $spid 2>/dev/null || fail "the refused process is gone"
	left_running $spid || fail "the refused process is in state $(state $spid)"
	# another thread's read finds nothing: the reason was the dumper's
	[ -z "$(cat /proc/imgcr_refusal)" ] || fail "/proc/imgcr_refusal has a reason for another reader"
	kill -9 $spid
	pass "$(grep -o 'pid.*' d5.out | head -n1 | cut -c1-160)"
)

T=log-progress
(
	# a session of its own: restored in it, not on ptyrun's terminal
	setsid heapbench 32 < /dev/null > h.out 2>&1 &
	wait_line h.out '^ready' 30 || fail "heapbench did not start: $(cat h.out)"
	hpid=$(pidof heapbench)
	track $hpid
	# not on a terminal: no progress line, even with no delay
	IMGCR_PROGRESS_AFTER_MS=0 imgcr dump -R -t $hpid -D ck6a > d6a.out 2>&1 ||
		fail "dump -R: $(cat d6a.out)"
	grep -q 'MiB/s' d6a.out && fail "a progress line on a file: $(head -c 200 d6a.out)"
	grep -q ' /dev/pts devpts ' /proc/mounts || { mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; } ||
		fail "cannot mount devpts"
	mkfifo pin
	IMGCR_PROGRESS_AFTER_MS=0 ptyrun pout pin imgcr dump -t $hpid -D ck6 > pr.txt 2>&1 ||
		fail "dump on a terminal: $(cat pr.txt pout 2>/dev/null | tr '\r\n' '||' | head -c 300)"
	wait_gone $hpid 10 || fail "the dumped heapbench still runs"
	grep -q "imgcr: dump: [0-9.]* MiB, [0-9.]* MiB/s, [01]/1 tasks, [0-9]* s" pout ||
		fail "no progress line on the terminal: $(tr '\r\n\033' '||E' < pout | head -c 300)"
	IMGCR_PROGRESS_AFTER_MS=0 ptyrun pout2 pin imgcr restore -D ck6 -d > pr2.txt 2>&1 ||
		fail "restore on a terminal: $(tr '\r\n' '||' < pout2 | head -c 300)"
	grep -q "imgcr: restore: [0-9.]* MiB of images, [01]/1 tasks ready, [0-9]* s" pout2 ||
		fail "no progress line on the terminal at restore: $(tr '\r\n\033' '||E' < pout2 | head -c 300)"
	wait_restored $hpid 30 || fail "heapbench not restored"
	kill -USR1 $hpid
	wait_line h.out '^OK' 30 || fail "the restored heap: $(tail -n 2 h.out)"
	pass "a progress line on a terminal at dump and restore ($(tr '\r\033' '|E' < pout | grep -o 'imgcr: dump: [^E]*' | tail -n 1)), none on a file"
)
