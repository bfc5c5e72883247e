# Host-side pieces shared by test/run.sh and test/demo.sh (bash).
# Everything here runs as root on a Debian 12 host prepared by setup-host.sh.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${IMGCR_BUILD:-$REPO/build}
LOGS=$BUILD/logs
CACHE=${IMGCR_CACHE:-/var/cache/imgcr}
. "$REPO/test/kernels.sh"	# ALL_KERNELS, kernel_spec, kernel_release
DKMS_NAME=imgcr
DKMS_VER=0.1
GUEST_TIMEOUT=${IMGCR_GUEST_TIMEOUT:-2400}  # seconds per guest boot (a deadline for hangs; the whole suite with the state check took 1230 s on 6.12)
RESULTS=$BUILD/results.txt                 # "STATUS<TAB>NAME<TAB>REASON"

say()  { printf '==> %s\n' "$*"; }
warn() { printf '==> WARNING: %s\n' "$*" >&2; }
die()  { printf '==> ERROR: %s\n' "$*" >&2; exit 1; }

# record NAME PASS|FAIL [REASON]
record() {
	printf '%s\t%s\t%s\n' "$2" "$1" "${3:-}" >> "$RESULTS"
}

# summary: print every result, then exactly "N passed, N failed" as the last
# line; returns nonzero if anything failed (or nothing ran).
summary() {
	local st name why p=0 f=0
	echo
	while IFS=$'\t' read -r st name why; do
		if [ "$st" = PASS ]; then
			p=$((p + 1))
			printf 'PASS  %s%s\n' "$name" "${why:+  ($why)}"
		else
			f=$((f + 1))
			printf 'FAIL  %s: %s\n' "$name" "$why"
		fi
	done < "$RESULTS"
	echo "$p passed, $f failed"
	[ "$f" = 0 ] && [ "$p" -gt 0 ]
}

# kernel_ok K: K is one of the supported guest kernels.
kernel_ok() {
	case " $ALL_KERNELS " in *" $1 "*) return 0 ;; esac
	return 1
}

# host_setup [KERNELS]: packages, guest kernels and build chroots for
# KERNELS (default: all).
host_setup() {
	[ "$(id -u)" = 0 ] || die "must run as root (in a root shell: $0)"
	say "setting up the host (test/setup-host.sh)"
	IMGCR_KERNELS="${1:-$ALL_KERNELS}" sh "$REPO/test/setup-host.sh" || die "setup-host.sh failed"
}

# kernel_root K: where K's modules are built: "/" (the host) or the chroot
# of K's release.  kernel_kdir K: K's kbuild tree, as seen from there.
kernel_root() {
	local rel
	rel=$(kernel_release "$1")
	if [ "$rel" = bookworm ]; then echo /; else echo "$CACHE/chroots/$rel"; fi
}
kernel_kdir() {
	if [ "$(kernel_root "$1")" = / ]; then
		echo "$CACHE/$1/headers/usr/src/linux-headers-$1"
	else
		echo "/usr/src/linux-headers-$1"
	fi
}

# in_root ROOT CMD...: CMD on the host or in the chroot ROOT (with /proc
# there while it runs; one user of a chroot at a time).
in_root() {
	local root=$1
	shift
	if [ "$root" = / ]; then
		"$@"
		return
	fi
	(
		flock 9 || exit 1
		mount -t proc proc "$root/proc" || exit 1
		chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
		rc=$?
		umount "$root/proc"
		exit $rc
	) 9> "$root.lock"
}

