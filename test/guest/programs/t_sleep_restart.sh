#!/bin/sh
# Sleeps the kernel restarts through its restart block come back as such
# (progs/rbsleep.c).  First a poll() with a timeout (another thread) and
# one without (the main thread), again with the timed one polling no fd,
# its array pointer TASK_SIZE_MAX (never read; 6.1's access_ok takes
# it), then futex waits
# with a relative timeout (another thread) and an absolute CLOCK_REALTIME
# one (the main thread), dumped 1.5 s into them and restored 0.5 s later: no
# EINTR, the timed one ends after the time it had left, the other when the
# first is done (each part skipped if the kernel's do_restart_poll or
# futex_wait_restart cannot be used).  The rest is skipped (the test
# passes as SKIP) if its hrtimer_nanosleep_restart cannot be used: a
# program with no signal handler whose five threads
# sleep 6 s (nanosleep; clock_nanosleep on MONOTONIC, REALTIME, BOOTTIME,
# relative; REALTIME with TIMER_ABSTIME, which the kernel re-executes
# instead), dumped 1.5 s into it (imgcr dump, which freezes it; the state
# check runs), kept away 0.5 s and restored (imgcr restore): no call returns
# EINTR, each relative sleep lasts about the time it had left at the dump
# after the restore began (not 0, not the whole 6 s again, not shortened
# by the 0.5 s the process was away), the absolute one ends at its
# deadline.  Then a
# program with a SIGUSR1 handler stopped in nanosleep: restored running it
# sleeps on (in restart_syscall, 219) until a signal, then returns EINTR
# with the time left in rem; restored stopped, a SIGUSR1 sent before SIGCONT
# makes it return EINTR at once, as the kernel does for the original.
# Then futex waits with bitsets (FUTEX_WAIT_BITSET, as pair futex: a wake
# of another bitset after the restore wakes no one), sleeps on the
# process's CPU clock (relative, on its clock_getcpuclockid() clockid, and
# TIMER_ABSTIME) while a thread burns CPU, each ending after the CPU time
# it asked for in all (the restored process's CPU clock starts again near
# 0), one on another thread's CPU clock refused by the dump, and relative
# sleeps on CLOCK_REALTIME_ALARM and _BOOTTIME_ALARM (as root; skipped
# without an RTC), which uid 1000 may not restore (EPERM).
# Last, that image with its NT_IMGCR_SLEEPS entry or the flags that call
# for it damaged one at a time (progs/corrupt.c): each is refused (EINVAL).
# The parts run at the same time (lib.sh parts --turns), each in its own
# directory, but one starts when the one before it has restored its
# process (next_part): a dump or restore beside another is slower (one
# vCPU under TCG) and the sleeps must outlast them, while a part's
# remaining sleep or burn overlaps the next part's start, dump and restore.
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

S=6000
H=8000	# the handler part's sleep (interrupted: its length costs no time)

# unusable SYMBOL: the modules logged that the kernel function SYMBOL (a
# restart block's) cannot be used (not found, or sealed by IBT)
unusable() {
	dmesg | grep -qE "$1 (not found|has no ENDBR)"
}

# rb MODE ARG OUT: rbsleep MODE ARG started as $pid (tracked), its output in OUT
rb() {
	rbsleep $1 $2 > $3 2> rb.err < /dev/null &
	pid=$!
	track $pid
}

# asleep OUT N WHAT: rbsleep $pid said "go" N times in OUT and its N
# threads are asleep (S)
asleep() {
	n=250
	until [ "$(grep -c "^go " $1)" = $2 ] && [ "$(nthreads $pid)" = $2 ] && all_state $pid S; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "$3: rbsleep did not start: $(tr '\n' '|' < $1) $(thread_states $pid)"
		usleep 20000
	done
}

