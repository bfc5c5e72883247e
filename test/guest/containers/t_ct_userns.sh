#!/bin/sh
# A container with its own user namespace (as LXC's unprivileged ones and
# rootless podman), made by util-linux unshare --user --fork --pid, its
# pid 1 uswork: dumped from the host by root, killed, restored by root.
#   ct_userns           --map-root-user (uid and gid 0 inside are 0
#                       outside).  Inside: uswork's verdict (its uids and
#                       gids as it sees them, groups, uid_map, gid_map,
#                       setgroups, its capability sets, a file it created
#                       before is still its own, a new one gets its uid).
#                       Outside: a new user namespace, /proc/PID/uid_map
#                       and gid_map as before, the Uid/Gid lines of status,
#                       NSpid "HOST 1"; the tree file's userns record.
#   ct_userns-maps      maps written by root as LXC does (0 100000 65536,
#                       setgroups deny), with a UTS namespace: dumped and
#                       restored as above (inside: ids 0, the capabilities
#                       of the namespace's root, DIR/before owned by 0:0
#                       inside; outside: Uid 100000, the maps, DIR/after
#                       100000:100000).
#   ct_userns-loginuid  the same maps, the container's audit loginuid 101000
#                       (1000 inside): restored (review s12 L1).
#   ct_userns-unmapped  the container's sh, host root before the maps were
#                       written (unmapped), then uswork with loginuid 5000
#                       (unmapped): each dump refused naming the pid, the
#                       container runs on (review s12 L2).
#   ct_userns-ptrace    the same, with an action script at post-restore
#                       (every task waiting for its exec): the container's
#                       root (ptpeek: uid 0 inside, every capability there)
#                       cannot PTRACE_ATTACH the waiting task, open its
#                       /proc/PID/mem or pidfd_getfd its fds (review s12 H1).
#   ct_userns-rootfile  the same maps; uswork holds fd 3 on root's 0600 file
#                       (opened for it before it became the namespace's
#                       root): the restore opens it as uid 100000 and fails,
#                       naming it; nothing runs on (review s12 M4).
#   ct_userns-rootcwd   the same for its cwd, replaced after the dump by a
#                       link into a directory only root may enter.
#   ct_userns-maps-ipc  moving maps with an IPC namespace: ipcwork (uid 0
#                       inside) made SysV objects owned and created by
#                       inner uids 0, 1000, 1001, sysctls, a POSIX queue,
#                       a segment attached; restored: ipcwork checks them
#                       inside; ipcs -c/ipcs as the user namespace sees
#                       them and as the host does equal before and after;
#                       the pid, uts and ipc namespaces owned by the user
#                       namespace (nsowner: NS_GET_USERNS).
#   ct_userns-maps-ipcown  the same maps, a segment made in the container's
#                       ipc namespace by host root (uid 0 outside, not
#                       mapped inside): refused at dump, naming the pid,
#                       the segment and its owner; the container runs on.
#   ct_userns-maps-net  moving maps with a network namespace: loopback
#                       with an address of its own, a veth to the host
#                       (addresses both ends, MTU 1400, a route through the
#                       host end), taken once the kernel's link watch and
#                       IPv6 duplicate address detection are done (both
#                       ends "state UP", the link-local address no longer
#                       tentative); restored: uswork compares its own view
#                       (links, flags, MTUs, addresses, routes) inside;
#                       ip equal outside and as the user namespace sees
#                       it, the network namespace owned by the user
#                       namespace, the host pings the container.
#   ct_userns-maps-netsk  the same with sockets made by the container's
#                       root (uid 0 inside): sknet tree (unix stream
#                       server and clients by path and abstract name,
#                       datagram and seqpacket pairs with queues, TCP
#                       listeners, UDP echo), tcpstream pair (established
#                       on the container's loopback) and tcpstream srv on
#                       the veth with its client on the host; restored:
#                       both streams go on to their end, the listeners
#                       answer new clients, the programs' own checks, a
#                       socket's owner and the listener's uid in
#                       /proc/net/tcp (outside and inside) as before.
#   ct_userns-maps-netsk-refuse  a netlink socket there, and a socketpair
#                       the container's init made (its peer credentials
#                       name pid 1): each refused at dump, naming the pid
#                       and the fd.
#   ct_userns-nested    a user namespace in a user namespace: refused,
#                       naming the pid; the container keeps running.
#   ct_userns-owner     a user namespace an ordinary user made (uid 1000,
#                       as rootless podman's): refused (the restore would
#                       make it root's); the container keeps running.
# The refusals (unmapped, maps-ipcown, maps-netsk-refuse, rootfile,
# rootcwd, nested, owner) run on one kernel each (unmapped on two).
# timeout: 600
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
. /imgcr/guest/tcplib.sh
require_modules

