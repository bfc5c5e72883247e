#!/bin/sh
# Guest half of test/bench.sh: checkpoint/restore a heap-filling program with
# imgcr and with CRIU, for each size in imgcr.sizes (MiB).
. /imgcr/guest/lib.sh
T=bench
# (not /proc/uptime arithmetic: ash rejects a fraction like .08 as octal)
ms() { nowms; }
sizes=$(sed -n 's/.*imgcr\.sizes=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
for m in $(cat /imgcr/kmod/order); do insmod /imgcr/kmod/$m.ko 2>/dev/null; done
ip link set lo up

start_heap() {   # start_heap MIB: the program, ready and stopped-able
	# its own session: criu --shell-job needs a session leader it can see
	setsid heapbench "$1" > out 2>&1 < /dev/null &
	pid=$!
	wait_line out "^ready" 600 || { echo "BENCH-FAIL heapbench did not start"; return 1; }
}

reps=$(sed -n 's/.*imgcr\.reps=\([0-9]*\).*/\1/p' /proc/cmdline)
# gone PID: wait until PID (not a child of this shell) has exited
gone() { while kill -0 "$1" 2>/dev/null; do usleep 20000; done; }

echo "BENCH run size_mib tool dump_ms restore_ms image_kib"
for mib in ${sizes:-64}; do
for rep in $(seq "${reps:-3}"); do
	rm -rf /tmp/b && mkdir /tmp/b && cd /tmp/b || exit 1
	# imgcr
	start_heap "$mib" || continue
	stop_task $pid
	t0=$(ms); cat /proc/$pid/dump > h.img; t1=$(ms)
	kill -9 $pid; chmod +x h.img
	# restored = the exec'd process is heapbench again, back in pause()
	execwait heapbench ./h.img >> out 2>&1 < /dev/null
	r=$(sed -n 's/^restored ms=\([0-9]*\) pid=\([0-9]*\)$/\1 \2/p' out)
	rms=${r% *}; rpid=${r#* }
	if [ -n "$r" ]; then
		kill -USR1 $rpid; gone $rpid
	fi
	grep -q '^OK' out || echo "BENCH-FAIL imgcr $mib MiB: $(tail -n 2 out | tr '\n' ' ')"
	echo "BENCH run $mib imgcr $((t1 - t0)) ${rms:-0} $(( $(wc -c < h.img) / 1024 ))"
	rm -f h.img out
	# CRIU
	start_heap "$mib" || continue
	mkdir d
	t0=$(ms); /usr/sbin/criu dump -t $pid -D d --shell-job -o dump.log; rc=$?; t1=$(ms)
	if [ $rc != 0 ] || kill -0 $pid 2>/dev/null; then
		echo "BENCH-FAIL criu dump $mib MiB (rc $rc): $(grep -a -B1 Error d/dump.log | head -n 12 | tr '\n' ' ')"
		kill -9 $pid; cd / && rm -rf /tmp/b; continue
	fi
	t2=$(ms); /usr/sbin/criu restore -D d --shell-job -d -o restore.log; rc=$?; t3=$(ms)
	[ $rc = 0 ] || echo "BENCH-FAIL criu restore $mib MiB (rc $rc): $(grep -a Error d/restore.log | head -n 3 | tr '\n' ' ')"
	kill -USR1 $pid; gone $pid
	grep -q '^OK' out || echo "BENCH-FAIL criu $mib MiB: $(tail -n 3 d/dump.log d/restore.log out | tr '\n' ' ')"
	echo "BENCH run $mib criu $((t1 - t0)) $((t3 - t2)) $(du -sk d | cut -f1)"
	cd / && rm -rf /tmp/b
done
done
