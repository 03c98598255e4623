#!/usr/bin/env python3
"""A refresh larger than a connection's output bound, read by a client that
stalls: the search pauses (its worker and snapshot released) and resumes
when the client reads, over several calls. Each call runs in a fresh
arena, so what syncprov keeps between them (the refresh's contextCSN, the
delete-phase flag) must live in the search's resume state by value: the
Sync Done cookie at the end must name the contextCSN taken when the refresh
started, and every entry must have come with its Sync State control.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

R = h.Results("t_syncprov_paused.py")
SUFFIX = "dc=example,dc=com"
ENTRIES = 4000          # ~4 MB of output: several pauses at the 1 MiB bound
SYNC_REQUEST_OID = "1.3.6.1.4.1.4203.1.9.1.1"
SYNC_STATE_OID = b"1.3.6.1.4.1.4203.1.9.1.2"
SYNC_DONE_OID = b"1.3.6.1.4.1.4203.1.9.1.3"


def sync_search(msgid):
    control = h.tlv(0x30, h.octets(SYNC_REQUEST_OID) + h.tlv(0x01, b"\xff")
                    + h.octets(b"\x30\x03\x0a\x01\x01"))
    body = (h.octets(SUFFIX) + h.integer(2, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
            + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets("objectClass", 0x87)
            + h.tlv(0x30, h.octets("*")))
    return h.message(msgid, h.tlv(0x63, body), h.tlv(0xA0, control))


def read_until_done(sock, seconds=60):
    """Raw messages until the SearchResultDone (op 0x65)."""
    sock.settimeout(seconds)
    buf, messages = b"", []
    deadline = time.time() + seconds
    while time.time() < deadline:
        framed = h.parse_tlv(buf)
        if framed is not None:
            raw, buf = buf[:framed[2]], buf[framed[2]:]
            messages.append(raw)
            if h.Response(raw).op == 0x65:
                return messages
            continue
        data = sock.recv(1 << 16)
        if not data:
            break
        buf += data
    return messages


def context_csn(srv):
    """The contextCSN a quick refresh hands out (ldapsearch prints it)."""
    p = subprocess.run(["ldapsearch", "-x", "-H", f"ldap://127.0.0.1:{srv.port}",
                        "-D", "cn=admin,dc=example,dc=com", "-w", "secret", "-b",
                        SUFFIX, "-s", "base", "-E", "!sync=ro", "(objectClass=*)", "1.1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    m = re.search(r"cookie: csn=(\S+)", p.stdout.decode(errors="replace"))
    return m.group(1) if m else None


def main():
    tmp = tempfile.mkdtemp(prefix="lumen-it-paused-")
    ldif = os.path.join(tmp, "people.ldif")
    h.write_people_ldif(ldif, ENTRIES, description_bytes=1000)
    srv = h.Lumend(db_config="index objectClass eq\noverlay syncprov\n", preload=ldif)
    try:
        before = context_csn(srv)
        R.check("a quick refresh names the contextCSN", before is not None)
        sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        sock.sendall(h.bind_simple(1, "cn=admin,dc=example,dc=com", "secret"))
        bound, _ = h.read_responses(sock, 1)
        R.check("bound as the rootdn (no size limit)", bound and bound[0].code == 0)
        sock.sendall(sync_search(2))
        time.sleep(2)           # read nothing: the refresh fills its bound and pauses
        messages = read_until_done(sock)
        sock.close()
        entries = [m for m in messages if h.Response(m).op == 0x64]
        done = messages[-1] if messages else b""
        R.check(f"every entry arrives ({len(entries)} of {ENTRIES + 2})",
                len(entries) == ENTRIES + 2)
        R.check("every entry carries its Sync State control",
                all(SYNC_STATE_OID in m for m in entries))
        R.check("the search ends in success with the Sync Done control",
                h.Response(done).code == 0 and SYNC_DONE_OID in done)
        R.check("its cookie names the contextCSN the refresh started with",
                before is not None and f"csn={before}".encode() in done, repr(done[-120:]))
    finally:
        srv.stop(R)
    R.finish()


main()
