#!/usr/bin/env python3
"""Cancel (RFC 3909, extended op 1.3.6.1.1.8) on raw sockets, so that several
requests can reach the server in one segment (a queued operation is then
deterministically not yet running when its Cancel is read):

- an unknown message ID: noSuchOperation (119);
- malformed request values and a missing value: protocolError, and the
  connection stays usable;
- a queued Add, Modify and extended operation: answered canceled (118), the
  Cancel success, nothing written;
- a second Cancel of the same operation: operationsError; a Cancel naming a
  Cancel that waits for its target: cannotCancel (121);
- an abandoned operation: tooLate (120), and it stays unanswered;
- a large search paused on a client that does not read, and a persistent
  (syncprov refreshAndPersist) search: both end promptly with canceled,
  followed by the Cancel's success;
- python-ldap's own cancel() on a persistent search.

The same scenarios run against Debian's slapd 2.5; where slapd's answer is
deterministic (unknown ID, malformed values it also refuses, Bind then
Cancel, the paused and the persistent search, python-ldap's cancel()) the
test asserts the same answers; elsewhere it prints what slapd answered:
slapd runs the requests of one segment concurrently, so its queued Add
usually commits (tooLate) where Lumen cancels it.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_cancel.py")
CANCEL = "1.3.6.1.1.8"
WHOAMI = "1.3.6.1.4.1.4203.1.11.3"
SYNC_REQUEST_OID = "1.3.6.1.4.1.4203.1.9.1.1"
PEOPLE = "ou=People," + sh.SUFFIX
ENTRIES = 3000           # ~9 MB of search output: the search pauses
DESCRIPTION_BYTES = 3000
SEARCH_DONE, EXT_RESPONSE, ADD_RESPONSE, INTERMEDIATE = 0x65, 0x78, 0x69, 0x79


def cancel_value(msgid):
    return h.tlv(0x30, h.integer(msgid))


def cancel(msgid, target):
    return h.extended(msgid, CANCEL, cancel_value(target))


def add(msgid, dn):
    attrs = h.tlv(0x30, h.octets("objectClass") + h.tlv(0x31, h.octets("organizationalUnit")))
    attrs += h.tlv(0x30, h.octets("ou") + h.tlv(0x31, h.octets(dn.split(",")[0][3:])))
    return h.message(msgid, h.tlv(0x68, h.octets(dn) + h.tlv(0x30, attrs)))


def subtree_search(msgid, base, attrs=("*",), controls=b"", filter_present="objectClass"):
    body = (h.octets(base) + h.integer(2, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
            + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets(filter_present, 0x87)
            + h.tlv(0x30, b"".join(h.octets(a) for a in attrs)))
    return h.message(msgid, h.tlv(0x63, body), controls)


def persist_search(msgid):
    """refreshAndPersist (mode 3) on the suffix entry alone."""
    control = h.tlv(0x30, h.octets(SYNC_REQUEST_OID) + h.tlv(0x01, b"\xff")
                    + h.octets(b"\x30\x03\x0a\x01\x03"))
    body = (h.octets(sh.SUFFIX) + h.integer(0, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
            + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets("objectClass", 0x87)
            + h.tlv(0x30, h.octets("1.1")))
    return h.message(msgid, h.tlv(0x63, body), h.tlv(0xA0, control))


def summary(responses):
    """[(msgid, op, code)] without search entries (op 0x64)."""
    return [(r.msgid, r.op, r.code) for r in responses if r.op != 0x64]


def read_finals(sock, finals, timeout=5):
    """Messages until `finals` of them are not search entries (0x64), or the
    timeout: a search may send entries before it is cancelled, and reading
    a fixed count of messages would stop short and leave the rest of the
    stream, cut mid-message, to the next scenario."""
    out, _ = h.read_messages_until(
        sock, lambda got: sum(1 for r in got if r.op != 0x64) >= finals, timeout)
    return out


def bound_socket(server, rcvbuf=None):
    s = socket.socket()
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)   # before connect
    s.settimeout(10)
    s.connect(("127.0.0.1", server.port))
    s.sendall(h.bind_simple(1, sh.ROOTDN, sh.ROOTPW))
    responses, _ = h.read_responses(s, count=1)
    assert responses and responses[0].code == 0, "bind failed"
    return s


def read_until(sock, msgid, op, seconds=20):
    """Messages until one with msgid and op arrived (or the time is up)."""
    out, _ = h.read_messages_until(
        sock, lambda got: bool(got) and got[-1].msgid == msgid and got[-1].op == op, seconds)
    return out


def exists(server, dn):
    conn = sh.bind(server)
    try:
        conn.search_s(dn, ldap.SCOPE_BASE, attrlist=["1.1"])
        return True
    except ldap.NO_SUCH_OBJECT:
        return False
    finally:
        conn.unbind_s()


def run_scenarios(server):
    """What server answers in each scenario: {name: observation}."""
    seen = {}
    with bound_socket(server) as s:
        s.sendall(cancel(2, 99))
        seen["unknown"] = summary(h.read_responses(s, count=1)[0])
        bad = [b"", b"\x02\x01\x05", b"\x30\x03\x02\x01\xff", b"\x30\x03\x04\x01\x05",
               b"\x30\x03\x02\x01\x05\x00"]
        codes = []
        for i, value in enumerate(bad):
            s.sendall(h.extended(10 + i, CANCEL, value))
            codes.append(summary(h.read_responses(s, count=1)[0]))
        s.sendall(h.extended(20, CANCEL))
        codes.append(summary(h.read_responses(s, count=1)[0]))
        seen["malformed"] = codes
        s.sendall(h.extended(21, WHOAMI))
        seen["usable after malformed"] = summary(h.read_responses(s, count=1)[0])

        s.sendall(add(30, "ou=cancelled," + sh.SUFFIX) + cancel(31, 30))
        seen["queued add"] = summary(h.read_responses(s, count=2, timeout=5)[0])

        change = h.tlv(0x30, h.integer(2, 0x0A) + h.tlv(0x30, h.octets("description")
                                                         + h.tlv(0x31, h.octets("changed"))))
        s.sendall(h.message(32, h.tlv(0x66, h.octets(PEOPLE) + h.tlv(0x30, change)))
                  + cancel(33, 32) + h.extended(34, WHOAMI) + cancel(35, 34))
        seen["queued modify and extended"] = summary(h.read_responses(s, count=4, timeout=5)[0])

        # Subtree searches: a worker runs them (a base one would run to
        # completion on the I/O thread before the Cancel is read).
        s.sendall(h.search(40, sh.SUFFIX, scope=2, attrs=("1.1",)) + cancel(41, 40) + cancel(42, 40)
                  + cancel(43, 41))
        seen["cancel twice"] = summary(read_finals(s, 4, timeout=5))

        s.sendall(h.search(50, sh.SUFFIX, scope=2, attrs=("1.1",)) + h.abandon(51, 50)
                  + cancel(52, 50))
        seen["abandoned"] = summary(read_finals(s, 2, timeout=3))
    seen["queued add left nothing"] = not exists(server, "ou=cancelled," + sh.SUFFIX)
    conn = sh.bind(server)
    seen["queued modify left nothing"] = "description" not in conn.search_s(
        PEOPLE, ldap.SCOPE_BASE, attrlist=["description"])[0][1]
    conn.unbind_s()

    with bound_socket(server, rcvbuf=65536) as s:
        s.sendall(subtree_search(60, PEOPLE))
        time.sleep(1.0)                       # the search fills the socket and pauses
        started = time.time()
        s.sendall(cancel(61, 60))
        out = read_until(s, 61, EXT_RESPONSE)
        seen["paused search"] = summary(out)
        seen["paused search entries"] = sum(1 for r in out if r.op == 0x64)
        seen["paused search seconds"] = time.time() - started

    with bound_socket(server) as s:
        s.sendall(persist_search(70))
        refresh = read_until(s, 70, INTERMEDIATE, seconds=10)
        seen["persist refreshed"] = any(r.op == INTERMEDIATE for r in refresh)
        started = time.time()
        s.sendall(cancel(71, 70))
        seen["persist"] = summary(read_until(s, 71, EXT_RESPONSE, seconds=10))
        seen["persist seconds"] = time.time() - started

    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(h.bind_simple(80, sh.ROOTDN, sh.ROOTPW) + cancel(81, 80))
        seen["bind"] = summary(h.read_responses(s, count=2, timeout=3)[0])
    return seen


def python_ldap_cancel(server):
    """python-ldap's cancel() on a persistent search: (search error, cancel result)."""
    conn = sh.bind(server)
    control = ldap.controls.RequestControl(SYNC_REQUEST_OID, True, b"\x30\x03\x0a\x01\x03")
    msgid = conn.search_ext(sh.SUFFIX, ldap.SCOPE_BASE, attrlist=["1.1"],
                            serverctrls=[control])
    conn.result4(msgid, all=0, timeout=10)      # the entry of the refresh
    cancel_id = conn.cancel(msgid)
    got = None
    try:
        conn.result4(msgid, all=1, timeout=10)
    except ldap.LDAPError as e:
        got = e.args[0].get("result")
    rtype, _, _, _, _, _ = conn.result4(cancel_id, all=1, timeout=10)
    conn.unbind_s()
    return got, rtype


