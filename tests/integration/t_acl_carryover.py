#!/usr/bin/env python3
"""An access decision belongs to one entry and never carries over to the next.

The search's access control sets its target up while the backend tests an
entry against the filter, and the sink reuses it for that entry. An entry
whose filter test failed is freed at once when the entry cache does not keep
it (cache off, a full cache, a partial read), and the next entry read can get
the same memory: decided by its address, it would inherit the freed entry's
verdict. Two ways in, run on Lumen with the cache off and with its default
cache, and on slapd, which must answer the same:

  - references: referral objects in a subtree every requester is denied
    reach the sink without a filter test; an anonymous search whose filter
    matches nothing must return no reference at all;
  - a sorted search sends its window from a second fetch of each entry, with
    no filter test: each entry's attributes are decided for that entry
    (description hidden on the odd* entries, readable on the others). The
    last entry its collection pass tests is a readable one of odd00's size,
    the first of the window; glibc did not hand its memory to odd00 in our
    runs, so this part checks the per-entry decision, not the reuse itself.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls.sss import SSSRequestControl  # noqa: E402

R = h.Results("t_acl_carryover.py")
B = sh.SUFFIX
PUBLIC, SECRET = f"ou=public,{B}", f"ou=secret,{B}"
PAIRS = 40
RULES = [f'access to dn.subtree="{SECRET}" by * none',
         f'access to dn.regex="^uid=odd[0-9]+,{PUBLIC}$" attrs=description by * none',
         "access to * by * read"]
SSSVLV = ["overlay sssvlv", "sssvlv-max 1000"]


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PUBLIC}\nobjectClass: organizationalUnit\nou: public\n",
           f"dn: {SECRET}\nobjectClass: organizationalUnit\nou: secret\n"]
    for i in range(PAIRS):
        # sizes vary so that allocations of every size get reused
        pad = "x" * (i * 8 + 1)
        for uid in (f"u{i:02}", f"odd{i:02}"):
            out.append(f"dn: uid={uid},{PUBLIC}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                       f"cn: {uid}\nsn: s\ndescription: {uid} {pad}\n")
        out.append(f"dn: cn=ref{i},{SECRET}\nobjectClass: referral\n"
                   f"objectClass: extensibleObject\ncn: ref{i}\n"
                   f"ref: ldap://hidden.example/cn=ref{i},{SECRET}\n")
    # The last ID: readable, outside the sorted search's filter, and the
    # size of odd00 (the window's first entry), so that its freed memory
    # is what odd00 is read into.
    out.append(f"dn: uid=zdd00,{PUBLIC}\nobjectClass: inetOrgPerson\nuid: zdd00\n"
               "cn: zdd00\nsn: s\ndescription: zdd00 x\n")
    return "\n".join(out)


def messages(conn, filterstr, attributes, controls=None):
    """(entries {dn: attributes}, references) of an anonymous subtree search."""
    msgid = conn.search_ext(B, ldap.SCOPE_SUBTREE, filterstr, attributes,
                            serverctrls=controls)
    entries, references = {}, []
    while True:
        kind, data, _, _ = conn.result3(msgid, all=0)
        if kind == ldap.RES_SEARCH_RESULT:
            return entries, references
        for dn, value in data:
            if kind == ldap.RES_SEARCH_REFERENCE:
                references.append(value)
            else:
                entries[dn] = {k: sorted(v) for k, v in value.items()}


def expected_sorted():
    want = {}
    for i in range(PAIRS):
        want[f"uid=u{i:02},{PUBLIC}"] = {"uid": [f"u{i:02}".encode()],
                                          "description": [f"u{i:02} {'x' * (i * 8 + 1)}".encode()]}
        want[f"uid=odd{i:02},{PUBLIC}"] = {"uid": [f"odd{i:02}".encode()]}
    return want


def scenarios(label, server):
    conn = ldap.initialize(server.uri)
    conn.set_option(ldap.OPT_REFERRALS, 0)
    for attributes in (["uid"], ["*"]):
        entries, references = messages(conn, "(uid=nomatch)", attributes)
        R.check(f"{label}: no match, {attributes}: no entry and no hidden reference",
                (entries, references) == ({}, []), f"{len(references)} references: "
                f"{references[:2]}")
    sort = [SSSRequestControl(True, ["uid:caseIgnoreOrderingMatch"])]
    entries, references = messages(conn, "(|(uid=u*)(uid=odd*))", ["uid", "description"], sort)
    want = expected_sorted()
    wrong = sorted(dn for dn in set(want) | set(entries) if entries.get(dn) != want.get(dn))
    R.check(f"{label}: sorted: each entry's description decided for that entry",
            not wrong and references == [], f"{len(wrong)} wrong, e.g. "
            f"{[(dn, entries.get(dn)) for dn in wrong[:2]]}")
    conn.unbind_s()


def run(kind, cache):
    label = kind if cache is None else f"{kind}, cachesize {cache}"
    db_lines = SSSVLV + ([f"cachesize {cache}"] if cache is not None else [])
    global_lines = RULES + (["moduleload sssvlv"] if kind == "slapd" else [])
    server = sh.make_server(kind, db_lines=db_lines, global_lines=global_lines).start()
    try:
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = server.ldapadd(path)
        R.check(f"{label}: loaded", rc == 0, out)
        scenarios(label, server)
    finally:
        server.stop(R)


def main():
    run("lumend", "off")
    run("lumend", "10000")
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available for the same scenarios", False, missing)
    else:
        run("slapd", None)
    R.finish()


if __name__ == "__main__":
    main()
