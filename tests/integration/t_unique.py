#!/usr/bin/env python3
"""Attribute uniqueness (`overlay unique`), side by side with OpenLDAP's slapd
and its unique module.

  - unique_uri ldap:///?uid,mail?sub: an add, modify or rename duplicating a
    uid or mail anywhere in the database is refused with constraintViolation
    (19) naming the attribute, and nothing is written; the URI form with a
    base, one-level scope and a filter only covers the entries it selects;
    `ignore` covers every user attribute but those listed; unique_uri
    repeated makes independent domains.
  - Concurrent writers: eight threads add entries with the same uid at
    once; exactly one succeeds (Lumen checks inside the write transaction).
  - A unique_uri that does not parse, names an unknown attribute or a base
    outside the database is a configuration error naming file and line.
"""
import os
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_unique.py")
B = sh.SUFFIX
PEOPLE, STAFF = "ou=people," + B, "ou=staff," + B

DOMAINS = ["unique_uri ldap:///?uid,mail?sub",
           f'unique_uri "ldap:///{STAFF}?cn?one?(objectClass=inetOrgPerson)"',
           f'unique_uri "ignore ldap:///{STAFF}?objectClass,cn,sn,uid,mail,ou?sub"']


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {STAFF}\nobjectClass: organizationalUnit\nou: staff\n",
           f"dn: uid=alice,{PEOPLE}\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice\n"
           "sn: A\nmail: alice@example.com\n",
           f"dn: uid=sam,{STAFF}\nobjectClass: inetOrgPerson\nuid: sam\ncn: Sam\nsn: S\n"
           "title: boss\n"]
    return "\n".join(out) + "\n"


def start(kind, lines=DOMAINS):
    return sh.start_loaded(kind, "unique", ["index uid,mail,cn eq", "overlay unique", *lines],
                           ldif())


def outcome(fn):
    try:
        fn()
        return ("success", "")
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (type(e).__name__, info.get("info", ""))


def person(uid, parent=PEOPLE, **extra):
    attrs = {"objectClass": ["inetOrgPerson"], "uid": [uid], "cn": [uid], "sn": ["x"]}
    attrs.update({k: [v] for k, v in extra.items()})
    return f"uid={uid},{parent}", [(k, [x.encode() for x in v]) for k, v in attrs.items()]


def exists(conn, dn):
    try:
        conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
        return True
    except ldap.NO_SUCH_OBJECT:
        return False


def scenario(kind):
    seen = {}
    server, conn = start(kind)
    try:
        def add(uid, parent=PEOPLE, **extra):
            dn, attrs = person(uid, parent, **extra)
            return outcome(lambda: conn.add_s(dn, attrs))
        seen["add: mail taken"] = add("bob", mail="alice@example.com")
        seen["add: mail taken, other case"] = add("bob", mail="ALICE@example.com")
        seen["refused add wrote nothing"] = exists(conn, f"uid=bob,{PEOPLE}")
        seen["add: uid taken in another subtree"] = add("alice", STAFF)
        seen["add: fresh"] = add("bob", mail="bob@example.com")
        seen["modify: mail taken"] = outcome(lambda: conn.modify_s(
            f"uid=bob,{PEOPLE}", [(ldap.MOD_ADD, "mail", [b"alice@example.com"])]))
        seen["refused modify wrote nothing"] = conn.search_s(
            f"uid=bob,{PEOPLE}", ldap.SCOPE_BASE, "(objectClass=*)", ["mail"])[0][1]["mail"]
        seen["modify: own value again"] = outcome(lambda: conn.modify_s(
            f"uid=bob,{PEOPLE}", [(ldap.MOD_REPLACE, "mail", [b"bob@example.com",
                                                              b"bob2@example.com"])]))
        seen["rename: uid taken"] = outcome(lambda: conn.rename_s(
            f"uid=bob,{PEOPLE}", "uid=alice", STAFF, delold=1))
        # onto an existing DN: Lumen's backend finds the DN taken before the
        # overlay runs (entryAlreadyExists); slapd's overlay answers first
        seen["rename onto a taken DN"] = outcome(lambda: conn.rename_s(
            f"uid=bob,{PEOPLE}", "uid=alice", delold=1))
        # cn unique one level below ou=staff among inetOrgPersons only
        seen["one-level cn taken"] = add("sam2", STAFF, cn="Sam")
        seen["cn elsewhere is fine"] = add("carl", PEOPLE, cn="Sam")
        # ignore domain: every other user attribute unique below ou=staff
        seen["ignore: title taken"] = add("tina", STAFF, title="boss")
        seen["ignore: listed attribute not checked"] = add("tom", STAFF, sn="S")
    finally:
        conn.unbind_s()
        server.stop(R)
    return seen


