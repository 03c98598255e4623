#!/usr/bin/env python3
"""Binds, compares and searches that decode only the attributes they read.

When the entry cache neither holds an entry nor would keep it, a bind
decodes only userPassword and a compare only the asserted type with its
subtypes (backend_op.fetch_only). Whatever else reads the entry must turn
that off: an access rule with filter= (it tests other attributes), a
password policy (it reads the account's state), the assertion control and
computed attributes (hasSubordinates). And a partial entry must never reach the
cache, where a search would find it short of attributes.

A search that names its attributes decodes those, the filter's types and
objectClass (search_reads in op_search.c): the cases below return what
the whole entry would, through supertypes, options, objectClass
subclasses, filters on attributes not returned, typeless extensible
matches (the whole entry again), dnAttributes, a subentry that must stay
hidden (objectClass read though not asked for), and a filter= rule that
decides on an attribute not asked for (the whole entry again).

A search for "*" or "+" decodes the filter's types and objectClass and
sends the other attributes as stored (the entry's outline): it must
return what the whole entry gives, with typesOnly, next to named
operational attributes, without the userPassword a rule hides, and with
Matched Values (which looks at every value: the whole entry again).
Lumen's cn=Monitor must count partial reads for these searches as for
named ones. A named search over more than 1,000 entries (a scan) reads
them in part and asks the cache's doorkeeper nothing, so that it does not
make every entry it passed look seen.

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
from ldap.controls import RequestControl  # noqa: E402
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
cn;lang-de: Alice Schmidt
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
givenName: Bob
title: engineer
employeeType: inactive
userPassword: bob-pw

dn: cn=rules,{PEOPLE}
objectClass: subentry
cn: rules
subtreeSpecification: {{}}
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
                "access to attrs=givenName filter=(employeeType=active) by * read",
                "access to attrs=givenName by * none",
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
    whole_after(label, conn, "binds and compares")
    conn.unbind_s()


def whole_after(label, conn, what):
    """Nothing partial was cached: a search still returns every attribute."""
    entry = conn.search_s(ALICE, ldap.SCOPE_BASE, "(objectClass=*)")[0][1]
    want = {"objectClass", "uid", "cn", "cn;lang-de", "sn", "givenName", "mail", "title",
            "employeeType", "description"}
    R.check(f"{label}: a search after {what} returns the whole entry", set(entry) == want,
            f"{sorted(entry)}")


def found(conn, filterstr, attributes):
    """{dn: {type: sorted values}} of a subtree search below PEOPLE."""
    got = {}
    for dn, entry in conn.search_s(PEOPLE, ldap.SCOPE_SUBTREE, filterstr, attributes):
        got[dn] = {k: sorted(v) for k, v in entry.items()}
    return got


ALICE_CN = {"cn": [b"Alice Smith"], "cn;lang-de": [b"Alice Schmidt"]}
NAMED_SEARCHES = [
    ("no attributes", "(uid=alice)", ["1.1"], {ALICE: {}}),
    ("cn", "(uid=alice)", ["cn"], {ALICE: ALICE_CN}),
    ("a filter on a type not returned", "(employeeType=active)", ["cn"], {ALICE: ALICE_CN}),
    ("a filter on a supertype", "(name=jones)", ["sn"], {BOB: {"sn": [b"Jones"]}}),
    ("a superclass in the filter", "(objectClass=person)", ["uid"],
     {ALICE: {"uid": [b"alice"]}, BOB: {"uid": [b"bob"]}}),
    ("a supertype asked for", "(uid=alice)", ["name"],
     {ALICE: dict(ALICE_CN, sn=[b"Smith"], givenName=[b"Alice"], title=[b"engineer"])}),
    ("an option asked for", "(uid=alice)", ["cn;lang-de"],
     {ALICE: {"cn;lang-de": [b"Alice Schmidt"]}}),
    ("an option in the filter", "(cn;lang-de=alice schmidt)", ["uid"],
     {ALICE: {"uid": [b"alice"]}}),
    ("a negation on a type not returned",
     "(&(objectClass=inetOrgPerson)(!(employeeType=active)))", ["mail"], {BOB: {}}),
    ("a typeless extensible match", "(:caseExactMatch:=Jones)", ["uid"],
     {BOB: {"uid": [b"bob"]}}),
    ("dnAttributes", "(&(ou:dn:=people)(sn=*))", ["uid"],
     {ALICE: {"uid": [b"alice"]}, BOB: {"uid": [b"bob"]}}),
    ("a subentry stays hidden", "(cn=*)", ["uid"],
     {ALICE: {"uid": [b"alice"]}, BOB: {"uid": [b"bob"]}}),
    ("entryDN asked for", "(uid=bob)", ["entryDN", "sn"],
     {BOB: {"entryDN": [BOB.encode()], "sn": [b"Jones"]}}),
]


ALICE_USER = dict(ALICE_CN, objectClass=[b"inetOrgPerson"], uid=[b"alice"], sn=[b"Smith"],
                  givenName=[b"Alice"], mail=[b"alice@example.com"], title=[b"engineer"],
                  employeeType=[b"active"], description=[b"first of the people"])
ALL_SEARCHES = [
    ("'*' (userPassword hidden by a rule)", "(uid=alice)", ["*"], {ALICE: ALICE_USER}),
    ("no attribute list", "(uid=alice)", None, {ALICE: ALICE_USER}),
    ("'*' with a filter on a type", "(employeeType=inactive)", ["*"],
     {BOB: {"objectClass": [b"inetOrgPerson"], "uid": [b"bob"], "cn": [b"Bob Jones"],
            "sn": [b"Jones"], "givenName": [b"Bob"], "title": [b"engineer"],
            "employeeType": [b"inactive"]}}),
    ("'*' and entryDN", "(uid=alice)", ["*", "entryDN"],
     {ALICE: dict(ALICE_USER, entryDN=[ALICE.encode()])}),
]

# RFC 3876 ValuesReturnFilter: SEQUENCE { equalityMatch (mail=alice@example.com) }
MATCHED_VALUES = RequestControl("1.2.826.0.1.3344810.2.3", True,
                                b"\x30\x1b\xa3\x19\x04\x04mail\x04\x11alice@example.com")


def all_searches(label, conn):
    """Searches returning all attributes give what whole entries give."""
    for what, filterstr, attributes, want in ALL_SEARCHES:
        got = found(conn, filterstr, attributes)
        R.check(f"{label}: search, {what}", got == want, f"got {got}")
    entries = conn.search_ext_s(ALICE, ldap.SCOPE_BASE, "(objectClass=*)", ["*"], attrsonly=1)
    types = {k: v for k, v in entries[0][1].items()}
    R.check(f"{label}: search, '*' types only",
            types == {k: [] for k in ALICE_USER}, f"got {types}")
    entry = conn.search_s(ALICE, ldap.SCOPE_BASE, "(objectClass=*)", ["*", "+"])[0][1]
    R.check(f"{label}: search, '*' and '+'",
            {k: sorted(v) for k, v in entry.items() if k in ALICE_USER} == ALICE_USER and
            {"entryUUID", "createTimestamp", "entryDN", "subschemaSubentry"} <= set(entry) and
            "userPassword" not in entry, f"got {sorted(entry)}")
    entry = conn.search_s(ALICE, ldap.SCOPE_BASE, "(objectClass=*)", ["+"])[0][1]
    R.check(f"{label}: search, '+' alone",
            "entryUUID" in entry and not set(entry) & set(ALICE_USER), f"got {sorted(entry)}")
    entries = conn.search_ext_s(PEOPLE, ldap.SCOPE_SUBTREE, "(uid=alice)", ["*"],
                                serverctrls=[MATCHED_VALUES])
    want = {"mail": [b"alice@example.com"]}     # every other type matches no item
    got = {k: sorted(v) for k, v in entries[0][1].items()} if entries else None
    R.check(f"{label}: search, '*' with Matched Values", got == want, f"got {got}")


def monitor_figure(server, name):
    """A figure of Lumen's databases summed (cn=Monitor's monitoredInfo)."""
    conn = session(server, sh.ROOTDN, sh.ROOTPW)
    total = 0
    for _, entry in conn.search_s("cn=Databases,cn=Monitor", ldap.SCOPE_SUBTREE,
                                  "(objectClass=*)", ["monitoredInfo"]):
        for v in entry.get("monitoredInfo", []):
            if v.startswith(name.encode() + b"="):
                total += int(v.split(b"=", 1)[1])
    conn.unbind_s()
    return total


def partial_read_count(server):
    return monitor_figure(server, "entryPartialReads")


def named_searches(label, server):
    """Searches that name their attributes return what whole entries give."""
    conn = session(server)
    for attempt in ("", " again"):
        for what, filterstr, attributes, want in NAMED_SEARCHES:
            got = found(conn, filterstr, attributes)
            R.check(f"{label}: search, {what}{attempt}", got == want, f"got {got}")
        all_searches(label + attempt, conn)
    whole_after(label, conn, "named searches")
    if server.kind == "lumend":
        partial_reads_counted(label, server, conn)
    conn.unbind_s()


def partial_reads_of(server, conn, attributes):
    """The partial reads of one search for bob (no index: the four entries
    below ou=people are read) with the access decision on its base."""
    before = partial_read_count(server)
    found(conn, "(uid=bob)", attributes)
    return partial_read_count(server) - before


def partial_reads_counted(label, server, conn):
    """cn=Monitor counts the partial reads of searches naming attributes
    and of those for '*' and '+' alike; Matched Values reads whole
    entries (the access decision on the base reads its DN alone)."""
    named = partial_reads_of(server, conn, ["sn"])
    user = partial_reads_of(server, conn, ["*"])
    operational = partial_reads_of(server, conn, ["+"])
    before = partial_read_count(server)
    conn.search_ext_s(PEOPLE, ldap.SCOPE_SUBTREE, "(uid=bob)", ["*"],
                      serverctrls=[MATCHED_VALUES])
    matched = partial_read_count(server) - before
    if label.endswith("cachesize off"):
        R.check(f"{label}: a search naming sn reads the four entries in part",
                named - matched == 4, f"{named} {matched}")
    R.check(f"{label}: searches for '*' and '+' read as many in part as one naming sn",
            user == operational == named, f"{named} {user} {operational}")
    R.check(f"{label}: one with Matched Values reads whole entries (the base's DN)",
            matched <= 1, f"{matched}")


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
        # filter= decides givenName by employeeType, which the search does not ask for
        got = found(conn, "(objectClass=inetOrgPerson)", ["givenName"])
        want = {ALICE: {"givenName": [b"Alice"]}, BOB: {}}
        R.check(f"{label}: givenName as a filter= rule decides{attempt}", got == want,
                f"got {got}")
    conn.unbind_s()


def password_policy(label, server):
    """The policy reads pwdEndTime from the entry the bind fetched."""
    for attempt in ("", " again"):
        got = bind_code(server, LATE, "late-pw")
        R.check(f"{label}: an account past its pwdEndTime may not bind{attempt}", got == 49,
                f"got {got}")
        R.check(f"{label}: alice still binds{attempt}", bind_code(server, ALICE, "alice-pw") == 0)


BULK = 1100     # more than BACKEND_SCAN_IDS (1,000): a search over them is a scan


def scans_teach_nothing():
    """A scan that names its attributes reads in part and asks the cache's
    doorkeeper nothing: its one-time reads must not make the entries look
    seen (with a one-entry cache every later read would otherwise count)."""
    server = start("lumend", PLAIN_RULES, "1")
    try:
        bulk = "ou=bulk," + B
        lines = [f"dn: {bulk}\nobjectClass: organizationalUnit\nou: bulk\n"]
        lines += [f"dn: uid=b{i},{bulk}\nobjectClass: inetOrgPerson\nuid: b{i}\ncn: b{i}\n"
                  f"sn: b\ndescription: bulk {i}\n" for i in range(BULK)]
        path = os.path.join(server.tmp, "bulk.ldif")
        with open(path, "w") as f:
            f.write("\n".join(lines))
        rc, out = server.ldapadd(path)
        R.check("scan: bulk loaded", rc == 0, out)
        refused = monitor_figure(server, "entryCacheNotAdmitted")
        partial = partial_read_count(server)
        conn = session(server)
        for _ in range(2):
            got = conn.search_s(bulk, ldap.SCOPE_SUBTREE, "(description=bulk*)", ["cn"])
            R.check("scan: every entry found", len(got) == BULK, f"{len(got)}")
        conn.unbind_s()
        refused = monitor_figure(server, "entryCacheNotAdmitted") - refused
        partial = partial_read_count(server) - partial
        R.check("scan: two named scans read every entry in part", partial >= 2 * BULK,
                f"{partial}")
        R.check("scan: and ask the doorkeeper about none", refused == 0, f"{refused}")
    finally:
        server.stop(R)


def run(kind, cache):
    label = kind if cache is None else f"{kind}, cachesize {cache}"
    for rules, scenario in ((PLAIN_RULES, plain_rules), (FILTER_RULES, filter_rules)):
        server = start(kind, rules, cache)
        try:
            scenario(label, server)
            if scenario is plain_rules:
                named_searches(label, server)
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
    scans_teach_nothing()
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available for the same scenarios", False, missing)
    else:
        run("slapd", None)
    R.finish()


if __name__ == "__main__":
    main()
