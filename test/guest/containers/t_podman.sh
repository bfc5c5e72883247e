#!/bin/sh
# podman (Debian 12's 4.3.1, as root, with conmon and runc 1.1.5) checkpoints
# and restores a container with imgcr-criu as its CRIU, found as "criu"
# first on PATH (docs/runtimes.md): no systemd, cgroupfs manager, events
# to a file, storage driver vfs, --network none; the image a tar of the
# guest's static busybox and the test's counter (podman import, no
# registry); the counter the container's process (pid 1), its output in
# a k8s-file log.
#   podman         podman container checkpoint (runc checkpoint: the
#                  container stopped, "exited" for podman), podman
#                  container restore: podman ps says running, the numbers
#                  go on without gap or repeat, all printed by pid 1 in
#                  the container's PID namespace (NSpid ends in 1)
#                  (its /dev/null stdin, podman's seccomp profile kept)
#   podman-export  podman container checkpoint --export=F (the archive
#                  holds the images, inventory.img, config.dump, spec.dump),
#                  podman rm, podman container restore --import=F: refused
#                  by imgcr-criu (the import's root is a new directory, a
#                  new vfs layer: imgcr restores into the dumped root
#                  only), nothing restored, the count stopped
# Skipped (PASS "not run: ...") if the guest has no podman (the packages
# are not in the host's apt cache, or the test was not selected: run.sh
# adds podman to the initramfs only for it).
# timeout: 200
. /imgcr/guest/lib.sh
. /imgcr/guest/ctlib.sh
require_modules

if [ "${1:-}" != inner ]; then
	[ -x /usr/bin/podman ] && [ -x /usr/bin/conmon ] && [ -x /usr/sbin/runc ] ||
		{ pass "not run: no podman, conmon or runc in the guest (packages missing from the host's apt cache)"; exit 0; }
	ct_cgroup2 || fail "cgroup2: $(ct_cgroup2 2>&1)"
	ct_pivotable sh "$0" inner "$(pwd)"
	exit $?
fi
cd "$2" || fail "no test directory $2"
ct_pivot_check || fail "$(ct_pivot_check 2>&1)"
W=$(pwd)
# podman's locks are in POSIX shm: a /dev/shm (this mount namespace's)
grep -q ' /dev/shm ' /proc/mounts || { mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm; } ||
	fail "cannot mount /dev/shm"

# "criu" first on PATH: a directory holding only the link (docs/runtimes.md);
# here a script in its place that gives imgcr-criu the state check's
# variables (podman runs runc checkpoint with PATH and XDG_RUNTIME_DIR
# alone, conmon, which runs runc restore, with PATH and a few more) and
# execs it
mkdir -p $W/criu-bin $W/pm-tmp
# the container's stdin, podman's /dev/null, which runc replaces with the
# container's own (its reOpenDevNull): a node of the container's /dev
# tmpfs, made again by the restore (a new inode of the same device,
# checked below)
cp "$IMGCR_STATE_EXPECTED" expected
echo 'fd */0 fdinfo.ino * -> *  # the container'"'"'s /dev/null (runc'"'"'s, on its stdin): a node of its /dev tmpfs, made again by the restore (a new inode of the same device, checked by t_podman)' >> expected
cat > $W/criu-bin/criu << EOF
#!/bin/sh
export IMGCR_STATE_HOOK='${IMGCR_STATE_HOOK:-}' IMGCR_STATE_EXPECTED='$W/expected'
export IMGCR_STATE_LOG='${IMGCR_STATE_LOG:-}' IMGCR_JSON_DIR='${IMGCR_JSON_DIR:-}'
exec /imgcr/bin/imgcr-criu "\$@"
EOF
chmod 755 $W/criu-bin/criu
export PATH=$W/criu-bin:/usr/sbin:/usr/bin:$PATH
cat > containers.conf << EOF
[containers]
netns = "none"
log_driver = "k8s-file"
[network]
network_backend = "cni"
network_config_dir = "$W/cni"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$W/events.log"
runtime = "runc"
tmp_dir = "$W/pm-tmp"
image_copy_tmp_dir = "$W/pm-tmp"
[engine.runtimes]
runc = [ "/usr/sbin/runc" ]
EOF
cat > storage.conf << EOF
[storage]
driver = "vfs"
runroot = "$W/pm-run"
graphroot = "$W/pm-root"
EOF
export CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf TMPDIR=$W/pm-tmp
P="timeout -s KILL 120 /usr/bin/podman"
# whatever a failure leaves: the containers (conmon, the counter) and their mounts
trap 'cleanup; $P rm -f -a -t 0 > /dev/null 2>&1' EXIT

