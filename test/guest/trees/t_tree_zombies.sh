#!/bin/sh
# Zombies dumped and restored (test/progs/zombies.c): a parent with four
# unreaped dead children -- A exited with code 3 and leads a process group
# that a live child C is in, B killed itself with SIGTERM and leads its
# own session, D was SIGKILLed, E aborted with a core dump.  The dump is
# refused while E is a zombie with the core-dump flag (exit_code 134:
# that flag cannot be restored; message naming E, the tree runs on); the
# parent then reaps E (SIGUSR2) and the tree is dumped; the tree records
# each zombie's wait status (exit records, no image), its SigIgn/SigCgt
# (zombie-sig records) and limits.  After the restore A, B and D are
# zombies again (state Z, same ppid, pgid, sid, exit_code, SigIgn, SigCgt
# and limits from outside), and the restored parent checks A's
# dispositions and limits in /proc and reaps them with the same status
# (it checks: "ok", "done ok").  The same from a dump made first with
# --leave-running (which leaves the zombies and their parent as they were),
# restored at the same time with --pidns: there the parent of the root is
# imgcr-init, and the zombies are found by NSpid.  Refusals: a zombie as the root of a
# dump (message; its parent still runs), and restores of edited trees (a
# zombie that died of a signal that cannot kill, a bad status, a task
# whose parent is a zombie: message, nothing created).
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# f PID N: field N of /proc/PID/stat (fields after the comm are counted
# from 3), "" if gone
f() {
	s=$(cat /proc/$1/stat 2>/dev/null) || { echo ""; return; }
	s=${s##*) }
	echo "$s" | cut -d' ' -f$(($2 - 2))
}

# zsig PID: what /proc shows of a zombie's dispositions and limits
zsig() {
	grep -E '^Sig(Ign|Cgt):' /proc/$1/status | tr -s '\t ' ' ' | tr '\n' ' '
	tr -s ' ' < /proc/$1/limits | tr '\n' '|'
}

# outside WHEN: what /proc shows of the zombies and of C
outside() {
	for z in "$a 768" "$b 15" "$d 9"; do
		set -- $z
		[ "$(state $1)" = Z ] || fail "$WHEN: task $1 is '$(state $1)', want a zombie (Z)"
		[ "$(f $1 4)" = $pid ] || fail "$WHEN: zombie $1 has parent '$(f $1 4)', want $pid"
		[ "$(f $1 52)" = $2 ] || fail "$WHEN: zombie $1 has exit_code '$(f $1 52)', want $2"
	done
	case "$(zsig $a)" in
	"SigIgn: 000000000000000"[1357]" SigCgt: 0000000000000a00 "*"Max core file size 4096 8192 bytes"*"Max open files 77 900 files"*) ;;
	*) fail "$WHEN: zombie $a's dispositions and limits: $(zsig $a)" ;;
	esac
	if [ "$WHEN" = "before the dump" ]; then
		zsig_a=$(zsig $a)
		zsig_b=$(zsig $b)
	fi
	[ "$(zsig $a)" = "$zsig_a" ] && [ "$(zsig $b)" = "$zsig_b" ] ||
		fail "$WHEN: dispositions/limits of $a: $(zsig $a), of $b: $(zsig $b); before: $zsig_a, $zsig_b"
	[ "$(f $a 5)" = $a ] || fail "$WHEN: zombie $a is in group '$(f $a 5)', want its own"
	[ "$(f $c 5)" = $a ] || fail "$WHEN: task $c is in group '$(f $c 5)', want the zombie $a's"
	[ "$(f $b 6)" = $b ] || fail "$WHEN: zombie $b is in session '$(f $b 6)', want its own"
	[ "$(f $b 5)" = $b ] || fail "$WHEN: zombie $b is in group '$(f $b 5)', want its own"
	case "$(state $c)" in S) ;; *) fail "$WHEN: task $c is '$(state $c)', want S" ;; esac
}

