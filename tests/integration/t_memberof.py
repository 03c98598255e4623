#!/usr/bin/env python3
"""Reverse group membership (`overlay memberof`), side by side with OpenLDAP's
slapd and its memberof module.

  - Adding a group, adding/removing/replacing its members, renaming and
    deleting it keep memberOf on the members; with memberof-refint,
    deleting or renaming a member updates its groups. Lumen changes the
    members in the group's own transaction, so the values are there when
    the client has its answer (read at once for Lumen, polled for slapd).
  - Nested groups: a member of an inner group gets only the inner group's
    DN (OpenLDAP 2.5 computes no transitive membership either).
  - memberOf is operational (returned for "+", not for "*") and clients
    cannot write it: constraintViolation "memberOf: no user modification
    allowed", as slapd.
  - memberof-dangling error / drop: the same result codes and values.
  - (memberOf=group) with `index memberOf eq` is answered from the index.
  - Lumen differs: an entry added after a group that already names it gets
    the group's DN (slapd leaves it without memberOf).
  - lumenadd computes memberOf when the database has `overlay memberof`,
    equal to what adds over LDAP produce; `lumenindex --memberof`
    recomputes every memberOf from the groups.
  - Configuration errors name the file and line.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_memberof.py")
B = sh.SUFFIX
PEOPLE, GROUPS = "ou=people," + B, "ou=groups," + B


def user(uid):
    return f"uid={uid},{PEOPLE}"


def group(cn):
    return f"cn={cn},{GROUPS}"


GROUP_MEMBERS = {"staff": ("alice", "bob", "dave"), "admins": ("alice",),
                 "solo": ("dave",)}


def base_ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n"]
    return out


def people_ldif(uids):
    return [f"dn: {user(u)}\nobjectClass: inetOrgPerson\nuid: {u}\ncn: {u}\nsn: {u}\n"
            for u in uids]


def groups_ldif(groups):
    out = []
    for cn, members in groups.items():
        text = f"dn: {group(cn)}\nobjectClass: groupOfNames\ncn: {cn}\n"
        text += "".join(f"member: {m if '=' in m else user(m)}\n" for m in members)
        out.append(text)
    return out


def ldif():
    return "\n".join(base_ldif() + people_ldif(("alice", "bob", "carol", "dave", "erin"))
                     + groups_ldif(GROUP_MEMBERS)) + "\n"


def overlay_lines(extra=()):
    return ["index member,memberOf eq", "overlay memberof", *extra]


def start(kind, extra=(), data=None):
    return sh.start_loaded(kind, "memberof", overlay_lines(extra),
                           ldif() if data is None else data)

def member_of(conn, dn):
    try:
        res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["memberOf"])
    except ldap.NO_SUCH_OBJECT:
        return None
    return sorted(v.decode().lower() for v in res[0][1].get("memberOf", []))


def members(conn, dn):
    res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["member"])
    return sorted(v.decode().lower() for v in res[0][1].get("member", []))


def settle(kind, read, expected):
    """Lumen's memberOf is part of the operation: read once. slapd's may come
    after the answer: poll for up to 5 s."""
    deadline = time.time() + (0 if kind == "lumend" else 5)
    while True:
        got = read()
        if got == expected or time.time() >= deadline:
            return got
        time.sleep(0.05)


def low(*dns):
    return sorted(d.lower() for d in dns)


def error_of(fn):
    try:
        fn()
        return ("success", "")
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (type(e).__name__, info.get("info", ""))


def scenario(kind):
    """The steps on one server; returns {step: observed}."""
    seen = {}
    server, conn = start(kind, extra=["memberof-refint TRUE"])
    try:
        def mo(uid, want):
            return settle(kind, lambda: member_of(conn, user(uid)), want)
        seen["loaded: alice"] = mo("alice", low(group("staff"), group("admins")))
        seen["loaded: dave"] = mo("dave", low(group("staff"), group("solo")))
        seen["loaded: carol"] = mo("carol", [])
        conn.modify_s(group("admins"), [(ldap.MOD_ADD, "member", [user("carol").encode()])])
        seen["member added"] = mo("carol", low(group("admins")))
        conn.modify_s(group("staff"), [(ldap.MOD_DELETE, "member", [user("bob").encode()])])
        seen["member removed"] = mo("bob", [])
        conn.modify_s(group("solo"), [(ldap.MOD_REPLACE, "member", [user("erin").encode()])])
        seen["replaced: dave"] = mo("dave", low(group("staff")))
        seen["replaced: erin"] = mo("erin", low(group("solo")))
        conn.rename_s(group("admins"), "cn=wheel", GROUPS)
        seen["group renamed"] = mo("alice", low(group("staff"), group("wheel")))
        conn.delete_s(group("solo"))
        seen["group deleted"] = mo("erin", [])
        # a group inside a group: no transitive membership
        conn.add_s(group("outer"), [("objectClass", [b"groupOfNames"]), ("cn", [b"outer"]),
                                    ("member", [group("wheel").encode()])])
        seen["nested: wheel"] = settle(kind, lambda: member_of(conn, group("wheel")),
                                       low(group("outer")))
        seen["nested: carol"] = mo("carol", low(group("wheel")))
        # memberof-refint: a member renamed, then deleted
        conn.rename_s(user("carol"), "uid=carol2", PEOPLE)
        seen["refint rename: wheel"] = settle(
            kind, lambda: members(conn, group("wheel")), low(user("alice"), user("carol2")))
        conn.delete_s(user("dave"))
        seen["refint delete: staff"] = settle(kind, lambda: members(conn, group("staff")),
                                              low(user("alice")))
        # operational: not in "*", in "+"
        res = conn.search_s(user("alice"), ldap.SCOPE_BASE, "(objectClass=*)", ["*"])
        seen["not in *"] = "memberOf" in res[0][1]
        res = conn.search_s(user("alice"), ldap.SCOPE_BASE, "(objectClass=*)", ["+"])
        seen["in +"] = "memberOf" in res[0][1]
        # filter on memberOf
        res = conn.search_s(B, ldap.SCOPE_SUBTREE, f"(memberOf={group('staff')})", ["1.1"])
        seen["filter"] = sorted(dn.lower() for dn, _ in res)
        # clients cannot write memberOf
        seen["write: add attr"] = error_of(lambda: conn.modify_s(
            user("erin"), [(ldap.MOD_ADD, "memberOf", [group("staff").encode()])]))
        seen["write: replace"] = error_of(lambda: conn.modify_s(
            user("alice"), [(ldap.MOD_REPLACE, "memberOf", [])]))
        seen["write: in add"] = error_of(lambda: conn.add_s(user("frank"), [
            ("objectClass", [b"inetOrgPerson"]), ("uid", [b"frank"]), ("cn", [b"f"]),
            ("sn", [b"f"]), ("memberOf", [group("staff").encode()])]))
        seen["after refused writes: erin"] = member_of(conn, user("erin"))
    finally:
        conn.unbind_s()
        server.stop(R)
    return seen


def dangling(kind, mode):
    server, conn = start(kind, extra=[f"memberof-dangling {mode}"])
    seen = {}
    try:
        ghost = user("ghost").encode()
        seen["add"] = error_of(lambda: conn.add_s(group("g1"), [
            ("objectClass", [b"groupOfNames"]), ("cn", [b"g1"]),
            ("member", [ghost, user("alice").encode()])]))
        seen["add: alice"] = settle(kind, lambda: member_of(conn, user("alice")),
                                    low(group("staff"), group("admins"), group("g1"))
                                    if seen["add"][0] == "success" else
                                    low(group("staff"), group("admins")))
        seen["modify"] = error_of(lambda: conn.modify_s(
            group("staff"), [(ldap.MOD_ADD, "member", [ghost])]))
        seen["staff"] = members(conn, group("staff"))
        seen["only dangling"] = error_of(lambda: conn.add_s(group("g2"), [
            ("objectClass", [b"groupOfNames"]), ("cn", [b"g2"]), ("member", [ghost])]))
    finally:
        conn.unbind_s()
        server.stop(R)
    return seen


def late_member(kind):
    """A group names an entry before it exists; then the entry is added."""
    server, conn = start(kind)
    try:
        conn.modify_s(group("admins"), [(ldap.MOD_ADD, "member", [user("zoe").encode()])])
        conn.add_s(user("zoe"), [("objectClass", [b"inetOrgPerson"]), ("uid", [b"zoe"]),
                                 ("cn", [b"z"]), ("sn", [b"z"])])
        time.sleep(0 if kind == "lumend" else 0.5)
        return member_of(conn, user("zoe"))
    finally:
        conn.unbind_s()
        server.stop(R)


def compare_with_slapd():
    lumen = scenario("lumend")
    expected = {
        "loaded: alice": low(group("staff"), group("admins")),
        "loaded: dave": low(group("staff"), group("solo")),
        "loaded: carol": [],
        "member added": low(group("admins")),
        "member removed": [],
        "replaced: dave": low(group("staff")),
        "replaced: erin": low(group("solo")),
        "group renamed": low(group("staff"), group("wheel")),
        "group deleted": [],
        "nested: wheel": low(group("outer")),
        "nested: carol": low(group("wheel")),
        "refint rename: wheel": low(user("alice"), user("carol2")),
        "refint delete: staff": low(user("alice")),
        "not in *": False,
        "in +": True,
        "filter": low(user("alice")),
        "write: add attr": ("CONSTRAINT_VIOLATION", "memberOf: no user modification allowed"),
        "write: replace": ("CONSTRAINT_VIOLATION", "memberOf: no user modification allowed"),
        "write: in add": ("CONSTRAINT_VIOLATION", "memberOf: no user modification allowed"),
        "after refused writes: erin": [],
    }
    for step, want in expected.items():
        R.check(f"lumend {step}", lumen[step] == want, f"got {lumen[step]}, want {want}")
    lumen_dangling = {mode: dangling("lumend", mode) for mode in ("ignore", "drop", "error")}
    ghost = user("ghost").lower()
    R.check("lumend dangling error: the add is refused",
            lumen_dangling["error"]["add"] == ("CONSTRAINT_VIOLATION",
                                               "adding non-existing object as group member"),
            f"{lumen_dangling['error']['add']}")
    R.check("lumend dangling error: the modify is refused, nothing written",
            lumen_dangling["error"]["modify"][0] == "CONSTRAINT_VIOLATION"
            and ghost not in lumen_dangling["error"]["staff"], f"{lumen_dangling['error']}")
    R.check("lumend dangling drop: the ghost is dropped, the rest kept",
            lumen_dangling["drop"]["modify"] == ("success", "")
            and ghost not in lumen_dangling["drop"]["staff"]
            and lumen_dangling["drop"]["add: alice"] == low(group("staff"), group("admins"),
                                                            group("g1")),
            f"{lumen_dangling['drop']}")
    R.check("lumend dangling drop: a group of ghosts only breaks the schema",
            lumen_dangling["drop"]["only dangling"][0] == "OBJECT_CLASS_VIOLATION",
            f"{lumen_dangling['drop']['only dangling']}")
    R.check("lumend dangling ignore: the ghost stays",
            ghost in lumen_dangling["ignore"]["staff"], f"{lumen_dangling['ignore']}")
    R.check("lumend: an entry added after its group gets memberOf (slapd does not)",
            late_member("lumend") == low(group("admins")))
    if sh.slapd_missing():
        R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
        return
    slapd = scenario("slapd")
    for step in expected:
        R.check(f"slapd agrees on {step}", slapd[step] == lumen[step],
                f"slapd {slapd[step]}, lumend {lumen[step]}")
    for mode in ("ignore", "drop", "error"):
        s = dangling("slapd", mode)
        for step in ("add", "add: alice", "modify", "staff", "only dangling"):
            l_val = lumen_dangling[mode][step]
            if step == "only dangling":   # compare the result code only
                s_val, l_val = s[step][0], l_val[0]
            else:
                s_val = s[step]
            R.check(f"slapd agrees on dangling {mode}: {step}", s_val == l_val,
                    f"slapd {s_val}, lumend {l_val}")
    R.check("slapd leaves a late member without memberOf (where Lumen differs)",
            late_member("slapd") == [])


def index_used():
    """With `index memberOf eq`, (memberOf=...) is not an unindexed search;
    without it, the log says it was."""
    for indexed in (True, False):
        server = sh.make_server("lumend", global_lines=[], db_lines=(
            ["index member eq", "overlay memberof"] if not indexed else overlay_lines()))
        server.start()
        conn = ldap.initialize(server.uri)
        conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        server.ldapadd(path)
        res = conn.search_s(B, ldap.SCOPE_SUBTREE, f"(memberOf={group('staff')})", ["1.1"])
        conn.unbind_s()
        time.sleep(0.3)
        unindexed = "unindexed attr=memberOf" in server.log_text()
        what = "with" if indexed else "without"
        R.check(f"(memberOf=...) {what} its index finds the members", len(res) == 3,
                f"{res}")
        R.check(f"(memberOf=...) {what} its index: unindexed logged = {not indexed}",
                unindexed == (not indexed), server.log_text()[-1500:])
        server.stop(R)


def tools():
    """lumenadd computes memberOf; lumenindex --memberof recomputes it."""
    # the LDIF in an order LDAP adds could not follow to the same result in
    # slapd: groups first, their members after
    data = "\n".join(base_ldif() + groups_ldif(GROUP_MEMBERS)
                     + people_ldif(("alice", "bob", "carol", "dave", "erin"))) + "\n"
    over_ldap, conn = start("lumend", data=data)
    try:
        want = {u: member_of(conn, user(u)) for u in ("alice", "bob", "carol", "dave")}
    finally:
        conn.unbind_s()
        over_ldap.stop(R)
    loaded = sh.make_server("lumend", db_lines=overlay_lines())
    path = os.path.join(loaded.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(data)
    rc, out = loaded.tool("lumenadd", "-l", path)
    R.check("lumenadd loads with overlay memberof", rc == 0, out)
    loaded.start()
    conn = ldap.initialize(loaded.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    got = {u: member_of(conn, user(u)) for u in want}
    R.check("lumenadd's memberOf equals what LDAP adds produce", got == want,
            f"lumenadd {got}, ldap {want}")
    R.check("and it is what the groups say",
            want["alice"] == low(group("staff"), group("admins")) and want["carol"] == [])
    conn.unbind_s()
    loaded.terminate()
    # a database loaded without the overlay, then recomputed
    plain = sh.make_server("lumend", db_lines=["index member,memberOf eq"])
    with open(os.path.join(plain.tmp, "data.ldif"), "w") as f:
        f.write(data)
    rc, out = plain.tool("lumenadd", "-l", os.path.join(plain.tmp, "data.ldif"))
    with open(plain.config, "a") as f:
        f.write("overlay memberof\n")
    rc, out = plain.tool("lumenindex", "--memberof")
    R.check("lumenindex --memberof runs", rc == 0, out)
    plain.start()
    conn = ldap.initialize(plain.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    got = {u: member_of(conn, user(u)) for u in want}
    R.check("lumenindex --memberof computes memberOf from the groups", got == want,
            f"recomputed {got}, want {want}")
    conn.unbind_s()
    R.check("lumend exits 0 on SIGTERM", plain.terminate() == 0, plain.log_text()[-2000:])
    R.check("no sanitizer reports", plain.sanitizer_reports() == "", plain.sanitizer_reports())
    rc, out = plain.tool("lumenindex", "--check")
    R.check("the indexes agree with the recomputed entries", rc == 0, out)
    rc, out = plain.tool("lumenindex", "--memberof", "member")
    R.check("lumenindex --memberof takes no attribute", rc == 2, out)
    plain.cleanup()
    loaded.cleanup()


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-memberof-")
    head = h.config_head(tmp, B)
    cases = [
        ("unknown group class", ["overlay memberof", "memberof-group-oc nosuchclass"], 8,
         'unknown object class "nosuchclass"'),
        ("unknown attribute", ["overlay memberof", "memberof-member-ad nosuchattr"], 8,
         'unknown attribute "nosuchattr"'),
        ("attribute not DN-valued", ["overlay memberof", "memberof-memberof-ad cn"], 8,
         'not DN-valued: "cn"'),
        ("bad dangling", ["overlay memberof", "memberof-dangling sometimes"], 8,
         'expected ignore, drop or error, not "sometimes"'),
        ("bad refint", ["overlay memberof", "memberof-refint maybe"], 8,
         'expected TRUE or FALSE, not "maybe"'),
        ("unknown directive", ["overlay memberof", "memberof-bogus x"], 8,
         'unknown directive "memberof-bogus"'),
        ("bad dangling-error", ["overlay memberof", "memberof-dangling-error nosuchcode"], 8,
         'unknown result code "nosuchcode"'),
    ]
    h.check_config_errors(R, tmp, head, cases)
    good = os.path.join(tmp, "good.conf")
    with open(good, "w") as f:
        f.write("\n".join(head + overlay_lines([
            "memberof-group-oc groupOfNames", "memberof-member-ad member",
            "memberof-memberof-ad memberOf", "memberof-dangling drop", "memberof-refint TRUE",
            f"memberof-dn cn=admin,{B}", "memberof-dangling-error noSuchObject"])) + "\n")
    rc, out = h.lumend_check(good)
    R.check("config: a full memberof section passes -T", rc == 0, out)


compare_with_slapd()
index_used()
tools()
config_errors()
R.finish()
