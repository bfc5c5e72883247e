#!/bin/sh
# A SysV shm attachment restored in the host's IPC namespace, one image
# (progs/shmmap.c).  The segment is kept (no IPC_RMID), so it outlives the
# killed process.  shmmap attaches it, a second attacher (shmmap -w) talks
# to it through the segment; it is stopped, dumped (`cat /proc/PID/dump`:
# format 4, the mapping "sysvshm shmid N", no pages of it), killed, and the
# image exec'd.  Outside: the restored process maps shmid N at the same
# address (/proc/PID/maps).  Both ways: the second attacher writes a value,
# the restored process sees it and answers in the segment.  Inside: it
# checks on SIGUSR1 that its mapping is the segment (inode = shmid,
# IPC_STAT attached, the byte written before the dump).
# shm-removed: the segment removed before the exec: the exec is refused
# naming the shmid, and the caller survives (the exec fails).
# shm_map-semundo: a process holding a SEM_UNDO adjustment: imgcr dump
# refuses it, naming the thread, and leaves it running.
# shm_map-semshare: a process whose (empty) undo list is shared with a
# child process (clone(CLONE_SYSVSEM)): /proc/PID/dump refuses it, naming
# the thread (the child could add adjustments after the check; before:
# dumped, the sharing dropped), and it goes on.
# shm_map-prot: uid 1000's attachment of its 0600 segment (no x bits),
# attached for writing, then made read-only with its middle page
# executable (mprotect()); uid 1000 execs the image: the middle page is
# r-xs again (before: refused, SHM_EXEC asked for the x bits), and the
# restored process makes the segment writable again and writes (before:
# attached SHM_RDONLY, mprotect() failed with EACCES).
# shm_map-imgcr: the same attachment through imgcr dump and imgcr restore.
# timeout: 300
. /imgcr/guest/lib.sh
require_modules

shmmap > out 2>&1 &
pid=$!
track $pid
wait_line out '^ready ' 20 || fail "shmmap did not start: $(cat out)"
set -- $(grep '^ready ' out)
id=$3
addr=$4
shmmap -w $id 7 > w1 2>&1 || fail "before the dump: $(cat w1)"
stop_task $pid
dump $pid w.img
v=$(imgcr show w.img 2>&1 | sed -n 's/^image: .*format \([0-9]*\)).*/\1/p')
[ "$v" = 4 ] || fail "image format '$v', want 4"
imgcr show w.img | grep -q "^  0*$addr-.* sysvshm .* shmid $id @0 maywrite$" ||
	fail "no sysvshm mapping of shmid $id at $addr: $(imgcr show w.img | grep -i -e sysv -e "$addr")"
kill -9 $pid
wait_gone $pid 10 || fail "shmmap $pid did not die"

chmod +x w.img
./w.img > rout 2> restore.err &
rpid=$!
track $rpid
n=0
until grep -q "^$addr-.* $id " /proc/$rpid/maps 2>/dev/null || [ $n -gt 200 ]; do
	usleep 50000
	n=$((n + 1))
done
grep -q "^$addr-.* $id " /proc/$rpid/maps ||
	fail "restored: no shmid $id at $addr: $(grep -i sysv /proc/$rpid/maps | head -n 2 | tr '\n' '|')$(rerr)"
shmmap -w $id 41 > w2 2>&1 || fail "after the restore, the second attacher: $(cat w2)$(rerr)"
wait_line rout '^echo 41$' 10 || fail "the restored process did not see the value: $(cat rout)"
kill -USR1 $rpid
wait_exit $rpid 30
grep '^FAIL' rout && fail "inside: $(grep FAIL rout | tr '\n' '|')"
grep -q '^shmmap PASS' rout || fail "no 'shmmap PASS' (exit $RC): $(tail -n 2 rout | tr '\n' '|')$(rerr)"
[ "$RC" = 0 ] || fail "restored shmmap exit $RC"
pass "shmid $id attached again at $addr, shared both ways"

T=shm_map-removed
shmmap > out2 2>&1 &
pid=$!
track $pid
wait_line out2 '^ready ' 20 || fail "shmmap did not start: $(cat out2)"
set -- $(grep '^ready ' out2)
id2=$3
stop_task $pid
dump $pid w2.img
kill -9 $pid
wait_gone $pid 10 || fail "shmmap $pid did not die"
shmmap -r $id2 || fail "cannot remove segment $id2"
chmod +x w2.img
dmesg_mark
sh -c './w2.img; echo "exec-failed $?"' > rout2 2>&1
grep -q '^exec-failed' rout2 || fail "the exec was not refused: $(tail -n 2 rout2 | tr '\n' '|')"
dmesg_since | grep -q "SysV shm segment $id2 (mapped at 0x$(sed -n "s/^ready [0-9]* [0-9]* //p" out2)) does not exist" ||
	fail "no refusal naming shmid $id2: $(dmesg_since | grep binfmt_img | tail -n 2 | tr '\n' '|')"
shmmap -r $id
pass "a removed segment: exec refused naming shmid $id2"

