#!/usr/bin/env python3
"""Differential test: Lumen against OpenLDAP's slapd (back-mdb) on the same data.

The same ~310-entry tree (differential/tree.py: five levels, multi-valued and
non-ASCII values, escaped DNs, groups, inetOrgPerson + posixAccount users) is
loaded with ldapadd into a private slapd and into lumend, both configured
alike (same schema files' content, same indexes, rootdn). Then:

  1. ~450 generated searches (every filter type, all four scopes, existing and
     missing bases, attribute selections, typesOnly, size limits) go to both
     servers through python-ldap; result code, matchedDN, entry DNs, attribute
     names and values must agree, after the normalisations and exclusions
     listed under DOCUMENTED DIFFERENCES below.
  2. ~25 sorted and VLV searches (RFC 2891 keys with ordering rules, reverse,
     two keys, absent keys, errors; VLV by offset and by value) must return
     the same entries in the same order and the same response controls
     (slapd with its sssvlv overlay).
  3. A list of writes (errors and successes: 68, 32, 66, 19, 65, 17, 21, 64,
     67, 20, 16, compare 5/6/16...) is applied to both; result codes (and the
     matchedDN of noSuchObject) must agree, then the whole tree is compared
     once more.
  4. Then aliases (a chain, a dangling one, a loop) and referral objects are
     added to both, and ~130 searches (every base among them and around
     them, every scope, every derefAliases value, with and without
     ManageDsaIT) must agree in result code, matchedDN, entries and
     references.

Needs slapd (Debian's, as installed by bench/install-deps.sh); skipped with a
message when it is not installed. LUMEN_IT_SERVER=slapd runs the "Lumen" side
on a second slapd (checks the test itself).
"""
import os
import random
import re
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "differential"))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402
import tree as treegen  # noqa: E402

import ldap  # noqa: E402
import ldap.dn  # noqa: E402
import ldap.filter  # noqa: E402
import ldap.modlist  # noqa: E402
import ldap.controls  # noqa: E402

r = h.Results("t_differential.py")
missing = sh.slapd_missing()
if missing:
    print(f"  skip t_differential.py: OpenLDAP slapd unavailable: {missing}")
    r.finish()

# Whole-test watchdog: a hung server must not hang the suite.
WATCHDOG_S = int(os.environ.get("DIFF_WATCHDOG", "900"))

# ---------------------------------------------------------------------------
# DOCUMENTED DIFFERENCES (each one is a legitimate difference, not a bug)
#
# D1. DN string form. OpenLDAP returns DNs (entry names, matchedDN and
#     DN-syntax values) in its "pretty" form with hex escapes
#     (cn=Smith\2C John) while Lumen may keep the escapes as given
#     (cn=Smith\, John). RFC 4514 §2.4 allows both encodings of the same DN, so
#     DNs are compared after python-ldap's parse + re-serialise (value and
#     case preserved; only the escaping is made canonical).
# D2. Attribute description case. Servers may return an attribute name in
#     any case (RFC 4512 §2.5: descriptors are case-insensitive); names are
#     compared lowercased.
# D3. Order. Entries of a search and values of an attribute are sets (RFC
#     4511 §4.5.2, RFC 4512 §2.3); both are compared sorted. With a size
#     limit, which entries fill the limit depends on the server's candidate
#     order, so only the result code and the number of entries are compared.
# D4. Values that differ by nature between two servers: entryUUID (random),
#     entryCSN (clock + server id), createTimestamp / modifyTimestamp (time
#     of the load). Presence is compared, values are not (entryUUID checked
#     to be a UUID, timestamps to be GeneralizedTime).
# D5. entryCSN is OpenLDAP's replication state; Lumen's schema declares it
#     but Lumen only needs to maintain it for sync; it is compared only when
#     both return it.
# D6. Approximate matching (~=) is implementation-defined (RFC 4511 §4.5.1.7.6:
#     "locally-defined approximate matching algorithm"); OpenLDAP uses a
#     phonetic code. No approx filters are sent.
# D7. numSubordinates is not an OpenLDAP attribute (Lumen may publish it);
#     ignored when only Lumen returns it.
# D8. The AVAs of a multi-valued RDN are a set (RFC 4512 §2.3.1): OpenLDAP
#     sorts them (employeeNumber=1+uid=x), Lumen keeps the client's order.
#     canon_dn() sorts them (part of D1).
# D9. Substring components made only of spaces ("(cn=* )") are not sent:
#     RFC 4518 §2.6.1 / Appendix B leave their preparation unclear, and
#     OpenLDAP drops such a component (the filter then matches any value).
# D10. Schema: Lumen's nis.schema gives the shadow* integers an ORDERING
#     rule (integerOrderingMatch, as RFC 2307bis); Debian's follows RFC 2307
#     (EQUALITY only), so slapd evaluates (shadowLastChange<=N) to Undefined.
#     No ordering filter on shadow* is sent. SCHEMA_DIFFERENCES lists every
#     other known difference in the attribute types both servers define;
#     check_schema() fails on any other.
# D11. OpenLDAP evaluates (objectClass:objectIdentifierMatch:=person) to
#     FALSE for every entry although objectIdentifierMatch (RFC 4517 §4.2.26)
#     matches the descriptor 'person' against the value 'person'; Lumen
#     answers like (objectClass=person) does, so SUBSTITUTE sends slapd that
#     filter instead.
# ---------------------------------------------------------------------------
VOLATILE = {"entryuuid", "entrycsn", "createtimestamp", "modifytimestamp"}
VOLATILE_FORM = {
    "entryuuid": re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    "entrycsn": re.compile(rb"\d{14}\.\d{6}Z#[0-9a-f]{6}#[0-9a-f]{3}#[0-9a-f]{6}"),
    "createtimestamp": re.compile(rb"\d{14}(\.\d+)?Z"),
    "modifytimestamp": re.compile(rb"\d{14}(\.\d+)?Z"),
}
ONLY_IF_BOTH = {"entrycsn"}                 # D5
IGNORE_IF_LUMEN_ONLY = {"numsubordinates"}  # D7
# D11: filter pieces sent to slapd in place of the one Lumen gets.
SUBSTITUTE = {"(objectClass:objectIdentifierMatch:=person)": "(objectClass=person)"}
# D10: differences between the attribute types both servers define, as
# (name, field) -> reason. Rule names compare lowercased; MUST/MAY/SUP as
# sets of OIDs (so aliases and repeats do not count).
SCHEMA_DIFFERENCES = {
    **{(a, "ordering"): "Lumen's nis.schema has RFC 2307bis' integerOrderingMatch (D10)"
       for a in ("shadowLastChange", "shadowMin", "shadowMax", "shadowWarning",
                 "shadowInactive", "shadowExpire")},
    ("mailPreferenceOption", "equality"): "Lumen's cosine.schema gives it integerMatch; "
                                          "Debian's none (not used by the data)",
    ("nisNetgroupTriple", "equality"): "Lumen's nis.schema gives it caseIgnoreIA5Match "
                                       "(RFC 2307bis); not used by the data",
    ("vendorName", "equality"): "RFC 3045 gives caseExactIA5Match (Lumen); OpenLDAP caseExactMatch",
    ("vendorVersion", "equality"): "RFC 3045 gives caseExactIA5Match (Lumen); OpenLDAP caseExactMatch",
    ("namingContexts", "equality"): "RFC 4512 §5.1.2 gives none (Lumen); OpenLDAP adds one",
    ("supportedLDAPVersion", "equality"): "RFC 4512 gives none (OpenLDAP); Lumen integerMatch, "
                                          "so (supportedLDAPVersion=3) matches the root DSE",
    ("supportedLDAPVersion", "ordering"): "RFC 4512 gives none (OpenLDAP); Lumen "
                                          "integerOrderingMatch",
    ("aliasedObjectName", "names"): "'aliasedEntryName' is an X.501 alias only OpenLDAP adds",
    ("givenName", "names"): "'gn' is an X.520 alias only OpenLDAP adds (RFC 4519 has none)",
    ("userCertificate", "equality"): "Lumen's core.schema lacks RFC 4523's certificateExactMatch "
                                     "(reported; no certificates in the data)",
    ("cACertificate", "equality"): "Lumen's core.schema lacks RFC 4523's certificateExactMatch "
                                   "(reported; no certificates in the data)",
    ("RFC822localPart", "may"): "Debian's cosine.schema also allows preferredDeliveryMethod, "
                                "Lumen's does not (class not used by the data)",
    ("ipProtocol", "must"): "RFC 2307 lists description in MUST and MAY; Lumen keeps it MAY only",
    ("oncRpc", "must"): "RFC 2307 lists description in MUST and MAY; Lumen keeps it MAY only",
}
DN_SYNTAX = {"member", "owner", "manager", "seealso", "roleoccupant", "creatorsname",
             "modifiersname", "entrydn", "subschemasubentry", "uniquemember"}