# uptime_ms: up=/proc/uptime in ms (no fork, unlike nowms: a poll loop
# calls it; 10 ms steps, the same clock as nowms's CLOCK_MONOTONIC in a
# guest that never suspends)
uptime_ms() {
	read up _ < /proc/uptime
	up=$((${up%.*} * 1000 + 1${up#*.} * 10 - 1000))
}

# restore_done WHAT DIR OUT: imgcr restore -D DIR; once the rbsleep $pid
# runs its image again (or is done) the next part starts (next_part); it
# says "rbsleep done" in OUT within 20 s and the restorer exits 0.  Sets
# tx, when the last poll that had not seen the image run was (the image
# ran after it), and txlag, how long before the poll that saw it (on a
# loaded guest: 200-600 ms)
restore_done() {
	uptime_ms; tp=$up
	imgcr restore -D $2 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	n=0 rgone=
	until uptime_ms; grep -q '^rbsleep done' $3 || { e=$(readlink /proc/$pid/exe) && [ "${e##*/}" != imgcr ]; }; do
		tp=$up	# this poll began before the image ran
		n=$((n + 1))
		[ $n -lt 1000 ] || fail "$1: not restored 20 s after the restore began$(rerr)"
		# the restorer waits for its root: gone before the image ran
		# means it failed (or the rbsleep just ended: wait_line sees it)
		case "$(state $rpid)" in '' | Z) rgone=1; break ;; esac
		usleep 20000
	done 2> /dev/null
	tx=$tp
	uptime_ms; txlag=$((up - tp))
	next_part
	if [ -n "$rgone" ]; then
		wait_exit $rpid 10
		[ "$RC" = 0 ] || fail "$1: imgcr restore exit $RC before the image ran$(rerr)"
	fi
	wait_line $3 '^rbsleep done' 20 ||
		fail "$1: not done 20 s after the restore: $(tr '\n' '|' < $3)$(rerr) [$(thread_states $pid); $(cat /proc/$pid/task/*/syscall 2>/dev/null | cut -d' ' -f1,9 | tr '\n' ' '); out: $(head -c 200 restore.out); now $(nowms); $(grep -B1 -A1 hrtimer_wakeup /proc/timer_list 2>/dev/null | tr -s ' \n' ' ' | head -c 600)]"
	[ -n "$rgone" ] || wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "$1: imgcr restore exit $RC$(rerr)"
}

# left_ok NAME LINE LEN TD2 TR [TD1]: the sleep NAME of LEN ms (its result
# LINE has t0=, its start, and t1=, its end), dumped by a dump that began
# at TD1 and ended at TD2, restored by a restore that began at TR and
# whose image ran again after tx (restore_done): it lasted after TR at
# least the LEN - (TD2 - t0) ms it had left at the dump (not shortened by
# the time the process was away), and after tx less than LEN - 200 ms,
# not the whole LEN again (which would end more than LEN after tx); the
# restore's own time is not in that bound (a loaded guest may take
# seconds), only the poll's lag (txlag)
left_ok() {
	_t0=$(echo "$2" | sed 's/.* t0=\([0-9]*\) .*/\1/')
	_t1=$(echo "$2" | sed 's/.* t1=\([0-9]*\) .*/\1/')
	_lo=$(($3 - ($4 - _t0)))
	_hi=${6:+$(($3 - ($6 - _t0)))}
	_after=$((_t1 - $5))
	_run=$((_t1 - tx))
	info "$1: $_after ms after the restore began, $_run ms after the last poll before its image ran (poll lag $txlag ms; left at the dump: $_lo..$_hi ms)"
	[ "$_after" -ge $((_lo - 100)) ] ||
		fail "$1: slept $_after ms after the restore began, less than the $_lo ms left at the dump"
	[ "$_run" -lt $(($3 - 200)) ] ||
		fail "$1: slept $_run ms after the last poll before the restored image ran (poll lag $txlag ms), about the whole $3 ms again"
}

# pair MODE SYMBOL TIMED WANT WAITER WANT: rbsleep MODE, whose thread
# TIMED waits with a timeout (its result line must match WANT, after
# about the time it had left) and whose main thread WAITER waits until
# TIMED is done (WANT), dumped 1.5 s into it and restored 0.5 s later; skipped
# if the kernel's restart function SYMBOL cannot be used
pair() {
	if unusable $2; then
		info "$1: this kernel's $2 is not usable: $1 part skipped"
		return
	fi
	P=6000
	rb $1 $P out
	asleep out 2 $1
	usleep 1500000
	imgcr dump -t $pid -D d 2> dump.err || fail "$1: dump: $(cat dump.err)"
	td2=$(nowms)
	wait_dumped_gone $pid
	usleep 500000
	tr=$(nowms)
	restore_done $1 d out
	line=$(grep "^$3 ret=" out)
	case "$line" in
	"$3 ret=$4 "*" early=0") ;;
	*) fail "$3: $line (want ret=$4 after its whole timeout, no EINTR)" ;;
	esac
	left_ok $3 "$line" $P $td2 $tr
	line=$(grep "^$5 ret=" out)
	case "$line" in
	"$5 ret=$6 "*) ;;
	*) fail "$5: $line (want ret=$6: woken by $3, no EINTR)" ;;
	esac
}
part_poll() { pair poll do_restart_poll pollt "0 errno=0" pollw "1 errno=0"; }
# poll0: where the kernel takes such a pointer (poll() checks
# access_ok(ufds, 0): 6.1 takes TASK_SIZE_MAX itself, 6.12 does not; with
# 5-level paging 6.12 takes 0x7ffffffff000, an ordinary address there)
part_poll0() {
	p0=$(rbsleep poll0probe 0)
	if [ "${p0#poll0probe ptr=}" != "$p0" ]; then
		info "poll0: $p0"
		pair poll0 do_restart_poll pollt "0 errno=0" pollw "1 errno=0"
	else
		info "poll0: this kernel takes no pointer past user space ($p0): part skipped"
	fi
}
part_futex() {
	pair futex futex_wait_restart futext "-1 errno=ETIMEDOUT" futexw "0 errno=0"
}
# with bitsets: a wake of another bitset after the restore wakes no one
part_futexb() {
	pair futexb futex_wait_restart futext "-1 errno=ETIMEDOUT miss=0" futexw "0 errno=0"
}

