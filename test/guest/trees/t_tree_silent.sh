#!/bin/sh
# Process-level state a restore once got wrong without a word (issue 20),
# each checked by the program itself (test/progs/silent.c) and from /proc:
#  tree_silent-threadfork  a child forked by a thread other than the main
#                      one keeps its thread-local data (__thread variables,
#                      errno, pthread_self(), its FS base, glibc's tid of
#                      it, malloc, rseq) across dump + restore --detach
#  tree_silent-threadfork-dyn  the same, linked dynamically;
#                      -busy: the child spins in user space (dumped
#                      running, not in a syscall); -mt: the child has a
#                      thread of its own, with its own __thread values
#  tree_silent-files   two processes sharing one fd table (clone
#                      CLONE_FILES without CLONE_VM): the dump is refused
#                      naming both pids, the tree runs on, still sharing;
#                      the same when one of them is outside the tree
#  tree_silent-fs      the same for one cwd/root/umask (CLONE_FS)
#  tree_silent-subreaper  a subreaper that set its flag after forking its
#                      child: after the restore the child forks and exits,
#                      the grandchild is reparented to the subreaper, which
#                      reaps it and finishes
#  tree_silent-subreaper-pre  the same, the grandchild forked before the
#                      subreaper set its flag (and so before the dump)
#  tree_silent-subreaper-attached  the same restored without --detach
#  tree_silent-memfd   a memfd's mode (fchmod 0640) and owner (fchown)
#  tree_silent-pty     a pty whose slave was chown'ed 1234:5, mode 0620
# timeout: 600
. /imgcr/guest/lib.sh
require_modules

# start MODE [PROG]: PROG (silent) MODE >> out in ./MODE; $root (and $kid)
start() {
	mkdir "$1${2:+-$2}" && cd "$1${2:+-$2}" || fail "mkdir $1"
	case "${2:-silent}" in silent*) _prog=${2:-silent} ;; *) _prog=silent ;; esac
	$_prog "$1" >> out 2> err </dev/null &
	root=$!
	track $root
	wait_line out '^ready' 20 || fail "silent $1 did not start: $(cat out err | tr '\n' '|')"
	kid=$(sed -n 's/^child \([0-9][0-9]*\)$/\1/p' out)
	[ -n "$kid" ] && track $kid
	:
}

# dump_restore PID...: dump the tree of $root, restore it --detach, wait
# until every PID is back asleep
dump_restore() {
	imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
	wait_dumped_gone "$@"
	imgcr restore -D d --detach > r.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
	wait_tasks_restored "$@"
}

# verdicts N: N "silent PASS" lines and no FAIL line in out
verdicts() {
	n=0
	until [ "$(grep -c '^silent ' out)" -ge "$1" ]; do
		n=$((n + 1))
		[ $n -lt 1000 ] || fail "no verdict: $(tail -n 3 out | tr '\n' '|') $(tasks_now)"
		usleep 20000
	done
	grep '^FAIL' out > fails.txt
	[ -s fails.txt ] && fail "inside: $(head -n 4 fails.txt | tr '\n' '|')"
	[ "$(grep -c '^silent PASS' out)" = "$1" ] || fail "verdicts: $(grep '^silent' out | tr '\n' '|')"
}

# tasks_now: state, ppid and kernel stack of the tasks of the test
tasks_now() {
	for p in $PIDS $(sed -n 's/^grandchild pid //p' out); do
		[ -e /proc/$p ] || continue
		echo "[$p $(state $p) ppid $(stat_field $p 2) $(head -n 3 /proc/$p/stack 2>/dev/null | sed 's/^.*\] //' | tr '\n' ' ')]"
	done | tr '\n' ' '
}

# status_of PID: the lines of /proc/PID/status the tests compare (the
# root's parent is init after restore --detach: no PPid; a busy child may
# be seen in its SIGUSR2 handler, SIGUSR2 blocked: no SigBlk with BUSY=1)
status_of() {
	grep -E "^(Tgid|Pid|$([ $1 = $root ] || echo 'PPid|')Threads|Uid|Gid|$([ "${BUSY:-}" = 1 ] || echo 'SigBlk|')SigCgt|NoNewPrivs|Seccomp):" /proc/$1/status | tr -s '\t ' ' ' | tr '\n' ' '
}

# threadfork [MODE [PROG]]: MODE threadfork (the child sleeps between its
# rounds), threadfork-busy (it spins in user space) or threadfork-mt (it
# has a thread of its own); PROG silent, or silentdyn (linked dynamically)
threadfork() {
	start ${1:-threadfork} ${2:-}
	wait_line out '^child looping' 20 || fail "the child does not loop: $(cat out | tr '\n' '|')"
	kid=$(sed -n 's/^child \([0-9][0-9]*\) fs .*/\1/p' out)
	track $kid
	grep -q FAIL out && fail "before the dump: $(grep FAIL out | head -n 2 | tr '\n' '|')"
	[ "$(stat_field $kid 2)" = $root ] || fail "child $kid's ppid $(stat_field $kid 2)"
	[ "$(sed -n 's/^Threads:[[:space:]]*//p' /proc/$root/status)" = 2 ] || fail "root has not 2 threads"
	sr=$(status_of $root)
	sk=$(status_of $kid)
	if [ "${1:-}" = threadfork-busy ]; then
		# running, not asleep: back once it is the program again
		imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
		wait_dumped_gone $root $kid
		imgcr restore -D d --detach > r.out 2> restore.err || fail "restore --detach: $(cat restore.err)"
		wait_tasks_restored $root
		n=0
		until [ "$(readlink /proc/$kid/exe)" = "$(readlink /proc/$root/exe)" ]; do
			n=$((n + 1))
			[ $n -lt 1500 ] || fail "child $kid not restored$(rerr)"
			usleep 20000
		done
	else
		dump_restore $root $kid
	fi
	[ "$(status_of $root)" = "$sr" ] || fail "root's status: $(status_of $root), was $sr"
	[ "$(status_of $kid)" = "$sk" ] || fail "child's status: $(status_of $kid), was $sk"
	c=$(grep -c '^child round' out)
	kill -USR1 $kid
	wait_line out '^parent done' 60 || fail "the parent did not finish: $(tail -n 2 out | tr '\n' '|')"
	verdicts 2
	wait_gone $root 10 || fail "the parent did not exit"
	pass "$(grep '^child rounds' out)"
}

