#!/bin/sh
# Error paths.  Each sub-test runs in its own subshell and reports its own
# RESULT line (errors-running, errors-perm, errors-truncated,
# errors-corrupt, errors-plaincore; threads: t_threads_errors).
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

# (a) A running (not stopped) task cannot be dumped, and keeps running.
sub_running() {
	counter 100000 > out &
	pid=$!
	track $pid
	wait_line out '^2 ' 10 || fail "counter did not start"
	cat /proc/$pid/dump > x 2> err && fail "cat of a running task's dump succeeded"
	grep -qi busy err || fail "cat error is not 'busy': $(cat err)"
	r=$(readall /proc/$pid/dump)
	[ "$r" = "open failed: EBUSY" ] || fail "open of running task: '$r', want EBUSY"
	n=$(tail -n1 out | cut -d' ' -f1)
	wait_line out "^$((n + 3)) " 10 || fail "counter stopped counting after the failed dump"
	pass
}

# (b) uid 1000 may not dump root's stopped task (EACCES), which stays
# untouched; uid 1000 may dump its own stopped child.
sub_perm() {
	chmod 777 .
	counter 100000 > out &
	pid=$!
	track $pid
	wait_line out '^2 ' 10 || fail "counter did not start"
	stop_task $pid
	r=$(runas 1000 1000 readall /proc/$pid/dump)
	[ "$r" = "open failed: EACCES" ] || fail "uid 1000 opening root's dump: '$r', want EACCES"
	runas 1000 1000 cat /proc/$pid/dump > x 2>/dev/null && fail "uid 1000 cat of root's dump succeeded"
	[ "$(state $pid)" = T ] || fail "target state '$(state $pid)' after the denied dump, want T"
	n=$(tail -n1 out | cut -d' ' -f1)
	kill -CONT $pid
	wait_line out "^$((n + 2)) $pid\$" 10 || fail "target did not continue after SIGCONT"

	runas 1000 1000 sh -c '
		. /imgcr/guest/lib.sh
		T=errors-perm
		pauser > own.out &
		p=$!
		track $p
		wait_line own.out ready 10 || fail "uid 1000 pauser did not start"
		stop_task $p
		readall /proc/$p/dump own.img
	' > own.res 2>&1
	grep -q FAIL own.res && cat own.res && exit 1
	grep -q '^ok bytes=' own.res || fail "uid 1000 dumping its own child: $(tr '\n' ' ' < own.res)"
	is_elf own.img || fail "uid 1000's image is not ELF"
	[ "$(stat -c %u own.img)" = 1000 ] || fail "image not written by uid 1000"
	pass
}

# Make one real image to damage: a pauser (sleeps forever if wrongly restored,
# hence the deadline in tryexec_expect).
sub_mkimage() {
	pauser > p.out &
	pid=$!
	track $pid
	wait_line p.out ready 10 || fail "pauser did not start"
	stop_task $pid
	dump $pid p.img
	kill9 $pid
	pass
}

# (c1) Truncated images: execve fails and the caller survives.
sub_truncated() {
	[ -s p.img ] || fail "no image to truncate (see errors-mkimage)"
	size=$(size_of p.img)
	bad=""
	for n in 10 64 100 1000 4096 $((size / 2)) $((size - 1)); do
		head -c $n p.img > tr.img
		r=$(tryexec_expect tr.img)
		[ -z "$r" ] && info "truncated at $n: $(cat te.errno)" || bad="$bad size=$n:$r"
	done
	[ -z "$bad" ] || fail "accepted or killed the caller:$bad"
	pass
}

# (c2) Structurally corrupted images (see corrupt.c), then a control: the
# intact image does restore under tryexec, so the rejections above are due
# to the damage.
sub_corrupt() {
	[ -s p.img ] || fail "no image to corrupt (see errors-mkimage)"
	bad=""
	for m in class machine type phoff phentsize phnum nophdr poffset pfilesz namesz descsz auxv; do
		corrupt p.img c.img $m || fail "corrupt $m failed"
		r=$(tryexec_expect c.img)
		[ -z "$r" ] && info "$m: $(cat te.errno)" || bad="$bad $m:$r"
	done
	[ -z "$bad" ] || fail "accepted or killed the caller:$bad"

	cp p.img ok.img
	control_restore ok.img p.out
	pass
}

# (d) Ordinary core files (no imgcr notes) are refused with ENOEXEC: a
# hand-made one and one written by this kernel.
sub_plaincore() {
	mkcore plain.core || fail "mkcore failed"
	r=$(tryexec_expect plain.core)
	[ -z "$r" ] || fail "hand-made core: $r"
	[ "$(cat te.errno)" = ENOEXEC ] || fail "hand-made core: $(cat te.errno), want ENOEXEC"

	old=$(cat /proc/sys/kernel/core_pattern)
	echo "$PWD/kcore.%p" > /proc/sys/kernel/core_pattern
	ulimit -c unlimited
	pauser > k.out &
	pid=$!
	wait_line k.out ready 10 || fail "pauser did not start"
	kill -SEGV $pid
	wait $pid
	echo "$old" > /proc/sys/kernel/core_pattern
	[ -s kcore.$pid ] || fail "kernel wrote no core file"
	r=$(tryexec_expect kcore.$pid)
	[ -z "$r" ] || fail "kernel core: $r"
	[ "$(cat te.errno)" = ENOEXEC ] || fail "kernel core: $(cat te.errno), want ENOEXEC"
	pass
}

# (e) --imgcr-root=FD must name a directory the caller holds open: an fd
# number not open, a file, and a non-number are refused (EINVAL, the
# reason in the kernel log) with the caller intact; an open directory is
# taken (control: the image restores).
sub_rootarg() {
	[ -s p.img ] || fail "no image (see errors-mkimage)"
	chmod +x p.img
	bad=""
	for a in 77 5 x; do
		dmesg_mark
		timeout -s KILL 10 tryexec ./p.img "--imgcr-root=$a" 5< p.img > te.out 2>&1
		rc=$?
		if [ $rc != 2 ] || ! grep -q '^tryexec: execve failed: EINVAL' te.out; then
			bad="$bad $a:rc=$rc($(head -c 60 te.out | tr '\n' ' '))"
		elif ! dmesg_since | grep -q -- '--imgcr-root= is not an open directory of the caller'; then
			bad="$bad $a:no-log"
		fi
	done
	[ -z "$bad" ] || fail "bad --imgcr-root accepted or not explained:$bad"
	tryexec ./p.img --imgcr-root=5 5< / >> r.out 2> restore.err &
	_rp=$!
	track $_rp
	wait_restored $_rp 30 tryexec || fail "an image with --imgcr-root of an open / did not restore$(rerr)"
	kill -USR1 $_rp
	wait_exit $_rp 10
	grep -q "^woken ok pid=$_rp" r.out || fail "restored with --imgcr-root: no 'woken ok'"
	pass "fd 77 (closed), 5 (a file), x: EINVAL; an open / taken"
}

subtest errors-running sub_running
subtest errors-perm sub_perm
subtest errors-mkimage sub_mkimage
subtest errors-truncated sub_truncated
subtest errors-corrupt sub_corrupt
subtest errors-plaincore sub_plaincore
subtest errors-rootarg sub_rootarg
