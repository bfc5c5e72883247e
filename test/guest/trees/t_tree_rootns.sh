#!/bin/sh
# A tree whose root runs in namespaces of its own (here: made by unshare)
# that cannot be restored is refused by imgcr dump: the message names the
# pid and the namespace, no tree file is written and the task keeps
# running.  Every kind is restored now (pid, uts, time: t_ct_basic; ipc:
# t_ct_ipc; mnt, net, cgroup: t_ct_full; user: t_ct_userns); what is
# left: tree_rootns-user, a user namespace whose uid_map was never written
# (unshare -U without a map: its tasks' ids are unmapped there).
# timeout: 180
. /imgcr/guest/lib.sh
require_modules

# rootns: NS (its name in /proc/PID/ns) and FLAG (unshare's option)
rootns() {
	mkdir $NS && cd $NS || fail "mkdir $NS"
	unshare -$FLAG sh -c 'hostname inner-uts; exec counter 600' > out 2> unshare.err &
	pid=$!
	track $pid
	wait_line out "^3 $pid\$" 20 || fail "counter under unshare -$FLAG did not start: $(cat unshare.err)"
	[ "$(readlink /proc/$pid/ns/$NS)" != "$(readlink /proc/self/ns/$NS)" ] ||
		fail "unshare -$FLAG made no new $NS namespace"
	imgcr dump -t $pid -D d > dump.out 2> dump.err && fail "dump of a task in its own $NS namespace succeeded"
	grep -q "^imgcr: pid $pid: $WANT" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	case "$(state $pid)" in
	t | T) fail "task $pid left stopped" ;;
	"") fail "task $pid died" ;;
	esac
	c=$(wc -l < out)
	wait_line out "^$((c + 3)) $pid\$" 10 || fail "the counter stopped after the failed dump"
	pass "$(head -n1 dump.err | cut -c1-150)"
}

run() {
	NS=$1
	FLAG=$2
	WANT=$3
	subtest tree_rootns-$1 rootns
}
run user U "its user namespace user:\[[0-9]*\] has no uid_map written: its ids are unmapped there, not supported"