$P info > info.out 2>&1 || fail "podman info: $(tail -c 600 info.out | tr '\n' '|')"
info "podman $($P version --format '{{.Client.Version}}' 2>&1), runtime $(grep -A 8 'ociRuntime:' info.out | sed -n 's/^ *path: *//p' | head -n 1)"

# the image: busybox and the counter
mkdir -p rootfs/bin && cp /bin/busybox rootfs/bin/ && ln -s busybox rootfs/bin/sh &&
	cp /imgcr/bin/counter rootfs/ || fail "cannot make the rootfs"
tar -C rootfs -cf rootfs.tar . || fail "cannot make the rootfs tar"
$P import rootfs.tar localhost/imgcr-bb > import.out 2>&1 || fail "podman import: $(tail -c 600 import.out | tr '\n' '|')"

# the container's stdout in the k8s-file log: "TIME stdout F N PID" ->
# "N PID" (runc restore's stdio are the container's: the state check's
# notes, on stderr, are there too)
nums() { sed -n 's/^[^ ]* stdout [FP] //p' "$1"; }
wait_num() {	# LOG N SECONDS
	_i=0
	while [ $_i -lt $(($3 * 10)) ]; do
		nums "$1" | grep -q "^$2 " && return 0
		usleep 100000
		_i=$((_i + 1))
	done
	return 1
}
status_of() { $P inspect --format '{{.State.Status}}' "$1" 2>&1; }
pid_of() { $P inspect --format '{{.State.Pid}}' "$1" 2>/dev/null; }
# the numbers so far: 1..N once each and in order, all by pid 1
numbers_ok() {
	n=0
	nums "$1" > nums.out
	while read -r num p rest; do
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "line $n is '$num $p' (gap or repeat)"
		[ "$p" = 1 ] || fail "line $n printed by pid $p, expected 1 (the container's init)"
	done < nums.out
	[ "$n" -ge "$2" ] || fail "got $n numbers, expected at least $2"
}
logs() { tr '\n' '|' < "$1" | tail -c 400; }
crlog() {	# the imgcr-criu log runc names
	for f in $(find $W/pm-root -name "$1" 2>/dev/null); do
		grep -i 'error\|refus\|not supp' "$f" | tail -n 3
	done | tr '\n' '|'
}

# running CT: podman ps lists it, running, pid 1 in its own PID namespace
running_ok() {
	[ "$(status_of "$1")" = running ] || fail "podman inspect $1: $(status_of "$1")"
	$P ps --format '{{.Names}} {{.Status}}' > ps.out 2>&1 || fail "podman ps: $(logs ps.out)"
	grep -q "^$1 Up" ps.out || fail "podman ps does not list $1 as up: $(logs ps.out)"
	ct=$(pid_of "$1")
	[ -n "$ct" ] && [ "$ct" != 0 ] && [ -d /proc/$ct ] || fail "podman inspect $1: no live pid ($ct)"
	track $ct
	nspid=$(sed -n 's/^NSpid:[[:space:]]*//p' /proc/$ct/status)
	[ "${nspid##*[[:space:]]}" = 1 ] || fail "NSpid of $ct: $nspid"
	[ "$(readlink /proc/$ct/ns/pid)" != "$(readlink /proc/1/ns/pid)" ] || fail "$1 is in the host's PID namespace"
	[ "$(stat -L -c %t:%T /proc/$ct/fd/0)" = 1:3 ] || fail "stdin of $1: $(readlink /proc/$ct/fd/0) $(stat -L -c %t:%T /proc/$ct/fd/0)"
	m0=$(sed -n 's/^mnt_id:[[:space:]]*//p' /proc/$ct/fdinfo/0)
	grep -q "^$m0 .* /dev " /proc/$ct/mountinfo || fail "stdin of $1 not on its /dev (mount $m0)"
	# podman's seccomp profile (containers-common's seccomp.json)
	grep -q '^Seccomp:[[:space:]]*2$' /proc/$ct/status || fail "pid $ct: not under a seccomp filter: $(grep '^Seccomp' /proc/$ct/status)"
}

