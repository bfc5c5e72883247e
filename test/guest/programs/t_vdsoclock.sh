#!/bin/sh
# vdsoclock (test/progs/vdsoclock.c) takes pointers into the vdso once at
# start and compares what they return with the system calls every ~100 ms.
# Checkpointed at >= 5, killed and restored from the image, it must go on
# with exactly the next iteration, keep the vdso at the same address, and
# end with "vdsoclock ok" (every vdso call agreed with the kernel after the
# restore too).  The cross-kernel variant is t_xkernel_dump.sh + the host.
. /imgcr/guest/lib.sh
require_modules

vdsoclock 20 > out &
pid=$!
track $pid
wait_line out '^v 5 ok ' 20 || fail "vdsoclock never reached 5: $(tail -n1 out)"
stop_task $pid
last=$(tail -n 1 out | cut -d' ' -f2)
dump $pid v.img
is_elf v.img || fail "image does not start with ELF magic"
kill9 $pid
[ "$(tail -n 1 out | cut -d' ' -f2)" = "$last" ] || fail "output changed after kill"

chmod +x v.img
./v.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_exit $rpid 30
[ "$RC" = 0 ] || fail "restored vdsoclock exit $RC; tail: $(tail -n 2 out | tr '\n' '|')$(rerr)"
sh /imgcr/guest/xkcheck.sh vdsoclock out 20 > check.txt || fail "$(cat check.txt)"
pass "resumed at $((last + 1)) as pid $rpid"
