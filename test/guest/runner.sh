#!/bin/sh
# runner.sh [PATTERNS]: run /imgcr/guest/t_*.sh (those whose name, without
# "t_" and ".sh", matches one of the comma-separated shell globs in
# PATTERNS; all if empty), each in a fresh temporary directory, with a
# deadline, making sure every test yields at least one RESULT line.
GUEST=/imgcr/guest
patterns=$(echo "${1:-*}" | tr ',' ' ')
default_timeout=180

# Kill everything but init, this runner, and kernel threads, so one test's
# leftovers (stopped or restored tasks) cannot disturb the next.
sweep() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = 1 ] || [ "$p" = $$ ] && continue
		st=$(cat "$d/stat" 2>/dev/null) || continue
		st=${st##*) }
		set -- $st
		# $2 is the parent pid; kernel threads are children of kthreadd (2).
		[ "$p" = 2 ] || [ "$2" = 2 ] && continue
		kill -9 "$p" 2>/dev/null
	done
}

# statecheck NAME LOG: one result for the state checks of test NAME (none if
# it restored nothing with imgcr restore); every line of LOG is shown.
statecheck() {
	[ -s "$2" ] || return 0
	sed 's/^/STATECHECK /' "$2"
	bad=$(grep -c '^state differs' "$2")
	n=$(grep -c '^state checked' "$2")
	exp=$(grep -c '^state expected' "$2")
	if [ "$bad" != 0 ]; then
		echo "RESULT $1-statecheck FAIL $bad difference(s): $(grep -m 1 '^state differs' "$2")"
	elif [ "$n" != 0 ]; then
		echo "RESULT $1-statecheck PASS ($n restore(s) compared, $exp expected difference(s))"
	fi
}

# jsoncapture TESTDIR: at the end of a test, keep `imgcr show --json` of
# each dump still in a directory the test dumped into or under TESTDIR
# (statehook.sh kept the others while the test ran).
jsoncapture() {
	find "$1" -name tree -type f 2> /dev/null | sed 's|/tree$||' >> "$IMGCR_JSON_DIR/dirs"
	sort -u "$IMGCR_JSON_DIR/dirs" | while IFS= read -r _d; do
		timeout -s KILL 60 /imgcr/guest/statehook.sh capture "$_d"
	done
}

# jsoncheck: after the last test, one python3 run (its start costs seconds
# under TCG) reads every kept show with its json parser and prints one
# result NAME-json per test that made a dump.
JSON_ROOT=/tmp/imgcr-json
jsoncheck() {
	grep -qs . "$JSON_ROOT"/*/index || return 0
	_t0=$(cut -d' ' -f1 /proc/uptime)
	if [ ! -x /usr/bin/python3 ]; then
		for _i in "$JSON_ROOT"/*/index; do
			[ -s "$_i" ] && echo "RESULT $(basename "$(dirname "$_i")")-json FAIL no /usr/bin/python3 in the guest"
		done
		return 0
	fi
	timeout -s KILL 600 /usr/bin/python3 - "$JSON_ROOT" << 'EOF'
import json, os, sys
root = sys.argv[1]
total = 0
for name in open(os.path.join(root, "order")).read().split():
    index = os.path.join(root, name, "index")
    if not os.path.exists(index) or not os.path.getsize(index):
        continue
    bad, ok, failed = [], 0, 0
    for line in open(index, encoding="utf-8", errors="surrogateescape"):
        mode, rc, path, d = line.rstrip("\n").split(" ", 3)
        if rc != "0":
            err = open(path + ".err", errors="replace").read().strip().splitlines()
            if mode == "strict":
                bad.append("%s: imgcr show --json exit %s after a restore from it: %s" % (d, rc, err[-1] if err else ""))
            else:
                failed += 1
            continue
        try:
            with open(path, encoding="utf-8") as f:
                o = json.load(f)
            if not isinstance(o, dict) or "format" not in o:
                raise ValueError('not an object with a "format" key')
            ok += 1
        except ValueError as e:
            bad.append("%s: %s: %s" % (d, type(e).__name__, e))
    total += ok + len(bad)
    note = ", %d show(s) of a dump taken apart refused" % failed if failed else ""
    if bad:
        print("RESULT %s-json FAIL %d of %d: %s" % (name, len(bad), len(bad) + ok, bad[0]))
        for b in bad[1:]:
            print("INFO %s-json: %s" % (name, b))
    else:
        print("RESULT %s-json PASS (%d show(s) --json parsed%s)" % (name, ok, note))
print("INFO json: %d show(s) parsed" % total)
EOF
	echo "INFO json: the check took $(awk -v t="$_t0" '{ printf "%.2f", $1 - t }' /proc/uptime) s after the tests"
}

