#!/bin/sh
# The ipc namespace kind (userspace/ipc.c): SysV shm, semaphores, message
# queues, ipc sysctls and empty POSIX queues of an ipc namespace.
#  ct_ipc           a container (util-linux unshare --fork --pid --ipc), its
#                   pid 1 ipcwork with every kind of object and a segment
#                   attached: dumped from the host, killed, restored
#                   (--detach); outside: a new ipc namespace, ipcs -c and
#                   ipcs (through nsenter) as before, a sysctl; inside:
#                   ipcwork checks the mapping and every object
#  ct_ipc-hooks     the kind's dump and restore hooks alone (the hidden
#                   "imgcr _ipc dump|restore -D DIR"), in util-linux
#                   "unshare --ipc" children: ipcwork makes the objects in
#                   one namespace, they are dumped, recreated in a fresh
#                   one, and ipcwork checks them there (ids, keys, sizes,
#                   contents, values, messages in order, owners, creators,
#                   modes, sysctls); ipcs -c / ipcs the same from outside
#                   the program; the 1 MiB segment with one byte stays sparse
#  ct_ipc-userns    the same with the namespace owned by a user namespace
#                   (0-65535 mapped to 0-65535: ipcwork's owners and
#                   creators), imgcr run as its root
#  ct_ipc-attached  ipcwork keeps a segment attached (the module's SysV
#                   shm maps): in one ipc namespace the objects are dumped
#                   (_ipc) and ipcwork with imgcr run in that namespace (no
#                   namespace of its own); in a fresh one the objects are
#                   restored, then ipcwork: the mapping has the contents and
#                   is shared with a new attach; ipcwork checks the rest
#  ct_ipc-lowered   limits lowered below what the objects use (semmsl 3 <
#                   4 semaphores, semmni 1, shmmni 2, msgmnb 100 < the
#                   queue's bytes, mqueue msg_max 3 < 5): the objects are
#                   restored all the same, and the limits as dumped
#  ct_ipc-badimg    a segment image of the wrong size: refused before any
#                   object is made
#  ct_ipc-refuse-mq a POSIX queue holding a message: refused, named
#  ct_ipc-refuse-shmdest  a removed segment still attached: refused, named
# timeout: 300
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh

UNSHARE=/usr/sbin/unshare
IPCS=/usr/sbin/ipcs
[ -x $UNSHARE ] || UNSHARE=/usr/bin/unshare
[ -x $IPCS ] || IPCS=/usr/bin/ipcs

