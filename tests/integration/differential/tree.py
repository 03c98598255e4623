"""tree.py — the differential test's directory tree, generated deterministically.

`build_tree(seed)` returns a list of (dn, {attr: [bytes, ...]}) in parent-first
order: ~330 entries over five levels, with
  - inetOrgPerson + posixAccount (+ shadowAccount) users with multi-valued cn,
    mail, title, telephoneNumber, non-ASCII values (Latin, Greek, CJK),
    DN-valued manager/seeAlso, binary jpegPhoto, a multi-line description;
  - groupOfNames, groupOfUniqueNames and posixGroup groups;
  - devices, roles, localities, a nested `domain`;
  - DNs that need escaping (`,` `+` `"` `\\` `<` `>` `;` `=` leading `#`
    and leading/trailing spaces), non-ASCII RDNs and a multi-valued RDN.
Every DN is written in the form RFC 4514 producers use (so a server may
return it verbatim). `write_ldif(entries, path)` writes LDIF via python-ldap.
"""
import random

import ldif

SUFFIX = "dc=example,dc=com"

FIRST = ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan",
         "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent",
         "Victor", "Walter", "Zoë", "Åsa", "Jürgen", "François", "Øyvind", "Ñandú",
         "Ελένη", "Дмитрий", "美咲", "Łukasz", "Ümit"]
LAST = ["Smith", "Jones", "O'Brien", "van der Berg", "Müller", "Ångström", "Núñez",
        "Dupont", "Кузнецов", "Παπαδόπουλος", "山田", "Nguyễn", "Smithson", "Smyth",
        "Johnson", "Jonas", "Berg", "Bergström", "De La Cruz", "Kowalski"]
CITIES = ["Paris", "Zürich", "São Paulo", "Kraków", "Tōkyō", "München", "Reykjavík",
          "New York", "Berlin", "Malmö"]
TITLES = ["Engineer", "Senior Engineer", "Manager", "Director", "Intern", "Analyst",
          "Développeur", "Ingénieur", "Architect"]
DEPTS = ["Engineering", "Sales", "Support", "Research", "Finance"]
JFIF = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
SHELLS = ["/bin/bash", "/bin/zsh", "/bin/sh", "/usr/bin/fish"]


def b(v):
    return v.encode("utf-8") if isinstance(v, str) else v


def entry(**attrs):
    out = {}
    for k, vals in attrs.items():
        if vals is None:
            continue
        if not isinstance(vals, (list, tuple)):
            vals = [vals]
        vals = [b(str(v) if isinstance(v, int) else v) for v in vals]
        if vals:
            out[k] = vals
    return out


