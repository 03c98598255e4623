#!/usr/bin/env python3
"""A write's access decided again inside its transaction.

Lumen decides a write's access on a read snapshot and applies the write
later, in the database's write transaction. Under rules that read entries
(filter= on the target or its parent, group= membership) a change that
commits in between can take the right away: the write used to land anyway.
Now the database decides again on what its transaction holds, and that
verdict counts (insufficientAccessRights, "access changed before the
write"; nothing written).

The window is opened on purpose: lumend-faults with LUMEN_FAULT=stall
makes every write transaction wait before it begins. A rootdn write is
sent first and waits there; then the rootdn's changes that take the
requester's rights away (description no longer "open", the requester
removed from the group), then the requester's writes, decided while none
of those changes has committed. The committer applies the rootdn's changes
and the requester's writes in one transaction, in that order, so a group
change is seen only through the transaction itself. Six writes: a modify
under filter=, a modify under group=, an add below a parent under filter=,
a delete, a rename and a Password Modify; and a Password Modify of one's
own password with the old one, while the rootdn resets it (the old
password no longer matches when the write is applied: unwillingToPerform,
as slapd answers an old password that does not match).

The same rules are checked without a race on Lumen and on slapd: every
write is allowed before the change (set "x"), and refused after it
(set "y"); and a member may remove itself from, delete and rename a group
whose members may write it (the decision is made on the transaction as it
was before the write, not after it); a rename that deletes the old RDN's
value needs write on the old RDN's type (slapd's rule; Lumen checked only
the new RDN's types before).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

R = h.Results("t_write_access_race.py")
B = sh.SUFFIX
PEOPLE = f"ou=people,{B}"
USER, USERPW = f"uid=u,{PEOPLE}", "upw"
OWNERPW = "pw1"
STALL_MS = 1500
REFUSED = "access changed before the write"
# Each write's answer once the change is in: (code, diagnostic).
REFUSAL = {name: (50, REFUSED) for name in (
    "modify, filter=", "modify, group=", "add, parent's filter=", "delete", "rename",
    "password modify")}
REFUSAL["own password, old one reset"] = (53, "unwilling to verify old password")
SETS = ("x", "y", "z")   # allowed as it is / refused after the change / the race
SELF_GROUPS = ("mod", "del", "ren")   # groups whose members may write them


def rules():
    out = [f'access to dn.base="uid=rdn-{k},{PEOPLE}" attrs=entry,cn by users write by * read'
           for k in ("del", "keep")]
    out += [
        'access to filter=(description=open) attrs=userPassword '
        'by users write by anonymous auth by * none',
        'access to attrs=userPassword by self write by anonymous auth by * none',
        'access to filter=(description=open) by users write by * read',
    ]
    out += [f'access to dn.base="cn={s}-group,{PEOPLE}" attrs=title '
            f'by group="cn={s}-editors,{B}" write by * read' for s in SETS]
    out += [f'access to dn.base="cn=self-{k},{PEOPLE}" by group="cn=self-{k},{PEOPLE}" '
            'write by * read' for k in SELF_GROUPS]
    out += [f'access to dn.base="{PEOPLE}" attrs=children by users write by * read',
            'access to * by * read']
    return out


def entry(dn, *lines):
    return f"dn: {dn}\n" + "".join(f"{line}\n" for line in lines) + "\n"


def person(cn, *extra):
    return entry(f"cn={cn},{PEOPLE}", "objectClass: inetOrgPerson", f"cn: {cn}", "sn: s", *extra)


def data():
    text = entry(B, "objectClass: dcObject", "objectClass: organization", "dc: example", "o: E")
    text += entry(PEOPLE, "objectClass: organizationalUnit", "ou: people")
    text += entry(USER, "objectClass: inetOrgPerson", "uid: u", "cn: u", "sn: u",
                  f"userPassword: {USERPW}")
    text += entry(f"cn=blocker,{B}", "objectClass: person", "cn: blocker", "sn: b")
    for s in SETS:
        text += entry(f"ou={s}-open,{B}", "objectClass: organizationalUnit", f"ou: {s}-open",
                      "description: open")
        text += entry(f"cn={s}-editors,{B}", "objectClass: groupOfNames", f"cn: {s}-editors",
                      f"member: {USER}", f"member: cn=blocker,{B}")
        for kind in ("mod", "del", "ren", "pw"):
            text += person(f"{s}-{kind}", "description: open",
                           *(["userPassword: old"] if kind == "pw" else []))
        text += person(f"{s}-group", "description: closed")
        text += entry(owner(s), "objectClass: inetOrgPerson", f"uid: {s}-owner", "cn: o",
                      "sn: o", f"userPassword: {OWNERPW}")
    for k in SELF_GROUPS:
        text += entry(f"cn=self-{k},{PEOPLE}", "objectClass: groupOfNames", f"cn: self-{k}",
                      f"member: {USER}", f"member: cn=blocker,{B}")
    for k in ("del", "keep"):
        text += entry(f"uid=rdn-{k},{PEOPLE}", "objectClass: inetOrgPerson", f"uid: rdn-{k}",
                      f"cn: R-{k}", "sn: r")
    return text


def owner(s):
    return f"uid={s}-owner,{PEOPLE}"


def takeaways(s):
    """The rootdn's changes that take the requester's rights away in set s."""
    closed = [(ldap.MOD_REPLACE, "description", [b"closed"])]
    return [(f"cn={s}-{k},{PEOPLE}", closed) for k in ("mod", "del", "ren", "pw")] + [
        (f"ou={s}-open,{B}", closed),
        (f"cn={s}-editors,{B}", [(ldap.MOD_DELETE, "member", [USER.encode()])]),
        (owner(s), [(ldap.MOD_REPLACE, "userPassword", [b"reset"])])]


def writes(s):
    """The requester's writes in set s: (name, who, start(conn) -> msgid)."""
    new_entry = [("objectClass", [b"person"]), ("cn", [b"new"]), ("sn", [b"n"]),
                 ("description", [b"open"])]
    title = [(ldap.MOD_REPLACE, "title", [b"t"])]
    return [
        ("modify, filter=", USER, lambda c: c.modify_ext(f"cn={s}-mod,{PEOPLE}", title)),
        ("modify, group=", USER, lambda c: c.modify_ext(f"cn={s}-group,{PEOPLE}", title)),
        ("add, parent's filter=", USER,
         lambda c: c.add_ext(f"cn=new,ou={s}-open,{B}", new_entry)),
        ("delete", USER, lambda c: c.delete_ext(f"cn={s}-del,{PEOPLE}")),
        ("rename", USER,
         lambda c: c.rename(f"cn={s}-ren,{PEOPLE}", f"cn={s}-ren2", delold=0)),
        ("password modify", USER, lambda c: c.passwd(f"cn={s}-pw,{PEOPLE}", None, "new")),
        ("own password, old one reset", owner(s),
         lambda c: c.passwd(None, OWNERPW, "mine")),
    ]


