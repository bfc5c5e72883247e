#!/bin/sh
# Permission table for /proc/PID/dump and for executing images, as root and
# as uid 1000/1001 (runas).  Each row is printed as
#   INFO perm: case | expected | actual
# and asserted by its own RESULT perm-<case> line.  The rule under test: the
# open() of a dump fails exactly as open("/proc/PID/mem", O_RDONLY) does for
# the same caller, and an image runs with the caller's credentials and
# rights.  Yama ptrace_scope 3 is irreversible until reboot, so it is tested
# last of all, by t_zz_yama3.sh.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

chmod 777 .

# row NAME DESC EXPECTED ACTUAL: one table row and its result.
row() {
	echo "INFO perm: $2 | $3 | $4"
	if [ "$3" = "$4" ]; then
		echo "RESULT perm-$1 PASS"
	else
		echo "RESULT perm-$1 FAIL $2: expected '$3', got '$4'"
	fi
}

# both WHO PID: "DUMP MEM" open results for caller WHO ("root" or a uid).
both() {
	if [ "$1" = root ]; then
		openerr /proc/$2/dump /proc/$2/mem
	else
		runas $1 $1 openerr /proc/$2/dump /proc/$2/mem
	fi
}

# dumpres WHO PID: "DUMP (mem MEM)".
dumpres() {
	set -- $(both "$1" "$2")
	echo "${1:-?} (mem ${2:-?})"
}

# wait_exe PID NAME [S]: wait until PID has exec'd NAME (its exe ends in
# /NAME) and sleeps -- i.e. an image of NAME was restored in PID.
wait_exe() {
	_n=$(( ${3:-30} * 50 ))
	while [ "$_n" -gt 0 ]; do
		_e=$(readlink "/proc/$1/exe" 2>/dev/null)
		case "$(state "$1"),$_e" in
		,* | Z,*) return 1 ;;
		S,*/"$2") return 0 ;;
		esac
		usleep 20000
		_n=$((_n - 1))
	done
	return 1
}

uidline() { sed -n 's/^Uid:[[:space:]]*//p' /proc/$1/status | tr -s '\t ' ' '; }
modeown() { echo "$(ls -l "$1" | cut -c1-10) $(stat -c %u "$1")"; }

# --- a stopped task of root -------------------------------------------------
pauser > a.out &
A=$!
track $A
wait_line a.out ready 10 || fail "pauser did not start"
stop_task $A
r=$(readall /proc/$A/dump a.img)
row root-root "root dumps root's stopped task" "ok (mem ok)" "$(case "$r" in ok*) echo ok;; *) echo "$r";; esac) (mem $(openerr /proc/$A/mem))"
row mode-root "ls -l /proc/PID/dump of root's task: mode, owner uid (like mem)" \
	"-r-------- $(stat -c %u /proc/$A/mem)" "$(modeown /proc/$A/dump)"
row user-root "uid 1000 dumps root's stopped task (= mem)" "EACCES (mem EACCES)" "$(dumpres 1000 $A)"
[ "$(state $A)" = T ] || fail "root's task state '$(state $A)' after the denied dumps"

# --- uid 1000 dumps its own stopped child; restores it as uid 1000 -----------
runas 1000 1000 sh -c '
	. /imgcr/guest/lib.sh
	pauser > own.out &
	p=$!
	track $p
	wait_line own.out ready 10 || { echo "pauser did not start"; exit 1; }
	kill -STOP $p
	wait_state $p T 10 || { echo "no stop"; exit 1; }
	r=$(readall /proc/$p/dump own.img)
	m=$(openerr /proc/$p/mem)
	case "$r" in ok*) r=ok ;; esac
	echo "$r (mem $m)"
' > own.res 2>&1
row user-own "uid 1000 dumps its own stopped child" "ok (mem ok)" "$(tail -n 1 own.res)"

