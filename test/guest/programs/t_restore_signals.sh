#!/bin/sh
# Signals sent to a task while imgcr restores it wait for the task: a
# SIGUSR1 it catches reaches its handler once it runs again, whether it
# came to imgcr's restorer before the exec of the image or during the
# exec (the kernel's default action, to end the task, never applies).
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
pass "$hits SIGUSR1 during the restore, $(sed -n 's/^sigstorm ok usr1=//p' out) caught"
