#!/bin/bash
# Host check, no guest: the man pages say what the code does.
#  - every option `imgcr COMMAND --help` lists is in imgcr(8);
#  - every NT_IMGCR_* note type of include/uapi/linux/imgcr.h is in
#    imgcr-image(5), with its number;
#  - README.md keeps the two commands of a fresh machine near its top, both
#    scripts exist, and it stays short (at most 250 lines);
#  - every docs/*.md is linked from README.md, every relative link of
#    README.md and docs/*.md names a file that exists, and none says sudo
#    (the commands are run as root);
#  - no line of them is longer than lintian allows (512 characters).
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
# imgcr-criu(8): its --help options and commands, and every criu_opts field
# of userspace/criu/rpc.proto (what imgcr-criu does with each)
man8c=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$REPO/man/imgcr-criu.8")
mkdir -p "$bin/gen"
if protoc-c --proto_path="$REPO/userspace/criu" --c_out="$bin/gen" "$REPO/userspace/criu/rpc.proto" &&
   gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$REPO/include/uapi" -I"$REPO/userspace" -I"$bin/gen" \
	-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
	-o "$bin/imgcr-criu" $(ls "$REPO"/userspace/*.c | grep -v '/imgcr\.c$') \
	$(ls "$REPO"/userspace/criu/*.c | grep -v pb-c) "$bin/gen/rpc.pb-c.c" -lprotobuf-c; then
	missing=""
	for opt in $("$bin/imgcr-criu" --help | grep -o -- '--[a-z][a-z-]*' | sort -u) swrk check; do
		grep -q -- "$opt" <<< "$man8c" || missing="$missing $opt"
	done
	for f in $(sed -n '/^message criu_opts {/,/^}/s/^[[:space:]]*\(optional\|repeated\)[[:space:]]*[a-z_0-9]*[[:space:]]*\([a-z_0-9]*\).*/\2/p' \
		"$REPO/userspace/criu/rpc.proto"); do
		grep -qw -- "$f" <<< "$man8c" || missing="$missing $f"
	done
	if [ -z "$missing" ]; then result man8-criu PASS; else result man8-criu FAIL "not in imgcr-criu(8):$missing"; fi
else
	result man8-criu FAIL "cannot build userspace/criu/ (protoc-c, libprotobuf-c-dev)"
fi
man5=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$REPO/man/imgcr-image.5")
missing=""
while read -r name num; do
	grep -q "$name" <<< "$man5" && grep -q "$num" <<< "$man5" || missing="$missing $name($num)"
done < <(sed -n 's/^#define \(NT_IMGCR_[A-Z0-9_]*\)[[:space:]]*\(0x[0-9a-f]*\).*/\1 \2/p' "$REPO/include/uapi/linux/imgcr.h")
if [ -z "$missing" ]; then result man5-notes PASS; else result man5-notes FAIL "not in imgcr-image(5):$missing"; fi

readme="$REPO/README.md"
missing=""
for cmd in demo run; do
	head -n 40 "$readme" | grep -q "^test/$cmd\.sh  *# " || missing="$missing test/$cmd.sh(not in the first 40 lines)"
	[ -x "$REPO/test/$cmd.sh" ] || missing="$missing test/$cmd.sh(no such executable)"
done
if [ -z "$missing" ]; then result readme-commands PASS; else result readme-commands FAIL "$missing"; fi
n=$(wc -l < "$readme")
if [ "$n" -le 250 ]; then result readme-length PASS; else result readme-length FAIL "README.md has $n lines (at most 250)"; fi
missing=""
for d in "$REPO"/docs/*.md; do
	grep -q "](docs/$(basename "$d"))" "$readme" || missing="$missing docs/$(basename "$d")"
done
if [ -z "$missing" ]; then result readme-links-docs PASS; else result readme-links-docs FAIL "not linked from README.md:$missing"; fi
missing=""
for f in "$readme" "$REPO"/docs/*.md; do
	for l in $(grep -o '](\([^)#:]*\)\(#[^)]*\)\?)' "$f" | sed 's/^](//; s/)$//; s/#.*//'); do
		[ -e "$(dirname "$f")/$l" ] || missing="$missing ${f#"$REPO"/}:$l"
	done
done
if [ -z "$missing" ]; then result links PASS; else result links FAIL "broken:$missing"; fi
if grep -n -w sudo "$readme" "$REPO"/docs/*.md; then result no-sudo FAIL "sudo in the documentation (above)"; else result no-sudo PASS; fi
# lintian (very-long-line-length-in-source-file) fails the package build on
# a line longer than 512 characters
long=$(cd "$REPO" && awk 'length > 512 { print FILENAME ":" FNR " (" length ")" }' README.md docs/*.md man/* debian/changelog debian/control)
if [ -n "$long" ]; then result line-length FAIL "over 512 characters: $(echo $long)"; else result line-length PASS; fi
[ "$fails" = 0 ]
