# Helpers of t_cow and t_cow_uid: the cowshare tree (progs/cowshare.c), a
# parent, its child and its grandchild sharing memory copy-on-write.
# Source after lib.sh.

# cow_start [UID]: start it in ./w (the grandchild as UID, if given) and
# wait until all three are ready; sets root, P, C, G and region
cow_start() {
	chmod 755 . && mkdir w && chmod 777 w || fail "mkdir w"
	cowshare $PWD/w ${1:-} </dev/null >/dev/null 2>&1 &
	root=$!
	track $root
	for _t in p c g; do
		wait_line w/$_t '^ready' 60 || fail "task $_t never got ready: $(tail -n1 w/$_t 2>/dev/null)"
	done
	P=$(sed -n 's/^ready //p' w/p)
	C=$(sed -n 's/^ready //p' w/c)
	G=$(sed -n 's/^ready //p' w/g)
	track $C
	track $G
	region=$(sed -n 's/^region //p' w/p)
}

# cow_finish: each task checks its data and its sharing (SIGUSR1), then,
# once all three have (a write while another still reads its smaps would
# make pages it shared its own), the child writes (its first SIGUSR2), each
# checks again (SIGUSR2: the write stayed the child's) and exits; no BAD
# line anywhere
cow_finish() {
	kill -USR1 $P $C $G
	for _t in p c g; do
		wait_line w/$_t '^checked' 60 || fail "task $_t did not check: $(tail -n2 w/$_t | tr '\n' '|')"
	done
	kill -USR2 $C
	wait_line w/c '^wrote' 30 || fail "the child did not write"
	kill -USR2 $P $C $G
	wait_gone $root 60 || fail "the restored parent did not finish"
	# when each read its smaps, and when the child wrote (monotonic s)
	info "timing: $(grep -E '^(smaps read|writing|wrote) at' w/p w/c w/g | tr '\n' '|')"
	for _t in p c g; do
		grep -q '^done$' w/$_t || fail "task $_t did not finish: $(tail -n2 w/$_t | tr '\n' '|')"
		! grep -q BAD w/$_t || fail "task $_t: $(grep BAD w/$_t | head -n2 | tr '\n' '|')"
	done
}
