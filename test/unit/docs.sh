#!/bin/bash
# Host check, no guest: the man pages say what the code does.
#  - every option `imgcr COMMAND --help` lists is in imgcr(8);
#  - every NT_IMGCR_* note type of include/uapi/linux/imgcr.h is in
#    imgcr-image(5), with its number.
# Prints one "RESULT docs-NAME PASS|FAIL" line per check; exit 1 on a failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
fails=0
result() {	# NAME PASS|FAIL [WHY]
	echo "RESULT docs-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$REPO/include/uapi" \
	-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
	-o "$bin/imgcr" "$REPO"/userspace/*.c || { result build FAIL "cannot build userspace/"; exit 1; }
man8=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$REPO/man/imgcr.8")
for cmd in dump restore show check; do
	missing=""
	for opt in $("$bin/imgcr" "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$opt" <<< "$man8" || missing="$missing $opt"
	done
	if [ -z "$missing" ]; then result "man8-$cmd" PASS; else result "man8-$cmd" FAIL "not in imgcr(8):$missing"; fi
done
man5=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$REPO/man/imgcr-image.5")
missing=""
while read -r name num; do
	grep -q "$name" <<< "$man5" && grep -q "$num" <<< "$man5" || missing="$missing $name($num)"
done < <(sed -n 's/^#define \(NT_IMGCR_[A-Z0-9_]*\)[[:space:]]*\(0x[0-9a-f]*\).*/\1 \2/p' "$REPO/include/uapi/linux/imgcr.h")
if [ -z "$missing" ]; then result man5-notes PASS; else result man5-notes FAIL "not in imgcr-image(5):$missing"; fi
[ "$fails" = 0 ]
