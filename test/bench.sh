#!/bin/bash
# test/bench.sh -- imgcr and CRIU side by side in the same guest.
# Run as root: test/bench.sh [--kernel K] [--sizes "16 64 256"] [--reps N]
#                                 [--threads N] [--no-live]
#
# For each heap size (MiB) a static program fills its heap with
# pseudo-random data and is checkpointed and restored N times (default 3)
# by each tool, alternating: with imgcr dump's route (ioctl IMGCR_IOC_DUMP_TO
# on /proc/PID/dump: the module writes the image file, test/progs/dumpto.c)
# + executing the image, and with "criu dump" + "criu restore".  Two more
# rows: "imgcr-cat", the same dump by "cat /proc/PID/dump > img" (read() +
# write()), and "write", the bandwidth floor: the image's bytes written
# from memory (tmpfs) to a file of the same filesystem by cat; "fill",
# the restore's floor: fresh anonymous memory of the image's size with
# the image's bytes read into it (test/progs/fillfloor.c).  Every restored process must verify
# its heap.  Times are wall-clock milliseconds inside one QEMU/TCG guest
# (emulated CPU: compare the two, not the absolute numbers); the table gives
# the median of the N runs and every run.  imgcr's restore time runs from
# fork+execve of the image until the process sleeps in pause() again as
# heapbench (test/progs/execwait.c); CRIU's is "criu restore -d".
# --threads N: the program has N threads besides main (each waiting on a
# condition variable), stopped all before imgcr's dump; the restore counts
# until every thread sleeps again, and the check also wants every thread
# back with its TID.  The table then has a threads column.
# --no-live: leave out the imgcr dump (tool) runs of the writer (plain and
# --live), the slowest part.  imgcr-open/-ioctl/-close: the parts of
# imgcr's dump (open() pins the pages, the ioctl writes them, close()
# unpins).
# Results: build/bench-<kernel>.txt.
set -uo pipefail
. "$(dirname "$0")/lib-host.sh"

K=6.12.118+deb12-amd64
SIZES="16 64 256"
REPS=3
THREADS=""
NOLIVE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) K=${2:?--kernel needs a value}; shift 2 ;;
	--sizes) SIZES=${2:?--sizes needs a value}; shift 2 ;;
	--reps) REPS=${2:?--reps needs a value}; shift 2 ;;
	--threads) THREADS=${2:?--threads needs a value}; shift 2 ;;
	--no-live) NOLIVE=" imgcr.nolive"; shift ;;
	-h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ -z "$THREADS" ] || [[ "$THREADS" =~ ^[0-9]+$ ]] || die "--threads needs a number"
kernel_ok "$K" || die "unsupported kernel $K (choose from: $ALL_KERNELS)"

host_setup "$K"
dpkg -s criu >/dev/null 2>&1 || apt-get install -y -q --no-install-recommends criu ||
	die "cannot install criu"
RESULTS=$BUILD/bench-results.txt
LOGS=$BUILD/bench-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
: > "$RESULTS"
build_progs
build_modules "$K"
make_initrd "$K" "$BUILD/initrd-$K.cpio.gz"

# Add CRIU with its libraries, and the kernel modules its feature probe
# needs (nf_tables, veth, tun, the socket diag modules), to the test initramfs.
root=$BUILD/initrd-$K
for f in /usr/sbin/criu $(ldd /usr/sbin/criu | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done
kb=$BUILD/kmod-$K
mkdir -p "$kb/lib/modules" "$root/imgcr/kmod"
ln -sfn "$CACHE/$K/modules" "$kb/lib/modules/$K"
depmod -b "$kb" "$K"
: > "$root/imgcr/kmod/order"
for m in nf_tables veth tun unix_diag inet_diag tcp_diag udp_diag raw_diag netlink_diag af_packet_diag; do
	modprobe -d "$kb" -S "$K" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r f; do
	n=$(basename "$f"); n=${n%.xz}; n=${n%.ko}
	case "$f" in *.xz) xz -dc "$f" ;; *) cat "$f" ;; esac > "$root/imgcr/kmod/$n.ko"
	echo "$n" >> "$root/imgcr/kmod/order"
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$BUILD/initrd-$K.cpio.gz"

