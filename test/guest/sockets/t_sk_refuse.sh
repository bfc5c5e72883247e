#!/bin/sh
# Sockets imgcr refuses, clearly (naming the pid, the fd and why), leaving
# the task running: a netlink socket holding a message not read, a packet
# socket with an RX ring, and a unix socket connected to a server outside the tree.
# That last one imgcr dump --ext-unix-sk accepts: restored, it connects
# to the same path again (a new connection, which the server accepts) and
# its exchange goes on.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

refused() {	# NAME PATTERN CMD...: the dump of CMD's process fails naming PATTERN
	name=$1 pat=$2
	shift 2
	setsid "$@" </dev/null >/dev/null 2>$name.prog &
	p=$!
	track $p
	sleep 1
	[ -d /proc/$p ] || fail "$name: the program ended: $(cat $name.prog)"
	imgcr dump -t $p -D d.$name 2> $name.err && fail "$name: the dump succeeded"
	grep -q "pid $p fd [0-9]*: .*$pat" $name.err || fail "$name: unclear refusal: $(cat $name.err)"
	case "$(state $p)" in "" | t | T | Z) fail "$name: the task was not left running" ;; esac
	info "$name: $(head -n1 $name.err)"
}
refused netlink "messages queued and not yet read" sknl refuse queue "$PWD/nl.out"
refused packet "packet socket with a PACKET_RX_RING" skpkt refuse ring "$PWD/pk.out"

# a unix socket connected to a server outside the tree
setsid sknet echosrv "$PWD/e.sock" </dev/null >/dev/null 2>&1 &
track $!
n=0
until [ -S e.sock ]; do n=$((n + 1)); [ $n -lt 500 ] || fail "no echo server"; usleep 20000; done
setsid sknet ping "$PWD/e.sock" "$PWD/ping.txt" </dev/null >/dev/null 2>&1 &
p=$!
track $p
wait_line ping.txt '^3$' 20 || fail "ping did not start"
imgcr dump -t $p -D d 2> ext.err && fail "a unix socket connected outside the tree: the dump succeeded"
grep -q "pid $p fd [0-9]*: unix stream socket:\[[0-9]*\]: connected to $PWD/e.sock .*outside the tree.*--ext-unix-sk" ext.err ||
	fail "unclear refusal: $(cat ext.err)"
info "outside: $(head -n1 ext.err)"
imgcr dump -t $p -D d --ext-unix-sk 2> ext2.err || fail "dump --ext-unix-sk: $(cat ext2.err)"
wait_gone $p 10 || fail "ping survived the dump"
last=$(tail -n1 ping.txt)
imgcr restore -D d > r.out 2> restore.err &
track $!
wait_line ping.txt "^$((last + 5))\$" 60 || fail "the restored ping did not go on after $last: $(tail -n2 ping.txt | tr '\n' '|')$(rerr)"
grep -q BAD ping.txt && fail "ping: $(grep BAD ping.txt)"
pass "netlink, packet refused; --ext-unix-sk reconnected, ping went on from $last"
