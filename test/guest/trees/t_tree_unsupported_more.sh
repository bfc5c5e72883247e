#!/bin/sh
# More of what imgcr dump refuses (issue 10), as t_tree_unsupported: the
# message names the pid, the fd (which must be the resource: its
# /proc/PID/fd link is checked) and the kind, no tree file is written, and
# every task of the tree (and the processes around it) is left running,
# not stopped, ticking.  Trees from test/progs/holder.c, dumped by root:
# tree_unsupported_more-
#   pidfdthread a pidfd of a thread (PIDFD_THREAD; kernels before 6.9 have
#               none: skipped with a note)
#   pidfdns     a pidfd to a process outside the dumper's PID namespace
#               (imgcr runs in the tree's PID namespace, with its own /proc)
#   pidns       a tree whose root is in another PID namespace than imgcr
#               and not its init
#   pipeout     a pipe also open in a process outside the tree
#   memfdpath   an O_PATH fd of a memfd
#   aio         an AIO context (io_setup): refused by the module, naming
#               the ring's address
#   aiounmap    an AIO context whose ring the program unmapped
#   uringreg    an io_uring kept only by IORING_REGISTER_RING_FDS (no
#               fd, no mapping)
#   bpfprog     a bpf socket-filter program
#   bpflink     a bpf link (raw tracepoint)
# Not here: a terminal with a line discipline other than N_TTY (every other
# ldisc is a module the guest does not have), kvm (no /dev/kvm under TCG).
# timeout: 200
. /imgcr/guest/lib.sh
require_modules

# ticks P...: each of P appends 3 more ticks to out
ticks() {
	for _p in "$@"; do
		_c=$(grep -c "^$_p tick" out)
		wait_line out "^$_p tick $((_c + 3))\$" 10 || fail "task $_p stopped ticking after the failed dump"
	done
}

# nspid P: the pid of P in its own (innermost) PID namespace
nspid() { sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' /proc/$1/status; }

# refuse: KIND, RE (the message), LINK (the fd's link, a regex; "" for a
# refusal of a task)
refuse() {
	mkdir $KIND && cd $KIND || fail "mkdir $KIND"
	holder $KIND out </dev/null >/dev/null 2>holder.err &
	top=$!
	track $top
	# every task ticking: the holder and its child, and for pidns/pidfdns
	# the namespace's init, the root and its child
	want=2
	case $KIND in pidns | pidfdns) want=5 ;; esac
	n=0
	while [ "$(grep ' tick ' out 2>/dev/null | cut -d' ' -f1 | sort -u | wc -l)" -lt $want ]; do
		n=$((n + 1))
		[ $n -lt 500 ] && [ -d /proc/$top ] || fail "holder $KIND did not start: $(cat holder.err)"
		usleep 20000
	done
	kid=$(child_of $top)
	track $kid
	around=""	# ticking processes outside the tree
	outsider=""
	case $KIND in
	pidns | pidfdns)
		init=$(child_of $kid)
		root=$(child_of $init)
		kids=$(child_of $root)
		around="$top $kid $init"
		for p in $init $root $kids; do track $p; done
		[ "$(nspid $root) $(nspid $kids)" = "2 3" ] || fail "setup: the root and its child are not pids 2 and 3 of their namespace: $(nspid $root) $(nspid $kids)"
		;;
	*)
		root=$top
		kids=$kid
		;;
	esac
	if [ $KIND = pipeout ]; then
		wait_line out ' outsider$' 10 || fail "no outsider: $(cat holder.err)"
		outsider=$(sed -n 's/ outsider$//p' out)
		track $outsider
	fi
	if [ $KIND = pidfdns ]; then
		# imgcr in the tree's PID and mount namespaces, with their /proc
		nsenter -t $init -p -m sh -c "mount -t proc proc /proc && exec imgcr dump -t 2 -D $PWD/d" \
			> dump.out 2> dump.err && fail "dump of a tree with $KIND succeeded"
	else
		imgcr dump -t $root -D d > dump.out 2> dump.err && fail "dump of a tree with $KIND succeeded"
	fi
	grep -qE "$RE" dump.err || fail "message does not match '$RE': $(tr '\n' '|' < dump.err)"
	grep -v '^imgcr: warning:' dump.err > refusal.err
	named=$(sed -n '1s/^imgcr: pid \([0-9]*\).*/\1/p' refusal.err)
	fd=$(sed -n '1s/^imgcr: pid [0-9]* fd \([0-9]*\):.*/\1/p' refusal.err)
	[ -n "$named" ] || fail "the first error names no pid: $(head -n1 refusal.err)"
	who=""
	for p in $root $kids; do
		# the dumper's pid of p (pidfdns: in the namespace)
		if [ $KIND = pidfdns ]; then q=$(nspid $p); else q=$p; fi
		[ "$q" = "$named" ] && who=$p
	done
	[ -n "$who" ] || fail "message names pid '$named', not one of the tree ($root $kids): $(head -n1 refusal.err)"
	if [ -n "$LINK" ]; then
		[ -n "$fd" ] || fail "the first error names no fd: $(head -n1 refusal.err)"
		l=$(readlink /proc/$who/fd/$fd)
		echo "$l" | grep -qE "^$LINK\$" || fail "pid $who fd $fd is '$l', not the refused $KIND ($LINK)"
	fi
	[ -e d/tree ] && fail "a tree file was written"
	for p in $root $kids $around $outsider; do
		case "$(state $p)" in
		t | T) fail "task $p left stopped ('$(state $p)')" ;;
		"") fail "task $p died" ;;
		esac
	done
	ticks $root $kids $around
	pass "$(head -n1 refusal.err | cut -c1-150)"
}

