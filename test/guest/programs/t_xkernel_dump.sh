#!/bin/sh
# Phase 1 of the cross-kernel tests (issue 13): on every kernel, start the
# counter, the python3 case (pyloop.py, as t_python) and vdsoclock, stop
# each at a known point, dump it with "cat /proc/PID/dump > X.img" and send
# the images, their output so far and meta.txt (where each stopped, its PID,
# how far it must count) to the host as xkernel.tar (export_file, ttyS1).
# The host then boots every other kernel with these images in its initramfs
# (test/lib-host.sh xkernel_phase, guest/xkernel_restore.sh), which restores
# them and checks they go on without gap.  As a control this guest restores
# its own three images too (result xkernel_dump-self).  It runs first in
# its guest: python sleeps until an absolute CLOCK_MONOTONIC time, which
# the restoring guest, freshly booted, must already have passed.
# runs: first
# timeout: 420
. /imgcr/guest/lib.sh
require_modules
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY in the guest"
cp /imgcr/guest/pyloop.py loop.py
T0=$(now_ms)

# PROG N STOP: run to N, stop once line STOP is out.  (Python: "i STOP".)
counter 20 > counter.out &
cpid=$!
track $cpid
vdsoclock 30 > vdsoclock.out &
vpid=$!
track $vpid
# A 20000-entry dict (t_python: 200000): a ~10 MB image, which takes
# ~10 s to send over ttyS1 under TCG (the 54 MB of 200000 take 45 s).
$PY loop.py 30 20000 > python.out 2> py.err &
ppid=$!
track $ppid

# stop_dump NAME PID REGEX FIELD: wait for REGEX, stop, dump to NAME.img,
# kill; note in meta.txt where it stopped (field FIELD of the last line).
stop_dump() {
	wait_line $1.out "$3" 120 || fail "$1 never printed '$3': $(tail -n1 $1.out)$(tail -c 200 py.err 2>/dev/null | tr '\n' '|')"
	stop_task $2
	[ "$(ls /proc/$2/task | wc -l)" = 1 ] || fail "$1 is multi-threaded"
	_last=$(tail -n 1 $1.out | cut -d' ' -f$4)
	_t0=$(now_ms)
	dump $2 $1.img
	info "$1: pid $2 stopped at $_last, image $(size_of $1.img) bytes, dump $(( $(now_ms) - _t0 )) ms"
	is_elf $1.img || fail "$1 image does not start with ELF magic"
	kill9 $2
	[ "$(tail -n 1 $1.out | cut -d' ' -f$4)" = "$_last" ] || fail "$1 output changed after kill"
	echo "$1 pid $2 stopped_at $_last target $5" >> meta.txt
}
echo "kernel $(uname -r)" > meta.txt
stop_dump counter $cpid '^5 ' 1 20
stop_dump vdsoclock $vpid '^v 5 ok ' 2 30
stop_dump python $ppid '^i 10 ' 2 30

t0=$(now_ms)
tar -cf xkernel.tar meta.txt counter.img counter.out vdsoclock.img vdsoclock.out python.img python.out ||
	fail "cannot tar the images"
export_file xkernel.tar xkernel.tar
info "exported xkernel.tar ($(size_of xkernel.tar) bytes) in $(( $(now_ms) - t0 )) ms"
pass "3 images dumped and sent to the host in $(( ($(now_ms) - T0) / 1000 )) s"

# Control: the same images restored on this kernel, all three at once.
self() {
	for p in counter vdsoclock python; do
		mkdir -p self && cp $p.out self/$p.out && chmod +x $p.img
		./$p.img >> self/$p.out 2> self/$p.err &
		eval ${p}_r=$!
		track $!
	done
	why=""
	for p in counter vdsoclock python; do
		eval wait_exit \$${p}_r 90
		n=$(sed -n "s/^$p .* target //p" meta.txt)
		r=$(sh /imgcr/guest/xkcheck.sh $p self/$p.out "$n")
		[ "$RC" = 0 ] || r="exit $RC${r:+, $r}$( [ -s self/$p.err ] && echo ", stderr: $(head -c 200 self/$p.err | tr '\n' '|')")"
		[ -z "$r" ] || why="$why${why:+; }$p: $r"
	done
	[ -z "$why" ] || fail "$why"
	pass "all 3 restored on the dumping kernel; test $(( ($(now_ms) - T0) / 1000 )) s in all"
}
subtest xkernel_dump-self self