def build_tree(seed=4511):
    rnd = random.Random(seed)
    tree = []

    def add(dn, **attrs):
        tree.append((dn, entry(**attrs)))
        return dn

    add(SUFFIX, objectClass=["top", "dcObject", "organization"], dc="example",
        o=["Example Corp", "Exämple Ltd"], description="The root of the test tree")
    people = add(f"ou=people,{SUFFIX}", objectClass=["top", "organizationalUnit"],
                 ou="people", description="All users")
    groups = add(f"ou=groups,{SUFFIX}", objectClass=["top", "organizationalUnit"],
                 ou="groups")
    depts = add(f"ou=Départements,{SUFFIX}", objectClass=["top", "organizationalUnit"],
                ou=["Départements", "Departments"], description="Organisation tree")
    special = add(f"ou=special,{SUFFIX}", objectClass=["top", "organizationalUnit"],
                  ou="special", description="Entries whose DNs need escaping")
    devices = add(f"ou=devices,{SUFFIX}", objectClass=["top", "organizationalUnit"],
                  ou="devices")
    roles = add(f"ou=roles,{SUFFIX}", objectClass=["top", "organizationalUnit"], ou="roles")
    sub = add(f"dc=sub,{SUFFIX}", objectClass=["top", "domain"], dc="sub",
              description="A nested domain", l="Malmö")
    sub_people = add(f"ou=people,{sub}", objectClass=["top", "organizationalUnit"],
                     ou="people", description="Users of the sub domain")

    # Department tree: four levels below ou=Départements.
    dept_dns = []
    for d in DEPTS:
        ddn = add(f"ou={d},{depts}", objectClass=["top", "organizationalUnit"], ou=d,
                  businessCategory=d.lower(), l=rnd.choice(CITIES))
        dept_dns.append(ddn)
        for team in ("Alpha", "Beta"):
            tdn = add(f"ou={team},{ddn}", objectClass=["top", "organizationalUnit"],
                      ou=[team, f"{d} {team}"], description=f"Team {team} of {d}")
            dept_dns.append(tdn)
            sdn = add(f"ou=Squad 1,{tdn}", objectClass=["top", "organizationalUnit"],
                      ou="Squad 1")
            dept_dns.append(sdn)

    # Users.
    users = []
    nusers = 200
    for i in range(1, nusers + 1):
        fn, ln = rnd.choice(FIRST), rnd.choice(LAST)
        parent = people if i <= 160 else (sub_people if i <= 180 else rnd.choice(dept_dns))
        dn = f"uid=user.{i},{parent}"
        cn = [f"{fn} {ln}"]
        if i % 3 == 0:
            cn.append(f"{fn[0]}. {ln}")
        if i % 17 == 0:
            cn.append(f"{fn} {ln} Jr")
        mail = [f"user.{i}@example.com"]
        if i % 4 == 0:
            mail.append(f"User.{i}@EXAMPLE.org")
        phones = [f"+1 555 {i:04d}"]
        if i % 5 == 0:
            phones.append(f"+1-555-{9000 + i:04d}")
        oc = ["top", "person", "organizationalPerson", "inetOrgPerson", "posixAccount"]
        if i % 6 == 0:
            oc.append("shadowAccount")
        attrs = dict(
            objectClass=oc, uid=f"user.{i}", cn=cn, sn=ln, givenName=fn,
            displayName=f"{fn} {ln} ({i})", initials=f"{fn[0]}{ln[0]}", mail=mail,
            uidNumber=1000 + i, gidNumber=100 + i % 7,
            homeDirectory=f"/home/user.{i}", loginShell=rnd.choice(SHELLS),
            telephoneNumber=phones, l=rnd.choice(CITIES),
            title=rnd.sample(TITLES, 1 + (i % 3 == 1)),
            employeeNumber=f"{i:05d}", departmentNumber=rnd.choice(DEPTS),
            postalCode=f"{10000 + rnd.randrange(90000)}",
            userPassword=f"password{i}",
        )
        if i % 2 == 0:
            attrs["description"] = [f"User number {i}", f"Ünïcödé déscription {i % 10}"]
        if i % 25 == 0:
            attrs["description"] = ["line one\nline two", "  leading and trailing  "]
        if i % 6 == 0:
            attrs["shadowLastChange"] = 19000 + i
            attrs["shadowMax"] = 99999
        if i > 1 and i % 7 == 0:
            attrs["manager"] = f"uid=user.{rnd.randrange(1, i)},{people}"
        if i % 11 == 0:
            attrs["seeAlso"] = [f"cn=group.{i % 10},{groups}"]
        if i % 9 == 0:
            attrs["carLicense"] = [f"CAR-{i}", f"car {i} b"]
        if i % 13 == 0:
            attrs["jpegPhoto"] = JFIF + bytes((i * k) % 256 for k in range(64)) + b"\xff\xd9"
        if i % 8 == 0:
            attrs["employeeType"] = ["full-time", "remote"]
        if i % 10 == 0:
            attrs["street"] = f"{i} Rue de la Paix"
            attrs["postalAddress"] = f"{i} Rue de la Paix$75002 Paris$France"
        add(dn, **attrs)
        users.append(dn)

    # Groups.
    for g in range(10):
        members = sorted(rnd.sample(users, 3 + g * 2), key=users.index)
        add(f"cn=group.{g},{groups}", objectClass=["top", "groupOfNames"], cn=f"group.{g}",
            member=members, owner=users[g], description=f"Group {g}",
            businessCategory=["dev", "ops"][g % 2])
    for g in range(6):
        members = sorted(rnd.sample(users, 2 + g), key=users.index)
        uniq = [m for m in members]
        if g == 0:
            uniq.append(f"{users[5]}#'0101'B")
        add(f"cn=uniq.{g},{groups}", objectClass=["top", "groupOfUniqueNames"],
            cn=f"uniq.{g}", uniqueMember=uniq)
    for g in range(8):
        add(f"cn=posix.{g},{groups}", objectClass=["top", "posixGroup"], cn=f"posix.{g}",
            gidNumber=100 + g, memberUid=[f"user.{k}" for k in range(1 + g, 60, 7)],
            description=None if g % 2 else f"POSIX group {g}")
    # An empty-ish group: groupOfNames with one member only (MUST member).
    add(f"cn=lonely,{groups}", objectClass=["top", "groupOfNames"], cn="lonely",
        member=users[0])

    # Devices and roles.
    for k in range(20):
        add(f"cn=printer.{k},{devices}", objectClass=["top", "device"], cn=f"printer.{k}",
            serialNumber=f"SN-{k:03d}-{rnd.randrange(1000):03d}", l=rnd.choice(CITIES),
            owner=rnd.choice(users), description=None if k % 3 else f"Printer on floor {k}")
    for k in range(10):
        add(f"cn=role.{k},{roles}", objectClass=["top", "organizationalRole"],
            cn=[f"role.{k}", f"Role {k}"], roleOccupant=rnd.sample(users, 1 + k % 3),
            telephoneNumber=f"+44 20 7946 {k:04d}", ou=DEPTS[k % len(DEPTS)])
    for city in CITIES[:4]:
        esc = city  # no specials in these names
        add(f"l={esc},{depts}", objectClass=["top", "locality"], l=city, st="Somewhere",
            description=f"Office in {city}")

    # Entries whose DNs need escaping (RFC 4514 §2.4 forms).
    specials = [
        (r"cn=Smith\, John", "Smith, John"),
        (r"cn=a\+b", "a+b"),
        (r"cn=\#hash", "#hash"),
        (r"cn=quote\"d", 'quote"d'),
        (r"cn=semi\;colon", "semi;colon"),
        (r"cn=less\<more\>", "less<more>"),
        (r"cn=back\\slash", "back\\slash"),
        (r"cn=\ leading space", " leading space"),
        (r"cn=trailing space\ ", "trailing space "),
        (r"cn=equals\=sign", "equals=sign"),
        ("cn=Zoë Ångström", "Zoë Ångström"),
        ("cn=東京タワー", "東京タワー"),
        ("cn=Ελληνικά", "Ελληνικά"),
    ]
    for rdn, value in specials:
        add(f"{rdn},{special}", objectClass=["top", "person"], cn=value,
            sn=value.strip() or "x", description=f"escaped rdn {rdn}")
    add(f"cn=multi+uid=multi,{special}",
        objectClass=["top", "person", "organizationalPerson", "inetOrgPerson"],
        cn="multi", uid="multi", sn="Multi", description="multi-valued RDN")
    add(f"cn=Smith\\, John+sn=Smith,{special}", objectClass=["top", "person"],
        cn="Smith, John", sn="Smith", description="multi-valued RDN with escapes")
    # A child under an escaped parent.
    add(f"cn=child,cn=Smith\\, John,{special}", objectClass=["top", "person"], cn="child",
        sn="Child")
    return tree


def write_ldif(entries, path):
    with open(path, "w", encoding="utf-8") as f:
        w = ldif.LDIFWriter(f, cols=10000)
        for dn, attrs in entries:
            w.unparse(dn, attrs)
