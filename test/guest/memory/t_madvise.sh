#!/bin/sh
# Per-mapping advice survives a dump and restore (see progs/madv.c):
# MADV_WIPEONFORK, MADV_DONTFORK, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
# MADV_DONTDUMP (their data in the image all the same) and, where the kernel
# has it, MAP_DROPPABLE.  From outside: the wf/dc/hg/nh/dd/dp VmFlags of
# every mapping in /proc/PID/smaps are the same before and after, and
# `imgcr show` names the advice.  From inside: every region's data, its
# VmFlags, and the behaviour in a forked child (wipe-on-fork regions zero,
# don't-fork regions absent).  Then images with advice flags no loader may
# accept are refused before the exec's point of no return.
# timeout: 180
. /imgcr/guest/lib.sh
require_modules

# advice PID: "range: flags" for every mapping, only the flags of interest
advice() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { r = $1; next }
	     /^VmFlags:/ { f = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^(wf|dc|hg|nh|dd|dp)$/) f = f " " $i
		print r ":" f }' /proc/$1/smaps
}

madv > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready' 20 || fail "madv did not start: $(tr '\n' '|' < out)"
grep -q '^precheck ok' out || fail "$(grep BAD out | head -n1)"
dp=$(sed -n 's/^droppable //p' out)
info "MAP_DROPPABLE: $dp"
stop_task $pid
advice $pid > before.adv || fail "cannot read /proc/$pid/smaps"
for f in wf dc hg nh dd; do
	grep -q " $f" before.adv || fail "no mapping with VmFlags $f before the dump"
done

dump $pid m.img
info "image $(size_of m.img) bytes"
imgcr show m.img > show.txt 2>&1 || fail "imgcr show: $(tail -n 2 show.txt | tr '\n' '|')"
for w in dontfork wipeonfork hugepage nohugepage dontdump; do
	grep -qE "^  .* $w( |\$)" show.txt || fail "imgcr show names no mapping $w"
done
if [ "$dp" = yes ]; then
	grep -qE "^  .* droppable( |\$)" show.txt || fail "imgcr show names no mapping droppable"
fi
kill9 $pid

chmod +x m.img
./m.img >> out 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 || fail "restored task not sleeping (state '$(state $rpid)')$(rerr)"
advice $rpid > after.adv || fail "cannot read /proc/$rpid/smaps"
adv_bad=""
if ! cmp -s before.adv after.adv; then
	diff before.adv after.adv > adv.diff
	sed 's/^/INFO madvise: adv.diff: /' adv.diff
	adv_bad="smaps VmFlags differ: $(grep '^[-+][0-9a-f]' adv.diff | tr '\n' '|')"
fi
kill -USR2 $rpid
wait_exit $rpid 30
[ "$RC" = 0 ] || fail "exit $RC: $(grep -E 'BAD' out | head -n2 | tr '\n' '|')$(rerr)"
grep -q "^check ok pid=$rpid\$" out || fail "no 'check ok pid=$rpid': $(tail -n2 out | tr '\n' '|')"
[ -z "$adv_bad" ] || fail "$adv_bad (the program's own checks passed)"
pass "data, VmFlags and fork behaviour as before the dump (MAP_DROPPABLE: $dp)"

# refuse MODE ERRNO: the patched image is refused with ERRNO and a log line.
refuse() {
	madv patch m.img bad.img $1 || fail "madv patch $1 failed"
	dmesg_mark
	r=$(tryexec_expect bad.img)
	[ -z "$r" ] || fail "$1: not refused: $r"
	[ "$(cat te.errno)" = $2 ] || fail "$1: refused with $(cat te.errno), want $2"
	dmesg_since | grep -q 'binfmt_img: .*bad.img: .*mapping' ||
		fail "$1: no kernel log line naming the mapping: $(dmesg_since | tail -n 2 | tr '\n' '|')"
	pass
}
sub_unknown() { refuse unknown EINVAL; }
sub_wffile() { refuse wffile EINVAL; }
sub_hgnh() { refuse hgnh EINVAL; }
sub_dpbad() { refuse dpbad EINVAL; }
sub_dpok() { refuse dpok EOPNOTSUPP; }
subtest madvise-unknown sub_unknown
subtest madvise-wffile sub_wffile
subtest madvise-hgnh sub_hgnh
subtest madvise-dpbad sub_dpbad
# locked on fault but not locked; both read-ahead advices; KSM on a shared
# mapping; a locked droppable mapping (mlock() leaves those alone)
sub_lof() { refuse lof EINVAL; }
sub_seqrand() { refuse seqrand EINVAL; }
sub_mgshared() { refuse mgshared EINVAL; }
sub_dplock() { refuse dplock EINVAL; }
subtest madvise-lof sub_lof
subtest madvise-seqrand sub_seqrand
subtest madvise-mgshared sub_mgshared
subtest madvise-dplock sub_dplock
# A valid droppable mapping on a kernel without MAP_DROPPABLE.
[ "$dp" = yes ] || subtest madvise-dpok sub_dpok
