#!/bin/sh
# runc (Debian 12's 1.1.5) checkpoints and restores a container with
# imgcr-criu as its CRIU (runc --criu): a bundle made by "runc spec" with a
# busybox rootfs, no terminal, the test's counter as the container's
# process (pid 1), a host directory bound in (/shared), runc's default
# cgroup namespace; its stdio are pipes to the test (stdout read by cat
# into a file).
#   runc          runc run -d; runc checkpoint --image-path D (the counter
#                 gone, the container destroyed); runc restore -d (new stdio
#                 pipes: runc's inherit_fd); inside: the numbers go on
#                 without gap or repeat, all printed by pid 1 (the same pid
#                 in the container's PID namespace), the counter's
#                 self-check passes; outside: runc state "running" with the
#                 restored pid, runc ps lists it, NSpid ends in 1, its
#                 stdout is the new pipe, /shared is bound in again, runc
#                 delete after it exited; the container's cgroup
#                 namespace its own, rooted at its cgroup ("0::/" seen
#                 from inside), before and after
#   runc-nocgns   the same with the cgroup namespace taken out of the spec
#   runc-leave    runc checkpoint --leave-running c3, runc restore of the
#                 images as c4 while c3 runs: both count to the end without
#                 gap, each as pid 1 of its own PID and cgroup namespaces
#                 in its own cgroup; c4 starts after c3's checkpoint
#   runc-predump  runc checkpoint --pre-dump (imgcr-criu: only a mark in
#                 the images directory, the container runs on), a
#                 --parent-path without the mark refused, then
#                 --parent-path to the pre-dump: an imgcr dump --live (its
#                 stats: live passes); runc restore -d: the count goes on
#                 without gap or repeat
#   runc-tty      a container with a terminal (--console-socket, consock):
#                 checkpoint, restore with a new pty pair whose master
#                 imgcr-criu sends to runc (orphan-pts-master); the shell
#                 in it answers through the new master with its old
#                 variable, its window size and VINTR kept
#   runc-tcp      runc checkpoint --tcp-established of a TCP echo server
#                 (pid 1) and its client (its child) on the container's lo
#                 (tcpstream pair); after runc restore the stream goes on
#                 and ends with the same byte counts at both ends and the
#                 same client port (one connection), no byte lost (the
#                 sockets of the container's network namespace are read
#                 in it and made again in the restored one)
#   runc-stdio-file  stdio that are host files (runc run -d </dev/null
#                 >log 2>>log2): after runc restore the same host files,
#                 reopened with their flags and offset (subtest_stdio)
#   (runc-nocgns, runc-tty, runc-predump, runc-tcp and runc-stdio-file test imgcr-criu's options, not
#   the kernel: each runs on one kernel, to keep the suite's length: tcp and
#   stdio-file on 6.12 deb12, nocgns and predump on 6.12 deb13, tty on 7.2)
#   runc-refuse   runc checkpoint --manage-cgroups-mode strict: refused by
#                 imgcr-criu (runc's "criu failed", the reason in the log
#                 file runc names); the container keeps running
# Skipped (PASS "not run: ...") only if the guest has no runc.
# timeout: 600
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
. /imgcr/guest/tcplib.sh
require_modules

RUNC=/usr/sbin/runc
if [ "${1:-}" != inner ]; then
	[ -x $RUNC ] || { pass "not run: no runc in the guest (no runc package in the host's apt cache)"; exit 0; }
	ct_cgroup2 || fail "cgroup2: $(ct_cgroup2 2>&1)"
	ct_pivotable sh "$0" inner "$(pwd)"
	exit $?
fi
cd "$2" || fail "no test directory $2"
ct_pivot_check || fail "$(ct_pivot_check 2>&1)"
CRIU=/imgcr/bin/imgcr-criu
R="$RUNC --root /run/runc-t"
B=/ctb

# the bundle: busybox and the counter, config.json from runc spec
# bundle MAX [nocgns]: runc spec's default has a cgroup namespace (cgroup
# v2); nocgns takes it out of the spec
bundle() {
	rm -rf $B /ctshared && mkdir -p $B/rootfs/bin $B/rootfs/shared /ctshared || return 1
	cp /bin/busybox $B/rootfs/bin/ && ln -s busybox $B/rootfs/bin/sh &&
		cp /imgcr/bin/counter /imgcr/bin/tcpstream $B/rootfs/ || return 1
	(cd $B && $RUNC spec) || return 1
	awk 'BEGIN { RS = "\001" } {
		sub(/"terminal": true/, "\"terminal\": false")
		sub(/"args": \[[^]]*\]/, "\"args\": [ " (args != "" ? args : "\"/counter\", \"" max "\"") " ]")
		if (nocgns) sub(/,[ \t\n]*\{[ \t\n]*"type": "cgroup"[ \t\n]*\}/, "")
		sub(/"mounts": \[/, "\"mounts\": [ { \"destination\": \"/shared\", \"type\": \"bind\", \"source\": \"/ctshared\", \"options\": [ \"rbind\", \"rw\" ] },")
		printf "%s", $0 }' max="$1" args="${CTARGS:-}" nocgns="$([ "${2:-}" = nocgns ] && echo 1)" $B/config.json > $B/c.json && mv $B/c.json $B/config.json &&
		grep -q '"terminal": false' $B/config.json && grep -q "\"/$([ -n "${CTARGS:-}" ] && echo tcpstream || echo counter)\"" $B/config.json || return 1
	# the namespace entry (the cgroup mount has "type": "cgroup" too)
	if [ "${2:-}" = nocgns ]; then
		! tr -d ' \t\n' < $B/config.json | grep -q '{"type":"cgroup"}'
	else
		tr -d ' \t\n' < $B/config.json | grep -q '{"type":"cgroup"}'
	fi
}

