#!/bin/sh
# --tcp-close (CRIU's): established connections restored closed.  A client
# in the tree (tcpstream hold: connected to a server outside, 1000 bytes
# written) is dumped as usual (the network lock, repair mode) and restored
# with --tcp-close: its fd is a TCP socket in state CLOSE, no peer, a write
# says EPIPE (the program checks at SIGUSR1: "hold closed ok"), not in
# /proc/net/tcp, and the lock is gone.  Then dumped with --tcp-close: no
# lock, no queues saved, the server sees the end at the dump; a restore
# without --tcp-close refuses the image, naming the option, one with it
# restores it closed.  Then uid 1000 (no CAP_NET_ADMIN) dumps with
# --tcp-close and --leave-running: allowed, the connection goes on.
# The control: restored without --tcp-close, it is established.
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules
chmod 777 .

# start PORT [AS...]: a server outside (sink, $spid) and the client (hold, $hpid)
start() {
	port=$1
	shift
	rm -f s$port.txt h$port.txt
	setsid tcpstream sink 127.0.0.1 $port "$PWD/s$port.txt" </dev/null >/dev/null 2>s.err &
	spid=$!
	track $spid
	"$@" setsid tcpstream hold 127.0.0.1 $port "$PWD/h$port.txt" </dev/null >/dev/null 2>h.err &
	hpid=$!
	track $hpid
	wait_line h$port.txt "^hold connected" 20 || fail "port $port: hold did not connect: $(cat h.err s.err)"
}

# settled: the restored client ($hpid) runs as itself, the state check
# (ptrace) done with it
settled() {
	wait_tasks_restored $hpid
	k=0
	while [ "$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$hpid/status 2>/dev/null)" != 0 ] &&
	      [ -d /proc/$hpid ] && [ $k -lt 1200 ]; do usleep 50000; k=$((k + 1)); done
}

# closed PORT: the restored client's socket is closed, seen from inside and outside
closed() {
	settled
	ino=""
	for f in /proc/$hpid/fd/*; do
		case "$(readlink $f)" in socket:*) ino=$(readlink $f | tr -dc 0-9) ;; esac
	done
	[ -n "$ino" ] || fail "port $1: the restored client has no socket: $(ls -l /proc/$hpid/fd 2>&1 | tr '\n' '|')$(rerr)"
	awk -v i=$ino '$10 == i' /proc/net/tcp | grep -q . &&
		fail "port $1: the restored socket is in /proc/net/tcp: $(awk -v i=$ino '$10 == i' /proc/net/tcp)"
	kill -USR1 $hpid
	wait_line h$1.txt "^hold closed ok" 60 || fail "port $1: $(tail -n1 h$1.txt)"
	no_lock
}

# 1. dumped as usual, restored closed
start 7480
imgcr dump -t $hpid -D d1 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $hpid 10 || fail "the client survived the dump"
ls d1/sk-*.tcp > /dev/null 2>&1 || fail "the dump saved no connection"
# the state check would (rightly) see the closed socket: no name, no peer,
# the default segment size (32832 -> 536): it is off for the closed restores
IMGCR_STATE_HOOK= imgcr restore --tcp-close -D d1 > r.out 2> restore.err &
track $!
closed 7480
info "dumped with its queues, restored --tcp-close: closed"

# 2. dumped with --tcp-close: nothing saved, the server sees the end
start 7481
kill -USR1 $spid
imgcr dump --tcp-close -t $hpid -D d2 2> dump.err || fail "dump --tcp-close: $(cat dump.err)"
wait_gone $hpid 10 || fail "the client survived the dump"
[ -e d2/tcp-lock ] && fail "dump --tcp-close took a network lock"
ls d2/sk-*.tcp > /dev/null 2>&1 && fail "dump --tcp-close saved the connection"
wait_line s7481.txt "^sink done recv 1000 ok" 20 || fail "the server did not see the end at the dump: $(cat s7481.txt)"
imgcr restore -D d2 > r.out 2> restore.err && fail "an image dumped with --tcp-close was restored without it"
grep -q "dumped with --tcp-close .*restore it with imgcr restore --tcp-close" restore.err ||
	fail "unclear refusal: $(cat restore.err)"
info "without --tcp-close: $(head -n1 restore.err)"
[ -d /proc/$hpid ] && fail "the refused restore left the client"
IMGCR_STATE_HOOK= imgcr restore --tcp-close -D d2 > r.out 2> restore.err &
track $!
closed 7481
info "dumped --tcp-close, restored --tcp-close: closed"

# 3. uid 1000: --tcp-close needs no CAP_NET_ADMIN; left running, the connection goes on
start 7482 runas 1000 1000
runas 1000 1000 imgcr dump --tcp-close -R -t $hpid -D "$PWD/d3" 2> dump.err || fail "uid 1000: dump --tcp-close -R: $(cat dump.err)"
kill -USR1 $hpid
wait_line h7482.txt "^hold open ok" 60 || fail "uid 1000: after the dump: $(tail -n1 h7482.txt)"

# 4. the control: dumped and restored without --tcp-close, the same
# program finds its connection established ("hold open ok")
start 7483
imgcr dump -t $hpid -D d4 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $hpid 10 || fail "the client survived the dump"
imgcr restore -D d4 > r.out 2> restore.err &
track $!
settled
kill -USR1 $hpid
wait_line h7483.txt "^hold open ok" 60 || fail "control: $(tail -n1 h7483.txt)$(rerr)"
no_lock
pass "restored closed with --tcp-close, after a dump with or without it; uid 1000 dumps with it ($(took))"
