#!/bin/sh
# A restore by root of a directory another user can write (userspace/trust.c,
# binfmt_img's --imgcr-user and --imgcr-ids opens; docs/security.md).
# uid 1000 runs test/progs/mapdel on a file of its own (mapped private, a
# checksum of the mapping printed every 100 ms) and dumps it into a
# directory of its own; root then restores:
#   trust-user: the honest directory: the tree runs entirely as uid 1000,
#     so root restores it (the same checksum inside, uids 1000 outside);
#     its /proc/PID/exe stays the image file, as for uid 1000's own
#     restore (before: set to mapdel with root's CAP_CHECKPOINT_RESTORE).
#   trust-groups: uid 1000 edited its tree (groups=0, root's group, which
#     the old restore gave as it was): refused, naming the file and its
#     owner; nothing restored.
#   trust-option: the same with --trust-images-dir: restored, group 0.
#   trust-writable: root's own dump whose tree another user may write
#     (mode o+w): refused, naming the file.
#   trust-mapped: the file the image maps was made root's and 0600 after
#     the dump (chown and chmod change neither its size nor its mtime):
#     root's restore (--imgcr-ids) opens it as uid 1000, refused (before:
#     opened as root, handed to uid 1000's process).
#   trust-self: uid 1000 restores its own directory (--pidns): no check.
#   trust-extsk: uid 1000's unix socket connected to root's server outside
#     the tree (--ext-unix-sk): root's restore connects it again as uid
#     1000 (the server's SO_PEERCRED; before: uid 0, root's).
#   trust-ghostdir: uid 1000's process holds deleted files of its
#     directory w/gp (test/progs/ghost.c); after the dump, uid 1000 makes
#     w/gp a symbolic link to a directory of root's: root's restore does not
#     follow it (before: the deleted files were recreated, and unlinked
#     again, in root's directory, as root).
#   trust-args: binfmt_img refuses an unknown --imgcr-* argument (before:
#     ignored) and, with --imgcr-user=1000:1000, an image of root's task,
#     and uid 1000's image run by root without --imgcr-creds --imgcr-ids
#     (before: it ran as root).
# timeout: 900
. /imgcr/guest/lib.sh
require_modules
chmod 755 .
mkdir w && chown 1000:1000 w || fail "setup: cannot make w"
head -c 8192 /dev/urandom > w/m && chown 1000:1000 w/m

# user_dump NAME: uid 1000's mapdel of w/m dumped into w/NAME; sets upid, sum
user_dump() {
	: > w/out.$1 && chown 1000:1000 w/out.$1
	runas 1000 1000 mapdel "$PWD/w/m" private > w/out.$1 2>&1 < /dev/null &
	upid=$!
	track $upid
	wait_line w/out.$1 '^ready' 20 || fail "mapdel did not start: $(cat w/out.$1)"
	sum=$(sed -n 's/^ready //p' w/out.$1)
	runas 1000 1000 imgcr dump -t $upid -D "$PWD/w/$1" 2> dump.err || fail "dump as 1000: $(cat dump.err)"
	wait_gone $upid 10 || fail "task $upid survived the dump"
	echo $upid > w/pid.$1
}

# ticks_ok PID FILE: PID runs as uid 1000 and prints new ticks with the same sum
ticks_ok() {
	_n=$(grep -c '^tick' "$2")
	_k=0
	while [ "$(grep -c '^tick' "$2")" -le $((_n + 2)) ]; do
		_k=$((_k + 1))
		[ $_k -lt 500 ] || fail "no new ticks after the restore$(rerr)"
		usleep 20000
	done
	tail -n 1 "$2" | grep -q " $sum\$" || fail "inside: the mapping's sum changed: $(tail -n 1 "$2") (was $sum)"
}

t_user() {
	user_dump d1
	imgcr restore -D w/d1 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_recreated $upid
	ticks_ok $upid w/out.d1
	grep -q '^Uid:.1000.1000.1000.1000' /proc/$upid/status ||
		fail "outside: $(grep Uid /proc/$upid/status)"
	# /proc/PID/exe is set with the task's right, not root's: uid 1000
	# has no CAP_CHECKPOINT_RESTORE, its task keeps the image file
	_exe=$(readlink /proc/$upid/exe)
	case $_exe in
	*/core-*.img) ;;
	*) fail "outside: /proc/$upid/exe is $_exe (set with root's CAP_CHECKPOINT_RESTORE for uid 1000's task)" ;;
	esac
	kill -9 $upid
	wait_exit $rpid 20
	pass "root restored uid 1000's own directory (sum $sum, exe the image)"
}

