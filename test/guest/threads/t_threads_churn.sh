#!/bin/sh
# A process whose threads come and go all the time (progs/churn.c: a new
# short-lived thread every ~2 ms, joined by main) is dumped 6 times in a
# row with `imgcr dump --leave-running` while it runs: every freeze must
# catch the threads of the moment (threads created or gone during the
# freeze included) and every dump succeed, the process running on
# unharmed.  The last dump is restored with --pidns (the PIDs are still in
# use): the restored process finishes its count with the right sum.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

N=6000
: > out
# O_APPEND: the original and the restored copy both write to it
setsid churn $N >> out 2> churn.err < /dev/null &
pid=$!
track $pid
wait_line out '^ready ' 20 || fail "churn did not start: $(cat churn.err)"
i=1
ROUNDS=6
while [ $i -le $ROUNDS ]; do
	usleep 100000
	imgcr dump -t $pid -D d$i --leave-running 2> dump$i.err ||
		fail "dump $i of the churning process: $(head -n 3 dump$i.err | tr '\n' '|')"
	case "$(state $pid)" in
	S | R) ;;
	*) fail "after dump $i the process is '$(state $pid)'" ;;
	esac
	n=$(tree_fields d$i/tree | grep -c '^thread ')
	[ "$n" -ge 2 ] || fail "dump $i lists $n threads besides main, want >= 2"
	i=$((i + 1))
done
# the original went on writing to out: it changed since the dump, by design
imgcr restore -D d$ROUNDS --pidns --allow-changed-files > r.out 2> r.err &
rpid=$!
track $rpid
wait_exit $rpid 240
[ "$RC" = 0 ] || fail "restore --pidns of the churning process: exit $RC: $(head -c 300 r.err | tr '\n' '|') $(tail -n 1 out)"
wait_exit $pid 240
[ "$RC" = 0 ] || fail "the original churn exited $RC: $(tail -n 1 out)"
[ "$(grep -c "^churn ok $N\$" out)" = 2 ] || fail "want 'churn ok $N' from the original and the restored process: $(grep churn out | tr '\n' '|')"
pass "$ROUNDS dumps while threads came and went; the restored copy finished with the right sum"
