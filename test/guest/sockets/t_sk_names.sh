#!/bin/sh
# Socket names and segment sizes (sknames run, test/progs/sknames.c): a
# unix stream listener bound to an absolute path with a connection it
# accepted, a unix seqpacket listener bound to a relative name (from its
# directory) with an accepted connection; a socketpair made as uid 1000; an
# abstract listener listening as uid 1000 with a connection made as uid
# 2000 and accepted; an IPv4 and an IPv6 loopback TCP connection (both ends),
# one with SO_SNDBUFFORCE, one with SO_RCVBUFFORCE above net.core.wmem_max/rmem_max,
# with TCP_MAXSEG 1400 and 9000, and one with loopback's own segment sizes
# (above 32755: restored as 32755, docs/sockets.md).  Dumped and restored twice: the program checks
# that getsockname/getpeername of every unix socket (the accepted ones
# carry their listener's name, the clients their peer's), the pid, uid and
# gid of their SO_PEERCRED (the restorer makes each connection under the
# uid and gid, in a process of the pid), IPV6_V6ONLY (0) and TCP_MAXSEG of
# every TCP socket (the segment size in use), SO_REUSEADDR of the TCP
# sockets (an accepted one inherits its listener's) and SO_BUF_LOCK (1 and 2
# after the FORCE sizes, 0 on a TCP connection and a unix pair holding
# 100000 bytes not yet read, whose sizes the restore forces to write them
# back) are as before, and that every
# connection carries bytes both ways; /proc/net/unix shows the same names
# for the task's sockets.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7640
mkdir d || fail "mkdir"
setsid sknames run "$PWD/d" $PORT "$PWD/out.txt" </dev/null >/dev/null 2>sknames.err &
pid=$!
track $pid
wait_line out.txt '^ready' 20 || fail "sknames did not start: $(cat out.txt sknames.err | tail -n5 | tr '\n' '|')"
grep -q "^round 0 ok 54 fail 0" out.txt || fail "before the dump: $(grep -E 'FAIL|round' out.txt | tr '\n' '|')"

# the values that make the checks mean something: an accepted socket's
# SO_REUSEADDR inherited (1), the FORCE sizes' SO_BUF_LOCK (1, 2), and 0 on
# the sockets holding unread data, whose sizes the restore forces
for v in "sp0.cred pid self uid 1000 gid 1000" "c3.cred pid self uid 1000 gid 1000" \
	"a3.cred pid self uid 2000 gid 2000" "s4.reuse 1" "sl.reuse 1" "t4.reuse 0" "t4.buflock 1" "s4.buflock 2" "tq.buflock 0" \
	"sq.buflock 0" "q0.buflock 0" "q1.buflock 0"; do
	grep -q "^OK $v\$" out.txt || fail "before the dump: want $v: $(grep "^[A-Z]* ${v% *} " out.txt | head -n1)"
done

# /proc/net/unix: the names of the task's unix sockets (a name per socket inode)
unames() {
	inos=$(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
	awk -v inos=" $inos" 'FNR > 1 && NF >= 8 && index(inos, " " $7 " ") { print $8 }' /proc/net/unix | sort
}
B4=$(unames $pid)
[ "$(echo "$B4" | grep -c "^$PWD/d/abs.sock\$")" = 2 ] || fail "before the dump: /proc/net/unix: $(echo $B4)"
[ "$(echo "$B4" | grep -c '^rel.sock$')" = 2 ] || fail "before the dump: /proc/net/unix: $(echo $B4)"

i=1
while [ $i -le 2 ]; do
	imgcr dump -t $pid -D d$i 2> dump$i.err || fail "dump $i: $(cat dump$i.err)"
	wait_gone $pid 10 || fail "dump $i: the task survived"
	imgcr restore -D d$i > r$i.out 2> restore$i.err &
	track $!
	n=0
	until [ -d /proc/$pid ] && [ "$(readlink /proc/$pid/exe)" != /bin/busybox ] &&
	      grep -q sknames /proc/$pid/comm 2>/dev/null && [ "$(state $pid)" = S ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "restore $i: sknames not back: $(cat restore$i.err | tr '\n' '|')"
		usleep 50000
	done
	sleep 1
	kill -USR1 $pid
	wait_line out.txt "^round $i " 20 || fail "restore $i: no check round: $(tail -n3 out.txt | tr '\n' '|')$(cat restore$i.err)"
	grep -q "^round $i ok 54 fail 0" out.txt ||
		fail "restore $i: $(sed -n "/^round $((i - 1)) /,\$p" out.txt | grep -E 'FAIL|round' | tr '\n' '|')"
	AF=$(unames $pid)
	[ "$AF" = "$B4" ] || fail "restore $i: /proc/net/unix names differ: before $(echo $B4), after $(echo $AF)"
	no_lock
	i=$((i + 1))
done
pass "unix socket names (absolute, relative, accepted, peers) and TCP segment sizes (IPv4, IPv6) as before after 2 restores, checked by the program and in /proc/net/unix"
exit 0
