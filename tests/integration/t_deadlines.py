#!/usr/bin/env python3
"""Deadlines that bytes dripped one at a time cannot push back (conn.h,
"Deadlines"): an ldaps ClientHello dripped one byte every 0.5 s is closed
at tls_handshake_timeout, so is a StartTLS handshake; an LDAP request
dripped before the first complete PDU is closed at first_pdu_timeout; a
client that sends its first request in time is served and then may stay
quiet (first_pdu_timeout is not an idle timeout)."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from lumen_harness import (Lumend, Results, extended, free_port, read_responses,  # noqa: E402
                           search, self_signed_certificate)

R = Results("deadlines")
STARTTLS = "1.3.6.1.4.1.1466.20037"
DEADLINE = 2          # seconds, both options
GIVE_UP = 12          # the drip would go on far longer than this without the fix


def drip(sock, data, interval=0.5, give_up=GIVE_UP):
    """Send data one byte at a time; (closed, seconds until the server closed,
    bytes sent). The server closing shows as a send error or EOF on recv."""
    start = time.monotonic()
    sock.setblocking(False)
    for i, b in enumerate(data):
        if time.monotonic() - start > give_up:
            return False, None, i
        try:
            sock.send(bytes([b]))
        except OSError:
            return True, time.monotonic() - start, i
        end = time.monotonic() + interval
        while time.monotonic() < end:
            try:
                got = sock.recv(4096)
                if not got:
                    return True, time.monotonic() - start, i + 1
            except BlockingIOError:
                pass
            except OSError:
                return True, time.monotonic() - start, i + 1
            time.sleep(0.05)
    return False, None, len(data)


def main():
    import tempfile
    tmp = tempfile.mkdtemp(prefix="lumen-deadlines-")
    cert, key = self_signed_certificate(tmp)
    sport = free_port()
    srv = Lumend(f"TLSCertificateFile {cert}\nTLSCertificateKeyFile {key}\n"
                 f"tls_handshake_timeout {DEADLINE}\nfirst_pdu_timeout {DEADLINE}\n",
                 extra_urls=(f"ldaps://127.0.0.1:{sport}/",))
    try:
        # 1. ldaps: a ClientHello record header announcing 512 bytes, dripped.
        hello = b"\x16\x03\x01\x02\x00" + b"\x01" + b"\x00" * 511
        s = socket.create_connection(("127.0.0.1", sport), timeout=5)
        closed, after, sent = drip(s, hello)
        s.close()
        R.check("ldaps: dripped ClientHello closed at the handshake deadline",
                closed and after < DEADLINE + 4, (closed, after, sent))
        R.check("ldaps: closed after the deadline, not before", after is None or
                after >= DEADLINE - 0.5, after)

        # 2. StartTLS: answered, then the handshake dripped.
        s = srv.connect()
        s.sendall(extended(1, STARTTLS))
        r, _ = read_responses(s, 1)
        R.check("StartTLS answered", r and r[0].code == 0, r and r[0].code)
        closed, after, sent = drip(s, hello)
        s.close()
        R.check("StartTLS: dripped handshake closed at the deadline",
                closed and after < DEADLINE + 4, (closed, after, sent))

        # 3. plain LDAP: a search request dripped, never complete in time.
        req = search(1, attrs=("objectClass",) * 8)
        s = srv.connect()
        closed, after, sent = drip(s, req)
        s.close()
        R.check("plain: dripped first PDU closed at first_pdu_timeout",
                closed and after < DEADLINE + 4 and sent < len(req), (closed, after, sent))

        # 4. a prompt first request is served, and quiet afterwards is fine.
        s = srv.connect()
        s.sendall(search(1))
        r, _ = read_responses(s, 2)
        R.check("prompt client served", len(r) == 2 and r[-1].code == 0, [x.code for x in r])
        time.sleep(DEADLINE + 1)
        s.sendall(search(2))
        r, closed = read_responses(s, 2)
        R.check("quiet after the first request: still served", len(r) == 2 and not closed,
                (closed, [x.code for x in r]))
        s.close()

        log = srv.log_text()
        R.check("log: handshake timed out", "TLS handshake timed out" in log)
        R.check("log: first PDU deadline", "no complete request within first_pdu_timeout" in log)
    finally:
        srv.stop(R)
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    R.finish()


if __name__ == "__main__":
    main()
