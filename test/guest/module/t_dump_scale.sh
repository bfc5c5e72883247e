#!/bin/sh
# The dump's open() is linear in the mappings and runs of pages of the
# task (issue 25): a stopped process with 30000 small mappings below one
# holding 10000 separate runs of pages was walked runs x mappings times
# (3e8 steps: about 2.5 s under TCG; 1.2e9, 60000 x 20000, took 10 s and
# 60000 x 65000 16 s in the review; the linear walk takes well under
# 200 ms).  Half the old size: its restore took 70 s on 6.1 under TCG.
# The image is then restored and the program checks its pages.
# timeout: 240
. /imgcr/guest/lib.sh
require_modules

manymaps 30000 10000 > m.out 2>&1 &
pid=$!
track $pid
wait_line m.out '^ready' 60 || fail "manymaps did not start: $(cat m.out)"
wait_state $pid T 10 || fail "manymaps did not stop itself"
holddump $pid < /dev/null > o.out 2>&1 || fail "holddump: $(cat o.out)"
ms=$(sed -n 's/^opened \([0-9]*\)$/\1/p' o.out)
[ -n "$ms" ] || fail "holddump: $(cat o.out)"
cat /proc/$pid/dump > m.img || fail "cat /proc/$pid/dump failed"
info "30000 mappings, 10000 runs: open() of the dump $ms ms, image $(size_of m.img) bytes"
# linear: well under 200 ms here; the quadratic walk would take about 2.5 s
[ "$ms" -lt 1200 ] || fail "the dump's open() took $ms ms (want < 1200: a walk quadratic in mappings x runs?)"
kill9 $pid
chmod +x m.img
./m.img > r.out 2>&1 &
rp=$!
track $rp
wait_exit $rp 120
[ "$RC" = 0 ] || fail "restored manymaps: rc=$RC: $(cat r.out)"
grep -q '^ok$' r.out || fail "restored manymaps: $(cat r.out)"
pass "open() $ms ms, restored, pages intact"
