#!/usr/bin/env python3
"""Concurrency test: searches running while other clients add, modify, delete.

lumend holds 200 fixed users (uid=fixed.N) and an ou=dyn that changes. For
CONC_SECONDS (default 20) seconds, each on its own connection (python-ldap,
one thread each):
  - 2 modifiers replace, in one modify, description, title and the three
    carLicense values of their own fixed entries with one new version number
    (increasing per entry);
  - 1 adder adds uid=dyn.N under ou=dyn, 1 deleter deletes the oldest ones;
  - 4 searchers run subtree / one-level searches with indexed filters
    (objectClass, uid, cn substrings, description) and unindexed ones (title,
    carLicense), and check every result:
      * no error, no duplicate entry, every entry matches the filter;
      * no torn modify: description, title and carLicense carry one version;
      * all 200 fixed entries, once each, in a whole-tree search;
      * no stale read: a version acknowledged before the search started is
        never older than what the search returns; an add acknowledged before
        the search started is there, a delete acknowledged before it is gone.
At the end the directory must match what the writers were told.
LUMEN_IT_SERVER=slapd runs the same test against OpenLDAP's slapd.
"""
import os
import random
import re
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

r = h.Results("t_concurrency.py")
KIND = os.environ.get("LUMEN_IT_SERVER", "lumend")
if KIND == "slapd" and sh.slapd_missing():
    print(f"  skip t_concurrency.py: {sh.slapd_missing()}")
    r.finish()
SECONDS = float(os.environ.get("CONC_SECONDS", "20"))
NFIXED = 200
S = sh.SUFFIX
PEOPLE = f"ou=people,{S}"
DYN = f"ou=dyn,{S}"
WATCHDOG_S = int(SECONDS) + 240

lock = threading.Lock()
acked_version = {}           # fixed dn (lower) -> last acknowledged version
sent_version = {}            # fixed dn (lower) -> last version sent (maybe unanswered)
acked_adds = {}              # dyn dn (lower) -> seq of the ack
acked_deletes = {}           # dyn dn (lower) -> seq of the ack
delete_sent = set()          # dyn dn (lower) whose delete was sent (maybe unanswered)
stop = threading.Event()
errors = []                  # unexpected errors and inconsistencies
stats = {"search": 0, "entries": 0, "modify": 0, "add": 0, "delete": 0}


def problem(msg):
    with lock:
        if len(errors) < 200:
            errors.append(msg)


