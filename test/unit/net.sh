#!/bin/bash
# Host check, no guest: the network namespace kind (userspace/net.c).  In a
# network namespace of the test's own (standing in for imgcr's), a
# "container" (util-linux unshare: new network and PID namespaces) gets
# lo with an extra address and route, a veth pair to the test's namespace
# (addresses both sides, a default route, MTU and MAC addresses set),
# changed sysctls and an nftables table with a counter.  It is dumped by
# test/unit/nsdrv.c, killed, and restored into new namespaces; a shell
# there prints what it sees.  Devices, addresses, routes, sysctls and the
# ruleset must be equal (interface indexes of the container included), the
# host end must be back with its address and bridge, and a ping over the
# veth must answer.  Refusals are checked too.  Runs as root.
# Prints one "RESULT net-NAME PASS|FAIL" line each.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "RESULT net FAIL needs root (namespaces and network devices)"
	exit 1
fi
[ "${1:-}" = inner ] || exec unshare -n -m --propagation private "$0" inner
NAME=net
. "$REPO/test/unit/nsdrv.bash"
ip link set lo up
ip link add br0 type bridge && ip link set br0 up

# what the container sees, less what a restore renews (counters, peer indexes)
view() {
	ip -o link | sed 's/@if[0-9]*//; s/@vh[01]//; s/ qdisc [^ ]*//; s/ state [A-Z]*//; s/ link-netnsid [0-9]*//; s/ qlen [0-9]*//'
	ip -o addr | sed 's/valid_lft.*//'
	ip route show table all | grep -v '^local \|^broadcast \|^multicast \|proto kernel' | sort
	for s in ipv4/ip_forward ipv4/ip_local_port_range core/somaxconn ipv4/conf/ve0/rp_filter ipv4/conf/ve1/rp_filter \
		 ipv6/conf/ve0/disable_ipv6 ipv4/tcp_syncookies; do
		echo "$s=$(cat /proc/sys/net/$s)"
	done
	nft list ruleset 2>&1 | sed 's/packets [0-9]* bytes [0-9]*/packets N bytes N/'
}
export -f view

cat > "$tmp/ct.sh" <<'CT'
ip link set lo up
ip addr add 10.77.0.1/24 dev lo
ip route add 10.88.0.0/16 dev lo
echo 1 > /proc/sys/net/ipv4/ip_forward
echo "2000 3000" > /proc/sys/net/ipv4/ip_local_port_range
echo 77 > /proc/sys/net/core/somaxconn
echo 0 > /proc/sys/net/ipv4/tcp_syncookies
nft add table inet t && nft add chain inet t c '{ type filter hook input priority 0; }' &&
	nft add rule inet t c ip saddr 10.9.0.1 counter accept
echo ready > "$1"
exec sleep 1000
CT
unshare -n -p -f sh "$tmp/ct.sh" "$tmp/ready" > "$tmp/ct.out" 2>&1 &
u=$!
for i in $(seq 1 100); do
	ct=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
	[ -n "$ct" ] && [ -e "$tmp/ready" ] && break
	sleep 0.1
done
[ -e "$tmp/ready" ] || { res container FAIL "$(cat "$tmp/ct.out")"; exit 1; }
ip link add vh0 mtu 1400 address 02:00:00:00:00:01 type veth peer name ve0 mtu 1400 address 02:00:00:00:00:02 netns "$ct"
ip addr add 10.9.0.1/24 dev vh0 && ip link set vh0 up
ip link add vh1 type veth peer name ve1 netns "$ct"
ip link set vh1 master br0 && ip link set vh1 up
nsenter -t "$ct" -n sh -c 'ip addr add 10.9.0.2/24 dev ve0 && ip link set ve0 up &&
	ip route add default via 10.9.0.1 && echo 2 > /proc/sys/net/ipv4/conf/ve0/rp_filter'
