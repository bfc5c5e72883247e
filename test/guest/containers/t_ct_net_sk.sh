#!/bin/sh
# Sockets of a container with its own network namespace (util-linux
# unshare --fork --net; lo up inside), dumped from the host and restored
# (the restore makes the namespace and the sockets in it).
#   ct_net_sk         pid 1 a shell with two programs: sknet tree (a unix
#                     stream server and 3 clients through a path and an
#                     abstract name, data queued both ways; datagram and
#                     seqpacket pairs and bound datagram sockets with
#                     queued messages; TCP listeners on 127.0.0.1 and
#                     [::1], a UDP echo socket) and tcpstream pair (an
#                     established TCP connection on the container's lo,
#                     both ends in the tree, a checksummed stream).  Inside:
#                     each program checks its own sockets (exchange, queues,
#                     options; the stream goes on, nothing lost, the same
#                     connection); outside: a new network namespace, the
#                     listeners answer new clients in it (nsenter -n) on the
#                     same port, abstract name and path, the UDP socket
#                     echoes, /proc/PID/net/tcp lists the listener; the tree
#                     file holds the sockets and two established
#                     connections.
#   ct_net_sk-refuse  sockets of a network namespace that is neither
#                     imgcr's nor the tree's own: refused at dump naming
#                     the socket and the namespace, the tree left running:
#                     a UDP socket made in another namespace by a task back
#                     in imgcr's (before: dumped and silently restored in
#                     imgcr's namespace), the same in a container with its
#                     own namespace, and a socket of imgcr's namespace held
#                     by a task of a tree with its own one.
# timeout: 500
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
. /imgcr/guest/tcplib.sh
require_modules

NSENTER=/usr/sbin/nsenter
PORT=7310
SPORT=7320

