#!/bin/sh
# Memory shared copy-on-write is shared again only where that is safe.
# cow_uid: between tasks with the same credentials only: a child running
# as another user must never hold its parent's pages, not even while its
# exec rewrites them.  progs/cowshare.c with a grandchild that switched to
# uid 1000: after dump + restore the parent and child still share the
# region (Pss about 66 MiB, 120 if copied), the grandchild has its own
# copy (at least 44 MiB private, checked from inside and in its Pss), every
# task's data is intact, and imgcr printed no warning (the copy is
# planned, not an in-place refusal).
# cow_uid-nodump: the three not dumpable (as ssh-agent): binfmt_img refuses
# to restore them in place for a dumpable restorer (what was opened of the
# restorer would reach them), and imgcr restore falls back to a plain exec
# with a warning for each: all three come back, each with its own copy.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/cowlib.sh
require_modules
chmod 755 .

# pss PID...: their Pss summed, in KiB
pss() { awk '/^Pss:/ { s += $2 } END { print s + 0 }' $(for _p in "$@"; do echo /proc/$_p/smaps_rollup; done); }

# region_info PID: the region's Rss, Shared/Private and AnonHugePages (KiB)
region_info() {
	awk -v r="$region-" 'index($0, r) == 1 { on = 1; next } /^[0-9a-f]+-/ { on = 0 }
		on && /^(Rss|Shared_Clean|Shared_Dirty|Private_Clean|Private_Dirty|AnonHugePages):/ { printf "%s %s ", $1, $2 }' /proc/$1/smaps
}
diag() {
	info "$1: THP $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag) max_ptes_shared $(cat /sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_shared 2>/dev/null) full_scans $(cat /sys/kernel/mm/transparent_hugepage/khugepaged/full_scans)"
	info "$1: vmstat $(grep -E '^(thp_collapse_alloc|thp_fault_alloc|thp_split_pmd|pgmajfault|pswpout) ' /proc/vmstat | tr '\n' ' ') MemFree $(awk '/^MemFree/ {print $2}' /proc/meminfo)"
	for _p in $P $C $G; do info "$1: $_p region: $(region_info $_p)"; done
}

# dump_restore: dump the tree, restore it detached, wait for all three
dump_restore() {
	for p in $P $C $G; do wait_state $p S 10 || fail "task $p not sleeping"; done
	imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
	for p in $P $C $G; do wait_gone $p 10 || fail "task $p survived the dump"; done
	imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
	wait_tasks_restored $P $C $G
	info "restore stderr: $(tr '\n' '|' < restore.err)"
	diag "after restore"
}

uid_case() {
	mkdir uid && cd uid || fail "mkdir"
	cow_start 1000
	[ "$(awk '/^Uid:/ { print $2 }' /proc/$G/status)" = 1000 ] || fail "grandchild uid: $(grep Uid: /proc/$G/status)"
	diag "before dump"
	dump_restore
	grep -q warning restore.err && fail "restore warned: $(tr '\n' '|' < restore.err)"
	[ "$(awk '/^Uid:/ { print $2 }' /proc/$G/status)" = 1000 ] || fail "restored grandchild uid: $(grep Uid: /proc/$G/status)"
	pc=$(pss $P $C)
	g=$(pss $G)
	info "Pss after: parent + child $pc KiB, grandchild $g KiB"
	# parent + child: the 48 MiB region shared but [0,4M) and the three
	# 4 MiB advised regions: about 66 MiB with the programs (copied: 120)
	[ "$pc" -lt $((80 * 1024)) ] || fail "parent and child no longer share: Pss $pc KiB; region at $region: p $(region_info $P) c $(region_info $C); restore: $(tr '\n' '|' < restore.err)"
	[ "$g" -ge $((48 * 1024)) ] || fail "grandchild Pss $g KiB: still sharing with its parent"
	cow_finish
	pass "p: $(grep '^shared' w/p) c: $(grep '^shared' w/c) g: $(grep '^shared' w/g)"
}

nodump_case() {
	mkdir nodump && cd nodump || fail "mkdir"
	cow_start nodump
	dump_restore
	# the module's reason is in imgcr's warning (--imgcr-status)
	n=$(grep -c "^imgcr: warning: pid [0-9]*: cannot restore in place (Invalid argument: .*the image was not dumpable and the caller is" restore.err)
	[ "$n" = 3 ] || fail "$n in-place warnings, want 3: $(tr '\n' '|' < restore.err)"
	dmesg | grep -q "the image was not dumpable and the caller is" || fail "no reason in the kernel log"
	all=$(pss $P $C $G)
	info "Pss after: $all KiB"
	[ "$all" -ge $((150 * 1024)) ] || fail "Pss $all KiB: memory still shared"
	cow_finish
	pass "3 plain execs after the in-place refusal, Pss $all KiB, data intact"
}

subtest cow_uid uid_case
subtest cow_uid-nodump nodump_case
