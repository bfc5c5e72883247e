#!/bin/sh
# Socket options and socket state (skopts run, test/progs/skopts.c): UDP
# sockets with SO_BROADCAST, SO_PRIORITY, SO_MARK, IP_TTL, SO_BINDTODEVICE,
# SO_RCVBUF with SO_BUF_LOCK, a classic BPF filter locked with
# SO_LOCK_FILTER; one with IP_FREEBIND bound to 192.0.2.1 (not the host's
# address); one shut down for writing; a TCP listener with SO_REUSEADDR,
# keepalive timings, TCP_DEFER_ACCEPT, TCP_MAXSEG; an established loopback
# connection (both ends) with SO_LINGER, SO_REUSEADDR, SO_KEEPALIVE and its
# timings, TCP_NODELAY, TCP_USER_TIMEOUT, TCP_CONGESTION, IP_TOS; an IPv6
# socket with IPV6_V6ONLY and IPV6_FREEBIND bound to 2001:db8::1; a unix
# pair with SO_PASSCRED and SO_PASSSEC.  Dumped and restored twice, then
# dumped with --leave-running: the
# program checks every value with getsockopt and by behaviour (the filter
# still drops what it dropped, a send on the shut socket says EPIPE, the
# connection carries data), `imgcr show` lists the options, /proc/net
# shows the sockets bound where they were.
# Subtests: what imgcr refuses (an eBPF filter, a multicast membership, a
# corked UDP socket holding a datagram not yet sent), naming the pid, the
# fd and the state, the task left running.
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7610
setsid skopts run $PORT "$PWD/out.txt" </dev/null >/dev/null 2>skopts.err &
pid=$!
track $pid
wait_line out.txt '^ready' 20 || fail "skopts did not start: $(cat out.txt skopts.err | tail -n5 | tr '\n' '|')"
grep -q "^round 0 ok 49 fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|round' out.txt | tr '\n' '|')"

# /proc/net: the sockets bound where they were (hex, as the kernel prints them)
hport() { printf '%04X' $1; }
procnet() {	# the UDP and TCP sockets on this test's ports: local, remote address, state
	awk -v a=":$(hport $PORT)" -v b=":$(hport $((PORT + 1)))" -v c=":$(hport $((PORT + 2)))" \
	    -v d=":$(hport $((PORT + 3)))" \
	    'FNR > 1 { for (i = 2; i <= 3; i++) { x = substr($i, length($i) - 4);
			if (x == a || x == b || x == c || x == d) { print $2, $3, $4; break } } }' \
	    /proc/$1/net/udp /proc/$1/net/tcp /proc/$1/net/udp6 | sort
}
B4=$(procnet $pid)
for want in "0100007F:$(hport $PORT)" "010200C0:$(hport $((PORT + 1)))" "0100007F:$(hport $((PORT + 2)))" \
	    "B80D0120000000000000000001000000:$(hport $((PORT + 3)))"; do
	echo "$B4" | grep -q "^$want " || fail "before the dump: $want not in /proc/net: $(echo $B4)"
done

i=1
while [ $i -le 2 ]; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	imgcr show d$i > show$i.txt 2>&1 || fail "imgcr show d$i: $(cat show$i.txt)"
	for o in SO_BROADCAST=1 SO_PRIORITY=5 SO_MARK=42 IP_TTL=33 SO_BINDTODEVICE=lo \
		 "SO_ATTACH_FILTER=4-instruction" SO_LOCK_FILTER=1 SO_BUF_LOCK=2 IP_FREEBIND=1 \
		 "shut down for writing" TCP_KEEPIDLE=100 TCP_KEEPINTVL=20 TCP_KEEPCNT=4 \
		 TCP_DEFER_ACCEPT= TCP_MAXSEG=1000 "SO_LINGER=on,7s" "SO_LINGER=on,3s" \
		 TCP_KEEPIDLE=200 TCP_KEEPIDLE=300 TCP_USER_TIMEOUT=5000 TCP_CONGESTION=reno \
		 IP_TOS=16 IPV6_FREEBIND=1 SO_PASSSEC=1; do
		grep -q -- "$o" show$i.txt || fail "dump $i: imgcr show does not list $o: $(grep socket show$i.txt | tr '\n' '|')"
	done
	n0=$(grep -c '^round' out.txt)
	imgcr restore -D d$i > r$i.out 2> restore$i.err &
	track $!
	n=0
	until [ -d /proc/$pid ] && [ "$(readlink /proc/$pid/exe)" != /bin/busybox ] &&
	      grep -q skopts /proc/$pid/comm 2>/dev/null && [ "$(state $pid)" = S ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "restore $i: skopts not back: $(cat restore$i.err | tr '\n' '|')"
		usleep 50000
	done
	sleep 1
	kill -USR1 $pid
	wait_line out.txt "^round $i " 20 || fail "restore $i: no check round: $(tail -n3 out.txt | tr '\n' '|')$(cat restore$i.err)"
	grep -q "^round $i ok 49 fail 0" out.txt ||
		fail "restore $i: $(sed -n "/^round $((i - 1)) /,\$p" out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
	AF=$(procnet $pid)
	[ "$AF" = "$B4" ] || fail "restore $i: the sockets' addresses in /proc/net differ: before $(echo $B4), after $(echo $AF)"
	no_lock
	i=$((i + 1))
done
# --leave-running: the program goes on with every value as it was (leaving
# TCP repair mode clears SO_REUSEADDR: imgcr sets it back)
imgcr dump -t $pid -D dl --leave-running 2> dumpl.err || fail "dump --leave-running: $(cat dumpl.err)"
kill -USR1 $pid
wait_line out.txt "^round 3 " 20 || fail "--leave-running: no check round: $(tail -n3 out.txt | tr '\n' '|')"
grep -q "^round 3 ok 49 fail 0" out.txt ||
	fail "--leave-running: $(sed -n '/^round 2 /,$p' out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
pass "49 options and states checked by the program after each of 2 restores and a dump --leave-running, listed by imgcr show, addresses as in /proc/net"

# refusals
refused() {	# NAME PATTERN: the dump of skopts refuse NAME fails naming PATTERN
	(
	T=opts_refuse_$1
	setsid skopts refuse $1 $PORT "$PWD/$1.out" </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	wait_line $1.out 'ready' 10 || fail "skopts refuse $1 did not start: $(cat $1.out $1.prog | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) ready/\1/p' $1.out)
	imgcr dump -t $p -D d.$1 2> $1.err && fail "the dump succeeded"
	grep -q "pid $p fd $fd: .*$2" $1.err || fail "unclear refusal: $(cat $1.err)"
	case "$(state $p)" in "" | t | T | Z) fail "the task was not left running" ;; esac
	kill -0 $p || fail "the task is gone"
	pass "$(grep "pid $p fd $fd" $1.err | head -n1)"
	)
}
refused ebpf "an eBPF socket filter (SO_ATTACH_BPF) is not supported"
refused mcast "a multicast group membership (224.0.0.251 on lo; IP_ADD_MEMBERSHIP) is not supported"
refused cork "a datagram not yet sent (corked: UDP_CORK or MSG_MORE; [0-9]* bytes of send buffer) is not supported"
exit 0
