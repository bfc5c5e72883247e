#!/bin/sh
# imgcr-criu, CRIU's swrk RPC (issue 24), driven by test/progs/criurpc.c as
# runc drives CRIU: "imgcr-criu swrk 3" on a SOCK_SEQPACKET socketpair.
#  criu_rpc-basic    VERSION (3.17.1, name imgcr, no gitid), CHECK and
#                    FEATURE_CHECK (all false) on one keep_open connection;
#                    --version and check as runtimes probe them
#  criu_rpc-dump     DUMP of a counter with notify_scripts: exactly
#                    pre-dump, post-dump; the counter killed, its images
#                    and the log file (log_file in the images dir) there
#  criu_rpc-restore  RESTORE with rst_sibling: pre-restore, post-restore
#                    (the root's pid), pre-resume, post-resume; the counter
#                    is the client's child (its PPid, from outside), counts
#                    on without gap or repeat, passes its self-check and is
#                    reaped by the client with exit 0
#  criu_rpc-innerpipe the root's stdin is a pipe from its child (`counter |
#                    cat` of a root sh that opens it): not external, dumped
#                    and restored with the tree (review s12 L5)
#  criu_rpc-leave    DUMP with leave_running: the counter goes on
#  criu_rpc-refuse   the client answers false to post-dump: the dump fails
#                    naming it, the counter runs on, not stopped
#  criu_rpc-bad      unsupported or malformed requests (PRE_DUMP without a pid,
#                    PAGE_SERVER, lazy_pages, a parent_img that is no
#                    pre-dump, ps, lsm_profile,
#                    an unknown type or field, garbage, a file as
#                    images_dir_fd...): each answered success=false with a
#                    message naming it, no crash; the target untouched
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
BIN=/imgcr/bin/imgcr-criu

# start_counter N: $pid counting into ./out
start_counter() {
	# stderr and stdin not shared with the runner: a pipe shared with a
	# process outside the tree is refused by the dump
	counter "$1" > out 2> counter.err < /dev/null &
	pid=$!
	track $pid
	wait_line out '^5 ' 30 || fail "counter never reached 5: $(tail -n 1 out)"
}

# numbers_ok FILE N PID: 1..N once each and in order, all by PID, then the self-check
numbers_ok() {
	n=0
	while read -r num p rest; do
		[ "$num" = counter ] && { [ "$p $rest" = "selfcheck ok" ] || fail "self-check: $p $rest"; continue; }
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "line $n is '$num $p' (gap or repeat)"
		[ "$p" = "$3" ] || fail "line $n printed by pid $p, expected $3"
	done < "$1"
	[ "$n" = "$2" ] || fail "got $n numbers, expected $2"
	grep -q '^counter selfcheck ok$' "$1" || fail "no self-check line"
}

basic() {
	criurpc $BIN basic > rpc.out 2> rpc.err || fail "$(grep FAIL rpc.out)$(head -c 300 rpc.err)"
	grep -q '^ok version 3.17.1 imgcr$' rpc.out || fail "version: $(cat rpc.out)"
	grep -q '^ok check$' rpc.out || fail "check: $(cat rpc.out)"
	grep -q '^ok features mem_track=1 lazy_pages=0 pidfd_store=0$' rpc.out || fail "features: $(cat rpc.out)"
	$BIN --version | grep -q '^Version: 3\.17\.1$' || fail "--version: $($BIN --version)"
	$BIN check > check.out 2>&1 || fail "imgcr-criu check: $(tr '\n' '|' < check.out)"
	tail -n 1 check.out | grep -q '^Looks good\.$' || fail "imgcr-criu check: $(tail -n 2 check.out)"
	$BIN dump -t 1 > x.out 2>&1 && fail "imgcr-criu dump was accepted"
	grep -q 'only answers CRIU' x.out || fail "imgcr-criu dump: $(cat x.out)"
	pass "$(head -n 1 rpc.out)"
}

