#!/bin/sh
# Half-closed TCP connections.  The client in the tree (tcpstream drain)
# shut its write side at once (FIN-WAIT-2) and reads a checksummed stream
# from a server outside the tree (tcpstream feed).  Dumped mid-stream and
# restored: the restored socket is FIN-WAIT-1/2 again (its FIN at the same
# sequence number), the stream goes on, every byte checked, and when the
# server closes the client sees the end with every byte the server sent.
# Then the server's end (CLOSE-WAIT) in the tree, the client outside.
# Then a client in FIN-WAIT-1, its FIN behind data not yet sent.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

# The servers outside the tree go on after the restore: a feeder's FIN (the
# end of its stream) can arrive before the state check's snapshot, and the
# kernel then marks the drainer's socket, shut for writing, shut for
# reading too (seen on 7.2).
cp "$IMGCR_STATE_EXPECTED" expected
echo 'fd */* diag.shutdown -wr -> rdwr  # the server outside the tree closed after the restore: its FIN arrived before the check' >> expected
export IMGCR_STATE_EXPECTED="$PWD/expected"

last_d() { awk '$1 == "d" {r = $2} END {print r + 0}' drain.txt; }

# start_stream PORT WHAT: a feeder (server, fpid) and a drainer (client,
# dpid) on PORT, until the drainer has data
start_stream() {
	PORT=$1
	setsid tcpstream feed 127.0.0.1 $PORT "$PWD/feed.txt" </dev/null >/dev/null 2>feed.err &
	fpid=$!
	track $fpid
	setsid tcpstream drain 127.0.0.1 $PORT "$PWD/drain.txt" </dev/null >/dev/null 2>drain.err &
	dpid=$!
	track $dpid
	k=0
	until [ "$(last_d)" -gt 0 ] || [ $k -ge 300 ]; do usleep 100000; k=$((k + 1)); done
	[ "$(last_d)" -gt 0 ] || fail "$2 did not start: $(cat feed.err drain.err drain.txt)"
}

# stream_end WHO: stop the feeder ($fpid); WHO (the server) finishes, the
# client sees the end, and every byte sent arrived; sets sent
stream_end() {
	kill -TERM $fpid
	wait_line feed.txt "^feed done" 30 || fail "$1 did not finish: $(cat feed.txt feed.err)"
	wait_line drain.txt "^drain done" 60 || fail "the client did not see the end: $(tail -n2 drain.txt | tr '\n' '|')"
	grep -q BAD drain.txt feed.txt && fail "$(grep -h BAD drain.txt feed.txt)"
	set -- $(grep "^feed done" feed.txt)
	sent=$4
	set -- $(grep "^drain done" drain.txt)
	[ "$4" = "$sent" ] || fail "$1 sent $sent bytes, the client received $4"
}
start_stream 7450 "the stream"
imgcr dump -t $dpid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $dpid 10 || fail "the client survived the dump"
st=$(tree_fields d/tree | awk '$1 == "sk" && $4 == 1 && $5 == 6 {print $6}')
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
stream_end "the server"
info "FIN-WAIT-$((st - 3)) dumped at $at bytes, restored; $sent bytes and the end received"

# The other end: the server in the tree, in CLOSE-WAIT (its client shut
# its side), still sending; the client outside.  Restored, the peer's FIN
# is sent to the socket again (the lock lets it through by its mark): it
# is CLOSE-WAIT again, reads end of file, and its stream goes on.
rm -f feed.txt drain.txt
start_stream 7451 "the second stream"
imgcr dump -t $fpid -D d2 2> dump2.err || fail "dump of the server in CLOSE-WAIT: $(cat dump2.err)"
wait_gone $fpid 10 || fail "the server survived the dump"
st2=$(tree_fields d2/tree | awk '$1 == "sk" && $4 == 1 && $5 == 6 && $6 != 10 {print $6}')
[ "$st2" = 8 ] || fail "the server's connection was dumped in state '$st2', not CLOSE-WAIT: $(grep '^sk ' d2/tree)"
grep -q '^finrcv 1$' d2/sk-*.tcp || fail "the dump did not record the peer's FIN"
at=$(last_d)
imgcr restore -D d2 > r2.out 2> restore.err &
track $!
k=0
until [ "$(last_d)" -gt $((at + 262144)) ] || [ $k -ge 300 ]; do usleep 100000; k=$((k + 1)); done
[ "$(last_d)" -gt $((at + 262144)) ] || fail "the server's stream did not go on after $at bytes: $(tail -n2 drain.txt | tr '\n' '|')$(rerr)"
# 1D1B: port 7451; 08: CLOSE-WAIT
[ "$(awk '$2 ~ /:1D1B$/ && $4 != "0A" {print $4}' /proc/net/tcp)" = 08 ] ||
	fail "the restored server connection is not CLOSE-WAIT: $(grep ':1D1B ' /proc/net/tcp | tr '\n' '|')"
no_lock
stream_end "the restored server"
info "CLOSE-WAIT dumped at $at bytes, restored; $sent bytes and the end received"

# FIN-WAIT-1: the client in the tree filled the connection to a server
# outside that reads nothing yet (tcpstream fill / sink), then shut its
# side: its FIN waits behind the data not yet sent.  Restored, the server
# reads all of it, then the end.
PORT=7452
setsid tcpstream sink 127.0.0.1 $PORT "$PWD/sink.txt" </dev/null >/dev/null 2>sink.err &
spid=$!
track $spid
setsid tcpstream fill 127.0.0.1 $PORT "$PWD/fill.txt" </dev/null >/dev/null 2>fill.err &
lpid=$!
track $lpid
wait_line fill.txt "^fill wrote" 30 || fail "fill did not fill the connection: $(cat fill.err sink.err)"
imgcr dump -t $lpid -D d3 2> dump3.err || fail "dump of the client in FIN-WAIT-1: $(cat dump3.err)"
wait_gone $lpid 10 || fail "the client survived the dump"
st3=$(tree_fields d3/tree | awk '$1 == "sk" && $4 == 1 && $5 == 6 {print $6}')
[ "$st3" = 4 ] || fail "the client's connection was dumped in state '$st3', not FIN-WAIT-1: $(grep '^sk ' d3/tree)"
q3=$(cat d3/sk-*.sndq | wc -c)
[ "$q3" -gt 0 ] || fail "nothing in the send queue at the dump"
imgcr restore -D d3 > r3.out 2> restore.err &
track $!
k=0
until [ -n "$(awk '$3 ~ /:1D1C$/ {print $4}' /proc/net/tcp)" ] || [ $k -ge 100 ]; do usleep 100000; k=$((k + 1)); done
kill -USR1 $spid
wait_line sink.txt "^sink done" 60 || fail "the server did not read to the end: $(cat sink.txt sink.err)$(rerr)"
grep -q BAD sink.txt && fail "$(cat sink.txt)"
set -- $(grep "^fill wrote" fill.txt)
wrote=$3
set -- $(grep "^sink done" sink.txt)
[ "$4" = "$wrote" ] || fail "the client wrote $wrote bytes, the server read $4"
no_lock
pass "FIN-WAIT-2, CLOSE-WAIT and FIN-WAIT-1 ($q3 bytes queued) dumped and restored, every byte and the end received ($(took))"