t_groups() {
	user_dump d2
	sed -i 's/groups=-/groups=0/' w/d2/tree
	grep -q 'groups=0' w/d2/tree || fail "setup: no groups in $(grep ^cred w/d2/tree)"
	chown 1000:1000 w/d2/tree
	timeout -s KILL 60 imgcr restore -D w/d2 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 60
	[ -e /proc/$upid ] && fail "restored: $(grep Groups /proc/$upid/status)"
	[ "$RC" = 1 ] || fail "imgcr restore exit $RC$(rerr)"
	grep -q "w/d2.* is owned by uid 1000.*pid $upid has group 0" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	pass "refused: $(head -c 120 restore.err)"
}

t_option() {
	[ -d w/d2 ] || fail "no w/d2 (trust-groups failed)"
	upid=$(cat w/pid.d2)
	sum=$(sed -n 's/^ready //p' w/out.d2)
	# the state check would see the edited groups (they are, as the tree says)
	IMGCR_STATE_HOOK= imgcr restore -D w/d2 --trust-images-dir > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_recreated $upid
	ticks_ok $upid w/out.d2
	grep -q '^Groups:.0 *$' /proc/$upid/status ||
		fail "outside: $(grep Groups /proc/$upid/status)"
	kill -9 $upid
	wait_exit $rpid 20
	pass "--trust-images-dir: restored as the tree says"
}

t_writable() {
	mapdel "$PWD/w/m" private > out.r 2>&1 < /dev/null &
	rp=$!
	track $rp
	wait_line out.r '^ready' 20 || fail "mapdel did not start"
	imgcr dump -t $rp -D r 2> dump.err || fail "dump: $(cat dump.err)"
	wait_gone $rp 10 || fail "task $rp survived the dump"
	# imgcr dump made r 0700: opened to others, a file in it anyone may write
	chmod 755 r && chmod o+w r/tree
	timeout -s KILL 60 imgcr restore -D r > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 60
	[ -e /proc/$rp ] && fail "restored"
	[ "$RC" = 1 ] || fail "imgcr restore exit $RC$(rerr)"
	grep -q "r/tree is writable by every user" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	pass "refused: $(head -c 100 restore.err)"
}

t_mapped() {
	head -c 8192 /dev/urandom > w/m2 && chown 1000:1000 w/m2
	runas 1000 1000 mapdel "$PWD/w/m2" private > w/out.d3 2>&1 < /dev/null &
	upid=$!
	track $upid
	wait_line w/out.d3 '^ready' 20 || fail "mapdel did not start: $(cat w/out.d3)"
	runas 1000 1000 imgcr dump -t $upid -D "$PWD/w/d3" 2> dump.err || fail "dump as 1000: $(cat dump.err)"
	wait_gone $upid 10 || fail "task $upid survived the dump"
	chown 0:0 w/m2 && chmod 600 w/m2
	timeout -s KILL 60 imgcr restore -D w/d3 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 60
	[ -e /proc/$upid ] && fail "restored: uid 1000 maps root's 0600 file ($(grep Uid /proc/$upid/status))"
	[ "$RC" = 1 ] || fail "imgcr restore exit $RC$(rerr)"
	grep -q "cannot open mapped file .*w/m2 (-13)" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	pass "refused: $(grep -o 'cannot open mapped file.*' restore.err | head -c 100)"
}

t_self() {
	user_dump d4
	runas 1000 1000 imgcr restore -D "$PWD/w/d4" --pidns > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	ticks_ok x w/out.d4
	init=$(child_of $rpid)
	track $init
	# the restored task is the namespace's: gone with its init
	kill -9 $init $rpid
	pass "uid 1000 restored its own directory"
}

t_extsk() {
	sknet echosrv "$PWD/e.sock" "$PWD/peers" < /dev/null > /dev/null 2>&1 &
	es=$!
	track $es
	wait_line /proc/net/unix "$PWD/e.sock" 10 || fail "echosrv did not start"
	chmod 777 e.sock
	runas 1000 1000 sknet ping "$PWD/e.sock" "$PWD/w/ping.txt" < /dev/null > /dev/null 2>&1 &
	p=$!
	track $p
	wait_line w/ping.txt '^3$' 20 || fail "ping did not start"
	runas 1000 1000 imgcr dump -t $p -D "$PWD/w/d5" --ext-unix-sk 2> dump.err ||
		fail "dump as 1000: $(cat dump.err)"
	wait_gone $p 10 || fail "ping survived the dump"
	last=$(tail -n 1 w/ping.txt)
	imgcr restore -D w/d5 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_line w/ping.txt "^$((last + 5))\$" 60 ||
		fail "the restored ping did not go on after $last: $(tail -n 2 w/ping.txt | tr '\n' '|')$(rerr)"
	[ "$(grep -c peer peers)" = 2 ] || fail "not 2 connections: $(tr '\n' '|' < peers)"
	tail -n 1 peers | grep -q 'peer uid=1000 gid=1000' ||
		fail "the new connection's SO_PEERCRED: $(tr '\n' '|' < peers)"
	kill -9 $p $rpid
	pass "reconnected as uid 1000 ($(tr '\n' ' ' < peers))"
}

