#!/bin/sh
# A tree whose root runs in namespaces of its own (here: made by unshare)
# would be restored into imgcr's and silently lose them (its hostname, its
# IPC objects, its network, its mounts), so imgcr dump refuses it: the
# message names the pid and the namespace, no tree file is written and the
# task keeps running.  One sub-test per namespace:
# tree_rootns-{uts,ipc,net,mnt}.  Run inside the namespaces (nsenter), the
# same dump succeeds and restores there.
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
	grep -q "^imgcr: pid $pid: in another $NS namespace than imgcr (.*): a tree in namespaces of its own is not supported" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	case "$(state $pid)" in
	t | T) fail "task $pid left stopped" ;;
	"") fail "task $pid died" ;;
	esac
	c=$(wc -l < out)
	wait_line out "^$((c + 3)) $pid\$" 10 || fail "the counter stopped after the failed dump"
	if [ $NS = uts ]; then
		# From inside its namespaces the tree is imgcr's own: dumped and
		# restored there, with its hostname.
		nsenter -t $pid -u imgcr dump -t $pid -D in > in.out 2>&1 ||
			fail "dump inside the namespace failed: $(tr '\n' '|' < in.out)"
		wait_gone $pid 10 || fail "the dumped task did not exit"
		last=$(tail -n1 out | cut -d' ' -f1)
		unshare -u sh -c 'hostname inner-uts; exec imgcr restore -D in' > r.out 2>&1 &
		wait_line out "^$((last + 3)) $pid\$" 20 || fail "restored counter did not go on: $(tr '\n' '|' < r.out)"
		[ "$(nsenter -t $pid -u hostname)" = inner-uts ] || fail "hostname after restore: $(nsenter -t $pid -u hostname)"
		kill $pid
	fi
	pass "$(head -n1 dump.err | cut -c1-150)"
}

run() {
	NS=$1
	FLAG=$2
	subtest tree_rootns-$1 rootns
}
run uts u
run ipc i
run net n
run mnt m
