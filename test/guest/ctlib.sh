# Helpers of the container tests (t_ct_*, t_criu_runc), sourced after
# lib.sh.  Each prints what failed and returns non-zero; the test decides
# whether that is its FAIL.

# ct_pivotable CMD...: run CMD in a mount namespace of its own whose / is
# a mount pivot_root(2) accepts.  The guest's root is the initramfs
# (rootfs), which cannot be pivoted away from; containers (and runc) made
# from CMD can.  The same files are seen at / as before.  Checked on 6.12
# (session 10 notes): rbind / elsewhere, move it onto /, chroot into it.
ct_pivotable() {
	/usr/sbin/unshare -m sh -c '
		mount --make-rprivate / &&
		mkdir -p /ct-root && mount --rbind / /ct-root && cd /ct-root &&
		mount --move . / || { echo "ct_pivotable: cannot move the root"; exit 1; }
		exec chroot . "$@"' ct_pivotable "$@"
}

# ct_pivot_check: 0 if pivot_root works in a new mount namespace made
# from here (run inside ct_pivotable), else a message and 1.
ct_pivot_check() {
	/usr/sbin/unshare -m sh -c 'mkdir -p /tmp/ctp && mount -t tmpfs ctp /tmp/ctp &&
		mkdir -p /tmp/ctp/old && cd /tmp/ctp && pivot_root . old' 2>/dev/null ||
		{ echo "ct_pivot_check: pivot_root fails here"; return 1; }
}

# ct_cgroup2: cgroup v2 mounted on /sys/fs/cgroup with the memory, pids
# and cpu controllers enabled for its children.
ct_cgroup2() {
	mkdir -p /sys/fs/cgroup
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts ||
		mount -t cgroup2 none /sys/fs/cgroup || { echo "ct_cgroup2: cannot mount cgroup2"; return 1; }
	echo "+memory +pids +cpu" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
		{ echo "ct_cgroup2: cannot enable memory, pids, cpu"; return 1; }
}

# ct_start OUT FLAGS... -- CMD...: run CMD as pid 1 of new namespaces made
# by util-linux unshare with FLAGS (e.g. --pid --uts --ipc --net --mount
# --time --user --map-root-user); --fork is added.  Prints the host pid of
# the container's pid 1 into OUT once it runs.
ct_start() {
	local out=$1 flags="" p i
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do flags="$flags $1"; shift; done
	[ "$1" = -- ] && shift
	# shellcheck disable=SC2086
	/usr/sbin/unshare --fork $flags "$@" &
	p=$!
	# unshare's child (the container's pid 1) is the one child of $p
	for i in $(seq 1 200); do
		c=$(cat /proc/$p/task/$p/children 2>/dev/null)
		c=${c%% *}
		if [ -n "$c" ]; then
			echo "$c" > "$out"
			return 0
		fi
		sleep 0.05
	done
	echo "ct_start: no container init under unshare pid $p"
	return 1
}

# ct_nsids PID: the inode numbers of PID's eight namespaces, one line
# "user=.. pid=.. uts=.. ipc=.. net=.. cgroup=.. time=.. mnt=..", to
# compare before and after (the restored ones must be new, the shape kept).
ct_nsids() {
	local n l out=""
	for n in user pid uts ipc net cgroup time mnt; do
		l=$(readlink /proc/$1/ns/$n 2>/dev/null) || l=none
		l=${l#*[}
		out="$out $n=${l%]}"
	done
	echo "${out# }"
}
