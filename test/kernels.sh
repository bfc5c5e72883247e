# The guest kernels of the test matrix (sh; sourced by setup-host.sh and
# lib-host.sh).  Every package is pinned to an exact version so that CI is
# reproducible; setup-host.sh fetches them with apt, from the release's
# mirror, or from snapshot.debian.org once the mirror has dropped them.
#
# kernel_spec K prints "RELEASE VERSION COMPILER HEADERS... -- IMAGE..." for K:
#   RELEASE   bookworm: the host builds the modules (host DKMS, gcc-12);
#             trixie, sid: DKMS in a chroot of that release under
#             $CACHE/chroots/RELEASE (their kbuild needs that release's
#             glibc and gcc)
#   VERSION   the Debian version of every package below
#   COMPILER  the package with the gcc the headers were made for
#   HEADERS   what kbuild needs (unpacked, never installed: trixie's and
#             bookworm's 6.12 headers depend on the kernel image)
#   IMAGE     the packages holding vmlinuz and /lib/modules/K (sid splits
#             the image into linux-binary-unsigned-K and linux-modules-K)

ALL_KERNELS="6.1.0-57-amd64 6.12.118+deb12-amd64 6.12.118+deb13-amd64 7.2.13+deb14-amd64"

kernel_spec() {
	case "$1" in
	6.1.0-57-amd64)
		echo "bookworm 6.1.192-3 gcc-12" \
			"linux-headers-$1 linux-headers-6.1.0-57-common linux-kbuild-6.1" \
			"-- linux-image-$1-unsigned" ;;
	6.12.118+deb12-amd64)
		echo "bookworm 6.12.118-1~deb12u1 gcc-12" \
			"linux-headers-$1 linux-headers-6.12.118+deb12-common linux-kbuild-6.12.118+deb12" \
			"-- linux-image-$1-unsigned" ;;
	6.12.118+deb13-amd64)
		echo "trixie 6.12.118-1 gcc-14" \
			"linux-headers-$1 linux-headers-6.12.118+deb13-common linux-kbuild-6.12.118+deb13" \
			"-- linux-image-$1-unsigned" ;;
	7.2.13+deb14-amd64)
		echo "sid 7.2.13-1 gcc-16-for-host" \
			"linux-headers-$1 linux-headers-7.2.13+deb14-common linux-kbuild-7.2.13+deb14 linux-base-$1" \
			"-- linux-binary-unsigned-$1 linux-modules-$1 linux-base-$1" ;;
	*) return 1 ;;
	esac
}

# kernel_release K: the Debian release whose toolchain builds K's modules.
kernel_release() {
	kernel_spec "$1" | cut -d' ' -f1
}