# run KIND RE LINK
run() {
	KIND=$1
	RE=$2
	LINK=$3
	subtest tree_unsupported_more-$1 refuse
}

# PIDFD_THREAD: Linux 6.9
v=$(uname -r)
maj=${v%%.*}
min=${v#*.}
min=${min%%[!0-9]*}
if [ "$maj" -gt 6 ] || { [ "$maj" = 6 ] && [ "$min" -ge 9 ]; }; then
	run pidfdthread 'pid [0-9]+ fd [0-9]+: pidfd: thread pidfds \(PIDFD_THREAD\) are not supported' 'anon_inode:\[pidfd\]'
else
	echo "RESULT tree_unsupported_more-pidfdthread PASS skipped: $v has no thread pidfds (PIDFD_THREAD is 6.9+)"
	(T=tree_unsupported_more-pidfdthread; info "skipped on $v: no PIDFD_THREAD before 6.9")
fi
run pidfdns 'pid [0-9]+ fd [0-9]+: pidfd: its process is in another PID namespace: not supported' 'anon_inode:\[pidfd\]'
run pidns 'pid [0-9]+: its PID namespace.s init \(pid [0-9]+\) is not in the tree' ''
run pipeout 'pid [0-9]+ fd [0-9]+: pipe:\[[0-9]+\] is also open in pid [0-9]+ fd [0-9]+, outside the tree: pipes shared with other processes are not supported' 'pipe:\[[0-9]+\]'
run memfdpath 'pid [0-9]+ fd [0-9]+: memfd /memfd:holder \(deleted\): O_PATH descriptors of memfds are not supported' '/memfd:holder \(deleted\)'
run aio 'pid [0-9]+: cannot open /proc/[0-9]+/dump: Operation not supported: an AIO context \(io_setup\) whose ring is mapped at 0x[0-9a-f]+; not supported' ''
run aiounmap 'pid [0-9]+: cannot open /proc/[0-9]+/dump: Operation not supported: has an AIO context \(io_setup\) whose ring is not mapped, or had one; not supported' ''
run uringreg 'pid [0-9]+: cannot open /proc/[0-9]+/dump: Operation not supported: an io_uring registered with IORING_REGISTER_RING_FDS; not supported' ''
run bpfprog 'pid [0-9]+ fd [0-9]+: anon inode bpf-prog: bpf programs are not supported' 'anon_inode:bpf-prog'
run bpflink 'pid [0-9]+ fd [0-9]+: anon inode bpf_link: bpf links are not supported' 'anon_inode:bpf_link'
