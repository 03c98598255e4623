#!/usr/bin/env python3
"""A client that pipelines large searches and stops reading must not stop
the server: with `threads 2`, other clients' searches are still answered
while it stalls (its searches pause and are parked, freeing the workers),
`writetimeout` closes it (log line), a client that stalls for a while and
then reads gets every entry exactly once, and abandoned or unbound parked
searches are cleaned up (ASan builds: no leak at exit); idletimeout closes
a client that stopped reading even with writetimeout 0."""
import os
import socket
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import (Lumend, Results, abandon, bind_simple, integer, message, octets,
                           parse_tlv, read_responses, tlv, unbind, write_people_ldif)

R = Results("t_stalled_client.py")
ENTRIES = 3000
WRITETIMEOUT = 6
ROOTDN, ROOTPW = "cn=admin,dc=example,dc=com", "secret"


def search_req(msgid, base="ou=People,dc=example,dc=com", scope=2, flt="objectClass",
               value=None, attrs=()):
    """A SearchRequest: presence filter, or equality when value is given."""
    f = octets(flt, 0x87) if value is None else tlv(0xA3, octets(flt) + octets(value))
    body = (octets(base) + integer(scope, 0x0A) + integer(0, 0x0A) + integer(0) + integer(0)
            + tlv(0x01, b"\x00") + f + tlv(0x30, b"".join(octets(a) for a in attrs)))
    return message(msgid, tlv(0x63, body))


def read_results(sock, n_done, timeout):
    """Read until n_done SearchResultDone arrived: {msgid: [entries, code,
    ascending uid order kept]} and whether the peer closed."""
    sock.settimeout(timeout)
    deadline = time.time() + timeout
    buf, res, pos, done, closed = bytearray(), {}, 0, 0, False
    while done < n_done:
        framed = parse_tlv(buf, pos)
        if framed is not None:
            _, start, end = framed
            _, s, e = parse_tlv(buf, start)
            msgid = int.from_bytes(buf[s:e], "big")
            op = buf[e]
            r = res.setdefault(msgid, [0, None])
            if op == 0x64:
                r[0] += 1
            elif op == 0x65:
                _, cs, ce = parse_tlv(buf, parse_tlv(buf, e)[1])
                r[1] = int.from_bytes(buf[cs:ce], "big")
                done += 1
            pos = end
            if pos > 1 << 20:
                del buf[:pos]
                pos = 0
            continue
        remaining = deadline - time.time()
        if remaining <= 0:
            break
        sock.settimeout(remaining)
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            break
        except ConnectionResetError:
            closed = True
            break
        if not data:
            closed = True
            break
        buf += data
    return res, closed


def bound(srv, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(bind_simple(1, ROOTDN, ROOTPW))
    r, _ = read_responses(s, 1)
    assert r and r[0].code == 0
    return s


def one_search_latency(sock, msgid):
    """Seconds for an indexed-equality search on a busy server; None if
    no answer came within 20 s."""
    t0 = time.monotonic()
    sock.sendall(search_req(msgid, flt="uid", value=f"u{msgid % ENTRIES}"))
    res, _ = read_results(sock, 1, 20)
    if res.get(msgid, [0, None])[1] != 0:
        return None
    return time.monotonic() - t0


def pipeline(sock, first, count):
    sock.setblocking(False)
    payload = b"".join(search_req(i, attrs=("*",)) for i in range(first, first + count))
    try:
        sock.sendall(payload)
    except (BlockingIOError, OSError):
        pass
    sock.setblocking(True)


tmp = tempfile.mkdtemp(prefix="lumen-stall-")
ldif = os.path.join(tmp, "people.ldif")
write_people_ldif(ldif, ENTRIES)
srv = Lumend(f"threads 2\nwritetimeout {WRITETIMEOUT}\nsizelimit unlimited\n",
             db_config="index uid eq", preload=ldif)

other = bound(srv)
baseline = [one_search_latency(other, 100 + i) for i in range(20)]
R.check("baseline searches answered", None not in baseline, baseline)

# --- 1. a stalled client does not stop the others ---------------------------
stalled = bound(srv, rcvbuf=4096)
pipeline(stalled, 2, 40)       # 40 searches of ~3 MB each, never read
time.sleep(1.5)                # the workers have met its full output queue
during = []
for i in range(20):
    during.append(one_search_latency(other, 200 + i))
    if during[-1] is None:
        break                  # unanswered for 20 s: the workers are stuck
still_open = "writetimeout" not in srv.log_text()
R.check("another client's searches are answered while one client stalls",
        None not in during, during)
R.check("... and the stalled connection was still open then", still_open)
if None not in during and None not in baseline:
    print(f"  info latency of other client's searches: baseline median "
          f"{statistics.median(baseline) * 1000:.2f} ms max {max(baseline) * 1000:.2f} ms; "
          f"while one client stalls: median {statistics.median(during) * 1000:.2f} ms "
          f"max {max(during) * 1000:.2f} ms")

# --- 2. writetimeout closes the stalled connection --------------------------
deadline = time.time() + WRITETIMEOUT * 5
closed = False
while time.time() < deadline and not closed:
    closed = f"closing: writetimeout" in srv.log_text()
    time.sleep(0.2)
R.check("writetimeout: the log says the stalled connection is closed", closed,
        srv.log_text()[-1500:])
# Its socket ends: what was buffered, then EOF (or a reset).
_, eof = read_results(stalled, 41, 20)
R.check("writetimeout: the stalled client sees the connection end", eof)
stalled.close()
R.check("the other client is still served", one_search_latency(other, 300) is not None)

# --- 3. a client that stalls for a while, then reads, gets everything -------
slow = bound(srv, rcvbuf=4096)
pipeline(slow, 2, 3)
time.sleep(2)                  # well under writetimeout: paused, not closed
res, _ = read_results(slow, 3, 60)
R.check("a resumed search sends every entry once, then success",
        all(res.get(i) == [ENTRIES + 1, 0] for i in (2, 3, 4)), res)
slow.close()

# --- 4. abandon and unbind of parked searches -------------------------------
gone = bound(srv, rcvbuf=4096)
pipeline(gone, 2, 10)
time.sleep(1)
gone.sendall(abandon(50, 2) + abandon(51, 3))
time.sleep(0.5)
gone.sendall(unbind(52))
gone.close()
time.sleep(1)
R.check("after abandon and unbind of parked searches the server serves",
        one_search_latency(other, 400) is not None)
other.close()
R.check("the server is alive", srv.alive())
srv.stop(R)

# --- 5. idletimeout: pending output and parked searches are not activity ---
srv = Lumend("threads 2\nwritetimeout 0\nidletimeout 2\nsizelimit unlimited\n",
             db_config="index uid eq", preload=ldif)
idle = bound(srv, rcvbuf=4096)
pipeline(idle, 2, 10)
deadline = time.time() + 30
while time.time() < deadline and " idle timeout" not in srv.log_text():
    time.sleep(0.2)
R.check("idletimeout closes a client that stopped reading (writetimeout 0)",
        " idle timeout" in srv.log_text(), srv.log_text()[-1500:])
idle.close()
srv.stop(R)
os.unlink(ldif)
os.rmdir(tmp)
R.finish()
