#!/usr/bin/env python3
"""Write the fuzz_backend_ops seeds (tests/fuzz/corpus/fuzz_backend_ops/):
each a sequence of LDAPMessages (BER, concatenated) applied to the target's
11-entry tree under dc=example,dc=com. Run from the repository root."""
import os

from ldap_ber import (AND, NOT, OR, add, attr, boolean, change, compare, ctl, delete,  # noqa: F401
                      enum, eq, i, mod, moddn, o, present, seq, sub)

OUT = "tests/fuzz/corpus/fuzz_backend_ops"
S = "dc=example,dc=com"
P = "ou=People," + S

ge = lambda a, v: seq(o(a), o(v), tag=0xA5)
approx = lambda a, v: seq(o(a), o(v), tag=0xA8)
_id = [0]


def msg(op, *controls):
    _id[0] += 1
    parts = [i(_id[0]), op]
    if controls:
        parts.append(seq(*controls, tag=0xA0))
    return seq(*parts)


def search(base, scope, f, size=0, attrs=()):
    return seq(o(base), enum(scope), enum(0), i(size), i(0), boolean(False), f, seq(*(o(a) for a in attrs)), tag=0x63)


paged = lambda n, cookie=b"": ctl("1.2.840.113556.1.4.319", seq(i(n), o(cookie)), True)
assertion = lambda f: ctl("1.3.6.1.1.12", f, True)
pre_read = lambda *a: ctl("1.3.6.1.1.13.1", seq(*(o(x) for x in a)))
post_read = lambda *a: ctl("1.3.6.1.1.13.2", seq(*(o(x) for x in a)))
person = lambda uid, cn, sn: add(f"uid={uid},{P}", attr("objectClass", "inetOrgPerson"), attr("uid", uid), attr("cn", cn), attr("sn", sn), attr("mail", f"{uid}@example.com"))

