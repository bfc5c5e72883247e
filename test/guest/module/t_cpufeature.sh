#!/bin/sh
# Images the loader must refuse cleanly although they are well-formed: an
# xstate that claims a CPU state component this CPU lacks (XSTATE_BV bit
# 62; EOPNOTSUPP, dmesg "... this CPU lacks") and an unknown image format
# version (99; EINVAL, dmesg "format version 99"), on 6.1 an rseq
# registration of 64 bytes (EOPNOTSUPP), on the others a caller with
# PR_SET_MDWE (EPERM).  The caller survives and
# nothing of the image runs.  Control: the intact image restores.
. /imgcr/guest/lib.sh
require_modules

pauser > p.out &
pid=$!
track $pid
wait_line p.out ready 10 || fail "pauser did not start"
stop_task $pid
dump $pid p.img
kill9 $pid

# refuse MODE ERRNO DMESG_REGEX
refuse() {
	corrupt p.img "$1.img" "$1" 2> c.err || fail "corrupt $1: $(cat c.err)"
	cmp -s p.img "$1.img" && fail "corrupt $1 changed nothing"
	dmesg_mark
	r=$(tryexec_expect "$1.img")
	[ -z "$r" ] || fail "$1: image accepted or caller killed: $r"
	[ "$(cat te.errno)" = "$2" ] || fail "$1: execve failed with $(cat te.errno), want $2"
	grep -q woken te.out && fail "$1: the image ran"
	dmesg_since > dm.txt
	grep -q "$3" dm.txt || fail "$1: no dmesg line matching '$3' (got: $(tr '\n' '|' < dm.txt))"
	info "$1: $2, dmesg: $(grep "$3" dm.txt | head -n1)"
}
refuse xfeatures EOPNOTSUPP 'binfmt_img: .*lacks'
refuse version EINVAL 'binfmt_img: .*format version 99'
# 6.1 takes only 32-byte rseq registrations; an image from a later kernel
# may have a longer one (glibc 2.40+ registers AT_RSEQ_FEATURE_SIZE)
case "$(uname -r)" in
6.1.*) refuse rseq64 EOPNOTSUPP 'binfmt_img: .*rseq area of 64 bytes, registered on a later kernel' ;;
*)
	# memory-deny-write-execute (6.3+), kept by exec, would refuse the
	# restore's mprotect() after the point of no return: refused before
	dmesg_mark
	chmod +x p.img
	timeout -s KILL 10 tryexec --mdwe ./p.img > te.out 2>&1
	grep -q '^tryexec: execve failed: EPERM' te.out || fail "MDWE: $(head -c 80 te.out)"
	dmesg_since | grep -q 'binfmt_img: .*memory-deny-write-execute' || fail "MDWE: no dmesg line"
	;;
esac

control_restore p.img p.out
pass