def canon_dn(dn):
    if dn is None:
        return None
    if isinstance(dn, bytes):
        dn = dn.decode("utf-8", "replace")
    uid = ""
    if "#'" in dn and dn.endswith("'B"):      # nameAndOptionalUID
        dn, uid = dn.rsplit("#", 1)
        uid = "#" + uid
    try:
        rdns = [sorted(rdn, key=lambda ava: (ava[0].lower(), ava[1])) for rdn in ldap.dn.str2dn(dn)]
        return ldap.dn.dn2str(rdns) + uid
    except ldap.DECODING_ERROR:
        return "<unparsable>" + dn + uid


def canon_entry(attrs, typesonly):
    out = {}
    for name, values in attrs.items():
        n = name.lower()
        if n in VOLATILE:
            bad = [v for v in values if not VOLATILE_FORM[n].fullmatch(v)]
            vals = [f"<malformed {bad[:2]!r}>"] if bad or len(values) != 1 else ["<volatile>"]
        elif n in DN_SYNTAX:
            vals = sorted(canon_dn(v) for v in values)
        else:
            vals = sorted(values)
        out[n] = "<typesonly>" if typesonly else vals
    return out


def run_search(conn, base, scope, filt, attrs, typesonly, sizelimit):
    """(code, matchedDN, {canonical dn: attrs}, count, referrals)."""
    entries, refs, code, matched = {}, [], 0, None
    count = 0
    try:
        msgid = conn.search_ext(base, scope, filt, attrs, typesonly, sizelimit=sizelimit)
        while True:
            rtype, rdata, _, _ = conn.result3(msgid, all=0, timeout=60)
            if rtype == ldap.RES_SEARCH_ENTRY:
                for dn, a in rdata:
                    count += 1
                    entries[canon_dn(dn)] = canon_entry(a, typesonly)
            elif rtype == ldap.RES_SEARCH_REFERENCE:
                refs.extend(rdata)
            elif rtype == ldap.RES_SEARCH_RESULT:
                break
    except ldap.TIMEOUT:
        code = "client timeout"
    except ldap.SERVER_DOWN as e:
        code = f"server down: {e}"
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        code = info.get("result", repr(e))
        matched = info.get("matched") or None
    return code, canon_dn(matched) if matched else None, entries, count, refs


def diff_results(a, b, sizelimited):
    """Human-readable list of differences between a slapd and a lumend result."""
    out = []
    (ca, ma, ea, na, ra), (cb, mb, eb, nb, rb) = a, b
    if ca != cb:
        out.append(f"result code: slapd {ca}, lumend {cb}")
    if ma != mb:
        out.append(f"matchedDN: slapd {ma!r}, lumend {mb!r}")
    if sizelimited and ca == 4:
        if na != nb:
            out.append(f"entries before sizeLimitExceeded: slapd {na}, lumend {nb}")
        return out
    if na != len(ea) or nb != len(eb):
        out.append(f"duplicate entries: slapd {na}/{len(ea)}, lumend {nb}/{len(eb)}")
    only_a, only_b = sorted(set(ea) - set(eb)), sorted(set(eb) - set(ea))
    if only_a:
        out.append(f"{len(only_a)} entries only from slapd, e.g. {only_a[:3]}")
    if only_b:
        out.append(f"{len(only_b)} entries only from lumend, e.g. {only_b[:3]}")
    for dn in sorted(set(ea) & set(eb)):
        xa, xb = ea[dn], eb[dn]
        for n in sorted(set(xa) | set(xb)):
            if n in ONLY_IF_BOTH and (n not in xa or n not in xb):
                continue
            if n in IGNORE_IF_LUMEN_ONLY and n not in xa:
                continue
            if xa.get(n) != xb.get(n):
                out.append(f"{dn}: {n}: slapd {short(xa.get(n))}, lumend {short(xb.get(n))}")
                if len(out) > 8:
                    return out
    return out


def short(v):
    s = repr(v)
    return s if len(s) < 160 else s[:157] + "..."


# ---------------------------------------------------------------- searches