step() { echo "INFO $T: $*" > /dev/console 2>/dev/null || true; }
nsid() { l=$(readlink /proc/$1/ns/$2); l=${l#*[}; echo "${l%]}"; }
nspid() { sed -n 's/^NSpid:[[:space:]]*//p' /proc/$1/status | tr -s '\t ' '  '; }
ids() { grep '^\(Uid\|Gid\|Groups\|CapInh\|CapPrm\|CapEff\|CapBnd\|CapAmb\):' /proc/$1/status | tr -s '\t ' '  ' | tr '\n' '|'; }

# wait_start: uswork printed its start line; CT its host pid
wait_start() {
	CT=$(cat ct.pid)
	track $CT
	wait_line out "^tick 2\$" 60 || fail "uswork did not start: $(tail -n 3 out | tr '\n' '|') $(cat unshare.err)"
	grep -q '^ok .*/before owned by' out || fail "uswork: $(tr '\n' '|' < out)"
}

# dump_restore: dump CT, check the record, restore, check inside and outside
dump_restore() {
	before_ids=$(ids $CT)
	before_uid_map=$(cat /proc/$CT/uid_map | tr -s ' ' ' ')
	before_gid_map=$(cat /proc/$CT/gid_map | tr -s ' ' ' ')
	before_sg=$(cat /proc/$CT/setgroups)
	step "dump $CT"
	timeout -s KILL 60 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tail -n 8 dump.err | tr "\n" "|")"
	wait_gone $CT 20 || fail "the dumped container still runs"
	# the caller's wait for what the end of the container takes away
	${AFTER_DUMP:-true}
	grep -q "^ns kind=user ino=" d/tree || fail "no ns kind=user record"
	grep "^userns " d/tree > userns.rec || fail "no userns record: $(grep -v '^[a-z]*file\|^fd' d/tree | tr '\n' '|' | cut -c1-600)"
	grep -q "setgroups=$before_sg " userns.rec || fail "userns record: $(cat userns.rec), setgroups was $before_sg"
	step "restore"
	rm -f rp
	# RTIMEOUT: the restore's deadline in seconds (sockets: slower under TCG)
	timeout -s KILL ${RTIMEOUT:-60} imgcr restore -v4 -D d --detach --pidfile "$PWD/rp" > r.out 2> restore.err
	RC=$?
	[ "$RC" = 0 ] || fail "restore: exit $RC: $(tail -n 3 r.out | tr "\n" "|") $(grep -v '^imgcr: debug' restore.err | tail -n 6 | tr "\n" "|") $(grep -i 'fail\|cannot\|refus' restore.err | tail -n 3 | tr "\n" "|") [last: $(tail -n 4 restore.err | tr "\n" "|" | cut -c1-600)]"
	NEW=$(cat rp)
	track $NEW
	c=$(grep -c '^tick ' out)
	wait_line out "^tick $((c + 2))\$" 60 || fail "uswork did not go on: $(tail -n 2 out | tr '\n' '|')"
	# outside
	[ "$(nsid $NEW user)" != "$(nsid $$ user)" ] || fail "restored in the host's user namespace"
	[ "$(nsid $NEW pid)" != "$(nsid $$ pid)" ] || fail "restored in the host's pid namespace"
	[ "$(cat /proc/$NEW/uid_map | tr -s ' ' ' ')" = "$before_uid_map" ] || fail "uid_map $(cat /proc/$NEW/uid_map), was $before_uid_map"
	[ "$(cat /proc/$NEW/gid_map | tr -s ' ' ' ')" = "$before_gid_map" ] || fail "gid_map $(cat /proc/$NEW/gid_map), was $before_gid_map"
	[ "$(cat /proc/$NEW/setgroups)" = "$before_sg" ] || fail "setgroups $(cat /proc/$NEW/setgroups), was $before_sg"
	[ "$(ids $NEW)" = "$before_ids" ] || fail "status: $(ids $NEW), was $before_ids"
	[ "$(nspid $NEW)" = "$NEW 1" ] || fail "NSpid of $NEW is '$(nspid $NEW)'"
	[ -z "${LOGIN:-}" ] || [ "$(cat /proc/$NEW/loginuid)" = "$LOGIN" ] ||
		fail "restored loginuid $(cat /proc/$NEW/loginuid), was $LOGIN"
	# the caller's checks of the restored container, while it runs
	${AFTER_RESTORE:-true}
	# inside
	kill -USR1 $NEW
	wait_gone $NEW 20 || fail "uswork did not end on SIGUSR1"
	grep -q '^uswork PASS' out || fail "inside: $(grep '^FAIL\|^uswork' out | tr '\n' '|')$(netdiff)"
	info "$(grep '^start' out | head -n 1); $before_uid_map"
}

rootmap() {
	mkdir w
	# uswork's stderr apart: unshare's own file changes after the dump
	ct_start ct.pid --user --map-root-user --pid -- sh -c "exec uswork $PWD/w 2>> ct.err" >> out 2> unshare.err ||
		fail "ct_start: $(cat unshare.err)"
	wait_start
	dump_restore
	pass "uid_map $(tr -s ' ' ' ' < /proc/self/uid_map | head -c 0)$before_uid_map; $(grep '^start' out | head -n 1)"
}

# LXC's way: the maps written from outside by root (newuidmap's job), before the workload runs;
# --keep-caps: the capabilities in the namespace stay (ambient) until uswork -0 became root there.
# uswork's directory, stdout and stderr are uid 100000's (the restore opens them as it).
lxc_start() {
	W=/tmp/ct_userns-$1.$$
	rm -rf $W
	mkdir $W && touch $W/out $W/ct.err && chown -R 100000:100000 $W || fail "mkdir $W"
	ln -s $W/out out
	# root's own file in it, 0600 (ct_userns-rootfile)
	[ -z "${SECRET:-}" ] || { echo secret > $W/secret && chmod 600 $W/secret; } || fail "secret"
	[ -z "${CTCWD:-}" ] || { mkdir -p $CTCWD && chown 100000:100000 $CTCWD; } || fail "mkdir $CTCWD"
	mkfifo go
	# LOGIN: the container's audit loginuid (host view), written in a subshell only
	# shellcheck disable=SC2086
	( [ -z "${LOGIN:-}" ] || echo "$LOGIN" > /proc/self/loginuid || exit 1
	  ct_start ct.pid --user --keep-caps --pid --uts ${CTFLAGS:-} -- sh -c "read x < $PWD/go; ${CTPRE:-} cd ${CTCWD:-$W} && exec uswork -0 $W 2>> $W/ct.err ${EXTRA:-}" ) >> $W/out 2> unshare.err < /dev/null ||
		fail "ct_start: $(cat unshare.err)"
	p=$(cat ct.pid)
	echo "0 100000 65536" > /proc/$p/uid_map || fail "cannot write uid_map"
	echo deny > /proc/$p/setgroups || fail "cannot write setgroups"
	echo "0 100000 65536" > /proc/$p/gid_map || fail "cannot write gid_map"
	[ -n "${NOGO:-}" ] && return 0
	echo go > go
	wait_start
	# uswork became uid 0 inside: 100000 outside
	grep -q "^Uid:[[:space:]]*100000[[:space:]]" /proc/$CT/status || fail "uswork's Uid: $(grep ^Uid: /proc/$CT/status)"
}

maps() {
	lxc_start maps
	dump_restore
	# dump_restore compared the restored status lines with these
	case "$before_ids" in
	"Uid: 100000 100000 100000 100000|Gid: 100000 100000 100000 100000|"*) ;;
	*) fail "status before: $before_ids" ;;
	esac
	grep -q "^ok .*/before owned by" out || fail "uswork: $(tr '\n' '|' < out)"
	[ "$(stat -c %u:%g $W/after)" = "100000:100000" ] || fail "$W/after (made by the restored uswork) is $(stat -c %u:%g $W/after) outside"
	rm -rf $W
	pass "$before_uid_map; $(ids_short) $(grep '^start' out | head -n 1)"
}
# review s12 L1: the container's audit loginuid (101000 outside, 1000 inside)
# comes back; the restore (from a shell whose loginuid is unset) writes it
# in the namespace's view.
loginuid() {
	[ "$(cat /proc/self/loginuid)" = 4294967295 ] || fail "this shell's loginuid is set: $(cat /proc/self/loginuid)"
	LOGIN=101000
	lxc_start loginuid
	[ "$(cat /proc/$CT/loginuid)" = 101000 ] || fail "loginuid before: $(cat /proc/$CT/loginuid)"
	dump_restore
	grep -q "^loginuid pid=$CT uid=101000$" d/tree || fail "tree: $(grep '^loginuid' d/tree)"
	rm -rf $W
	pass "loginuid 101000 (1000 inside); $(ids_short)"
}

