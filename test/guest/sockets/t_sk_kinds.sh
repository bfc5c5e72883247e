#!/bin/sh
# ICMP ("ping"), UDP-Lite and raw sockets (sk_kinds run, test/progs/sk_kinds.c):
# ping IPv4 (bound to an ident, connected) and IPv6, UDP-Lite IPv4/IPv6
# with UDPLITE_SEND_CSCOV/RECV_CSCOV (one connected to itself, one shut
# down for writing), raw IPv4 sockets (IPPROTO_ICMP with ICMP_FILTER,
# protocol 253 bound and connected, IPPROTO_RAW, 254 with IP_HDRINCL shut
# down for writing, IPPROTO_TCP connected) and raw IPv6 (IPPROTO_ICMPV6
# with ICMPV6_FILTER, 253 with IPV6_CHECKSUM).  Dumped with imgcr dump -t
# and restored with --detach twice: the program checks every option,
# address and protocol with getsockopt/getsockname/getpeername, and that
# each socket still works (echo replies, datagrams, its own raw packets,
# EPIPE where shut down); /proc/net (icmp, raw, udplite and their IPv6
# tables) shows the same sockets from outside; imgcr show names them.
# Subtests: what is refused (a ping socket with an echo reply queued, a
# UDP-Lite socket with an ICMP error queued), naming the pid, the fd and
# the state, the task left running.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

PORT=7710
N=49	# the program's checks per round
# ping sockets for every group (the guest's default, "1 0", allows none)
echo "0 2147483647" > /proc/sys/net/ipv4/ping_group_range || fail "cannot set net.ipv4.ping_group_range"
setsid sk_kinds run $PORT "$PWD/out.txt" </dev/null >/dev/null 2>prog.err &
pid=$!
track $pid
wait_line out.txt '^ready' 20 || fail "sk_kinds did not start: $(cat out.txt prog.err | tail -n5 | tr '\n' '|')"
# a kernel without UDP-Lite (7.x removed it): its 4 sockets and 13 checks left out
LITE=1
grep -q '^nolite' out.txt && LITE=0 N=36
grep -q "^round 0 ok $N fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|round' out.txt | tr '\n' '|')"

# from outside: local address, remote address and state of every socket of
# these tables (the guest has no other), per table
procnet() {
	for f in icmp icmp6 raw raw6 udplite udplite6; do
		[ -e /proc/$1/net/$f ] && awk -v f=$f 'FNR > 1 { print f, $2, $3, $4 }' /proc/$1/net/$f
	done | sort
}
B4=$(procnet $pid)
hp() { printf '%04X' $1; }
for want in "icmp 0100007F:$(hp $PORT) 0100007F:0000 01" \
	    "icmp6 00000000000000000000000001000000:$(hp $((PORT + 1))) 00000000000000000000000000000000:0000 07" \
	    "udplite 0100007F:$(hp $PORT) 00000000:0000 07" \
	    "udplite 0100007F:$(hp $((PORT + 2))) 0100007F:$(hp $PORT) 01" \
	    "udplite6 00000000000000000000000001000000:$(hp $((PORT + 1))) 00000000000000000000000001000000:$(hp $((PORT + 1))) 01" \
	    "raw 0100007F:00FD 0100007F:0000 01" "raw 00000000:0001 00000000:0000 07" \
	    "raw 00000000:00FF 00000000:0000 07" "raw 00000000:00FE 00000000:0000 07" \
	    "raw 0100007F:0006 0100007F:0000 01" \
	    "raw6 00000000000000000000000001000000:00FD 00000000000000000000000000000000:0000 07" \
	    "raw6 00000000000000000000000000000000:003A 00000000000000000000000000000000:0000 07"; do
	case "$LITE $want" in "0 udplite"*) continue ;; esac
	echo "$B4" | grep -q "^$want\$" || fail "before the dump: \"$want\" not in /proc/net: $(echo "$B4" | tr '\n' '|')"
done
SS=$(command -v ss)

