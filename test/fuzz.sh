#!/bin/sh
# test/fuzz.sh [N]: a long fuzz round -- the guest fuzz test only, executing
# N malformed images (default 100000) on each kernel, e.g.
#   test/fuzz.sh 200000
#   test/fuzz.sh 100000 --kernel 6.12.118+deb12-amd64
# Two thirds are variants of the single-threaded seed, a third of the
# threaded one (fuzzseed -t 2 -q: threads, pending signals, timers; see
# test/guest/module/t_fuzz.sh), which restore more slowly as root.  At ~150
# images/s under TCG, 100000 take about 12 minutes (two kernels run side
# by side); the guest deadline is raised accordingly (override with
# IMGCR_GUEST_TIMEOUT).
N=${1:-100000}
[ $# -gt 0 ] && shift
export IMGCR_GUEST_TIMEOUT=${IMGCR_GUEST_TIMEOUT:-$((600 + N / 30))}
exec "$(dirname "$0")/run.sh" --only fuzz --fuzz "$N" "$@"