# review s12 L2: ids the namespace does not map (the container's sh before the
# maps were written keeps host root; a loginuid of 5000) are refused at dump,
# naming the pid; the container runs on.
unmapped() {
	LOGIN=5000 NOGO=1
	lxc_start unmapped
	CT=$(cat ct.pid)
	track $CT
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a task with unmapped ids succeeded"
	grep -q "^imgcr: pid $CT (sh): its uid 0 or gid 0 is not mapped in its user namespace" dump.err ||
		fail "message: $(grep -v '^imgcr: debug' dump.err | tr '\n' '|')"
	m1=$(grep "not mapped" dump.err | head -n 1 | cut -c1-120)
	[ -e d/tree ] && fail "a tree file was written"
	echo go > go
	wait_start
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a task with an unmapped loginuid succeeded"
	grep -q "^imgcr: pid $CT (uswork): its audit loginuid 5000 is not mapped in its user namespace" dump.err ||
		fail "message: $(grep -v '^imgcr: debug' dump.err | tr '\n' '|')"
	refused_left_running
	pass "$m1; $(grep "not mapped" dump.err | head -n 1 | cut -c1-120)"
}

ids_short() { echo "$before_ids" | cut -d'|' -f1,2; }

# review s12 H1: while every task waits for its exec (imgcr's post-restore
# point, IMGCR_ACTION_SCRIPT), the container's root (uid 0 of the new
# namespace, every capability there: ptpeek) tries PTRACE_ATTACH, /proc/PID/mem
# and pidfd_getfd on the waiting root task: each must be refused.
ptrace_h1() {
	lxc_start ptrace
	cat > hook.sh <<EOT
[ "\$CRTOOLS_SCRIPT_ACTION" = post-restore ] || exit 0
echo "exe \$(readlink /proc/\$CRTOOLS_INIT_PID/exe)" > $PWD/peek.out
ptpeek \$CRTOOLS_INIT_PID \$CRTOOLS_INIT_PID >> $PWD/peek.out 2>&1
echo "rc \$?" >> $PWD/peek.out
exit 0
EOT
	export IMGCR_ACTION_SCRIPT="sh $PWD/hook.sh"
	dump_restore
	[ -s peek.out ] || fail "the action script did not run"
	grep -q "^exe .*/imgcr$" peek.out || fail "not before the exec: $(tr '\n' '|' < peek.out)"
	grep -q "^me uid=0 capeff=" peek.out && ! grep -q "^me uid=0 capeff=0000000000000000" peek.out ||
		fail "ptpeek did not become the container's root: $(tr '\n' '|' < peek.out)"
	grep -q "^[0-9]* attach=EPERM mem=EACCES getfd=EPERM " peek.out ||
		fail "a task waiting for its exec was reachable by the container's root: $(tr '\n' '|' < peek.out)"
	grep -q "^rc 0$" peek.out || fail "ptpeek: $(tr '\n' '|' < peek.out)"
	rm -rf $W
	pass "$(grep -v '^exe' peek.out | tr '\n' ' ')"
}

# review s12 M4: a file the container holds but could not open itself
# (root's 0600 file, opened for it before it became the namespace's root)
# is not opened for it as root: the restore fails, naming the file.
rootfile() {
	EXTRA="3< /tmp/ct_userns-rootfile.$$/secret"
	SECRET=1
	lxc_start rootfile
	[ "$(readlink /proc/$CT/fd/3)" = "$W/secret" ] || fail "fd 3 is $(readlink /proc/$CT/fd/3)"
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tail -n 3 dump.err | tr '\n' '|')"
	wait_gone $CT 20 || fail "the dumped container still runs"
	rm -f rp
	timeout -s KILL 60 imgcr restore -D d --detach --pidfile "$PWD/rp" > r.out 2> restore.err &&
		fail "restore succeeded: root's 0600 file was opened for uid 100000"
	grep -q "$W/secret.*Permission denied" restore.err &&
		grep -q "^imgcr: pid [0-9]*: $W/secret: not restored with the rights of this task" restore.err ||
		fail "message: $(grep -v '^imgcr: debug' restore.err | tail -n 4 | tr '\n' '|')"
	[ -e rp ] && fail "a pid file was written"
	c=$(grep -c '^tick ' out)
	sleep 1
	[ "$(grep -c '^tick ' out)" = "$c" ] || fail "something of the tree runs on"
	rm -rf $W
	pass "$(grep "$W/secret" restore.err | tail -n 1 | cut -c1-160)"
}