T=shm_map-semundo
shmmap -u > out3 2>&1 &
spid=$!
track $spid
wait_line out3 '^ready ' 20 || fail "shmmap -u did not start: $(cat out3)"
semid=$(sed -n 's/^ready [0-9]* //p' out3)
imgcr dump -t $spid -D ck3 > d3.out 2>&1 && fail "a process with SEM_UNDO state was dumped"
grep -q "pid $spid: cannot open /proc/$spid/dump: Operation not supported: thread $spid has SysV semaphore undo state" d3.out ||
	fail "no reason in imgcr's message: $(head -c 300 d3.out)"
sleep 0.2
left_running $spid || fail "the refused process is in state '$(state $spid)'"
kill -9 $spid
ipcrm -s $semid 2>/dev/null || true
pass "$(grep -o 'pid.*' d3.out | head -n1 | cut -c1-160)"

T=shm_map-semshare
shmmap -s > out5 2>&1 &
spid=$!
track $spid
wait_line out5 '^ready ' 20 || fail "shmmap -s did not start: $(cat out5)"
cpid=$(sed -n 's/^ready [0-9]* //p' out5)
track $cpid
stop_task $spid
dmesg_mark
cat /proc/$spid/dump > s5.img 2> d5.err && fail "a process sharing its undo list with process $cpid was dumped"
dmesg_since | grep -q "pid $spid: thread $spid shares its SysV semaphore undo list with another process" ||
	fail "no reason in the kernel log: $(dmesg_since | grep img_dump | tail -n 1)"
kill -CONT $spid
wait_state $spid S 10 || fail "the refused process is in state '$(state $spid)'"
kill -9 $spid $cpid
pass "$(dmesg_since | grep -o 'thread.*' | head -n1 | cut -c1-120)"

T=shm_map-prot
chmod 755 .
: > out6 && chown 1000:1000 out6
runas 1000 1000 shmmap -p > out6 2>&1 &
pid=$!
track $pid
wait_line out6 '^ready ' 20 || fail "shmmap -p did not start: $(cat out6)"
set -- $(grep '^ready ' out6)
id6=$3
addr6=$4
stop_task $pid
dump $pid p6.img
kill9 $pid
chown 1000:1000 p6.img && chmod 755 p6.img
imgcr show p6.img | grep -q "sysvshm .*maywrite" ||
	fail "the image does not say the attachment was for writing: $(imgcr show p6.img | grep sysvshm | head -n 1)"
dmesg_mark
runas 1000 1000 tryexec ./p6.img >> out6 2> restore.err &
rpid=$!
track $rpid
wait_restored $rpid 30 tryexec ||
	fail "not restored: $(tail -n 1 out6)$(rerr) $(dmesg_since | grep binfmt_img | tail -n 1)"
mid=$(printf '%x' $((0x$addr6 + 4096)))
grep -q "^$mid-.* r-xs .* $id6 " /proc/$rpid/maps ||
	fail "outside: the middle page is not r-xs: $(grep " $id6 " /proc/$rpid/maps | tr '\n' '|')"
kill -USR1 $rpid
wait_exit $rpid 30
grep '^FAIL' out6 && fail "inside: $(grep FAIL out6 | tr '\n' '|')"
grep -q '^shmmap PASS' out6 || fail "no 'shmmap PASS' (exit $RC): $(tail -n 2 out6 | tr '\n' '|')$(rerr)"
shmmap -r $id6
pass "shmid $id6: r-xs piece without x bits, writable again after the restore"

# imgcr dump and restore pass the attachment through (the segment is the
# host IPC namespace's, still there).
T=shm_map-imgcr
shmmap > out4 2>&1 &
pid=$!
track $pid
wait_line out4 '^ready ' 20 || fail "shmmap did not start: $(cat out4)"
set -- $(grep '^ready ' out4)
id4=$3
addr4=$4
imgcr dump -t $pid -D d4 2> dump.err || fail "imgcr dump: $(cat dump.err)"
wait_gone $pid 10 || fail "shmmap $pid survived the dump"
imgcr restore -D d4 > restore.out 2> restore.err &
rpid=$!
track $rpid
wait_tasks_restored $pid
grep -q "^$addr4-.* $id4 " /proc/$pid/maps || fail "restored: no shmid $id4 at $addr4$(rerr)"
shmmap -w $id4 77 > w4 2>&1 || fail "after the restore, the second attacher: $(cat w4)$(rerr)"
wait_line out4 '^echo 77$' 10 || fail "the restored process did not see the value: $(cat out4)"
kill -USR1 $pid
wait_exit $rpid 60
grep '^FAIL' out4 && fail "inside: $(grep FAIL out4 | tr '\n' '|')"
grep -q '^shmmap PASS' out4 || fail "no 'shmmap PASS' (imgcr restore exit $RC): $(tail -n 2 out4 | tr '\n' '|')$(rerr)"
[ "$RC" = 0 ] || fail "imgcr restore exit $RC$(rerr)"
shmmap -r $id4
pass "imgcr dump/restore: shmid $id4 attached again at $addr4"
