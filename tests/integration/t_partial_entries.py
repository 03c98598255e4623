#!/usr/bin/env python3
"""Binds and compares that decode only the attributes they read.

When the entry cache neither holds an entry nor would keep it, a bind
decodes only userPassword and a compare only the asserted type with its
subtypes (backend_op.fetch_only). Whatever else reads the entry must turn
that off: an access rule with filter= (it tests other attributes), a
password policy (it reads the account's state), the assertion control and
computed attributes (hasSubordinates). And a partial entry must never reach the
cache, where a search would find it short of attributes.

The same scenarios run on Lumen with the entry cache off (every bind and
compare reads partially), on Lumen with a one-entry cache (its doorkeeper
admits some reads and refuses others, so both paths run, and a partial
entry put in the cache would show in the search that follows), and on
OpenLDAP's slapd, which must give the same answers.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls.libldap import AssertionControl  # noqa: E402

R = h.Results("t_partial_entries.py")
B = sh.SUFFIX
PEOPLE = "ou=people," + B
ALICE, BOB, LATE = (f"uid={u},{PEOPLE}" for u in ("alice", "bob", "late"))
POLICY = "cn=default,ou=policies," + B

PEOPLE_LDIF = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: {PEOPLE}
objectClass: organizationalUnit
ou: people

dn: {ALICE}
objectClass: inetOrgPerson
uid: alice
cn: Alice Smith
sn: Smith
givenName: Alice
mail: alice@example.com
title: engineer
employeeType: active
description: first of the people
userPassword: alice-pw

dn: {BOB}
objectClass: inetOrgPerson
uid: bob
cn: Bob Jones
sn: Jones
title: engineer
employeeType: inactive
userPassword: bob-pw
"""

POLICY_LDIF = f"""
dn: ou=policies,{B}
objectClass: organizationalUnit
ou: policies

dn: {POLICY}
objectClass: person
objectClass: pwdPolicy
cn: default
sn: default
pwdAttribute: userPassword

dn: {LATE}
objectClass: inetOrgPerson
uid: late
cn: late
sn: late
userPassword: late-pw
pwdEndTime: 20000101000000Z
"""

PLAIN_RULES = ["access to attrs=userPassword by anonymous auth by * none",
               "access to * by * read"]
FILTER_RULES = ["access to attrs=userPassword filter=(employeeType=active) "
                "by anonymous auth by * none",
                "access to attrs=userPassword by * none",
                "access to attrs=title filter=(employeeType=active) by users compare",
                "access to attrs=title by * none",
                "access to * by * read"]


def start(kind, rules, cache, ppolicy=False):
    """A loaded server; cache: Lumen's cachesize line (None for slapd)."""
    db_lines = [f"cachesize {cache}"] if cache is not None else []
    global_lines = list(rules)
    ldif = PEOPLE_LDIF
    if ppolicy:
        db_lines += ["overlay ppolicy", f'ppolicy_default "{POLICY}"']
        ldif += POLICY_LDIF
        if kind == "slapd":
            global_lines.insert(0, "moduleload ppolicy")
    server = sh.make_server(kind, db_lines=db_lines, global_lines=global_lines).start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif)
    rc, out = server.ldapadd(path)
    if rc != 0:
        server.stop()
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def bind_code(server, dn, password):
    conn = ldap.initialize(server.uri)
    try:
        conn.simple_bind_s(dn, password)
        return 0
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)
    finally:
        conn.unbind_s()


def compare_code(conn, dn, attribute, value, assertion=None):
    controls = None
    if assertion is not None:
        controls = [AssertionControl(True, f"({assertion})")]
    try:
        return 6 if conn.compare_ext_s(dn, attribute, value.encode(),
                                       serverctrls=controls) else 5
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def session(server, dn=None, password=None):
    conn = ldap.initialize(server.uri)
    if dn is not None:
        conn.simple_bind_s(dn, password)
    return conn


