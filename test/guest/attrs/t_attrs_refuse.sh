#!/bin/sh
# Attributes imgcr cannot bring back are refused with a message naming the
# task (test/progs/attrs.c):
#   at dump, the task left running untouched (it goes on and says so):
#     attrs_refuse-as      a soft RLIMIT_AS below what the task maps
#     attrs_refuse-thread  a thread whose nice value differs from the main thread's
#     attrs_refuse-deadline  SCHED_DEADLINE
#     attrs_refuse-root    a root directory that was deleted
#   at restore by an ordinary user (uid 1000, --pidns), before any image
#   runs, nothing left running:
#     attrs_refuse-nofile  an RLIMIT_NOFILE hard limit above the user's
#     attrs_refuse-oom     an oom_score_adj below the user's
# timeout: 300
. /imgcr/guest/lib.sh
require_modules
chmod 777 .
# Debian kernels gate unprivileged user namespaces behind this sysctl.
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 > /proc/sys/kernel/unprivileged_userns_clone

# start MODE: run attrs MODE in $PWD/MODE, sets pid
start() {
	mkdir -p "$PWD/$1" && chmod 777 "$PWD/$1"
	: > "$1/out"
	chmod 666 "$1/out"
	attrs "$1" "$PWD/$1" > "$1/out" 2>&1 &
	pid=$!
	track $pid
	wait_line "$1/out" '^ready' 20 || fail "attrs $1 did not start: $(tr '\n' '|' < "$1/out")"
}

# mode_dump_refused MODE REGEX: the dump fails saying REGEX; the task goes on
# (not lib.sh's dump_refused PID WHAT RE: this one passes the test and
# wants MODE's "continued ok")
mode_dump_refused() {
	imgcr dump -t $pid -D "$1/d" 2> "$1/dump.err" && fail "the dump succeeded"
	grep -qE "$2" "$1/dump.err" || fail "dump message: $(tr '\n' '|' < "$1/dump.err")"
	grep -q "the tree was left running untouched" "$1/dump.err" || fail "no 'left running' in $(tr '\n' '|' < "$1/dump.err")"
	case "$(state $pid)" in
	S | R) ;;
	*) fail "task $pid is '$(state $pid)' after the refused dump" ;;
	esac
	touch "$1/restored"
	wait_line "$1/out" '^continued ok' 20 || fail "the task did not go on: $(tr '\n' '|' < "$1/out")"
	info "$(grep -v 'left running' "$1/dump.err" | head -n1)"
	pass
}

# restore_refused MODE REGEX: dumped as root, uid 1000's restore fails with REGEX
restore_refused() {
	imgcr dump -t $pid -D "$1/d" 2> "$1/dump.err" || fail "dump: $(cat "$1/dump.err")"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	runas 1000 1000 imgcr restore -D "$1/d" --pidns > "$1/r.out" 2> "$1/r.err" &&
		fail "uid 1000 restored it"
	grep -qE "$2" "$1/r.err" || fail "restore message: $(tr '\n' '|' < "$1/r.err")"
	grep -q "nothing of the tree was left running" "$1/r.err" || fail "no 'nothing left running' in $(tr '\n' '|' < "$1/r.err")"
	for c in /proc/[0-9]*/comm; do
		[ "$(cat "$c" 2>/dev/null)" = attrs ] && fail "an attrs task is running: ${c%/comm}"
	done
	grep -q 'continued ok' "$1/out" && fail "the image ran"
	info "$(grep "restore failed" "$1/r.err" | head -n1)"
	pass
}

t_as() { start as-low; mode_dump_refused as-low "pid $pid: its RLIMIT_AS soft limit \\(1048576 bytes\\) is below what it maps now \\(VmSize [0-9]+ kB\\).*not supported"; }
t_thread() { start thread-nice; mode_dump_refused thread-nice "pid $pid tid [0-9]+: its nice value differs from the main thread's: per-thread values are not supported"; }
t_deadline() { start deadline; mode_dump_refused deadline "pid $pid: scheduling policy SCHED_DEADLINE: not supported"; }
t_root() {
	mkdir -p root-gone/gone-root
	start root-gone
	rmdir root-gone/gone-root || fail "cannot remove the task's root"
	mode_dump_refused root-gone "pid $pid: root directory $PWD/root-gone/gone-root \\(deleted\\): not reachable or deleted: not supported"
}
t_nofile() { start nofile-hard; restore_refused nofile-hard "pid $pid: cannot set its RLIMIT_NOFILE to soft [0-9]+ hard [0-9]+ \\(the restorer's hard limit is [0-9]+\\): Operation not permitted \\(raising a hard limit needs CAP_SYS_RESOURCE: restore as root\\)"; }
t_oom() { start oom-low; restore_refused oom-low "pid $pid: cannot set its oom_score_adj to -200 \\(now 0\\): Permission denied \\(needs CAP_SYS_RESOURCE to lower it: restore as root\\)"; }

subtest attrs_refuse-as t_as
subtest attrs_refuse-thread t_thread
subtest attrs_refuse-deadline t_deadline
subtest attrs_refuse-root t_root
subtest attrs_refuse-nofile t_nofile
subtest attrs_refuse-oom t_oom
