#!/bin/bash
# test/fuzz-long.sh -- the long fuzz round outside CI (issue 25): at least
# 1 000 000 malformed images per kernel, with the kernel's memory checkers
# on (KFENCE, slub_debug=FZPU, page_poison=1, init_on_free=1 where the
# kernel has them; test/lib-host.sh checker_opts), one guest at a time so
# it does not starve other work of the host.  Run as root:
#   test/fuzz-long.sh [--images N] [--kernel "K1 K2"] [--race SECONDS]
#
#   --images N     images per kernel (default 1000000)
#   --kernel K     the kernels, space-separated (default: 6.12.118+deb12-amd64
#                  6.1.0-57-amd64)
#   --race S       also run the dump race stress (t_dump_race) for S seconds
#                  in the same guest (default 0: not)
#
# It is test/fuzz.sh N (the guest test t_fuzz with imgcr.fuzz=N: 2/3 of the
# variants from the single-threaded seed, 1/3 from the threaded one, as
# root and as uid 1000) plus t_checkers, with a guest deadline from the
# measured rate.  A report of any checker, an unexpected errno, a hang, an
# unkillable child or a kernel memory leak fails it as in CI.  Summary per
# kernel (images, images/s, refusals by errno and other outcomes per
# round, the dmesg verdict) in build/fuzz-long-<kernel>.txt and on stdout;
# the full logs stay in build/logs/<kernel>/.
set -uo pipefail
. "$(dirname "$0")/lib-host.sh"

N=1000000
KERNELS="6.12.118+deb12-amd64 6.1.0-57-amd64"
RACE=0
while [ $# -gt 0 ]; do
	case "$1" in
	--images) N=${2:?--images needs a value}; shift 2 ;;
	--kernel) KERNELS=${2:?--kernel needs a value}; shift 2 ;;
	--race) RACE=${2:?--race needs a value}; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
# Measured: 25 images/s with the checkers on a loaded host (docs/fuzzing.md),
# i.e. 1 000 000 images in ~11 h; the deadline allows 20/s, plus the race.
export IMGCR_GUEST_TIMEOUT=${IMGCR_GUEST_TIMEOUT:-$((1800 + N / 20 + RACE))}
export IMGCR_PARALLEL=1
only="checkers,fuzz"
[ "$RACE" -gt 0 ] && only="$only,dump_race"
mkdir -p "$BUILD"
rc=0
for k in $KERNELS; do
	t0=$(date +%s)
	say "[$k] fuzz round of $N images (deadline ${IMGCR_GUEST_TIMEOUT}s)"
	"$(dirname "$0")/run.sh" --kernel "$k" --only "$only" \
		--fuzz "$N" --race "$RACE" --keep > "$BUILD/fuzz-long-$k.run.log" 2>&1 || rc=1
	log=$LOGS/$k/console.log
	cp -r "$LOGS/$k" "$BUILD/fuzz-long-logs-$k" 2>/dev/null
	{
		echo "kernel $k, $N images asked, $(( $(date +%s) - t0 )) s wall clock (with boot and build)"
		echo "command: test/fuzz-long.sh --images $N --kernel $k$([ "$RACE" -gt 0 ] && echo " --race $RACE")"
		echo "boot options: $(checker_opts "$k")"
		grep -a '^INFO checkers: ' "$log" | sed 's/^INFO checkers: /checker: /'
		grep -a '^INFO fuzz: fuzz count run' "$log" | sed 's/^INFO fuzz: //'
		grep -aE '^INFO fuzz: \[[a-z]+\] (target=|outcome|variants|verdict|problem)' "$log" |
			sed 's/^INFO fuzz: //; s/fuzz: //'
		grep -aE '^INFO fuzz: (mem delta|threaded restores|killed)' "$log" | sed 's/^INFO fuzz: //'
		grep -aE '^INFO dump_race: ' "$log" | sed 's/^INFO //'
		echo "results:"
		tail -n 20 "$BUILD/fuzz-long-$k.run.log" | grep -E '^(PASS|FAIL) |passed,'
	} > "$BUILD/fuzz-long-$k.txt"
	cat "$BUILD/fuzz-long-$k.txt"
done
exit $rc
