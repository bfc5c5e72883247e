#!/bin/sh
# UDP datagrams queued at the dump come back (sk_udpq, test/progs/sk_udpq.c):
# IPv4 and IPv6 receivers, bound (127.0.0.1, [::]) and connected (with a
# datagram from another sender queued before connect()), 14 datagrams of
# 0 to 65507 bytes from a sender inside the tree (its IPv4 one made before
# the receivers at the restore: its port taken, a raw socket sends) and
# from one outside (still running, its bound ports taken, and an unbound
# socket since closed); the restore peeks at each queue after the fill and
# compares it with the image.  Dumped and restored twice (the second dump reads
# the queues the restore made), then the program receives every datagram
# and checks its size, bytes, source address and port and order, and that
# nothing more is queued; /proc/net/udp{,6} show the same receive queues
# from outside before the check.  Subtests: datagrams queued on a
# socket with SO_TIMESTAMP are refused, naming pid, fd and the option; so
# are a pending error (ECONNREFUSED) with nothing queued, datagrams queued
# on a port another (connected, SO_REUSEPORT) socket holds, and a datagram
# from port 0; a zero-length head peeked at comes back first; the datagrams
# come back in a tree with its own network namespace.
# timeout: 120
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

PORT=7760
setsid sk_udpq run $PORT "$PWD/out.txt" </dev/null >/dev/null 2>prog.err &
pid=$!
track $pid
wait_line out.txt '^ready' 10 || fail "sk_udpq did not start: $(cat out.txt prog.err | tr '\n' '|')"
sk_udpq send $PORT "$PWD/out.txt.send" </dev/null >/dev/null 2>send.err &
track $!
wait_line out.txt.send '^eph ' 10 || fail "the outside sender did not send: $(cat out.txt.send send.err | tr '\n' '|')"
kill -USR1 $pid
wait_line out.txt '^queued' 10 || fail "sk_udpq did not queue: $(cat out.txt | tr '\n' '|')"
grep -q FAIL out.txt && fail "$(grep FAIL out.txt | tr '\n' '|')"

# from outside: each receiver's port and receive queue (bytes of memory), sorted
rxq() {
	awk 'FNR > 1 { split($2, a, ":"); split($5, q, ":"); print FILENAME, a[2], q[2] }' \
		/proc/$1/net/udp /proc/$1/net/udp6 | sed "s|/proc/$1/||" | sort
}
hp() { printf '%04X' $1; }
B4=$(rxq $pid)
for o in 0 1 3 4; do
	echo "$B4" | grep -q " $(hp $((PORT + o))) 0*[1-9A-F]" ||
		fail "before the dump: no queue on port $((PORT + o)): $(echo "$B4" | tr '\n' '|')"
done

