#!/bin/sh
# binfmt_img's status pipe (--imgcr-status=FD) never holds up a refused
# exec (review s11 M3): test/progs/stblock.c execs a pauser image 300 times
# with an unknown --imgcr- argument and a full pipe whose O_NONBLOCK another
# process clears and sets in a loop.  Before, the module wrote through the
# caller's open file with IOCB_NOWAIT, which pipe_write() ignores before
# Linux 6.5: an exec that wrote while O_NONBLOCK was clear blocked (until
# stblock's alarm()).  Now it writes through a file of its own, opened
# non-blocking.
# status_block-fifo: --imgcr-status= naming a named FIFO whose readers are
# gone (test/progs/stfifo.c): the module cannot open it again (ENXIO) and
# restores without a status pipe (review s12 kernel L5; it refused the
# exec before): the restored pauser wakes on SIGUSR1 and checks itself.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

pauser > p.out 2>&1 &
pid=$!
track $pid
wait_line p.out '^ready' 20 || fail "pauser did not start: $(cat p.out)"
stop_task $pid
dump $pid p.img
kill9 $pid
chmod +x p.img
timeout -s KILL 240 stblock ./p.img 300 > sb.out 2>&1
rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(tail -n 2 sb.out | tr '\n' '|')"
grep -q '^stblock ok 300' sb.out || fail "$(tail -n 2 sb.out | tr '\n' '|')"
pass "300 refused execs, none held up by the full pipe"

fifo() {
	stfifo $PWD/st.fifo ./p.img > f.out 2>&1 &
	fp=$!
	track $fp
	wait_line f.out '^exec ' 20 || fail "stfifo: $(cat f.out)"
	sleep 1
	grep -q 'exec failed' f.out && fail "$(tr '\n' '|' < f.out) $(dmesg | grep binfmt_img | tail -n 1)"
	[ -d /proc/$fp ] || fail "gone: $(tr '\n' '|' < f.out)"
	kill -USR1 $fp
	wait_exit $fp 20
	[ "$RC" = 0 ] || fail "restored pauser exit $RC: $(tr '\n' '|' < f.out)"
	grep -q '^woken ok' f.out || fail "$(tr '\n' '|' < f.out)"
	pass "restored with a readerless FIFO as --imgcr-status="
}
subtest status_block-fifo fifo
