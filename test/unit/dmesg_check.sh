#!/bin/bash
# Host check, no guest: the dmesg check every guest run ends with
# (test/lib-host.sh check_dmesg) fails on each kind of kernel report the
# memory checkers write (issue 25): KFENCE, SLUB debugging, page poisoning,
# kmemleak, and the old BUG/WARNING/Oops/GPF, and passes a clean log of a
# guest booted with the checkers on (their boot messages, user-space
# faults).  The report lines are the kernels' own formats
# (mm/kfence/report.c, mm/slub.c slab_bug(), mm/page_poison.c,
# mm/kmemleak.c).
# Prints one "RESULT dmesg_check-NAME PASS|FAIL" line per case.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
IMGCR_BUILD=$tmp/build
. "$REPO/test/lib-host.sh"
RESULTS=$tmp/results.txt
fails=0

# case NAME WANT LINE...: a guest log with LINEs between the markers must
# give WANT (PASS or FAIL).
case_() {
	local name=$1 want=$2 dir=$tmp/$1 got
	shift 2
	mkdir -p "$dir"
	{
		echo "IMGCR-DMESG-BEGIN"
		echo "[    0.000000] Linux version 6.12.118+deb12-amd64"
		printf '%s\n' "$@"
		echo "IMGCR-DMESG-END"
	} > "$dir/console.log"
	: > "$RESULTS"
	check_dmesg "x" "$dir"
	got=$(cut -f1 "$RESULTS")
	if [ "$got" = "$want" ]; then
		echo "RESULT dmesg_check-$name PASS"
	else
		echo "RESULT dmesg_check-$name FAIL check_dmesg gave '$got', want $want: $(cut -f3 "$RESULTS")"
		fails=$((fails + 1))
	fi
}

case_ clean PASS \
	"[    0.000000] Kernel command line: console=ttyS0 kfence.sample_interval=10 slub_debug=FZPU page_poison=1 init_on_free=1" \
	"[    0.000000] mem auto-init: CONFIG_PAGE_POISONING is on, will take precedence over init_on_alloc and init_on_free" \
	"[    0.000000] mem auto-init: stack:all(zero), heap alloc:off, heap free:off" \
	"[    0.000000] **   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **" \
	"[    0.031000] kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)-0x(____ptrval____)" \
	"[   12.000000] traps: fuzzseed[312] general protection fault ip:401234 sp:7ffd0000 error:0 in fuzzseed[401000+9000]"
case_ kfence FAIL \
	"[   20.100000] ==================================================================" \
	"[   20.100001] BUG: KFENCE: use-after-free read in dump_read+0x1c/0x80 [img_dump]"
case_ kfence-oob FAIL \
	"[   20.100001] BUG: KFENCE: out-of-bounds write in img_parse_notes+0x2a/0x300 [binfmt_img]"
case_ slub-redzone FAIL \
	"[   20.200000] =============================================================================" \
	"[   20.200001] BUG kmalloc-64 (Tainted: G           OE     ): Right Redzone overwritten"
case_ slub-poison FAIL \
	"[   20.300001] BUG kmalloc-128 (Tainted: G           OE     ): Poison overwritten"
case_ slub-padding FAIL \
	"[   20.300001] BUG task_struct (Tainted: G           OE     ): Object padding overwritten"
case_ slub-fix-only FAIL \
	"[   20.300001] FIX kmalloc-64: Restoring Right Redzone 0x00000000abcd-0x00000000abcf=0xcc"
case_ page-poison FAIL \
	"[   20.400001] pagealloc: memory corruption" \
	"[   20.400002] fffff000: 00 00 00 00 6b 6b 6b 6b  ....kkkk"
case_ kmemleak FAIL \
	"[   80.000001] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
case_ warning FAIL \
	"[   20.500001] WARNING: CPU: 0 PID: 77 at mm/gup.c:1234 __get_user_pages+0x1/0x2"
case_ oops FAIL \
	"[   20.600001] Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI"
case_ list-corruption FAIL \
	"[   20.700001] list_del corruption. prev->next should be ffff8880, but was dead000000000100"
exit $((fails > 0))