def compare_with_slapd():
    lumen = scenario("lumend")
    cv = "CONSTRAINT_VIOLATION"
    expected = {
        "add: mail taken": cv, "add: mail taken, other case": cv,
        "refused add wrote nothing": False, "add: uid taken in another subtree": cv,
        "add: fresh": "success", "modify: mail taken": cv,
        "refused modify wrote nothing": [b"bob@example.com"],
        "modify: own value again": "success", "rename: uid taken": cv,
        "one-level cn taken": cv, "cn elsewhere is fine": "success",
        "ignore: title taken": cv, "ignore: listed attribute not checked": "success",
    }
    for step, want in expected.items():
        got = lumen[step][0] if isinstance(lumen[step], tuple) else lumen[step]
        R.check(f"lumend {step}", got == want, f"got {lumen[step]}, want {want}")
    names = {"add: mail taken": "mail", "add: uid taken in another subtree": "uid",
             "modify: mail taken": "mail", "rename: uid taken": "uid",
             "ignore: title taken": "title"}
    for step, attr in names.items():
        R.check(f"lumend {step}: the diagnostic names {attr}",
                f"({attr}=" in lumen[step][1], lumen[step][1])
    R.check("lumend rename onto a taken DN: entryAlreadyExists",
            lumen["rename onto a taken DN"][0] == "ALREADY_EXISTS", f"{lumen}")
    if sh.slapd_missing():
        R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
        return
    slapd = scenario("slapd")
    R.check("slapd rename onto a taken DN: its overlay answers first (where Lumen differs)",
            slapd["rename onto a taken DN"][0] == "CONSTRAINT_VIOLATION", f"{slapd}")
    for step in expected:
        s_val, l_val = slapd[step], lumen[step]
        if isinstance(s_val, tuple):   # same result code; texts differ in detail
            s_val, l_val = s_val[0], l_val[0]
        R.check(f"slapd agrees on {step}", s_val == l_val, f"slapd {slapd[step]}, lumend {lumen[step]}")


def concurrent():
    """Eight threads add entries with the same uid (distinct DNs) at once."""
    server, conn = start("lumend", ["unique_uri ldap:///?uid?sub"])
    results = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def writer(i):
        c = ldap.initialize(server.uri)
        c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        attrs = [("objectClass", [b"inetOrgPerson"]), ("uid", [b"racer"]),
                 ("cn", [f"r{i}".encode()]), ("sn", [b"r"])]
        barrier.wait()
        r = outcome(lambda: c.add_s(f"cn=r{i},{PEOPLE}", attrs))
        c.unbind_s()
        with lock:
            results.append(r[0])

    try:
        for _round in range(3):
            results.clear()
            threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            stored = conn.search_s(PEOPLE, ldap.SCOPE_SUBTREE, "(uid=racer)", ["1.1"])
            R.check(f"concurrent adds (round {_round + 1}): exactly one succeeds",
                    results.count("success") == 1 and results.count("CONSTRAINT_VIOLATION") == 7,
                    f"{sorted(results)}")
            R.check(f"concurrent adds (round {_round + 1}): one entry stored", len(stored) == 1,
                    f"{stored}")
            for dn, _ in stored:
                conn.delete_s(dn)
    finally:
        conn.unbind_s()
        server.stop(R)


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-unique-")
    head = h.config_head(tmp, B)
    cases = [
        ("unknown attribute", ["overlay unique", "unique_uri ldap:///?nosuch?sub"], 8,
         'unknown attribute "nosuch"'),
        ("bad scope", ["overlay unique", "unique_uri ldap:///?uid?deep"], 8,
         'expected the scope base, one or sub, not "deep"'),
        ("bad keyword", ["overlay unique", 'unique_uri "bogus ldap:///?uid?sub"'], 8,
         'not "bogus"'),
        ("base outside the database", ["overlay unique", "unique_uri ldap:///dc=other?uid?sub"],
         8, "base not within the database's suffix"),
        ("bad filter", ["overlay unique", "unique_uri ldap:///?uid?sub?(uid=x"], 8,
         "bad filter"),
        ("not ldap:///", ["overlay unique", "unique_uri http://x/?uid?sub"], 8,
         "expected ldap:///"),
        ("no unique_uri", ["overlay unique"], 7, 'expected a "unique_uri" line'),
        ("legacy directive", ["overlay unique", "unique_attributes uid"], 8,
         "write it as a unique_uri line"),
    ]
    h.check_config_errors(R, tmp, head, cases)
    good = os.path.join(tmp, "good.conf")
    with open(good, "w") as f:
        f.write("\n".join(head + ["overlay unique", *DOMAINS,
                                  'unique_uri "strict serialize ldap:///?mail?sub"']) + "\n")
    rc, out = h.lumend_check(good)
    R.check("config: a good unique section passes -T", rc == 0, out)


compare_with_slapd()
concurrent()
config_errors()
R.finish()
