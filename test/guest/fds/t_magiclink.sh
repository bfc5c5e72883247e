#!/bin/sh
# A file's path replaced after the dump by a link to a magic link
# (/proc/self/fd/N, which jumps to whatever the restorer holds open, as
# the ns-root's image directory in a container, review M8): the restore
# opens no file through it, even with --allow-changed-files, and says so.
#   magiclink   sleep with its stdin on /tmp/ml/data; after the dump the
#               path is a link to /proc/self/fd/2: the restore fails
#               naming the path; with the file back it restores.
# timeout: 200
. /imgcr/guest/lib.sh
require_modules

sub() {
	rm -rf /tmp/ml && mkdir /tmp/ml && echo data > /tmp/ml/data
	sleep 600 < /tmp/ml/data &
	p=$!
	track $p
	sleep 0.3
	timeout -s KILL 60 imgcr dump -t $p -D d > dump.out 2> dump.err ||
		fail "dump: $(tail -n 5 dump.err | tr '\n' '|')"
	wait_gone $p 20 || fail "the task outlived its dump"
	mv /tmp/ml/data /tmp/ml/data.orig && ln -s /proc/self/fd/2 /tmp/ml/data
	timeout -s KILL 60 imgcr restore -D d --allow-changed-files --detach --pidfile "$PWD/rp" > r1.out 2> r1.err &&
		{ track "$(cat rp)"; fail "restored through the magic link: $(tr '\n' '|' < r1.err)"; }
	grep -q "/tmp/ml/data" r1.err || fail "message: $(tr '\n' '|' < r1.err)"
	rm /tmp/ml/data && mv /tmp/ml/data.orig /tmp/ml/data
	timeout -s KILL 60 imgcr restore -D d --detach --pidfile "$PWD/rp" > r2.out 2> r2.err ||
		fail "restore with the file back: $(tail -n 5 r2.err | tr '\n' '|')"
	n=$(cat rp)
	track $n
	sleep 0.3
	[ "$(readlink /proc/$n/fd/0)" = /tmp/ml/data ] || fail "fd 0 is $(readlink /proc/$n/fd/0)"
	pass "$(grep /tmp/ml/data r1.err | head -n 1 | cut -c1-160)"
}
subtest magiclink sub