sleep 3	# duplicate address detection of the link-local addresses
nsenter -t "$ct" -n busybox ping -c 1 -W 2 10.9.0.1 > /dev/null 2>&1 || res ping-before FAIL "no answer before the dump"
nsenter -t "$ct" -n bash -c view > "$tmp/before"
ip -o addr show dev vh0 | sed 's/valid_lft.*//; s/^[0-9]*: //' > "$tmp/host-before"

mkdir -p "$tmp/img"
if out=$("$drv" dump net "$ct" "$tmp/img" 2>&1); then
	res dump PASS "$(grep -c '^net' "$tmp/img/tree") records"
else
	res dump FAIL "$out"
	exit 1
fi
kill -9 "$ct"; ct=
wait 2>/dev/null
# gone_vh0: a dead namespace's devices go with it, a little later (a work queue)
gone_vh0() {
	local i
	for i in $(seq 1 100); do
		ip link show vh0 > /dev/null 2>&1 || return 0
		sleep 0.1
	done
	return 1
}
gone_vh0 || res veth-gone FAIL "vh0 still here 10 s after the kill"

if "$drv" restore net "$tmp/img" bash -c 'view > '"$tmp/after"'; busybox ping -c 1 -W 2 10.9.0.1 > /dev/null && echo pinged' > "$tmp/out" 2>&1; then
	res restore PASS
else
	res restore FAIL "$(cat "$tmp/out")"
fi
if diff "$tmp/before" "$tmp/after" > "$tmp/diff"; then
	res same PASS "$(wc -l < "$tmp/before") lines"
else
	res same FAIL "$(cat "$tmp/diff")"
fi
grep -q pinged "$tmp/out" && res ping PASS || res ping FAIL "$(cat "$tmp/out")"
# the host end was back (while the container lived) in its bridge: it went with the container
gone_vh0 || res veth-removed-with-ct FAIL "vh0 outlived its container by 10 s"
"$drv" restore net "$tmp/img" sh -c 'sleep 4' &
sleep 3.5	# the host end's IPv6 duplicate address detection
ip -o addr show dev vh0 | sed 's/valid_lft.*//; s/^[0-9]*: //' > "$tmp/host-after"
master=$(ip -o link show vh1 | grep -o 'master [^ ]*')
wait
if diff "$tmp/host-before" "$tmp/host-after" > /dev/null && [ "$master" = "master br0" ]; then
	res host-end PASS
else
	res host-end FAIL "$(cat "$tmp/host-after") $master"
fi

# refusals
refuse() {	# NAME EXPECTED SETUP (in the container's namespace) [HOST-SETUP (here, $c its pid)]
	local d=$tmp/r-$1 c= u
	mkdir -p "$d"
	unshare -n -p -f sh -c "$3; echo ready > $d/ready; exec sleep 1000" > "$d/out" 2>&1 &
	u=$!
	for i in $(seq 1 100); do
		c=$(cat /proc/$u/task/$u/children 2>/dev/null | awk '{print $1}')
		[ -n "$c" ] && [ -e "$d/ready" ] && break
		sleep 0.1
	done
	if [ -n "${4:-}" ] && ! eval "$4"; then
		res "refuse-$1" FAIL "cannot set it up: $4"
	elif out=$("$drv" dump net "$c" "$d" 2>&1); then
		res "refuse-$1" FAIL dumped
	else
		case "$out" in *"$2"*) res "refuse-$1" PASS "$out" ;; *) res "refuse-$1" FAIL "$out" ;; esac
	fi
	kill -9 "$c" 2>/dev/null
	wait 2>/dev/null
}
refuse bridge "type bridge is not supported" "ip link add b9 type bridge || echo no-bridge"
refuse inner-veth "not in imgcr's network namespace" "ip link add a0 type veth peer name b0"
# a host route through the outer end (a routed CNI's): not restored, so refused
refuse host-route "vhr (the outer end of its ver) has a route of the host to 10.66.0.0/24" : \
	'ip link add vhr type veth peer name ver netns "$c" && ip link set vhr up &&
	 ip route add 10.66.0.0/24 dev vhr && nsenter -t "$c" -n ip link set ver up' 
exit $((fails > 0))
