#!/usr/bin/env python3
"""Two lumend providers replicating from each other (`serverID N URL`,
`overlay syncprov`, a `syncrepl` line to the other one, `multiprovider on`),
refreshAndPersist:

  - writes on each appear on the other, with entryCSNs naming the server
    that made them (#001# on the first, #002# on the second);
  - concurrent modifies of the same entries on both converge to the same
    values on both (the newest entryCSN wins for the whole entry);
  - a delete on one is a delete on both;
  - no change bounces forever: one modify is applied once on the other
    server and never on its origin, and a quiet period applies nothing;
  - the second provider stopped while the first takes writes, then
    restarted: it catches up, and keeps what was written on it meanwhile;
  - deletes on one provider racing modifies of the same entries on the
    other converge: each entry is gone from both, or on both with the
    modify;
  - a multiprovider database takes client writes; serverID and
    multiprovider errors name the file and line (lumend -T).
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slapd_harness as sh  # noqa: E402
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_multiprovider.py")
B = sh.SUFFIX
PEOPLE = "ou=people," + B
COUNT = 200


class Provider(sh.Lumend):
    """lumend with the sync log level too (the "applied" lines)."""

    def command(self):
        return [sh.LUMEND, "-f", self.config, "-h", f"{self.uri}/", "-d", "stats", "-d", "sync"]


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n"]
    for i in range(COUNT):
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\n")
    return "\n".join(out) + "\n"


def snapshot(conn):
    """{dn: {attribute: sorted values}}: user attributes, entryUUID, entryCSN."""
    out = {}
    for dn, attrs in conn.search_s(B, ldap.SCOPE_SUBTREE, "(objectClass=*)",
                                   ["*", "entryUUID", "entryCSN"]):
        out[dn.lower()] = {k.lower(): sorted(v) for k, v in attrs.items()}
    return out


def bind(server):
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return conn


def converge(a, b, label, seconds=60):
    deadline = time.time() + seconds
    x = y = None
    while time.time() < deadline:
        try:
            x, y = snapshot(bind(a)), snapshot(bind(b))
        except ldap.LDAPError:
            x, y = None, {}
        if x == y:
            break
        time.sleep(0.3)
    detail = ""
    if x != y and x is not None and y is not None:
        differ = [d for d in set(x) | set(y) if x.get(d) != y.get(d)][:3]
        detail = f"{len(x)} vs {len(y)} entries; e.g. {[(d, x.get(d), y.get(d)) for d in differ]}"
    R.check(f"{label}: both providers hold the same entries ({len(x or {})})", x == y, detail)
    return x


def lines(server_a, server_b, rid, provider):
    return ["index objectClass,entryUUID,entryCSN eq", "dbnosync", "overlay syncprov",
            f'syncrepl rid={rid} provider={provider.uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 attrs="*,+"',
            "multiprovider on"]


def make_pair():
    a, b = Provider(), Provider()
    ids = [f"serverID 1 {a.uri}/", f"serverID 2 {b.uri}"]
    for me, other, rid in ((a, b, "001"), (b, a, "002")):
        with open(me.config, "w") as f:
            f.write(me.config_text(ids, lines(a, b, rid, other)))
    return a, b


def csn_of(conn, dn):
    return conn.search_s(dn, ldap.SCOPE_BASE, attrlist=["entryCSN"])[0][1]["entryCSN"][0].decode()


def applied(server, dn):
    return server.log_text().count(f'applied change "{dn}"')


def writes_both_ways(a, b):
    ca, cb = bind(a), bind(b)
    R.check("entries written on server 1 carry #001# in their entryCSN",
            "#001#" in csn_of(ca, f"uid=u0,{PEOPLE}"), csn_of(ca, f"uid=u0,{PEOPLE}"))
    cb.add_s(f"uid=fromb,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"fromb"]),
                                     ("cn", [b"From B"]), ("sn", [b"B"])])
    R.check("a multiprovider database takes client writes (add on server 2)", True)
    ca.modify_s(f"uid=u3,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Changed On A"])])
    cb.modify_s(f"uid=u4,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Changed On B"])])
    snap = converge(a, b, "a write on each provider")
    got = (snap or {}).get(f"uid=fromb,{PEOPLE}".lower(), {})
    R.check("the entry added on server 2 is on server 1, with #002# in its entryCSN",
            any(b"#002#" in v for v in got.get("entrycsn", [])), got)
    R.check("server 1's modify is on server 2 and server 2's on server 1",
            snap is not None and snap[f"uid=u3,{PEOPLE}".lower()]["cn"] == [b"Changed On A"]
            and snap[f"uid=u4,{PEOPLE}".lower()]["cn"] == [b"Changed On B"])


def concurrent_modifies(a, b):
    targets = [f"uid=u{i},{PEOPLE}" for i in range(10, 20)]

    def writer(server, tag):
        conn = bind(server)
        for dn in targets:
            conn.modify_s(dn, [(ldap.MOD_REPLACE, "description", [tag.encode()]),
                               (ldap.MOD_REPLACE, "sn", [tag.encode()])])

    threads = [threading.Thread(target=writer, args=(s, t)) for s, t in ((a, "A"), (b, "B"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = converge(a, b, "concurrent modifies of the same entries on both")
    if snap is None:
        return
    whole = all(snap[d.lower()]["description"] == snap[d.lower()]["sn"] for d in targets)
    R.check("each entry is one provider's version as a whole (newest entryCSN wins)", whole,
            [(snap[d.lower()]["description"], snap[d.lower()]["sn"]) for d in targets])


def deletes(a, b):
    bind(b).delete_s(f"uid=u5,{PEOPLE}")
    bind(a).delete_s(f"uid=fromb,{PEOPLE}")
    snap = converge(a, b, "a delete on each provider")
    R.check("the deleted entries are gone from both",
            snap is not None and f"uid=u5,{PEOPLE}".lower() not in snap
            and f"uid=fromb,{PEOPLE}".lower() not in snap)


def no_bounce(a, b):
    dn = f"uid=u7,{PEOPLE}"
    before_a, before_b = applied(a, dn), applied(b, dn)
    bind(a).modify_s(dn, [(ldap.MOD_REPLACE, "cn", [b"Once"])])
    converge(a, b, "one modify on server 1")
    time.sleep(2)
    R.check("the modify is applied once on server 2", applied(b, dn) - before_b == 1,
            b.log_text()[-1500:])
    R.check("and never re-applied on server 1, its origin", applied(a, dn) == before_a,
            a.log_text()[-1500:])
    counts = (a.log_text().count("applied "), b.log_text().count("applied "))
    snap = snapshot(bind(a))
    time.sleep(3)
    R.check("a quiet period applies nothing on either provider",
            counts == (a.log_text().count("applied "), b.log_text().count("applied ")),
            counts)
    R.check("and changes nothing (no entryCSN moves)", snapshot(bind(a)) == snap)


def restart(a, b):
    b.terminate()
    ca = bind(a)
    ca.add_s(f"uid=offline,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]),
                                       ("uid", [b"offline"]), ("cn", [b"Off"]), ("sn", [b"O"])])
    ca.modify_s(f"uid=u8,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"While B Was Down"])])
    ca.delete_s(f"uid=u9,{PEOPLE}")
    b.start()
    bind(b).add_s(f"uid=afterrestart,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]),
                                                  ("uid", [b"afterrestart"]), ("cn", [b"R"]),
                                                  ("sn", [b"R"])])
    snap = converge(a, b, "server 2 restarted after writes on server 1")
    R.check("the entry written on server 2 after its restart is kept on both",
            snap is not None and f"uid=afterrestart,{PEOPLE}".lower() in snap
            and f"uid=offline,{PEOPLE}".lower() in snap
            and f"uid=u9,{PEOPLE}".lower() not in snap)


def delete_modify_race(a, b):
    """Deletes on server 1 and modifies of the same entries on server 2 at
    the same moment, each pair crossing in flight."""
    targets = [f"uid=u{i},{PEOPLE}" for i in range(30, 40)]
    barrier = threading.Barrier(2)
    errors = []

    def deleter():
        conn = bind(a)
        for dn in targets:
            barrier.wait()
            conn.delete_s(dn)

    def modifier():
        conn = bind(b)
        for dn in targets:
            barrier.wait()
            try:
                conn.modify_s(dn, [(ldap.MOD_REPLACE, "cn", [b"Modified In The Race"])])
            except ldap.NO_SUCH_OBJECT:
                errors.append(dn)   # the delete arrived first: nothing to race

    threads = [threading.Thread(target=f) for f in (deleter, modifier)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = converge(a, b, "deletes on one provider racing modifies on the other")
    if snap is None:
        return
    kept = [dn for dn in targets if dn.lower() in snap]
    R.check(f"each raced entry is deleted on both or kept on both with the modify "
            f"({len(targets) - len(kept)} deleted, {len(kept)} kept, {len(errors)} modifies "
            "refused as the delete was already there)",
            all(snap[dn.lower()].get("cn") == [b"Modified In The Race"] for dn in kept),
            [snap[dn.lower()] for dn in kept][:2])


def pair():
    a, b = make_pair()
    a.start()
    try:
        path = os.path.join(a.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = a.ldapadd(path)
        R.check("server 1 loaded", rc == 0, out)
        b.start()
        converge(a, b, "initial refresh of server 2 from server 1")
        writes_both_ways(a, b)
        concurrent_modifies(a, b)
        deletes(a, b)
        no_bounce(a, b)
        restart(a, b)
        delete_modify_race(a, b)
    finally:
        b.stop(R)
        a.stop(R)


def config_errors():
    sync = (f'syncrepl rid=001 provider=ldap://127.0.0.1:9 searchbase="{B}" '
            'type=refreshAndPersist')
    cases = [
        (["serverID 4096"], [], "serverID: expected a number from 0 to 4095"),
        (["serverID x"], [], "serverID: expected a number"),
        (["serverID 1", "serverID 2"], [], "serverID: only one line without URL"),
        (["serverID 1 ldap://a.example", "serverID 1 ldap://b.example"], [],
         "serverID: 1 is already defined"),
        (["serverID 1 ldap://a.example", "serverID 2 LDAP://A.example/"], [],
         "is already defined"),
        (["serverID 1 ldap://a.example", "serverID 2"], [], "do not mix"),
        (["serverID 1 http://a.example"], [], "serverID: expected an ldap://"),
        (["serverID 1 ldap://127.0.0.1:9/"], [], "no serverID URL is one of the listeners"),
        (["serverID 1"], ["multiprovider on"], "multiprovider: must appear after a syncrepl"),
        ([], [sync, "multiprovider on"], "multiprovider: needs a global serverID line"),
        (["serverID 1"], [sync, "mirrormode maybe"], "mirrormode: expected on or off"),
    ]
    for global_lines, db_lines, want in cases:
        server = sh.make_server("lumend", db_lines=db_lines, global_lines=global_lines)
        p = subprocess.run([sh.LUMEND, "-T", "-f", server.config], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        out = p.stdout.decode(errors="replace")
        R.check(f"config error names file and line: {(global_lines + db_lines)[-1][:50]}",
                p.returncode != 0 and want in out and "slapd.conf:" in out, out)
        server.cleanup()
    server = sh.make_server("lumend", db_lines=["overlay syncprov", sync, "mirrormode on"],
                            global_lines=["serverID 0x2a"])
    p = subprocess.run([sh.LUMEND, "-T", "-f", server.config], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    R.check("serverID 0x2a and mirrormode on (the older name) are accepted", p.returncode == 0,
            p.stdout.decode(errors="replace"))
    server.cleanup()


def main():
    config_errors()
    pair()
    R.finish()


main()
