#!/bin/sh
# Guest half of test/bench.sh: checkpoint/restore a heap-filling program with
# imgcr and with CRIU, for each size in imgcr.sizes (MiB), with imgcr.threads
# extra threads (default 0: a single-threaded process).
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
T=bench
# (not /proc/uptime arithmetic: ash rejects a fraction like .08 as octal)
ms() { nowms; }
sizes=$(sed -n 's/.*imgcr\.sizes=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
threads=$(sed -n 's/.*imgcr\.threads=\([0-9]*\).*/\1/p' /proc/cmdline)
threads=${threads:-0}
okline='^OK'   # what the restored heapbench says when its checks pass
[ "$threads" -gt 0 ] && okline="^OK threads=$threads\$"
for m in $(cat /imgcr/kmod/order); do insmod /imgcr/kmod/$m.ko 2>/dev/null; done
# /tmp (tmpfs, half the memory by default) holds the image, cat's copy
# and the floor's copy at once: 3 GiB at 1 GiB, more than half of the
# guest's 5.5 GiB, so the floor's copy ran out of space after 3/4 of it
mount -o remount,size=90% /tmp
ip link set lo up

start_heap() {   # start_heap MIB: the program, ready and stopped-able
	# its own session: criu --shell-job needs a session leader it can see
	if [ "$threads" -gt 0 ]; then
		setsid heapbench "$1" "$threads" > out 2>&1 < /dev/null &
	else
		setsid heapbench "$1" > out 2>&1 < /dev/null &
	fi
	pid=$!
	wait_line out "^ready" 600 || { echo "BENCH-FAIL heapbench did not start"; return 1; }
	if [ "$threads" -gt 0 ] && [ "$(nthreads $pid)" != $((threads + 1)) ]; then
		echo "BENCH-FAIL heapbench has $(nthreads $pid) threads, want $((threads + 1))"
		kill -9 $pid
		return 1
	fi
}

# stop_heap: SIGSTOP, and wait until the process (every thread) is stopped
stop_heap() {
	if [ "$threads" -gt 0 ]; then
		stop_all $pid
	else
		stop_task $pid
	fi
}

# hwm PID: the peak resident memory of PID (KiB), as restored
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$1/status; }

reps=$(sed -n 's/.*imgcr\.reps=\([0-9]*\).*/\1/p' /proc/cmdline)
# gone PID: wait until PID (not a child of this shell) has exited
gone() { while kill -0 "$1" 2>/dev/null; do usleep 20000; done; }

