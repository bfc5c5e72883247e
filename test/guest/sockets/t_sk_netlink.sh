#!/bin/sh
# Netlink sockets (sknl run, test/progs/sknl.c): NETLINK_ROUTE with a port
# id the kernel assigned, multicast groups 1, 5, 33 and 35 (above 32) and
# NETLINK_PKTINFO, NO_ENOBUFS, CAP_ACK, EXT_ACK, GET_STRICT_CHK, SO_RCVBUF;
# NETLINK_ROUTE bound to the port id it chose, connected to the kernel,
# BROADCAST_ERROR, LISTEN_ALL_NSID; NETLINK_KOBJECT_UEVENT in group 1 with
# a classic filter and SO_PASSCRED; NETLINK_AUDIT bound to a chosen port
# id; an unbound one; one that joined RTNLGRP_LINK and left it (no group,
# but NETLINK_LIST_MEMBERSHIPS gives a list of zeros, not an empty one:
# the restore makes the group table without joining).  Dumped and restored (--detach) twice: the program
# checks every value (getsockname, getpeername, NETLINK_LIST_MEMBERSHIPS,
# the options) and that it still receives: an RTM_NEWADDR after an address
# is added to lo, a uevent after "change" is written to lo's uevent; a
# unicast to the connected socket is still refused.  From outside:
# /proc/net/netlink lists its sockets with the same protocol, port id and
# groups.  Subtests: refused with messages queued (an answer not read),
# naming the pid and fd, the task left running.
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

setsid sknl run "$PWD/out.txt" </dev/null >/dev/null 2>sknl.err &
pid=$!
track $pid
wait_line out.txt '^ready' 20 || fail "sknl did not start: $(cat out.txt sknl.err | tail -n5 | tr '\n' '|')"
grep -q "^round 0 ok [0-9]* fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|round' out.txt | tr '\n' '|')"

# /proc/net/netlink: protocol, port id, groups (first 32) of the program's sockets
procnl() {
	inos=$(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
	awk -v inos=" $inos" 'FNR > 1 && index(inos, " " $NF " ") { print $2, $3, $4 }' /proc/net/netlink | sort
}
pid0=$pid	# the port id the kernel gave r1 and ue, kept by every restore
B4=$(procnl $pid)
[ "$(echo "$B4" | wc -l)" -ge 4 ] || fail "before the dump: /proc/net/netlink: $(echo $B4)"
echo "$B4" | grep -q "^0 4242421 00000000$" || fail "before: r2 not in /proc/net/netlink: $(echo $B4)"
echo "$B4" | grep -q "^0 $pid 00000011$" || fail "before: r1 not in /proc/net/netlink: $(echo $B4)"

i=1
while [ $i -le 2 ]; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	imgcr show d$i > show$i.txt 2>&1 || fail "imgcr show d$i: $(cat show$i.txt)"
	[ $i = 1 ] && export_file sk_netlink.tree d1/tree	# test/unit/tree/guest-sk_netlink
	for o in "ROUTE port id $pid0 groups 1,5,33,35" "port id 4242421 -> port id 0 group 0" \
		 "KOBJECT_UEVENT port id $pid0 groups 1" "AUDIT port id 4242422" "ROUTE not bound" "groups left" \
		 NETLINK_PKTINFO=1 NETLINK_LISTEN_ALL_NSID=1 NETLINK_GET_STRICT_CHK=1 SO_PASSCRED=1 \
		 "SO_ATTACH_FILTER=1-instruction"; do
		grep -q -- "$o" show$i.txt || fail "dump $i: imgcr show does not list $o: $(grep socket show$i.txt | tr '\n' '|')"
	done
	timeout -s KILL 60 imgcr restore -D d$i --detach --pidfile "$PWD/rp$i" > r$i.out 2> restore$i.err ||
		fail "restore $i: $(tail -n 5 restore$i.err | tr '\n' '|')"
	np=$(cat rp$i)
	track $np
	sleep 1
	AF=$(procnl $np)
	[ "$AF" = "$B4" ] || fail "restore $i: /proc/net/netlink differs: before $(echo $B4 | tr '\n' '|'), after $(echo $AF | tr '\n' '|')"
	kill -USR1 $np
	wait_line out.txt "^waiting $i" 20 || fail "restore $i: no check round: $(tail -n3 out.txt | tr '\n' '|')"
	echo change > /sys/class/net/lo/uevent
	ip addr add 127.0.0.$((70 + i))/8 dev lo || fail "ip addr add"
	wait_line out.txt "^round $i " 20 || fail "restore $i: the round did not end: $(tail -n3 out.txt | tr '\n' '|')"
	grep -q "^round $i ok [0-9]* fail 0" out.txt ||
		fail "restore $i: $(sed -n "/^round $((i - 1)) /,\$p" out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
	pid=$np
	i=$((i + 1))
done
n=$(grep "^round 2 " out.txt)
pass "netlink sockets restored twice: $n; /proc/net/netlink as before: $(echo $B4 | tr '\n' '|')"

refused() {	# NAME PATTERN: the dump of sknl refuse NAME fails naming PATTERN
	(
	T=sk_netlink_refuse_$1
	setsid sknl refuse $1 "$PWD/$1.out" </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	wait_line $1.out 'ready' 10 || fail "sknl refuse $1 did not start: $(cat $1.out $1.prog | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\) ready/\1/p' $1.out)
	imgcr dump -t $p -D d.$1 2> $1.err && fail "the dump succeeded"
	grep -q "pid $p fd $fd: .*$2" $1.err || fail "unclear refusal: $(cat $1.err)"
	left_running $p || fail "the task was not left running"
	pass "$(grep "pid $p fd $fd" $1.err | head -n1)"
	)
}
refused queue "netlink ROUTE socket (port id [0-9]*): messages queued and not yet read (the first: [0-9]* bytes, type 16) are not supported"
exit 0