# build_progs: the test programs, into $BUILD/progs.  Warnings are errors:
# the programs must stay -Wall -Wextra clean.  All are static except the
# few that exist to exercise dynamic linking (mappings, libuser); those
# get their shared libraries in the guest through copy_elf.
# libimgcrtest.c is t_libreplace's shared library, built twice into
# $BUILD/lib: libimgcrtest.so (version 1) and libimgcrtest-v2.so.
build_progs() {
	local c n v extra link cflags="-O2 -g -Wall -Wextra -Werror -std=gnu11"
	mkdir -p "$BUILD/progs" "$BUILD/lib" "$BUILD/criu-gen"
	say "building test programs into $BUILD/progs"
	# imgcr-criu's messages (userspace/criu/rpc.proto), for it and criurpc.c
	protoc-c --proto_path="$REPO/userspace/criu" --c_out="$BUILD/criu-gen" \
		"$REPO/userspace/criu/rpc.proto" || die "cannot compile userspace/criu/rpc.proto (protoc-c)"
	for v in 1 2; do
		gcc -shared -fPIC $cflags -DIMGCR_LIB_VERSION=$v \
			-o "$BUILD/lib/libimgcrtest$([ $v = 1 ] || echo -v$v).so" \
			"$REPO/test/progs/libimgcrtest.c" || die "cannot build libimgcrtest.c"
	done
	for c in "$REPO"/test/progs/*.c; do
		n=$(basename "$c" .c)
		extra=""
		link=-static
		case "$n" in
		libimgcrtest) continue ;;
		criurpc) extra="-I$BUILD/criu-gen $BUILD/criu-gen/rpc.pb-c.c -lprotobuf-c" ;;
		threads) extra=-pthread ;;
		mappings | silentdyn) link="" ;;
		# $ORIGIN: the test runs a copy next to its own copy of the
		# library; $ORIGIN/../lib: /imgcr/bin -> /imgcr/lib.
		libuser) link=""; extra="-L$BUILD/lib -limgcrtest -Wl,-rpath,\$ORIGIN:\$ORIGIN/../lib" ;;
		esac
		gcc $link $cflags -o "$BUILD/progs/$n" "$c" $extra -lm ||
			die "cannot build $c"
	done
	# The imgcr tool, static, next to the programs (/imgcr/bin in the
	# guest); built from the sources directly so userspace/ stays clean.
	gcc -static -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
		-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
		-I"$REPO/include/uapi" -o "$BUILD/progs/imgcr" "$REPO"/userspace/*.c ||
		die "cannot build the imgcr tool (userspace/)"
	# imgcr-criu: the same sources but imgcr.c (its main), criu/ and the
	# generated messages, with Debian's static libprotobuf-c.a
	gcc -static -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
		-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
		-I"$REPO/include/uapi" -I"$REPO/userspace" -I"$BUILD/criu-gen" \
		-o "$BUILD/progs/imgcr-criu" $(ls "$REPO"/userspace/*.c | grep -v '/imgcr\.c$') \
		$(ls "$REPO"/userspace/criu/*.c | grep -v "pb-c") "$BUILD/criu-gen/rpc.pb-c.c" -lprotobuf-c ||
		die "cannot build imgcr-criu (userspace/criu/)"
}

# copy_elf ROOT FILE [DEST]: copy the executable or library FILE to
# ROOT/DEST (default: the same path) and every shared library it needs
# (its ldd closure) to the same paths under ROOT as on the host.
copy_elf() {
	local root=$1 f=$2 dst=${3:-$2} lib libs
	mkdir -p "$root$(dirname "$dst")"
	# Timestamps kept: images map these files, and a restore on another
	# kernel's guest (the cross-kernel tests) needs the same size and mtime.
	cp -L --preserve=timestamps "$f" "$root$dst" || die "cannot copy $f"
	libs=$(ldd "$f" 2>/dev/null | grep -o '/[^ ]*') || return 0   # static
	for lib in $libs; do
		case "$lib" in "$BUILD"/*) continue ;; esac   # the test's own
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L --preserve=timestamps "$lib" "$root$lib" || die "cannot copy $lib (needed by $f)"
	done
}

# add_daemons ROOT: Debian's redis-server, redis-cli and memcached
# (t_daemon_user), taken from the packages in apt's cache
# (apt-get download redis-server redis-tools memcached libjemalloc2 liblzf1
# puts them there), with the libraries of those packages; the host's
# ldd closure for the rest.  Skipped, with a note, if a package is missing:
# the test then reports the daemons as skipped.
add_daemons() {
	local root=$1 x=$BUILD/daemons d p lib
	rm -rf "$x"
	mkdir -p "$x"
	for p in redis-server redis-tools memcached libjemalloc2 liblzf1; do
		d=$(ls /var/cache/apt/archives/${p}_*_amd64.deb 2>/dev/null | tail -n 1)
		if [ -z "$d" ]; then
			warn "no $p package in /var/cache/apt/archives: t_daemon_user skips redis and memcached"
			return 0
		fi
		dpkg -x "$d" "$x" || die "cannot unpack $d"
	done
	for lib in "$x"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "$x"/usr/lib/x86_64-linux-gnu/liblzf.so.1; do
		mkdir -p "$root/usr/lib/x86_64-linux-gnu"
		cp -L --preserve=timestamps "$lib" "$root/usr/lib/x86_64-linux-gnu/" || die "cannot copy $lib"
	done
	for p in redis-server redis-cli memcached; do
		LD_LIBRARY_PATH=$x/usr/lib/x86_64-linux-gnu copy_elf "$root" "$x/usr/bin/$p" "/usr/bin/$p"
	done
	rm -rf "$root$x"	# copy_elf's copies of the packages' libraries at the unpacked path
}

# add_runc ROOT: Debian's runc (t_criu_runc) from apt's cache (setup-host.sh
# downloads it; its libseccomp2 is the host's), as /usr/sbin/runc.
# Skipped, with a note, if the package is missing: the test then reports
# runc as skipped.
add_runc() {
	local root=$1 x=$BUILD/runc d
	rm -rf "$x"
	mkdir -p "$x"
	d=$(ls /var/cache/apt/archives/runc_*_amd64.deb 2>/dev/null | tail -n 1)
	if [ -z "$d" ]; then
		warn "no runc package in /var/cache/apt/archives: the runc tests skip"
		return 0
	fi
	dpkg -x "$d" "$x" || die "cannot unpack $d"
	copy_elf "$root" "$x/usr/sbin/runc" /usr/sbin/runc
}

# add_podman ROOT: Debian 12's podman (t_podman) with conmon, its
# libraries the host lacks (libgpgme11, libsubid4) and the configuration
# files it reads (containers-common's containers.conf and seccomp.json,
# containers-image's policy.json), from apt's cache (setup-host.sh
# downloads them; runc is add_runc's).  The rest of the ldd closure is
# the host's.  podman is 32 MB (15.6 MB more of the gzip'ed initramfs:
# 76.9 -> 92.5 MB): added only when t_podman is selected ($GUEST_SEL,
# run.sh's; bench.sh and demo.sh never add it).  Skipped, with a note, if
# a package is missing: t_podman then reports itself skipped.
add_podman() {
	local root=$1 x=$BUILD/podman d p lib
	grep -qx podman <<< "${GUEST_SEL:-}" || return 0
	rm -rf "$x"
	mkdir -p "$x"
	for p in podman conmon golang-github-containers-common golang-github-containers-image libgpgme11 libsubid4; do
		d=$(ls /var/cache/apt/archives/${p}_*_*.deb 2>/dev/null | tail -n 1)
		if [ -z "$d" ]; then
			warn "no $p package in /var/cache/apt/archives: t_podman skips"
			return 0
		fi
		dpkg -x "$d" "$x" || die "cannot unpack $d"
	done
	LD_LIBRARY_PATH=$x/usr/lib/x86_64-linux-gnu copy_elf "$root" "$x/usr/bin/podman" /usr/bin/podman
	copy_elf "$root" "$x/usr/bin/conmon" /usr/bin/conmon
	for lib in libgpgme.so.11 libsubid.so.4; do
		cp -L --preserve=timestamps "$x/usr/lib/x86_64-linux-gnu/$lib" "$root/usr/lib/x86_64-linux-gnu/" ||
			die "cannot copy $lib"
	done
	mkdir -p "$root/etc/containers" "$root/usr/share/containers"
	cp "$x/etc/containers/policy.json" "$root/etc/containers/" &&
		cp "$x/usr/share/containers/containers.conf" "$x/usr/share/containers/seccomp.json" "$root/usr/share/containers/" ||
		die "cannot copy podman's configuration files"
	rm -rf "$root$x"	# copy_elf's copies of the packages' libraries at the unpacked path
}

# add_python ROOT: Debian's python3 (t_python) as /usr/bin/python3, with its
# libraries and its standard library minus tests, GUIs, the static
# libpython and other things the guest never imports.
add_python() {
	local root=$1 py pyname
	py=$(readlink -f /usr/bin/python3) || die "no /usr/bin/python3 (setup-host.sh installs python3)"
	pyname=${py##*/}
	[ -d "/usr/lib/$pyname" ] || die "no /usr/lib/$pyname"
	copy_elf "$root" "$py" "/usr/bin/$pyname"
	ln -sf "$pyname" "$root/usr/bin/python3"
	tar -C / --exclude="usr/lib/$pyname/test" --exclude="usr/lib/$pyname/idlelib" \
		--exclude="usr/lib/$pyname/tkinter" --exclude="usr/lib/$pyname/turtledemo" \
		--exclude="usr/lib/$pyname/ensurepip" --exclude="usr/lib/$pyname/lib2to3" \
		--exclude="usr/lib/$pyname/pydoc_data" --exclude="usr/lib/$pyname/config-*" \
		--exclude="usr/lib/$pyname/lib-dynload/_test*" --exclude="usr/lib/$pyname/site-packages" \
		-cf - "usr/lib/$pyname" | tar -C "$root" -xf - || die "cannot copy /usr/lib/$pyname"
}