def start(kind):
    global_lines = [] if kind == "lumend" else ["moduleload syncprov"]
    server = sh.make_server(kind, db_lines=["dbnosync", "overlay syncprov"],
                            global_lines=global_lines)
    server.start()
    path = os.path.join(server.tmp, "people.ldif")
    h.write_people_ldif(path, ENTRIES, DESCRIPTION_BYTES)
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def check_lumend(seen, pyldap):
    R.check("unknown message ID: noSuchOperation (119)",
            seen["unknown"] == [(2, EXT_RESPONSE, 119)], seen["unknown"])
    want = [[(10 + i, EXT_RESPONSE, 2)] for i in range(5)] + [[(20, EXT_RESPONSE, 2)]]
    R.check("malformed values and a missing value: protocolError",
            seen["malformed"] == want, seen["malformed"])
    R.check("the connection is still usable", seen["usable after malformed"] ==
            [(21, EXT_RESPONSE, 0)], seen["usable after malformed"])
    R.check("a queued Add answers canceled (118), then the Cancel success",
            seen["queued add"] == [(30, ADD_RESPONSE, 118), (31, EXT_RESPONSE, 0)],
            seen["queued add"])
    R.check("the cancelled Add left nothing", seen["queued add left nothing"])
    # Two operations in flight may be answered in either order; each
    # Cancel's success comes after the answer of the operation it cancelled.
    got = seen["queued modify and extended"]
    R.check("a queued Modify and a queued extended operation answer canceled",
            sorted(got) == [(32, 0x67, 118), (33, EXT_RESPONSE, 0), (34, EXT_RESPONSE, 118),
                            (35, EXT_RESPONSE, 0)] and
            [m for m, _, _ in got if m in (32, 33)] == [32, 33] and
            [m for m, _, _ in got if m in (34, 35)] == [34, 35], got)
    R.check("the cancelled Modify changed nothing", seen["queued modify left nothing"])
    R.check("second Cancel: operationsError; Cancel of a waiting Cancel: cannotCancel",
            seen["cancel twice"] == [(42, EXT_RESPONSE, 1), (43, EXT_RESPONSE, 121),
                                     (40, SEARCH_DONE, 118), (41, EXT_RESPONSE, 0)],
            seen["cancel twice"])
    R.check("an abandoned operation: tooLate (120), and it is never answered",
            seen["abandoned"] == [(52, EXT_RESPONSE, 120)], seen["abandoned"])
    R.check("a paused search ends canceled, then the Cancel success",
            seen["paused search"][-2:] == [(60, SEARCH_DONE, 118), (61, EXT_RESPONSE, 0)],
            seen["paused search"])
    R.check("the paused search stopped early",
            0 < seen["paused search entries"] < ENTRIES, seen["paused search entries"])
    R.check("a persistent search is cancelled promptly",
            seen["persist refreshed"] and seen["persist"][-2:] ==
            [(70, SEARCH_DONE, 118), (71, EXT_RESPONSE, 0)] and seen["persist seconds"] < 3,
            f"{seen['persist']} in {seen['persist seconds']:.2f} s")
    R.check("Bind then Cancel in one segment: the Bind ran first, noSuchOperation",
            seen["bind"] == [(80, 0x61, 0), (81, EXT_RESPONSE, 119)], seen["bind"])
    R.check("python-ldap cancel(): the search raises CANCELLED, the Cancel succeeds",
            pyldap == (118, ldap.RES_EXTENDED), pyldap)


