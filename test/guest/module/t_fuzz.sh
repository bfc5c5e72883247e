#!/bin/sh
# Fuzz binfmt_img: execute thousands of malformed variants of two small
# images (see test/progs/fuzz.c) as uid 1000 and as root: the
# single-threaded fuzzseed (two thirds of the variants) and `fuzzseed -t 2
# -q` (a third): 3 threads, pending signals, POSIX and interval timers.
# PASS if the intact seeds keep restoring (as uid 1000 the threaded one
# must fail with EPERM: only root may choose TIDs), nothing hangs or
# survives SIGKILL, every rejected execve fails with a documented errno,
# the threaded seed's TIDs are free again after every restored variant,
# the kernel log has no BUG/WARNING, and no kernel memory leaks
# (SUnreclaim, MemAvailable plus per-CPU free pages after drop_caches,
# before vs after).
#
# The number of variants is imgcr.fuzz=N on the kernel command line
# (test/run.sh --fuzz N, or test/fuzz.sh N); default: the CI round below.
# timeout: 7200
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
. /imgcr/guest/memcheck.sh
require_modules

CI_N=3000           # ~40 s per kernel under TCG (capped by TLIMIT)
arg() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
N=$(arg imgcr.fuzz)
if [ -n "$N" ]; then
	TLIMIT=0    # an explicit long round runs to the end
else
	N=$CI_N
	TLIMIT=40   # safety net for a loaded host
fi
# A third of the variants for the threaded seed, of which two thirds as
# root (restores, thread creation) and a third as uid 1000 (the whole
# validation, then EPERM; its truncations, refused alike for any uid, run
# only as root); of the single-threaded seed's, a fifth as root.  The
# threaded seed's TIDs are free from the start: the rounds restore them.
NMT=$((N / 3))
NST=$((N - NMT))
NROOT=$((NST / 5))
NUSER=$((NST - NROOT))
NMUSER=$((NMT / 3))
NMROOT=$((NMT - NMUSER))
# Shares of TLIMIT (percent) of the rounds, which run in this order: the
# threaded seed as root, as uid 1000, the single-threaded one as root, as
# uid 1000.  Time a round leaves unused goes to the later ones, so the
# last (and largest) round takes whatever is left; on a loaded host the
# threaded seed still gets about a third of the images.
WMROOT=34 WMUSER=14 WROOT=16 WUSER=36

chmod 755 .
fuzzseed > s.out &
pid=$!
track $pid
wait_line s.out '^ready ' 10 || fail "fuzzseed did not start"
wait_state $pid T 10 || fail "fuzzseed did not stop itself"
dump $pid seed.img
kill9 $pid
info "seed image $(size_of seed.img) bytes"

# The threaded seed stops itself with a process-directed SIGSTOP: wait
# until every thread is stopped, as the dump requires.
fuzzseed -t 2 -q > m.out &
mpid=$!
track $mpid
wait_line m.out '^tids ' 10 || fail "fuzzseed -t 2 -q did not start: $(cat m.out)"
MTIDS=$(sed -n 's/^tids //p' m.out)
n=500
until all_state $mpid T; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "threaded fuzzseed did not stop: $(thread_states $mpid)"
	usleep 20000
done
[ "$(nthreads $mpid)" = 3 ] || fail "threaded fuzzseed has $(nthreads $mpid) threads, want 3"
dump $mpid mseed.img
kill9 $mpid
# its TIDs are restored by every variant: they must be free
n=250
while [ -n "$(tids_in_use "$MTIDS")" ]; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "TIDs $(tids_in_use "$MTIDS") of the killed seed still in use"
	usleep 20000
done
info "threaded seed image $(size_of mseed.img) bytes, TIDs $MTIDS"
mkdir img && chmod 755 img

# Restored variants with mutated registers die of user-space faults, which
# the kernel logs as e.g. "traps: fuzzseed[N] general protection fault
# ip:..." -- a user-space #GP that the host's dmesg check (which greps for
# "general protection") would take for a kernel fault.  Turn that logging
# of unhandled user-space signals off for the run; kernel oopses are logged
# regardless.
ET=/proc/sys/debug/exception-trace
et_old=$(cat $ET 2>/dev/null)
[ -n "$et_old" ] && echo 0 > $ET
restore_et() { [ -n "$et_old" ] && echo "$et_old" > $ET; cleanup; }
trap restore_et EXIT

# Warm-up (slab caches, page tables of the first runs, thread creation),
# then the baseline.
fuzz -n 300 -s 99 -u 1000 -d img seed.img > warm.out 2>&1 ||
	fail "warm-up round: $(grep -E 'UNEXPECTED|HANG|UNKILL|TIDBUSY|CONTROL|verdict' warm.out | head -n 3 | tr '\n' '|')"
