#!/bin/sh
# A send queue as large as the kernel let the program queue: a client in
# the tree (tcpstream fillq) fills its connection to a server outside that
# reads nothing yet (tcpstream sink), so megabytes wait in its send queue,
# most of them not yet sent.  Dumped and restored: every byte is queued
# again (the restore makes room first, then gives SO_SNDBUF, SO_RCVBUF
# and SO_BUF_LOCK back as they were: the restored program checks them at
# SIGTERM), then the server reads all of it, every byte checked, and the
# end.  Once with the buffer TCP autotuned (unlocked), once with the
# program's own SO_SNDBUFFORCE of 3 MiB (locked).
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

# one SNDBUF PORT
one() {
	b=$1 PORT=$2 hex=$(printf '%04X' $2)
	setsid tcpstream sink 127.0.0.1 $PORT "$PWD/sink$PORT.txt" </dev/null >/dev/null 2>sink.err &
	spid=$!
	track $spid
	setsid tcpstream fillq 127.0.0.1 $PORT "$PWD/fill$PORT.txt" $b </dev/null >/dev/null 2>fill.err &
	lpid=$!
	track $lpid
	wait_line fill$PORT.txt "^fill wrote" 60 || fail "sndbuf $b: fillq did not fill the connection: $(cat fill.err sink.err)"
	imgcr dump -t $lpid -D d$PORT 2> dump.err || fail "sndbuf $b: dump: $(cat dump.err)"
	wait_gone $lpid 10 || fail "sndbuf $b: the client survived the dump"
	unsq=$(awk '$1 == "unsq" {print $2}' d$PORT/sk-*.tcp)
	outq=$(awk '$1 == "outq" {print $2}' d$PORT/sk-*.tcp)
	[ "${unsq:-0}" -ge 1048576 ] || fail "sndbuf $b: only ${unsq:-0} bytes not yet sent at the dump (outq $outq)"
	# the pid file is written once the whole restore is done, and the
	# client is back in its pause() once asleep: a SIGTERM before that
	# runs the handler before pause() is entered again (as after CRIU's
	# restore: the interrupted call is restarted), and the program,
	# checking its flag only after pause() returns, would sleep on
	rm -f pf$PORT
	imgcr restore -D d$PORT --pidfile pf$PORT > r.out 2> restore.err &
	track $!
	k=0
	until [ -s pf$PORT ] || grep -q "no room\|cannot" restore.err || [ $k -ge 600 ]; do usleep 100000; k=$((k + 1)); done
	case "$(readlink /proc/$lpid/exe 2>/dev/null)" in
	*/tcpstream) ;;
	*) fail "sndbuf $b: the client was not restored$(rerr)" ;;
	esac
	wait_restored $lpid 30 imgcr || fail "sndbuf $b: the restored client is not back asleep (state $(state $lpid))"
	[ "$(awk -v p=":$hex" '$4 == "01" && substr($3, length($3) - 4) == p {print $4}' /proc/net/tcp)" = 01 ] ||
		fail "sndbuf $b: the restored connection is not established: $(grep ":$hex " /proc/net/tcp | tr '\n' '|')"
	kill -TERM $lpid
	wait_line fill$PORT.txt "^fillq bufs ok" 30 || fail "sndbuf $b: the buffers: $(tail -n2 fill$PORT.txt | tr '\n' '|')"
	kill -USR1 $spid
	wait_line sink$PORT.txt "^sink done" 120 || fail "sndbuf $b: the server did not read to the end: $(cat sink$PORT.txt sink.err)"
	grep -q BAD sink$PORT.txt fill$PORT.txt && fail "$(cat sink$PORT.txt fill$PORT.txt)"
	set -- $(grep "^fill wrote" fill$PORT.txt)
	wrote=$3 bufs="$4 $5 $6 $7 $8 $9"
	set -- $(grep "^sink done" sink$PORT.txt)
	[ "$4" = "$wrote" ] || fail "sndbuf $b: the client wrote $wrote bytes, the server read $4"
	wait_line fill$PORT.txt "^fillq done ok" 30 || fail "sndbuf $b: the client did not see the end: $(tail -n2 fill$PORT.txt | tr '\n' '|')"
	no_lock
	info "sndbuf $b: $unsq of $outq bytes not yet sent at the dump, all $wrote received; $bufs kept"
}
one 0 7470
one 3145728 7471
pass "send queues of megabytes restored whole, buffer sizes and locks as they were ($(took))"
