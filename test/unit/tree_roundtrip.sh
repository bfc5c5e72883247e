#!/bin/bash
# Host check, no guest: the tree file (userspace/tree.c) reads, shows and
# writes back the same model.
#  test/unit/tree/CASE/tree        a tree file (version 2 as imgcr wrote them
#                                  before version 3, or version 3), every
#                                  record kind among the cases
#  test/unit/tree/CASE/model       what treedump prints of it (every field)
#  test/unit/tree/CASE/show        imgcr show CASE
#  test/unit/tree/CASE/show.json   imgcr show --json CASE
#  test/unit/tree/CASE/vpids       (optional) treedump --vpids CASE: the
#                                  pids restore uses in the tree's PID
#                                  namespace
#  test/unit/tree/bad/NAME.tree    a malformed tree file: refused, with the
#                                  message in bad/NAME.err
# For each case: read -> model, show and show --json equal the golden files;
# written again (the current format) and read back -> the same model and
# show output (the round trip); written a second time -> the same bytes.
# A regular file is written "kind=reg"; "kind=file" (version 2, and version 3
# before the rename: guest-sk_inflight) is still read; allkinds-v3 has "reg".
# --update rewrites the golden files from the current code (check the diff!).
# Prints one "RESULT tree-NAME PASS|FAIL" line per check; exit 1 on a failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DATA=$REPO/test/unit/tree
UPDATE=0
[ "${1:-}" = --update ] && UPDATE=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
result() {	# NAME PASS|FAIL [WHY]
	echo "RESULT tree-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
# build: every userspace object, imgcr.c's main renamed, plus the driver
cflags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$REPO/include/uapi" -I"$REPO/userspace"
	-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"")
mkdir -p "$tmp/o"
for c in "$REPO"/userspace/*.c; do
	o=$tmp/o/$(basename "$c" .c).o
	if [ "$(basename "$c")" = imgcr.c ]; then
		gcc "${cflags[@]}" -c -o "$tmp/o/imgcr-main.o" "$c" &&
			gcc "${cflags[@]}" -Dmain=imgcr_main -c -o "$o" "$c"
	else
		gcc "${cflags[@]}" -c -o "$o" "$c"
	fi || { result build FAIL "cannot build $c"; exit 1; }
done &
wait $! || exit 1
objs=$(ls "$tmp"/o/*.o | grep -v imgcr-main.o)
gcc -o "$tmp/imgcr" "$tmp/o/imgcr-main.o" $(ls "$tmp"/o/*.o | grep -v 'imgcr\(-main\)\?\.o') &&
	gcc "${cflags[@]}" -o "$tmp/treedump" "$REPO/test/unit/treedump.c" $objs ||
	{ result build FAIL "cannot link"; exit 1; }

# golden NAME FILE GOT: compare (or, --update, store)
golden() {
	if [ "$UPDATE" = 1 ]; then
		cp "$3" "$2"
		return 0
	fi
	diff -u "$2" "$3" > "$tmp/diff" 2>&1 && return 0
	head -40 "$tmp/diff" | sed 's/^/    /'
	return 1
}

# outputs DIR PREFIX: model, show and show --json of DIR/tree into PREFIX.*
outputs() {
	(cd "$(dirname "$1")" && "$tmp/treedump" "$(basename "$1")") > "$2.model" 2>&1 || return 1
	(cd "$(dirname "$1")" && "$tmp/imgcr" show "$(basename "$1")") > "$2.show" 2>&1 || return 1
	(cd "$(dirname "$1")" && "$tmp/imgcr" show --json "$(basename "$1")") > "$2.json" 2>&1 || return 1
	# the JSON is valid JSON
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$2.json" 2> /dev/null ||
		{ echo "invalid JSON" >> "$2.json"; return 1; }
}

for d in "$DATA"/*/; do
	d=${d%/}
	name=${d##*/}
	[ "$name" = bad ] && continue
	[ -f "$d/tree" ] || continue
	mkdir -p "$tmp/in/$name" "$tmp/rt/$name" "$tmp/rt2/$name"
	cp "$d/tree" "$tmp/in/$name/tree"
	if ! outputs "$tmp/in/$name" "$tmp/in.$name"; then
		result "$name-read" FAIL "$(tail -1 "$tmp/in.$name.model") $(tail -1 "$tmp/in.$name.show")"
		continue
	fi
	ok=1
	golden "$name" "$d/model" "$tmp/in.$name.model" || ok=0
	golden "$name" "$d/show" "$tmp/in.$name.show" || ok=0
	golden "$name" "$d/show.json" "$tmp/in.$name.json" || ok=0
	if [ $ok = 1 ]; then result "$name-read" PASS; else result "$name-read" FAIL "differs from the golden files"; fi
	# CASE/vpids: the model with the pids in the tree's PID namespace (restore.c tree_use_vpids)
	if [ -f "$d/vpids" ] || { [ "$UPDATE" = 1 ] && [ -f "$d/vpids.update" ]; }; then
		(cd "$tmp/in" && "$tmp/treedump" --vpids "$name") > "$tmp/in.$name.vpids" 2>&1
		if golden "$name" "$d/vpids" "$tmp/in.$name.vpids"; then
			result "$name-vpids" PASS
		else
			result "$name-vpids" FAIL "differs from the golden file"
		fi
	fi
	# the round trip: written in the current format, read back the same
	if ! "$tmp/treedump" "$tmp/in/$name" "$tmp/rt/$name" 2> "$tmp/err"; then
		result "$name-roundtrip" FAIL "write: $(cat "$tmp/err")"
		continue
	fi
	outputs "$tmp/rt/$name" "$tmp/rt.$name" || true
	ok=1
	for x in model show json; do
		diff -u "$tmp/in.$name.$x" "$tmp/rt.$name.$x" > "$tmp/diff" 2>&1 ||
			{ ok=0; head -20 "$tmp/diff" | sed 's/^/    /'; }
	done
	if grep -q '^file .* kind=file ' "$tmp/rt/$name/tree"; then
		ok=0
		echo "    written with kind=file (the old name of kind=reg)"
	fi
	"$tmp/treedump" "$tmp/rt/$name" "$tmp/rt2/$name" 2> /dev/null &&
		cmp -s "$tmp/rt/$name/tree" "$tmp/rt2/$name/tree" || { ok=0; echo "    written twice: not the same bytes"; }
	if [ $ok = 1 ]; then result "$name-roundtrip" PASS; else result "$name-roundtrip" FAIL "the tree written again reads differently"; fi
done

# malformed input: refused, with the expected message
ok=1 n=0
for b in "$DATA"/bad/*.tree; do
	name=$(basename "$b" .tree)
	n=$((n + 1))
	mkdir -p "$tmp/bad/$name"
	cp "$b" "$tmp/bad/$name/tree"
	if (cd "$tmp/bad" && "$tmp/treedump" "$name") > "$tmp/bad.out" 2> "$tmp/bad.err"; then
		ok=0
		echo "    bad/$name.tree was accepted"
		continue
	fi
	if [ "$UPDATE" = 1 ]; then
		cp "$tmp/bad.err" "$DATA/bad/$name.err"
	elif ! diff -u "$DATA/bad/$name.err" "$tmp/bad.err" > "$tmp/diff"; then
		ok=0
		sed 's/^/    /' "$tmp/diff"
	fi
done
if [ $ok = 1 ]; then result "malformed" PASS "($n files refused)"; else result malformed FAIL; fi
[ "$fails" = 0 ]