# dkms_lock / dkms_unlock: DKMS's imgcr/0.1 and /usr/src/imgcr-0.1 are
# global, shared by suites run side by side: build_modules and the packages
# test (which installs imgcr-dkms, also imgcr/0.1) take turns on this lock.
DKMS_LOCK=/run/lock/imgcr-dkms.lock
dkms_lock() {
	exec 9> "$DKMS_LOCK" || die "cannot open $DKMS_LOCK"
	flock -n 9 && return 0
	say "waiting for another suite's DKMS use to end ($DKMS_LOCK)"
	flock 9
}
dkms_unlock() { exec 9>&-; }

# build_modules K: build img_dump.ko/binfmt_img.ko for kernel K with DKMS
# (recording dkms-build-K) and leave plain .ko files in $BUILD/mod/K.  If
# DKMS fails but module/ exists, fall back to a direct kbuild build so the
# guest tests still say something about the code (dkms-build-K stays FAIL).
build_modules() {
	local k=$1 log=$LOGS/$1/dkms.log out=$BUILD/mod/$1 root kdir stage
	local dst=/var/lib/dkms/$DKMS_NAME/$DKMS_VER/$1/x86_64/module f ok=1 warned=""
	root=$(kernel_root "$k")
	kdir=$(kernel_kdir "$k")
	rm -rf "$out"
	mkdir -p "$out" "$LOGS/$k"
	: > "$log"
	if [ "${IMGCR_NO_DKMS:-0}" = 1 ]; then
		# Developers running several suites at once: DKMS state is
		# global, so build with kbuild only (no dkms-build-K result).
		say "[$k] building modules with kbuild (IMGCR_NO_DKMS=1)"
		kbuild_fallback "$k" "$out"
		ls "$out"/*.ko >/dev/null 2>&1 || warn "[$k] no modules: the module tests will FAIL"
		return
	fi
	say "[$k] building modules with DKMS$([ "$root" = / ] || echo " in the chroot $root") (log: $log)"
	if [ ! -f "$REPO/dkms.conf" ]; then
		record "dkms-build-$k" FAIL "no dkms.conf in the repository"
		ok=0
	else
		# dkms add copies the whole tree ("cp -r dir/*"): give it the
		# sources without build/ and .git, and drop a stale copy first.
		# In a chroot the staged copy lives in its /tmp.
		if [ "$root" = / ]; then stage=$BUILD/dkms-src; else stage=/tmp/imgcr-dkms-src; fi
		rm -rf "${root%/}$stage"
		mkdir -p "${root%/}$stage"
		tar -C "$REPO" --exclude='./build*' --exclude=./.git -cf - . | tar -C "${root%/}$stage" -xf -
		dkms_lock
		{
			in_root "$root" sh -c '
				dkms remove "$1" --all || true
				rm -rf "/usr/src/$2"
				dkms add "$3" &&
					dkms build "$1" -k "$4" --kernelsourcedir "$5"' sh \
				"$DKMS_NAME/$DKMS_VER" "$DKMS_NAME-$DKMS_VER" "$stage" "$k" "$kdir"
		} >> "$log" 2>&1 || ok=0
		if [ "$ok" = 1 ]; then
			for f in "${root%/}$dst"/*.ko "${root%/}$dst"/*.ko.xz "${root%/}$dst"/*.ko.zst; do
				[ -e "$f" ] || continue
				case "$f" in
				*.xz) xz -dc "$f" > "$out/$(basename "$f" .xz)" ;;
				*.zst) in_root "$root" zstd -dc "${f#"${root%/}"}" > "$out/$(basename "$f" .zst)" ;;
				*) cp "$f" "$out/" ;;
				esac
			done
			for f in img_dump binfmt_img; do
				[ -f "$out/$f.ko" ] || { ok=0; echo "missing $f.ko in ${root%/}$dst" >> "$log"; }
			done
			# Warnings are errors in the suite's builds (not in a
			# package's: a newer compiler must not break it).  The
			# modules are still used.
			f="${root%/}/var/lib/dkms/$DKMS_NAME/$DKMS_VER/$k/x86_64/log/make.log"
			if grep -q 'warning:' "$f" 2> /dev/null; then
				cp "$f" "$LOGS/$k/dkms-make.log"
				warned=$(grep -m 1 'warning:' "$f")
			fi
		fi
		[ "$ok" = 1 ] || cp "${root%/}/var/lib/dkms/$DKMS_NAME/$DKMS_VER/build/make.log" "$LOGS/$k/dkms-make.log" 2>/dev/null
		dkms_unlock
		if [ "$ok" = 1 ] && [ -n "$warned" ]; then
			record "dkms-build-$k" FAIL "compiler warnings (errors in the suite), see $LOGS/$k/dkms-make.log: $warned"
		elif [ "$ok" = 1 ]; then
			record "dkms-build-$k" PASS
		else
			record "dkms-build-$k" FAIL "see $log$( [ -f "$LOGS/$k/dkms-make.log" ] && echo " and $LOGS/$k/dkms-make.log")"
		fi
	fi
	if [ "$ok" = 0 ]; then
		tail -n 15 "$log" | sed 's/^/    /'
		kbuild_fallback "$k" "$out"
	fi
	ls "$out"/*.ko >/dev/null 2>&1 || warn "[$k] no modules: the module tests will FAIL"
}

kbuild_fallback() {
	local k=$1 out=$2 log=$LOGS/$1/kbuild.log root src
	root=$(kernel_root "$k")
	[ -f "$REPO/module/Makefile" ] || [ -f "$REPO/module/Kbuild" ] || return 0
	[ "${IMGCR_NO_DKMS:-0}" = 1 ] ||
		warn "[$k] DKMS failed; trying a plain kbuild build of module/ (log: $log)"
	# Build a copy: kbuild writes objects next to the sources.  For a
	# chroot kernel the copy is in the chroot's /tmp.
	if [ "$root" = / ]; then src=$BUILD/kbuild-$k; else src=/tmp/imgcr-kbuild-$k; fi
	rm -rf "${root%/}$src"
	mkdir -p "${root%/}$src"
	tar -C "$REPO" --exclude='./build*' --exclude=./.git -cf - . | tar -C "${root%/}$src" -xf -
	if in_root "$root" make -C "$(kernel_kdir "$k")" M="$src/module" modules > "$log" 2>&1; then
		find "${root%/}$src/module" -name '*.ko' -exec cp {} "$out/" \;
	else
		tail -n 15 "$log" | sed 's/^/    /'
	fi
}

# make_initrd K OUT: busybox initramfs with the modules of K, the test
# programs and test/guest/ (with its area folders), as a gzip'ed newc cpio.
make_initrd() {
	local k=$1 out=$2 root=$BUILD/initrd-$1 a
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,imgcr/bin,imgcr/mod,imgcr/guest}
	cp /bin/busybox "$root/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	# Shared libraries go where the host has them; /lib and /lib64 are
	# symlinks into /usr as on a merged-/usr Debian host.
	mkdir -p "$root"/usr/{bin,lib,lib64} "$root/imgcr/lib"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	for a in "$BUILD"/progs/*; do
		copy_elf "$root" "$a" "/imgcr/bin/${a##*/}"
	done
	cp -p "$BUILD"/lib/*.so "$root/imgcr/lib/"
	copy_elf "$root" /bin/bash /usr/bin/bash
	copy_elf "$root" /usr/bin/xz /usr/bin/xz	# t_xz: multi-threaded encoder
	add_python "$root"
	add_daemons "$root"
	cp -r "$REPO"/test/guest/* "$root/imgcr/guest/"	# the tests in their area folders
	cp "$REPO/test/state-expected.txt" "$root/imgcr/state-expected.txt"
	cp "$REPO/test/guest/init" "$root/init"
	chmod 755 "$root/init"
	cp "$BUILD/mod/$k"/*.ko "$root/imgcr/mod/" 2>/dev/null
	# sock_diag for unix, TCP, UDP, raw, netlink and packet sockets (imgcr dump asks it; a Debian
	# system loads these modules on the first request, the guest has no
	# modprobe), and nf_tables for the network lock of established TCP
	# connections (sk-tcp.c runs nft): in load order, uncompressed for
	# busybox insmod (a module built into the kernel is simply absent).
	mkdir -p "$root/imgcr/mod/net"
	# veth, llc, stp and bridge: the network of the container tests.
	for a in net/unix/unix_diag net/ipv4/inet_diag net/ipv4/tcp_diag net/ipv4/udp_diag net/ipv4/raw_diag \
		 net/netlink/netlink_diag net/packet/af_packet_diag \
		 crypto/crc32c_generic lib/libcrc32c net/netfilter/nfnetlink net/netfilter/nf_tables \
		 drivers/net/veth net/llc/llc net/802/stp net/bridge/bridge; do
		if [ -f "$CACHE/$k/modules/kernel/$a.ko" ]; then
			cp "$CACHE/$k/modules/kernel/$a.ko" "$root/imgcr/mod/net/"
		elif [ -f "$CACHE/$k/modules/kernel/$a.ko.xz" ]; then
			xz -dc "$CACHE/$k/modules/kernel/$a.ko.xz" > "$root/imgcr/mod/net/${a##*/}.ko"
		fi
	done
	# nft (Debian's nftables) for that lock
	[ -x /usr/sbin/nft ] || die "no /usr/sbin/nft (setup-host.sh installs nftables)"
	copy_elf "$root" /usr/sbin/nft /usr/sbin/nft
	# util-linux's unshare/nsenter/ipcmk/ipcs (busybox's lack --cgroup,
	# --time, IPC) and iproute2's ip (veth, netns): the container tests
	for a in /usr/bin/unshare /usr/bin/nsenter /usr/bin/ipcmk /usr/bin/ipcs /usr/sbin/ip; do
		[ -x "$a" ] || die "no $a (setup-host.sh installs util-linux and iproute2)"
		copy_elf "$root" "$a" "/usr/sbin/${a##*/}"
	done
	add_runc "$root"
	add_podman "$root"
	printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n' > "$root/etc/passwd"
	printf 'root:x:0:\nuser:x:1000:\n' > "$root/etc/group"
	(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
}

