#!/bin/sh
# imgcr dump onto a file system that fills up: a clear error naming the
# problem, the tree resumes untouched (same pids, still running and not
# stopped or traced), and nothing claims to be a complete dump.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules

mkdir small
mount -t tmpfs -o size=64k small small || fail "cannot mount a small tmpfs"
trap 'umount small 2>/dev/null; cleanup' EXIT

# A parent with a child, each with some heap: the images cannot fit in 64 KiB.
setsid sh -c 'counter 100000 > c1.out & counter 100000 > c2.out; wait' </dev/null >/dev/null 2>&1 &
pid=$!
track $pid
wait_line c1.out '^3 ' 20 || fail "first counter did not start"
wait_line c2.out '^3 ' 20 || fail "second counter did not start"
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done

imgcr dump -t $pid -D small/d > dump.out 2> dump.err && fail "dump onto a full file system succeeded"
grep -qi "no space left" dump.err || fail "error does not say the disk is full: $(head -n 3 dump.err | tr '\n' '|')"
info "error: $(head -n 1 dump.err)"

# The whole tree resumed untouched and keeps working.
for p in $pid $kids; do
	case "$(state $p)" in
	"" | Z) fail "task $p is gone after the failed dump" ;;
	t | T) fail "task $p is still stopped/traced after the failed dump" ;;
	esac
	grep -q '^TracerPid:[[:space:]]*0$' /proc/$p/status || fail "task $p is still traced"
done
for f in c1.out c2.out; do
	n1=$(wc -l < $f)
	usleep 500000
	n2=$(wc -l < $f)
	[ "$n2" -gt "$n1" ] || fail "$f stopped growing after the failed dump ($n1 -> $n2 lines)"
done
pass "$(head -n 1 dump.err | cut -c1-120)"
