#!/usr/bin/env python3
"""A read sees every write acknowledged before it was sent, from any
connection and any I/O thread. lumend keeps a reader's snapshot between
operations while nothing has been committed since (mdb_reader_park), so a
snapshot kept across a commit would answer with the value before it.

With listener-threads 2, eight connections: the first four share thread 0
and the next four thread 1 (io_placement). For 300 rounds a modify on one
connection sets a new description, and the moment it is acknowledged a
base search, a subtree search for the new value, and a compare ask for it
on a connection of each thread; then a delete and an add of a second
entry, searched for the same way. Meanwhile two threads search without
pause on connections of their own, so that readers are in use while
writes commit and go back to the pool after them (the case where only
the check at the reader's next begin keeps it fresh). Every answer must
be the new one; the same script against slapd proves the expectations.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

B = "dc=example,dc=com"
PEOPLE = f"ou=people,{B}"
TARGET = f"uid=target,{PEOPLE}"
OTHER = f"uid=other,{PEOPLE}"
ROUNDS = 300
R = h.Results("t_read_after_write.py")


def ldif():
    return (f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n\n"
            f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n"
            f"dn: {TARGET}\nobjectClass: inetOrgPerson\nuid: target\ncn: T\nsn: T\n"
            "description: v0\n\n")


def bound(uri):
    c = ldap.initialize(uri)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


def stale_answers(writer, readers, i):
    """Write round i on writer; how many readers' answers missed it."""
    value = f"v{i}".encode()
    writer.modify_s(TARGET, [(ldap.MOD_REPLACE, "description", [value])])
    missed = 0
    for r in readers:
        base = r.search_s(TARGET, ldap.SCOPE_BASE, "(objectClass=*)", ["description"])
        missed += base[0][1].get("description") != [value]
        found = r.search_s(PEOPLE, ldap.SCOPE_SUBTREE, f"(description=v{i})", ["1.1"])
        missed += [dn for dn, _ in found] != [TARGET]
        missed += not r.compare_s(TARGET, "description", value)
    if i % 10 == 0:
        writer.add_s(OTHER, ldap.modlist.addModlist(
            {"objectClass": [b"inetOrgPerson"], "uid": [b"other"], "cn": [b"O"],
             "sn": [b"O"]}))
        missed += sum(len(r.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(uid=other)", ["1.1"])) != 1
                      for r in readers)
        writer.delete_s(OTHER)
        missed += sum(len(r.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(uid=other)", ["1.1"])) != 0
                      for r in readers)
    return missed


def keep_searching(conn, stop, errors):
    """Searches on conn until stop is set; failures into errors."""
    try:
        while not stop.is_set():
            conn.search_s(PEOPLE, ldap.SCOPE_SUBTREE, "(uid=target)", ["description"])
    except ldap.LDAPError as e:
        errors.append(repr(e))


def run(kind):
    server = sh.make_server(kind, db_lines=["index description eq", "index uid eq"],
                            global_lines=["listener-threads 2"] if kind == "lumend" else [])
    server.start()
    try:
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = server.ldapadd(path)
        R.check(f"{kind}: loaded", rc == 0, out)
        conns = [bound(server.uri) for _ in range(8)]
        writer, readers = conns[0], [conns[1], conns[7]]
        stop, errors = threading.Event(), []
        busy = [threading.Thread(target=keep_searching, args=(c, stop, errors))
                for c in (conns[2], conns[6])]
        for t in busy:
            t.start()
        try:
            missed = sum(stale_answers(writer, readers, i) for i in range(1, ROUNDS + 1))
        finally:
            stop.set()
            for t in busy:
                t.join()
        R.check(f"{kind}: every read after a write sees it", missed == 0, f"{missed} stale")
        R.check(f"{kind}: the searches alongside succeed", errors == [], str(errors[:3]))
        for c in conns:
            c.unbind_s()
    finally:
        server.stop(R)


run("lumend")
if sh.slapd_missing():
    R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
else:
    run("slapd")
R.finish()
