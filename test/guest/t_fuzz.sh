#!/bin/sh
# Fuzz binfmt_img: execute thousands of malformed variants of a small image
# (see test/progs/fuzz.c) as uid 1000 and as root.  PASS if the intact seed
# keeps restoring, nothing hangs or survives SIGKILL, every rejected execve
# fails with a documented errno, and no kernel memory leaks (SUnreclaim,
# MemAvailable plus per-CPU free pages after drop_caches, before vs after).
#
# The number of variants is imgcr.fuzz=N on the kernel command line
# (test/run.sh --fuzz N, or test/fuzz.sh N); default: the CI round below.
# timeout: 7200
. /imgcr/guest/lib.sh
. /imgcr/guest/memcheck.sh
require_modules

CI_N=25000          # ~2.5 min per kernel at ~160/s under TCG (capped by TLIMIT)
arg() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
N=$(arg imgcr.fuzz)
if [ -n "$N" ]; then
	TLIMIT=0    # an explicit long round runs to the end
else
	N=$CI_N
	TLIMIT=240  # safety net for a loaded host
fi
NROOT=$((N / 5))
NUSER=$((N - NROOT))

chmod 755 .
fuzzseed > s.out &
pid=$!
track $pid
wait_line s.out '^ready ' 10 || fail "fuzzseed did not start"
wait_state $pid T 10 || fail "fuzzseed did not stop itself"
dump $pid seed.img
kill9 $pid
info "seed image $(size_of seed.img) bytes"
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

# Warm-up (slab caches, page tables of the first runs), then the baseline.
fuzz -n 300 -s 99 -u 1000 -d img seed.img > warm.out 2>&1 ||
	fail "warm-up round: $(grep -E 'UNEXPECTED|HANG|UNKILL|CONTROL|verdict' warm.out | head -n 3 | tr '\n' '|')"
mem_snap before.mem

t0=$(now_ms)
fuzz -n $NUSER -t $TLIMIT -s 1 -u 1000 -d img seed.img > user.out 2>&1
rc_user=$?
t1=$(now_ms)
left=0
[ "$TLIMIT" = 0 ] || left=$((TLIMIT - (t1 - t0) / 1000))
[ "$TLIMIT" = 0 ] || [ "$left" -gt 10 ] || left=10
fuzz -n $NROOT -t $left -s 2 -d img seed.img > root.out 2>&1
rc_root=$?
t2=$(now_ms)

mem_snap after.mem
memres=$(mem_compare before.mem after.mem)
memrc=$?

for who in user root; do
	sed "s/^fuzz: /INFO fuzz: [$who] /" $who.out | grep -v '^INFO fuzz: \[.*\] iter='
	grep -E '^fuzz: (UNEXPECTED|HANG|UNKILLABLE|CONTROL)' $who.out | head -n 5 |
		sed "s/^/INFO fuzz: [$who] problem: /"
done
echo "$memres" | grep '^INFO'

ex_user=$(sed -n 's/^fuzz: target=[0-9]* executed=\([0-9]*\).*/\1/p' user.out)
ex_root=$(sed -n 's/^fuzz: target=[0-9]* executed=\([0-9]*\).*/\1/p' root.out)
total=$(( ${ex_user:-0} + ${ex_root:-0} ))
ms=$((t2 - t0))
rate=$(( total * 1000 / (ms > 0 ? ms : 1) ))
info "fuzz count run: target=$N executed=$total (uid1000 ${ex_user:-0}/$NUSER, root ${ex_root:-0}/$NROOT) in ${ms} ms, ${rate}/s"

[ "$rc_user" = 0 ] || fail "uid 1000 round: $(grep -E '^fuzz: (UNEXPECTED|HANG|UNKILLABLE|CONTROL|verdict)' user.out | head -n 3 | tr '\n' '|')"
[ "$rc_root" = 0 ] || fail "root round: $(grep -E '^fuzz: (UNEXPECTED|HANG|UNKILLABLE|CONTROL|verdict)' root.out | head -n 3 | tr '\n' '|')"
[ "$memrc" = 0 ] || fail "$(echo "$memres" | grep '^LEAK')"
[ "$total" -gt 0 ] || fail "no image executed"
[ "$total" -ge "$N" ] || info "time limit reached: executed $total of $N"
pass "executed $total/$N images, ${rate}/s"
