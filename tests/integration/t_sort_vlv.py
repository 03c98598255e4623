#!/usr/bin/env python3
"""Server Side Sort (RFC 2891) and Virtual List View (draft-ietf-ldapext-
ldapv3-vlv-09) side by side with OpenLDAP's slapd and its sssvlv overlay
(`moduleload sssvlv`, `overlay sssvlv`): the same scenarios, the same
result codes and the same entry order, with ldapsearch -E sss=... and
python-ldap's controls. One and two keys, reverse order, integer ordering,
an unknown attribute (noSuchAttribute, critical or not), a type without an
ordering rule (inappropriateMatching), sort with paged results, VLV by
offset and by value with contentCount and contextID, offsetRangeError,
VLV without sort (vlvError 76) and with paged results (53), the size limit.
Kept VLV results: a follow-up VLV request carrying the contextID is
answered from the sorted list kept on its connection (an entry added since
is not in it, one deleted is skipped, one modified is sent as it is now),
while a forged contextID, another connection's or a stale one sorts anew;
a kept list is bound to the identity (a rebind sorts again, so a key the
new identity may not read still counts as absent), and one that would take
its connection over conn_max_memory is not kept.

Where Lumen differs on purpose, the expectation is per server: a sort key
the requester may not read counts as absent in Lumen (slapd's sssvlv sorts
by it and so leaks the order), and `sortvlv-max` bounds the entries one
sorted search collects (adminLimitExceeded beyond; slapd's sssvlv-max
counts concurrent sorts instead)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import SimplePagedResultsControl  # noqa: E402
from ldap.controls.sss import SSSRequestControl, SSSResponseControl  # noqa: E402
from ldap.controls.vlv import VLVRequestControl, VLVResponseControl  # noqa: E402

R = h.Results("t_sort_vlv.py")
B = sh.SUFFIX
P = "ou=people," + B
SN = "sn:caseIgnoreOrderingMatch"
CN = "cn:caseIgnoreOrderingMatch"
READER = "uid=u03," + P
# title is readable by u03 alone; everything else by everyone.
ACCESS = [f'access to attrs=title by dn.exact="{READER}" read by * none',
          'access to * by * read']
SNS = ["Miller", "adams", "Brown", "adams", "Zed", "brown", "Clark", "miller"]


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {P}\nobjectClass: organizationalUnit\nou: people\n"]
    for i, sn in enumerate(SNS):
        title = f"title: t{7 - i}\n" if i % 2 == 0 else ""
        out.append(f"dn: uid=u{i:02d},{P}\nobjectClass: inetOrgPerson\nuid: u{i:02d}\n"
                   f"cn: c{i % 3}\nsn: {sn}\nuserPassword: pw\n"
                   f"employeeNumber: {(i * 5) % 8}\n{title}")
    return "\n".join(out)


def uids(data):
    return [dn.split(",")[0][4:] for dn, _ in data]


def search(uri, ctrls, who=None, sizelimit=0, filt="(objectClass=*)"):
    """(result code, diagnostic, uids, {control type: decoded control})."""
    c = ldap.initialize(uri)
    if who:
        c.simple_bind_s(who, "pw")
    known = {SSSResponseControl.controlType: SSSResponseControl,
             VLVResponseControl.controlType: VLVResponseControl}
    try:
        m = c.search_ext(P, ldap.SCOPE_ONELEVEL, filt, ["1.1"], serverctrls=ctrls,
                         sizelimit=sizelimit)
        _, data, _, resp = c.result3(m, resp_ctrl_classes=known)
        code, info = 0, ""
    except ldap.LDAPError as e:
        d = e.args[0]
        code, info, data, resp = d.get("result"), d.get("info", ""), [], []
        resp = [_decode(t, v) for t, _, v in d.get("ctrls", [])]
    finally:
        c.unbind_s()
    return code, info, uids(data), {x.controlType: x for x in resp if x is not None}


def _decode(ctype, value):
    cls = {SSSResponseControl.controlType: SSSResponseControl,
           VLVResponseControl.controlType: VLVResponseControl}.get(ctype)
    if cls is None:
        return None
    ctrl = cls()
    ctrl.decodeControlValue(value)
    return ctrl


def sss(*keys, crit=False):
    return SSSRequestControl(crit, list(keys))


def vlv(before, after, offset=None, count=None, value=None):
    return VLVRequestControl(True, before, after, offset, count, value)


def expect(kind, label, got, code, order=None, vlv_pos=None, count=None, vlv_result=0):
    rc, info, order_got, resp = got
    ok = rc == code and (order is None or order_got == order)
    if vlv_pos is not None:
        v = resp.get(VLVResponseControl.controlType)
        ok = ok and v is not None and (v.targetPosition, v.contentCount,
                                       v.virtualListViewResult) == (vlv_pos, count, vlv_result)
        ok = ok and (vlv_result != 0 or v.contextID is not None)
    R.check(f"{kind}: {label}", ok, f"code {rc} ({info}) order {order_got} "
            f"vlv {[(v.targetPosition, v.contentCount, v.virtualListViewResult) for v in resp.values() if isinstance(v, VLVResponseControl)]}")


def ldapsearch_sss(uri, spec, *more):
    cmd = ["ldapsearch", "-x", "-LLL", "-H", uri, "-b", P, "-s", "one", "-E", spec]
    for m in more:
        cmd += ["-E", m]
    p = subprocess.run(cmd + ["(objectClass=*)", "1.1"], capture_output=True, text=True,
                       timeout=30)
    order = [x.split(",")[0][8:] for x in p.stdout.splitlines() if x.startswith("dn: ")]
    return p.returncode, order, p.stdout + p.stderr


SORTED_SN = ["u01", "u03", "u02", "u05", "u06", "u00", "u07", "u04"]


def scenarios(kind, srv):
    u = srv.uri
    rc, order, out = ldapsearch_sss(u, "sss=" + SN)
    R.check(f"{kind}: ldapsearch -E sss=sn:caseIgnoreOrderingMatch", rc == 0 and
            order == SORTED_SN and "# sortResult: (0) Success" in out, out)
    rc, order, out = ldapsearch_sss(u, f"sss={SN}/{CN}")
    R.check(f"{kind}: ldapsearch two keys sn/cn", rc == 0 and order ==
            ["u03", "u01", "u02", "u05", "u06", "u00", "u07", "u04"], out)
    rc, order, out = ldapsearch_sss(u, "sss=-" + SN)
    R.check(f"{kind}: ldapsearch reverse -sn (ties keep their order)", rc == 0 and order ==
            ["u04", "u00", "u07", "u06", "u02", "u05", "u01", "u03"], out)
    rc, order, out = ldapsearch_sss(u, f"sss={CN}/-{SN}")
    R.check(f"{kind}: ldapsearch cn then reverse sn", rc == 0 and order ==
            ["u00", "u06", "u03", "u04", "u07", "u01", "u02", "u05"], out)
    rc, order, out = ldapsearch_sss(u, "sss=" + SN, "pr=3/noprompt")
    R.check(f"{kind}: ldapsearch sort with paged results (3 a page)", rc == 0 and
            order == SORTED_SN and out.count("# pagedresults") == 3, out)
    rc, order, out = ldapsearch_sss(u, "!sss=nosuchattr")
    R.check(f"{kind}: ldapsearch critical unknown attribute: 16", rc == 16, out)

    expect(kind, "integerOrderingMatch", search(u, [sss("employeeNumber:integerOrderingMatch")]),
           0, ["u00", "u05", "u02", "u07", "u04", "u01", "u06", "u03"])
    expect(kind, "unknown attribute, critical: noSuchAttribute",
           search(u, [sss("nosuchattr", crit=True)]), 16)
    expect(kind, "unknown attribute, not critical: noSuchAttribute",
           search(u, [sss("nosuchattr")]), 16)
    expect(kind, "second key unknown: noSuchAttribute", search(u, [sss(SN, "nosuchattr")]), 16)
    expect(kind, "sn has no ORDERING: inappropriateMatching",
           search(u, [sss("sn", crit=True)]), 18)
    expect(kind, "sort and the size limit: sizeLimitExceeded",
           search(u, [sss(SN)], sizelimit=3), 4)
    expect(kind, "sort of nothing: success", search(u, [sss(SN)], filt="(uid=none)"), 0, [])

    # Paged by hand: every page is sorted where the last one stopped.
    c = ldap.initialize(u)
    seen, cookie, pages = [], b"", 0
    while pages < 10:
        pages += 1
        pr = SimplePagedResultsControl(True, size=3, cookie=cookie)
        m = c.search_ext(P, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"],
                         serverctrls=[sss("-" + SN), pr])
        _, data, _, ctrls = c.result3(m)
        seen += uids(data)
        nxt = [x for x in ctrls if x.controlType == SimplePagedResultsControl.controlType]
        cookie = nxt[0].cookie if nxt else b""
        if not cookie:
            break
    c.unbind_s()
    R.check(f"{kind}: python-ldap paged reverse sort, 3 pages", pages == 3 and
            seen == ["u04", "u00", "u07", "u06", "u02", "u05", "u01", "u03"], (pages, seen))

    expect(kind, "VLV 1/2 around offset 3", search(u, [sss(SN), vlv(1, 2, 3, 0)]), 0,
           ["u03", "u02", "u05", "u06"], 3, 8)
    expect(kind, "VLV offset 2 of contentCount 4 scales to 4",
           search(u, [sss(SN), vlv(1, 1, 2, 4)]), 0, ["u02", "u05", "u06"], 4, 8)
    expect(kind, "VLV offset == contentCount is the last entry",
           search(u, [sss(SN), vlv(0, 2, 0, 0)]), 0, ["u04"], 8, 8)
    expect(kind, "VLV before clipped at the first entry",
           search(u, [sss(SN), vlv(2, 0, 1, 0)]), 0, ["u01"], 1, 8)
    expect(kind, "VLV offset beyond the list: vlvError, offsetRangeError",
           search(u, [sss(SN), vlv(0, 2, 100, 0)]), 76, [], 0, 8, 77)
    expect(kind, "VLV by value >= brown", search(u, [sss(SN), vlv(1, 1, value="brown")]), 0,
           ["u03", "u02", "u05"], 3, 8)
    expect(kind, "VLV by value after every entry",
           search(u, [sss(SN), vlv(1, 1, value="zzz")]), 0, ["u04"], 9, 8)
    expect(kind, "VLV by value, reverse order",
           search(u, [sss("-" + SN), vlv(0, 1, value="c")]), 0, ["u02", "u05"], 5, 8)
    expect(kind, "VLV without sort: vlvError, sortControlMissing",
           search(u, [vlv(1, 2, 3, 0)]), 76, [], 0, 0, 76)
    expect(kind, "VLV with paged results: unwillingToPerform",
           search(u, [sss(SN), vlv(1, 1, 2, 0), SimplePagedResultsControl(True, 2, b"")]), 53)

    readable = ["u06", "u04", "u02", "u00", "u01", "u03", "u05", "u07"]
    T = "title:caseIgnoreOrderingMatch"
    expect(kind, "a key the requester may read", search(u, [sss(T)], who=READER), 0, readable)
    hidden = (["u00", "u01", "u02", "u03", "u04", "u05", "u06", "u07"] if kind == "lumend"
              else readable)
    expect(kind, "a key the requester may not read " +
           ("counts as absent" if kind == "lumend" else "(slapd leaks its order)"),
           search(u, [sss(T)], who="uid=u01," + P), 0, hidden)


S = "ou=scroll," + B
SCROLL_SNS = ["delta", "alpha", "echo", "charlie", "bravo", "foxtrot"]


def scroll_ldif():
    out = [f"dn: {S}\nobjectClass: organizationalUnit\nou: scroll\n"]
    for i, sn in enumerate(SCROLL_SNS):
        title = f"title: t{9 - i}\n" if i % 2 == 0 else ""
        out.append(f"dn: uid=s{i},{S}\nobjectClass: inetOrgPerson\nuid: s{i}\n"
                   f"cn: s{i}\nsn: {sn}\n{title}")
    return "\n".join(out)


def ber_len(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


class VLVContext(VLVRequestControl):
    """python-ldap's VLV request leaves the contextID out: append it."""

    def encodeControlValue(self):
        raw = VLVRequestControl.encodeControlValue(self)
        if self.context_id is None:
            return raw
        body = raw[2:] if raw[1] < 128 else raw[2 + (raw[1] & 0x7f):]
        body += b"\x04" + ber_len(len(self.context_id)) + self.context_id
        return b"\x30" + ber_len(len(body)) + body