def generate_searches(tree, rnd):
    by_attr = {}
    for dn, attrs in tree:
        for n, vals in attrs.items():
            by_attr.setdefault(n, []).extend(vals)

    def val(attr):
        return rnd.choice(by_attr[attr]).decode("utf-8", "replace")

    def esc(v):
        return ldap.filter.escape_filter_chars(v)

    def variants(v):
        """The value, or an equivalent under the usual matching rules."""
        k = rnd.randrange(5)
        if k == 1:
            return v.upper()
        if k == 2:
            return v.lower()
        if k == 3:
            return "  " + v.replace(" ", "   ") + " "
        return v

    eq_attrs = ["cn", "sn", "givenName", "uid", "mail", "l", "title", "description",
                "telephoneNumber", "uidNumber", "gidNumber", "employeeNumber", "member",
                "owner", "manager", "memberUid", "ou", "o", "dc", "objectClass",
                "postalCode", "displayName", "serialNumber", "carLicense",
                "businessCategory", "initials", "uniqueMember", "loginShell",
                "homeDirectory", "street", "postalAddress", "userPassword",
                "roleOccupant", "st", "departmentNumber", "employeeType", "seeAlso",
                "shadowLastChange"]
    eq = []
    for _ in range(70):
        a = rnd.choice(eq_attrs)
        v = val(a)
        if a in ("member", "owner", "manager", "roleOccupant", "seeAlso") and rnd.random() < .5:
            v = v.upper().replace(",", " , ")                  # DN normalisation
        elif a not in ("userPassword", "uniqueMember"):
            v = variants(v)
        eq.append(f"({a}={esc(v)})")
    eq += ["(uid=nobody)", "(cn=Zoë*)", "(cn=ZOË ÅNGSTRÖM)", "(cn=zoë ångström)",
           "(sn=ÅNGSTRÖM)", "(l=zürich)", "(l=ZÜRICH)", "(givenName=ελένη)",
           "(mail=USER.4@example.com)", "(homeDirectory=/HOME/user.1)",
           "(uidNumber=1013)", "(uidNumber=01013)", "(uidNumber=abc)",
           "(telephoneNumber=+15550013)", "(telephoneNumber=+1-555-0013)",
           "(jpegPhoto=abc)", "(undefinedAttr=x)", "(objectClass=PERSON)",
           "(objectClass=2.5.6.6)", "(2.5.4.3=group.1)", "(commonName=group.1)",
           "(surname=Smith)", "(cn=Smith, John)", r"(cn=Smith\2c John)",
           r"(cn=a+b)", "(cn=#hash)", r"(cn=back\5cslash)", "(cn= leading space)",
           "(cn=leading space)", "(cn=trailing space)", "(description=line one\nline two)",
           "(description=leading and trailing)", "(member=uid=user.1,ou=people,dc=example,dc=com)",
           "(member=UID=USER.1, OU=PEOPLE, DC=EXAMPLE, DC=COM)", "(member=cn=bad dn syntax)",
           "(member=not a dn)", "(userPassword=password1)", "(userPassword=PASSWORD1)",
           "(memberUid=USER.8)", "(uniqueMember=uid=user.6,ou=people,dc=example,dc=com#'0101'B)",
           "(shadowLastChange=19006)", "(dc=SUB)", "(o=exämple ltd)", "(ou=departements)",
           "(ou=DÉPARTEMENTS)", "(postalAddress=10 rue de la paix$75002 paris$france)",
           "(cn=)", "(description=)"]

    sub_attrs = ["cn", "sn", "mail", "description", "telephoneNumber", "title", "l",
                 "givenName", "uid", "displayName", "memberUid", "ou", "homeDirectory",
                 "serialNumber", "carLicense", "postalAddress", "employeeNumber"]
    subs = []
    for _ in range(60):
        a = rnd.choice(sub_attrs)
        v = val(a)
        if len(v) < 3:
            continue
        i = rnd.randrange(len(v) - 1)
        j = rnd.randrange(i + 1, len(v))
        piece = variants(v[i:j]).strip()
        mid = len(v) // 2
        kind = rnd.randrange(6)
        parts = [[piece, None], [None, piece], [None, piece, None], [v[:2], v[-2:]],
                 [v[:1], piece, v[-1:]], [None, v[1:mid], v[mid:-1], None]][kind]
        if any(x is not None and not x.strip() for x in parts):
            continue                                           # D9
        f = f"({a}=" + "*".join(esc(x) if x else "" for x in parts) + ")"
        subs.append(f)
    subs += ["(cn=Zo*)", "(sn=*ström)", "(sn=*STRÖM)", "(cn=*ΕΛ*)", "(cn=*東京*)",
             "(mail=*@EXAMPLE.ORG)", "(telephoneNumber=*555-0*)", "(telephoneNumber=+1 5*)",
             "(uid=user.1*)", "(uid=*.1*1)", "(cn=*a*b*c*)", "(cn=A*a*)",
             "(description=*line*two*)", "(member=uid=user.1*)", "(uidNumber=10*)",
             "(objectClass=*Person)", "(homeDirectory=/home/USER*)", "(mail=user.1*)",
             "(cn=Smith\\2c*)", "(cn=*\\2a*)", "(cn=*space)", "(cn=*space *)", "(sn=van*berg)",
             "(jpegPhoto=*a*)", "(undefinedAttr=a*)"]

    ordering = []
    for _ in range(25):
        a = rnd.choice(["uidNumber", "gidNumber"])             # not shadow*: D10
        v = val(a)
        ordering.append(f"({a}{rnd.choice(['>=', '<='])}{v})")
    ordering += ["(uidNumber>=1190)", "(uidNumber<=1001)", "(uidNumber>=-5)",
                 "(uidNumber<=0)", "(cn>=M)", "(sn<=B)", "(uid>=user.5)",
                 "(createTimestamp>=19700101000000Z)", "(createTimestamp<=19700101000000Z)",
                 "(modifyTimestamp>=20000101000000Z)", "(employeeNumber>=00100)",
                 "(telephoneNumber>=+1)", "(uidNumber>=1100)",
                 "(gidNumber<=abc)", "(undefinedAttr>=5)", "(displayName>=Z)"]

    present = [f"({a}=*)" for a in ["objectClass", "cn", "sn", "mail", "description",
                                     "manager", "jpegPhoto", "shadowLastChange", "member",
                                     "uniqueMember", "memberUid", "seeAlso", "street",
                                     "undefinedAttr", "OBJECTCLASS", "2.5.4.3", "name",
                                     "createTimestamp", "entryUUID", "creatorsName",
                                     "structuralObjectClass", "entryDN", "userPassword",
                                     "modifiersName", "subschemaSubentry",
                                     "hasSubordinates", "carLicense", "dc", "l"]]

    ext = ["(cn:caseExactMatch:=group.1)", "(cn:caseExactMatch:=GROUP.1)",
           "(cn:2.5.13.5:=Smith, John)", "(cn:caseIgnoreMatch:=GROUP.1)",
           "(uidNumber:integerMatch:=1013)", "(uidNumber:2.5.13.14:=1013)",
           "(ou:dn:=people)", "(ou:dn:=PEOPLE)", "(ou:dn:=Alpha)", "(dc:dn:=sub)",
           "(dc:dn:=example)", "(cn:dn:=Smith, John)", "(sn:dn:=Smith)",
           "(uid:dn:=multi)", "(ou:dn:caseExactMatch:=people)", "(ou:dn:caseExactMatch:=PEOPLE)",
           "(:dn:caseIgnoreMatch:=alpha)", "(:dn:2.5.13.2:=engineering)",
           "(:caseExactMatch:=Smith)", "(:caseIgnoreMatch:=smith)",
           "(:2.5.13.14:=1013)", "(sn:caseExactMatch:=Ångström)",
           "(sn:caseExactMatch:=ångström)", "(l:caseIgnoreMatch:=ZÜRICH)",
           "(objectClass:objectIdentifierMatch:=person)",
           "(member:distinguishedNameMatch:=UID=USER.1,OU=PEOPLE,DC=EXAMPLE,DC=COM)",
           "(mail:caseIgnoreIA5Match:=USER.4@EXAMPLE.COM)", "(mail:caseExactIA5Match:=USER.4@EXAMPLE.COM)",
           "(cn:undefinedRule:=x)", "(undefinedAttr:dn:=x)", "(ou:dn:=Squad 1)",
           "(uidNumber:integerOrderingMatch:=1100)", "(sn:caseIgnoreOrderingMatch:=M)",
           "(cn:caseIgnoreSubstringsMatch:=group*)", "(uid:dn:caseIgnoreMatch:=USER.5)",
           "(o:dn:=Example Corp)"]

    absolute = ["(&)", "(|)", "(!(&))", "(!(|))", "(&(objectClass=person)(|))",
                "(|(&)(uid=nobody))", "(&(&)(uid=user.7))", "(!(!(&)))",
                "(&(|)(!(|)))", "(|(|)(|))"]

    atoms = eq + subs + ordering + present + ext

    def compound(depth):
        if depth == 0 or rnd.random() < 0.3:
            return rnd.choice(atoms + ["(&)", "(|)"])
        k = rnd.randrange(3)
        if k == 2:
            return f"(!{compound(depth - 1)})"
        parts = "".join(compound(depth - 1) for _ in range(rnd.randrange(1, 4)))
        return f"({'&|'[k]}{parts})"

    boolean = [compound(3) for _ in range(70)]
    boolean += ["(&(objectClass=inetOrgPerson)(!(mail=*@EXAMPLE.org)))",
                "(|(uid=user.1)(uid=user.2)(cn=group.3))",
                "(&(objectClass=posixAccount)(uidNumber>=1050)(uidNumber<=1060))",
                "(!(objectClass=inetOrgPerson))", "(!(undefinedAttr=x))",
                "(!(uidNumber=abc))", "(|(undefinedAttr=x)(uid=user.3))",
                "(&(undefinedAttr=x)(uid=user.3))", "(!(jpegPhoto=abc))",
                "(!(cn>=M))", "(&(!(cn=*))(objectClass=*))",
                "(&(objectClass=groupOfNames)(member=uid=user.10,ou=people,dc=example,dc=com))",
                "(|(member=uid=user.10,ou=people,dc=example,dc=com)(uniqueMember=uid=user.10,ou=people,dc=example,dc=com)(memberUid=user.10))"]

    categories = [("equality", eq), ("substrings", subs), ("ordering", ordering),
                  ("present", present), ("extensible", ext), ("absolute", absolute),
                  ("boolean", boolean)]

    S = treegen.SUFFIX
    bases = [S, S, S, f"ou=people,{S}", f"ou=groups,{S}", f"ou=Départements,{S}",
             f"ou=Engineering,ou=Départements,{S}",
             f"ou=Squad 1,ou=Alpha,ou=Engineering,ou=Départements,{S}",
             f"uid=user.5,ou=people,{S}", rf"cn=Smith\2C John,ou=special,{S}",
             rf"cn=Smith\, John,ou=special,{S}", f"ou=special,{S}", f"dc=sub,{S}",
             "OU=People, DC=Example,DC=COM", f"cn=group.3,ou=groups,{S}",
             f"cn=multi+uid=multi,ou=special,{S}", f"uid=multi+cn=multi,ou=special,{S}"]
    missing_bases = [f"ou=nope,{S}", f"uid=ghost,ou=people,{S}",
                     f"cn=x,uid=ghost,ou=people,{S}",
                     f"cn=deep,ou=nope,ou=Alpha,ou=Engineering,ou=Départements,{S}",
                     f"cn=under,uid=user.9,ou=people,{S}", "dc=com", "dc=other,dc=org",
                     f"cn=Smith\\2C Jane,ou=special,{S}", f"ou=PEOPLEX,{S}"]
    scopes = [ldap.SCOPE_BASE, ldap.SCOPE_ONELEVEL, ldap.SCOPE_SUBTREE, ldap.SCOPE_SUBTREE,
              ldap.SCOPE_SUBORDINATE]
    attr_lists = [None, ["*"], ["+"], ["*", "+"], ["1.1"], ["1.1"], ["cn", "mail"],
                  ["name"], ["CN", "UidNumber"], ["commonName"], ["objectClass"],
                  ["nonexistentAttr"], ["1.1", "uid"], ["entryDN", "hasSubordinates"],
                  ["structuralObjectClass"], ["cn", "+"], ["*", "createTimestamp"],
                  ["member", "uniqueMember"], ["cn;lang-en"], ["2.5.4.4"], ["sn", "sn"]]

    searches = []
    for cat, filters in categories:
        for f in filters:
            # Each filter once over the whole tree (the filter decides) ...
            searches.append((cat, S, ldap.SCOPE_SUBTREE, f, ["1.1"], 0, 0))
            # ... and once with a random base, scope and selection.
            base = rnd.choice(bases)
            scope = rnd.choice(scopes)
            attrs = rnd.choice(attr_lists)
            if scope == ldap.SCOPE_SUBTREE and base == S and attrs in (None, ["*"], ["*", "+"]):
                attrs = rnd.choice([["1.1"], ["cn", "mail"], ["name"]])
            typesonly = 1 if rnd.random() < 0.1 else 0
            sizelimit = rnd.choice([1, 3, 10]) if rnd.random() < 0.08 else 0
            searches.append((cat, base, scope, f, attrs, typesonly, sizelimit))
    # Bases that do not exist: every scope, a couple of filters.
    for base in missing_bases:
        for scope in (ldap.SCOPE_BASE, ldap.SCOPE_ONELEVEL, ldap.SCOPE_SUBTREE):
            searches.append(("missing base", base, scope, "(objectClass=*)", ["1.1"], 0, 0))
    # Every scope on a few bases, whole entries.
    for base in bases[3:]:
        for scope in (ldap.SCOPE_BASE, ldap.SCOPE_ONELEVEL, ldap.SCOPE_SUBTREE,
                      ldap.SCOPE_SUBORDINATE):
            searches.append(("scopes", base, scope, "(objectClass=*)", ["*", "+"], 0, 0))
    # Attribute selections and typesOnly on a fixed set of entries.
    for attrs in attr_lists:
        for typesonly in (0, 1):
            searches.append(("attributes", f"ou=special,{S}", ldap.SCOPE_SUBTREE,
                             "(objectClass=*)", attrs, typesonly, 0))
            searches.append(("attributes", f"ou=groups,{S}", ldap.SCOPE_ONELEVEL,
                             "(cn=group.*)", attrs, typesonly, 0))
    # Size limits.
    for limit in (1, 2, 5, 50, 400):
        for f in ("(objectClass=*)", "(uid=user.1*)", "(uid=user.17)", "(cn=nomatch)"):
            searches.append(("size limit", S, ldap.SCOPE_SUBTREE, f, ["1.1"], 0, limit))
    # The whole tree with everything.
    searches.append(("whole tree", S, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*", "+"], 0, 0))
    return searches


# ------------------------------------------------ sorted and VLV searches

def sorted_searches():
    """(label, base, scope, filter, sort keys, VLV request or None): sort keys
    with ordering rules on every scope, reverse order, two keys, keys some
    entries lack, and VLV windows by offset and by value."""
    people_filter = "(objectClass=inetOrgPerson)"
    out = []
    for keys in ("uidNumber", "-uidNumber", "cn:caseIgnoreOrderingMatch",
                 "-sn:caseIgnoreOrderingMatch,uidNumber", "gidNumber,-uidNumber"):
        for base, scope in ((P, ldap.SCOPE_ONELEVEL), (S, ldap.SCOPE_SUBTREE)):
            out.append((f"sort {keys}", base, scope, people_filter, keys, None))
    # Entries without the key (groups have no uidNumber) sort last.
    out.append(("sort: absent keys last", S, ldap.SCOPE_SUBTREE,
                "(|(cn=group.*)(uid=user.1*))", "uidNumber", None))
    # Errors: an unknown attribute, a type without ordering, a bad rule.
    for keys in ("nosuchattr", "description", "cn:nosuchRule"):
        out.append((f"sort error {keys}", P, ldap.SCOPE_ONELEVEL, people_filter, keys, None))
    for before, after, offset, count in ((0, 4, 1, 0), (2, 2, 10, 0), (3, 0, 400, 0),
                                         (1, 1, 5, 10), (0, 2, 0, 0)):
        out.append((f"vlv {before}/{after}/{offset}/{count}", P, ldap.SCOPE_ONELEVEL,
                    people_filter, "uidNumber", (before, after, offset, count, None)))
    for value in ("1050", "0", "99999"):
        out.append((f"vlv >= {value}", P, ldap.SCOPE_ONELEVEL, people_filter, "uidNumber",
                    (1, 2, 0, 0, value)))
    return out


def sort_controls(keys, vlv):
    """python-ldap request controls for "a,-b:rule" keys and a VLV request."""
    from ldap.controls.sss import SSSRequestControl
    from ldap.controls.vlv import VLVRequestControl
    controls = [SSSRequestControl(True, keys.split(","))]
    if vlv is not None:
        before, after, offset, count, value = vlv
        if value is None:
            controls.append(VLVRequestControl(True, before_count=before, after_count=after,
                                              offset=offset, content_count=count))
        else:
            controls.append(VLVRequestControl(True, before_count=before, after_count=after,
                                              greater_than_or_equal=value))
    return controls


def run_sorted(conn, base, scope, filt, keys, vlv):
    """(code, ordered canonical DNs, sort result, VLV target and count)."""
    from ldap.controls.sss import SSSResponseControl
    from ldap.controls.vlv import VLVResponseControl
    known = {c.controlType: c for c in (SSSResponseControl, VLVResponseControl)}
    try:
        msgid = conn.search_ext(base, scope, filt, ["1.1"],
                                serverctrls=sort_controls(keys, vlv))
        _, data, _, ctrls = conn.result3(msgid, timeout=60, resp_ctrl_classes=known)
        code = 0
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", repr(e)), [], None, None
    dns = [canon_dn(dn) for dn, _ in data if dn is not None]
    sort_result = vlv_state = None
    for c in ctrls:
        if c.controlType == SSSResponseControl.controlType:
            sort_result = c.sortResult
        elif c.controlType == VLVResponseControl.controlType:
            vlv_state = (c.targetPosition, c.contentCount, c.result)
    return code, dns, sort_result, vlv_state


def compare_sorted(ref, lum):
    """Each VLV search on a connection of its own: slapd keeps a VLV's sorted
    list on its connection for a follow-up request and answers busy (51) to
    another VLV request there meanwhile."""
    bad = []
    cases = sorted_searches()
    for label, base, scope, filt, keys, vlv in cases:
        results = []
        for server in (ref, lum):
            c = connect(server)
            results.append(run_sorted(c, base, scope, filt, keys, vlv))
            c.unbind_s()
        a, b = results
        kind = lum.kind
        if a != b:
            bad.append(f"{label} (-b '{base}' {filt}):\n         slapd {short(a)}"
                       f"\n         {kind} {short(b)}")
    r.check(f"sort/VLV: {len(cases)} sorted searches agree with slapd in order "
            f"({len(bad)} differ)", not bad, "\n       ".join(bad[:6]))


# ------------------------------------------- aliases and referral objects

LINKS = f"ou=links,{treegen.SUFFIX}"
ELSEWHERE = f"ou=elsewhere,{treegen.SUFFIX}"
MANAGE_DSA_IT = "2.16.840.1.113730.3.4.2"


def link_entries():
    """Aliases (to a subtree, to one user, a chain, a dangling one, a loop)
    and referral objects, added to both servers after the writes."""
    S = treegen.SUFFIX
    people = f"ou=people,{S}"

    def alias(cn, target):
        return (f"cn={cn},{LINKS}", [("objectClass", [b"alias", b"extensibleObject"]),
                                     ("cn", [cn.encode()]),
                                     ("aliasedObjectName", [target.encode()])])
    return [
        (LINKS, [("objectClass", [b"top", b"organizationalUnit"]), ("ou", [b"links"])]),
        alias("to-people", people),
        alias("to-user1", f"uid=user.1,{people}"),
        alias("chain", f"cn=to-people,{LINKS}"),
        alias("dangling", f"cn=nowhere,{S}"),
        alias("loop1", f"cn=loop2,{LINKS}"),
        alias("loop2", f"cn=loop1,{LINKS}"),
        (ELSEWHERE, [("objectClass", [b"referral", b"extensibleObject"]), ("ou", [b"elsewhere"]),
                     ("ref", [f"ldap://other.example.com/{ELSEWHERE}".encode()])]),
        (f"cn=ref-in-links,{LINKS}", [("objectClass", [b"referral", b"extensibleObject"]),
                                       ("cn", [b"ref-in-links"]),
                                       ("ref", [b"ldap://third.example.com/o=x"])]),
    ]


def link_searches(rnd):
    """(base, scope, filter, deref, manageDsaIT): every base and scope with
    a random filter, deref value and ManageDsaIT, then a random sample."""
    S = treegen.SUFFIX
    bases = [S, LINKS, f"cn=to-people,{LINKS}", f"cn=chain,{LINKS}", f"cn=to-user1,{LINKS}",
             f"cn=dangling,{LINKS}", f"cn=loop1,{LINKS}", ELSEWHERE, f"cn=x,{ELSEWHERE}",
             f"ou=people,{S}", f"cn=ref-in-links,{LINKS}"]
    filters = ["(objectClass=*)", "(uid=user.1*)", "(cn=to-*)", "(|(ou=*)(cn=loop*))",
               "(objectClass=alias)"]
    scopes = (ldap.SCOPE_BASE, ldap.SCOPE_ONELEVEL, ldap.SCOPE_SUBTREE)
    out = []
    for base in bases:
        for scope in scopes:
            for deref in range(4):
                out.append((base, scope, rnd.choice(filters), deref, rnd.random() < 0.25))
    return out


def run_link_search(conn, base, scope, filt, deref, manage):
    """(code, matchedDN, sorted entry DNs, sorted reference URLs)."""
    ctrls = [ldap.controls.LDAPControl(MANAGE_DSA_IT, True)] if manage else None
    conn.set_option(ldap.OPT_DEREF, deref)
    entries, refs = [], []
    try:
        msgid = conn.search_ext(base, scope, filt, ["1.1"], serverctrls=ctrls)
        while True:
            rtype, rdata, _, _ = conn.result3(msgid, all=0, timeout=60)
            if rtype == ldap.RES_SEARCH_ENTRY:
                entries += [canon_dn(dn) for dn, _ in rdata]
            elif rtype == ldap.RES_SEARCH_REFERENCE:
                refs += [u for _, urls in rdata for u in urls]
            elif rtype == ldap.RES_SEARCH_RESULT:
                break
        code, matched = 0, None
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        code, matched = info.get("result", repr(e)), info.get("matched") or None
        refs += [u for u in info.get("info", "").split("\n")[1:] if u]
    finally:
        conn.set_option(ldap.OPT_DEREF, ldap.DEREF_NEVER)
    return code, canon_dn(matched) if matched else None, sorted(entries), sorted(refs)


def compare_links(cref, clum, kind):
    for dn, attrs in link_entries():
        for c in (cref, clum):
            c.add_ext_s(dn, attrs, serverctrls=[ldap.controls.LDAPControl(MANAGE_DSA_IT, True)])
    bad = []
    searches = link_searches(random.Random(3296))
    derefs = ("never", "searching", "finding", "always")
    for base, scope, filt, deref, manage in searches:
        a = run_link_search(cref, base, scope, filt, deref, manage)
        b = run_link_search(clum, base, scope, filt, deref, manage)
        if a != b:
            bad.append(f"-b '{base}' -s {scope} -a {derefs[deref]}{' -M' if manage else ''} "
                       f"'{filt}':\n         slapd {short(a)}\n         {kind} {short(b)}")
    r.check(f"aliases and referrals: {len(searches)} searches (every base, scope and "
            f"deref) agree with slapd ({len(bad)} differ)", not bad, "\n       ".join(bad[:6]))


# ------------------------------------------------------------------ writes

S = treegen.SUFFIX
P = f"ou=people,{S}"
G = f"ou=groups,{S}"


def person(cn, **extra):
    attrs = {"objectClass": [b"top", b"person"], "cn": [cn.encode()], "sn": [b"Test"]}
    for k, v in extra.items():
        attrs[k] = [x.encode() if isinstance(x, str) else x for x in (v if isinstance(v, list) else [v])]
    return list(attrs.items())


def user(uid, **extra):
    attrs = {"objectClass": [b"top", b"person", b"organizationalPerson", b"inetOrgPerson",
                             b"posixAccount"],
             "uid": [uid.encode()], "cn": [b"New User"], "sn": [b"User"],
             "uidNumber": [b"5000"], "gidNumber": [b"100"], "homeDirectory": [b"/home/new"]}
    for k, v in extra.items():
        if v is None:
            attrs.pop(k, None)
        else:
            attrs[k] = [x.encode() if isinstance(x, str) else x for x in (v if isinstance(v, list) else [v])]
    return list(attrs.items())


A, D, R = ldap.MOD_ADD, ldap.MOD_DELETE, ldap.MOD_REPLACE

# (label, operation, arguments[, other right codes, reason]). Result codes
# (and matchedDN) of slapd and lumend must agree; where the RFCs allow a
# different code than OpenLDAP's, the alternatives and the reason follow.
WRITES = [
    ("add existing entry (68)", "add", (f"uid=user.1,{P}", user("user.1"))),
    ("add under a missing parent (32)", "add", (f"cn=x,ou=nope,{S}", person("x"))),
    ("add under a missing grandparent (32)", "add", (f"cn=x,ou=a,ou=nope,{P}", person("x"))),
    ("add outside every naming context (slapd 53)", "add", ("cn=x,dc=other,dc=org", person("x")),
     {32, 10}, "RFC 4511 §4.7 names no code; noSuchObject or a referral are as right as unwillingToPerform"),
    ("add with an invalid DN (34)", "add", ("cn=x,,dc=example", person("x"))),
    ("add without a MUST attribute (65)", "add", (f"uid=nosn,{P}", user("nosn", sn=None))),
    ("add with an attribute no class allows (65)", "add", (f"cn=nomail,{P}", person("nomail", mail="a@b.c"))),
    ("add without a structural class (65)", "add",
     (f"uid=aux,{P}", [("objectClass", [b"top", b"posixAccount"]), ("uid", [b"aux"]), ("cn", [b"aux"]),
                       ("uidNumber", [b"1"]), ("gidNumber", [b"1"]), ("homeDirectory", [b"/"])])),
    ("add with two unrelated structural classes (65)", "add",
     (f"cn=two,{P}", [("objectClass", [b"top", b"person", b"device"]), ("cn", [b"two"]), ("sn", [b"x"])])),
    ("add with an unknown objectClass (slapd 21)", "add",
     (f"cn=unk,{P}", [("objectClass", [b"top", b"person", b"noSuchClass"]), ("cn", [b"unk"]), ("sn", [b"x"])]),
     {65}, "an unknown class is an invalid objectClass value (21) or a schema violation (65, RFC 4512 §2.4.1)"),
    ("add without objectClass (65)", "add", (f"cn=nooc,{P}", [("cn", [b"nooc"]), ("sn", [b"x"])])),
    ("add with an undefined attribute type (17)", "add", (f"cn=undef,{P}", person("undef", fooBar="x"))),
    ("add with invalid integer syntax (21)", "add", (f"uid=badint,{P}", user("badint", uidNumber="abc"))),
    ("add with non-ASCII in an IA5 attribute (21)", "add", (f"uid=badmail,{P}", user("badmail", mail="zoë@example.com"))),
    ("add with invalid DN syntax in a DN attribute (21)", "add", (f"uid=badmgr,{P}", user("badmgr", manager="not a dn"))),
    ("add with two values of a single-valued attribute (19)", "add",
     (f"uid=twonum,{P}", user("twonum", uidNumber=["1", "2"]))),
    ("add with duplicate values (20)", "add", (f"cn=dup,{P}", person("dup", description=["x", "x"]))),
    ("add with case-duplicate values (20)", "add", (f"cn=dup2,{P}", person("dup2", description=["Same", "SAME"]))),
    ("add with an empty value (21)", "add", (f"cn=empty,{P}", person("empty", description=[""]))),
    ("add whose RDN value is missing from the entry (0: RFC 4511 §4.7 adds it)", "add", (f"cn=rdnmissing,{P}", person("other"))),
    ("add whose RDN attribute the class does not allow (65)", "add", (f"l=Nowhere,{P}", person("nol")),
     {64}, "namingViolation (64) is as fitting as objectClassViolation for an RDN the class forbids"),
    ("add with a NO-USER-MODIFICATION attribute (19)", "add",
     (f"cn=nousermod,{P}", person("nousermod", createTimestamp="20200101000000Z"))),
    ("add a valid person", "add", (f"cn=new person,{P}", person("new person", description=["one", "two"]))),
    ("add a valid user with non-ASCII", "add", (f"uid=zoë,{P}", user("zoë", cn=["Zoë Nouvelle"], uidNumber="5001"))),
    ("add a valid child of the new person", "add", (f"cn=kid,cn=new person,{P}", person("kid"))),
    ("add an escaped-DN entry", "add", (rf"cn=Doe\, Jane,{P}", person("Doe, Jane"))),
    ("delete a non-leaf entry (66)", "delete", (P,)),
    ("delete a non-leaf entry with one child (66)", "delete", (f"cn=new person,{P}",)),
    ("delete a missing entry (32)", "delete", (f"uid=nope,{P}",)),
    ("delete under a missing parent (32)", "delete", (f"cn=x,uid=nope,{P}",)),
    ("delete the suffix (66)", "delete", (S,)),
    ("delete a leaf", "delete", (f"cn=kid,cn=new person,{P}",)),
    ("delete an escaped-DN leaf given in hex form", "delete", (rf"cn=Doe\2C Jane,{P}",)),
    ("modify: second value of a single-valued attribute (19)", "modify",
     (f"uid=user.1,{P}", [(A, "uidNumber", [b"7"])])),
    ("modify: second value of displayName (19)", "modify",
     (f"uid=user.1,{P}", [(A, "displayName", [b"Other"])])),
    ("modify: add an existing value (20)", "modify", (f"uid=user.1,{P}", [(A, "uid", [b"user.1"])])),
    ("modify: add an existing value in another case (20)", "modify",
     (f"uid=user.1,{P}", [(A, "uid", [b"USER.1"])])),
    ("modify: delete a missing value (16)", "modify", (f"uid=user.1,{P}", [(D, "description", [b"no such"])])),
    ("modify: delete an absent attribute (16)", "modify", (f"uid=user.1,{P}", [(D, "jpegPhoto", None)])),
    ("modify: replace an absent attribute with nothing (0)", "modify", (f"uid=user.1,{P}", [(R, "jpegPhoto", None)])),
    ("modify: undefined attribute type (17)", "modify", (f"uid=user.1,{P}", [(A, "fooBar", [b"x"])])),
    ("modify: invalid integer (21)", "modify", (f"uid=user.1,{P}", [(R, "uidNumber", [b"12x"])])),
    ("modify: attribute not allowed (65)", "modify", (f"cn=new person,{P}", [(A, "mail", [b"a@b.c"])])),
    ("modify: remove a MUST attribute (65)", "modify", (f"uid=user.1,{P}", [(D, "sn", None)])),
    ("modify: remove an auxiliary class still in use (65)", "modify",
     (f"uid=user.2,{P}", [(D, "objectClass", [b"posixAccount"])])),
    ("modify: change the structural class (69 or 65)", "modify",
     (f"cn=new person,{P}", [(R, "objectClass", [b"top", b"device"])])),
    ("modify: delete the RDN value (slapd 64)", "modify", (f"uid=user.1,{P}", [(D, "uid", [b"user.1"])]),
     {67}, "RFC 4511 §4.6 asks for notAllowedOnRDN (67); OpenLDAP answers namingViolation (64)"),
    ("modify: replace the RDN attribute (slapd 64)", "modify", (f"uid=user.1,{P}", [(R, "uid", [b"other"])]),
     {67}, "RFC 4511 §4.6 asks for notAllowedOnRDN (67); OpenLDAP answers namingViolation (64)"),
    ("modify: NO-USER-MODIFICATION attribute (19)", "modify",
     (f"uid=user.1,{P}", [(R, "createTimestamp", [b"20200101000000Z"])])),
    ("modify: entryUUID (19)", "modify",
     (f"uid=user.1,{P}", [(R, "entryUUID", [b"00000000-0000-0000-0000-000000000000"])])),
    ("modify: missing entry (32)", "modify", (f"uid=nope,{P}", [(R, "description", [b"x"])])),
    ("modify: duplicate values in one add (20)", "modify",
     (f"uid=user.3,{P}", [(A, "description", [b"dup", b"dup"])])),
    ("modify: one bad change undoes the good ones (20)", "modify",
     (f"uid=user.3,{P}", [(R, "title", [b"Changed"]), (A, "uid", [b"user.3"])])),
    ("modify: several valid changes", "modify",
     (f"uid=user.4,{P}", [(R, "title", [b"Boss", b"Chef"]), (A, "mail", [b"extra@example.com"]),
                          (D, "mail", [b"user.4@example.com"]), (D, "description", None),
                          (A, "description", [b"Rewritten \xc3\xa9"]), (R, "jpegPhoto", [treegen.JFIF + b"\xff\xd9"])])),
    ("modify: a jpegPhoto that is not JFIF (slapd 0)", "modify",
     (f"uid=user.4,{P}", [(R, "jpegPhoto", [b"\x00\xff\x10"])]),
     {21}, "RFC 4517 §3.3.17: a JPEG value is a JFIF octet string; OpenLDAP does not check it"),
    ("modify: back to a JFIF jpegPhoto (0)", "modify",
     (f"uid=user.4,{P}", [(R, "jpegPhoto", [treegen.JFIF + b"\x01\xff\xd9"])])),
    ("modify: add then delete the same value (0)", "modify",
     (f"uid=user.5,{P}", [(A, "carLicense", [b"tmp"]), (D, "carLicense", [b"tmp"])])),
    ("modify: add an auxiliary class with its MUST attributes", "modify",
     (f"uid=user.5,{P}", [(A, "objectClass", [b"shadowAccount"]), (A, "shadowMax", [b"10"])])),
    ("modify: delete a member value given in another DN form (0)", "modify",
     (f"cn=group.1,{G}", [(D, "member", [b"UID=USER.6, OU=PEOPLE, DC=EXAMPLE, DC=COM"])])),
    ("modrdn to an existing entry (68)", "rename", (f"uid=user.1,{P}", "uid=user.2", None, True)),
    ("modrdn of a missing entry (32)", "rename", (f"uid=nope,{P}", "uid=nope2", None, True)),
    ("modrdn under a missing new superior (32)", "rename", (f"uid=user.6,{P}", "uid=user.6", f"ou=nope,{S}", True),
     {32}, "matchedDN (RFC 4511 §4.1.9) may name the deepest existing superior of newSuperior"),
    ("modrdn to an undefined attribute type (slapd 34)", "rename", (f"uid=user.6,{P}", "fooBar=x", None, False),
     {17}, "an RDN with an unknown type is an invalid DN (34) or an undefined type (17)"),
    ("modrdn to an attribute not allowed (65)", "rename", (f"cn=new person,{P}", "uid=np", None, False)),
    ("modrdn to a new value keeping the old", "rename", (f"uid=user.7,{P}", "uid=user.7b", None, False)),
    ("modrdn to a new value dropping the old", "rename", (f"uid=user.8,{P}", "uid=user.8b", None, True)),
    ("modrdn dropping a MUST attribute (65)", "rename", (f"uid=user.9,{P}", "mail=user.9@example.com", None, True)),
    ("modrdn to a multi-valued RDN", "rename", (f"uid=user.10,{P}", "uid=user.10+employeeNumber=00010", None, True)),
    ("modrdn with new superior", "rename", (f"uid=user.11,{P}", "uid=user.11", f"ou=special,{S}", True)),
    ("modrdn of a non-leaf with new superior", "rename",
     (f"ou=Beta,ou=Sales,ou=Départements,{S}", "ou=Gamma", f"ou=Support,ou=Départements,{S}", True)),
    ("modrdn of an entry under itself (slapd 53)", "rename",
     (f"ou=Sales,ou=Départements,{S}", "ou=Sales", f"ou=Alpha,ou=Sales,ou=Départements,{S}", True),
     {64, 32, 19}, "RFC 4511 §4.9 names no code for a move below itself"),
    ("compare true (6)", "compare", (f"uid=user.12,{P}", "uid", b"user.12")),
    ("compare true, other case (6)", "compare", (f"uid=user.12,{P}", "uid", b"USER.12")),
    ("compare false (5)", "compare", (f"uid=user.12,{P}", "uid", b"user.13")),
    ("compare an absent attribute (16)", "compare", (f"uid=user.12,{P}", "manager", b"uid=x")),
    ("compare an undefined attribute type (17)", "compare", (f"uid=user.12,{P}", "fooBar", b"x")),
    ("compare a missing entry (32)", "compare", (f"uid=nope,{P}", "uid", b"x")),
    ("compare a DN value in another form (6)", "compare",
     (f"cn=group.2,{G}", "member", b"UID=USER.31, OU=PEOPLE,DC=EXAMPLE,DC=COM")),
    ("compare an integer (6)", "compare", (f"uid=user.12,{P}", "uidNumber", b"1012")),
    ("compare an invalid integer (21)", "compare", (f"uid=user.12,{P}", "uidNumber", b"abc")),
    ("compare a telephone number ignoring spaces (6)", "compare",
     (f"uid=user.12,{P}", "telephoneNumber", b"+15550012")),
    ("compare an attribute with no equality rule (18)", "compare", (f"uid=user.13,{P}", "jpegPhoto", b"x")),
    ("compare a supertype (6)", "compare", (f"uid=user.12,{P}", "name", "Дмитрий JONES".encode())),
    ("compare entryDN (slapd 53)", "compare", (f"uid=user.12,{P}", "entryDN", f"uid=user.12,{P}".encode()),
     {6}, "entryDN has distinguishedNameMatch (RFC 5020), so compareTrue is right; OpenLDAP refuses"),
    ("compare hasSubordinates (6)", "compare", (P, "hasSubordinates", b"TRUE")),
    ("compare userPassword (6)", "compare", (f"uid=user.12,{P}", "userPassword", b"password12")),
]


def do_write(conn, op, args):
    """(result code, matchedDN)."""
    try:
        if op == "add":
            conn.add_s(*args)
        elif op == "delete":
            conn.delete_s(*args)
        elif op == "modify":
            conn.modify_s(*args)
        elif op == "rename":
            dn, newrdn, sup, delold = args
            conn.rename_s(dn, newrdn, sup, 1 if delold else 0)
        elif op == "compare":
            return (6 if conn.compare_s(*args) else 5), None
        return 0, None
    except ldap.SERVER_DOWN as e:
        return f"server down: {e}", None
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", repr(e)), canon_dn(info.get("matched") or None)


# ------------------------------------------------------------------ schema

def check_schema(cref, clum, kind):
    """The attribute types and object classes both servers publish agree."""
    import ldap.schema
    subs = []
    for c in (cref, clum):
        res = c.search_s("cn=Subschema", ldap.SCOPE_BASE, "(objectClass=*)",
                         ["attributeTypes", "objectClasses"])
        subs.append(res[0][1])
    oid_of = []
    parsed = []
    for sub in subs:
        ats = {}
        names = {}
        for v in sub.get("attributeTypes", []):
            o = ldap.schema.AttributeType(v.decode())
            ats[o.oid] = o
            for n in o.names:
                names[n.lower()] = o.oid
        ocs = {}
        for v in sub.get("objectClasses", []):
            o = ldap.schema.ObjectClass(v.decode())
            ocs[o.oid] = o
            for n in o.names:
                names[n.lower()] = o.oid
        oid_of.append(names)
        parsed.append((ats, ocs))

    def norm(i, field, value):
        if field in ("must", "may", "sup"):
            return frozenset(oid_of[i].get(n.lower()) or oid_of[1 - i].get(n.lower()) or n.lower()
                             for n in value)
        if field == "names":
            return frozenset(n.lower() for n in value)
        if field == "syntax":
            return value.split("{")[0] if value else value
        if isinstance(value, str):
            return value.lower()
        return value

    fields = {0: ["names", "sup", "equality", "ordering", "substr", "syntax", "single_value",
                  "no_user_mod", "usage", "collective"],
              1: ["names", "sup", "kind", "must", "may"]}
    unexplained, explained = [], 0
    for k in (0, 1):
        a, b = parsed[0][k], parsed[1][k]
        for oid in sorted(set(a) & set(b)):
            for f in fields[k]:
                x, y = norm(0, f, getattr(a[oid], f)), norm(1, f, getattr(b[oid], f))
                if x == y:
                    continue
                if (a[oid].names[0], f) in SCHEMA_DIFFERENCES:
                    explained += 1
                    continue
                unexplained.append(f"{a[oid].names[0]} {f}: slapd {getattr(a[oid], f)!r}, "
                                   f"{kind} {getattr(b[oid], f)!r}")
    ats_a, ats_b = parsed[0][0], parsed[1][0]
    used = {n.lower() for _, attrs in treegen.build_tree() for n in attrs}
    lacking = sorted(n for n in used if oid_of[1].get(n) is None)
    r.check(f"schema: the attribute types and classes both publish agree "
            f"({explained} documented differences)", not unexplained,
            "\n       ".join(unexplained[:20]))
    r.check(f"schema: {kind} defines every attribute type of the data", not lacking, repr(lacking))
    only = sorted(ats_a[o].names[0] for o in set(ats_a) - set(ats_b)
                  if not ats_a[o].names[0].startswith("olc"))
    print(f"  info t_differential.py: attribute types only slapd's schema holds: {', '.join(only)}")


# -------------------------------------------------------------------- main

def connect(server):
    c = ldap.initialize(server.uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.set_option(ldap.OPT_TIMEOUT, 60)
    c.set_option(ldap.OPT_REFERRALS, 0)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


def main():
    indexes = ["index objectClass eq", "index uid,memberUid eq", "index uidNumber,gidNumber eq",
               "index cn,sn,mail,givenName eq,sub,pres", "index member,uniqueMember eq",
               "index description sub", "dbnosync"]
    servers = []
    # slapd sorts through its sssvlv overlay; Lumen accepts the same lines.
    sssvlv = ["overlay sssvlv", "sssvlv-max 16"]
    ref = sh.Slapd(db_lines=indexes + sssvlv, global_lines=["moduleload sssvlv"])
    servers.append(ref)
    lum_kind = os.environ.get("LUMEN_IT_SERVER", "lumend")
    lum = sh.make_server(lum_kind, db_lines=indexes + sssvlv, global_lines=["moduleload sssvlv"])
    servers.append(lum)

    def watchdog(signum, frame):
        raise TimeoutError(f"t_differential.py: over {WATCHDOG_S} s")
    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(WATCHDOG_S)
    try:
        run(ref, lum)
    except TimeoutError as e:
        r.check("finishes within the watchdog", False, str(e))
    finally:
        signal.alarm(0)
        for s in servers:
            if s.alive():
                s.stop(r if s is lum else None)
            else:
                if s is lum:
                    r.check(f"{lum.kind} still running at the end", False, lum.log_text()[-2000:])
                s.cleanup()


def run(ref, lum):
    entries = treegen.build_tree()
    ldif_path = os.path.join(ref.tmp, "tree.ldif")
    treegen.write_ldif(entries, ldif_path)
    ref.start()
    lum.start()
    rc, out = ref.ldapadd(ldif_path)
    if not r.check(f"slapd loads the {len(entries)}-entry tree with ldapadd", rc == 0, out[-2000:]):
        return
    t0 = time.time()
    rc, out = lum.ldapadd(ldif_path)
    if not r.check(f"{lum.kind} loads the {len(entries)}-entry tree with ldapadd", rc == 0,
                   out[-2000:]):
        return
    print(f"  info t_differential.py: {lum.kind} load {time.time() - t0:.1f} s")
    cref, clum = connect(ref), connect(lum)

    check_schema(cref, clum, lum.kind)

    rnd = random.Random(2849)
    searches = generate_searches(entries, rnd)
    by_cat = {}
    nonempty = 0
    for s in searches:
        cat, base, scope, filt, attrs, typesonly, sizelimit = s
        ref_filt = filt
        for mine, theirs in (SUBSTITUTE.items() if lum.kind == "lumend" else ()):
            ref_filt = ref_filt.replace(mine, theirs)
        a = run_search(cref, base, scope, ref_filt, attrs, typesonly, sizelimit)
        b = run_search(clum, base, scope, filt, attrs, typesonly, sizelimit)
        if a[3]:
            nonempty += 1
        d = diff_results(a, b, sizelimit > 0)
        st = by_cat.setdefault(cat, [0, []])
        st[0] += 1
        if d:
            st[1].append((s, d))
        if isinstance(b[0], str) and b[0].startswith("server down"):
            r.check(f"{lum.kind} survives the searches", False,
                    f"after {s}: {lum.log_text()[-2000:]}")
            return
    print(f"  info t_differential.py: {len(searches)} searches, {nonempty} returned entries on slapd")
    scopes = {0: "base", 1: "one", 2: "sub", 3: "children"}
    for cat, (n, bad) in by_cat.items():
        detail = ""
        for (c, base, scope, filt, attrs, typesonly, sizelimit), d in bad[:6]:
            detail += (f"\n       search -b '{base}' -s {scopes[scope]} '{filt}' attrs={attrs}"
                       f"{' typesOnly' if typesonly else ''}{f' sizelimit={sizelimit}' if sizelimit else ''}"
                       + "".join(f"\n         {x}" for x in d[:5]))
        if len(bad) > 6:
            detail += f"\n       ... and {len(bad) - 6} more"
        r.check(f"{cat}: {n} searches agree with slapd ({len(bad)} differ)", not bad, detail.lstrip("\n"))

    compare_sorted(ref, lum)

    # Writes: result codes (and matchedDN) agree.
    for label, op, args, *alt in WRITES:
        a = do_write(cref, op, args)
        b = do_write(clum, op, args)
        # A write whose code legitimately differs lists the other codes that
        # are right too and why (alt = (codes, reason)).
        same = a == b or (alt and b[0] in alt[0])
        r.check(f"write: {label}: slapd {a[0]}, {lum.kind} {b[0]}", same,
                f"slapd {a}, {lum.kind} {b}")
    # And the tree they leave behind.
    a = run_search(cref, S, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*", "+"], 0, 0)
    b = run_search(clum, S, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*", "+"], 0, 0)
    d = diff_results(a, b, False)
    r.check(f"the tree after the writes agrees ({a[3]} entries)", not d, "\n       ".join(d))
    compare_links(cref, clum, lum.kind)
    for c in (cref, clum):
        try:
            c.unbind_s()
        except ldap.LDAPError:
            pass


if __name__ == "__main__":
    main()
    r.finish()
