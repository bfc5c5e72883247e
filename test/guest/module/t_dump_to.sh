#!/bin/sh
# The one-copy route of imgcr dump: ioctl IMGCR_IOC_DUMP_TO on
# /proc/PID/dump, the module writing the task's pages straight into the
# image file.  A stopped heapbench (32 MiB of heap, 3 threads): the image
# written by the module is byte for byte the one cat reads, and restores
# with the heap and threads checked by the program.  Refused: a pipe as the
# target or an O_APPEND one (EINVAL), a target not open for writing
# (EBADF).  A task that ran
# between open() and the ioctl: EAGAIN, and it runs on.  Timings of both
# routes are printed (INFO) for a 128 MiB heap.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

heapbench 32 3 > hb.out 2>&1 &
pid=$!
track $pid
wait_line hb.out '^ready' 60 || fail "heapbench did not start"
stop_task $pid
cat /proc/$pid/dump > cat.img || fail "cat of /proc/$pid/dump failed"
r=$(dumpto $pid ioctl.img)
[ "$r" = "written $(size_of cat.img)" ] || fail "dumpto: '$r', want 'written $(size_of cat.img)'"
cmp cat.img ioctl.img > cmp.out 2>&1 || fail "the ioctl's image differs from cat's: $(cat cmp.out)"
r=$(dumpto $pid -pipe)
[ "$r" = "dumpto: EINVAL" ] || fail "a pipe as the target: '$r', want EINVAL"
r=$(dumpto $pid -ro)
[ "$r" = "dumpto: EBADF" ] || fail "a read-only target: '$r', want EBADF"
r=$(dumpto $pid -append)
[ "$r" = "dumpto: EINVAL" ] || fail "an O_APPEND target: '$r', want EINVAL"
kill9 $pid

chmod +x ioctl.img
./ioctl.img >> hb.out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 60 || fail "the ioctl's image did not restore$(rerr)"
kill -USR1 $rpid
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "restored heapbench exit $RC: $(tail -n1 hb.out)$(rerr)"
grep -q '^OK threads=3' hb.out || fail "restored heapbench: $(tail -n1 hb.out)"

# ran between open() and the ioctl
counter 100000 > c.out &
pid=$!
track $pid
wait_line c.out '^2 ' 10 || fail "counter did not start"
stop_task $pid
dumpto $pid ran.img wait > dt.out &
dpid=$!
track $dpid
wait_line dt.out '^opened' 10 || fail "dumpto did not open"
n=$(tail -n1 c.out | cut -d' ' -f1)
kill -CONT $pid
wait_line c.out "^$((n + 2)) $pid\$" 10 || fail "counter did not run on"
stop_task $pid
kill -USR1 $dpid
wait_exit $dpid 10
[ "$(tail -n1 dt.out)" = "dumpto: EAGAIN" ] || fail "task ran after open: '$(tail -n1 dt.out)', want EAGAIN"
kill -CONT $pid
wait_line c.out "^$((n + 4)) $pid\$" 10 || fail "counter does not run on after the failed dump"
kill9 $pid

# timings, for the record
heapbench 128 > big.out 2>&1 &
pid=$!
track $pid
wait_line big.out '^ready' 120 || fail "heapbench 128 did not start"
stop_task $pid
t0=$(now_ms); cat /proc/$pid/dump > b1.img; t1=$(now_ms)
dumpto $pid b2.img > /dev/null; t2=$(now_ms)
cmp -s b1.img b2.img || fail "128 MiB: the ioctl's image differs from cat's"
info "128 MiB: cat $((t1 - t0)) ms, ioctl $((t2 - t1)) ms, image $(size_of b2.img) bytes"
rm -f b1.img b2.img
kill9 $pid
pass "identical to cat's image, restored; EINVAL twice, EBADF, EAGAIN"
