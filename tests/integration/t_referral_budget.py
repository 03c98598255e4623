#!/usr/bin/env python3
"""A search an I/O thread starts (inline-reads) and hands to a worker
because its plan exceeds the examine budget must still meet the database's
referral objects: the worker plans them. The I/O thread's attempt used to
add the referral objects to a plan it had not made, and lumend crashed on
any equality search over more than 64 candidates in a database holding a
referral object. Checked with inline reads on and off: the same 100
entries and the same reference."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Lumend, Results  # noqa: E402

R = Results("t_referral_budget.py")
B = "dc=example,dc=com"
PEOPLE = 100


def ldif(tmp):
    path = os.path.join(tmp, "tree.ldif")
    with open(path, "w") as f:
        f.write(f"dn: {B}\nobjectClass: domain\ndc: example\n\n"
                f"dn: ou=people,{B}\nobjectClass: organizationalUnit\nou: people\n\n"
                f"dn: ou=elsewhere,{B}\nobjectClass: referral\nobjectClass: extensibleObject\n"
                f"ou: elsewhere\nref: ldap://other.example.com/ou=elsewhere,{B}\n\n")
        for i in range(PEOPLE):
            f.write(f"dn: uid=p{i},ou=people,{B}\nobjectClass: inetOrgPerson\nuid: p{i}\n"
                    f"cn: p{i}\nsn: p\n\n")
    return path


def search(srv):
    p = subprocess.run(["ldapsearch", "-x", "-LLL", "-H", f"ldap://127.0.0.1:{srv.port}", "-b",
                        B, "(objectClass=inetOrgPerson)", "1.1"],
                       capture_output=True, text=True, timeout=30)
    return (p.returncode, sum(1 for line in p.stdout.splitlines() if line.startswith("dn: ")),
            [line for line in p.stdout.splitlines() if line.startswith("# refldap")])


tmp = tempfile.mkdtemp(prefix="t_referral_budget.")
for inline in ("on", "off"):
    srv = Lumend(extra_config=f"inline-reads {inline}", db_config="index objectClass eq",
                 preload=ldif(tmp))
    try:
        rc, entries, refs = search(srv)
        R.check(f"inline-reads {inline}: {PEOPLE} people and the referral's reference, "
                "from one equality search", (rc, entries, len(refs)) == (0, PEOPLE, 1),
                f"rc {rc}, {entries} entries, references {refs}")
        R.check(f"inline-reads {inline}: lumend still answers", srv.answers())
    finally:
        srv.stop(R)
R.finish()