# cgns_ok PID nocgns|cgns: the container's cgroup namespace, seen from
# outside: its own (cgns) with its cgroup at its root ("0::/" inside), or
# the host's (nocgns)
cgns_ok() {
	if [ "$2" = nocgns ]; then
		[ "$(readlink /proc/$1/ns/cgroup)" = "$(readlink /proc/self/ns/cgroup)" ] ||
			fail "pid $1: a cgroup namespace of its own: $(readlink /proc/$1/ns/cgroup)"
		return 0
	fi
	[ "$(readlink /proc/$1/ns/cgroup)" != "$(readlink /proc/self/ns/cgroup)" ] ||
		fail "pid $1: in the host's cgroup namespace"
	inside=$(timeout -s KILL 10 /usr/sbin/nsenter -t $1 -C cat /proc/$1/cgroup)
	[ "$inside" = "0::/" ] || fail "pid $1: /proc/$1/cgroup inside its cgroup namespace: $inside"
	outside=$(cat /proc/$1/cgroup)
	[ "$outside" != "0::/" ] || fail "pid $1: at the host's cgroup root"
}

# ct_run ID OUT: runc run -d with stdio pipes: stdin from a sleep, stdout
# and stderr to cat > OUT; $ct the container's pid once it prints
ct_run() {
	(sh -c 'echo $$ > "$0"; exec sleep 3600' "$2.sleep" 2> /dev/null | $R run -d -b $B "$1" 2>&1 | cat > "$2") &
	track $!
	wait_line "$2.sleep" . 10 && track "$(cat "$2.sleep")"
	wait_line "$2" '^5 ' 60 || fail "the container did not count to 5: $(head -c 400 "$2"; $R state "$1" 2>&1)"
	ct=$($R state "$1" | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] || fail "runc state $1: no pid: $($R state "$1" 2>&1)"
	track $ct
}

status_of() { $R state "$1" 2>&1 | sed -n 's/^ *"status": "\(.*\)",*/\1/p'; }

# numbers_ok FILE N: 1..N once each and in order, all by pid 1, then the self-check
numbers_ok() {
	n=0
	while read -r num p rest; do
		[ "$num" = counter ] && { [ "$p $rest" = "selfcheck ok" ] || fail "self-check: $p $rest"; continue; }
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "line $n is '$num $p' (gap or repeat)"
		[ "$p" = 1 ] || fail "line $n printed by pid $p, expected 1 (the container's init)"
	done < "$1"
	[ "$n" = "$2" ] || fail "got $n numbers, expected $2"
	grep -q '^counter selfcheck ok$' "$1" || fail "no self-check line"
}

# subtest_runc NAME cgns|nocgns
subtest_runc() {
	T=$1
	MAX=120
	bundle $MAX $2 || fail "cannot make the bundle"
	ct_run c1 $1.out1
	old=$ct
	[ "$(status_of c1)" = running ] || fail "runc state: $(status_of c1)"
	cgns_ok $ct $2
	grep -q " /shared " /proc/$ct/mountinfo || fail "no /shared in the container"
	rm -rf ck && mkdir ck
	timeout -s KILL 200 $R --criu $CRIU checkpoint --image-path "$(pwd)/ck" c1 > ck.out 2>&1 ||
		fail "runc checkpoint: $(tr '\n' '|' < ck.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck/dump.log 2>/dev/null | tr '\n' '|')"
	wait_gone $old 20 || fail "the container outlived its checkpoint"
	# runc checkpoint (without --leave-running) destroys the container
	$R state c1 > st.out 2>&1 && fail "runc state after the checkpoint: $(tr '\n' ' ' < st.out)"
	[ -f ck/tree ] || fail "no imgcr images in ck"
	# the old stdout pipe's reader ends once the container is gone
	last=$(tail -n 1 $1.out1 | cut -d' ' -f1)
	info "checkpointed at $last"
	(sh -c 'echo $$ > "$0"; exec sleep 3600' $1.out2.sleep 2> /dev/null |
		$R --criu $CRIU restore -d --image-path "$(pwd)/ck" -b $B c1 2>&1 | cat > $1.out2) &
	track $!
	wait_line $1.out2.sleep . 10 && track "$(cat $1.out2.sleep)"
	wait_line $1.out2 "^$((last + 3)) " 60 ||
		fail "no count after the restore: $(head -c 300 $1.out2) log: $(grep -m 3 -i 'error\|refus\|not supp' ck/restore.log 2>/dev/null | tr '\n' '|')"
	ct=$($R state c1 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	track $ct
	[ "$(status_of c1)" = running ] || fail "runc state after the restore: $(status_of c1)"
	[ -n "$ct" ] && [ -d /proc/$ct ] || fail "runc state: no live pid ($ct)"
	$R ps c1 > ps.out 2>&1 || fail "runc ps: $(cat ps.out)"
	grep -q "^[a-z0-9]* *$ct " ps.out || fail "runc ps does not list $ct: $(tr '\n' '|' < ps.out)"
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$ct/status)
	[ "${nspid##*[[:space:]]}" = 1 ] || fail "NSpid of $ct: $nspid"
	case "$(readlink /proc/$ct/fd/1)" in pipe:*) ;; *) fail "stdout: $(readlink /proc/$ct/fd/1)" ;; esac
	grep -q " /shared " /proc/$ct/mountinfo || fail "no /shared in the restored container"
	[ "$(readlink /proc/$ct/ns/pid)" != "$(readlink /proc/1/ns/pid)" ] || fail "the restored container is in the host's PID namespace"
	cgns_ok $ct $2
	wait_line $1.out2 '^counter selfcheck' 120 || fail "the counter never finished: $(tail -n 1 $1.out2)"
	cat $1.out1 $1.out2 > all
	numbers_ok all $MAX
	wait_gone $ct 20 || fail "the counter did not exit"
	i=0
	while [ "$(status_of c1)" != stopped ] && [ $i -lt 50 ]; do usleep 100000; i=$((i + 1)); done
	[ "$(status_of c1)" = stopped ] || fail "runc state after the exit: $(status_of c1)"
	$R delete c1 > del.out 2>&1 || fail "runc delete: $(cat del.out)"
	pass "counted 1..$MAX, checkpointed at $last, restored as pid $ct (1 inside), $2"
}

