#!/bin/sh
# Hold-out tests of issue 10 (memory state), written from README.md alone.
#   bb_mem-madv
#       regions with MADV_WIPEONFORK, DONTFORK, HUGEPAGE, NOHUGEPAGE,
#       DONTDUMP (and MAP_DROPPABLE on 6.12) and a plain one, each
#       filled with its own byte: after imgcr dump + restore the smaps
#       VmFlags of each are the same, every byte is back, the huge
#       pages of the MADV_HUGEPAGE region are huge again, and a fork
#       after the restore sees zeros in the wipe-on-fork region and no
#       don't-fork region (bbmem madv).
#   bb_mem-cow
#       32 MiB shared copy-on-write between a parent and its child
#       (the child rewrote an eighth before the dump): the two
#       processes' Pss and Rss after the restore are those before it,
#       and what the child writes after the restore does not show in
#       the parent (bbmem cow).
#   bb_mem-cowmix
#       a parent's plain, wipe-on-fork and don't-dump regions and a
#       child with two threads that rewrote part of the plain one and
#       all of its (zeroed) wipe-on-fork one: each has its own data
#       back, and a fork by each after the restore sees zeros in the
#       wipe-on-fork region (bbmem cowmix).
# timeout: 240
. /imgcr/guest/lib.sh
require_modules

# vmflags PID ADDR: the VmFlags of the mapping starting at ADDR (hex)
vmflags() {
	awk -v a="$2-" 'index($1, a) == 1 { f = 1 } f && /^VmFlags:/ { $1 = ""; print; exit }' /proc/$1/smaps
}
# smapsval PID ADDR FIELD: a field (kB) of the mapping starting at ADDR
smapsval() {
	awk -v a="$2-" -v k="$3:" 'index($1, a) == 1 { f = 1 } f && $1 == k { print $2; exit }' /proc/$1/smaps
}
rollup() { awk -v k="$2:" '$1 == k { print $2 }' /proc/$1/smaps_rollup; }

wait_back() {
	_n=0
	while :; do
		case "$(state $rpid)" in "" | Z) fail "imgcr restore ended before task $1 was back$(rerr)" ;; esac
		case "$(state $1),$(readlink /proc/$1/exe 2>/dev/null)" in
		S,*/bbmem) return 0 ;;
		esac
		_n=$((_n + 1))
		[ $_n -lt 3000 ] || fail "task $1 not restored in 60 s (state '$(state $1)')$(rerr)"
		usleep 20000
	done
}

