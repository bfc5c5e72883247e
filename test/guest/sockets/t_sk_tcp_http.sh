#!/bin/sh
# A real server from Debian's packages: python3's http.server (HTTP/1.1,
# keep-alive; a thread per connection) serving a 256 kB file to a client
# outside the tree (httpcli.py: one connection, requests back to back,
# every answer's SHA-256 checked, no reconnect).  The server is dumped
# mid-exchange and restored: it goes on serving that client on the same
# connection, the same file.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/tcplib.sh
require_modules

PORT=7440
mkdir www || fail "mkdir"
head -c 262144 /dev/urandom > www/data.bin
sha256sum www/data.bin > www/data.sha
setsid /usr/bin/python3 -m http.server -p HTTP/1.1 -b 127.0.0.1 -d www $PORT </dev/null >srv.out 2>&1 &
spid=$!
track $spid
setsid /usr/bin/python3 /imgcr/guest/httpcli.py $PORT "$PWD/cli.txt" </dev/null >cli.err 2>&1 &
cpid=$!
track $cpid
wait_line cli.txt "^req 5 " 60 || fail "the client did not get 5 answers: $(cat cli.err cli.txt srv.out | tail -n5 | tr '\n' '|')"
imgcr dump -t $spid -D d 2> dump.err || fail "dump: $(cat dump.err)"
wait_gone $spid 10 || fail "the server survived the dump"
n=$(ls d/sk-*.tcp 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "$n established connections in the dump, expected 1"
q=$(cat d/sk-*.rcvq d/sk-*.sndq | wc -c)
at=$(grep -c '^req' cli.txt)
sleep 2
[ "$(grep -c '^req' cli.txt)" -le $((at + 1)) ] || fail "the client got answers while the server was away"
# the server opens the file for each answer and closes it once sent: the
# restored server may have closed the one it had at the dump (fd 5) before
# the state check freezes it
cp "$IMGCR_STATE_EXPECTED" expected
echo 'task * fds 0,1,2,3,4,5 -> 0,1,2,3,4  # data.bin, open for the answer being sent at the dump, closed once sent' >> expected
IMGCR_STATE_EXPECTED=$PWD/expected imgcr restore -D d > r.out 2> restore.err &
track $!
wait_line cli.txt "^req $((at + 10)) " 90 ||
	fail "no 10 more answers after the restore (at $at): $(tail -n2 cli.txt | tr '\n' '|')$(rerr)"
grep -q BAD cli.txt && fail "$(grep BAD cli.txt)"
[ "$(sed -n 's/^req [0-9]* port \([0-9]*\) ok$/\1/p' cli.txt | sort -u | wc -l)" = 1 ] ||
	fail "the client's port changed: $(sort -u cli.txt | head -n3 | tr '\n' '|')"
no_lock
pass "python3 http.server: $at answers before the dump ($q bytes queued), 10 more after, one connection ($(took))"
