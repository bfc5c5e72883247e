#!/bin/sh
# seccomp is restored, never silently dropped (subtests seccomp-*).
# `seccomp MODE` (test/progs/seccomp.c) ticks every 100 ms checking from
# inside that its filter still denies uname() with EXDEV (and, per mode,
# its thread's own filter getpriority()).
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
#   restore-MODE  imgcr dump + restore --detach of a tree under filters:
#                 filter (a chain of 2, the newer with FLAG_LOG), tsync (3
#                 threads, TSYNC; after the restore a new TSYNC filter by
#                 main still succeeds: the threads share the chain),
#                 perthread (a shared filter plus one of its own per
#                 thread), child (a forked child inherited the filter),
#                 childown (the child added one of its own), noexec (a
#                 filter denying execve), killer (SECCOMP_RET_KILL_PROCESS
#                 on getppid(): after the restore, getppid() kills it by
#                 SIGSYS): the seccomp file is written, every thread ticks
#                 "ok" again (inside) and Seccomp/Seccomp_filters of every
#                 thread are as before (outside)
#                 (and `imgcr show` of the dump, text and --json, and of
#                 the seccomp file, lists every thread with that count)
#   restore-partial  the same for `seccomp partial`: filters only some
#                 threads share (main F G H, A F, B F G with G main's, C F,
#                 made by A after B): Seccomp_filters of every thread as
#                 before (3 1 2 1), and after the restore a TSYNC filter
#                 by main still succeeds (it fails if B's G is not main's)
#                 and gives every thread main's chain (4 filters each)
#   dump-listener imgcr dump of a task with a user-notification filter is
#                 refused with a message naming pid, thread (or the
#                 listener's fd: the listener is not restored) and seccomp,
#                 writes no tree, and leaves the tree running with its
#                 filters (checked inside and outside)
#   dump-user     the same for a dump by uid 1000 of its own task under a
#                 filter (reading filters needs CAP_SYS_ADMIN)
#   plain-MODE    `cat /proc/PID/dump > img; ./img` (filter, tsync): the
#                 image records the seccomp state (format version 3) and
#                 the exec without the seccomp file fails with EPERM and a
#                 kernel message naming the thread, instead of running it
#                 unfiltered
#   plain-file    `./img --imgcr-seccomp=7 7<seccomp file` (imgcr dump's
#                 file, a plain exec): restored with its filters
#   rights        the same exec by uid 1000 (the task's own uid) without
#                 no_new_privs: EPERM before the point of no return
#   hostile-KIND  a damaged seccomp file (truncated, trailing bytes, over
#                 16 MiB, a length over BPF_MAXINSNS, unknown flags, an
#                 instruction seccomp does not allow, a jump out of the
#                 program, SECCOMP_RET_USER_NOTIF, another TID): EINVAL,
#                 a kernel message, no kernel warning
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

# sc_all: sc_state of $PID and its children $KIDS
sc_all() {
	sc_state $PID
	for k in $KIDS; do sc_state $k; done
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
	BEFORE="$(sc_all)"
	MAINST="$(sc_state $PID)"
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
	[ "$(sc_all)" = "$BEFORE" ] ||
		fail "seccomp state changed: '$BEFORE' -> '$(sc_all)'"
}

