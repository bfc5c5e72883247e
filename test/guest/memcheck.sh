# Kernel memory accounting for leak checks (sourced by t_fuzz.sh and
# t_memcg.sh after lib.sh).
#
# mem_snap FILE: drop the caches, let RCU/workqueues settle, and write the
# /proc/meminfo fields MemAvailable Slab SUnreclaim KernelStack PageTables
# VmallocUsed (kB) to FILE as NAME=VALUE lines.
mem_snap() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 2
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	awk '/^(MemAvailable|Slab|SUnreclaim|KernelStack|PageTables|VmallocUsed):/ {
		sub(":", "", $1); print $1 "=" $2 }' /proc/meminfo > "$1"
}

# mem_compare BEFORE AFTER: print "INFO <test>: mem ..." with every delta and
# return 1 (printing the reason on stdout as "LEAK ...") if SUnreclaim grew
# by more than MEM_TOL_SUNRECLAIM_KB (default 4 MiB) or MemAvailable shrank
# by more than MEM_TOL_AVAIL_KB (default 16 MiB).
mem_compare() {
	awk -F= -v t="$T" -v tols="${MEM_TOL_SUNRECLAIM_KB:-4096}" \
		-v tola="${MEM_TOL_AVAIL_KB:-16384}" '
		NR == FNR { b[$1] = $2; next }
		{ a[$1] = $2; line = line sprintf(" %s=%+dkB", $1, $2 - b[$1]) }
		END {
			print "INFO " t ": mem delta (after-before):" line
			bad = ""
			if (a["SUnreclaim"] - b["SUnreclaim"] > tols)
				bad = bad sprintf(" SUnreclaim grew by %d kB (tolerance %d)",
					a["SUnreclaim"] - b["SUnreclaim"], tols)
			if (b["MemAvailable"] - a["MemAvailable"] > tola)
				bad = bad sprintf(" MemAvailable dropped by %d kB (tolerance %d)",
					b["MemAvailable"] - a["MemAvailable"], tola)
			if (bad != "") { print "LEAK" bad; exit 1 }
		}' "$1" "$2"
}
