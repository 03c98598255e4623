#!/usr/bin/env python3
"""Alias dereferencing (RFC 4511 §4.5.1.3, RFC 4512 §2.6) side by side with
OpenLDAP's slapd (back-mdb), with and without `index objectClass eq`.

  - Every derefAliases value (never, search, find, always) × scope (base,
    one, sub) × base: a plain entry, an alias at the base, a chain, a
    dangling alias, circular aliases, and DNs below an alias (the alias in
    the middle of the base DN, with a target that exists or not). Result
    code, matchedDN, diagnostic and the set of entries must be the same on
    both servers; a few are also checked against what RFC 4511 asks.
  - Differences on purpose: a chain longer than 15 aliases (OpenLDAP's
    maxDerefDepth) is aliasDereferencingProblem (36) on Lumen, where slapd
    answers success with no entry; an alias naming an ancestor of the
    search base makes slapd send the base twice, Lumen once.
  - Compare, modify and delete never dereference, as in OpenLDAP.
  - A derefAliases or scope value outside its enumeration is protocolError
    for that search; the connection stays (both servers).
  - Bounds: more than 1,024 aliases in one search's scope is
    adminLimitExceeded with a diagnostic (Lumen only; slapd has no bound);
    paging through a dereferencing search returns the same entries.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import SimplePagedResultsControl  # noqa: E402

R = h.Results("t_aliases.py")
B = sh.SUFFIX
PEOPLE, LINKS, LOOPS, CHAIN, UP = (f"ou={ou},{B}"
                                   for ou in ("people", "links", "loops", "chain", "up"))
ALICE, BOB, TEAM = f"uid=alice,{PEOPLE}", f"uid=bob,{PEOPLE}", f"ou=team,{PEOPLE}"
FRANK = f"uid=frank,{TEAM}"
CHAIN_LENGTH = 20
OVER_LONG = 16          # cn=c4 .. cn=c19: one alias more than maxDerefDepth


def alias(cn, parent, target):
    return (f"dn: cn={cn},{parent}\nobjectClass: alias\nobjectClass: extensibleObject\n"
            f"cn: {cn}\naliasedObjectName: {target}\n")


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {ALICE}\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice Smith\nsn: Smith\n",
           f"dn: {BOB}\nobjectClass: inetOrgPerson\nuid: bob\ncn: Bob Smyth\nsn: Smyth\n",
           f"dn: {TEAM}\nobjectClass: organizationalUnit\nou: team\n",
           f"dn: {FRANK}\nobjectClass: inetOrgPerson\nuid: frank\ncn: Frank\nsn: F\n",
           f"dn: {LINKS}\nobjectClass: organizationalUnit\nou: links\n",
           alias("to-people", LINKS, PEOPLE), alias("to-alice", LINKS, ALICE),
           alias("to-team", LINKS, TEAM),            # inside to-people's target
           alias("to-chain", LINKS, f"cn=to-alice,{LINKS}"),
           alias("dangling", LINKS, f"uid=ghost,{PEOPLE}"),
           f"dn: {LOOPS}\nobjectClass: organizationalUnit\nou: loops\n",
           alias("loop-a", LOOPS, f"cn=loop-b,{LOOPS}"), alias("loop-b", LOOPS, f"cn=loop-a,{LOOPS}"),
           alias("self", LOOPS, f"cn=self,{LOOPS}"),
           f"dn: {UP}\nobjectClass: organizationalUnit\nou: up\n",
           alias("to-root", UP, B),                  # above its own base
           f"dn: {CHAIN}\nobjectClass: organizationalUnit\nou: chain\n"]
    out += [alias(f"c{i}", CHAIN, f"cn=c{i + 1},{CHAIN}" if i < CHAIN_LENGTH - 1 else ALICE)
            for i in range(CHAIN_LENGTH)]
    return "\n".join(out) + "\n"


BASES = [B, LINKS, PEOPLE, LOOPS, f"cn=to-people,{LINKS}", f"cn=to-chain,{LINKS}",
         f"cn=to-alice,{LINKS}", f"cn=dangling,{LINKS}", f"cn=loop-a,{LOOPS}",
         f"cn=self,{LOOPS}", f"cn=c5,{CHAIN}", f"uid=alice,cn=to-people,{LINKS}",
         f"uid=frank,ou=team,cn=to-people,{LINKS}", f"uid=ghost,cn=to-people,{LINKS}",
         f"uid=x,cn=dangling,{LINKS}", f"uid=x,cn=loop-a,{LOOPS}",
         f"uid=x,uid=y,cn=to-alice,{LINKS}", f"ou=nothere,{B}", UP,
         f"ou=people,cn=to-root,{UP}"]
DEREFS = {0: "never", 1: "search", 2: "find", 3: "always"}
SCOPES = {0: "base", 1: "one", 2: "sub"}


def outcome(conn, base, scope, deref, filt="(objectClass=*)"):
    """(code, matchedDN, diagnostic, sorted lower-case DNs)."""
    conn.set_option(ldap.OPT_DEREF, deref)
    try:
        found = conn.search_s(base, scope, filt, ["1.1"])
        return (0, "", "", sorted(dn.lower() for dn, _ in found))
    except ldap.LDAPError as e:
        a = e.args[0]
        return (a.get("result"), a.get("matched", "").lower(), a.get("info", ""), [])


def scenarios(conn):
    out = {}
    for base in BASES:
        for scope in SCOPES:
            for deref in DEREFS:
                out[(base, scope, deref)] = outcome(conn, base, scope, deref)
    # an indexed filter through aliases, and one that no target satisfies
    for deref in DEREFS:
        out[("uid=frank", LINKS, deref)] = outcome(conn, LINKS, 2, deref, "(uid=frank)")
        out[("sn=F one", LINKS, deref)] = outcome(conn, LINKS, 1, deref, "(sn=F)")
    return out


def chain_outcomes(conn):
    return {(i, scope): outcome(conn, f"cn=c{i},{CHAIN}", scope, 3)
            for i in (0, CHAIN_LENGTH - OVER_LONG, CHAIN_LENGTH - OVER_LONG + 1) for scope in (0, 2)}


def others(conn):
    """Compare, modify and delete through an alias (none dereferences)."""
    conn.set_option(ldap.OPT_DEREF, 3)
    out = {}

    def code(fn):
        try:
            return (fn(), "")
        except ldap.LDAPError as e:
            return (e.args[0].get("result"), e.args[0].get("matched", "").lower())
    out["compare alias"] = code(lambda: conn.compare_s(f"cn=to-alice,{LINKS}", "sn", b"Smith"))
    out["compare below alias"] = code(
        lambda: conn.compare_s(f"uid=alice,cn=to-people,{LINKS}", "sn", b"Smith"))
    out["modify below alias"] = code(lambda: conn.modify_s(
        f"uid=alice,cn=to-people,{LINKS}", [(ldap.MOD_REPLACE, "sn", [b"X"])]))
    out["delete below alias"] = code(lambda: conn.delete_s(f"uid=bob,cn=to-people,{LINKS}"))
    out["alice untouched"] = conn.search_s(ALICE, 0, "(sn=Smith)", ["1.1"]) != []
    out["delete the alias itself"] = code(lambda: conn.delete_s(f"cn=to-chain,{LINKS}"))
    out["bob still there"] = conn.search_s(BOB, 0, "(objectClass=*)", ["1.1"]) != []
    return out


def start_loaded(kind, db_lines, text):
    """A server of kind (back-mdb, no overlay) loaded with text by ldapadd,
    and a connection bound as the rootdn."""
    server = sh.make_server(kind, db_lines=db_lines).start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(text)
    rc, out = server.ldapadd(path)
    if rc != 0:
        server.stop()
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server, sh.bind(server)


def run(kind, db_lines):
    server, conn = start_loaded(kind, db_lines, ldif())
    try:
        check_bad_enumerations(kind, server)
        return scenarios(conn), chain_outcomes(conn), others(conn)
    finally:
        conn.unbind_s()
        server.stop(R if kind == "lumend" else None)


def label(key):
    a, b, c = key
    if isinstance(b, int):
        return f"{a} scope={SCOPES[b]} deref={DEREFS[c]}"
    return f"{a} from {b} deref={DEREFS[c]}"


def as_set(outcome):
    return outcome[:3] + (sorted(set(outcome[3])),)


def compare_runs(name, slapd, lumen):
    # slapd sends ou=up twice when an alias below it names an ancestor:
    # entries are compared as sets, and Lumen must send each one once
    differing = [k for k in slapd if as_set(slapd[k]) != as_set(lumen[k])]
    R.check(f"{name}: {len(slapd)} searches give slapd's codes, matchedDN, texts and entries",
            not differing,
            "\n".join(f"{label(k)}:\n  slapd {slapd[k]}\n  lumen {lumen.get(k)}"
                      for k in differing[:8]))
    twice = [k for k in lumen if len(set(lumen[k][3])) != len(lumen[k][3])]
    R.check(f"{name}: Lumen returns every entry once", not twice,
            "\n".join(f"{label(k)}: {lumen[k]}" for k in twice[:4]))


def check_semantics(name, got):
    """A few outcomes against RFC 4511 itself, so parity proves something."""
    lo = str.lower
    people = sorted(map(lo, [PEOPLE, TEAM, ALICE, BOB, FRANK]))
    expect = {
        (LINKS, 2, 3): (0, "", "", sorted(people + [lo(LINKS)])),
        (LINKS, 1, 1): (0, "", "", sorted(map(lo, [PEOPLE, TEAM, ALICE]))),
        (f"cn=to-people,{LINKS}", 0, 2): (0, "", "", [lo(PEOPLE)]),
        (f"cn=to-people,{LINKS}", 2, 1): (0, "", "", [lo(f"cn=to-people,{LINKS}")]),
        (f"cn=to-chain,{LINKS}", 0, 3): (0, "", "", [lo(ALICE)]),
        (f"cn=dangling,{LINKS}", 0, 3): (33, lo(f"cn=dangling,{LINKS}"),
                                         "aliasedObject not found", []),
        (f"cn=loop-a,{LOOPS}", 1, 2): (33, lo(f"cn=loop-a,{LOOPS}"), "circular alias", []),
        (LOOPS, 2, 3): (0, "", "", [lo(LOOPS)]),
        (f"uid=frank,ou=team,cn=to-people,{LINKS}", 0, 2): (0, "", "", [lo(FRANK)]),
        (f"uid=ghost,cn=to-people,{LINKS}", 2, 3): (32, lo(PEOPLE), "", []),
        (f"uid=alice,cn=to-people,{LINKS}", 0, 1): (32, lo(f"cn=to-people,{LINKS}"), "", []),
        ("uid=frank", LINKS, 3): (0, "", "", [lo(FRANK)]),
        ("uid=frank", LINKS, 0): (0, "", "", []),
    }
    wrong = [k for k, v in expect.items() if got[k] != v]
    R.check(f"{name}: RFC 4511 outcomes (targets replace aliases, 33 with matchedDN)",
            not wrong, "\n".join(f"{label(k)}: {got[k]} want {expect[k]}" for k in wrong))


def check_chains(name, kind, got):
    ok_long = (0, "", "", [ALICE.lower()])
    start = CHAIN_LENGTH - OVER_LONG
    for scope in (0, 2):
        R.check(f"{name}: a chain of 15 aliases is followed (scope {SCOPES[scope]})",
                got[(start + 1, scope)] == ok_long, str(got[(start + 1, scope)]))
        for i in (0, start):
            # matchedDN: the alias where the 16th hop would start
            want = [(0, "", "", [])] if kind == "slapd" else [
                (36, f"cn=c{i + OVER_LONG - 1},{CHAIN}".lower(), "maximum deref depth exceeded", [])]
            R.check(f"{name}: a chain longer than 15 aliases (cn=c{i}, scope {SCOPES[scope]})",
                    [got[(i, scope)]] == want, str(got[(i, scope)]))


def check_bad_enumerations(kind, server):
    """A derefAliases or scope value outside its enumeration in an otherwise
    well-formed SearchRequest: protocolError ("invalid deref" / "invalid
    scope") for that operation, and the connection goes on serving (as
    slapd answers)."""
    probe = (h.octets(B) + h.integer(0, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
             + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets("objectClass", 0x87)
             + h.tlv(0x30, h.octets("1.1")))
    for field, bad in (("deref", 4), ("deref", -1), ("scope", 4), ("scope", 99)):
        scope, deref = (0, bad) if field == "deref" else (bad, 0)
        body = (h.octets(B) + h.integer(scope, 0x0A) + h.integer(deref, 0x0A) + h.integer(0)
                + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets("objectClass", 0x87)
                + h.tlv(0x30, b""))
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(h.message(1, h.tlv(0x63, body)) + h.message(2, h.tlv(0x63, probe)))
            got, _ = h.read_responses(sock, count=3, timeout=15)
        seen = [(r.msgid, r.op, r.code) for r in got]
        # slapd may answer the second search first: compare per message ID.
        first = [r for r in got if r.msgid == 1]
        second = [(r.op, r.code) for r in got if r.msgid == 2]
        R.check(f"{kind}: {field} {bad}: protocolError, then the next search is answered",
                len(first) == 1 and (first[0].op, first[0].code) == (0x65, 2)
                and first[0].diagnostic == f"invalid {field}".encode()
                and second == [(0x64, None), (0x65, 0)], str(seen))


def check_alias_bound():
    """More aliases in scope than one search may follow: adminLimitExceeded."""
    many = 1100
    extra = [f"dn: ou=many,{B}\nobjectClass: organizationalUnit\nou: many\n"]
    extra += [alias(f"m{i}", f"ou=many,{B}", ALICE) for i in range(many)]
    server, conn = start_loaded("lumend", ["index objectClass eq", "dbnosync"],
                                ldif() + "\n".join(extra) + "\n")
    try:
        check_bad_enumerations("lumend", server)
        got = outcome(conn, f"ou=many,{B}", 2, 1)
        R.check(f"{many} aliases in scope: adminLimitExceeded with a diagnostic",
                got[0] == 11 and "alias" in got[2], str(got))
        got = outcome(conn, f"ou=many,{B}", 2, 0)
        R.check("the same search without dereferencing returns every alias",
                got[0] == 0 and len(got[3]) == many + 1, str(got[:3]))
        got = outcome(conn, f"cn=m7,ou=many,{B}", 0, 2)
        R.check("one of them found as base: its target", got == (0, "", "", [ALICE.lower()]),
                str(got))
        # paging through a dereferencing search: the same entries, each once
        conn.set_option(ldap.OPT_DEREF, 3)
        whole = sorted(dn.lower() for dn, _ in conn.search_s(LINKS, 2, "(objectClass=*)", ["1.1"]))
        page = SimplePagedResultsControl(True, size=2, cookie=b"")
        paged = []
        while True:
            msgid = conn.search_ext(LINKS, 2, "(objectClass=*)", ["1.1"], serverctrls=[page])
            _, data, _, controls = conn.result3(msgid)
            paged += [dn.lower() for dn, _ in data]
            cookie = [c for c in controls if c.controlType == page.controlType][0].cookie
            if not cookie:
                break
            page.cookie = cookie
        R.check("paged with derefAlways: the same entries, each once",
                sorted(paged) == whole and len(paged) == len(set(paged)),
                f"{sorted(paged)} vs {whole}")
    finally:
        conn.unbind_s()
        server.stop(R)


def main():
    reason = sh.slapd_missing()
    if reason:
        R.check("slapd available for the side-by-side run", False, reason)
        R.finish()
    for db_lines, name in (([], "no index"), (["index objectClass eq"], "objectClass indexed")):
        slapd = run("slapd", db_lines)
        lumen = run("lumend", db_lines)
        compare_runs(name, slapd[0], lumen[0])
        check_semantics(f"{name}, slapd", slapd[0])
        check_semantics(f"{name}, lumend", lumen[0])
        check_chains(f"{name}, slapd", "slapd", slapd[1])
        check_chains(f"{name}, lumend", "lumend", lumen[1])
        R.check(f"{name}: compare, modify and delete do not dereference, as slapd",
                slapd[2] == lumen[2], f"slapd {slapd[2]}\nlumen {lumen[2]}")
        R.check(f"{name}: compare at the alias: noSuchAttribute; below it: noSuchObject",
                lumen[2]["compare alias"] == (16, "") and
                lumen[2]["compare below alias"] == (32, f"cn=to-people,{LINKS}".lower()),
                str(lumen[2]))
    check_alias_bound()
    R.finish()


if __name__ == "__main__":
    main()
