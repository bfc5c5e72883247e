# pyloop.py TARGET [N]: t_python's and t_xkernel_dump's python3 program: a
# dict of N entries (default 200000), then "i I sum S" for I = 1..TARGET
# every ~100 ms, then the dict verified against its checksum ("python ok").
import sys, time

target = int(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200000

def checksum(d):
    s = 0
    for k, v in d.items():
        s = (s * 1000003 + int(k[3:]) * v[0] + len(v[1])) % (1 << 61)
    return s

d = {}
for k in range(N):
    d["key%06d" % k] = ((k * 2654435761) % 1000003, str(k * 7) * (1 + k % 3))
ref = checksum(d)
print("built %d ref %d" % (len(d), ref), flush=True)
i = s = 0
while i < target:
    i += 1
    s += i
    print("i %d sum %d" % (i, s), flush=True)
    time.sleep(0.1)
got = checksum(d)
ok = got == ref and len(d) == N and s == target * (target + 1) // 2
print("python %s got %d ref %d" % ("ok" if ok else "BAD", got, ref), flush=True)
sys.exit(0 if ok else 1)
