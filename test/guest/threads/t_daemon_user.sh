#!/bin/sh
# Multi-threaded processes running as users other than root, as packaged
# daemons run (redis as redis, memcached -u nobody), dumped and restored by
# root (test/progs/daemonuser.c): a task that dropped to uid 1000 (gid 1001,
# groups 1001 1002) after start and then made 3 threads; a task whose real,
# effective, saved and fs uids and gids all differ (2 threads); a task one
# of whose threads has other uids and gids than the rest (raw setresuid in
# that thread).  Checked inside (each thread compares its TID, uids, gids,
# fs ids, groups and capabilities with its own from before the dump) and
# outside (/proc/PID/task/TID/status Uid, Gid, Groups, Cap* of every thread,
# and the TIDs: the same).
# Before, root's restore failed: the restorer took the task's ids before
# the exec, so the module had no right to choose the TIDs (EPERM), and the
# exec of an image with differing real/effective/fs ids failed (secure-exec
# refused, or EACCES opening the image under the fs uid).
#   daemon-redis, daemon-memcached: Debian's redis-server as uid 101 and
#     memcached -u nobody (started as root, it drops root itself, then
#     makes its threads), dumped and restored by root: the same TIDs and
#     credentials of every thread, and the key stored before the dump is
#     read back (skipped if the guest has no such program: test/lib-host.sh
#     add_daemons takes them from apt's cache).
#   daemon-user-refuse: uid 1000 dumping its own threaded process where it
#     could not restore it (no CAP_CHECKPOINT_RESTORE, user namespaces
#     disabled, so no --pidns): the dump refuses, names the task and the
#     reason, and the process runs on.
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/threadlib.sh
require_modules
chmod 777 .

# snap PID FILE: the TIDs and credentials of every thread of PID as /proc shows them
snap() {
	: > "$2"
	for _t in $(tids $1); do
		grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' \
			/proc/$1/task/$_t/status | sed "s/^/$_t /" >> "$2"
	done
}

