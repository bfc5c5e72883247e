#!/bin/bash
# Host check, no guest: the guest tests are where test/guest/README says.
#  - every guest test is test/guest/AREA/t_NAME.sh with AREA one of the
#    README's folders (none left at test/guest/t_NAME.sh);
#  - a name whose prefix the README lists is in that prefix's folder;
#  - no name twice (--only patterns and RESULT lines name a test without
#    its folder);
#  - test/lib-host.sh finds them all (guest_tests '*').
# Prints one "RESULT guest_layout-NAME PASS|FAIL" line per check; exit 1 on a failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
G=$REPO/test/guest
fails=0
result() {	# NAME PASS|FAIL [WHY]
	echo "RESULT guest_layout-$1 $2${3:+ $3}"
	[ "$2" = PASS ] || fails=$((fails + 1))
}
# the README's folders ("  AREA/   what...") and prefixes ("  PREFIX*   AREA/")
areas=$(sed -n 's,^  \([a-z]*\)/  .*,\1,p' "$G/README")
prefixes=$(sed -n 's,^  \([a-z_]*\)\*  *\([a-z]*\)/$,\1 \2,p' "$G/README")
[ -n "$areas" ] && [ -n "$prefixes" ] || { result readme FAIL "no folders or prefixes in test/guest/README"; exit 1; }

bad=""
for t in "$G"/t_*.sh; do
	[ -e "$t" ] && bad="$bad ${t#"$REPO"/}"
done
for t in "$G"/*/t_*.sh; do
	[ -e "$t" ] || continue
	a=${t%/*}
	a=${a##*/}
	grep -qx "$a" <<< "$areas" || bad="$bad ${t#"$REPO"/}(unknown folder)"
done
if [ -z "$bad" ]; then
	result folders PASS
else
	result folders FAIL "not in a folder of test/guest/README:$bad"
fi

bad=""
for t in "$G"/*/t_*.sh; do
	[ -e "$t" ] || continue
	n=${t##*/t_}
	a=${t%/*}
	a=${a##*/}
	while read -r p want; do
		case "$n" in "$p"*) [ "$a" = "$want" ] || bad="$bad ${t#"$REPO"/}(belongs in $want/)"; break ;; esac
	done <<< "$prefixes"
done
if [ -z "$bad" ]; then
	result prefixes PASS
else
	result prefixes FAIL "$bad"
fi

dups=$(for t in "$G"/t_*.sh "$G"/*/t_*.sh; do [ -e "$t" ] && echo "${t##*/}"; done | sort | uniq -d)
if [ -z "$dups" ]; then
	result unique PASS
else
	result unique FAIL "found twice: $(echo $dups)"
fi

n=$(find "$G" -name 't_*.sh' | wc -l)
found=$(bash -c '. "$1/test/lib-host.sh" >/dev/null 2>&1; guest_tests "*"' _ "$REPO" | wc -l)
if [ "$n" = "$found" ] && [ "$n" -gt 0 ]; then
	result found PASS "($n tests)"
else
	result found FAIL "test/lib-host.sh finds $found of the $n t_*.sh files"
fi
[ "$fails" = 0 ]
