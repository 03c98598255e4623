"""mutate.py — BER-aware mutations of one LDAP request.

What it does: mutate(rng, pdu) returns (mutant, kind): one of fourteen
mutations chosen by rng (bit flips, lengths that lie or are huge, an
indefinite or non-minimal length, a changed tag, a node duplicated,
deleted or nested thousands deep, a string grown past a limit, the PDU
cut short, an extreme message ID, two PDUs spliced), most of them aimed
at one TLV node so that the rest of the request stays plausible; then,
usually, the outer length is fixed so that lumend frames the mutant as a
whole PDU and has to decode it rather than wait for more bytes.

Needs: lumen_harness (tlv, integer, length_octets, parse_tlv). Only rng
decides, so one seed gives the same mutants again.

A mutant is never a finding by itself: lumend may answer it, refuse it
with a protocolError, or close; netfuzz.py decides what is a finding.
"""
import lumen_harness as h

MAX_DEPTH = 40         # deeper than lumend's own bound: the walk stops here


def tlv_nodes(buf, pos=0, end=None, depth=0, out=None):
    """Every definite-length TLV node of buf, outermost first:
    (header start, length start, content start, content end, constructed)."""
    out = [] if out is None else out
    end = len(buf) if end is None else end
    while pos < end and depth < MAX_DEPTH:
        framed = h.parse_tlv(buf, pos)
        if framed is None or framed[2] > end:
            return out
        tag, start, stop = framed
        out.append((pos, pos + 1, start, stop, bool(tag & 0x20)))
        if tag & 0x20:
            tlv_nodes(buf, start, stop, depth + 1, out)
        pos = stop
    return out


def reframe(buf):
    """The same bytes under a SEQUENCE header whose length fits them, so a
    mutation inside survives framing."""
    if len(buf) < 2:
        return b"\x30\x00"
    first = buf[1]
    skip = (first & 0x7F) if first >= 0x80 else 0
    return h.tlv(0x30, bytes(buf[2 + skip:]))


HUGE_LENGTHS = [b"\x84\xff\xff\xff\xff", b"\x88" + b"\xff" * 8, b"\x89" + b"\x01" * 9,
                b"\x84\x7f\xff\xff\xff", b"\x83\xff\xff\xff", b"\x82\xff\xff", b"\xff", b"\x80",
                b"\x81\x05", b"\x85\x00\x00\x00\x00\x05"]
TAGS = [0x00, 0x1f, 0xff, 0x30, 0x31, 0xa0, 0x80, 0x04, 0x02, 0x0a, 0x01,
        0x60, 0x63, 0x77, 0x42, 0x50, 0x4a]
GROWTHS = [b"\x00", b"A" * 300, b"\xff" * 70000, b"=,+\\#", b"\xc3\x28"]
MESSAGE_IDS = [0, -1, 2**31 - 1, 2**31, -2**31, 2**63, 2**64 + 5]


def _bitflip(rng, b, nodes):
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return b


def _byteset(rng, b, nodes):
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return b


def _length_lie(rng, b, nodes):
    _, ls, cs, ce, _ = rng.choice(nodes)
    n = ce - cs + rng.choice([-3, -2, -1, 1, 2, 3, 100, 0x7f, 0x80, 65536, -(ce - cs)])
    return b[:ls] + h.length_octets(max(0, n)) + b[cs:]


def _huge_length(rng, b, nodes):
    _, ls, cs, _, _ = rng.choice(nodes)
    return b[:ls] + rng.choice(HUGE_LENGTHS) + b[cs:]


def _indefinite(rng, b, nodes):
    _, ls, cs, ce, _ = rng.choice([n for n in nodes if n[4]] or nodes)
    return b[:ls] + b"\x80" + b[cs:ce] + b"\x00\x00" + b[ce:]


def _long_form(rng, b, nodes):
    _, ls, cs, ce, _ = rng.choice(nodes)
    return b[:ls] + b"\x84" + (ce - cs).to_bytes(4, "big") + b[cs:]


def _tag(rng, b, nodes):
    hs = rng.choice(nodes)[0]
    b[hs] = rng.choice(TAGS + [rng.randrange(256)])
    return b


def _duplicate(rng, b, nodes):
    hs, _, _, ce, _ = rng.choice(nodes)
    return b[:ce] + b[hs:ce] * rng.choice([1, 2, 50]) + b[ce:]


def _delete(rng, b, nodes):
    hs, _, _, ce, _ = rng.choice(nodes[1:] or nodes)
    return b[:hs] + b[ce:]


def _nest(rng, b, nodes):
    hs, _, _, ce, _ = rng.choice(nodes)
    tag = rng.choice([0x30, 0xa0, 0xa1, 0xa2, 0x31])
    inner = bytes(b[hs:ce])
    for _ in range(rng.choice([50, 200, 1000, 5000])):
        inner = h.tlv(tag, inner)
    return b[:hs] + inner + b[ce:]


def _grow(rng, b, nodes):
    hs, _, cs, ce, _ = rng.choice([n for n in nodes if not n[4]] or nodes)
    return b[:hs] + h.tlv(b[hs], bytes(b[cs:ce]) + rng.choice(GROWTHS)) + b[ce:]


def _truncate(rng, b, nodes):
    return b[:rng.randrange(len(b) + 1)]


def _message_id(rng, b, nodes):
    mid = rng.choice(MESSAGE_IDS)
    outer = h.parse_tlv(b)
    if outer:
        inner = h.parse_tlv(b, outer[1])
        if inner:
            return bytearray(h.tlv(0x30, h.integer(mid) + bytes(b[inner[2]:outer[2]])))
    return b


def _splice(rng, b, nodes):
    return b + b[:rng.randrange(len(b) + 1)]


# (name, function, needs TLV nodes): drawn with equal odds; one whose
# needs the PDU cannot meet (no bytes, no nodes) falls back to a splice.
MUTATIONS = [("bitflip", _bitflip, False), ("byteset", _byteset, False),
             ("lenlie", _length_lie, True), ("hugelen", _huge_length, True),
             ("indef", _indefinite, True), ("longform", _long_form, True),
             ("tag", _tag, True), ("dupnode", _duplicate, True), ("delnode", _delete, True),
             ("nest", _nest, True), ("grow", _grow, True), ("trunc", _truncate, False),
             ("msgid", _message_id, False), ("splice", _splice, False)]


def mutate(rng, pdu):
    """(mutant, kind), kind naming the mutation ("+reframe" when the outer
    length was fixed afterwards)."""
    b = bytearray(pdu)
    nodes = tlv_nodes(bytes(b))
    name, fn, needs_nodes = MUTATIONS[rng.randrange(len(MUTATIONS))]
    if (needs_nodes and not nodes) or not b:
        name, fn = "splice", _splice
    out = bytes(fn(rng, b, nodes))
    if rng.random() < 0.6:
        out, name = reframe(out), name + "+reframe"
    return out, name
