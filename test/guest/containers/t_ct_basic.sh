#!/bin/sh
# A container with its own PID, UTS and time namespaces (util-linux
# unshare --fork --pid --uts --time --monotonic 86400 --boottime 3600, no
# mount namespace: the host's /proc), its pid 1 ctwork (a child, clocks read
# through the vDSO and the system call, its host name): dumped from the
# host, killed, restored with --detach, twice from one DIR.
#   ct_basic          inside: ctwork's verdict (pid 1, host name, no clock
#                     ever went back, each near its offset; the child kept
#                     its pid); outside: new pid/uts/time namespaces, NSpid
#                     "HOST 1" and the child's pid inside kept, the host
#                     name, timens_offsets (the clocks go on from the dump:
#                     the offsets are the dumped ones minus the time the
#                     tree was away); the tree file's ns, uts, timens and
#                     vpid records; then the same DIR restored again.
#   ct_basic-threads  the same with 3 more threads in ctwork: their TIDs
#                     inside kept (the module records them in the task's
#                     own PID namespace).
#   ct_basic-noinit   a subtree without its PID namespace's init: refused,
#                     naming the init; the container keeps running.
#   ct_basic-otherns  a task in another namespace than the root's: refused,
#                     naming the pid and the kind.
#   ct_basic-kind     a kind that cannot be restored (a user namespace
#                     whose maps were never written): refused, naming it.
#   ct_basic-setns    a process that joined the container's PID namespace
#                     (nsenter, as runc exec): refused, naming it (before:
#                     killed with the namespace, never restored); the
#                     container and that process keep running.
# timeout: 400
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

MONO=86400
BOOT=3600

# step WHAT: progress on the console at once (a subtest's output is shown
# only when it ends)
step() { echo "INFO $T: $*" > /dev/console 2>/dev/null || true; }

# start_ct [NTHREADS]: the container (CT: the host pid of its pid 1), ticking
start_ct() {
	ct_start ct.pid --pid --uts --time --monotonic $MONO --boottime $BOOT -- \
		sh -c "hostname ct-basic; exec ctwork ct-basic $MONO $BOOT ${1:-0} 2>> ct.err" >> out 2> unshare.err ||
		fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	wait_line out "^tick 10 " 60 || fail "ctwork did not tick: $(tail -n 3 out | tr '\n' '|') $(cat unshare.err)"
}

