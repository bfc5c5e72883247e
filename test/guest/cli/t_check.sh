#!/bin/sh
# imgcr check reports the modules (loaded, of imgcr's own version) and
# clone3(set_tid): usable by root, "not permitted" (use --pidns) for uid
# 1000.
. /imgcr/guest/lib.sh
require_modules
imgcr check > check.out 2>&1 || fail "imgcr check: $(tr '\n' '|' < check.out)"
grep -q '^clone3 set_tid: supported (restore keeps pids and thread ids)$' check.out ||
	fail "root: $(grep clone3 check.out)"
v=$(imgcr --version | cut -d' ' -f2)
for m in img_dump binfmt_img; do
	grep -q "^$m *loaded, version $v\$" check.out ||
		fail "$m: want 'loaded, version $v': $(grep "^$m" check.out)"
done
runas 1000 1000 imgcr check > check1.out 2>&1
grep -q '^clone3 set_tid: supported, not permitted' check1.out ||
	fail "uid 1000: $(grep clone3 check1.out)"
pass
