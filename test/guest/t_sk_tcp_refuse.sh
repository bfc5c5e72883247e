#!/bin/sh
# Established TCP connections imgcr refuses, clearly, leaving the tree
# running: a dump by an ordinary user (TCP_REPAIR and the network lock need
# CAP_NET_ADMIN), and a connection in a state imgcr does not restore
# (CLOSE-WAIT: the peer closed).  The ordinary user's stream goes on.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7430
chmod 777 .
runas 1000 1000 setsid tcpstream pair 127.0.0.1 $PORT "$PWD/u.txt" </dev/null >/dev/null 2>u.err &
pid=$!
track $pid
k=0
while [ -z "$(cat /proc/$pid/task/$pid/children 2>/dev/null)" ] && [ $k -lt 500 ]; do
	usleep 20000
	k=$((k + 1))
done
kid=$(cat /proc/$pid/task/$pid/children)
track $kid
wait_progress u.txt 0 30 || fail "the stream did not start: $(cat u.err)"
[ "$(stat -c %u /proc/$pid)" = 1000 ] || fail "tcpstream does not run as uid 1000"
runas 1000 1000 imgcr dump -t $pid -D "$PWD/du" 2> u.dump.err && fail "uid 1000 dumped an established TCP connection"
grep -q "pid $pid fd [0-9]*: socket:\[[0-9]*\]: IPv4 TCP connection 127.0.0.1:$PORT -> 127.0.0.1:[0-9]*: .*needs CAP_NET_ADMIN" u.dump.err ||
	fail "unclear refusal: $(cat u.dump.err)"
no_lock
at=$(last_recv u.txt)
wait_progress u.txt $((at + 65536)) 30 || fail "after the refusal the stream did not go on: $(tail -n2 u.txt | tr '\n' '|')"
stream_end u.txt $kid
info "uid 1000: $(head -n1 u.dump.err)"

setsid tcpstream closewait $((PORT + 1)) </dev/null >/dev/null 2>cw.err &
p=$!
track $p
sleep 1
[ -d /proc/$p ] || fail "closewait ended: $(cat cw.err)"
imgcr dump -t $p -D dc 2> cw.dump.err && fail "a connection in CLOSE-WAIT was dumped"
grep -q "pid $p fd [0-9]*: .*TCP connection .* in state CLOSE-WAIT: not supported" cw.dump.err ||
	fail "unclear refusal: $(cat cw.dump.err)"
case "$(state $p)" in "" | t | T | Z) fail "closewait was not left running" ;; esac
no_lock
info "CLOSE-WAIT: $(head -n1 cw.dump.err)"
pass "uid 1000 and CLOSE-WAIT refused, the stream went on ($(took))"
