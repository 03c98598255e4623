#!/usr/bin/env python3
"""The Subentries control (RFC 3672) side by side with Debian's slapd 2.5.

  - Without the control a subentry (objectClass subentry) is left out of
    one-level and subtree searches, also when the filter names it, and a
    base search returns it; with TRUE only subentries come back (a base
    search of a normal entry returns nothing); with FALSE only normal
    entries (a base search of a subentry returns nothing).
  - Sorted and paged searches leave out the same entries; a replication
    (Sync) search returns them all, so replicas are whole (slapd's syncprov
    leaves them out of a refresh: its replicas lack them).
  - Criticality FALSE is taken; no value, another type, a longer BOOLEAN
    or trailing bytes are a protocolError; on a compare the critical
    control is an unavailable critical extension.
Same entries and result codes as slapd on the same tree.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import RequestControl, SimplePagedResultsControl  # noqa: E402
from ldap.controls.sss import SSSRequestControl  # noqa: E402

R = h.Results("t_subentries.py")
B = sh.SUFFIX
PEOPLE = "ou=people," + B
SUB, SUB2 = "cn=sub," + B, "cn=sub2," + PEOPLE
OID = "1.3.6.1.4.1.4203.1.10.1"
TRUE, FALSE = b"\x01\x01\xff", b"\x01\x01\x00"

LDIF = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: E

dn: {PEOPLE}
objectClass: organizationalUnit
ou: people

dn: uid=alice,{PEOPLE}
objectClass: inetOrgPerson
uid: alice
cn: alice
sn: a

dn: {SUB}
objectClass: subentry
cn: sub
subtreeSpecification: {{}}

dn: {SUB2}
objectClass: top
objectClass: subentry
cn: sub2
subtreeSpecification: {{ base "ou=x" }}
"""

SEARCHES = [("subtree", B, ldap.SCOPE_SUBTREE, "(objectClass=*)"),
            ("one-level", B, ldap.SCOPE_ONELEVEL, "(objectClass=*)"),
            ("base of a subentry", SUB, ldap.SCOPE_BASE, "(objectClass=*)"),
            ("base of an entry", B, ldap.SCOPE_BASE, "(objectClass=*)"),
            ("subtree naming subentry", B, ldap.SCOPE_SUBTREE, "(objectClass=subentry)"),
            ("children", B, ldap.SCOPE_SUBORDINATE, "(cn=*)")]
CONTROLS = [("no control", None, None), ("TRUE", True, TRUE), ("FALSE", True, FALSE),
            ("TRUE non-critical", False, TRUE), ("TRUE as 0x01", True, b"\x01\x01\x01"),
            ("no value", True, None), ("an OCTET STRING", True, b"\x04\x01\x01"),
            ("a 2-octet BOOLEAN", True, b"\x01\x02\x00\x00"),
            ("trailing bytes", True, TRUE + b"\x00"), ("empty value", True, b"")]


def outcome(fn):
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (info.get("result"), info.get("info", ""))


def run(server):
    conn = sh.bind(server)
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(LDIF)
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{server.kind}: loading failed: {out}")
    got = {}
    for cname, critical, value in CONTROLS:
        ctl = [RequestControl(OID, critical, value)] if critical is not None else []
        for sname, base, scope, flt in SEARCHES:
            got[f"{sname}, {cname}"] = outcome(lambda: sorted(
                dn for dn, _ in conn.search_ext_s(base, scope, flt, ["1.1"], serverctrls=ctl)))
    for cname, value in (("TRUE", TRUE), ("FALSE", FALSE)):
        # slapd without sssvlv ignores the (non-critical) sort: compare sets
        ctl = [RequestControl(OID, True, value),
               SSSRequestControl(ordering_rules=["createTimestamp"])]
        got[f"sorted, {cname}"] = outcome(lambda: sorted(dn for dn, _ in conn.search_ext_s(
            B, ldap.SCOPE_SUBTREE, "(cn=*)", ["1.1"], serverctrls=ctl)))
        ctl = [RequestControl(OID, True, value), SimplePagedResultsControl(True, 1, "")]
        got[f"paged, {cname}"] = outcome(lambda: sorted(dn for dn, _ in conn.search_ext_s(
            B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"], serverctrls=ctl)))
    got["compare with the control"] = outcome(lambda: conn.compare_ext_s(
        SUB, "cn", b"sub", serverctrls=[RequestControl(OID, True, TRUE)]))
    conn.unbind_s()
    return got


def sync_refresh():
    """A refreshOnly Sync search (ldapsearch -E sync=ro) of the tree on a
    lumend with syncprov: the DNs it returns."""
    server = sh.make_server("lumend", db_lines=["overlay syncprov"])
    server.start()
    try:
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(LDIF)
        server.ldapadd(path)
        p = subprocess.run(["ldapsearch", "-x", "-LLL", "-H", server.uri, "-D", sh.ROOTDN,
                            "-w", sh.ROOTPW, "-b", B, "-E", "!sync=ro", "1.1"],
                           capture_output=True, text=True, timeout=60)
        return sorted(line[4:] for line in p.stdout.splitlines() if line.startswith("dn: "))
    finally:
        server.stop(R)


def main():
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available", False, missing)
        R.finish()
    runs = {}
    for kind in ("lumend", "slapd"):
        server = sh.make_server(kind)
        server.start()
        try:
            runs[kind] = run(server)
        finally:
            server.stop(R if kind == "lumend" else None)
    lumen, slapd = runs["lumend"], runs["slapd"]
    for case in lumen:
        R.check(f"{case}: as slapd ({lumen[case]})", lumen[case] == slapd[case],
                f"lumen {lumen[case]} slapd {slapd[case]}")
    R.check("subtree: no subentry without the control",
            lumen["subtree, no control"] == ("ok", sorted([B, PEOPLE, "uid=alice," + PEOPLE])))
    R.check("subtree with TRUE: only subentries", lumen["subtree, TRUE"] == ("ok", sorted([SUB, SUB2])))
    # slapd's syncprov leaves them out of a refresh too, so its replicas
    # lack them; a Lumen replica stays whole (and so did it before RFC 3672).
    lumen_sync = sync_refresh()
    R.check("a replication (Sync) search returns the subentries too",
            lumen_sync == sorted([B, PEOPLE, "uid=alice," + PEOPLE, SUB, SUB2]), str(lumen_sync))
    R.check("a bogus value is a protocolError",
            lumen["subtree, trailing bytes"] == (2, "subentries control value encoding is bogus"))
    R.finish()


if __name__ == "__main__":
    main()