# Tests marked "# runs: first" go first (t_xkernel_dump: its images are
# restored on freshly booted guests, whose CLOCK_MONOTONIC must already be
# past the dumping guest's when a sleep of the image ends; see docs/kernels.md,
# "Clocks"), then the others in name order.
first="" rest=""
for t in "$GUEST"/t_*.sh; do
	if grep -q '^# runs: first$' "$t"; then first="$first $t"; else rest="$rest $t"; fi
done
tests="$first $rest"
# The state check (docs/testing.md, "The state check"): every "imgcr dump" snapshots the frozen
# tree (statesnap before), every "imgcr restore" snapshots the restored tree
# and compares (statesnap after).  Each difference not listed in
# /imgcr/state-expected.txt fails the restore and is logged to
# IMGCR_STATE_LOG, which is checked below: a test that ignores imgcr
# restore's exit status still gets a failed "NAME-statecheck" result.
# statehook.sh runs statesnap and keeps `imgcr show --json` of each dump
# for jsoncheck.
rm -rf "$JSON_ROOT"
mkdir -p "$JSON_ROOT"
export IMGCR_STATE_HOOK=/imgcr/guest/statehook.sh
export IMGCR_STATE_EXPECTED=/imgcr/state-expected.txt
for t in $tests; do
	name=${t##*/t_}
	name=${name%.sh}
	match=
	set -f   # the patterns are for case, not for filename expansion
	# shellcheck disable=SC2254 # globs on purpose
	for pat in $patterns; do
		case "$name" in $pat) match=1 ;; esac
	done
	set +f
	[ -n "$match" ] || continue

	# A test may ask for a longer deadline with a "# timeout: SECONDS" line.
	tmo=$(sed -n 's/^# timeout: *\([0-9]*\)$/\1/p' "$t")
	tmo=${tmo:-$default_timeout}
	dir=$(mktemp -d "/tmp/$name.XXXXXX")
	echo "IMGCR-TEST-BEGIN $name (timeout ${tmo}s)"
	_tb=$(cut -d' ' -f1 /proc/uptime)
	export IMGCR_STATE_LOG="$dir.state"
	: > "$IMGCR_STATE_LOG"
	chmod 666 "$IMGCR_STATE_LOG"   # the unprivileged tests' imgcr too
	export IMGCR_JSON_DIR="$JSON_ROOT/$name"
	rm -rf "$IMGCR_JSON_DIR"
	mkdir -p "$IMGCR_JSON_DIR"
	echo "$name" >> "$JSON_ROOT/order"
	: > "$IMGCR_JSON_DIR/index"
	: > "$IMGCR_JSON_DIR/dirs"
	chmod 1777 "$IMGCR_JSON_DIR"
	chmod 666 "$IMGCR_JSON_DIR/index" "$IMGCR_JSON_DIR/dirs"
	# The exit status is passed out through a file: a pipeline only reports
	# tee's.
	( cd "$dir" && timeout -s KILL "$tmo" sh "$t"; echo $? > "$dir.rc" ) 2>&1 |
		tee "$dir.out"
	rc=$(cat "$dir.rc" 2>/dev/null || echo '?')
	if ! grep -q '^RESULT ' "$dir.out"; then
		if [ "$rc" = 137 ]; then
			echo "RESULT $name FAIL timeout after ${tmo}s"
		else
			echo "RESULT $name FAIL no result (exit $rc)"
		fi
	elif [ "$rc" != 0 ] && ! grep -q '^RESULT .* FAIL' "$dir.out"; then
		echo "RESULT $name FAIL exit status $rc"
	fi
	statecheck "$name" "$IMGCR_STATE_LOG"
	jsoncapture "$dir"
	# how long it took (guest seconds): where the suite's time goes
	echo "IMGCR-TEST-END $name $(awk -v t="$_tb" '{ printf "%.0f", $1 - t }' /proc/uptime)s"
	sweep
	rm -rf "$dir" "$dir.out" "$dir.rc" "$dir.state"
done
jsoncheck
