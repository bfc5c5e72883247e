#!/bin/sh
# seccomp is never silently dropped (subtests seccomp-*).  `seccomp MODE`
# (test/progs/seccomp.c) ticks every 100 ms checking from inside that its
# filter still denies uname() with EXDEV.  Strict mode is restored;
# restoring filters is not implemented: what is checked is that nothing
# restores a task without its filters.
#   strict-tree   imgcr dump + restore --detach of `seccomp strictpair` (a
#                 parent feeding a pipe to a child in strict mode): the child
#                 is in strict mode again (/proc: Seccomp of both tasks as
#                 before), echoes on, and a getpid() it makes on request
#                 kills it with SIGKILL (seen by its parent)
#   strict-thread the same for `seccomp strictthread` (a thread in strict
#                 mode, main not): per thread as before, the thread echoes
#                 on and dies on getpid() while main ticks on
#   strict-plain  `cat /proc/PID/dump > img; ./img < fifo` of `seccomp
#                 strict`: restored in strict mode (/proc: Seccomp 1),
#                 echoes on, and dies by SIGKILL on getpid()
#   strict-caller the strict-mode image executed by a caller under a filter
#                 (seccompexec): EPERM, dmesg naming the TID (the kernel
#                 allows no strict mode under a filter)
#   version3      a version 3 image without NT_IMGCR_SECCOMP (corrupt
#                 version3): EINVAL, never taken for "no seccomp"
#   dump-MODE     imgcr dump of a tree with a task under a filter (chain
#                 with FLAG_LOG, TSYNC over 3 threads, a forked child that
#                 inherited the filter, a filter denying execve, a
#                 user-notification listener) is refused with a message
#                 naming pid, thread and seccomp, writes no tree, and leaves
#                 the tree running with its filters (checked inside: still
#                 "ok"; outside: Seccomp/Seccomp_filters of every thread
#                 unchanged)
#   dump-user     the same for a dump by uid 1000 of its own task
#   plain-MODE    `cat /proc/PID/dump > img; ./img` (filter, tsync): the
#                 image records the seccomp state (format version 3) and
#                 the exec fails with EPERM and a kernel message naming the
#                 thread, instead of running it unfiltered
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
chmod 777 .
RUNAS=""

# sc_state PID: "TID:MODE:FILTERS ..." for every thread.
sc_state() {
	for s in /proc/$1/task/*/status; do
		t=${s%/status}
		printf '%s:%s:%s ' "${t##*/}" "$(sed -n 's/^Seccomp:\t*//p' $s)" \
			"$(sed -n 's/^Seccomp_filters:\t*//p' $s)"
	done
}

# start MODE [ARGS]: start `seccomp MODE` (as $RUNAS), wait for "ready"
# and the first ticks; sets PID, KIDS, BEFORE.
start() {
	$RUNAS seccomp "$@" < /dev/null > out 2> err &
	PID=$!
	track $PID
	wait_line out '^ready$' 10 || fail "seccomp $*: $(cat out err)"
	wait_line out ' tick 3 ok$' 10 || fail "seccomp $*: no tick: $(tail -n2 out)"
	KIDS=$(cat /proc/$PID/task/*/children)
	for k in $KIDS; do track $k; done
	BEFORE="$(sc_state $PID)"
	case "$BEFORE" in *:2:*) ;; *) fail "not under a filter: $BEFORE" ;; esac
}

# still_ok: every ticking thread goes on ticking "ok"; state unchanged.
still_ok() {
	grep -q BAD out && fail "a thread lost its filter: $(grep -m1 BAD out)"
	for t in $(sed -n 's/^\([0-9]*\) tick .*/\1/p' out | sort -u); do
		c=$(grep -c "^$t tick" out)
		wait_line out "^$t tick $((c + 3)) ok\$" 10 ||
			fail "thread $t stopped ticking: $(grep "^$t tick" out | tail -n1)"
	done
	[ "$(sc_state $PID)" = "$BEFORE" ] ||
		fail "seccomp state changed: '$BEFORE' -> '$(sc_state $PID)'"
}

sub_dump() {
	mode=$1
	shift
	start $mode "$@"
	$RUNAS imgcr dump -t $PID -D d > dump.out 2> dump.err &&
		fail "dump of a task under seccomp ($mode) succeeded"
	grep -qE "^imgcr: pid $PID thread [0-9]+: .*seccomp" dump.err ||
		fail "message does not name pid, thread and seccomp: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	for p in $PID $KIDS; do
		case "$(state $p)" in
		t | T | Z | "") fail "task $p not running after the refused dump ('$(state $p)')" ;;
		esac
	done
	still_ok
	pass "$(head -n1 dump.err | cut -c1-140)"
}

