#!/bin/sh
# An event loop across dump + restore (test/progs/evloop.c): one epoll
# watching an eventfd (a disarmed EPOLLONESHOT), a periodic timerfd, a
# signalfd (EPOLLET, a SIGUSR2 queued), an inotify instance (wds 3 and 4), a
# pidfd to the child, a nested epoll, and the child's eventfd registered by
# the child at fd 200 in the epoll both share; besides a memfd (two
# descriptions, one of them shared with the child), a pidfd to the test's shell (outside the tree), an O_PATH fd and a directory fd half read.  From outside,
# before the dump and after the restore: the epoll items (tfd/events/data),
# the inotify watches (wd/mask), the memfd's name and offset, the O_PATH
# flag, the pidfd's Pid and flags, the directory offset.  imgcr show lists
# them.  Then the restored program checks that every source still fires
# through epoll_wait (the timer's period measured), epoll_ctl MOD/DEL and
# inotify_rm_watch on the old numbers, the memfd, O_PATH and directory fds:
# all "ok".
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# fdi PID FD KEY: the value of KEY in /proc/PID/fdinfo/FD, spaces trimmed
fdi() { sed -n "s/^$3:[[:space:]]*//p" /proc/$1/fdinfo/$2 2>/dev/null; }

# item FD DATA EVENTS: the epoll has fd FD with these events and data
item() {
	grep -qE "^tfd: +$1 events: +$3 data: +$2 " /proc/$pid/fdinfo/$ep ||
		fail "$WHEN: no epoll item fd $1 events $3 data $2: $(grep tfd /proc/$pid/fdinfo/$ep | tr '\n' '|')"
}

outside() {
	WHEN=$1
	item $efd 1 40000000	# disarmed EPOLLONESHOT
	item $tper 2 19
	item $sfd 3 80000019	# EPOLLET
	item $ino 4 19
	item $pidfd 5 19
	item $ep2 6 19
	item 200 c8 19		# the child's
	grep -qE "^tfd: +$rpipe events: +19 data: +0 " /proc/$pid/fdinfo/$ep2 ||
		fail "$WHEN: nested epoll: $(grep tfd /proc/$pid/fdinfo/$ep2 | tr '\n' '|')"
	[ "$(readlink /proc/$kid/fd/200)" = "anon_inode:[eventfd]" ] || fail "$WHEN: child fd 200 is $(readlink /proc/$kid/fd/200)"
	grep -q "^inotify wd:$wdd .*mask:300 " /proc/$pid/fdinfo/$ino &&
		grep -q "^inotify wd:$wdf .*mask:2 " /proc/$pid/fdinfo/$ino ||
		fail "$WHEN: inotify watches: $(grep inotify /proc/$pid/fdinfo/$ino | cut -c1-60 | tr '\n' '|')"
	[ "$(readlink /proc/$pid/fd/$mem)" = "/memfd:evl-mem (deleted)" ] || fail "$WHEN: memfd link $(readlink /proc/$pid/fd/$mem)"
	[ "$(fdi $pid $mem pos)" = 3 ] || fail "$WHEN: memfd pos $(fdi $pid $mem pos)"
	[ "$(stat -L -c %i /proc/$kid/fd/$mem)" = "$(stat -L -c %i /proc/$pid/fd/$mem)" ] &&
		[ "$(fdi $kid $mem pos)" = 3 ] || fail "$WHEN: the child's memfd is another or at $(fdi $kid $mem pos)"
	[ "$(stat -L -c %i /proc/$pid/fd/$mem)" = "$(stat -L -c %i /proc/$pid/fd/$memro)" ] || fail "$WHEN: the two memfd fds are not one inode"
	[ $(( 0$(fdi $pid $memro flags) & 3 )) = 0 ] || fail "$WHEN: memfd O_RDONLY description flags $(fdi $pid $memro flags)"
	[ $(( 0$(fdi $pid $opath flags) & 010000000 )) != 0 ] || fail "$WHEN: O_PATH fd flags $(fdi $pid $opath flags)"
	[ "$(readlink /proc/$pid/fd/$opath)" = "$PWD/w/f" ] || fail "$WHEN: O_PATH fd on $(readlink /proc/$pid/fd/$opath)"
	[ "$(fdi $pid $pidfd Pid)" = "$kid" ] || fail "$WHEN: pidfd Pid '$(fdi $pid $pidfd Pid)', want $kid"
	[ $(( 0$(fdi $pid $pidfd flags) & 04000 )) != 0 ] || fail "$WHEN: pidfd flags $(fdi $pid $pidfd flags): no O_NONBLOCK"
	[ "$(fdi $pid $pidout Pid)" = "$$" ] || fail "$WHEN: pidfd to the shell: Pid '$(fdi $pid $pidout Pid)', want $$"
	[ "$(fdi $pid $dir pos)" = "$dirpos" ] || fail "$WHEN: directory pos $(fdi $pid $dir pos), want $dirpos"
}

