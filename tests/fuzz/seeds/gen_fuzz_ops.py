#!/usr/bin/env python3
"""Write the fuzz_ops seeds (tests/fuzz/corpus/fuzz_ops/): each a sequence of
LDAPMessages (BER, concatenated) run on one connection against the target's
12-entry tree under dc=example,dc=com (people alice/bob with passwords
alice-pw/bob-pw, groups staff/admins/empty, ou=Secret that only the rootdn
reads; rootdn cn=admin,dc=example,dc=com / secret) behind its access rules
and the syncprov, memberof, refint and unique overlays. Run from the
repository root."""
import os

from ldap_ber import (AND, NOT, OR, add, attr, boolean, change, compare, ctl, delete,  # noqa: F401
                      enum, eq, i, mod, moddn, o, present, seq, sub, tlv)

OUT = "tests/fuzz/corpus/fuzz_ops"
S = "dc=example,dc=com"
P = "ou=People," + S
G = "ou=Groups," + S
ROOTDN = "cn=admin," + S
ALICE, BOB = f"uid=alice,{P}", f"uid=bob,{P}"


_id = [0]


def msg(op, *controls, msgid=None):
    if msgid is None:
        _id[0] += 1
        msgid = _id[0]
    parts = [i(msgid), op]
    if controls:
        parts.append(seq(*controls, tag=0xA0))
    return seq(*parts)


bind = lambda dn, pw: seq(i(3), o(dn), o(pw, 0x80), tag=0x60)
sasl_bind = lambda mech, cred=None: seq(i(3), o(""), seq(o(mech), *([o(cred)] if cred is not None else []), tag=0xA3), tag=0x60)
unbind = lambda: tlv(0x42, b"")
abandon = lambda n: i(n, 0x50)
extended = lambda oid, value=None: seq(o(oid, 0x80), *([o(value, 0x81)] if value is not None else []), tag=0x77)


def search(base, scope, f, size=0, attrs=(), types_only=False):
    return seq(o(base), enum(scope), enum(0), i(size), i(0), boolean(types_only), f,
               seq(*(o(a) for a in attrs)), tag=0x63)


WHOAMI = "1.3.6.1.4.1.4203.1.11.3"
PASSMOD = "1.3.6.1.4.1.4203.1.11.1"
STARTTLS = "1.3.6.1.4.1.1466.20037"
passmod = lambda user=None, old=None, new=None: extended(PASSMOD, seq(
    *([o(user, 0x80)] if user else []), *([o(old, 0x81)] if old else []),
    *([o(new, 0x82)] if new else [])))
paged = lambda n, cookie=b"": ctl("1.2.840.113556.1.4.319", seq(i(n), o(cookie)), True)
assertion = lambda f: ctl("1.3.6.1.1.12", f, True)
pre_read = lambda *a: ctl("1.3.6.1.1.13.1", seq(*(o(x) for x in a)))
post_read = lambda *a: ctl("1.3.6.1.1.13.2", seq(*(o(x) for x in a)))
manage_dsa_it = lambda: ctl("2.16.840.1.113730.3.4.2", critical=True)
sort = lambda *keys: ctl("1.2.840.113556.1.4.473", seq(*(seq(o(k)) for k in keys)), True)
vlv = lambda before, after, offset, count: ctl("2.16.840.1.113730.3.4.9", seq(i(before), i(after), seq(i(offset), i(count), tag=0xA0)), True)
sync = lambda mode, cookie=None: ctl("1.3.6.1.4.1.4203.1.9.1.1", seq(enum(mode), *([o(cookie)] if cookie else [])), True)
person = lambda uid, *extra: add(f"uid={uid},{P}", attr("objectClass", "inetOrgPerson"), attr("uid", uid), attr("cn", uid.title()), attr("sn", "Doe"), *extra)
ALL = present("objectClass")