step() { echo "INFO $T: $*" > /dev/console 2>/dev/null || true; }
nsid() { l=$(readlink /proc/$1/ns/$2); l=${l#*[}; echo "${l%]}"; }

subtest_sk() {
	mkdir s || fail "mkdir"
	ct_start ct.pid --net -- sh -c "exec < /dev/null > $PWD/ct.out 2>&1; ip link set lo up || exit 1
		sknet tree $PWD/s $PORT 400 $PWD/out.txt < /dev/null > /dev/null 2> $PWD/sknet.err &
		tcpstream pair 127.0.0.1 $SPORT $PWD/ts.txt < /dev/null > /dev/null 2> $PWD/ts.err &
		wait" > unshare.out 2> unshare.err || fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	wait_progress ts.txt 0 60 || fail "the stream did not start: $(cat ts.err unshare.err; tail -n2 ts.txt | tr '\n' '|')"
	n=0
	while [ "$(cat /proc/$CT/task/*/children 2>/dev/null | wc -w)" -lt 2 ] && [ $n -lt 500 ]; do
		usleep 20000
		n=$((n + 1))
	done
	kids=""
	for k in $(cat /proc/$CT/task/$CT/children); do
		kids="$kids $k $(cat /proc/$k/task/$k/children)"
	done
	for k in $kids; do track $k; done
	[ "$(echo $kids | wc -w)" = 6 ] || fail "the container has not 6 processes under its pid 1: $kids"
	TS=$(grep -l tcpstream $(for k in $kids; do echo /proc/$k/cmdline; done) | head -n 1)
	TS=${TS#/proc/}
	TS=${TS%/cmdline}
	TCLI=$(child_of $TS)
	[ -n "$TCLI" ] || fail "no tcpstream client"
	[ "$(nsid $CT net)" != "$(nsid $$ net)" ] || fail "the container is in the host's network namespace"
	sleep 2
	grep -q BAD out.txt ts.txt && fail "before the dump: $(grep BAD out.txt ts.txt | tr '\n' '|')"
	grep -q "server done" out.txt && fail "the exchange ended before the dump"
	wait_progress ts.txt 100000 30 || fail "the stream does not flow: $(tail -n 2 ts.txt | tr '\n' '|')"
	step "dump $CT"
	timeout -s KILL 120 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err ||
		fail "dump: $(grep -m 3 'not supported\|refus\|rror' dump.err | tr '\n' '|')$(tail -n 3 dump.err | tr '\n' '|')"
	for p in $CT $kids; do wait_gone $p 10 || fail "task $p survived the dump"; done
	grep -q '^ns kind=net ' d/tree || fail "no 'ns kind=net' record: $(grep '^ns ' d/tree | tr '\n' '|')"
	nsk=$(grep -c '^sk ' d/tree)
	ntcp=$(ls d/sk-*.tcp 2>/dev/null | wc -l)
	[ "$ntcp" = 2 ] || fail "$ntcp established connections saved, expected 2"
	at=$(last_recv ts.txt)
	step "restore ($nsk sockets)"
	timeout -s KILL 120 imgcr restore -v4 -D d --detach --pidfile "$PWD/rp" > restore.out 2> restore.err ||
		fail "restore: $(tail -n 8 restore.err | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	[ "$NEW" = "$CT" ] || fail "restored as $NEW, was $CT"
	[ "$(nsid $NEW net)" != "$(nsid $$ net)" ] || fail "restored in the host's network namespace"
	# inside: the stream goes on
	wait_progress ts.txt $((at + 65536)) 60 ||
		fail "the stream did not go on after $at bytes: $(tail -n2 ts.txt | tr '\n' '|')$(rerr)"
	# outside: the listeners in the new namespace
	N="$NSENTER -t $NEW -n"
	for c in "unix $PWD/s/srv.sock" "unix @sknet-$PORT" "tcp 127.0.0.1 $PORT" "tcp ::1 $PORT"; do
		r=$(timeout 20 $N sknet cli $c 2>&1)
		[ "$r" = hello ] || fail "a new client ($c) in the container's namespace got '$r'"
	done
	r=$(timeout 20 $N sknet cli udp $((PORT + 1)) 2>&1)
	[ "$r" = "udp echo" ] || fail "UDP echo after the restore: '$r'"
	r=$(timeout 5 sknet cli tcp 127.0.0.1 $PORT 2>&1) && [ "$r" = hello ] &&
		fail "the container's listener answers in the host's namespace"
	hp=$(printf '%04X' $PORT)
	grep -q ":$hp 00000000:0000 0A " /proc/$NEW/net/tcp || fail "no listener on port $PORT in /proc/$NEW/net/tcp"
	grep -q ":$hp 00000000:0000 0A " /proc/$$/net/tcp && fail "a listener on port $PORT in the host's namespace"
	# inside: each program's verdict
	wait_line out.txt "server done" 240 || fail "the exchange did not finish: $(tail -n 3 out.txt | tr '\n' '|')"
	grep -q BAD out.txt && fail "$(grep BAD out.txt | head -n3 | tr '\n' '|')"
	grep -q "^queues ok" out.txt || fail "queued datagrams/messages: $(tr '\n' '|' < out.txt)"
	grep -q "^opts ok" out.txt || fail "socket options: $(tr '\n' '|' < out.txt)"
	for i in 0 1 2; do
		c=$(grep "^client $i .* ok\$" out.txt) || fail "client $i did not finish: $(tr '\n' '|' < out.txt)"
		sv=$(grep "^server client $i " out.txt) || fail "the server did not finish client $i"
		set -- $c
		cs="$4 $6 $8 ${10}"
		set -- $sv
		ss="$5 $7 $9 ${11}"
		[ "$cs" = "$ss" ] || fail "client $i sent/received (length fnv) '$cs', the server received/sent '$ss'"
	done
	stream_end ts.txt $TCLI
	pass "$nsk sockets in the container's namespace, 2 established; the stream went on ($STREAM_BYTES bytes), 3 clients done"
}

# refused DESC MSG CMD...: start CMD (a tree), its dump refused with MSG, the tree still running
refused() {
	desc=$1 msg=$2
	shift 2
	"$@" > hold.out 2> hold.err &
	hp=$!
	track $hp
	wait_line hold.out ready 20 || fail "$desc: the holder did not start: $(cat hold.err)"
	[ -z "$CTP" ] || { hp=$(child_of $hp); track $hp; }
	rm -rf dr
	timeout -s KILL 60 imgcr dump -t $hp -D dr > dump.out 2> dump.err && fail "$desc: the dump succeeded"
	grep -q -- "$msg" dump.err || fail "$desc: message: $(tr '\n' '|' < dump.err)"
	[ -d /proc/$hp ] && [ "$(state $hp)" != Z ] || fail "$desc: the tree did not survive the refused dump"
	kill -9 $hp 2>/dev/null
	wait_gone $hp 10
	MSGS="$MSGS | $(grep -m 1 -- "$msg" dump.err | sed 's/.*socket:/socket:/' | cut -c1-110)"
}

subtest_refuse() {
	MSGS=""
	CTP=
	refused "another namespace's socket" "is not imgcr's: sockets in another network namespace are not supported" \
		sknet hold othernet
	CTP=1
	refused "a third namespace's socket in a container" "is neither imgcr's nor the tree's own (net:\[" \
		/usr/sbin/unshare --fork --net sknet hold othernet
	CTP=
	refused "imgcr's socket in a tree with its own namespace" "is imgcr's, not the tree's own" \
		sknet hold hostnet
	pass "3 refusals${MSGS}"
}

sub() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	$2
}
subtest ct_net_sk "sub sk subtest_sk"
subtest ct_net_sk-refuse "sub refuse subtest_refuse"