# cpu: sleeps on the process's CPU clock (relative, on
# clock_getcpuclockid(getpid()), TIMER_ABSTIME) of C ms while a thread
# burns CPU, dumped after 1.5 s of it: each ends after C ms of burned CPU
# in all (not EINTR, not early, not C again after the restore, whose
# process's CPU clock starts again near 0)
part_cpu() {
	next_part	# cputhr's refusal does not mind a dump beside it
	if unusable posix_cpu_nsleep_restart; then
		info "cpu: this kernel's posix_cpu_nsleep_restart is not usable: part skipped"
	else
		C=3000
		rb cpu $C cout
		wait_line cout '^burn 1500' 60 || fail "cpu: rbsleep did not burn 1.5 s of CPU: $(tr '\n' '|' < cout)"
		[ "$(grep -c '^go ' cout)" = 3 ] || fail "cpu: not all asleep: $(tr '\n' '|' < cout)"
		grep -q ' ret=' cout && fail "cpu: a sleep ended before the dump: $(tr '\n' '|' < cout)"
		imgcr dump -t $pid -D dcpu 2> dump.err || fail "cpu: dump: $(cat dump.err)"
		wait_dumped_gone $pid
		imgcr restore -D dcpu > restore.out 2> restore.err &
		rpid=$!
		track $rpid
		wait_line cout '^rbsleep done' 60 ||
			fail "cpu: not done 60 s after the restore: $(tr '\n' '|' < cout)$(rerr)"
		wait_exit $rpid 10
		[ "$RC" = 0 ] || fail "cpu: imgcr restore exit $RC$(rerr)"
		for name in cpurel cpupid cpuabs; do
			line=$(grep "^$name ret=" cout)
			case "$line" in
			"$name ret=0 errno=0 burned="*) ;;
			*) fail "cpu: $name: '$line' (want ret=0: no EINTR)" ;;
			esac
			b=${line##*burned=}
			info "cpu: $name: $b ms of CPU burned while it slept ($C wanted)"
			[ "$b" -ge $((C - 300)) ] || fail "cpu: $name: woke after $b ms of CPU, before $C"
			[ "$b" -lt $((C + 700)) ] || fail "cpu: $name: woke after $b ms of CPU, about $C again after the restore"
		done
	fi
}

