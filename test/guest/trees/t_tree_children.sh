#!/bin/sh
# /proc/PID/status ends with "Children:\t<pids>", the children of all the
# task's threads: the same set as /proc/PID/task/*/children, and an empty
# list for a task without children.
. /imgcr/guest/lib.sh
require_modules

sh -c 'sleep 60 & sleep 60 & sleep 60 & wait' </dev/null >/dev/null 2>&1 &
p=$!
track $p
n=0
while [ "$(cat /proc/$p/task/$p/children | wc -w)" -lt 3 ]; do
	n=$((n + 1))
	[ $n -lt 500 ] || fail "sh did not start its children"
	usleep 20000
done
kids=$(cat /proc/$p/task/$p/children)
for k in $kids; do track $k; done
threads </dev/null > th.out 2>&1 &
th=$!
track $th
wait_line th.out ready 10 || fail "threads did not start"

set_of() { tr ' \t' '\n\n' | grep . | sort -n | tr '\n' ' '; }
for t in $p $kids $th 1; do
	last=$(tail -n 1 /proc/$t/status)
	case "$last" in
	"Children:"*) ;;
	*) fail "last line of /proc/$t/status is '$last', not Children:" ;;
	esac
	got=$(printf '%s\n' "$last" | sed 's/^Children:\t//' | set_of)
	want=$(cat /proc/$t/task/*/children | set_of)
	[ "$got" = "$want" ] || fail "pid $t: Children: '$got', task/*/children: '$want'"
done
k1=$(echo $kids | cut -d' ' -f1)
[ "$(tail -n 1 /proc/$k1/status)" = "$(printf 'Children:\t')" ] ||
	fail "childless $k1: '$(tail -n 1 /proc/$k1/status | od -c | head -n 2 | tr '\n' ' ')'"
pass "$(echo $kids | wc -w) children of $p"
