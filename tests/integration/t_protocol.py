#!/usr/bin/env python3
"""Raw-socket protocol tests: malformed and oversized PDUs, PROTOS c06
vectors, pipelining, abandon, unbind, LDAPv2, SASL, unknown extended ops.
After each hostile input the daemon must still answer a normal search."""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

r = h.Results("t_protocol.py")
server = h.Lumend()


def root_dse_works(label):
    with server.connect() as s:
        s.sendall(h.search(7))
        responses, _ = h.read_responses(s, 2)
    ok = (len(responses) == 2 and responses[0].op == 0x64 and responses[1].op == 0x65
          and responses[1].code == 0 and all(x.msgid == 7 for x in responses))
    r.check(f"{label}: still answers a search afterwards", ok and server.alive(),
            repr([(x.msgid, x.op, x.code) for x in responses]))


def expect_disconnect(label, payload):
    with server.connect() as s:
        s.sendall(payload)
        responses, closed = h.read_responses(s, None, timeout=5)
    notice = [x for x in responses if x.is_notice_of_disconnection()]
    r.check(f"{label}: notice of disconnection (protocolError) and close",
            closed and len(notice) == 1 and notice[0].code == 2,
            f"closed={closed} responses={[(x.msgid, x.op, x.code) for x in responses]}")
    root_dse_works(label)


good = h.search(1)
malformed = [
    ("inner element truncated", bytes([0x30, 0x05, 0x02, 0x01, 0x01, 0x63, 0x10])),
    ("indefinite length", bytes([0x30, 0x80]) + good[2:] + b"\x00\x00"),
    ("length beyond the anonymous limit", bytes([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF])),
    ("just over 256 KiB", bytes([0x30, 0x83, 0x04, 0x00, 0x01])),
    ("five length octets", bytes([0x30, 0x85, 0, 0, 0, 0, 5])),
    ("garbage", b"\xff\xfe\xfd\xfc GET / HTTP/1.0\r\n\r\n"),
    ("not a SEQUENCE", bytes([0x04, 0x03]) + b"abc"),
    ("message id not an integer", h.tlv(0x30, h.octets("x") + h.tlv(0x42, b""))),
    ("response op sent by a client", h.message(3, h.tlv(0x64, h.octets("") + h.tlv(0x30, b"")))),
    ("unknown application tag", h.message(3, h.tlv(0x7E, b""))),
    ("bind with trailing junk", h.tlv(0x30, h.integer(1) + h.tlv(0x60, h.integer(3)
                                                          + h.octets("") + h.octets("", 0x80)
                                                          + b"\x04\x00"))),
]
for label, payload in malformed:
    expect_disconnect(label, payload)

