#!/usr/bin/env python3
"""Access control wherever a value is tested: no filter, compare or Assertion
control may reveal a value the requester may not read.

The same data, rules and requests run against lumend and against OpenLDAP's
slapd (Debian's, back-mdb), and the answers must agree with what OpenLDAP
says, and must not depend on the hidden value:
  - the Assertion control (RFC 4528) on search, compare and modify, asserting
    the right and a wrong value of a password the requester may only `auth`
    (and ordering/extensible forms on Lumen, which has those rules);
  - a filter or compare on a supertype (name, distinguishedName) whose
    subtype (sn, member) is hidden;
  - control: the same requests as the rootdn do see the values.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls.libldap import AssertionControl  # noqa: E402

r = h.Results("t_acl_oracles.py")
S = sh.SUFFIX
ALICE = f"uid=alice,ou=people,{S}"
BOB = f"uid=bob,ou=people,{S}"
STAFF = f"cn=staff,ou=groups,{S}"

LDIF = f"""dn: {S}
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=people,{S}
objectClass: organizationalUnit
ou: people

dn: ou=groups,{S}
objectClass: organizationalUnit
ou: groups

dn: {ALICE}
objectClass: inetOrgPerson
uid: alice
cn: Alice Liddell
sn: Liddell
description: first
userPassword: wonderland

dn: {BOB}
objectClass: inetOrgPerson
uid: bob
cn: Bob Builder
sn: Builder
userPassword: bobpw

dn: {STAFF}
objectClass: groupOfNames
cn: staff
member: {ALICE}
"""

RULES = [
    "access to attrs=userPassword by self write by anonymous auth by * none",
    "access to attrs=sn by self read by * none",
    "access to attrs=member by * none",
    "access to attrs=description by users write by * read",
    "access to * by * read",
]


def code_of(fn):
    """The LDAP result code of fn() (0 on success)."""
    try:
        fn()
        return 0
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", -1)


def connect(server, dn, pw):
    c = ldap.initialize(server.uri)
    c.protocol_version = 3
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.simple_bind_s(dn, pw)
    return c


def count(c, base, filt, scope=ldap.SCOPE_BASE):
    try:
        return len(c.search_s(base, scope, filt, ["1.1"]))
    except ldap.NO_SUCH_OBJECT:
        return 0


def search_assert(c, base, assertion):
    return code_of(lambda: c.search_ext_s(base, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"],
                                          serverctrls=[AssertionControl(True, assertion)]))


def compare_assert(c, dn, assertion):
    """Compare uid=alice under an assertion: 6 (true) when it holds."""
    try:
        c.compare_ext_s(dn, "uid", b"alice", serverctrls=[AssertionControl(True, assertion)])
        return 6
    except ldap.COMPARE_TRUE:
        return 6
    except ldap.COMPARE_FALSE:
        return 5
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def compare(c, dn, attr, value):
    try:
        return 6 if c.compare_s(dn, attr, value.encode()) else 5
    except ldap.COMPARE_TRUE:
        return 6
    except ldap.COMPARE_FALSE:
        return 5
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def modify_assert(c, dn, assertion, value):
    return code_of(lambda: c.modify_ext_s(dn, [(ldap.MOD_REPLACE, "description", [value.encode()])],
                                          serverctrls=[AssertionControl(True, assertion)]))


def scenario(kind):
    server = sh.make_server(kind, db_lines=RULES).start()
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".ldif", delete=False) as f:
            f.write(LDIF)
        rc, out = server.ldapadd(f.name)
        os.unlink(f.name)
        r.check(f"{kind}: data loaded", rc == 0, out)
        bob = connect(server, BOB, "bobpw")
        root = connect(server, sh.ROOTDN, sh.ROOTPW)
        got = {}

        # The Assertion control: right and wrong password give the same answer.
        for label, a in (("right", "(userPassword=wonderland)"), ("wrong", "(userPassword=x)")):
            got[f"search assert {label}"] = search_assert(bob, ALICE, a)
            got[f"compare assert {label}"] = compare_assert(bob, ALICE, a)
            got[f"modify assert {label}"] = modify_assert(bob, ALICE, a, f"m-{label}")
            got[f"root search assert {label}"] = search_assert(root, ALICE, a)
        got["search assert presence"] = search_assert(bob, ALICE, "(userPassword=*)")
        got["search assert hidden subtype"] = search_assert(bob, ALICE, "(name=Liddell)")

        # Supertype filters and compares.
        got["filter name=sn value"] = count(bob, ALICE, "(name=Liddell)")
        got["filter name=cn value"] = count(bob, ALICE, "(name=Alice Liddell)")
        got["filter not name=sn value"] = count(bob, ALICE, "(!(name=Liddell))")
        got["filter not name=wrong"] = count(bob, ALICE, "(!(name=Wrong))")
        got["filter sn present"] = count(bob, ALICE, "(sn=*)")
        got["filter dn supertype"] = count(bob, STAFF, f"(distinguishedName={ALICE})")
        got["filter member"] = count(bob, STAFF, f"(member={ALICE})")
        got["root filter name=sn value"] = count(root, ALICE, "(name=Liddell)")
        got["root filter dn supertype"] = count(root, STAFF, f"(distinguishedName={ALICE})")
        got["compare name=sn value"] = compare(bob, ALICE, "name", "Liddell")
        got["compare name=wrong"] = compare(bob, ALICE, "name", "Wrong")
        got["compare name=cn value"] = compare(bob, ALICE, "name", "Alice Liddell")
        got["compare sn"] = compare(bob, ALICE, "sn", "Liddell")
        got["compare distinguishedName"] = compare(bob, STAFF, "distinguishedName", ALICE)
        got["root compare name=sn value"] = compare(root, ALICE, "name", "Liddell")
        bob.unbind_s()
        root.unbind_s()
        if kind == "lumend":
            got.update(lumen_only(server))
        server.stop(r)
        return got
    except Exception:
        server.cleanup()
        raise


def lumen_only(server):
    """Rules OpenLDAP's userPassword lacks (ordering, extensible) on Lumen."""
    bob = connect(server, BOB, "bobpw")
    got = {}
    for label, a in (("ordering low", "(userPassword>=a)"), ("ordering high", "(userPassword>=z)"),
                     ("extensible", "(userPassword:octetStringMatch:=wonderland)"),
                     ("any attribute", "(:caseExactMatch:=Liddell)")):
        got[f"lumen search assert {label}"] = search_assert(bob, ALICE, a)
    got["lumen filter any attribute"] = count(bob, ALICE, "(:caseIgnoreMatch:=Liddell)")
    got["lumen filter any attribute visible"] = count(bob, ALICE, "(:caseIgnoreMatch:=Alice Liddell)")
    bob.unbind_s()
    return got