# O_APPEND: both restored copies write to out
zombies >> out 2> zombies.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "zombies did not start: $(cat out zombies.err | tr '\n' '|')"
set -- $(sed -n 's/^pids //p' out)
a=$1 b=$2 c=$3 d=$4 e=$5
ecore=$(f $e 52)
case "$ecore" in
134) ;;
6) info "no core dump in this system: E's status is 6 without the flag" ;;
*) fail "E's exit_code is '$ecore', want 134 (or 6)" ;;
esac
track $c
[ "$(state $e)" = Z ] && [ "$(f $e 52)" = $ecore ] || fail "task $e is '$(state $e)', exit_code '$(f $e 52)', want Z $ecore"
if [ "$ecore" = 134 ]; then
	imgcr dump -t $pid -D dcore 2> dcore.err && fail "dump with a core-dumped zombie succeeded"
	grep -q "pid $e: zombie killed by signal 6 with a core dump: the core-dump flag of its wait status cannot be restored" dcore.err ||
		fail "refusal of the core-dumped zombie: $(tr '\n' '|' < dcore.err)"
	[ "$(state $e)" = Z ] && left_running $pid || fail "after the refused dump: $pid '$(state $pid)', $e '$(state $e)'"
fi
kill -USR2 $pid
wait_line out '^e gone' 20 || fail "E was not reaped: $(tail -n 2 out | tr '\n' '|')"
grep -q "^reaped $e signaled 6$([ "$ecore" = 134 ] && echo ' core')\$" out || fail "E's status: $(grep "^reaped $e" out)"
WHEN="before the dump" outside
imgcr dump --leave-running -t $pid -D dp 2> dump.err || fail "dump --leave-running: $(cat dump.err)"
[ "$(grep -c '^exit ' dp/tree)" = 3 ] || fail "dump --leave-running: want 3 exit records"
WHEN="after dump --leave-running" outside
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for z in "$a 768" "$b 15" "$d 9"; do
	tree_fields d/tree | grep -q "^exit $z\$" || fail "no 'exit $z' record: $(grep '^exit' d/tree | tr '\n' '|')"
	set -- $z
	[ -e d/core-$1.img ] && fail "an image was written for the zombie $1"
done
[ "$(grep -c '^exit ' d/tree)" = 3 ] || fail "want 3 exit records: $(grep '^exit' d/tree | tr '\n' '|')"
tree_fields d/tree | grep -q "^zombie-sig $a 0x[1357] 0xa00\$" || fail "no 'zombie-sig $a 0x1 0xa00' record: $(grep '^zombie-sig' d/tree | tr '\n' '|')"
imgcr show d > show.txt || fail "imgcr show d failed"
grep -q "zombie: exited with code 3" show.txt && grep -q "zombie: killed by signal 15" show.txt ||
	fail "imgcr show: $(grep -i zombie show.txt | tr '\n' '|')"
imgcr show --json d > show.json || fail "imgcr show --json failed"
grep -q "\"exit_status\":768" show.json || fail "show --json has no exit_status 768"
# the zombies go with their parent (reaped by init)
wait_dumped_gone $pid $a $b $c $d $e

# refused: a zombie that cannot be restored as such
mkdir bad && cp d/* bad/ && sed -i "s/^exit pid=$a .*/exit pid=$a status=17/" bad/tree
imgcr restore -D bad > bad.out 2> bad.err && fail "restore of a zombie killed by SIGCHLD succeeded"
grep -q "pid $a: zombie killed by signal 17, whose default action does not kill: cannot be restored" bad.err ||
	fail "refusal message: $(tr '\n' '|' < bad.err)"
[ -e /proc/$pid ] && fail "the refused restore created task $pid"
sed -i "s/^exit pid=$a .*/exit pid=$a status=70000/" bad/tree
imgcr restore -D bad > bad.out 2> bad.err && fail "restore of a bad exit status succeeded"
grep -q "bad exit record" bad.err || fail "refusal message: $(tr '\n' '|' < bad.err)"
cp d/tree bad/tree && sed -i "s/^task pid=$c ppid=$pid /task pid=$c ppid=$a /" bad/tree
imgcr restore -D bad > bad.out 2> bad.err && fail "restore of a child of a zombie succeeded"
grep -q "pid $c: its parent $a is a zombie: cannot be restored" bad.err || fail "refusal message: $(tr '\n' '|' < bad.err)"
[ -e /proc/$pid ] && fail "the refused restore created task $pid"

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_recreated $pid
wait_restored $pid 60 imgcr || fail "task $pid not restored (state '$(state $pid)' exe $(readlink /proc/$pid/exe) wchan $(cat /proc/$pid/wchan); children: $(for p in $a $b $c $d; do echo "$p:$(state $p):$(cat /proc/$p/wchan)"; done | tr '\n' ' ') $(tail -n 2 out | tr '\n' '|'))$(rerr)"
n=0
until [ "$(state $c)" = S ]; do
	n=$((n + 1))
	[ $n -lt 500 ] || fail "task $c not restored$(rerr)"
	usleep 20000
