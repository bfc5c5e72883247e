#!/bin/sh
# A dynamically linked program with every kind of mapping the dumper
# supports and non-trivial signal/task state (see progs/mappings.c) is
# dumped, killed and restored.  From outside: /proc/PID/maps is the same
# (except the inode of the two shmem lines), cmdline, environ and auxv are
# byte-identical, exe, personality and the signal masks are the same, the
# SIGUSR1 count goes on, and the byte the restored program writes through
# its shared file mapping reaches the file.  From inside: every mapping's
# contents and protection, handlers, masks, sigaltstack, rseq, robust list,
# tid address, personality, and stack growth beyond the dump-time depth.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules

# snapshot PID PREFIX: what must survive, as files PREFIX.*
snapshot() {
	cat /proc/$1/maps > $2.maps0 || fail "cannot read /proc/$1/maps"
	# The inode of a shmem object is new after restore: mask it.
	awk '/ \/memfd:| \/dev\/zero \(deleted\)$/ { $5 = "INODE" } { print }' $2.maps0 > $2.maps
	cat /proc/$1/cmdline > $2.cmdline
	cat /proc/$1/environ > $2.environ
	cat /proc/$1/auxv > $2.auxv
	readlink /proc/$1/exe > $2.exe
	cat /proc/$1/personality > $2.pers
	grep -E '^Sig(Blk|Ign|Cgt):' /proc/$1/status > $2.sig
}

IMGCR_TEST_ENV=mappings-$$ mappings "$PWD" 3 > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "mappings did not start: $(tr '\n' '|' < out)"
grep -q '^precheck ok' out || fail "$(head -n1 out)"
info "$(grep '^precheck' out)"
for n in 1 2; do
	kill -USR1 $pid
	wait_line out "^usr1 $n\$" 10 || fail "SIGUSR1 $n not counted: $(tail -n1 out)"
done
stop_task $pid
snapshot $pid before

# Sanity of the "before" view: the mappings are there as intended.
m=before.maps0
f=$PWD/shared.dat
grep -q " rw-s 00000000 .* $f\$" $m || fail "no shared mapping of $f"
grep -q " rw-p 00000000 .* $f\$" $m || fail "no private mapping of $f"
grep -q ' rw-s .* /memfd:imgcr-test (deleted)$' $m || fail "no memfd mapping"
grep -q ' rw-s .* /dev/zero (deleted)$' $m || fail "no shared anonymous mapping"
grep -q ' ---p 00000000 00:00 0 *$' $m || fail "no PROT_NONE region"
grep -q ' r--p 00000000 00:00 0 *$' $m || fail "no read-only (split) region"
grep -q '/libc.so.6$' $m || fail "libc.so.6 not mapped: not dynamically linked?"
tr '\0' '\n' < before.environ | grep -qx "IMGCR_TEST_ENV=mappings-$$" || fail "test variable not in environ"

t0=$(now_ms)
dump $pid m.img
info "image $(size_of m.img) bytes, dump $(( $(now_ms) - t0 )) ms, $(wc -l < before.maps) mappings"
kill9 $pid
chmod +x m.img
./m.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 || fail "restored task not sleeping (state '$(state $rpid)')$(rerr)"
snapshot $rpid after

# A maps difference is reported at the end, so the checks after it (the
# program's own included) still say what else is right or wrong.
maps_bad=""
for x in maps cmdline environ auxv exe pers sig; do
	if ! cmp -s before.$x after.$x; then
		if [ $x = maps ]; then
			diff before.maps after.maps > maps.diff
			sed 's/^/INFO mappings: maps.diff: /' maps.diff
			maps_bad="maps differ (diff above): $(grep '^[-+][0-9a-f]' maps.diff | tr -s ' ' | tr '\n' '|')"
			continue
		fi
		fail "$x differs: before '$(head -c 120 before.$x | tr '\0\n' ' |')' after '$(head -c 120 after.$x | tr '\0\n' ' |')'"
	fi
done
# The unmasked inode of the shmem lines really is the only difference.
[ "$(grep -c INODE after.maps)" = 2 ] || fail "expected 2 shmem lines, got $(grep -c INODE after.maps)"

kill -USR1 $rpid
wait_line out '^usr1 3$' 10 || fail "SIGUSR1 after restore not counted as 3: $(tail -n1 out)$(rerr)"
kill -USR2 $rpid
wait_exit $rpid 30
[ "$RC" = 0 ] || fail "exit $RC: $(grep -E '^check|BAD' out | head -n2 | tr '\n' '|')$(rerr)"
grep -q "^check ok pid=$rpid\$" out || fail "no 'check ok pid=$rpid': $(tail -n2 out | tr '\n' '|')"
[ "$(grep -c '^usr1' out)" = 3 ] || fail "usr1 lines: $(grep '^usr1' out | tr '\n' ' ')"

# The byte written through the restored MAP_SHARED mapping is in the file;
# its neighbours still hold the pattern (i*7+3+(i>>12)) & 255.
b=$(od -An -tu1 -j 8196 -N 3 shared.dat | tr -s ' ')
want=" $(( (8196 * 7 + 3 + 2) & 255 )) 238 $(( (8198 * 7 + 3 + 2) & 255 ))"
[ "$b" = "$want" ] || fail "shared.dat bytes 8196..8198: '$b', want '$want'"
[ -z "$maps_bad" ] || fail "$maps_bad (everything else passed)"
pass