EXPECTED = {
    # hidden values: the same answer for the right and the wrong value
    "search assert right": 122, "search assert wrong": 122,
    "compare assert right": 122, "compare assert wrong": 122,
    "modify assert right": 122, "modify assert wrong": 122,
    "root search assert right": 0, "root search assert wrong": 122,
    "search assert presence": 122, "search assert hidden subtype": 122,
    "filter name=sn value": 0, "filter name=cn value": 1,
    "filter not name=sn value": 0, "filter not name=wrong": 0,
    "filter sn present": 0, "filter dn supertype": 0, "filter member": 0,
    "root filter name=sn value": 1, "root filter dn supertype": 1,
    "compare name=sn value": 50, "compare name=wrong": 50, "compare name=cn value": 6,
    "compare sn": 50, "compare distinguishedName": 50,
    "root compare name=sn value": 6,
    "lumen search assert ordering low": 122, "lumen search assert ordering high": 122,
    "lumen search assert extensible": 122, "lumen search assert any attribute": 122,
    "lumen filter any attribute": 0, "lumen filter any attribute visible": 1,
}

lumen = scenario("lumend")
for key, want in EXPECTED.items():
    r.check(f"lumend: {key} -> {want}", lumen.get(key) == want, f"got {lumen.get(key)}")

missing = sh.slapd_missing()
r.check("slapd available for the side-by-side run", missing is None, missing or "")
if missing is None:
    slapd = scenario("slapd")
    for key, value in slapd.items():
        r.check(f"slapd agrees: {key} -> {value}", lumen.get(key) == value,
                f"lumend {lumen.get(key)}")
r.finish()
