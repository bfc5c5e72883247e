#!/bin/sh
# A tree whose root runs in namespaces of its own (here: made by unshare)
# would be restored into imgcr's and silently lose them (its hostname, its
# IPC objects, its network, its mounts), so imgcr dump refuses it: the
# message names the pid and the namespace, no tree file is written and the
# task keeps running.  One sub-test per namespace kind not supported yet:
# tree_rootns-user (the pid, uts and time kinds are restored: t_ct_basic;
# ipc: t_ct_ipc; mnt, net, cgroup: t_ct_full, and test/unit/mount.sh,
# net.sh on the host).
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
	grep -q "^imgcr: pid $pid: in another $NS namespace than imgcr (.*): a tree with its own $NS namespace is not supported yet" dump.err ||
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
	subtest tree_rootns-$1 rootns
}
run user U