def own_group_writes(user):
    """A member writes a group whose members may write it: decided on the
    group as it is before the write (removing oneself, deleting, renaming)."""
    return [
        outcome(user, user.modify_ext(f"cn=self-mod,{PEOPLE}",
                                      [(ldap.MOD_DELETE, "member", [USER.encode()])])),
        outcome(user, user.delete_ext(f"cn=self-del,{PEOPLE}")),
        outcome(user, user.rename(f"cn=self-ren,{PEOPLE}", "cn=self-ren2", delold=0)),
    ]


def old_rdn_renames(user):
    """Renames to an RDN the user may write (cn) from one it may not (uid):
    deleting the old RDN's value needs write on its type, keeping it not."""
    return [outcome(user, user.rename(f"uid=rdn-{k},{PEOPLE}", f"cn=R-{k}",
                                      delold=int(k == "del"))) for k in ("del", "keep")]


def password_of(dn):
    return USERPW if dn == USER else OWNERPW


def outcome(conn, msgid):
    """(result code, diagnostic) of an operation started earlier."""
    try:
        conn.result3(msgid, all=1, timeout=60)
        return 0, ""
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", -1), info.get("info", "")


def bound(uri, dn, pw):
    c = ldap.initialize(uri)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.simple_bind_s(dn, pw)
    return c


def exists(root, dn):
    try:
        root.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
        return True
    except ldap.NO_SUCH_OBJECT:
        return False


def written(root, s):
    """What of set s's writes is in the directory (all False: nothing)."""
    mod = root.search_s(f"cn={s}-mod,{PEOPLE}", ldap.SCOPE_BASE, attrlist=["title"])[0][1]
    grp = root.search_s(f"cn={s}-group,{PEOPLE}", ldap.SCOPE_BASE, attrlist=["title"])[0][1]
    pw = root.search_s(f"cn={s}-pw,{PEOPLE}", ldap.SCOPE_BASE, attrlist=["userPassword"])
    return {"modify, filter=": "title" in mod, "modify, group=": "title" in grp,
            "add, parent's filter=": exists(root, f"cn=new,ou={s}-open,{B}"),
            "delete": not exists(root, f"cn={s}-del,{PEOPLE}"),
            "rename": exists(root, f"cn={s}-ren2,{PEOPLE}"),
            "password modify": pw[0][1].get("userPassword") != [b"old"],
            "own password, old one reset": root.search_s(
                owner(s), ldap.SCOPE_BASE, attrlist=["userPassword"])[0][1].get(
                    "userPassword") != [b"reset"]}