madv() {
	mkdir $T && cd $T || fail "mkdir"
	bbmem madv > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready ' 30 || fail "bbmem did not get ready: $(tail -n 2 out | tr '\n' '|')"
	regions=$(sed -n 's/^ready [0-9]* //p' out)
	: > before.txt
	for r in $regions; do
		n=${r%%=*}
		a=${r#*=}
		[ "$a" = none ] && { info "no MAP_DROPPABLE on this kernel"; continue; }
		echo "$n $(vmflags $pid $a)" >> before.txt
	done
	hp_before=$(smapsval $pid $(echo "$regions" | sed 's/.*hg=\([0-9a-f]*\).*/\1/') AnonHugePages)
	grep -q ' wf' before.txt && grep -q ' dc' before.txt && grep -q ' hg' before.txt &&
		grep -q ' nh' before.txt && grep -q ' dd' before.txt ||
		fail "the flags were not set before the dump: $(tr '\n' '|' < before.txt)"
	imgcr dump -t $pid -D d > dump.log 2>&1 || fail "imgcr dump: $(tr '\n' '|' < dump.log)"
	wait_dumped_gone $pid
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_back $pid
	: > after.txt
	for r in $regions; do
		n=${r%%=*}
		a=${r#*=}
		[ "$a" = none ] && continue
		echo "$n $(vmflags $pid $a)" >> after.txt
	done
	hp_after=$(smapsval $pid $(echo "$regions" | sed 's/.*hg=\([0-9a-f]*\).*/\1/') AnonHugePages)
	info "AnonHugePages of the MADV_HUGEPAGE region: ${hp_before:-?} kB before, ${hp_after:-?} kB after"
	# huge pages before the dump must not come back as small pages
	[ "${hp_before:-0}" -gt 0 ] && [ "${hp_after:-0}" -lt "${hp_before:-0}" ] &&
		fail "the MADV_HUGEPAGE region had ${hp_before} kB in huge pages before the dump, ${hp_after:-0} kB after"
	cmp -s before.txt after.txt ||
		fail "VmFlags differ: before $(tr '\n' '|' < before.txt) after $(tr '\n' '|' < after.txt)"
	kill -USR1 $pid
	wait_exit $rpid 60
	inside_ok bbmem
	pass "VmFlags the same ($(wc -l < after.txt) regions), contents and fork behaviour right"
}

cow() {
	mkdir $T && cd $T || fail "mkdir"
	bbmem cow 32 > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready .* child$' 60 || fail "bbmem cow did not get ready: $(tail -n 2 out | tr '\n' '|')"
	wait_line out '^ready .* parent' 10 || fail "no parent ready line"
	child=$(sed -n 's/^ready \([0-9]*\) child$/\1/p' out)
	track $child
	pss_b=$(( $(rollup $pid Pss) + $(rollup $child Pss) ))
	rss_pb=$(rollup $pid Rss)
	rss_cb=$(rollup $child Rss)
	imgcr dump -t $pid -D d > dump.log 2>&1 || fail "imgcr dump: $(tr '\n' '|' < dump.log)"
	wait_dumped_gone $pid $child
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_back $pid
	wait_back $child
	pss_a=$(( $(rollup $pid Pss) + $(rollup $child Pss) ))
	rss_pa=$(rollup $pid Rss)
	rss_ca=$(rollup $child Rss)
	info "Pss of parent+child: $pss_b kB before, $pss_a kB after; Rss parent $rss_pb -> $rss_pa kB, child $rss_cb -> $rss_ca kB"
	# copied instead of shared: about 28 MiB more
	[ "$pss_a" -le $((pss_b + 4096)) ] ||
		fail "Pss of parent+child grew from $pss_b kB to $pss_a kB: the copy-on-write memory is no longer shared"
	[ "$rss_pa" -le $((rss_pb + 4096)) ] && [ "$rss_ca" -le $((rss_cb + 4096)) ] ||
		fail "Rss grew: parent $rss_pb -> $rss_pa kB, child $rss_cb -> $rss_ca kB"
	kill -USR1 $child
	wait_line out '^child done' 30 || fail "the child did not finish its checks: $(tail -n 3 out | tr '\n' '|')"
	kill -USR1 $pid
	wait_exit $rpid 60
	inside_ok bbmem
	pass "Pss $pss_b -> $pss_a kB, the child's writes stay its own"
}

cowmix() {
	mkdir $T && cd $T || fail "mkdir"
	bbmem cowmix > out 2>&1 &
	pid=$!
	track $pid
	wait_line out '^ready .* child$' 60 || fail "bbmem cowmix did not get ready: $(tail -n 2 out | tr '\n' '|')"
	wait_line out '^ready .* parent' 10 || fail "no parent ready line"
	child=$(sed -n 's/^ready \([0-9]*\) child$/\1/p' out)
	track $child
	grep '^Threads:' /proc/$child/status > thr-before.txt
	imgcr dump -t $pid -D d > dump.log 2>&1 || fail "imgcr dump: $(tr '\n' '|' < dump.log)"
	wait_dumped_gone $pid $child
	imgcr restore -D d > restore.out 2> restore.err &
	rpid=$!
	track $rpid
	wait_back $pid
	wait_back $child
	grep '^Threads:' /proc/$child/status > thr-after.txt
	cmp -s thr-before.txt thr-after.txt || fail "child threads: $(cat thr-before.txt) before, $(cat thr-after.txt) after"
	kill -USR1 $child
	wait_line out '^child done' 30 || fail "the child did not finish its checks: $(tail -n 3 out | tr '\n' '|')"
	kill -USR1 $pid
	wait_exit $rpid 60
	inside_ok bbmem
	pass "plain, wipe-on-fork and don't-dump data of a parent and its threaded child, forks after the restore"
}

subtest bb_mem-madv madv
subtest bb_mem-cow cow
subtest bb_mem-cowmix cowmix

