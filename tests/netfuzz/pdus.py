"""pdus.py — the LDAP requests the network fuzzer sends, and how it reads
the answers.

What it does: builds every operation and control lumend serves (on top of
lumen_harness's BER codec: tlv, octets, integer, message, control, search,
...), keeps a catalogue of valid requests (valid_pdus(), the seeds of the
mutations and the material of most categories), and decides when a stream
of answers is complete (final_for). Everything is plain bytes; nothing
here opens a socket but read_until, which reads one.

Needs: tests/integration/lumen_harness.py (put on sys.path by netfuzz.py).

A finding is decided elsewhere (netfuzz.py); here "complete" means one final
answer (not an entry, reference or intermediate response) for each message
ID waited for, or a Notice of Disconnection.
"""
import lumen_harness as h

SUFFIX = "dc=example,dc=com"
PEOPLE = "ou=People," + SUFFIX
ROOTDN = "cn=admin,dc=example,dc=com"
ROOTPW = "secret"          # lumen_harness.Lumend's rootpw
ENTRIES = 400              # people preloaded: uid=uN, userPassword pwN

OID_STARTTLS = "1.3.6.1.4.1.1466.20037"
OID_WHOAMI = "1.3.6.1.4.1.4203.1.11.3"
OID_PASSMOD = "1.3.6.1.4.1.4203.1.11.1"
OID_CANCEL = "1.3.6.1.1.8"
OID_TXN_START = "1.3.6.1.1.21.1"
OID_TXN_END = "1.3.6.1.1.21.3"
C_PAGED = "1.2.840.113556.1.4.319"
C_SYNC = "1.3.6.1.4.1.4203.1.9.1.1"
C_SORT = "1.2.840.113556.1.4.473"
C_VLV = "2.16.840.1.113730.3.4.9"
C_ASSERT = "1.3.6.1.1.12"
C_PRE_READ = "1.3.6.1.1.13.1"
C_POST_READ = "1.3.6.1.1.13.2"
C_MANAGE_DSA_IT = "2.16.840.1.113730.3.4.2"
C_PPOLICY = "1.3.6.1.4.1.42.2.27.8.5.1"
C_PROXY = "2.16.840.1.113730.3.4.18"
C_DONT_USE_COPY = "1.3.6.1.1.22"
C_SUBENTRIES = "1.3.6.1.4.1.4203.1.10.1"
C_MATCHED_VALUES = "1.2.826.0.1.3344810.2.3"

# Answer tags that are not final: an entry, a reference, an intermediate.
NOT_FINAL = (0x64, 0x73, 0x79)
SEARCH_DONE = 0x65
PROBE_ID = 2**31 - 7       # a message ID no mutant uses for itself


def seq(*parts, tag=0x30):
    return h.tlv(tag, b"".join(parts))


def enum(value):
    return h.integer(value, 0x0A)


# Filters (RFC 4511 4.5.1), encoded.
def f_eq(attr, value): return seq(h.octets(attr), h.octets(value), tag=0xA3)
def f_ge(attr, value): return seq(h.octets(attr), h.octets(value), tag=0xA5)
def f_le(attr, value): return seq(h.octets(attr), h.octets(value), tag=0xA6)
def f_approx(attr, value): return seq(h.octets(attr), h.octets(value), tag=0xA8)
def f_present(attr): return h.octets(attr, 0x87)
def f_and(*filters): return seq(*filters, tag=0xA0)
def f_or(*filters): return seq(*filters, tag=0xA1)
def f_not(f): return seq(f, tag=0xA2)


def f_sub(attr, initial=None, any_=(), final=None):
    parts = (([h.octets(initial, 0x80)] if initial else []) + [h.octets(x, 0x81) for x in any_]
             + ([h.octets(final, 0x82)] if final else []))
    return seq(h.octets(attr), seq(*parts), tag=0xA4)


def f_ext(rule=None, attr=None, value="x", dn_attrs=False):
    return seq((h.octets(rule, 0x81) if rule else b"") + (h.octets(attr, 0x82) if attr else b"")
               + h.octets(value, 0x83) + (h.tlv(0x84, b"\xff") if dn_attrs else b""), tag=0xA9)


def search(msgid, base="", scope=0, filt=None, attrs=("1.1",), controls=(), **kw):
    """lumen_harness.search with a filter and control() items."""
    return h.search(msgid, base, scope, attrs, filter=filt, controls=h.controls(*controls), **kw)


def bind(msgid, dn="", password="", version=3):
    return h.bind_simple(msgid, dn, password, version)


def delete(msgid, dn):
    return h.message(msgid, h.octets(dn, 0x4A))


def compare(msgid, dn, attr, value):
    return h.message(msgid, seq(h.octets(dn), seq(h.octets(attr), h.octets(value)), tag=0x6E))


def attribute(attr, values, tag=0x30):
    return seq(h.octets(attr), seq(*[h.octets(v) for v in values], tag=0x31), tag=tag)


