#!/usr/bin/env python3
"""Run-to-completion reads (`inline-reads`, inline_ops.h): the same scenario
against lumend with inline reads on (the default), lumend with them off, and
Debian's slapd must give the same answers:

  - simple binds: the rootdn, a {SSHA} user (checked on the I/O thread), a
    {CRYPT} user (a costly hash: handed to a worker), wrong passwords and an
    unknown DN (invalidCredentials), anonymous;
  - compares (true, false, noSuchObject, an attribute the entry lacks);
  - searches: base, indexed equality, an AND with one, one-level, a
    subtree of every entry (more candidates than the I/O thread's budget:
    it continues on a worker with no entry lost or repeated), a size limit
    hit, the root DSE and cn=Subschema;
  - a paged search over every entry;
  - pipelined requests in one write (a costly bind first, then small and
    large searches and compares, which wait for it) and an Abandon of a large search among them: every
    other request is answered, each with its own entries.

Lumen only: cn=Threads,cn=Monitor counts operations run inline, deferred
and queued (inline reads on: inline and deferred grow; off: they stay 0);
a write is never run inline; lumend stays clean under the sanitizers.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import SimplePagedResultsControl  # noqa: E402

R = h.Results("t_inline_reads.py")
B = sh.SUFFIX
PEOPLE = "ou=People," + B
COUNT = 300
# "secret" as {SSHA} (salt "salt1234") and as SHA-512 crypt(3) ("$6$", salt "saltsalt").
SSHA = "{SSHA}Wcm1xEisNjqp921ALcHfuQ7avFdzYWx0MTIzNA=="
CRYPT = ("{CRYPT}$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQ"
         "SpT0Y77vwPZN.Pq.H91p5hVO1")


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: People\n"]
    for i in range(COUNT):
        pw = SSHA if i % 2 == 0 else CRYPT
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i % 7}\nemployeeNumber: {i}\nuserPassword: {pw}\n")
    return "\n".join(out) + "\n"


def outcome(fn):
    try:
        return fn()
    except ldap.LDAPError as e:
        return type(e).__name__


def dns(results):
    return sorted(dn.lower() for dn, _ in results if dn)


def binds(uri):
    seen = {}
    cases = [("rootdn", sh.ROOTDN, sh.ROOTPW), ("ssha user", f"uid=u0,{PEOPLE}", "secret"),
             ("crypt user", f"uid=u1,{PEOPLE}", "secret"),
             ("ssha wrong", f"uid=u2,{PEOPLE}", "wrong"),
             ("crypt wrong", f"uid=u3,{PEOPLE}", "wrong"),
             ("unknown dn", f"uid=nobody,{PEOPLE}", "secret"), ("anonymous", "", "")]
    for label, dn, pw in cases:
        c = ldap.initialize(uri)
        seen[f"bind {label}"] = outcome(lambda: c.simple_bind_s(dn, pw)[0])
        if label.endswith("user"):
            seen[f"whoami after {label}"] = outcome(lambda: c.whoami_s().lower())
        c.unbind_s()
    return seen


def compares(c):
    seen = {}
    for label, dn, attr, value in [
            ("true", f"uid=u5,{PEOPLE}", "employeeNumber", b"5"),
            ("false", f"uid=u5,{PEOPLE}", "employeeNumber", b"6"),
            ("no such object", f"uid=nobody,{PEOPLE}", "cn", b"x"),
            ("absent attribute", f"uid=u5,{PEOPLE}", "mail", b"x")]:
        seen[f"compare {label}"] = outcome(lambda: c.compare_s(dn, attr, value))
    return seen


def searches(c):
    seen = {}
    for label, base, scope, flt in [
            ("base", f"uid=u7,{PEOPLE}", ldap.SCOPE_BASE, "(objectClass=*)"),
            ("equality", B, ldap.SCOPE_SUBTREE, "(uid=u42)"),
            ("and with equality", B, ldap.SCOPE_SUBTREE, "(&(sn=S3)(cn=User 1*))"),
            ("one-level equality", PEOPLE, ldap.SCOPE_ONELEVEL, "(sn=S2)"),
            ("every entry", B, ldap.SCOPE_SUBTREE, "(objectClass=*)"),
            ("no match", B, ldap.SCOPE_SUBTREE, "(uid=nobody)"),
            ("no such base", "ou=nowhere," + B, ldap.SCOPE_SUBTREE, "(uid=u1)")]:
        seen[f"search {label}"] = outcome(lambda: dns(c.search_s(base, scope, flt, ["uid"])))
    seen["search size limit"] = outcome(
        lambda: len(c.search_ext_s(B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"],
                                   sizelimit=10)))
    seen["root DSE naming context"] = outcome(
        lambda: c.search_s("", ldap.SCOPE_BASE, "(objectClass=*)",
                           ["namingContexts"])[0][1]["namingContexts"])
    seen["subschema has inetOrgPerson"] = outcome(
        lambda: any(b"'inetOrgPerson'" in v for v in c.search_s(
            "cn=Subschema", ldap.SCOPE_BASE, "(objectClass=subschema)",
            ["objectClasses"])[0][1]["objectClasses"]))
    return seen


def paged(c):
    page, got, pages = SimplePagedResultsControl(True, size=50, cookie=b""), [], 0
    while True:
        msgid = c.search_ext(B, ldap.SCOPE_SUBTREE, "(objectClass=inetOrgPerson)", ["uid"],
                             serverctrls=[page])
        _, data, _, ctrls = c.result3(msgid)
        got += dns(data)
        pages += 1
        cookie = [x for x in ctrls if x.controlType == SimplePagedResultsControl.controlType]
        if not cookie or not cookie[0].cookie or pages > 20:
            break
        page.cookie = cookie[0].cookie
    return {"paged pages": pages, "paged entries": sorted(got) == sorted(set(got)) and len(got)}


# --------------------------------------------------------- raw pipelining

def search_req(msgid, base, scope, attr=None, value=None):
    f = h.octets("objectClass", 0x87) if attr is None else h.tlv(0xA3, h.octets(attr) + h.octets(value))
    body = (h.octets(base) + h.integer(scope, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
            + h.integer(0) + h.tlv(0x01, b"\x00") + f + h.tlv(0x30, h.octets("1.1")))
    return h.message(msgid, h.tlv(0x63, body))


def compare_req(msgid, dn, attr, value):
    body = h.octets(dn) + h.tlv(0x30, h.octets(attr) + h.octets(value))
    return h.message(msgid, h.tlv(0x6E, body))


def pipelined(uri):
    """One write of many requests; per message ID: (entries, result code)."""
    port = int(uri.rsplit(":", 1)[1])
    # A {CRYPT} bind first: a worker checks it, and what follows waits for it.
    reqs = [h.bind_simple(1, f"uid=u1,{PEOPLE}", "secret")]
    expect = {1}
    for i in range(2, 40):
        if i % 5 == 0:
            reqs.append(search_req(i, B, 2))                      # every entry
        elif i % 5 == 1:
            reqs.append(compare_req(i, f"uid=u{i},{PEOPLE}", "employeeNumber", str(i % 3)))
        else:
            reqs.append(search_req(i, B, 2, "uid", f"u{i}"))
        expect.add(i)
    # (no Bind among them: slapd abandons what is outstanding, Lumen lets it end)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"".join(reqs))
    got = collect(s, expect, timeout=30)
    s.close()
    return {"pipelined": got}


def collect(s, expect, timeout):
    """Read until every message ID in expect has its final response."""
    got, buf, deadline = {}, b"", time.time() + timeout
    while expect - {k for k, v in got.items() if v[1] is not None} and time.time() < deadline:
        framed = h.parse_tlv(buf)
        if framed is None:
            s.settimeout(max(0.1, deadline - time.time()))
            try:
                data = s.recv(1 << 16)
            except socket.timeout:
                break
            if not data:
                break
            buf += data
            continue
        r = h.Response(buf[:framed[2]])
        buf = buf[framed[2]:]
        slot = got.setdefault(r.msgid, [0, None])
        if r.op == 0x64:
            slot[0] += 1
        elif r.code is not None:
            slot[1] = r.code
    return {k: tuple(v) for k, v in sorted(got.items())}


def abandon_among(uri):
    """A large search abandoned right away, requests around it answered."""
    port = int(uri.rsplit(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(search_req(2, B, 2) + h.abandon(3, 2) + search_req(4, B, 2, "uid", "u4")
              + compare_req(5, f"uid=u5,{PEOPLE}", "employeeNumber", "5"))
    got = collect(s, {4, 5}, timeout=30)
    s.close()
    return {"after abandon": {k: v for k, v in got.items() if k != 2}}


# ------------------------------------------------------------------ scenario

def monitor_counts(uri):
    c = ldap.initialize(uri)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    out = {}
    for cn in ("Inline", "Deferred", "Queued"):
        res = c.search_s(f"cn={cn},cn=Threads,cn=Monitor", ldap.SCOPE_BASE, "(objectClass=*)",
                         ["monitorCounter"])
        out[cn] = int(res[0][1]["monitorCounter"][0])
    c.unbind_s()
    return out


def observe(kind, global_lines=()):
    server = sh.make_server(kind, db_lines=["index uid,sn eq", "index objectClass eq"],
                            global_lines=global_lines)
    server.start()
    try:
        c = ldap.initialize(server.uri)
        c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = server.ldapadd(path)
        if rc != 0:
            raise RuntimeError(f"{kind}: loading failed: {out}")
        seen = {}
        seen.update(binds(server.uri))
        seen.update(compares(c))
        seen.update(searches(c))
        seen.update(paged(c))
        seen.update(pipelined(server.uri))
        seen.update(abandon_among(server.uri))
        counts = monitor_counts(server.uri) if kind == "lumend" else None
        return seen, counts, server
    except Exception:
        server.stop()
        raise


def start_lumend(inline):
    return observe("lumend", [] if inline is None else [f"inline-reads {inline}"])


def main():
    on, counts_on, srv_on = start_lumend(None)          # the default: on
    R.check("inline on: bind, compare, search answered as expected",
            on["bind ssha user"] == 97 and on["bind crypt user"] == 97
            and on["bind ssha wrong"] == "INVALID_CREDENTIALS"
            and on["compare true"] is True and on["search every entry"] != []
            and len(on["search every entry"]) == COUNT + 2, str(on)[:3000])
    R.check("inline on: cn=Inline and cn=Deferred count (crypt binds, large searches)",
            counts_on["Inline"] > 0 and counts_on["Deferred"] > 0, str(counts_on))
    # A write goes to the workers: cn=Queued grows by one, cn=Inline does not.
    c = ldap.initialize(srv_on.uri)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)           # inline (rootpw cleartext)
    before = monitor_counts(srv_on.uri)
    c.modify_s(f"uid=u9,{PEOPLE}", [(ldap.MOD_REPLACE, "description", [b"x"])])
    after = monitor_counts(srv_on.uri)
    # What reads the counters runs inline too: its rootdn bind, three base
    # searches. An operation is counted just after its answer is sent, so
    # on a loaded machine the bind above may be counted only after `before`
    # was read: 4 or 5, never the modify (that is cn=Queued's one).
    R.check("inline on: a modify is queued for a worker",
            after["Queued"] - before["Queued"] == 1
            and after["Inline"] - before["Inline"] in (4, 5), f"{before} -> {after}")
    c.unbind_s()
    srv_on.stop(R)

    off, counts_off, srv_off = start_lumend("off")
    R.check("inline off: nothing runs on the I/O threads",
            counts_off["Inline"] == 0 and counts_off["Deferred"] == 0 and counts_off["Queued"] > 0,
            str(counts_off))
    srv_off.stop(R)
    for key in sorted(on):
        R.check(f"inline on = off: {key}", on[key] == off.get(key),
                f"on {str(on[key])[:1500]}\noff {str(off.get(key))[:1500]}")

    if sh.slapd_missing():
        R.check("slapd available for the parity half", False, sh.slapd_missing())
    else:
        ol, _, srv_ol = observe("slapd")
        srv_ol.stop()
        for key in sorted(on):
            R.check(f"lumend = slapd: {key}", on[key] == ol.get(key),
                    f"lumend {str(on[key])[:1500]}\nslapd {str(ol.get(key))[:1500]}")
    R.finish()


if __name__ == "__main__":
    main()
