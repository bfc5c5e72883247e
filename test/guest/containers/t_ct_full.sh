#!/bin/sh
# A whole container: util-linux unshare --fork --pid --mount --uts --ipc
# --net --cgroup, pivot_root into a tmpfs root (busybox, ctwork) with proc,
# sysfs, a devpts instance, /dev/shm, a tmpfs /data with files, a
# writable and a read-only bind of host directories; its own host name, lo with an extra
# address, a veth to the host with addresses both sides and a route,
# changed network sysctls, an nftables table; SysV shm, semaphores and a
# message queue; in cgroup /ct (memory.max, pids.max; the cgroup namespace's
# root), pid 1 in /ct/init, its child in /ct/sub.  Dumped from the host, killed, restored with --detach.
#   ct_full           inside: ctwork's verdict (pid 1, host name, clocks;
#                     its child kept its pid) and its ticks going on in
#                     /host/out (a bind of the host's /hostdir); the container's files, mounts (mountinfo
#                     equal but for IDs, devices and peer groups), devices,
#                     addresses, routes, sysctls, ruleset, IPC objects and
#                     cgroups equal to the dump's, seen from outside
#                     through nsenter; the host reaches it over the veth.
#   ct_full-refuse    a container with a ramfs mount: refused, naming it;
#                     the container keeps running.
# timeout: 500
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

if [ "${1:-}" != inner ]; then
	ct_cgroup2 || { T=ct_full; fail "cgroup2: $(ct_cgroup2 2>&1)"; }
	ct_pivotable sh "$0" inner
	exit $?
fi
ct_pivot_check || { T=ct_full; fail "$(ct_pivot_check 2>&1)"; }
# iproute2's ip and util-linux's nsenter by their paths (busybox's sh runs
# its own applets first, whatever PATH says; they know no veth, no -C)
IP=/usr/sbin/ip
NSENTER=/usr/sbin/nsenter

# view PID: what the container looks like, less what a restore renews
view() {
	N="$NSENTER -t $1"
	$N -u hostname
	awk '{ s = $4 " " $5 " " $6; for (i = 7; $i != "-"; i++) { o = $i; sub(/:[0-9]+/, "", o); s = s " " o }
	       print s " - " $(i + 1) " " $(i + 2) " " $(i + 3) }' /proc/$1/mountinfo | sort
	R=/proc/$1/root
	(cd $R && ls -la data ro dev/shm | grep -v "^total")
	cat $R/data/file $R/ro/hello
	$N -n $IP -o link | sed "s/@if[0-9]*//; s/ qdisc [^ ]*//; s/ state [A-Z]*//; s/ link-netnsid [0-9]*//; s/ qlen [0-9]*//"
	$N -n $IP -o addr | sed "s/valid_lft.*//"
	$N -n $IP route | sort
	$N -n cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/core/somaxconn
	$N -n /usr/sbin/nft list ruleset | sed "s/packets [0-9]* bytes [0-9]*/packets N bytes N/"
	$N -i /usr/sbin/ipcs | grep -v "^$"
	cat /proc/$1/cgroup /proc/$(child_of $1)/cgroup
	$N -C cat /proc/$1/cgroup /proc/$(child_of $1)/cgroup 2>&1
	cat /sys/fs/cgroup/ct/memory.max /sys/fs/cgroup/ct/pids.max /sys/fs/cgroup/ct/sub/pids.max \
		/sys/fs/cgroup/ct/cgroup.subtree_control
}

