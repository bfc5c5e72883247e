#!/bin/bash
# test/run.sh -- the imgcr test suite.  Run as root: test/run.sh
#
#   --kernel K     only guest kernel K, or a space-separated list (default:
#                  all of test/kernels.sh: 6.1.0-57-amd64, 6.12.118+deb12-amd64,
#                  6.12.118+deb13-amd64, 7.2.13+deb14-amd64)
#   --only PATS    only the tests matching the comma-separated globs PATS:
#                  guest tests (names without t_ and .sh, e.g. --only
#                  'counter,err*'), the host test "packages" and the
#                  cross-kernel restores "xkernel" (--only 'xkernel*'; it
#                  adds the guest test xkernel_dump whose images it uses),
#                  the host unit tests of test/unit/ (--only docs)
#   --keep         keep build/logs even when everything passed
#   --fuzz N       the fuzz test executes N images (imgcr.fuzz=N on the guest
#                  command line; default: a CI round of at most 40 s); see test/fuzz.sh
#   --race S       the dump race stress t_dump_race runs S seconds
#                  (imgcr.race=S; default 10); see test/fuzz-long.sh
#
# For every kernel: DKMS build of the modules (dkms-build-K), a busybox
# initramfs with modules + test programs + test/guest, one QEMU (TCG) boot
# running the guest tests, dmesg check (dmesg-clean-K) and host-tool checks
# of a guest-made image (readelf-K, gdb-regs-K, gdb-bt-K).  The guests run
# two at a time (one vCPU each; IMGCR_PARALLEL=N for N).  Then the host test
# "packages" (test/lib-packages.sh: make deb, lintian, apt install with
# DKMS, a guest per kernel with the installed modules, purge; not with
# IMGCR_NO_DKMS=1).  The last line of output is "N passed, N failed"; the
# exit status is nonzero if anything failed.
#
# Cross-kernel restores ("xkernel", with two or more kernels): after those
# guests, every kernel K boots once more with the images t_xkernel_dump made
# on each other kernel J (counter, python3, vdsoclock), restores them and
# checks they go on: results xkernel/J->K/PROG and dmesg-clean-xkernel-K.
# IMGCR_XKERNEL_SELF=1 restores each kernel's own images too (J = K).
set -uo pipefail
. "$(dirname "$0")/lib-host.sh"
. "$(dirname "$0")/lib-packages.sh"

KERNELS=$ALL_KERNELS
ONLY="*"
KEEP=0
FUZZ=""
RACE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KERNELS=${2:?--kernel needs a value}; shift 2 ;;
	--only) ONLY=${2:?--only needs a value}; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--fuzz) FUZZ=${2:?--fuzz needs a value}; shift 2 ;;
	--race) RACE=${2:?--race needs a value}; shift 2 ;;
	-h | --help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
for k in $KERNELS; do kernel_ok "$k" || die "unsupported kernel $k (choose from: $ALL_KERNELS)"; done
case "$ONLY" in *[[:space:]]*) die "--only: use commas, not spaces" ;; esac
XK_SEL=$(xkernel_tests "$ONLY")
# The cross-kernel phase restores the images of the guest test xkernel_dump.
if [ -n "$XK_SEL" ] && ! grep -qx xkernel_dump <<< "$(guest_tests "$ONLY")"; then
	ONLY="$ONLY,xkernel_dump"
fi
GUEST_SEL=$(guest_tests "$ONLY")
HOST_SEL=$(host_tests "$ONLY")
UNIT_SEL=$(unit_tests "$ONLY")
[ -n "$GUEST_SEL$HOST_SEL$UNIT_SEL" ] || die "--only '$ONLY' matches no test in test/guest and no host test ($PKG_TESTS $XK_TESTS)"
if [ -n "$HOST_SEL" ] && [ "${IMGCR_NO_DKMS:-0}" = 1 ]; then
	[ -n "$GUEST_SEL" ] || die "--only '$ONLY' selects only the host test packages, which installs packages and uses DKMS: not with IMGCR_NO_DKMS=1"
	warn "IMGCR_NO_DKMS=1: the packages test (apt install, DKMS) is not run"
	HOST_SEL=""
fi

host_setup "$KERNELS"
rm -rf "$LOGS"
mkdir -p "$BUILD" "$LOGS"
: > "$RESULTS"

# Host unit tests first: seconds, no guest (test/unit/, `make check`).
for u in $UNIT_SEL; do
	say "unit test $u"
	run_unit "$u"
done

if [ -n "$GUEST_SEL" ]; then
	build_progs
	for k in $KERNELS; do
		build_modules "$k"
		make_initrd "$k" "$BUILD/initrd-$k.cpio.gz"
	done

	say "booting guests ($KERNELS); logs in $LOGS/<kernel>/"
	running=0
	for k in $KERNELS; do
		if [ "$running" -ge "${IMGCR_PARALLEL:-2}" ]; then
			wait -n
			running=$((running - 1))
		fi
		boot_guest "$k" "$BUILD/initrd-$k.cpio.gz" "$LOGS/$k" "imgcr.only=$ONLY${FUZZ:+ imgcr.fuzz=$FUZZ}${RACE:+ imgcr.race=$RACE}" &
		running=$((running + 1))
	done
	wait
fi

for k in $KERNELS; do
	[ -n "$GUEST_SEL" ] || break
	dir=$LOGS/$k
	parse_guest "$k" "$dir" "$ONLY"
	extract_files "$dir"
	[[ " $(guest_tests "$ONLY" | tr "\n" " ") " == *" counter "* ]] && check_image "$k" "$dir"
	[[ " $(guest_tests "$ONLY" | tr "\n" " ") " == *" threads_work "* ]] && check_threads_image "$k" "$dir"
	if [ -s "$dir/info.txt" ]; then
		echo "[$k] timings and notes:"
		sed "s/^INFO /    /" "$dir/info.txt"
	fi
done

# Cross-kernel restores: the images the guests above exported.
[ -n "$XK_SEL" ] && xkernel_phase "$KERNELS"

# After the guests: it replaces the harness's DKMS imgcr/0.1 with the
# package's and leaves DKMS without imgcr (see test/lib-packages.sh).
# The packages are Debian 12's: DKMS on this host builds for its kernels.
PKG_KERNELS=$(for k in $KERNELS; do [ "$(kernel_release "$k")" = bookworm ] && echo "$k"; done)
if [ -n "$HOST_SEL" ] && [ -n "$PKG_KERNELS" ]; then
	test_packages "$(echo $PKG_KERNELS)"
elif [ -n "$HOST_SEL" ]; then
	warn "the packages test runs for Debian 12's kernels: none selected"
fi

# The hint comes first: the last line must be the totals.
grep -q "^FAIL" "$RESULTS" && echo "(logs kept in $LOGS)"
if summary; then
	[ "$KEEP" = 1 ] || rm -rf "$LOGS"
	exit 0
fi
exit 1
