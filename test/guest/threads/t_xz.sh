#!/bin/sh
# Debian's xz (liblzma's multi-threaded encoder: the main thread reads and
# writes while worker threads compress blocks) compresses ~11 MB with -T4
# in 1 MiB blocks.  imgcr dumps it while its workers are busy, the tree is
# killed and `imgcr restore` brings it back: the same PID and TIDs, and the
# output equals that of an uninterrupted run (xz's multi-threaded output is
# deterministic for a given block size) and decompresses to the input.
# timeout: 420
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules
XZ=/usr/bin/xz
[ -x $XZ ] || fail "no $XZ in the guest"

seq 1 1500000 > in
t0=$(now_ms)
$XZ -T4 -1 --block-size=1MiB -c in > ref.xz 2> ref.err || fail "reference xz failed: $(cat ref.err)"
ref_ms=$(( $(now_ms) - t0 ))

# setsid: imgcr dumps the whole session-led tree, not this test's shell
setsid $XZ -T4 -1 --block-size=1MiB -c in > out.xz 2> xz.err &
pid=$!
track $pid
# Wait until the workers exist and the first blocks are written.
n=0
until [ "$(nthreads $pid)" -ge 3 ] && [ "$(size_of out.xz)" -gt 0 ]; do
	n=$((n + 1))
	[ $n -lt 1500 ] || fail "xz did not start its workers: $(nthreads $pid) threads, $(size_of out.xz) bytes"
	usleep 20000
done
usleep 300000
before=$(tids $pid | grep -vx "$pid" | tr '\n' ' ')	# besides the main thread
[ "$(echo $before | wc -w)" -ge 2 ] || fail "xz has threads '$before' besides $pid"
t0=$(now_ms)
imgcr dump -t $pid -D d 2> dump.err || fail "imgcr dump: $(cat dump.err)"
dump_ms=$(( $(now_ms) - t0 ))
wait $pid 2>/dev/null	# reap it: its PID must be free for the restore
wait_gone $pid 30 || fail "xz still there after the dump"
partial=$(size_of out.xz)
imgcr show d > show.txt 2>&1 || fail "imgcr show: $(tail -n 3 show.txt)"
left=$(tids_in_use "$before")
[ -z "$left" ] || fail "TIDs still in use after the dump killed the tree: $left"

t0=$(now_ms)
imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_exists $pid 60 && wait_tids $pid "$before" 60 || fail "($WAIT_WHY) restored xz has threads '$(tids $pid | tr '\n' ' ')', want '$before'$(printf ' [%s]' "$(head -c 300 restore.err | tr '\n' '|')")"
restore_ms=$(( $(now_ms) - t0 ))
wait_exit $rpid 300
[ "$RC" = 0 ] || fail "restored xz exit $RC: $(head -c 300 restore.err | tr '\n' '|') $(cat xz.err)"
cmp -s out.xz ref.xz || fail "output differs from the uninterrupted run ($(size_of out.xz) vs $(size_of ref.xz) bytes)"
$XZ -dc out.xz | cmp -s - in || fail "output does not decompress to the input"
info "threads: 1 + $(echo $before | wc -w), reference ${ref_ms} ms, dump ${dump_ms} ms at $partial of $(size_of ref.xz) bytes, restore ${restore_ms} ms"
pass "xz -T4 resumed with TIDs $before; output identical"
