#!/bin/sh
# TCP connections closed from both sides, held there by nftables drop
# rules (CRIU's zdtm socket-tcp-closing does the same with iptables): the
# node (tcpclosing node, the dumped tree) and its peer (tcpclosing peer,
# outside) on 127.0.0.1.
#   LAST-ACK: the peer shuts its side, the node takes the FIN (CLOSE-WAIT);
#     then both directions are dropped and the node shuts its side: its FIN
#     is lost, the node stays in LAST-ACK.
#   CLOSING: both directions dropped, both shut their sides (both
#     FIN-WAIT-1); the peer -> node direction let through: the peer's FIN
#     comes in, the node's ACK of it is lost, the node stays in CLOSING.
# Dumped (refused before imgcr restored these states) and restored: the
# node checks from inside (TCP_INFO: the same state; the peer's 1000 bytes
# then end of file; a write fails with EPIPE), /proc/net/tcp shows the
# state; then the rules are removed, the node's FIN (sent again) reaches the
# peer, which reads the end, and its ACK closes the node's connection
# (no reset).
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

NFT=/usr/sbin/nft
# drop NAME RULE: a table NAME whose input chain drops what RULE matches,
# but for the packets of imgcr's mark (0x1c3e7f1: the peer's FIN the
# restore sends the socket again, which imgcr's own lock lets in too)
drop() {
	printf 'add table inet %s\nadd chain inet %s in { type filter hook input priority 0; }\nadd rule inet %s in meta mark != 0x1c3e7f1 %s drop\n' \
		$1 $1 $1 "$2" | $NFT -f - || fail "cannot add the test's nftables rule $1"
}
undrop() { $NFT delete table inet $1 2>/dev/null; }
clean_rules() { undrop tc_p2n; undrop tc_n2p; }
trap 'clean_rules; tcp_cleanup' EXIT

# tcpst PORT: the state (hex, /proc/net/tcp) of the node's connection to PORT
tcpst() {
	awk -v p=":$(printf %04X $1)" 'substr($3, length($3) - 4) == p {print $4}' /proc/net/tcp
}

# one MODE PORT HEXSTATE NAME
one() {
	mode=$1 port=$2 hex=$3 name=$4
	o=$PWD/$mode.txt
	rm -f $o
	setsid tcpclosing peer $port $o </dev/null >/dev/null 2>$mode.perr &
	ppid=$!
	track $ppid
	usleep 300000
	setsid tcpclosing node $mode $port $o </dev/null >/dev/null 2>$mode.nerr &
	npid=$!
	track $npid
	wait_line $o "^peer got 500" 30 || fail "$name: no connection: $(cat $o $mode.perr $mode.nerr)"
	if [ $mode = lastack ]; then
		kill -USR1 $ppid
		k=0
		until [ "$(tcpst $port)" = 08 ] || [ $k -ge 100 ]; do usleep 100000; k=$((k + 1)); done
		[ "$(tcpst $port)" = 08 ] || fail "$name: the node is not in CLOSE-WAIT: $(tcpst $port)"
		drop tc_p2n "tcp sport $port"
		drop tc_n2p "tcp dport $port"
		kill -USR1 $npid
	else
		drop tc_p2n "tcp sport $port"
		drop tc_n2p "tcp dport $port"
		kill -USR1 $ppid
		wait_line $o "^peer shut" 10 || fail "$name: the peer did not shut its side"
		kill -USR1 $npid
		usleep 300000
		undrop tc_p2n
	fi
	wait_line $o "^node held" 60 || fail "$name: the node did not get to $name: $(cat $o) /proc/net/tcp: $(tcpst $port)"
	[ "$(tcpst $port)" = $hex ] || fail "$name: /proc/net/tcp says $(tcpst $port) before the dump"
	imgcr dump -t $npid -D d$mode 2> $mode.dump.err || fail "$name: dump: $(cat $mode.dump.err)"
	wait_gone $npid 10 || fail "$name: the node survived the dump"
	grep -q '^fin 1$' d$mode/sk-*.tcp && grep -q '^finrcv 1$' d$mode/sk-*.tcp ||
		fail "$name: the image does not hold both FINs: $(cat d$mode/sk-*.tcp | tr '\n' ' ')"
	imgcr restore -D d$mode > $mode.r.out 2> restore.err &
	track $!
	wait_tasks_restored $npid
	[ "$(tcpst $port)" = $hex ] || fail "$name: the restored connection is '$(tcpst $port)' in /proc/net/tcp, not $hex$(rerr)"
	no_lock
	kill -USR2 $npid
	wait_line $o "^node restored ok" 30 || fail "$name: $(grep BAD $o || tail -n1 $o)$(rerr)"
	clean_rules
	wait_line $o "^peer eof" 120 || fail "$name: the peer did not see the node's FIN: $(cat $o $mode.perr)"
	wait_line $o "^node closed ok" 200 || fail "$name: $(grep BAD $o || tail -n1 $o)"
	grep -q BAD $o && fail "$name: $(grep BAD $o)"
	info "$name restored, checked, then closed by the peer's ACK"
}

one lastack 7490 09 LAST-ACK
one closing 7491 0B CLOSING
pass "LAST-ACK and CLOSING dumped, restored in the same state with their data and end of file, closed after ($(took))"