# The kernel's own memory checkers (issue 25), as boot options of every
# test guest, chosen by K's config: KFENCE (CONFIG_KFENCE; Debian builds it
# with a sample interval of 0, i.e. off, on 6.12 and later, not at all on
# 6.1) with a short interval; SLUB debugging (CONFIG_SLUB_DEBUG, all four)
# with sanity checks, red zones, poisoning and owner tracking; page
# poisoning (CONFIG_PAGE_POISONING, all four), checked on every
# allocation; init_on_free=1 (every kernel since 5.3; page poisoning
# takes precedence over it: "mem auto-init: CONFIG_PAGE_POISONING is on,
# will take precedence over init_on_alloc and init_on_free").  Debian
# builds none with CONFIG_DEBUG_KMEMLEAK or KASAN.  A report of any of
# them fails dmesg-clean-K (KERNEL_REPORT_RE).  IMGCR_CHECKERS=0: none;
# IMGCR_KFENCE_MS: the KFENCE interval (default 10 ms).
kernel_config() {
	local c
	c="$(kernel_root "$1")$(kernel_kdir "$1")/.config"
	c=${c#/}
	[ -f "/$c" ] && echo "/$c"
}
checker_opts() {
	local k=$1 cfg opts=""
	[ "${IMGCR_CHECKERS:-1}" = 1 ] || return 0
	cfg=$(kernel_config "$k") || { warn "[$k] no kernel config: no memory checkers"; return 0; }
	grep -q '^CONFIG_KFENCE=y' "$cfg" && opts="$opts kfence.sample_interval=${IMGCR_KFENCE_MS:-10}"
	grep -q '^CONFIG_SLUB_DEBUG=y' "$cfg" && opts="$opts slub_debug=FZPU"
	grep -q '^CONFIG_PAGE_POISONING=y' "$cfg" && opts="$opts page_poison=1"
	opts="$opts init_on_free=1"
	grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$cfg" && opts="$opts kmemleak=on"
	echo "${opts# }"
}

# KERNEL_REPORT_RE: the lines of a kernel report in dmesg (BUG, WARNING,
# Oops, GPF; KFENCE "BUG: KFENCE: ..."; SLUB "BUG kmalloc-64 (...): Right
# Redzone overwritten", "Poison overwritten", "Object padding overwritten",
# "Freepointer corrupt"; page poisoning "pagealloc: memory corruption";
# kmemleak "unreferenced object"; list and refcount checks).  The same
# expression is in test/guest/lib.sh for the tests that check the log
# of their own run.
KERNEL_REPORT_RE='BUG|WARNING|Oops|general protection|KFENCE:|Redzone|Poison overwritten|Object padding|Padding overwritten|Freepointer|pagealloc: memory corruption|unreferenced object|kmemleak:.*(leak|suspected)|refcount_t|list_(add|del) corruption|corrupted stack end|stack-protector'

# boot_guest K INITRD LOGDIR APPEND: boot the guest under TCG with a
# deadline.  ttyS0 (console) -> LOGDIR/console.raw, ttyS1 (files) ->
# LOGDIR/ttyS1.raw.  Shows RESULT/INFO/DEMO lines live, prefixed with K.
# GUEST_MEM_MIB (default 2048): the guest's memory.
boot_guest() {
	local k=$1 initrd=$2 dir=$3 append=$4 qpid rc
	local vmlinuz=$CACHE/$k/vmlinuz
	[ -f "$vmlinuz" ] || die "no guest kernel $vmlinuz (setup-host.sh failed?)"
	mkdir -p "$dir"
	: > "$dir/console.raw"
	: > "$dir/ttyS1.raw"
	timeout -k 10 "$GUEST_TIMEOUT" qemu-system-x86_64 \
		-accel tcg -cpu max -m "${GUEST_MEM_MIB:-2048}" -smp 1 \
		-display none -monitor none -no-reboot \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet $(checker_opts "$k") $append" \
		-serial "file:$dir/console.raw" -serial "file:$dir/ttyS1.raw" \
		< /dev/null > "$dir/qemu.log" 2>&1 &
	qpid=$!
	tail -n +1 -F --pid="$qpid" "$dir/console.raw" 2>/dev/null |
		tr -d '\r' | grep --line-buffered -E '^(RESULT|INFO|DEMO|BENCH|IMGCR-GUEST|IMGCR-TEST-BEGIN)' |
		sed -u "s/^/[$k] /" &
	wait "$qpid"
	rc=$?
	wait
	[ "$rc" = 124 ] && warn "[$k] guest killed after ${GUEST_TIMEOUT}s"
	tr -d '\r' < "$dir/console.raw" > "$dir/console.log"
	return 0
}

# extract_files DIR: decode the files the guest sent over ttyS1 into DIR/.
extract_files() {
	local dir=$1 name
	for name in $(tr -d '\r' < "$dir/ttyS1.raw" | sed -n 's/^IMGCR-FILE-BEGIN //p'); do
		tr -d '\r' < "$dir/ttyS1.raw" |
			sed -n "/^IMGCR-FILE-BEGIN $name\$/,/^IMGCR-FILE-END $name\$/p" |
			sed '1d;$d' | base64 -d | gunzip > "$dir/$name" 2>/dev/null ||
			{ warn "cannot decode $name from the guest"; rm -f "$dir/$name"; }
	done
}

# guest_test_files: every guest test, test/guest/AREA/t_NAME.sh (one not yet
# filed in an area: test/guest/t_NAME.sh; test/guest/README), in name order
# whatever its folder, as the guest runner orders them.
guest_test_files() {
	local t
	for t in "$REPO"/test/guest/t_*.sh "$REPO"/test/guest/*/t_*.sh; do
		[ -e "$t" ] && echo "${t##*/} $t"
	done | LC_ALL=C sort | cut -d' ' -f2
}

