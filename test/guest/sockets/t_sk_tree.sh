#!/bin/sh
# Sockets of a tree, dumped mid-exchange and restored (sknet tree): a unix
# stream server with 3 connected clients (two through a listener bound to a
# path, one through an abstract one), data queued both ways at the dump;
# a socketpair(SOCK_DGRAM) and a socketpair(SOCK_SEQPACKET) with messages
# queued; datagram sockets bound to a path and to an abstract name with
# datagrams queued; TCP listeners on 127.0.0.1 and [::1], a UDP echo socket.
# After the restore: every client goes on, and what each side sent equals
# what the other received (lengths and FNV checksums, checked by the
# programs and here); the queues come back with their datagram boundaries;
# the socket files come back with their mode and owner; the listeners
# accept new clients from outside the tree on the same path, name and
# port; the UDP socket still echoes; the options the server set are set.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

PORT=7100
mkdir s || fail "mkdir"
setsid sknet tree "$PWD/s" $PORT 400 "$PWD/out.txt" </dev/null >/dev/null 2>sknet.err &
pid=$!
track $pid
n=0
while [ "$(cat /proc/$pid/task/$pid/children 2>/dev/null | wc -w)" -lt 3 ] && [ $n -lt 500 ]; do
	usleep 20000
	n=$((n + 1))
done
kids=$(cat /proc/$pid/task/$pid/children)
for k in $kids; do track $k; done
chown 1000:1000 s/srv.sock || fail "chown"
sleep 2
grep -q BAD out.txt && fail "before the dump: $(cat out.txt)"
grep -q "server done" out.txt && fail "the exchange ended before the dump"
[ -d /proc/$pid ] || fail "sknet ended: $(cat sknet.err)"
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kids; do wait_gone $p 10 || fail "task $p survived the dump"; done
# data was queued both ways on the connections of the clients
nq=$(tree_fields d/tree | awk '$1 == "sk" && $3 == 1 && $4 == 1 && $19 > 0' | wc -l)
[ "$nq" -ge 4 ] || fail "only $nq unix stream sockets had data queued at the dump: $(grep '^sk ' d/tree | tr '\n' '|')"
info "$(grep -c '^sk ' d/tree) sockets, $nq stream sockets with data queued"
[ -S s/srv.sock ] || fail "the socket file is gone after the dump"

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
n=0
# every task of the tree has executed its image (its sockets, their files
# and modes, are restored before that)
restored() {
	for t in $pid $kids; do
		[ -d /proc/$t ] && [ "$(readlink /proc/$t/exe)" != /bin/busybox ] || return 1
	done
}
until restored && [ -S s/srv.sock ]; do
	n=$((n + 1))
	[ $n -lt 1500 ] || fail "the server did not come back$(rerr)"
	[ -d /proc/$rpid ] || fail "imgcr restore ended$(rerr)"
	usleep 20000
done
[ "$(stat -c '%a %u %g' s/srv.sock)" = "640 1000 1000" ] ||
	fail "s/srv.sock: mode/owner $(stat -c '%a %u %g' s/srv.sock), expected 640 1000 1000"
[ "$(stat -c '%a' s/dg.sock)" = 604 ] || fail "s/dg.sock: mode $(stat -c '%a' s/dg.sock), expected 604"
for c in "unix $PWD/s/srv.sock" "unix @sknet-$PORT" "tcp 127.0.0.1 $PORT" "tcp ::1 $PORT"; do
	r=$(timeout 20 sknet cli $c 2>&1)
	[ "$r" = hello ] || fail "a new client ($c) after the restore got '$r'"
done
r=$(timeout 20 sknet cli udp $((PORT + 1)) 2>&1)
[ "$r" = "udp echo" ] || fail "UDP echo after the restore: '$r'"
wait_line out.txt "server done" 240 || fail "the exchange did not finish: $(tr '\n' '|' < out.txt)$(rerr)"
grep -q BAD out.txt && fail "$(grep BAD out.txt | head -n3 | tr '\n' '|')"
grep -q "^queues ok" out.txt || fail "queued datagrams/messages: $(tr '\n' '|' < out.txt)"
grep -q "^opts ok" out.txt || fail "socket options: $(tr '\n' '|' < out.txt)"
for i in 0 1 2; do
	c=$(grep "^client $i .* ok\$" out.txt) || fail "client $i did not finish: $(tr '\n' '|' < out.txt)"
	s=$(grep "^server client $i " out.txt) || fail "the server did not finish client $i"
	set -- $c
	cs="$4 $6 $8 ${10}"
	set -- $s
	ss="$5 $7 $9 ${11}"
	[ "$cs" = "$ss" ] || fail "client $i sent/received (length fnv) '$cs', the server received/sent '$ss'"
done
pass "3 clients, $(grep -c '^sk ' d/tree) sockets; $(awk '$1 == "sk" {q += $19} END {print q}' d/tree) bytes queued at the dump"