cp "$(command -v daemonuser)" ./daemonuser || fail "cannot copy daemonuser"
./daemonuser tree "$PWD" > out 2> du.err &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "daemonuser did not start: $(cat out du.err | tr '\n' '|')"
grep -q '^FAIL' out && fail "setup: $(grep '^FAIL' out | tr '\n' '|')"
set -- $(sed -n 's/^ready pid=[0-9]* user=\([0-9]*\) mixed=\([0-9]*\) thread=\([0-9]*\)$/\1 \2 \3/p' out)
[ $# = 3 ] || fail "no pids in $(grep ready out)"
user=$1 mixed=$2 thread=$3
all="$pid $user $mixed $thread"
for p in $all; do track $p; done
usleep 200000
for p in $all; do snap $p before.$p; done
[ "$(nthreads $user)" = 4 ] || fail "user task: not 4 threads"
grep -q "Uid:.1001.1002.1003.1004" before.$mixed || fail "mixed task: uids $(grep Uid before.$mixed | head -n 1)"
[ "$(grep -c 'Uid:.1006.1006.1000' before.$thread)" = 1 ] || fail "thread task: no thread with other uids: $(grep Uid before.$thread | tr '\n' '|')"

imgcr dump -t $pid -D d 2> dump.err || fail "dump: $(cat dump.err)"
for p in $all; do wait_gone $p 10 || fail "task $p survived the dump"; done

imgcr restore -D d > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $all
for p in $all; do
	snap $p after.$p
	cmp -s before.$p after.$p ||
		fail "pid $p differs from outside: $(diff before.$p after.$p | grep '^[-+][^-+]' | tr '\n' '|')"
done
touch restored
wait_exit $rpid 120
grep '^FAIL' out > fails.txt
[ -s fails.txt ] && fail "inside: $(tr '\n' '|' < fails.txt)"
for m in user mixed thread tree; do
	grep -q "^$m PASS" out || fail "no '$m PASS' (imgcr restore exit $RC): $(tail -n 5 out | tr '\n' '|')$(rerr)"
done
[ "$RC" = 0 ] || fail "imgcr restore exit $RC$(rerr)"
pass "$(grep -c '^ok ' out) threads the same inside, $(cat after.* | grep -c Uid) threads the same outside"

# root's restore into a new PID namespace (--pidns): the same (before,
# it failed as without it, and a retry with ENOMEM)
pidns() {
	mkdir g && chmod 777 g
	./daemonuser single-user "$PWD/g" > out4 2>&1 &
	sp=$!
	track $sp
	wait_line out4 '^ready' 20 || fail "single-user did not start: $(cat out4 | tr '\n' '|')"
	usleep 200000
	snap $sp before4
	imgcr dump -t $sp -D d4 2> dump4.err || fail "dump: $(cat dump4.err)"
	wait_gone $sp 10 || fail "pid $sp survived the dump"
	# d4 is uid 1000's (root's dump gives it to the root task's user),
	# and its tree was started by root: root trusts it explicitly (trust.c)
	imgcr restore -D d4 --pidns --trust-images-dir > restore4.out 2> restore.err &
	rp=$!
	track $rp
	# the restored task seen from outside its PID namespace: daemonuser,
	# asleep, 4 threads, no longer imgcr
	n=0
	outer=""
	while [ -z "$outer" ]; do
		for c in /proc/[0-9]*/comm; do
			p=${c#/proc/}
			p=${p%/comm}
			[ "$p" = "$sp" ] && continue
			[ "$(cat "$c" 2>/dev/null)" = daemonuser ] && [ "$(state $p)" = S ] &&
				[ "$(readlink /proc/$p/exe)" != "$(command -v imgcr)" ] &&
				[ "$(nthreads $p)" = 4 ] && outer=$p
		done
		n=$((n + 1))
		[ $n -lt 1500 ] || fail "no restored daemonuser task after 30 s$(rerr)"
		[ -z "$outer" ] && ! [ -d /proc/$rp ] && fail "imgcr restore --pidns ended, no restored task$(rerr)"
		[ -n "$outer" ] || usleep 20000
	done
	track $outer
	snap $outer after4
	# the TIDs outside the namespace are others: the credentials, in order
	cut -d' ' -f2- before4 > before4.c
	cut -d' ' -f2- after4 > after4.c
	cmp -s before4.c after4.c || fail "differs from outside: $(diff before4.c after4.c | grep '^[-+][^-+]' | tr '\n' '|')"
	sleep 2		# the restore's state check runs on the live process
	touch g/restored
	wait_exit $rp 120
	grep '^FAIL' out4 > fails4.txt
	[ -s fails4.txt ] && fail "inside: $(tr '\n' '|' < fails4.txt)"
	grep -q '^single-user PASS' out4 || fail "no 'single-user PASS' (restore exit $RC): $(tail -n 3 out4 | tr '\n' '|')$(rerr)"
	[ "$RC" = 0 ] || fail "imgcr restore --pidns exit $RC$(rerr)"
	pass "$(grep -c '^ok ' out4) threads the same inside (uid 1000, in a new PID namespace)"
}
subtest daemon-user-pidns pidns

# A dump that would kill what its caller cannot restore is refused.
refuse() {
	uc=/proc/sys/kernel/unprivileged_userns_clone
	mu=/proc/sys/user/max_user_namespaces
	old_uc=$(cat $uc 2>/dev/null)
	old_mu=$(cat $mu)
	echo 0 > $mu || fail "cannot disable user namespaces"
	mkdir f && chmod 777 f
	: > out2; : > du2.err; chmod 666 out2 du2.err
	runas 1000 1000 ./daemonuser single-user "$PWD/f" >> out2 2>> du2.err &
	up=$!
	track $up
	wait_line out2 '^ready' 20 || { echo $old_mu > $mu; fail "single-user did not start: $(cat out2 du2.err | tr '\n' '|')"; }
	up=$(sed -n 's/^ready pid=\([0-9]*\)$/\1/p' out2)
	track $up
	snap $up before2
	mkdir dd && chmod 777 dd
	runas 1000 1000 imgcr dump -t $up -D dd/d 2> dump2.err
	rc=$?
	echo $old_mu > $mu
	[ -n "$old_uc" ] && echo $old_uc > $uc
	[ $rc = 0 ] && fail "uid 1000 dumped it (and killed it) though it cannot restore it"
	grep -q "pid $up.*cannot restore.*thread" dump2.err || fail "message: $(cat dump2.err | tr '\n' '|')"
	[ -d /proc/$up ] || fail "pid $up is gone after the refused dump"
	usleep 100000
	case "$(state $up)" in S | R) ;; *) fail "pid $up is not running: state $(state $up)" ;; esac
	snap $up after2
	cmp -s before2 after2 || fail "pid $up changed: $(diff before2 after2 | grep '^[-+][^-+]' | tr '\n' '|')"
	touch f/restored
	wait_exit $up 20
	grep -q '^single-user PASS' out2 || fail "single-user after the refused dump: $(tail -n 3 out2 | tr '\n' '|')"
	pass "$(grep -o 'cannot restore.*' dump2.err | head -n 1)"
}
subtest daemon-user-refuse refuse