def add(msgid, dn, attrs, controls=()):
    return h.message(msgid, seq(h.octets(dn), seq(*[attribute(a, vs) for a, vs in attrs]),
                                tag=0x68), h.controls(*controls))


def modify(msgid, dn, changes, controls=()):
    """changes: (operation 0 add / 1 delete / 2 replace, attribute, values)."""
    items = [seq(enum(op), attribute(a, vs)) for op, a, vs in changes]
    return h.message(msgid, seq(h.octets(dn), seq(*items), tag=0x66), h.controls(*controls))


def moddn(msgid, dn, newrdn, delete_old=True, superior=None):
    return h.message(msgid, seq(h.octets(dn), h.octets(newrdn), h.boolean(delete_old),
                                h.octets(superior, 0x80) if superior else b"", tag=0x6C))


def extended(msgid, oid, value=None, controls=()):
    return h.extended(msgid, oid, value, h.controls(*controls))


def cancel(msgid, target):
    return extended(msgid, OID_CANCEL, seq(h.integer(target)))


def paged(size, cookie=b""):
    return h.control(C_PAGED, seq(h.integer(size), h.octets(cookie)))


def sync_request(mode, cookie=None, reload_hint=False):
    return h.control(C_SYNC, seq(enum(mode), h.octets(cookie) if cookie is not None else b"",
                                 h.boolean(True) if reload_hint else b""), critical=True)


def sort_request(*keys):
    return h.control(C_SORT, seq(*[seq(h.octets(k), h.octets("caseIgnoreOrderingMatch", 0x80))
                                   for k in keys]))


def vlv_request(before, after, offset, count):
    return h.control(C_VLV, seq(h.integer(before), h.integer(after),
                                seq(h.integer(offset), h.integer(count), tag=0xA0)))


def message_id(pdu):
    """The message ID of a well-formed request."""
    return h.Response(pdu).msgid


def with_message_id(pdu, msgid):
    """The same request under another message ID (its controls kept)."""
    _, start, end = h.parse_tlv(pdu)
    _, _, id_end = h.parse_tlv(pdu, start)
    return h.tlv(0x30, h.integer(msgid) + pdu[id_end:end])


def abandoned_target(pdu):
    """The message ID an AbandonRequest names, None for another request."""
    _, start, _ = h.parse_tlv(pdu)
    _, _, id_end = h.parse_tlv(pdu, start)
    tag, s, e = h.parse_tlv(pdu, id_end)
    return int.from_bytes(pdu[s:e], "big", signed=True) if tag == 0x50 else None


def is_framed(data):
    """Is data exactly one SEQUENCE of a definite length (what lumend frames
    as one PDU and must answer or refuse)?"""
    framed = h.parse_tlv(data)
    return framed is not None and data[0] == 0x30 and framed[2] == len(data)


def is_notice(r):
    return r.msgid == 0 and r.op == 0x78


def user(n):
    return f"uid=u{n},{PEOPLE}"


def people_ldif(path, count=ENTRIES, description_bytes=900):
    """The suffix, ou=People and count people with passwords (binds as
    users succeed) and a ~1 KiB description each, so that a subtree search
    returns ~400 KiB: enough to fill a connection's output."""
    with open(path, "w") as f:
        f.write(f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\n"
                f"dc: example\no: Example\n\ndn: {PEOPLE}\nobjectClass: organizationalUnit\n"
                "ou: People\n\n")
        for n in range(count):
            f.write(f"dn: {user(n)}\nobjectClass: inetOrgPerson\nuid: u{n}\ncn: User {n}\n"
                    f"sn: {n}\nuserPassword: pw{n}\ndescription: {'x' * description_bytes}\n\n")


