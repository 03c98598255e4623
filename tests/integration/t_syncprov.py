#!/usr/bin/env python3
"""Replication from lumend to an unmodified OpenLDAP consumer (RFC 4533):
lumend runs `overlay syncprov`; Debian's slapd runs a `syncrepl ...
type=refreshOnly` consumer polling it every second.

  - the initial refresh of a few thousand entries;
  - then adds, modifies, deletes, a rename and a subtree move on lumend;
  - the consumer stopped while entries are deleted, added and changed,
    then restarted;
  - lumend restarted (its contextCSN recovered from the entries);
each time the two directories must become identical: the same DNs, every
user attribute, entryUUID and entryCSN.

Then a second slapd consumer with `type=refreshAndPersist`: its initial
refresh, changes pushed to its one persistent search (polled for, and the
provider's log shows the consumer searched no more), a consumer restart
after missed changes, a provider restart (slapd searches again only once it
notices the drop, up to 21 s later under load: the changes are made after
its new persistent search, and pushed through it).

Persistent searches from raw clients: Abandon ends one (nothing more is
sent for it, the connection goes on); a client that never reads does not
stall writes (every write of a steady writer succeeds) and, once its
changes exceed syncprov-persist-queue, its search ends with
e-syncRefreshRequired (4096), logged.

The provider's suffix entry shows its contextCSN (the newest CSN, as
OpenLDAP's syncprov-checkpoint writes it; here never stale): after a write
it is that write's entryCSN, with `+` or by name, not with `*`; the same
scenario against slapd with `syncprov-checkpoint 1 10` gives the same.
With the entry cache off, a search for `*` or `+` reads the suffix entry
in part (the filter's types, the rest sent as stored); the contextCSN
shown must come with all of it: `*` returns the same attributes as slapd
and `+` its entryUUID and entryCSN too.

Bad input: a malformed cookie is protocolError naming what is wrong; the
Sync Request on a database without syncprov is unavailableCriticalExtension
when critical (as slapd).
"""
import socket
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_syncprov.py")
B = sh.SUFFIX
PEOPLE, GROUPS = "ou=people," + B, "ou=groups," + B
COUNT = 2000


def ldif():
    return sh.replication_ldif(COUNT)


def converge(provider, consumer, label, seconds=30):
    sh.converge(R, provider, consumer, label, seconds)


bind = sh.bind


def consumer_lines(provider_uri, kind="refreshOnly", rid="001"):
    return ["index objectClass,entryUUID,entryCSN eq",
            f'syncrepl rid={rid} provider={provider_uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            f'type={kind} interval=00:00:00:01 retry="1 +" timeout=5 '
            'attrs="*,+" schemachecking=off']


def changes(p):
    p.add_s(f"uid=new1,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"new1"]),
                                   ("cn", [b"New One"]), ("sn", [b"N"])])
    p.modify_s(f"uid=u5,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Renamed Five"]),
                                    (ldap.MOD_ADD, "description", [b"changed"])])
    p.delete_s(f"uid=u7,{PEOPLE}")
    p.rename_s(f"uid=u8,{PEOPLE}", "uid=u8b", delold=1)
    p.rename_s(f"ou=team,{PEOPLE}", "ou=team", GROUPS)   # a subtree moves
    p.modify_s(f"cn=staff,{GROUPS}", [(ldap.MOD_DELETE, "member", [f"uid=u1,{PEOPLE}".encode()])])


def offline_changes(p):
    for i in range(20, 40):
        p.delete_s(f"uid=u{i},{PEOPLE}")
    for i in range(3):
        p.add_s(f"uid=late{i},{PEOPLE}", [("objectClass", [b"inetOrgPerson"]),
                                          ("uid", [f"late{i}".encode()]), ("cn", [b"Late"]),
                                          ("sn", [b"L"])])
    p.modify_s(f"uid=u50,{PEOPLE}", [(ldap.MOD_REPLACE, "mail", [b"new@example.com"])])