# Debian's redis-server and memcached under their own users, as packaged:
# redis started as the redis user (systemd's User=redis), memcached started
# by root with -u nobody (it drops root itself, then makes its threads).
# A key stored before the dump is read back from the restored server.

# mc CMD...: send memcached text protocol lines, print the reply
mc() {
	/usr/bin/python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", 11311), timeout=10)
s.sendall("".join(a + "\r\n" for a in sys.argv[1:]).encode())
b = b""
while not (b.endswith(b"END\r\n") or b.endswith(b"STORED\r\n")):
    d = s.recv(4096)
    if not d:
        break
    b += d
sys.stdout.write(b.decode())' "$@"
}

# daemon_cycle NAME PID CHECK: dump PID as root, restore it, compare its
# threads' TIDs and credentials, then run CHECK (a shell command that must
# succeed against the restored server).
daemon_cycle() {
	snap $2 before.$1
	[ "$(nthreads $2)" -gt 1 ] || fail "$1 has no threads: $(cat before.$1 | tr '\n' '|')"
	imgcr dump -t $2 -D d.$1 2> dump.$1.err || fail "dump: $(cat dump.$1.err | tr '\n' '|')"
	wait_gone $2 10 || fail "$1 survived the dump"
	imgcr restore -D d.$1 --detach > restore.$1.out 2> restore.err || fail "restore: $(rerr)"
	wait_tasks_restored $2
	snap $2 after.$1
	cmp -s before.$1 after.$1 ||
		fail "$1 differs: $(diff before.$1 after.$1 | grep '^[-+][^-+]' | tr '\n' '|')"
	eval "$3" || fail "$1 after the restore: the stored key is not there"
}

redis() {
	[ -x /usr/bin/redis-server ] || { pass "SKIP: no redis-server in this guest"; exit 0; }
	grep -q '^redis:' /etc/passwd || echo 'redis:x:101:104::/var/lib/redis:/bin/false' >> /etc/passwd
	grep -q '^redis:' /etc/group || echo 'redis:x:104:' >> /etc/group
	mkdir r && chown 101:104 r
	runas 101 104 /usr/bin/redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$PWD/r" --daemonize no > redis.log 2>&1 &
	rp=$!
	track $rp
	n=0
	until /usr/bin/redis-cli -p 6390 ping 2>/dev/null | grep -q PONG; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "redis did not start: $(tail -n 5 redis.log | tr '\n' '|')"
		usleep 100000
	done
	[ "$(/usr/bin/redis-cli -p 6390 set k restored-value)" = OK ] || fail "SET failed"
	usleep 500000
	grep -q 'Uid:.101.101.101.101' /proc/$rp/status || fail "redis is not uid 101: $(grep Uid /proc/$rp/status)"
	daemon_cycle redis $rp '[ "$(/usr/bin/redis-cli -p 6390 get k)" = restored-value ]'
	n=$(nthreads $rp)
	/usr/bin/redis-cli -p 6390 shutdown nosave > /dev/null 2>&1
	pass "redis-server (uid 101, $n threads) restored by root with its TIDs and ids; GET k ok"
}
subtest daemon-redis redis

memcached_test() {
	[ -x /usr/bin/memcached ] || { pass "SKIP: no memcached in this guest"; exit 0; }
	grep -q '^nobody:' /etc/passwd || echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >> /etc/passwd
	grep -q '^nogroup:' /etc/group || echo 'nogroup:x:65534:' >> /etc/group
	/usr/bin/memcached -u nobody -p 11311 -l 127.0.0.1 -U 0 -t 2 > mc.log 2>&1 &
	mp=$!
	track $mp
	n=0
	until mc 'set k 0 0 14' restored-value 2>/dev/null | grep -q STORED; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "memcached did not start: $(tail -n 5 mc.log | tr '\n' '|')"
		usleep 100000
	done
	usleep 500000
	grep -q 'Uid:.65534.65534.65534.65534' /proc/$mp/status || fail "memcached is not nobody: $(grep Uid /proc/$mp/status)"
	daemon_cycle memcached $mp 'mc "get k" | grep -q restored-value'
	n=$(nthreads $mp)
	kill $mp
	pass "memcached -u nobody ($n threads) restored by root with its TIDs and ids; get k ok"
}
subtest daemon-memcached memcached_test
