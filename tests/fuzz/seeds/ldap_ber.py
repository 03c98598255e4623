"""BER and LDAPMessage building blocks the seed generators share (imported
from gen_*.py, which run as scripts from the repository root): each returns
the encoded bytes, definite lengths, minimal integers."""


def tlv(tag, body):
    n = len(body)
    if n < 0x80:
        head = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, "big")
        head = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + head + body


def o(s, tag=0x04):
    """An OCTET STRING (or any primitive string tag) from str or bytes."""
    return tlv(tag, s.encode() if isinstance(s, str) else s)


def i(v, tag=0x02):
    """An INTEGER (or ENUMERATED with tag 0x0A), two's complement, minimal."""
    return tlv(tag, v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True))


def seq(*p, tag=0x30):
    return tlv(tag, b"".join(p))


def boolean(b):
    return tlv(0x01, b"\xff" if b else b"\x00")


def enum(v):
    return i(v, 0x0A)


def ctl(oid, value=None, critical=False):
    """Control ::= SEQUENCE { controlType, criticality DEFAULT FALSE, controlValue }"""
    parts = [o(oid)]
    if critical:
        parts.append(boolean(True))
    if value is not None:
        parts.append(o(value))
    return seq(*parts)


# The LDAP operations and filters the generators compose.
attr = lambda t, *vals: seq(o(t), seq(*(o(v) for v in vals), tag=0x31))
add = lambda dn, *attrs: seq(o(dn), seq(*attrs), tag=0x68)
delete = lambda dn: o(dn, 0x4A)
mod = lambda dn, *changes: seq(o(dn), seq(*changes), tag=0x66)
change = lambda op, t, *vals: seq(enum(op), attr(t, *vals))
moddn = lambda dn, rdn, delold, sup=None: seq(o(dn), o(rdn), boolean(delold), *([o(sup, 0x80)] if sup else []), tag=0x6C)
compare = lambda dn, t, v: seq(o(dn), seq(o(t), o(v)), tag=0x6E)
eq = lambda a, v: seq(o(a), o(v), tag=0xA3)
present = lambda a: o(a, 0x87)
sub = lambda a, ini=None, any_=(), fin=None: seq(o(a), seq(*([o(ini, 0x80)] if ini else []), *(o(x, 0x81) for x in any_), *([o(fin, 0x82)] if fin else [])), tag=0xA4)
AND = lambda *f: seq(*f, tag=0xA0)
OR = lambda *f: seq(*f, tag=0xA1)
NOT = lambda f: seq(f, tag=0xA2)
