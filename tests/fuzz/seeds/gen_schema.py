#!/usr/bin/env python3
"""Write the fuzz_schema seeds (tests/fuzz/corpus/fuzz_schema/): each shipped
schema file whole (core first, as the others build on it), a few small
self-contained cuts, and hand-written definitions for the features the
shipped files do not use. Run from the repository root."""
import os

OUT = "tests/fuzz/corpus/fuzz_schema"
os.makedirs(OUT, exist_ok=True)


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)


core = open("schema/core.schema").read()
for name in ("core", "cosine", "inetorgperson", "nis", "lumen", "monitor"):
    write(f"file-{name}", open(f"schema/{name}.schema").read())

# Definitions of core.schema, grouped as written (blank-line separated
# paragraphs); a small self-contained slice: the first paragraphs.
paragraphs = [p for p in core.split("\n\n") if "attributetype" in p or "objectclass" in p]
write("core-basics", "objectidentifier ldapSyntax 1.3.6.1.4.1.1466.115.121.1\n\n" +
      "\n\n".join(paragraphs[:8]) + "\n")

S = "1.3.6.1.4.1.1466.115.121.1"
hand = {
    "at-minimal": "attributetype ( 1.2.3.4 )\n",
    "at-full": f"attributetype ( 1.2.3.4 NAME ( 'fooBar' 'fb' ) DESC 'a \\27quoted\\5c desc'\n"
               f"  OBSOLETE EQUALITY caseIgnoreMatch ORDERING caseIgnoreOrderingMatch\n"
               f"  SUBSTR caseIgnoreSubstringsMatch SYNTAX {S}.15{{64}} SINGLE-VALUE\n"
               f"  COLLECTIVE NO-USER-MODIFICATION USAGE directoryOperation\n"
               f"  X-ORIGIN 'fuzz' X-LIST ( 'a' 'b' ) )\n",
    "at-sup-chain": f"attributetype ( 1.2.3.1 NAME 'a' EQUALITY integerMatch ORDERING integerOrderingMatch SYNTAX {S}.27 )\n"
                    "attributetype ( 1.2.3.2 NAME 'b' SUP a )\nattributetype ( 1.2.3.3 NAME 'c' SUP b SINGLE-VALUE )\n",
    "at-sup-cycle": "attributetype ( 1.2.3.1 NAME 'a' SUP b )\nattributetype ( 1.2.3.2 NAME 'b' SUP a )\n",
    "at-usages": "".join(f"attributetype ( 1.2.3.{i} NAME 'u{i}' SYNTAX {S}.15 USAGE {u} )\n"
                         for i, u in enumerate(["userApplications", "directoryOperation",
                                                "distributedOperation", "dSAOperation"])),
    "oid-macros": "objectidentifier base 1.2.3\nobjectidentifier attrs base:1\nobjectidentifier classes base:2\n"
                  f"attributetype ( attrs:1 NAME 'm1' SYNTAX {S}.15 EQUALITY caseExactMatch )\n"
                  "objectclass ( classes:1 NAME 'mc' SUP top AUXILIARY MAY m1 )\n"
                  "objectclass ( 2.5.6.0 NAME 'top' ABSTRACT MUST m1 )\n",
    "oc-kinds": f"attributetype ( 1.2.3.9 NAME 'x' SYNTAX {S}.15 )\n"
                "objectclass ( 1.2.4.0 NAME 'top' ABSTRACT MUST x )\n"
                "objectclass ( 1.2.4.1 NAME 's' DESC 'structural' SUP top STRUCTURAL MUST ( x $ 1.2.3.9 ) MAY x )\n"
                "objectclass ( 1.2.4.2 NAME 'aux' SUP ( top $ s ) AUXILIARY OBSOLETE X-ORIGIN 'here' )\n",
    "continuations": "# comment\n\nattributetype ( 1.2.3.4\n NAME 'cont'\n\tSYNTAX\n  "
                     f"{S}.15 )\n#another\nobjectclass ( 1.2.4.4 NAME 'oc' )\n",
    "duplicate-name": f"attributetype ( 1.2.3.4 NAME 'd' SYNTAX {S}.15 )\nattributetype ( 1.2.3.5 NAME 'D' SYNTAX {S}.15 )\n",
    "dangling": "attributetype ( 1.2.3.4 NAME 'd' SUP nothing )\nobjectclass ( 1.2.4.1 NAME 'o' MUST missing )\n",
    "unterminated": "attributetype ( 1.2.3.4 NAME 'd\n",
    "unknown-keyword": "ditcontentrule ( 1.2.3.4 NAME 'x' )\nldapsyntax ( 1.2.3 DESC 'x' )\n",
    "bad-rule-kind": f"attributetype ( 1.2.3.4 NAME 'k' EQUALITY caseIgnoreSubstringsMatch SYNTAX {S}.15 )\n",
    "syntax-unknown": "attributetype ( 1.2.3.4 NAME 'k' SYNTAX 9.9.9{12} )\n",
}
for name, text in hand.items():
    write(name, text)
print(f"{len(os.listdir(OUT))} seeds in {OUT}")
