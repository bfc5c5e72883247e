# The host test "packages" (test/run.sh; bash, sourced after lib-host.sh).
#
# Builds imgcr-dkms and imgcr with `make deb` in a copy of the tree, runs
# lintian on them, installs both with apt on this host (DKMS builds the
# modules for every kernel whose headers are installed, the guest kernels
# among them), boots each guest kernel with what the packages installed
# (test/guest/pkg_check.sh: modules loaded from DKMS's directory, a dump
# read, binfmt_img loaded by the kernel on the image's exec, the counter
# going on, imgcr check, the package's autopkgtest debian/tests/imgcr-check,
# the prerm unloading), checks the installed man pages (rendered without
# warnings, whatis entries, every command and option of the usage in
# imgcr(8)), then purges both packages
# and checks that the modules are gone.
#
# DKMS state is global: this test removes the harness's own imgcr/0.1
# (build_modules adds it again whenever it runs; by then the modules of
# this run's guests have been copied out) and leaves no imgcr in DKMS.
# It holds the DKMS lock (dkms_lock, lib-host.sh) from the install to the
# purge, so a suite running beside it does not build in between.
# Not run with IMGCR_NO_DKMS=1 (developers running suites side by side).

# Host tests this file provides (host_tests in lib-host.sh selects them).
# shellcheck disable=SC2034
PKG_TESTS="packages"

# pkg_record NAME PASS|FAIL [REASON]: a result under packages/.
pkg_record() { record "packages/$1" "$2" "${3:-}"; }

# pkg_log_tail LOG: the end of LOG, indented, for the console.
pkg_log_tail() { tail -n 15 "$1" | sed 's/^/    /'; }

# pkg_build DIR: the source package (dpkg-source -b, before anything is
# built in the copy) and `make deb` in a copy of the tree under DIR; the
# .dsc and the .debs in DIR.
pkg_build() {
	local dir=$1 log=$1/build.log
	rm -rf "$dir"
	mkdir -p "$dir/src"
	tar -C "$REPO" --exclude=./build --exclude=./.git -cf - . | tar -C "$dir/src" -xf -
	if ! (cd "$dir" && dpkg-source -b src) > "$log" 2>&1; then
		pkg_record build FAIL "dpkg-source -b failed (see $log)"
		pkg_log_tail "$log"
		return 1
	fi
	if ! make -C "$dir/src" deb >> "$log" 2>&1; then
		pkg_record build FAIL "make deb failed (see $log)"
		pkg_log_tail "$log"
		return 1
	fi
	if ! ls "$dir"/imgcr-dkms_*_all.deb "$dir"/imgcr_*_amd64.deb > /dev/null 2>&1; then
		pkg_record build FAIL "make deb made no imgcr-dkms/imgcr .deb in $dir (see $log)"
		return 1
	fi
	pkg_record build PASS "$(cd "$dir" && echo imgcr_*.dsc imgcr-dkms_*_all.deb imgcr_*_amd64.deb)"
}

# pkg_lintian DIR: lintian (pedantic, info and experimental tags too) on
# the source package (.dsc) and the binary .changes; any tag fails, unless
# an override in debian/*.lintian-overrides explains it.
pkg_lintian() {
	local dir=$1 log=$1/lintian.log tags
	# Its exit status only reflects errors: the tags are judged here.
	lintian -I -E --pedantic --show-overrides "$dir"/imgcr_*.dsc "$dir"/imgcr_*_amd64.changes > "$log" 2>&1
	tags=$(grep -E '^[EWIPX]: ' "$log" | sort -u)
	if [ -z "$tags" ]; then
		pkg_record lintian PASS "no tags, $(grep -c '^O: ' "$log") overridden"
	else
		pkg_record lintian FAIL "$(echo "$tags" | head -n 3 | tr '\n' '|')(see $log)"
	fi
}

# pkg_state_clean: no imgcr package installed, no imgcr in DKMS.
pkg_state_clean() {
	local p
	for p in imgcr imgcr-dkms; do
		if dpkg -s "$p" > /dev/null 2>&1; then
			apt-get purge -y -q -o DPkg::Lock::Timeout=300 "$p" || return 1
		fi
	done
	dkms remove "$DKMS_NAME/$DKMS_VER" --all > /dev/null 2>&1
	rm -rf "/usr/src/$DKMS_NAME-$DKMS_VER"
	return 0
}

