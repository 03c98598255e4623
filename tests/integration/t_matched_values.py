#!/usr/bin/env python3
"""Matched Values (RFC 3876) side by side with Debian's slapd 2.5.

  - Every SimpleFilterItem kind (equality, substrings, >=, <=, present,
    extensible with and without rule, type or dnAttributes) keeps only the
    values it matches, through supertypes (name) and subclasses
    (objectClass=person keeps inetOrgPerson); several items keep the union;
    attributes none of whose values matches are left out (as slapd);
    an empty list changes nothing; unknown types and CHOICEs match nothing.
  - Access control: an attribute the requester may not read is never sent,
    whatever the filter; an anonymous and a rootdn search differ exactly
    as in slapd. Sorted and paged searches filter the same way.
  - Criticality FALSE is taken; without a value the search is a
    protocolError; on a compare the critical control is an unavailable
    critical extension.
  - Bad values: an item that does not decode, a value that is not a
    SEQUENCE, bytes after it, more items than the element bound: Lumen
    answers protocolError with slapd's diagnostic (slapd sends a stray
    protocolError then the results for some of these, ignores trailing
    bytes and lets an extensible item without rule or type match nothing;
    Lumen answers once and strictly).
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import RequestControl, SimplePagedResultsControl  # noqa: E402

R = h.Results("t_matched_values.py")
B = sh.SUFFIX
ALICE = "uid=a," + B
OID = "1.2.826.0.1.3344810.2.3"
ATTRS = ["cn", "sn", "mail", "description", "objectClass", "telephoneNumber"]


def tlv(tag, content):
    n = len(content)
    if n < 128:
        return bytes([tag, n]) + content
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + content


def ava(tag, attr, value):
    return tlv(tag, tlv(4, attr.encode()) + tlv(4, value.encode()))


def seq(*items):
    return tlv(0x30, b"".join(items))


def ext(*parts):
    return tlv(0xa9, b"".join(parts))


CASES = {
    "equality": seq(ava(0xa3, "cn", "alpha")),
    "equality, no match": seq(ava(0xa3, "cn", "nothing")),
    "supertype name": seq(ava(0xa3, "name", "alpha")),
    "two items": seq(ava(0xa3, "cn", "beta"), ava(0xa3, "sn", "zed")),
    "two items, one type": seq(ava(0xa3, "cn", "beta"), ava(0xa3, "cn", "gamma")),
    "present": seq(tlv(0x87, b"cn")),
    "substrings": seq(tlv(0xa4, tlv(4, b"cn") + tlv(0x30, tlv(0x80, b"g")))),
    "substrings any": seq(tlv(0xa4, tlv(4, b"cn") + tlv(0x30, tlv(0x81, b"t")))),
    ">= without ordering": seq(ava(0xa5, "cn", "b")),
    "<= without ordering": seq(ava(0xa6, "description", "x")),
    "extensible with rule": seq(ext(tlv(0x81, b"caseExactMatch"), tlv(0x82, b"cn"),
                                    tlv(0x83, b"Beta"))),
    "extensible, case differs": seq(ext(tlv(0x81, b"caseExactMatch"), tlv(0x82, b"cn"),
                                        tlv(0x83, b"beta"))),
    "extensible dnAttributes": seq(ext(tlv(0x82, b"cn"), tlv(0x83, b"Beta"),
                                       tlv(0x84, b"\xff"))),
    "mail (not readable anonymously)": seq(ava(0xa3, "mail", "a@x")),
    "unknown type": seq(ava(0xa3, "nosuch", "x")),
    "bad type": seq(ava(0xa3, "c n", "x")),
    "objectClass subclass": seq(ava(0xa3, "objectClass", "person")),
    "telephone normalized": seq(ava(0xa3, "telephoneNumber", "+15551234")),
    "empty list": seq(),
    "AND inside": seq(tlv(0xa0, ava(0xa3, "cn", "alpha"))),
    "OCTET STRING inside": seq(tlv(4, b"x")),
    "present constructed": seq(tlv(0xa7, tlv(4, b"cn"))),
    "an unknown item with a match": seq(tlv(0xa1, b""), ava(0xa3, "cn", "alpha")),
}
# Lumen answers these protocolError "error decoding vrFilter" once.
BAD = {
    "not a SEQUENCE": ava(0xa3, "cn", "alpha"),
    "truncated": b"\x30\x05\x01",
    "extensible without value": seq(ext(tlv(0x82, b"cn"))),
    # RFC 4511 requires a rule or a type; slapd lets this match nothing
    "extensible without rule or type": seq(ext(tlv(0x83, b"Beta"))),
    "equality without value": seq(tlv(0xa3, tlv(4, b"cn"))),
    "trailing bytes": seq(ava(0xa3, "cn", "alpha")) + b"\x00",
    "more items than the element bound": seq(*([tlv(0x87, b"")] * 65537)),
}

LDIF = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: E

dn: {ALICE}
objectClass: inetOrgPerson
uid: a
cn: Alpha
cn: Beta
cn: Gamma
sn: Alpha
sn: Zed
mail: a@x
mail: b@x
description: d1
description: d2
telephoneNumber: +1 555 1234

dn: uid=b,{B}
objectClass: inetOrgPerson
uid: b
cn: Beta
sn: Other
mail: c@x
"""
DB_LINES = ["access to attrs=mail by anonymous none by * read", "access to * by * read"]


