#!/usr/bin/env python3
"""lastbind (`overlay lastbind`, `lastbind-precision`), side by side with
OpenLDAP's slapd and its lastbind module: a successful bind stores
authTimestamp (operational: only when asked for); a failed bind does not;
within the precision a second bind leaves it as it was, after it the value
moves on. Configuration errors name file and line."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_lastbind.py")
B = sh.SUFFIX
USER = f"uid=ann,ou=people,{B}"
OTHER = f"uid=bob,ou=people,{B}"
PRECISION = 3


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Ex\n",
           f"dn: ou=people,{B}\nobjectClass: organizationalUnit\nou: people\n"]
    for uid in ("ann", "bob"):
        out.append(f"dn: uid={uid},ou=people,{B}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                   f"cn: {uid}\nsn: {uid}\nuserPassword: pw-{uid}\n")
    return "\n".join(out) + "\n"


def start(kind):
    global_lines = ["moduleload lastbind"] if kind == "slapd" else []
    server = sh.make_server(kind, db_lines=["overlay lastbind",
                                            f"lastbind-precision {PRECISION}"],
                            global_lines=global_lines)
    server.start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def stamp(server, dn, operational=True):
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    attrs = ["authTimestamp"] if operational else ["*"]
    res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", attrs)
    conn.unbind_s()
    values = {k.lower(): v for k, v in res[0][1].items()}.get("authtimestamp", [])
    return values[0].decode() if values else None


def bind(server, dn, pw):
    conn = ldap.initialize(server.uri)
    try:
        conn.simple_bind_s(dn, pw)
        return 0
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)
    finally:
        conn.unbind_s()


def scenario(kind):
    seen = {}
    server = start(kind)
    try:
        seen["before any bind"] = stamp(server, USER)
        seen["bind"] = bind(server, USER, "pw-ann")
        first = stamp(server, USER)
        seen["stored after a bind"] = first is not None and len(first) == 15 and \
            first.endswith("Z")
        seen["not among the user attributes"] = stamp(server, USER, operational=False)
        seen["failed bind"] = bind(server, OTHER, "wrong")
        seen["failed bind stores nothing"] = stamp(server, OTHER)
        time.sleep(1.1)
        bind(server, USER, "pw-ann")
        seen["within the precision: unchanged"] = stamp(server, USER) == first
        time.sleep(PRECISION + 0.5)
        bind(server, USER, "pw-ann")
        later = stamp(server, USER)
        seen["after the precision: moved on"] = later is not None and later > first
    finally:
        server.stop(R)
    return seen


EXPECTED = {
    "before any bind": None, "bind": 0, "stored after a bind": True,
    "not among the user attributes": None, "failed bind": 49,
    "failed bind stores nothing": None, "within the precision: unchanged": True,
    "after the precision: moved on": True,
}


def compare_with_slapd():
    lumen = scenario("lumend")
    for step, want in EXPECTED.items():
        R.check(f"lumend {step}", lumen.get(step) == want, f"got {lumen.get(step)}")
    if sh.slapd_missing():
        R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
        return
    slapd = scenario("slapd")
    for step in EXPECTED:
        R.check(f"slapd agrees on {step}", slapd.get(step) == lumen.get(step),
                f"slapd {slapd.get(step)}, lumend {lumen.get(step)}")


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-lastbind-")
    head = h.config_head(tmp, B)
    cases = [
        ("unknown directive", ["overlay lastbind", "lastbind_bogus 1"], 8,
         'unknown directive "lastbind_bogus"'),
        ("bad precision", ["overlay lastbind", "lastbind-precision soon"], 8,
         'expected "lastbind-precision <seconds>"'),
    ]
    h.check_config_errors(R, tmp, head, cases)


compare_with_slapd()
config_errors()
R.finish()