def check_parity(lumen, slapd, lumen_pyldap, slapd_pyldap):
    """Where slapd answers deterministically, Lumen answers the same."""
    # slapd runs requests of one segment concurrently (a queued Add, an
    # abandoned search may already have ended): only deterministic answers.
    for name in ("unknown", "usable after malformed", "bind"):
        R.check(f"same as slapd: {name}", [x[1:] for x in lumen[name]] ==
                [x[1:] for x in slapd[name]], f"lumend {lumen[name]} slapd {slapd[name]}")
    # slapd reads a cancelID from any tag and ignores trailing bytes (then
    # finds no such operation); Lumen's reader is strict DER: protocolError.
    strict = [0, 1, 2, 5]
    R.check("same as slapd: malformed values it also refuses",
            [lumen["malformed"][i] for i in strict] == [slapd["malformed"][i] for i in strict],
            f"lumend {lumen['malformed']} slapd {slapd['malformed']}")
    R.check("same as slapd: a paused search ends canceled, then the Cancel success",
            lumen["paused search"][-2:] == slapd["paused search"][-2:],
            f"lumend {lumen['paused search']} slapd {slapd['paused search']}")
    R.check("same as slapd: python-ldap cancel()", lumen_pyldap == slapd_pyldap,
            f"lumend {lumen_pyldap} slapd {slapd_pyldap}")
    R.check("same as slapd: a persistent search's Cancel succeeds",
            lumen["persist"][-1][1:] == slapd["persist"][-1][1:],
            f"lumend {lumen['persist']} slapd {slapd['persist']}")


def main():
    lumend = start("lumend")
    try:
        lumen_seen = run_scenarios(lumend)
        lumen_pyldap = python_ldap_cancel(lumend)
        R.check("lumend still alive", lumend.alive())
    finally:
        lumend.stop(R)
    check_lumend(lumen_seen, lumen_pyldap)
    why = sh.slapd_missing()
    if why is not None:
        print(f"  skip t_cancel.py: slapd: {why}")
        R.finish()
    slapd = start("slapd")
    try:
        slapd_seen = run_scenarios(slapd)
        slapd_pyldap = python_ldap_cancel(slapd)
    finally:
        slapd.stop()
    for name in sorted(slapd_seen):
        print(f"  slapd {name}: {slapd_seen[name]}  (lumend: {lumen_seen[name]})")
    print(f"  slapd python-ldap cancel: {slapd_pyldap}  (lumend: {lumen_pyldap})")
    check_parity(lumen_seen, slapd_seen, lumen_pyldap, slapd_pyldap)
    R.finish()


if __name__ == "__main__":
    main()
