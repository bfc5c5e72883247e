#!/bin/bash
# test/demo.sh -- show imgcr doing its job.  Run as root: test/demo.sh
#
#   --kernel K   guest kernel (default 6.12.118+deb12-amd64)
#
# Builds the modules (DKMS) and the test programs, boots one QEMU guest and
# there: starts a counter, checkpoints it with "cat /proc/PID/dump >
# counter.img", kills it, restores it with "./counter.img" and explains the
# output.  Exit status 0 iff the restored counter finished correctly.
set -uo pipefail
. "$(dirname "$0")/lib-host.sh"

K=6.12.118+deb12-amd64
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) K=${2:?--kernel needs a value}; shift 2 ;;
	-h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
kernel_ok "$K" || die "unsupported kernel $K (choose from: $ALL_KERNELS)"

host_setup "$K"
RESULTS=$BUILD/demo-results.txt
LOGS=$BUILD/demo-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
: > "$RESULTS"
build_progs
build_modules "$K"
make_initrd "$K" "$BUILD/initrd-$K.cpio.gz"
say "booting the $K guest (TCG, takes a little while); console log: $LOGS/$K/console.log"
boot_guest "$K" "$BUILD/initrd-$K.cpio.gz" "$LOGS/$K" "imgcr.mode=demo"
echo
if grep -aq '^RESULT demo PASS' "$LOGS/$K/console.log"; then
	say "demo succeeded: the counter was checkpointed, killed and brought back from counter.img"
	exit 0
fi
say "demo FAILED: $(grep -a -m1 -E '^RESULT [^ ]+ FAIL' "$LOGS/$K/console.log" | cut -d' ' -f2-)"
exit 1
