#!/bin/sh
# Established TCP connections imgcr refuses, clearly, leaving the tree
# running: a dump by an ordinary user (TCP_REPAIR and the network lock need
# CAP_NET_ADMIN), and a connection in a state imgcr does not restore
# (SYN-SENT: connecting).  The ordinary user's stream goes on.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7430
chmod 777 .
runas 1000 1000 setsid tcpstream pair 127.0.0.1 $PORT "$PWD/u.txt" </dev/null >/dev/null 2>u.err &
pid=$!
track $pid
kid=$(child_of $pid)
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

# SYN-SENT: a connection whose SYN this test drops
printf 'add table inet synblock\nadd chain inet synblock out { type filter hook output priority 0; }\nadd rule inet synblock out tcp dport %d drop\n' $((PORT + 1)) |
	/usr/sbin/nft -f - || fail "cannot add the test's nftables rule"
setsid tcpstream synsent $((PORT + 1)) </dev/null >/dev/null 2>ss.err &
p=$!
track $p
sleep 1
[ -d /proc/$p ] || fail "synsent ended: $(cat ss.err)"
imgcr dump -t $p -D ds 2> ss.dump.err && fail "a connection in SYN-SENT was dumped"
/usr/sbin/nft delete table inet synblock
grep -q "pid $p fd [0-9]*: .*TCP connection .* in state SYN-SENT: not supported" ss.dump.err ||
	fail "unclear refusal: $(cat ss.dump.err)"
case "$(state $p)" in "" | t | T | Z) fail "synsent was not left running" ;; esac
no_lock
info "SYN-SENT: $(head -n1 ss.dump.err)"
pass "uid 1000 and SYN-SENT refused, the stream went on ($(took))"