# pkg_install DIR KERNELS: apt install of both packages; DKMS must have
# installed both modules for every kernel in KERNELS.
pkg_install() {
	local dir=$1 kernels=$2 log=$1/install.log k m f
	pkg_state_clean >> "$log" 2>&1
	# autoinstall_all_kernels (a DKMS framework.conf setting, read from the
	# environment by DKMS's postinst): build for every kernel in
	# /lib/modules with headers.  Without it the postinst builds for the
	# running kernel (and the newest in /boot) only, which here is neither
	# guest kernel.
	if ! (cd "$dir" && autoinstall_all_kernels=1 DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q -o DPkg::Lock::Timeout=300 ./imgcr-dkms_*_all.deb ./imgcr_*_amd64.deb) >> "$log" 2>&1; then
		pkg_record install FAIL "apt-get install ./imgcr-dkms_*.deb ./imgcr_*.deb failed (see $log)"
		pkg_log_tail "$log"
		return 1
	fi
	pkg_record install PASS
	for k in $kernels; do
		f=""
		for m in img_dump binfmt_img; do
			ls /lib/modules/"$k"/updates/dkms/$m.ko* > /dev/null 2>&1 || f="$f $m"
		done
		if [ -n "$f" ]; then
			pkg_record "dkms-$k" FAIL "no$f in /lib/modules/$k/updates/dkms after the install ($(dkms status "$DKMS_NAME" -k "$k" 2>&1 | head -n 1); see $log)"
		elif ! dkms status "$DKMS_NAME/$DKMS_VER" -k "$k" 2>/dev/null | grep -q ': installed'; then
			pkg_record "dkms-$k" FAIL "dkms status does not say installed for $k (see $log)"
		else
			pkg_record "dkms-$k" PASS "$(cd /lib/modules/"$k"/updates/dkms && echo img_dump.ko* binfmt_img.ko*)"
		fi
	done
}

# pkg_usage_words: the commands and options the installed imgcr's usage
# names, one a line.
pkg_usage_words() {
	imgcr --help | grep -oE '^  imgcr [a-z]+|(^| |\[)--?[a-zA-Z][a-zA-Z-]*' |
		sed -E 's/^  imgcr //; s/^[ [](-)/\1/' | sort -u
}