def context_of(v):
    """The contextID as bytes (python-ldap decodes it into a str)."""
    cid = v.contextID
    return cid.encode("latin-1") if isinstance(cid, str) else cid


def scroll(conn, offset, context=None, key=SN, attrs=("sn",)):
    """(code, [(uid, sn)], targetPosition, contentCount, contextID) of a VLV
    window of 2 at offset (contentCount 0) on an open connection."""
    known = {VLVResponseControl.controlType: VLVResponseControl}
    ctrl = VLVContext(True, 0, 1, offset, 0, None, context)
    try:
        m = conn.search_ext(S, ldap.SCOPE_ONELEVEL, "(objectClass=*)", list(attrs),
                            serverctrls=[sss(key), ctrl])
        _, data, _, resp = conn.result3(m, resp_ctrl_classes=known)
    except ldap.LDAPError as e:
        return e.args[0].get("result"), [], None, None, None
    v = [x for x in resp if isinstance(x, VLVResponseControl)]
    rows = [(dn.split(",")[0][4:], (a.get("sn") or a.get("title") or [b""])[0].decode())
            for dn, a in data]
    if not v:
        return 0, rows, None, None, None
    return 0, rows, v[0].targetPosition, v[0].contentCount, context_of(v[0])


def connect(uri, who=sh.ROOTDN, pw=sh.ROOTPW):
    c = ldap.initialize(uri)
    c.simple_bind_s(who, pw)
    return c


