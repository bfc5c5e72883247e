#!/bin/sh
# The state check itself (docs/testing.md, "The state check"): statesnap, run by
# imgcr dump and imgcr restore as $IMGCR_STATE_HOOK, must report a
# difference between the dumped and the restored tree.  A task holding a
# UDP socket is dumped and restored twice:
#  - control: the plain hook finds no difference, the restore exits 0;
#  - tampered: the hook first changes the frozen restored task from outside
#    (statetamper: SO_BROADCAST on its socket, its RLIMIT_NOFILE), then runs
#    statesnap: the restore must fail (exit 1), leave the task running and
#    name both differences.
# The tampered run logs to its own file (IMGCR_STATE_LOG): its differences
# are the test's expectation, not findings for the runner's statecheck.
. /imgcr/guest/lib.sh
require_modules

snap=${IMGCR_STATE_HOOK:-/imgcr/bin/statesnap}
[ -x "$snap" ] || fail "no state hook ($snap)"

start() {
	statetamper hold "$PWD/ready" </dev/null >/dev/null 2>&1 &
	pid=$!
	track $pid
	wait_line ready '^ready' 20 || fail "statetamper hold did not start"
}

start
imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
[ -s d/.state-before ] || fail "the dump wrote no d/.state-before (hook not run?)"
grep -q "^fd $pid/3 sockopt.SOL_SOCKET.SO_BROADCAST	0$" d/.state-before ||
	fail "d/.state-before lacks the socket's SO_BROADCAST 0"
wait_gone $pid 10 || fail "the dumped task still runs"
IMGCR_STATE_HOOK=$snap IMGCR_STATE_LOG=$PWD/control.log imgcr restore -D d --detach 2> r1.err ||
	fail "control: restore exit $? [$(head -c 300 r1.err | tr '\n' '|')]"
grep -q '^state checked: .* 0 differences$' control.log ||
	fail "control: no clean comparison: $(tr '\n' '|' < control.log)"
kill9 $pid 2>/dev/null; wait_gone $pid 10

start
imgcr dump -t $pid -D e 2> dump2.err || fail "dump: $(cat dump2.err)"
wait_gone $pid 10 || fail "the dumped task still runs"
cat > tamper.sh <<EOT
#!/bin/sh
[ "\$1" = after ] && { statetamper \$3 3 || exit 99; }
exec $snap "\$@"
EOT
chmod +x tamper.sh
IMGCR_STATE_HOOK=$PWD/tamper.sh IMGCR_STATE_LOG=$PWD/tamper.log imgcr restore -D e --detach 2> r2.err
rc=$?
track $pid
[ "$rc" = 1 ] || fail "tampered: restore exit $rc, not 1 [$(head -c 300 r2.err | tr '\n' '|')]"
grep -q "^state differs: pid $pid fd 3: sockopt.SOL_SOCKET.SO_BROADCAST 0 -> 1$" r2.err ||
	fail "tampered: SO_BROADCAST not reported: $(head -c 400 r2.err | tr '\n' '|')"
grep -q "^state differs: pid $pid: limits.Max_open_files [0-9]* [0-9]* files -> 77 [0-9]* files$" r2.err ||
	fail "tampered: RLIMIT_NOFILE not reported: $(head -c 400 r2.err | tr '\n' '|')"
grep -q "left running" r2.err || fail "tampered: no 'left running' message: $(tail -n 1 r2.err)"
case "$(state $pid)" in
S | R) ;;
*) fail "tampered: the restored task is '$(state $pid)', not running" ;;
esac
grep -q '^state differs' tamper.log || fail "tampered: nothing in IMGCR_STATE_LOG"
pass "control clean; tampered SO_BROADCAST and RLIMIT_NOFILE reported, restore exit 1, task left running"
