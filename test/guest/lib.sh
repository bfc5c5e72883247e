# Helpers for the imgcr guest tests (busybox ash).  Sourced by every t_*.sh,
# which the runner starts in a fresh, empty temporary directory.
#
# Result protocol (parsed by the host): exactly one line per test or sub-test
#   RESULT <name> PASS [note]
#   RESULT <name> FAIL <reason>
# plus optional "INFO <name>: ..." lines that the host echoes.

set -u

# Test name: t_counter.sh -> counter.  Sub-tests override T in a subshell.
T=${0##*/}
T=${T%.sh}
T=${T#t_}

pass() { echo "RESULT $T PASS${*:+ $*}"; }
# fail ends the (sub)shell: a test stops at its first failed assertion.
fail() { echo "RESULT $T FAIL $*"; exit 1; }
info() { echo "INFO $T: $*"; }

# Every process started by a test is tracked and SIGKILLed on exit, so a
# failing test never leaves a stopped or restored task behind.  (The runner
# also sweeps leftovers, e.g. after a timeout.)
PIDS=""
track() { PIDS="$PIDS $1"; }
cleanup() {
	for p in $PIDS; do
		kill -9 "$p" 2>/dev/null
	done
}
trap cleanup EXIT

# A missing module makes every module test fail, never pass vacuously.
require_modules() {
	for m in img_dump binfmt_img; do
		grep -q "^$m " /proc/modules || fail "module $m is not loaded"
	done
}

# state PID: the one-letter state from /proc/PID/stat ("" if gone).  The
# comm field may contain spaces, so cut after the last ')'.
state() {
	s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo ""; return; }
	s=${s##*) }
	echo "${s%% *}"
}

# left_running PID: true once PID runs again (S, R or D) within 2 s, as a
# refused or --leave-running dump leaves it: the task it detached is
# runnable (R) for a moment before it sleeps again
left_running() {
	_n=100
	while [ "$_n" -gt 0 ]; do
		case "$(state "$1")" in S|R|D) return 0 ;; esac
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# wait_state PID STATES [TIMEOUT_S]: wait until the state is one of the
# letters in STATES (e.g. T, or S).  Polls every 20 ms.
wait_state() {
	_n=$(( ${3:-10} * 50 ))
	while [ "$_n" -gt 0 ]; do
		case "$(state "$1")" in
		"") return 1 ;;
		[$2]) return 0 ;;
		esac
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# stop_task PID: SIGSTOP and wait until the kernel reports it stopped.
stop_task() {
	kill -STOP "$1" || fail "kill -STOP $1 failed"
	wait_state "$1" T 10 || fail "task $1 did not stop (state '$(state "$1")')"
}

# wait_line FILE REGEX [TIMEOUT_S]: wait until FILE has a line matching REGEX.
wait_line() {
	_n=$(( ${3:-10} * 50 ))
	while [ "$_n" -gt 0 ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# wait_gone PID [TIMEOUT_S]: wait until /proc/PID disappears (or is a zombie).
wait_gone() {
	_n=$(( ${2:-10} * 50 ))
	while [ "$_n" -gt 0 ]; do
		case "$(state "$1")" in "" | Z) return 0 ;; esac
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# wait_exit PID [TIMEOUT_S]: wait for a background child of this shell with
# a deadline, so a hung restored process cannot hang the test; sets RC to its
# exit status or "timeout".  (Not usable inside $(...): a subshell cannot
# wait for its parent's children.)
wait_exit() {
	if wait_gone "$1" "${2:-30}"; then
		wait "$1"
		RC=$?
	else
		RC=timeout
	fi
}

# dump PID FILE: checkpoint through /proc/PID/dump exactly as a user would.
dump() {
	cat "/proc/$1/dump" > "$2" 2> dump.err ||
		fail "cat /proc/$1/dump failed: $(cat dump.err)"
	[ -s "$2" ] || fail "dump of $1 is empty"
}

# tree_fields FILE: the tree file FILE (DIR/tree, version 3: "NAME
# key=value ...") without the keys: each record's values in the order imgcr
# writes them, which is the order of the positional version 2 records
# (imgcr-image(5)), for tests that pick a field by its position.
tree_fields() { sed 's/ [a-z]*=/ /g' "$1"; }

# kill9 PID: kill and reap a (possibly stopped) child.
kill9() {
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	wait_gone "$1" 5 || fail "task $1 survived SIGKILL"
}

size_of() { stat -c %s "$1"; }

# wait_size FILE BYTES [TIMEOUT_S]: wait until FILE (which may not exist
# yet) holds at least BYTES bytes.  Polls every 20 ms.
wait_size() {
	_n=$(( ${3:-20} * 50 ))
	while [ "$(size_of "$1" 2>/dev/null || echo 0)" -lt "$2" ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || return 1
		usleep 20000
	done
}

# is_elf FILE: the file starts with the ELF magic.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

now_ms() { nowms; }

# export_file NAME FILE: send FILE to the host over the second serial port
# (ttyS1, a plain file on the host) as gzip+base64 between marker lines, so
# host tools (readelf, gdb) can inspect guest-made images.
export_file() {
	{
		echo "IMGCR-FILE-BEGIN $1"
		gzip -c "$2" | base64
		echo "IMGCR-FILE-END $1"
	} > /dev/ttyS1
}

# subtest NAME FUNC: run FUNC in a subshell as its own test NAME (own PID
# tracking and cleanup) and guarantee exactly one RESULT line for it, even
# if FUNC dies without reporting (e.g. a set -u error).
subtest() {
	_st=$(cut -d' ' -f1 /proc/uptime)
	(
		T=$1
		PIDS=""
		trap cleanup EXIT
		$2
	) > "sub.$1.out" 2>&1
	_rc=$?
	cat "sub.$1.out"
	grep -q "^RESULT $1 " "sub.$1.out" ||
		echo "RESULT $1 FAIL ended without a result (exit $_rc)"
	# how long it took (guest seconds), as IMGCR-TEST-END for whole tests
	echo "IMGCR-SUBTEST-END $1 $(awk -v t="$_st" '{ printf "%.1f", $1 - t }' /proc/uptime)s"
}

# running_on PID...: after a refused dump, each runs on (not stopped, not dead)
running_on() {
	for _p in "$@"; do
		case "$(state $_p)" in
		t | T) fail "task $_p left stopped" ;;
		"") fail "task $_p died" ;;
		esac
	done
}

# dump_refused PID WHAT RE [PID...]: "imgcr dump -t PID -D d" fails ("the
# dump WHAT succeeded" otherwise) with a message (dump.err) matching RE
# (grep), and PID and the other PIDs run on (running_on)
dump_refused() {
	_dp=$1 _dw=$2 _dre=$3
	shift 3
	imgcr dump -t $_dp -D d 2> dump.err && fail "the dump $_dw succeeded"
	grep -q -- "$_dre" dump.err || fail "message: $(tr '\n' '|' < dump.err)"
	running_on $_dp "$@"
}

# outer INNER: our pid of the task whose pid is INNER in a child PID
# namespace (the first in /proc whose NSpid has two numbers or more and
# ends with INNER; one grep for all, not a sed per process: a waiting loop
# calls it often)
outer() {
	grep -H '^NSpid:' /proc/[0-9]*/status 2>/dev/null |
		awk -v v="$1" 'NF > 2 && $NF == v { sub("^/proc/", "", $1); sub("/.*", "", $1); print $1; exit }'
}

# ns_id FIELD PID: NSpid, NSpgid or NSsid of PID: its number in its own PID namespace
ns_id() { sed -n "s/^$1:.*[[:space:]]//p" /proc/$2/status 2>/dev/null; }

# parts [--turns] FUNC...: run the independent parts FUNC... of a test at
# the same time, each in a subshell of its own (own PID tracking and
# cleanup) in its own directory part.FUNC (its files apart from the
# others'); wait for all of them, print their output in order, and fail
# with the first failed part's message (a part that ends without returning
# 0 is one).  For parts that mostly sleep or wait: a test takes as long as
# its longest part.  With --turns each part starts when the one before it
# has called next_part (say, once its process is restored) or has ended:
# the steps before that point never overlap another part's (or its
# subshell is gone, even without its exit trap).
parts() {
	_pp= _pprev= _pturns= _pdir=$PWD
	[ "$1" = --turns ] && { _pturns=1; shift; }
	for _pf in "$@"; do
		if [ -n "$_pturns" ] && [ -n "$_pprev" ]; then
			until [ -e "part.$_pprev.next" ] || [ -e "part.$_pprev.end" ]; do
				case "$(state $_plast)" in '' | Z) break ;; esac
				usleep 50000
			done
		fi
		_pprev=$_pf
		mkdir -p "part.$_pf"
		(
			_ppart=$_pdir/part.$_pf
			cd "$_ppart" || exit 1
			PIDS=""
			trap "cleanup; : > '$_ppart.end'" EXIT
			$_pf && echo "PART-OK $_pf"
		) > "part.$_pf.out" 2>&1 &
		_plast=$!
		_pp="$_pp $_plast"
	done
	for _p in $_pp; do
		wait "$_p"
	done
	_pbad=
	for _pf in "$@"; do
		grep -v '^RESULT \|^PART-OK ' "part.$_pf.out"
		grep -q "^PART-OK $_pf\$" "part.$_pf.out" || _pbad=${_pbad:-$_pf}
	done
	[ -z "$_pbad" ] || fail "$_pbad: $(sed -n "s/^RESULT [^ ]* FAIL //p" "part.$_pbad.out" |
		head -n 1)$(grep -q "^RESULT " "part.$_pbad.out" || echo "ended without a result")"
}
# next_part: in a part of parts --turns, let the next part start (an
# absolute path: the part may have changed its directory)
next_part() { : > "$_ppart.next"; }