def ldapsearch_sync(uri, spec):
    p = subprocess.run(["ldapsearch", "-x", "-H", uri, "-D", sh.ROOTDN, "-w", sh.ROOTPW,
                        "-b", B, "-s", "base", "-E", spec, "(objectClass=*)", "1.1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


def bad_input(provider_uri):
    rc, out = ldapsearch_sync(provider_uri, "!sync=ro/rid=1000")
    R.check("a cookie with rid 1000 is protocolError naming rid",
            rc == 2 and "invalid sync cookie: rid" in out, out)
    rc, out = ldapsearch_sync(provider_uri, "!sync=ro/rid=001,csn=20261125")
    R.check("a cookie with a short CSN is protocolError naming the CSN",
            rc == 2 and "invalid sync cookie: a CSN is" in out, out)
    rc, out = ldapsearch_sync(provider_uri, "!sync=ro")
    R.check("the refresh ends with a Sync Done control carrying the contextCSN",
            rc == 0 and "SyncDone control" in out and "csn=" in out, out)
    plain = sh.make_server("lumend", db_lines=["index objectClass eq"])
    plain.start()
    try:
        bind(plain).add_s(B, [("objectClass", [b"dcObject", b"organization"]),
                              ("dc", [b"example"]), ("o", [b"E"])])
        rc, out = ldapsearch_sync(plain.uri, "!sync=ro")
        R.check("without syncprov a critical Sync Request is unavailableCriticalExtension",
                rc == 12, out)
        rc, out = ldapsearch_sync(plain.uri, "sync=ro")
        R.check("without syncprov a non-critical Sync Request is ignored", rc == 0, out)
    finally:
        plain.stop(R)
        plain.cleanup()


def person(uid, **extra):
    attrs = [("objectClass", [b"inetOrgPerson"]), ("uid", [uid.encode()]), ("cn", [b"P"]),
             ("sn", [b"P"])]
    return attrs + [(k, [v.encode()]) for k, v in extra.items()]


def persist_searches(provider):
    """The consumer's sync searches so far (it asks for "*,+")."""
    return provider.log_text().count("SRCH attr=* +")


def persist_phase(provider):
    """A refreshAndPersist consumer: refresh, pushes, restarts of both sides."""
    consumer = sh.make_server("slapd", db_lines=consumer_lines(provider.uri,
                                                               "refreshAndPersist", "002"))
    consumer.start()
    try:
        p = bind(provider)
        converge(p, bind(consumer), "persist: initial refresh", seconds=60)
        searches = persist_searches(provider)
        p.add_s(f"uid=push1,{PEOPLE}", person("push1"))
        p.modify_s(f"uid=u70,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Pushed"])])
        p.delete_s(f"uid=u71,{PEOPLE}")
        p.rename_s(f"uid=u72,{PEOPLE}", "uid=u72b", delold=1)
        converge(p, bind(consumer), "persist: adds, modifies, deletes and a rename pushed")
        R.check("persist: the changes came through the one persistent search "
                "(the consumer searched no more)", persist_searches(provider) == searches,
                f"{persist_searches(provider) - searches} more searches")
        consumer.terminate()
        for i in range(80, 90):
            p.delete_s(f"uid=u{i},{PEOPLE}")
        p.add_s(f"uid=push2,{PEOPLE}", person("push2"))
        consumer.start()
        converge(p, bind(consumer), "persist: consumer restarted after missing changes")
        before = persist_searches(provider)
        provider.terminate()
        provider.start()
        # slapd notices a dropped persistent search late (2-21 s here under
        # load) and only then searches again; changes made before that
        # would come in its refresh, not be pushed
        reconnected = h.wait_for(lambda: persist_searches(provider) > before, 90, 0.2)
        R.check("persist: the consumer searches again after the provider restarted",
                reconnected, f"{persist_searches(provider) - before} searches")
        searches = persist_searches(provider)
        p = bind(provider)
        p.delete_s(f"uid=u91,{PEOPLE}")
        p.modify_s(f"uid=u92,{PEOPLE}", [(ldap.MOD_ADD, "description", [b"after restart"])])
        converge(p, bind(consumer), "persist: provider restarted, then changes pushed")
        R.check("persist: after the restart, pushed through the new persistent search",
                persist_searches(provider) == searches,
                f"{persist_searches(provider) - searches} more searches")
    finally:
        consumer.stop(R)
        consumer.cleanup()


SYNC_OID = "1.3.6.1.4.1.4203.1.9.1.1"


def sync_search(msgid, mode=3):
    """A subtree search of B with a critical Sync Request control (raw BER)."""
    body = (h.octets(B) + h.integer(2, 0x0A) + h.integer(0, 0x0A) + h.integer(0)
            + h.integer(0) + h.tlv(0x01, b"\x00") + h.octets("objectClass", 0x87)
            + h.tlv(0x30, h.octets("description")))
    value = h.tlv(0x30, h.integer(mode, 0x0A))
    control = h.tlv(0x30, h.octets(SYNC_OID) + h.tlv(0x01, b"\xff") + h.octets(value))
    return h.message(msgid, h.tlv(0x63, body), h.tlv(0xA0, control))


def persistent_client(provider, rcvbuf=None):
    """A raw connection, bound as the rootdn, with a persistent search (msgid 2)."""
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", provider.port))
    sock.sendall(h.bind_simple(1, sh.ROOTDN, sh.ROOTPW) + sync_search(2))
    return sock


