#!/usr/bin/env python3
"""Approximate matching (`~=`) side by side with OpenLDAP's slapd (back-mdb),
without an index and with `index cn,sn,uid eq,approx`.

slapd's approxMatch splits values at spaces, codes each word with its
Metaphone variant (at most four characters) and matches when every word of
the assertion is found among the value's words, in order. Lumen must select
the same entries for every filter below: (cn~=Smyth) finds cn "Alice
Smith", word order counts, silent and doubled letters follow slapd's
quirks ("Bob" and "Bobb" differ), and non-string types match as equality.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_approx.py")
B = sh.SUFFIX
PEOPLE = f"ou=people,{B}"
NAMES = ["Alice Smith", "Bob Smyth", "Jon Schmidt", "John Smithe", "Robert Knight",
         "Rupert Night", "Xavier Box", "Alexandra Thomas", "Philip O'Brien", "Bobb Brown",
         "Smith Alice", "Catherine Zeta-Jones", "Kathryn Jones", "Müller Jörg"]
FILTERS = ["(cn~=Smyth)", "(cn~=Smith)", "(sn~=Smith)", "(cn~=smit)", "(cn~=Alise)",
           "(cn~=Alice Smyth)", "(cn~=Smyth Alice)", "(cn~=Alice Bob)", "(cn~=Bob)",
           "(cn~=Bobb)", "(cn~=Jon)", "(cn~=John)", "(cn~=Schmidt)", "(cn~=Robert)",
           "(cn~=Rupert)", "(cn~=Night)", "(cn~=Knight)", "(cn~=Zavier)", "(cn~=Boks)",
           "(cn~=Alexander)", "(cn~=Tomas)", "(cn~=Filip)", "(cn~=O'Brian)", "(cn~=Jones)",
           "(cn~=Catherine)", "(cn~=Kathryn)", "(cn~=Zeta)", "(cn~=Muller)", "(cn~= )",
           "(uid~=user3)", "(uid~=USER3)", "(uidNumber~=1003)", "(|(cn~=Smyth)(cn~=Night))",
           "(&(cn~=Smith)(sn~=Smith))", "(!(cn~=Smyth))"]


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n"]
    for i, name in enumerate(NAMES):
        out.append(f"dn: uid=user{i},{PEOPLE}\nobjectClass: inetOrgPerson\n"
                   f"objectClass: posixAccount\nuid: user{i}\ncn: {name}\n"
                   f"sn: {name.split()[-1]}\nuidNumber: {1000 + i}\ngidNumber: 100\n"
                   f"homeDirectory: /home/user{i}\n")
    return "\n".join(out) + "\n"


def results(kind, db_lines):
    server = sh.make_server(kind, db_lines=db_lines).start()
    try:
        path = os.path.join(server.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = server.ldapadd(path)
        if rc != 0:
            raise RuntimeError(f"{kind}: loading failed: {out}")
        conn = sh.bind(server)
        got = {}
        for filt in FILTERS:
            try:
                found = conn.search_s(PEOPLE, ldap.SCOPE_SUBTREE, filt, ["1.1"])
                got[filt] = sorted(NAMES[int(dn.split(",")[0][len("uid=user"):])]
                                   for dn, _ in found if dn and dn.startswith("uid="))
            except ldap.LDAPError as e:
                got[filt] = e.args[0].get("result")
        conn.unbind_s()
        return got
    finally:
        server.stop(R if kind == "lumend" else None)


def main():
    reason = sh.slapd_missing()
    if reason:
        R.check("slapd available for the side-by-side run", False, reason)
        R.finish()
    for db_lines, name in (([], "unindexed"), (["index cn,sn,uid eq,approx"], "approx index")):
        slapd = results("slapd", db_lines)
        lumen = results("lumend", db_lines)
        for filt in FILTERS:
            R.check(f"{name}: {filt} selects what slapd selects", slapd[filt] == lumen[filt],
                    f"slapd {slapd[filt]}\n       lumen {lumen[filt]}")
        R.check(f"{name}: (cn~=Smyth) finds Alice Smith",
                "Alice Smith" in lumen["(cn~=Smyth)"], str(lumen["(cn~=Smyth)"]))
        R.check(f"{name}: words in order: (cn~=Alice Smyth) is not 'Smith Alice'",
                lumen["(cn~=Alice Smyth)"] == ["Alice Smith"], str(lumen["(cn~=Alice Smyth)"]))
    R.finish()


if __name__ == "__main__":
    main()