sub_plain() {
	mode=$1
	shift
	start $mode "$@"
	stop_task $PID
	dump $PID s.img
	v=$(imgcr show s.img 2>&1 | sed -n 's/.*format \([0-9]*\).*/\1/p')
	[ "$v" = 3 ] || fail "image format '$v', want 3: $(imgcr show s.img 2>&1 | head -n2)"
	kill -CONT $PID
	dmesg_mark
	r=$(tryexec_expect s.img)
	[ -z "$r" ] || fail "executing the image of a task under seccomp: $r"
	[ "$(cat te.errno)" = EPERM ] || fail "execve failed with $(cat te.errno), want EPERM"
	dmesg_since | grep -qE "TID [0-9]+ ran under [0-9]+ seccomp filter" ||
		fail "no kernel message naming the thread: $(dmesg_since | tail -n2 | tr '\n' '|')"
	info "$(dmesg_since | grep -m1 seccomp | cut -c1-160)"
	still_ok
	pass
}

sub_strict_thread() {
	seccomp strictthread < /dev/null > out 2> err &
	PID=$!
	track $PID
	wait_line out '^ready$' 10 || fail "strictthread: $(cat out err)"
	wait_line out ' echo 3$' 10 || fail "strictthread: no echo: $(tail -n2 out)"
	TID=$(sed -n 's/^\([0-9]*\) echo 3$/\1/p' out)
	BEFORE="$(sc_state $PID)"
	[ "$BEFORE" = "$PID:0:0 $TID:1:0 " ] || fail "strictthread state '$BEFORE'"
	imgcr dump -t $PID -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $PID 10 || fail "task $PID survived the dump"
	n=$(grep -c "^$TID echo" out)
	imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
	wait_line out "^$TID echo $((n + 3))\$" 20 || fail "restored thread does not echo: $(tail -n2 out)$(rerr)"
	AFTER="$(sc_state $PID)"
	[ "$AFTER" = "$BEFORE" ] || fail "seccomp state '$BEFORE' before, '$AFTER' after"
	kill -USR1 $PID
	n=50
	while [ -d /proc/$PID/task/$TID ] && [ $n -gt 0 ]; do usleep 100000; n=$((n - 1)); done
	[ -d /proc/$PID/task/$TID ] && fail "the restored thread survived getpid(): not in strict mode"
	grep -q alive out && fail "the restored thread survived getpid(): not in strict mode"
	c=$(grep -c "^$PID tick" out)
	wait_line out "^$PID tick $((c + 3)) ok\$" 10 || fail "main stopped ticking after the thread died"
	pass "thread $TID restored in strict mode, main not"
}

sub_dump_filter() { sub_dump filter; }
sub_dump_tsync() { sub_dump tsync 3; }
sub_dump_child() { sub_dump child; }
sub_dump_noexec() { sub_dump noexec; }
sub_dump_listener() { sub_dump listener; }
sub_dump_user() { RUNAS="runas 1000 1000"; sub_dump filter; }

sub_strict_plain() {
	mkfifo in
	seccomp strict < in > out 2> err &
	PID=$!
	track $PID
	exec 3> in
	wait_line out '^ready$' 10 || fail "strict: $(cat out err)"
	wait_state $PID S 10
	echo -n a >&3
	wait_line out '^echo a$' 10 || fail "strict: no echo"
	stop_task $PID
	dump $PID s.img
	v=$(imgcr show s.img 2>&1 | sed -n 's/.*format \([0-9]*\).*/\1/p')
	[ "$v" = 3 ] || fail "image format '$v', want 3"
	kill9 $PID
	chmod +x s.img
	./s.img < in >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 || fail "not restored (state '$(state $rpid)')$(rerr)"
	[ "$(sc_state $rpid)" = "$rpid:1:0 " ] || fail "restored seccomp state '$(sc_state $rpid)', want strict"
	echo -n y >&3
	wait_line out '^echo y$' 10 || fail "restored: no echo$(rerr)"
	echo -n k >&3
	wait_exit $rpid 10
	[ "$RC" = 137 ] || fail "getpid() in restored strict mode: exit $RC, want SIGKILL (137)"
	grep -q alive out && fail "the restored process survived getpid(): not in strict mode"
	pass
}

