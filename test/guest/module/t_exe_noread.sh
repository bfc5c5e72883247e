#!/bin/sh
# A task whose /proc/PID/exe is a file it opened with access mode 3 (no
# read access; PR_SET_MM_EXE_FILE takes it): the dump reads the first page
# of every mapped file for its checksum through a file of its own, so this
# dumps cleanly, with no kernel warning (__kernel_read() WARNs on a file
# without FMODE_READ), and the image names the exe.
. /imgcr/guest/lib.sh
require_modules

cp /imgcr/bin/exenoread ./x3 && chmod 755 x3 || fail "cannot copy exenoread"
exenoread "$PWD/x3" > e.out 2>&1 &
pid=$!
track $pid
wait_line e.out '^ready' 20 || fail "exenoread: $(cat e.out)"
[ "$(readlink /proc/$pid/exe)" = "$PWD/x3" ] || fail "exe is $(readlink /proc/$pid/exe), want $PWD/x3"
stop_task $pid
dmesg_mark
dump $pid e.img
dmesg_since | grep -q 'WARNING' && fail "kernel warning during the dump: $(dmesg_since | grep -m1 WARNING)"
# its file record (the exe is in no mapping: imgcr show lists mappings)
tr '\0' '\n' < e.img | grep -q "$PWD/x3\$" || fail "the image does not name the exe $PWD/x3"
kill9 $pid
pass "image $(size_of e.img) bytes"
