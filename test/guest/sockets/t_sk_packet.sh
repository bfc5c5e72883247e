#!/bin/sh
# Packet sockets (skpkt run, test/progs/skpkt.c): a raw ETH_P_ALL socket
# bound to lo with PACKET_IGNORE_OUTGOING, AUXDATA, ORIGDEV, VERSION
# TPACKET_V2 and a classic filter taking UDP to one port; a datagram
# socket of protocol 0x88b5 on every device with memberships on lo
# (PACKET_MR_PROMISC, PACKET_MR_ALLMULTI twice, PACKET_MR_MULTICAST
# 01:00:5e:00:00:fb); a raw socket of protocol 0 with VNET_HDR, LOSS,
# TX_HAS_OFF, QDISC_BYPASS, TIMESTAMP, RESERVE, SO_RCVBUF.  Dumped and
# restored (--detach) twice: the program checks every value (getsockname,
# the options, the filter) and that it still receives: the UDP datagram its
# filter takes and not the other, a 0x88b5 frame sent on lo.  From outside:
# /proc/net/packet lists its sockets as before (type, protocol, device,
# running), lo is still promiscuous and in all-multicast mode, its multicast
# list still has 01:00:5e:00:00:fb.  Subtests: refused, naming the pid and
# the fd, the task left running: an RX ring, a packet queued, a fanout group.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

PORT=7740
setsid skpkt run $PORT "$PWD/out.txt" </dev/null >/dev/null 2>skpkt.err &
pid=$!
track $pid
wait_line out.txt '^ready' 20 || fail "skpkt did not start: $(cat out.txt skpkt.err | tail -n5 | tr '\n' '|')"
grep -q "^round 0 ok [0-9]* fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|round' out.txt | tr '\n' '|')"

# /proc/net/packet: type, protocol, device, running of the program's sockets
procpk() {
	inos=$(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
	awk -v inos=" $inos" 'FNR > 1 && index(inos, " " $NF " ") { print $3, $4, $5, $6 }' /proc/net/packet | sort
}
# lo: IFF_PROMISC (0x100), IFF_ALLMULTI (0x200); its multicast list
lostate() {
	echo "flags=$(( $(cat /sys/class/net/lo/flags) & 0x300 )) mc=$(awk '$2 == "lo" { print $5 }' /proc/net/dev_mcast | sort | tr '\n' ,)"
}
B4=$(procpk $pid)
L4=$(lostate)
[ "$(echo "$B4" | wc -l)" = 3 ] || fail "before the dump: /proc/net/packet: $(echo $B4 | tr '\n' '|')"
[ "$L4" = "flags=768 mc=01005e0000fb," ] || fail "before the dump: lo: $L4"

i=1
while [ $i -le 2 ]; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	L=$(lostate)
	[ "$L" = "flags=0 mc=" ] || fail "dump $i: lo still has the memberships with the task gone: $L"
	imgcr show d$i > show$i.txt 2>&1 || fail "imgcr show d$i: $(cat show$i.txt)"
	[ $i = 1 ] && export_file sk_packet.tree d1/tree	# test/unit/tree/guest-sk_packet
	for o in "packet raw socket:\[[0-9]*\] protocol 0x0003 on lo (index 1) PACKET_VERSION=1 PACKET_AUXDATA=1 PACKET_ORIGDEV=1 PACKET_IGNORE_OUTGOING=1" \
		 "SO_ATTACH_FILTER=8-instruction" "packet datagram socket:\[[0-9]*\] protocol 0x88b5 on every device" \
		 "member promisc on lo" "member allmulti on lo x2" "member multicast 01:00:5e:00:00:fb on lo" \
		 "protocol 0x0000 on every device PACKET_RESERVE=64" PACKET_VNET_HDR=1 PACKET_LOSS=1 \
		 PACKET_TIMESTAMP=16 PACKET_TX_HAS_OFF=1 PACKET_QDISC_BYPASS=1; do
		grep -q -- "$o" show$i.txt || fail "dump $i: imgcr show does not list $o: $(grep socket show$i.txt | tr '\n' '|')"
	done
	timeout -s KILL 60 imgcr restore -D d$i --detach --pidfile "$PWD/rp$i" > r$i.out 2> restore$i.err ||
		fail "restore $i: $(tail -n 5 restore$i.err | tr '\n' '|')"
	np=$(cat rp$i)
	track $np
	sleep 1
	AF=$(procpk $np)
	[ "$AF" = "$B4" ] || fail "restore $i: /proc/net/packet differs: before $(echo $B4 | tr '\n' '|'), after $(echo $AF | tr '\n' '|')"
	L=$(lostate)
	[ "$L" = "$L4" ] || fail "restore $i: lo's memberships: before $L4, after $L"
	kill -USR1 $np
	wait_line out.txt "^round $i " 20 || fail "restore $i: no check round: $(tail -n3 out.txt | tr '\n' '|')"
	grep -q "^round $i ok [0-9]* fail 0" out.txt ||
		fail "restore $i: $(sed -n "/^round $((i - 1)) /,\$p" out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
	pid=$np
	i=$((i + 1))
done
pass "packet sockets restored twice: $(grep '^round 2 ' out.txt); /proc/net/packet as before: $(echo $B4 | tr '\n' '|'); lo: $L4"

refused() {	# NAME PATTERN: the dump of skpkt refuse NAME fails naming PATTERN
	(
	T=sk_packet_refuse_$1
	setsid skpkt refuse $1 "$PWD/$1.out" </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	wait_line $1.out 'ready' 10 || fail "skpkt refuse $1 did not start: $(cat $1.out $1.prog | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) ready/\1/p' $1.out)
	imgcr dump -t $p -D d.$1 2> $1.err && fail "the dump succeeded"
	grep -q "pid $p fd $fd: .*$2" $1.err || fail "unclear refusal: $(cat $1.err)"
	left_running $p || fail "the task was not left running"
	pass "$(grep "pid $p fd $fd" $1.err | head -n1)"
	)
}
refused ring "packet socket with a PACKET_RX_RING (mapped by the task, shared with the kernel) is not supported"
refused queue "packet socket on every device: packets queued and not yet read (the first: [0-9]* bytes) are not supported"
refused fanout "packet socket in a fanout group (PACKET_FANOUT) is not supported"
exit 0