done
track $c
WHEN="after the restore" outside

# the --leave-running dump, restored in a new PID namespace meanwhile
imgcr restore --pidns -D dp > rp.out 2> rp.err &
rp=$!
track $rp
n=0
while :; do
	op=$(outer $pid)
	[ -n "$op" ] && [ "$(state $op)" = S ] && [ "$(readlink /proc/$op/exe)" = /imgcr/bin/zombies ] && break
	n=$((n + 1))
	[ $n -lt 3000 ] || fail "--pidns: task $pid not restored: $(cat rp.err)"
	usleep 20000
done
track $op
[ "$(cat /proc/$(f $op 4)/comm)" = imgcr-init ] || fail "--pidns: the root's parent is '$(cat /proc/$(f $op 4)/comm)', want imgcr-init"
for z in "$a 768" "$b 15" "$d 9"; do
	set -- $z
	o=$(outer $1)
	[ -n "$o" ] && [ "$(state $o)" = Z ] || fail "--pidns: zombie $1 is '$(state $o)' (our pid '$o')"
	[ "$(f $o 4)" = $op ] || fail "--pidns: zombie $1's parent is '$(f $o 4)', want $op"
	[ "$(f $o 52)" = $2 ] || fail "--pidns: zombie $1's exit_code is '$(f $o 52)', want $2"
done
o=$(outer $c)
track $o

kill -USR1 $pid $op
n=0
while [ "$(grep -c '^done' out)" -lt 2 ]; do
	n=$((n + 1))
	[ $n -lt 1000 ] || fail "the restored parents did not finish: $(tail -n 3 out | tr '\n' '|')"
	usleep 20000
done
wait_exit $rpid 30
grep -q BAD out && fail "$(grep BAD out | tr '\n' '|')"
[ "$(grep -c '^ok ' out)" = 11 ] || fail "want 11 'ok' (E's, then 5 per copy): $(grep -E '^(ok|reaped)' out | tr '\n' '|')"
[ "$(grep -c '^done ok' out)" = 2 ] || fail "want 2 'done ok': $(tail -n 3 out | tr '\n' '|')"
[ "$RC" = 0 ] || fail "imgcr restore exit status $RC$(rerr)"
wait_exit $rp 30
[ "$RC" = 0 ] || fail "imgcr restore --pidns exit status $RC: $(cat rp.err)"

# refused: the root of a dump is a zombie (holder's unreaped child); its
# parent is left alone and ticks on
holder zombie h.out </dev/null >/dev/null 2>h.err &
hp=$!
track $hp
wait_line h.out "^$hp tick 2\$" 20 || fail "holder did not start: $(cat h.err)"
zp=""
for k in $(cat /proc/$hp/task/$hp/children); do
	track $k
	[ "$(state $k)" = Z ] && zp=$k
done
[ -n "$zp" ] || fail "holder has no zombie child: $(cat /proc/$hp/task/$hp/children)"
imgcr dump -t $zp -D z 2> z.err && fail "dump of a zombie root succeeded"
grep -q "pid $zp: zombie: the root of a tree cannot be a zombie" z.err || fail "message: $(tr '\n' '|' < z.err)"
[ "$(state $zp)" = Z ] || fail "the zombie is '$(state $zp)' after the refused dump"
t=$(grep -c "^$hp tick" h.out)
wait_line h.out "^$hp tick $((t + 3))\$" 10 || fail "the zombie's parent stopped ticking after the refused dump"
pass "$(grep '^reaped' out | tr '\n' ';')"
