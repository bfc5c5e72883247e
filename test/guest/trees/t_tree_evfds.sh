#!/bin/sh
# eventfd, signalfd and timerfd across dump + restore (test/progs/evfds.c):
# a parent and a child share an eventfd (counter 7); the parent also has a
# semaphore eventfd (3), a signalfd for SIGUSR1 with a SIGUSR1 queued, a
# periodic timerfd (200 ms, unread) and a one-shot one (8 s), three timerfds
# armed with TFD_TIMER_ABSTIME (CLOCK_REALTIME one-shot 11 s ahead;
# CLOCK_MONOTONIC every 300 ms, unread; CLOCK_REALTIME with
# TFD_TIMER_CANCEL_ON_SET 60 s ahead), and an inotify instance watching w/
# (its first event read before the dump).  The fdinfo is the same from outside
# before the dump and after the restore (counters, sigmask, clock, settime
# flags, interval, the inotify watch; the eventfd still one between both
# tasks).  The dump says nothing; the test waits 3 s between dump and restore, which must not count.  Then the
# restored program checks what it reads (counters, the signal, the unread
# ticks and periods, when each one-shot fires, the absolute timers' time
# left, ECANCELED after a clock_settime, that the creation of w/after, made by the test after the restore,
# is reported under the same wd): all "ok".
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# fdi PID FD KEY: the value of KEY in /proc/PID/fdinfo/FD, spaces trimmed
fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# outside WHEN: the fdinfo checks, from outside the tree
outside() {
	[ "$(fdi $pid $efd eventfd-count)" = 7 ] || fail "$1: eventfd count '$(fdi $pid $efd eventfd-count)', want 7"
	[ "$(fdi $pid $sem eventfd-count)" = 3 ] || fail "$1: semaphore count '$(fdi $pid $sem eventfd-count)', want 3"
	[ "$(fdi $pid $efd eventfd-id)" = "$(fdi $kid $efd eventfd-id)" ] ||
		fail "$1: parent and child eventfds differ: $(fdi $pid $efd eventfd-id) vs $(fdi $kid $efd eventfd-id)"
	[ "$(fdi $pid $sig sigmask)" = 0000000000000200 ] || fail "$1: sigmask '$(fdi $pid $sig sigmask)', want SIGUSR1's 0000000000000200"
	[ "$(fdi $pid $tper clockid)" = 1 ] || fail "$1: periodic timerfd clockid '$(fdi $pid $tper clockid)', want 1"
	[ "$(fdi $pid $tper it_interval)" = "(0, 200000000)" ] || fail "$1: periodic interval '$(fdi $pid $tper it_interval)'"
	[ "$(fdi $pid $tone it_interval)" = "(0, 0)" ] || fail "$1: one-shot interval '$(fdi $pid $tone it_interval)'"
	case "$(fdi $pid $tone it_value)" in
	"(0, 0)" | "") fail "$1: one-shot timerfd not armed: '$(fdi $pid $tone it_value)'" ;;
	esac
	# the absolute timers: clock, settime flags (TFD_TIMER_ABSTIME 01, CANCEL_ON_SET 02), interval
	[ "$(fdi $pid $trt clockid) $(fdi $pid $trt 'settime flags') $(fdi $pid $trt it_interval)" = "0 01 (0, 0)" ] ||
		fail "$1: CLOCK_REALTIME absolute timerfd: clockid/settime flags/interval '$(fdi $pid $trt clockid) $(fdi $pid $trt 'settime flags') $(fdi $pid $trt it_interval)', want '0 01 (0, 0)'"
	[ "$(fdi $pid $tam clockid) $(fdi $pid $tam 'settime flags') $(fdi $pid $tam it_interval)" = "1 01 (0, 300000000)" ] ||
		fail "$1: CLOCK_MONOTONIC absolute timerfd: '$(fdi $pid $tam clockid) $(fdi $pid $tam 'settime flags') $(fdi $pid $tam it_interval)', want '1 01 (0, 300000000)'"
	[ "$(fdi $pid $tcs clockid) $(fdi $pid $tcs 'settime flags') $(fdi $pid $tcs it_interval)" = "0 03 (0, 0)" ] ||
		fail "$1: cancel-on-set timerfd: '$(fdi $pid $tcs clockid) $(fdi $pid $tcs 'settime flags') $(fdi $pid $tcs it_interval)', want '0 03 (0, 0)'"
	for x in $trt $tcs; do
		case "$(fdi $pid $x it_value)" in
		"(0, 0)" | "") fail "$1: absolute timerfd $x not armed: '$(fdi $pid $x it_value)'" ;;
		esac
	done
	grep -q "^inotify wd:$wd .*mask:100 " /proc/$pid/fdinfo/$ino ||
		fail "$1: inotify watch: $(grep inotify /proc/$pid/fdinfo/$ino | cut -c1-80 | tr '\n' '|'), want wd $wd mask 100"
	info "$1: periodic ticks $(fdi $pid $tper ticks), one-shot left $(fdi $pid $tone it_value), realtime absolute left $(fdi $pid $trt it_value), cancel-on-set left $(fdi $pid $tcs it_value)"
}

evfds > out 2> evfds.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "evfds did not start: $(cat out evfds.err | tr '\n' '|')"
set -- $(sed -n 's/^fds efd=\([0-9]*\) sem=\([0-9]*\) sig=\([0-9]*\) tper=\([0-9]*\) tone=\([0-9]*\) child=\([0-9]*\)$/\1 \2 \3 \4 \5 \6/p' out)
efd=$1 sem=$2 sig=$3 tper=$4 tone=$5 kid=$6
track $kid
set -- $(sed -n 's/^more trt=\([0-9]*\) tam=\([0-9]*\) tcs=\([0-9]*\) ino=\([0-9]*\) wd=\([0-9]*\)$/\1 \2 \3 \4 \5/p' out)
[ $# = 5 ] || fail "no 'more' line: $(grep '^more' out)"
trt=$1 tam=$2 tcs=$3 ino=$4 wd=$5
sleep 2
outside "before the dump"
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
[ -s dump.err ] && fail "the dump said something: $(tr '\n' '|' < dump.err)"
for k in eventfd signalfd timerfd; do
	tree_fields d/tree | grep -q "^file [0-9]* $k " || fail "no $k record in the tree: $(grep '^file' d/tree | tr '\n' '|')"
done
[ "$(tree_fields d/tree | grep -c "^fd [0-9]* $efd $(tree_fields d/tree | sed -n "s/^fd $pid $efd \([0-9]*\) .*/\1/p") ")" = 2 ] ||
	fail "the shared eventfd is not one file record: $(grep '^fd' d/tree | tr '\n' '|')"
imgcr show d > show.txt || fail "imgcr show DIR failed"
grep -q "eventfd count 7" show.txt && grep -q "eventfd count 3 semaphore" show.txt &&
	grep -q "signalfd sigmask 0x200" show.txt && grep -q "timerfd clock 1 .*interval 0.200000000 s" show.txt ||
	fail "imgcr show DIR: $(grep 'fd [0-9]*:' show.txt | tr '\n' '|')"

sleep 3	# not counted by any timer
imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $pid $kid
outside "after the restore"
touch w/after restored
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep -E 'BAD' out | tr '\n' '|')$(rerr)"
grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
pass "$(grep -c '^ok' out) checks ok; $(sed -n 's/^ok one-shot: //p' out); realtime absolute: $(sed -n 's/^ok trt one-shot: //p' out)"
