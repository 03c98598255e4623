"""t_monitor.py — cn=Monitor against what this test did: N searches make
monitorOpCompleted of cn=Search grow by N (plus the reading searches
themselves), connections current/total follow the connections opened and
closed, the tree's shape (scopes, filter, attribute selection, size limit,
noSuchObject), the root DSE's monitorContext, and access rules.

Counters are recorded just after a response leaves, so a read right after
a response may miss the very last operation: reads poll (bounded) until
the expected value appears; nothing compares speeds.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Lumend, Results  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

R = Results("t_monitor.py")
ADMIN, PW, BASE = "cn=admin,dc=example,dc=com", "secret", "dc=example,dc=com"
OPS = "cn=Operations,cn=Monitor"


def connect(port, bind=True):
    c = ldap.initialize(f"ldap://127.0.0.1:{port}")
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    if bind:
        c.simple_bind_s(ADMIN, PW)
    return c


def read(conn, dn, attr):
    res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", [attr])
    vals = res[0][1].get(attr, [])
    return int(vals[0]) if vals else None


def poll(fn, want, timeout=5.0):
    """Call fn() until it returns want (or time is up); the last value.
    Each call is itself a search of cn=Monitor, so `want` may be a function
    of the number of calls made: want(calls) -> expected."""
    deadline, calls = time.time() + timeout, 0
    while True:
        calls += 1
        got = fn()
        expected = want(calls) if callable(want) else want
        if got == expected or time.time() > deadline:
            return got, expected
        time.sleep(0.05)


def main():
    srv = Lumend()
    try:
        mon = connect(srv.port)
        root = mon.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["+"])[0][1]
        R.check("root DSE publishes monitorContext", root.get("monitorContext") == [b"cn=Monitor"],
                str(root.get("monitorContext")))

        top = mon.search_s("cn=Monitor", ldap.SCOPE_BASE, "(objectClass=*)", ["*", "+"])
        R.check("cn=Monitor exists", len(top) == 1 and top[0][0] == "cn=Monitor", str(top)[:200])
        R.check("cn=Monitor is a monitorServer",
                b"monitorServer" in top[0][1].get("objectClass", []), str(top)[:300])

        # ------------------------------------------------ operation counters
        search_dn = f"cn=Search,{OPS}"
        before = read(mon, search_dn, "monitorOpCompleted")
        before_init = read(mon, search_dn, "monitorOpInitiated")
        R.check("cn=Search has counters", before is not None and before_init is not None)
        worker = connect(srv.port)
        n = 23
        for _ in range(n):
            worker.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
        # The monitoring reads are searches too: the two reads above are
        # complete, and so is every earlier poll; a read never counts itself
        # (it is still running when it takes its snapshot).
        got, expected = poll(lambda: read(mon, search_dn, "monitorOpCompleted"),
                             lambda calls: before + 2 + n + (calls - 1))
        R.check(f"{n} searches: monitorOpCompleted grew by {n} (+ the monitor reads)",
                got == expected, f"got {got}, expected {expected} (before {before})")
        got_init = read(mon, search_dn, "monitorOpInitiated")
        completed_now = read(mon, search_dn, "monitorOpCompleted")
        R.check("initiated runs ahead of completed",
                got_init is not None and completed_now is not None and
                got_init >= completed_now, f"{got_init} vs {completed_now}")
        cmp_before = read(mon, f"cn=Compare,{OPS}", "monitorOpCompleted")
        try:   # the database is empty: noSuchObject, still a completed compare
            worker.compare_s(BASE, "dc", b"example")
        except ldap.NO_SUCH_OBJECT:
            pass
        got, _ = poll(lambda: read(mon, f"cn=Compare,{OPS}", "monitorOpCompleted"), cmp_before + 1)
        R.check("a compare is counted under cn=Compare", got == cmp_before + 1, f"{got}")
        total_ops = read(mon, OPS, "monitorOpCompleted")
        R.check("cn=Operations sums every type", total_ops is not None and total_ops >= before + n + 1)

        # ------------------------------------------------------ connections
        cur_dn, tot_dn = "cn=Current,cn=Connections,cn=Monitor", "cn=Total,cn=Connections,cn=Monitor"
        cur0, _ = poll(lambda: read(mon, cur_dn, "monitorCounter"), 2)
        tot0 = read(mon, tot_dn, "monitorCounter")
        R.check("current connections: the monitor's and the worker's", cur0 == 2, str(cur0))
        extra = [connect(srv.port) for _ in range(3)]
        got, _ = poll(lambda: read(mon, cur_dn, "monitorCounter"), cur0 + 3)
        R.check("three more connections: current +3", got == cur0 + 3, str(got))
        R.check("total counts accepted connections",
                read(mon, tot_dn, "monitorCounter") == tot0 + 3)
        conns = mon.search_s("cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                             "(objectClass=monitorConnection)", ["+"])
        R.check("one cn=Connection entry per open connection", len(conns) == cur0 + 3, str(len(conns)))
        R.check("connection entries name their peer",
                all(e[1].get("monitorConnectionPeerAddress", [b""])[0].startswith(b"IP=127.0.0.1:")
                    for e in conns), str(conns[:1])[:300])
        R.check("bound connections show their DN",
                any(e[1].get("monitorConnectionAuthzDN") == [ADMIN.encode()] for e in conns))
        for c in extra:
            c.unbind_s()
        got, _ = poll(lambda: read(mon, cur_dn, "monitorCounter"), cur0)
        R.check("closed connections leave current", got == cur0, str(got))
        R.check("total never shrinks", read(mon, tot_dn, "monitorCounter") == tot0 + 3)

        # ------------------------------------------------- tree and searches
        everything = mon.search_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"])
        dns = {dn.lower() for dn, _ in everything}
        for want in ("cn=search,cn=operations,cn=monitor", "cn=bytes,cn=statistics,cn=monitor",
                     "cn=max,cn=threads,cn=monitor", "cn=uptime,cn=time,cn=monitor",
                     "cn=read,cn=waiters,cn=monitor", "cn=database 1,cn=databases,cn=monitor",
                     "cn=listener 0,cn=listeners,cn=monitor"):
            R.check(f"subtree holds {want}", want in dns)
        one = mon.search_s(OPS, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"])
        R.check("one-level under cn=Operations: the ten types", len(one) == 10, str(len(one)))
        hit = mon.search_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(cn=Modrdn)", ["monitorOpCompleted"])
        R.check("filter selects one entry", [d for d, _ in hit] == [f"cn=Modrdn,{OPS}"], str(hit))
        R.check("named operational attribute returned",
                list(hit[0][1].keys()) == ["monitorOpCompleted"], str(hit))
        plain = mon.search_s(f"cn=Add,{OPS}", ldap.SCOPE_BASE, "(objectClass=*)")
        R.check("counters are operational: not returned by default",
                "monitorOpCompleted" not in plain[0][1], str(plain))
        db = mon.search_s("cn=Database 1,cn=Databases,cn=Monitor", ldap.SCOPE_BASE,
                          "(objectClass=*)", ["+", "*"])[0][1]
        R.check("database entry names its suffix", db.get("namingContexts") == [BASE.encode()], str(db)[:300])
        R.check("database figures", any(v.startswith(b"entries=") for v in db.get("monitoredInfo", [])),
                str(db.get("monitoredInfo"))[:300])
        try:
            mon.search_ext_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"], sizelimit=3)
            R.check("size limit applies", False)
        except ldap.SIZELIMIT_EXCEEDED:
            R.check("size limit applies", True)
        try:
            mon.search_s("cn=Nothing,cn=Monitor", ldap.SCOPE_BASE)
            R.check("unknown entry: noSuchObject", False)
        except ldap.NO_SUCH_OBJECT as e:
            R.check("unknown entry: noSuchObject with matchedDN cn=Monitor",
                    e.args[0].get("matched") == "cn=Monitor", str(e))
        anon = connect(srv.port, bind=False)
        R.check("anonymous reads cn=Monitor without rules",
                len(anon.search_s("cn=Monitor", ldap.SCOPE_BASE)) == 1)
        anon.unbind_s()
        worker.unbind_s()
        mon.unbind_s()
    finally:
        srv.stop(R)

    # Access rules apply (global ones: cn=Monitor is in no database).
    rules = ('access to dn.subtree="cn=Monitor" by dn.exact="cn=admin,dc=example,dc=com" read '
             'by * none\naccess to * by * read')
    try:
        srv = Lumend(rules)
    except RuntimeError as e:
        R.check("lumend starts with access rules", False, str(e)[:500])
        R.finish()
    try:
        anon = connect(srv.port, bind=False)
        # As any entry (and slapd's back-monitor): no `search` on the base and
        # no disclose answers noSuchObject.
        try:
            anon.search_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"])
            R.check("rules hide cn=Monitor from anonymous: noSuchObject", False)
        except ldap.NO_SUCH_OBJECT:
            R.check("rules hide cn=Monitor from anonymous: noSuchObject", True)
        admin = connect(srv.port)
        R.check("rules let the admin read cn=Monitor",
                len(admin.search_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"])) > 20)
        anon.unbind_s()
        admin.unbind_s()
    finally:
        srv.stop(R)
    R.finish()


main()
