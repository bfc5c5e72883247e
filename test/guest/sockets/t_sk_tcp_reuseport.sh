#!/bin/sh
# A listening socket with SO_REUSEPORT whose sibling on the same port is
# another process's, outside the tree (tcpstream reuse: a listener that
# answers its name to each connection).  The reuseport rule: a socket
# joins the port only if its owner (the uid that made it) is its
# siblings'.  uid 1000's tree, dumped and restored by root: the restored
# listener is bound again beside the sibling, owned by uid 1000
# (/proc/net/tcp), and both answer connections (the kernel spreads them by
# their ports); the restored program checks SO_REUSEPORT at each accept.
# Then the same with root's listeners.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules
chmod 777 .

# listeners PORTHEX: "UID UID" of the listening sockets on the port
listeners() { awk -v p=":$1" '$4 == "0A" && substr($2, length($2) - 4) == p {printf "%s ", $8}' /proc/net/tcp; }

# one UID PORT
one() {
	uid=$1 port=$2 hex=$(printf '%04X' $2)
	if [ $uid = 0 ]; then as=""; else as="runas $uid $uid"; fi
	rm -f o$port.txt i$port.txt a$port.txt
	$as setsid tcpstream reuse 127.0.0.1 $port "$PWD/o$port.txt" outside </dev/null >/dev/null 2>o$port.err &
	opid=$!
	track $opid
	wait_line o$port.txt listening 20 || fail "uid $uid: the outside listener did not start: $(cat o$port.err)"
	$as setsid tcpstream reuse 127.0.0.1 $port "$PWD/i$port.txt" inside </dev/null >/dev/null 2>i$port.err &
	ipid=$!
	track $ipid
	wait_line i$port.txt listening 20 || fail "uid $uid: the tree's listener did not start: $(cat i$port.err)"
	[ "$(listeners $hex)" = "$uid $uid " ] || fail "uid $uid: listeners before the dump: '$(listeners $hex)'"
	imgcr dump -t $ipid -D d$port 2> dump.err || fail "uid $uid: dump: $(cat dump.err)"
	wait_gone $ipid 10 || fail "uid $uid: the tree survived the dump"
	[ "$(listeners $hex)" = "$uid " ] || fail "uid $uid: listeners after the dump: '$(listeners $hex)'"
	imgcr restore -D d$port > r.out 2> restore.err &
	track $!
	k=0
	until [ "$(listeners $hex)" = "$uid $uid " ] || [ $k -ge 200 ]; do usleep 100000; k=$((k + 1)); done
	[ "$(listeners $hex)" = "$uid $uid " ] ||
		fail "uid $uid: listeners (uids) after the restore: '$(listeners $hex)'$(rerr)"
	tcpstream ask 127.0.0.1 $port "$PWD/a$port.txt" 2> a.err || fail "uid $uid: ask: $(cat a.err a$port.txt)"
	nin=$(grep -c "^ans inside" a$port.txt)
	nout=$(grep -c "^ans outside" a$port.txt)
	[ "$nin" -gt 0 ] && [ "$nout" -gt 0 ] || fail "uid $uid: answers: $nin from the restored listener, $nout from the outside one"
	grep -q BAD i$port.txt o$port.txt && fail "$(cat i$port.txt o$port.txt)"
	info "uid $uid: restored beside its sibling; $nin answers from it, $nout from the sibling"
}
one 1000 7460
one 0 7461
pass "SO_REUSEPORT listeners restored beside their siblings outside the tree, uid 1000 and root ($(took))"