# restore_own [nnp]: uid 1000 executes own.img (under no_new_privs with
# "nnp"); sets res to the restored process's Uid line (and NoNewPrivs) if
# it comes back and wakes, or to what went wrong.  Without
# CAP_CHECKPOINT_RESTORE its /proc/PID/exe stays the image (EXE: the name).
restore_own() {
	res="no image"
	[ -s own.img ] || return
	chmod 755 own.img
	if [ "${1:-}" = nnp ]; then
		runas 1000 1000 permhelp nnp ./own.img >> own.out 2> restore.err &
	else
		runas 1000 1000 ./own.img >> own.out 2> restore.err &
	fi
	R=$!
	track $R
	if ! wait_exe $R own.img 30; then
		res="not restored: state '$(state $R)' exe '$(readlink /proc/$R/exe)' $(tail -n 1 own.out)$(rerr)"
		return
	fi
	EXE=$(readlink /proc/$R/exe)
	EXE=${EXE##*/}
	res="uid $(uidline $R)"
	[ "${1:-}" = nnp ] &&
		res="$res nnp $(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/$R/status)"
	kill -USR1 $R
	wait_exit $R 10
	grep -q "^woken ok pid=$R" own.out || res="$res, no 'woken ok' (exit $RC)"
}
EXE=none
restore_own
row user-restore "uid 1000 restores its image: Uid of the restored process" \
	"uid 1000 1000 1000 1000" "$res"
row user-exe "uid 1000's restored task: /proc/PID/exe stays the image (no CAP_CHECKPOINT_RESTORE)" \
	"own.img" "$EXE"

# Root (CAP_CHECKPOINT_RESTORE) executing the same image: exe is the program.
res="no image"
if [ -s own.img ]; then
	./own.img >> own.out 2> restore.err &
	R=$!
	track $R
	if wait_exe $R pauser 30; then
		res="exe pauser uid $(uidline $R)"
	else
		res="exe '$(readlink /proc/$R/exe)' state '$(state $R)'$(rerr)"
	fi
	kill9 $R
fi
row root-exe "root restores uid 1000's image: /proc/PID/exe is the program, root's uids" \
	"exe pauser uid 0 0 0 0" "$res"

# --- a stopped uid-1000 task that root started: other uids, mode -------------
runas 1000 1000 pauser > b.out &
B=$!
track $B
wait_line b.out ready 10 || fail "uid 1000 pauser did not start"
stop_task $B
row mode-user "ls -l /proc/PID/dump of uid 1000's task: mode, owner uid (like mem)" \
	"-r-------- $(stat -c %u /proc/$B/mem)" "$(modeown /proc/$B/dump)"
row other-user "uid 1001 dumps uid 1000's stopped task (= mem)" "EACCES (mem EACCES)" "$(dumpres 1001 $B)"
row user-user "uid 1000 dumps uid 1000's stopped non-child (Yama off: = mem)" \
	"$(both 1000 $B | cut -d' ' -f2) (mem $(both 1000 $B | cut -d' ' -f2))" "$(dumpres 1000 $B)"

# --- uid 1000 dumps its own child that made itself non-dumpable -------------
runas 1000 1000 sh -c '
	. /imgcr/guest/lib.sh
	permhelp nodump > nd.out &
	p=$!
	track $p
	wait_line nd.out ready 10 || { echo "nodump did not start: $(cat nd.out)"; exit 1; }
	kill -STOP $p
	wait_state $p T 10 || { echo "no stop"; exit 1; }
	set -- $(openerr /proc/$p/dump /proc/$p/mem)
	echo "$1 (mem $2) owner $(stat -c %u /proc/$p/dump)/$(stat -c %u /proc/$p/mem)"
' > nd.res 2>&1
nd=$(tail -n 1 nd.res)
ndmem=$(echo "$nd" | sed -n 's/.*(mem \([A-Za-z0-9]*\)).*/\1/p')
row user-nodump "uid 1000 dumps its non-dumpable (PR_SET_DUMPABLE 0) child (= mem; owner dump/mem)" \
	"${ndmem:-?} (mem ${ndmem:-?}) owner 0/0" "$nd"

# --- Yama ptrace_scope 1 -----------------------------------------------------
Y=/proc/sys/kernel/yama/ptrace_scope
if [ -f $Y ]; then
	old=$(cat $Y)
	echo 1 > $Y
	ymem=$(both 1000 $B | cut -d' ' -f2)
	row yama1-nonchild "Yama 1: uid 1000 dumps uid 1000's non-descendant (= mem)" \
		"$ymem (mem $ymem)" "$(dumpres 1000 $B)"
	[ "$ymem" != ok ] || row yama1-effective "Yama 1: mem of a non-descendant is refused" "not ok" "ok"
	# The opener must be the target's ancestor: permhelp child forks it.
	set -- $(runas 1000 1000 permhelp child /imgcr/bin/fuzzseed)
	echo "${1:-?} (mem ${2:-?})" > y.res
	row yama1-child "Yama 1: uid 1000 dumps its own stopped child" "ok (mem ok)" "$(tail -n 1 y.res)"
	row yama1-root "Yama 1: root dumps uid 1000's stopped task" "ok (mem ok)" "$(dumpres root $B)"
	echo "$old" > $Y
	[ "$(cat $Y)" = "$old" ] || fail "cannot set ptrace_scope back to $old"
else
	info "no Yama (/proc/sys/kernel/yama/ptrace_scope missing): Yama rows skipped"
fi

# --- a kernel thread ---------------------------------------------------------
set -- $(openerr /proc/2/dump /proc/2/mem)
row kthread-root "root dumps kthreadd (pid 2): dump ESRCH; mem recorded" "ESRCH (mem $2)" "$1 (mem $2)"
set -- $(both 1000 2)
row kthread-user "uid 1000 dumps kthreadd (pid 2) (= mem)" "$2 (mem $2)" "$1 (mem $2)"

kill -9 $A $B 2>/dev/null

# --- executing: set-uid / set-gid images -------------------------------------
fuzzseed > s.out &
S=$!
track $S
wait_line s.out ready 10 || fail "fuzzseed did not start"
wait_state $S T 10 || fail "fuzzseed did not stop itself"
dump $S s.img
kill9 $S
for m in 4755 2755 0755; do
	cp s.img s$m.img
	chown 0:0 s$m.img
	chmod $m s$m.img
	runas 1000 1000 tryexec ./s$m.img > x$m.out 2>&1
	rc=$?
	got=$(sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' x$m.out)
	grep -q '^alive' x$m.out && got="${got:-ran}, image ran: $(grep '^alive' x$m.out)"
	echo "$got" > x$m.got
	echo "$rc" >> x$m.got
done
row exec-setuid "uid 1000 runs a set-uid-root (4755) image: refused, nothing runs" \
	"EPERM rc=2" "$(head -n 1 x4755.got) rc=$(tail -n 1 x4755.got)"
row exec-setgid "uid 1000 runs a set-gid (2755) image: refused, nothing runs" \
	"EPERM rc=2" "$(head -n 1 x2755.got) rc=$(tail -n 1 x2755.got)"
row exec-plain "control: uid 1000 runs the same image at 0755: restores as uid 1000" \
	"alive uid=1000 rc=42" "$(grep '^alive' x0755.out) rc=$(tail -n 1 x0755.got)"

# An image with file capabilities: its exec would grant them, and the
# caller chooses the code it runs (through the files it maps).
cp s.img sfcap.img
chmod 755 sfcap.img
permhelp filecaps sfcap.img > fcap.err 2>&1 ||
	fail "cannot set security.capability on sfcap.img: $(cat fcap.err)"
runas 1000 1000 tryexec ./sfcap.img > xfcap.out 2>&1
rc=$?
got=$(sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' xfcap.out)
grep -q '^alive' xfcap.out && got="${got:-ran}, image ran: $(grep '^alive' xfcap.out)"
row exec-filecaps "uid 1000 runs an image with file capabilities: refused, nothing runs" \
	"EPERM rc=2 logged" \
	"$got rc=$rc $(dmesg | grep -q 'sfcap.img: images with file capabilities' && echo logged || echo 'not logged')"

# --- executing: an image mapping a root-only file shared+writable ------------
echo "secret data" > secret
chmod 600 secret
permhelp mapshared "$PWD/secret" > m.out &
M=$!
track $M
wait_line m.out ready 10 || fail "mapshared did not start: $(cat m.out)"
wait_state $M T 10 || fail "mapshared did not stop itself"
dump $M m.img
kill9 $M
chmod 755 m.img
before=$(cat secret)
runas 1000 1000 tryexec ./m.img > mu.out 2>&1
rc=$?
got=$(sed -n 's/^tryexec: execve failed: \(E[A-Z0-9]*\).*/\1/p' mu.out)
row exec-rootfile "uid 1000 runs root's image mapping a 0600 root file shared rw: refused, caller survives" \
	"EACCES rc=2 file unchanged" \
	"${got:-$(head -c 80 mu.out | tr '\n' ' ')} rc=$rc file $([ "$(cat secret)" = "$before" ] && echo unchanged || echo CHANGED)"
tryexec ./m.img > mr.out 2>&1
rc=$?
row exec-rootfile-root "control: root runs the same image: restores, mapping intact" \
	"alive uid=0 marker=ok rc=42" "$(grep '^alive' mr.out) rc=$rc"

# --- executing under no_new_privs --------------------------------------------
restore_own nnp
row exec-nnp "uid 1000 runs its image under no_new_privs: restores, keeps uid" \
	"uid 1000 1000 1000 1000 nnp 1" "$res"