# shared FLAG WHAT: the refusals of a table shared inside and across the tree
shared() {
	start $1
	b=$(cat /proc/$root/stat)
	imgcr dump -t $root -D d 2> dump.err && fail "dump of two processes sharing $2 succeeded"
	grep -q "pid $kid and pid $root share $2" dump.err || grep -q "pid $root and pid $kid share $2" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	msg=$(head -n 1 dump.err)
	[ -d d ] && [ -e d/tree ] && fail "a tree file was written"
	# the parent outside the tree: the child alone
	imgcr dump -t $kid -D d2 2> dump2.err && fail "dump of a child sharing $2 with its parent succeeded"
	grep -q "pid $kid and pid $root share $2" dump2.err ||
		fail "message (parent outside the tree): $(tr '\n' '|' < dump2.err)"
	for p in $root $kid; do
		left_running $p || fail "task $p left in state '$(state $p)'"
	done
	kill -USR1 $root
	verdicts 1
	pass "$msg"
}
files() { shared files "one fd table"; }
fs() { shared fs "one cwd, root and umask"; }

# subreaper [MODE [attached]]: subreaper (the grandchild forked after the
# restore) or subreaper-pre (forked before the dump, when the subreaper set
# its flag); attached: restored without --detach (imgcr stays its parent)
subreaper() {
	start ${1:-subreaper} ${2:-}
	if [ "${1:-}" = subreaper-pre ]; then
		g=$(child_of $kid)
		[ -n "$g" ] && track $g
		dump_restore $root $kid $g
	elif [ "${2:-}" = attached ]; then
		imgcr dump -t $root -D d 2> dump.err || fail "dump: $(cat dump.err)"
		wait_dumped_gone $root $kid
		imgcr restore -D d > r.out 2> restore.err &
		track $!
		wait_tasks_restored $root $kid
	else
		dump_restore $root $kid
	fi
	[ "$(stat_field $kid 2)" = $root ] || fail "child $kid's ppid $(stat_field $kid 2)"
	kill -USR1 $root
	verdicts 1
	wait_gone $root 10 || fail "the subreaper did not finish"
	g=$(sed -n 's/^grandchild \([0-9]*\) ppid \([0-9]*\)$/\2/p' out)
	[ "$g" = $root ] || fail "the grandchild's ppid $g, want $root"
	pass "$(grep '^grandchild [0-9]* ppid' out)"
}

memfd() {
	start memfd
	fd=$(sed -n 's/^fd //p' out)
	b=$(stat -L -c '%a %u %g %s' /proc/$root/fd/$fd)
	[ "$b" = "640 1234 4321 4" ] || fail "setup: $b"
	dump_restore $root
	imgcr show d > show.txt || fail "imgcr show failed"
	grep -q "fd $fd: memfd modes .* mode 0640 owner 1234:4321 " show.txt ||
		fail "imgcr show: $(grep memfd show.txt | tr '\n' '|')"
	a=$(stat -L -c '%a %u %g %s' /proc/$root/fd/$fd)
	[ "$a" = "$b" ] || fail "memfd mode/owner/size $a, was $b"
	kill -USR1 $root
	verdicts 1
	pass "$a"
}

pty() {
	grep -q ' /dev/pts devpts ' /proc/mounts || { mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; } ||
		fail "cannot mount devpts"
	start pty
	set -- $(sed -n 's/^master \([0-9]*\) slave \([0-9]*\)$/\1 \2/p' out)
	b=$(stat -L -c '%a %u %g' /proc/$root/fd/$2)
	[ "$b" = "620 1234 5" ] || fail "setup: $b"
	dump_restore $root
	imgcr show d > show.txt || fail "imgcr show failed"
	grep -q "slave node mode 0620 owner 1234:5" show.txt ||
		fail "imgcr show: $(grep -A3 '^pty' show.txt | tr '\n' '|')"
	a=$(stat -L -c '%a %u %g' /proc/$root/fd/$2)
	[ "$a" = "$b" ] || fail "the slave's mode/owner $a, was $b ($(readlink /proc/$root/fd/$2))"
	kill -USR1 $root
	verdicts 1
	pass "$a"
}

subtest tree_silent-threadfork threadfork
threadfork_dyn() { threadfork threadfork silentdyn; }
threadfork_busy() { BUSY=1; threadfork threadfork-busy; }
threadfork_mt() { threadfork threadfork-mt; }
subtest tree_silent-threadfork-busy threadfork_busy
subtest tree_silent-threadfork-mt threadfork_mt
subtest tree_silent-threadfork-dyn threadfork_dyn
subtest tree_silent-files files
subtest tree_silent-fs fs
subtest tree_silent-subreaper subreaper
subreaper_pre() { subreaper subreaper-pre; }
subtest tree_silent-subreaper-pre subreaper_pre
subreaper_attached() { subreaper subreaper attached; }
subtest tree_silent-subreaper-attached subreaper_attached
subtest tree_silent-memfd memfd
subtest tree_silent-pty pty
