#!/usr/bin/env python3
"""Referrals (RFC 3296, RFC 4511 §4.1.10 and §4.5.3), side by side with
OpenLDAP's slapd (back-mdb): the same tree, the same operations, the same
answers.

  - Without ManageDsaIT, a search whose base is at or below a referral
    object gets referral (10) with matchedDN = the object and its URLs, the
    DN rewritten to the base and the search's scope added; a one-level or
    subtree search sends a SearchResultReference for each referral object in
    its scope (DN and scope adjusted), whatever the filter and the indexes,
    and never the object itself.
  - Compare, add, modify, delete and modrdn at or below one: referral with
    the URLs (no scope) and matchedDN; an add below one is referred even
    with ManageDsaIT; a move below one is other ("new superior is a
    referral").
  - With ManageDsaIT (-M, -MM, python-ldap's control) the object is an
    ordinary entry: read, modify, delete.
  - The global `referral` directive: names outside every suffix (and a
    search below the root DSE) are referred there, with the name as the DN;
    without it a search or compare gets noSuchObject and an update
    unwillingToPerform ("no global superior knowledge").
  - Bad input: ref on an entry that is not a referral object is
    objectClassViolation, as slapd; a ref value that is no URL is kept, and
    its label (after a space) is dropped from references, as slapd; a
    non-ASCII ref value is stored, as slapd (ref is a Directory String in
    both). A `referral` line with a DN, a scope or no LDAP URL stops lumend -T
    naming the file and line.
  - The root DSE names ManageDsaIT once in supportedControl.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import LDAPControl  # noqa: E402

R = h.Results("t_referrals.py")
# libldap chases referrals by default: a name lookup per chase, which on a
# resolver that drops a packet waits its 5 s timeout. Nothing here chases.
ldap.set_option(ldap.OPT_REFERRALS, 0)
B = sh.SUFFIX
PEOPLE = "ou=people," + B
REMOTE = "ou=remote," + B
NODN = "ou=nodn," + PEOPLE
MDSA = [LDAPControl("2.16.840.1.113730.3.4.2", True, None)]
GLOBAL = "ldap://global.example:389/"
DB_LINES = ["index objectClass eq", "index uid eq"]

LDIF = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: E

dn: {PEOPLE}
objectClass: organizationalUnit
ou: people

dn: uid=a,{PEOPLE}
objectClass: inetOrgPerson
uid: a
cn: A
sn: A

dn: {REMOTE}
objectClass: referral
objectClass: extensibleObject
ou: remote
ref: ldap://other.example:389/ou=branch,dc=other,dc=com

dn: {NODN}
objectClass: referral
objectClass: extensibleObject
ou: nodn
ref: ldap://h2.example/
ref: ldap://h3.example/ou=x,o=y??one

dn: uid=b,{PEOPLE}
objectClass: inetOrgPerson
uid: b
cn: B
sn: B
"""


def outcome(fn):
    """What an operation answered: ("ok", value) or (error name, result,
    matched, info) — info holds python-ldap's "Referral:\\nURL" text."""
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        d = e.args[0]
        return (type(e).__name__, d.get("result"), d.get("matched"), d.get("info"))


def search(conn, base, scope, filt="(objectClass=*)", ctrls=None):
    """Every message of a search: (type, [dn or None, ...] / [urls])."""
    msgid = conn.search_ext(base, scope, filt, ["1.1"], serverctrls=ctrls)
    out = []
    while True:
        kind, data, _, _ = conn.result3(msgid, all=0)
        if kind == ldap.RES_SEARCH_REFERENCE:
            out.append(("reference", [urls for _, urls in data]))
        elif kind == ldap.RES_SEARCH_ENTRY:
            out.append(("entry", [dn for dn, _ in data]))
        else:
            # slapd's order among the entries and references is its own
            return sorted(out) + [("done",)]


