#!/bin/sh
# The command line as a CRIU user types it: short and long spellings,
# --opt=value, COMMAND --help (exit 0), --version, and a bad option named
# in the error.  Subtests cli-NAME; a dump and restore with CRIU's short
# options end it.
# timeout: 120
. /imgcr/guest/lib.sh
require_modules

check() {	# NAME WANT-RC WANT-TEXT CMD...: rc and a line of its output
	_n=$1 _rc=$2 _want=$3
	shift 3
	"$@" > cli.out 2>&1
	_got=$?
	if [ "$_got" != "$_rc" ]; then
		echo "RESULT cli-$_n FAIL '$*': exit $_got, want $_rc: $(head -c 200 cli.out)"
	elif ! grep -q -- "$_want" cli.out; then
		echo "RESULT cli-$_n FAIL '$*': no '$_want' in: $(head -c 200 cli.out)"
	else
		echo "RESULT cli-$_n PASS"
	fi
}

check version 0 '^imgcr [0-9]' imgcr --version
check help-dump 0 '--leave-running' imgcr dump --help
check help-restore 0 '--restore-detached' imgcr restore -h
check help-show 0 'json' imgcr show --help
check help-check 0 'modules' imgcr check --help
check bad-short 2 "unknown option '-q'" imgcr dump -t 1 -D d -q
check bad-long 2 "unknown option '--frobnicate'" imgcr restore -D d --frobnicate
check missing-value 2 "missing value for option '-D'" imgcr dump -t 1 -D
check bad-command 2 "unknown command 'dumpp'" imgcr dumpp
check bad-pid 2 "needs a pid" imgcr dump --tree=12x --images-dir=d

T=cli
setsid counter 100000 < /dev/null > out 2>&1 &
pid=$!
track $pid
wait_line out '^2 ' 10 || fail "counter did not start"
imgcr dump --tree=$pid --images-dir=ck > d.out 2>&1 || fail "dump --tree= --images-dir=: $(cat d.out)"
wait_gone $pid 5 || fail "the dumped counter still runs"
n=$(tail -n1 out | cut -d' ' -f1)
imgcr restore -D ck -d > r.out 2>&1 || fail "restore -D ck -d: $(cat r.out)"
wait_line out "^$((n + 2)) $pid\$" 10 || fail "the restored counter does not count on"
imgcr dump -t $pid -D ck2 -R > d2.out 2>&1 || fail "dump -R: $(cat d2.out)"
wait_line out "^$((n + 4)) $pid\$" 10 || fail "the counter stopped after dump -R"
kill -9 $pid
pass "--tree= --images-dir=, restore -d, dump -R"
