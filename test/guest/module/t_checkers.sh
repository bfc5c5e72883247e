#!/bin/sh
# The kernel's memory checkers the host put on the command line
# (test/lib-host.sh checker_opts, issue 25) are really in effect in this
# guest, so a clean log means something: KFENCE samples
# (/sys/module/kfence/parameters/sample_interval), SLUB debugging is on for
# the kmalloc caches (sanity checks, red zones, poisoning, owner tracking in
# /sys/kernel/slab/kmalloc-64), page poisoning and init_on_free as the
# kernel's "mem auto-init" line says (page poisoning takes precedence over
# init_on_free), and the kernel did not call any of them unknown.  One INFO
# line per checker says what this kernel honours.  No checker on the
# command line (IMGCR_CHECKERS=0): PASS with a note.
. /imgcr/guest/lib.sh

cmd=$(cat /proc/cmdline)
opt() { echo " $cmd " | sed -n "s/.* $1=\([^ ]*\) .*/\1/p"; }
bad=""
n=0

if [ -n "$(opt kfence.sample_interval)" ]; then
	n=$((n + 1))
	v=$(cat /sys/module/kfence/parameters/sample_interval 2>/dev/null)
	if [ "$v" = "$(opt kfence.sample_interval)" ] && dmesg | grep -q 'kfence: initialized'; then
		info "KFENCE: on, sample interval $v ms ($(dmesg | grep -m1 'kfence: initialized' | sed 's/.*kfence: //'))"
	else
		bad="$bad KFENCE(interval '$v')"
	fi
else
	info "KFENCE: off ($([ -d /sys/module/kfence ] && echo 'built in, not asked' || echo 'not built in'))"
fi

if [ -n "$(opt slub_debug)" ]; then
	n=$((n + 1))
	s=/sys/kernel/slab/kmalloc-64
	f=""
	for a in sanity_checks red_zone poison store_user; do
		[ "$(cat $s/$a 2>/dev/null)" = 1 ] && f="$f $a"
	done
	if [ "$f" = " sanity_checks red_zone poison store_user" ]; then
		info "SLUB debugging: on (kmalloc-64:$f)"
	else
		bad="$bad slub_debug(kmalloc-64:${f:- none})"
	fi
else
	info "SLUB debugging: off"
fi

ai=$(dmesg | grep -m1 'mem auto-init:' | sed 's/.*mem auto-init: //')
if [ -n "$(opt page_poison)" ]; then
	n=$((n + 1))
	if dmesg | grep -q 'mem auto-init: CONFIG_PAGE_POISONING is on'; then
		info "page poisoning: on (mem auto-init: $ai)"
	else
		bad="$bad page_poison(no 'CONFIG_PAGE_POISONING is on' in the log)"
	fi
fi
if [ -n "$(opt init_on_free)" ]; then
	n=$((n + 1))
	info "init_on_free=1: $(dmesg | grep 'mem auto-init:' | sed 's/.*mem auto-init: //' | tr '\n' ';')"
fi
[ -e /sys/kernel/debug/kmemleak ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ -e /sys/kernel/debug/kmemleak ]; then
	info "kmemleak: available"
else
	info "kmemleak: not built in (no /sys/kernel/debug/kmemleak)"
fi
unk=$(dmesg | grep -E 'Unknown kernel command line parameters|Malformed early option|unknown parameter' |
	grep -E 'kfence|slub_debug|page_poison|init_on_free' | head -n 2 | tr '\n' '|')
[ -z "$unk" ] || bad="$bad unknown:$unk"
[ -z "$bad" ] || fail "checkers on the command line but not in effect:$bad"
if [ "$n" = 0 ]; then
	pass "no memory checker on the command line (IMGCR_CHECKERS=0?)"
else
	pass "$n checker option(s) in effect: $(echo "$cmd" | grep -oE '(kfence[^ ]*|slub_debug=[^ ]*|page_poison=[^ ]*|init_on_free=[^ ]*)' | tr '\n' ' ')"
fi