# wait_restored PID [TIMEOUT_S] [CALLER]: wait until a backgrounded
# "./image" has really been exec'd (its /proc/PID/exe no longer is CALLER,
# default busybox -- the forked shell) and is asleep (state S), i.e. the
# restored program is back in its sleeping syscall.
wait_restored() {
	_n=$(( ${2:-30} * 50 ))
	while [ "$_n" -gt 0 ]; do
		_e=$(readlink "/proc/$1/exe" 2>/dev/null)
		case "$(state "$1"),$_e" in
		,* | Z,*) return 1 ;;
		S,*/"${3:-busybox}") ;;
		S,?*) return 0 ;;
		esac
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

# rerr: the restore's stderr (tests start "./x.img 2> restore.err &"),
# formatted for appending to a failure reason.
rerr() {
	[ -s restore.err ] && printf ' [stderr: %s]' "$(head -c 200 restore.err | tr '\n' '|')"
}

# control_restore IMAGE OUT: the control case of the refusal tests -- an
# intact pauser image restores, wakes on SIGUSR1 and says "woken ok" as the
# process that executed it (output appended to OUT).
control_restore() {
	chmod +x "$1"
	tryexec "./$1" >> "$2" 2> restore.err &
	_rp=$!
	track $_rp
	wait_restored $_rp 30 tryexec || fail "control: intact image did not restore: $(tail -n1 "$2")$(rerr)"
	kill -USR1 $_rp
	wait_exit $_rp 10
	[ "$RC" = 0 ] || fail "control: restored pauser exit $RC$(rerr)"
	grep -q "^woken ok pid=$_rp" "$2" || fail "control: no 'woken ok'"
}