fuzz -n 100 -s 98 -d img mseed.img > mwarm.out 2>&1 ||
	fail "threaded warm-up round: $(grep -E 'UNEXPECTED|HANG|UNKILL|TIDBUSY|CONTROL|verdict' mwarm.out | head -n 3 | tr '\n' '|')"
mem_snap before.mem

# The kernel log of the rounds, as it is written: the ring buffer wraps
# during a round, which would lose an early BUG or WARNING.
dmesg_mark
cat /dev/kmsg > kmsg.log 2>/dev/null &
kmsg_pid=$!
track $kmsg_pid

# round NAME N SEED-IMAGE W WREST ARGS...: run fuzz for N variants with
# the share W/WREST of the time left (WREST: the weights of this and the
# later rounds), output in NAME.out, exit status in NAME.rc.
t0=$(now_ms)
round() {
	_name=$1 _n=$2 _img=$3 _w=$4 _wrest=$5
	shift 5
	_lim=0
	if [ "$TLIMIT" != 0 ]; then
		_lim=$(( (TLIMIT - ($(now_ms) - t0) / 1000) * _w / _wrest ))
		[ "$_lim" -gt 10 ] || _lim=10
	fi
	fuzz -n "$_n" -t "$_lim" -d img "$@" "$_img" > "$_name.out" 2>&1
	echo $? > "$_name.rc"
}
round mroot $NMROOT mseed.img $WMROOT $((WMROOT + WMUSER + WROOT + WUSER)) -s 4
round muser $NMUSER mseed.img $WMUSER $((WMUSER + WROOT + WUSER)) -s 3 -u 1000 -x EPERM -S
round root $NROOT seed.img $WROOT $((WROOT + WUSER)) -s 2
round user $NUSER seed.img $WUSER $WUSER -s 1 -u 1000
t2=$(now_ms)
usleep 200000
kill $kmsg_pid 2>/dev/null
wait $kmsg_pid 2>/dev/null

# Restores of threaded variants that failed after the point of no return
# (the group is killed, with a message): how many, and why.
sed -n "/$DMESG_MARK/,\$p" kmsg.log > round.dmesg
[ -s round.dmesg ] || dmesg_since > round.dmesg
ngroup=$(grep -c 'killing the restored process' round.dmesg)
info "threaded restores killed after the exec: ${ngroup:-0}"
grep 'killing the restored process' round.dmesg | sed 's/.*): //; s/[0-9][0-9]*/N/g' |
	sort | uniq -c | sort -rn | head -n 5 | sed "s/^/INFO $T: killed: /"
kbad=$(grep -E "$KERNEL_REPORT_RE" round.dmesg |
	grep -vE '(\] |;)traps: [^ ]+\[[0-9]+\] general protection fault ip:' | head -n 3 | tr '\n' '|')
# The log copies live in this tmpfs directory: megabytes after a long
# round, which the memory check would count as lost.
rm -f kmsg.log round.dmesg

mem_snap after.mem
memres=$(mem_compare before.mem after.mem)
memrc=$?

for who in user root muser mroot; do
	sed "s/^fuzz: /INFO fuzz: [$who] /" $who.out | grep -v '^INFO fuzz: \[.*\] iter='
	grep -E '^fuzz: (UNEXPECTED|HANG|UNKILLABLE|TIDBUSY|CONTROL)' $who.out | head -n 5 |
		sed "s/^/INFO fuzz: [$who] problem: /"
done
echo "$memres" | grep '^INFO'

executed() { sed -n 's/^fuzz: target=[0-9]* executed=\([0-9]*\).*/\1/p' "$1.out"; }
ex_user=$(executed user)
ex_root=$(executed root)
ex_muser=$(executed muser)
ex_mroot=$(executed mroot)
total=$(( ${ex_user:-0} + ${ex_root:-0} + ${ex_muser:-0} + ${ex_mroot:-0} ))
ms=$((t2 - t0))
rate=$(( total * 1000 / (ms > 0 ? ms : 1) ))
info "fuzz count run: target=$N executed=$total (uid1000 ${ex_user:-0}/$NUSER, root ${ex_root:-0}/$NROOT, threaded uid1000 ${ex_muser:-0}/$NMUSER, threaded root ${ex_mroot:-0}/$NMROOT) in ${ms} ms, ${rate}/s"

for who in user root muser mroot; do
	[ "$(cat $who.rc)" = 0 ] ||
		fail "$who round: $(grep -E '^fuzz: (UNEXPECTED|HANG|UNKILLABLE|TIDBUSY|CONTROL|verdict)' $who.out | head -n 3 | tr '\n' '|')"
done
[ -z "$kbad" ] || fail "kernel log: $kbad"
[ "$memrc" = 0 ] || fail "$(echo "$memres" | grep '^LEAK')"
[ "$total" -gt 0 ] || fail "no image executed"
[ "$total" -ge "$N" ] || info "time limit reached: executed $total of $N"
pass "executed $total/$N images (threaded $(( ${ex_muser:-0} + ${ex_mroot:-0} ))), ${rate}/s"