# the heap, its image, cat's copy and the restored heap at once, + 1.5 GiB
max=$(echo $SIZES | tr ' ' '\n' | sort -n | tail -n 1)
GUEST_MEM_MIB=$((max * 4 + 1536))
[ "$GUEST_MEM_MIB" -ge 2048 ] || GUEST_MEM_MIB=2048
export GUEST_MEM_MIB
# a deadline that grows with the work: about a second per MiB and run
total=0
for m in $SIZES; do total=$((total + m)); done
GUEST_TIMEOUT=${IMGCR_GUEST_TIMEOUT:-$((1200 + total * REPS))}
say "booting the $K guest ($GUEST_MEM_MIB MiB); console log: $LOGS/$K/console.log"
boot_guest "$K" "$BUILD/initrd-$K.cpio.gz" "$LOGS/$K" "imgcr.mode=bench imgcr.sizes=$(echo "$SIZES" | tr ' ' ,) imgcr.reps=$REPS${THREADS:+ imgcr.threads=$THREADS}$NOLIVE"
out=$BUILD/bench-$K.txt
{
	echo "# test/bench.sh --kernel $K --sizes \"$SIZES\" --reps $REPS${THREADS:+ --threads $THREADS}   ($(date -u +%F))"
	echo "# QEMU TCG guest, 1 vCPU; milliseconds, median of the runs [every run]; image KiB${THREADS:+; threads besides main}"
	echo "size_mib ${THREADS:+threads }tool dump_ms restore_ms image_kib"
	grep -a '^BENCH run [0-9]' "$LOGS/$K/console.log" | tr -d '\r' | awk -v threads="$THREADS" '
		function median(list,   a, n, i, j, t) {
			n = split(list, a, " ")
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : int((a[n / 2] + a[n / 2 + 1]) / 2)
		}
		{
			k = threads == "" ? $3 " " $4 : $3 " " $8 " " $4
			if (!(k in d)) order[++nk] = k
			d[k] = d[k] " " $5; r[k] = r[k] " " $6; kib[k] = $7
		}
		END {
			for (i = 1; i <= nk; i++) {
				k = order[i]
				printf "%s %s %s %s   [dump%s] [restore%s]\n", k, median(d[k]),
					median(r[k]), kib[k], d[k], r[k]
			}
		}'
} > "$out"
cat "$out"
# The summary (the table of docs/performance.md): medians per size; ratios are CRIU / imgcr
# (above 1: imgcr faster); dump/write is imgcr's dump over the floor.
[ -n "$THREADS" ] || awk '
	$1 ~ /^[0-9]+$/ { d[$1, $2] = $3; r[$1, $2] = $4; k[$1, $2] = $5
		if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	function ratio(a, b) { return b > 0 ? sprintf("%.2fx", a / b) : "-" }
	END {
		print "| heap | imgcr dump | CRIU dump | dump ratio | imgcr restore | CRIU restore | restore ratio | freeze imgcr / CRIU | image imgcr / CRIU | restored peak RSS imgcr / CRIU | dump / write | restore / fill | imgcr dump of a writer: plain / --live (frozen) |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			m = order[i]
			printf "| %s MiB | %s ms | %s ms | %s | %s ms | %s ms | %s | %s / %s ms | %.1f / %.1f MiB | %.1f / %.1f MiB | %s | %s | %s / %s ms (%s / %s ms) |\n",
				m, d[m, "imgcr"], d[m, "criu"], ratio(d[m, "criu"], d[m, "imgcr"]),
				r[m, "imgcr"], r[m, "criu"], ratio(r[m, "criu"], r[m, "imgcr"]),
				d[m, "imgcr-freeze"], d[m, "criu-freeze"],
				k[m, "imgcr"] / 1024, k[m, "criu"] / 1024,
				k[m, "imgcr-rss"] / 1024, k[m, "criu-rss"] / 1024,
				ratio(d[m, "imgcr"], d[m, "write"]),
				ratio(r[m, "imgcr"], r[m, "fill"]),
				d[m, "tool-plain"], d[m, "tool-live"],
				d[m, "tool-plain-freeze"], d[m, "tool-live-freeze"]
		}
	}' "$out" | tee -a "$out"
grep -aq '^BENCH-FAIL' "$LOGS/$K/console.log" && die "a restore failed (see $LOGS/$K/console.log)"
[ "$(grep -ac '^BENCH run [0-9]' "$LOGS/$K/console.log")" -gt 0 ] || die "no results"
exit 0