# nsid PID NS: the inode of PID's namespace NS
nsid() { l=$(readlink /proc/$1/ns/$2); l=${l#*[}; echo "${l%]}"; }

# nspid PID: NSpid of PID, fields separated by one space
nspid() { sed -n 's/^NSpid:[[:space:]]*//p' /proc/$1/status | tr -s '\t ' '  '; }

# offset PID CLOCK: the seconds of CLOCK's offset in /proc/PID/timens_offsets
offset() { awk -v c=$2 '$1 == c { print $2 }' /proc/$1/timens_offsets; }

# restore_check N: restore DIR d (the Nth time) and check it inside and outside
restore_check() {
	n=$1
	rm -f rp
	before=$(grep -c '^tick ' out)
	step "restore $n"
	# the second time, its output file has grown since the dump (the first restore wrote to it)
	timeout -s KILL 60 imgcr restore -v4 -D d $([ $n = 1 ] || echo --allow-changed-files) --detach --pidfile "$PWD/rp" > r$n.out 2> restore.err
	RC=$?
	[ "$RC" = 0 ] || fail "restore $n: exit $RC: $(tail -n 8 restore.err | tr "\n" "|")"
	NEW=$(cat rp)
	track $NEW
	i=0
	while [ "$(grep -c '^tick ' out)" -lt $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || fail "restore $n: ctwork did not go on: $(tail -n 2 out | tr '\n' '|')$(rerr)"
		usleep 50000
	done
	step "restore $n: rc $RC, root $NEW: ticking"
	# outside: new namespaces of the same kinds, pid 1, host name, offsets
	for k in pid uts time; do
		[ "$(nsid $NEW $k)" != "$(nsid $$ $k)" ] || fail "restore $n: in the host's $k namespace"
		# (not compared with the dumped one: a freed namespace's inode number is reused)
	done
	for k in ipc net mnt user cgroup; do
		[ "$(nsid $NEW $k)" = "$(nsid $$ $k)" ] || fail "restore $n: a new $k namespace"
	done
	[ "$(nspid $NEW)" = "$NEW 1" ] || fail "restore $n: NSpid of $NEW is '$(nspid $NEW)'"
	[ "$(timeout -s KILL 10 nsenter -t $NEW -u hostname)" = ct-basic ] || fail "restore $n: host name $(timeout -s KILL 10 nsenter -t $NEW -u hostname)"
	ch=$(child_of $NEW)
	[ -n "$ch" ] || fail "restore $n: ctwork has no child"
	[ "$(nspid $ch | cut -d' ' -f2)" = "$CHILD_V" ] || fail "restore $n: the child's NSpid is '$(nspid $ch)', was '$CHILD_V' inside"
	mo=$(offset $NEW monotonic)
	bo=$(offset $NEW boottime)
	[ "$mo" -le $MONO ] && [ "$mo" -gt $((MONO - 900)) ] || fail "restore $n: monotonic offset $mo, not a little below $MONO"
	[ "$bo" -le $BOOT ] && [ "$bo" -gt $((BOOT - 900)) ] || fail "restore $n: boottime offset $bo, not a little below $BOOT"
	step "restore $n: checked outside"
	[ -z "${before_tids:-}" ] || [ "$(vtids $NEW)" = "$before_tids" ] ||
		fail "restore $n: TIDs inside $(vtids $NEW), were $before_tids"
	# inside: ctwork's verdict
	kill -USR1 $NEW
	wait_gone $NEW 20 || fail "restore $n: ctwork did not end on SIGUSR1"
	[ "$(grep -c '^ctwork PASS' out)" = "$n" ] ||
		fail "restore $n: ctwork's verdict: $(tail -n 3 out | tr '\n' '|')"
	grep '^FAIL' out > fails.txt
	[ -s fails.txt ] && fail "inside: $(tr '\n' '|' < fails.txt)"
	info "restore $n: $(grep '^ok pid=' out | tail -n 1) offsets $mo $bo"
}

basic() {
	start_ct
	ct_nsids $CT > ns.before
	ch=$(child_of $CT)
	CHILD_V=$(nspid $ch | cut -d' ' -f2)
	[ -n "$CHILD_V" ] || fail "no child in the container"
	step "dump $CT (child $ch = $CHILD_V inside)"
	timeout -s KILL 60 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tail -n 8 dump.err | tr "\n" "|")"
	wait_dumped_gone $CT $ch
	for r in "ns kind=pid ino=$(sed 's/.* pid=\([0-9]*\).*/\1/' ns.before)" \
		"ns kind=uts ino=" "ns kind=time ino=" "uts hostname=ct-basic domain=" \
		"timens mono=${MONO}000000000 boot=${BOOT}000000000 mono_at=" \
		"task pid=$CT .* vpid=1\$" "task pid=$ch .* vpid=$CHILD_V\$"; do
		grep -q "^$r" d/tree || fail "no '$r' in the tree file: $(grep -v '^[a-z]*file\|^fd' d/tree | tr '\n' '|' | cut -c1-600)"
	done
	grep -q 'ns kind=\(ipc\|net\|mnt\|user\|cgroup\)' d/tree && fail "a kind the tree shares with imgcr is listed"
	restore_check 1
	restore_check 2
	pass "restored twice: $(grep '^ok pid=' out | tail -n 1)"
}

# the TIDs inside of PID's threads, sorted, on one line
vtids() { for t in /proc/$1/task/*; do nspid ${t##*/} | cut -d' ' -f2; done | sort -n | tr '\n' ' '; }

threads() {
	start_ct 3
	ch=$(child_of $CT)
	CHILD_V=$(nspid $ch | cut -d' ' -f2)
	before_tids=$(vtids $CT)
	[ "$(echo $before_tids | wc -w)" = 4 ] || fail "ctwork has not 4 threads: $before_tids"
	step "threads: dump $CT"
	timeout -s KILL 60 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tail -n 8 dump.err | tr "\n" "|")"
	wait_dumped_gone $CT $ch
	restore_check 1
	pass "4 threads, TIDs inside $before_tids"
}

