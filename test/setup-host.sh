#!/bin/sh
# Install everything the build, the packages (make deb, lintian) and the QEMU
# test guests need on a Debian 12 host.
# Idempotent: packages already present are not fetched again.
set -eu

KERNELS="${IMGCR_KERNELS:-6.1.0-57-amd64 6.12.118+deb12-amd64}"
CACHE="${IMGCR_CACHE:-/var/cache/imgcr}"

export DEBIAN_FRONTEND=noninteractive

need=""
for p in qemu-system-x86 busybox-static dkms cpio build-essential gdb binutils python3 \
	 kmod libelf-dev bc flex bison xz-utils debhelper dh-dkms lintian man-db; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
for k in $KERNELS; do
	dpkg -s "linux-headers-$k" >/dev/null 2>&1 || need="$need linux-headers-$k"
done

if [ -n "$need" ]; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends $need
fi

# The guest kernels: unpacked, never installed on the host.
mkdir -p "$CACHE"
for k in $KERNELS; do
	[ -f "$CACHE/$k/vmlinuz" ] && continue
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -q "linux-image-$k-unsigned" ||
		{ apt-get update -q && apt-get download -q "linux-image-$k-unsigned"; })
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/root"
	rm -rf "$CACHE/$k"
	mkdir -p "$CACHE/$k"
	cp "$tmp/root/boot/vmlinuz-$k" "$CACHE/$k/vmlinuz"
	cp "$tmp/root/boot/System.map-$k" "$CACHE/$k/System.map"
	# Modules the guest may need (none are required by the suite today,
	# but keep the tree for modprobe dependencies).
	mv "$tmp/root/lib/modules/$k" "$CACHE/$k/modules"
	rm -rf "$tmp"
done
echo "setup-host: ok ($KERNELS)"
