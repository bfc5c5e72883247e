#!/bin/sh
# Hold-out tests of issue 10 (process attributes), written from README.md
# alone: bbattrs sets resource limits (soft != hard, RLIM_INFINITY),
# a negative oom_score_adj, parent-death signals (per thread), the
# child-subreaper flag (with a child and a grandchild), PR_SET_THP_DISABLE
# and membarrier registrations; imgcr dump, imgcr restore; then the
# program compares from inside (PASS/FAIL per item) and the test compares
# /proc/PID/limits, oom_score_adj, status and cwd/root links from outside,
# of the child and grandchild too (the child has its own oom_score_adj and
# soft RLIMIT_NOFILE, and a higher hard RLIMIT_MSGQUEUE than its parent).
#   bb_attrs-single   one thread
#   bb_attrs-mt       four threads, a removed cwd, SIGSTOPped at the dump:
#                     stays stopped (every thread) until SIGCONT
#   bb_attrs-low      RLIMIT_NOFILE 10/10 (the restore itself needs more
#                     fds), oom_score_adj -1000, two threads
#   bb_attrs-lowkid   the child has RLIMIT_NOFILE 1/1 (as sshd's rlimit
#                     sandbox gives its child) and its own oom_score_adj
#   bb_attrs-detach0  restored with --detach, the root without a
#                     parent-death signal: it runs on once imgcr has exited
#   bb_attrs-detach   the same with the root's parent-death signal SIGHUP
#                     (its parent at the dump still runs): --detach is
#                     refused (imgcr's exit would send the signal), with
#                     no task left; restored without it, all comes back
#   bb_attrs-chroot   under chroot (called by the program itself, its
#                     executable outside the jail), cwd inside it
# timeout: 420
. /imgcr/guest/lib.sh
require_modules

# snap PID FILE: what the outside sees of PID's attributes
snap() {
	{
		cat /proc/$1/limits
		echo "oom_score_adj $(cat /proc/$1/oom_score_adj)"
		grep -E '^(THP_enabled|Threads|SigBlk|SigIgn|SigCgt|NoNewPrivs):' /proc/$1/status
		echo "cwd $(readlink /proc/$1/cwd)"
		echo "root $(readlink /proc/$1/root)"
		echo "tasks $(ls /proc/$1/task | sort -n | tr '\n' ' ')"
	} > "$2"
}

# wait_back PID [STATES]: PID exists again and runs bbattrs (not imgcr),
# in one of STATES (default S); fails at once if imgcr restore ended
wait_back() {
	_n=0
	while :; do
		case "$(state $rpid)" in "" | Z) fail "imgcr restore ended before task $1 was back$(rerr)" ;; esac
		case "$(state $1),$(readlink /proc/$1/exe 2>/dev/null)" in
		[${2:-S}],*/bbattrs) return 0 ;;
		esac
		_n=$((_n + 1))
		[ $_n -lt 3000 ] || fail "task $1 not restored in 60 s (state '$(state $1)', exe $(readlink /proc/$1/exe))$(rerr)"
		usleep 20000
	done
}

