#!/bin/sh
# State README once called "lost by choice" although a program can see it
# (issue 20), each checked by the program itself (test/progs/procstate.c)
# and from /proc:
#  procstate-inotify  an inotify instance with an event queued and not
#                     read: the dump is refused (message naming pid, fd
#                     and the bytes queued), the task runs on untouched;
#                     once it has read the queue the dump goes through;
#                     after the restore the same watch (fdinfo), nothing
#                     queued, and a new event under the same wd
#  procstate-stopsig  a child stopped by SIGTTIN (its parent has not
#                     waited for it): the tree records "stopped PID 21";
#                     restored, it is T from outside, and the parent's
#                     waitpid(WUNTRACED) reports SIGTTIN (not SIGSTOP)
#  procstate-owner    two pipes with O_ASYNC, one owned by the child
#                     (F_OWNER_PID, F_SETSIG SIGRTMIN+2), one by the
#                     child's process group: "fown" records; restored,
#                     F_GETOWN_EX/F_GETSIG are the same inside and the
#                     child gets SIGRTMIN+2 (si_fd) and SIGIO; an owner
#                     outside the tree (the test's shell) is refused at
#                     dump (message naming pid, fd and the owner)
# timeout: 600
. /imgcr/guest/lib.sh
require_modules

# start MODE: procstate MODE >> out in ./MODE; $root
start() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	procstate "$1" >> out 2> err </dev/null &
	root=$!
	track $root
	wait_line out '^ready' 20 || fail "procstate $1 did not start: $(cat out err | tr '\n' '|')"
}

# finish: tell the restored program, wait for its verdict and for the
# restore (its exit status in RC)
finish() {
	touch restored
	wait_line out '^procstate [PF]A' 30 || fail "no verdict: $(tail -n 3 out | tr '\n' '|')"
	wait_exit $rp 30
	inside_ok procstate
}

inotify() {
	start inotify
	set -- $(sed -n 's/^ino \([0-9]*\) wd \([0-9]*\)$/\1 \2/p' out)
	ino=$1 wd=$2
	fdi=$(grep '^inotify' /proc/$root/fdinfo/$ino)
	[ -n "$fdi" ] || fail "no inotify watch in fdinfo $ino"
	imgcr dump -t $root -D d 2> dump.err && fail "dump with an inotify event queued succeeded"
	grep -qx "imgcr: pid $root fd $ino: inotify: 32 bytes of events queued and not read: they cannot be restored (only the kernel queues events); dump again once the program has read them" dump.err ||
		fail "refusal: $(tr '\n' '|' < dump.err)"
	case "$(state $root)" in S|R) ;; *) fail "after the refused dump the task is '$(state $root)'" ;; esac
	touch drain
	wait_line out "^drained $wd:100:before\$" 10 || fail "the task did not read its queue after the refused dump: $(tail -n 2 out | tr '\n' '|')"
	imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $root
	imgcr restore -D d > r.out 2> restore.err &
	rp=$!
	track $rp
	wait_tasks_restored $root
	[ "$(grep '^inotify' /proc/$root/fdinfo/$ino)" = "$fdi" ] ||
		fail "fdinfo after: $(grep '^inotify' /proc/$root/fdinfo/$ino), before: $fdi"
	touch restored
	wait_line out '^queue checked' 30 || fail "no 'queue checked': $(tail -n 3 out | tr '\n' '|')"
	touch w/after
	finish
	pass "refused with the event queued; restored once read"
}

stopsig() {
	start stopsig
	kid=$(sed -n 's/^child \([0-9]*\)$/\1/p' out)
	track $kid
	[ "$(state $kid)" = T ] || fail "the child is '$(state $kid)' before the dump"
	imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $root $kid
	tree_fields d/tree | grep -q "^stopped $kid 21\$" || fail "no 'stopped $kid 21' record: $(grep '^stopped' d/tree)"
	imgcr show d | grep -q "stopped by SIGTTIN" || fail "imgcr show does not say SIGTTIN"
	imgcr restore -D d > r.out 2> restore.err &
	rp=$!
	track $rp
	wait_tasks_restored $root
	wait_recreated $kid
	wait_state $kid T 30 || fail "the restored child is '$(state $kid)', want T$(rerr)"
	finish
	pass "$(grep -c '^ok' out) checks ok"
}

owner() {
	start owner
	set -- $(sed -n 's/^fds \([0-9]*\) \([0-9]*\) child \([0-9]*\)$/\1 \2 \3/p' out)
	r1=$1 r2=$2 kid=$3
	track $kid
	imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone $root $kid
	tree_fields d/tree | grep -q "^fown [0-9]* 1 $kid $(( $(sed -n 's/^owners 1:[0-9]* sig \([0-9]*\),.*/\1/p' out) ))\$" &&
		tree_fields d/tree | grep -q "^fown [0-9]* 2 $kid 0\$" || fail "fown records: $(grep '^fown' d/tree | tr '\n' '|')"
	imgcr restore -D d > r.out 2> restore.err &
	rp=$!
	track $rp
	wait_tasks_restored $root $kid
	finish
	grep -q "^child got 1 1 fd $r1\$" out || fail "the child's signals: $(grep '^child got' out | tail -n 2 | tr '\n' '|')"
	pass "$(grep -c '^ok' out) checks ok"
}

# an owner outside the tree: procstate owner-out also has a pipe owned
# by its parent, this shell
owner_out() {
	mkdir owner-out && cd owner-out || fail "mkdir"
	procstate owner-out >> out 2> err </dev/null &
	root=$!
	track $root
	wait_line out '^ready' 20 || fail "procstate owner-out did not start: $(cat out err | tr '\n' '|')"
	track $(sed -n 's/^fds [0-9]* [0-9]* child \([0-9]*\)$/\1/p' out)
	r3=$(sed -n 's/^outside \([0-9]*\)$/\1/p' out)
	imgcr dump -t $root -D d 2> dump.err && fail "dump with an owner outside the tree succeeded"
	grep -qx "imgcr: pid $root fd $r3: its owner (F_SETOWN), process $(stat_field $root 2), is not in the tree: the owner cannot be restored" dump.err ||
		fail "refusal: $(tr '\n' '|' < dump.err)"
	case "$(state $root)" in S|R) ;; *) fail "after the refused dump the task is '$(state $root)'" ;; esac
	pass "refused: $(cut -c1-100 dump.err)"
}

subtest procstate-inotify inotify
subtest procstate-stopsig stopsig
subtest procstate-owner owner
subtest procstate-owner-out owner_out
