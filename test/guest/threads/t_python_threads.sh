#!/bin/sh
# Debian's python3 running 4 `threading` workers, each with its own list of
# 50 000 numbers that it updates and checks, printing "w W i N tid T" every
# ~50 ms; the main thread waits in join().  Stopped mid-work (every thread),
# dumped, killed and restored: each worker goes on with its next N, in its
# own thread (same native TID), and its data is intact ("w W done ok").
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY in the guest"

cat > work.py <<'PYEOF'
import sys, threading, time

N, target = 4, int(sys.argv[1])
out = threading.Lock()

def say(s):
    with out:
        print(s, flush=True)

def worker(w):
    data = [(w * 1000003 + k * 7919) % 65521 for k in range(50000)]
    ref = sum(data)
    tid = threading.get_native_id()
    for i in range(1, target + 1):
        data[(i * 31) % len(data)] += 1
        say("w %d i %d tid %d" % (w, i, tid))
        time.sleep(0.05)
    ok = sum(data) == ref + target and threading.get_native_id() == tid
    say("w %d done %s tid %d" % (w, "ok" if ok else "BAD", tid))

ts = [threading.Thread(target=worker, args=(w,)) for w in range(N)]
for t in ts:
    t.start()
say("ready")
for t in ts:
    t.join()
say("python threads ok")
PYEOF

TARGET=80
$PY work.py $TARGET > out 2> py.err &
pid=$!
track $pid
wait_line out '^ready' 60 || fail "python did not start: $(tail -c 300 py.err | tr '\n' '|')"
for w in 0 1 2 3; do
	wait_line out "^w $w i 10 " 60 || fail "worker $w did not reach 10: $(tail -n1 out)"
done
stop_all $pid
snap_threads $pid before.snap
[ "$(wc -l < before.snap)" = 5 ] || fail "python has $(wc -l < before.snap) threads, want 5"
otids=$(tids $pid | grep -v "^$pid\$" | tr '\n' ' ')
cp out out.before
dump $pid p.img
kill9 $pid
left=$(tids_in_use "$otids")
[ -z "$left" ] || fail "TIDs still in use after kill: $left"

chmod +x p.img
./p.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_tids $rpid "$otids" 60 || fail "($WAIT_WHY) restored python has threads '$(tids $rpid | tr '\n' ' ')', want $rpid $otids$(rerr)"
snap_threads $rpid after.snap
d=$(diff_snaps before.snap after.snap) || true
[ -z "$d" ] || fail "threads differ after restore (comm/SigBlk): $d"
wait_exit $rpid 120
[ "$RC" = 0 ] || fail "restored python exit $RC: $(tail -n 2 out | tr '\n' '|')$(rerr)"
grep -q '^python threads ok$' out || fail "no 'python threads ok': $(tail -n1 out)"

# Outside view: each worker 1..TARGET exactly once, in order, always in the
# thread it started in, and its data intact.
for w in 0 1 2 3; do
	tid=$(sed -n "s/^w $w i 1 tid //p" out)
	[ -n "$tid" ] || fail "worker $w never printed"
	case " $otids " in *" $tid "*) ;; *) fail "worker $w ran in $tid, not one of $otids" ;; esac
	n=0
	grep "^w $w i " out > w.txt
	while read -r _ _ _ i _ t; do
		n=$((n + 1))
		[ "$i" = $n ] || fail "worker $w: line $n is i $i (gap or repeat)"
		[ "$t" = "$tid" ] || fail "worker $w: i $i printed by tid $t, not $tid"
	done < w.txt
	[ $n = $TARGET ] || fail "worker $w printed $n lines, want $TARGET"
	grep -q "^w $w done ok tid $tid\$" out || fail "worker $w: $(grep "^w $w done" out)"
done
resumed=$(for w in 0 1 2 3; do grep "^w $w i " out.before | tail -n 1 | cut -d' ' -f4; done | tr '\n' ' ')
pass "4 workers resumed (stopped at $resumed), TIDs $otids, data intact"
