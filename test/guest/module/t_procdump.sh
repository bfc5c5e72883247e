#!/bin/sh
# /proc/PID/dump as a file: listed by ls, the same bytes whatever the read
# size, module unloading while a dump is open (refused, the reader goes on)
# and after (the entry disappears, and comes back with insmod), unloading
# binfmt_img, and dumping a ptrace-stopped task.
# Sub-tests: procdump-ls, procdump-readsize, procdump-rmmod-dump,
# procdump-rmmod-binfmt, procdump-ptrace.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
trap 'cleanup; ensure_modules' EXIT

# A stopped pauser shared by the first sub-tests (its image: p.img).
pauser > p.out &
PID=$!
track $PID
wait_line p.out ready 10 || fail "pauser did not start"
wait_state $PID S 10 || fail "pauser not sleeping"
stop_task $PID

sub_ls() {
	ls /proc/$PID > ls.out || fail "ls /proc/$PID failed"
	grep -qx dump ls.out || fail "ls /proc/$PID does not list dump"
	[ "$(grep -cx dump ls.out)" = 1 ] || fail "dump listed $(grep -cx dump ls.out) times"
	ls -l /proc/$PID/dump | grep -q '^-r--------' ||
		fail "mode: $(ls -l /proc/$PID/dump)"
	ls /proc/self > self.out && grep -qx dump self.out || fail "ls /proc/self does not list dump"
	pass
}

sub_readsize() {
	cat /proc/$PID/dump > p.img || fail "cat failed"
	dd if=/proc/$PID/dump of=b1.img bs=1 2> dd1.err || fail "dd bs=1: $(cat dd1.err)"
	dd if=/proc/$PID/dump of=b1m.img bs=1M 2> dd2.err || fail "dd bs=1M: $(cat dd2.err)"
	is_elf p.img || fail "not ELF"
	cmp p.img b1.img || fail "dd bs=1 differs from cat"
	cmp p.img b1m.img || fail "dd bs=1M differs from cat"
	pass "$(size_of p.img) bytes"
}

sub_rmmod_dump() {
	trap 'cleanup; ensure_modules' EXIT
	[ -s p.img ] || fail "no reference image (see procdump-readsize)"
	mkfifo go
	# The reader: open, read the first 4 KiB, wait for "go", read the rest.
	sh -c 'exec 3< /proc/$1/dump || exit 9
		dd bs=4096 count=1 <&3 > part1 2>/dev/null
		echo opened > opened
		read x < go
		cat <&3 > part2
		echo "finished $?" > fin' reader $PID &
	rdr=$!
	track $rdr
	wait_line opened opened 10 || fail "the reader did not open the dump"
	[ "$(size_of part1)" = 4096 ] || fail "first read gave $(size_of part1) bytes"
	rmmod img_dump > rm.out 2>&1 && fail "rmmod img_dump succeeded while a dump is open"
	grep -q '^img_dump ' /proc/modules || fail "img_dump gone after the refused rmmod"
	info "rmmod while open: $(head -n1 rm.out)"
	timeout 10 sh -c 'echo go > go' || fail "the reader is gone"
	wait_line fin finished 10 || fail "the reader did not finish"
	wait $rdr
	grep -qx "finished 0" fin || fail "reader: $(cat fin)"
	cat part1 part2 > r.img
	cmp p.img r.img || fail "the image read across the refused rmmod differs"

	rmmod img_dump 2> rm.err || fail "rmmod img_dump after closing: $(cat rm.err)"
	grep -q '^img_dump ' /proc/modules && fail "img_dump still loaded"
	r=$(readall /proc/$PID/dump)
	[ "$r" = "open failed: ENOENT" ] || fail "without the module: '$r', want ENOENT"
	ls /proc/$PID | grep -qx dump && fail "ls still lists dump without the module"
	[ "$(state $PID)" = T ] || fail "target state '$(state $PID)'"

	insmod /imgcr/mod/img_dump.ko 2> ins.err || fail "insmod again: $(cat ins.err)"
	ls /proc/$PID | grep -qx dump || fail "ls does not list dump after insmod"
	cat /proc/$PID/dump > again.img || fail "dump after re-insmod failed"
	cmp p.img again.img || fail "image after re-insmod differs"
	pass
}

sub_rmmod_binfmt() {
	trap 'cleanup; ensure_modules' EXIT
	[ -s p.img ] || fail "no image (see procdump-readsize)"
	chmod +x p.img
	rmmod binfmt_img 2> rm.err || fail "rmmod binfmt_img: $(cat rm.err)"
	grep -q '^binfmt_img ' /proc/modules && fail "binfmt_img still loaded"
	r=$(tryexec_expect p.img)
	[ -z "$r" ] || fail "without binfmt_img: $r"
	[ "$(cat te.errno)" = ENOEXEC ] || fail "without binfmt_img: $(cat te.errno), want ENOEXEC"
	insmod /imgcr/mod/binfmt_img.ko 2> ins.err || fail "insmod again: $(cat ins.err)"
	tryexec ./p.img >> p.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 tryexec || fail "image did not restore after re-insmod$(rerr)"
	kill -USR1 $rpid
	wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "restored pauser exit $RC$(rerr)"
	grep -q "^woken ok pid=$rpid" p.out || fail "no 'woken ok pid=$rpid'"
	pass
}

sub_ptrace() {
	counter 40 > c.out &
	pid=$!
	track $pid
	wait_line c.out '^5 ' 20 || fail "counter did not reach 5"
	ptstop $pid > pt.out &
	tr=$!
	track $tr
	wait_line pt.out '^stopped' 10 || fail "ptstop: $(cat pt.out)"
	wait_state $pid t 10 || fail "target not in ptrace stop (state '$(state $pid)')"
	last=$(tail -n 1 c.out | cut -d' ' -f1)
	dump $pid c.img
	is_elf c.img || fail "image is not ELF"
	[ "$(state $pid)" = t ] || fail "target state '$(state $pid)' after the dump"
	# Not kill9: the tracee cannot be reaped while its tracer lives.
	kill -9 $pid $tr
	wait $tr 2>/dev/null
	wait $pid 2>/dev/null
	wait_gone $pid 5 || fail "target survived SIGKILL"
	[ "$(wc -l < c.out)" = "$last" ] || fail "output changed after kill"
	chmod +x c.img
	./c.img >> c.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 30
	[ "$RC" = 0 ] || fail "restored counter exit $RC: $(tail -n2 c.out | tr '\n' '|')$(rerr)"
	n=0
	while read -r num _p; do
		[ "$num" = counter ] && continue
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "line $n is '$num' (gap or repeat)"
	done < c.out
	[ "$n" = 40 ] || fail "got $n numbers, want 40"
	grep -q '^counter selfcheck ok$' c.out || fail "no self-check line"
	grep -q "^$((last + 1)) $rpid\$" c.out || fail "line $((last + 1)) not printed by $rpid"
	pass "stopped at $last"
}

subtest procdump-ls sub_ls
subtest procdump-readsize sub_readsize
subtest procdump-rmmod-dump sub_rmmod_dump
subtest procdump-rmmod-binfmt sub_rmmod_binfmt
subtest procdump-ptrace sub_ptrace