def load(server):
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(data())
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{server.kind}: loading failed: {out}")


def one_by_one(server):
    """Set x as it is, set y after its takeaways: {write: (code, code)}."""
    root = bound(server.uri, sh.ROOTDN, sh.ROOTPW)
    users = [(bound(server.uri, who_x, password_of(who_x)),
              bound(server.uri, who_y, password_of(who_y)))
             for (_, who_x, _), (_, who_y, _) in zip(writes("x"), writes("y"))]
    for dn, mods in takeaways("y"):
        root.modify_s(dn, mods)
    seen = {}
    for (ux, uy), (name, _, start_x), (_, _, start_y) in zip(users, writes("x"), writes("y")):
        seen[name] = (outcome(ux, start_x(ux))[0], outcome(uy, start_y(uy))[0])
    seen["own group"] = own_group_writes(bound(server.uri, USER, USERPW))
    seen["old RDN"] = old_rdn_renames(bound(server.uri, USER, USERPW))
    return seen, written(root, "y")


def race(server):
    """Set z: the rootdn's takeaways and the requester's writes queued
    behind a stalled write. {write: (code, diagnostic)}, what was written."""
    root = bound(server.uri, sh.ROOTDN, sh.ROOTPW)
    blocker = bound(server.uri, sh.ROOTDN, sh.ROOTPW)
    takers = [bound(server.uri, sh.ROOTDN, sh.ROOTPW) for _ in takeaways("z")]
    users = [bound(server.uri, who, password_of(who)) for _, who, _ in writes("z")]
    server.arm()
    first = blocker.modify_ext(f"cn=blocker,{B}", [(ldap.MOD_REPLACE, "sn", [b"c"])])
    time.sleep(0.3)
    taken = [c.modify_ext(dn, mods) for c, (dn, mods) in zip(takers, takeaways("z"))]
    time.sleep(0.3)
    started = [(name, c, start(c)) for c, (name, _, start) in zip(users, writes("z"))]
    seen = {name: outcome(c, msgid) for name, c, msgid in started}
    others = [outcome(blocker, first)[0]] + [outcome(c, m)[0] for c, m in zip(takers, taken)]
    server.arm()
    return seen, others, written(root, "z")


def run(server, scenario, results):
    """Start server, load it, run scenario(server) and stop it (recording
    its exit and sanitizer reports in results, when given)."""
    server.start()
    try:
        load(server)
        return scenario(server)
    finally:
        server.stop(results)


def main():
    lumen_seen, lumen_written = run(sh.make_server("lumend", global_lines=rules()),
                                    one_by_one, R)
    old_rdn = lumen_seen.pop("old RDN")
    R.check("lumend: a rename deleting an old RDN value of a type it may not write is refused",
            old_rdn == [(50, ""), (0, "")], str(old_rdn))
    own = lumen_seen.pop("own group")
    R.check("lumend: a member modifies, deletes and renames a group its members may write",
            own == [(0, "")] * 3, str(own))
    for name, codes in lumen_seen.items():
        R.check(f"lumend: {name}: allowed, then refused after the change",
                codes == (0, REFUSAL[name][0]), f"got {codes}")
    R.check("lumend: nothing refused was written", not any(lumen_written.values()),
            str(lumen_written))

    seen, others, done = run(sh.ArmedFaultsLumend(f"stall:{STALL_MS}",
                                                  global_lines=rules() + ["threads 24"]), race, R)
    R.check("race: the rootdn's writes succeed", others == [0] * len(others), str(others))
    for name, (code, text) in seen.items():
        R.check(f"race: {name}: refused in the transaction", (code, text) == REFUSAL[name],
                f"got {code} {text!r}")
    R.check("race: nothing of the refused writes was written", not any(done.values()),
            str(done))

    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available for the same rules", False, missing)
    else:
        slapd_seen, slapd_written = run(sh.make_server("slapd", global_lines=rules()),
                                        one_by_one, None)
        slapd_old_rdn = slapd_seen.pop("old RDN")
        R.check("slapd agrees: deleting the old RDN needs write on its type",
                slapd_old_rdn == old_rdn, f"slapd {slapd_old_rdn}, lumend {old_rdn}")
        slapd_own = slapd_seen.pop("own group")
        R.check("slapd agrees: a member writes its own group", slapd_own == own,
                f"slapd {slapd_own}, lumend {own}")
        R.check("slapd agrees one by one", slapd_seen == lumen_seen,
                f"slapd {slapd_seen}, lumend {lumen_seen}")
        R.check("slapd agrees: nothing refused was written", slapd_written == lumen_written,
                str(slapd_written))
    R.finish()


if __name__ == "__main__":
    main()
