#!/bin/bash
# Host check, no guest: the mount namespace kind (userspace/mount.c).  A
# "container" (util-linux unshare: new mount and PID namespaces,
# pivot_root into a tmpfs root holding busybox) with proc, sysfs, a devpts
# instance, tmpfs mounts with files (one nosuid,nodev,noexec, one read-only
# as runc masks directories), a read-only
# bind of a host directory and a bind of a file is dumped by test/unit/
# nsdrv.c from the host; the mounts are rebuilt in new namespaces and a
# shell there prints its mountinfo and reads the files back.  Mount IDs,
# devices and peer group numbers aside, the mount tables must be equal
# and the files the same.  Refusals are checked too.  Runs as root.
# Prints one "RESULT mount-NAME PASS|FAIL" line each.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "RESULT mount FAIL needs root (namespaces and mounts)"
	exit 1
fi
NAME=mount
. "$REPO/test/unit/nsdrv.bash"
[ -x /bin/busybox ] || { res busybox FAIL "no /bin/busybox (busybox-static)"; exit 1; }

# mountinfo without what a restore renews: ids, devices, peer group numbers
norm() {
	awk '{ s = $4 " " $5 " " $6; for (i = 7; $i != "-"; i++) { o = $i; sub(/:[0-9]+/, "", o); s = s " " o }
	       print s " - " $(i + 1) " " $(i + 2) " " $(i + 3) }' "$1" | sort
}

# the container: started, it writes "ready" and sleeps
mkdir -p "$tmp/root" "$tmp/hostdir" "$tmp/img"
echo "from the host" > "$tmp/hostdir/hello"
cat > "$tmp/ct.sh" <<CT
set -e
R=$tmp/root
mount -t tmpfs -o size=16m,mode=755 ctroot \$R
mkdir -p \$R/bin \$R/proc \$R/data \$R/host \$R/dev \$R/sys \$R/etc \$R/old
cp /bin/busybox \$R/bin/busybox
for a in sh sleep cat ls stat echo umount rmdir mkdir cp; do ln -s busybox \$R/bin/\$a; done
mount -t proc proc \$R/proc
mount -t tmpfs -o size=4m,mode=1777 data \$R/data
echo "data file" > \$R/data/f; mkdir \$R/data/sub; echo deep > \$R/data/sub/g
# a Kubernetes configMap-like name: a mount root of "/..cm" (not "..")
mkdir \$R/data/..cm \$R/cm; echo configmap > \$R/data/..cm/k
mount --bind \$R/data/..cm \$R/cm
truncate -s 100M \$R/data/sparse
echo hostname-file > \$R/etc/hostname
mount --bind \$R/data/f \$R/etc/hostname
mount --bind $tmp/hostdir \$R/host
mount -o remount,bind,ro \$R/host
mount -t tmpfs -o mode=755 dev \$R/dev
mkdir \$R/dev/pts \$R/dev/shm
echo hidden > \$R/dev/shm/under-the-mount
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts \$R/dev/pts
mount -t tmpfs -o nosuid,nodev,noexec shm \$R/dev/shm
echo shm-file > \$R/dev/shm/s
mount -t sysfs -o ro sysfs \$R/sys
mkdir \$R/rotmp
mount -t tmpfs -o size=1m rotmp \$R/rotmp
echo ro-file > \$R/rotmp/f
mount -o remount,ro \$R/rotmp
cd \$R
pivot_root . old
umount -l /old
rmdir /old
echo ready > /data/ready
exec sleep 1000
CT
unshare -m -p -f --propagation private sh "$tmp/ct.sh" > "$tmp/ct.out" 2>&1 &
u=$!
for i in $(seq 1 100); do
	ct=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
	[ -n "$ct" ] && [ "$(cat /proc/$ct/root/data/ready 2>/dev/null)" = ready ] && break
	sleep 0.1
done
if [ -z "$ct" ] || [ "$(cat /proc/$ct/root/data/ready 2>/dev/null)" != ready ]; then
	res container FAIL "the container did not start: $(cat "$tmp/ct.out")"
	exit 1
fi
norm /proc/$ct/mountinfo > "$tmp/before"

if out=$("$drv" dump mnt "$ct" "$tmp/img" 2>&1); then
	res dump PASS "$(grep -c '^mnt ' "$tmp/img/tree") mounts, $(ls "$tmp/img" | grep -c tmpfs-) tmpfs images"
else
	res dump FAIL "$out"
	exit 1
fi
grep -q 'how=ext.*ext=.*hostdir' "$tmp/img/tree" && res ext-found PASS ||
	res ext-found FAIL "$(grep mnt "$tmp/img/tree")"