# show_ok: `imgcr show d` (and --json, and of the seccomp file itself)
# lists each thread of $PID with its filter count as /proc showed it
show_ok() {
	imgcr show d > show.out 2>&1 || fail "imgcr show d: $(tail -n2 show.out)"
	grep -q "^  seccomp filters (seccomp-$PID.img):" show.out ||
		fail "imgcr show prints no seccomp filters: $(grep -A3 "^task $PID" show.out | tr '\n' '|')"
	imgcr show d/seccomp-$PID.img > showf.out 2>&1 || fail "imgcr show of the seccomp file: $(cat showf.out)"
	imgcr show --json d > showj.out 2>&1 || fail "imgcr show --json d: $(tail -n2 showj.out)"
	for e in $MAINST; do
		tid=${e%%:*}
		n=${e##*:}
		w="filters"
		[ "$n" = 1 ] && w=filter
		grep -qE "^    thread $tid( \(main\))?: $n $w" show.out ||
			fail "imgcr show: thread $tid not shown with $n filters: $(grep "thread $tid" show.out)"
		grep -qE "^    thread $tid( \(main\))?: $n $w" showf.out ||
			fail "imgcr show FILE: thread $tid not shown with $n filters"
		grep -q "{\"tid\":$tid,\"shared_with_main\":[0-9]*,\"filters\":\[" showj.out ||
			fail "imgcr show --json: thread $tid not in the seccomp list"
	done
}

# restore MODE [ARGS]: imgcr dump (the tree is gone) + restore --detach:
# every thread ticks ok again, the seccomp state of every thread as before
sub_restore() {
	start "$@"
	imgcr dump -t $PID -D d > dump.out 2> dump.err || fail "dump: $(cat dump.err)"
	[ -s d/seccomp-$PID.img ] || fail "no seccomp file d/seccomp-$PID.img: $(ls d)"
	show_ok
	for p in $PID $KIDS; do wait_gone $p 10 || fail "task $p survived the dump"; done
	imgcr restore -D d --detach > restore.out 2> restore.err ||
		fail "restore --detach: $(cat restore.err)"
	still_ok
}

sub_restore_filter() { sub_restore filter; pass "$BEFORE"; }
sub_restore_perthread() { sub_restore perthread 3; pass "$BEFORE"; }
sub_restore_child() { sub_restore child; pass "$BEFORE"; }
sub_restore_childown() { sub_restore childown; pass "$BEFORE"; }
sub_restore_noexec() { sub_restore noexec; pass "$BEFORE"; }

sub_restore_tsync() {
	sub_restore tsync 3
	kill -USR2 $PID
	wait_line out '^tsync ' 10 || fail "no answer to the TSYNC request"
	grep -q '^tsync ok$' out || fail "a TSYNC filter after the restore: $(grep '^tsync' out)"
	# the new filter: one more on every thread
	n=$(sc_all | tr ' ' '\n' | sed -n 's/.*:2:\([0-9]*\)$/\1/p' | sort -u)
	[ "$n" = 2 ] || fail "filters after TSYNC: $(sc_all)"
	pass "$BEFORE, TSYNC after the restore ok"
}

sub_restore_partial() {
	sub_restore partial
	counts=$(sc_all | tr ' ' '\n' | sed -n 's/.*:2:\([0-9]*\)$/\1/p' | sort | tr '\n' ' ')
	[ "$counts" = "1 1 2 3 " ] || fail "filter counts before: $BEFORE"
	kill -USR2 $PID
	wait_line out '^tsync ' 10 || fail "no answer to the TSYNC request"
	grep -q '^tsync ok$' out || fail "a TSYNC filter after the restore: $(grep '^tsync' out) (thread chains no longer shared: $(sc_all))"
	n=$(sc_all | tr ' ' '\n' | sed -n 's/.*:2:\([0-9]*\)$/\1/p' | sort -u)
	[ "$n" = 4 ] || fail "filters after TSYNC: $(sc_all)"
	pass "$BEFORE, TSYNC after the restore ok"
}

sub_restore_killer() {
	sub_restore killer
	kill -USR1 $PID
	wait_gone $PID 10 || fail "getppid() did not kill the restored process"
	grep -q 'alive after getppid' out && fail "the restored process survived getppid()"
	pass "$BEFORE, killed by its filter after the restore"
}

# sc_exec FILE: exec d/core-$PID.img as $RUNAS with FILE as its seccomp
# file; "" if execve failed (errno in te.errno), else what happened
sc_exec() {
	chmod 755 d d/core-$PID.img
	timeout -s KILL 10 $RUNAS tryexec ./d/core-$PID.img --imgcr-seccomp=7 7< "$1" > te.out 2>&1
	_rc=$?
	if [ "$_rc" = 2 ] && grep -q '^tryexec: execve failed: E' te.out; then
		sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' te.out > te.errno
		echo ""
	else
		echo "rc=$_rc($(head -c 60 te.out | tr '\n' ' '))"
	fi
}

# dumped MODE: `seccomp MODE` dumped by imgcr dump (and gone)
dumped() {
	start "$@"
	imgcr dump -t $PID -D d > dump.out 2> dump.err || fail "dump: $(cat dump.err)"
	[ -s d/seccomp-$PID.img ] || fail "no seccomp file"
	wait_gone $PID 10 || fail "task $PID survived the dump"
}

sub_plain_file() {
	dumped filter
	chmod 755 d d/core-$PID.img
	tryexec ./d/core-$PID.img --imgcr-seccomp=7 7< d/seccomp-$PID.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_restored $rpid 30 tryexec || fail "not restored (state '$(state $rpid)')$(rerr)"
	c=$(grep -c "tick" out)
	wait_line out " tick $((c + 3)) ok\$" 10 || fail "restored: no ticks$(rerr): $(tail -n1 out)"
	grep -q BAD out && fail "$(grep -m1 BAD out)"
	[ "$(sc_state $rpid)" = "$rpid:2:2 " ] || fail "restored seccomp state '$(sc_state $rpid)', before '$BEFORE'"
	pass
}

sub_rights() {
	RUNAS="runas 1000 1000"
	dumped filter
	dmesg_mark
	r=$(sc_exec d/seccomp-$PID.img)
	[ -z "$r" ] || fail "exec by uid 1000 without no_new_privs: $r"
	[ "$(cat te.errno)" = EPERM ] || fail "execve failed with $(cat te.errno), want EPERM"
	dmesg_since | grep -q "seccomp filters needs no_new_privs or CAP_SYS_ADMIN" ||
		fail "no kernel message: $(dmesg_since | tail -n2 | tr '\n' '|')"
	pass
}

# patch FILE OFFSET OCTAL-BYTES
patch() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null; }

