#!/bin/sh
# /proc/PID/dump and binfmt_img under interference.  Sub-tests:
#   faults-cont     SIGCONT between open() and read(): reads fail EAGAIN, the
#                   task runs on intact (a counter; a program that spawns a
#                   thread once continued, whose new 2-thread image then dumps)
#   faults-kill     SIGKILL between open() and read(): a complete image that
#                   restores, or a clean error
#   faults-readers  4 concurrent opens+readers get identical bytes; 2 threads
#                   pread()ing one fd get the right bytes
#   faults-rmmod    rmmod img_dump with a dump file open, or an O_PATH
#                   descriptor of one, is refused; rmmod binfmt_img with a restored task running never breaks the
#                   task; the modules are loaded again afterwards
#   faults-fifo     an image whose file record names a FIFO (or a device)
#                   instead of the regular file must fail execve promptly,
#                   not block in open() waiting for a FIFO writer
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

sub_cont() {
	counter 100000 > out &
	pid=$!
	track $pid
	wait_line out '^2 ' 10 || fail "counter did not start"
	stop_task $pid
	r=$(dumpfault cont $pid)
	[ "$r" = "cont read1=EAGAIN read2=EAGAIN" ] || fail "counter continued after open: '$r', want EAGAIN twice"
	n=$(tail -n1 out | cut -d' ' -f1)
	wait_line out "^$((n + 3)) $pid\$" 10 || fail "counter does not run on after the failed dump"

	contthread > ct.out &
	pid=$!
	track $pid
	wait_line ct.out ready 10 || fail "contthread did not start"
	wait_state $pid T 10 || fail "contthread did not stop itself"
	r=$(dumpfault cont $pid)
	[ "$r" = "cont read1=EAGAIN read2=EAGAIN" ] || fail "contthread continued after open: '$r', want EAGAIN twice"
	wait_line ct.out '^tick 3$' 10 || fail "contthread does not run on: $(tail -n1 ct.out)"
	grep -q '^thread started$' ct.out || fail "contthread did not start its thread"
	[ "$(ls /proc/$pid/task | wc -l)" = 2 ] || fail "contthread has $(ls /proc/$pid/task | wc -l) threads, want 2"
	stop_all $pid
	r=$(readall /proc/$pid/dump x.img)
	case "$r" in
	"ok bytes="*) ;;
	*) fail "new dump of the now 2-threaded, stopped task: '$r', want ok" ;;
	esac
	pass
}

sub_kill() {
	outcomes=""
	for i in 1 2 3; do
		pauser > p$i.out &
		pid=$!
		track $pid
		wait_line p$i.out ready 10 || fail "pauser did not start"
		stop_task $pid
		r=$(dumpfault kill $pid k$i.img)
		wait $pid 2>/dev/null
		wait_gone $pid 5 || fail "killed task $pid still there"
		case "$r" in
		"kill ok bytes="*)
			is_elf k$i.img || fail "round $i: complete read but not an ELF image"
			chmod +x k$i.img
			./k$i.img >> p$i.out 2> restore.err &
			rpid=$!
			track $rpid
			wait_restored $rpid 30 || fail "round $i: image read after SIGKILL does not restore$(rerr)"
			kill -USR1 $rpid
			wait_exit $rpid 10
			[ "$RC" = 0 ] && grep -q "^woken ok pid=$rpid" p$i.out ||
				fail "round $i: restored task exit $RC: $(tail -n1 p$i.out)"
			outcomes="$outcomes complete-and-restored"
			;;
		"kill read failed: "E*)
			outcomes="$outcomes ${r#kill read failed: }"
			;;
		*) fail "round $i: '$r' (want a complete image or a clean read error)" ;;
		esac
	done
	pass "outcomes:$outcomes"
}

sub_readers() {
	cycler 8 > c.out &
	pid=$!
	track $pid
	wait_line c.out '^step 2 ' 60 || fail "cycler did not start: $(tail -n1 c.out)"
	stop_task $pid
	dump $pid ref.img
	r=$(dumpfault multi $pid 4)
	[ "$r" = "multi n=4 bytes=$(size_of ref.img) identical" ] ||
		fail "4 concurrent readers: '$r' (plain dump: $(size_of ref.img) bytes)"
	r=$(dumpfault pread $pid)
	[ "$r" = "pread bytes=$(size_of ref.img) identical" ] || fail "2 threads on one fd: '$r'"
	s=$(tail -n1 c.out | cut -d' ' -f2)
	kill -CONT $pid
	wait_line c.out "^step $((s + 2)) " 20 || fail "cycler does not run on after the reads"
	grep -q MISMATCH c.out && fail "cycler: $(grep MISMATCH c.out)"
	pass "$(size_of ref.img) bytes"
}