# A PDU cut short and then the client leaves: nothing to answer, no leak.
with server.connect() as s:
    s.sendall(good[:len(good) // 2])
root_dse_works("truncated stream then close")

# A bound connection may send bigger PDUs than an anonymous one.
big = h.search(2, attrs=("x" * 300000,))
with server.connect() as s:
    s.sendall(h.bind_simple(1, "cn=admin,dc=example,dc=com", "secret") + big)
    responses, closed = h.read_responses(s, 3)
r.check("300 KB search after bind is accepted",
        [x.op for x in responses] == [0x61, 0x64, 0x65] and not closed,
        repr([(x.msgid, x.op, x.code) for x in responses]))
expect_disconnect("300 KB search before bind", big)

# PROTOS c06-ldapv3-enc vectors, if present.
protos_dir = os.path.join(h.ROOT, "..", "shared", "testdata", "protos-c06-ldapv3-enc")
if os.path.isdir(protos_dir):
    names = sorted(os.listdir(protos_dir))
    crashed = []
    for name in names:
        with open(os.path.join(protos_dir, name), "rb") as f:
            data = f.read()
        try:
            with server.connect() as s:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                h.read_responses(s, None, timeout=3)
        except OSError:
            pass
        if not server.alive():
            crashed.append(name)
            break
    r.check(f"PROTOS c06: {len(names)} vectors, daemon stays up", not crashed, repr(crashed))
    root_dse_works("PROTOS c06")
else:
    print("  skip t_protocol.py: PROTOS vectors not found")

# Pipelining: many searches in one write, each answered with its own id.
with server.connect() as s:
    s.sendall(b"".join(h.search(i) for i in range(1, 41)))
    responses, _ = h.read_responses(s, 80)
ids = sorted(x.msgid for x in responses if x.op == 0x65)
entries = sorted(x.msgid for x in responses if x.op == 0x64)
r.check("40 pipelined searches all answered with matching ids",
        ids == list(range(1, 41)) and entries == list(range(1, 41)),
        f"done={ids} entries={entries}")

# Abandon: never answered itself; later operations still answered.
with server.connect() as s:
    s.sendall(h.search(1) + h.abandon(2, 1) + h.abandon(3, 999) + h.search(4))
    responses, _ = h.read_responses(s, None, timeout=2)
ids = [x.msgid for x in responses]
r.check("abandon gets no response; a later search is answered",
        2 not in ids and 3 not in ids and ids.count(4) == 2 and ids.count(1) in (0, 2),
        repr(ids))

# Unbind: the server closes the connection.
with server.connect() as s:
    s.sendall(h.search(1) + h.unbind(2))
    responses, closed = h.read_responses(s, None, timeout=5)
r.check("unbind closes the connection", closed and 2 not in [x.msgid for x in responses])

# Bind corner cases and extended operations.
cases = [
    ("LDAPv2 bind: protocolError", h.bind_simple(1, version=2), 0x61, 2),
    ("SASL bind: authMethodNotSupported", h.bind_sasl(1, "DIGEST-MD5"), 0x61, 7),
    ("anonymous bind with a password: inappropriateAuthentication",
     h.bind_simple(1, "", "x"), 0x61, 48),
    ("unknown extended op: protocolError", h.extended(1, "1.2.3.4.5"), 0x78, 2),
    ("WhoAmI with a value: protocolError", h.extended(1, "1.3.6.1.4.1.4203.1.11.3", "x"), 0x78, 2),
    ("delete outside the suffixes: unwillingToPerform (slapd: no global superior knowledge)",
     h.message(1, h.tlv(0x4A, b"cn=x,dc=nowhere")), 0x6B, 53),
]
for label, payload, op, code in cases:
    with server.connect() as s:
        s.sendall(payload)
        responses, _ = h.read_responses(s, 1)
    got = [(x.msgid, x.op, x.code) for x in responses]
    r.check(label, got == [(1, op, code)], repr(got))

with server.connect() as s:
    s.sendall(h.extended(1, "1.2.3.4.5"))
    responses, _ = h.read_responses(s, 1)
r.check("unknown extended op diagnostic names the OID",
        responses and b"1.2.3.4.5" in responses[0].diagnostic,
        repr(responses[0].diagnostic if responses else None))

# A request that carries StartTLS's OID without being StartTLS does not
# stop reading: here a Cancel (answered at once, never an operation) with
# a control of that OID, then a search on the same connection. Reading
# used to stop until the "StartTLS" ended, which a Cancel never does.
STARTTLS_OID = "1.3.6.1.4.1.1466.20037"
cancel_with_oid = h.message(
    1, h.tlv(0x77, h.octets("1.3.6.1.1.8", 0x80) + h.tlv(0x81, h.tlv(0x30, h.integer(99)))),
    h.tlv(0xA0, h.tlv(0x30, h.octets(STARTTLS_OID))))
with server.connect() as s:
    s.sendall(cancel_with_oid)
    first, _ = h.read_responses(s, 1)
    s.sendall(h.search(2))
    after, _ = h.read_responses(s, 2)
got = [(x.msgid, x.op, x.code) for x in first + after]
r.check("a Cancel carrying the StartTLS OID: noSuchOperation, and the next search answered",
        got == [(1, 0x78, 119), (2, 0x64, None), (2, 0x65, 0)], repr(got))

# Bind then WhoAmI on one connection; a failed bind makes it anonymous again.
with server.connect() as s:
    s.sendall(h.bind_simple(1, "cn=admin,dc=example,dc=com", "secret")
              + h.extended(2, "1.3.6.1.4.1.4203.1.11.3")
              + h.bind_simple(3, "cn=admin,dc=example,dc=com", "bad")
              + h.extended(4, "1.3.6.1.4.1.4203.1.11.3"))
    responses, _ = h.read_responses(s, 4)
got = [(x.msgid, x.code, x.value) for x in responses]
r.check("bind, whoami, failed bind, whoami",
        got == [(1, 0, None), (2, 0, b"dn:cn=admin,dc=example,dc=com"), (3, 49, None), (4, 0, b"")],
        repr(got))

server.stop(r)
r.finish()