mkdir run && cd run || fail "mkdir"
evloop > out 2> evloop.err &
pid=$!
track $pid
wait_line out '^ready' 20 && wait_line out '^child ready' 20 ||
	fail "evloop did not start: $(cat out evloop.err | tr '\n' '|')"
line=$(grep '^fds ' out)
v() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
ep=$(v ep) ep2=$(v ep2) efd=$(v efd) tper=$(v tper) sfd=$(v sfd) ino=$(v ino) wdd=$(v wdd)
wdf=$(v wdf) pidfd=$(v pidfd) pidout=$(v pidout) mem=$(v mem) memro=$(v memro) opath=$(v opath) dir=$(v dir)
kid=$(v child)
track $kid
rpipe=$(($(v pipe) - 1))
dirpos=$(fdi $pid $dir pos)
[ "$wdd" = 3 ] && [ "$wdf" = 4 ] || fail "setup: wds $wdd $wdf, want 3 4"
outside "before the dump"
imgcr dump -t $pid -D ../d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $pid $kid; do wait_gone $p 10 || fail "task $p survived the dump"; done
grep -q "warning" dump.err && fail "dump warned: $(cat dump.err)"
for k in epoll inotify memfd pidfd; do
	tree_fields ../d/tree | grep -q "^file [0-9]* $k " || fail "no $k record in the tree: $(grep '^file' ../d/tree | tr '\n' '|')"
done
[ "$(grep -c '^epitem ' ../d/tree)" = 8 ] || fail "epitem records: $(grep '^epitem' ../d/tree | tr '\n' '|')"
tree_fields ../d/tree | grep -q "^epitem [0-9]* $kid 200 0x19 0xc8$" || fail "the child's item is not registered by the child: $(grep '^epitem' ../d/tree | tr '\n' '|')"
tree_fields ../d/tree | grep -q "^watch [0-9]* $wdf 0x2 $PWD/w/f$" && tree_fields ../d/tree | grep -q "^watch [0-9]* $wdd 0x300 $PWD/w$" ||
	fail "watch records: $(grep '^watch' ../d/tree | tr '\n' '|')"
ls ../d/memfd-*.data > /dev/null 2>&1 || fail "no memfd data file"
imgcr show ../d > show.txt || fail "imgcr show DIR failed"
grep -q "fd $ep: epoll: .*fd 200 events 0x19 data 0xc8 (by pid $kid)" show.txt &&
	grep -q "fd $ino: inotify: .*wd $wdd mask 0x300 $PWD/w" show.txt &&
	grep -q "fd $mem: memfd evl-mem .* seals 0x6 rw" show.txt &&
	grep -q "fd $pidfd: pidfd pid $kid " show.txt &&
	grep -q "fd $pidout: pidfd pid $$ (outside the tree) " show.txt &&
	grep -q "fd $opath: file $PWD/w/f r O_PATH" show.txt ||
	fail "imgcr show DIR: $(grep 'fd [0-9]*:' show.txt | cut -c1-100 | tr '\n' '|')"
imgcr show --json ../d | grep -q '"kind":"epoll","flags":[0-9]*,"pos":0,"items":\[{"fd":' ||
	fail "imgcr show --json: no epoll items"

imgcr restore -D ../d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $pid $kid
outside "after the restore"
touch restored
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC: $(grep -E 'BAD' out | tr '\n' '|')$(rerr)"
grep -q BAD out && fail "$(grep -E 'BAD|info' out | tr '\n' '|')"
grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
pass "$(grep -c '^ok' out) checks ok; $(sed -n 's/^ok timerfd: //p' out)"
