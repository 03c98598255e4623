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

Bad input: a malformed cookie is protocolError naming what is wrong; the
Sync Request on a database without syncprov is unavailableCriticalExtension
when critical (as slapd); refreshAndPersist is refused (unwillingToPerform)
until it is built.
"""
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
COMPARED = {"entryuuid", "entrycsn"}


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n",
           f"dn: ou=team,{PEOPLE}\nobjectClass: organizationalUnit\nou: team\n"]
    for i in range(COUNT):
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\nmail: u{i}@example.com\n")
    for i in range(5):
        out.append(f"dn: uid=t{i},ou=team,{PEOPLE}\nobjectClass: inetOrgPerson\nuid: t{i}\n"
                   f"cn: Team {i}\nsn: T{i}\n")
    out.append(f"dn: cn=staff,{GROUPS}\nobjectClass: groupOfNames\ncn: staff\n"
               + "".join(f"member: uid=u{i},{PEOPLE}\n" for i in range(10)))
    return "\n".join(out) + "\n"


def snapshot(conn):
    """{dn: {attribute: sorted values}} of user attributes, entryUUID, entryCSN."""
    out = {}
    for dn, attrs in conn.search_s(B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*", "entryUUID",
                                                                             "entryCSN"]):
        keep = {}
        for name, values in attrs.items():
            low = name.lower()
            if low in COMPARED or not low.startswith(("entry", "create", "modif", "struct")):
                keep[low] = sorted(v.lower() for v in values)
        out[dn.lower()] = keep
    return out


def converge(provider, consumer, label, seconds=30):
    deadline = time.time() + seconds
    want = got = None
    while time.time() < deadline:
        want = snapshot(provider)
        try:
            got = snapshot(consumer)
        except ldap.LDAPError:
            got = None
        if got == want:
            break
        time.sleep(0.5)
    detail = ""
    if got != want and got is not None:
        missing = sorted(set(want) - set(got))[:3]
        extra = sorted(set(got) - set(want))[:3]
        differ = [d for d in want if d in got and want[d] != got[d]][:2]
        detail = (f"missing {missing} extra {extra} differ "
                  f"{[(d, want[d], got[d]) for d in differ]}")
    R.check(f"{label}: the consumer holds exactly the provider's entries "
            f"({len(want or {})} entries)", got == want, detail)


def bind(server):
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return conn


def consumer_lines(provider_uri):
    return ["index objectClass,entryUUID,entryCSN eq",
            f'syncrepl rid=001 provider={provider_uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            'type=refreshOnly interval=00:00:00:01 retry="1 +" timeout=5 '
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
    rc, out = ldapsearch_sync(provider_uri, "!sync=rp")
    R.check("refreshAndPersist is refused for now (unwillingToPerform)", rc == 53, out)
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


def main():
    if sh.slapd_missing():
        R.check("slapd available to be the consumer", False, sh.slapd_missing())
        R.finish()
    provider = sh.make_server("lumend", db_lines=["index objectClass,member eq",
                                                  "overlay syncprov",
                                                  "syncprov-checkpoint 100 10"])
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
    finally:
        consumer.stop(R)
        provider.stop(R)
        consumer.cleanup()
        provider.cleanup()
    R.finish()


main()