def kept_contexts(kind, srv):
    u = srv.uri
    admin = connect(u)
    m = admin.search_ext(B, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["hasSubordinates"],
                         serverctrls=[sss("-ou:caseIgnoreOrderingMatch")])
    _, data, _, _ = admin.result3(m)
    R.check(f"{kind}: a sorted search computes hasSubordinates",
            [(dn, a.get("hasSubordinates")) for dn, a in data] ==
            [(S, [b"TRUE"]), (P, [b"TRUE"])], data)
    viewer = connect(u, READER, "pw")
    try:
        got = scroll(viewer, 1)
        R.check(f"{kind}: contextID returned", got[0] == 0 and got[3] == 6 and got[4] and
                [x for x, _ in got[1]] == ["s1", "s4"], got)
        ctx = got[4]
        admin.add_s(f"uid=s6,{S}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"s6"]),
                                     ("cn", [b"s6"]), ("sn", [b"aaron"])])
        again = scroll(viewer, 1, ctx)
        R.check(f"{kind}: the contextID sent back answers from the kept list "
                "(an entry added since is not in it)",
                again[0] == 0 and again[3] == 6 and [x for x, _ in again[1]] == ["s1", "s4"],
                again)
        fresh = scroll(viewer, 1)
        R.check(f"{kind}: without a contextID the list is sorted anew",
                fresh[0] == 0 and fresh[3] == 7 and [x for x, _ in fresh[1]] == ["s6", "s1"],
                fresh)
        ctx = fresh[4]
        admin.delete_s(f"uid=s6,{S}")
        admin.modify_s(f"uid=s1,{S}", [(ldap.MOD_REPLACE, "sn", [b"zulu"])])
        after = scroll(viewer, 1, ctx)
        R.check(f"{kind}: after a delete and a modify the kept list skips the deleted "
                "entry and sends the modified one as it is now",
                after[0] == 0 and after[3] == 7 and after[1] == [("s1", "zulu")], after)
        other = connect(u, READER, "pw")
        try:
            elsewhere = scroll(other, 1, ctx)
        finally:
            other.unbind_s()
        R.check(f"{kind}: another connection's contextID does not reach its list",
                elsewhere[0] == 0 and elsewhere[3] == 6 and
                [x for x, _ in elsewhere[1]] == ["s4", "s3"], elsewhere)
        admin.modify_s(f"uid=s1,{S}", [(ldap.MOD_REPLACE, "sn", [b"alpha"])])
        if kind == "lumend":
            lumen_only_contexts(u, viewer, admin)
    finally:
        viewer.unbind_s()
        admin.unbind_s()