kill -9 "$ct"; ct=
wait 2>/dev/null

if "$drv" restore mnt "$tmp/img" /bin/sh -c 'cat /proc/self/mountinfo > /data/mi
	cat /data/f /data/sub/g /etc/hostname /host/hello /dev/shm/s /rotmp/f /cm/k
	stat -c "%s %b" /data/sparse; ls /dev/pts/ptmx >/dev/null && echo ptmx
	(echo x > /host/x) 2>/dev/null && echo host-writable
	cp /data/mi /proc/self/fd/3' 3> "$tmp/after.raw" > "$tmp/out" 2>&1; then
	res restore PASS
else
	res restore FAIL "$(cat "$tmp/out")"
fi
norm "$tmp/after.raw" > "$tmp/after"
if [ -s "$tmp/after" ] && diff "$tmp/before" "$tmp/after" > "$tmp/diff"; then
	res same-mounts PASS "$(wc -l < "$tmp/before") mounts"
else
	res same-mounts FAIL "$(cat "$tmp/diff")"
fi
want="data file
deep
data file
from the host
shm-file
ro-file
configmap
104857600 0
ptmx"
if [ "$(cat "$tmp/out")" = "$want" ]; then
	res same-files PASS
else
	res same-files FAIL "$(cat "$tmp/out")"
fi
# the file hidden under /dev/shm came back too (open_tree saw it)
# (checked through a second restore that unmounts /dev/shm)
if "$drv" restore mnt "$tmp/img" /bin/sh -c 'umount /dev/shm && cat /dev/shm/under-the-mount' > "$tmp/out2" 2>&1 &&
   [ "$(cat "$tmp/out2")" = hidden ]; then
	res hidden-file PASS
else
	res hidden-file FAIL "$(cat "$tmp/out2")"
fi
ls -d /tmp/.imgcr-yard-* > /dev/null 2>&1 && res yard-removed FAIL "$(ls -d /tmp/.imgcr-yard-*)" ||
	res yard-removed PASS

# a second restore of the same DIR while the first one builds its mounts
# (its yard exists): refused, and the first one's yard left in place
yard=/tmp/.imgcr-yard-$(stat -c %d-%i "$tmp/img")
mkdir -m 0700 "$yard"
if out=$("$drv" restore mnt "$tmp/img" /bin/true 2>&1); then
	res yard-busy FAIL "restored"
elif [ ! -d "$yard" ]; then
	res yard-busy FAIL "the other restore's yard was removed: $out"
else
	res yard-busy PASS "$out"
fi
rmdir "$yard"

# refusals: a file system imgcr cannot reach, two mounts on one place
refuse() {	# NAME EXPECTED-TEXT SETUP (run in the container's root before pivot_root)
	local d=$tmp/r-$1 u c= i
	mkdir -p "$d/root" "$d/img"
	cat > "$d/ct.sh" <<CT
set -e
mount -t tmpfs r $d/root
mkdir $d/root/bin $d/root/old
cp /bin/busybox $d/root/bin/busybox
ln -s busybox $d/root/bin/sleep; ln -s busybox $d/root/bin/umount
cd $d/root
$3
pivot_root . old
umount -l /old
echo ready > /ready
exec sleep 1000
CT
	unshare -m -p -f --propagation private sh "$d/ct.sh" > "$d/out" 2>&1 &
	u=$!
	for i in $(seq 1 100); do
		c=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
		[ -n "$c" ] && [ -e "/proc/$c/root/ready" ] && break
		sleep 0.1
	done
	if [ -z "$c" ] || [ ! -e "/proc/$c/root/ready" ]; then
		res "refuse-$1" FAIL "the container did not start: $(cat "$d/out")"
	elif out=$("$drv" dump mnt "$c" "$d/img" 2>&1); then
		res "refuse-$1" FAIL "dumped"
	else
		case "$out" in *"$2"*) res "refuse-$1" PASS "$out" ;; *) res "refuse-$1" FAIL "$out" ;; esac
	fi
	[ -n "$c" ] && kill -9 "$c" 2>/dev/null
	wait 2>/dev/null
}
refuse overmount "two mounts on /om" "mkdir om; mount -t tmpfs a om; mount -t tmpfs b om"
refuse ramfs "mount at /rf: a ramfs file system" "mkdir rf; mount -t ramfs r rf"
refuse peers "are peers" "mkdir p q; mount -t tmpfs p p; mount --make-shared p; mount --bind p q"
refuse big-tmpfs "more than" "mkdir big; mount -t tmpfs big big; head -c 70000000 /dev/urandom > big/x"
exit $((fails > 0))