# tryexec_expect IMAGE: run "tryexec IMAGE" (with a deadline, in case the
# image is wrongly accepted and then sleeps) and print "" on the expected
# outcome -- execve failed, the caller survived and said so -- or a reason.
tryexec_expect() {
	chmod +x "$1"
	timeout -s KILL 10 tryexec "./$1" > te.out 2>&1
	_rc=$?
	if [ "$_rc" = 2 ] && grep -q '^tryexec: execve failed: E' te.out; then
		sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' te.out > te.errno
		echo ""
	else
		echo "rc=$_rc($(head -c 60 te.out | tr '\n' ' '))"
	fi
}

# dmesg_mark / dmesg_since: the kernel log lines written since the mark
# (the log is never cleared: the host checks all of it at the end).
# dmesg_mark / dmesg_since: the kernel log after a marker written into it
# (a line count would go wrong once the ring buffer is full and wraps).
dmesg_mark() {
	DMESG_MARK="imgcr-test-mark-$$-$(cat /proc/uptime | tr -d ' .')"
	echo "$DMESG_MARK" > /dev/kmsg
}
dmesg_since() { dmesg | sed -n "/$DMESG_MARK/,\$p" | tail -n +2; }

# KERNEL_REPORT_RE: a kernel report in the log (the same expression as
# test/lib-host.sh's, which checks every guest's whole log): BUG, WARNING,
# Oops, GPF, KFENCE, SLUB debugging, page poisoning, kmemleak, list and
# refcount checks.  User-space faults ("traps: NAME[PID] general
# protection fault ip:...") are filtered out by the caller.
KERNEL_REPORT_RE='BUG|WARNING|Oops|general protection|KFENCE:|Redzone|Poison overwritten|Object padding|Padding overwritten|Freepointer|pagealloc: memory corruption|unreferenced object|kmemleak:.*(leak|suspected)|refcount_t|list_(add|del) corruption|corrupted stack end|stack-protector'

