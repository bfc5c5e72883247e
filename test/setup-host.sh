#!/bin/sh
# Install everything the build, the packages (make deb, lintian) and the
# QEMU test guests need on a Debian 12 host, and fetch the guest kernels (test/kernels.sh) into $CACHE.
# Idempotent: what is already in the cache is not fetched again.
#
# No kernel package is installed on the host: the kernels' packages are
# unpacked with dpkg-deb -x (Debian's 6.12 header packages depend on the
# kernel image, which apt would install as a bootable kernel of the host).
#
#   $CACHE/K/vmlinuz, System.map, modules/   guest kernel K
#   $CACHE/K/headers/usr/src/linux-headers-K kbuild tree of a bookworm
#                                            kernel (host gcc-12, host DKMS)
#   $CACHE/chroots/RELEASE                   debootstrap'ed trixie / sid with
#                                            that release's gcc and DKMS and
#                                            the headers of its kernels in
#                                            /usr/src (unpacked)
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/test/kernels.sh"
KERNELS="${IMGCR_KERNELS:-$ALL_KERNELS}"
CACHE="${IMGCR_CACHE:-/var/cache/imgcr}"
MIRROR="${IMGCR_MIRROR:-http://deb.debian.org/debian}"

export DEBIAN_FRONTEND=noninteractive

say() { printf 'setup-host: %s\n' "$*"; }
die() { printf 'setup-host: ERROR: %s\n' "$*" >&2; exit 1; }

need=""
for p in qemu-system-x86 busybox-static dkms cpio build-essential gcc-12 gdb binutils python3 \
	 kmod libelf-dev libssl3 pahole bc flex bison xz-utils debootstrap wget ca-certificates \
	 debhelper dh-dkms lintian man-db nftables util-linux iproute2 libseccomp2 \
	 protobuf-c-compiler libprotobuf-c-dev; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends $need
fi
# Debian's daemons that t_daemon_user runs in the guests as their own users
# (lib-host.sh add_daemons unpacks them) and runc (the runtime tests,
# add_runc) and podman with what it needs that the host lacks (t_podman,
# add_podman): downloaded, never installed here.
dl=""
for p in redis-server redis-tools memcached libjemalloc2 liblzf1 runc \
	 podman conmon golang-github-containers-common golang-github-containers-image libgpgme11 libsubid4; do
	ls /var/cache/apt/archives/${p}_*_*.deb >/dev/null 2>&1 || dl="$dl $p"
done
if [ -n "$dl" ]; then
	(cd /var/cache/apt/archives && apt-get download -q $dl) >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1
		  (cd /var/cache/apt/archives && apt-get download -q $dl) >/dev/null 2>&1; } ||
		say "could not download$dl: t_daemon_user, the runc tests and t_podman will skip them"
fi

# snapshot_deb PKG VERSION DIR: PKG_VERSION from snapshot.debian.org (for a
# pinned version the mirror no longer has).
snapshot_deb() {
	local hash
	hash=$(wget -qO- "https://snapshot.debian.org/mr/binary/$1/$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$2")/binfiles" |
		python3 -c 'import json, sys
r = [f["hash"] for f in json.load(sys.stdin)["result"] if f["architecture"] in ("amd64", "all")]
print(r[0] if r else "")') || return 1
	[ -n "$hash" ] || return 1
	wget -q -O "$3/$1.deb" "https://snapshot.debian.org/file/$hash"
}

