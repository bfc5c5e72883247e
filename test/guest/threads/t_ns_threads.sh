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

# Steps for a SIMD part of 1 to 2 s (doubled until it is), then three
# times that, so that the stop (a sixth of the calibration after every
# worker said "asm") lands inside it even when the load changes between
# the calibration and the run, and each worker checks its TID after the
# restore (as t_threads_work).
steps=65536
while :; do
	t0=$(now_ms)
	mtwork $NT $steps > cal || fail "calibration run failed"
	el=$(( $(now_ms) - t0 ))
	[ "$el" -ge 1000 ] && break
	[ "$steps" -ge 1073741824 ] && fail "cannot calibrate"
	steps=$((steps * 2))
done
steps=$((steps * 3))

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
usleep $((el * 1000 / 6))
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

# ns_threads-userns: the same program in a user namespace of its own only
# (unshare -U -r, no new PID namespace: its TIDs are the host's), dumped
# from the host: own-ns and own-userns, not own-pidns.  Exec'd by root in
# the initial PID namespace under another pid, as a host image is: its
# threads come back with their TIDs, the workers' joins end, "mtwork ok"
# with the new pid (review s14 kernel L2: refused before as "had a PID
# namespace of its own").
T=ns_threads-userns
$UNSHARE --user --map-root-user mtwork -w $NT 4096 > uout 2>&1 &
up=$!
track $up
wait_line uout '^ready ' 30 || fail "mtwork under unshare -U did not start: $(tail -n 2 uout | tr '\n' '|')"
grep -q "^ready $up " uout || fail "mtwork is not pid $up (same PID namespace): $(grep ^ready uout)"
[ "$(readlink /proc/$up/ns/user)" != "$(readlink /proc/self/ns/user)" ] || fail "no user namespace of its own"
[ "$(readlink /proc/$up/ns/pid)" = "$(readlink /proc/self/ns/pid)" ] || fail "a PID namespace of its own"
wait_count uout '^done ' $NT 120 || fail "workers did not finish"
utids=$(tids $up | grep -vx $up | tr '\n' ' ')
[ "$(echo $utids | wc -w)" = $NT ] || fail "tids: '$utids'"
stop_all $up
dump $up u.img
pl=$(imgcr show u.img | grep '^process:')
case "$pl" in
*" own-ns own-userns"*) ;;
*) fail "want own-ns own-userns: $pl" ;;
esac
case "$pl" in *own-pidns*) fail "own-pidns in a same-PID-namespace image: $pl" ;; esac
kill -9 $up
wait_exit $up 30
chmod +x u.img
: > rout2
dmesg_mark
./u.img >> rout2 2> restore.err &
rp=$!
track $rp
n=0
while [ "$(nthreads $rp)" != $((NT + 1)) ] && [ $n -lt 300 ]; do
	usleep 100000
	n=$((n + 1))
done
[ "$(nthreads $rp)" = $((NT + 1)) ] ||
	fail "restored process $rp has $(nthreads $rp) threads: $(dmesg_since | grep binfmt_img | tail -n 1)$(rerr)"
rtids=$(tids $rp | grep -vx $rp | tr '\n' ' ')
[ "$rtids" = "$utids" ] || fail "restored TIDs '$rtids', want '$utids'"
kill -USR1 $rp
wait_exit $rp 60
[ "$RC" = 0 ] || fail "restored mtwork exit $RC: $(tail -n 2 rout2 | tr '\n' '|')$(rerr)"
grep -q "^mtwork ok pid=$rp\$" rout2 || fail "no 'mtwork ok pid=$rp': $(tail -n 2 rout2 | tr '\n' '|')"
pass "own user namespace only: restored under pid $rp (was $up) with TIDs $utids"

# ns_threads-flags: the two new bits checked (corrupt pflags±): either
# without IMGCR_PROC_OWN_NS (0x400) is refused as malformed; both
# (0x800 pid, 0x1000 user) is a PID namespace of its own: refused here;
# OWN_NS alone (an image from before the split, which may have had either)
# only under its own pid: refused here, saying it cannot tell.  No kernel
# report.
T=ns_threads-flags
# nsflag_refused MODES WANT: corrupt u.img with each of MODES in turn,
# exec it: EINVAL, a binfmt_img message matching WANT.
nsflag_refused() {
	cp u.img f.img
	for m in $1; do
		corrupt f.img f2.img "$m" 2> c.err || fail "corrupt $m: $(cat c.err)"
		mv f2.img f.img
	done
	chmod +x f.img
	dmesg_mark
	./f.img > fout 2> ferr && fail "image with flags [$1] ran: $(cat fout)"
	grep -q 'Invalid argument' ferr || fail "[$1]: not EINVAL: $(cat ferr)"
	dmesg_since | grep -q "binfmt_img: .*$2" ||
		fail "[$1]: no message '$2': $(dmesg_since | grep binfmt_img | tail -n 2 | tr '\n' '|')"
	dmesg_since | grep -Eq "$KERNEL_REPORT_RE" && fail "[$1]: kernel report: $(dmesg_since | grep -E "$KERNEL_REPORT_RE" | head -n 2)"
	:
}
nsflag_refused "pflags-400" "own PID or user namespace flag without the own-namespace flag"
nsflag_refused "pflags-1400 pflags+800" "own PID or user namespace flag without the own-namespace flag"
nsflag_refused "pflags+800" "pid $up had a PID namespace of its own: the TIDs of its $NT thread"
nsflag_refused "pflags-1000" "pid $up had a PID namespace of its own (or only a user namespace: its image does not say which)"
pass "pid-without-own-ns, user-without-own-ns, both, neither (old image): each refused with its message"
