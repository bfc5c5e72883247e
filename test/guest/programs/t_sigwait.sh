#!/bin/sh
# Calls that wait under a temporary signal mask come back with both masks
# (progs/sigwait.c): sigsuspend, ppoll, pselect and epoll_pwait, each in the
# main thread and in another one, whose own masks block SIGUSR1 and SIGUSR2
# and whose temporary ones let one of them through.  Stopped, dumped and
# restored stopped: outside, each thread's SigBlk is its call's temporary
# mask again (as before the dump); SIGUSR1 and SIGUSR2 sent while it is
# stopped, then SIGCONT: inside, each call returns EINTR after its handler
# ran with the temporary mask (| sa_mask | the signal) and the thread has
# its own mask afterwards.  Restored running: each thread is back in its
# call (its /proc syscall number) under the temporary mask, and the same
# signals end it the same way; epoll_pwait, which a stop makes return EINTR,
# returns it at once, with the thread's own mask.  Last, the sigsuspend
# image with its NT_IMGCR_SIGWAITS damaged one way at a time
# (progs/corrupt.c): each is refused (EINVAL).
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

# start MODE OUT: sigwait MODE with both threads in their call; sets pid
start() {
	sigwait $1 > $2 2> sw.err < /dev/null &
	pid=$!
	track $pid
	_n=250
	until [ "$(grep -c '^go ' $2)" = 2 ] && all_state $pid S; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || fail "$1: sigwait did not start: $(tr '\n' '|' < $2) $(thread_states $pid)"
		usleep 20000
	done
}

# masks_are MODE PID OUT WHEN: each thread's SigBlk is its temporary mask
masks_are() {
	for who in main thread; do
		line=$(grep "^go $who " $3)
		tid=$(echo "$line" | sed 's/.* tid=\([0-9]*\) .*/\1/')
		temp=$(echo "$line" | sed 's/.* temp=//')
		[ $who = main ] && tid=$2
		blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' /proc/$2/task/$tid/status)
		[ "$blk" = "$temp" ] ||
			fail "$1 ($4): $who (TID $tid) has SigBlk $blk, not its call's temporary mask $temp$(rerr)"
	done
}

# ended_ok MODE OUT WHEN: both calls returned EINTR after their handler
ended_ok() {
	for who in main thread; do
		grep -q "^$who ok" $2 ||
			fail "$1 ($3): $who: $(grep "^$who ret" $2) (want EINTR, its handler run with hwant, its own mask after)"
	done
}

for mode in suspend ppoll pselect epoll; do
	start $mode $mode.out
	masks_are $mode $pid $mode.out "before the dump"
	stop_task $pid
	dump $pid $mode.img
	kill9 $pid
	chmod +x $mode.img

	# restored stopped; the signals come while it is stopped
	cp $mode.out s.out
	./$mode.img --imgcr-stop >> s.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_state $rpid T 30 || fail "$mode: restored task not stopped (state '$(state $rpid)')$(rerr)"
	masks_are $mode $rpid s.out "restored stopped"
	kill -USR1 $rpid
	kill -USR2 $rpid
	usleep 100000
	[ "$(state $rpid)" = T ] || fail "$mode: a signal woke the stopped task"
	kill -CONT $rpid
	wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "$mode (stopped): exit $RC$(rerr) $(tr '\n' '|' < s.out)"
	ended_ok $mode s.out stopped

	# restored running
	cp $mode.out r.out
	./$mode.img >> r.out 2> restore.err &
	rpid=$!
	track $rpid
	if [ $mode = epoll ]; then
		wait_exit $rpid 10
		[ "$RC" = 0 ] || fail "epoll (running): exit $RC$(rerr) $(tr '\n' '|' < r.out)"
		for who in main thread; do
			line=$(grep "^$who ret" r.out)
			want=$(echo "$line" | sed 's/.* want=\([0-9a-f]*\) .*/\1/')
			case "$line" in
			"$who ret=-1 errno=EINTR sig=0 hmask=0 mask=$want "*) ;;
			*) fail "epoll (running): $who: $line (want EINTR at once, no handler, its own mask $want)" ;;
			esac
		done
		continue
	fi
	wait_restored $rpid 30 || fail "$mode: restored task not asleep (state '$(state $rpid)')$(rerr)"
	usleep 200000
	case $mode in
	suspend) nr=130 ;;
	ppoll) nr=271 ;;
	pselect) nr=270 ;;
	esac
	for t in $(tids $rpid); do
		n=$(cut -d' ' -f1 /proc/$rpid/task/$t/syscall)
		[ "$n" = $nr ] || fail "$mode (running): thread $t in syscall $n, not $nr [$(thread_states $rpid)]$(rerr)"
	done
	masks_are $mode $rpid r.out "restored running"
	kill -USR1 $rpid
	kill -USR2 $rpid
	wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "$mode (running): exit $RC$(rerr) $(tr '\n' '|' < r.out)"
	ended_ok $mode r.out running
	info "$mode: $(grep '^main ret' r.out)"
done
# damaged temporary masks: struct imgcr_sigwait is tid, pad0 (4 bytes
# each), mask (8); the main thread's entry is the first
W=494d430d
for m in nset:$W:0:4:1 nset:$W:4:4:1 nset:$W:8:8:0x100 nset:$W:8:8:0x40000 \
	nretype:$W:494d43ff nretype:494d430b:$W tflags-40; do
	corrupt suspend.img bad.img $m || fail "corrupt $m failed"
	r=$(tryexec_expect bad.img)
	[ -z "$r" ] || fail "$m: $r"
	[ "$(cat te.errno)" = EINVAL ] || fail "$m: $(cat te.errno), want EINVAL"
done
pass
