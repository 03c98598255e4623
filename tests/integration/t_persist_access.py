#!/usr/bin/env python3
"""Access control on what a refreshAndPersist search is pushed, side by side
with slapd's syncprov.

A change that takes an entry out of a persistent search (a modify, a
delete, a rename out of the scope) is pushed as state delete with the DN.
Lumen decided whether the requester may see it on an entry holding the DN
alone, where a filter= rule can never match, so the next, more generous
rule let through the DN and entryUUID of entries the rules hide (here:
devices, hidden from everyone by `filter=(objectClass=device)`). Now:

  - a modified entry is decided on the entry itself: an anonymous
    persistent search is pushed alice's change and nothing about the
    hidden device (as slapd);
  - a deleted entry leaves only its DN, on which such rules cannot decide:
    Lumen ends the search with e-syncRefreshRequired (4096) without naming
    it, and the consumer's refresh decides on what remains; slapd pushes
    nothing. Neither names the device;
  - under rules that test no values (a DN rule), a delete is pushed as
    before, on both servers.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.syncrepl import SyncRequestControl, SyncStateControl  # noqa: E402

R = h.Results("t_persist_access.py")
B = sh.SUFFIX
PUBLIC = f"ou=public,{B}"
DEVICE, GONE, ALICE = (f"cn=secretdev,{PUBLIC}", f"cn=secretdev2,{PUBLIC}",
                       f"uid=alice,{PUBLIC}")
VALUE_RULES = ["access to filter=(objectClass=device) by * none", "access to * by * read"]
DN_RULES = [f'access to dn.base="{GONE}" by * none', "access to * by * read"]
DATA = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: E

dn: {PUBLIC}
objectClass: organizationalUnit
ou: public

dn: {DEVICE}
objectClass: device
cn: secretdev
description: hidden

dn: {GONE}
objectClass: device
cn: secretdev2

dn: {ALICE}
objectClass: inetOrgPerson
uid: alice
cn: alice
sn: a
"""
STATES = {0: "present", 1: "add", 2: "modify", 3: "delete"}


MARKER = [(ldap.MOD_REPLACE, "description", [b"marker"])]


def pushed(server, change):
    """After an anonymous refreshAndPersist's refresh, change(root): the
    (state, DN) pushed, and the code it ended with (None: open). A last
    change to alice, which every rule here shows, marks the end: changes
    are pushed in commit order, so nothing of change(root) comes after it
    (10 s at most)."""
    anon = ldap.initialize(server.uri)
    msgid = anon.search_ext(B, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*"],
                            serverctrls=[SyncRequestControl(True, mode="refreshAndPersist")])
    deadline = time.time() + 10
    while time.time() < deadline:
        kind = anon.result4(msgid, all=0, timeout=2, add_intermediates=1)[0]
        if kind == ldap.RES_INTERMEDIATE:
            break
    root = ldap.initialize(server.uri)
    root.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    change(root)
    root.modify_s(ALICE, MARKER)
    out, ended, marked = [], None, False
    end = time.time() + 10
    while time.time() < end and ended is None and not marked:
        try:
            _, data, _, _ = anon.result4(msgid, all=0, timeout=0.5, add_ctrls=1)[:4]
        except ldap.TIMEOUT:
            continue
        except ldap.LDAPError as e:
            ended = e.args[0].get("result")
            break
        for item in data or []:
            if item[1].get("description") == MARKER[0][2]:
                marked = True
                break
            state = [STATES.get(c.state, c.state) for c in item[2]
                     if c.controlType == SyncStateControl.controlType]
            out.append((state[0] if state else None, item[0]))
    anon.unbind_s()
    root.unbind_s()
    return out, ended


def modify(root):
    root.modify_s(DEVICE, [(ldap.MOD_REPLACE, "description", [b"changed"])])
    root.modify_s(ALICE, [(ldap.MOD_REPLACE, "sn", [b"b"])])


def delete(root):
    root.delete_s(GONE)


def run(kind, rules):
    glob = rules + (["moduleload syncprov"] if kind == "slapd" else [])
    server = sh.make_server(kind, db_lines=["overlay syncprov"], global_lines=glob).start()
    try:
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(DATA)
        rc, out = server.ldapadd(path)
        if rc != 0:
            raise RuntimeError(f"{kind}: loading failed: {out}")
        return {"modify": pushed(server, modify), "delete": pushed(server, delete)}
    finally:
        server.stop(R if kind == "lumend" else None)


def names_device(result):
    return any("secretdev" in (dn or "") for _, dn in result[0])


def main():
    kinds = ["lumend"] + ([] if sh.slapd_missing() else ["slapd"])
    if len(kinds) == 1:
        R.check("slapd available for the same scenarios", False, sh.slapd_missing())
    for kind in kinds:
        got = run(kind, VALUE_RULES)
        R.check(f"{kind}, filter= rules: a modify pushes alice's change and no device",
                got["modify"] == ([("modify", ALICE)], None), str(got["modify"]))
        R.check(f"{kind}, filter= rules: a delete of a hidden device names nothing",
                not names_device(got["delete"]), str(got["delete"]))
        want = (([], 4096) if kind == "lumend" else ([], None))
        R.check(f"{kind}, filter= rules: a delete ends in "
                f"{'a refresh' if kind == 'lumend' else 'nothing pushed'}",
                got["delete"] == want, str(got["delete"]))
        got = run(kind, DN_RULES[1:])
        R.check(f"{kind}, no value rules: a delete is pushed",
                got["delete"] == ([("delete", GONE)], None), str(got["delete"]))
    R.finish()


if __name__ == "__main__":
    main()