# the restored container's outside: runc state/ps, pid 1 inside, a PID
# namespace of its own, its stdout a pipe; $ct its pid
restored_ok() {
	ct=$($R state "$1" | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] && [ -d /proc/$ct ] || fail "runc state $1: no live pid ($ct)"
	track $ct
	[ "$(status_of "$1")" = running ] || fail "runc state $1 after the restore: $(status_of "$1")"
	$R ps "$1" > ps.out 2>&1 || fail "runc ps $1: $(cat ps.out)"
	grep -q "^[a-z0-9]* *$ct " ps.out || fail "runc ps $1 does not list $ct: $(tr '\n' '|' < ps.out)"
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$ct/status)
	[ "${nspid##*[[:space:]]}" = 1 ] || fail "NSpid of $ct: $nspid"
	[ "$(readlink /proc/$ct/ns/pid)" != "$(readlink /proc/1/ns/pid)" ] || fail "$1 is in the host's PID namespace"
	case "$(readlink /proc/$ct/fd/1)" in pipe:*) ;; *) fail "stdout of $1: $(readlink /proc/$ct/fd/1)" ;; esac
	cgns_ok $ct cgns
}

# runc checkpoint --leave-running c3, then runc restore of its images as
# c4 while c3 runs: both count to the end, each in its own PID namespace
subtest_leave() {
	T=runc-leave
	MAX=120
	bundle $MAX || fail "cannot make the bundle"
	ct_run c3 out3
	first=$ct
	rm -rf ck3 && mkdir ck3
	timeout -s KILL 200 $R --criu $CRIU checkpoint --leave-running --image-path "$(pwd)/ck3" c3 > ck3.out 2>&1 ||
		fail "runc checkpoint --leave-running: $(tr '\n' '|' < ck3.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck3/dump.log 2>/dev/null | tr '\n' '|')"
	at=$(tail -n 1 out3 | cut -d' ' -f1)
	[ -d /proc/$first ] || fail "c3 did not survive its checkpoint --leave-running"
	[ "$(status_of c3)" = running ] || fail "runc state c3 after --leave-running: $(status_of c3)"
	wait_line out3 "^$((at + 3)) " 30 || fail "c3 stopped counting after its checkpoint"
	(sh -c 'echo $$ > "$0"; exec sleep 3600' out4.sleep 2> /dev/null |
		$R --criu $CRIU restore -d --image-path "$(pwd)/ck3" -b $B c4 2>&1 | cat > out4) &
	track $!
	wait_line out4.sleep . 10 && track "$(cat out4.sleep)"
	wait_line out4 '^[0-9]* 1$' 60 ||
		fail "no count from c4: $(head -c 300 out4) log: $(grep -m 3 -i 'error\|refus\|not supp' ck3/restore.log 2>/dev/null | tr '\n' '|')"
	i=0
	while [ "$(status_of c4)" != running ] && [ $i -lt 50 ]; do usleep 100000; i=$((i + 1)); done
	[ "$(status_of c4)" = running ] || fail "runc state c4: $($R state c4 2>&1 | tr '\n' ' ') out4: $(head -c 300 out4 | tr '\n' '|') restore.log: $(grep -i 'error\|fail\|refus' ck3/restore.log 2>/dev/null | tail -n 4 | tr '\n' '|')"
	restored_ok c4
	second=$ct
	[ "$second" != "$first" ] || fail "c4 has c3's pid"
	[ -d /proc/$first ] && [ "$(status_of c3)" = running ] || fail "c3 is gone after c4's restore: $(status_of c3)"
	[ "$(readlink /proc/$first/ns/pid)" != "$(readlink /proc/$second/ns/pid)" ] || fail "c3 and c4 share a PID namespace"
	[ "$(readlink /proc/$first/ns/cgroup)" != "$(readlink /proc/$second/ns/cgroup)" ] || fail "c3 and c4 share a cgroup namespace"
	[ "$(cat /proc/$first/cgroup)" != "$(cat /proc/$second/cgroup)" ] || fail "c3 and c4 share a cgroup: $(cat /proc/$first/cgroup)"
	k=$(head -n 1 out4 | cut -d' ' -f1)
	[ "$k" -gt 1 ] && [ "$((k - 1))" -le "$at" ] || fail "c4 starts at $k, c3 was checkpointed at $at or before"
	wait_line out3 '^counter selfcheck' 120 || fail "c3 never finished: $(tail -n 1 out3)"
	wait_line out4 '^counter selfcheck' 120 || fail "c4 never finished: $(tail -n 1 out4)"
	numbers_ok out3 $MAX
	awk -v k="$k" '$1 ~ /^[0-9]+$/ && $1 < k' out3 > all4 && cat out4 >> all4
	numbers_ok all4 $MAX
	for c in c3 c4; do
		i=0
		while [ "$(status_of $c)" != stopped ] && [ $i -lt 50 ]; do usleep 100000; i=$((i + 1)); done
		$R delete $c > del.out 2>&1 || fail "runc delete $c: $(cat del.out)"
	done
	pass "c3 checkpointed at $at and counted on; c4 restored from it (from $k) as pid $second (1 inside)"
}

