#!/bin/sh
# An ordinary user (uid 1000) restores, with --pidns, a task of its own
# whose attributes it could set itself (test/progs/attrs.c, mode user):
# RLIMIT_NOFILE 200/400, oom_score_adj 250, nice 5, SCHED_IDLE,
# no_new_privs, a membarrier registration, a deleted cwd.  The same from
# outside before the dump and after the restore (/proc/PID/limits,
# oom_score_adj, status, stat, cwd link), and the program's own checks.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules
chmod 777 .
# Debian kernels gate unprivileged user namespaces behind this sysctl.
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 > /proc/sys/kernel/unprivileged_userns_clone

# snap PID FILE: what the outside sees of PID's attributes
snap() {
	_s=$(cat /proc/$1/stat) || fail "no /proc/$1/stat"
	_s=${_s##*) }
	# shellcheck disable=SC2086
	set -- "$1" "$2" $_s
	{
		cat /proc/$1/limits
		echo "oom_score_adj $(cat /proc/$1/oom_score_adj)"
		grep -E '^(NoNewPrivs|Cpus_allowed_list|Uid):' /proc/$1/status
		echo "nice ${19} rt_priority ${40} policy ${41}"
		echo "cwd $(readlink /proc/$1/cwd)"
	} > "$2"
	grep -qE '^Max open files +200 +400 ' "$2" && grep -qx 'oom_score_adj 250' "$2" &&
		grep -qx 'nice 5 rt_priority 0 policy 5' "$2" && grep -qE '^NoNewPrivs:.1$' "$2" &&
		grep -qx "cwd $PWD/cwdparent/gone (deleted)" "$2" ||
		fail "$2: $(grep -E '^(Max open|oom|nice|NoNew|cwd)' "$2" | tr '\n' '|')"
}

: > out
chmod 666 out
runas 1000 1000 attrs user "$PWD" > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "attrs did not start: $(tr '\n' '|' < out)"
grep -q BAD out && fail "before the dump: $(grep BAD out | tr '\n' '|')"
snap $pid before
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $pid 10 || fail "task $pid survived the dump"

runas 1000 1000 imgcr restore -D d --pidns > restore.out 2> restore.err &
rpid=$!
track $rpid
# the restored task, seen from outside its PID namespace: comm attrs, asleep
n=0
outer=""
while [ -z "$outer" ]; do
	for c in /proc/[0-9]*/comm; do
		p=${c#/proc/}
		p=${p%/comm}
		[ "$(cat "$c" 2>/dev/null)" = attrs ] && [ "$(state $p)" = S ] &&
			[ "$(readlink /proc/$p/exe)" != "$(command -v imgcr)" ] && outer=$p
	done
	n=$((n + 1))
	[ $n -lt 1500 ] || fail "no restored attrs task after 30 s$(rerr)"
	[ -n "$outer" ] || usleep 20000
done
track $outer
snap $outer after
cmp -s before after || fail "differs from outside: $(diff before after | grep '^[-+][^-+]' | tr '\n' '|')"
touch restored
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep BAD out | tr '\n' '|')$(rerr)"
grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
pass "uid 1000 restored its limits, oom_score_adj, nice, SCHED_IDLE, no_new_privs, membarrier and deleted cwd"
