#!/usr/bin/env python3
"""Write the fuzz_controls seeds (tests/fuzz/corpus/fuzz_controls/).

Structured inputs as fuzz_controls.c describes them: an operation byte, then
per control a header byte (OID choice | 8 critical | 16 has value | 32 two
length bytes), the length and the value. Raw inputs (0x80 + an LDAPMessage)
come from fuzz_ldap_message's seeds that carry controls.
Run from the repository root: python3 tests/fuzz/seeds/gen_controls.py
"""
import os

from ldap_ber import i, o as octets, seq, tlv

OUT = "tests/fuzz/corpus/fuzz_controls"
SEARCH, ADD, MODIFY, DELETE, MODDN, COMPARE, BIND = range(7)
MANAGE, ASSERTION, PRE, POST, PAGED, MATCHED, OID_IS_VALUE, EMPTY = range(8)
CRIT, VALUE = 8, 16


def integer(v):
    return i(v)


def control(oid, value=None, critical=False):
    h = oid | (CRIT if critical else 0)
    if value is None:
        return bytes([h, 0])
    h |= VALUE
    if len(value) > 255:
        return bytes([h | 32]) + len(value).to_bytes(2, "big") + value
    return bytes([h, len(value)]) + value


eq = lambda a, v: seq(octets(a), octets(v), tag=0xA3)
present = lambda a: octets(a, tag=0x87)
substrings = seq(octets("cn"), seq(octets("Fu", 0x80), octets("z", 0x81), octets("Ee", 0x82)), tag=0xA4)
ge = seq(octets("createTimestamp"), octets("20250101000000Z"), tag=0xA5)
le = seq(octets("sn"), octets("Ef"), tag=0xA6)
approx = seq(octets("cn"), octets("fuzz ee"), tag=0xA8)
ext = seq(octets("caseExactMatch", 0x81), octets("cn", 0x82), octets("Fuzz Ee", 0x83),
          tlv(0x84, b"\xff"), tag=0xA9)
ext_dn = seq(octets("ou", 0x82), octets("People", 0x83), tlv(0x84, b"\xff"), tag=0xA9)
and_ = seq(eq("objectClass", "person"), present("mail"), tag=0xA0)
or_ = seq(eq("sn", "nope"), substrings, ge, tag=0xA1)
not_ = seq(le, tag=0xA2)
sel = lambda *names: seq(*(octets(n) for n in names))
paged = lambda size, cookie=b"": seq(integer(size), octets(cookie))

