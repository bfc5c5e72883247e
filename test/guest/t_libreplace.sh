#!/bin/sh
# A dynamically linked program (libuser) using libimgcrtest.so, a shared
# library built for the test.  Its image restores while the library is
# unchanged (control); once the library file is replaced (other build:
# new size and mtime) and once more when the original bytes are put back
# (same size and content, only the mtime differs), execve of the image
# fails with ESTALE, the caller survives, dmesg names the library, and
# nothing of the image runs.
. /imgcr/guest/lib.sh
require_modules

cp /imgcr/bin/libuser /imgcr/lib/libimgcrtest.so .
lib=$PWD/libimgcrtest.so
./libuser > out &
pid=$!
track $pid
wait_line out '^ready' 10 || fail "libuser did not start: $(cat out)"
grep -q '^ready value=1007$' out || fail "library value: $(cat out)"
grep -q " $lib\$" /proc/$pid/maps || fail "$lib not in /proc/$pid/maps"
wait_state $pid S 10 || fail "libuser not sleeping"
stop_task $pid
dump $pid l.img
kill9 $pid
chmod +x l.img

# Control: the image restores and calls into the library.
tryexec ./l.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 tryexec || fail "control: image did not restore$(rerr)"
kill -USR1 $rpid
wait_exit $rpid 10
[ "$RC" = 0 ] || fail "control: restored libuser exit $RC$(rerr)"
grep -q "^value 1007 pid=$rpid\$" out || fail "control: no 'value 1007 pid=$rpid': $(tr '\n' '|' < out)"

# stale WHAT: the image must now be refused because of the library.
stale() {
	lines=$(wc -l < out)
	dmesg_mark
	tryexec ./l.img >> out 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "$1: tryexec exit $rc, want 2 (execve failure): $(tail -n2 out | tr '\n' '|')"
	tail -n +$((lines + 1)) out > new
	[ "$(cat new)" = "tryexec: execve failed: ESTALE (116)" ] ||
		fail "$1: want only 'execve failed: ESTALE', got: $(tr '\n' '|' < new)"
	dmesg_since > dm.txt
	grep -q "binfmt_img: .*mapped file $lib changed since the dump" dm.txt ||
		fail "$1: dmesg does not name $lib: $(tr '\n' '|' < dm.txt)"
}

cp /imgcr/lib/libimgcrtest-v2.so "$lib"
stale "other build"
# Original bytes back in the same inode: only the mtime tells.
sleep 1
cp /imgcr/lib/libimgcrtest.so "$lib"
cmp -s /imgcr/lib/libimgcrtest.so "$lib" || fail "cannot put the library back"
stale "same bytes, new mtime"
pass