# dfail WHY: the dump failed, so the restore has nothing to restore
dfail() {
	echo "RESULT criu_rpc-restore FAIL no dump to restore"
	fail "$@"
}

dumprestore() {
	T=criu_rpc-dump
	start_counter 60
	criurpc $BIN dump $pid d > dump.out 2> dump.err || dfail "$(grep FAIL dump.out)$(head -c 300 dump.err)"
	[ "$(grep '^notify' dump.out | tr '\n' '|')" = "notify pre-dump 0|notify post-dump 0|" ] ||
		dfail "notifications: $(grep '^notify' dump.out | tr '\n' '|')"
	wait_gone $pid 10 || dfail "the counter survived the dump"
	[ -s d/tree ] || dfail "no d/tree"
	[ -s d/core-$pid.img ] || dfail "no d/core-$pid.img"
	grep -q 'debug: ' d/dump.log || dfail "d/dump.log has no debug lines (log_level 4)"
	pass "$(sed -n 's/^ok //p' dump.out)"
	last=$(tail -n 1 out | cut -d' ' -f1)
	criurpc $BIN restore d > restore.out 2> restore.err &
	cli=$!
	track $cli
	T=criu_rpc-restore
	n=0
	until grep -q '^ok restored' restore.out || grep -q FAIL restore.out; do
		n=$((n + 1))
		[ $n -lt 1500 ] || fail "no restore: $(cat restore.out) $(head -c 300 restore.err)"
		usleep 20000
	done
	grep -q FAIL restore.out && fail "$(grep FAIL restore.out)$(head -c 300 restore.err)"
	[ "$(grep '^notify' restore.out | tr '\n' '|')" = "notify pre-restore 0|notify post-restore $pid|notify pre-resume 0|notify post-resume 0|" ] ||
		fail "notifications: $(grep '^notify' restore.out | tr '\n' '|')"
	grep -q "^ok restored $pid parent $cli" restore.out || fail "$(grep '^ok restored' restore.out), expected pid $pid parent $cli"
	# from outside: the client is its parent, it counts on
	[ "$(awk '/^PPid:/ {print $2}' /proc/$pid/status)" = "$cli" ] || fail "PPid $(awk '/^PPid:/ {print $2}' /proc/$pid/status), expected the client $cli"
	wait_line out "^$((last + 3)) " 30 || fail "the counter did not go on after $last: $(tail -n 1 out)"
	[ -s d/restore.log ] || fail "no d/restore.log"
	wait_exit $cli 60
	[ "$RC" = 0 ] || fail "client: $RC: $(grep FAIL restore.out)"
	grep -q "^ok reaped $pid exit 0" restore.out || fail "not reaped by the client: $(tail -n 1 restore.out)"
	numbers_ok out 60 $pid
	pass "restored $pid as the client's child, resumed after $last"
}

