#!/bin/sh
# File descriptors in flight (SCM_RIGHTS queued in unix sockets, not yet
# received; skinflight main): a pipe's read end with data, a regular file
# at offset 42, an eventfd with count 7 (also held by the task, and in
# flight twice), a unix socket whose only reference is in flight with data
# in its own queue, a pipe's write end, in a stream, a datagram and a
# seqpacket pair, between messages without fds.  Dumped, killed,
# restored: the program receives them with the same message boundaries
# and checks each (inside); from outside, /proc fdinfo of the received
# file (pos 42) and eventfd (count 7) and the socket's link.  Then the
# refusals (the task left running): a socket in flight in its own queue,
# an epoll fd that only a queue holds.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

main_test() {
	mkdir -p dir
	setsid skinflight main "$PWD/dir" "$PWD/out" </dev/null >/dev/null 2>prog.err &
	pid=$!
	track $pid
	wait_line out "^ready" 20 || fail "skinflight did not start: $(cat prog.err)"
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $pid 10 || fail "the task survived the dump"
	export_file sk_inflight.tree d/tree	# test/unit/tree/guest-sk_inflight
	grep -q "^skq ino=[0-9]* seq=1 files=[0-9]*,[0-9]*\$" d/tree ||
		fail "no skq record for the stream's first message with fds: $(grep '^skq' d/tree | tr '\n' '|')"
	[ "$(grep -c '^skq ' d/tree)" = 4 ] || fail "skq records: $(grep '^skq' d/tree | tr '\n' '|')"
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	n=0
	until [ "$(readlink /proc/$pid/exe 2>/dev/null)" = "$(command -v skinflight)" ] &&
		[ "$(state $pid)" = S ]; do
		n=$((n + 1))
		[ $n -lt 1500 ] || fail "the task did not come back$(rerr)"
		[ -d /proc/$rpid ] || fail "imgcr restore ended$(rerr)"
		usleep 20000
	done
	kill -USR1 $pid
	wait_line out "^received" 20 || fail "nothing received: $(tr '\n' '|' < out)$(rerr)"
	set -- $(sed -n 's/^received file=\([0-9-]*\) efd=\([0-9-]*\) sock=\([0-9-]*\) pipe=\([0-9-]*\)/\1 \2 \3 \4/p' out)
	[ $# = 4 ] || fail "inside: $(tr '\n' '|' < out)"
	# outside: what the program received, as /proc shows it
	pos=$(sed -n 's/^pos:[[:space:]]*//p' /proc/$pid/fdinfo/$1)
	[ "$pos" = 42 ] || fail "outside: the received file's pos is '$pos', not 42"
	[ "$(readlink /proc/$pid/fd/$1)" = "$PWD/dir/file" ] ||
		fail "outside: the received file is $(readlink /proc/$pid/fd/$1)"
	cnt=$(sed -n 's/^eventfd-count:[[:space:]]*//p' /proc/$pid/fdinfo/$2)
	[ "$cnt" = 7 ] || fail "outside: the received eventfd's count is '$cnt', not 7"
	case "$(readlink /proc/$pid/fd/$3)" in socket:*) ;; *) fail "outside: fd $3 is $(readlink /proc/$pid/fd/$3)" ;; esac
	case "$(readlink /proc/$pid/fd/$4)" in pipe:*) ;; *) fail "outside: fd $4 is $(readlink /proc/$pid/fd/$4)" ;; esac
	kill -USR1 $pid
	wait_exit $rpid 60
	inside_ok skinflight
	pass "pipe, file at 42, eventfd 7, socket only in flight: received with their boundaries and working"
}

refused() {	# NAME PATTERN: skinflight refuse NAME's dump fails naming PATTERN, left running
	setsid skinflight refuse $1 </dev/null >/dev/null 2>$1.prog &
	p=$!
	track $p
	sleep 1
	[ -d /proc/$p ] || fail "$1: the program ended: $(cat $1.prog)"
	imgcr dump -t $p -D d.$1 2> $1.err && fail "$1: the dump succeeded"
	grep -q "pid $p fd [0-9]*: .*$2" $1.err || fail "$1: unclear refusal: $(cat $1.err)"
	case "$(state $p)" in "" | t | T | Z) fail "$1: the task was not left running" ;; esac
	info "$1: $(grep "pid $p" $1.err | head -n1)"
}

refuse_test() {
	refused loop "socket:\[[0-9]*\]: the socket itself is in flight in its own queue"
	refused epoll "in flight (SCM_RIGHTS), is a epoll file no task of the tree holds: not supported"
	pass "a socket in its own queue, an epoll fd only in flight: refused, left running"
}

subtest sk_inflight main_test
subtest sk_inflight-refuse refuse_test