# cputhr: a sleep on another thread's CPU clock is refused at the dump,
# naming it, and the process sleeps on
part_cputhr() {
	if ! unusable posix_cpu_nsleep_restart; then
		rb cputhr 60000 tout
		wait_line tout '^burn 500' 60 || fail "cputhr: rbsleep did not start: $(tr '\n' '|' < tout)"
		imgcr dump -t $pid -D dthr > dump.out 2> dump.err &&
			fail "cputhr: a sleep on another thread's CPU clock was dumped"
		grep -q "another thread's CPU clock" dump.err ||
			fail "cputhr: the refusal does not name the clock: $(head -c 300 dump.err | tr '\n' '|')"
		info "cputhr: $(grep -m1 "CPU clock" dump.err)"
		usleep 200000
		[ -d /proc/$pid ] && ! grep -q '^cputhr ret' tout ||
			fail "cputhr: the sleep did not go on after the refused dump: $(tr '\n' '|' < tout)"
		kill -9 $pid
	fi
}

# alarm: relative sleeps on CLOCK_REALTIME_ALARM (rmtp) and
# CLOCK_BOOTTIME_ALARM, as root, dumped 1.5 s into A ms: uid 1000's exec of
# the image is refused (EPERM, CAP_WAKE_ALARM); root's restore: each lasts
# the time it had left at the dump after the restore began, no EINTR
part_alarm() {
	if unusable alarm_timer_nsleep_restart; then
		info "alarm: this kernel's alarm_timer_nsleep_restart is not usable: part skipped"
	elif a=$(rbsleep alarm 0 2>&1); [ -n "$a" ] && [ "${a#alarm ret=-1}" != "$a" ]; then
		info "alarm: $a: part skipped"
	else
		A=6000
		rb alarm $A aout
		asleep aout 2 alarm
		usleep 1500000
		imgcr dump -t $pid -D dal 2> dump.err || fail "alarm: dump: $(cat dump.err)"
		td2=$(nowms)
		wait_dumped_gone $pid
		# uid 1000's exec of the image: the restored threads would not have
		# CAP_WAKE_ALARM, refused before the point of no return
		chmod 755 .. . && chmod +x dal dal/core-$pid.img	# uid 1000 reaches it
		dmesg_mark
		t0=$(nowms)
		timeout -s KILL 10 runas 1000 1000 tryexec ./dal/core-$pid.img > te.out 2>&1
		grep -q 'execve failed: EPERM' te.out ||
			fail "alarm: exec as uid 1000: not refused with EPERM: $(tr '\n' '|' < te.out)"
		dmesg_since | grep -q 'alarm clock.*CAP_WAKE_ALARM' ||
			fail "alarm: exec as uid 1000: kernel log: $(dmesg_since | tail -n 3 | tr '\n' '|')"
		t0=$((1000 - ($(nowms) - t0)))
		[ "$t0" -le 0 ] || usleep $((t0 * 1000))
		tr=$(nowms)
		restore_done alarm dal aout
		for name in alreal alboot; do
			line=$(grep "^$name ret=" aout)
			case "$line" in
			*" ret=0 errno=0 "*" early=0") ;;
			*) fail "alarm: $name: '$line' (want ret=0, no EINTR, not early)" ;;
			esac
			left_ok "alarm: $name" "$line" $A $td2 $tr
		done
	fi
}

# plain: no handler
part_plain() {
	unusable hrtimer_nanosleep_restart && return
	rb plain $S out
	asleep out 5 plain
	usleep 1500000
	# imgcr dump freezes the tree itself (ptrace): a task stopped by SIGSTOP
	# would be restored stopped
	td1=$(nowms)
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	td2=$(nowms)
	wait_dumped_gone $pid
	grep -qE '^[a-z]+ ret=' out && fail "a call returned before the dump: $(tr '\n' '|' < out)"
	usleep 500000
	tr=$(nowms)
	restore_done plain d out
	for name in nano mono real boot abs; do
		line=$(grep "^$name ret=" out)
		[ -n "$line" ] || fail "$name: no result: $(tr '\n' '|' < out)"
		case "$line" in
		*" ret=0 errno=0 "*" early=0") ;;
		*) fail "$name: $line (a program without a handler never sees EINTR from a sleep)" ;;
		esac
		[ "$name" = abs ] && continue
		left_ok $name "$line" $S $td2 $tr $td1
	done
}