def lumen_only_contexts(u, viewer, admin):
    """Where slapd answers busy (a second sort on the connection) or leaks
    the order of an unreadable key, Lumen sorts anew."""
    ctx = scroll(viewer, 1)[4]
    forged = bytes(b ^ 0x55 for b in ctx)
    admin.add_s(f"uid=s6,{S}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"s6"]),
                                 ("cn", [b"s6"]), ("sn", [b"aaron"])])
    got = scroll(viewer, 1, forged)
    R.check("lumend: a forged contextID sorts anew (a new contextID)",
            got[0] == 0 and got[3] == 7 and got[4] not in (ctx, forged), got)
    R.check("lumend: the forged request dropped the kept list: the old contextID sorts anew",
            scroll(viewer, 1, ctx)[3] == 7)
    admin.delete_s(f"uid=s6,{S}")
    got = scroll(viewer, 1, b"x" * 300)
    R.check("lumend: an overlong contextID sorts anew", got[0] == 0 and got[3] == 6, got)
    T = "title:caseIgnoreOrderingMatch"
    by_title = scroll(viewer, 1, key=T, attrs=("title",))
    R.check("lumend: a key the requester may read orders the kept list",
            by_title[0] == 0 and [x for x, _ in by_title[1]] == ["s4", "s2"], by_title)
    viewer.simple_bind_s("uid=u01," + P, "pw")
    hidden = scroll(viewer, 1, by_title[4], key=T, attrs=("title",))
    R.check("lumend: after a rebind the contextID does not reach the old identity's list "
            "(title unreadable: absent, database order)",
            hidden[0] == 0 and [x for x, _ in hidden[1]] == ["s0", "s1"] and
            hidden[4] != by_title[4], hidden)