sub_strict_caller() {
	mkfifo in
	seccomp strict < in > out 2> err &
	PID=$!
	track $PID
	exec 3> in
	wait_line out '^ready$' 10 || fail "strict: $(cat out err)"
	wait_state $PID S 10
	stop_task $PID
	dump $PID s.img
	kill9 $PID
	chmod +x s.img
	dmesg_mark
	seccompexec ./s.img < /dev/null > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q 'execve failed: EPERM' te.out ||
		fail "strict image under a filtered caller: rc=$rc $(cat te.out)"
	dmesg_since | grep -qE "TID $PID ran in seccomp strict mode, which the kernel does not allow under the caller's seccomp filter" ||
		fail "no kernel message: $(dmesg_since | tail -n2 | tr '\n' '|')"
	pass
}

sub_version3() {
	pauser > p.out &
	pid=$!
	track $pid
	wait_line p.out ready 10 || fail "pauser did not start"
	stop_task $pid
	dump $pid p.img
	kill9 $pid
	corrupt p.img v3.img version3 2> c.err || fail "corrupt: $(cat c.err)"
	dmesg_mark
	r=$(tryexec_expect v3.img)
	[ -z "$r" ] || fail "version 3 image without NT_IMGCR_SECCOMP: $r"
	[ "$(cat te.errno)" = EINVAL ] || fail "execve failed with $(cat te.errno), want EINVAL"
	dmesg_since | grep -q "NT_IMGCR_SECCOMP missing" ||
		fail "no kernel message: $(dmesg_since | tail -n2 | tr '\n' '|')"
	control_restore p.img p.out
	pass
}

sub_strict_tree() {
	seccomp strictpair < /dev/null > out 2> err &
	PID=$!
	track $PID
	wait_line out '^ready$' 10 || fail "strictpair: $(cat out err)"
	wait_line out ' echo 3$' 10 || fail "strictpair: no echo: $(tail -n2 out)"
	KID=$(echo $(cat /proc/$PID/task/$PID/children))
	track $KID
	BEFORE="$(sc_state $PID)$(sc_state $KID)"
	[ "$BEFORE" = "$PID:0:0 $KID:1:0 " ] || fail "strictpair state '$BEFORE'"
	imgcr dump -t $PID -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $PID 10 || fail "task $PID survived the dump"
	wait_gone $KID 10 || fail "task $KID survived the dump"
	n=$(grep -c "^$KID echo" out)
	imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
	wait_line out "^$KID echo $((n + 3))\$" 20 || fail "restored child does not echo: $(tail -n2 out)$(rerr)"
	AFTER="$(sc_state $PID)$(sc_state $KID)"
	[ "$AFTER" = "$BEFORE" ] || fail "seccomp state '$BEFORE' before, '$AFTER' after"
	kill -USR1 $PID
	wait_line out '^child ' 10 || fail "the parent saw no end of the child: $(tail -n2 out)"
	grep -q alive out && fail "the restored child survived getpid(): not in strict mode"
	grep -q '^child killed by signal 9$' out || fail "child: $(grep '^child' out)"
	pass "child $KID restored in strict mode, killed on getpid()"
}

sub_plain_filter() { sub_plain filter; }
sub_plain_tsync() { sub_plain tsync 3; }

for s in strict_plain strict_caller version3 strict_tree strict_thread dump_filter dump_tsync dump_child dump_noexec dump_listener \
	dump_user plain_filter plain_tsync; do
	mkdir -p $s && chmod 777 $s && (cd $s && subtest seccomp-$(echo $s | tr _ -) sub_$s)
done
