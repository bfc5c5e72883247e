#!/bin/sh
# An image whose vdso is not the running kernel's (as after a kernel
# upgrade; made here by changing a padding byte of the image's copy of its
# vdso, "corrupt othervdso") restores with that copy kept at the old
# address, each function's entry a jump into this kernel's vdso, which is
# mapped elsewhere.  Python calls clock_gettime through the pointers into
# the vdso that glibc took at its start: its times stay right after the
# restore.  CLOCK_REALTIME_COARSE is the check that the jumps are taken: the
# old code would read it from the old data page, zero now, without falling
# back to the system call.  Then the refusals, before anything of the image
# runs: a function too small for a jump, a function this kernel's vdso has
# not, a thread stopped inside the vdso not at a system call, a copy that
# does not match its checksum.  Control: the pauser image with another vdso.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY in the guest"

cat > clk.py <<'PYEOF'
import sys, time
n = int(sys.argv[1])
prev = time.monotonic_ns()
print("ready", flush=True)
for i in range(1, n + 1):
    time.sleep(0.1)
    now = time.monotonic_ns()
    wall = time.time()
    coarse = time.clock_gettime(5)  # CLOCK_REALTIME_COARSE
    d = now - prev
    ok = 0 < d < 10 ** 10 and abs(wall - coarse) < 2 and wall > 1.6e9
    print("t %d %s %d %.3f %.3f" % (i, "ok" if ok else "BAD", d, wall, coarse), flush=True)
    prev = now
print("clk done", flush=True)
PYEOF

vdso_of() { awk '/\[vdso\]/ { split($1, a, "-"); print a[1] }' "/proc/$1/maps"; }

$PY clk.py 40 > out 2> py.err &
pid=$!
track $pid
wait_line out '^t 5 ' 60 || fail "python did not start: $(cat py.err)"
stop_task $pid
old=$(vdso_of $pid)
last=$(grep '^t ' out | tail -n 1 | cut -d' ' -f2)
dump $pid p.img
kill9 $pid
corrupt p.img o.img othervdso 2> c.err || fail "corrupt othervdso: $(cat c.err)"
cmp -s p.img o.img && fail "corrupt othervdso changed nothing"

chmod +x o.img
dmesg_mark
./o.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_line out "^t $((last + 1)) " 30 || fail "no 't $((last + 1))' after the restore: $(tail -n1 out)$(rerr) $(dmesg_since | tail -n 2)"
new=$(vdso_of $rpid)
oldmap=$(grep "^$old-" /proc/$rpid/maps)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the vdso is at $new, the image's was at $old: not remapped"
case "$oldmap" in
*' r-xp '*) ;;
*) fail "at the old vdso address: '$oldmap', want the r-x copy" ;;
esac
case "$oldmap" in *vdso*) fail "the old address is still the vdso: $oldmap" ;; esac
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "restored python exit $RC: $(tail -n1 out)$(rerr)"
grep -q '^clk done$' out || fail "no 'clk done': $(tail -n1 out)"
bad=$(grep '^t [0-9]* BAD' out | head -n 1)
[ -z "$bad" ] || fail "wrong times: $bad"
n=0
while read -r a b rest; do
	[ "$a" = t ] || continue
	n=$((n + 1))
	[ "$b" = "$n" ] || fail "line $n is 't $b' (gap or repeat)"
done < out
[ "$n" = 40 ] || fail "got $n lines, want 40"
info "vdso $old -> $new, old place: $oldmap"

pauser > p.out &
pid=$!
track $pid
wait_line p.out ready 10 || fail "pauser did not start"
stop_task $pid
dump $pid q.img
kill9 $pid

# refuse MODE ERRNO DMESG_REGEX
refuse() {
	corrupt q.img "$1.img" "$1" 2> c.err || fail "corrupt $1: $(cat c.err)"
	dmesg_mark
	r=$(tryexec_expect "$1.img")
	[ -z "$r" ] || fail "$1: image accepted or caller killed: $r"
	[ "$(cat te.errno)" = "$2" ] || fail "$1: execve failed with $(cat te.errno), want $2"
	dmesg_since > dm.txt
	grep -q "$3" dm.txt || fail "$1: no dmesg line matching '$3' (got: $(tr '\n' '|' < dm.txt))"
}
refuse vdsotight EOPNOTSUPP 'binfmt_img: .*__vdso_time .* has no room for a jump'
refuse vdsoname EOPNOTSUPP "binfmt_img: .*vdso has __vdso_getcpX, this kernel's vdso has not"
refuse vdsorip EOPNOTSUPP 'binfmt_img: .*stopped inside the vdso (offset 0x[0-9a-f]*), not at a system call'
refuse vdsocrc EINVAL 'binfmt_img: .*copy of the vdso does not match'

corrupt q.img other.img othervdso || fail "corrupt othervdso (pauser)"
control_restore other.img p.out
pass "python resumed at t $((last + 1)) with the vdso moved, 4 refusals"