# guest_test_dups: the names of guest tests found twice (in two folders).
guest_test_dups() {
	guest_test_files | sed 's,.*/,,' | LC_ALL=C sort | uniq -d
}

# guest_tests PATTERNS: names of the guest tests selected by PATTERNS (the
# same comma-separated globs the guest runner applies).
guest_tests() {
	local t n pat pats
	IFS=, read -ra pats <<< "$1"
	for t in $(guest_test_files); do
		n=${t##*/t_}
		n=${n%.sh}
		for pat in "${pats[@]}"; do
			# shellcheck disable=SC2254
			case "$n" in $pat) echo "$n"; break ;; esac
		done
	done
}

# unit_tests PATTERNS: names of the host unit tests (test/unit/NAME.sh: no
# guest, seconds; also `make check`) selected by PATTERNS.
unit_tests() {
	local t n pat pats
	IFS=, read -ra pats <<< "$1"
	for t in "$REPO"/test/unit/*.sh; do
		[ -e "$t" ] || continue
		n=${t##*/}
		n=${n%.sh}
		for pat in "${pats[@]}"; do
			# shellcheck disable=SC2254
			case "$n" in $pat) echo "$n"; break ;; esac
		done
	done
}

# run_unit NAME: run test/unit/NAME.sh, its "RESULT name PASS|FAIL why"
# lines recorded as results (and NAME itself FAIL if it gave none).
run_unit() {
	local out st name why n=0
	out=$("$REPO/test/unit/$1.sh" 2>&1)
	while read -r _ name st why; do
		record "$name" "$st" "$why"
		n=$((n + 1))
	done < <(grep '^RESULT ' <<< "$out")
	if [ "$n" = 0 ]; then
		record "$1" FAIL "no result: $(tail -n 3 <<< "$out" | tr '\n' '|')"
	fi
}

