#!/bin/sh
# A signal sent to a restored task before it runs again is handled as the
# kernel handles one sent to the stopped original (progs/intrcall.c): the
# main thread sits in pause() (-ERESTARTNOHAND) with a SIGUSR1 handler,
# the other thread in read() of a FIFO (-ERESTARTSYS) with an SA_RESTART
# SIGUSR2 handler.  Stopped, dumped, restored stopped (--imgcr-stop: no
# user instruction runs), SIGUSR1 and SIGUSR2 sent, then SIGCONT: pause()
# returns -1 EINTR after its handler (not restarted), the read goes on and
# returns what is written afterwards.  Outside, before the signals: each
# restored thread's /proc/PID/task/TID/syscall (number, arguments, sp,
# ip) is the original's.  The same image restored running, no signal:
# both calls go on (restarted), signals then answer the same.  Signals
# sent to the stopped original before its dump (pending in the image)
# answer the same too.  A control run without a dump gives the kernel's
# own answer first.
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

mkfifo in.fifo || fail "mkfifo"
exec 3<> in.fifo

# syscalls PID: each thread's /proc/PID/task/TID/syscall, main thread first
syscalls() {
	cat "/proc/$1/task/$1/syscall"
	for _t in $(tids "$1"); do
		[ "$_t" = "$1" ] || cat "/proc/$1/task/$_t/syscall"
	done
}

# sleeping PID: both threads asleep in their calls
sleeping() {
	_n=250
	until [ "$(nthreads "$1")" = 2 ] && all_state "$1" S; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || fail "intrcall $1 not asleep: $(thread_states "$1")"
		usleep 20000
	done
}

# signal_and_check PID FILE WHAT [stopped|pending]: the signals (while PID
# is stopped, then SIGCONT; pending: none, they came with the image), then
# the answers in FILE.
signal_and_check() {
	if [ "${4:-}" != pending ]; then
		kill -USR1 "$1" && kill -USR2 "$1" || fail "$3: kill"
	fi
	if [ "${4:-}" = stopped ]; then
		usleep 100000
		all_state "$1" tT || fail "$3: a signal woke the stopped task: $(thread_states "$1")"
		kill -CONT "$1"
	fi
	wait_line "$2" '^pause ' 10 ||
		fail "$3: pause() did not return after its handler (restarted?): $(tr '\n' '|' < "$2")$(rerr)"
	grep -q '^pause -1 Interrupted system call handler=1$' "$2" ||
		fail "$3: $(grep '^pause' "$2")"
	usleep 200000
	grep -q '^read ' "$2" && fail "$3: read() returned before any data: $(grep '^read ' "$2")"
	echo data >&3
	wait_exit "$1" 10
	[ "$RC" = 0 ] || fail "$3: exit $RC: $(tr '\n' '|' < "$2")$(rerr)"
	grep -q '^read 4 data handler=1$' "$2" || fail "$3: $(grep '^read ' "$2")"
	grep -q '^intrcall ok$' "$2" || fail "$3: $(tr '\n' '|' < "$2")"
}

# Control: the original kernel's answer, without a dump.
intrcall <&3 > ref &
p=$!
track $p
wait_line ref '^ready' 10 || fail "control intrcall did not start"
sleeping $p
stop_all $p
signal_and_check $p ref "control" stopped

intrcall <&3 > out &
pid=$!
track $pid
wait_line out '^ready' 10 || fail "intrcall did not start"
sleeping $pid
stop_all $pid
syscalls $pid > before
dump $pid i.img
kill9 $pid

chmod +x i.img
# Restored running, no signal: both calls go on (the kernel restarts
# them, as for the original continued), then signals answer as usual.
cp out out2
./i.img <&3 >> out2 2> restore.err &
rpid=$!
track $rpid
_n=500
until [ "$(nthreads $rpid)" = 2 ] && all_state $rpid S; do
	_n=$((_n - 1))
	[ "$_n" -gt 0 ] || fail "restored (running): not asleep: $(thread_states $rpid)$(rerr)"
	usleep 20000
done
usleep 300000
all_state $rpid S || fail "restored (running): left its calls: $(thread_states $rpid)$(rerr)"
grep -qE '^(pause|read) ' out2 && fail "restored (running): a call returned: $(tr '\n' '|' < out2)"
syscalls $rpid > after
cmp -s before after ||
	fail "restored (running): calls before '$(tr '\n' '|' < before)' after '$(tr '\n' '|' < after)'"
signal_and_check $rpid out2 "restored (running)"

# Restored stopped: no user instruction runs before the signals.
./i.img --imgcr-stop <&3 >> out 2> restore.err &
rpid=$!
track $rpid
_n=1500
until [ "$(nthreads $rpid)" = 2 ] && all_state $rpid tT; do
	_n=$((_n - 1))
	[ "$_n" -gt 0 ] || fail "restored task not stopped: $(thread_states $rpid)$(rerr)"
	usleep 20000
done
syscalls $rpid > after
signal_and_check $rpid out "restored (stopped)" stopped
cmp -s before after ||
	fail "restored (stopped): calls before '$(tr '\n' '|' < before)' after '$(tr '\n' '|' < after)'"
info "calls: $(cut -d' ' -f1 after | tr '\n' ' ')"

# Signals sent to the stopped original before the dump: pending in the
# image, delivered before the restored task runs.
intrcall <&3 > out3 &
pid=$!
track $pid
wait_line out3 '^ready' 10 || fail "intrcall (pending) did not start"
sleeping $pid
stop_all $pid
kill -USR1 $pid && kill -USR2 $pid || fail "kill"
usleep 100000
dump $pid j.img
kill9 $pid
chmod +x j.img
./j.img <&3 >> out3 2> restore.err &
rpid=$!
track $rpid
signal_and_check $rpid out3 "restored with the signals pending" pending
pass