class Messages:
    """The LDAP messages of a raw connection, framed as they come."""

    def __init__(self, sock):
        self.sock, self.buf, self.closed = sock, b"", False

    def read(self, timeout, until=lambda seen: False, most=None):
        seen, deadline = [], time.time() + timeout
        while not until(seen) and (most is None or len(seen) < most):
            framed = h.parse_tlv(self.buf)
            if framed is not None:
                seen.append(h.Response(self.buf[:framed[2]]))
                self.buf = self.buf[framed[2]:]
                continue
            if self.closed or time.time() >= deadline:
                break
            self.sock.settimeout(max(0.01, deadline - time.time()))
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            self.closed = not data
            self.buf += data
        return seen


def until_refreshed(messages):
    """Reads until the Sync Info that ends the refresh; the messages read."""
    return messages.read(30, until=lambda seen: any(r.op == 0x79 for r in seen))


def abandon_phase(provider):
    p = bind(provider)
    sock = persistent_client(provider)
    messages = Messages(sock)
    try:
        seen = until_refreshed(messages)
        R.check("raw persistent search: the refresh ends with an IntermediateResponse and no "
                "SearchResultDone", any(r.op == 0x79 for r in seen) and
                not any(r.op == 0x65 and r.msgid == 2 for r in seen),
                str([(r.msgid, hex(r.op)) for r in seen[-3:]]))
        p.add_s(f"uid=seen1,{PEOPLE}", person("seen1"))
        got = messages.read(10, most=1)
        R.check("raw persistent search: an add is pushed as an entry",
                len(got) == 1 and got[0].msgid == 2 and got[0].op == 0x64,
                str([(r.msgid, hex(r.op)) for r in got]))
        # the Abandon is taken as it is read, before the search behind it:
        # once that search is answered the persistent one is over (no
        # fixed wait, which a loaded machine may outlast)
        sock.sendall(h.abandon(3, 2) + h.search(4, B, 0, ("1.1",)))
        got = messages.read(10, most=2)
        p.add_s(f"uid=unseen1,{PEOPLE}", person("unseen1"))
        p.delete_s(f"uid=seen1,{PEOPLE}")
        sock.sendall(h.search(5, B, 0, ("1.1",)))
        got += messages.read(10, most=2)
        got += messages.read(0.5)
        R.check("Abandon ends the persistent search: nothing more for it, the connection "
                "answers the next requests",
                not messages.closed and [r.msgid for r in got] == [4, 4, 5, 5],
                str([(r.msgid, hex(r.op)) for r in got]))
    finally:
        sock.close()


def slow_consumer_phase(provider):
    """A persistent search whose client never reads must not stall writers."""
    p = bind(provider)
    p.set_option(ldap.OPT_TIMEOUT, 20)
    p.add_s(f"uid=big,{PEOPLE}", person("big"))
    sock = persistent_client(provider, rcvbuf=4096)
    messages = Messages(sock)
    until_refreshed(messages)
    before = provider.log_text().count("dropped back to a refresh")
    ok = dropped = 0
    failure = ""
    for i in range(3000):
        blob = (f"{i:06d}" * 4000).encode()
        try:
            p.modify_s(f"uid=big,{PEOPLE}", [(ldap.MOD_REPLACE, "description", [blob])])
            ok += 1
        except ldap.LDAPError as e:
            failure = str(e)
            break
        if i % 50 == 49 and provider.log_text().count("dropped back to a refresh") > before:
            dropped = 1
            break
    R.check("a client that never reads its persistent search does not stall writes "
            f"({ok} writes succeeded)", failure == "" and ok > 0, failure)
    R.check("past syncprov-persist-queue its search is dropped back to a refresh (logged)",
            dropped == 1, provider.log_text()[-1500:])
    got = messages.read(20, until=lambda seen: seen and seen[-1].op == 0x65)
    done = [r for r in got if r.op == 0x65 and r.msgid == 2]
    R.check("the dropped search ends with e-syncRefreshRequired (4096)",
            len(done) == 1 and done[0].code == 4096,
            str([(r.msgid, hex(r.op), r.code) for r in got[-3:]]))
    sock.close()


def suffix_context(conn, attrs):
    res = conn.search_s(B, ldap.SCOPE_BASE, "(objectClass=*)", attrs)
    return res[0][1].get("contextCSN", [])


