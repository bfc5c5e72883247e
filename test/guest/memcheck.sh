# Kernel memory accounting for leak checks (sourced by t_fuzz.sh and
# t_memcg.sh after lib.sh).
#
# Free pages on the per-CPU page lists (pcp) are counted in neither MemFree
# nor MemAvailable, and how many the lists hold swings by tens of MB with
# the allocation pattern, which looks like a leak (or hides one).  So the
# free memory compared here is MemAvailable plus the pcp "count:" pages of
# /proc/zoneinfo (AvailPcp).  Over a 100 000-image fuzz round MemAvailable
# moved by -24 MB (6.12) and +20 MB (6.1) while AvailPcp moved by +4 kB and
# -40 kB.
#
# mem_snap FILE: drop the caches, let RCU/workqueues settle, and write the
# /proc/meminfo fields MemAvailable Slab SUnreclaim KernelStack PageTables
# VmallocUsed, the pcp pages (Pcp) and AvailPcp (all kB) to FILE as
# NAME=VALUE lines.
mem_snap() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 2
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	{
		awk '/^(MemAvailable|Slab|SUnreclaim|KernelStack|PageTables|VmallocUsed):/ {
			sub(":", "", $1); print $1 "=" $2 }' /proc/meminfo
		# x86_64: 4 kB pages
		awk '$1 == "count:" { n += $2 } END { print "Pcp=" n * 4 }' /proc/zoneinfo
	} > "$1"
	awk -F= '{ v[$1] = $2 } END { print "AvailPcp=" v["MemAvailable"] + v["Pcp"] }' \
		"$1" >> "$1"
}

# mem_compare BEFORE AFTER: print "INFO <test>: mem ..." with every delta and
# return 1 (printing the reason on stdout as "LEAK ...") if SUnreclaim grew
# by more than MEM_TOL_SUNRECLAIM_KB (default 4 MiB) or AvailPcp shrank
# by more than MEM_TOL_AVAIL_KB (default 2 MiB).
mem_compare() {
	awk -F= -v t="$T" -v tols="${MEM_TOL_SUNRECLAIM_KB:-4096}" \
		-v tola="${MEM_TOL_AVAIL_KB:-2048}" '
		NR == FNR { b[$1] = $2; next }
		{ a[$1] = $2; line = line sprintf(" %s=%+dkB", $1, $2 - b[$1]) }
		END {
			print "INFO " t ": mem delta (after-before):" line
			bad = ""
			if (a["SUnreclaim"] - b["SUnreclaim"] > tols)
				bad = bad sprintf(" SUnreclaim grew by %d kB (tolerance %d)",
					a["SUnreclaim"] - b["SUnreclaim"], tols)
			if (b["AvailPcp"] - a["AvailPcp"] > tola)
				bad = bad sprintf(" MemAvailable+pcp dropped by %d kB (tolerance %d)",
					b["AvailPcp"] - a["AvailPcp"], tola)
			if (bad != "") { print "LEAK" bad; exit 1 }
		}' "$1" "$2"
}