seeds = {
    "add-search": [person("erin", "Erin Doe", "Doe"), search(P, 1, eq("uid", "erin"))],
    "add-post-read": [msg(person("frank", "Frank F", "Eff"), post_read("*", "+"))],
    "add-exists": [person("alice", "Alice", "Smith")],
    "add-no-parent": [add(f"uid=x,ou=Nowhere,{S}", attr("objectClass", "person"), attr("cn", "x"), attr("sn", "y"))],
    "add-schema-violation": [add(f"uid=bad,{P}", attr("objectClass", "inetOrgPerson"), attr("uid", "bad"))],
    "add-outside": [add("dc=other", attr("objectClass", "dcObject"), attr("objectClass", "organization"), attr("dc", "other"), attr("o", "x"))],
    "add-posix": [add(f"uid=gina,{P}", attr("objectClass", "inetOrgPerson", "posixAccount"), attr("uid", "gina"), attr("cn", "Gina"), attr("sn", "G"), attr("uidNumber", "1002"), attr("gidNumber", "100"), attr("homeDirectory", "/home/gina")), search(S, 2, ge("uidNumber", "1000"))],
    "delete-leaf": [msg(delete(f"uid=bob,{P}"), pre_read("cn", "mail")), search(S, 2, present("objectClass"))],
    "delete-nonleaf": [delete(P)],
    "delete-all": [delete(f"cn=admins,ou=Groups,{S}"), delete(f"ou=Groups,{S}"), delete(f"uid=carol,ou=Engineering,{P}"), delete(f"uid=dave,ou=Engineering,{P}"), delete(f"ou=Engineering,{P}"), delete(f"uid=alice,{P}"), delete(f"uid=bob,{P}"), delete(f"cn=J\u00fcrgen M\u00fcller,{P}"), delete(f"cn=Smith\\, John,{P}"), delete(P), delete(S), search(S, 2, present("objectClass"))],
    "modify-replace": [msg(mod(f"uid=alice,{P}", change(2, "mail", "a@example.org"), change(0, "description", "second"), change(1, "telephoneNumber")), pre_read("mail"), post_read("mail", "modifyTimestamp")), search(S, 2, eq("mail", "a@example.org"))],
    "modify-increment": [mod(f"uid=carol,ou=Engineering,{P}", change(3, "uidNumber", "5")), search(S, 2, eq("uidNumber", "1006"))],
    "modify-rdn-attr": [mod(f"uid=alice,{P}", change(1, "uid", "alice"))],
    "modify-objectclass": [mod(f"uid=dave,ou=Engineering,{P}", change(0, "objectClass", "posixAccount"), change(0, "uidNumber", "7"), change(0, "gidNumber", "7"), change(0, "homeDirectory", "/h"))],
    "modify-assertion": [msg(mod(f"uid=bob,{P}", change(2, "sn", "Smith")), assertion(eq("sn", "Smyth"))), msg(mod(f"uid=bob,{P}", change(2, "sn", "X")), assertion(eq("sn", "Smyth")))],
    "moddn-rename": [msg(moddn(f"uid=bob,{P}", "uid=robert", True), pre_read("uid"), post_read("uid")), search(P, 1, present("uid"))],
    "moddn-keep-old": [moddn(f"uid=alice,{P}", "cn=Alice Smith", False), compare(f"cn=Alice Smith,{P}", "uid", "alice")],
    "moddn-move-subtree": [moddn(f"ou=Engineering,{P}", "ou=Engineering", True, f"ou=Groups,{S}"), search(S, 2, present("uid"), attrs=("hasSubordinates", "numSubordinates"))],
    "moddn-below-itself": [moddn(P, "ou=People", True, f"ou=Engineering,{P}")],
    "moddn-multi-rdn": [moddn(f"uid=dave,ou=Engineering,{P}", "uid=dave+cn=Dave", False), search(P, 2, AND(eq("uid", "dave"), eq("cn", "Dave")))],
    "moddn-exists": [moddn(f"uid=alice,{P}", "uid=bob", True)],
    "moddn-suffix": [moddn(S, "dc=elsewhere", True)],
    "compare": [compare(f"uid=alice,{P}", "cn", "ali"), compare(f"uid=alice,{P}", "name", "Alice Smith"), compare(f"uid=alice,{P}", "uidNumber", "1"), compare(f"uid=nobody,{P}", "cn", "x"), compare(f"uid=alice,{P}", "entryDN", f"uid=alice,{P}")],
    "search-scopes": [search(S, 0, present("objectClass")), search(S, 1, present("objectClass")), search(S, 2, present("objectClass")), search(S, 3, present("objectClass"))],
    "search-filters": [search(S, 2, AND(eq("objectClass", "person"), OR(sub("cn", "A", ("i",), None), sub("sn", None, (), "th")), NOT(eq("uid", "bob")))), search(S, 2, approx("sn", "Smyth")), search(S, 2, eq("member", f"uid=alice,{P}"))],
    "search-virtual": [search(S, 2, eq("hasSubordinates", "TRUE")), search(S, 2, eq("entryDN", P))],
    "search-size-limit": [search(S, 2, present("objectClass"), size=3)],
    "search-paged": [msg(search(S, 2, present("objectClass")), paged(2)), msg(search(S, 2, present("objectClass")), paged(0))],
    "search-paged-bad-cookie": [msg(search(S, 2, present("objectClass")), paged(2, b"\x00" * 25))],
    "search-no-base": [search(f"ou=Nowhere,{S}", 2, present("objectClass"))],
    "search-assertion": [msg(search(P, 0, present("objectClass")), assertion(eq("ou", "People"))), msg(search(P, 0, present("objectClass")), assertion(eq("ou", "Nope")))],
    "mixed": [person("hank", "Hank", "Hill"), moddn(f"uid=hank,{P}", "uid=henry", True, f"ou=Engineering,{P}"), mod(f"uid=henry,ou=Engineering,{P}", change(0, "cn", "Henry")), delete(f"uid=henry,ou=Engineering,{P}"), search(S, 2, sub("cn", "H"))],
}
os.makedirs(OUT, exist_ok=True)
for name, ops in seeds.items():
    data = b"".join(op if op[0] == 0x30 else msg(op) for op in ops)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
