# Helpers for the thread restore tests (sourced after lib.sh by
# t_threads*.sh, t_python_threads.sh and t_xz.sh).

# tids PID: the TIDs of PID's threads, sorted, one per line.
tids() { ls "/proc/$1/task" 2>/dev/null | sort -n; }

# nthreads PID: how many threads PID has (0 if gone).
nthreads() { tids "$1" | wc -l; }

# all_state PID LETTERS: every thread of PID is in one of the states
# LETTERS (e.g. tT for stopped).
all_state() {
	_any=0
	for _t in $(tids "$1"); do
		_any=1
		_s=$(cat "/proc/$1/task/$_t/stat" 2>/dev/null) || return 1
		_s=${_s##*) }
		case "${_s%% *}" in [$2]) ;; *) return 1 ;; esac
	done
	[ "$_any" = 1 ]
}

# stop_all PID: SIGSTOP and wait until every thread is stopped (the dump
# refuses a process with a thread not stopped).
stop_all() {
	kill -STOP "$1" || fail "kill -STOP $1 failed"
	_n=500
	until all_state "$1" tT; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || fail "not every thread of $1 stopped: $(thread_states "$1")"
		usleep 20000
	done
}

# thread_states PID: "TID:STATE ..." for failure messages.
thread_states() {
	for _t in $(tids "$1"); do
		_s=$(cat "/proc/$1/task/$_t/stat" 2>/dev/null)
		_s=${_s##*) }
		printf '%s:%s ' "$_t" "${_s%% *}"
	done
}

# snap_threads PID OUT [FIELDS]: one line per thread, "TID F=V ...",
# sorted, TID written MAIN for the main thread (whose TID a standalone
# restore changes).  FIELDS (default "comm blk"): comm (its
# /proc/PID/task/TID/comm), blk, pnd (SigBlk, SigPnd of its status),
# shd (ShdPnd: the process's), syscall (the number in its syscall file,
# "running" if it runs).
snap_threads() {
	for _t in $(tids "$1"); do
		_d=/proc/$1/task/$_t
		_l=$_t
		[ "$_t" = "$1" ] && _l=MAIN
		for _f in ${3:-comm blk}; do
			case $_f in
			comm) _v=$(cat $_d/comm 2>/dev/null) ;;
			blk) _v=$(sed -n 's/^SigBlk:[[:space:]]*//p' $_d/status 2>/dev/null) ;;
			pnd) _v=$(sed -n 's/^SigPnd:[[:space:]]*//p' $_d/status 2>/dev/null) ;;
			shd) _v=$(sed -n 's/^ShdPnd:[[:space:]]*//p' $_d/status 2>/dev/null) ;;
			syscall) _v=$(cut -d' ' -f1 $_d/syscall 2>/dev/null) ;;
			esac
			_l="$_l $_f=$_v"
		done
		echo "$_l"
	done | sort > "$2"
}

# wait_tids PID TIDS [TIMEOUT_S]: wait until PID has exactly the threads
# PID and TIDS (a space separated list).  On failure WAIT_WHY says after
# how long and in which state of PID it gave up.
wait_tids() {
	_want=$(echo "$1 $2" | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')
	_t0=$(nowms)
	_end=$((_t0 + ${3:-30} * 1000))
	_gone=0
	while :; do
		[ "$(tids "$1" | tr '\n' ' ')" = "$_want" ] && return 0
		# gone or a zombie twice in a row (one read of /proc can miss)
		case "$(state "$1")" in
		"" | Z) _gone=$((_gone + 1)) ;;
		*) _gone=0 ;;
		esac
		_now=$(nowms)
		if [ "$_gone" -ge 2 ] || [ "$_now" -ge "$_end" ]; then
			WAIT_WHY="after $(((_now - _t0) / 1000)) s, state '$(state "$1")'"
			return 1
		fi
		usleep 20000
	done
}

# tid_diff PID TIDS: what PID's thread list lacks and has too many,
# compared with PID and TIDS (for a short failure message).
tid_diff() {
	_have=" $(tids "$1" | tr '\n' ' ')"
	_m="" _x=""
	for _t in $1 $2; do
		case "$_have" in *" $_t "*) ;; *) _m="$_m $_t" ;; esac
	done
	for _t in $_have; do
		case " $1 $2 " in *" $_t "*) ;; *) _x="$_x $_t" ;; esac
	done
	echo "$(nthreads "$1") threads, missing:${_m:- none}, extra:${_x:- none}"
}

# wait_exists PID [TIMEOUT_S]: wait until PID exists (e.g. a task that
# imgcr restore is about to create).
wait_exists() {
	_n=$(( ${2:-30} * 50 ))
	until [ -d "/proc/$1" ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || return 1
		usleep 20000
	done
}

# tids_in_use TIDS: print the TIDs of the list that some task still has
# (/proc/TID exists for any thread, listed or not).
tids_in_use() {
	for _t in $1; do
		[ -d "/proc/$_t" ] && printf '%s ' "$_t"
	done
}

# diff_snaps BEFORE AFTER: "" if equal, else the differing lines.
diff_snaps() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | grep '^[-+][^-+]' | tr '\n' '|'
}

# count_lines FILE REGEX: matching lines (0 if none).
count_lines() {
	_c=$(grep -c -- "$2" "$1" 2>/dev/null)
	echo "${_c:-0}"
}

# wait_count FILE REGEX N [TIMEOUT_S]: wait until FILE has >= N lines
# matching REGEX.
wait_count() {
	_n=$(( ${4:-30} * 50 ))
	while [ "$(count_lines "$1" "$2")" -lt "$3" ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || return 1
		usleep 20000
	done
}