def ldapsearch(server, base, scope, *flags):
    """ldapsearch's answer, comments and version line left out."""
    p = subprocess.run(["ldapsearch", "-x", "-LLL", "-H", server.uri, "-D", sh.ROOTDN, "-w",
                        sh.ROOTPW, *flags, "-s", scope, "-b", base, "(objectClass=*)", "1.1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    lines = [x for x in p.stdout.decode(errors="replace").splitlines() if x.strip()]
    return (p.returncode, lines)


def person(cn):
    return [("objectClass", [b"person"]), ("cn", [cn.encode()]), ("sn", [b"s"])]


def scenario(server, conn):
    """The operations of the comparison, label -> outcome, in order."""
    got = {}

    def run(label, fn):
        got[label] = outcome(fn)

    scopes = {"base": ldap.SCOPE_BASE, "one": ldap.SCOPE_ONELEVEL, "sub": ldap.SCOPE_SUBTREE}
    for base in (B, REMOTE, "uid=x," + REMOTE, NODN, "cn=z," + NODN):
        for name, scope in scopes.items():
            run(f"search {base} {name}", lambda: search(conn, base, scope))
    run("indexed search meets the references", lambda: search(conn, B, ldap.SCOPE_SUBTREE,
                                                               "(uid=a)"))
    run("search with ManageDsaIT: the objects", lambda: search(conn, B, ldap.SCOPE_SUBTREE,
                                                               ctrls=MDSA))
    run("base search with ManageDsaIT", lambda: search(conn, REMOTE, ldap.SCOPE_BASE,
                                                       ctrls=MDSA))
    for flags in ((), ("-M",), ("-MM",)):
        for base in (B, REMOTE, "cn=q," + REMOTE):
            run(f"ldapsearch {' '.join(flags)} {base}",
                lambda: ldapsearch(server, base, "sub", *flags))
    run("compare", lambda: conn.compare_s(REMOTE, "ou", b"remote"))
    run("compare below", lambda: conn.compare_s("cn=q," + REMOTE, "cn", b"q"))
    run("compare with ManageDsaIT",
        lambda: conn.compare_ext_s(REMOTE, "ou", b"remote", serverctrls=MDSA))
    run("add below", lambda: conn.add_s("cn=q," + REMOTE, person("q")))
    run("add two below", lambda: conn.add_s("cn=q,cn=r," + REMOTE, person("q")))
    run("add below with ManageDsaIT",
        lambda: conn.add_ext_s("cn=q," + REMOTE, person("q"), serverctrls=MDSA))
    run("modify", lambda: conn.modify_s(REMOTE, [(ldap.MOD_REPLACE, "description", [b"d"])]))
    run("modify below",
        lambda: conn.modify_s("cn=q," + REMOTE, [(ldap.MOD_REPLACE, "description", [b"d"])]))
    run("modify with ManageDsaIT",
        lambda: conn.modify_ext_s(REMOTE, [(ldap.MOD_REPLACE, "ref",
                                            [b"ldap://moved.example/ou=branch,dc=other,dc=com"])],
                                  serverctrls=MDSA))
    run("referral after the modify", lambda: search(conn, "uid=y," + REMOTE, ldap.SCOPE_BASE))
    run("modrdn", lambda: conn.rename_s(REMOTE, "ou=remote2"))
    run("modrdn below", lambda: conn.rename_s("cn=q," + REMOTE, "cn=w"))
    run("move below a referral",
        lambda: conn.rename_s("uid=b," + PEOPLE, "uid=b", REMOTE))
    run("move below a referral with ManageDsaIT",
        lambda: conn.rename_s("uid=b," + PEOPLE, "uid=b", REMOTE, serverctrls=MDSA))
    run("delete", lambda: conn.delete_s(REMOTE))
    run("delete below", lambda: conn.delete_s("cn=q," + REMOTE))
    run("ref on an entry that is not a referral",
        lambda: conn.add_s("ou=bad," + B, [("objectClass", [b"organizationalUnit"]),
                                           ("ou", [b"bad"]), ("ref", [b"ldap://h/"])]))
    run("a ref that is no URL",
        lambda: conn.add_s("ou=label," + B, [("objectClass", [b"referral", b"extensibleObject"]),
                                             ("ou", [b"label"]), ("ref", [b"not a url"])]))
    run("its reference", lambda: search(conn, B, ldap.SCOPE_ONELEVEL))
    run("delete with ManageDsaIT", lambda: conn.delete_ext_s(REMOTE, serverctrls=MDSA))
    run("below the deleted referral", lambda: search(conn, "uid=y," + REMOTE, ldap.SCOPE_BASE))
    for name, scope in scopes.items():
        run(f"search outside {name}", lambda: search(conn, "o=elsewhere", scope))
        run(f"search below the root DSE {name}", lambda: search(conn, "", scope)[-1:])
    run("compare outside", lambda: conn.compare_s("o=elsewhere", "o", b"x"))
    run("add outside", lambda: conn.add_s("cn=x,o=elsewhere", person("x")))
    run("modify outside",
        lambda: conn.modify_s("cn=x,o=elsewhere", [(ldap.MOD_REPLACE, "description", [b"d"])]))
    run("delete outside", lambda: conn.delete_s("cn=x,o=elsewhere"))
    run("modrdn outside", lambda: conn.rename_s("cn=x,o=elsewhere", "cn=y"))
    return got


def run_server(kind, global_lines):
    server = sh.make_server(kind, db_lines=DB_LINES, global_lines=global_lines)
    server.start()
    try:
        conn = sh.bind(server)
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(LDIF)
        rc, out = server.ldapadd(path)
        if rc != 0:
            raise RuntimeError(f"{kind}: loading failed: {out}")
        got = scenario(server, conn)
        root = conn.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["supportedControl"])
        got["root DSE"] = [v.decode() for v in root[0][1].get("supportedControl", [])
                           ].count("2.16.840.1.113730.3.4.2")
        got["non-IA5 ref"] = outcome(lambda: conn.add_s(
            "ou=bad2," + B, [("objectClass", [b"referral", b"extensibleObject"]),
                             ("ou", [b"bad2"]), ("ref", ["ldap://h/\u00e9".encode()])]))
    finally:
        server.stop(R if kind == "lumend" else None)
    return got


def messages(*items):
    """A search's outcome as search() gives it."""
    return ("ok", sorted(items) + [("done",)])


def referral(matched, *urls):
    return ("REFERRAL", 10, matched, "Referral:\n" + urls[0])


def expectations(lumen, with_global):
    """What Lumen must answer, exactly (slapd answers the same: checked apart)."""
    other = "ldap://other.example:389/"
    return [
        ("a subtree search sends a reference per object, scope sub",
         lumen[f"search {B} sub"] == messages(
             ("entry", [B]), ("entry", [PEOPLE]), ("entry", ["uid=a," + PEOPLE]),
             ("reference", [[other + "ou=branch,dc=other,dc=com??sub"]]),
             ("entry", ["uid=b," + PEOPLE]),
             ("reference", [["ldap://h2.example/" + NODN + "??sub",
                             "ldap://h3.example/ou=x,o=y??one"]]))),
        ("a one-level search's references say base",
         ("reference", [[other + "ou=branch,dc=other,dc=com??base"]])
         in lumen[f"search {B} one"][1]),
        ("an indexed filter still meets the references",
         lumen["indexed search meets the references"] == messages(
             ("entry", ["uid=a," + PEOPLE]),
             ("reference", [[other + "ou=branch,dc=other,dc=com??sub"]]),
             ("reference", [["ldap://h2.example/" + NODN + "??sub",
                             "ldap://h3.example/ou=x,o=y??one"]]))),
        ("base at a referral: referral, matchedDN, search scope",
         lumen[f"search {REMOTE} one"] ==
         referral(REMOTE, other + "ou=branch,dc=other,dc=com??one")),
        ("base below a referral: the DN rewritten",
         lumen[f"search uid=x,{REMOTE} base"] ==
         referral(REMOTE, other + "uid=x,ou=branch,dc=other,dc=com??base")),
        ("a URL without a DN gets the base",
         lumen[f"search cn=z,{NODN} sub"] ==
         referral(NODN, f"ldap://h2.example/cn=z,{NODN}??sub")),
        ("ManageDsaIT: the objects are entries",
         lumen["search with ManageDsaIT: the objects"][1].count(("entry", [REMOTE])) == 1),
        ("compare below: referral without scope",
         lumen["compare below"] == referral(REMOTE, other + "cn=q,ou=branch,dc=other,dc=com")),
        ("compare with ManageDsaIT compares", lumen["compare with ManageDsaIT"] == ("ok", True)),
        ("add below with ManageDsaIT is still referred",
         lumen["add below with ManageDsaIT"] ==
         referral(REMOTE, other + "cn=q,ou=branch,dc=other,dc=com")),
        ("modify with ManageDsaIT changes the object; the new URL is sent",
         lumen["referral after the modify"] ==
         referral(REMOTE, "ldap://moved.example/uid=y,ou=branch,dc=other,dc=com??base")),
        ("move below a referral: other",
         lumen["move below a referral with ManageDsaIT"][:2] == ("OTHER", 80)),
        ("delete with ManageDsaIT deletes", lumen["delete with ManageDsaIT"][0] == "ok"),
        ("ref outside a referral object: objectClassViolation",
         lumen["ref on an entry that is not a referral"][:2] == ("OBJECT_CLASS_VIOLATION", 65)),
        ("a label after the URL is dropped",
         ("reference", [["not"]]) in lumen["its reference"][1]),
        ("outside every suffix",
         lumen["search outside sub"] == (
             referral(None, "ldap://global.example:389/o=elsewhere??sub") if with_global
             else ("NO_SUCH_OBJECT", 32, None, None))),
        ("an update outside every suffix",
         lumen["add outside"] == (
             referral(None, "ldap://global.example:389/cn=x,o=elsewhere") if with_global
             else ("UNWILLING_TO_PERFORM", 53, None, "no global superior knowledge"))),
        ("ManageDsaIT in supportedControl once", lumen["root DSE"] == 1),
        ("a non-ASCII ref value is stored (Directory String, as slapd's ref)",
         lumen["non-IA5 ref"][0] == "ok"),
    ]


def compare_with_slapd(with_global):
    label = "with `referral`" if with_global else "without `referral`"
    global_lines = [f"referral {GLOBAL}"] if with_global else []
    lumen = run_server("lumend", global_lines)
    for what, ok in expectations(lumen, with_global):
        R.check(f"{label}: {what}", ok, "")
    why = sh.slapd_missing()
    if why:
        print(f"  skip t_referrals.py: slapd side ({why})")
        return
    slapd = run_server("slapd", global_lines)
    for key in slapd:
        R.check(f"{label}: same as slapd: {key}", lumen.get(key) == slapd[key],
                f"lumend: {lumen.get(key)!r}\n       slapd:  {slapd[key]!r}")


def access_control():
    """A reference is sent only to who may read the object and its ref
    values (as slapd); the same answers from both servers, anonymously."""
    rules = {
        "no access to the object": [f'access to dn.subtree="{REMOTE}" by * none',
                                    "access to * by * read"],
        "no access to ref": ["access to attrs=ref by * none", "access to * by * read"],
    }
    results = {}
    for kind in ("lumend", "slapd"):
        if kind == "slapd" and sh.slapd_missing():
            print(f"  skip t_referrals.py: access control on slapd ({sh.slapd_missing()})")
            return
        for name, lines in rules.items():
            server = sh.make_server(kind, db_lines=DB_LINES + lines)
            server.start()
            try:
                path = os.path.join(server.tmp, "data.ldif")
                with open(path, "w") as f:
                    f.write(LDIF)
                rc, out = server.ldapadd(path)
                R.check(f"access control, {name}: {kind} loaded", rc == 0, out)
                anon = ldap.initialize(server.uri)
                for base, scope in ((B, ldap.SCOPE_SUBTREE), (B, ldap.SCOPE_ONELEVEL),
                                    ("uid=x," + REMOTE, ldap.SCOPE_BASE)):
                    results[(kind, name, base, scope)] = outcome(
                        lambda: search(anon, base, scope))
            finally:
                server.stop(R if kind == "lumend" else None)
    for (kind, name, base, scope), got in results.items():
        if kind == "lumend":
            want = results[("slapd", name, base, scope)]
            R.check(f"access control, {name}: search {base} scope {scope} as slapd",
                    got == want, f"lumend: {got!r}\n       slapd:  {want!r}")
    R.check("access control: no reference for an object the requester may not read",
            not any("other.example" in repr(got) for (k, n, b, sc), got in results.items()
                    if k == "lumend" and b == B))


def snapshot(conn):
    """{dn: sorted user attributes and entryUUID} under ManageDsaIT ({}
    while a consumer has not received its suffix entry yet)."""
    out = {}
    try:
        found = conn.search_ext_s(B, ldap.SCOPE_SUBTREE, "(objectClass=*)",
                                  ["*", "ref", "entryUUID"], serverctrls=MDSA)
    except ldap.NO_SUCH_OBJECT:
        return out
    for dn, attrs in found:
        out[dn.lower()] = {k.lower(): sorted(v) for k, v in attrs.items()}
    return out


def converge(provider, consumer, label, seconds=30):
    deadline = time.time() + seconds
    want = got = None
    while time.time() < deadline:
        want, got = snapshot(provider), snapshot(consumer)
        if want == got:
            break
        time.sleep(0.3)
    R.check(label, want == got and REMOTE.lower() in got,
            f"provider: {sorted(want or {})}\n       consumer: {sorted(got or {})}")


def replication(provider_kind):
    """Referral objects replicate as the entries they are: the consumer asks
    its provider for ManageDsaIT and writes them as ordinary entries."""
    label = f"replication from {provider_kind}"
    if provider_kind == "slapd" and sh.slapd_missing():
        print(f"  skip t_referrals.py: {label} ({sh.slapd_missing()})")
        return
    provider = sh.make_server(
        provider_kind, global_lines=["moduleload syncprov"] if provider_kind == "slapd" else [],
        db_lines=["index objectClass,entryUUID,entryCSN eq", "overlay syncprov"])
    provider.start()
    consumer = None
    try:
        path = os.path.join(provider.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(LDIF)
        rc, out = provider.ldapadd(path)
        R.check(f"{label}: provider loaded", rc == 0, out)
        consumer = sh.make_server("lumend", db_lines=[
            "index objectClass,entryUUID,entryCSN eq", "dbnosync",
            f'syncrepl rid=007 provider={provider.uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 '
            'attrs="*,+" schemachecking=off'])
        consumer.start()
        p, c = sh.bind(provider), sh.bind(consumer)
        converge(p, c, f"{label}: the referral objects are copied")
        p.modify_ext_s(REMOTE, [(ldap.MOD_REPLACE, "ref", [b"ldap://new.example/o=n"])],
                       serverctrls=MDSA)
        p.delete_ext_s(NODN, serverctrls=MDSA)
        converge(p, c, f"{label}: a change and a delete of referral objects follow")
        R.check(f"{label}: the consumer refers as its provider does",
                outcome(lambda: search(c, "uid=z," + REMOTE, ldap.SCOPE_BASE)) ==
                referral(REMOTE, "ldap://new.example/uid=z,o=n??base"))
    finally:
        if consumer is not None:
            consumer.stop(R)
        provider.stop(R if provider_kind == "lumend" else None)


def bulk_load():
    """lumenadd lists the referral objects it loads like an add does."""
    server = sh.make_server("lumend", db_lines=DB_LINES)
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(LDIF)
    rc, out = server.tool("lumenadd", "-l", path)
    R.check("lumenadd loads referral objects", rc == 0, out)
    server.start()
    try:
        got = outcome(lambda: search(sh.bind(server), B, ldap.SCOPE_ONELEVEL))
        R.check("after lumenadd, a search sends their references",
                got == messages(("entry", [PEOPLE]), ("reference", [[
                    "ldap://other.example:389/ou=branch,dc=other,dc=com??base"]])), repr(got))
    finally:
        server.stop(R)


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-referrals-")
    head = [f"include {sh.ROOT}/schema/{n}.schema" for n in ("core", "cosine", "inetorgperson")]
    cases = [
        ("a referral with a DN", "referral ldap://h.example/o=up", "names a server only"),
        ("a referral with a scope", "referral ldap://h.example/??sub", "names a server only"),
        ("a referral that is no LDAP URL", "referral notaurl", "expected ldap://HOST"),
    ]
    for label, line, message in cases:
        path = os.path.join(tmp, "bad.conf")
        with open(path, "w") as f:
            f.write("\n".join(head + [line, "database mdb", f"suffix {B}",
                                      f"directory {tmp}"]) + "\n")
        rc, out = h.lumend_check(path)
        R.check(f"config: {label} fails -T", rc == 1, f"exit {rc}: {out}")
        R.check(f"config: {label} names file, line and reason",
                f"{path}:4" in out and message in out, out)


compare_with_slapd(False)
compare_with_slapd(True)
access_control()
replication("slapd")
replication("lumend")
bulk_load()
config_errors()
R.finish()
