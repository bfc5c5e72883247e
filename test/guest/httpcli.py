# httpcli.py PORT OUT: a keep-alive HTTP/1.1 client of t_sk_tcp_http.
# One connection (http.client with auto_open off: it never reconnects),
# GET /data.bin again and again, every answer checked against the file's
# SHA-256 in www/data.sha; one line per request to OUT: "req N port P ok"
# (P: the client's port, the same connection), or "BAD ..." and exit 1.
import hashlib
import http.client
import os
import sys
import time

port, out = int(sys.argv[1]), sys.argv[2]
want = open("www/data.sha").read().split()[0]
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def say(s):
    os.write(fd, (s + "\n").encode())


c = http.client.HTTPConnection("127.0.0.1", port)
for i in range(600):  # the server starting
    try:
        c.connect()
        break
    except OSError:
        time.sleep(0.1)
else:
    say("BAD cannot connect")
    sys.exit(1)
c.auto_open = 0
me = c.sock.getsockname()[1]
n = 0
while True:
    n += 1
    try:
        c.request("GET", "/data.bin")
        r = c.getresponse()
        body = r.read()
    except Exception as e:
        say("BAD req %d: %r" % (n, e))
        sys.exit(1)
    if r.status != 200 or hashlib.sha256(body).hexdigest() != want:
        say("BAD req %d: status %d, %d bytes, not the file" % (n, r.status, len(body)))
        sys.exit(1)
    if c.sock is None or c.sock.getsockname()[1] != me:
        say("BAD req %d: not the same connection" % n)
        sys.exit(1)
    say("req %d port %d ok" % (n, me))
    time.sleep(0.05)
