#!/usr/bin/env python3
"""Simple Paged Results (RFC 2696) and the size limit, side by side with
OpenLDAP's slapd: `sizelimit 5` bounds the whole paged search, also when
access control hides some of the entries the backend finds (the limit was
counted per page), and the cookie is opaque and tamper-evident: a cookie
with any one byte flipped, a cookie replayed on another connection, or one
used for another search gets unwillingToPerform (53), as slapd answers
("paged results cookie is invalid")."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import SimplePagedResultsControl  # noqa: E402

R = h.Results("t_paged_limits.py")
B = sh.SUFFIX
P = "ou=people," + B
N_USERS = 12

# Every third user is hidden from everyone but the rootdn.
ACCESS = ['access to filter=(employeeType=hidden) by * none',
          'access to * by * read']


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {P}\nobjectClass: organizationalUnit\nou: people\n"]
    for i in range(N_USERS):
        kind = "hidden" if i % 3 == 1 else "visible"
        out.append(f"dn: uid=u{i:02d},{P}\nobjectClass: inetOrgPerson\nuid: u{i:02d}\n"
                   f"cn: User {i}\nsn: {i}\nemployeeType: {kind}\n")
    return "\n".join(out)


def code_of(fn):
    try:
        fn()
        return 0
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def page(conn, cookie, size=2, filt="(objectClass=inetOrgPerson)", attrs=None):
    """One page: (entries, next cookie); raises on an error result."""
    ctrl = SimplePagedResultsControl(True, size=size, cookie=cookie)
    msgid = conn.search_ext(P, ldap.SCOPE_ONELEVEL, filt, attrs, serverctrls=[ctrl])
    _, data, _, ctrls = conn.result3(msgid)
    nxt = [c for c in ctrls if c.controlType == SimplePagedResultsControl.controlType]
    return data, (nxt[0].cookie if nxt else b"")


def paged_total(conn):
    """Page through the search: (entries seen, final result code, pages)."""
    seen, cookie, pages = [], b"", 0
    while pages < 20:
        pages += 1
        ctrl = SimplePagedResultsControl(True, size=2, cookie=cookie)
        msgid = conn.search_ext(P, ldap.SCOPE_ONELEVEL, "(objectClass=inetOrgPerson)",
                                ["uid"], serverctrls=[ctrl])
        try:
            while True:
                rtype, data, _, ctrls = conn.result3(msgid, all=0)
                seen += [dn for dn, _ in data]
                if rtype == ldap.RES_SEARCH_RESULT:
                    break
        except ldap.LDAPError as e:
            return seen, e.args[0].get("result", -1), pages
        nxt = [c for c in ctrls if c.controlType == SimplePagedResultsControl.controlType]
        cookie = nxt[0].cookie if nxt else b""
        if not cookie:
            return seen, 0, pages
    return seen, "too many pages", pages


def scenario(kind):
    srv = sh.make_server(kind, db_lines=ACCESS, global_lines=["sizelimit 5"]).start()
    try:
        path = os.path.join(srv.tmp, "people.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = srv.ldapadd(path)
        R.check(f"{kind}: the people load", rc == 0, out)
        anon = ldap.initialize(srv.uri)
        seen, code, pages = paged_total(anon)
        R.check(f"{kind}: paged search under ACLs ends in sizeLimitExceeded (4)", code == 4,
                (code, len(seen), pages))
        R.check(f"{kind}: 5 entries in all, none hidden, none twice",
                len(seen) == 5 and len(set(seen)) == 5 and
                all(int(d.split(",")[0][5:]) % 3 != 1 for d in seen), seen)
        first, cookie = page(anon, b"")
        R.check(f"{kind}: first page has 2 entries and a cookie", len(first) == 2 and cookie,
                (len(first), cookie))
        # slapd refuses both too: protocolError (2) on another connection,
        # unwillingToPerform once its per-connection state is gone; Lumen
        # says 53 "paged results cookie is invalid" for every bad cookie.
        want = (lambda c: c == 53) if kind == "lumend" else (lambda c: c != 0)
        other = ldap.initialize(srv.uri)
        got = code_of(lambda: page(other, cookie))
        R.check(f"{kind}: the cookie on another connection is refused", want(got), got)
        got = code_of(lambda: page(anon, cookie, filt="(uid=*)"))
        if kind == "lumend":     # slapd 2.5 accepts it (answers 0)
            R.check(f"{kind}: the cookie for another search is refused", want(got), got)
        return anon, cookie, srv
    except Exception:
        srv.stop()
        raise


def tamper(kind):
    """Every byte of a fresh cookie flipped in turn: each is refused."""
    anon, cookie, srv = scenario(kind)
    try:
        refused = []
        for i in range(len(cookie)):
            _, fresh = page(anon, b"")     # a valid cookie for this connection
            bad = bytearray(fresh)
            bad[i] ^= 0x01
            refused.append(code_of(lambda: page(anon, bytes(bad))))
        R.check(f"{kind}: a flipped byte at each of {len(cookie)} positions: 53",
                all(c == 53 for c in refused), refused)
        _, fresh = page(anon, b"")
        R.check(f"{kind}: a truncated cookie: 53", code_of(lambda: page(anon, fresh[:-1])) == 53)
        rest, _ = page(anon, fresh)
        R.check(f"{kind}: the untouched cookie still works", len(rest) == 2, rest)
    finally:
        srv.stop(R if kind == "lumend" else None)


missing = sh.slapd_missing()
if missing:
    print(f"  note t_paged_limits.py: no slapd side ({missing})")
else:
    anon, cookie, slapd = scenario("slapd")
    slapd.stop()
tamper("lumend")
R.finish()
