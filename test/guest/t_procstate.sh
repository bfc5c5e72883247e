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
	touch w/after
	finish
	pass "refused with the event queued; restored once read"
}

subtest procstate-inotify inotify