def connect(server):
    c = ldap.initialize(server.uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.set_option(ldap.OPT_TIMEOUT, 60)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


def fixed_dn(i):
    return f"uid=fixed.{i},{PEOPLE}"


def version_attrs(v):
    """The attributes one modify sets together, all carrying version v."""
    tag = f"ver-{v:08d}"
    return {"description": [tag.encode()], "title": [tag.encode()],
            "carLicense": [f"{tag}-a".encode(), f"{tag}-b".encode(), f"{tag}-c".encode()]}


def version_of(dn, attrs):
    """The version an entry carries, or None after recording a torn entry."""
    d, t, c = attrs.get("description", []), attrs.get("title", []), attrs.get("carLicense", [])
    m = re.fullmatch(rb"ver-(\d{8})", d[0]) if len(d) == 1 else None
    if not m or t != d or sorted(c) != sorted(version_attrs(int(m.group(1)))["carLicense"]):
        problem(f"torn or wrong entry {dn}: description={d} title={t} carLicense={c}")
        return None
    return int(m.group(1))


# ------------------------------------------------------------------ writers

def modifier(server, wid, owned):
    rnd = random.Random(100 + wid)
    conn = connect(server)
    version = {i: 0 for i in owned}
    while not stop.is_set():
        i = rnd.choice(owned)
        v = version[i] + 1
        dn = fixed_dn(i)
        with lock:
            sent_version[dn.lower()] = v
        try:
            conn.modify_s(dn, [(ldap.MOD_REPLACE, k, vals) for k, vals in version_attrs(v).items()])
        except ldap.LDAPError as e:
            problem(f"modify {dn}: {e!r}")
            continue
        version[i] = v
        with lock:
            acked_version[dn.lower()] = v
            stats["modify"] += 1
    conn.unbind_s()


seq = [0]
dyn_queue = []


def adder(server):
    conn = connect(server)
    n = 0
    while not stop.is_set():
        n += 1
        dn = f"uid=dyn.{n},{DYN}"
        attrs = {"objectClass": [b"top", b"person", b"organizationalPerson", b"inetOrgPerson"],
                 "uid": [f"dyn.{n}".encode()], "cn": [f"dyn {n}".encode()], "sn": [b"Dyn"]}
        attrs.update(version_attrs(n))
        try:
            conn.add_s(dn, list(attrs.items()))
        except ldap.LDAPError as e:
            problem(f"add {dn}: {e!r}")
            continue
        with lock:
            seq[0] += 1
            acked_adds[dn.lower()] = seq[0]
            dyn_queue.append(dn)
            stats["add"] += 1
    conn.unbind_s()


def deleter(server):
    conn = connect(server)
    while not stop.is_set():
        with lock:
            dn = dyn_queue.pop(0) if len(dyn_queue) > 30 else None
            if dn is not None:
                delete_sent.add(dn.lower())
        if dn is None:
            time.sleep(0.01)
            continue
        try:
            conn.delete_s(dn)
        except ldap.LDAPError as e:
            problem(f"delete {dn}: {e!r}")
            continue
        with lock:
            seq[0] += 1
            acked_deletes[dn.lower()] = seq[0]
            stats["delete"] += 1
    conn.unbind_s()


# ----------------------------------------------------------------- searchers

def matches(filt_check, dn, attrs):
    try:
        return filt_check(dn, attrs)
    except (KeyError, IndexError):
        return False


def searcher(server, sid):
    rnd = random.Random(200 + sid)
    conn = connect(server)
    attrs_wanted = ["uid", "cn", "description", "title", "carLicense", "objectClass"]
    while not stop.is_set():
        k = rnd.randrange(8)
        i = rnd.randrange(NFIXED)
        if k == 0:    # indexed, whole tree: every fixed entry once
            base, scope, filt = S, ldap.SCOPE_SUBTREE, "(objectClass=inetOrgPerson)"
            check = lambda dn, a: b"inetOrgPerson" in a["objectClass"]  # noqa: E731
        elif k == 1:  # unindexed, whole tree
            base, scope, filt = S, ldap.SCOPE_SUBTREE, "(title=ver-*)"
            check = lambda dn, a: a["title"][0].startswith(b"ver-")  # noqa: E731
        elif k == 2:  # indexed equality on one entry
            base, scope, filt = S, ldap.SCOPE_SUBTREE, f"(uid=fixed.{i})"
            check = lambda dn, a: a["uid"] == [f"fixed.{i}".encode()]  # noqa: E731
        elif k == 3:  # indexed substrings
            base, scope, filt = PEOPLE, ldap.SCOPE_SUBTREE, f"(cn=fixed {i}*)"
            check = lambda dn, a: any(v.lower().startswith(f"fixed {i}".encode()) for v in a["cn"])  # noqa: E731
        elif k == 4:  # one level over the changing ou
            base, scope, filt = DYN, ldap.SCOPE_ONELEVEL, "(objectClass=*)"
            check = lambda dn, a: True  # noqa: E731
        elif k == 5:  # unindexed, multi-valued
            base, scope, filt = PEOPLE, ldap.SCOPE_ONELEVEL, "(carLicense=*-b)"
            check = lambda dn, a: any(v.endswith(b"-b") for v in a["carLicense"])  # noqa: E731
        elif k == 6:  # indexed equality on a value being replaced
            with lock:
                v = acked_version.get(fixed_dn(i).lower(), 0)
            tag = f"ver-{v:08d}"
            base, scope, filt = S, ldap.SCOPE_SUBTREE, f"(description={tag})"
            check = lambda dn, a: a["description"] == [tag.encode()]  # noqa: E731
        else:         # AND of indexed and unindexed
            base, scope, filt = S, ldap.SCOPE_SUBTREE, "(&(objectClass=person)(!(uid=fixed.1*))(title=*))"
            check = lambda dn, a: not a["uid"][0].startswith(b"fixed.1") and a["title"]  # noqa: E731
        with lock:
            floor = dict(acked_version)
            added_before = set(acked_adds)
            deleted_before = set(acked_deletes)
        try:
            res = conn.search_s(base, scope, filt, attrs_wanted)
        except ldap.LDAPError as e:
            problem(f"search {base} {filt}: {e!r}")
            continue
        with lock:
            stats["search"] += 1
            stats["entries"] += len(res)
        seen = set()
        for dn, a in res:
            ldn = dn.lower()
            if ldn in seen:
                problem(f"search {filt}: {dn} returned twice")
            seen.add(ldn)
            if not matches(check, dn, a):
                problem(f"search {filt}: {dn} does not match: {a}")
            if ldn.endswith(PEOPLE) and ldn.startswith("uid=fixed."):
                v = version_of(dn, a)
                if v is not None and v < floor.get(ldn, 0):
                    problem(f"stale read {filt}: {dn} version {v} < acknowledged {floor[ldn]}")
            elif ldn.endswith(DYN):
                v = version_of(dn, a)
                if v is not None and f"uid=dyn.{v}," not in ldn:
                    problem(f"{dn} carries version {v}")
                if ldn in deleted_before:
                    problem(f"search {filt}: {dn} returned after its delete was acknowledged")
        if k == 0:
            fixed = [d for d in seen if d.startswith("uid=fixed.")]
            if len(fixed) != NFIXED:
                problem(f"whole-tree search saw {len(fixed)} fixed entries, not {NFIXED}")
        if k == 4:
            with lock:   # a delete sent before the search ended may have hidden one
                missing = [d for d in added_before if d not in seen and d not in delete_sent]
            if missing:
                problem(f"one-level search on ou=dyn lacks acknowledged adds {missing[:3]}")
        if k == 2 and len(res) != 1:
            problem(f"(uid=fixed.{i}) returned {len(res)} entries")
        if k == 6 and fixed_dn(i).lower() not in seen and floor.get(fixed_dn(i).lower(), 0) == v:
            # Still the current value unless a modify was sent meanwhile.
            with lock:
                now = sent_version.get(fixed_dn(i).lower(), 0)
            if now == v:
                problem(f"(description={tag}) did not find {fixed_dn(i)}")
    conn.unbind_s()


# ---------------------------------------------------------------------- main

def preload(server):
    path = os.path.join(server.tmp, "fixed.ldif")
    with open(path, "w") as f:
        f.write(f"dn: {S}\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\n"
                f"dc: example\no: Example\n\n")
        f.write(f"dn: {PEOPLE}\nobjectClass: top\nobjectClass: organizationalUnit\nou: people\n\n")
        f.write(f"dn: {DYN}\nobjectClass: top\nobjectClass: organizationalUnit\nou: dyn\n\n")
        for i in range(NFIXED):
            va = version_attrs(0)
            f.write(f"dn: {fixed_dn(i)}\nobjectClass: top\nobjectClass: person\n"
                    f"objectClass: organizationalPerson\nobjectClass: inetOrgPerson\n"
                    f"uid: fixed.{i}\ncn: fixed {i}\nsn: Fixed\n")
            for k, vals in va.items():
                for v in vals:
                    f.write(f"{k}: {v.decode()}\n")
            f.write("\n")
    return server.ldapadd(path)


def final_check(server):
    conn = connect(server)
    res = conn.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=*)",
                        ["description", "title", "carLicense"])
    wrong = []
    for dn, a in res:
        v = version_of(dn, a)
        if v != acked_version.get(dn.lower(), 0):
            wrong.append((dn, v, acked_version.get(dn.lower(), 0)))
    r.check(f"final: the {NFIXED} fixed entries hold their last acknowledged version",
            len(res) == NFIXED and not wrong, f"{len(res)} entries; wrong: {wrong[:5]}")
    res = conn.search_s(DYN, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"])
    got = {dn.lower() for dn, _ in res}
    want = set(acked_adds) - set(acked_deletes)
    r.check(f"final: ou=dyn holds exactly the {len(want)} added and not deleted entries",
            got == want, f"extra {sorted(got - want)[:5]} missing {sorted(want - got)[:5]}")
    for filt, n in (("(uid=dyn.*)", len(want)), ("(objectClass=inetOrgPerson)", NFIXED + len(want)),
                    ("(description=ver-*)", NFIXED + len(want))):
        k = len(conn.search_s(S, ldap.SCOPE_SUBTREE, filt, ["1.1"]))
        r.check(f"final: {filt} finds {n} entries", k == n, f"found {k}")
    conn.unbind_s()


def main():
    server = sh.make_server(KIND, db_lines=["index objectClass eq", "index uid eq",
                                            "index cn eq,sub", "index description eq",
                                            "dbnosync"])

    def watchdog(signum, frame):
        raise TimeoutError(f"over {WATCHDOG_S} s")
    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(WATCHDOG_S)
    threads = []
    try:
        server.start()
        rc, out = preload(server)
        if not r.check(f"{NFIXED} fixed entries load with ldapadd", rc == 0, out[-2000:]):
            server.stop(r)
            return
        half = NFIXED // 2
        threads = ([threading.Thread(target=modifier, args=(server, 0, list(range(half))))]
                   + [threading.Thread(target=modifier, args=(server, 1, list(range(half, NFIXED))))]
                   + [threading.Thread(target=adder, args=(server,)),
                      threading.Thread(target=deleter, args=(server,))]
                   + [threading.Thread(target=searcher, args=(server, s)) for s in range(4)])
        for t in threads:
            t.daemon = True
            t.start()
        time.sleep(SECONDS)
        stop.set()
        for t in threads:
            t.join(90)
        r.check("all clients finish", not any(t.is_alive() for t in threads))
        print(f"  info t_concurrency.py: {stats}")
        r.check("the server stays up", server.alive(), server.log_text()[-2000:])
        r.check("writers made progress", stats["modify"] > 0 and stats["add"] > 0
                and stats["delete"] > 0, repr(stats))
        r.check("searchers made progress", stats["search"] > 0, repr(stats))
        r.check("no unexpected error, torn entry, stale read or wrong result",
                not errors, f"{len(errors)} problems:\n       " + "\n       ".join(errors[:15]))
        if server.alive():
            final_check(server)
        server.stop(r)
    except TimeoutError as e:
        stop.set()
        r.check("finishes within the watchdog", False, str(e))
        server.cleanup()
    except Exception as e:  # noqa: BLE001
        stop.set()
        r.check("runs to the end", False, f"{type(e).__name__}: {e}\n{server.log_text()[-2000:]}")
        server.cleanup()
    finally:
        signal.alarm(0)


if __name__ == "__main__":
    main()
    r.finish()