# runc checkpoint --pre-dump, then a checkpoint with --parent-path: the
# pre-dump leaves the container running and writes only imgcr-criu's mark
# (no images); a --parent-path naming a directory without the mark is
# refused (the container counts on); the final checkpoint with the
# pre-dump as parent is an imgcr dump --live (its stats in dump.log:
# live passes); runc restore -d: the count goes on without gap or repeat
subtest_predump() {
	T=runc-predump
	MAX=200
	bundle $MAX || fail "cannot make the bundle"
	ct_run c5 out6
	old=$ct
	rm -rf p0 p1 p2 p3 && mkdir p0 p1 p2 p3
	timeout -s KILL 100 $R --criu $CRIU checkpoint --pre-dump --image-path "$(pwd)/p1" c5 > p1.out 2>&1 ||
		fail "runc checkpoint --pre-dump: $(tr '\n' '|' < p1.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' p1/dump.log 2>/dev/null | tr '\n' '|')"
	[ "$(cat p1/imgcr-predump 2>&1)" = "imgcr-criu pre-dump pid $old" ] || fail "p1/imgcr-predump: $(cat p1/imgcr-predump 2>&1)"
	[ -e p1/tree ] && fail "the pre-dump wrote images"
	[ -d /proc/$old ] && [ "$(status_of c5)" = running ] || fail "c5 after the pre-dump: $(status_of c5)"
	now=$(tail -n 1 out6 | cut -d' ' -f1)
	wait_line out6 "^$((now + 3)) " 30 || fail "the container stopped counting after the pre-dump"
	# a parent that is no pre-dump of imgcr-criu: refused, the container untouched
	timeout -s KILL 100 $R --criu $CRIU checkpoint --parent-path ../p0 --image-path "$(pwd)/p3" c5 > p3.out 2>&1 &&
		fail "runc checkpoint --parent-path ../p0 (no pre-dump) succeeded"
	grep -q 'parent_img ../p0: not a pre-dump' p3/dump.log || fail "p3/dump.log: $(tr '\n' '|' < p3/dump.log 2>&1 | tail -c 300)"
	now=$(tail -n 1 out6 | cut -d' ' -f1)
	wait_line out6 "^$((now + 3)) " 30 || fail "the container stopped counting after the refusal"
	timeout -s KILL 200 $R --criu $CRIU checkpoint --parent-path ../p1 --image-path "$(pwd)/p2" c5 > p2.out 2>&1 ||
		fail "runc checkpoint --parent-path ../p1: $(tr '\n' '|' < p2.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' p2/dump.log 2>/dev/null | tr '\n' '|')"
	wait_gone $old 20 || fail "the container outlived its checkpoint"
	[ -f p2/tree ] || fail "no imgcr images in p2"
	live=$(grep -o 'live_passes=[0-9]* live_copied_pages=[0-9]*' p2/dump.log | head -n 1)
	case "$live" in live_passes=[1-9]*) ;; *) fail "the final dump was not an imgcr dump --live: '$live' $(grep -m 2 'stats:' p2/dump.log | tr '\n' '|')" ;; esac
	last=$(tail -n 1 out6 | cut -d' ' -f1)
	(sh -c 'echo $$ > "$0"; exec sleep 3600' out6b.sleep 2> /dev/null |
		$R --criu $CRIU restore -d --image-path "$(pwd)/p2" -b $B c5 2>&1 | cat > out6b) &
	track $!
	wait_line out6b.sleep . 10 && track "$(cat out6b.sleep)"
	wait_line out6b "^$((last + 3)) " 60 ||
		fail "no count after the restore: $(head -c 300 out6b) log: $(grep -m 3 -i 'error\|refus\|not supp' p2/restore.log 2>/dev/null | tr '\n' '|')"
	restored_ok c5
	wait_line out6b '^counter selfcheck' 120 || fail "the counter never finished: $(tail -n 1 out6b)"
	cat out6 out6b > all6
	numbers_ok all6 $MAX
	wait_gone $ct 20 || fail "the counter did not exit"
	$R delete -f c5 > /dev/null 2>&1
	pass "pre-dump marked p1 (the container ran on), --parent-path ../p0 refused, the dump with ../p1 went live ($live), restored at $last, counted to $MAX"
}