# host_tests PATTERNS: names of the host tests (run on the host after the
# guests; test/lib-packages.sh) selected by PATTERNS.
host_tests() {
	local n pat pats
	IFS=, read -ra pats <<< "$1"
	for n in $PKG_TESTS; do
		for pat in "${pats[@]}"; do
			# shellcheck disable=SC2254
			case "$n" in $pat) echo "$n"; break ;; esac
		done
	done
}

# parse_guest K DIR PATTERNS: turn the console log into results: every
# RESULT line (prefixed "K/"), a FAIL for every selected test that never
# reported, and dmesg-clean-K.
parse_guest() {
	local k=$1 dir=$2 sel=$3 log=$2/console.log name st why t
	while read -r _ name st why; do
		case "$st" in PASS | FAIL) record "$k/$name" "$st" "$why" ;; esac
	done < <(grep -aE '^RESULT [^ ]+ (PASS|FAIL)' "$log")
	grep -a '^INFO ' "$log" > "$dir/info.txt"
	for t in $(guest_tests "$sel"); do
		grep -aqE "^RESULT $t(-[^ ]*)? (PASS|FAIL)" "$log" ||
			record "$k/$t" FAIL "no result: guest crashed, hung or was killed (see $log)"
	done
	if ! grep -aq '^IMGCR-GUEST-DONE' "$log" || ! grep -aq '^IMGCR-DMESG-END' "$log"; then
		record "dmesg-clean-$k" FAIL "guest did not finish (no end markers; see $log)"
		return
	fi
	check_dmesg "dmesg-clean-$k" "$dir"
}