i=1
while [ $i -le 2 ]; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	imgcr show d$i > show$i.txt 2>&1 || fail "imgcr show d$i: $(cat show$i.txt)"
	for o in "IPv4 ICMP (ping) socket" "IPv6 ICMP (ping) socket" "IPv4 UDP-Lite socket" \
		 "IPv6 UDP-Lite socket" "IPv4 raw (protocol 1) socket" "IPv4 raw (protocol 253) socket" \
		 "IPv4 raw (protocol 255) socket" "IPv4 raw (protocol 6) socket" \
		 "IPv6 raw (protocol 58) socket" "IPv6 raw (protocol 253) socket" \
		 UDPLITE_SEND_CSCOV=20 UDPLITE_RECV_CSCOV=20 ICMP_FILTER= ICMPV6_FILTER= IPV6_CHECKSUM=2 \
		 IP_HDRINCL=1 IP_NODEFRAG=1 "shut down for writing" IP_TTL=17 SO_MARK=7 SO_PRIORITY=3 \
		 "SO_ATTACH_FILTER=1-instruction"; do
		case "$LITE $o" in "0 "*UDP-Lite* | "0 UDPLITE"*) continue ;; esac
		grep -qF -- "$o" show$i.txt || fail "dump $i: imgcr show does not list $o: $(grep socket show$i.txt | tr '\n' '|')"
	done
	[ $i = 1 ] && export_file sk_kinds.tree d1/tree	# test/unit/tree/guest-sk_kinds
	imgcr restore -D d$i --detach > r$i.out 2> restore$i.err || fail "restore $i: $(cat restore$i.err)"
	n=0
	until [ -d /proc/$pid ] && grep -q sk_kinds /proc/$pid/comm 2>/dev/null && [ "$(state $pid)" = S ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "restore $i: sk_kinds not back: $(cat restore$i.err | tr '\n' '|')"
		usleep 50000
	done
	kill -USR1 $pid
	wait_line out.txt "^round $i " 30 || fail "restore $i: no check round: $(tail -n3 out.txt | tr '\n' '|')$(cat restore$i.err)"
	grep -q "^round $i ok $N fail 0" out.txt ||
		fail "restore $i: $(sed -n "/^round $((i - 1)) /,\$p" out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
	AF=$(procnet $pid)
	[ "$AF" = "$B4" ] || fail "restore $i: /proc/net differs: before $(echo "$B4" | tr '\n' '|'), after $(echo "$AF" | tr '\n' '|')"
	if [ -n "$SS" ]; then
		"$SS" -a -w -n > ss$i.txt 2>&1 && info "ss -w: $(wc -l < ss$i.txt) lines"
	fi
	i=$((i + 1))
done
pass "$N options, addresses and behaviours of $([ $LITE = 1 ] && echo 13 || echo 9) ping, UDP-Lite and raw sockets checked by the program after 2 restores, /proc/net the same, imgcr show names them"

# refusals
refused() {	# NAME PATTERN: the dump of sk_kinds refuse NAME fails naming PATTERN
	(
	T=sk_kinds_refuse_$1
	setsid sk_kinds refuse $1 $PORT "$PWD/$1.out" </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	wait_line $1.out 'ready' 10 || fail "sk_kinds refuse $1 did not start: $(cat $1.out $1.prog | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) ready/\1/p' $1.out)
	imgcr dump -t $p -D d.$1 2> $1.err && fail "the dump succeeded"
	grep -q "pid $p fd $fd: .*$2" $1.err || fail "unclear refusal: $(cat $1.err)"
	case "$(state $p)" in "" | t | T | Z) fail "the task was not left running" ;; esac
	kill -0 $p || fail "the task is gone"
	pass "$(grep "pid $p fd $fd" $1.err | head -n1)"
	)
}
refused queued "IPv4 ICMP (ping) socket .*datagrams queued, not yet received (8 bytes in the first): not supported"
[ $LITE = 1 ] && refused error "IPv4 UDP-Lite socket .*an error pending (SO_ERROR, or an ICMP error queued by IP_RECVERR/IPV6_RECVERR): not supported"
exit 0