# runc checkpoint --tcp-established of a container whose pid 1 is a TCP
# echo server on lo and its child the client (tcpstream pair): after
# runc restore the same connection goes on without a lost byte
subtest_tcp() {
	T=runc-tcp
	CTARGS='"/tcpstream", "pair", "127.0.0.1", "7711", "/shared/tcp.out"'
	bundle 0 || fail "cannot make the bundle"
	CTARGS=
	(sh -c 'echo $$ > "$0"; exec sleep 3600' out7.sleep 2> /dev/null | $R run -d -b $B c6 2>&1 | cat > out7) &
	track $!
	wait_line out7.sleep . 10 && track "$(cat out7.sleep)"
	wait_line /ctshared/tcp.out '^c ' 60 || fail "no stream: $(head -c 300 out7; head -c 300 /ctshared/tcp.out)"
	ct=$($R state c6 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] || fail "runc state c6: no pid"
	track $ct
	wait_progress /ctshared/tcp.out 100000 30 || fail "the stream does not flow: $(tail -n 2 /ctshared/tcp.out | tr '\n' '|')"
	cli0=$(cat /proc/$ct/task/$ct/children)
	cli0=${cli0%% *}
	nspid0=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$cli0/status 2>/dev/null)
	nspid0=${nspid0##*[[:space:]]}
	[ -n "$nspid0" ] || fail "no client child of $ct before the checkpoint"
	rm -rf ck6 && mkdir ck6
	timeout -s KILL 200 $R --criu $CRIU checkpoint --tcp-established --image-path "$(pwd)/ck6" c6 > ck6.out 2>&1 ||
		fail "runc checkpoint --tcp-established: $(tr '\n' '|' < ck6.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck6/dump.log 2>/dev/null | tr '\n' '|')"
	ntcp=$(ls ck6/sk-*.tcp 2>/dev/null | wc -l)
	[ "$ntcp" = 2 ] || fail "$ntcp established connections in the images, expected 2"
	wait_gone $ct 20 || fail "the container outlived its checkpoint"
	before=$(last_recv /ctshared/tcp.out)
	# pid 1 holds the empty SysV undo list runc init's Go threads made
	# (CLONE_SYSVSEM; no entry: imgcr refuses SEM_UNDO state), its
	# child none; restored, neither has one, which kcmp calls shared
	cp "$IMGCR_STATE_EXPECTED" expected6
	echo 'task * shared.sysvsem own -> with tree:*  # an empty SysV undo list (runc init'"'"'s CLONE_SYSVSEM threads) is not made again' >> expected6
	(sh -c 'echo $$ > "$0"; exec sleep 3600' out8.sleep 2> /dev/null |
		IMGCR_STATE_EXPECTED=$PWD/expected6 $R --criu $CRIU restore -d --tcp-established --image-path "$(pwd)/ck6" -b $B c6 2>&1 | cat > out8) &
	track $!
	wait_line out8.sleep . 10 && track "$(cat out8.sleep)"
	wait_progress /ctshared/tcp.out "$before" 60 ||
		fail "the stream did not go on after the restore: $(tail -n 2 /ctshared/tcp.out | tr '\n' '|') $(head -c 200 out8) log: $(grep -m 3 -i 'error\|refus\|not supp' ck6/restore.log 2>/dev/null | tr '\n' '|')"
	i=0
	while [ "$(status_of c6)" != running ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
	restored_ok c6
	cli=$(cat /proc/$ct/task/$ct/children)
	cli=${cli%% *}
	[ -n "$cli" ] || fail "the restored server has no client child"
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$cli/status)
	[ "${nspid##*[[:space:]]}" = "$nspid0" ] || fail "NSpid of the client $cli: $nspid, was $nspid0 inside"
	stream_end /ctshared/tcp.out $cli
	wait_gone $ct 20 || fail "the server did not exit"
	$R delete -f c6 > /dev/null 2>&1
	pass "checkpointed after $before bytes echoed, restored as pid $ct, the connection ended with $STREAM_BYTES bytes both ways"
}

