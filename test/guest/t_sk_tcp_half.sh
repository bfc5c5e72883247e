#!/bin/sh
# A half-closed TCP connection: the client in the tree (tcpstream drain)
# shut its write side at once (FIN-WAIT-2) and reads a checksummed stream
# from a server outside the tree (tcpstream feed).  Dumped mid-stream and
# restored: the restored socket is FIN-WAIT-1/2 again (its FIN at the same
# sequence number), the stream goes on, every byte checked, and when the
# server closes the client sees the end with every byte the server sent.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

last_d() { awk '$1 == "d" {r = $2} END {print r + 0}' drain.txt; }
PORT=7450
setsid tcpstream feed 127.0.0.1 $PORT "$PWD/feed.txt" </dev/null >/dev/null 2>feed.err &
fpid=$!
track $fpid
setsid tcpstream drain 127.0.0.1 $PORT "$PWD/drain.txt" </dev/null >/dev/null 2>drain.err &
dpid=$!
track $dpid
k=0
until [ "$(last_d)" -gt 0 ] || [ $k -ge 300 ]; do usleep 100000; k=$((k + 1)); done
[ "$(last_d)" -gt 0 ] || fail "the stream did not start: $(cat feed.err drain.err drain.txt)"
imgcr dump -t $dpid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $dpid 10 || fail "the client survived the dump"
st=$(awk '$1 == "sk" && $4 == 1 && $5 == 6 {print $6}' d/tree)
[ "$st" = 5 ] || [ "$st" = 4 ] || fail "the connection was dumped in state '$st', not FIN-WAIT-1/2: $(grep '^sk ' d/tree)"
grep -q '^fin 1$' d/sk-*.tcp || fail "the dump did not record the FIN: $(cat d/sk-*.tcp | tr '\n' ' ')"
at=$(last_d)
imgcr restore -D d > r.out 2> restore.err &
track $!
k=0
until [ "$(last_d)" -gt $((at + 262144)) ] || [ $k -ge 300 ]; do usleep 100000; k=$((k + 1)); done
[ "$(last_d)" -gt $((at + 262144)) ] || fail "the stream did not go on after $at bytes: $(tail -n2 drain.txt | tr '\n' '|')$(rerr)"
no_lock
# the FIN sent again and acknowledged: FIN-WAIT-2 (05 in /proc/net/tcp) again
k=0
until [ "$(awk '$3 ~ /:1D1A$/ {print $4}' /proc/net/tcp)" = 05 ] || [ $k -ge 100 ]; do usleep 100000; k=$((k + 1)); done
[ "$(awk '$3 ~ /:1D1A$/ {print $4}' /proc/net/tcp)" = 05 ] ||
	fail "the restored connection is not FIN-WAIT-2: $(grep ':1D1A ' /proc/net/tcp | tr '\n' '|')"
kill -TERM $fpid
wait_line feed.txt "^feed done" 30 || fail "the server did not finish: $(cat feed.txt feed.err)"
wait_line drain.txt "^drain done" 60 || fail "the client did not see the end: $(tail -n2 drain.txt | tr '\n' '|')"
grep -q BAD drain.txt feed.txt && fail "$(grep -h BAD drain.txt feed.txt)"
set -- $(grep "^feed done" feed.txt)
sent=$4
set -- $(grep "^drain done" drain.txt)
[ "$4" = "$sent" ] || fail "the server sent $sent bytes, the client received $4"
pass "FIN-WAIT-$((st - 3)) dumped at $at bytes, restored; $sent bytes and the end received ($(took))"
