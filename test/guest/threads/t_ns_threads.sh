#!/bin/sh
# A 4-thread process (progs/mtwork.c) runs as pid 1 of its own PID
# namespace (util-linux `unshare --pid --fork`): its TIDs there are 2..5,
# its memory (glibc's cached TIDs, the join futexes) holds those.  It is
# stopped and dumped from the host with `cat /proc/HOSTPID/dump` (the host
# numbers it otherwise: the image must record the namespace's TIDs and say
# so, IMGCR_PROC_OWN_NS, format version 4), killed, and the image exec'd as
# pid 1 of a fresh PID namespace.  Inside: every worker checks that
# gettid() is the TID it had, main that gettid() == getpid() (1), the
# joins (futexes on the TIDs) end, "mtwork ok pid=1".  Outside: NSpid of
# the restored process and of each thread is the old namespace's.
# Then the same process without threads' namespace difference is not
# touched: a plain host dump of mtwork keeps format version 2 (no flag).
# ns_threads-initns: the own-namespace image exec'd in the initial PID
# namespace (no new one for it): refused, its TIDs are the old
# namespace's (review s12 kernel L4), with a message.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules

NT=4
UNSHARE=/usr/sbin/unshare
[ -x $UNSHARE ] || UNSHARE=/usr/bin/unshare
[ -x $UNSHARE ] || fail "util-linux unshare missing in the guest"

# nspids HOSTPID: "TID-in-ns ..." of each thread (NSpid's last field), sorted
nspids() {
	for _t in $(tids "$1"); do
		sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' /proc/$1/task/$_t/status
	done | sort -n | tr '\n' ' '
}

# Steps for a SIMD part of >= ~2 s (then four times that), so that the
# stop lands inside it and each worker checks its TID after the restore.
steps=65536
while :; do
	t0=$(now_ms)
	mtwork $NT $steps > cal || fail "calibration run failed"
	el=$(( $(now_ms) - t0 ))
	[ "$el" -ge 2000 ] && break
	[ "$steps" -ge 1073741824 ] && fail "cannot calibrate"
	steps=$((steps * 4))
done
steps=$((steps * 4))

$UNSHARE --pid --fork mtwork -w $NT $steps > out 2>&1 &
upid=$!
track $upid
hpid=$(child_of $upid)
[ -n "$hpid" ] || fail "no pid 1 under unshare $upid: $(cat out)"
track $hpid
wait_line out '^ready ' 30 || fail "mtwork did not start: $(tail -n 2 out | tr '\n' '|')"
grep -q '^ready 1 ' out || fail "mtwork is not pid 1 of its namespace: $(grep ^ready out)"
otids=$(sed -n 's/^thread [0-9]* tid //p' out | tr '\n' ' ')
[ "$(echo $otids | wc -w)" = $NT ] || fail "tids: '$otids'"
before=$(nspids $hpid)
[ "$before" = "$(echo 1 $otids | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
	fail "NSpids '$before', the program says 1 $otids"
wait_count out '^asm ' $NT 120 || fail "not every worker reached its SIMD loop: $(count_lines out '^asm ')"
usleep $((el * 1000 / 2))
stop_all $hpid
[ "$(count_lines out '^done ')" = 0 ] || fail "a worker finished before the stop (calibration too short)"
dump $hpid w.img
v=$(imgcr show w.img 2>&1 | sed -n 's/^image: .*format \([0-9]*\)).*/\1/p')
[ "$v" = 4 ] || fail "image format '$v', want 4: $(imgcr show w.img 2>&1 | head -n 2 | tr '\n' '|')"
imgcr show w.img | grep -q '^process: .* own-ns' || fail "no own-ns flag: $(imgcr show w.img | grep '^process:')"
kill -9 $hpid
wait_exit $upid 30

chmod +x w.img
: > rout
$UNSHARE --pid --fork ./w.img >> rout 2> restore.err &
rupid=$!
track $rupid
rpid=$(child_of $rupid)
[ -n "$rpid" ] || fail "no pid 1 under the restoring unshare$(rerr)"
track $rpid
n=0
while [ "$(nthreads $rpid)" != $((NT + 1)) ] && [ $n -lt 300 ]; do
	usleep 100000
	n=$((n + 1))
done
after=$(nspids $rpid)
[ "$after" = "$before" ] || fail "restored NSpids '$after', want '$before'$(rerr)"
wait_count rout '^done ' $NT 240 || fail "only $(count_lines rout '^done ') workers finished after restore: $(tail -n 2 rout | tr '\n' '|')$(rerr)"
for t in $otids; do
	grep -q "^done [0-9]* tid $t mode " rout || fail "no good result line from TID $t: $(grep "tid $t" rout)"
done
kill -USR1 $rpid
wait_exit $rupid 60
[ "$RC" = 0 ] || fail "restored mtwork (under unshare) exit $RC: $(grep -E 'BAD|main:' out rout | head -n 3 | tr '\n' '|')$(rerr)"
grep '^done .* BAD' out rout && fail "a worker's check failed"
grep -q '^mtwork ok pid=1$' rout || fail "no 'mtwork ok pid=1': $(tail -n 2 rout | tr '\n' '|')"
pass "$NT threads restored as pid 1 of a new PID namespace with TIDs $otids"

# The same program dumped from its own namespace's view: format 2, no flag.
T=ns_threads-hostns
mtwork -w $NT 4096 > hout 2>&1 &
p=$!
track $p
wait_line hout '^ready ' 30 || fail "mtwork did not start"
wait_count hout '^done ' $NT 120 || fail "workers did not finish"
stop_all $p
dump $p h.img
v=$(imgcr show h.img 2>&1 | sed -n 's/^image: .*format \([0-9]*\)).*/\1/p')
[ "$v" = 2 ] || fail "host-namespace image format '$v', want 2"
imgcr show h.img | grep -q '^process: .* own-ns' && fail "own-ns flag in a host-namespace image"
kill -9 $p
pass "a process in the dumper's namespaces still gets a version 2 image"

T=ns_threads-initns
dmesg_mark
./w.img > iout 2> ierr && fail "the own-namespace image with threads ran in the initial PID namespace: $(cat iout)"
dmesg_since | grep -q "binfmt_img: .*: pid 1 had a PID namespace of its own: the TIDs of its $NT thread(s) are that namespace's" ||
	fail "no message: $(dmesg_since | grep binfmt_img | tail -n 2 | tr '\n' '|')"
pass "$(dmesg_since | grep -o 'pid 1 had a PID namespace.*' | head -n 1 | cut -c1-120)"