# a container with a terminal ("terminal": true, runc's --console-socket,
# test/progs/consock as the receiver): its init, a shell reading commands
# from the pty (pid 1), sets a variable, the window size and VINTR
# (busybox stty); runc checkpoint (imgcr-criu: orphan_pts_master, the pty
# whose master is consock's), runc restore -d with the console socket: a
# new pty pair, its master sent to consock (NOTIFY orphan-pts-master), the
# slave the shell's stdio and controlling terminal; consock writes a
# command to the new master and reads the shell's answer: the variable
# kept, pid 1, the size and VINTR seen from inside and from the master
subtest_tty() {
	T=runc-tty
	bundle 0 || fail "cannot make the bundle"
	printf '%s\n' 'echo loop-start' 'while read -r l; do eval "$l"; done' > $B/rootfs/loop.sh
	sed -i 's/"terminal": false/"terminal": true/; s|"/counter", "0"|"/bin/sh", "/loop.sh"|' $B/config.json
	grep -q '"terminal": true' $B/config.json && grep -q '"/loop.sh"' $B/config.json || fail "config.json: $(grep -A3 '"args"' $B/config.json | tr '\n' ' ')"
	rm -rf tty ck7 && mkdir tty ck7
	/imgcr/bin/consock "$(pwd)/tty/sock" "$(pwd)/tty" > tty/consock.log 2>&1 &
	cs=$!
	track $cs
	i=0
	while [ ! -e tty/ready ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
	[ -e tty/ready ] || fail "consock did not start: $(cat tty/consock.log)"
	$R run -d --console-socket "$(pwd)/tty/sock" -b $B c7 > run7.out 2>&1 || fail "runc run: $(cat run7.out)"
	ct=$($R state c7 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] || fail "runc state c7: no pid"
	track $ct
	old=$ct
	wait_line tty/out1 'loop-start' 30 || fail "no shell on the terminal: $(head -c 300 tty/out1 2>&1)"
	case "$(readlink /proc/$ct/fd/0)" in /dev/pts/*) ;; *) fail "stdin of the container: $(readlink /proc/$ct/fd/0)" ;; esac
	printf '%s\n' 'X=kept-$$; busybox stty rows 33 cols 77 intr ^K; echo "set-$((20+3))"' > tty/in
	wait_line tty/out1 'set-23' 30 || fail "the shell did not answer: $(tr '\r\n' '||' < tty/out1 | tail -c 300)"
	timeout -s KILL 200 $R --criu $CRIU checkpoint --image-path "$(pwd)/ck7" c7 > ck7.out 2>&1 ||
		fail "runc checkpoint: $(tr '\n' '|' < ck7.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck7/dump.log 2>/dev/null | tr '\n' '|')"
	wait_gone $old 20 || fail "the container outlived its checkpoint"
	grep -q '^tty .*orphan=1' ck7/tree || fail "no orphan tty record: $(grep '^tty' ck7/tree)"
	timeout -s KILL 200 $R --criu $CRIU restore -d --console-socket "$(pwd)/tty/sock" --image-path "$(pwd)/ck7" -b $B c7 > rs7.out 2>&1 ||
		fail "runc restore: $(tr '\n' '|' < rs7.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck7/restore.log 2>/dev/null | tr '\n' '|')"
	i=0
	while [ ! -e tty/got2 ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
	[ -e tty/got2 ] || fail "consock got no new master: $(cat tty/consock.log)"
	ct=$($R state c7 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] && [ -d /proc/$ct ] || fail "runc state c7: no live pid ($ct)"
	track $ct
	[ "$(status_of c7)" = running ] || fail "runc state after the restore: $(status_of c7)"
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$ct/status)
	[ "${nspid##*[[:space:]]}" = 1 ] || fail "NSpid of $ct: $nspid"
	# outside: the master consock got is the new pair's, its slave's termios and size
	got=$(cat tty/got2)
	case "$got" in *" rows=33 cols=77 "*" intr=11 echo=1") ;; *) fail "the new master: $got (expected rows=33 cols=77 intr=11 echo=1)" ;; esac
	pts=${got#pts=}
	pts=${pts%% *}
	for n in 0 1 2; do
		[ "$(readlink /proc/$ct/fd/$n)" = /dev/pts/$pts ] || fail "fd $n of the restored shell: $(readlink /proc/$ct/fd/$n), not /dev/pts/$pts"
	done
	# the shell's controlling terminal is that slave (tty_nr: major 136)
	nr=$(sed 's/.*) //' /proc/$ct/stat | cut -d' ' -f5)
	[ "$nr" = $((136 * 256 + pts)) ] || fail "tty_nr of the shell: $nr, expected $((136 * 256 + pts))"
	grep -q ' /dev/console ' /proc/$ct/mountinfo || fail "no /dev/console in the restored container"
	# inside: the same shell (its variable), pid 1, its terminal's size and VINTR
	printf '%s\n' 'echo "X=$X pid=$$ size=$(busybox stty size) $(busybox stty -a | busybox grep -o "intr = [^;]*")"' > tty/in
	wait_line tty/out2 'X=kept-1 pid=1 size=33 77 intr = \^K' 30 ||
		fail "the restored shell's answer: $(tr '\r\n' '||' < tty/out2 2>&1 | tail -c 300)"
	printf '%s\n' 'exit 0' > tty/in
	wait_gone $ct 20 || fail "the shell did not exit"
	$R delete -f c7 > /dev/null 2>&1
	kill $cs 2>/dev/null
	pass "restored with a new pty (/dev/pts/$pts, master sent to the console socket): $(grep -o 'X=kept-1.*\^K' tty/out2 | head -n 1)"
}

# runc-stdio-file: a container whose stdio are host files, given to runc
# run -d: stdin /dev/null (which runc itself replaces with the container's
# own /dev/null), stdout a log truncated by ">" (no O_APPEND: its offset
# matters), stderr a log appended by ">>" (O_APPEND); both logs on mounts
# outside the container's mount namespace.  runc checkpoint
# (imgcr-criu: --external file[MNT:INO] for each, host=1 in the images),
# runc restore -d with other stdio (runc sends no inherit_fd for files):
# the same host files reopened with their flags and offset.  The count
# goes on in the log without gap, repeat or hole; outside: fds 1-2 are the
# host's files (dev:ino, a mount not the container's), fd 0 /dev/null on
# the container's /dev, fdinfo flags (O_APPEND only
# on fd 2) and pos (fd 1 at the log's end); inside: /proc/1/fd/0 is
# /dev/null
subtest_stdio() {
	T=runc-stdio-file
	MAX=120
	bundle $MAX || fail "cannot make the bundle"
	rm -rf ck8 sf.out sf.err && mkdir ck8 && echo "stderr log" > sf.err
	$R run -d -b $B c8 < /dev/null > sf.out 2>> sf.err || fail "runc run: $(cat sf.err)"
	ct=$($R state c8 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] || fail "runc state c8: no pid"
	track $ct
	old=$ct
	wait_line sf.out '^5 ' 60 || fail "the container did not count to 5: $(head -c 300 sf.out; cat sf.err)"
	# runc itself puts the container's own /dev/null on stdio that were
	# the host's (reOpenDevNull, O_RDWR): a file of the container
	[ "$(stat -L -c %t:%T /proc/$ct/fd/0)" = 1:3 ] || fail "stdin of the container: $(readlink /proc/$ct/fd/0) $(stat -L -c %t:%T /proc/$ct/fd/0)"
	m0=$(sed -n 's/^mnt_id:[[:space:]]*//p' /proc/$ct/fdinfo/0)
	grep -q "^$m0 .* /dev " /proc/$ct/mountinfo || fail "stdin of the container not on its /dev (mount $m0)"
	fl0=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$ct/fdinfo/0)
	in0=$(timeout -s KILL 10 /usr/sbin/nsenter -t $ct -m /bin/busybox readlink /proc/1/fd/0)
	[ "$in0" = /dev/null ] || fail "inside, /proc/1/fd/0 before the checkpoint: '$in0'"
	timeout -s KILL 200 $R --criu $CRIU checkpoint --image-path "$(pwd)/ck8" c8 > ck8.out 2>&1 ||
		fail "runc checkpoint: $(tr '\n' '|' < ck8.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck8/dump.log 2>/dev/null | tr '\n' '|')"
	wait_gone $old 20 || fail "the container outlived its checkpoint"
	nhost=$(grep -c '^file .* host=1' ck8/tree)
	[ "$nhost" = 2 ] || fail "$nhost host files in the images, expected 2 (stdout, stderr): $(grep '^file' ck8/tree | tr '\n' '|')"
	last=$(tail -n 1 sf.out | cut -d' ' -f1)
	size0=$(stat -c %s sf.out)
	info "checkpointed at $last ($size0 bytes)"
	# fd 0, the container's /dev/null (runc's), is a node of its /dev
	# tmpfs, which the restore makes again with its content: the same
	# device (checked below), a new inode
	cp "$IMGCR_STATE_EXPECTED" expected8
	echo 'fd */0 fdinfo.ino * -> *  # the container'"'"'s /dev/null: a node of its /dev tmpfs, made again by the restore (a new inode of the same device, checked by runc-stdio-file)' >> expected8
	IMGCR_STATE_EXPECTED=$PWD/expected8 timeout -s KILL 200 $R --criu $CRIU restore -d --image-path "$(pwd)/ck8" -b $B c8 < /dev/zero > rs8.out 2>&1 ||
		fail "runc restore: $(tr '\n' '|' < rs8.out | tail -c 300) log: $(grep -m 3 -i 'error\|refus\|not supp' ck8/restore.log 2>/dev/null | tr '\n' '|')"
	ct=$($R state c8 | sed -n 's/^ *"pid": \([0-9]*\),*/\1/p')
	[ -n "$ct" ] && [ -d /proc/$ct ] || fail "runc state c8: no live pid ($ct)"
	track $ct
	wait_line sf.out "^$((last + 3)) " 60 || fail "no count after the restore: $(tail -n 2 sf.out | tr '\n' '|') $(head -c 200 rs8.out)"
	[ "$(status_of c8)" = running ] || fail "runc state after the restore: $(status_of c8)"
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$ct/status)
	[ "${nspid##*[[:space:]]}" = 1 ] || fail "NSpid of $ct: $nspid"
	# outside: the host's files, their flags, fd 1's offset at the log's end
	[ "$(stat -L -c %t:%T /proc/$ct/fd/0)" = 1:3 ] || fail "restored stdin: $(readlink /proc/$ct/fd/0) $(stat -L -c %t:%T /proc/$ct/fd/0)"
	[ "$(stat -L -c %d:%i /proc/$ct/fd/1)" = "$(stat -c %d:%i sf.out)" ] || fail "restored stdout: $(readlink /proc/$ct/fd/1), not sf.out"
	[ "$(stat -L -c %d:%i /proc/$ct/fd/2)" = "$(stat -c %d:%i sf.err)" ] || fail "restored stderr: $(readlink /proc/$ct/fd/2), not sf.err"
	m0=$(sed -n 's/^mnt_id:[[:space:]]*//p' /proc/$ct/fdinfo/0)
	grep -q "^$m0 .* /dev " /proc/$ct/mountinfo || fail "restored stdin not on the container's /dev (mount $m0)"
	[ "$(sed -n 's/^flags:[[:space:]]*//p' /proc/$ct/fdinfo/0)" = "$fl0" ] || fail "stdin flags $(sed -n 's/^flags:[[:space:]]*//p' /proc/$ct/fdinfo/0), were $fl0"
	m1=$(sed -n 's/^mnt_id:[[:space:]]*//p' /proc/$ct/fdinfo/1)
	grep -q "^$m1 " /proc/$ct/mountinfo && fail "restored stdout on mount $m1, one of the container's: not the host's log"
	f1=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$ct/fdinfo/1)
	f2=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$ct/fdinfo/2)
	[ $((0$f1 & 02000)) = 0 ] && [ $((0$f1 & 3)) = 1 ] || fail "fd 1 flags $f1: expected O_WRONLY without O_APPEND"
	[ $((0$f2 & 02000)) != 0 ] && [ $((0$f2 & 3)) = 1 ] || fail "fd 2 flags $f2: expected O_WRONLY|O_APPEND"
	pos=$(sed -n 's/^pos:[[:space:]]*//p' /proc/$ct/fdinfo/1)
	size=$(stat -c %s sf.out)
	[ "$pos" -gt "$size0" ] && [ "$pos" -le "$size" ] || fail "fd 1 at $pos: expected past $size0 and at most the log's size $size"
	[ "$(cat sf.err)" = "stderr log" ] || fail "sf.err changed: $(head -c 200 sf.err)"
	# inside: stdin /dev/null, as before
	in1=$(timeout -s KILL 10 /usr/sbin/nsenter -t $ct -m /bin/busybox readlink /proc/1/fd/0)
	[ "$in1" = /dev/null ] && [ "$in1" = "$in0" ] || fail "inside, /proc/1/fd/0: '$in1' (before: '$in0')"
	wait_line sf.out '^counter selfcheck' 120 || fail "the counter never finished: $(tail -n 1 sf.out)"
	# no hole (NUL bytes) nor overwritten lines: 1..MAX once each
	[ "$(tr -d '\0' < sf.out | wc -c)" = "$(wc -c < sf.out)" ] || fail "NUL bytes in sf.out (a hole: the offset was wrong)"
	numbers_ok sf.out $MAX
	wait_gone $ct 20 || fail "the counter did not exit"
	$R delete -f c8 > /dev/null 2>&1
	pass "stdin /dev/null, stdout > log, stderr >> log of the host: restored at $last (offset $size0), fd 1 at $pos, counted to $MAX"
}