# pkg_manpages DIR: the imgcr package holds imgcr(8), imgcr-image(5) and
# imgcr-criu(8) (and /usr/bin/imgcr-criu)
# where man finds them, they render without warnings and have whatis
# entries, and imgcr(8) names every command and option of the installed
# imgcr's usage.  Read from the .deb (hosts built from slim images tell
# dpkg not to install man pages).
pkg_manpages() {
	local dir=$1 log=$1/man.log warn=$1/man-warnings.txt x=$1/imgcr-deb page f word missing=""
	: > "$log"
	rm -rf "$x"
	dpkg-deb -x "$dir"/imgcr_*_amd64.deb "$x" || { pkg_record manpages FAIL "cannot unpack the imgcr .deb"; return; }
	[ -x "$x/usr/bin/imgcr-criu" ] || { pkg_record manpages FAIL "the imgcr package has no /usr/bin/imgcr-criu"; return; }
	for page in imgcr.8 imgcr-image.5 imgcr-criu.8; do
		f=$x/usr/share/man/man${page##*.}/$page.gz
		if [ ! -f "$f" ]; then
			pkg_record manpages FAIL "the imgcr package has no /usr/share/man/man${page##*.}/$page.gz"
			return
		fi
		if ! LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" > "$dir/man-$page.txt" 2> "$warn" ||
			[ -s "$warn" ]; then
			pkg_record manpages FAIL "man -l $page: $(head -c 200 "$warn" | tr '\n' '|') (see $warn)"
			return
		fi
		if ! lexgrog "$f" >> "$log" 2>&1; then
			pkg_record manpages FAIL "lexgrog finds no whatis entry in $page (see $log)"
			return
		fi
	done
	for word in $(pkg_usage_words); do
		grep -qF -- "$word" "$dir/man-imgcr.8.txt" || missing="$missing $word"
	done
	if [ -n "$missing" ]; then
		pkg_record manpages FAIL "imgcr(8) does not mention:$missing (from imgcr --help)"
	else
		pkg_record manpages PASS "$(pkg_usage_words | wc -l) commands and options of imgcr --help in imgcr(8)"
	fi
}

# pkg_initrd DIR K OUT: busybox initramfs holding what the packages put on
# this host for kernel K, at the same paths, plus kmod and the counter.
pkg_initrd() {
	local dir=$1 k=$2 out=$3 root=$1/initrd-$2 a f
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,imgcr/bin,imgcr/guest,imgcr/pkg}
	mkdir -p "$root"/usr/{bin,lib,lib64}
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	cp /bin/busybox "$root/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	# Debian's kmod: the kernel runs /sbin/modprobe for request_module().
	copy_elf "$root" /usr/bin/kmod
	for a in modprobe rmmod insmod lsmod modinfo depmod; do
		ln -sf ../usr/bin/kmod "$root/sbin/$a"
	done
	# The modules DKMS installed for K and the indexes its depmod wrote.
	mkdir -p "$root/usr/lib/modules/$k"
	cp -a "/lib/modules/$k/updates" "$root/usr/lib/modules/$k/" || return 1
	cp -a /lib/modules/"$k"/modules.* "$root/usr/lib/modules/$k/" || return 1
	# imgcr-dkms's configuration files and imgcr's tool, as installed.
	for f in $(dpkg -L imgcr-dkms | grep -E '/(modprobe|modules-load)\.d/.') $(dpkg -L imgcr | grep '/bin/'); do
		[ -f "$f" ] && copy_elf "$root" "$f"
	done
	# imgcr-dkms's prerm, as built.
	rm -rf "$dir/control-dkms"
	dpkg-deb -e "$dir"/imgcr-dkms_*_all.deb "$dir/control-dkms" || return 1
	cp "$dir/control-dkms/prerm" "$root/imgcr/pkg/prerm" || return 1
	# The package's autopkgtest (debian/tests/imgcr-check), run with the
	# modules already loaded (its DKMS and modprobe steps need apt).
	cp "$REPO/debian/tests/imgcr-check" "$root/imgcr/pkg/imgcr-check" || return 1
	cp "$dir/counter" "$root/imgcr/bin/counter"
	cp "$REPO/test/guest/lib.sh" "$REPO/test/guest/pkg_check.sh" "$root/imgcr/guest/"
	cp "$REPO/test/guest/init" "$root/init"
	chmod 755 "$root/init"
	printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
	printf 'root:x:0:\n' > "$root/etc/group"
	(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
}

# pkg_guests DIR KERNELS: boot each kernel with its package initramfs (in
# parallel) and record the guest's results as packages/K/NAME.
pkg_guests() {
	local dir=$1 kernels=$2 k log name st why t bad
	for k in $kernels; do
		if ! pkg_initrd "$dir" "$k" "$dir/initrd-$k.cpio.gz" > "$dir/initrd-$k.log" 2>&1; then
			pkg_record "$k/initrd" FAIL "cannot make the package initramfs (see $dir/initrd-$k.log)"
			continue
		fi
		say "[packages] booting $k with the DKMS-installed modules"
		GUEST_TIMEOUT=${IMGCR_PKG_GUEST_TIMEOUT:-300} \
			boot_guest "$k" "$dir/initrd-$k.cpio.gz" "$dir/$k" "imgcr.mode=pkg" &
	done
	wait
	for k in $kernels; do
		log=$dir/$k/console.log
		[ -f "$log" ] || continue
		while read -r _ name st why; do
			case "$st" in PASS | FAIL) pkg_record "$k/${name#pkg-}" "$st" "$why" ;; esac
		done < <(grep -aE '^RESULT [^ ]+ (PASS|FAIL)' "$log")
		for t in pkg-modinfo pkg-boot-load pkg-dump pkg-autoload pkg-modules-load pkg-autopkgtest pkg-prerm-unload; do
			grep -aqE "^RESULT $t (PASS|FAIL)" "$log" && continue
			# Only the first missing one: the rest were skipped after it.
			grep -aqE "^RESULT [^ ]+ FAIL" "$log" && break
			pkg_record "$k/${t#pkg-}" FAIL "no result: guest crashed, hung or was killed (see $log)"
			break
		done
		if ! grep -aq '^IMGCR-DMESG-END' "$log"; then
			pkg_record "$k/dmesg-clean" FAIL "guest did not finish (see $log)"
			continue
		fi
		sed -n '/^IMGCR-DMESG-BEGIN/,/^IMGCR-DMESG-END/p' "$log" > "$dir/$k/dmesg.txt"
		bad=$(grep -aE 'BUG|WARNING|Oops|general protection' "$dir/$k/dmesg.txt" | head -n 3 | tr '\n' '|')
		if [ -n "$bad" ]; then
			pkg_record "$k/dmesg-clean" FAIL "${bad%|} (see $dir/$k/dmesg.txt)"
		else
			pkg_record "$k/dmesg-clean" PASS
		fi
	done
}

