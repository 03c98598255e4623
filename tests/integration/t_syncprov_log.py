#!/usr/bin/env python3
"""The session log of `overlay syncprov` (`syncprov-sessionlog 100`): RFC 4533's
delete phase from a change history kept in LMDB.

  - an `ldapsearch -E '!sync=ro/<cookie>'` refresh after a delete and a modify
    returns only the modified entry (whole), one Sync Info syncIdSet naming the
    deleted entry, no entry in the present state, and a Sync Done with
    refreshDeletes TRUE;
  - the same refresh after lumend restarted (the history is in the database);
  - that refresh reads only the entries the log names as changed (through
    the entryUUID index): the entry cache's hits + misses in cn=Monitor grow
    by a few, not by the size of the tree as a present phase's do;
  - a cookie older than the history (more than 100 changes since) gets the
    present phase, as without the log;
  - an unmodified slapd refreshOnly consumer still converges with the log on:
    adds, modifies, deletes, a rename, deletes while it is stopped, and a
    provider restart.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_syncprov_log.py")
B = sh.SUFFIX
PEOPLE = "ou=people," + B
COUNT = 40


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n"]
    for i in range(COUNT):
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\n")
    return "\n".join(out) + "\n"


bind = sh.bind


def refresh(uri, cookie=None, mode="ro"):
    """A sync ldapsearch of the whole tree: (exit, output). A refreshAndPersist
    one is stopped after 3 seconds."""
    spec = f"!sync={mode}" + (f"/{cookie}" if cookie else "")
    p = subprocess.run((["timeout", "3"] if mode == "rp" else []) + ["ldapsearch", "-x", "-H", uri, "-D", sh.ROOTDN, "-w", sh.ROOTPW,
                        "-b", B, "-E", spec, "(objectClass=*)", "cn"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


def cookie_of(out):
    m = re.search(r"^# cookie: (\S+)", out, re.M)
    return m.group(1) if m else None


def dns(out):
    return [line[4:].strip().lower() for line in out.splitlines() if line.startswith("dn: ")]


def delete_phase_checks(label, out, rc, modified, deleted_uuid):
    R.check(f"{label}: the refresh succeeds", rc == 0, out[-800:])
    R.check(f"{label}: only the modified entry is sent", dns(out) == [modified.lower()],
            str(dns(out)[:5]))
    R.check(f"{label}: it is sent whole (state add, its cn)",
            "cn: Renamed Two" in out and "added" in out, out[-800:])
    info = [line for line in out.splitlines() if "SyncInfo" in line]
    R.check(f"{label}: one Sync Info syncIdSet names the deleted entry",
            len([line for line in info if "ID Set" in line]) == 1
            and deleted_uuid.lower() in out.lower(), "\n".join(info) + out[-600:])
    R.check(f"{label}: no entry in the present state", "present" not in out.lower(),
            out[-800:])
    R.check(f"{label}: the Sync Done says refreshDeletes TRUE",
            "SyncDone control refreshDeletes=1" in out, out[-600:])


def entries_read(provider):
    """The database's entry cache hits + misses (cn=Monitor): entries read."""
    conn = bind(provider)
    total = 0
    for _, attrs in conn.search_s("cn=Monitor", ldap.SCOPE_SUBTREE, "(monitoredInfo=*)",
                                  ["monitoredInfo"]):
        values = [v.decode() for v in attrs.get("monitoredInfo", [])]
        for v in values:
            m = re.match(r"entryCache(Hits|Misses)=(\d+)$", v)
            if m:
                total += int(m.group(2))
    conn.unbind_s()
    return total