# check_dmesg NAME DIR: the result NAME for the guest's kernel log (between
# the markers in DIR/console.log): no kernel report (KERNEL_REPORT_RE: BUG,
# WARNING, Oops, GPF, KFENCE, SLUB debugging, page poisoning, kmemleak).
check_dmesg() {
	local name=$1 dir=$2 log=$2/console.log bad
	sed -n '/^IMGCR-DMESG-BEGIN/,/^IMGCR-DMESG-END/p' "$log" > "$dir/dmesg.txt"
	# A user-space fault is reported as "traps: NAME[PID] general protection
	# fault ip:... in NAME[...]": that is a process dying (fuzzed images do),
	# not the kernel.  Every other match fails the run.
	bad=$(grep -aE "$KERNEL_REPORT_RE" "$dir/dmesg.txt" |
		grep -avE '\] traps: [^ ]+\[[0-9]+\] general protection fault ip:[0-9a-f]+ sp:[0-9a-f]+ error:[0-9a-f]+( in [^ ]+)?' |
		head -n 3 | tr '\n' '|')
	if [ -n "$bad" ]; then
		record "$name" FAIL "${bad%|} (see $dir/dmesg.txt)"
	else
		record "$name" PASS
	fi
}

# check_threads_image K DIR: gdb on the multi-threaded image t_threads_work
# exported: every thread listed with its TID, and "thread apply all bt"
# reaching each worker's function.
check_threads_image() {
	local k=$1 img=$2/threads.img txt=$2/threads.txt out t want n
	if [ ! -s "$img" ] || [ ! -s "$txt" ]; then
		record "gdb-threads-$k" FAIL "no thread image came back from the guest"
		return
	fi
	out=$(timeout 120 gdb -nx -batch "$BUILD/progs/mtwork" -c "$img" \
		-ex 'info threads' -ex 'thread apply all bt' 2>&1)
	echo "$out" > "$2/gdb-threads.txt"
	want=$(sed -n 's/^pid [0-9]* tids //p' "$txt" | tr -d '\r')
	for t in $(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$txt") $want; do
		if ! grep -qE "^[* ] +[0-9]+ +(Thread .*\(LWP $t\)|LWP $t) " <<< "$out"; then
			record "gdb-threads-$k" FAIL "thread $t not in gdb's 'info threads' (see $2/gdb-threads.txt)"
			return
		fi
	done
	n=$(echo "$out" | grep -cE '^#[0-9]+ .* (worker|run_sse2|run_avx2) \(')
	if [ "$n" -lt "$(echo $want | wc -w)" ]; then
		record "gdb-threads-$k" FAIL "only $n worker frames in 'thread apply all bt' (see $2/gdb-threads.txt)"
		return
	fi
	record "gdb-threads-$k" PASS "$(echo $want | wc -w) threads besides main, $n worker frames"
}

# check_image K DIR: host tools on the counter image the guest exported.
check_image() {
	local k=$1 img=$2/counter.img out
	if [ ! -s "$img" ]; then
		for t in readelf gdb-regs gdb-bt; do
			record "$t-$k" FAIL "no counter image came back from the guest"
		done
		return
	fi
	out=$(readelf -a "$img" 2>&1)
	echo "$out" > "$2/readelf.txt"
	if ! grep -qE 'Type:[[:space:]]+CORE' <<< "$out"; then
		record "readelf-$k" FAIL "not an ELF core (see $2/readelf.txt)"
	elif ! grep -q NT_PRSTATUS <<< "$out"; then
		record "readelf-$k" FAIL "no NT_PRSTATUS note (see $2/readelf.txt)"
	elif ! readelf -a "$img" > /dev/null 2>&1; then
		record "readelf-$k" FAIL "readelf -a exits nonzero (see $2/readelf.txt)"
	else
		record "readelf-$k" PASS
	fi
	out=$(timeout 120 gdb -nx -batch -c "$img" -ex 'info registers' 2>&1)
	echo "$out" > "$2/gdb-regs.txt"
	if grep -qE '^rip +0x[0-9a-f]+' <<< "$out"; then
		record "gdb-regs-$k" PASS "$(echo "$out" | grep -E '^rip ' | tr -s ' ' | cut -c1-60)"
	else
		record "gdb-regs-$k" FAIL "no rip in 'info registers' (see $2/gdb-regs.txt)"
	fi
	out=$(timeout 120 gdb -nx -batch "$BUILD/progs/counter" -c "$img" -ex bt 2>&1)
	echo "$out" > "$2/gdb-bt.txt"
	if grep -qE '^#[0-9]+ +(0x[0-9a-f]+ in )?main \(' <<< "$out"; then
		record "gdb-bt-$k" PASS
	else
		record "gdb-bt-$k" FAIL "no frame in main (see $2/gdb-bt.txt)"
	fi
}

# The cross-kernel tests (issue 13).  Phase 1 is the guest test
# t_xkernel_dump on every kernel: it sends xkernel.tar (the images of
# counter, vdsoclock and python, their output so far, meta.txt) to the host.
# Phase 2, xkernel_phase KERNELS: for every kernel K, K's own initramfs plus
# a second cpio archive (the kernel unpacks concatenated archives) holding
# the other kernels' images in /imgcr/xk/J/, booted with imgcr.mode=xkernel
# (guest/xkernel_restore.sh), two guests at a time.  One result per image,
# xkernel/J->K/PROG, and dmesg-clean-xkernel-K.  IMGCR_XKERNEL_SELF=1 also
# restores each kernel's own images (J = K), e.g. with a single kernel.
XK_PROGS="counter vdsoclock python"
XK_TESTS="xkernel"

# xkernel_tests PATTERNS: "xkernel" if PATTERNS select the cross phase.
xkernel_tests() {
	local pat pats
	IFS=, read -ra pats <<< "$1"
	for pat in "${pats[@]}"; do
		# shellcheck disable=SC2254
		case "$XK_TESTS" in $pat) echo "$XK_TESTS"; return ;; esac
	done
}

