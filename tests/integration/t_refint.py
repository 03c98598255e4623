#!/usr/bin/env python3
"""The overlay chain end to end, with referential integrity (`overlay refint`),
side by side with OpenLDAP's slapd and its refint module.

  - Deleting a user removes it from every group's member and every entry's
    seeAlso; renaming (and moving) a user rewrites those values to the new DN;
    the repaired entries carry refint_modifiersName as modifiersName.
  - The last member of a groupOfNames is replaced by refint_nothing; without
    refint_nothing the group keeps its member (removing it would break the
    schema), as in slapd.
  - slapd repairs after answering, in a second write; Lumen's repairs commit
    with the delete or rename itself, so they are visible the moment the
    client has its answer (checked at once for Lumen, polled for slapd).
  - Configuration errors name the file and line: an unknown overlay, an
    unknown refint directive, an unknown attribute, a missing
    refint_attributes.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

R = h.Results("t_refint.py")
B = sh.SUFFIX
PEOPLE, GROUPS = "ou=people," + B, "ou=groups," + B
NOTHING = "cn=nobody," + B
TEAM = "ou=team," + PEOPLE
FRANK = "uid=frank," + TEAM


def user(uid):
    return f"uid={uid},{PEOPLE}"


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n"]
    for uid, see_also in (("alice", None), ("bob", None), ("carol", "alice"),
                          ("dave", None), ("erin", None)):
        text = f"dn: {user(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\nsn: {uid}\n"
        if see_also:
            text += f"seeAlso: {user(see_also)}\n"
        out.append(text)
    out.append(f"dn: {TEAM}\nobjectClass: organizationalUnit\nou: team\n")
    out.append(f"dn: {FRANK}\nobjectClass: inetOrgPerson\nuid: frank\ncn: frank\nsn: frank\n")
    groups = {"staff": ("alice", "bob", "dave"), "admins": ("alice",), "solo": ("dave",),
              "lonely": ("erin",), "crew": ()}
    for cn, members in groups.items():
        text = f"dn: cn={cn},{GROUPS}\nobjectClass: groupOfNames\ncn: {cn}\n"
        text += "".join(f"member: {user(m)}\n" for m in members)
        if not members:
            text += f"member: {TEAM}\nmember: {FRANK}\n"
        out.append(text)
    return "\n".join(out) + "\n"


def overlay_lines(nothing):
    lines = ["index member,seeAlso eq", "overlay refint", "refint_attributes member seeAlso"]
    if nothing:
        lines.append(f"refint_nothing {NOTHING}")
    return lines


def start(kind, nothing=True):
    return sh.start_loaded(kind, "refint", overlay_lines(nothing), ldif())


def read(conn, dn, attr):
    try:
        res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", [attr, "modifiersName"])
    except ldap.NO_SUCH_OBJECT:
        return None, None
    attrs = res[0][1]
    values = sorted(v.decode().lower() for v in attrs.get(attr, []))
    modifier = [v.decode().lower() for v in attrs.get("modifiersName", [])]
    return values, modifier[0] if modifier else None


def settle(kind, conn, dn, attr, expected):
    """Lumen's repair is part of the operation: read once. slapd's comes
    after the answer: poll for up to 5 s."""
    deadline = time.time() + (0 if kind == "lumend" else 5)
    while True:
        values, modifier = read(conn, dn, attr)
        if values == expected or time.time() >= deadline:
            return values, modifier
        time.sleep(0.05)


def lower(*uids):
    return sorted(user(u).lower() for u in uids)


SQUAD_MEMBERS = sorted([f"ou=squad,{PEOPLE}".lower(), f"uid=frank,ou=squad,{PEOPLE}".lower()])


def scenario(kind):
    """Runs the steps on one server; returns {step: observed}."""
    seen = {}
    server, conn = start(kind)
    try:
        conn.delete_s(user("bob"))
        seen["delete: staff"] = settle(kind, conn, f"cn=staff,{GROUPS}", "member",
                                       lower("alice", "dave"))
        conn.rename_s(user("alice"), "uid=alice2", PEOPLE)
        seen["rename: staff"] = settle(kind, conn, f"cn=staff,{GROUPS}", "member",
                                       lower("alice2", "dave"))
        seen["rename: admins"] = settle(kind, conn, f"cn=admins,{GROUPS}", "member",
                                        lower("alice2"))
        seen["rename: seeAlso"] = settle(kind, conn, user("carol"), "seeAlso", lower("alice2"))
        conn.rename_s(user("alice2"), "uid=alice3", GROUPS)   # a move to another parent
        moved = [f"uid=alice3,{GROUPS}".lower()]
        seen["move: admins"] = settle(kind, conn, f"cn=admins,{GROUPS}", "member", moved)
        conn.delete_s(user("dave"))
        seen["last member: solo"] = settle(kind, conn, f"cn=solo,{GROUPS}", "member",
                                           [NOTHING.lower()])
        seen["unrelated: lonely"] = read(conn, f"cn=lonely,{GROUPS}", "member")[0]
        conn.rename_s(TEAM, "ou=squad", PEOPLE)   # a subtree: frank moves with it
        seen["subtree rename: crew"] = settle(kind, conn, f"cn=crew,{GROUPS}", "member",
                                              SQUAD_MEMBERS)
    finally:
        conn.unbind_s()
        server.stop(R)
        server.cleanup()
    return seen


def without_nothing(kind):
    server, conn = start(kind, nothing=False)
    try:
        conn.delete_s(user("dave"))
        time.sleep(0 if kind == "lumend" else 1)
        solo = read(conn, f"cn=solo,{GROUPS}", "member")[0]
        conn.delete_s(user("bob"))
        staff = settle(kind, conn, f"cn=staff,{GROUPS}", "member", lower("alice"))[0]
        return solo, staff
    finally:
        conn.unbind_s()
        server.stop(R)
        server.cleanup()


def compare_with_slapd():
    lumen = scenario("lumend")
    expected = {
        "delete: staff": lower("alice", "dave"),
        "rename: staff": lower("alice2", "dave"),
        "rename: admins": lower("alice2"),
        "rename: seeAlso": lower("alice2"),
        "move: admins": [f"uid=alice3,{GROUPS}".lower()],
        "last member: solo": [NOTHING.lower()],
        "subtree rename: crew": SQUAD_MEMBERS,
    }
    modifier = "cn=referential integrity overlay"
    for step, want in expected.items():
        values, who = lumen[step]
        R.check(f"lumend {step}: repaired in the same operation", values == want,
                f"got {values}, want {want}")
        R.check(f"lumend {step}: modifiersName is the overlay's", who == modifier, f"got {who}")
    R.check("lumend: an entry that references nothing changed is untouched",
            lumen["unrelated: lonely"] == lower("erin"), f"{lumen['unrelated: lonely']}")
    if sh.slapd_missing():
        R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
        return
    slapd = scenario("slapd")
    for step in expected:
        R.check(f"slapd agrees on {step}", slapd[step] == lumen[step],
                f"slapd {slapd[step]}, lumend {lumen[step]}")
    solo_l, staff_l = without_nothing("lumend")
    solo_s, staff_s = without_nothing("slapd")
    R.check("without refint_nothing the last member stays (lumend)", solo_l == lower("dave"),
            f"{solo_l}")
    R.check("without refint_nothing slapd agrees", solo_s == solo_l, f"slapd {solo_s}")
    R.check("without refint_nothing other repairs still happen (lumend)",
            staff_l == lower("alice"), f"{staff_l}")
    R.check("slapd agrees on the other repairs", staff_s == staff_l, f"slapd {staff_s}")


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-refint-")
    head = [f"include {h.ROOT}/schema/{n}.schema" for n in ("core", "cosine", "inetorgperson")]
    head += ["database mdb", f"suffix {B}", f"directory {tmp}"]
    cases = [
        ("unknown overlay", ["overlay nosuch"], 7, 'unknown overlay "nosuch"'),
        ("unknown directive", ["overlay refint", "refint_attributes member", "refint_bogus x"],
         9, 'unknown directive "refint_bogus"'),
        ("unknown attribute", ["overlay refint", "refint_attributes member nosuchattr"], 8,
         'unknown attribute "nosuchattr"'),
        ("missing attributes", ["overlay refint"], 7, 'expected a "refint_attributes" line'),
        ("bad nothing DN", ["overlay refint", "refint_attributes member",
                            "refint_nothing notadn"], 9, "expected a DN"),
        ("overlay outside a database", None, 1, "allowed only inside a database section"),
        ("a module Lumen lacks", "moduleload /usr/lib/ldap/nosuch.la", 1,
         'Lumen has no module "nosuch"'),
    ]
    for label, lines, line_no, message in cases:
        path = os.path.join(tmp, "bad.conf")
        if isinstance(lines, str):
            text = [lines] + head   # a global line
        else:
            text = ["overlay refint"] if lines is None else head + lines
        with open(path, "w") as f:
            f.write("\n".join(text) + "\n")
        rc, out = h.lumend_check(path)
        R.check(f"config: {label} fails -T", rc == 1, f"exit {rc}: {out}")
        R.check(f"config: {label} names file, line and reason",
                f"{path}:{line_no}" in out and message in out, out)
    good = os.path.join(tmp, "good.conf")
    modules = ["modulepath /usr/lib/ldap", "moduleload back_mdb", "moduleload refint.la"]
    with open(good, "w") as f:
        f.write("\n".join(modules + head + overlay_lines(True)) + "\n")
    rc, out = h.lumend_check(good)
    R.check("config: a good refint section (with slapd's moduleload lines) passes -T",
            rc == 0, out)
    R.check("config: moduleload lines are logged as ignored",
            f"{good}:3: moduleload refint: built into Lumen; line ignored" in out, out)
    R.check("config: indexed refint attributes get no warning", "no equality index" not in out,
            out)
    unindexed = os.path.join(tmp, "unindexed.conf")
    with open(unindexed, "w") as f:
        f.write("\n".join(head + overlay_lines(True)[1:]) + "\n")
    rc, out = h.lumend_check(unindexed)
    R.check("config: an unindexed refint attribute is named at start-up",
            rc == 0 and "member has no equality index" in out, out)


compare_with_slapd()
config_errors()
R.finish()
