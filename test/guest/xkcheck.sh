#!/bin/sh
# xkcheck.sh PROG OUT N: check the output OUT of a run of PROG (counter,
# python = pyloop.py, vdsoclock) that was stopped, dumped and restored from
# the image (output appended): its progress lines are 1..N, each exactly
# once and in order (no gap, no repeat across the restore), and it ended
# with its own success line (counter's self-check, "python ok", "vdsoclock
# ok").  Prints nothing and exits 0 if so; else prints the reason, exit 1.
# Used by t_vdsoclock.sh and the cross-kernel tests (t_xkernel_dump.sh,
# xkernel_restore.sh).
prog=$1 out=$2 n=$3
[ -s "$out" ] || { echo "$prog: no output ($out empty)"; exit 1; }
awk -v prog="$prog" -v n="$n" '
function gap(what) { if (!err) err = "line " k " is \"" $0 "\" (" what ")" }
{ last = $0 }
prog == "counter" && $1 ~ /^[0-9]+$/ { k++; if ($1 != k) gap("gap or repeat"); next }
prog == "counter" && $0 == "counter selfcheck ok" { done = 1; next }
prog == "python" && $1 == "i" { k++; s += k; if ($2 != k || $3 != "sum" || $4 != s) gap("gap or repeat"); next }
prog == "python" && $1 == "python" && $2 == "ok" { done = 1; next }
prog == "vdsoclock" && $1 == "v" { k++; if ($2 != k || $3 != "ok") gap("gap or repeat"); next }
prog == "vdsoclock" && $0 == "vdsoclock ok" { done = 1; next }
prog == "vdsoclock" && $1 == "vdsoclock" && !err { err = $0 }
prog == "counter" && $1 == "counter" && !err { err = $0 }
prog == "python" && $1 == "python" && !err { err = $0 }

END {
	if (err) { print prog ": " err; exit 1 }
	if (k != n) { print prog ": " k " progress lines, want " n " (last: " last ")"; exit 1 }
	if (!done) { print prog ": no success line at the end (last: " last ")"; exit 1 }
}' "$out"
