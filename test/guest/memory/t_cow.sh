#!/bin/sh
# Memory shared copy-on-write between a parent, its child and its grandchild
# stays shared after dump + restore (see progs/cowshare.c: 48 MiB, each
# generation rewrote 4 MiB of it).  From outside: the sum of the three
# processes' proportional set sizes (Pss) stays about 56 MiB, 68 MiB with
# the advised regions below (copied apart it would be 144 + 36 MiB), and
# the region's line in /proc/PID/maps is the same.
# From inside: every page holds what it held, each task's smaps says most
# of the region is shared and how much is its own, and a write after the
# restore stays the writer's (copy-on-write still separates them).
# Then the in-place exec's refusals (binfmt_img restores a task into the
# caller's own mm when imgcr names mappings to keep): a mapping the image
# has not, one the caller has not or has read-only, shared or executable,
# a vfork() child (its memory is its parent's), a caller whose saved user
# ID differs (exec would reset it), one with another thread or a POSIX
# timer: each refused before the point of no return, the caller carrying on.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/cowlib.sh
require_modules

MIB=1048576

cow_start
xregions=$(sed -n 's/^xregion \([a-z]*\) \([0-9a-f]*\)$/\1:\2/p' w/p)
[ "$(echo $xregions | wc -w)" = 3 ] || fail "no three advised regions: $(grep xregion w/p | tr '\n' '|')"

# pss: the three processes' Pss in KiB; maps_line PID: the region's line
pss() {
	awk '/^Pss:/ { s += $2 } END { print s + 0 }' \
		/proc/$P/smaps_rollup /proc/$C/smaps_rollup /proc/$G/smaps_rollup
}
maps_line() { grep "^$region-" /proc/$1/maps; }

# xinfo PID ADDR: "RSS PSS VMFLAGS..." (KiB) of the mapping at ADDR in /proc/PID/smaps
xinfo() {
	awk -v r="$2-" 'index($0, r) == 1 { on = 1; next } /^[0-9a-f]+-/ { on = 0 }
		on && /^Rss:/ { rss = $2 } on && /^Pss:/ { pss = $2 }
		on && /^VmFlags:/ { $1 = ""; fl = $0 } END { print rss + 0, pss + 0, fl }' /proc/$1/smaps
}
# xcheck WHEN: each task has each advised region whole, with its advice, shared
xcheck() {
	_pss=0
	for _x in $xregions; do
		_n=${_x%%:*} _a=${_x#*:}
		for _p in $P $C $G; do
			_i=$(xinfo $_p $_a)
			set -- $_i
			[ "$1" -ge 4000 ] || fail "$WHEN: task $_p, $_n region $_a: Rss $1 KiB, want 4096"
			case " $_i " in *" $_n "*) ;; *) fail "$WHEN: task $_p, $_n region $_a: no $_n in VmFlags: $_i" ;; esac
			_pss=$((_pss + $2))
		done
	done
	# one copy: 12288 KiB; copied apart: 36864
	[ $_pss -lt 18432 ] || fail "$WHEN: the advised regions' Pss add up to $_pss KiB: copied apart"
	info "$WHEN: advised regions' Pss $_pss KiB"
}

for p in $P $C $G; do wait_state $p S 10 || fail "task $p not sleeping"; done
before=$(pss)
for p in $P $C $G; do maps_line $p; done > maps.before
[ "$(wc -l < maps.before)" = 3 ] || fail "region $region not in every task's maps"
info "Pss before: $before KiB"
[ "$before" -lt $((74 * 1024)) ] || fail "the test's own sharing is missing before the dump ($before KiB)"
WHEN="before the dump"
xcheck

imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $P $C $G; do wait_gone $p 10 || fail "task $p survived the dump"; done
imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
wait_tasks_restored $P $C $G
after=$(pss)
for p in $P $C $G; do info "$p: $(awk -v r="$region-" 'index($0, r) == 1 { on = 1; next } /^[0-9a-f]+-/ { on = 0 } on && /^(Rss|Shared_Dirty|Private_Dirty|AnonHugePages):/ { printf "%s %s ", $1, $2 }' /proc/$p/smaps)"; done
info "Pss after: $after KiB"
for p in $P $C $G; do maps_line $p; done > maps.after
cmp -s maps.before maps.after ||
	fail "region's maps lines changed: $(tr '\n' '|' < maps.before) -> $(tr '\n' '|' < maps.after)"
# copied apart: 144 + 36 MiB; shared: 56 + 12 MiB and a little for the programs
[ "$after" -lt $((74 * 1024)) ] || fail "Pss after the restore $after KiB (before: $before): memory was copied apart"
WHEN="after the restore"
xcheck

cow_finish
info "p: $(grep '^shared' w/p) c: $(grep '^shared' w/c) g: $(grep '^shared' w/g)"

# --- the in-place exec refuses what it cannot keep -------------------------
range=$(cat maps.before | head -n1 | cut -d' ' -f1)
s=${range%-*}
e=${range#*-}
img=d/core-$P.img
chmod +x $img

# keep_expect MODE START END WANT: "" if the exec was refused with EINVAL
# (WANT: the kernel's reason, grepped), the caller carrying on
keep_expect() {
	dmesg_mark
	timeout -s KILL 20 cowshare keep "$1" "$img" "$2" "$3" > k.out 2>&1
	_rc=$?
	if [ "$_rc" != 2 ] || ! grep -q '^cowshare: execve failed: EINVAL' k.out; then
		echo "$1: rc=$_rc ($(head -c 80 k.out | tr '\n' ' '))"
	elif [ -n "$4" ] && ! dmesg_since | grep -q "$4"; then
		echo "$1: no '$4' in the kernel log: $(dmesg_since | tail -n1)"
	fi
}
# MODE START END: the kernel's reason
while read -r mode rs re why; do
	r=$(keep_expect "$mode" "$rs" "$re" "$why")
	[ -z "$r" ] || fail "$r"
done <<EOF
rw 10000 20000 names a mapping the image has not
none $s $e not mapped in the caller
ro $s $e not plain private anonymous
shared $s $e not plain private anonymous
exec $s $e not plain private anonymous
vfork $s $e vfork() child
ids $s $e IDs differ
thread $s $e other threads
timer $s $e POSIX timers
EOF

# the control: a valid caller restores the parent's image in place
cowshare keep rw $img $s $e > ctl.out 2>&1 &
cp=$!
track $cp
# the same program: restored once its command line is the parent's again
n=0
until tr '\0' ' ' < /proc/$cp/cmdline 2>/dev/null | grep -q "^cowshare $PWD/w"; do
	n=$((n + 1))
	[ $n -lt 3000 ] && [ -d /proc/$cp ] ||
		fail "in-place restore by a valid caller failed: $(tail -n2 ctl.out | tr '\n' '|')"
	usleep 20000
done
kill -USR1 $cp
wait_line ctl.out '^checked' 30 || fail "in-place restored task did not check: $(tail -n2 ctl.out | tr '\n' '|')"
grep -q '^ok data' ctl.out || fail "in-place restored task: $(grep 'data' ctl.out)"
kill9 $cp
pass "Pss $before -> $after KiB, data, advice (hg nh dd) and copy-on-write intact, 9 refusals"
