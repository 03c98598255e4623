#!/usr/bin/env python3
"""Write the fuzz_access seeds (tests/fuzz/corpus/fuzz_access/): one file per
WHAT/WHO/level form, a few multi-rule files (the example slapd.conf's rules),
and error cases. Run from the repository root."""
import os

OUT = "tests/fuzz/corpus/fuzz_access"
os.makedirs(OUT, exist_ok=True)
B = "dc=example,dc=com"
seeds = {
    "what-any": "access to * by * read",
    "what-dn-base": f'access to dn.base="{B}" by * read',
    "what-dn-exact-spaces": 'access to dn.exact="ou=People, dc=Example,dc=COM" by * search',
    "what-dn-one": f'access to dn.one="{B}" by * compare',
    "what-dn-children": f'access to dn.children="{B}" by * read',
    "what-dn-subtree-empty": 'access to dn.subtree="" by * read',
    "what-dn-regex": f'access to dn.regex="^uid=([^,]+),ou=people,{B}$" by dn.exact="uid=$1,ou=people,{B}" write by * read',
    "what-attrs": "access to attrs=userPassword,entry,children by self write by anonymous auth by * none",
    "what-attrs-class": 'access to attrs="@inetOrgPerson, mail" by users read',
    "what-attr-sup": "access to attr=name by * read",
    "what-filter": 'access to filter="(&(objectClass=person)(|(cn=a*)(!(sn=b))))" by * read',
    "what-combined": f'access to dn.subtree="ou=people,{B}" filter=(objectClass=posixAccount) attrs=uidNumber,gidNumber by * read',
    "who-all": f'access to * by self write by anonymous auth by users read by dn="cn=admin,{B}" manage by dn.subtree="ou=admins,{B}" write by * none',
    "who-regex": 'access to * by dn.regex="^cn=[^,]+,ou=apps,dc=example,dc=com$" read',
    "who-group": f'access to * by group="cn=admins,{B}" write by group/groupOfUniqueNames/uniqueMember="cn=ops,{B}" read',
    "who-group-expand": f'access to dn.regex="^ou=([^,]+),{B}$" by group.expand="cn=$1,ou=groups,{B}" write',
    "levels-controls": "access to * by users disclose continue by users compare break by * search stop",
    "levels-all": "access to * by anonymous none by users auth by self manage",
    "example-conf": "\n".join([
        "access to attrs=userPassword", "        by self write", "        by anonymous auth",
        "        by * none", 'access to dn.base="" by * read', 'access to dn.base="cn=Subschema" by * read',
        'access to dn.subtree="cn=Monitor" by * none', "access to *", "        by users read", "        by * none"]),
    "example-conf-one-line": "\n".join([
        "access to attrs=userPassword by self write by anonymous auth by * none",
        'access to dn.base="" by * read', 'access to dn.base="cn=Subschema" by * read',
        'access to dn.subtree="cn=Monitor" by * none', "access to * by users read by * none"]),
    "quoted-escapes": 'access to "dn.base=cn=a \\"b\\",dc=com" by "dn=cn=x\\\\y,dc=com" read',
    "err-missing-by": "access to *",
    "err-unknown-who": "access to * by everybody read",
    "err-bad-regex": 'access to dn.regex="^uid=(" by * read',
    "err-unknown-attr": "access to attrs=noSuchAttribute,cn,,sn by * read",
    "err-bad-dn": 'access to dn.base="not a dn" by dn.exact="cn=x,," read',
    "err-dollar-no-regex": 'access to * by dn="uid=$1,dc=com" read',
    "err-level": "access to * by * =rwx\naccess to * by * read stop extra",
    "err-twice": 'access to * dn.base="dc=x" by * read\naccess to attrs=cn attrs=sn by * read',
}
for name, text in seeds.items():
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text + "\n")
print(f"{len(seeds)} seeds in {OUT}")