# nsid PID NS: the inode of PID's namespace NS
nsid() { _l=$(readlink /proc/$1/ns/$2); _l=${_l#*[}; echo "${_l%]}"; }

# ipcs_of PID OUT: ipcs -c and ipcs of PID's ipc namespace, from outside (nsenter)
ipcs_of() { /usr/sbin/nsenter -t $1 -i $IPCS -c > "$2" && /usr/sbin/nsenter -t $1 -i $IPCS >> "$2"; }

ct() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	# ipcwork's stderr into out too: unshare writes to its own when pid 1 is
	# killed, and a file the tree holds must not change between dump and restore
	ct_start ct.pid --pid --ipc -- sh -c "exec ipcwork run '$PWD/ids' attach 2>&1" >> out 2> unshare.err ||
		fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	wait_line out "^ipcwork: ready pid=1" 60 || fail "ipcwork not ready: $(tr '\n' '|' < out) $(cat unshare.err)"
	IPC0=$(nsid $CT ipc)
	ipcs_of $CT ipcs.before || fail "ipcs before"
	imgcr dump -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tr '\n' '|' < dump.err)"
	wait_gone $CT 20 || fail "the container survived the dump"
	grep -q "^ns kind=ipc ino=$IPC0" d/tree || fail "no 'ns kind=ipc' record: $(grep '^ns' d/tree | tr '\n' '|')"
	n=$(grep -c '^shm \|^sem \|^msq \|^mq ' d/tree)
	[ "$n" = 5 ] || fail "$n ipc object records, not 5: $(grep '^shm\|^sem\|^msq\|^mq' d/tree | tr '\n' '|')"
	imgcr restore -D d --detach --pidfile "$PWD/rp" > r.out 2> restore.err || fail "restore: exit $?$(rerr)"
	NEW=$(cat rp)
	track $NEW
	[ "$(nsid $NEW ipc)" != "$(nsid $$ ipc)" ] || fail "restored into the host's ipc namespace"
	# (not compared with the dumped one's inode: the kernel reuses a freed
	# namespace's inode number, and the dumped namespace died with the tree)
	ipcs_of $NEW ipcs.after || fail "ipcs after"
	diff ipcs.before ipcs.after > ipcs.diff || fail "ipcs differs (outside): $(tr '\n' '|' < ipcs.diff)"
	[ "$(/usr/sbin/nsenter -t $NEW -i cat /proc/sys/kernel/msgmax)" = 12345 ] || fail "msgmax outside: $(/usr/sbin/nsenter -t $NEW -i cat /proc/sys/kernel/msgmax)"
	kill -USR1 $NEW
	wait_gone $NEW 20 || fail "ipcwork did not end on SIGUSR1"
	grep -q '^ipcwork: attached ok' out || fail "inside, the mapping: $(grep ipcwork: out | tr '\n' '|')"
	grep -q '^ipcwork: check ok' out || fail "inside: $(grep ipcwork: out | tr '\n' '|')"
	pass "$n objects, $(grep -c '^ipcvar ' d/tree) sysctls; ipcs equal; ipcwork: check ok"
}

hooks() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	$UNSHARE --ipc sh -c "ipcwork make ids > make.out 2>&1 || exit 1
		$IPCS -c > ipcs.before && $IPCS >> ipcs.before &&
		imgcr _ipc dump -D d 2> dump.err" || fail "make/dump: $(cat make.out dump.err 2>/dev/null | tr '\n' '|')"
	grep -q '^mq name=ipcq ' d/ipc-records || fail "no mq record: $(tr '\n' '|' < d/ipc-records)"
	n=$(grep -c '^shm \|^sem \|^msq ' d/ipc-records)
	[ "$n" = 4 ] || fail "$n SysV records, not 4: $(tr '\n' '|' < d/ipc-records)"
	grep -q '^msq .* nmsgs=4 bytes=3011 ' d/ipc-records || fail "msq record: $(grep '^msq' d/ipc-records)"
	# the 1 MiB segment with one byte written: sparse
	b=$(grep '^shm .* key=0x00000000 ' d/ipc-records | sed 's/.* img=//')
	[ -f "d/$b" ] || fail "no image for the private segment"
	kb=$(du -k "d/$b" | cut -f1)
	[ "$kb" -le 64 ] || fail "d/$b takes $kb KiB: not sparse"
	$UNSHARE --ipc sh -c "imgcr _ipc restore -D d 2> restore.err || exit 1
		$IPCS -c > ipcs.after && $IPCS >> ipcs.after &&
		ipcwork check ids > check.out 2>&1" || fail "restore/check: $(cat restore.err check.out 2>/dev/null | tr '\n' '|')"
	grep -q '^ipcwork: check ok' check.out || fail "check: $(tr '\n' '|' < check.out)"
	diff ipcs.before ipcs.after > ipcs.diff || fail "ipcs differs: $(tr '\n' '|' < ipcs.diff)"
	pass "$(grep -c '^ipcvar ' d/ipc-records) sysctls, $n SysV objects, 1 POSIX queue; ipcs equal"
}