# the same for the cwd, which each task enters as host root before its exec:
# its directory is replaced after the dump by a link to one under a
# directory only root may enter; the restore fails, naming it.
rootcwd() {
	CTCWD=/tmp/ct_userns-rootcwd.$$/sub
	lxc_start rootcwd
	[ "$(readlink /proc/$CT/cwd)" = "$CTCWD" ] || fail "cwd is $(readlink /proc/$CT/cwd)"
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err || fail "dump: $(tail -n 3 dump.err | tr '\n' '|')"
	wait_gone $CT 20 || fail "the dumped container still runs"
	R=/tmp/ct_userns-rootonly.$$
	rm -rf $R && mkdir -m 700 $R && mkdir -m 755 $R/sub && rm -rf $CTCWD && ln -s $R/sub $CTCWD || fail "link"
	rm -f rp
	timeout -s KILL 60 imgcr restore -D d --detach --pidfile "$PWD/rp" > r.out 2> restore.err &&
		fail "restore succeeded: the cwd was entered as root in a directory only root may enter"
	grep -q "its cwd $CTCWD cannot be reached with its own ids (uid 100000 gid 100000): Permission denied" restore.err ||
		fail "message: $(grep -v '^imgcr: debug' restore.err | tail -n 4 | tr '\n' '|')"
	[ -e rp ] && fail "a pid file was written"
	rm -rf $W $R
	pass "$(grep "its cwd" restore.err | head -n 1 | cut -c1-160)"
}

# ipcs_in PID OUT: ipcs -c and ipcs of PID's ipc namespace, as its user namespace
# sees them (the ids inside) and as the host does (the ids outside)
IPCS=/usr/sbin/ipcs
ipcs_in() {
	/usr/sbin/nsenter -t $1 -U -i --preserve-credentials $IPCS -c > "$2.in" &&
		/usr/sbin/nsenter -t $1 -U -i --preserve-credentials $IPCS >> "$2.in" &&
		/usr/sbin/nsenter -t $1 -i $IPCS -c > "$2.out" && /usr/sbin/nsenter -t $1 -i $IPCS >> "$2.out"
}

# owned PID: every namespace of PID is owned by its user namespace (NS_GET_USERNS)
owned() {
	nsowner $1 pid uts ipc > owners.$1 || fail "nsowner $1"
	u=$(sed -n 's/^user //p' owners.$1)
	[ "$(grep -c " $u\$" owners.$1)" = 3 ] || fail "namespaces of $1 not owned by its user namespace user:[$u]: $(tr '\n' '|' < owners.$1)"
}

# moving maps with an ipc namespace: ipcwork (uid 0 inside) made every kind of
# object (owners 1000 and 1001 inside, 101000 and 101001 outside, sysctls, a
# POSIX queue, segment A attached): restored with the same owners, creators,
# modes, contents; checked inside by ipcwork, outside by ipcs in both views
maps_ipc() {
	W=/tmp/ct_userns-ipc.$$
	rm -rf $W
	mkdir $W && touch $W/out && chown -R 100000:100000 $W || fail "mkdir $W"
	ln -s $W/out out
	mkfifo go
	ct_start ct.pid --user --keep-caps --pid --ipc -- sh -c "read x < $PWD/go; cd $W && exec ipcwork -0 run $W/ids attach 2>&1" >> $W/out 2> unshare.err < /dev/null ||
		fail "ct_start: $(cat unshare.err)"
	p=$(cat ct.pid)
	echo "0 100000 65536" > /proc/$p/uid_map && echo deny > /proc/$p/setgroups &&
		echo "0 100000 65536" > /proc/$p/gid_map || fail "cannot write the maps"
	echo go > go
	CT=$p
	track $CT
	wait_line out "^ipcwork: ready pid=1" 60 || fail "ipcwork not ready: $(tr '\n' '|' < out) $(cat unshare.err)"
	ipcs_in $CT ipcs.before || fail "ipcs before"
	grep -Eq " 101001 +101001 +101000 +100100( |\$)" ipcs.before.out || fail "the set's creator and owner outside: $(tr '\n' '|' < ipcs.before.out)"
	grep -Eq " 1001 +1001 +user +100( |\$)" ipcs.before.in || fail "the set's creator and owner inside: $(tr '\n' '|' < ipcs.before.in)"
	owned $CT
	step "dump $CT"
	timeout -s KILL 60 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err || fail "dump: $(grep -v '^imgcr: debug' dump.err | tail -n 4 | tr '\n' '|')"
	wait_gone $CT 20 || fail "the dumped container still runs"
	grep -q "^sem .* uid=101000 gid=100100 cuid=101001 cgid=101001 " d/tree || fail "sem record: $(grep '^sem ' d/tree)"
	step "restore"
	timeout -s KILL 60 imgcr restore -v4 -D d --detach --pidfile "$PWD/rp" > r.out 2> restore.err ||
		fail "restore: exit $?: $(grep -v '^imgcr: debug' restore.err | tail -n 4 | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	[ "$(nsid $NEW ipc)" != "$(nsid $$ ipc)" ] || fail "restored into the host's ipc namespace"
	[ "$(cat /proc/$NEW/uid_map | tr -s ' ' ' ')" = " 0 100000 65536" ] || fail "uid_map $(cat /proc/$NEW/uid_map)"
	owned $NEW
	ipcs_in $NEW ipcs.after || fail "ipcs after"
	diff ipcs.before.in ipcs.after.in > ipcs.diff.in || fail "ipcs inside differs: $(tr '\n' '|' < ipcs.diff.in)"
	diff ipcs.before.out ipcs.after.out > ipcs.diff.out || fail "ipcs outside differs: $(tr '\n' '|' < ipcs.diff.out)"
	[ "$(/usr/sbin/nsenter -t $NEW -i cat /proc/sys/kernel/msgmax)" = 12345 ] || fail "msgmax: $(/usr/sbin/nsenter -t $NEW -i cat /proc/sys/kernel/msgmax)"
	kill -USR1 $NEW
	wait_gone $NEW 20 || fail "ipcwork did not end on SIGUSR1"
	grep -q '^ipcwork: attached ok' out || fail "inside, the mapping: $(grep ipcwork: out | tr '\n' '|')"
	grep -q '^ipcwork: check ok' out || fail "inside: $(grep ipcwork: out | tr '\n' '|')"
	rm -rf $W
	pass "$(grep -c '^shm \|^sem \|^msq \|^mq ' d/tree) objects; ipcs equal inside and outside; ipcwork: check ok"
}