sub_rmmod() {
	pauser > p.out &
	pid=$!
	track $pid
	wait_line p.out ready 10 || fail "pauser did not start"
	stop_task $pid
	dumpfault hold $pid > h.out &
	hpid=$!
	track $hpid
	wait_line h.out held 10 || fail "could not hold the dump open: $(cat h.out)"
	rmmod img_dump > rm.out 2>&1 && fail "rmmod img_dump succeeded while a dump file was open"
	grep -q '^img_dump ' /proc/modules || fail "img_dump gone although rmmod failed"
	info "rmmod img_dump with an open dump: refused ($(head -n1 rm.out))"
	kill9 $hpid
	# An O_PATH descriptor takes no module reference through the file
	# operations; its dentry holds one.  Reopened through /proc/self/fd
	# after the refused rmmod, it still reads the image.
	dumpfault holdpath $pid > hp.out &
	hpid=$!
	track $hpid
	wait_line hp.out 'held path' 10 || fail "could not hold an O_PATH descriptor: $(cat hp.out)"
	rmmod img_dump > rm.out 2>&1 &&
		fail "rmmod img_dump succeeded while an O_PATH descriptor of a dump was open"
	grep -q '^img_dump ' /proc/modules || fail "img_dump gone although rmmod failed"
	kill -USR1 $hpid
	wait_line hp.out '^reopen' 10 || fail "no reopen result: $(cat hp.out)"
	grep -q '^reopen ok bytes=' hp.out ||
		fail "reopen of the O_PATH descriptor after the refused rmmod: $(tail -n 1 hp.out)"
	info "rmmod img_dump with an O_PATH descriptor: refused; $(tail -n 1 hp.out)"
	kill9 $hpid
	rmmod img_dump > rm.out 2>&1 || fail "rmmod img_dump after closing the dump: $(cat rm.out)"
	[ -e /proc/$pid/dump ] && fail "/proc/$pid/dump still there after rmmod img_dump"
	insmod /imgcr/mod/img_dump.ko || fail "insmod img_dump again failed"
	dump $pid p.img
	kill9 $pid

	chmod +x p.img
	./p.img >> p.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 || fail "image does not restore$(rerr)"
	if rmmod binfmt_img > rm.out 2>&1; then
		how="allowed"
		grep -q '^binfmt_img ' /proc/modules && fail "rmmod binfmt_img succeeded but the module is listed"
	else
		how="refused ($(head -n1 rm.out))"
	fi
	info "rmmod binfmt_img with a restored task running: $how"
	kill -USR1 $rpid
	wait_exit $rpid 10
	[ "$RC" = 0 ] && grep -q "^woken ok pid=$rpid" p.out ||
		fail "restored task after rmmod binfmt_img ($how): exit $RC, $(tail -n1 p.out)"
	grep -q '^binfmt_img ' /proc/modules || insmod /imgcr/mod/binfmt_img.ko ||
		fail "insmod binfmt_img again failed"
	./p.img >> p.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 || fail "image does not restore after re-insmod$(rerr)"
	kill -USR1 $rpid
	wait_exit $rpid 10
	[ "$RC" = 0 ] || fail "second restore exit $RC"
	pass "rmmod binfmt_img while restored task runs: $how"
}

sub_fifo() {
	fuzzseed > s.out &
	pid=$!
	track $pid
	wait_line s.out ready 10 || fail "fuzzseed did not start"
	wait_state $pid T 10 || fail "fuzzseed did not stop itself"
	dump $pid s.img
	kill9 $pid
	# The new path must not be longer than /imgcr/bin/fuzzseed.
	fifo=/tmp/ff$$
	rm -f $fifo
	mkfifo $fifo || fail "mkfifo failed"
	imgpath s.img f.img $fifo || fail "imgpath $fifo failed"
	imgpath s.img d.img /dev/null || fail "imgpath /dev/null failed"
	timeout -s KILL 10 tryexec ./d.img > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q '^tryexec: execve failed: E' te.out ||
		fail "image naming /dev/null: rc=$rc $(head -c 80 te.out)"
	dev=$(sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' te.out)
	t0=$(now_ms)
	timeout -s KILL 10 tryexec ./f.img > te.out 2>&1
	rc=$?
	ms=$(( $(now_ms) - t0 ))
	rm -f $fifo
	[ "$rc" = 2 ] && grep -q '^tryexec: execve failed: E' te.out ||
		fail "image naming a FIFO: execve blocked (rc=$rc after $ms ms; killed by timeout: open() of the FIFO waits for a writer)"
	pass "/dev/null: $dev, FIFO: $(sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' te.out)"
}

subtest faults-cont sub_cont
subtest faults-kill sub_kill
subtest faults-readers sub_readers
subtest faults-rmmod sub_rmmod
subtest faults-fifo sub_fifo
# Later tests need both modules, whatever happened above.
for m in img_dump binfmt_img; do
	grep -q "^$m " /proc/modules || insmod /imgcr/mod/$m.ko ||
		echo "RESULT faults-reload FAIL cannot insmod $m again"
done
