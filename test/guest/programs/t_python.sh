#!/bin/sh
# Debian's python3 (dynamically linked, its stdlib from the initramfs)
# builds a 200k-entry dict, then prints "i N sum S" every ~100 ms.  Stopped
# mid-loop, dumped, killed and restored (stdout appended), it must go on
# with the next N and no gap, reach the target and verify the whole dict
# against the checksum it computed before the dump ("python ok").
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY in the guest"

cp /imgcr/guest/pyloop.py loop.py

TARGET=60
t0=$(now_ms)
$PY loop.py $TARGET > out 2> py.err &
pid=$!
track $pid
wait_line out '^built ' 120 || fail "python did not build the dict: $(tail -c 300 py.err | tr '\n' '|')"
build_ms=$(( $(now_ms) - t0 ))
wait_line out '^i 10 ' 20 || fail "python loop did not reach 10: $(tail -n1 out)"
stop_task $pid
[ "$(ls /proc/$pid/task | wc -l)" = 1 ] || fail "python is multi-threaded"
last=$(tail -n 1 out | cut -d' ' -f2)
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' /proc/$pid/status)
t0=$(now_ms)
dump $pid p.img
dump_ms=$(( $(now_ms) - t0 ))
kill9 $pid
[ "$(tail -n 1 out | cut -d' ' -f2)" = "$last" ] || fail "output changed after kill"

chmod +x p.img
t0=$(now_ms)
./p.img >> out 2> restore.err &
rpid=$!
track $rpid
# Restore time: until the exec caller has become python again.
while case "$(readlink /proc/$rpid/exe 2>/dev/null)" in */busybox) true ;; *) false ;; esac; do
	usleep 5000
done
restore_ms=$(( $(now_ms) - t0 ))
wait_line out "^i $((last + 1)) " 10 || fail "no line $((last + 1)) after restore: $(tail -n1 out)$(rerr)"
first_ms=$(( $(now_ms) - t0 ))
info "image_bytes=$(size_of p.img) rss=$rss dump_ms=$dump_ms restore_ms=$restore_ms first_line_ms=$first_ms build_ms=$build_ms stopped_at=$last"
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "restored python exit $RC: $(tail -n1 out)$(rerr)"

# Outside view: 1..TARGET exactly once, in order, with the right sums.
n=0
s=0
while read -r a b c d; do
	[ "$a" = i ] || continue
	n=$((n + 1))
	s=$((s + n))
	[ "$b $c $d" = "$n sum $s" ] || fail "line $n is 'i $b $c $d' (gap or repeat)"
done < out
[ "$n" = $TARGET ] || fail "got $n progress lines, want $TARGET"
grep -q '^python ok ' out || fail "no 'python ok': $(tail -n1 out)"
pass "resumed at $((last + 1)), image $(size_of p.img) bytes, dump ${dump_ms} ms, restore ${restore_ms} ms"
