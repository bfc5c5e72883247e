#!/bin/sh
# Zombies dumped and restored (test/progs/zombies.c): a parent with four
# unreaped dead children -- A exited with code 3 and leads a process group
# that a live child C is in, B killed itself with SIGTERM and leads its
# own session, D was SIGKILLed, E aborted with a core dump -- is dumped;
# the tree records each zombie's wait status (exit records, no image).
# After the restore A, B, D and E are zombies again (state Z, same ppid, pgid, sid and exit_code
# from outside), and the restored parent reaps them with the same status
# (it checks: "ok", "done ok").  The same from a dump made first with
# --leave-running (which leaves the zombies and their parent as they were),
# restored at the same time with --pidns: there the parent of the root is
# imgcr-init, and the zombies are found by NSpid.  E (exit_code 134) comes
# back killed by SIGABRT without the core-dump flag (6; imgcr says so),
# which is what its parent checks.  Refusals: a zombie as the root of a
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

# outer INNER: our pid of the task whose pid is INNER in a child PID namespace
outer() {
	for _s in /proc/[0-9]*/status; do
		case "$(sed -n 's/^NSpid:[[:space:]]*//p' $_s 2>/dev/null | tr '\t' ' ')" in
		*" $1") _o=${_s#/proc/}; echo ${_o%/status}; return ;;
		esac
	done
}

# outside WHEN: what /proc shows of the zombies and of C
outside() {
	for z in "$a 768" "$b 15" "$d 9"; do
		set -- $z
		[ "$(state $1)" = Z ] || fail "$WHEN: task $1 is '$(state $1)', want a zombie (Z)"
		[ "$(f $1 4)" = $pid ] || fail "$WHEN: zombie $1 has parent '$(f $1 4)', want $pid"
		[ "$(f $1 52)" = $2 ] || fail "$WHEN: zombie $1 has exit_code '$(f $1 52)', want $2"
	done
	_ew=$ecore
	[ "$WHEN" = "after the restore" ] && _ew=6
	[ "$(state $e)" = Z ] && [ "$(f $e 52)" = $_ew ] || fail "$WHEN: task $e is '$(state $e)' exit_code '$(f $e 52)', want Z $_ew"
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
WHEN="before the dump" outside
imgcr dump --leave-running -t $pid -D dp 2> dump.err || fail "dump --leave-running: $(cat dump.err)"
[ "$(grep -c '^exit ' dp/tree)" = 4 ] || fail "dump --leave-running: want 4 exit records"
WHEN="after dump --leave-running" outside
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for z in "$a 768" "$b 15" "$d 9"; do
	tree_fields d/tree | grep -q "^exit $z\$" || fail "no 'exit $z' record: $(grep '^exit' d/tree | tr '\n' '|')"
	set -- $z
	[ -e d/core-$1.img ] && fail "an image was written for the zombie $1"
done
tree_fields d/tree | grep -q "^exit $e $ecore\$" || fail "no 'exit $e $ecore' record"
[ "$(grep -c '^exit ' d/tree)" = 4 ] || fail "want 4 exit records: $(grep '^exit' d/tree | tr '\n' '|')"
imgcr show d > show.txt || fail "imgcr show d failed"
grep -q "zombie: exited with code 3" show.txt && grep -q "zombie: killed by signal 15" show.txt ||
	fail "imgcr show: $(grep -i zombie show.txt | tr '\n' '|')"
[ "$ecore" = 6 ] || grep -q "zombie: killed by signal 6 (core dumped)" show.txt ||
	fail "imgcr show does not say E dumped core: $(grep -i zombie show.txt | tr '\n' '|')"
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
for z in "$a 768" "$b 15" "$d 9" "$e 6"; do
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
[ "$ecore" = 6 ] || grep -q "pid $e: zombie killed by signal 6 with a core dump: restored killed by that signal, without the core-dump flag" restore.err ||
	fail "no note about E's core-dump flag: $(cat restore.err)"
[ "$(grep -c '^ok ' out)" = 10 ] || fail "want 10 'ok' (5 per copy): $(grep -E '^(ok|reaped)' out | tr '\n' '|')"
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
