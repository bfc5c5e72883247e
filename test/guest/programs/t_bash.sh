#!/bin/sh
# Debian's bash (dynamically linked) runs a loop of builtins only -- no
# child process -- with a USR1 trap: "trap N" per signal and "i N" every
# ~100 ms, waiting with "read -t 0.1" on fd 9, a FIFO that never gets data
# (opened read-write, so it never sees EOF either).  Fds are not part of
# an image: the exec caller provides fd 9 again.  Stopped, dumped, killed
# and restored, it must continue both counters without gap and finish.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules
BASH=/usr/bin/bash
[ -x $BASH ] || fail "no $BASH in the guest"

# -c, not a script file: bash keeps reading a script file through fd 255,
# which a restored process would not have.
SCRIPT='
max=$1 n=0 i=0
trap '\''n=$((n + 1)); echo "trap $n"'\'' USR1
echo "ready $$ $BASH_VERSION"
while ((i < max)); do
	read -t 0.1 -u 9 _x
	i=$((i + 1))
	echo "i $i"
done
echo "bash done i=$i n=$n"
'
MAX=100
mkfifo never
$BASH -c "$SCRIPT" bash $MAX 9<> never > out 2> bash.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "bash did not start: $(cat bash.err)"
# A USR1 that arrives while bash still runs the trap for the previous one
# can be merged with it, so the next one is sent only once the loop has
# printed a line after the trap's.
loop_resumed() {
	awk -v t="trap $1" '$0 == t { s = 1; next } s && /^i / { f = 1 } END { exit !f }' out
}
for n in 1 2; do
	kill -USR1 $pid
	wait_line out "^trap $n\$" 10 || fail "trap $n not run: $(tail -n1 out)"
	k=500
	until loop_resumed $n; do
		k=$((k - 1))
		[ $k -gt 0 ] || fail "loop did not resume after trap $n: $(tail -n1 out)"
		usleep 20000
	done
done
wait_line out '^i 10$' 20 || fail "loop did not reach 10: $(tail -n1 out)"
stop_task $pid
[ -z "$(grep -l "^PPid:[[:space:]]*$pid\$" /proc/[0-9]*/status 2>/dev/null)" ] || fail "bash has a child"
last=$(grep '^i ' out | tail -n 1 | cut -d' ' -f2)
dump $pid b.img
info "image $(size_of b.img) bytes, stopped at i=$last in syscall $(cut -d' ' -f1 /proc/$pid/syscall 2>/dev/null)"
kill9 $pid

chmod +x b.img
./b.img 9<> never >> out 2> restore.err &
rpid=$!
track $rpid
wait_line out "^i $((last + 1))\$" 10 || fail "no 'i $((last + 1))' after restore: $(tail -n1 out)$(rerr)"
kill -USR1 $rpid
wait_line out '^trap 3$' 10 || fail "trap 3 not run after restore: $(tail -n1 out)$(rerr)"
wait_exit $rpid 30
[ "$RC" = 0 ] || fail "restored bash exit $RC: $(tail -n1 out)$(rerr)"

n=0
while read -r a b; do
	[ "$a" = i ] || continue
	n=$((n + 1))
	[ "$b" = "$n" ] || fail "line $n is 'i $b' (gap or repeat)"
done < out
[ "$n" = $MAX ] || fail "got $n counter lines, want $MAX"
[ "$(grep '^trap' out | tr '\n' ' ')" = "trap 1 trap 2 trap 3 " ] || fail "traps: $(grep '^trap' out | tr '\n' ' ')"
grep -q "^bash done i=$MAX n=3\$" out || fail "no 'bash done i=$MAX n=3': $(tail -n1 out)"
pass "resumed at i=$((last + 1)) as pid $rpid"
