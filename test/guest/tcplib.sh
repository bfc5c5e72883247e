# Helpers for the established-TCP tests (t_sk_tcp_*), sourced after lib.sh.
# tcpstream (test/progs/tcpstream.c) writes "c SENT RECV" (client) and
# "s RECV" (server) every 200 ms to its OUT file.

# On exit, the locks of this test's dumps are removed (a failed restore
# leaves its lock, which must not stop the next tests' traffic).
tcp_cleanup() {
	for _l in */tcp-lock; do
		[ -s "$_l" ] && /usr/sbin/nft delete table inet "$(cat "$_l")" 2>/dev/null
	done
	cleanup
}
trap tcp_cleanup EXIT

# last_recv FILE: the client's last echoed byte count
last_recv() { awk '$1 == "c" {r = $3} END {print r + 0}' "$1"; }

# wait_progress FILE BYTES [TIMEOUT_S]: until the client has received more than BYTES
wait_progress() {
	_n=$(( ${3:-30} * 10 ))
	while [ "$_n" -gt 0 ]; do
		[ "$(last_recv "$1")" -gt "$2" ] && return 0
		grep -q BAD "$1" && return 1
		usleep 100000
		_n=$((_n - 1))
	done
	return 1
}

# no_lock: no nftables table of imgcr is left
no_lock() {
	_t=$(/usr/sbin/nft list tables 2>&1) || fail "nft list tables: $_t"
	case "$_t" in *imgcr_*) fail "a network lock is left: $_t" ;; esac
}

# stream_end FILE CLIENT_PID: SIGTERM to the client, which finishes the
# stream; both ends must say "done ... ok" with the same byte counts and
# the same client port (one connection all along).  STREAM_BYTES: the count.
stream_end() {
	_f=$1
	kill -TERM "$2" || fail "the client $2 is gone: $(tail -n3 "$_f" | tr '\n' '|')"
	wait_line "$_f" "^client done" 60 || fail "the client did not finish: $(tail -n3 "$_f" | tr '\n' '|')"
	wait_line "$_f" "^server done" 60 || fail "the server did not finish: $(tail -n3 "$_f" | tr '\n' '|')"
	grep -q BAD "$_f" && fail "$(grep BAD "$_f" | head -n3 | tr '\n' '|')"
	set -- $(grep "^client done" "$_f")
	_cs=$4 _cr=$6 _cp=$8
	set -- $(grep "^server done" "$_f")
	[ "$_cs" = "$_cr" ] && [ "$_cr" = "$4" ] ||
		fail "client sent $_cs received $_cr, the server received $4"
	[ "$_cp" = "$6" ] || fail "the client's port $_cp, the server's peer port $6: not the same connection"
	STREAM_BYTES=$_cs
}

# took: seconds since this file was sourced, for the PASS lines
TCP_T0=$(date +%s)
took() { echo "$(( $(date +%s) - TCP_T0 ))s"; }