# one_case STOP ARGS...: the whole cycle for "bbattrs ARGS"; STOP=1 stops
# the tree before the dump and checks it stays stopped after the restore.
one_case() {
	stop=$1
	shift
	bbattrs "$@" > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready ' 30 || fail "bbattrs did not get ready: $(tail -n 3 out | tr '\n' '|')"
	set -- $(grep '^ready ' out)
	mid=$4
	grand=$6
	track $mid
	track $grand
	[ -n "${CWD_DIR:-}" ] && { rmdir "$CWD_DIR" || fail "rmdir $CWD_DIR"; }
	if [ "$stop" = 1 ]; then
		stop_task $pid
		for t in /proc/$pid/task/*; do
			wait_state "$pid/task/${t##*/}" T 10 || fail "thread ${t##*/} did not stop"
		done
	fi
	snap $pid before.txt
	snap $mid before-mid.txt
	snap $grand before-grand.txt
	imgcr dump -t $pid -D d > dump.log 2>&1 || fail "imgcr dump: $(tr '\n' '|' < dump.log)"
	wait_dumped_gone $pid $mid $grand
	if [ -n "${DETACH:-}" ] && [ "${PDEATH:-}" != none ]; then
		# imgcr's exit would send the root its parent-death signal: refused
		imgcr restore --detach -D d > refused.out 2>&1 &&
			fail "restore --detach of a root with a parent-death signal succeeded"
		grep -q "task $pid has a parent-death signal .*with --detach, imgcr's exit would send it" refused.out ||
			fail "refusal message: $(tr '\n' '|' < refused.out)"
		[ -d /proc/$pid ] && fail "task $pid exists after the refused restore"
		DETACH=
	fi
	imgcr restore ${DETACH:+--detach} -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	if [ -n "${DETACH:-}" ]; then
		wait_exit $rpid 60
		[ "$RC" = 0 ] || fail "imgcr restore --detach exit $RC$(rerr)"
		sleep 1
		[ "$(state $pid)" = S ] ||
			fail "the restored root is '$(state $pid)' 1 s after imgcr restore --detach exited, its child $mid '$(state $mid)' (the root's parent-death signal at the dump: ${PDEATH:-SIGHUP}; its parent then, this shell, still runs)$(rerr)"
		rpid=$pid	# wait_back: the task must stay
	fi
	if [ "$stop" = 1 ]; then
		wait_back $pid T
		wait_state $mid S 30 || fail "mid $mid not back ($(state $mid))$(rerr)"
		sleep 1
		for t in /proc/$pid/task/*; do
			[ "$(state "$pid/task/${t##*/}")" = T ] ||
				fail "thread ${t##*/} of the stopped task is '$(state "$pid/task/${t##*/}")' 1 s after the restore, not T"
		done
		grep -q '^checking' out && fail "the stopped task ran its checks before SIGCONT"
	else
		wait_back $pid S
	fi
	wait_recreated $mid
	wait_recreated $grand
	# The state check (IMGCR_STATE_HOOK) froze the restored tree once more:
	# a task it interrupted in sigsuspend/sigwaitinfo shows its own mask
	# until it is back in the call; give it up to 5 s to get there.
	_i=0
	while :; do
		snap $pid after.txt
		snap $mid after-mid.txt
		snap $grand after-grand.txt
		cmp -s before.txt after.txt && cmp -s before-mid.txt after-mid.txt &&
			cmp -s before-grand.txt after-grand.txt && break
		_i=$((_i + 1))
		[ $_i -lt 50 ] || break
		usleep 100000
	done
	for w in "" -mid -grand; do
		if ! cmp -s before$w.txt after$w.txt; then
			diff before$w.txt after$w.txt > diff.txt
			fail "outside view (before$w.txt, after$w.txt) differs after the restore: $(grep '^[-+][^-+]' diff.txt | head -n 8 | tr '\n' '|')"
		fi
	done
	grep -q '^oom_score_adj 600$' after-mid.txt || fail "mid: $(grep oom after-mid.txt), set 600"
	if [ "$stop" = 1 ]; then
		kill -CONT $pid
		for t in /proc/$pid/task/*; do
			wait_state "$pid/task/${t##*/}" S 10 ||
				fail "thread ${t##*/} did not continue on SIGCONT ($(state "$pid/task/${t##*/}"))"
		done
	fi
	kill -USR1 $pid
	if [ -n "${DETACH:-}" ]; then
		wait_gone $pid 60
		RC=0
	else
		wait_exit $rpid 60
	fi
	inside_ok bbattrs
	pass "$(grep -c '^ok ' out) checks inside, limits/oom/status/cwd/root the same outside"
}

single() { mkdir $T && cd $T && one_case 0; }
mt() {
	mkdir $T && cd $T || fail "mkdir $T"
	CWD_DIR=$PWD/gone-cwd
	mkdir "$CWD_DIR"
	one_case 1 -t 4 -c "$CWD_DIR"
}
detach() { mkdir $T && cd $T && DETACH=1 one_case 0; }
detach0() { mkdir $T && cd $T && PDEATH=none DETACH=1 one_case 0 -P 0; }
chrooted() {
	mkdir $T && cd $T || fail "mkdir $T"
	mkdir -p jail/sub
	echo bb-marker > jail/marker
	one_case 0 -r "$PWD/jail"
}
low() { mkdir $T && cd $T && one_case 0 -t 2 -n 10 -o -1000; }
lowkid() { mkdir $T && cd $T && one_case 0 -m 1; }
subtest bb_attrs-single single
subtest bb_attrs-mt mt
subtest bb_attrs-low low
subtest bb_attrs-lowkid lowkid
subtest bb_attrs-detach0 detach0
subtest bb_attrs-detach detach
subtest bb_attrs-chroot chrooted