# netstate PID OUT: PID's network namespace as ip shows it (links without
# counters, addresses, routes), into OUT; not the IPv6 routes the kernel
# makes itself (proto kernel: not dumped; 6.12 adds "::1 dev lo" on the
# restored loopback but had none on the original)
netstate() {
	/usr/sbin/nsenter -t $1 -n /usr/sbin/ip -o link show | sed 's/ link-netnsid [0-9]*//; s/@if[0-9]*//' > "$2" &&
		/usr/sbin/nsenter -t $1 -n /usr/sbin/ip -o addr show | sed 's/valid_lft.*//; s/@if[0-9]*//' >> "$2" &&
		/usr/sbin/nsenter -t $1 -n /usr/sbin/ip route show >> "$2" &&
		/usr/sbin/nsenter -t $1 -n /usr/sbin/ip -6 route show | sed '/ proto kernel /d' >> "$2"
}

# net_settled PID: wait (10 s at most) until the veth's two ends are up
# with a carrier as the host and PID's namespace see them (IFF_RUNNING and
# "state UP": the operational state, set by the kernel's link watch work
# after the carrier came, not by "ip link set up") and the inner end's
# IPv6 link-local address exists and ended duplicate address detection
# (made when the link became ready, "tentative" for about a second); the
# last look into settled.out
net_settled() {
	_n=0
	while [ $_n -lt 100 ]; do
		{ /usr/sbin/ip -o link show dev ctm-h0 && /usr/sbin/nsenter -t $1 -n /usr/sbin/ip -o link show dev ctm-c0 &&
			/usr/sbin/nsenter -t $1 -n /usr/sbin/ip -o -6 addr show dev ctm-c0 scope link; } > settled.out 2>&1
		[ "$(grep -c '[<,]UP,LOWER_UP>.* state UP ' settled.out)" = 2 ] && ! grep -q 'NO-CARRIER\|tentative' settled.out &&
			grep -q ' inet6 fe80::' settled.out && return 0
		usleep 100000
		_n=$((_n + 1))
	done
	return 1
}

# net_gone: the dumped container's veth went with its network namespace
# (the kernel removes it a little after the last task's end: a restore
# before would find the host end's name taken)
net_gone() {
	_n=0
	while /usr/sbin/ip link show ctm-h0 > /dev/null 2>&1; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || fail "ctm-h0 outlived the container by 10 s"
		usleep 100000
	done
}

# net_after: maps_net's checks of the restored container NEW (dump_restore)
net_after() {
	owned_net $NEW
	net_settled $NEW || fail "the restored veth did not settle: $(tr '\n' '|' < settled.out)"
	netstate $NEW net.after || fail "netstate after"
	diff net.before net.after > net.diff || fail "network namespace differs: $(tr '\n' '|' < net.diff)"
	/usr/sbin/nsenter -t $NEW -U -n --preserve-credentials /usr/sbin/ip -o addr show | sed 's/valid_lft.*//' > in.after || fail "ip inside after"
	diff in.before in.after > in.diff || fail "ip inside differs: $(tr '\n' '|' < in.diff)"
	/usr/sbin/ip -o addr show dev ctm-h0 | grep -q "10.77.0.1/24" || fail "host end: $(/usr/sbin/ip -o addr show dev ctm-h0)"
	ping -c 1 -W 5 10.77.0.2 > ping.after 2>&1 || fail "no ping after: $(cat ping.after)"
}

# moving maps with a network namespace: loopback up with an address of its
# own, a veth pair whose peer is on the host (addresses on both ends, a
# route through the peer); no socket in the tree.  Restored: the same
# links, addresses and routes (ip, outside and as the user namespace sees
# them), the namespace owned by the restored user namespace, the host
# reaches the container through the veth (ping), uswork's verdict inside.
# netdiff: uswork's "FAIL net: was ... now ..." block of out as the lines
# that differ, for a failure message
netdiff() {
	grep -q '^FAIL net: was' out || return 0
	sed -n '/^FAIL net: was$/,/^now$/p' out | sed '1d;$d' > nw.a
	sed -n '/^now$/,/^uswork /p' out | grep '^\(link\|addr\|route\|inet6\|getifaddrs\)' > nw.b
	printf ' [net: %s]' "$(diff nw.a nw.b | grep '^[-+][^-+]' | head -n 10 | tr '\n' '|')"
}

# owned_net PID: PID's network namespace is owned by its user namespace
owned_net() {
	nsowner $1 net > nowner.$1 || fail "nsowner $1"
	[ "$(sed -n 's/^user //p' nowner.$1)" = "$(sed -n 's/^net //p' nowner.$1)" ] || fail "the network namespace of $1 is not owned by its user namespace: $(tr '\n' '|' < nowner.$1)"
}

# net_setup PID: loopback up with an address of its own, a veth pair whose
# peer is on the host (addresses on both ends, MTU 1400, a route through
# the peer)
net_setup() {
	ip=/usr/sbin/ip
	$ip link add ctm-h0 type veth peer name ctm-c0 netns $1 || fail "veth"
	$ip addr add 10.77.0.1/24 dev ctm-h0 && $ip link set ctm-h0 up || fail "host end"
	/usr/sbin/nsenter -t $1 -n sh -c "$ip link set lo up && $ip addr add 10.79.0.1/32 dev lo &&
		$ip addr add 10.77.0.2/24 dev ctm-c0 && $ip link set ctm-c0 mtu 1400 up &&
		$ip route add 10.78.0.0/16 via 10.77.0.1" || fail "inner end"
}

