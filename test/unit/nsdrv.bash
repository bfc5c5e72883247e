# Sourced by the namespace kinds' host tests (mount.sh, net.sh): their
# temporary directory, their result line, and test/unit/nsdrv.c built
# with every object of userspace/ (imgcr.c's main renamed) as $drv.
# Needs REPO and NAME (the results' prefix) set.
tmp=$(mktemp -d)
ct=
trap '[ -n "$ct" ] && kill -9 $ct 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
res() {	# NAME STATUS [WHY]
	echo "RESULT $NAME-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
cflags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$REPO/include/uapi" -I"$REPO/userspace"
	-DIMGCR_VERSION='"test"')
mkdir -p "$tmp/o"
for c in "$REPO"/userspace/*.c; do
	o=$tmp/o/$(basename "$c" .c).o
	if [ "$(basename "$c")" = imgcr.c ]; then
		gcc "${cflags[@]}" -Dmain=imgcr_main -c -o "$o" "$c"
	else
		gcc "${cflags[@]}" -c -o "$o" "$c"
	fi || { res build FAIL "cannot build $c"; exit 1; }
done
gcc "${cflags[@]}" -o "$tmp/nsdrv" "$REPO/test/unit/nsdrv.c" "$tmp"/o/*.o ||
	{ res build FAIL "cannot link"; exit 1; }
drv=$tmp/nsdrv