echo "BENCH run size_mib tool dump_ms restore_ms image_kib threads"
for mib in ${sizes:-64}; do
for rep in $(seq "${reps:-3}"); do
	rm -rf /tmp/b && mkdir /tmp/b && cd /tmp/b || exit 1
	# imgcr
	start_heap "$mib" || continue
	f0=$(ms)
	stop_heap
	f1=$(ms)
	otids=$(tids $pid | grep -vx $pid | tr '\n' ' ')
	# imgcr dump's route (the module writes the file: one copy) and
	# cat's (read() + write(): two), alternating which goes first; then
	# the bandwidth floor: the same bytes written from memory (the image
	# in tmpfs) to a file of the same filesystem
	if [ $((rep % 2)) = 1 ]; then
		t0=$(ms); DUMPTO_TIMES=1 dumpto $pid h.img > /dev/null 2> times; t1=$(ms)
		c0=$(ms); cat /proc/$pid/dump > c.img; c1=$(ms)
	else
		c0=$(ms); cat /proc/$pid/dump > c.img; c1=$(ms)
		t0=$(ms); DUMPTO_TIMES=1 dumpto $pid h.img > /dev/null 2> times; t1=$(ms)
	fi
	cmp -s h.img c.img || echo "BENCH-FAIL imgcr $mib MiB: the ioctl's image differs from cat's"
	w0=$(ms); cat c.img > w.img || echo "BENCH-FAIL the write floor $mib MiB failed"; w1=$(ms)
	rm -f c.img w.img
	# the fill floor: fresh anonymous memory of the image's size, the
	# image's bytes read into it (the least an eager restore can do)
	l0=$(ms); fillfloor h.img > /dev/null; l1=$(ms)
	kill -9 $pid; chmod +x h.img
	# the restore recreates the threads with their TIDs: wait (untimed)
	# until the killed ones are gone
	for t in $otids; do gone $t; done
	# restored = the exec'd process is heapbench again, back in pause()
	# (every thread asleep again: main in pause(), the others in their
	# condition variable wait)
	if [ "$threads" -gt 0 ]; then
		execwait -n $((threads + 1)) heapbench ./h.img >> out 2>&1 < /dev/null
	else
		execwait heapbench ./h.img >> out 2>&1 < /dev/null
	fi
	r=$(sed -n 's/^restored ms=\([0-9]*\) pid=\([0-9]*\)$/\1 \2/p' out)
	rms=${r% *}; rpid=${r#* }
	if [ -n "$r" ]; then
		rss=$(hwm $rpid)
		kill -USR1 $rpid; gone $rpid
	fi
	grep -q "$okline" out || echo "BENCH-FAIL imgcr $mib MiB: $(tail -n 2 out | tr '\n' ' ')"
	echo "BENCH run $mib imgcr $((t1 - t0)) ${rms:-0} $(( $(wc -c < h.img) / 1024 )) $threads"
	echo "BENCH run $mib imgcr-cat $((c1 - c0)) 0 $(( $(wc -c < h.img) / 1024 )) $threads"
	echo "BENCH run $mib write $((w1 - w0)) 0 $(( $(wc -c < h.img) / 1024 )) $threads"
	echo "BENCH run $mib fill 0 $((l1 - l0)) $(( $(wc -c < h.img) / 1024 )) $threads"
	# where imgcr's dump goes: open() (pins), the ioctl (writes), close()
	for p in open ioctl close; do
		echo "BENCH run $mib imgcr-$p $(sed -n "s/.* ${p}_ms=\([0-9]*\).*/\1/p" times) 0 0 $threads"
	done
	# freeze: stopped until the image is written (stop + dump)
	echo "BENCH run $mib imgcr-freeze $((f1 - f0 + t1 - t0)) 0 0 $threads"
	echo "BENCH run $mib imgcr-rss 0 0 ${rss:-0} $threads"; rss=
	rm -f h.img out
	# CRIU
	start_heap "$mib" || continue
	otids=$(tids $pid | tr '\n' ' ')
	mkdir d
	t0=$(ms); /usr/sbin/criu dump -t $pid -D d --shell-job -o dump.log --display-stats > stats.txt 2>&1; rc=$?; t1=$(ms)
	if [ $rc != 0 ] || kill -0 $pid 2>/dev/null; then
		echo "BENCH-FAIL criu dump $mib MiB (rc $rc): $(grep -a -B1 Error d/dump.log | head -n 12 | tr '\n' ' ')"
		kill -9 $pid; cd / && rm -rf /tmp/b; continue
	fi
	t2=$(ms); /usr/sbin/criu restore -D d --shell-job -d -o restore.log; rc=$?; t3=$(ms)
	[ $rc = 0 ] || echo "BENCH-FAIL criu restore $mib MiB (rc $rc): $(grep -a Error d/restore.log | head -n 3 | tr '\n' ' ')"
	[ "$threads" -gt 0 ] && [ "$(tids $pid | tr '\n' ' ')" != "$otids" ] &&
		echo "BENCH-FAIL criu $mib MiB: threads $(tids $pid | tr '\n' ' ')after restore, want $otids"
	rss=$(hwm $pid)
	kill -USR1 $pid; gone $pid
	grep -q "$okline" out || echo "BENCH-FAIL criu $mib MiB: $(tail -n 3 d/dump.log d/restore.log out | tr '\n' ' ')"
	echo "BENCH run $mib criu $((t1 - t0)) $((t3 - t2)) $(du -sk d | cut -f1) $threads"
	# CRIU's own count of the time the tree was frozen (--display-stats)
	fz=$(cat stats.txt d/dump.log 2>/dev/null | sed -n "s/.*Frozen time: *\([0-9]*\) us.*/\1/p" | head -n 1)
	echo "BENCH run $mib criu-freeze $(( ${fz:-0} / 1000 )) 0 0 $threads"
	echo "BENCH run $mib criu-rss 0 0 ${rss:-0} $threads"; rss=
	# imgcr dump (the tool) of a process that keeps writing 1 % of its
	# pages, plain and --live: the time each keeps it frozen
	if [ "$threads" = 0 ] && ! grep -q 'imgcr\.nolive' /proc/cmdline; then
		for mode in plain live; do
			livewriter "$mib" 1 > lw.out 2>&1 < /dev/null &
			pid=$!
			wait_line lw.out "^ready" 600 || { echo "BENCH-FAIL livewriter did not start"; break; }
			sleep 1
			opt=""; [ $mode = live ] && opt=--live
			t0=$(ms); imgcr dump -t $pid -D $mode $opt --stats 2> $mode.err; rc=$?; t1=$(ms)
			wait $pid 2>/dev/null
			fz=$(sed -n 's/.* frozen_ms=\([0-9]*\).*/\1/p' $mode.err)
			[ $rc = 0 ] && [ -n "$fz" ] || echo "BENCH-FAIL imgcr dump $opt $mib MiB: $(tr '\n' ' ' < $mode.err)"
			echo "BENCH run $mib tool-$mode $((t1 - t0)) 0 $(du -sk $mode | cut -f1) $threads"
			echo "BENCH run $mib tool-$mode-freeze ${fz:-0} 0 0 $threads"
			rm -rf $mode
		done
	fi
	cd / && rm -rf /tmp/b
done
done