xkernel_phase() {
	local kernels=$1 k j p st n=0 self=${IMGCR_XKERNEL_SELF:-0} running=0 booted="" t0
	for k in $kernels; do n=$((n + 1)); done
	[ "$n" -ge 2 ] || [ "$self" = 1 ] || return 0
	t0=$(date +%s)
	for k in $kernels; do
		st=$BUILD/xk-stage-$k
		rm -rf "$st" "$BUILD/initrd-xk-$k.cpio.gz"
		mkdir -p "$st/imgcr/xk"
		for j in $kernels; do
			[ "$j" != "$k" ] || [ "$self" = 1 ] || continue
			if [ -s "$LOGS/$j/xkernel.tar" ] && mkdir -p "$st/imgcr/xk/$j" &&
				tar -C "$st/imgcr/xk/$j" -xf "$LOGS/$j/xkernel.tar" 2>/dev/null; then
				chmod 755 "$st/imgcr/xk/$j"/*.img 2>/dev/null
				continue
			fi
			rm -rf "$st/imgcr/xk/$j"
			for p in $XK_PROGS; do
				record "xkernel/$j->$k/$p" FAIL "no images from $j (its xkernel_dump failed or sent nothing: see $LOGS/$j/console.log)"
			done
		done
		[ -n "$(ls -A "$st/imgcr/xk")" ] || continue
		{
			cat "$BUILD/initrd-$k.cpio.gz"
			(cd "$st" && find imgcr | cpio -o -H newc --quiet) | gzip -1
		} > "$BUILD/initrd-xk-$k.cpio.gz" || die "cannot build $BUILD/initrd-xk-$k.cpio.gz"
		booted="$booted $k"
	done
	[ -n "$booted" ] || return 0
	say "cross-kernel restores: booting$booted with the other kernels' images; logs in $LOGS/xkernel-<kernel>/"
	for k in $booted; do
		if [ "$running" -ge "${IMGCR_PARALLEL:-2}" ]; then
			wait -n
			running=$((running - 1))
		fi
		boot_guest "$k" "$BUILD/initrd-xk-$k.cpio.gz" "$LOGS/xkernel-$k" "imgcr.mode=xkernel" &
		running=$((running + 1))
	done
	wait
	for k in $booted; do
		xkernel_parse "$k" "$LOGS/xkernel-$k"
	done
	say "cross-kernel phase: $(( $(date +%s) - t0 )) s"
}

# xkernel_parse K DIR: the results of K's cross-kernel guest.
xkernel_parse() {
	local k=$1 dir=$2 log=$2/console.log name st why j p
	while read -r _ name st why; do
		case "$name" in xkernel/*) ;; *) name="xkernel-$k/$name" ;; esac
		case "$st" in PASS | FAIL) record "$name" "$st" "$why" ;; esac
	done < <(grep -aE '^RESULT [^ ]+ (PASS|FAIL)' "$log")
	for j in "$BUILD/xk-stage-$k/imgcr/xk"/*; do
		j=${j##*/}
		for p in $XK_PROGS; do
			grep -aqF "RESULT xkernel/$j->$k/$p " "$log" ||
				record "xkernel/$j->$k/$p" FAIL "no result: guest crashed, hung or was killed (see $log)"
		done
	done
	if ! grep -aq '^IMGCR-GUEST-DONE' "$log" || ! grep -aq '^IMGCR-DMESG-END' "$log"; then
		record "dmesg-clean-xkernel-$k" FAIL "guest did not finish (no end markers; see $log)"
		return
	fi
	check_dmesg "dmesg-clean-xkernel-$k" "$dir"
}
