#!/bin/sh
# An established TCP connection to a client outside the tree: the server
# (tcpstream srv, the tree) is dumped and restored while the client
# (tcpstream cli, in the guest, not dumped) streams to it.  The client sees
# a pause -- nothing comes in while the server is away, and the network
# lock drops its retransmissions, so it gets no reset -- then the same
# connection goes on (same client port at both ends, no reconnect, every
# byte checked by both programs and the byte counts compared here).
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7410
setsid tcpstream srv 127.0.0.1 $PORT "$PWD/srv.txt" </dev/null >/dev/null 2>srv.err &
spid=$!
track $spid
setsid tcpstream cli 127.0.0.1 $PORT "$PWD/cli.txt" </dev/null >/dev/null 2>cli.err &
cpid=$!
track $cpid
wait_progress cli.txt 0 30 || fail "the stream did not start: $(cat srv.err cli.err)"
sleep 1
imgcr dump -t $spid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $spid 10 || fail "the server survived the dump"
[ "$(ls d/sk-*.tcp | wc -l)" = 1 ] || fail "expected 1 established connection in the dump: $(ls d)"
imgcr show d > show.txt 2>&1 || fail "imgcr show: $(cat show.txt)"
grep -q "IPv4 TCP socket:\[[0-9]*\] established 127.0.0.1:$PORT -> 127.0.0.1:[0-9]*" show.txt ||
	fail "imgcr show does not list the established connection: $(grep socket show.txt | tr '\n' '|')"
# the client reads what its socket had received, then nothing more comes
sleep 2
at=$(last_recv cli.txt)
sleep 2
paused=$(last_recv cli.txt)
[ "$paused" = "$at" ] || fail "the client received $((paused - at)) bytes while the server was away"
grep -q BAD cli.txt && fail "the client, while the server was away: $(grep BAD cli.txt)"
[ -d /proc/$cpid ] || fail "the client ended while the server was away: $(tail -n2 cli.txt)"
imgcr restore -D d > r.out 2> restore.err &
track $!
wait_progress cli.txt $((paused + 65536)) 60 ||
	fail "the stream did not go on after $paused bytes: $(tail -n2 cli.txt | tr '\n' '|')$(rerr)"
no_lock
cat srv.txt >> both.txt
kill -TERM $cpid
wait_line cli.txt "^client done" 60 || fail "the client did not finish: $(tail -n3 cli.txt | tr '\n' '|')"
wait_line srv.txt "^server done" 60 || fail "the server did not finish: $(tail -n3 srv.txt | tr '\n' '|')"
grep -q BAD cli.txt srv.txt && fail "$(grep -h BAD cli.txt srv.txt | head -n3 | tr '\n' '|')"
set -- $(grep "^client done" cli.txt)
cs=$4 cr=$6 cp=$8
set -- $(grep "^server done" srv.txt)
[ "$cs" = "$cr" ] && [ "$cr" = "$4" ] || fail "client sent $cs received $cr, the server received $4"
[ "$cp" = "$6" ] || fail "the client's port $cp, the server's peer port $6: not the same connection"
pass "paused at $paused bytes, went on; $cs bytes each way, one connection ($(took))"