def log_phase(provider):
    p = bind(provider)
    rc, out = refresh(provider.uri)
    old = cookie_of(out)
    R.check("a first refresh hands out a cookie", rc == 0 and old is not None, out[-500:])
    for i in range(3):   # a little history before the cookie used below
        p.modify_s(f"uid=u{30 + i},{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [b"Before"])])
    rc, out = refresh(provider.uri)
    cookie = cookie_of(out)
    gone = p.search_s(f"uid=u1,{PEOPLE}", ldap.SCOPE_BASE, attrlist=["entryUUID"])
    uuid = gone[0][1]["entryUUID"][0].decode()
    p.delete_s(f"uid=u1,{PEOPLE}")
    modified = f"uid=u2,{PEOPLE}"
    p.modify_s(modified, [(ldap.MOD_REPLACE, "cn", [b"Renamed Two"])])
    before = entries_read(provider)
    rc, out = refresh(provider.uri, cookie)
    read = entries_read(provider) - before
    delete_phase_checks("cookie inside the log", out, rc, modified, uuid)
    R.check("the delete phase reads only the entries the log names as changed "
            f"(entries read: {read} of {COUNT + 1})", 0 < read <= 5, str(read))
    provider.terminate()
    provider.start()
    rc, out = refresh(provider.uri, cookie)
    delete_phase_checks("after a provider restart", out, rc, modified, uuid)
    R.check("after the restart the contextCSN came from the session log",
            "recovered from the session log" in provider.log_text(),
            provider.log_text()[-800:])
    rc, out = refresh(provider.uri, cookie, "rp")
    R.check("refreshAndPersist from a cookie inside the log: the modified entry, the "
            "syncIdSet, no present entry, and the refreshDelete Sync Info ending the refresh",
            dns(out) == [modified.lower()] and uuid.lower() in out.lower()
            and "present" not in out.lower()
            and re.search(r"SyncInfo Received: refresh delete", out) is not None, out[-900:])
    p = bind(provider)
    for i in range(110):   # more changes than the log keeps
        p.modify_s(f"uid=u{10 + i % 10},{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [f"x{i}".encode()])])
    before = entries_read(provider)
    rc, out = refresh(provider.uri, old)
    read = entries_read(provider) - before
    R.check(f"the present phase reads the whole tree (entries read: {read})",
            read >= COUNT + 1, str(read))
    R.check("a cookie older than the log gets the present phase: every entry, the "
            "unchanged ones present", rc == 0 and len(dns(out)) == COUNT + 1
            and "present" in out.lower() and "SyncInfo" not in out,
            f"{len(dns(out))} entries\n" + out[-600:])


def converge(provider, consumer, label, seconds=30):
    sh.converge(R, provider, consumer, f"consumer: {label}", seconds)


def consumer_phase(provider):
    consumer = sh.make_server("slapd", db_lines=[
        "index objectClass,entryUUID,entryCSN eq",
        f'syncrepl rid=001 provider={provider.uri} bindmethod=simple '
        f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
        'type=refreshOnly interval=00:00:00:01 retry="1 +" timeout=5 '
        'attrs="*,+" schemachecking=off'])
    consumer.start()
    try:
        p = bind(provider)
        converge(p, bind(consumer), "initial refresh")
        p.delete_s(f"uid=u3,{PEOPLE}")
        p.modify_s(f"uid=u4,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Four"])])
        p.rename_s(f"uid=u5,{PEOPLE}", "uid=u5b", delold=1)
        p.add_s(f"uid=n1,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"n1"]),
                                     ("cn", [b"N"]), ("sn", [b"N"])])
        converge(p, bind(consumer), "a delete, a modify, a rename and an add")
        consumer.terminate()
        for i in range(6, 9):
            p.delete_s(f"uid=u{i},{PEOPLE}")
        consumer.start()
        converge(p, bind(consumer), "deletes while the consumer was stopped")
        provider.terminate()
        provider.start()
        p = bind(provider)
        p.delete_s(f"uid=u9,{PEOPLE}")
        converge(p, bind(consumer), "provider restarted, then a delete")
    finally:
        consumer.stop(R)
        consumer.cleanup()


def main():
    if sh.slapd_missing():
        R.check("slapd available to be the consumer", False, sh.slapd_missing())
        R.finish()
    provider = sh.make_server("lumend", db_lines=["index objectClass,entryUUID eq", "overlay syncprov",
                                                  "syncprov-sessionlog 100"])
    provider.start()
    try:
        path = os.path.join(provider.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = provider.ldapadd(path)
        R.check("provider loaded", rc == 0, out)
        log_phase(provider)
        consumer_phase(provider)
    finally:
        provider.stop(R)
        provider.cleanup()
    R.finish()


main()