# fetch_debs ROOT VERSION DIR PKG...: download PKG=VERSION of each into DIR,
# with the apt of ROOT ("/" or a chroot), then from snapshot.debian.org.
fetch_debs() {
	local root=$1 ver=$2 dir=$3 p
	shift 3
	for p in "$@"; do
		if [ "$root" = / ]; then
			(cd "$dir" && apt-get download -q "$p=$ver") >/dev/null 2>&1 ||
				{ apt-get update -q >/dev/null 2>&1; (cd "$dir" && apt-get download -q "$p=$ver") >/dev/null 2>&1; }
		else
			mkdir -p "$root/tmp/imgcr-dl"
			chroot "$root" sh -c "cd /tmp/imgcr-dl && apt-get download -q '$p=$ver'" >/dev/null 2>&1 &&
				mv "$root"/tmp/imgcr-dl/*.deb "$dir/"
			rm -rf "$root/tmp/imgcr-dl"
		fi
		ls "$dir/${p}_"*.deb >/dev/null 2>&1 && continue
		say "$p=$ver not on the mirror; trying snapshot.debian.org"
		snapshot_deb "$p" "$ver" "$dir" || die "cannot download $p=$ver (mirror and snapshot.debian.org)"
	done
}

# make_chroot RELEASE COMPILER: $CACHE/chroots/RELEASE with the build tools.
make_chroot() {
	local rel=$1 cc=$2 root=$CACHE/chroots/$1
	if [ ! -f "$root/.imgcr-ready" ]; then
		say "debootstrap $rel into $root (once; takes a few minutes)"
		mountpoint -q "$root.tmp/proc" 2>/dev/null && umount "$root.tmp/proc"
		rm -rf "$root.tmp"
		mkdir -p "$CACHE/chroots"
		debootstrap --variant=minbase "$rel" "$root.tmp" "$MIRROR" > "$CACHE/chroots/$rel.log" 2>&1 ||
			die "debootstrap $rel failed (see $CACHE/chroots/$rel.log)"
		# Debian's mirror may serve an index past its Valid-Until
		# (sid's, here): the pinned versions are what matters.
		echo 'Acquire::Check-Valid-Until "false";' > "$root.tmp/etc/apt/apt.conf.d/99imgcr"
		[ "$rel" = trixie ] &&
			echo "deb http://security.debian.org/debian-security $rel-security main" >> "$root.tmp/etc/apt/sources.list"
		chroot "$root.tmp" apt-get update -q > /dev/null ||
			die "apt-get update in the $rel chroot failed"
		chroot "$root.tmp" apt-get install -y -q --no-install-recommends \
			make dkms kmod pahole libelf-dev openssl xz-utils zstd "$cc" >> "$CACHE/chroots/$rel.log" 2>&1 ||
			die "cannot install the build tools in the $rel chroot (see $CACHE/chroots/$rel.log)"
		chroot "$root.tmp" apt-get clean
		touch "$root.tmp/.imgcr-ready"
		rm -rf "$root"
		mv "$root.tmp" "$root"
	fi
	# Not a boot time: a pinned package may have left the index since.
	if ! chroot "$root" apt-get update -q > /dev/null 2>&1; then
		say "warning: apt-get update in the $rel chroot failed (using its old index)"
	fi
}

# unpack_debs DIR DEST: dpkg-deb -x every DIR/*.deb into DEST.
unpack_debs() {
	local d
	mkdir -p "$2"
	for d in "$1"/*.deb; do
		dpkg-deb -x "$d" "$2" || die "cannot unpack $d"
	done
}

mkdir -p "$CACHE"
# The chroots first, side by side (debootstrap mostly waits on the network).
rels=""
for k in $KERNELS; do
	spec=$(kernel_spec "$k") || die "unknown kernel $k (test/kernels.sh)"
	set -- $spec
	[ "$1" = bookworm ] && continue
	case " $rels " in *" $1 "*) continue ;; esac
	rels="$rels $1"
	make_chroot "$1" "$3" &
done
wait
for r in $rels; do
	[ -f "$CACHE/chroots/$r/.imgcr-ready" ] || die "no $r chroot (see above)"
done

for k in $KERNELS; do
	spec=$(kernel_spec "$k") || die "unknown kernel $k (test/kernels.sh)"
	set -- $spec
	rel=$1 ver=$2 cc=$3
	shift 3
	hdrs=""
	while [ "$1" != -- ]; do hdrs="$hdrs $1"; shift; done
	shift
	imgs="$*"

	# Headers: host kernels into $CACHE/K/headers, the others into the
	# release's chroot (whose gcc their kbuild needs).
	if [ "$rel" = bookworm ]; then
		root=/
		hdst=$CACHE/$k/headers
	else
		make_chroot "$rel" "$cc"
		root=$CACHE/chroots/$rel
		hdst=$root
	fi
	hmark=$hdst/.imgcr-headers-$k
	if [ ! -f "$hmark" ]; then
		say "unpacking the headers of $k ($ver) into $hdst"
		tmp=$(mktemp -d)
		fetch_debs "$root" "$ver" "$tmp" $hdrs
		unpack_debs "$tmp" "$hdst"
		rm -rf "$tmp"
		if [ "$rel" = bookworm ]; then
			# The flavour's Makefile includes the common one by its
			# absolute /usr/src path: point it into the cache.
			sed -i "s|^include /usr/src/|include $hdst/usr/src/|" \
				"$hdst/usr/src/linux-headers-$k/Makefile"
		fi
		[ -f "$hdst/usr/src/linux-headers-$k/Makefile" ] ||
			die "no usr/src/linux-headers-$k in the headers of $k"
		touch "$hmark"
	fi

	# The guest kernel: unpacked, never installed.
	[ -f "$CACHE/$k/vmlinuz" ] && [ -d "$CACHE/$k/modules" ] && continue
	say "unpacking guest kernel $k ($imgs $ver) into $CACHE/$k"
	tmp=$(mktemp -d)
	fetch_debs "$root" "$ver" "$tmp" $imgs
	unpack_debs "$tmp" "$tmp/root"
	mkdir -p "$CACHE/$k"
	rm -rf "$CACHE/$k/modules" "$CACHE/$k/vmlinuz" "$CACHE/$k/System.map"
	# sid's linux-binary-unsigned-K has it in /usr/lib/modules/K.
	for f in "$tmp/root/boot/vmlinuz-$k" "$tmp/root/usr/lib/modules/$k/vmlinuz.unsigned" \
		 "$tmp/root/usr/lib/modules/$k/vmlinuz"; do
		[ -f "$f" ] && mv "$f" "$CACHE/$k/vmlinuz" && break
	done
	[ -f "$CACHE/$k/vmlinuz" ] || die "no vmlinuz for $k in $imgs"
	for f in "$tmp/root/boot/System.map-$k" "$tmp/root/usr/lib/modules/$k/System.map"; do
		[ -f "$f" ] && cp "$f" "$CACHE/$k/System.map" && break
	done
	# The module tree, for modprobe dependencies (test/bench.sh).
	for d in "$tmp/root/lib/modules/$k" "$tmp/root/usr/lib/modules/$k"; do
		[ -d "$d" ] && mv "$d" "$CACHE/$k/modules" && break
	done
	[ -d "$CACHE/$k/modules" ] || die "no lib/modules/$k in $imgs"
	rm -rf "$tmp"
done
echo "setup-host: ok ($KERNELS)"
