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
#                  podman rm, podman container restore --import=F: podman
#                  makes the container again with a new root directory (a
#                  new vfs layer) and new /etc/hosts... files; imgcr-criu
#                  restores with --root (and --external mnt[] for those):
#                  podman ps says it runs, the count goes on from where it
#                  stopped, by pid 1
#   podman-import-name  the same exported again, podman rm, restore
#                  --import --name pmc2 (a new container id): pmc2 runs
#                  and counts on
# Skipped (PASS "not run: ...") if the guest has no podman (the packages
# are not in the host's apt cache, or the test was not selected: run.sh
# adds podman to the initramfs only for it).
# timeout: 300
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
echo 'task * cgroup 0::/libpod_parent/libpod-* -> 0::/libpod_parent/libpod-*  # podman-import-name: imported under a new id, in the cgroup runc made for it (docs/runtimes.md, manage_cgroups)' >> expected
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
# after the line of LAST (or from the start, if the log has none):
# LAST+1.. once each and in order up to MIN at least, all by pid 1
numbers_after() {	# LOG LAST MIN
	nums "$1" | awk -v l="$2" '{ a[NR] = $0 } $1 == l { s = NR } END { for (i = s + 1; i <= NR; i++) print a[i] }' > nums.out
	n=$2
	while read -r num p rest; do
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "after $2, '$num $p' where $n was expected (gap or repeat)"
		[ "$p" = 1 ] || fail "$num printed by pid $p, expected 1 (the container's init)"
	done < nums.out
	[ "$n" -ge "$3" ] || fail "counted up to $n, expected at least $3"
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
# new vfs layer): imgcr-criu restores with --root, imgcr finds the
# container's files there by content (docs/runtimes.md)
export_rm() {	# CT ARCHIVE: checkpointed into ARCHIVE, then removed
	$P container checkpoint --compress=none --export=$2 $1 > ck2.out 2>&1 ||
		fail "podman container checkpoint --export: $(logs ck2.out) dump.log: $(crlog dump.log)"
	wait_gone $ct 20 || fail "the container outlived its checkpoint"
	last=$(nums $LOG | tail -n 1 | cut -d' ' -f1)
	tar -tf $2 > tar.out 2>&1 || fail "the archive: $(logs tar.out)"
	for f in checkpoint/tree checkpoint/inventory.img config.dump spec.dump; do
		grep -Eq "^(\./)?$f\$" tar.out || fail "no $f in the archive: $(logs tar.out)"
	done
	$P rm $1 > rm.out 2>&1 || fail "podman rm: $(logs rm.out)"
}
import_ok() {	# CT NAME-OPTION...: restored from pmc.tar as CT, counting on
	_ct=$1
	shift
	t0=$(nowms)
	$P container restore --import=$W/pmc.tar "$@" > rs2.out 2>&1 ||
		fail "podman container restore --import $*: $(logs rs2.out) restore.log: $(find $W/pm-root -name restore.log -newer pmc.tar -exec tail -n 12 {} + 2>/dev/null | cut -c1-200 | tr '\n' '|')"
	t1=$(nowms)
	# its log: the one of the dump, or the new container's own
	_log=$($P container inspect --format '{{.HostConfig.LogConfig.Path}}' $_ct 2>&1)
	[ -f "$_log" ] || fail "podman inspect $_ct: no log file ($_log); status $(status_of $_ct)"
	if [ "$_log" = "$LOG" ]; then
		wait_num $LOG $((last + 3)) 60 ||
			fail "no count after the import: $(nums $LOG | tail -n 2 | tr '\n' '|') status $(status_of $_ct)"
		numbers_ok $LOG $((last + 3))
	else
		# a new log (podman's own for the new container; an earlier
		# import's): it goes on from the number after the last one
		wait_num "$_log" $((last + 3)) 60 ||
			fail "no count after the import in $_log: $(logs "$_log") status $(status_of $_ct)"
		numbers_after "$_log" $last $((last + 3))
		LOG=$_log
	fi
	running_ok $_ct
}
export_rm pmc $W/pmc.tar
import_ok pmc
pass "exported at $last ($(wc -l < tar.out) files), imported in $((t1 - t0)) ms as pid $ct (1 inside), counting on"

T=podman-import-name
export_rm pmc $W/pmc.tar
import_ok pmc2 --name pmc2
$P ps -a --format '{{.Names}}' | grep -qx pmc && fail "podman lists pmc after the import as pmc2"
$P rm -f pmc2 > /dev/null 2>&1
pass "imported as pmc2 at $last in $((t1 - t0)) ms, counting on"
exit 0