noinit() {
	start_ct
	ch=$(child_of $CT)
	timeout -s KILL 60 imgcr dump -t $ch -D d > dump.out 2> dump.err && fail "dump of a subtree without its init succeeded"
	grep -q "^imgcr: pid $ch: its PID namespace's init (pid $CT) is not in the tree" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	c=$(grep -c '^tick ' out)
	i=0
	while [ "$(grep -c '^tick ' out)" -lt $((c + 2)) ]; do
		i=$((i + 1))
		[ $i -lt 400 ] || fail "the container stopped after the failed dump"
		usleep 50000
	done
	left_running $ch || fail "child $ch state '$(state $ch)'"
	kill -USR1 $CT
	wait_gone $CT 20 || fail "ctwork did not end"
	grep -q '^ctwork PASS' out || fail "ctwork: $(tail -n 3 out | tr '\n' '|')"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

otherns() {
	sh -c '/usr/sbin/unshare -u sleep 600 & exec sleep 600' &
	root=$!
	track $root
	ch=$(child_of $root)
	[ -n "$ch" ] || fail "no child"
	for i in $(seq 1 100); do
		[ "$(nsid $ch uts)" != "$(nsid $root uts)" ] && break
		usleep 50000
	done
	track $ch
	timeout -s KILL 60 imgcr dump -t $root -D d > dump.out 2> dump.err && fail "dump of a tree with a task in another uts namespace succeeded"
	grep -q "^imgcr: pid $ch: uts namespace uts:\[[0-9]*\] differs from the root task's (pid $root, uts:\[[0-9]*\])" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	left_running $root && left_running $ch || fail "tasks not left running: $(state $root) $(state $ch)"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

kind() {
	ct_start ct.pid --pid --user -- sleep 600 > out 2> unshare.err || fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	for i in $(seq 1 100); do
		[ "$(readlink /proc/$CT/exe)" != /usr/sbin/unshare ] && break
		usleep 50000
	done
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a tree with an unmapped user namespace succeeded"
	grep -q "^imgcr: pid $CT: its user namespace user:\[[0-9]*\] has no uid_map written: its ids are unmapped there, not supported" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	left_running $CT || fail "task not left running: $(state $CT)"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

joined() {
	start_ct
	/usr/sbin/nsenter -t $CT -p -- sleep 600 &
	nse=$!
	track $nse
	j=""
	for i in $(seq 1 100); do
		j=$(child_of $nse)
		[ -n "$j" ] && [ "$(readlink /proc/$j/exe)" != /usr/sbin/nsenter ] && break
		usleep 50000
	done
	[ -n "$j" ] || fail "nsenter made no process in the container"
	track $j
	[ "$(nsid $j pid)" = "$(nsid $CT pid)" ] || fail "pid $j is not in the container's PID namespace"
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a container with a process that joined it succeeded"
	grep -q "^imgcr: pid $CT: pid $j is in its PID namespace (pid [0-9]* there) but not in the tree" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	left_running $CT && left_running $j || fail "not left running: $(state $CT) $(state $j)"
	kill -USR1 $CT
	wait_gone $CT 20 || fail "ctwork did not end"
	grep -q '^ctwork PASS' out || fail "ctwork: $(tail -n 3 out | tr '\n' '|')"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

sub() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	$2
}
subtest ct_basic "sub basic basic"
subtest ct_basic-threads "sub threads threads"
subtest ct_basic-noinit "sub noinit noinit"
subtest ct_basic-otherns "sub otherns otherns"
subtest ct_basic-kind "sub kind kind"
subtest ct_basic-setns "sub setns joined"