seeds = {
    "anonymous-read": [search(S, 2, ALL, attrs=("*", "+")), search(f"ou=Secret,{S}", 2, ALL), compare(ALICE, "userPassword", "alice-pw"), search(S, 2, eq("userPassword", "alice-pw"))],
    "bind-self": [bind(ALICE, "alice-pw"), extended(WHOAMI), search(ALICE, 0, ALL, attrs=("userPassword", "memberOf")), msg(mod(ALICE, change(2, "mail", "a@example.org")), pre_read("mail"), post_read("mail")), unbind()],
    "bind-failures": [bind(ALICE, "wrong"), bind(f"uid=nobody,{P}", "x"), bind(ALICE, ""), bind("not a dn", "x"), sasl_bind("EXTERNAL"), sasl_bind("DIGEST-MD5", b"x"), extended(WHOAMI)],
    "rootdn-writes": [bind(ROOTDN, "secret"), person("erin", attr("mail", "erin@example.com")), mod(f"cn=staff,{G}", change(0, "member", f"uid=erin,{P}")), search(P, 1, eq("memberOf", f"cn=staff,{G}"), attrs=("memberOf",)), moddn(f"uid=erin,{P}", "uid=erin2", True), search(G, 2, ALL, attrs=("member",)), delete(f"uid=erin2,{P}"), search(S, 2, eq("member", f"uid=erin2,{P}"))],
    "refint-delete": [bind(ROOTDN, "secret"), delete(BOB), search(G, 1, ALL, attrs=("member",)), moddn(ALICE, "uid=alicia", True, G), search(S, 2, eq("uid", "alicia"), attrs=("memberOf",))],
    "unique": [bind(ROOTDN, "secret"), person("dupe", attr("mail", "alice@example.com")), person("bob"), mod(BOB, change(0, "mail", "carol@example.com")), mod(BOB, change(2, "uid", "carol"))],
    "acl-writes": [bind(BOB, "bob-pw"), mod(ALICE, change(2, "sn", "X")), mod(f"cn=staff,{G}", change(0, "member", BOB)), delete(f"cn=vault,ou=Secret,{S}"), person("mallory"), moddn(BOB, "uid=robert", True), bind(ALICE, "alice-pw"), mod(f"cn=empty,{G}", change(0, "member", ALICE))],
    "passmod": [bind(ALICE, "alice-pw"), extended(PASSMOD, seq(o("alice-pw", 0x81), o("new-pw", 0x82))), bind(ALICE, "new-pw"), extended(PASSMOD, seq()), extended(PASSMOD, seq(o(BOB, 0x80), o("x", 0x82))), extended(PASSMOD, b"\x30\x03\x80\x01"), bind("", ""), extended(PASSMOD, seq(o(ALICE, 0x80), o("y", 0x82)))],
    "extended-misc": [extended(STARTTLS), extended(WHOAMI, b"x"), extended("1.2.3.4"), extended("1.3.6.1.1.8", seq(i(5))), msg(extended(WHOAMI), ctl("1.2.3.4", critical=True))],
    "abandon-unbind": [msg(abandon(1)), search(S, 2, ALL), msg(abandon(2)), abandon(99), compare(ALICE, "cn", "Alice Smith"), unbind(), search(S, 2, ALL)],
    "search-controls": [bind(ALICE, "alice-pw"), msg(search(S, 2, ALL, attrs=("cn",)), paged(3)), msg(search(P, 1, ALL), sort("sn", "cn")), msg(search(P, 1, ALL), sort("cn"), vlv(1, 1, 2, 0)), msg(search(P, 0, ALL), assertion(eq("ou", "People"))), msg(search(S, 2, AND(eq("objectClass", "person"), OR(sub("cn", "A"), NOT(eq("uid", "bob")))), size=2), manage_dsa_it()), search(S, 2, ALL, types_only=True), search("", 0, ALL, attrs=("+",)), search("cn=Subschema", 0, ALL, attrs=("objectClasses",)), search("cn=Monitor", 2, ALL)],
    "sync": [bind(ROOTDN, "secret"), msg(search(S, 2, ALL, attrs=("entryUUID", "entryCSN")), sync(1)), person("frank"), msg(search(S, 2, ALL), sync(1, b"rid=001,csn=20260101000000.000000Z#000000#000#000000")), msg(search(S, 2, ALL), sync(3)), delete(f"uid=frank,{P}")],
    "compare": [compare(ALICE, "cn", "alice smith"), compare(ALICE, "mail", "x"), compare(f"cn=vault,ou=Secret,{S}", "sn", "hidden"), compare(ALICE, "nosuchattr", "x"), compare(f"uid=ghost,{P}", "cn", "x"), bind(ROOTDN, "secret"), compare(f"cn=vault,ou=Secret,{S}", "sn", "hidden"), compare(ALICE, "memberOf", f"cn=staff,{G}")],
    "bad-requests": [seq(i(7), tlv(0x6B, enum(0) + o("") + o(""))), search(S, 2, ALL)],
    "bad-controls": [msg(delete(ALICE), ctl("1.2.3.4", critical=True)), msg(search(S, 2, ALL), paged(-1)), msg(delete(ALICE), assertion(b"\xa3\x00")), msg(mod(ALICE, change(0, "cn", "x")), pre_read("*"), pre_read("*")), msg(add(f"uid=z,{P}", attr("objectClass", "person")), sync(1))],
    "message-ids": [msg(compare(ALICE, "cn", "x"), msgid=0), msg(compare(ALICE, "cn", "x"), msgid=2147483647), msg(search(S, 0, ALL), msgid=5), msg(search(S, 0, ALL), msgid=5)],
}
os.makedirs(OUT, exist_ok=True)
for name, ops in seeds.items():
    data = b"".join(op if op[0] == 0x30 else msg(op) for op in ops)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