maps_net() {
	CTFLAGS=--net lxc_start net
	net_setup $CT
	# the state before once the kernel's asynchronous work is done (the
	# dump would catch it half-way: the restore does not redo it)
	net_settled $CT || fail "the veth did not settle: $(tr '\n' '|' < settled.out)"
	ping -c 1 -W 5 10.77.0.2 > ping.before 2>&1 || fail "no ping before: $(cat ping.before)"
	netstate $CT net.before || fail "netstate before"
	kill -USR2 $CT
	wait_line out "^net [0-9]* lines\$" 20 || fail "uswork did not record its network: $(tail -n 3 out | tr '\n' '|')"
	/usr/sbin/nsenter -t $CT -U -n --preserve-credentials /usr/sbin/ip -o addr show | sed 's/valid_lft.*//' > in.before || fail "ip inside"
	owned_net $CT
	AFTER_DUMP=net_gone AFTER_RESTORE=net_after dump_restore
	grep -q "^ok .*/before owned by" out && grep -q "^ok net\$" out || fail "uswork: $(grep -v '^tick' out | tr '\n' '|')"
	v=$(grep '^net [0-9]* lines' out)
	rm -rf $W
	net_gone
	pass "$(grep -c . net.before) lines of ip equal; $(grep -c '^netdev\|^netmsg' d/tree) net records; uswork: $v, ok net; pinged"
}

# refused_left_running: after a refused dump of the container $CT: no tree
# file, uswork ticks on, ends on SIGUSR1 with its own checks passed
refused_left_running() {
	[ -e d/tree ] && fail "a tree file was written"
	c=$(grep -c '^tick ' out)
	wait_line out "^tick $((c + 2))\$" 20 || fail "uswork stopped after the failed dump"
	kill -USR1 $CT
	wait_gone $CT 20 || fail "uswork did not end on SIGUSR1"
	grep -q '^uswork PASS' out || fail "inside: $(grep '^FAIL\|^uswork' out | tr '\n' '|')"
	rm -rf $W
}

# Moving maps, a network namespace and sockets in the tree (issue 23),
# made by the container's root (uid 0 inside, 100000 outside; runas -k:
# the namespace's setgroups is "deny"): sknet tree (a unix stream server
# and 3 clients by path and abstract name, data queued both ways, datagram
# and seqpacket pairs, bound datagram sockets, TCP listeners on 127.0.0.1
# and [::1], a UDP echo socket), tcpstream pair (an established TCP
# connection on the container's loopback, both ends in the tree) and
# tcpstream srv on the veth, whose client runs on the host, outside the
# tree.  Restored: each program checks its own sockets inside, both
# streams go on to their end (the same connections, nothing lost), the
# listeners answer new clients (TCP and the abstract name in the
# namespace, the path from the host), the UDP socket echoes; a socket's
# owner is 100000:100000 (stat of /proc/PID/fd/N) and the listener's uid
# in /proc/PID/net/tcp 100000 outside and 0 read in the user namespace, as
# before; the state check compares every fd (owners, SO_PEERCRED, options).
NP=7330	# sknet's ports (UDP: NP + 1)
SP=7340	# tcpstream pair, on the container's loopback
OP=7350	# tcpstream srv on the veth, its client on the host

# kid PID WORD: PID's child whose command line has WORD
kid() {
	for _k in $(cat /proc/$1/task/$1/children); do
		tr '\0' ' ' < /proc/$_k/cmdline | grep -q -- "$2" && { echo $_k; return 0; }
	done
	return 1
}