t_ghostdir() {
	mkdir w/gp other && chown 1000:1000 w/gp || fail "setup"
	: > w/out.g && chown 1000:1000 w/out.g
	(cd w/gp && exec runas 1000 1000 ghost) > w/out.g 2>&1 < /dev/null &
	gp=$!
	track $gp
	wait_line w/out.g '^ready' 30 || fail "ghost did not start: $(cat w/out.g)"
	runas 1000 1000 imgcr dump -t $gp -D "$PWD/w/d6" 2> dump.err || fail "dump as 1000: $(cat dump.err)"
	wait_gone $gp 10 || fail "ghost survived the dump"
	# uid 1000 makes the deleted files' directory a link to root's directory
	runas 1000 1000 sh -c "mv '$PWD/w/gp' '$PWD/w/gp.old' && ln -s '$PWD/other' '$PWD/w/gp'" ||
		fail "setup: cannot swap w/gp"
	timeout -s KILL 60 imgcr restore -D w/d6 > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 60
	[ -e /proc/$gp ] && fail "restored, its deleted files made in root's directory"
	[ "$RC" = 1 ] || fail "imgcr restore exit $RC$(rerr)"
	grep -q "w/gp/[a-z]*.dat: cannot open its directory (a symbolic link not root's on the way)" restore.err ||
		fail "message: $(tr '\n' '|' < restore.err)"
	[ -z "$(ls -A other)" ] || fail "left in root's directory: $(ls -A other)"
	pass "refused: $(grep -o 'deleted file.*' restore.err | head -c 120)"
}

t_args() {
	pauser > p.out 2>&1 &
	pp=$!
	track $pp
	wait_line p.out '^ready' 10 || fail "pauser did not start"
	stop_task $pp
	dump $pp p.img
	kill9 $pp
	chmod +x p.img
	dmesg_mark
	timeout -s KILL 10 tryexec ./p.img --imgcr-bogus > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q 'execve failed: EINVAL' te.out ||
		fail "--imgcr-bogus: rc=$rc $(head -c 80 te.out)"
	dmesg_since | grep -q 'unknown argument 1: --imgcr-bogus' ||
		fail "no kernel log line: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	timeout -s KILL 10 tryexec ./p.img --imgcr-creds --imgcr-user=1000:1000 > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q 'execve failed: EPERM' te.out ||
		fail "--imgcr-user: rc=$rc $(head -c 80 te.out)"
	dmesg_since | grep -q 'vouches only for uid 1000' ||
		fail "no kernel log line: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	# uid 1000's own image, run by root with --imgcr-user but without
	# --imgcr-creds --imgcr-ids: its IDs would not be set, and the task
	# would run as root (before: it did)
	: > w/q.out && chown 1000:1000 w/q.out
	runas 1000 1000 pauser > w/q.out 2>&1 < /dev/null &
	qp=$!
	track $qp
	wait_line w/q.out '^ready' 10 || fail "pauser as 1000 did not start"
	stop_task $qp
	dump $qp q.img
	kill9 $qp
	chmod +x q.img
	dmesg_mark
	timeout -s KILL 10 tryexec ./q.img --imgcr-user=1000:1000 > te.out 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q 'execve failed: EPERM' te.out ||
		fail "--imgcr-user without --imgcr-ids: rc=$rc $(head -c 80 te.out)"
	dmesg_since | grep -q 'neither is it nor asks for the task' ||
		fail "no kernel log line: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	pass "unknown argument, another user's image, and a user's image without its IDs refused"
}

subtest trust-user t_user
subtest trust-groups t_groups
subtest trust-option t_option
subtest trust-writable t_writable
subtest trust-mapped t_mapped
subtest trust-self t_self
subtest trust-extsk t_extsk
subtest trust-ghostdir t_ghostdir
subtest trust-args t_args