# ensure_modules: load whichever module is missing (tests that rmmod call
# it from their EXIT trap, so later tests always have both).
ensure_modules() {
	for _m in img_dump binfmt_img; do
		grep -q "^$_m " /proc/modules || insmod /imgcr/mod/$_m.ko
	done
}

# wait_recreated PID: after a backgrounded "imgcr restore", wait until PID
# exists again (up to 60 s); fails the test if it does not.
wait_recreated() {
	_wn=0
	while [ -z "$(state $1)" ]; do
		_wn=$((_wn + 1))
		[ $_wn -lt 3000 ] || fail "task $1 not recreated in 60 s$(rerr)"
		usleep 20000
	done
}

# wait_tasks_restored PID...: after a backgrounded "imgcr restore", wait
# until every PID is recreated (wait_recreated) and back in its sleeping
# syscall as the restored program (wait_restored, 60 s, caller imgcr).
wait_tasks_restored() {
	for _wp in "$@"; do
		wait_recreated $_wp
		wait_restored $_wp 60 imgcr || fail "task $_wp not restored (state '$(state $_wp)')$(rerr)"
	done
}

# wait_dumped_gone PID...: after a dump that killed its tree, wait until
# none of the PIDs is in /proc any more (up to 10 s each).
wait_dumped_gone() {
	for _wp in "$@"; do
		_wn=0
		while [ -e /proc/$_wp ]; do
			_wn=$((_wn + 1))
			[ $_wn -lt 500 ] || fail "task $_wp still there after the dump ($(state $_wp))"
			usleep 20000
		done
	done
}

# stat_field PID N: field N of /proc/PID/stat counting from the state (1)
stat_field() {
	s=$(cat /proc/$1/stat 2>/dev/null) || return
	s=${s##*) }
	echo "$s" | cut -d' ' -f"$2"
}

# child_of PID: wait (10 s at most) until PID has a child and print the
# first one (/proc/PID/task/PID/children)
child_of() {
	_k=0
	while [ -z "$(cat /proc/$1/task/$1/children 2>/dev/null)" ] && [ $_k -lt 500 ]; do
		usleep 20000
		_k=$((_k + 1))
	done
	set -- $(cat /proc/$1/task/$1/children 2>/dev/null)
	echo "${1:-}"
}

# inside_ok PROG [FILE]: the restored program's own verdict in FILE
# (default out): no FAIL line and a "PROG PASS" line; and imgcr restore's
# exit status (RC, from wait_exit) 0
inside_ok() {
	grep '^FAIL' "${2:-out}" > fails.txt
	[ -s fails.txt ] && fail "inside: $(tr '\n' '|' < fails.txt)"
	grep -q "^$1 PASS" "${2:-out}" ||
		fail "no '$1 PASS' (imgcr restore exit ${RC:-?}): $(tail -n 3 "${2:-out}" | tr '\n' '|')$(rerr)"
	[ "$RC" = 0 ] || fail "imgcr restore exit $RC$(rerr)"
}