start() {	# the container: CT = the host pid of its pid 1
	rm -rf /ctsrc && mkdir -p /ctsrc/bin /hostdir /hostro && echo "from the host" > /hostro/hello && rm -f /hostdir/out
	cp /bin/busybox /imgcr/bin/ctwork /ctsrc/bin/
	mkdir -p /sys/fs/cgroup/ct || fail "cannot make cgroup /ct"
	cat > ct.sh <<'CT'
set -e
export PATH=/usr/sbin:$PATH
mount --make-rprivate /
mkdir -p /ctr && mount -t tmpfs -o size=32m,mode=755 ctroot /ctr
mkdir -p /ctr/bin /ctr/proc /ctr/dev /ctr/sys /ctr/data /ctr/host /ctr/ro /ctr/old /ctr/tmp
cp /ctsrc/bin/* /ctr/bin/
for a in sh sleep cat ls echo hostname ip; do ln -s busybox /ctr/bin/$a; done
mount -t proc proc /ctr/proc
mount -t tmpfs -o mode=755 dev /ctr/dev
mkdir /ctr/dev/pts /ctr/dev/shm
mknod -m 666 /ctr/dev/null c 1 3
mount -t devpts -o newinstance,ptmxmode=0666 devpts /ctr/dev/pts
mount -t tmpfs -o nosuid,nodev shm /ctr/dev/shm
echo shm-file > /ctr/dev/shm/s
mount -t sysfs -o ro sysfs /ctr/sys
mount -t tmpfs -o size=4m data /ctr/data
echo "data file" > /ctr/data/file
mount --bind /hostdir /ctr/host
mount --bind /hostro /ctr/ro
mount -o remount,bind,ro /ctr/ro
hostname box
ip link set lo up
ip addr add 10.77.0.1/24 dev lo
echo 1 > /proc/sys/net/ipv4/ip_forward
echo 99 > /proc/sys/net/core/somaxconn
nft add table inet t
nft add chain inet t c '{ type filter hook input priority 0; }'
nft add rule inet t c ip saddr 10.9.0.1 counter accept
ipcmk -M 8192 > /dev/null
ipcmk -S 3 > /dev/null
ipcmk -Q > /dev/null
cd /ctr
pivot_root . old
umount -l /old
rmdir /old
exec /bin/ctwork box 0 0 < /dev/null > /host/out 2>&1
CT
	sh -c 'echo $$ > /sys/fs/cgroup/ct/cgroup.procs &&
		exec /usr/sbin/unshare --fork --pid --mount --uts --ipc --net --cgroup sh ct.sh' > unshare.err 2>&1 &
	u=$!
	for i in $(seq 1 200); do
		CT=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
		[ -n "$CT" ] && grep -q '^tick 10 ' /hostdir/out 2>/dev/null && break
		usleep 100000
	done
	[ -n "$CT" ] && grep -q '^tick 10 ' /hostdir/out 2>/dev/null ||
		fail "the container did not start: $(cat unshare.err)"
	track $CT
	# pid 1 into /ct/init, its child into /ct/sub (a cgroup with
	# controllers for its children holds no task), limits; the veth
	CH=$(child_of $CT)
	G=/sys/fs/cgroup/ct
	mkdir $G/init $G/sub && echo $u > /sys/fs/cgroup/cgroup.procs &&
		echo $CT > $G/init/cgroup.procs && echo $CH > $G/sub/cgroup.procs &&
		echo "+memory +pids" > $G/cgroup.subtree_control && echo 64M > $G/memory.max &&
		echo 40 > $G/pids.max && echo 7 > $G/sub/pids.max ||
		fail "cannot set up the cgroups under /ct: $(cat $G/cgroup.procs | tr '\n' ' ')"
	{ $IP link add vh0 type veth peer name ve0 netns $CT &&
		$IP addr add 10.9.0.1/24 dev vh0 && $IP link set vh0 up &&
		$NSENTER -t $CT -n $IP addr add 10.9.0.2/24 dev ve0 &&
		$NSENTER -t $CT -n $IP link set ve0 up &&
		$NSENTER -t $CT -n $IP route add 10.10.0.0/16 via 10.9.0.1; } > veth.err 2>&1 ||
		fail "cannot make the veth: $(tr '\n' '|' < veth.err)"
	sleep 3	# IPv6 duplicate address detection
	ping -c 1 -W 2 10.9.0.2 > /dev/null 2>&1 || fail "no ping before the dump"
}

subtest_full() {
	T=ct_full
	start
	view $CT > view.before
	timeout -s KILL 120 imgcr dump -v4 -t $CT -D d > dump.out 2> dump.err ||
		fail "dump: $(tail -n 8 dump.err | tr '\n' '|')"
	wait_gone $CT 20 || fail "the container outlived its dump"
	i=0
	while $IP link show vh0 > /dev/null 2>&1; do	# the kernel removes it a little later
		i=$((i + 1))
		[ $i -lt 100 ] || fail "vh0 outlived the container by 10 s"
		usleep 100000
	done
	rmdir /sys/fs/cgroup/ct/sub /sys/fs/cgroup/ct/init /sys/fs/cgroup/ct 2>/dev/null
	# the container's /dev/null (fd 0) is on its tmpfs /dev, made again:
	# a new inode number, as for every tmpfs file (docs/containers.md)
	cp "$IMGCR_STATE_EXPECTED" expected
	echo 'fd */0 fdinfo.ino * -> *  # /dev/null on the container'"'"'s restored tmpfs /dev' >> expected
	IMGCR_STATE_EXPECTED=$PWD/expected \
	timeout -s KILL 120 imgcr restore -v4 -D d --detach --pidfile "$PWD/rp" > restore.out 2> restore.err ||
		fail "restore: $(tail -n 8 restore.err | tr '\n' '|')"
	NEW=$(cat rp)
	track $NEW
	n=$(grep -c '^tick ' /hostdir/out)
	i=0
	while [ "$(grep -c '^tick ' /hostdir/out)" -lt $((n + 3)) ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "ctwork did not go on: $(tail -n 2 /hostdir/out | tr '\n' '|')"
		usleep 50000
	done
	sleep 3	# the host end's duplicate address detection
	view $NEW > view.after
	diff view.before view.after > view.diff || fail "differs: $(head -c 1500 view.diff | tr '\n' '|')"
	ping -c 1 -W 2 10.9.0.2 > /dev/null 2>&1 || fail "no ping after the restore"
	kill -USR1 $NEW
	wait_gone $NEW 20 || fail "ctwork did not end on SIGUSR1"
	grep -q '^ctwork PASS' /hostdir/out ||
		fail "ctwork's verdict: $(grep -v '^tick' /hostdir/out | tr '\n' '|')"
	pass "$(wc -l < view.before) lines of state equal"
}

subtest_full