def outcome(fn):
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (info.get("result"), info.get("info", ""))


def entries(res):
    return sorted((dn, {k: sorted(v) for k, v in attrs.items()}) for dn, attrs in res)


def search(conn, value, critical=True, base=ALICE, scope=ldap.SCOPE_BASE, extra=()):
    ctl = [RequestControl(OID, critical, value)] + list(extra)
    return outcome(lambda: entries(conn.search_ext_s(base, scope, "(objectClass=*)", ATTRS,
                                                    serverctrls=ctl)))


def run(server):
    root = sh.bind(server)
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(LDIF)
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{server.kind}: loading failed: {out}")
    anon = ldap.initialize(server.uri)
    anon.simple_bind_s("", "")
    got = {}
    for name, value in CASES.items():
        got[f"{name} (rootdn)"] = search(root, value)
        got[f"{name} (anonymous)"] = search(anon, value)
    got["subtree, two entries"] = search(anon, CASES["equality"], base=B,
                                         scope=ldap.SCOPE_SUBTREE)
    got["non-critical"] = search(root, CASES["equality"], critical=False)
    got["no value"] = search(root, None)
    got["paged"] = search(root, CASES["two items"], base=B, scope=ldap.SCOPE_SUBTREE,
                          extra=[SimplePagedResultsControl(True, 1, "")])
    got["compare with the control"] = outcome(lambda: root.compare_ext_s(
        ALICE, "cn", b"Alpha", serverctrls=[RequestControl(OID, True, CASES["equality"])]))
    got["typesOnly"] = outcome(lambda: entries(root.search_ext_s(
        ALICE, ldap.SCOPE_BASE, "(objectClass=*)", ["cn", "sn"], attrsonly=1,
        serverctrls=[RequestControl(OID, True, CASES["equality"])])))
    return got


def raw_search(port, value):
    """One search with the control as raw BER: (result code, diagnostic)."""
    ctrl = tlv(0xa0, tlv(0x30, tlv(4, OID.encode()) + b"\x01\x01\xff" + tlv(4, value)))
    body = tlv(0x63, tlv(4, ALICE.encode()) + b"\x0a\x01\x00\x0a\x01\x00\x02\x01\x00"
               b"\x02\x01\x00\x01\x01\x00" + tlv(0x87, b"objectClass") + tlv(0x30, b""))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(tlv(0x30, b"\x02\x01\x02" + body + ctrl))
        # up to the SearchResultDone, then a moment for anything after it
        responses, _ = h.read_messages_until(
            sock, lambda out: any(r.op == 0x65 for r in out), timeout=10)
        responses += h.read_responses(sock, timeout=0.3)[0]
    return [(r.op, r.code, r.diagnostic.decode()) for r in responses if r.code is not None]


def main():
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available", False, missing)
        R.finish()
    runs = {}
    for kind in ("lumend", "slapd"):
        server = sh.make_server(kind, db_lines=DB_LINES)
        server.start()
        try:
            runs[kind] = run(server)
            if kind == "lumend":
                for name, value in BAD.items():
                    got = raw_search(server.port, value)
                    R.check(f"bad value, {name}: one protocolError", got == [
                        (0x65, 2, "error decoding vrFilter")], str(got))
        finally:
            server.stop(R if kind == "lumend" else None)
    lumen, slapd = runs["lumend"], runs["slapd"]
    for case in lumen:
        R.check(f"{case}: as slapd", lumen[case] == slapd[case],
                f"lumen {lumen[case]} slapd {slapd[case]}")
    R.check("equality keeps one value", lumen["equality (rootdn)"] == (
        "ok", [(ALICE, {"cn": [b"Alpha"]})]), str(lumen["equality (rootdn)"]))
    R.check("no value: protocolError", lumen["no value"] == (
        2, "valuesReturnFilter control value is absent"), str(lumen["no value"]))
    R.finish()


if __name__ == "__main__":
    main()
