#!/usr/bin/env python3
"""Limits: conn_max and conn_max_per_ip (extra connections closed right
after accept, others unaffected), `limits` per identity (anonymous gets
sizeLimitExceeded, the rootdn none), the PDU bound before bind, the filter
depth bound, idletimeout, and a client that stops reading its results while
another client keeps being served."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import (Lumend, Results, bind_simple, extended, message, octets,
                           integer, read_responses, search, tlv)

R = Results("t_limits.py")
WHOAMI = "1.3.6.1.4.1.4203.1.11.3"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tree.ldif")


def whoami_ok(sock, msgid=1):
    sock.sendall(extended(msgid, WHOAMI))
    r, _ = read_responses(sock, 1)
    return bool(r) and r[0].code == 0


def refused(sock):
    """The server closed the socket without answering."""
    try:
        sock.sendall(extended(1, WHOAMI))
    except OSError:
        return True
    r, closed = read_responses(sock, 1, timeout=5)
    return closed and not r


# --- conn_max_per_ip -----------------------------------------------------
srv = Lumend("conn_max_per_ip 3\nidletimeout 2")


def working_connections(server, n):
    """n working connections, once earlier ones are gone (the harness's
    start-up probe, a client that just ended): the server may still be
    tearing those down (slowly under ASan), and until then they count
    against the bound."""
    for _ in range(20):
        socks = [server.connect() for _ in range(n)]
        if all(whoami_ok(s) for s in socks):
            return socks, True
        for s in socks:
            s.close()
        time.sleep(0.25)
    return socks, False


held, working = working_connections(srv, 3)
R.check("three connections from one address work", working)
extra = srv.connect()
R.check("the fourth is closed after accept", refused(extra))
R.check("the first three are unaffected", all(whoami_ok(s, 2) for s in held))
R.check("log names conn_max_per_ip", srv.log_has("conn_max_per_ip (3) reached"))
for s in held:
    s.close()
time.sleep(0.5)
again = srv.connect()
R.check("a slot frees when a connection closes", whoami_ok(again))
# idletimeout 2: an idle connection is closed by the server.
_, closed = read_responses(again, 1, timeout=10)
R.check("idletimeout closes an idle connection", closed)
srv.stop(R)

# --- conn_max, limits, PDU and filter bounds, slow reader --------------------
srv = Lumend("conn_max 4\nsockbuf_max_incoming 2048\nlimits anonymous size=2\n"
             "sizelimit 500")
load = subprocess.run(["ldapadd", "-x", "-H", f"ldap://127.0.0.1:{srv.port}", "-D",
                       "cn=admin,dc=example,dc=com", "-w", "secret", "-f", DATA],
                      capture_output=True)
R.check("tree loads", load.returncode == 0, load.stderr)
held, working = working_connections(srv, 4)
R.check("conn_max connections work", working)
R.check("one more is closed after accept", refused(srv.connect()))
R.check("log names conn_max", srv.log_has("conn_max (4) reached"))
for s in held[1:]:
    s.close()
time.sleep(0.5)
s = held[0]


def search_sub(sock, msgid):
    sock.sendall(search(msgid, "dc=example,dc=com", scope=2, attrs=("1.1",)))
    r, _ = read_responses(sock, 100, timeout=5)
    done = [x for x in r if x.op == 0x65]
    return len([x for x in r if x.op == 0x64]), (done[0].code if done else None)


n, code = search_sub(s, 10)
R.check("limits anonymous size=2: sizeLimitExceeded after 2 entries", (n, code) == (2, 4),
        (n, code))
s.sendall(bind_simple(11, "cn=admin,dc=example,dc=com", "secret"))
read_responses(s, 1)
n, code = search_sub(s, 12)
R.check("the rootdn is not limited", code == 0 and n > 2, (n, code))

# PDU bound before bind (2048 bytes): a bigger request disconnects.
big = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
big.sendall(message(1, tlv(0x77, octets("1.2.3", 0x80) + octets("x" * 4000, 0x81))))
r, closed = read_responses(big, 2, timeout=5)
R.check("PDU over sockbuf_max_incoming: notice of disconnection and close",
        closed and any(x.is_notice_of_disconnection() for x in r), (closed, r))

# Filter nesting beyond the bound (maxfilterdepth, 1000 by default): the
# request is refused, the server lives.
deep = octets("objectClass", 0x87)
for _ in range(1001):
    deep = tlv(0xA0, deep)
f = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
body = (octets("dc=example,dc=com") + integer(2, 0x0A) + integer(0, 0x0A) + integer(0)
        + integer(0) + tlv(0x01, b"\x00") + deep + tlv(0x30, b""))
f.sendall(message(1, tlv(0x63, body)))
r, closed = read_responses(f, 1, timeout=5)
R.check("filter nested 1001 deep: protocolError or disconnect",
        closed or (r and r[0].code == 2), (closed, [x.code for x in r]))
f.close()

# A client that never reads: many searches queued, its output held back;
# another client is served meanwhile and the server stays up.
slow = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
slow.sendall(bind_simple(1, "cn=admin,dc=example,dc=com", "secret"))
payload = b"".join(search(i, "dc=example,dc=com", scope=2, attrs=("*", "+"))
                   for i in range(2, 400))
slow.setblocking(False)
try:
    slow.sendall(payload)
except (BlockingIOError, OSError):
    pass
time.sleep(1)
other = srv.connect()
R.check("another client is served while one does not read", whoami_ok(other))
R.check("the server is alive", srv.alive())
slow.close()
other.close()
s.close()
srv.stop(R)
R.finish()
