#!/bin/sh
# Phase 2 of the cross-kernel tests (imgcr.mode=xkernel; not a t_*.sh: it
# needs images the host put in the initramfs).  /imgcr/xk/J/ holds what
# t_xkernel_dump.sh made on kernel J (meta.txt, PROG.img, PROG.out).  Every
# image is restored here, all at once, with its output so far, and must go
# on with the next line to its end and its own success line (xkcheck.sh).
# One result per image: "RESULT xkernel/J->K/PROG PASS|FAIL reason", K being
# this kernel; a failure carries binfmt_img's kernel log line for the image.
. /imgcr/guest/lib.sh
K=$(uname -r)
PROGS="counter vdsoclock python"
JS=$(cd /imgcr/xk && echo *)	# the dumping kernels
require_modules_xk() {
	for m in img_dump binfmt_img; do
		grep -q "^$m " /proc/modules && continue
		for J in $JS; do
			for p in $PROGS; do
				echo "RESULT xkernel/$J->$K/$p FAIL module $m is not loaded"
			done
		done
		exit 1
	done
}
require_modules_xk
dmesg_mark

for J in $JS; do
	mkdir -p /tmp/xk/$J
	for p in $PROGS; do
		w=/tmp/xk/$J
		cp /imgcr/xk/$J/$p.out $w/$p.out 2>/dev/null
		[ -f /imgcr/xk/$J/$p.img ] || continue
		# The image by its absolute path: the kernel log names it so.
		(cd $w && exec /imgcr/xk/$J/$p.img >> $p.out 2> $p.err) &
		track $!
		echo $! > $w/$p.pid
	done
done

for J in $JS; do
	w=/tmp/xk/$J
	for p in $PROGS; do
		name="xkernel/$J->$K/$p"
		if [ ! -f $w/$p.pid ]; then
			echo "RESULT $name FAIL no $p image from $J"
			continue
		fi
		wait_exit "$(cat $w/$p.pid)" 120
		n=$(sed -n "s/^$p .* target //p" /imgcr/xk/$J/meta.txt)
		at=$(sed -n "s/^$p .* stopped_at \([0-9]*\) .*/\1/p" /imgcr/xk/$J/meta.txt)
		why=$(sh /imgcr/guest/xkcheck.sh $p $w/$p.out "$n")
		if [ "$RC" = 0 ] && [ -z "$why" ]; then
			# vdsoclock: how often this kernel's CLOCK_MONOTONIC was
			# behind the dumping guest's (a later boot: it restarts).
			note=""
			[ $p = vdsoclock ] && note=", $(grep -c ' rebased$' $w/$p.out) rebased"
			echo "RESULT $name PASS resumed at $((at + 1)) of $n$note"
			continue
		fi
		# The kernel's reason first (binfmt_img names the image), then
		# how the exec or the restored program ended.
		kl=$(dmesg_since | grep -F "/imgcr/xk/$J/$p.img" | head -n 2 | sed 's/^\[[ 0-9.]*\] //' | tr '\n' '|')
		err=$(sed -n 's/.*\.img: //p' $w/$p.err | head -n 1)
		if [ "$RC" = 126 ] && [ -n "$err" ]; then
			why="exec failed ($err)${kl:+: ${kl%|}}"
		else
			why="exit $RC${why:+; $why}${kl:+; kernel: ${kl%|}}"
			[ -s $w/$p.err ] && why="$why; stderr: $(head -c 200 $w/$p.err | tr '\n' '|')"
		fi
		echo "RESULT $name FAIL $why"
	done
done
