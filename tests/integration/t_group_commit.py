#!/usr/bin/env python3
"""t_group_commit.py — writes from many connections share group commits
even with one worker: a write waiting for its commit frees the worker's
place (workq.h), so the next write joins the batch instead of waiting
behind it. cn=Monitor's writes= and commits= figures (and their metrics)
say how many writes each commit carried.

With `threads 1` and no spare threads, one write is in flight at a time
and every commit carries exactly one: commits == writes. Sequential
writes show the figures are exact; 16 connections writing at once must
give fewer commits than writes, and every write must be there. The same
holds for the writes an overlay makes for a bind (lastbind's
authTimestamp): they pass the bind's wait hook on (database.h).
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Lumend, Results  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

R = Results("t_group_commit.py")
ADMIN, PW, BASE = "cn=admin,dc=example,dc=com", "secret", "dc=example,dc=com"
DATABASE = "cn=Database 1,cn=Databases,cn=Monitor"
WRITERS, EACH = 16, 10


def connect(port):
    c = ldap.initialize(f"ldap://127.0.0.1:{port}")
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.simple_bind_s(ADMIN, PW)
    return c


def figures(conn):
    """(writes, commits) of the database, from cn=Monitor."""
    entry = conn.search_s(DATABASE, ldap.SCOPE_BASE, "(objectClass=*)", ["monitoredInfo"])[0][1]
    found = {}
    for v in entry.get("monitoredInfo", []):
        name, _, number = v.decode().partition("=")
        if name in ("writes", "commits"):
            found[name] = int(number)
    return found.get("writes"), found.get("commits")


def writer(port, n, failures):
    try:
        c = connect(port)
        for i in range(EACH):
            c.modify_s(f"uid=w{n},{BASE}",
                       [(ldap.MOD_REPLACE, "description", [f"round {i}".encode()])])
        c.unbind_s()
    except ldap.LDAPError as e:
        failures.append(repr(e))


def binder(port, n, failures):
    try:
        c = ldap.initialize(f"ldap://127.0.0.1:{port}")
        c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
        for _ in range(EACH):
            c.simple_bind_s(f"uid=w{n},{BASE}", f"pw{n}")
        c.unbind_s()
    except ldap.LDAPError as e:
        failures.append(repr(e))


def add_people(conn, with_passwords):
    conn.add_s(BASE, ldap.modlist.addModlist({"objectClass": [b"organization", b"dcObject"],
                                              "o": [b"Example"], "dc": [b"example"]}))
    for n in range(WRITERS):
        attrs = {"objectClass": [b"inetOrgPerson"], "uid": [f"w{n}".encode()],
                 "cn": [b"Writer"], "sn": [b"Writer"]}
        if with_passwords:
            attrs["userPassword"] = [f"pw{n}".encode()]
        conn.add_s(f"uid=w{n},{BASE}", ldap.modlist.addModlist(attrs))


def run_all(target, port):
    failures = []
    threads = [threading.Thread(target=target, args=(port, n, failures)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def binds_share_commits():
    srv = Lumend(extra_config="threads 1",
                 db_config="overlay lastbind\nlastbind-precision 0")
    try:
        conn = connect(srv.port)
        add_people(conn, with_passwords=True)
        writes, commits = figures(conn)
        failures = run_all(binder, srv.port)
        R.check("lastbind: every concurrent bind succeeded", failures == [], str(failures[:3]))
        new_writes = figures(conn)[0] - writes
        new_commits = figures(conn)[1] - commits
        R.check("lastbind: every bind wrote its authTimestamp", new_writes == WRITERS * EACH,
                str(new_writes))
        R.check("lastbind: with one worker, the binds' writes share commits",
                0 < new_commits < new_writes, f"{new_writes} writes in {new_commits} commits")
        stamped = [conn.search_s(f"uid=w{n},{BASE}", ldap.SCOPE_BASE, "(objectClass=*)",
                                 ["authTimestamp"])[0][1].get("authTimestamp")
                   for n in range(WRITERS)]
        R.check("lastbind: every account holds an authTimestamp",
                all(v is not None and len(v) == 1 for v in stamped), str(stamped[:3]))
        conn.unbind_s()
    finally:
        srv.stop(R)


def main():
    binds_share_commits()
    srv = Lumend(extra_config="threads 1")
    try:
        conn = connect(srv.port)
        R.check("a fresh database: no writes, no commits", figures(conn) == (0, 0),
                str(figures(conn)))
        add_people(conn, with_passwords=False)
        writes, commits = figures(conn)
        R.check("one at a time: one write per commit, every write counted",
                (writes, commits) == (WRITERS + 1, WRITERS + 1), str((writes, commits)))

        failures = run_all(writer, srv.port)
        R.check("every concurrent modify succeeded", failures == [], str(failures[:3]))
        after_writes, after_commits = figures(conn)
        new_writes, new_commits = after_writes - writes, after_commits - commits
        R.check("every concurrent write counted", new_writes == WRITERS * EACH, str(new_writes))
        R.check("with one worker, concurrent writes share commits",
                0 < new_commits < new_writes, f"{new_writes} writes in {new_commits} commits")
        last = [conn.search_s(f"uid=w{n},{BASE}", ldap.SCOPE_BASE, "(objectClass=*)",
                              ["description"])[0][1].get("description") for n in range(WRITERS)]
        R.check("each entry holds its last write", all(v == [f"round {EACH - 1}".encode()]
                                                       for v in last), str(last[:3]))
        # A search while nothing writes: the figures do not move.
        R.check("reads commit nothing", figures(conn) == (after_writes, after_commits))
        conn.unbind_s()
    finally:
        srv.stop(R)
    sys.exit(R.finish())


main()
