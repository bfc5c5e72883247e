#!/bin/sh
# statehook.sh: the suite's IMGCR_STATE_HOOK (runner.sh).  It runs
# statesnap (the state check) and, first, keeps `imgcr show --json` of the
# dump directory for the runner's NAME-json result (every show of a dump a
# test made must be JSON that python3's parser reads):
#   after DIR PID...    DIR was just restored from: the show must succeed;
#   before DIR PID...   a dump into DIR begins: a dump DIR still holds is
#                       shown before it is replaced, and DIR is listed for
#                       the end of the test;
#   capture DIR         (runner.sh, at the end of a test) the dump in DIR.
# A dump a test took apart on purpose may make the show fail: only after a
# restore is a failed show a failure.  Each show: $IMGCR_JSON_DIR/show.*,
# a line "strict|lenient EXIT FILE DIR" in $IMGCR_JSON_DIR/index.
capture() {	# strict|lenient DIR
	[ -n "${IMGCR_JSON_DIR:-}" ] && [ -f "$2/tree" ] || return 0
	_d=$(cd "$2" 2> /dev/null && pwd) || return 0
	_f=$(mktemp "$IMGCR_JSON_DIR/show.XXXXXX") || return 0
	/imgcr/bin/imgcr show --json "$_d" > "$_f" 2> "$_f.err"
	echo "$1 $? $_f $_d" >> "$IMGCR_JSON_DIR/index"
}

case "$1" in
capture)
	capture lenient "$2"
	exit 0
	;;
before)
	if [ -n "${IMGCR_JSON_DIR:-}" ]; then
		(cd "$2" 2> /dev/null && pwd) >> "$IMGCR_JSON_DIR/dirs"
		capture lenient "$2"
	fi
	;;
after)
	capture strict "$2"
	;;
esac
exec /imgcr/bin/statesnap "$@"