def context_csn_shown(kind, server):
    """After a modify the suffix's contextCSN is that modify's entryCSN."""
    p = bind(server)
    dn = f"uid=u70,{PEOPLE}"
    p.modify_s(dn, [(ldap.MOD_REPLACE, "sn", [f"Checkpoint {kind}".encode()])])
    csn = p.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["entryCSN"])[0][1]["entryCSN"]
    R.check(f"{kind}: the suffix's contextCSN is the newest write's entryCSN",
            suffix_context(p, ["contextCSN"]) == csn, f"{suffix_context(p, ['contextCSN'])} {csn}")
    R.check(f"{kind}: contextCSN is operational: shown with +, not with *",
            suffix_context(p, ["+"]) == csn and suffix_context(p, ["*"]) == [],
            f"{suffix_context(p, ['+'])} {suffix_context(p, ['*'])}")
    sub = p.search_s(B, ldap.SCOPE_SUBTREE, f"(entryDN={B})", ["contextCSN"])
    R.check(f"{kind}: a subtree search shows it too", [v for _, a in sub
                                                        for v in a.get("contextCSN", [])] == csn,
            str(sub))


def start_loaded(server, label):
    """Start server and load the replication data into it."""
    server.start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = server.ldapadd(path)
    R.check(f"{label}: loaded", rc == 0, out)


def openldap_checkpoint():
    server = sh.make_server("slapd", global_lines=["moduleload syncprov"],
                            db_lines=["index objectClass eq", "overlay syncprov",
                                      "syncprov-checkpoint 1 10"])
    try:
        start_loaded(server, "slapd provider")
        context_csn_shown("slapd (syncprov-checkpoint 1 10)", server)
    finally:
        server.stop(R)


def suffix_whole(kind):
    """The suffix entry's attributes with `*` (base and subtree) and
    whether `+` carries entryUUID, entryCSN and contextCSN."""
    glob = ["moduleload syncprov"] if kind == "slapd" else []
    db = ["overlay syncprov", "syncprov-checkpoint 1 10"]
    server = sh.make_server(kind, global_lines=glob,
                            db_lines=db + (["cachesize off"] if kind == "lumend" else []))
    try:
        start_loaded(server, f"{kind}, cache off")
        p = bind(server)
        p.modify_s(f"uid=u1,{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [b"Whole"])])
        base = p.search_s(B, ldap.SCOPE_BASE, "(objectClass=*)", ["*"])[0][1]
        sub = p.search_s(B, ldap.SCOPE_SUBTREE, f"(entryDN={B})", ["*"])[0][1]
        oper = p.search_s(B, ldap.SCOPE_BASE, "(objectClass=*)", ["+"])[0][1]
        return {"*": sorted(base), "* subtree": sorted(sub),
                "+": all(k in oper for k in ("entryUUID", "entryCSN", "contextCSN"))}
    finally:
        server.stop(R)


def suffix_whole_both():
    lumen = suffix_whole("lumend")
    R.check("lumend, cache off: '*' on the suffix returns its user attributes",
            lumen["*"] == lumen["* subtree"] and "o" in lumen["*"] and "dc" in lumen["*"],
            str(lumen))
    R.check("lumend, cache off: '+' on the suffix has entryUUID, entryCSN and contextCSN",
            lumen["+"], str(lumen))
    slapd = suffix_whole("slapd")
    R.check("slapd agrees on the suffix's user attributes",
            slapd["*"] == lumen["*"] and slapd["* subtree"] == lumen["* subtree"],
            f"slapd {slapd}, lumend {lumen}")


def main():
    if sh.slapd_missing():
        R.check("slapd available to be the consumer", False, sh.slapd_missing())
        R.finish()
    provider = sh.make_server("lumend", db_lines=["index objectClass,member eq",
                                                  "overlay syncprov",
                                                  "syncprov-checkpoint 100 10",
                                                  "syncprov-persist-queue 65536"])
    provider.start()
    path = os.path.join(provider.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = provider.ldapadd(path)
    R.check("provider loaded", rc == 0, out)
    consumer = sh.make_server("slapd", db_lines=consumer_lines(provider.uri))
    consumer.start()
    try:
        p, c = bind(provider), bind(consumer)
        converge(p, c, "initial refresh", seconds=60)
        changes(p)
        converge(p, c, "adds, modifies, deletes, a rename and a subtree move")
        consumer.terminate()
        offline_changes(p)
        consumer.start()
        converge(p, bind(consumer), "consumer restarted after missing changes")
        provider.terminate()
        provider.start()
        p = bind(provider)
        p.delete_s(f"uid=u60,{PEOPLE}")
        converge(p, bind(consumer), "provider restarted (contextCSN recovered), then a delete")
        bad_input(provider.uri)
        context_csn_shown("lumend", provider)
        consumer.stop(R)
        persist_phase(provider)
        abandon_phase(provider)
        slow_consumer_phase(provider)
    finally:
        if consumer.proc is not None:
            consumer.stop(R)
        provider.stop(R)
        consumer.cleanup()
        provider.cleanup()
    openldap_checkpoint()
    suffix_whole_both()
    R.finish()


main()
