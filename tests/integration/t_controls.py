#!/usr/bin/env python3
"""Controls through python-ldap: Assertion (pass, fail 122, malformed),
Pre-/Post-Read (also filtered by access control), Simple Paged Results
over several pages, ManageDsaIT,
unknown controls (critical: 12, non-critical: ignored), and a large result
read by a slow client (back-pressure) that still arrives whole."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import RequestControl, SimplePagedResultsControl  # noqa: E402
from ldap.controls.libldap import AssertionControl  # noqa: E402
from ldap.controls.readentry import PostReadControl, PreReadControl  # noqa: E402

R = h.Results("t_controls.py")
DATA = os.path.join(h.ROOT, "tests", "integration", "data", "tree.ldif")
B = "dc=example,dc=com"
P = "ou=people," + B
BOB = "uid=bob," + P
ADMIN, PW = "cn=admin,dc=example,dc=com", "secret"


def result_code(fn):
    """The LDAP result code fn raises (0 when it succeeds)."""
    try:
        fn()
        return 0
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def load_tree(srv, label="ldapadd loads the tree"):
    """Load tree.ldif into srv as the rootdn; its ldap:// URI."""
    uri = f"ldap://127.0.0.1:{srv.port}"
    out = subprocess.run(["ldapadd", "-x", "-H", uri, "-D", ADMIN, "-w", PW, "-f", DATA],
                         capture_output=True, text=True)
    R.check(label, out.returncode == 0, out.stderr)
    return uri


