#!/bin/sh
# A dynamically linked program (libuser) using libimgcrtest.so, a shared
# library built for the test.  Its image restores while the library is
# unchanged (control); once the library file is replaced (other build:
# new size and mtime) and once more when the original bytes are put back
# (same size and content, only the mtime differs), execve of the image
# fails with ESTALE, the caller survives, dmesg names the library, and
# nothing of the image runs.  Another inode with the dump's size and mtime
# (a copy, as on another host): accepted if its bytes are the same,
# refused if its first page differs (an ELF's headers and build-id).
. /imgcr/guest/lib.sh
require_modules

# -p: the mtime of the initramfs copy, whole seconds, which cp -p and
# touch -r can give another file again
cp /imgcr/bin/libuser .
cp -p /imgcr/lib/libimgcrtest.so .
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

# stale WHAT [DMESG]: the image must now be refused because of the library.
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
	grep -q "binfmt_img: .*mapped file $lib ${2:-changed since the dump}" dm.txt ||
		fail "$1: dmesg does not name $lib: $(tr '\n' '|' < dm.txt)"
}

cp /imgcr/lib/libimgcrtest-v2.so "$lib"
stale "other build"
# Original bytes back in the same inode: only the mtime tells.
sleep 1
cp /imgcr/lib/libimgcrtest.so "$lib"
cmp -s /imgcr/lib/libimgcrtest.so "$lib" || fail "cannot put the library back"
stale "same bytes, new mtime"

# Another inode, the dump's size, mtime and bytes: the same file.
cp -p /imgcr/lib/libimgcrtest.so new.so && mv new.so "$lib" || fail "cannot copy the library"
tryexec ./l.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 tryexec || fail "a copy of the library (another inode): image did not restore$(rerr) $(dmesg | tail -n 1)"
kill -USR1 $rpid
wait_exit $rpid 10
grep -q "^value 1007 pid=$rpid\$" out || fail "copy: no 'value 1007 pid=$rpid': $(tail -n 2 out | tr '\n' '|')"

# Another inode, the dump's size and mtime, its first page changed.
cp -p /imgcr/lib/libimgcrtest.so new.so
printf 'X' | dd of=new.so bs=1 seek=9 conv=notrunc 2> /dev/null
touch -r /imgcr/lib/libimgcrtest.so new.so
mv new.so "$lib"
cmp -s /imgcr/lib/libimgcrtest.so "$lib" && fail "the library's copy was not changed"
stale "same size and mtime, first page differs" "is not the one of the dump"
pass
