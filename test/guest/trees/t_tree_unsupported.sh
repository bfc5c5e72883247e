#!/bin/sh
# Every kind of task or file imgcr dump refuses gives a message naming the
# pid (and fd) and the kind, writes no tree, and leaves the whole tree
# running (no task stays stopped; both tasks keep ticking).  One sub-test
# per kind: tree_unsupported-{socket,io_uring,uffd,perf,fanotify,bpf,memmap,
# inoproc,inotifyw,dev,console,ns,deadmain}; inotifyw by
# an ordinary user (uid 1000), the others by root (deadmain: a process
# whose main thread exited while another runs on; zombies are dumped:
# t_tree_zombies; an epoll watching a closed fd's file and a pidfd of an
# exited process are restored: t_fds_dead, with their refusals).
# (Multi-threaded tasks are supported: t_threads_tree.)
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# unsup KIND REGEX
unsup() {
	mkdir $KIND && chmod 777 $KIND && cd $KIND || fail "mkdir $KIND"
	$RUNAS holder $KIND out </dev/null >/dev/null 2>holder.err &
	root=$!
	track $root
	n=0
	while [ "$(cut -d' ' -f1 out 2>/dev/null | sort -u | wc -l)" -lt 2 ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "holder $KIND did not start: $(cat holder.err)"
		usleep 20000
	done
	kids=$(cat /proc/$root/task/$root/children)
	for k in $kids; do track $k; done
	$RUNAS imgcr dump -t $root -D d > dump.out 2> dump.err && fail "dump of a tree with $KIND succeeded"
	grep -qE "$RE" dump.err || fail "message does not match '$RE': $(tr '\n' '|' < dump.err)"
	grep -v '^imgcr: warning:' dump.err > refusal.err
	named=$(sed -n '1s/^imgcr: pid \([0-9]*\).*/\1/p' refusal.err)
	[ -n "$named" ] || fail "the first error names no pid: $(head -n1 refusal.err)"
	case " $root $kids " in
	*" $named "*) ;;
	*) fail "message names pid '$named', not one of the tree ($root $kids): $(head -n1 dump.err)" ;;
	esac
	[ -e d/tree ] && fail "a tree file was written"
	for p in $root $kids; do
		case "$(state $p)" in
		t | T) fail "task $p left stopped ('$(state $p)')" ;;
		"") fail "task $p died" ;;
		esac
	done
	for p in $root $kids; do
		[ "$(state $p)" = Z ] && continue
		c=$(grep -c "^$p tick" out)
		wait_line out "^$p tick $((c + 3))\$" 10 || fail "task $p stopped ticking after the failed dump"
	done
	pass "$(head -n1 refusal.err | cut -c1-150)"
}

# run KIND REGEX [USER]: USER (a uid) runs the tree and the dump
run() {
	KIND=$1
	RE=$2
	RUNAS=${3:+runas $3 $3}
	subtest tree_unsupported-$1 unsup
}
chmod 777 .
run socket 'pid [0-9]+ fd [0-9]+: socket:\[[0-9]+\]: packet socket with a PACKET_RX_RING'
run io_uring 'pid [0-9]+ fd [0-9]+: anon inode \[io_uring\]: io_uring instances are not supported'
run uffd 'pid [0-9]+ fd [0-9]+: anon inode \[userfaultfd\]: userfaultfds are not supported'
run perf 'pid [0-9]+ fd [0-9]+: anon inode \[perf_event\]: perf_event fds are not supported'
run fanotify 'pid [0-9]+ fd [0-9]+: fanotify: a filesystem mark \(FAN_MARK_FILESYSTEM: .sdev:[0-9a-f]+ .*\) is not supported'
run bpf 'pid [0-9]+ fd [0-9]+: bpf map id [0-9]+ \(type prog_array\): its values are kernel objects .*: not supported'
run memmap 'pid [0-9]+: .*private mapping at 0x[0-9a-f]+ of memfd:holder, of which it holds no fd open for reading \(its contents would be lost\); not supported'
run inoproc 'pid [0-9]+ fd [0-9]+: inotify: watch 1 \(inode [0-9]+\): .*not supported'
run inotifyw 'pid [0-9]+ fd [0-9]+: inotify: watch 1 \(inode [0-9]+\): finding its path needs CAP_DAC_READ_SEARCH \(open_by_handle_at\): dump as root' 1000
run dev 'pid [0-9]+ fd [0-9]+: character device /dev/(mem|kmsg) \(1:1?1\): not supported'
run console 'pid [0-9]+ fd [0-9]+: console /dev/console \(5:1\): a terminal outside the tree is not supported without --shell-job'
run ns 'pid [0-9]+: uts namespace .* differs from the root task.s .*not supported'
run deadmain 'pid [0-9]+: its main thread has exited while 1 other threads run on: not supported'
