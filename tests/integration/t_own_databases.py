#!/usr/bin/env python3
"""The root DSE, cn=Subschema and cn=Monitor are in-memory databases served
by the one search path, so they answer as ordinary entries do:

  - ldapsearch's (|(supportedLDAPVersion=3)(objectClass=nothing)) on the
    root DSE returns it;
  - paged results (RFC 2696) page cn=Monitor and cn=Subschema, and the size
    limit bounds the whole paged search (sizeLimitExceeded with exactly N
    entries);
  - every filter form (equality, substrings, ordering, presence, approx,
    extensible, and/or/not) on cn=Subschema gives what slapd gives, and on
    cn=Monitor what its entries hold;
  - access control: a cn=Monitor base the requester may not search answers
    noSuchObject (slapd's back-monitor, any entry); compare works and
    writes are refused (unwillingToPerform), side by side with slapd;
  - with access rules only inside the database section, cn=Monitor is
    closed (noSuchObject to anonymous and to the database's rootdn), as on
    a slapd with no monitor database; the root DSE is still read.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import SimplePagedResultsControl  # noqa: E402

R = h.Results("t_own_databases.py")
CONNS = "cn=Connections,cn=Monitor"
RULES = ['access to dn.subtree="cn=Monitor" by dn.exact="cn=admin,dc=example,dc=com" read '
         'by * none', 'access to * by * read']


def collect(conn, base, scope, filt, attrs=("1.1",), sizelimit=0, ctrls=None):
    """(result code, entries, response controls): the entries that arrived
    before the result, also when the result is an error."""
    msgid = conn.search_ext(base, scope, filt, list(attrs), serverctrls=ctrls,
                            sizelimit=sizelimit)
    got = []
    while True:
        try:
            rtype, data, _, rctrls = conn.result3(msgid, all=0)
        except ldap.LDAPError as e:
            return e.args[0].get("result", -1), got, []
        got += [dn for dn, _ in data] if data else []
        if rtype == ldap.RES_SEARCH_RESULT:
            return 0, got, rctrls


def pages(conn, base, scope, size, sizelimit=0):
    """Page through a search; (code, entries per page, whether every page had
    the control)."""
    cookie, per_page, controlled = b"", [], True
    while True:
        ctrl = SimplePagedResultsControl(True, size=size, cookie=cookie)
        code, got, rctrls = collect(conn, base, scope, "(objectClass=*)", sizelimit=sizelimit,
                                    ctrls=[ctrl])
        per_page.append(got)
        paged = [c for c in rctrls if c.controlType == SimplePagedResultsControl.controlType]
        controlled = controlled and bool(paged) or code != 0
        cookie = paged[0].cookie if paged else b""
        if code != 0 or not cookie or len(per_page) > 100:
            return code, per_page, controlled


def connect(uri, who=None):
    c = ldap.initialize(uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    if who:
        c.simple_bind_s(*who)
    return c


def acceptance_filter(srv):
    out = subprocess.run(["ldapsearch", "-x", "-H", f"ldap://127.0.0.1:{srv.port}", "-LLL",
                          "-b", "", "-s", "base",
                          "(|(supportedLDAPVersion=3)(objectClass=nothing))", "+"],
                         capture_output=True, text=True)
    R.check("root DSE: (|(supportedLDAPVersion=3)(objectClass=nothing)) returns it",
            out.returncode == 0 and "supportedLDAPVersion: 3" in out.stdout, out.stdout + out.stderr)


def paging(srv):
    admin = connect(f"ldap://127.0.0.1:{srv.port}", ("cn=admin,dc=example,dc=com", "secret"))
    _, everything, _ = collect(admin, "cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)")
    code, per_page, controlled = pages(admin, "cn=Monitor", ldap.SCOPE_SUBTREE, 5)
    flat = [dn for page in per_page for dn in page]
    R.check("cn=Monitor pages: every page has the control and at most 5 entries",
            code == 0 and controlled and all(len(p) <= 5 for p in per_page) and len(per_page) > 3,
            (code, controlled, [len(p) for p in per_page]))
    # Entries of the statistics change between pages, not the tree's shape
    # (no connection opened or closed meanwhile).
    R.check("cn=Monitor pages: together the whole tree, each entry once",
            sorted(flat) == sorted(everything), (len(flat), len(everything)))
    code, per_page, _ = pages(admin, "cn=Monitor", ldap.SCOPE_SUBTREE, 3, sizelimit=7)
    R.check("cn=Monitor pages: the size limit bounds the paged search (7 entries)",
            code == ldap.SIZELIMIT_EXCEEDED.errnum and sum(map(len, per_page)) == 7,
            (code, [len(p) for p in per_page]))
    code, per_page, controlled = pages(admin, "cn=Subschema", ldap.SCOPE_BASE, 1)
    R.check("cn=Subschema pages: one page, one entry, an empty cookie",
            code == 0 and controlled and per_page == [["cn=Subschema"]], (code, per_page))
    for n in (1, 4):
        code, got, _ = collect(admin, "cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)",
                               sizelimit=n)
        R.check(f"cn=Monitor size limit {n}: sizeLimitExceeded with exactly {n} entries",
                code == ldap.SIZELIMIT_EXCEEDED.errnum and len(got) == n, (code, len(got)))
    code, got, _ = collect(admin, "cn=Monitor", ldap.SCOPE_ONELEVEL, "(objectClass=*)",
                           sizelimit=1000)
    R.check("cn=Monitor: a size limit not reached is success", code == 0 and len(got) > 5,
            (code, len(got)))


MONITOR_FILTERS = [
    ("equality", "(cn=Total)", ["cn=Total"]),
    ("substrings", "(cn=Memory*)", ["cn=Memory", "cn=Memory Base", "cn=Memory Limit",
                                    "cn=Memory Output", "cn=Memory Peak", "cn=Memory Queued",
                                    "cn=Memory Refused", "cn=Memory Scratch",
                                    "cn=Memory TLS", "cn=Memory TLS Refused",
                                    "cn=Memory Waiting", "cn=Memory Wakeups",
                                    "cn=Memory Waits"]),
    ("ordering", "(&(cn=Total)(monitorCounter>=1))", ["cn=Total"]),
    ("ordering, false", "(&(cn=Total)(monitorCounter<=0))", []),
    ("presence", "(monitorConnectionNumber=*)", None),
    ("approx", "(cn~=Current)", ["cn=Current"]),
    ("extensible", "(cn:caseExactMatch:=Total)", ["cn=Total"]),
    ("extensible, case", "(cn:caseExactMatch:=total)", []),
    ("and/or/not", "(&(|(cn=Total)(cn=Current))(!(cn=Current)))", ["cn=Total"]),
]


def monitor_filters(srv):
    admin = connect(f"ldap://127.0.0.1:{srv.port}", ("cn=admin,dc=example,dc=com", "secret"))
    for label, filt, want in MONITOR_FILTERS:
        code, got, _ = collect(admin, CONNS, ldap.SCOPE_ONELEVEL, filt)
        rdns = sorted(dn.split(",")[0] for dn in got)
        if want is None:
            ok = code == 0 and len(rdns) >= 1 and all(r.startswith("cn=Connection ") for r in rdns)
        else:
            ok = code == 0 and rdns == sorted(want)
        R.check(f"cn=Monitor filter, {label}: {filt}", ok, (code, rdns))


SUBSCHEMA_FILTERS = [
    "(cn=Subschema)", "(cn=subschema)", "(cn=Sub*)", "(cn=*schem*)", "(cn=x*)",
    "(objectClass=subschema)", "(objectClass=subentry)", "(cn=*)", "(nosuchattribute=*)",
    "(createTimestamp>=19700101000000Z)", "(createTimestamp<=19700101000000Z)",
    "(cn~=subschema)", "(cn:caseExactMatch:=Subschema)", "(cn:caseExactMatch:=subschema)",
    "(:caseIgnoreMatch:=subschema)", "(&(cn=*)(!(cn=x)))", "(|(cn=x)(objectClass=subentry))",
    "(!(cn=Subschema))", "(&(objectClass=subschema)(cn=nothing))",
]


def side_by_side(kind):
    """What slapd and lumend both answer, with the same rules."""
    lines = list(RULES)
    if kind == "slapd":
        srv = sh.Slapd(global_lines=["moduleload back_monitor"] + lines)
        with open(srv.config, "a") as f:
            f.write("database monitor\n")
    else:
        srv = sh.Lumend(global_lines=lines)
    srv.start()
    answers = {}
    try:
        anon = connect(srv.uri)
        for filt in SUBSCHEMA_FILTERS:
            code, got, _ = collect(anon, "cn=Subschema", ldap.SCOPE_BASE, filt)
            answers[f"cn=Subschema {filt}"] = (code, len(got))
        code, got, _ = collect(anon, "cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)")
        answers["cn=Monitor denied base"] = (code, len(got))
        root = connect(srv.uri, (sh.ROOTDN, sh.ROOTPW))
        answers["compare cn=Monitor cn"] = _result(lambda: root.compare_s("cn=Monitor", "cn",
                                                                          b"Monitor"))
        answers["compare cn=Subschema cn"] = _result(lambda: anon.compare_s("cn=Subschema", "cn",
                                                                            b"Subschema"))
        answers["compare cn=Subschema cn, false"] = _result(lambda: anon.compare_s(
            "cn=Subschema", "cn", b"other"))
        answers["delete under cn=Monitor"] = _result(lambda: root.delete_s(
            "cn=Current," + CONNS))
        answers["modify cn=Subschema"] = _result(lambda: root.modify_s(
            "cn=Subschema", [(ldap.MOD_REPLACE, "description", [b"x"])]))
    finally:
        srv.stop(R if kind == "lumend" else None)
    return answers


# Rules only inside the database section: no global rule speaks for
# cn=Monitor. slapd (no monitor database configured) has none; Lumen closes
# it (own_databases.h), where "no rule at all" once let anonymous read
# other connections' bind DNs and addresses.
DATABASE_RULES = ["access to * by users read by * none"]


def database_rules_only(kind):
    srv = (sh.Slapd if kind == "slapd" else sh.Lumend)(db_lines=DATABASE_RULES).start()
    try:
        root = connect(srv.uri, (sh.ROOTDN, sh.ROOTPW))
        got = {}
        for who, conn in (("anonymous", connect(srv.uri)), ("the rootdn", root)):
            code, entries, _ = collect(conn, "cn=Monitor", ldap.SCOPE_SUBTREE, "(objectClass=*)")
            got[who] = (code, len(entries))
        code, entries, _ = collect(connect(srv.uri), "", ldap.SCOPE_BASE, "(objectClass=*)")
        got["root DSE, anonymous"] = (code, len(entries))
        return got
    finally:
        srv.stop(R if kind == "lumend" else None)


def _result(fn):
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        return ("error", e.args[0].get("result", -1))


srv = h.Lumend()
try:
    acceptance_filter(srv)
    paging(srv)
    monitor_filters(srv)
finally:
    srv.stop(R)

missing = sh.slapd_missing()
if missing:
    print(f"  note t_own_databases.py: no slapd side ({missing})")
lumen = side_by_side("lumend")
R.check("lumend: a cn=Monitor base anonymous may not search: noSuchObject",
        lumen["cn=Monitor denied base"] == (ldap.NO_SUCH_OBJECT.errnum, 0),
        lumen["cn=Monitor denied base"])
R.check("lumend: writes to the server's own entries: unwillingToPerform",
        lumen["delete under cn=Monitor"] == ("error", ldap.UNWILLING_TO_PERFORM.errnum) and
        lumen["modify cn=Subschema"] == ("error", ldap.UNWILLING_TO_PERFORM.errnum),
        (lumen["delete under cn=Monitor"], lumen["modify cn=Subschema"]))
R.check("lumend: compare on cn=Monitor and cn=Subschema",
        lumen["compare cn=Monitor cn"] == ("ok", True) and
        lumen["compare cn=Subschema cn, false"] == ("ok", False), lumen)
closed = database_rules_only("lumend")
for who in ("anonymous", "the rootdn"):
    R.check(f"lumend, database rules only: cn=Monitor is noSuchObject to {who}",
            closed[who] == (ldap.NO_SUCH_OBJECT.errnum, 0), closed[who])
R.check("lumend, database rules only: the root DSE is still read",
        closed["root DSE, anonymous"] == (0, 1), closed["root DSE, anonymous"])
if not missing:
    slapd_closed = database_rules_only("slapd")
    R.check("as slapd: database rules only", slapd_closed == closed,
            f"slapd {slapd_closed}, lumend {closed}")
if not missing:
    slapd = side_by_side("slapd")
    for key in slapd:
        R.check(f"as slapd: {key}", slapd[key] == lumen[key],
                f"slapd {slapd[key]}, lumend {lumen[key]}")
R.finish()