subtest_refuse() {
	T=runc-refuse
	bundle 3000 || fail "cannot make the bundle"
	ct_run c2 out5
	rm -rf ck2 && mkdir ck2
	timeout -s KILL 100 $R --criu $CRIU checkpoint --manage-cgroups-mode strict --image-path "$(pwd)/ck2" c2 > ck2.out 2>&1 &&
		fail "runc checkpoint --manage-cgroups-mode strict succeeded"
	grep -q 'criu failed' ck2.out || fail "runc said: $(tr '\n' '|' < ck2.out)"
	grep -q 'manage_cgroups_mode' ck2/dump.log || fail "dump.log: $(cat ck2/dump.log 2>&1 | tr '\n' '|')"
	now=$(tail -n 1 out5 | cut -d' ' -f1)
	wait_line out5 "^$((now + 3)) " 30 || fail "the container stopped counting after the refusal"
	[ "$(status_of c2)" = running ] || fail "runc state: $(status_of c2)"
	$R kill c2 KILL > /dev/null 2>&1
	wait_gone $ct 20
	$R delete -f c2 > /dev/null 2>&1
	pass "$(grep -m 1 'manage_cgroups_mode' ck2/dump.log | sed 's/.*imgcr[^:]*: //')"
}

(subtest_runc runc cgns)
$R delete -f c1 > /dev/null 2>&1
# the variants that exercise imgcr-criu's options rather than the kernel
# run on one kernel each, spread over three, to keep the suite's length
case "$(uname -r)" in
6.12.*+deb13-amd64)
	(subtest_runc runc-nocgns nocgns)
	$R delete -f c1 > /dev/null 2>&1
	;;