# in_userns CMD: sh -c CMD in new user, ipc and mount namespaces, uids and
# gids 0-65535 mapped to themselves (written from here: no newuidmap)
in_userns() {
	rm -f mapped
	$UNSHARE --user --ipc --mount sh -c "until [ -f mapped ]; do usleep 20000; done; $1" &
	_p=$!
	n=0
	until [ "$(readlink /proc/$_p/ns/user)" != "$(readlink /proc/self/ns/user)" ] || [ $n -gt 250 ]; do
		usleep 20000
		n=$((n + 1))
	done
	echo "0 0 65536" > /proc/$_p/uid_map && echo "0 0 65536" > /proc/$_p/gid_map ||
		{ kill $_p; fail "cannot write the maps of $_p"; }
	touch mapped
	wait $_p
}

userns() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	in_userns "ipcwork make ids > make.out 2>&1 || exit 1
		$IPCS -c > ipcs.before && $IPCS >> ipcs.before &&
		imgcr _ipc dump -D d 2> dump.err" || fail "make/dump: $(cat make.out dump.err 2>/dev/null | tr '\n' '|')"
	in_userns "imgcr _ipc restore -D d 2> restore.err || exit 1
		$IPCS -c > ipcs.after && $IPCS >> ipcs.after &&
		ipcwork check ids > check.out 2>&1" || fail "restore/check: $(cat restore.err check.out 2>/dev/null | tr '\n' '|')"
	grep -q '^ipcwork: check ok' check.out || fail "check: $(tr '\n' '|' < check.out)"
	diff ipcs.before ipcs.after > ipcs.diff || fail "ipcs differs: $(tr '\n' '|' < ipcs.diff)"
	pass "$(grep -c '^shm \|^sem \|^msq \|^mq ' d/ipc-records) objects"
}

attached() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	$UNSHARE --ipc sh -c "ipcwork run \"\$PWD/ids\" attach > w.out 2>&1 < /dev/null & w=\$!
		echo \$w > w.pid
		n=0; until grep -q ready w.out || [ \$n -gt 250 ]; do usleep 20000; n=\$((n + 1)); done
		$IPCS -m > ipcs.before
		imgcr _ipc dump -D d1 2> dump1.err || exit 1
		imgcr dump -t \$w -D d2 2> dump2.err || { kill \$w; exit 2; }" ||
		fail "dump: $(cat w.out dump1.err dump2.err 2>/dev/null | tr '\n' '|')"
	W=$(cat w.pid)
	wait_gone $W 10 || fail "ipcwork survived its dump"
	grep -q '^shm .* key=0x00001001 ' d1/ipc-records || fail "no record of segment A"
	$UNSHARE --ipc sh -c "imgcr _ipc restore -D d1 2> restore1.err || exit 1
		imgcr restore -D d2 --detach 2> restore.err || exit 2
		$IPCS -m > ipcs.after
		kill -USR1 $W
		n=0; while [ -d /proc/$W ] && [ \$n -lt 500 ]; do usleep 20000; n=\$((n + 1)); done" ||
		fail "restore: $(cat restore1.err restore.err 2>/dev/null | tr '\n' '|')"
	grep -q '^ipcwork: attached ok' w.out || fail "attached: $(grep ipcwork: w.out | tr '\n' '|')"
	grep -q '^ipcwork: check ok' w.out || fail "check: $(grep ipcwork: w.out | tr '\n' '|')"
	# segment A attached once again (nattch 1), as before the dump
	a1=$(awk '$1 == "0x00001001" { print $6 }' ipcs.before)
	a2=$(awk '$1 == "0x00001001" { print $6 }' ipcs.after)
	[ "$a1" = 1 ] && [ "$a2" = 1 ] || fail "segment A attaches: $a1 before, $a2 after the restore"
	pass "segment A attached again and shared; $(grep -c '^shm ' d1/ipc-records) segments"
}