# OpenLDAP's sssvlv lines: slapd needs them; Lumen (sort and VLV built in)
# must start from the same slapd.conf, logging what each line means to it.
SSSVLV = ["overlay sssvlv", "sssvlv-max 16", "sssvlv-maxkeys 5", "sssvlv-maxperconn 4"]


def run(kind):
    db = ACCESS + SSSVLV
    glob = ["moduleload sssvlv"] + (["sortvlv-max 8"] if kind == "lumend" else [])
    srv = sh.make_server(kind, db_lines=db, global_lines=glob).start()
    try:
        path = os.path.join(srv.tmp, "people.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = srv.ldapadd(path)
        R.check(f"{kind}: load", rc == 0, out)
        scenarios(kind, srv)
        path = os.path.join(srv.tmp, "scroll.ldif")
        with open(path, "w") as f:
            f.write(scroll_ldif())
        rc, out = srv.ldapadd(path)
        R.check(f"{kind}: load ou=scroll", rc == 0, out)
        kept_contexts(kind, srv)
        if kind == "lumend":
            c = ldap.initialize(srv.uri)
            c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
            c.add_s(f"uid=u08,{P}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"u08"]),
                                       ("cn", [b"c8"]), ("sn", [b"Young"])])
            c.unbind_s()
            got = search(srv.uri, [sss(SN)])
            ctrl = got[3].get(SSSResponseControl.controlType)
            R.check("lumend: 9 entries over sortvlv-max 8: adminLimitExceeded (11)",
                    got[0] == 11 and ctrl is not None and ctrl.sortResult == 11, got)
            rc, _, out = ldapsearch_sss(srv.uri, "sss=" + SN)
            R.check("lumend: ldapsearch over sortvlv-max: 11", rc == 11, out)
            got = search(srv.uri, [sss(SN), vlv(0, 0, 1, 0)], filt="(cn=c0)")
            R.check("lumend: a smaller result under the maximum still sorts",
                    got[0] == 0 and got[2] == ["u03"], got)
            p = subprocess.run(["ldapsearch", "-x", "-LLL", "-H", srv.uri, "-b", "", "-s",
                                "base", "supportedControl"], capture_output=True, text=True)
            R.check("lumend: root DSE advertises sort and VLV",
                    "1.2.840.113556.1.4.473" in p.stdout and
                    "2.16.840.1.113730.3.4.9" in p.stdout, p.stdout)
            wanted = ["moduleload sssvlv: built into Lumen", "sssvlv-max 16 accepted",
                      "sssvlv-maxkeys 5 accepted", "sssvlv-maxperconn 4 accepted"]
            deadline = time.time() + 10    # the logger thread writes behind
            while not all(w in srv.log_text() for w in wanted) and time.time() < deadline:
                time.sleep(0.05)
            R.check("lumend: slapd's sssvlv lines accepted, each logged with its meaning",
                    all(w in srv.log_text() for w in wanted), srv.log_text()[-2000:])
    finally:
        srv.stop(R if kind == "lumend" else None)