def main(srv):
    uri = load_tree(srv)
    c = ldap.initialize(uri)
    c.simple_bind_s(ADMIN, PW)

    # --- Assertion (RFC 4528) ------------------------------------------------------
    ok_assert = AssertionControl(True, "(title=Manager)")
    bad_assert = AssertionControl(True, "(title=Janitor)")
    R.check("assertion holds: modify succeeds", result_code(lambda: c.modify_ext_s(
        BOB, [(ldap.MOD_REPLACE, "description", [b"asserted"])], serverctrls=[ok_assert])) == 0)
    R.check("assertion fails: modify gets assertionFailed (122)", result_code(lambda: c.modify_ext_s(
        BOB, [(ldap.MOD_REPLACE, "description", [b"never"])], serverctrls=[bad_assert])) == 122)
    got = c.search_s(BOB, ldap.SCOPE_BASE, attrlist=["description"])
    R.check("failed assertion changed nothing", got[0][1].get("description") == [b"asserted"], got)
    R.check("assertion fails: delete gets 122", result_code(lambda: c.delete_ext_s(
        BOB, serverctrls=[bad_assert])) == 122)
    R.check("assertion fails: compare gets 122", result_code(lambda: c.compare_ext_s(
        BOB, "uid", b"bob", serverctrls=[bad_assert])) == 122)
    R.check("assertion fails: search gets 122", result_code(lambda: c.search_ext_s(
        BOB, ldap.SCOPE_BASE, serverctrls=[bad_assert])) == 122)
    R.check("assertion holds: search returns the entry", len(c.search_ext_s(
        BOB, ldap.SCOPE_BASE, serverctrls=[ok_assert])) == 1)
    R.check("assertion fails on modrdn: 122", result_code(lambda: c.rename_s(
        BOB, "uid=robert", serverctrls=[bad_assert])) == 122)
    garbage = RequestControl("1.3.6.1.1.12", True, b"\x30\x03\x01\x01")
    R.check("malformed assertion value: protocolError (2)", result_code(lambda: c.search_ext_s(
        BOB, ldap.SCOPE_BASE, serverctrls=[garbage])) == 2)

    # --- Pre-Read / Post-Read (RFC 4527) --------------------------------------------
    pre, post = PreReadControl(True, ["uidNumber", "cn"]), PostReadControl(True, ["uidNumber"])
    _, _, _, ctrls = c.modify_ext_s(BOB, [(ldap.MOD_INCREMENT, "uidNumber", [b"10"])],
                                    serverctrls=[pre, post])
    by_oid = {x.controlType: x for x in ctrls}
    pre_e, post_e = by_oid.get(PreReadControl.controlType), by_oid.get(PostReadControl.controlType)
    R.check("pre-read entry before the change", pre_e is not None and pre_e.dn == BOB and
            pre_e.entry == {"uidNumber": [b"1001"], "cn": [b"Bob Builder"]},
            pre_e and (pre_e.dn, pre_e.entry))
    R.check("post-read entry after the change", post_e is not None and
            post_e.entry == {"uidNumber": [b"1011"]}, post_e and post_e.entry)
    _, _, _, ctrls = c.add_ext_s("cn=fresh," + B, [("objectClass", [b"device"]), ("cn", [b"fresh"])],
                                 serverctrls=[PostReadControl(True, ["entryUUID", "cn"])])
    post_add = ctrls[0] if ctrls else None
    R.check("post-read of an add carries generated operational attributes",
            post_add is not None and post_add.entry.get("cn") == [b"fresh"] and
            len(post_add.entry.get("entryUUID", [b""])[0]) == 36, post_add and post_add.entry)
    _, _, _, ctrls = c.delete_ext_s("cn=fresh," + B, serverctrls=[PreReadControl(True, ["*"])])
    R.check("pre-read of a delete", bool(ctrls) and ctrls[0].entry.get("objectClass") == [b"device"],
            ctrls and ctrls[0].entry)
    _, _, _, ctrls = c.rename_s("cn=printer1,ou=devices," + B, "cn=printer2", delold=1,
                                serverctrls=[PostReadControl(True, ["cn", "entryDN"])])
    R.check("post-read of a modrdn shows the new DN", bool(ctrls) and
            ctrls[0].dn == "cn=printer2,ou=devices," + B and ctrls[0].entry.get("cn") == [b"printer2"],
            ctrls and (ctrls[0].dn, ctrls[0].entry))
    R.check("post-read on search (not applicable, critical): 12", result_code(
        lambda: c.search_ext_s(B, ldap.SCOPE_BASE, serverctrls=[PostReadControl(True, ["cn"])])) == 12)

    # --- Simple Paged Results (RFC 2696) ------------------------------------------------
    page = SimplePagedResultsControl(True, size=2, cookie=b"")
    seen, pages = [], 0
    while True:
        msgid = c.search_ext(B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"], serverctrls=[page])
        _, data, _, ctrls = c.result3(msgid)
        pages += 1
        R.check(f"page {pages} has at most 2 entries", len(data) <= 2, len(data))
        seen += [dn for dn, _ in data]
        cookie = [x for x in ctrls if x.controlType == SimplePagedResultsControl.controlType][0].cookie
        if not cookie or pages > 20:
            break
        page.cookie = cookie
    R.check("paged search returns every entry once", len(seen) == 14 and len(set(seen)) == 14,
            (pages, seen))
    R.check("paged search took several pages", pages >= 7, pages)
    msgid = c.search_ext(B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"],
                         serverctrls=[SimplePagedResultsControl(True, size=2, cookie=b"")])
    _, _, _, ctrls = c.result3(msgid)
    cookie = ctrls[0].cookie
    R.check("a cookie from another search: unwillingToPerform (53)", result_code(
        lambda: c.search_ext_s(B, ldap.SCOPE_SUBTREE, "(cn=*)", ["1.1"],
                               serverctrls=[SimplePagedResultsControl(True, size=2, cookie=cookie)])) == 53)
    R.check("page size 0 abandons the paged search", len(c.search_ext_s(
        B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"],
        serverctrls=[SimplePagedResultsControl(True, size=0, cookie=cookie)])) == 0)

    # --- ManageDsaIT and unknown controls ---------------------------------------------
    manage = RequestControl("2.16.840.1.113730.3.4.2", True)
    R.check("ManageDsaIT accepted", len(c.search_ext_s(B, ldap.SCOPE_BASE, serverctrls=[manage])) == 1)
    unknown = "1.3.6.1.4.1.99999.1"
    R.check("unknown critical control: unavailableCriticalExtension (12)", result_code(
        lambda: c.search_ext_s(B, ldap.SCOPE_BASE, serverctrls=[RequestControl(unknown, True)])) == 12)
    R.check("unknown critical control on modify: 12, nothing changed", result_code(
        lambda: c.modify_ext_s(BOB, [(ldap.MOD_REPLACE, "description", [b"x"])],
                               serverctrls=[RequestControl(unknown, True)])) == 12 and
        c.search_s(BOB, ldap.SCOPE_BASE, attrlist=["description"])[0][1]["description"] == [b"asserted"])
    R.check("unknown non-critical control ignored", len(c.search_ext_s(
        B, ldap.SCOPE_BASE, serverctrls=[RequestControl(unknown, False)])) == 1)
    R.check("a control sent twice: protocolError", result_code(lambda: c.search_ext_s(
        B, ldap.SCOPE_BASE, serverctrls=[manage, manage])) == 2)
    c.unbind_s()
    slow_reader(srv, uri)


ALICE = "uid=alice," + P
READ_ACL = """access to attrs=userPassword by anonymous auth by * none
access to attrs=telephoneNumber by self none by * read
access to * by self write by * read
"""


def read_controls_filtered():
    """RFC 4527 §3.1: the Pre-/Post-Read copies hold only what the requester
    may read, as a search result would."""
    srv = h.Lumend(READ_ACL)
    try:
        uri = load_tree(srv, "ACL server: ldapadd loads the tree")
        root = ldap.initialize(uri)
        root.simple_bind_s(ADMIN, PW)
        root.modify_s(ALICE, [(ldap.MOD_REPLACE, "userPassword", [b"alice-pw"])])
        wanted = ["description", "userPassword", "telephoneNumber", "mail"]
        _, _, _, ctrls = root.modify_ext_s(ALICE, [(ldap.MOD_REPLACE, "description", [b"r"])],
                                           serverctrls=[PostReadControl(True, wanted)])
        R.check("rootdn's post-read holds every attribute asked for",
                bool(ctrls) and set(ctrls[0].entry) == set(wanted), ctrls and ctrls[0].entry)
        alice = ldap.initialize(uri)
        alice.simple_bind_s(ALICE, "alice-pw")
        _, _, _, ctrls = alice.modify_ext_s(
            ALICE, [(ldap.MOD_REPLACE, "description", [b"mine"])],
            serverctrls=[PreReadControl(True, ["*"]), PostReadControl(True, wanted)])
        by_oid = {x.controlType: x.entry for x in ctrls}
        pre_e = by_oid.get(PreReadControl.controlType)
        post_e = by_oid.get(PostReadControl.controlType)
        R.check("self's post-read leaves out userPassword and telephoneNumber",
                post_e == {"description": [b"mine"], "mail": [b"alice@example.com"]}, post_e)
        R.check("self's pre-read of * leaves them out too", pre_e is not None and
                pre_e.get("description") == [b"r"] and "userPassword" not in pre_e and
                "telephoneNumber" not in pre_e, pre_e)
        alice.unbind_s()
        root.unbind_s()
    finally:
        srv.stop(R)


N_BIG = 1500   # ~6 MB of entries: more than the socket buffers and CONN_MAX_UNSENT


def count_search_responses(s):
    """Read until a SearchResultDone: (entries seen, its result code or None)."""
    buf, pos, entries = bytearray(), 0, 0
    while True:
        framed = h.parse_tlv(buf, pos)
        if framed is None:
            data = s.recv(1 << 20)
            if not data:
                return entries, None
            buf += data
            continue
        r = h.Response(bytes(buf[pos:framed[2]]))
        pos = framed[2]
        if r.op == 0x64:
            entries += 1
        elif r.op == 0x65:
            return entries, r.code


def slow_reader(srv, uri):
    """A client that sends a big search and reads nothing for a while: the
    server must stop producing (back-pressure) and deliver everything later."""
    with open(os.path.join(srv.tmp, "big.ldif"), "w") as f:
        f.write(f"dn: ou=big,{B}\nobjectClass: organizationalUnit\nou: big\n\n")
        for i in range(N_BIG):
            f.write(f"dn: cn=u{i:04d},ou=big,{B}\nobjectClass: person\ncn: u{i:04d}\n"
                    f"sn: {'y' * 4000}\n\n")
    out = subprocess.run(["ldapadd", "-x", "-H", uri, "-D", ADMIN, "-w", PW, "-f",
                          os.path.join(srv.tmp, "big.ldif")], capture_output=True, text=True)
    R.check("big subtree loads", out.returncode == 0, out.stderr[-500:])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # before connect: small window
    s.settimeout(60)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(h.bind_simple(1, ADMIN, PW))
    h.read_responses(s, count=1)
    s.sendall(h.search(2, base=f"ou=big,{B}", scope=1, attrs=()))
    time.sleep(1.5)     # the server fills the socket and its output queue, then waits
    entries, done_code = count_search_responses(s)
    R.check("slow reader gets every entry and the Done", entries == N_BIG and done_code == 0,
            (entries, done_code))
    s.close()


if __name__ == "__main__":
    srv = h.Lumend()
    try:
        main(srv)
    finally:
        srv.stop(R)
    read_controls_filtered()
    R.finish()
