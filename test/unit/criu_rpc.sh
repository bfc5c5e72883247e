#!/bin/bash
# Host check, no guest, no modules: imgcr-criu's protocol (test/progs/criurpc.c
# as the client, as runc would speak): VERSION, CHECK (ready or a "not
# ready" report), FEATURE_CHECK on one keep_open connection; unsupported
# and malformed requests each answered success=false with a message naming
# them (criurpc bad), the target process left running.
# Prints "RESULT criu-rpc-NAME PASS|FAIL" lines; exit 1 on a failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
sleeper=""
trap '[ -n "$sleeper" ] && kill -9 $sleeper 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
result() {	# NAME PASS|FAIL [WHY]
	echo "RESULT criu-rpc-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
mkdir -p "$tmp/gen" "$tmp/d"
if ! protoc-c --proto_path="$REPO/userspace/criu" --c_out="$tmp/gen" "$REPO/userspace/criu/rpc.proto" ||
   ! gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$REPO/include/uapi" -I"$REPO/userspace" -I"$tmp/gen" \
	-DIMGCR_VERSION="\"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")\"" \
	-o "$tmp/imgcr-criu" $(ls "$REPO"/userspace/*.c | grep -v '/imgcr\.c$') \
	$(ls "$REPO"/userspace/criu/*.c | grep -v pb-c) "$tmp/gen/rpc.pb-c.c" -lprotobuf-c ||
   ! gcc -std=gnu11 -Wall -Wextra -Werror -I"$tmp/gen" -o "$tmp/criurpc" "$REPO/test/progs/criurpc.c" \
	"$tmp/gen/rpc.pb-c.c" -lprotobuf-c; then
	result build FAIL "cannot build imgcr-criu or criurpc (protoc-c, libprotobuf-c-dev)"
	exit 1
fi
if out=$("$tmp/criurpc" "$tmp/imgcr-criu" probe 2>&1) && grep -q '^ok version 3.17.1 imgcr$' <<< "$out"; then
	result probe PASS "$(grep -c '^ok' <<< "$out") answers"
else
	result probe FAIL "$(grep -m 1 FAIL <<< "$out")"
fi
sleep 60 &
sleeper=$!
disown $sleeper
if out=$("$tmp/criurpc" "$tmp/imgcr-criu" bad $sleeper "$tmp/d" 2>&1) &&
   [ "$(grep -c '^ok refused' <<< "$out")" -ge 24 ]; then
	if kill -0 $sleeper && [ "$(awk '{print $3}' /proc/$sleeper/stat)" = S ]; then
		result refusals PASS "$(grep -c '^ok refused' <<< "$out") requests refused"
	else
		result refusals FAIL "the target $sleeper is not running"
	fi
else
	result refusals FAIL "$(grep -m 1 FAIL <<< "$out")"
fi
[ "$fails" = 0 ]