esac
(subtest_leave)
$R delete -f c3 > /dev/null 2>&1
$R delete -f c4 > /dev/null 2>&1
case "$(uname -r)" in
7.2.*)
	(subtest_tty)
	$R delete -f c7 > /dev/null 2>&1
	;;
6.12.*+deb13-amd64)
	(subtest_predump)
	;;
6.12.*+deb12-amd64)
	(subtest_tcp)
	$R delete -f c6 > /dev/null 2>&1
	(subtest_stdio)
	$R delete -f c8 > /dev/null 2>&1
	;;
esac
(subtest_refuse)
# a container a failed restore left behind (runc no longer knows it)
for c in c1 c2 c3 c4 c5 c6 c7 c8; do
	[ -f /sys/fs/cgroup/$c/cgroup.kill ] && echo 1 > /sys/fs/cgroup/$c/cgroup.kill
done
# the stdin writers (sleep 3600, which would keep the runner's output open)
for f in *.sleep; do
	[ -s $f ] && kill -9 "$(cat $f)" 2>/dev/null
done
# nothing of these tests may be left holding the runner's output (it
# would wait for it): listed, failed, killed
sleep 1
ppid_of() { sed -n 's/^PPid:[[:space:]]*//p' /proc/$1/status 2>/dev/null; }
# related PID: this shell, one of its ancestors (the runner) or descendants
related() {
	case " $ancestors " in *" $1 "*) return 0 ;; esac
	_q=$1
	while [ -n "$_q" ] && [ "$_q" -gt 1 ]; do
		[ "$_q" = $$ ] && return 0
		_q=$(ppid_of $_q)
	done
	return 1
}
ancestors= q=$$
while [ -n "$q" ] && [ "$q" -gt 0 ]; do ancestors="$ancestors $q"; q=$(ppid_of $q); done
out=$(readlink /proc/$$/fd/1) err=$(readlink /proc/$$/fd/2) left= leftpids=
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	for n in 1 2; do
		l=$(readlink $d/fd/$n 2>/dev/null)
		if [ -n "$l" ] && { [ "$l" = "$out" ] || [ "$l" = "$err" ]; }; then
			related $p && break
			left="$left $p($(tr '\0' ' ' < $d/cmdline 2>/dev/null | cut -c1-60))"
			leftpids="$leftpids $p"
			break
		fi
	done
done
T=runc-leftover
if [ -n "$left" ]; then
	for x in $leftpids; do kill -9 "$x" 2>/dev/null; done
	echo "RESULT runc-leftover FAIL processes left with the test's output:$left"
else
	echo "RESULT runc-leftover PASS"
fi
exit 0