def memory_bound():
    """1,500 entries: their kept list (~100 KiB) exceeds an anonymous
    connection's conn_max_memory 64K, not a bound one's 32M."""
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {S}\nobjectClass: organizationalUnit\nou: scroll\n"]
    for i in range(1500):
        out.append(f"dn: uid=m{i},{S}\nobjectClass: inetOrgPerson\nuid: m{i}\ncn: m{i}\n"
                   f"sn: n{(i * 7919) % 1500:04d}\n")
    srv = sh.make_server("lumend", db_lines=["dbnosync", "access to * by * read"],
                         global_lines=["conn_max_memory 64K"]).start()
    try:
        path = os.path.join(srv.tmp, "many.ldif")
        with open(path, "w") as f:
            f.write("\n".join(out))
        rc, text = srv.ldapadd(path)
        R.check("lumend: load 1,500 entries", rc == 0, text)
        admin = connect(srv.uri)
        anonymous = ldap.initialize(srv.uri)
        bound = connect(srv.uri)
        first, kept = scroll(anonymous, 1), scroll(bound, 1)
        admin.add_s(f"uid=extra,{S}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"extra"]),
                                        ("cn", [b"extra"]), ("sn", [b"aaa"])])
        again = scroll(anonymous, 1, first[4])
        R.check("lumend: a list over conn_max_memory is not kept (sorted anew)",
                first[3] == 1500 and again[0] == 0 and again[3] == 1501 and
                again[1][0][0] == "extra", (first[2:4], again))
        again = scroll(bound, 1, kept[4])
        R.check("lumend: the same list is kept within conn_max_memory_auth",
                kept[3] == 1500 and again[0] == 0 and again[3] == 1500 and again[4] == kept[4],
                (kept[2:4], again[2:]))
        anonymous.unbind_s()
        bound.unbind_s()
        admin.unbind_s()
    finally:
        srv.stop(R)


def bad_config():
    tmp = tempfile.mkdtemp(prefix="t_sort_vlv.")
    try:
        head = h.config_head(tmp) + ["overlay sssvlv"]
        h.check_config_errors(R, tmp, head, [
            ("sssvlv-max 0", ["sssvlv-max 0"], 8, "expected \"sssvlv-max <positive number>\""),
            ("sssvlv-maxkeys without a number", ["sssvlv-maxkeys"], 8,
             "expected \"sssvlv-maxkeys <positive number>\""),
            ("sssvlv-maxperconn 2x", ["sssvlv-maxperconn 2x"], 8,
             "expected \"sssvlv-maxperconn <positive number>\""),
            ("an unknown sssvlv line", ["sssvlv_nosuch 1"], 8, "sssvlv_nosuch"),
        ])
        # sssvlv-max belongs to the overlay; a global line of it (or of the
        # sssvlv_max spelling Lumen once read as sortvlv-max) is refused
        # rather than taken with another meaning.
        for spelling in ("sssvlv-max", "sssvlv_max"):
            h.check_config_errors(R, tmp, [f"{spelling} 5"] + h.config_head(tmp), [
                (f"a global {spelling}", [], 1, f'unknown directive "{spelling}"')])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


bad_config()
missing = sh.slapd_missing()
if missing or not os.path.exists(f"{sh.OPENLDAP_MODULE_DIR}/sssvlv.la"):
    print(f"  note t_sort_vlv.py: no slapd side ({missing or 'no sssvlv module'})")
else:
    run("slapd")
run("lumend")
memory_bound()
R.finish()