# handler_eintr WHEN OUT OP: the restored handler $rpid exits 0, its sleep
# returned EINTR after the handler ran (line in OUT) with rem_ms above 1 s
# and OP (-lt, -le) the H - 2000 ms left after the 2 s it slept before
handler_eintr() {
	wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "handler ($1): exit $RC$(rerr)"
	line=$(grep '^handler ' $2)
	case "$line" in
	"handler ret=-1 errno=EINTR handled=1 rem_ms="*) ;;
	*) fail "handler ($1): $line" ;;
	esac
	rem=$(echo "$line" | sed 's/.* rem_ms=\([0-9]*\) .*/\1/')
	[ "$rem" -gt 1000 ] && [ "$rem" $3 $((H - 2000)) ] ||
		fail "handler ($1): rem $rem ms, not the time left ($line)"
}

part_handler() {
	unusable hrtimer_nanosleep_restart && return
	# handler, restored running, then SIGUSR1
	rbsleep handler $H > hout &
	pid=$!
	track $pid
	wait_line hout '^go' 10 || fail "rbsleep handler did not start"
	wait_state $pid S 10 || fail "rbsleep handler not asleep"
	usleep 2000000
	stop_task $pid
	dump $pid h.img
	kill9 $pid
	chmod +x h.img
	cp hout hout2
	./h.img >> hout2 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 || fail "handler: restored task not asleep (state '$(state $rpid)')$(rerr)"
	usleep 300000
	grep -q '^handler ' hout2 && fail "handler: the sleep returned without a signal: $(grep '^handler' hout2)"
	nr=$(cut -d' ' -f1 /proc/$rpid/syscall)
	[ "$nr" = 219 ] || fail "handler: restored task in syscall $nr, not restart_syscall (219)"
	kill -USR1 $rpid
	handler_eintr running hout2 -lt
	info "handler (running): $line"

	# handler, restored stopped, SIGUSR1 then SIGCONT
	cp hout hout3
	./h.img --imgcr-stop >> hout3 2> restore.err &
	rpid=$!
	track $rpid
	wait_state $rpid T 30 || fail "handler: restored task not stopped (state '$(state $rpid)')$(rerr)"
	kill -USR1 $rpid
	usleep 100000
	[ "$(state $rpid)" = T ] || fail "handler (stopped): SIGUSR1 woke the stopped task"
	kill -CONT $rpid
	# rem is what the kernel wrote when SIGSTOP interrupted the original
	handler_eintr stopped hout3 -le
	next_part
	# damaged sleeps: struct imgcr_sleep is tid, clock, flags, nfds (4 bytes
	# each), rmtp, remaining_ns (8 each), in images with no futex bitset; h.img's
	# has rmtp (flags 1).  Also: a bitset flag (0x20) in such an entry, the
	# thread CPU clock (3) or a raw CPU clockid (-6: the process's, -2: pid 0's
	# thread clock), none of which an image names
	N=494d430c	# NT_IMGCR_SLEEPS
	for m in nset:$N:4:4:5 nset:$N:4:4:-1 nset:$N:4:4:0 nset:$N:12:4:1 \
		nset:$N:8:4:3 nset:$N:8:4:2 nset:$N:8:4:32 nset:$N:8:4:10 nset:$N:16:8:0 nset:$N:16:8:0xffff888000000000 \
		nset:$N:24:8:0x8000000000000000 nset:$N:0:4:1 nretype:$N:494d43ff \
		nset:$N:8:4:0x21 nset:$N:8:4:0x28 nset:$N:4:4:3 nset:$N:4:4:-6 \
		nset:$N:4:4:-2 \
		nretype:494d430b:$N tflags-20 tflags+2 tflags+4; do
		corrupt h.img bad.img $m || fail "corrupt $m failed"
		r=$(tryexec_expect bad.img)
		[ -z "$r" ] || fail "$m: $r"
		[ "$(cat te.errno)" = EINVAL ] || fail "$m: $(cat te.errno), want EINVAL"
	done
}

nano=1
unusable hrtimer_nanosleep_restart && nano=
parts --turns part_poll part_poll0 part_futex part_futexb part_alarm part_plain part_handler \
	part_cpu part_cputhr
if [ -z "$nano" ]; then
	pass "SKIP: this kernel's hrtimer_nanosleep_restart is not usable (dmesg): the nanosleep parts skipped"
	exit 0
fi
pass
