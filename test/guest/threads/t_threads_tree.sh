#!/bin/sh
# imgcr dump/restore of trees whose tasks have threads: a shell whose child
# is `threads 4` (main + 4 threads; on SIGUSR1 every thread must answer from
# the TID it started with).  imgcr show lists the threads; root restores
# the tree with the same PIDs and TIDs; uid 1000 restores its own such tree
# with --pidns (the TIDs then live in the new PID namespace, where the
# program checks them itself).
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules
chmod 777 .
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 > /proc/sys/kernel/unprivileged_userns_clone

# start_tree DIR [RUNAS...]: sets ROOT (the shell), TPID (threads), OTIDS.
start_tree() {
	mkdir -p "$1"
	chmod 777 "$1"
	_d=$1
	shift
	"$@" setsid sh -c "threads 4 > $PWD/$_d/out; echo \"rc \$?\" >> $PWD/$_d/out" \
		</dev/null >/dev/null 2>&1 &
	ROOT=$!
	track $ROOT
	wait_line "$_d/out" '^ready$' 30 || fail "threads did not start: $(cat "$_d/out")"
	TPID=$(echo $(cat /proc/$ROOT/task/$ROOT/children))
	track $TPID
	OTIDS=$(sed -n 's/^thread [0-9]* tid //p' "$_d/out" | tr '\n' ' ')
	[ "$(tids $TPID | tr '\n' ' ')" = "$(echo $TPID $OTIDS | tr ' ' '\n' | sort -n | tr '\n' ' ')" ] ||
		fail "threads $TPID has '$(tids $TPID | tr '\n' ' ')', says $OTIDS"
}

# finish DIR PID: release the restored `threads` PID and check its verdict.
finish() {
	kill -USR1 "$2"
	wait_line "$1/out" '^rc ' 30 || fail "restored tree did not finish: $(tail -n 2 "$1/out" | tr '\n' '|')"
	grep -q '^threads ok 4$' "$1/out" || fail "restored threads: $(grep '^threads' "$1/out" | tail -n1)"
	grep -q '^rc 0$' "$1/out" || fail "restored threads: $(tail -n1 "$1/out")"
}

# Root: same PIDs and TIDs.
start_tree a
imgcr dump -t $ROOT -D a/d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $TPID 10 || fail "threads survived the dump"
imgcr show a/d > show.txt 2>&1 || fail "imgcr show: $(tail -n 2 show.txt | tr '\n' '|')"
for t in $OTIDS; do
	grep -qw "$t" show.txt || fail "imgcr show does not list thread $t: $(grep -i thread show.txt | head -n 3 | tr '\n' '|')"
done
tree_fields a/d/tree | grep -q "^thread $TPID " || fail "no thread records for $TPID in the tree file"
imgcr restore -D a/d > r.out 2> r.err &
rpid=$!
track $rpid
wait_exists $TPID 60 && wait_tids $TPID "$OTIDS" 60 || fail "($WAIT_WHY) restored threads has '$(tids $TPID | tr '\n' ' ')', want $TPID $OTIDS$(printf ' [%s]' "$(head -c 300 r.err | tr '\n' '|')")"
finish a $TPID
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "imgcr restore exit $RC: $(head -c 300 r.err | tr '\n' '|')"
info "root: $TPID with $OTIDS restored"

# uid 1000, --pidns.
start_tree b runas 1000 1000
imgcr dump -t $ROOT -D b/d 2> dump.err || fail "dump of uid 1000's tree: $(cat dump.err)"
wait_gone $TPID 10 || fail "threads survived the dump"
chown -R 1000:1000 b
runas 1000 1000 imgcr restore -D b/d > r1.out 2> r1.err && fail "uid 1000 restored TIDs without --pidns"
grep -q -- '--pidns' r1.err || fail "error does not mention --pidns: $(cat r1.err)"
runas 1000 1000 imgcr restore -D b/d --pidns > r2.out 2> r2.err &
rpid=$!
track $rpid
n=0
np=""
while [ -z "$np" ]; do
	for d in /proc/[0-9]*; do
		[ "$(cat $d/comm 2>/dev/null)" = threads ] && [ "$(stat -c %u $d)" = 1000 ] &&
			[ "$(nthreads ${d#/proc/})" = 5 ] && np=${d#/proc/}
	done
	n=$((n + 1))
	[ $n -lt 300 ] || fail "no restored 'threads' with 5 threads: $(head -c 300 r2.err | tr '\n' '|')"
	[ -n "$np" ] || usleep 100000
done
track $np
nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$np/status)
[ "${nspid##*[[:space:]]}" = $TPID ] || fail "restored threads has NSpid '$nspid', want $TPID inside"
finish b $np
wait_exit $rpid 60
[ "$RC" = 0 ] || fail "uid 1000 restore --pidns exit $RC: $(head -c 300 r2.err | tr '\n' '|')"
pass "root: same PIDs and TIDs; uid 1000 with --pidns: TIDs checked inside"
