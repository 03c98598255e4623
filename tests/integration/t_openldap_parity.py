#!/usr/bin/env python3
"""Places where Lumen answered differently from OpenLDAP, run on lumend and on
Debian's slapd side by side; each answer must be the same:

  - Filters nested up to maxfilterdepth (OpenLDAP's default 1000) are
    evaluated; one level deeper is protocolError. `maxfilterdepth` sets it
    (a deep 4,000-level filter with maxfilterdepth 4096 must not exhaust a
    worker's stack, also under ASan).
  - An equality assertion on objectClass with a class the schema does not
    know is Undefined (RFC 4517), so its negation matches nothing.
  - jpegPhoto takes any bytes (PNGs and GIFs are stored there in practice).
  - An Add with an attribute without values is answered protocolError and the
    connection stays open (the operation is wrong, not the PDU).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_openldap_parity.py")
B = sh.SUFFIX


def nested(depth):
    return "(&" * depth + "(objectClass=*)" + ")" * depth


def outcome(fn):
    try:
        return fn()
    except ldap.LDAPError as e:
        return type(e).__name__


def observe(kind, global_lines=(), depths=(32, 33, 999, 1000, 1001)):
    server = sh.make_server(kind, db_lines=["index objectClass eq"], global_lines=global_lines)
    server.start()
    seen = {}
    try:
        c = ldap.initialize(server.uri)
        c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        c.add_s(B, [("objectClass", [b"dcObject", b"organization"]), ("dc", [b"example"]),
                    ("o", [b"Example"])])
        for depth in depths:
            seen[f"depth {depth}"] = outcome(
                lambda: len(c.search_s(B, ldap.SCOPE_BASE, nested(depth), ["dc"])))
            c = ldap.initialize(server.uri)   # slapd drops a connection after protocolError
            c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        for f in ("(objectClass=nosuchclass)", "(!(objectClass=nosuchclass))",
                  "(|(objectClass=nosuchclass)(dc=example))"):
            seen[f] = outcome(lambda: len(c.search_s(B, ldap.SCOPE_SUBTREE, f, ["dc"])))
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
        seen["png in jpegPhoto"] = outcome(lambda: c.add_s(
            "cn=p," + B, [("objectClass", [b"inetOrgPerson"]), ("cn", [b"p"]), ("sn", [b"p"]),
                          ("jpegPhoto", [png])]) and "added")
        seen["png stored"] = outcome(lambda: c.search_s(
            "cn=p," + B, ldap.SCOPE_BASE, "(objectClass=*)", ["jpegPhoto"])[0][1]["jpegPhoto"]
            == [png])
        seen["empty value set"] = outcome(lambda: c.add_s(
            "cn=q," + B, [("objectClass", [b"inetOrgPerson"]), ("cn", [b"q"]), ("sn", [b"q"]),
                          ("description", [])]))
        seen["connection after"] = outcome(lambda: len(c.search_s(B, ldap.SCOPE_BASE)))
        seen["nothing added"] = outcome(lambda: len(c.search_s("cn=q," + B, ldap.SCOPE_BASE)))
    finally:
        server.stop(R)
        server.cleanup()
    return seen


lumen = observe("lumend")
expected = {
    "depth 32": 1, "depth 33": 1, "depth 999": 1, "depth 1000": 1,
    "depth 1001": "PROTOCOL_ERROR",
    "(objectClass=nosuchclass)": 0, "(!(objectClass=nosuchclass))": 0,
    "(|(objectClass=nosuchclass)(dc=example))": 1,
    "png stored": True, "empty value set": "PROTOCOL_ERROR", "connection after": 1,
    "nothing added": "NO_SUCH_OBJECT",
}
for key, want in expected.items():
    R.check(f"lumend: {key}", lumen.get(key) == want, f"got {lumen.get(key)!r}, want {want!r}")
if sh.slapd_missing():
    R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
else:
    slapd = observe("slapd")
    for key in sorted(set(lumen) | set(slapd)):
        R.check(f"slapd agrees: {key}", lumen.get(key) == slapd.get(key),
                f"lumend {lumen.get(key)!r}, slapd {slapd.get(key)!r}")

deep = observe("lumend", global_lines=["maxfilterdepth 4096"], depths=(4000, 4096, 4097))
R.check("maxfilterdepth 4096: a 4,000-level filter is evaluated", deep["depth 4000"] == 1,
        str(deep))
R.check("maxfilterdepth 4096: 4,096 levels too", deep["depth 4096"] == 1, str(deep))
R.check("maxfilterdepth 4096: 4,097 is protocolError", deep["depth 4097"] == "PROTOCOL_ERROR",
        str(deep))
shallow = observe("lumend", global_lines=["maxfilterdepth 10"], depths=(10, 11))
R.check("maxfilterdepth 10: 10 levels pass, 11 do not",
        shallow["depth 10"] == 1 and shallow["depth 11"] == "PROTOCOL_ERROR", str(shallow))
R.finish()
