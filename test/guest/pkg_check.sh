#!/bin/sh
# pkg_check.sh: the guest half of the host test "packages" (test/lib-packages.sh),
# run by init when the kernel command line has imgcr.mode=pkg.  The initramfs
# holds what the packages installed on the host, at the same paths: the
# modules DKMS built and installed for this kernel with the index files its
# depmod wrote (/lib/modules/K), the modprobe.d and modules-load.d files of
# imgcr-dkms, /usr/bin/imgcr of the imgcr package, kmod as /sbin/modprobe
# (the program the kernel runs for request_module()) and imgcr-dkms's prerm
# in /imgcr/pkg.  Nothing is loaded when this starts.
#
# Results (RESULT pkg-... lines), each test depending on the ones before:
#   pkg-modinfo      modprobe finds both modules where DKMS put them
#   pkg-boot-load    img_dump loads as systemd-modules-load would load it
#                    (modprobe of a name listed in modules-load.d)
#   pkg-dump         a counter's /proc/PID/dump read, binfmt_img still absent
#   pkg-autoload     executing the image makes the kernel load binfmt_img
#                    (request_module("binfmt-464c") -> the modprobe.d alias)
#                    and the counter carries on where it stopped
#   pkg-modules-load every module listed in modules-load.d loads; the
#                    packaged imgcr says "ready" and reads the image
#   pkg-autopkgtest  the package's autopkgtest (debian/tests/imgcr-check,
#                    its setup skipped: the modules are loaded) passes:
#                    imgcr check, a shell loop dumped and restored
#   pkg-prerm-unload imgcr-dkms's prerm (remove) unloads both modules
. /imgcr/guest/lib.sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/imgcr/bin
K=$(uname -r)
cd "$(mktemp -d /tmp/pkg.XXXXXX)" || exit 1

loaded() { grep -q "^$1 " /proc/modules; }
# conf_modules: the module names in imgcr-dkms's modules-load.d file.
conf_modules() {
	for _w in $(sed 's/#.*//' /usr/lib/modules-load.d/imgcr.conf); do
		echo "$_w"
	done
}

t_modinfo() {
	for m in img_dump binfmt_img; do
		loaded "$m" && fail "$m loaded before anything asked for it"
		f=$(modinfo -n "$m" 2>&1) || fail "modinfo -n $m: $f"
		case "$f" in
		"/lib/modules/$K/updates/dkms/$m.ko"*) ;;
		*) fail "modprobe resolves $m to $f, not DKMS's /lib/modules/$K/updates/dkms" ;;
		esac
	done
	[ -s /usr/lib/modules-load.d/imgcr.conf ] || fail "no /usr/lib/modules-load.d/imgcr.conf from imgcr-dkms"
	pass "$(modinfo -n img_dump), $(modinfo -n binfmt_img)"
}

t_boot_load() {
	conf_modules | grep -qx img_dump || fail "img_dump not listed in modules-load.d/imgcr.conf: $(conf_modules | tr '\n' ' ')"
	out=$(modprobe img_dump 2>&1) || fail "modprobe img_dump: $out"
	loaded img_dump || fail "img_dump not in /proc/modules after modprobe"
	[ -e /proc/self/dump ] || fail "img_dump loaded but no /proc/self/dump"
	pass
}

t_dump() {
	counter 20 > out &
	pid=$!
	echo $pid > counter.pid
	wait_line out '^5 ' 20 || fail "counter never reached 5: $(tail -n1 out)"
	stop_task $pid
	tail -n 1 out | cut -d' ' -f1 > last
	dump $pid c.img
	is_elf c.img || fail "image does not start with ELF magic"
	kill9 $pid
	loaded binfmt_img && fail "binfmt_img got loaded by the dump"
	pass "stopped at $(cat last), image $(size_of c.img) bytes"
}

t_autoload() {
	last=$(cat last)
	chmod +x c.img
	./c.img >> out 2> restore.err &
	rpid=$!
	track $rpid
	wait_exit $rpid 30
	loaded binfmt_img || fail "executing the image did not load binfmt_img (exit $RC$(rerr))"
	[ "$RC" = 0 ] || fail "restored counter exit status $RC; tail: $(tail -n 2 out | tr '\n' '|')$(rerr)"
	n=0
	while read -r num p rest; do
		[ "$num" = counter ] && continue
		n=$((n + 1))
		[ "$num" = "$n" ] || fail "line $n is '$num $p' (gap or repeat)"
		[ "$n" -le "$last" ] || [ "$p" = "$rpid" ] || fail "line $n printed by pid $p, expected $rpid"
	done < out
	[ "$n" = 20 ] || fail "got $n numbers, expected 20"
	grep -q '^counter selfcheck ok$' out || fail "no self-check line"
	pass "binfmt_img loaded on first use, resumed at $((last + 1)) as pid $rpid"
}

t_modules_load() {
	for m in $(conf_modules); do
		out=$(modprobe "$m" 2>&1) || fail "modprobe $m (listed in modules-load.d): $out"
	done
	conf_modules | grep -qx binfmt_img || fail "binfmt_img not listed in modules-load.d/imgcr.conf"
	imgcr check > check.out 2>&1 || fail "packaged imgcr check: $(tr '\n' '|' < check.out)"
	tail -n 1 check.out | grep -qx ready || fail "imgcr check did not say ready: $(tr '\n' '|' < check.out)"
	imgcr show c.img > show.out 2>&1 || fail "packaged imgcr show c.img: $(head -c 300 show.out)"
	grep -q "$(cat counter.pid)" show.out || fail "imgcr show does not mention pid $(cat counter.pid): $(head -c 300 show.out)"
	pass "$(conf_modules | tr '\n' ' ')loaded; imgcr check: ready"
}

t_autopkgtest() {
	[ -f /imgcr/pkg/imgcr-check ] || fail "no debian/tests/imgcr-check in the guest"
	IMGCR_TEST_NO_SETUP=1 sh /imgcr/pkg/imgcr-check > autopkgtest.out 2>&1
	rc=$?
	[ "$rc" = 0 ] || fail "debian/tests/imgcr-check exited $rc: $(tail -n 5 autopkgtest.out | tr '\n' '|')"
	grep -q '^PASS: ' autopkgtest.out || fail "no PASS line: $(tail -n 5 autopkgtest.out | tr '\n' '|')"
	pass "$(grep '^I: restored' autopkgtest.out)"
}

t_prerm_unload() {
	[ -f /imgcr/pkg/prerm ] || fail "no prerm of imgcr-dkms in the guest"
	# dkms is not in the guest: the dh_dkms part finds nothing to remove.
	out=$(sh /imgcr/pkg/prerm remove 2>&1) || fail "prerm remove failed: $out"
	for m in img_dump binfmt_img; do
		loaded "$m" && fail "$m still loaded after prerm remove: $out"
	done
	pass
}

for t in modinfo boot_load dump autoload modules_load autopkgtest prerm_unload; do
	name=pkg-$(echo $t | tr _ -)
	subtest "$name" "t_$t"
	grep -q "^RESULT $name PASS" "sub.$name.out" || {
		echo "INFO $name: failed, the remaining package checks are skipped"
		break
	}
done