def valid_pdus():
    """{name: request}: one valid request (or a deliberately refused one) of
    every operation and control lumend serves."""
    u = user(1)
    new_person = [("objectClass", ["inetOrgPerson"]), ("cn", ["N F"]), ("sn", ["F"])]
    return {
        "bind_anon": bind(1),
        "bind_root": bind(1, ROOTDN, ROOTPW),
        "bind_badpw": bind(1, ROOTDN, "wrong"),
        "bind_user": bind(1, u, "pw1"),
        "bind_v2": bind(1, version=2),
        "bind_sasl_ext": h.bind_sasl(1, "EXTERNAL"),
        "bind_sasl_unknown": h.bind_sasl(1, "DIGEST-MD5", credentials=b"x"),
        "rootdse": search(2, attrs=("+", "*")),
        "subschema": search(2, "cn=Subschema", attrs=("objectClasses",)),
        "monitor": search(2, "cn=Monitor", 2, attrs=("*", "+")),
        "base_entry": search(2, u, 0, attrs=("*",)),
        "eq_uid": search(2, SUFFIX, 2, f_eq("uid", "u7"), ("cn", "mail")),
        "and_eq": search(2, SUFFIX, 2, f_and(f_eq("objectClass", "inetOrgPerson"),
                                             f_eq("uid", "u3"))),
        "sub_cn": search(2, SUFFIX, 2, f_sub("cn", "User", ("1",)), ("cn",)),
        "or_not": search(2, SUFFIX, 2, f_or(f_not(f_present("mail")), f_ge("sn", "5"),
                                            f_le("sn", "2"))),
        "approx": search(2, SUFFIX, 2, f_approx("cn", "User 5")),
        "ext": search(2, SUFFIX, 2, f_ext("caseIgnoreMatch", "cn", "user 3", True)),
        "onelevel_all": search(2, PEOPLE, 1, attrs=("*",)),
        "subtree_big": search(2, SUFFIX, 2, attrs=("*", "+")),
        "sizelimited": search(2, SUFFIX, 2, size=3),
        "typesonly": search(2, SUFFIX, 2, types_only=True),
        "deref": search(2, SUFFIX, 2, deref=3),
        "paged": search(2, PEOPLE, 1, attrs=("uid",), controls=(paged(5),)),
        "paged_badcookie": search(2, PEOPLE, 1, controls=(paged(5, b"\x00" * 12),)),
        "sorted": search(2, PEOPLE, 1, attrs=("cn",), controls=(sort_request("cn"),)),
        "vlv": search(2, PEOPLE, 1, attrs=("cn",),
                      controls=(sort_request("cn"), vlv_request(1, 3, 5, 0))),
        "assertion": search(2, u, 0, controls=(h.control(C_ASSERT, f_eq("uid", "u1")),)),
        "mdsait": search(2, SUFFIX, 2, f_eq("uid", "u1"), controls=(h.control(C_MANAGE_DSA_IT),)),
        "subentries": search(2, SUFFIX, 2, controls=(h.control(C_SUBENTRIES, h.boolean(True)),)),
        "mv": search(2, u, 0, attrs=("cn",),
                     controls=(h.control(C_MATCHED_VALUES, seq(f_eq("cn", "User 1"))),)),
        "proxy": search(2, u, 0, controls=(h.control(C_PROXY, "dn:" + u, True),)),
        "duc": search(2, u, 0, controls=(h.control(C_DONT_USE_COPY, None, True),)),
        "sync_refresh": search(2, SUFFIX, 2, controls=(sync_request(1),)),
        "unknown_critical": search(2, controls=(h.control("1.2.3.4.5", "x", True),)),
        "compare": compare(3, u, "uid", "u1"),
        "compare_false": compare(3, u, "cn", "nope"),
        "add": add(4, "uid=nf1," + PEOPLE, [("uid", ["nf1"])] + new_person),
        "add_postread": add(4, "uid=nf2," + PEOPLE, [("uid", ["nf2"])] + new_person,
                            controls=(h.control(C_POST_READ, seq(h.octets("*"))),)),
        "modify": modify(5, u, [(2, "description", ["changed"])]),
        "modify_preread": modify(5, u, [(0, "mail", ["a@b"])],
                                 controls=(h.control(C_PRE_READ, seq(h.octets("mail"))),)),
        "modify_ppolicy": modify(5, u, [(2, "cn", ["User 1"])], controls=(h.control(C_PPOLICY),)),
        "moddn": moddn(6, user(2), "uid=u2"),
        "moddn_sup": moddn(6, "uid=nope," + PEOPLE, "uid=x", True, SUFFIX),
        "delete": delete(7, "uid=nf1," + PEOPLE),
        "whoami": extended(8, OID_WHOAMI),
        "passmod": extended(8, OID_PASSMOD, seq(h.octets(u, 0x80), h.octets("newpw", 0x82))),
        "passmod_empty": extended(8, OID_PASSMOD),
        "cancel": cancel(8, 2),
        "txn_start": extended(8, OID_TXN_START),
        "txn_end": extended(8, OID_TXN_END, seq(h.boolean(False), h.octets("1"))),
        "unknown_ext": extended(8, "1.2.3.4"),
        "abandon": h.abandon(9, 2),
        "starttls": extended(10, OID_STARTTLS),
        "unbind": h.unbind(11),
    }


def final_for(msgids):
    """A done() for lumen_harness.read_messages_until: true once each of
    msgids has had its final answer, or a Notice of Disconnection came."""
    want, got, seen = set(msgids), set(), [0]

    def done(out):
        for r in out[seen[0]:]:
            if is_notice(r):
                return True
            if r.op not in NOT_FINAL:
                got.add(r.msgid)
        seen[0] = len(out)
        return want <= got
    return done


def probe_answered(out):
    """done(): the probe search (PROBE_ID) ended, or the server said goodbye."""
    return any((r.msgid == PROBE_ID and r.op == SEARCH_DONE) or is_notice(r) for r in out)


def read_until(sock, done, timeout):
    """(answers, closed, timed_out): lumen_harness.read_messages_until, and
    whether it gave up waiting (neither done nor closed)."""
    out, closed = h.read_messages_until(sock, done, timeout)
    return out, closed, not closed and not done(out)
