#!/bin/sh
# Threads blocked in system calls across a dump and restore
# (progs/mtblock.c): 16 threads each block in one call -- a condition
# variable, raw futex waits (without and with a timeout), a mutex another
# thread holds, read on a pipe, poll (with and without a timeout),
# epoll_wait, nanosleep, clock_nanosleep (absolute), sem_wait,
# pthread_join of a live thread, a robust mutex another thread holds, and
# pause -- and main waits in sigwaitinfo.  Before the dump, from outside:
# every thread is asleep (S) in the expected syscall (/proc/PID/task/TID/
# syscall).  The process is stopped, dumped, killed and restored (under
# "mtblock fds", which recreates the pipes and the epoll instance at the
# same fd numbers: an image carries no fds).  After the restore, from
# outside: exactly the old TIDs, each with its old comm, SigBlk and
# syscall, all asleep again, none woken by itself.  Then SIGUSR1: main
# wakes the threads one by one (holder exits -> mutex, pipe writes, joinee
# exits -> joiner's pthread_join, the robust owner pthread_exit()s holding
# the mutex -> EOWNERDEAD, pthread_kill -> handler in that thread) and the
# sleepers finish their time.  Every thread checks its TID, name, mask,
# altstack, robust list, clear_child_tid, rseq and its own case, and that
# the calls the kernel restarts without a restart block were re-executed
# (no EINTR); the test wants every "ok NAME tid OLD-TID" line and exit 0.
# Skipped (passes as SKIP) if the modules logged that the kernel's
# hrtimer_nanosleep_restart cannot be used (not found, or sealed by IBT):
# the sleepers would then see EINTR.
# timeout: 290
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

if dmesg | grep -qE "hrtimer_nanosleep_restart (not found|has no ENDBR)"; then
	pass "SKIP: this kernel's hrtimer_nanosleep_restart is not usable (dmesg): the sleepers' restarts cannot be restored"
	exit 0
fi

# The sleepers (nanosleep, clock_nanosleep) must still be asleep when the
# process is stopped and after the restore's checks (asserted unless more
# than SLEEP_MS - 3 s went by since ready): generous for TCG (on a loaded
# 6.1 guest: 6.5 s from ready to stopped, dump and restore 0.5 s).  They
# finish ~SLEEP_MS after they started (then wait for main's go to report),
# after the restore; the test waits for them.
SLEEP_MS=18000
# NAME:SYSCALL-NR (x86_64): futex 202, read 0, poll 7, epoll_wait 232,
# nanosleep 35, clock_nanosleep 230, pause 34; main: rt_sigtimedwait 128.
CASES="cond:202 futex:202 futex_to:202 mholder:202 mutex:202 pipe:0 poll:7
poll_inf:7 epoll:232 nanosleep:35 clock_ns:230 joinee:202 joiner:202
rowner:202 robust:202 kill:34"
MAIN_SYS=128

