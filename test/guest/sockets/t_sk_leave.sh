#!/bin/sh
# imgcr dump --leave-running of a tree with sockets (sknet tree): the dump
# reads the queued data with MSG_PEEK, never consuming it, so the tree left
# running finishes its exchange with every byte and every datagram: each
# client and the server agree on lengths and checksums, the queues are
# intact.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

PORT=7200
mkdir s || fail "mkdir"
setsid sknet tree "$PWD/s" $PORT 300 "$PWD/out.txt" </dev/null >/dev/null 2>sknet.err &
pid=$!
track $pid
sleep 2
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done
[ -d /proc/$pid ] || fail "sknet ended: $(cat sknet.err)"
imgcr dump -t $pid -D d --leave-running 2> dump.err || fail "dump: $(cat dump.err)"
q=$(tree_fields d/tree | awk '$1 == "sk" {q += $19} END {print q + 0}')
[ "$q" -gt 0 ] || fail "no data queued at the dump: nothing tested"
grep -q "server done" out.txt && fail "the exchange ended before the dump"
wait_line out.txt "server done" 200 || fail "the exchange did not finish: $(tr '\n' '|' < out.txt)"
grep -q BAD out.txt && fail "$(grep BAD out.txt | head -n3 | tr '\n' '|')"
grep -q "^queues ok" out.txt || fail "queues: $(tr '\n' '|' < out.txt)"
for i in 0 1 2; do
	c=$(grep "^client $i .* ok\$" out.txt) || fail "client $i did not finish"
	s=$(grep "^server client $i " out.txt) || fail "the server did not finish client $i"
	set -- $c
	cs="$4 $6 $8 ${10}"
	set -- $s
	ss="$5 $7 $9 ${11}"
	[ "$cs" = "$ss" ] || fail "client $i: '$cs', server: '$ss'"
done
pass "$q bytes were queued at the dump, all delivered"