# hostile KIND: the seccomp file of `seccomp filter` (header 16 bytes,
# chain 16-23, filter 1 header 24-31 and 4 instructions 32-63, filter 2
# header 64-71 and 1 instruction 72-79) damaged
hostile() {
	dumped filter
	f=d/seccomp-$PID.img
	[ "$(size_of $f)" = 80 ] || fail "seccomp file of $(size_of $f) bytes, want 80"
	cp $f bad
	case $1 in
	trunc) head -c 76 $f > bad ;;
	trailing) head -c 8 /dev/zero >> bad ;;
	huge) dd if=/dev/zero bs=1M count=17 >> bad 2> /dev/null ;;
	len) patch bad 28 '\210\023' ;;		# 5000 instructions
	flags) patch bad 24 '\004' ;;		# SPEC_ALLOW: not reported by the kernel
	opcode) patch bad 32 '\377\377' ;;
	jump) patch bad 42 '\310' ;;		# jt 200
	notify) patch bad 52 '\000\000\300\177' ;;	# SECCOMP_RET_USER_NOTIF
	tid) patch bad 16 '\001\000\000\000' ;;
	esac
	dmesg_mark
	r=$(sc_exec bad)
	[ -z "$r" ] || fail "exec with a damaged seccomp file ($1): $r"
	[ "$(cat te.errno)" = EINVAL ] || fail "execve failed with $(cat te.errno), want EINVAL"
	dmesg_since | grep -q "binfmt_img: .*seccomp" ||
		fail "no kernel message: $(dmesg_since | tail -n2 | tr '\n' '|')"
	dmesg_since | grep -qE "WARNING|Call Trace|BUG" && fail "kernel warning: $(dmesg_since | grep -m1 -E 'WARNING|BUG')"
	pass "$(dmesg_since | grep -m1 binfmt_img | cut -c1-160)"
}
for k in trunc trailing huge len flags opcode jump notify tid; do
	eval "sub_hostile_$k() { hostile $k; }"
done

sub_dump() {
	mode=$1
	shift
	start $mode "$@"
	$RUNAS imgcr dump -t $PID -D d > dump.out 2> dump.err &&
		fail "dump of a task under seccomp ($mode) succeeded"
	grep -qE "^imgcr: pid $PID (thread|fd) [0-9]+: .*seccomp" dump.err ||
		fail "message does not name pid, thread (or the listener's fd) and seccomp: $(tr '\n' '|' < dump.err)"
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

for s in strict_plain strict_caller version3 strict_tree strict_thread restore_filter restore_tsync restore_perthread restore_partial \
	restore_child restore_childown restore_noexec restore_killer dump_listener dump_user plain_filter plain_tsync \
	plain_file rights hostile_trunc hostile_trailing hostile_huge hostile_len hostile_flags hostile_opcode \
	hostile_jump hostile_notify hostile_tid; do
	mkdir -p $s && chmod 777 $s && (cd $s && subtest seccomp-$(echo $s | tr _ -) sub_$s)
done
