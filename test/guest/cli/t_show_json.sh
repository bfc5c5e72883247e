#!/bin/sh
# imgcr show --json is valid JSON for any bytes in a name (invalid UTF-8
# as \udcXX, Python's surrogateescape: os.fsencode() gives the bytes back)
# and carries "format".  Checked with a real parser (Debian's python3) on
# a dump directory and on an image; the file name round-trips exactly.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY in the guest"

name=$(printf 'f\377\376-\303\251-"q"\\b\001')
echo data > "$name" || fail "cannot create the file"
setsid counter 100000 3< "$name" < /dev/null > out 2>&1 &
pid=$!
track $pid
wait_line out '^2 ' 10 || fail "counter did not start"
imgcr dump -t $pid -D d > dump.out 2>&1 || fail "dump: $(cat dump.out)"
imgcr show --json d > tree.json 2> show.err || fail "show --json d: $(cat show.err)"
imgcr show --json d/core-$pid.img > img.json 2> show2.err || fail "show --json of the image: $(cat show2.err)"
$PY - "$PWD/$name" tree.json img.json > py.out 2>&1 <<'PYEOF' || fail "python: $(tail -n 3 py.out | tr '\n' '|')"
import json, os, sys
want = os.fsencode(sys.argv[1])
tree = json.load(open(sys.argv[2], encoding="utf-8"))
img = json.load(open(sys.argv[3], encoding="utf-8"))
assert tree["format"] == 1 and img["format"] == 1, "no format 1"
def strings(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)
    elif isinstance(o, str):
        yield o
names = [os.fsencode(s) for s in strings(tree)]
assert want in names, "the file name is not in the tree's JSON: %r" % [n for n in names if n.startswith(b"/")][:8]
print("ok", len(names))
PYEOF
grep -q '^ok ' py.out || fail "python: $(cat py.out)"
pass "tree and image JSON parsed, format 1, the name's bytes round-trip"