# review s12 L5: the root's stdin is a pipe between two of its children
# (`counter | cat` started by the root sh, which then opens the pipe as its
# own stdin): not made external (its ends are all in the tree), dumped with
# the tree; the restore (no inherit_fd) brings it back and the counter's
# lines go on through cat.
innerpipe() {
	sh -c 'counter 100 | cat > out &
		while ! readlink /proc/$!/fd/0 | grep -q "^pipe:"; do usleep 10000; done
		exec < /proc/$!/fd/0; wait' > sh.out 2> sh.err < /dev/null &
	pid=$!
	track $pid
	wait_line out '^5 ' 30 || fail "counter never reached 5: $(tail -n 1 out) $(cat sh.err)"
	link=$(readlink /proc/$pid/fd/0)
	case "$link" in pipe:*) ;; *) fail "the root's stdin is $link, not a pipe" ;; esac
	cpid=$(head -n 1 out | cut -d' ' -f2)
	[ "$(readlink /proc/$cpid/fd/1)" = "$link" ] || fail "counter's stdout is $(readlink /proc/$cpid/fd/1), not $link"
	criurpc $BIN dump $pid d > dump.out 2> dump.err || fail "dump: $(grep FAIL dump.out)$(head -c 300 dump.err)"
	wait_gone $pid 10 || fail "the tree survived the dump"
	ino=${link#pipe:[}; ino=${ino%]}
	grep -q "^pipe ino=$ino .*ext=1" d/tree && fail "the root's stdin pipe $link was made external"
	grep -q "^pipe ino=$ino " d/tree || fail "no pipe record for $link: $(grep '^pipe' d/tree | tr '\n' '|')"
	last=$(tail -n 1 out | cut -d' ' -f1)
	criurpc $BIN restore d > restore.out 2> restore.err &
	cli=$!
	track $cli
	n=0
	until grep -q '^ok restored' restore.out || grep -q FAIL restore.out; do
		n=$((n + 1))
		[ $n -lt 1500 ] || fail "no restore: $(cat restore.out) $(head -c 300 restore.err)"
		usleep 20000
	done
	grep -q FAIL restore.out && fail "restore: $(grep FAIL restore.out)$(grep -i 'extern\|inherit\|refus\|cannot' d/restore.log | head -n 3 | tr '\n' '|')"
	nlink=$(readlink /proc/$pid/fd/0)
	[ "$(readlink /proc/$cpid/fd/1)" = "$nlink" ] || fail "restored: the root's stdin $nlink, counter's stdout $(readlink /proc/$cpid/fd/1)"
	wait_line out "^$((last + 3)) " 60 || fail "the counter did not go on after $last: $(tail -n 1 out)"
	wait_exit $cli 120
	[ "$RC" = 0 ] || fail "client: $RC: $(grep FAIL restore.out)"
	grep -q "^ok reaped $pid exit 0" restore.out || fail "the root did not end with 0: $(tail -n 1 restore.out)"
	numbers_ok out 100 $cpid
	pass "$link restored as a pipe of the tree ($nlink), resumed after $last"
}

leave() {
	start_counter 600
	criurpc $BIN dump $pid d leave > dump.out 2> dump.err || fail "$(grep FAIL dump.out)$(head -c 300 dump.err)"
	[ -s d/tree ] || fail "no d/tree"
	now=$(tail -n 1 out | cut -d' ' -f1)
	wait_line out "^$((now + 3)) " 30 || fail "the counter stopped after a leave_running dump: $(state $pid)"
	pass
}

refuse() {
	start_counter 600
	criurpc $BIN dump $pid d no=post-dump > dump.out 2> dump.err || fail "$(grep FAIL dump.out)$(head -c 300 dump.err)"
	grep -q '^ok dump refused at post-dump' dump.out || fail "$(cat dump.out)"
	now=$(tail -n 1 out | cut -d' ' -f1)
	wait_line out "^$((now + 3)) " 30 || fail "the counter did not go on after a refused dump: $(state $pid)"
	case "$(state $pid)" in [SR]) ;; *) fail "counter state $(state $pid)" ;; esac
	pass "$(sed -n 's/^ok dump refused at post-dump: //p' dump.out)"
}

bad() {
	start_counter 600
	mkdir d
	criurpc $BIN bad $pid d > bad.out 2> bad.err || fail "$(grep FAIL bad.out)$(head -c 300 bad.err)"
	n=$(grep -c '^ok refused' bad.out)
	[ "$n" -ge 19 ] || fail "only $n refusals: $(tail -n 2 bad.out)"
	now=$(tail -n 1 out | cut -d' ' -f1)
	wait_line out "^$((now + 3)) " 30 || fail "the counter did not go on: $(state $pid)"
	[ ! -e d/tree ] || fail "a refused request wrote d/tree"
	pass "$n requests refused"
}

for t in basic dumprestore innerpipe leave refuse bad; do
	mkdir $t && cd $t || fail "mkdir $t"
	case $t in
	dumprestore) (dumprestore) ;;
	*) subtest criu_rpc-$t $t ;;
	esac
	cd ..
done
