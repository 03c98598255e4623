#!/usr/bin/env python3
"""verify-migration.py — compares two LDIF exports entry by entry.

    verify-migration.py BEFORE.ldif AFTER.ldif

For an offline move from OpenLDAP: BEFORE is what `slapcat` wrote, AFTER is
what `lumencat` writes once `lumenadd` loaded BEFORE. Every entry must be
in both, with the same attributes and values, operational ones included
(entryUUID, entryCSN, creatorsName, createTimestamp, modifiersName,
modifyTimestamp, structuralObjectClass). DNs and attribute names compare
case-insensitively, values byte for byte, in any order. Prints each
difference and exits 1, or prints "same N entries" and exits 0.

Needs python3-ldap (its ldif module), as the integration tests do.
"""
import sys

import ldif


def entries(path):
    """{lowercased DN: (DN, {lowercased attribute: sorted values})}"""
    with open(path, "rb") as f:
        records = ldif.LDIFRecordList(f)
        records.parse()
    out = {}
    for dn, attrs in records.all_records:
        folded = {}
        for name, values in attrs.items():
            folded.setdefault(name.lower(), []).extend(values)
        out[dn.lower()] = (dn, {k: sorted(v) for k, v in folded.items()})
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = entries(argv[1]), entries(argv[2])
    differences = []
    for key in sorted(before.keys() - after.keys()):
        differences.append("only in %s: %s" % (argv[1], before[key][0]))
    for key in sorted(after.keys() - before.keys()):
        differences.append("only in %s: %s" % (argv[2], after[key][0]))
    for key in sorted(before.keys() & after.keys()):
        dn, a = before[key]
        b = after[key][1]
        for name in sorted(a.keys() | b.keys()):
            if a.get(name) != b.get(name):
                differences.append("%s: %s: %r != %r" % (dn, name, a.get(name), b.get(name)))
    for line in differences:
        print(line)
    if differences:
        return 1
    print("same %d entries" % len(before))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