lowered() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	lim="kernel/sem kernel/shmmni kernel/msgmnb fs/mqueue/msg_max"
	$UNSHARE --ipc sh -c "ipcwork make ids > make.out 2>&1 || exit 1
		echo '3 32000 40 1' > /proc/sys/kernel/sem && echo 2 > /proc/sys/kernel/shmmni &&
		echo 100 > /proc/sys/kernel/msgmnb && echo 3 > /proc/sys/fs/mqueue/msg_max &&
		for l in $lim; do cat /proc/sys/\$l; done > lim.before &&
		imgcr _ipc dump -D d 2> dump.err" || fail "make/dump: $(cat make.out dump.err 2>/dev/null | tr '\n' '|')"
	$UNSHARE --ipc sh -c "imgcr _ipc restore -D d 2> restore.err || exit 1
		for l in $lim; do cat /proc/sys/\$l; done > lim.after
		ipcwork check ids > check.out 2>&1; exit 0" || fail "restore: $(cat restore.err 2>/dev/null | tr '\n' '|')"
	diff lim.before lim.after > lim.diff || fail "limits: $(tr '\n' '|' < lim.diff)"
	# ipcwork's only complaints: the four limits it did not set
	grep -v "^ipcwork: kernel/sem is\|^ipcwork: kernel/shmmni is\|^ipcwork: kernel/msgmnb is\|^ipcwork: fs/mqueue/msg_max is" check.out > other
	[ -s other ] && fail "check: $(tr '\n' '|' < other)"
	[ "$(wc -l < check.out)" = 4 ] || fail "check: $(tr '\n' '|' < check.out)"
	pass "objects restored under limits lowered to $(tr '\n\t' '  ' < lim.after)"
}

badimg() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	$UNSHARE --ipc sh -c "ipcwork make ids > make.out 2>&1 && imgcr _ipc dump -D d 2> dump.err" ||
		fail "make/dump: $(cat make.out dump.err 2>/dev/null | tr '\n' '|')"
	b=$(grep '^shm .* key=0x00000000 ' d/ipc-records | sed 's/.* img=//')
	truncate -s 4096 "d/$b" || fail "truncate"
	$UNSHARE --ipc sh -c "imgcr _ipc restore -D d 2> restore.err; echo rc=\$? > rc; $IPCS > ipcs.after"
	grep -q 'rc=1' rc || fail "restore of a truncated image: $(cat rc)"
	grep -q "ipc-shm-.*is missing or not 1048576 bytes" restore.err || fail "message: $(cat restore.err)"
	grep -q '^0x' ipcs.after && fail "objects were made before the refusal: $(tr '\n' '|' < ipcs.after)"
	pass "$(cat restore.err)"
}

# refusal NAME MODE MESSAGE-REGEX
refusal() {
	mkdir -p "$T" && cd "$T" || fail "mkdir"
	$UNSHARE --ipc sh -c "ipcwork $1 > w.out 2>&1 & w=\$!
		n=0; until grep -q ready w.out || [ \$n -gt 250 ]; do usleep 20000; n=\$((n + 1)); done
		imgcr _ipc dump -D d 2> dump.err; echo rc=\$? > rc
		[ -d /proc/\$w ] && echo alive > alive; kill \$w"
	grep -q 'rc=1' rc || fail "dump: $(cat rc) (not refused)"
	grep -q "$2" dump.err || fail "message: $(cat dump.err)"
	[ -f alive ] || fail "the program did not survive the refused dump"
	pass "$(cat dump.err)"
}
refuse_mq() { refusal mqfull "POSIX message queue /full holds 1 messages: not supported"; }
refuse_shmdest() { refusal shmdest "shm segment [0-9]* (key 0x0) is removed but still attached"; }

subtest ct_ipc ct
subtest ct_ipc-hooks hooks
subtest ct_ipc-userns userns
subtest ct_ipc-attached attached
subtest ct_ipc-lowered lowered
subtest ct_ipc-badimg badimg
subtest ct_ipc-refuse-mq refuse_mq
subtest ct_ipc-refuse-shmdest refuse_shmdest
