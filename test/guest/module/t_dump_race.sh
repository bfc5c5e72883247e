#!/bin/sh
# Race stress of /proc/PID/dump (issue 25): for imgcr.race=SECONDS on the
# kernel command line (default 10) test/progs/dumprace.c runs 4 racer
# processes against 4 targets that mmap, munmap, mremap, mprotect, fork,
# create threads, exec themselves and exit, stopping them with SIGSTOP or
# ptrace (seize+interrupt, attach; then detach), opening their dump and
# reading it, IMGCR_IOC_DUMP_TO, _SKIP, _PRECOPY, bad ioctls, with SIGCONT
# or SIGKILL between open and use, and descriptors kept open past their
# task's exit.  Beside it two shell loops: "cat /proc/PID/dump" of a
# stopped target, and "imgcr dump -R" of one (the tree left running; it
# may refuse: targets come and go).
# PASS: no errno the races do not explain, no racer hangs, the kernel log
# has no report (BUG, WARNING, KFENCE, SLUB, page poison...), no kernel
# memory leaks (memcheck.sh, after a warm-up), the module's reference
# count is back to 0 and both modules unload with rmmod and load again.
# timeout: 1800
. /imgcr/guest/lib.sh
. /imgcr/guest/memcheck.sh
require_modules
trap 'cleanup; ensure_modules' EXIT
# No restore here: no state check snapshots for the hundreds of dumps.
unset IMGCR_STATE_HOOK

arg() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
DUR=$(arg imgcr.race)
DUR=${DUR:-10}

# User-space faults of the killed targets are no kernel reports, but are
# logged as "traps: ..." lines: off for the run, as in t_fuzz.
ET=/proc/sys/debug/exception-trace
et_old=$(cat $ET 2>/dev/null)
[ -n "$et_old" ] && echo 0 > $ET
trap 'cleanup; [ -n "$et_old" ] && echo "$et_old" > $ET; ensure_modules' EXIT

# Warm-up (slab caches, the module's first images), then the baseline.
dumprace -t 5 > warm.out 2>&1 || fail "warm-up: $(grep -E 'UNEXPECTED|racer' warm.out | head -n 3 | tr '\n' '|')"
rm -f race-*.img targets
mem_snap before.mem
dmesg_mark
# The log as it is written: the ring buffer may wrap during a long run.
cat /dev/kmsg > kmsg.log 2>/dev/null &
kmsg_pid=$!
track $kmsg_pid

# shell_racer KIND: until the file "stop" exists, stop a target, dump it
# with cat or imgcr dump -R, continue it.  Counts in KIND.count.
shell_racer() {
	ok=0 failed=0
	while [ ! -e stop ]; do
		for p in $(cat targets 2>/dev/null); do
			[ -e stop ] && break
			kill -STOP "$p" 2>/dev/null || continue
			if [ "$1" = cat ]; then
				if cat "/proc/$p/dump" > /dev/null 2>> cat.err; then
					ok=$((ok + 1))
				else
					failed=$((failed + 1))
				fi
			else
				rm -rf d
				if imgcr dump -R -t "$p" -D d > /dev/null 2>> imgcr.err; then
					ok=$((ok + 1))
				else
					failed=$((failed + 1))
				fi
			fi
			kill -CONT "$p" 2>/dev/null
		done
		usleep 10000
	done
	echo "$ok $failed" > "$1.count"
}

dumprace -t "$DUR" -r 4 -n 4 > race.out 2>&1 &
rpid=$!
track $rpid
n=0
until [ -s targets ]; do
	n=$((n + 1))
	[ $n -lt 500 ] || fail "dumprace did not start: $(cat race.out)"
	usleep 20000
done
shell_racer cat &
c1=$!
track $c1
shell_racer imgcr &
c2=$!
track $c2
# dumprace ends itself after DUR s; the deadline is for a hang.
n=0
while kill -0 $rpid 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt $(( (DUR + 120) * 5 )) ] || { touch stop; fail "dumprace hangs $((DUR + 120)) s after its start: $(cat race.out)"; }
	usleep 200000
done
wait $rpid
rc=$?
touch stop
wait $c1 $c2
sed 's/^/INFO dump_race: /' race.out | grep -v '^INFO dump_race: started'
info "cat of a stopped target: $(cat cat.count 2>/dev/null) (ok failed); errors: $(sed 's/.*: //' cat.err 2>/dev/null | sort | uniq -c | sort -rn | head -n 3 | tr -s ' ' | tr '\n' ';')"
info "imgcr dump -R: $(cat imgcr.count 2>/dev/null) (ok failed); errors: $(sed 's/[0-9][0-9]*/N/g' imgcr.err 2>/dev/null | sort | uniq -c | sort -rn | head -n 3 | tr -s ' ' | tr '\n' ';')"
rm -rf d race-*.img cat.err imgcr.err

usleep 200000
kill $kmsg_pid 2>/dev/null
wait $kmsg_pid 2>/dev/null
sed -n "/$DMESG_MARK/,\$p" kmsg.log > race.dmesg
[ -s race.dmesg ] || dmesg_since > race.dmesg
kbad=$(grep -E "$KERNEL_REPORT_RE" race.dmesg |
	grep -vE '(\] |;)traps: [^ ]+\[[0-9]+\] general protection fault ip:' | head -n 3 | tr '\n' '|')
info "kernel log lines during the race: $(wc -l < race.dmesg); most frequent: $(sed 's/^[0-9,]*-;//; s/[0-9][0-9]*/N/g' race.dmesg | sort | uniq -c | sort -rn | head -n 2 | tr -s ' ' | tr '\n' ';')"
rm -f kmsg.log race.dmesg

# Every descriptor is closed: the module's reference count is 0 again.
refs=$(cat /sys/module/img_dump/refcnt 2>/dev/null)

mem_snap after.mem
memres=$(mem_compare before.mem after.mem)
memrc=$?
echo "$memres" | grep '^INFO'

rmmod binfmt_img > rm.out 2>&1 || fail "rmmod binfmt_img: $(cat rm.out)"
rmmod img_dump > rm.out 2>&1 || fail "rmmod img_dump after the race (refcnt $refs): $(cat rm.out)"
insmod /imgcr/mod/img_dump.ko || fail "insmod img_dump after rmmod"
insmod /imgcr/mod/binfmt_img.ko || fail "insmod binfmt_img after rmmod"

[ "$rc" = 0 ] || fail "dumprace: $(grep -E 'UNEXPECTED|racer|^unexpected' race.out | head -n 4 | tr '\n' '|')"
[ -z "$kbad" ] || fail "kernel log: $kbad"
[ "$refs" = 0 ] || fail "img_dump refcnt $refs after every dump file was closed"
[ "$memrc" = 0 ] || fail "$(echo "$memres" | grep '^LEAK')"
ops=$(sed -n 's/^ops \([0-9]*\).*/\1/p' race.out)
[ "${ops:-0}" -gt $((DUR * 25)) ] || fail "only ${ops:-0} operations in $DUR s"
pass "$ops dump operations in $DUR s, $(sed -n 's/^open total=\([0-9]*\) ok=\([0-9]*\).*/\2 of \1 opens/p' race.out) succeeded; cat/imgcr ok+failed: $(cat cat.count) / $(cat imgcr.count)"