T=podman
LOG=$W/pmc.log
$P run -d --name pmc --log-opt path=$LOG localhost/imgcr-bb /counter 100000 > run.out 2>&1 ||
	fail "podman run: $(logs run.out)"
wait_num $LOG 5 60 || fail "the container did not count to 5: $(logs $LOG) $(logs run.out)"
running_ok pmc
old=$ct
t0=$(nowms)
$P container checkpoint pmc > ck.out 2>&1 || fail "podman container checkpoint: $(logs ck.out) dump.log: $(crlog dump.log)"
t1=$(nowms)
wait_gone $old 20 || fail "the container outlived its checkpoint"
[ "$(status_of pmc)" = exited ] || fail "podman inspect pmc after the checkpoint: $(status_of pmc)"
last=$(nums $LOG | tail -n 1 | cut -d' ' -f1)
info "checkpointed at $last in $((t1 - t0)) ms"
t0=$(nowms)
$P container restore pmc > rs.out 2>&1 || fail "podman container restore: $(logs rs.out) restore.log: $(crlog restore.log)"
t1=$(nowms)
wait_num $LOG $((last + 3)) 60 || fail "no count after the restore: $(nums $LOG | tail -n 2 | tr '\n' '|')"
running_ok pmc
[ "$ct" != "$old" ] || info "restored with the same host pid $ct"
numbers_ok $LOG $((last + 3))
pass "checkpointed at $last, restored in $((t1 - t0)) ms as pid $ct (1 inside), counting on"

T=podman-export
# podman's checkpoint archive: the images (and imgcr-criu's inventory.img),
# podman's config.dump and spec.dump, the rootfs changes.  Its import
# makes the container again from the image with a new root directory (a
# new vfs layer): imgcr-criu refuses to restore into another root than
# the one dumped (docs/runtimes.md), before anything is made
$P container checkpoint --compress=none --export=$W/pmc.tar pmc > ck2.out 2>&1 ||
	fail "podman container checkpoint --export: $(logs ck2.out) dump.log: $(crlog dump.log)"
wait_gone $ct 20 || fail "the container outlived its checkpoint"
last=$(nums $LOG | tail -n 1 | cut -d' ' -f1)
tar -tf pmc.tar > tar.out 2>&1 || fail "the archive: $(logs tar.out)"
for f in checkpoint/tree checkpoint/inventory.img config.dump spec.dump; do
	grep -Eq "^(\./)?$f\$" tar.out || fail "no $f in the archive: $(logs tar.out)"
done
$P rm pmc > rm.out 2>&1 || fail "podman rm: $(logs rm.out)"
$P container restore --import=$W/pmc.tar > rs2.out 2>&1 &&
	fail "podman container restore --import succeeded: imgcr-criu restores into the dumped root only (update t_podman and docs/runtimes.md)"
why=$(crlog restore.log)
case "$why" in
*"restoring into another root is not supported"*) ;;
*) fail "podman container restore --import failed for another reason: $(logs rs2.out) restore.log: $why" ;;
esac
grep -q 'criu failed' rs2.out || fail "podman said: $(logs rs2.out)"
# nothing restored: no counter, the count stopped where it was
sleep 1
nums $LOG | tail -n 1 | grep -q "^$last " || fail "the count went on after the refused import: $(nums $LOG | tail -n 1)"
for d in /proc/[0-9]*; do
	[ "$(cat $d/cmdline 2>/dev/null | tr '\0' ' ')" = "/counter 100000 " ] && fail "a counter runs after the refused import: ${d#/proc/}"
done
[ "$(status_of pmc)" != running ] || fail "podman says the refused import runs"
$P rm -f pmc > /dev/null 2>&1
pass "exported at $last ($(wc -l < tar.out) files); the import refused: $(echo "$why" | sed 's/.*imgcr: //; s/|.*//' | cut -c1-160)"
exit 0