for i in 1 2; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	grep -q "dropped" dump$i.err && fail "dump $i: $(cat dump$i.err)"
	n=$(grep -c '^skq ' d$i/tree)
	[ "$n" = 14 ] || fail "dump $i: $n skq records, not 14: $(grep '^skq ' d$i/tree | tr '\n' '|')"
	imgcr show d$i > show$i.txt 2>&1 || fail "imgcr show d$i: $(cat show$i.txt)"
	q=$(grep -c 'UDP socket.*(data queued)' show$i.txt)
	[ "$q" = 4 ] || fail "dump $i: imgcr show lists $q UDP sockets with data queued, not 4: $(grep socket show$i.txt | tr '\n' '|')"
	[ $i = 1 ] && export_file sk_udpq.tree d1/tree
	imgcr restore -v4 -D d$i --detach > r$i.out 2> restore$i.err ||
		fail "restore $i: $(grep -v '^imgcr: debug' restore$i.err | tr '\n' '|')"
	# both ways of sending: a socket bound to the source, a raw socket where it is taken
	for how in "socket bound to it" "raw socket"; do
		grep -q "datagram .* sent again by a $how" restore$i.err ||
			fail "restore $i: no datagram sent again by a $how: $(grep 'sent again' restore$i.err | tr '\n' '|')"
	done
	info "restore $i: $(grep -c 'sent again by a raw' restore$i.err) of 14 datagrams sent by a raw socket"
	[ "$(grep -c 'its queue checked after the fill' restore$i.err)" = 4 ] ||
		fail "restore $i: not 4 queues checked after the fill: $(grep 'fill' restore$i.err | tr '\n' '|')"
	n=0
	until [ -d /proc/$pid ] && grep -q sk_udpq /proc/$pid/comm 2>/dev/null && [ "$(state $pid)" = S ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "restore $i: sk_udpq not back: $(cat restore$i.err | tr '\n' '|')"
		usleep 50000
	done
	AF=$(rxq $pid)
	# the memory of a datagram differs from its sender's (loopback, raw): each queue is there
	for o in 0 1 3 4; do
		echo "$AF" | grep -q " $(hp $((PORT + o))) 0*[1-9A-F]" ||
			fail "restore $i: no queue on port $((PORT + o)) in /proc/net/udp: $(echo "$AF" | tr '\n' '|')"
	done
	[ "$(echo "$AF" | awk '{print $1, $2}')" = "$(echo "$B4" | awk '{print $1, $2}')" ] ||
		fail "restore $i: other UDP sockets: before $(echo "$B4" | tr '\n' '|'), after $(echo "$AF" | tr '\n' '|')"
done
kill -USR1 $pid
wait_line out.txt '^check ' 10 || fail "no check: $(tail -n3 out.txt | tr '\n' '|')"
grep -q "^check ok 14 fail 0" out.txt || fail "$(grep -E 'FAIL|check' out.txt | head -n5 | tr '\n' '|')"
pass "14 datagrams (0 to 65507 bytes, IPv4 and IPv6, bound and connected receivers, senders inside and outside the tree) received with their sources and order after 2 restores"

refused() {	# MODE PORT PATTERN
	setsid sk_udpq $1 $2 "$PWD/$1.out" </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	wait_line $1.out 'ready' 10 || fail "sk_udpq $1 did not start: $(cat $1.out $1.prog | tr '\n' '|')"
	grep -q FAIL $1.out && fail "$(cat $1.out)"
	fd=$(sed -n 's/^fd \([0-9]*\) ready/\1/p' $1.out)
	imgcr dump -t $p -D d.$1 2> $1.err && fail "the dump succeeded"
	grep -q "pid $p fd $fd: .*UDP socket .*$3" $1.err || fail "unclear refusal: $(cat $1.err)"
	left_running $p || fail "the task was not left running"
	pass "$(grep "pid $p fd $fd" $1.err | head -n1)"
}
timestamp() { refused refuse $((PORT + 20)) "datagrams queued on a socket with SO_TIMESTAMP set: not supported"; }
errq() { refused error $((PORT + 22)) "an error pending (SO_ERROR, e.g. ECONNREFUSED"; }
sibling() { refused sibling $((PORT + 24)) "datagrams queued on a port another socket also holds (socket:\[[0-9]*\] (connected)"; }
src0() { refused src0 $((PORT + 28)) "datagram 0 (5 bytes) from 127.0.0.1:0: its source address is 0.0.0.0 or its port 0"; }
# a zero-length head peeked at (MSG_PEEK without an offset) comes back first
peek0() {
	P=$((PORT + 21))
	setsid sk_udpq peek0 $P "$PWD/peek0.out" </dev/null >/dev/null 2>peek0.prog &
	p=$!
	track $p
	wait_line peek0.out 'ready' 10 || fail "sk_udpq peek0 did not start: $(cat peek0.out peek0.prog | tr '\n' '|')"
	grep -q FAIL peek0.out && fail "$(cat peek0.out)"
	imgcr dump -t $p -D d.peek0 2> peek0.err || fail "dump: $(cat peek0.err)"
	wait_gone $p 10 || fail "the task survived the dump"
	imgcr restore -v4 -D d.peek0 --detach > peek0.r 2> peek0.rerr ||
		fail "restore: $(grep -v '^imgcr: debug' peek0.rerr | tr '\n' '|')"
	n=0
	until [ "$(state $p)" = S ] && grep -q sk_udpq /proc/$p/comm 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 200 ] || fail "sk_udpq not back"
		usleep 50000
	done
	grep -q "its queue checked after the fill: 2 datagram" peek0.rerr ||
		fail "no check of the queue after the fill: $(grep 'fill' peek0.rerr | tr '\n' '|')"
	kill -USR1 $p
	wait_line peek0.out '^end' 10 || fail "no end: $(tr '\n' '|' < peek0.out)"
	[ "$(grep '^got' peek0.out | tr '\n' '|')" = "got 0 $P|got 12 $P|" ] ||
		fail "received: $(tr '\n' '|' < peek0.out)"
	pass "a zero-length head peeked at comes back first, then the 12-byte datagram"
}
# the same in a tree with its own network namespace (unshare --net, lo up):
# the restore makes a new one and sends the datagrams in it; the outside
# sender (nsenter -n) stays in the old one
netns() {
	P=$((PORT + 40))
	ct_start ct.pid --net -- sh -c "ip link set lo up || exit 1; exec sk_udpq run $P $PWD/ns.out </dev/null >/dev/null 2>&1" \
		> unshare.out 2> unshare.err || fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	wait_line ns.out '^ready' 10 || fail "sk_udpq did not start: $(cat ns.out unshare.err | tr '\n' '|')"
	/usr/sbin/nsenter -t $CT -n sk_udpq send $P "$PWD/ns.out.send" </dev/null >/dev/null 2>nssend.err &
	track $!
	wait_line ns.out.send '^eph ' 10 || fail "the outside sender did not send: $(cat ns.out.send nssend.err | tr '\n' '|')"
	kill -USR1 $CT
	wait_line ns.out '^queued' 10 || fail "sk_udpq did not queue: $(tr '\n' '|' < ns.out)"
	imgcr dump -t $CT -D d.ns 2> nsdump.err || fail "dump: $(cat nsdump.err)"
	wait_gone $CT 10 || fail "the task survived the dump"
	grep -q '^ns kind=net ' d.ns/tree || fail "no 'ns kind=net' record"
	imgcr restore -v4 -D d.ns --detach --pidfile "$PWD/rp" > nsr.out 2> nsrestore.err ||
		fail "restore: $(grep -v '^imgcr: debug' nsrestore.err | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	n=0
	until [ "$(state $NEW)" = S ] && grep -q sk_udpq /proc/$NEW/comm 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 200 ] || fail "sk_udpq not back"
		usleep 50000
	done
	[ "$(readlink /proc/$NEW/ns/net)" != "$(readlink /proc/$$/ns/net)" ] || fail "restored in the host's network namespace"
	kill -USR1 $NEW
	wait_line ns.out '^check ' 10 || fail "no check: $(tail -n3 ns.out | tr '\n' '|')"
	grep -q "^check ok 14 fail 0" ns.out || fail "$(grep -E 'FAIL|check' ns.out | head -n5 | tr '\n' '|')"
	pass "14 datagrams back in the tree's new network namespace ($(grep -c 'sent again by a raw' nsrestore.err) by a raw socket)"
}
subtest sk_udpq_timestamp timestamp
subtest sk_udpq_netns netns
subtest sk_udpq_peek0 peek0
subtest sk_udpq_error errq
subtest sk_udpq_sibling sibling
subtest sk_udpq_src0 src0
exit 0
