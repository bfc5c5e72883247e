#!/bin/sh
# imgcr dump --leave-running of a tree with an established TCP connection
# (tcpstream pair): the connection leaves repair mode, the network lock is
# removed, and the stream goes on with nothing lost.  And a dump that
# fails after the connection was locked (the tree also holds /dev/kmsg,
# which imgcr refuses, after its sockets): the same, the connection goes on.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

start() {	# PORT OUT [EXTRA]: a tcpstream pair; pid, kid
	setsid sh -c "exec tcpstream pair 127.0.0.1 $1 $PWD/$2 ${3:-}" </dev/null >/dev/null 2>$2.err &
	pid=$!
	track $pid
	kid=$(child_of $pid)
	track $kid
	wait_progress $2 0 30 || fail "the stream did not start: $(cat $2.err)"
}

# a dump failing after the sockets: /dev/kmsg (fd 7) comes after them
start 7420 f.txt "7</dev/kmsg"
imgcr dump -t $pid -D f 2> fail.err && fail "a dump with /dev/kmsg succeeded"
grep -q "pid $pid fd 7: .*kmsg.*not supported" fail.err || fail "unclear refusal: $(cat fail.err)"
[ -e f/tcp-lock ] && fail "the failed dump left its lock record"
ls f/sk-*.tcp > /dev/null 2>&1 || fail "the connection was not reached before the refusal: nothing tested"
no_lock
at=$(last_recv f.txt)
wait_progress f.txt $((at + 65536)) 30 || fail "after the failed dump the stream did not go on: $(tail -n2 f.txt | tr '\n' '|')"
stream_end f.txt $kid
info "failed dump: $(head -n1 fail.err); then $STREAM_BYTES bytes each way"

start 7421 out.txt
imgcr dump -t $pid -D d --leave-running 2> dump.err || fail "dump --leave-running: $(cat dump.err)"
[ "$(ls d/sk-*.tcp | wc -l)" = 2 ] || fail "the connection was not saved: $(ls d)"
[ -e d/tcp-lock ] && fail "--leave-running left its lock record"
no_lock
at=$(last_recv out.txt)
wait_progress out.txt $((at + 65536)) 30 || fail "after --leave-running the stream did not go on: $(tail -n2 out.txt | tr '\n' '|')"
stream_end out.txt $kid
pass "the stream went on after a failed dump and after --leave-running: $STREAM_BYTES bytes each way ($(took))"