seeds = {
    "manage-dsa-it": bytes([SEARCH]) + control(MANAGE, critical=True),
    "assert-eq": bytes([MODIFY]) + control(ASSERTION, eq("cn", "Fuzz Ee"), True),
    "assert-present": bytes([COMPARE]) + control(ASSERTION, present("objectClass")),
    "assert-substrings": bytes([SEARCH]) + control(ASSERTION, substrings),
    "assert-and-or-not": bytes([DELETE]) + control(ASSERTION, seq(and_, or_, not_, tag=0xA0)),
    "assert-approx": bytes([ADD]) + control(ASSERTION, approx),
    "assert-extensible": bytes([MODDN]) + control(ASSERTION, ext),
    "assert-dn-attributes": bytes([SEARCH]) + control(ASSERTION, ext_dn),
    "assert-no-value": bytes([SEARCH]) + control(ASSERTION, critical=True),
    "assert-trailing": bytes([SEARCH]) + control(ASSERTION, present("cn") + b"\x00"),
    "pre-read-all": bytes([DELETE]) + control(PRE, sel("*", "+")),
    "pre-read-named": bytes([MODIFY]) + control(PRE, sel("cn;lang-de", "name", "entryDN"), True),
    "post-read-class": bytes([ADD]) + control(POST, sel("@inetOrgPerson", "hasSubordinates")),
    "post-read-empty": bytes([MODDN]) + control(POST, sel()),
    "post-read-1.1": bytes([MODIFY]) + control(POST, sel("1.1", "unknownType", "objectClass")),
    "pre-post-read": bytes([MODIFY]) + control(PRE, sel("sn")) + control(POST, sel("sn")),
    "paged-first": bytes([SEARCH]) + control(PAGED, paged(10), True),
    "paged-cookie": bytes([SEARCH]) + control(PAGED, paged(500, b"\x00\x00\x00\x2a\x01\x02\x03\x04")),
    "paged-max": bytes([SEARCH]) + control(PAGED, paged(2**31 - 1, b"x" * 300)),
    "paged-negative": bytes([SEARCH]) + control(PAGED, paged(-1)),
    "paged-wrong-op": bytes([ADD]) + control(PAGED, paged(5), True),
    "unknown-critical": bytes([SEARCH]) + bytes([OID_IS_VALUE | CRIT, 7]) + b"1.2.3.4",
    "unknown-noncritical": bytes([SEARCH]) + bytes([OID_IS_VALUE, 7]) + b"1.2.3.4" + control(MANAGE),
    "vrf-items": bytes([SEARCH]) + control(MATCHED, seq(eq("cn", "fuzz ee"), present("mail"), substrings,
                                                        ge, le, approx, ext, eq("objectClass", "person")), True),
    "vrf-empty": bytes([SEARCH]) + control(MATCHED, seq()),
    "vrf-unknown-choice": bytes([SEARCH]) + control(MATCHED, seq(and_, octets("x"), eq("name", "Ee")), True),
    "vrf-no-value": bytes([SEARCH]) + control(MATCHED, critical=True),
    "vrf-not-a-list": bytes([SEARCH]) + control(MATCHED, eq("cn", "x"), True),
    "vrf-trailing": bytes([SEARCH]) + control(MATCHED, seq(present("cn")) + b"\x00"),
    "vrf-wrong-op": bytes([COMPARE]) + control(MATCHED, seq(present("cn")), True),
    "oid-from-value": bytes([SEARCH]) + bytes([OID_IS_VALUE | CRIT, 13]) + b"1.2.840.11355",
    "empty-oid": bytes([BIND]) + control(EMPTY, b"", True),
    "twice": bytes([SEARCH]) + control(PAGED, paged(1)) + control(PAGED, paged(2)),
    "all-search": bytes([SEARCH]) + control(MANAGE) + control(ASSERTION, and_) + control(PAGED, paged(3, b"c")),
    "all-modify": bytes([MODIFY]) + control(MANAGE) + control(ASSERTION, or_) + control(PRE, sel("*")) + control(POST, sel("+")),
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
# Raw mode: whole LDAPMessages with controls, from fuzz_ldap_message's seeds
# and a few built here.
msg = lambda op, *ctrls: seq(integer(7), op, seq(*ctrls, tag=0xA0))
ctl = lambda oid, crit, value: seq(octets(oid), *( [tlv(0x01, b"\xff")] if crit else []), *( [octets(value)] if value is not None else []))
search = seq(octets("dc=example,dc=com"), tlv(0x0A, b"\x02"), tlv(0x0A, b"\x00"), integer(0),
             integer(0), tlv(0x01, b"\x00"), present("objectClass"), seq(), tag=0x63)
delete = octets("cn=x,dc=example,dc=com", 0x4A)
raw = {
    "raw-search-paged": msg(search, ctl("1.2.840.113556.1.4.319", True, paged(50, b"abc"))),
    "raw-delete-pre-read": msg(delete, ctl("1.3.6.1.1.13.1", False, sel("*")),
                               ctl("1.3.6.1.1.12", True, eq("cn", "x"))),
    "raw-search-unknown": msg(search, ctl("1.3.6.1.4.1.42.2.27.8.5.1", True, None)),
}
src = "tests/fuzz/corpus/fuzz_ldap_message/search_paged.ber"
if os.path.exists(src):
    raw["raw-search-paged-seed"] = open(src, "rb").read()
for name, data in raw.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b"\x80" + data)
print(f"{len(seeds) + len(raw)} seeds in {OUT}")
