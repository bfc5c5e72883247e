#!/bin/sh
# Deleted things still held (test/progs/ghosts.c), on /tmp (tmpfs), each
# dumped with imgcr dump -t PID -D DIR and restored with imgcr restore
# --detach; the program checks itself after the restore (fstat: type,
# mode, owner, nlink; contents; FIFO data; cwd), the test from outside
# (/proc/PID/fd and cwd links, nothing left in the directory):
# ghosts_dir: an empty directory held open and another one as the cwd,
# both removed (mode 0751/0710, owner 1234:1235): a ghost record
# type=dir and a cwd-deleted record with mode and owner; both come back
# empty, deleted, with their mode and owner.
# ghosts_fifo: a removed FIFO with 13 bytes in it, open twice: its data
# and its one pipe come back, mode 0640, links "f.fifo (deleted)".
# ghosts_link: h1.dat open through its deleted name while h2.dat names
# it: linked back by its file handle (not copied): same inode as h2.dat,
# nlink 1, a write through the fd shows in h2.dat, offset kept.
# ghosts_symlink: t.dat opened through a symbolic link since removed: the
# fd is t.dat (a plain file record), same inode.
# ghosts_dev: a removed /dev/null node (char 1:3, mode 0620) comes back
# with mknod, deleted again.
# ghosts_spare: a deleted g.dat whose name and first spare names are
# taken at restore (g.dat a file, .imgcr-ghost-INO-0 a directory,
# .imgcr-ghost-INO-1 a dangling symbolic link): made at the next free
# name, unlinked under g.dat; the others untouched.
# ghosts_procfd: a child holding /proc/PARENT/stat is refused at dump
# (naming pid, fd and why); the tree goes on.
# ghosts_proccwd: a cwd /proc/N of an exited process is refused at dump.
# ghosts_cgroupdir: a removed cgroup directory held open is refused at
# dump (a mkdir there would make another cgroup).
# timeout: 400
. /imgcr/guest/lib.sh
require_modules

# start MODE [ARG]: ghosts MODE in a fresh directory w.MODE (cwd), until "ready"
start() {
	rm -rf "w.$1"
	mkdir "w.$1" && cd "w.$1" || fail "mkdir"
	ghosts $1 ${2:-} > out 2> err &
	pid=$!
	track $pid
	wait_line out '^ready' 20 || fail "ghosts $1 did not start: $(cat out err | tr '\n' '|')"
	fd=$(sed -n 's/^fd \([0-9]*\).*/\1/p' out)
}

# dump_restore: dump $pid into d, restore it --detach, wait until it runs
dump_restore() {
	imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err | tr '\n' '|')"
	wait_gone $pid 10 || fail "task $pid survived the dump"
	${before_restore:-:}
	imgcr restore -D d --detach > restore.out 2> restore.err || fail "restore: $(cat restore.err | tr '\n' '|')"
	wait_restored $pid 60 imgcr || fail "task $pid not restored (state '$(state $pid)')$(rerr)"
}

# finish: let the program check itself, and report
finish() {
	touch restored
	n=0
	while ! grep -q -e '^done ok' -e '^BAD' out && [ $n -lt 100 ]; do usleep 100000; n=$((n + 1)); done
	grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
	grep -q '^done ok' out || fail "no 'done ok': $(tail -n 3 out | tr '\n' '|')"
	left=$(ls -A | grep -v -x -e out -e err -e d -e dump.err -e restore.out -e restore.err -e restored $keep)
	[ -z "$left" ] || fail "left in the directory: $(echo $left)"
	pass "$(grep -c '^ok' out) checks ok$*"
}

sub_dir() {
	start dir
	l1=$(readlink /proc/$pid/fd/$fd)
	[ "$l1" = "$PWD/dd (deleted)" ] && [ "$(readlink /proc/$pid/cwd)" = "$PWD/cwdd (deleted)" ] ||
		fail "before: fd '$l1' cwd '$(readlink /proc/$pid/cwd)'"
	dump_restore
	grep -q "^ghost .* path=$PWD/dd type=dir" d/tree || fail "no dir ghost: $(grep '^ghost' d/tree | tr '\n' '|')"
	grep -q "^cwd-deleted pid=$pid mode=0710 uid=1234 gid=1235" d/tree || fail "cwd-deleted: $(grep '^cwd' d/tree)"
	[ "$(readlink /proc/$pid/fd/$fd)" = "$l1" ] || fail "fd after: '$(readlink /proc/$pid/fd/$fd)'"
	[ "$(readlink /proc/$pid/cwd)" = "$PWD/cwdd (deleted)" ] || fail "cwd after: '$(readlink /proc/$pid/cwd)'"
	finish
}