# sk_owner PID: the owner of PID's first socket fd (stat of /proc/PID/fd/N)
sk_owner() {
	for _f in /proc/$1/fd/*; do
		case "$(readlink $_f)" in socket:*) break ;; esac
	done
	stat -L -c %u:%g $_f
}

# tcp_uid PID PORT [-U]: the uid of the listener on PORT in /proc/PID/net/tcp
# (the kernel translates it into the reader's user namespace: with -U, read
# in PID's)
tcp_uid() {
	${3:+/usr/sbin/nsenter -t $1 -U --preserve-credentials} cat /proc/$1/net/tcp |
		awk -v p=":$(printf '%04X' $2)" 'substr($2, length($2) - 4) == p && $4 == "0A" { print $8; exit }'
}

netsk_dumped() {
	net_gone
	at=$(last_recv $W/ts.txt)
	ato=$(last_recv tso-cli.txt)
}

netsk_after() {
	owned_net $NEW
	net_settled $NEW || fail "the restored veth did not settle: $(tr '\n' '|' < settled.out)"
	wait_progress $W/ts.txt $((at + 65536)) 60 ||
		fail "the loopback stream did not go on after $at bytes: $(tail -n 2 $W/ts.txt | tr '\n' '|')"
	wait_progress tso-cli.txt $((ato + 65536)) 60 ||
		fail "the stream to the host did not go on after $ato bytes: $(tail -n 2 tso-cli.txt | tr '\n' '|')"
	N="/usr/sbin/nsenter -t $NEW -n"
	for c in "unix @sknet-$NP" "tcp 127.0.0.1 $NP" "tcp ::1 $NP"; do
		r=$(timeout 20 $N sknet cli $c 2>&1)
		[ "$r" = hello ] || fail "a new client ($c) in the container's namespace got '$r'"
	done
	r=$(timeout 20 sknet cli unix $W/srv.sock 2>&1)
	[ "$r" = hello ] || fail "a new client of $W/srv.sock on the host got '$r'"
	r=$(timeout 20 $N sknet cli udp $((NP + 1)) 2>&1)
	[ "$r" = "udp echo" ] || fail "UDP echo after the restore: '$r'"
	[ "$(tcp_uid $NEW $NP) $(tcp_uid $NEW $NP -U)" = "$uid_before" ] ||
		fail "the listener's uid in /proc/net/tcp (outside, inside): $(tcp_uid $NEW $NP) $(tcp_uid $NEW $NP -U), was $uid_before"
	s=$(kid $NEW "sknet tree") || fail "no sknet after the restore"
	[ "$(sk_owner $s)" = "$own_before" ] || fail "a socket's owner: $(sk_owner $s), was $own_before"
	# each program's verdict
	wait_line $W/sk.out "server done" 240 || fail "the exchange did not finish: $(tail -n 3 $W/sk.out | tr '\n' '|')"
	grep -q BAD $W/sk.out && fail "$(grep BAD $W/sk.out | head -n3 | tr '\n' '|')"
	grep -q "^queues ok" $W/sk.out || fail "queued datagrams/messages: $(tr '\n' '|' < $W/sk.out)"
	grep -q "^opts ok" $W/sk.out || fail "socket options: $(tr '\n' '|' < $W/sk.out)"
	for i in 0 1 2; do
		grep -q "^client $i .* ok\$" $W/sk.out || fail "client $i did not finish: $(tr '\n' '|' < $W/sk.out)"
	done
	ts=$(kid $NEW "tcpstream pair") || fail "no tcpstream pair after the restore"
	stream_end $W/ts.txt $(child_of $ts)
	lb=$STREAM_BYTES
	kill -TERM $HCLI
	wait_line tso-cli.txt "^client done" 60 || fail "the host's client did not finish: $(tail -n 3 tso-cli.txt | tr '\n' '|')"
	wait_line $W/tso.txt "^server done" 60 || fail "the container's server did not finish: $(tail -n 3 $W/tso.txt | tr '\n' '|')"
	grep -q BAD tso-cli.txt $W/tso.txt && fail "$(grep BAD tso-cli.txt $W/tso.txt | head -n 3 | tr '\n' '|')"
	set -- $(grep "^client done" tso-cli.txt)
	cs=$4 cr=$6 cp=$8
	set -- $(grep "^server done" $W/tso.txt)
	[ "$cs" = "$cr" ] && [ "$cr" = "$4" ] && [ "$cp" = "$6" ] ||
		fail "the host's client sent $cs received $cr port $cp, the container's server received $4 port $6"
	ob=$cs
}

maps_netsk() {
	W=/tmp/ct_userns-netsk.$$
	R="runas -k 0 0"
	O="< /dev/null > /dev/null 2>> $W/ct.err"
	# in W: a cwd uid 100000 reaches (the restore looks it up as the task)
	CTFLAGS=--net NOGO=1 CTPRE="cd $W; $R sknet tree $W $NP 400 $W/sk.out $O & $R tcpstream pair 127.0.0.1 $SP $W/ts.txt $O &
		$R tcpstream srv 10.77.0.2 $OP $W/tso.txt $O &" lxc_start netsk
	CT=$(cat ct.pid)
	track $CT
	net_setup $CT
	echo go > go
	wait_start
	net_settled $CT || fail "the veth did not settle: $(tr '\n' '|' < settled.out)"
	n=0
	while [ -z "$(tcp_uid $CT $OP)" ] || [ -z "$(tcp_uid $CT $NP)" ]; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "no listeners in the container: $(cat $W/ct.err | tr '\n' '|')"
		usleep 100000
	done
	tcpstream cli 10.77.0.2 $OP tso-cli.txt < /dev/null > /dev/null 2> tso-cli.err &
	HCLI=$!
	track $HCLI
	wait_progress $W/ts.txt 100000 30 || fail "the loopback stream does not flow: $(tail -n 2 $W/ts.txt | tr '\n' '|') $(cat $W/ct.err)"
	wait_progress tso-cli.txt 100000 30 || fail "the stream to the host does not flow: $(tail -n 2 tso-cli.txt | tr '\n' '|') $(cat tso-cli.err)"
	grep -q "server done" $W/sk.out && fail "the exchange ended before the dump"
	owned_net $CT
	uid_before="$(tcp_uid $CT $NP) $(tcp_uid $CT $NP -U)"
	[ "$uid_before" = "100000 0" ] || fail "the listener's uid before (outside, inside): $uid_before"
	s=$(kid $CT "sknet tree") || fail "no sknet"
	own_before=$(sk_owner $s)
	[ "$own_before" = "100000:100000" ] || fail "a socket's owner before: $own_before"
	# a unix connection's SO_PEERCRED pid, when a task other than the
	# container's init made it, is made again by a short-lived process of
	# that pid in the container's PID namespace (the pid inside is the
	# same), whose host pid is not the restored task's: a user namespace's
	# restore does not keep host pids (docs/sockets.md); uid and gid equal
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'fd * sockopt.SOL_SOCKET.SO_PEERCRED pid=tree:* uid=100000 gid=100000 -> pid=outside uid=100000 gid=100000  # the pid inside kept, not the host one (a user namespace restore gives its tasks new host pids)' >> expected
	export IMGCR_STATE_EXPECTED=$PWD/expected
	RTIMEOUT=150 AFTER_DUMP=netsk_dumped AFTER_RESTORE=netsk_after dump_restore
	nsk=$(grep -c '^sk ' d/tree)
	ntcp=$(ls d/sk-*.tcp 2>/dev/null | wc -l)
	[ "$ntcp" = 3 ] || fail "$ntcp established connections saved, expected 3"
	rm -rf $W
	net_gone
	pass "$nsk sockets, $ntcp established; streams went on (loopback $lb bytes, to the host $ob bytes); listeners answered; owner $own_before, listener uid $uid_before"
}

# the same maps and network namespace, a netlink socket in the tree: refused
# at dump (imgcr makes the sockets as host root: a netlink socket keeps its
# opener's credentials), naming the pid and the fd; the container runs on.
# Then a unix socketpair the container's init made (its peer credentials
# name pid 1, which imgcr cannot give from outside the PID namespace): refused.
maps_netsk_refuse() {
	W=/tmp/ct_userns-netskr.$$
	CTFLAGS=--net CTPRE="cd $W; runas -k 0 0 sknet hold netlink < /dev/null > /dev/null 2>> $W/ct.err &" lxc_start netskr
	n=0
	until h=$(kid $CT "sknet hold") && ls -l /proc/$h/fd 2>/dev/null | grep -q socket:; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "sknet hold netlink did not start: $(cat $W/ct.err)"
		usleep 100000
	done
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a netlink socket in a network namespace with moving maps succeeded"
	grep -q "^imgcr: pid [0-9]*: fd [0-9]*: a netlink socket, with a user namespace whose maps move ids: not supported yet" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	refused_left_running
	m1=$(head -n 1 dump.err | cut -c1-120)
	# the container's init (runas, then sknet: uid 0 inside) holds a
	# socketpair it made itself: its peer credentials name pid 1
	mkdir init && cd init || fail "mkdir init"
	mkfifo go
	ct_start ct.pid --user --keep-caps --pid --net -- sh -c "read x < $PWD/go; exec runas -k 0 0 sknet hold scm" > hold.out 2> unshare.err < /dev/null ||
		fail "ct_start: $(cat unshare.err)"
	p=$(cat ct.pid)
	track $p
	echo "0 100000 65536" > /proc/$p/uid_map && echo deny > /proc/$p/setgroups &&
		echo "0 100000 65536" > /proc/$p/gid_map || fail "cannot write the maps"
	echo go > go
	n=0
	until ls -l /proc/$p/fd 2>/dev/null | grep -q socket:; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "sknet hold scm did not start: $(cat unshare.err)"
		usleep 100000
	done
	timeout -s KILL 60 imgcr dump -t $p -D d > dump.out 2> dump.err && fail "dump of the init's socketpair succeeded"
	grep -q "^imgcr: pid $p: fd [0-9]*: a unix socket whose peer credentials name the container's init (pid $p, 1 inside)" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	[ "$(state $p)" = S ] || fail "the container did not survive the refused dump: $(state $p)"
	pass "$m1; $(head -n 1 dump.err | cut -c1-120)"
}

# moving maps, a segment made in the container's ipc namespace by host root
# (nsenter: uid 0 outside, not mapped inside): refused at dump, naming it
maps_ipcown() {
	W=/tmp/ct_userns-ipcown.$$
	rm -rf $W
	mkdir $W && chown 100000:100000 $W || fail "mkdir $W"
	mkfifo go
	ct_start ct.pid --user --keep-caps --pid --ipc -- sh -c "read x < $PWD/go; exec uswork -0 $W 2>> ct.err" >> out 2> unshare.err ||
		fail "ct_start: $(cat unshare.err)"
	p=$(cat ct.pid)
	echo "0 100000 65536" > /proc/$p/uid_map && echo deny > /proc/$p/setgroups &&
		echo "0 100000 65536" > /proc/$p/gid_map || fail "cannot write the maps"
	echo go > go
	wait_start
	/usr/sbin/nsenter -t $CT -i /usr/sbin/ipcmk -M 4096 > ipcmk.out 2>&1 || fail "ipcmk: $(cat ipcmk.out)"
	/usr/sbin/nsenter -t $CT -i $IPCS -m -c > ipcs.m
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump with an owner the user namespace does not map succeeded"
	grep -q "^imgcr: pid $CT: its ipc namespace: shm segment [0-9]*: its owner uid 0 is not mapped in its user namespace" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err) $(tr '\n' '|' < ipcs.m)"
	refused_left_running
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

nested() {
	ct_start ct.pid --user --map-root-user --pid -- /usr/sbin/unshare --user --map-root-user counter 600 >> out 2> unshare.err ||
		fail "ct_start: $(cat unshare.err)"
	CT=$(cat ct.pid)
	track $CT
	for i in $(seq 1 100); do
		[ "$(readlink /proc/$CT/exe)" != /usr/sbin/unshare ] && break
		usleep 50000
	done
	wait_line out "^3 " 20 || fail "counter did not start: $(cat unshare.err)"
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a nested user namespace succeeded"
	grep -q "^imgcr: pid $CT: its user namespace user:\[[0-9]*\] is not a child of imgcr's" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	c=$(wc -l < out)
	wait_line out "^$((c + 2)) " 10 || fail "the counter stopped after the failed dump"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

owner() {
	# as uid 1000 (ct_start runs unshare as root); /tmp/... is root's 0700: out1 is opened by root
	runas 1000 1000 /usr/sbin/unshare --fork --user --map-root-user --pid counter 600 > out1 2> unshare1.err &
	p=$!
	track $p
	for i in $(seq 1 100); do
		CT=$(cat /proc/$p/task/$p/children 2>/dev/null)
		CT=${CT%% *}
		[ -n "$CT" ] && [ "$(readlink /proc/$CT/exe)" != /usr/sbin/unshare ] && break
		usleep 50000
	done
	[ -n "$CT" ] || fail "no container under unshare: $(cat unshare1.err)"
	track $CT
	wait_line out1 "^3 " 20 || fail "counter did not start: $(cat unshare1.err)"
	timeout -s KILL 60 imgcr dump -t $CT -D d > dump.out 2> dump.err && fail "dump of a user namespace owned by uid 1000 succeeded"
	grep -q "^imgcr: pid $CT: its user namespace user:\[[0-9]*\] is owned by uid 1000: not supported yet" dump.err ||
		fail "message: $(tr '\n' '|' < dump.err)"
	[ -e d/tree ] && fail "a tree file was written"
	c=$(wc -l < out1)
	wait_line out1 "^$((c + 2)) " 10 || fail "the counter stopped after the failed dump"
	pass "$(head -n 1 dump.err | cut -c1-160)"
}

sub() {
	mkdir "$1" && cd "$1" || fail "mkdir $1"
	$2
}
subtest ct_userns "sub root rootmap"
subtest ct_userns-maps "sub maps maps"
subtest ct_userns-loginuid "sub loginuid loginuid"
subtest ct_userns-ptrace "sub ptrace ptrace_h1"
subtest ct_userns-maps-ipc "sub maps_ipc maps_ipc"
subtest ct_userns-maps-net "sub maps_net maps_net"
subtest ct_userns-maps-netsk "sub maps_netsk maps_netsk"
# imgcr's own refusals (what it reads of the namespaces, not what the
# kernel does with them) run on one kernel each, spread over the four, to
# keep the suite's length
case "$(uname -r)" in
6.1.*)
	subtest ct_userns-unmapped "sub unmapped unmapped"
	subtest ct_userns-rootfile "sub rootfile rootfile"
	;;
6.12.*+deb12-amd64)
	subtest ct_userns-maps-ipcown "sub maps_ipcown maps_ipcown"
	subtest ct_userns-rootcwd "sub rootcwd rootcwd"
	;;
6.12.*+deb13-amd64)
	subtest ct_userns-maps-netsk-refuse "sub maps_netsk_refuse maps_netsk_refuse"
	subtest ct_userns-nested "sub nested nested"
	;;
*)
	subtest ct_userns-owner "sub owner owner"
	subtest ct_userns-unmapped "sub unmapped unmapped"
	;;
esac