def plain_rules(label, server):
    """No rule reads values: binds and compares may decode partially."""
    # Each twice: with a one-entry cache the second sighting is admitted.
    for attempt in ("", " again"):
        R.check(f"{label}: alice binds{attempt}", bind_code(server, ALICE, "alice-pw") == 0)
        R.check(f"{label}: a wrong password is refused{attempt}",
                bind_code(server, ALICE, "nope") == 49)
        R.check(f"{label}: bob binds{attempt}", bind_code(server, BOB, "bob-pw") == 0)
    conn = session(server)
    for attempt in ("", " again"):
        cases = [("sn=Smith", ALICE, "sn", "Smith", None, 6),
                 ("sn=Jones", ALICE, "sn", "Jones", None, 5),
                 ("a type the entry lacks", ALICE, "mobile", "1", None, 16),
                 ("a supertype reaches sn", ALICE, "name", "Smith", None, 6),
                 ("a supertype reaches cn", ALICE, "name", "alice smith", None, 6),
                 ("a supertype that matches neither", ALICE, "name", "Jones", None, 5),
                 ("hasSubordinates (computed)", PEOPLE, "hasSubordinates", "TRUE", None, 6),
                 ("title with a holding assertion", ALICE, "title", "engineer", "sn=Smith", 6),
                 ("title with a failing assertion", ALICE, "title", "engineer", "sn=Jones", 122),
                 ("an entry that does not exist", f"uid=nobody,{PEOPLE}", "sn", "x", None, 32)]
        for what, dn, attribute, value, assertion, want in cases:
            got = compare_code(conn, dn, attribute, value, assertion)
            R.check(f"{label}: compare {what}{attempt} answers {want}", got == want,
                    f"got {got}")
    # Nothing partial was cached: a search still returns every attribute.
    entry = conn.search_s(ALICE, ldap.SCOPE_BASE, "(objectClass=*)")[0][1]
    want = {"objectClass", "uid", "cn", "sn", "givenName", "mail", "title", "employeeType",
            "description"}
    R.check(f"{label}: a search after them returns the whole entry", set(entry) == want,
            f"{sorted(entry)}")
    conn.unbind_s()


def filter_rules(label, server):
    """Rules with filter= read employeeType: the whole entry is decoded."""
    for attempt in ("", " again"):
        R.check(f"{label}: an active user binds (the filter reads employeeType){attempt}",
                bind_code(server, ALICE, "alice-pw") == 0)
        R.check(f"{label}: an inactive user may not bind{attempt}",
                bind_code(server, BOB, "bob-pw") == 49)
    conn = session(server, ALICE, "alice-pw")
    for attempt in ("", " again"):
        got = compare_code(conn, ALICE, "title", "engineer")
        R.check(f"{label}: compare of an active user's title is allowed{attempt}", got == 6,
                f"got {got}")
        got = compare_code(conn, BOB, "title", "engineer")
        R.check(f"{label}: compare of an inactive user's title is refused{attempt}",
                got == 50, f"got {got}")
    conn.unbind_s()


def password_policy(label, server):
    """The policy reads pwdEndTime from the entry the bind fetched."""
    for attempt in ("", " again"):
        got = bind_code(server, LATE, "late-pw")
        R.check(f"{label}: an account past its pwdEndTime may not bind{attempt}", got == 49,
                f"got {got}")
        R.check(f"{label}: alice still binds{attempt}", bind_code(server, ALICE, "alice-pw") == 0)


def run(kind, cache):
    label = kind if cache is None else f"{kind}, cachesize {cache}"
    for rules, scenario in ((PLAIN_RULES, plain_rules), (FILTER_RULES, filter_rules)):
        server = start(kind, rules, cache)
        try:
            scenario(label, server)
        finally:
            server.stop(R)
    server = start(kind, PLAIN_RULES, cache, ppolicy=True)
    try:
        password_policy(label, server)
    finally:
        server.stop(R)


def main():
    run("lumend", "off")
    run("lumend", "1")
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available for the same scenarios", False, missing)
    else:
        run("slapd", None)
    R.finish()


if __name__ == "__main__":
    main()