# wait_blocked PID TID NR: thread TID is asleep (S) in syscall NR (30 s).
wait_blocked() {
	_n=1500
	while [ "$_n" -gt 0 ]; do
		_s=$(cat "/proc/$1/task/$2/stat" 2>/dev/null) || return 1
		_s=${_s##*) }
		_c=$(cut -d' ' -f1 "/proc/$1/task/$2/syscall" 2>/dev/null)
		[ "${_s%% *}" = S ] && [ "$_c" = "$3" ] && return 0
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# norm SNAP: SNAP.n, SNAP without main's SigBlk (sigwaitinfo unblocks the
# signals it waits for while it waits: the stopped main, out of the call,
# blocks SIGUSR1, the restored one, back in it, does not) and without the
# sleepers' syscall (once their time is over, which may be before the
# release, they wait on a futex for main's go to report).  The timed futex
# wait and both polls come back with their restart blocks: restored, they
# wait in restart_syscall (219), which stands for their own call.
norm() {
	sed -e 's/^\(MAIN comm=[^ ]*\) blk=[0-9a-f]*/\1 blk=-/' \
		-e "s/^\($t_ns .*\) syscall=[0-9]*\$/\1 syscall=-/" \
		-e "s/^\($t_cn .*\) syscall=[0-9]*\$/\1 syscall=-/" \
		-e "s/^\($t_fto .*\) syscall=219\$/\1 syscall=202/" \
		-e "s/^\($t_po .*\) syscall=219\$/\1 syscall=7/" \
		-e "s/^\($t_poi .*\) syscall=219\$/\1 syscall=7/" "$1" > "$1.n"
}

# show_out: the program's output after the "blocked" lines, on the console
# (before a failure: the out file is gone with the test's directory).
show_out() { grep -v '^blocked ' out | head -n 40 | sed 's/^/  out: /'; }

# woken FILE: the lines that say a thread woke (there must be none before
# the release).
woken() { grep -E '^(ok|BAD|release|mtblock)' "$1" | head -n 3 | tr '\n' '|'; }

mtblock fds mtblock run $SLEEP_MS > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready ' 60 || fail "mtblock did not get ready: $(tail -n 2 out | tr '\n' '|')"
grep -q "^ready $pid\$" out || fail "ready line '$(grep '^ready' out)', want pid $pid"

otids=""
for c in $CASES; do
	n=${c%%:*}
	t=$(sed -n "s/^blocked $n tid \([0-9]*\)\$/\1/p" out)
	[ -n "$t" ] || fail "no 'blocked $n' line: $(tail -n 2 out | tr '\n' '|')"
	otids="$otids $t"
done
otids=${otids# }
t_ns=$(sed -n "s/^blocked nanosleep tid //p" out)
t_cn=$(sed -n "s/^blocked clock_ns tid //p" out)
t_fto=$(sed -n "s/^blocked futex_to tid //p" out)
t_po=$(sed -n "s/^blocked poll tid //p" out)
t_poi=$(sed -n "s/^blocked poll_inf tid //p" out)
t_ready=$(now_ms)
[ "$(echo $otids | tr ' ' '\n' | sort -u | wc -l)" = 16 ] || fail "16 distinct TIDs wanted: $otids"
[ "$(tids $pid | tr '\n' ' ')" = "$(echo $pid $otids | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
	fail "/proc/$pid/task is '$(tids $pid | tr '\n' ' ')', program says $pid $otids"

# From outside: each thread asleep in its call, with its name.
wchans=""
for c in $CASES; do
	n=${c%%:*}
	nr=${c#*:}
	t=$(sed -n "s/^blocked $n tid //p" out)
	wait_blocked $pid $t $nr ||
		fail "thread $n ($t) not asleep in syscall $nr: state $(thread_states $pid | tr ' ' '\n' | grep "^$t:"), syscall '$(cat /proc/$pid/task/$t/syscall 2>/dev/null)'"
	[ "$(cat /proc/$pid/task/$t/comm)" = "b-$n" ] || fail "thread $t comm '$(cat /proc/$pid/task/$t/comm)', want b-$n"
	wchans="$wchans $n=$(cat /proc/$pid/task/$t/wchan 2>/dev/null)"
done
wait_blocked $pid $pid $MAIN_SYS || fail "main not asleep in sigwaitinfo: syscall '$(cat /proc/$pid/syscall)'"
info "wchan:$wchans"
usleep 1000000
w=$(woken out)
[ -z "$w" ] || fail "a thread woke up before the dump: $w"

stop_all $pid
snap_threads $pid before.snap "comm blk syscall"
[ "$(wc -l < before.snap)" = 17 ] || fail "before: $(wc -l < before.snap) threads"
grep -q "^MAIN comm=mtblock blk=.* syscall=$MAIN_SYS\$" before.snap || fail "main stopped: $(grep MAIN before.snap)"
for c in $CASES; do
	n=${c%%:*}
	t=$(sed -n "s/^blocked $n tid //p" out)
	grep -q "^$t comm=b-$n blk=.* syscall=${c#*:}\$" before.snap ||
		fail "stopped thread $n: '$(grep "^$t " before.snap)', want comm=b-$n syscall=${c#*:}"
done
# Still nobody woke (the sleepers did not finish before the stop).
w=$(woken out)
[ -z "$w" ] || fail "a thread woke up before the stop (guest too slow for SLEEP_MS=$SLEEP_MS?): $w"
stop_ms=$(( $(now_ms) - t_ready ))
t0=$(now_ms)
dump $pid b.img
dump_ms=$(( $(now_ms) - t0 ))
kill9 $pid
left=$(tids_in_use "$otids")
[ -z "$left" ] || fail "TIDs still in use after kill: $left"

chmod +x b.img
t0=$(now_ms)
mtblock fds ./b.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_tids $rpid "$otids" 60 ||
	fail "($WAIT_WHY) restored process has threads '$(tids $rpid | tr '\n' ' ')', want $rpid $otids: $(tail -n 1 out)$(rerr)"
restore_ms=$(( $(now_ms) - t0 ))
for t in $otids; do
	tg=$(sed -n 's/^Tgid:[[:space:]]*//p' /proc/$rpid/task/$t/status)
	[ "$tg" = "$rpid" ] || fail "thread $t has Tgid $tg, want $rpid"
done
# Every thread back asleep in the same call (restarted, or retried after
# EINTR), same name and mask.
norm before.snap
n=30
while :; do
	snap_threads $rpid after.snap "comm blk syscall"
	norm after.snap
	d=$(diff_snaps before.snap.n after.snap.n) || true
	[ -z "$d" ] && all_state $rpid S && break
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "threads differ after restore (comm/SigBlk/syscall): $d [states: $(thread_states $rpid)] [out: $(tail -n 3 out | tr '\n' '|')]$(rerr)"
	sleep 1
done
# The sleepers still asleep in their calls (nanosleep 35, clock_nanosleep
# 230, or restart_syscall 219 standing for them), not in the futex they
# wait on once their time is over: asserted while it is well within
# SLEEP_MS of ready (they began their sleeps before it), else (a guest too
# slow) said only.
asleep=$(for t in $t_ns $t_cn; do cut -d' ' -f1 /proc/$rpid/task/$t/syscall 2>/dev/null; done | tr '\n' ' ')
checked_ms=$(( $(now_ms) - t_ready ))
case "$asleep" in
"35 230 " | "219 230 " | "35 219 " | "219 219 ") ;;
*)	[ "$checked_ms" -ge $((SLEEP_MS - 3000)) ] ||
		fail "the sleepers are not asleep after the restore's checks (${checked_ms} ms after ready, they sleep $SLEEP_MS): syscalls '$asleep', want 35|219 230|219 [states: $(thread_states $rpid)]"
	info "the sleepers' time was over before the restore's checks ended (${checked_ms} ms after ready): syscalls '$asleep'" ;;
esac
w=$(woken out)
[ -z "$w" ] || fail "a thread woke up by itself after the restore: $w$(rerr)"

kill -USR1 $rpid
wait_exit $rpid $((SLEEP_MS / 1000 + 75))
bad=$(grep -E '^BAD' out | head -n 4 | tr '\n' '|')
[ "$RC" = 0 ] && [ -z "$bad" ] || show_out
[ "$RC" = 0 ] || fail "restored mtblock exit $RC: ${bad:-$(tail -n 2 out | tr '\n' '|')}$(rerr)"
[ -z "$bad" ] && grep -q "^mtblock ok pid=$rpid checks=17\$" out ||
	fail "no 'mtblock ok pid=$rpid checks=17': ${bad:-$(tail -n 1 out)}"
for c in $CASES; do
	n=${c%%:*}
	t=$(sed -n "s/^blocked $n tid //p" out)
	grep -q "^ok $n tid $t eintr=" out || fail "no 'ok $n tid $t' line: $(grep -E "^(ok|BAD) $n[ :]" out)"
done
grep -q "^ok main pid=$rpid " out || fail "no 'ok main pid=$rpid'"
eintrs=$(sed -n 's/^ok \([a-z_]*\) tid [0-9]* eintr=\([1-9][0-9]*\).*/\1=\2/p' out | tr '\n' ' ')
info "ready->stopped ${stop_ms} ms, dump ${dump_ms} ms ($(size_of b.img) bytes), restore ${restore_ms} ms, sleepers' syscalls after the checks (${checked_ms} ms after ready): ${asleep}; EINTR seen after restore: ${eintrs}main=$(sed -n 's/^ok main .*sigwait_eintr=//p' out); $(sed -n 's/^ok nanosleep .*\(slept_ms=[0-9]*\).*/nanosleep \1/p' out)"
pass "16 blocked threads resumed with their TIDs, every wake-up arrived"