sub_fifo() {
	start fifo
	set -- $(sed -n 's/^fd //p' out)
	l1=$(readlink /proc/$pid/fd/$1)
	[ "$l1" = "$PWD/f.fifo (deleted)" ] || fail "before: '$l1'"
	dump_restore
	grep -q "^ghost .* path=$PWD/f.fifo type=fifo" d/tree || fail "no fifo ghost: $(grep '^ghost' d/tree | tr '\n' '|')"
	for f in $1 $2; do
		[ "$(readlink /proc/$pid/fd/$f)" = "$l1" ] || fail "fd $f after: '$(readlink /proc/$pid/fd/$f)'"
	done
	finish
}

sub_link() {
	start link
	ino=$(stat -c %i h2.dat)
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/h1.dat (deleted)" ] || fail "before: '$(readlink /proc/$pid/fd/$fd)'"
	dump_restore
	grep -q "^ghost .*ino=$ino .*path=$PWD/h1.dat type=link htype=" d/tree ||
		fail "no link ghost: $(grep '^ghost' d/tree | tr '\n' '|')"
	[ ! -e d/ghost-*-$ino.data ] || fail "the content was copied: $(ls d)"
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/h1.dat (deleted)" ] || fail "after: '$(readlink /proc/$pid/fd/$fd)'"
	[ "$(stat -c '%i %h' h2.dat)" = "$ino 1" ] || fail "h2.dat: $(stat -c '%i %h' h2.dat), want $ino 1"
	keep="-e h2.dat"
	finish
}

sub_symlink() {
	start symlink
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/t.dat" ] || fail "before: '$(readlink /proc/$pid/fd/$fd)'"
	dump_restore
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/t.dat" ] || fail "after: '$(readlink /proc/$pid/fd/$fd)'"
	keep="-e t.dat"
	finish
}

sub_dev() {
	start dev
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/n.null (deleted)" ] || fail "before: '$(readlink /proc/$pid/fd/$fd)'"
	dump_restore
	grep -q "^ghost .* path=$PWD/n.null type=chr rdev=1:3" d/tree || fail "no chr ghost: $(grep '^ghost' d/tree | tr '\n' '|')"
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/n.null (deleted)" ] || fail "after: '$(readlink /proc/$pid/fd/$fd)'"
	finish
}

take_spares() {
	echo other > g.dat
	mkdir .imgcr-ghost-$ino-0
	ln -s /nonexistent .imgcr-ghost-$ino-1
}

sub_spare() {
	start spare
	ino=$(sed -n 's/^ino //p' out)
	before_restore=take_spares
	dump_restore
	grep -q "recreated at the free name $PWD/.imgcr-ghost-$ino-2," restore.err || fail "note: $(cat restore.err | tr '\n' '|')"
	[ "$(readlink /proc/$pid/fd/$fd)" = "$PWD/g.dat (deleted)" ] || fail "after: '$(readlink /proc/$pid/fd/$fd)'"
	[ "$(cat g.dat)" = other ] && [ -d .imgcr-ghost-$ino-0 ] && [ -L .imgcr-ghost-$ino-1 ] ||
		fail "the names taken were changed: $(ls -la | tr '\n' '|')"
	keep="-e g.dat -e .imgcr-ghost-$ino-0 -e .imgcr-ghost-$ino-1"
	finish
}

# refused MODE WHY [ARG]: dump refused, with WHY after "pid P...", the tree goes on
refused() {
	start $1 ${3:-}
	who=$pid
	if [ $1 = holddir ]; then
		rmdir $CG || fail "rmdir $CG"
	fi
	if [ $1 = procfd ]; then
		who=$(sed -n 's/^child //p' out)
		track $who
		fd=$(sed -n 's/^fd //p' out)
	fi
	imgcr dump -t $pid -D d 2> dump.err && fail "dump succeeded"
	want=$(eval "echo \"$2\"")
	grep -q "pid $who$want" dump.err || fail "message: $(cat dump.err | tr '\n' '|')"
	n=$(grep -c '^tick' out)
	usleep 500000
	[ "$(grep -c '^tick' out)" -gt "$n" ] || fail "the task does not continue after the refused dump"
	pass "refused: $(head -n1 dump.err | cut -c1-140)"
}

sub_procfd() { refused procfd " fd \$fd: /proc/\$pid/stat: a file of /proc of a task of the tree"; }
sub_proccwd() { refused proccwd ": cwd /proc/[0-9]* (deleted): the /proc directory of a process that has exited is not supported"; }

sub_cgroupdir() {
	CG=/sys/fs/cgroup
	grep -q "^[^ ]* $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG || fail "cannot mount cgroup2"
	CG=$CG/ghosts_t
	mkdir $CG || fail "mkdir $CG"
	refused holddir " fd \$fd: $CG (deleted): a deleted directory of a kernel filesystem" $CG
}

subtest ghosts_dir sub_dir
subtest ghosts_fifo sub_fifo
subtest ghosts_link sub_link
subtest ghosts_symlink sub_symlink
subtest ghosts_dev sub_dev
subtest ghosts_spare sub_spare
subtest ghosts_procfd sub_procfd
subtest ghosts_proccwd sub_proccwd
subtest ghosts_cgroupdir sub_cgroupdir