# pkg_purge DIR: apt purge; no module file (for any kernel), DKMS entry,
# source tree, index entry or file of the packages may remain.
pkg_purge() {
	local dir=$1 log=$1/purge.log k f left=""
	if ! DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o DPkg::Lock::Timeout=300 imgcr imgcr-dkms > "$log" 2>&1; then
		pkg_record purge FAIL "apt-get purge imgcr imgcr-dkms failed (see $log)"
		pkg_log_tail "$log"
		return 1
	fi
	for k in /lib/modules/*; do
		for f in "$k"/updates/dkms/img_dump.ko* "$k"/updates/dkms/binfmt_img.ko*; do
			[ -e "$f" ] && left="$left $f"
		done
		grep -qE '(img_dump|binfmt_img)\.ko' "$k/modules.dep" 2>/dev/null &&
			left="$left $k/modules.dep"
	done
	[ -n "$(dkms status "$DKMS_NAME" 2>/dev/null)" ] && left="$left dkms:$DKMS_NAME"
	[ -e "/usr/src/$DKMS_NAME-$DKMS_VER" ] && left="$left /usr/src/$DKMS_NAME-$DKMS_VER"
	[ -e /lib/modprobe.d/imgcr.conf ] && left="$left /lib/modprobe.d/imgcr.conf"
	[ -e /usr/lib/modules-load.d/imgcr.conf ] && left="$left /usr/lib/modules-load.d/imgcr.conf"
	[ -e /usr/bin/imgcr ] && left="$left /usr/bin/imgcr"
	if [ -n "$left" ]; then
		pkg_record purge FAIL "left after apt-get purge:$left"
	else
		pkg_record purge PASS
	fi
}

# pkg_link_headers KERNELS: DKMS builds for the kernels whose
# /lib/modules/K/build exists.  The guest kernels' headers are unpacked in
# the cache, not installed (setup-host.sh): link them there for the test,
# as a headers package would, and remove the links afterwards.
PKG_LINKS=""
pkg_link_headers() {
	local k
	for k in $1; do
		[ -e "/lib/modules/$k/build" ] && continue
		if [ ! -d "/lib/modules/$k" ]; then
			mkdir -p "/lib/modules/$k"
			PKG_LINKS="$PKG_LINKS /lib/modules/$k"
		fi
		ln -s "$(kernel_kdir "$k")" "/lib/modules/$k/build"
		PKG_LINKS="$PKG_LINKS /lib/modules/$k/build"
	done
}
pkg_unlink_headers() {
	local l
	for l in $PKG_LINKS; do
		case "$l" in
		*/build) rm -f "$l" ;;
		esac
	done
	for l in $PKG_LINKS; do
		case "$l" in
		*/build) ;;
		*) rm -rf "${l:?}" ;;	# made here: only DKMS's leftovers in it
		esac
	done
	PKG_LINKS=""
}

# test_packages KERNELS: the whole test; packages and logs in $BUILD/pkg.
test_packages() {
	local kernels=$1 dir=$BUILD/pkg start=$SECONDS
	say "[packages] make deb, lintian, apt install (DKMS for: $kernels), guests, purge; logs in $dir"
	mkdir -p "$dir"
	pkg_build "$dir" || return
	gcc -static -O2 -Wall -Wextra -Werror -std=gnu11 -o "$dir/counter" \
		"$REPO/test/progs/counter.c" || die "cannot build test/progs/counter.c"
	pkg_lintian "$dir"
	dkms_lock
	pkg_link_headers "$kernels"
	if pkg_install "$dir" "$kernels"; then
		pkg_manpages "$dir"
		pkg_guests "$dir" "$kernels"
	fi
	pkg_purge "$dir"
	pkg_unlink_headers
	dkms_unlock
	say "[packages] done in $((SECONDS - start)) s"
}
