#!/bin/sh
# Signals sent to a task while it is restored wait for the task: a SIGUSR1
# it catches reaches its handler once it runs again, whether it came to
# imgcr's restorer before the exec of the image or during the exec (the
# kernel's default action, to end the task, never applies).  The second
# part executes the image from a caller that blocks no signal: there
# binfmt_img alone keeps them waiting.  The third restores it with --pidns:
# imgcr-init, the namespace's pid 1, which never executes an image, has
# imgcr's signal mask back (none blocked), not the restorers'.
. /imgcr/guest/lib.sh
require_modules

sigstorm > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "sigstorm did not start"
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $pid 10 || fail "task $pid survived the dump"

# Signal the pid as fast as the shell can until the restore has ended:
# "hit" lines count the signals that found a task (imgcr's restorer, then
# the task) before imgcr restore exited.
(
	while [ ! -e restored ]; do
		kill -USR1 $pid 2>/dev/null && echo hit
	done > hits
) &
storm=$!
imgcr restore -D d --detach > restore.out 2> restore.err
rc=$?
touch restored
wait $storm
[ "$rc" = 0 ] || fail "imgcr restore exit status $rc$(rerr)"
hits=$(grep -c hit hits)
[ "$hits" -gt 0 ] || fail "no SIGUSR1 reached the pid during the restore: nothing was tested"
[ -d /proc/$pid ] || fail "the restored task is gone ($hits SIGUSR1 during the restore): $(tr '\n' '|' < out)"
kill -USR2 $pid
wait_gone $pid 20 || fail "the restored task did not end on SIGUSR2: $(tr '\n' '|' < out)"
grep -q '^sigstorm ok usr1=[1-9]' out || fail "$(grep sigstorm out || echo 'no sigstorm line'): $(tr '\n' '|' < out)"
caught=$(sed -n 's/^sigstorm ok usr1=//p' out)

# The image executed directly by a caller that catches SIGUSR1 (exec resets
# that to the default action, which ends the task), signalled for 3 s.
chmod +x d/core-$pid.img
sigstorm --exec d/core-$pid.img > out2 2>&1 &
q=$!
track $q
wait_line out2 '^exec' 20 || fail "sigstorm --exec did not start: $(tr '\n' '|' < out2)"
end=$(($(now_ms) + 3000))
n=0
while [ "$(now_ms)" -lt $end ]; do
	kill -USR1 $q 2>/dev/null && n=$((n + 1))
done
[ -d /proc/$q ] && [ "$(state $q)" != Z ] ||
	fail "the task executing its image died ($n SIGUSR1 sent): $(tr '\n' '|' < out2)"
kill -USR2 $q
wait_exit $q 20
[ "$RC" = 0 ] || fail "exec'd image: exit status $RC: $(tr '\n' '|' < out2)"
grep -q '^sigstorm ok usr1=[1-9]' out2 || fail "exec'd image: $(tr '\n' '|' < out2)"
r2=$(sed -n 's/^sigstorm ok usr1=//p' out2)

imgcr restore --pidns --allow-changed-files -D d > r3.out 2> r3.err &
rp=$!
track $rp
w=0
until init=$(child_of $rp) && [ -n "$init" ] && [ "$(cat /proc/$init/comm 2>/dev/null)" = imgcr-init ] &&
	inner=$(child_of $init) && [ -n "$inner" ] && [ "$(state $inner)" = S ]; do
	w=$((w + 1))
	[ $w -lt 100 ] || fail "--pidns: no imgcr-init with a running task under imgcr restore $rp: $(tr '\n' '|' < r3.err)"
	usleep 200000
done
track $init
track $inner
blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' /proc/$init/status)
[ "$blk" = 0000000000000000 ] || fail "--pidns: imgcr-init ($init) blocks signals $blk"
kill -KILL $init
wait_exit $rp 20
[ "$RC" != timeout ] || fail "--pidns: imgcr restore did not end with imgcr-init ($init)"
wait_gone $inner 10 || fail "--pidns: the restored task $inner outlived its namespace's init"
pass "$hits SIGUSR1 during imgcr restore, $caught caught; $n during an exec of the image, $r2 caught; --pidns: imgcr-init blocks nothing"
